/* Equilibration of A by powers of two (Ruiz's iteration, one row/column pass) and C = Dr P A Q Dc. */
#include "precond/scaling.h"

#include <math.h>
#include <string.h>

#include "core/mem.h"

/* Scales are kept as powers of two so that Dr A Dc is computed without rounding: scaling never
 * perturbs the matrix, it only changes which entries look large to the factorization. */

enum { EXP_MIN = -1022, EXP_MAX = 1023 }; /* exponents of normal doubles */

static gs_status check_matrix(const gs_csr *A, const char *who)
{
    if (!A || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix is NULL or has no arrays", who);
    return GS_OK;
}

/* NaN or Inf in A: no scaling can be computed from it. */
static gs_status check_finite(const gs_csr *A, const char *who)
{
    if (!A->val) return GS_OK;
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (!isfinite(A->val[p]))
                return GS_ERROR(GS_ERR_NUMERIC, "%s: entry (%d, %d) (1-based) is %g; scaling needs finite values",
                                who, (int)i + 1, (int)A->colind[p] + 1, A->val[p]);
    return GS_OK;
}

/* 2^e with e clamped to the normal range. */
static double pow2(int e)
{
    return ldexp(1.0, e < EXP_MIN ? EXP_MIN : e > EXP_MAX ? EXP_MAX : e);
}

/* The power of two nearest to s > 0 on the log scale: s = m 2^e, m in [1/2, 1); m < 1/sqrt(2) rounds
 * down to 2^(e-1). */
static double pow2_nearest(double s)
{
    int e;
    double m = frexp(s, &e);
    return pow2(m < 0.70710678118654752440 ? e - 1 : e);
}

/* The power of two 2^-k with r 2^-k in (1/2, 1] for r > 0 (r = m 2^e, m in [1/2, 1): k = e, or e - 1
 * when m == 1/2 so that a norm that already is a power of two, 1 in particular, lands on 1). */
static double pow2_unit(double r)
{
    int e;
    double m = frexp(r, &e);
    return pow2(m == 0.5 ? 1 - e : -e);
}

/* rn_i = max_j |dr_i a_ij dc_j|, cn_j = max_i |dr_i a_ij dc_j| (0 for an empty row or column). */
static void scaled_norms(const gs_csr *A, const double *dr, const double *dc, double *rn, double *cn)
{
    memset(cn, 0, (size_t)A->ncols * sizeof *cn);
    for (gs_int i = 0; i < A->nrows; i++) {
        double m = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            double x = fabs(A->val[p]) * (dr[i] * dc[j]); /* symmetric in (i, j) when dr == dc */
            if (x > m) m = x;
            if (x > cn[j]) cn[j] = x;
        }
        rn[i] = m;
    }
}

/* Row norms of Dr A Dc, only (the row step of the power-of-two pass). */
static void scaled_row_norms(const gs_csr *A, const double *dr, const double *dc, double *rn)
{
#pragma omp parallel for schedule(static) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        double m = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double x = fabs(A->val[p]) * dc[A->colind[p]];
            if (x > m) m = x;
        }
        rn[i] = m * dr[i];
    }
}

/* Row step then column step, each multiplying the scales in dr, dc (powers of two: the product is
 * taken on the exponents) by the power of two that brings the current inf-norms into (1/2, 1]. After
 * the column step every entry is <= 1 and the column factors were all >= 1, so the row norms stay in
 * (1/2, 1]. */
static void pow2_pass(const gs_csr *A, double *dr, double *dc, double *rn, double *cn)
{
    scaled_row_norms(A, dr, dc, rn);
    for (gs_int i = 0; i < A->nrows; i++)
        if (rn[i] > 0.0) dr[i] = pow2(ilogb(dr[i]) + ilogb(pow2_unit(rn[i])));
    scaled_norms(A, dr, dc, rn, cn);
    for (gs_int j = 0; j < A->ncols; j++)
        if (cn[j] > 0.0) dc[j] = pow2(ilogb(dc[j]) + ilogb(pow2_unit(cn[j])));
}

static void set_ones(gs_int n, double *x)
{
    for (gs_int i = 0; i < n; i++) x[i] = 1.0;
}

gs_status gs_scale_rowcol(const gs_csr *A, double *dr, double *dc)
{
    gs_status st = GS_OK;
    double *rn = NULL, *cn = NULL;
    GS_CALL(check_matrix(A, "row/column scaling"));
    if (!dr || !dc) return GS_ERROR(GS_ERR_ARG, "row/column scaling: NULL output scale array");
    GS_CALL(check_finite(A, "row/column scaling"));
    set_ones(A->nrows, dr);
    set_ones(A->ncols, dc);
    if (!A->val) return GS_OK; /* all ones: already scaled */
    GS_TRY(GS_MALLOC(rn, A->nrows));
    GS_TRY(GS_MALLOC(cn, A->ncols));
    pow2_pass(A, dr, dc, rn, cn);
cleanup:
    gs_free(&rn);
    gs_free(&cn);
    return st;
}

/* true when every nonempty row and column norm is within tol of 1. */
static bool ruiz_converged(gs_int m, const double *rn, gs_int n, const double *cn, double tol)
{
    for (gs_int i = 0; i < m; i++)
        if (rn[i] > 0.0 && fabs(1.0 - rn[i]) > tol) return false;
    for (gs_int j = 0; j < n; j++)
        if (cn[j] > 0.0 && fabs(1.0 - cn[j]) > tol) return false;
    return true;
}

