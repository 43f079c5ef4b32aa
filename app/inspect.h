/* gpusolve --inspect: what a matrix's structure says about which solvers and preconditioners fit. */
#ifndef GS_APP_INSPECT_H
#define GS_APP_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/csr.h"
#include "core/status.h"

#define GS_INSPECT_FIRST_ROWS 10 /* rows listed for each kind of bad diagonal */
#define GS_INSPECT_MAX_ADVICE 8

/* Structure and value facts of a square matrix. Row numbers are 1-based, as in a .mtx file. */
typedef struct gs_matrix_facts {
    gs_int nrows, ncols, nnz;
    gs_int row_nnz_min, row_nnz_max, empty_rows, first_empty_row;
    double row_nnz_avg;
    gs_int explicit_zeros;          /* stored entries equal to 0 */
    double abs_max, abs_min_nonzero; /* over the stored entries */
    bool sym_structural, sym_numerical;
    gs_int diag_missing, diag_zero, diag_positive, diag_negative;
    gs_int missing_rows[GS_INSPECT_FIRST_ROWS], zero_rows[GS_INSPECT_FIRST_ROWS];
    gs_int dominant_strict, dominant_weak, dominant_not; /* |a_ii| >, =, < sum_{j != i} |a_ij| */
    gs_int bandwidth, bandwidth_lower, bandwidth_upper; /* max |i - j|, max i - j, max j - i */
    gs_int bandwidth_rcm;                               /* max |i - j| after reverse Cuthill-McKee */
    gs_int levels_lower, levels_upper;                  /* dependency levels of tril(A) and triu(A) */
    int nadvice;
    char advice[GS_INSPECT_MAX_ADVICE][320];
} gs_matrix_facts;

/* Relative tolerance of the numerical symmetry test: |a_ij - a_ji| <= tol * max(|a_ij|, |a_ji|). */
#define GS_INSPECT_SYM_TOL 1e-12

gs_status gs_matrix_inspect(const gs_csr *A, gs_matrix_facts *f);
/* Reads spec (a .mtx[.gz] path or gen:...), prints its facts as text or one JSON object on out;
 * returns the exit code (0, or that of the read error). */
int gs_app_inspect(const char *spec, bool json, FILE *out);

#endif
