/* Host incomplete factorizations A ~ L U: symbolic ILU(k), numeric ILU on a fixed pattern, ILUT(p, tau)
 * and IC(0), all on sorted CSR (storage convention in precond/factor.h), with MILU and the pivot
 * policies error, shift and grow.
 *
 * Definitions implemented here (docs/algorithms.md quotes them):
 *
 * ILU(k), symbolic. lev(a_ij) = 0 for every stored entry of A and for the diagonal (inserted when A
 *   lacks it). Row by row, in increasing column order k < i of the current row,
 *       lev(i,j) = min( lev(i,j), lev(i,k) + lev(k,j) + 1 )   for every j > k in row k of U,
 *   and an entry is kept when its level is <= k_fill. k_fill = 0 gives the pattern of A (plus the
 *   diagonal); k_fill >= n gives the pattern of the exact LU without pivoting. The row is a sorted
 *   linked list, so the cost is O(nnz(LU) * average row length), never O(n^2).
 *
 * ILU numeric (IKJ variant) on a fixed pattern: w = a_i restricted to the pattern (entries of A outside
 *   it are dropped); for k < i in the pattern, increasing: w_k /= u_kk, w_j -= w_k u_kj for j > k in
 *   both row k of U and the pattern; then l_i = w_{j<i}, u_i = w_{j>=i}.
 *
 * ILUT(p, tau), dual threshold, row i (p = max_fill, tau = drop_tol, t_i = tau * ||a_i||_2):
 *   w = a_i;
 *   for k < i in increasing order with w_k != 0 (fill created by earlier k included):
 *       w_k /= u_kk;
 *       if |w_k| < t_i: drop w_k (w_k = 0);  else: w_j -= w_k u_kj for every j > k in row k of U;
 *   then drop every entry with |w_j| < t_i, except the diagonal; keep the p largest |w_j| among
 *   j < i (the row of L) and the p largest among j > i (the strict row of U); the diagonal is always
 *   kept. Exact zeros are never stored (a zero w_k eliminates nothing). Ties in |w_j| are broken by
 *   the smaller column. tau = 0 and p >= n give the exact LU (without pivoting).
 *
 * IC(0): L on the pattern of the lower triangle of A (diagonal inserted if absent), row by row:
 *       l_ij = (a_ij - sum_{k<j} l_ik l_jk) / l_jj   (j < i, in the pattern)
 *       l_ii = sqrt(a_ii - sum_{k<i} l_ik^2)
 *   and LT = L^T. Only the lower triangle of A is read.
 *
 * MILU (opts->milu; ILU numeric, ILUT, and ILUTP in precond/ilutp.c). Row i's compensation c_i is the
 *   sum over j of the dropped part of row i of A - L U, added to w_i after elimination and dropping,
 *   before the pivot rule (u_ii = w_i + c_i):
 *     ILU numeric: c_i = sum of a_ij outside the pattern - sum over k of w_k u_kj for every j of row k
 *       of U outside the pattern (the fill the pattern drops);
 *     ILUT: c_i = sum of the w_k dropped by |w_k / u_kk| < t_i (the undivided w_k)
 *       + sum of l_ik * (u_k 1) for the l_ik applied and then left out by the p largest rule (u_k 1 =
 *       the sum of the stored row k of U) + sum of the w_j, j > i, dropped by t_i or by the p rule.
 *   Hence, when no pivot is replaced by the shift policy, (L U) 1 = (A + alpha diag(s)) 1 exactly in
 *   exact arithmetic (alpha = 0 unless the grow policy shifted), up to rounding in floating point.
 *
 * Pivots. An ILU pivot u_ii is "zero" when |u_ii| < DBL_MIN (exactly zero or subnormal: its reciprocal
 * would overflow); an IC(0) pivot a_ii - sum l_ik^2 is "non-positive" when <= 0. Policy error: the
 * factorization stops with GS_ERR_NUMERIC naming the row (1-based). Policy shift: the pivot becomes
 * sign(u_ii) * shift * ||a_i||_inf with sign(0) = +1 (IC(0): shift * ||a_i||_inf under the square
 * root); the shift itself when row i of A is zero; the row is recorded in info. A non-finite value
 * anywhere in a row of the factors (or of A) is GS_ERR_NUMERIC naming the row, under either policy.
 * Policy grow (driver in precond/factor_common.c): a pivot fails when |u_ii| < max(DBL_MIN,
 * min_pivot * s_i) (IC(0): d <= 0 or d < min_pivot * s_i), s_i = ||a_i||_inf or 1 for a zero row; a
 * failure (or a non-finite factor value) refactors A + alpha diag(s), alpha = shift, 10 shift, ...,
 * at most GS_FACTOR_GROW_MAX times: w_ii (IC(0): a_ii) gets + alpha s_i when row i is loaded, drop
 * thresholds and s stay those of A.
 *
 * Row numbers in messages and in info: the reported row of local row i is
 * (row_names ? row_names[i] : i) + row_offset; info stores it 0-based, messages print it 1-based.
 *
 * Outputs: gs_iluk_symbolic, gs_ilut and gs_ic0 overwrite L and U (LT) without freeing what they held
 * and leave them zeroed on failure. gs_ilu_numeric keeps the patterns, allocates L->val / U->val when
 * they are NULL and overwrites them otherwise (partly written on failure). opts == NULL means all-zero
 * options: zero pivots are errors, tau = 0, p = 0 (ILUT keeps only the diagonal). Thread-safe: no
 * shared state, so blocks may be factored concurrently. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/factor_impl.h"

static const gs_factor_opts default_opts = {GS_ZERO_PIVOT_ERROR, 0.0, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};


/* ------------------------------------------------------------------------------------------------ */
/* ILU(k) symbolic                                                                                   */

