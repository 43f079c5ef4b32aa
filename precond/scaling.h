/* Static pivoting and equilibration of A: maximum-product matching with its scaling, Ruiz and
 * row/column power-of-two scalings, and C = Dr P A Q Dc. */
#ifndef GS_SCALING_H
#define GS_SCALING_H

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Maximum-product transversal (Duff & Koster's MC64 job 5 idea, written from the math in
 * precond/matching.c). For a square A, finds a row permutation with B = P A, B(i, :) = A(rowperm[i], :)
 * (rowperm maps new -> old), such that every B(i, i) is nonzero and prod_i |B(i, i)| is maximal, and
 * the scaling that makes the matched entries +-1:
 *   |dr[r] * a_rj * dc[j]| == 1 on the matched entries (r = rowperm[j]), <= 1 on every other entry
 * (both up to a few ulps). dr is indexed by A's row numbers, dc by A's column numbers, so the scaled,
 * permuted matrix is B(i, j) = dr[rowperm[i]] * A(rowperm[i], j) * dc[j] (gs_csr_transform with
 * rowmap = rowperm). dr and dc may be NULL when not wanted; rank may be NULL.
 * Stored zeros are not entries: only nonzero values can be matched. A pattern-only matrix (val NULL)
 * reads as all ones (every perfect matching is optimal; dr = dc = 1). NaN or Inf values: GS_ERR_NUMERIC.
 * A structurally singular A: GS_ERR_NUMERIC with a message stating the structural rank and a witness
 * (an empty column or row, or k rows whose nonzeros lie in k-1 columns); then *rank is the structural
 * rank, rowperm is still a permutation (it puts a maximum matching on the diagonal, the unmatched rows
 * on the remaining positions) and dr, dc are left untouched.
 * Scales: the optimal duals, centred so that dr and dc are balanced; where they would spread beyond
 * 1e+-100 (reducible matrices with entries over hundreds of orders of magnitude) they are replaced by
 * (nearly) the narrowest scaling meeting the same conditions, so one is found whenever one fits in
 * doubles. A matrix whose entries force scales past the double range (entries spread over more than
 * some 600 orders of magnitude along chains of the matrix) gets them clamped to [2^-1022, 2^1023];
 * there the bounds above fail, the matching itself stays optimal. Time: O(nnz log n) per augmenting
 * search, most rows being matched by a greedy start (0.3-0.5 s for 10^6 rows, 7 10^6 nonzeros). */
gs_status gs_mwm(const gs_csr *A, gs_int *rowperm, double *dr, double *dc, gs_int *rank);

/* Ruiz's iterated infinity-norm equilibration with power-of-two scales.
 * Iteration (exact arithmetic, all rows and columns at once): with r_i, c_j the inf-norms of the rows
 * and columns of Dr A Dc, dr_i /= sqrt(r_i), dc_j /= sqrt(c_j); it stops when every nonempty row and
 * column has |1 - norm| <= tol or after max_iter iterations (*iters, may be NULL, receives the count).
 * tol in (0, 1); 1e-2 is a good choice (Ruiz converges linearly with ratio about 1/2 on the log
 * scale: some 10-20 iterations from entries spread over 1e+-100). The scales are then rounded to the
 * nearest power of two, so dr, dc are powers of two (scaling is exact: no rounding in the scaled
 * values) and each norm moves by at most a factor 2: after convergence every nonempty row and column
 * of Dr A Dc has inf-norm in [(1 - tol)/2, 2 (1 + tol)], and in [(1 - tol)/2, 2] with every entry
 * <= 2 once a step was taken (a step leaves every entry <= 1 before the rounding). A numerically
 * symmetric A gets dr == dc exactly (Dr A Dc stays symmetric).
 * Empty rows and columns (no nonzero value) keep scale 1; a pattern-only matrix has all scales 1.
 * NaN/Inf: GS_ERR_NUMERIC. For norms in (1/2, 1] instead (not symmetric), use gs_scale_rowcol. */
gs_status gs_scale_ruiz(const gs_csr *A, int max_iter, double tol, double *dr, double *dc, int *iters);

/* One dgeequ-style pass with powers of two: dr_i = 2^-k_i with the row inf-norm of Dr A in (1/2, 1],
 * then dc_j = 2^-l_j with the column inf-norm of Dr A Dc in (1/2, 1]. As every column scale is >= 1
 * and every entry ends <= 1, the rows of Dr A Dc also end with inf-norms in (1/2, 1]. A matrix whose
 * rows and columns already have inf-norm 1 gets dr = dc = 1. Empty rows and columns keep scale 1.
 * Scales are clamped to [2^-1022, 2^1023] (only subnormal or near-overflow norms reach the clamp, and
 * then their norms miss the interval). A pattern-only matrix has all scales 1. NaN/Inf: GS_ERR_NUMERIC. */
gs_status gs_scale_rowcol(const gs_csr *A, double *dr, double *dc);

/* C(i, j) = dr[rowmap[i]] * A(rowmap[i], colmap[j]) * dc[colmap[j]], evaluated as a * (dr * dc) (exact
 * for power-of-two scales unless the result is subnormal): rowmap and colmap map new -> old
 * (permutations of the rows and of the columns; NULL = identity), dr and dc are indexed by A's old
 * rows and columns (NULL = ones). A may be rectangular. Output sorted; A's rows must not repeat a
 * column. A pattern-only A gives a pattern-only C when dr and dc are NULL, else values dr * dc. */
gs_status gs_csr_transform(const gs_csr *A, const gs_int *rowmap, const gs_int *colmap, const double *dr,
                           const double *dc, gs_csr *C);

#ifdef __cplusplus
}
#endif
#endif
