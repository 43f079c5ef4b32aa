/* Cheap facts of a square sparse matrix from one pass over its rows (and one symmetry check): sizes,
 * row lengths, value range, the diagonal (missing, zero, weak, sign), diagonal dominance, bandwidth,
 * row norms and symmetry. `gpusolve --inspect` prints them; the automatic method choice reads them. */
#ifndef GS_CSR_STATS_H
#define GS_CSR_STATS_H

#include <stdbool.h>

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_STATS_FIRST_ROWS 10   /* rows listed for each kind of bad diagonal */
#define GS_STATS_SYM_TOL 1e-12   /* numerical symmetry: |a_ij - a_ji| <= tol * max(|a_ij|, |a_ji|) */
#define GS_STATS_WEAK_DIAG 1e-3  /* a nonzero diagonal is weak when |a_ii| < this * max_j |a_ij| */
#define GS_STATS_DOMINANCE_TOL 1e-12 /* |a_ii| and sum_{j!=i} |a_ij| within this relative distance: weak dominance */

/* Row numbers are 1-based, as in a .mtx file. */
typedef struct gs_csr_stats {
    gs_int nrows, ncols, nnz;
    gs_int row_nnz_min, row_nnz_max, empty_rows, first_empty_row;
    double row_nnz_avg;
    gs_int explicit_zeros;           /* stored entries equal to 0 */
    double abs_max, abs_min_nonzero; /* over the stored entries (0 when there is no nonzero) */
    double row_norm_min, row_norm_max; /* max_j |a_ij| over the rows with a nonzero (0 when none) */
    bool sym_structural, sym_numerical;
    gs_int diag_missing, diag_zero, diag_positive, diag_negative;
    gs_int diag_weak;                /* nonzero, but |a_ii| < GS_STATS_WEAK_DIAG * max_j |a_ij| */
    gs_int missing_rows[GS_STATS_FIRST_ROWS], zero_rows[GS_STATS_FIRST_ROWS];
    gs_int dominant_strict, dominant_weak, dominant_not; /* |a_ii| >, =, < sum_{j != i} |a_ij| */
    gs_int bandwidth, bandwidth_lower, bandwidth_upper;  /* max |i - j|, max i - j, max j - i */
} gs_csr_stats;

/* The facts of A (square: GS_ERR_ARG otherwise). A pattern-only matrix (val NULL) reads as ones. */
gs_status gs_csr_stats_compute(const gs_csr *A, gs_csr_stats *s);

#ifdef __cplusplus
}
#endif
#endif