/* ILU(0): no fill, so the pattern is A's split at the diagonal (a missing diagonal inserted): two
 * counting passes and one filling pass, O(nnz), instead of the level-of-fill list walk. */
static gs_status ilu0_symbolic(const gs_csr *A, gs_csr *L, gs_csr *U)
{
    gs_status st = GS_OK;
    const gs_int n = A->nrows;
    gs_int *lrp = NULL, *lci = NULL, *urp = NULL, *uci = NULL;
    int64_t lnz = 0, unz = 0;
    GS_TRY(GS_MALLOC(lrp, (size_t)n + 1));
    GS_TRY(GS_MALLOC(urp, (size_t)n + 1));
    lrp[0] = urp[0] = 0;
    /* row counts in parallel (row i's into slot i + 1), then the prefix sums with the overflow check */
#pragma omp parallel for schedule(static) if (A->nnz > 100000)
    for (gs_int i = 0; i < n; i++) {
        gs_int p = A->rowptr[i], pe = A->rowptr[i + 1], d = p;
        while (d < pe && A->colind[d] < i) d++;
        lrp[i + 1] = d - p;
        urp[i + 1] = (pe - d) + ((d < pe && A->colind[d] == i) ? 0 : 1);
    }
    for (gs_int i = 0; i < n; i++) {
        lnz += lrp[i + 1];
        unz += urp[i + 1];
        if (unz > (int64_t)GS_INT_MAX)
            GS_FAIL(GS_ERR_MEM, "the factor would have more than %d nonzeros (32-bit indices)", (int)GS_INT_MAX);
        lrp[i + 1] = (gs_int)lnz;
        urp[i + 1] = (gs_int)unz;
    }
    GS_TRY(GS_MALLOC(lci, lnz > 0 ? (size_t)lnz : 1));
    GS_TRY(GS_MALLOC(uci, unz > 0 ? (size_t)unz : 1));
#pragma omp parallel for schedule(static) if (A->nnz > 100000)
    for (gs_int i = 0; i < n; i++) {
        gs_int p = A->rowptr[i], pe = A->rowptr[i + 1], ql = lrp[i], qu = urp[i];
        for (; p < pe && A->colind[p] < i; p++) lci[ql++] = A->colind[p];
        if (p == pe || A->colind[p] != i) uci[qu++] = i; /* the inserted diagonal */
        for (; p < pe; p++) uci[qu++] = A->colind[p];
    }
    gs_fi_csr_adopt(L, n, (gs_int)lnz, lrp, lci, NULL);
    gs_fi_csr_adopt(U, n, (gs_int)unz, urp, uci, NULL);
    return GS_OK;
cleanup:
    gs_free(&lrp);
    gs_free(&lci);
    gs_free(&urp);
    gs_free(&uci);
    return st;
}

