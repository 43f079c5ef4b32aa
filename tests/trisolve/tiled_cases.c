/* Builds the format-covering factor of tiled_cases.h. Rows (lower, 0-based):
 *   0..63    four groups of 16; every row of group g > 0 reads ALL 16 rows of group g-1 (a dense tile),
 *            group 2 and 3 rows 0..4 one row of group g-2 (COO, 5 entries), group 3 rows 0..9 four rows
 *            of group 0 (CSR, 40 entries). Row levels: group g = level g.
 *   64..79   a dense lower triangle (row 64+r reads 64..64+r-1: 120 in-tile entries) and one row of
 *            group 3 each (CSR, 16 entries). Levels 4..19, one row each.
 *   80..95   each reads row 79 (CSR, 16 entries); odd rows also read the row before them. Levels 20
 *            (even) and 21 (odd): renumbering puts the 8 even rows first, the 8 odd rows read them
 *            inside the tile (CSR diagonal tile, 8 entries).
 *   96..102  each reads row 95 and row 3 (two COO tiles of 7 entries); level 22; a short tile row. */
#include "tiled_cases.h"

#include <string.h>

#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"

gs_status tiled_format_case(gs_uplo uplo, bool unit, gs_csr *T)
{
    gs_status st = GS_OK;
    const gs_int n = TILED_FMT_N;
    gs_int *ri = NULL, *ci = NULL, cnt = 0;
    double *v = NULL;
    gs_csr A = {0};
    uint64_t s = 4242;
    const size_t cap = 4096;
    GS_TRY(GS_MALLOC(ri, cap));
    GS_TRY(GS_MALLOC(ci, cap));
    GS_TRY(GS_MALLOC(v, cap));
#define ADD(i, j)                                                                                     \
    do {                                                                                              \
        gs_int i_ = (i), j_ = (j);                                                                    \
        ri[cnt] = uplo == GS_LOWER ? i_ : n - 1 - i_;                                                 \
        ci[cnt] = uplo == GS_LOWER ? j_ : n - 1 - j_;                                                 \
        v[cnt++] = 0.25 + gs_test_rand(&s);                                                           \
    } while (0)
    for (gs_int g = 1; g < 4; g++)
        for (gs_int r = 0; r < 16; r++) {
            for (gs_int c = 0; c < 16; c++) ADD(16 * g + r, 16 * (g - 1) + c); /* dense tile */
            if (g >= 2 && r < 5) ADD(16 * g + r, 16 * (g - 2) + (r * 7) % 16); /* COO tile */
            if (g == 3 && r < 10)
                for (gs_int c = r % 4; c < 16; c += 4) ADD(16 * g + r, c); /* CSR tile, 4 per row */
        }
    for (gs_int r = 0; r < 16; r++) {
        for (gs_int c = 0; c < r; c++) ADD(64 + r, 64 + c); /* dense diagonal tile */
        ADD(64 + r, 48 + (r * 5) % 16);
    }
    for (gs_int r = 0; r < 16; r++) {
        ADD(80 + r, 79);
        if (r % 2) ADD(80 + r, 80 + r - 1);
    }
    for (gs_int i = 96; i < n; i++) {
        ADD(i, 95);
        ADD(i, 3);
    }
#undef ADD
    GS_TRY(gs_csr_from_coo(n, n, cnt, ri, ci, v, &A));
    GS_TRY(tri_from_matrix(&A, uplo, unit, T));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&A);
    return st;
}
