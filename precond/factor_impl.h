/* Pieces shared by the host factorization files (precond/ilu_factor.c, precond/ilutp.c, implemented in
 * precond/factor_common.c): growing arrays, row scans, the pivot policies, the ILUT candidate selection
 * and the grow-policy driver. Not an interface for other layers: use precond/factor.h. */
#ifndef GS_FACTOR_IMPL_H
#define GS_FACTOR_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "precond/factor.h"

/* 0-based row number of local row i as reported in messages and info. */
gs_int gs_fi_reported_row(const gs_factor_opts *o, gs_int i);
/* info zeroed, no shifted rows (-1); safe on NULL. */
void gs_fi_info_init(gs_factor_info *info);
void gs_fi_info_record_shift(gs_factor_info *info, const gs_factor_opts *o, gs_int i);

/* Make room for `need` entries in a growing array of elements of `size` bytes (doubling). */
gs_status gs_fi_grow(void *pp, int64_t *cap, int64_t need, size_t size);
/* Fill a CSR header over arrays the caller built (ownership moves into M). */
void gs_fi_csr_adopt(gs_csr *M, gs_int n, gs_int nnz, gs_int *rowptr, gs_int *colind, double *val);

/* Row i of A: max |a_ij|, sum a_ij^2, whether A stores a_ii (each output may be NULL); a non-finite
 * entry is GS_ERR_NUMERIC naming it. */
gs_status gs_fi_scan_row(const gs_csr *A, const gs_factor_opts *o, gs_int i, double *inf_norm, double *sum_sq,
                         bool *has_diag);
/* s_i of the grow policy: ||a_i||_inf, or 1 for a zero row. */
static inline double gs_fi_pivot_scale(double row_inf) { return row_inf > 0.0 ? row_inf : 1.0; }

/* The ILU pivot rule for a finite pivot *piv of row i: error/shift policies act on |u_ii| < DBL_MIN (shift
 * replaces *piv and records the row); grow fails (GS_ERR_NUMERIC naming the row) unless
 * |u_ii| >= DBL_MIN and |u_ii| >= min_pivot * s_i. */
gs_status gs_fi_ilu_pivot(const gs_factor_opts *o, gs_factor_info *info, gs_int i, double row_inf, bool has_diag,
                          double *piv);
/* GS_ERR_NUMERIC for a non-finite value v at (i, j) of the factor named `what`. */
gs_status gs_fi_nonfinite_error(const gs_factor_opts *o, gs_int i, gs_int j, double v, const char *what);

/* Binary min-heap of gs_int (columns still to eliminate, taken in increasing order). */
void gs_fi_heap_push(gs_int *h, gs_int *len, gs_int v);
gs_int gs_fi_heap_pop(gs_int *h, gs_int *len);

/* An ILUT candidate entry: its column (for ILUTP, its current position) and |value|. */
typedef struct gs_fi_cand {
    gs_int col;
    double mag;
} gs_fi_cand;
/* Keep the p largest of cand[0..m) (larger magnitude first, ties by the smaller column): returns the count
 * kept, cand[0..kept) sorted by column; the candidates left out are cand[kept..m) (for MILU). */
gs_int gs_fi_keep_largest(gs_fi_cand *cand, gs_int m, int64_t p);

/* One factorization of A + alpha diag(s) (s_i = gs_fi_pivot_scale(||a_i||_inf)) into the caller's
 * outputs held by ctx; alpha = 0: A itself. */
typedef gs_status (*gs_fi_attempt)(const gs_csr *A, const gs_factor_opts *o, double alpha, void *ctx,
                                   gs_factor_info *info);
/* The pivot policy around attempts: error/shift: one attempt with alpha = 0. grow: attempts with
 * alpha = 0, shift, 10 shift, ... (GS_FACTOR_GROW_MAX after the first at most) until one succeeds;
 * GS_ERR_NUMERIC from an attempt (a pivot below the bound, a non-finite factor value) moves on to the
 * next alpha, any other failure and a non-finite A stop at once. info->shift_used and
 * info->refactorizations describe the accepted attempt. */
gs_status gs_fi_factor_with_policy(const gs_csr *A, const gs_factor_opts *o, gs_fi_attempt attempt, void *ctx,
                                   gs_factor_info *info);

#endif