gs_status gs_iluk_symbolic(const gs_csr *A, int k, gs_csr *L, gs_csr *U)
{
    gs_status st = GS_OK;
    gs_int *next = NULL, *lev = NULL, *mark = NULL;
    gs_int *lrp = NULL, *lci = NULL, *urp = NULL, *uci = NULL, *ulev = NULL;
    int64_t lcap = 0, ucap = 0, ulcap = 0, lnz = 0, unz = 0;

    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_iluk_symbolic: output L or U is NULL");
    memset(L, 0, sizeof *L);
    memset(U, 0, sizeof *U);
    GS_CALL(gs_factor_check_input(A, "ILU(k) symbolic factorization"));
    if (k < 0)
        return GS_ERROR(GS_ERR_ARG, "ILU(k): the fill level must be >= 0, got %d", k);
    if (k == 0) return ilu0_symbolic(A, L, U);

    const gs_int n = A->nrows;
    /* A level of fill is at most n - 2 (a fill path has at most n - 1 edges), so clamping keeps
     * k >= n exact and lev_ik + lev_kj + 1 free of overflow. */
    const gs_int kf = k > n ? n : (gs_int)k;
    const gs_int head = n, end = -1;

    GS_TRY(GS_MALLOC(next, (size_t)n + 1));
    GS_TRY(GS_MALLOC(lev, n));
    GS_TRY(GS_MALLOC(mark, n));
    GS_TRY(GS_MALLOC(lrp, (size_t)n + 1));
    GS_TRY(GS_MALLOC(urp, (size_t)n + 1));
    for (gs_int j = 0; j < n; j++) mark[j] = -1;

    int64_t guess = (int64_t)A->nnz + n;
    GS_TRY(gs_fi_grow(&lci, &lcap, guess / 2 + 1, sizeof *lci));
    GS_TRY(gs_fi_grow(&uci, &ucap, guess / 2 + n + 1, sizeof *uci));
    GS_TRY(gs_fi_grow(&ulev, &ulcap, ucap, sizeof *ulev));
    lrp[0] = 0;
    urp[0] = 0;

    for (gs_int i = 0; i < n; i++) {
        /* Row i of A as a sorted linked list (level 0), with the diagonal inserted. */
        gs_int prev = head;
        bool diag_done = false;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            if (!diag_done && j >= i) {
                if (j > i) {
                    next[prev] = i;
                    lev[i] = 0;
                    mark[i] = i;
                    prev = i;
                }
                diag_done = true;
            }
            next[prev] = j;
            lev[j] = 0;
            mark[j] = i;
            prev = j;
        }
        if (!diag_done) {
            next[prev] = i;
            lev[i] = 0;
            mark[i] = i;
            prev = i;
        }
        next[prev] = end;

        /* Eliminate with rows k < i in increasing order; lev(i,k) is final when k is reached since
         * only rows before k update it. */
        for (gs_int kc = next[head]; kc != end && kc < i; kc = next[kc]) {
            gs_int lik = lev[kc];
            if (lik >= kf) continue; /* lik + lev_kj + 1 > kf for every j */
            gs_int q = kc;           /* insertion cursor: columns of row kc of U increase */
            for (gs_int p = urp[kc] + 1; p < urp[kc + 1]; p++) {
                gs_int j = uci[p];
                gs_int nl = lik + ulev[p] + 1;
                if (nl > kf) continue;
                if (mark[j] == i) {
                    if (nl < lev[j]) lev[j] = nl;
                    q = j;
                    continue;
                }
                while (next[q] != end && next[q] < j) q = next[q];
                next[j] = next[q];
                next[q] = j;
                mark[j] = i;
                lev[j] = nl;
                q = j;
            }
        }

        /* Split the list into the row of L (j < i) and of U (j >= i, diagonal first). */
        for (gs_int j = next[head]; j != end; j = next[j]) {
            if (j < i) {
                GS_TRY(gs_fi_grow(&lci, &lcap, lnz + 1, sizeof *lci));
                lci[lnz++] = j;
            } else {
                GS_TRY(gs_fi_grow(&uci, &ucap, unz + 1, sizeof *uci));
                GS_TRY(gs_fi_grow(&ulev, &ulcap, unz + 1, sizeof *ulev));
                uci[unz] = j;
                ulev[unz++] = lev[j];
            }
        }
        lrp[i + 1] = (gs_int)lnz;
        urp[i + 1] = (gs_int)unz;
    }

    gs_fi_csr_adopt(L, n, (gs_int)lnz, lrp, lci, NULL);
    gs_fi_csr_adopt(U, n, (gs_int)unz, urp, uci, NULL);
    lrp = lci = urp = uci = NULL;

