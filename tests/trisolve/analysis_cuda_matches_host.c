/* The level order of the GPU analysis (analysis_cuda.cu: the level kernel that passes dependencies inside
 * a warp by shuffles, the sort by level) against the host plan (levelset_ref.c): the same number of levels
 * and the same rows level by level (a level's rows in increasing order), from a host factor and from a
 * device copy of it (the preconditioners' path, T read in place), on the whole case suite and on banded
 * triangles built to exercise the warp kernel: chains of links (the row before) across warp borders,
 * dependencies inside a warp that are not links (strides 2 and 3: up to 16 shuffle rounds), a dense band
 * of 31 (every lane reads every earlier lane), mixed with dependencies outside the warp; n not a multiple
 * of 32, lower and upper, unit and non-unit. Outputs are poisoned before each download. Also the warp-run
 * plan (run_rows = GS_SF_WRUN_ROWS) against the host twin's, bit for bit, on the same factors and on PDE
 * triangles. */
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

static gs_backend *gpu, *host;

static int setup(void **state)
{
    (void)state;
    return tri_backends_create(&gpu, &host);
}

static int teardown(void **state)
{
    (void)state;
    tri_backends_destroy(&gpu, &host);
    return 0;
}

static void check_case(const char *name, const gs_csr *T, gs_uplo uplo, bool unit)
{
    gs_ls_plan P;
    memset(&P, 0, sizeof P);
    GS_ASSERT_OK(gs_ls_plan_build(T, uplo, unit, 1, &P));
    const size_t n = (size_t)T->nrows;
    gs_int *perm = NULL, *lptr = NULL;
    GS_ASSERT_OK(GS_MALLOC(perm, n + 1));
    GS_ASSERT_OK(GS_MALLOC(lptr, n + 2));
    for (int dev = 0; dev < 2; dev++) {
        gs_int nlevels = -7;
        memset(perm, 0xA5, (n + 1) * sizeof(gs_int));
        memset(lptr, 0xA5, (n + 2) * sizeof(gs_int));
        GS_ASSERT_OK(gs_ts_levels_gpu(gpu, T, uplo, unit, dev != 0, &nlevels, perm, lptr));
        if (nlevels != P.nlevels)
            fprintf(stderr, "%s (%s factor): %d levels on the GPU, %d on the host\n", name, dev ? "device" : "host",
                    (int)nlevels, (int)P.nlevels);
        assert_int_equal(nlevels, P.nlevels);
        assert_memory_equal(lptr, P.level_ptr, ((size_t)P.nlevels + 1) * sizeof(gs_int));
        for (size_t p = 0; p < n; p++) {
            if (perm[p] != P.perm[p])
                fprintf(stderr, "%s (%s factor): position %zu holds row %d on the GPU, %d on the host\n", name,
                        dev ? "device" : "host", p, (int)perm[p], (int)P.perm[p]);
            assert_int_equal(perm[p], P.perm[p]);
        }
    }
    gs_free(&perm);
    gs_free(&lptr);
    gs_ls_plan_free(&P);
}

/* The warp-run plan of the GPU analysis against the host twin's (syncfree_ref.c), array by array and bit
 * for bit: the strict links, runs, run levels, positions with their holes, HEC layout and 1/diagonal,
 * with the ELL width limit 16 (the solver's) and 2 (links and entries in the remainder). */
static void check_wruns(const char *name, const gs_csr *T, gs_uplo uplo, bool unit)
{
    for (int wk = 0; wk < 2; wk++) {
        const gs_int maxw = wk == 0 ? 16 : 2;
        gs_sf_runs_plan H, G;
        GS_ASSERT_OK(gs_sf_runs_plan_build(T, uplo, unit, GS_SF_WRUN_ROWS, maxw, &H));
        for (int dev = 0; dev < 2; dev++) {
            GS_ASSERT_OK(gs_ts_wruns_plan_gpu(gpu, T, uplo, unit, dev != 0, maxw, &G));
            if (G.nruns != H.nruns || G.nlevels != H.nlevels || G.ell_width != H.ell_width ||
                G.rem_nnz != H.rem_nnz || G.linked_rows != H.linked_rows)
                fprintf(stderr, "%s (width %d): GPU runs %d levels %d width %d rem %d linked %lld; host %d %d %d %d %lld\n",
                        name, (int)maxw, (int)G.nruns, (int)G.nlevels, (int)G.ell_width, (int)G.rem_nnz,
                        G.linked_rows, (int)H.nruns, (int)H.nlevels, (int)H.ell_width, (int)H.rem_nnz, H.linked_rows);
            assert_int_equal(G.run_rows, GS_SF_WRUN_ROWS);
            assert_int_equal(G.nruns, H.nruns);
            assert_int_equal(G.npos, H.npos);
            assert_int_equal(G.nlevels, H.nlevels);
            assert_int_equal(G.ell_width, H.ell_width);
            assert_int_equal(G.rem_nnz, H.rem_nnz);
            assert_int_equal(G.max_row_length, H.max_row_length);
            assert_int_equal(G.linked_rows, H.linked_rows);
            const size_t np = (size_t)H.npos, w = (size_t)H.ell_width;
            assert_memory_equal(G.level_ptr, H.level_ptr, ((size_t)H.nlevels + 1) * sizeof(gs_int));
            if (np == 0) {
                gs_sf_runs_plan_free(&G);
                continue;
            }
            assert_memory_equal(G.perm, H.perm, np * sizeof(gs_int));
            assert_memory_equal(G.ell_col, H.ell_col, w * np * sizeof(gs_int));
            assert_memory_equal(G.ell_val, H.ell_val, w * np * sizeof(double));
            assert_memory_equal(G.rem_ptr, H.rem_ptr, (np + 1) * sizeof(gs_int));
            assert_memory_equal(G.rem_col, H.rem_col, (size_t)H.rem_nnz * sizeof(gs_int));
            assert_memory_equal(G.rem_val, H.rem_val, (size_t)H.rem_nnz * sizeof(double));
            assert_memory_equal(G.dinv, H.dinv, np * sizeof(double));
            gs_sf_runs_plan_free(&G);
        }
        gs_sf_runs_plan_free(&H);
    }
}

