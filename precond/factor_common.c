/* Shared pieces of the host factorizations (precond/factor_impl.h): input checks, growing arrays, row
 * scans, the pivot policies (error, shift, grow: the refactorization driver), ILUT's candidate selection. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/factor_impl.h"

/* 0-based row number of local row i as reported in messages and info. */
gs_int gs_fi_reported_row(const gs_factor_opts *o, gs_int i)
{
    gs_int r = o->row_names ? o->row_names[i] : i;
    return r + o->row_offset;
}

void gs_fi_info_init(gs_factor_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    info->first_shifted = -1;
    for (int t = 0; t < 16; t++) info->shifted_rows[t] = -1;
}

void gs_fi_info_record_shift(gs_factor_info *info, const gs_factor_opts *o, gs_int i)
{
    if (!info) return;
    gs_int r = gs_fi_reported_row(o, i);
    if (info->nshifted < 16) info->shifted_rows[info->nshifted] = r;
    if (info->nshifted == 0) info->first_shifted = r;
    info->nshifted++;
}

/* Checks shared by every factorization: A square, arrays present, columns sorted and in range. */
gs_status gs_factor_check_input(const gs_csr *A, const char *who)
{
    if (!A) return GS_ERROR(GS_ERR_ARG, "%s: the matrix is NULL", who);
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix must be square, got %d x %d", who, (int)A->nrows,
                        (int)A->ncols);
    if (A->nrows < 0 || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix has no row pointers or column indices", who);
    /* the first row with a bad column (in parallel), then that row again for the message */
    gs_int bad = A->nrows;
#pragma omp parallel for schedule(static) reduction(min : bad) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            if (j < 0 || j >= A->ncols || (p > A->rowptr[i] && j <= A->colind[p - 1])) {
                if (i < bad) bad = i;
                break;
            }
        }
    }
    if (bad < A->nrows) {
        const gs_int i = bad;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            if (j < 0 || j >= A->ncols)
                return GS_ERROR(GS_ERR_ARG, "%s: row %d (1-based) has column %d, outside 1..%d", who,
                                (int)i + 1, (int)j + 1, (int)A->ncols);
            if (p > A->rowptr[i] && j <= A->colind[p - 1])
                return GS_ERROR(GS_ERR_ARG,
                                "%s: row %d (1-based) is not sorted or has a duplicate column %d; "
                                "sort and sum duplicates first (gs_csr_sort_dedupe)",
                                who, (int)i + 1, (int)j + 1);
        }
    }
    return GS_OK;
}

/* Make room for `need` entries in a growing array of elements of `size` bytes (doubling). */
gs_status gs_fi_grow(void *pp, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap) return GS_OK;
    if (need > (int64_t)GS_INT_MAX)
        return GS_ERROR(GS_ERR_MEM, "the factor would have more than %d nonzeros (32-bit indices); "
                                    "lower the fill level / max_fill or raise the drop tolerance",
                        (int)GS_INT_MAX);
    int64_t c = *cap < 16 ? 16 : *cap;
    while (c < need) c *= 2;
    if (c > (int64_t)GS_INT_MAX) c = GS_INT_MAX;
    GS_CALL(gs_realloc(pp, (size_t)c, size));
    *cap = c;
    return GS_OK;
}

/* Fill a CSR header over arrays the caller built (ownership moves into M). */
void gs_fi_csr_adopt(gs_csr *M, gs_int n, gs_int nnz, gs_int *rowptr, gs_int *colind, double *val)
{
    M->nrows = n;
    M->ncols = n;
    M->nnz = nnz;
    M->rowptr = rowptr;
    M->colind = colind;
    M->val = val;
}

/* Scan row i of A: max |a_ij| (for the shift), sum a_ij^2, and whether A stores its diagonal.
 * A non-finite entry is an error naming it. */
gs_status gs_fi_scan_row(const gs_csr *A, const gs_factor_opts *o, gs_int i, double *inf_norm,
                          double *sum_sq, bool *has_diag)
{
    double m = 0.0, s = 0.0;
    bool d = false;
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
        double a = A->val[p];
        if (!isfinite(a))
            return GS_ERROR(GS_ERR_NUMERIC,
                            "the matrix entry A(%d,%d) = %g is not finite (row %d, 1-based); the "
                            "input matrix must hold finite values",
                            (int)gs_fi_reported_row(o, i) + 1, (int)A->colind[p] + 1, a,
                            (int)gs_fi_reported_row(o, i) + 1);
        if (fabs(a) > m) m = fabs(a);
        s += a * a;
        if (A->colind[p] == i) d = true;
    }
    if (inf_norm) *inf_norm = m;
    if (sum_sq) *sum_sq = s;
    if (has_diag) *has_diag = d;
    return GS_OK;
}