cleanup:
    gs_free(&next);
    gs_free(&lev);
    gs_free(&mark);
    gs_free(&ulev);
    gs_free(&lrp);
    gs_free(&lci);
    gs_free(&urp);
    gs_free(&uci);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* ILU numeric on a fixed pattern                                                                    */

/* The patterns must be what gs_iluk_symbolic makes: L strict lower, U upper starting with its diagonal. */
static gs_status check_patterns(const gs_csr *L, const gs_csr *U, gs_int n)
{
    if (L->nrows != n || L->ncols != n || U->nrows != n || U->ncols != n || !L->rowptr || !U->rowptr)
        return GS_ERROR(GS_ERR_ARG,
                        "ILU numeric factorization: the L/U patterns (%d x %d, %d x %d) do not match "
                        "the %d x %d matrix; run the symbolic factorization on this matrix first",
                        (int)L->nrows, (int)L->ncols, (int)U->nrows, (int)U->ncols, (int)n, (int)n);
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++)
            if (L->colind[p] < 0 || L->colind[p] >= i || (p > L->rowptr[i] && L->colind[p] <= L->colind[p - 1]))
                return GS_ERROR(GS_ERR_ARG,
                                "ILU numeric factorization: row %d (1-based) of the L pattern is not "
                                "strictly lower triangular and sorted",
                                (int)i + 1);
        if (U->rowptr[i + 1] <= U->rowptr[i] || U->colind[U->rowptr[i]] != i)
            return GS_ERROR(GS_ERR_ARG,
                            "ILU numeric factorization: row %d (1-based) of the U pattern does not "
                            "start with its diagonal",
                            (int)i + 1);
        for (gs_int p = U->rowptr[i] + 1; p < U->rowptr[i + 1]; p++)
            if (U->colind[p] >= n || U->colind[p] <= U->colind[p - 1])
                return GS_ERROR(GS_ERR_ARG,
                                "ILU numeric factorization: row %d (1-based) of the U pattern is not "
                                "sorted upper triangular",
                                (int)i + 1);
    }
    return GS_OK;
}

/* The factors an attempt of the pivot policy writes (gs_fi_factor_with_policy). */
typedef struct lu_out {
    gs_csr *L, *U;
    gs_int *colperm; /* ILUTP only */
} lu_out;

/* One ILU numeric factorization of A + alpha diag(s) on the patterns of ctx's L and U. */
static gs_status ilu_numeric_attempt(const gs_csr *A, const gs_factor_opts *o, double alpha, void *ctx,
                                     gs_factor_info *info)
{
    gs_status st = GS_OK;
    double *w = NULL, *lval_new = NULL, *uval_new = NULL;
    gs_int *mark = NULL;
    gs_csr *L = ((lu_out *)ctx)->L, *U = ((lu_out *)ctx)->U;

    gs_fi_info_init(info);
    GS_CALL(gs_factor_check_input(A, "ILU numeric factorization"));
    if (A->nnz > 0 && !A->val)
        return GS_ERROR(GS_ERR_ARG, "ILU numeric factorization: the matrix has no values");
    const gs_int n = A->nrows;
    GS_CALL(check_patterns(L, U, n));

    GS_TRY(GS_MALLOC(w, n));
    GS_TRY(GS_MALLOC(mark, n));
    for (gs_int j = 0; j < n; j++) mark[j] = -1;
    if (!L->val) GS_TRY(GS_MALLOC(lval_new, L->nnz));
    if (!U->val) GS_TRY(GS_MALLOC(uval_new, U->nnz));
    double *lv = L->val ? L->val : lval_new;
    double *uv = U->val ? U->val : uval_new;
    const gs_int *lrp = L->rowptr, *lci = L->colind, *urp = U->rowptr, *uci = U->colind;

    for (gs_int i = 0; i < n; i++) {
        /* w = a_i on the pattern of row i (entries of A outside it are dropped). */
        for (gs_int p = lrp[i]; p < lrp[i + 1]; p++) {
            w[lci[p]] = 0.0;
            mark[lci[p]] = i;
        }
        for (gs_int p = urp[i]; p < urp[i + 1]; p++) {
            w[uci[p]] = 0.0;
            mark[uci[p]] = i;
        }
        double row_inf;
        bool has_diag;
        GS_TRY(gs_fi_scan_row(A, o, i, &row_inf, NULL, &has_diag));
        /* MILU: c = the sum of the dropped entries of row i (A's outside the pattern, fill outside it) */
        double c = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (mark[A->colind[p]] == i) w[A->colind[p]] = A->val[p];
            else c += A->val[p];
        }
        if (alpha != 0.0) w[i] += alpha * gs_fi_pivot_scale(row_inf);

        /* IKJ: w_k /= u_kk, then w_j -= w_k u_kj for j > k on the pattern. */
        for (gs_int p = lrp[i]; p < lrp[i + 1]; p++) {
            gs_int k = lci[p];
            double wk = w[k] / uv[urp[k]];
            w[k] = wk;
            if (wk == 0.0) continue;
            for (gs_int q = urp[k] + 1; q < urp[k + 1]; q++) {
                if (mark[uci[q]] == i) w[uci[q]] -= wk * uv[q];
                else c -= wk * uv[q];
            }
        }
        if (o->milu) w[i] += c;

        for (gs_int p = lrp[i]; p < lrp[i + 1]; p++) {
            lv[p] = w[lci[p]];
            if (!isfinite(lv[p])) GS_TRY(gs_fi_nonfinite_error(o, i, lci[p], lv[p], "L factor"));
        }
        for (gs_int p = urp[i]; p < urp[i + 1]; p++) {
            uv[p] = w[uci[p]];
            if (!isfinite(uv[p])) GS_TRY(gs_fi_nonfinite_error(o, i, uci[p], uv[p], "U factor"));
        }
        GS_TRY(gs_fi_ilu_pivot(o, info, i, row_inf, has_diag, &uv[urp[i]]));
    }

    if (lval_new) L->val = lval_new;
    if (uval_new) U->val = uval_new;
    lval_new = uval_new = NULL;
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = U->nnz;
    }