/* Ruiz (2001): A_(k+1) = R^-1/2 A_k C^-1/2 with R, C the row and column inf-norms of A_k, in exact
 * (unrounded) scales. After the first step every entry is <= 1 (|a_ij| <= sqrt(r_i c_j)) and the norms
 * approach 1 with ratio about 1/2 on the log scale. Rounding each scale to the nearest power of two
 * (a factor within [2^-1/2, 2^1/2]) then moves each norm by at most a factor 2. Rows and columns are
 * treated alike, so a symmetric A keeps dr == dc bit for bit (Dr A Dc stays symmetric: IC(0), CG). */
gs_status gs_scale_ruiz(const gs_csr *A, int max_iter, double tol, double *dr, double *dc, int *iters)
{
    gs_status st = GS_OK;
    double *rn = NULL, *cn = NULL;
    if (iters) *iters = 0;
    GS_CALL(check_matrix(A, "Ruiz scaling"));
    if (!dr || !dc) return GS_ERROR(GS_ERR_ARG, "Ruiz scaling: NULL output scale array");
    if (max_iter < 0) return GS_ERROR(GS_ERR_ARG, "Ruiz scaling: max_iter is %d; expected >= 0", max_iter);
    if (!(tol > 0.0 && tol < 1.0)) return GS_ERROR(GS_ERR_ARG, "Ruiz scaling: tol is %g; expected 0 < tol < 1", tol);
    GS_CALL(check_finite(A, "Ruiz scaling"));
    set_ones(A->nrows, dr);
    set_ones(A->ncols, dc);
    if (!A->val) return GS_OK;
    GS_TRY(GS_MALLOC(rn, A->nrows));
    GS_TRY(GS_MALLOC(cn, A->ncols));
    int it = 0;
    for (;; it++) {
        scaled_norms(A, dr, dc, rn, cn);
        if (ruiz_converged(A->nrows, rn, A->ncols, cn, tol) || it == max_iter) break;
        for (gs_int i = 0; i < A->nrows; i++)
            if (rn[i] > 0.0) dr[i] /= sqrt(rn[i]);
        for (gs_int j = 0; j < A->ncols; j++)
            if (cn[j] > 0.0) dc[j] /= sqrt(cn[j]);
    }
    if (iters) *iters = it;
    for (gs_int i = 0; i < A->nrows; i++) dr[i] = pow2_nearest(dr[i]);
    for (gs_int j = 0; j < A->ncols; j++) dc[j] = pow2_nearest(dc[j]);
cleanup:
    gs_free(&rn);
    gs_free(&cn);
    return st;
}

/* Check that map (length n, may be NULL) is a permutation. */
static gs_status check_map(gs_int n, const gs_int *map, const char *what)
{
    gs_status st = GS_OK;
    unsigned char *seen = NULL;
    if (!map) return GS_OK;
    GS_CALL(GS_CALLOC(seen, n));
    for (gs_int i = 0; i < n; i++) {
        if (map[i] < 0 || map[i] >= n || seen[map[i]])
            GS_FAIL(GS_ERR_ARG, "matrix transform: the %s map is not a permutation of 0..%d (entry %d is %d)", what,
                    (int)n - 1, (int)i, (int)map[i]);
        seen[map[i]] = 1;
    }
cleanup:
    gs_free(&seen);
    return st;
}

gs_status gs_csr_transform(const gs_csr *A, const gs_int *rowmap, const gs_int *colmap, const double *dr,
                           const double *dc, gs_csr *C)
{
    gs_status st = GS_OK;
    gs_int *icol = NULL;
    GS_CALL(check_matrix(A, "matrix transform"));
    if (!C) return GS_ERROR(GS_ERR_ARG, "matrix transform: the output matrix is NULL");
    GS_CALL(check_map(A->nrows, rowmap, "row"));
    GS_CALL(check_map(A->ncols, colmap, "column"));
    if (colmap) {
        GS_CALL(GS_MALLOC(icol, A->ncols));
        gs_perm_invert(A->ncols, colmap, icol);
    }
    bool values = A->val || dr || dc;
    GS_TRY(gs_csr_alloc(C, A->nrows, A->ncols, A->nnz, values));
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int r = rowmap ? rowmap[i] : i;
        C->rowptr[i + 1] = C->rowptr[i] + (A->rowptr[r + 1] - A->rowptr[r]);
    }
    /* row i of C is row r = rowmap[i] of A, columns renamed old -> new through icol; values
     * a_rc (dr_r dc_c): with power-of-two scales the product of the scales is exact (down to 2^-1074)
     * and so is the scaled value unless it is subnormal, where (dr_r a_rc) dc_c could underflow first. */
#pragma omp parallel for schedule(dynamic, 1024) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int r = rowmap ? rowmap[i] : i, q = A->rowptr[r], s = C->rowptr[i], len = C->rowptr[i + 1] - s;
        double sr = dr ? dr[r] : 1.0;
        for (gs_int k = 0; k < len; k++) {
            gs_int c = A->colind[q + k];
            C->colind[s + k] = icol ? icol[c] : c;
            if (values) {
                double a = A->val ? A->val[q + k] : 1.0, sc = dc ? dc[c] : 1.0, x = a * (sr * sc);
                C->val[s + k] = isnan(x) && !isnan(a) ? (a * sr) * sc : x; /* a stored 0 times scales past DBL_MAX */
            }
        }
    }
    if (colmap) GS_TRY(gs_csr_sort_rows(C));
cleanup:
    gs_free(&icol);
    if (st != GS_OK) gs_csr_free(C);
    return st;
}