/* Replace a zero ILU pivot per the policy: returns the new pivot in *piv or an error naming the row. */
static gs_status fix_zero_pivot(const gs_factor_opts *o, gs_factor_info *info, gs_int i, double row_inf,
                                bool has_diag, double *piv)
{
    gs_int r = gs_fi_reported_row(o, i) + 1;
    if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT)
        return GS_ERROR(GS_ERR_NUMERIC,
                        "zero pivot at row %d (1-based) of the factorization: u_ii = %g%s; set "
                        "preconditioner.zero_pivot = \"grow\" or \"shift\" to perturb it, or system.matching = \"mwm\" to put "
                        "large entries on the diagonal",
                        (int)r, *piv, has_diag ? "" : " (A stores no diagonal entry in this row)");
    double s = o->shift * row_inf;
    if (!(s >= DBL_MIN)) s = o->shift; /* zero row of A (or an underflowing product) */
    if (!(s >= DBL_MIN) || !isfinite(s))
        return GS_ERROR(GS_ERR_NUMERIC,
                        "zero pivot at row %d (1-based) of the factorization: u_ii = %g, and "
                        "preconditioner.shift = %g cannot replace it (need a positive, finite shift)",
                        (int)r, *piv, o->shift);
    *piv = *piv < 0.0 ? -s : s;
    gs_fi_info_record_shift(info, o, i);
    return GS_OK;
}

gs_status gs_fi_nonfinite_error(const gs_factor_opts *o, gs_int i, gs_int j, double v, const char *what)
{
    return GS_ERROR(GS_ERR_NUMERIC,
                    "non-finite value %g in row %d (1-based), column %d of the %s: the factorization "
                    "is unstable for this matrix (tiny pivots, growth); try "
                    "preconditioner.zero_pivot = \"shift\" with a larger shift, a reordering, or "
                    "another preconditioner",
                    v, (int)gs_fi_reported_row(o, i) + 1, (int)j + 1, what);
}

/* Binary min-heap of column indices (the columns k < i still to eliminate, taken in increasing order). */
void gs_fi_heap_push(gs_int *h, gs_int *len, gs_int v)
{
    gs_int c = (*len)++;
    while (c > 0) {
        gs_int par = (c - 1) / 2;
        if (h[par] <= v) break;
        h[c] = h[par];
        c = par;
    }
    h[c] = v;
}

gs_int gs_fi_heap_pop(gs_int *h, gs_int *len)
{
    gs_int top = h[0], v = h[--(*len)], c = 0;
    for (;;) {
        gs_int s = 2 * c + 1;
        if (s >= *len) break;
        if (s + 1 < *len && h[s + 1] < h[s]) s++;
        if (v <= h[s]) break;
        h[c] = h[s];
        c = s;
    }
    if (*len > 0) h[c] = v;
    return top;
}


/* The selection order: larger magnitude first; equal magnitudes: smaller column first (a total order, the
 * columns being distinct). */
static bool cand_before(const gs_fi_cand *x, const gs_fi_cand *y)
{
    return x->mag > y->mag || (x->mag == y->mag && x->col < y->col);
}

static void cand_swap(gs_fi_cand *c, gs_int a, gs_int b)
{
    gs_fi_cand t = c[a];
    c[a] = c[b];
    c[b] = t;
}

/* Reorder c[0..m) so that c[0..k) are the first k in the selection order (0 < k < m): quickselect with
 * the median of three as pivot, O(m) expected instead of a full sort's O(m log m) (rows of ILUT/ILUTP
 * may collect thousands of candidates of which p are kept). */
static void select_first(gs_fi_cand *c, gs_int m, gs_int k)
{
    gs_int lo = 0, hi = m - 1;
    while (hi > lo) {
        gs_int mid = lo + (hi - lo) / 2;
        if (cand_before(&c[mid], &c[lo])) cand_swap(c, mid, lo);
        if (cand_before(&c[hi], &c[lo])) cand_swap(c, hi, lo);
        if (cand_before(&c[hi], &c[mid])) cand_swap(c, hi, mid);
        cand_swap(c, mid, hi); /* the median is the pivot, kept at hi */
        gs_int st = lo;
        for (gs_int t = lo; t < hi; t++)
            if (cand_before(&c[t], &c[hi])) cand_swap(c, t, st++);
        cand_swap(c, st, hi); /* c[st] is in its final place */
        if (st == k) return;
        if (st < k) lo = st + 1;
        else hi = st - 1;
    }
}

static int cmp_by_column(const void *a, const void *b)
{
    const gs_fi_cand *x = a, *y = b;
    return (x->col > y->col) - (x->col < y->col);
}

/* Keep the p largest of cand[0..m) (by magnitude, ties by column) and return them sorted by column. */
gs_int gs_fi_keep_largest(gs_fi_cand *cand, gs_int m, int64_t p)
{
    if ((int64_t)m > p) {
        if (p > 0) select_first(cand, m, (gs_int)p);
        m = (gs_int)p;
    }
    qsort(cand, (size_t)m, sizeof *cand, cmp_by_column);
    return m;
}