cleanup:
    gs_free(&w);
    gs_free(&mark);
    gs_free(&lval_new);
    gs_free(&uval_new);
    return st;
}

gs_status gs_ilu_numeric(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info)
{
    if (!o) o = &default_opts;
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilu_numeric: L or U is NULL");
    lu_out out = {L, U, NULL};
    return gs_fi_factor_with_policy(A, o, ilu_numeric_attempt, &out, info);
}

/* ------------------------------------------------------------------------------------------------ */

/* The strict row i of U: the entries ucand[0..nu) of w other than the diagonal that are nonzero and
 * >= thr, then the p largest, into cand[0..*m) sorted by column; *c += every value dropped (MILU). */
static gs_status ilut_u_row(const gs_factor_opts *o, gs_int i, double thr, const double *w, const gs_int *ucand,
                            gs_int nu, gs_fi_cand *cand, gs_int *m, double *c)
{
    gs_int k = 0;
    for (gs_int t = 0; t < nu; t++) {
        gs_int j = ucand[t];
        if (j == i) continue;
        if (!isfinite(w[j])) return gs_fi_nonfinite_error(o, i, j, w[j], "U factor (ILUT)");
        if (w[j] == 0.0 || fabs(w[j]) < thr) {
            *c += w[j];
            continue;
        }
        cand[k].col = j;
        cand[k++].mag = fabs(w[j]);
    }
    gs_int kept = gs_fi_keep_largest(cand, k, o->max_fill);
    for (gs_int t = kept; t < k; t++) *c += w[cand[t].col];
    *m = kept;
    return GS_OK;
}