static void test_suite(void **state)
{
    (void)state;
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    for (int k = 0; k < S.n; k++) {
        check_case(S.c[k].name, &S.c[k].T, S.c[k].uplo, S.c[k].unit);
        check_wruns(S.c[k].name, &S.c[k].T, S.c[k].uplo, S.c[k].unit);
    }
    tri_suite_free(&S);
}

/* ILU(0)-shaped triangles of the 3D 7-point Laplacian (grid lines of 45 rows: runs of 32 and 13) and of
 * the 2D one (lines of 70: 32, 32, 6): warp runs' plans on PDE structure. */
static void test_wruns_pde(void **state)
{
    (void)state;
    for (int g = 0; g < 2; g++) {
        gs_csr A = {0}, T = {0};
        if (g == 0) GS_ASSERT_OK(gs_gen_poisson3d(45, 23, 7, &A));
        else GS_ASSERT_OK(gs_gen_poisson2d(70, 59, &A));
        for (int side = 0; side < 2; side++) {
            GS_ASSERT_OK(tri_from_matrix(&A, (gs_uplo)side, side == 0, &T));
            check_wruns(g == 0 ? "poisson3d 45x23x7" : "poisson2d 70x59", &T, (gs_uplo)side, side == 0);
            gs_csr_free(&T);
        }
        gs_csr_free(&A);
    }
}

/* Row i reads rows i -/+ off[k] (lower/upper) where they exist, and with far > 0 also row i -/+ far*(i%7+1). */
static void banded(gs_int n, const gs_int *off, int noff, gs_int far, gs_uplo uplo, bool unit, gs_csr *T)
{
    gs_int *ri = NULL, *ci = NULL, cnt = 0;
    double *v = NULL;
    const size_t cap = (size_t)n * (size_t)(noff + 2);
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        ri[cnt] = i;
        ci[cnt] = i;
        v[cnt++] = 4.0;
        for (int k = 0; k <= noff; k++) {
            gs_int d = k < noff ? off[k] : far * (i % 7 + 1);
            if (d <= 0) continue;
            gs_int j = uplo == GS_LOWER ? i - d : i + d;
            if (j < 0 || j >= n) continue;
            ri[cnt] = i;
            ci[cnt] = j;
            v[cnt++] = -1.0 / (1.0 + k);
        }
    }
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, cnt, ri, ci, v, &A));
    GS_ASSERT_OK(tri_from_matrix(&A, uplo, unit, T));
    gs_csr_free(&A);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static void test_banded(void **state)
{
    (void)state;
    static const gs_int stride2[] = {2, 3}, stride3[] = {3}, band[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                                                     12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                                                     23, 24, 25, 26, 27, 28, 29, 30, 31},
                        mixed[] = {1, 5, 40}, lines[] = {1, 33, 100},
                        blocks[] = {1, 31, 255, 257, 511, 513, 1023, 1025}, planes[] = {1, 20, 400};
    struct {
        const char *name;
        gs_int n;
        const gs_int *off;
        int noff;
        gs_int far;
    } cases[] = {
        {"stride2+3", 1031, stride2, 2, 0}, {"stride3", 999, stride3, 1, 0},   {"band31", 1001, band, 31, 0},
        {"1,5,40 far", 2053, mixed, 3, 97},  {"lines 1,33,100", 4099, lines, 3, 0},
        /* dependencies across the borders of warps and of the blocks' tickets (256, 512, 1024 rows) */
        {"block borders", 5003, blocks, 8, 0}, {"planes 1,20,400", 8003, planes, 3, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int side = 0; side < 2; side++)
            for (int unit = 0; unit < 2; unit++) {
                gs_csr T = {0};
                banded(cases[c].n, cases[c].off, cases[c].noff, cases[c].far, (gs_uplo)side, unit != 0, &T);
                char name[96];
                snprintf(name, sizeof name, "%s/%s/%s", cases[c].name, side ? "upper" : "lower",
                         unit ? "unit" : "nonunit");
                check_case(name, &T, (gs_uplo)side, unit != 0);
                check_wruns(name, &T, (gs_uplo)side, unit != 0);
                gs_csr_free(&T);
            }
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_banded),
        cmocka_unit_test(test_wruns_pde),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
