/* One pass over the rows of a square CSR matrix: row lengths, value range, diagonal, dominance,
 * bandwidth and row norms; then its structural and numerical symmetry. */
#include "core/csr_stats.h"

#include <math.h>
#include <string.h>

/* Adds row i's facts to s (row entries k in [rowptr[i], rowptr[i+1])). */
static void row_facts(const gs_csr *A, gs_int i, gs_csr_stats *s)
{
    gs_int len = A->rowptr[i + 1] - A->rowptr[i];
    if (len < s->row_nnz_min) s->row_nnz_min = len;
    if (len > s->row_nnz_max) s->row_nnz_max = len;
    if (len == 0 && s->empty_rows++ == 0) s->first_empty_row = i + 1;
    bool has_diag = false;
    double d = 0.0, off = 0.0, rmax = 0.0;
    for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
        gs_int j = A->colind[k];
        double v = A->val ? A->val[k] : 1.0;
        double a = fabs(v);
        if (v == 0.0) s->explicit_zeros++;
        if (a > s->abs_max) s->abs_max = a;
        if (a > 0 && a < s->abs_min_nonzero) s->abs_min_nonzero = a;
        if (a > rmax) rmax = a;
        if (j == i) {
            has_diag = true;
            d = v;
        } else {
            off += a;
        }
        gs_int dist = j > i ? j - i : i - j;
        if (dist > s->bandwidth) s->bandwidth = dist;
        if (i - j > s->bandwidth_lower) s->bandwidth_lower = i - j;
        if (j - i > s->bandwidth_upper) s->bandwidth_upper = j - i;
    }
    if (rmax > 0) {
        if (rmax < s->row_norm_min) s->row_norm_min = rmax;
        if (rmax > s->row_norm_max) s->row_norm_max = rmax;
    }
    if (!has_diag) {
        if (s->diag_missing < GS_STATS_FIRST_ROWS) s->missing_rows[s->diag_missing] = i + 1;
        s->diag_missing++;
    } else if (d == 0.0) {
        if (s->diag_zero < GS_STATS_FIRST_ROWS) s->zero_rows[s->diag_zero] = i + 1;
        s->diag_zero++;
    } else {
        if (d > 0)
            s->diag_positive++;
        else
            s->diag_negative++;
        if (fabs(d) < GS_STATS_WEAK_DIAG * rmax) s->diag_weak++;
    }
    double ad = fabs(d), m = fmax(ad, off);
    if (fabs(ad - off) <= GS_STATS_DOMINANCE_TOL * m && m > 0)
        s->dominant_weak++;
    else if (ad > off)
        s->dominant_strict++;
    else
        s->dominant_not++;
}

gs_status gs_csr_stats_compute(const gs_csr *A, gs_csr_stats *s)
{
    memset(s, 0, sizeof *s);
    s->nrows = A->nrows;
    s->ncols = A->ncols;
    s->nnz = A->nnz;
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "the matrix is %d x %d; gpusolve works with square matrices", A->nrows,
                        A->ncols);
    gs_int n = A->nrows;
    s->row_nnz_min = n > 0 ? GS_INT_MAX : 0;
    s->abs_min_nonzero = INFINITY;
    s->row_norm_min = INFINITY;
    for (gs_int i = 0; i < n; i++) row_facts(A, i, s);
    if (!isfinite(s->abs_min_nonzero)) s->abs_min_nonzero = 0.0;
    if (!isfinite(s->row_norm_min)) s->row_norm_min = 0.0;
    s->row_nnz_avg = n > 0 ? (double)A->nnz / n : 0.0;
    GS_CALL(gs_csr_symmetry(A, GS_STATS_SYM_TOL, &s->sym_structural, &s->sym_numerical));
    return GS_OK;
}