/* One ILUT of A + alpha diag(s) into ctx's L and U (thresholds from A). */
static gs_status ilut_attempt(const gs_csr *A, const gs_factor_opts *o, double alpha, void *ctx,
                              gs_factor_info *info)
{
    gs_status st = GS_OK;
    double *w = NULL, *lv = NULL, *uv = NULL, *urs = NULL;
    gs_int *mark = NULL, *heap = NULL, *ucand = NULL, *lrp = NULL, *lci = NULL, *urp = NULL, *uci = NULL;
    gs_fi_cand *cand = NULL;
    int64_t lcap = 0, lvcap = 0, ucap = 0, uvcap = 0, lnz = 0, unz = 0;
    gs_csr *L = ((lu_out *)ctx)->L, *U = ((lu_out *)ctx)->U;

    gs_fi_info_init(info);
    memset(L, 0, sizeof *L);
    memset(U, 0, sizeof *U);
    GS_CALL(gs_factor_check_input(A, "ILUT factorization"));
    if (A->nnz > 0 && !A->val) return GS_ERROR(GS_ERR_ARG, "ILUT factorization: the matrix has no values");
    if (!(o->drop_tol >= 0.0))
        return GS_ERROR(GS_ERR_ARG, "ILUT: the drop tolerance must be >= 0, got %g", o->drop_tol);
    if (o->max_fill < 0)
        return GS_ERROR(GS_ERR_ARG, "ILUT: max_fill (p) must be >= 0, got %d", o->max_fill);

    const gs_int n = A->nrows;
    const int64_t pmax = o->max_fill;
    GS_TRY(GS_MALLOC(w, n));
    GS_TRY(GS_MALLOC(mark, n));
    GS_TRY(GS_MALLOC(heap, n));
    GS_TRY(GS_MALLOC(ucand, n));
    GS_TRY(GS_MALLOC(cand, n));
    if (o->milu) GS_TRY(GS_MALLOC(urs, n));
    GS_TRY(GS_MALLOC(lrp, (size_t)n + 1));
    GS_TRY(GS_MALLOC(urp, (size_t)n + 1));
    for (gs_int j = 0; j < n; j++) mark[j] = -1;
    lrp[0] = urp[0] = 0;

    for (gs_int i = 0; i < n; i++) {
        double row_inf, sum_sq;
        bool has_diag;
        GS_TRY(gs_fi_scan_row(A, o, i, &row_inf, &sum_sq, &has_diag));
        const double norm2 = sqrt(sum_sq);
        /* tau * 0 stays 0 even for tau = inf (nothing to drop in a zero row). */
        const double thr = norm2 > 0.0 ? o->drop_tol * norm2 : 0.0;

        /* w = a_i; columns k < i go to the heap, columns >= i to ucand (diagonal always present). */
        gs_int hlen = 0, nu = 0, nl = 0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            w[j] = A->val[p];
            mark[j] = i;
            if (j < i) gs_fi_heap_push(heap, &hlen, j);
            else ucand[nu++] = j;
        }
        if (mark[i] != i) {
            w[i] = 0.0;
            mark[i] = i;
            ucand[nu++] = i;
        }
        if (alpha != 0.0) w[i] += alpha * gs_fi_pivot_scale(row_inf);

        /* Eliminate in increasing k; fill with j < i joins the heap (j > k keeps the order valid).
         * MILU: c sums the row's dropped part of A - L U (see the header). */
        double c = 0.0;
        while (hlen > 0) {
            gs_int k = gs_fi_heap_pop(heap, &hlen);
            if (w[k] == 0.0) continue;
            double wk = w[k] / uv[urp[k]];
            if (!isfinite(wk)) GS_TRY(gs_fi_nonfinite_error(o, i, k, wk, "L factor (ILUT)"));
            if (wk == 0.0 || fabs(wk) < thr) { /* dropped: it eliminates nothing */
                c += w[k];
                w[k] = 0.0;
                continue;
            }
            w[k] = wk;
            cand[nl].col = k;
            cand[nl++].mag = fabs(wk);
            for (gs_int q = urp[k] + 1; q < urp[k + 1]; q++) {
                gs_int j = uci[q];
                if (mark[j] != i) {
                    mark[j] = i;
                    w[j] = 0.0;
                    if (j < i) gs_fi_heap_push(heap, &hlen, j);
                    else ucand[nu++] = j;
                }
                w[j] -= wk * uv[q];
            }
        }

        /* Row of L: thresholded during elimination (later updates only touch j > k); keep the p
         * largest. */
        gs_int ml = nl;
        nl = gs_fi_keep_largest(cand, nl, pmax);
        if (o->milu) /* l_ik was applied, then left out: the row lost l_ik u_k */
            for (gs_int t = nl; t < ml; t++) c += w[cand[t].col] * urs[cand[t].col];
        GS_TRY(gs_fi_grow(&lci, &lcap, lnz + nl, sizeof *lci));
        GS_TRY(gs_fi_grow(&lv, &lvcap, lnz + nl, sizeof *lv));
        for (gs_int t = 0; t < nl; t++) {
            lci[lnz] = cand[t].col;
            lv[lnz++] = w[cand[t].col];
        }
        lrp[i + 1] = (gs_int)lnz;

        /* Row of U: diagonal always; others if nonzero and >= t_i, then the p largest. */
        double piv = w[i];
        gs_int m = 0;
        GS_TRY(ilut_u_row(o, i, thr, w, ucand, nu, cand, &m, &c));
        if (o->milu) piv += c;
        if (!isfinite(piv)) GS_TRY(gs_fi_nonfinite_error(o, i, i, piv, "U factor (ILUT)"));
        GS_TRY(gs_fi_ilu_pivot(o, info, i, row_inf, has_diag, &piv));
        GS_TRY(gs_fi_grow(&uci, &ucap, unz + m + 1, sizeof *uci));
        GS_TRY(gs_fi_grow(&uv, &uvcap, unz + m + 1, sizeof *uv));
        uci[unz] = i;
        uv[unz++] = piv;
        double rs = piv;
        for (gs_int t = 0; t < m; t++) {
            uci[unz] = cand[t].col;
            uv[unz++] = w[cand[t].col];
            rs += w[cand[t].col];
        }
        urp[i + 1] = (gs_int)unz;
        if (urs) urs[i] = rs;
    }

    /* A matrix with no entries in L still needs valid (minimal) arrays. */
    GS_TRY(gs_fi_grow(&lci, &lcap, lnz + 1, sizeof *lci));
    GS_TRY(gs_fi_grow(&lv, &lvcap, lnz + 1, sizeof *lv));
    GS_TRY(gs_fi_grow(&uci, &ucap, unz + 1, sizeof *uci));
    GS_TRY(gs_fi_grow(&uv, &uvcap, unz + 1, sizeof *uv));
    gs_fi_csr_adopt(L, n, (gs_int)lnz, lrp, lci, lv);
    gs_fi_csr_adopt(U, n, (gs_int)unz, urp, uci, uv);
    lrp = lci = urp = uci = NULL;
    lv = uv = NULL;
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = U->nnz;
    }

