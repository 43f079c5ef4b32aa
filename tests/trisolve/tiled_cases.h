/* Test factors for the tiled triangular solver whose tile plans use every tile format (shared by the
 * host and GPU tiled tests). */
#ifndef TILED_CASES_H
#define TILED_CASES_H

#include <stdbool.h>

#include "core/csr.h"
#include "trisolve/trisolve.h"

/* Order of the format case: 6 full tile rows and a short one of 7 rows. */
#define TILED_FMT_N 103

/* A factor of order TILED_FMT_N built so that its level-renumbered tile plan holds (lower, and the
 * mirrored upper U(i,j) = L(n-1-i, n-1-j), which has the same plan):
 *   off-diagonal tiles: 3 dense (256 entries), 3 CSR (40, 16, 16 entries), 4 COO (5, 5, 7, 7);
 *   diagonal tiles: 5 DIA, 1 CSR (8 in-tile entries, after renumbering), 1 packed dense (120);
 *   7 tile rows, 7 tile levels, 23 row levels.
 * Non-unit: dominant diagonal; unit: rows scaled to off-diagonal magnitude sums <= 1/2 (tri_from_matrix). */
gs_status tiled_format_case(gs_uplo uplo, bool unit, gs_csr *T);

#endif