gs_status gs_fi_ilu_pivot(const gs_factor_opts *o, gs_factor_info *info, gs_int i, double row_inf, bool has_diag,
                          double *piv)
{
    if (o->zero_pivot == GS_ZERO_PIVOT_GROW) {
        const double bound = o->min_pivot * gs_fi_pivot_scale(row_inf);
        if (fabs(*piv) >= DBL_MIN && fabs(*piv) >= bound) return GS_OK;
        return GS_ERROR(GS_ERR_NUMERIC,
                        "pivot at row %d (1-based) of the factorization: |u_ii| = %g is below "
                        "max(DBL_MIN, min_pivot * ||a_i||_inf) = %g%s",
                        (int)gs_fi_reported_row(o, i) + 1, fabs(*piv), fmax(bound, DBL_MIN),
                        has_diag ? "" : " (A stores no diagonal entry in this row)");
    }
    if (fabs(*piv) < DBL_MIN) return fix_zero_pivot(o, info, i, row_inf, has_diag, piv);
    return GS_OK;
}

/* Whether every stored value of A is finite (a non-finite A is the input's fault: no shift helps). */
static bool values_finite(const gs_csr *A)
{
    if (!A || !A->val || !A->rowptr) return true; /* the attempt reports what is missing */
    bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok) if (A->nnz > 100000)
    for (gs_int p = 0; p < A->rowptr[A->nrows]; p++) ok = ok && isfinite(A->val[p]);
    return ok;
}

gs_status gs_fi_factor_with_policy(const gs_csr *A, const gs_factor_opts *o, gs_fi_attempt attempt, void *ctx,
                                   gs_factor_info *info)
{
    gs_status st = attempt(A, o, 0.0, ctx, info);
    if (st != GS_ERR_NUMERIC || o->zero_pivot != GS_ZERO_PIVOT_GROW || !values_finite(A)) return st;
    /* the reason of the last failed attempt, quoted when every alpha fails (a pending error keeps its
     * message: it is copied, then cleared, before the next one is set) */
    char why[768];
    if (!(o->shift > 0.0) || !isfinite(o->shift)) {
        snprintf(why, sizeof why, "%s", gs_error_message());
        gs_error_clear();
        return GS_ERROR(GS_ERR_NUMERIC,
                        "%s; preconditioner.zero_pivot = \"grow\" needs a positive, finite preconditioner.shift "
                        "(the first alpha), got %g",
                        why, o->shift);
    }
    double alpha = o->shift;
    for (int t = 1; t <= GS_FACTOR_GROW_MAX; t++, alpha *= 10.0) {
        snprintf(why, sizeof why, "%s", gs_error_message());
        gs_error_clear(); /* a pending error would swallow the next attempt's message */
        st = attempt(A, o, alpha, ctx, info);
        if (st == GS_OK) {
            if (info) {
                info->shift_used = alpha;
                info->refactorizations = t;
            }
            return GS_OK;
        }
        if (st != GS_ERR_NUMERIC) return st;
    }
    snprintf(why, sizeof why, "%s", gs_error_message());
    gs_error_clear();
    return GS_ERROR(GS_ERR_NUMERIC,
                    "%s -- still after %d refactorizations of A + alpha diag(||a_i||_inf) with alpha = %g ... %g "
                    "(preconditioner.zero_pivot = \"grow\"); the matrix may be (nearly) singular: try "
                    "system.matching, ilutp, or a larger preconditioner.shift",
                    why, GS_FACTOR_GROW_MAX, o->shift, alpha / 10.0);
}

gs_status gs_factor_opts_from_config(const gs_config *cfg, gs_factor_opts *o)
{
    if (!cfg) return GS_ERROR(GS_ERR_ARG, "factorization options: no configuration given");
    memset(o, 0, sizeof *o);
    const char *zp = gs_config_string(cfg, "preconditioner.zero_pivot");
    o->zero_pivot = strcmp(zp, "shift") == 0  ? GS_ZERO_PIVOT_SHIFT
                    : strcmp(zp, "grow") == 0 ? GS_ZERO_PIVOT_GROW
                                              : GS_ZERO_PIVOT_ERROR;
    o->shift = gs_config_double(cfg, "preconditioner.shift");
    o->min_pivot = gs_config_double(cfg, "preconditioner.min_pivot");
    o->perm_tol = gs_config_double(cfg, "preconditioner.pivot_tolerance");
    o->milu = gs_config_bool(cfg, "preconditioner.milu");
    o->fill_level = (int)gs_config_int(cfg, "preconditioner.fill_level");
    o->drop_tol = gs_config_double(cfg, "preconditioner.drop_tolerance");
    long long p = gs_config_int(cfg, "preconditioner.max_fill");
    o->max_fill = p > 2147483647LL ? 2147483647 : (int)p;
    return GS_OK;
}