cleanup:
    gs_free(&w);
    gs_free(&mark);
    gs_free(&heap);
    gs_free(&ucand);
    gs_free(&cand);
    gs_free(&urs);
    gs_free(&lrp);
    gs_free(&lci);
    gs_free(&lv);
    gs_free(&urp);
    gs_free(&uci);
    gs_free(&uv);
    return st;
}

gs_status gs_ilut(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info)
{
    if (!o) o = &default_opts;
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilut: output L or U is NULL");
    lu_out out = {L, U, NULL};
    return gs_fi_factor_with_policy(A, o, ilut_attempt, &out, info);
}

/* ------------------------------------------------------------------------------------------------ */
/* IC(0)                                                                                             */

/* The IC(0) pivot rule for a finite d = a_ii - sum_k l_ik^2 of row i: error/shift act on d <= 0 (shift:
 * d = shift * ||a_i||_inf, or shift for a zero row); grow fails unless d > 0 and d >= min_pivot * s_i. */
static gs_status ic0_pivot(const gs_factor_opts *o, gs_factor_info *info, gs_int i, double row_inf, double *d)
{
    gs_int r = gs_fi_reported_row(o, i) + 1;
    if (o->zero_pivot == GS_ZERO_PIVOT_GROW) {
        const double bound = o->min_pivot * gs_fi_pivot_scale(row_inf);
        if (*d > 0.0 && *d >= bound) return GS_OK;
        return GS_ERROR(GS_ERR_NUMERIC,
                        "pivot at row %d (1-based) of the incomplete Cholesky factorization: a_ii - sum_k "
                        "l_ik^2 = %g is not positive or below min_pivot * ||a_i||_inf = %g",
                        (int)r, *d, bound);
    }
    if (*d > 0.0) return GS_OK;
    if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT)
        return GS_ERROR(GS_ERR_NUMERIC,
                        "non-positive pivot at row %d (1-based) of the incomplete Cholesky "
                        "factorization: a_ii - sum_k l_ik^2 = %g (must be > 0; the matrix is not "
                        "positive definite, or IC(0) broke down on it); set "
                        "preconditioner.zero_pivot = \"shift\" to perturb it, or use ilu0",
                        (int)r, *d);
    double s = o->shift * row_inf;
    if (!(s >= DBL_MIN)) s = o->shift;
    if (!(s >= DBL_MIN) || !isfinite(s))
        return GS_ERROR(GS_ERR_NUMERIC,
                        "non-positive pivot at row %d (1-based) of the incomplete Cholesky "
                        "factorization: %g, and preconditioner.shift = %g cannot replace it (need a "
                        "positive, finite shift)",
                        (int)r, *d, o->shift);
    *d = s;
    gs_fi_info_record_shift(info, o, i);
    return GS_OK;
}

