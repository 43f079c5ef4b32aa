/* One pass over the rows of a square CSR matrix: row lengths, value range, diagonal, dominance,
 * bandwidth and row norms; then its structural and numerical symmetry. */
#include "core/csr_stats.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Rows per chunk below which the pass runs on one thread. */
#define STATS_PARALLEL_ROWS 50000
#define STATS_MAX_CHUNKS 256

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

static void stats_init(gs_csr_stats *s)
{
    memset(s, 0, sizeof *s);
    s->row_nnz_min = GS_INT_MAX;
    s->abs_min_nonzero = INFINITY;
    s->row_norm_min = INFINITY;
}

/* s += t, where t covers rows after s's (the first rows of each kind keep the row order). */
static void stats_merge(gs_csr_stats *s, const gs_csr_stats *t)
{
    if (t->row_nnz_min < s->row_nnz_min) s->row_nnz_min = t->row_nnz_min;
    if (t->row_nnz_max > s->row_nnz_max) s->row_nnz_max = t->row_nnz_max;
    if (s->empty_rows == 0 && t->empty_rows > 0) s->first_empty_row = t->first_empty_row;
    s->empty_rows += t->empty_rows;
    s->explicit_zeros += t->explicit_zeros;
    s->abs_max = fmax(s->abs_max, t->abs_max);
    s->abs_min_nonzero = fmin(s->abs_min_nonzero, t->abs_min_nonzero);
    s->row_norm_min = fmin(s->row_norm_min, t->row_norm_min);
    s->row_norm_max = fmax(s->row_norm_max, t->row_norm_max);
    for (gs_int k = 0; k < t->diag_missing && s->diag_missing + k < GS_STATS_FIRST_ROWS && k < GS_STATS_FIRST_ROWS; k++)
        s->missing_rows[s->diag_missing + k] = t->missing_rows[k];
    for (gs_int k = 0; k < t->diag_zero && s->diag_zero + k < GS_STATS_FIRST_ROWS && k < GS_STATS_FIRST_ROWS; k++)
        s->zero_rows[s->diag_zero + k] = t->zero_rows[k];
    s->diag_missing += t->diag_missing;
    s->diag_zero += t->diag_zero;
    s->diag_positive += t->diag_positive;
    s->diag_negative += t->diag_negative;
    s->diag_weak += t->diag_weak;
    s->dominant_strict += t->dominant_strict;
    s->dominant_weak += t->dominant_weak;
    s->dominant_not += t->dominant_not;
    if (t->bandwidth > s->bandwidth) s->bandwidth = t->bandwidth;
    if (t->bandwidth_lower > s->bandwidth_lower) s->bandwidth_lower = t->bandwidth_lower;
    if (t->bandwidth_upper > s->bandwidth_upper) s->bandwidth_upper = t->bandwidth_upper;
}

/* The row facts of all rows: contiguous chunks of rows in parallel, merged in row order. */
static void all_rows(const gs_csr *A, gs_csr_stats *s)
{
    const gs_int n = A->nrows;
    int chunks = 1;
#ifdef _OPENMP
    if (n >= 2 * STATS_PARALLEL_ROWS) chunks = omp_get_max_threads();
#endif
    if (chunks > STATS_MAX_CHUNKS) chunks = STATS_MAX_CHUNKS;
    if (chunks > 1) {
        gs_csr_stats part[STATS_MAX_CHUNKS];
#pragma omp parallel for schedule(static, 1) num_threads(chunks)
        for (int c = 0; c < chunks; c++) {
            stats_init(&part[c]);
            gs_int lo = (gs_int)((int64_t)n * c / chunks), hi = (gs_int)((int64_t)n * (c + 1) / chunks);
            for (gs_int i = lo; i < hi; i++) row_facts(A, i, &part[c]);
        }
        for (int c = 0; c < chunks; c++) stats_merge(s, &part[c]);
    } else {
        for (gs_int i = 0; i < n; i++) row_facts(A, i, s);
    }
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
    stats_init(s);
    s->nrows = A->nrows;
    s->ncols = A->ncols;
    s->nnz = A->nnz;
    all_rows(A, s);
    if (n == 0) s->row_nnz_min = 0;
    if (!isfinite(s->abs_min_nonzero)) s->abs_min_nonzero = 0.0;
    if (!isfinite(s->row_norm_min)) s->row_norm_min = 0.0;
    s->row_nnz_avg = n > 0 ? (double)A->nnz / n : 0.0;
    GS_CALL(gs_csr_symmetry(A, GS_STATS_SYM_TOL, &s->sym_structural, &s->sym_numerical));
    return GS_OK;
}