/* One IC(0) of A + alpha diag(s) into ctx's L and U (= L^T). */
static gs_status ic0_attempt(const gs_csr *A, const gs_factor_opts *o, double alpha, void *ctx,
                             gs_factor_info *info)
{
    gs_status st = GS_OK;
    gs_int *lrp = NULL, *lci = NULL;
    double *lv = NULL, *x = NULL;
    gs_csr F = {0};
    gs_csr *L = ((lu_out *)ctx)->L, *LT = ((lu_out *)ctx)->U;

    gs_fi_info_init(info);
    memset(L, 0, sizeof *L);
    memset(LT, 0, sizeof *LT);
    GS_CALL(gs_factor_check_input(A, "IC(0) factorization"));
    if (A->nnz > 0 && !A->val) return GS_ERROR(GS_ERR_ARG, "IC(0) factorization: the matrix has no values");
    const gs_int n = A->nrows;

    /* Pattern: the strict lower triangle of A, then the diagonal (last in each row). */
    GS_TRY(GS_MALLOC(lrp, (size_t)n + 1));
    int64_t cnt = 0;
    lrp[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1] && A->colind[p] < i; p++) cnt++;
        cnt++;
        if (cnt > (int64_t)GS_INT_MAX) GS_FAIL(GS_ERR_MEM, "IC(0): the factor has more than %d nonzeros", (int)GS_INT_MAX);
        lrp[i + 1] = (gs_int)cnt;
    }
    GS_TRY(GS_MALLOC(lci, cnt));
    GS_TRY(GS_MALLOC(lv, cnt));
    GS_TRY(GS_CALLOC(x, n));

    for (gs_int i = 0; i < n; i++) {
        double row_inf, aii = 0.0;
        GS_TRY(gs_fi_scan_row(A, o, i, &row_inf, NULL, NULL));
        gs_int q = lrp[i];
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            if (j < i) {
                lci[q] = j;
                lv[q++] = A->val[p];
            } else if (j == i) {
                aii = A->val[p];
            }
        }
        const gs_int dpos = lrp[i + 1] - 1;
        lci[dpos] = i;

        /* l_ij = (a_ij - sum_{k<j} l_ik l_jk) / l_jj, with x holding the l_ik computed so far. */
        double d = alpha != 0.0 ? aii + alpha * gs_fi_pivot_scale(row_inf) : aii;
        for (gs_int p = lrp[i]; p < dpos; p++) {
            gs_int j = lci[p];
            double s = lv[p];
            for (gs_int r = lrp[j]; r < lrp[j + 1] - 1; r++) s -= x[lci[r]] * lv[r];
            double lij = s / lv[lrp[j + 1] - 1];
            lv[p] = lij;
            x[j] = lij;
            d -= lij * lij;
        }
        for (gs_int p = lrp[i]; p < dpos; p++) {
            x[lci[p]] = 0.0;
            if (!isfinite(lv[p])) GS_TRY(gs_fi_nonfinite_error(o, i, lci[p], lv[p], "incomplete Cholesky factor"));
        }
        if (!isfinite(d)) GS_TRY(gs_fi_nonfinite_error(o, i, i, d, "incomplete Cholesky factor"));
        GS_TRY(ic0_pivot(o, info, i, row_inf, &d));
        lv[dpos] = sqrt(d);
    }

    gs_fi_csr_adopt(&F, n, lrp[n], lrp, lci, lv);
    lrp = lci = NULL;
    lv = NULL;
    GS_TRY(gs_csr_transpose(&F, LT));
    *L = F;
    memset(&F, 0, sizeof F);
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = LT->nnz;
    }

cleanup:
    gs_free(&lrp);
    gs_free(&lci);
    gs_free(&lv);
    gs_free(&x);
    gs_csr_free(&F);
    return st;
}

gs_status gs_ic0(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *LT, gs_factor_info *info)
{
    if (!o) o = &default_opts;
    if (!L || !LT) return GS_ERROR(GS_ERR_ARG, "gs_ic0: output L or LT is NULL");
    lu_out out = {L, LT, NULL};
    return gs_fi_factor_with_policy(A, o, ic0_attempt, &out, info);
}
