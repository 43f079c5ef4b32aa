/* ILUTP(p, tau, perm_tol): ILUT with column threshold pivoting (Saad's ILUTP), A Q ~ L U.
 *
 * The rule, row i (p = max_fill, tau = drop_tol, t_i = tau * ||a_i||_2; a "position" is a column number
 * of A Q, i.e. the current column numbering; Q starts as the identity):
 *   w = a_i placed at the positions of its columns (+ alpha s_i at position i under the grow policy);
 *   eliminate exactly as ILUT (precond/ilu_factor.c) over positions k < i in increasing order:
 *       w_k /= u_kk; if |w_k| < t_i drop w_k, else w_j -= w_k u_kj for every j > k in row k of U;
 *   drop every w_j, j > i, that is zero or has |w_j| < t_i, then keep the p largest of them and the p
 *   largest of the row of L (ties in |w_j| broken by the smaller position), as ILUT does;
 *   pivoting: let j be the kept position > i with the largest |w_j| (ties: the smaller position); when
 *       perm_tol * |w_j| > |w_i|, positions i and j are exchanged (columns i and j of Q swap, for this
 *       row and every later one): the pivot becomes w_j, and the former diagonal value w_i moves to
 *       position j, kept when nonzero and |w_i| >= t_i (in the slot the pivot left, so the strict row
 *       of U still holds at most p entries), dropped otherwise;
 *   MILU: c_i as ILUT's (dropped L entries by threshold, undivided; l_ik (u_k 1) for the L entries left
 *       out by the p rule; dropped U entries) plus a dropped former diagonal, and u_ii = pivot + c_i;
 *   then the pivot rule of the policy (error, shift or grow) on u_ii, exactly as ILUT.
 * Since Q Q^T = I, MILU keeps (L U) 1 = (A Q) 1 = A 1 (+ alpha s with the grow policy).
 * perm_tol = 0 never exchanges (0 * |w_j| > |w_i| is false), and the factors are gs_ilut's exactly.
 *
 * Bookkeeping: w is indexed by the columns of A, qp[k] = the column of A at position k, qi = its inverse.
 * A position < i never moves again (exchanges at row i involve i and positions > i), so L's column
 * numbers are stored as positions; U's off-diagonal entries are stored as columns of A while the
 * factorization runs (their positions may still change) and turned into final positions, each row then
 * sorted, at the end. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/factor_impl.h"

static const gs_factor_opts default_opts = {GS_ZERO_PIVOT_ERROR, 0.0, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

typedef struct ilutp_out {
    gs_csr *L, *U;
    gs_int *colperm;
} ilutp_out;

/* The work arrays of one factorization (n each; w and mark indexed by columns of A, heap by positions). */
typedef struct ilutp_work {
    double *w, *urs; /* urs[k] = sum of the stored row k of U (MILU) */
    gs_int *mark, *heap, *ucand, *qp, *qi;
    gs_fi_cand *cand;
} ilutp_work;

/* The growing factor arrays. */
typedef struct ilutp_fac {
    gs_int *lrp, *lci, *urp, *uci;
    double *lv, *uv;
    int64_t lcap, lvcap, ucap, uvcap, lnz, unz;
} ilutp_fac;

typedef struct pos_val {
    gs_int pos;
    double val;
} pos_val;

static int cmp_pos(const void *a, const void *b)
{
    const pos_val *x = a, *y = b;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Eliminate row i (w loaded, its columns at positions < i in the heap, the others in ucand[0..*nu)):
 * the L candidates (positions) in cand[0..*nl); *c += the undivided w_k dropped by the threshold. */
static gs_status eliminate(const gs_factor_opts *o, gs_int i, double thr, ilutp_work *W, const ilutp_fac *F,
                           gs_int hlen, gs_int *nu, gs_int *nl, double *c)
{
    double *w = W->w;
    while (hlen > 0) {
        gs_int k = gs_fi_heap_pop(W->heap, &hlen);
        gs_int ck = W->qp[k];
        if (w[ck] == 0.0) continue;
        double wk = w[ck] / F->uv[F->urp[k]];
        if (!isfinite(wk)) return gs_fi_nonfinite_error(o, i, k, wk, "L factor (ILUTP)");
        if (wk == 0.0 || fabs(wk) < thr) { /* dropped: it eliminates nothing */
            *c += w[ck];
            w[ck] = 0.0;
            continue;
        }
        w[ck] = wk;
        W->cand[*nl].col = k;
        W->cand[(*nl)++].mag = fabs(wk);
        for (gs_int q = F->urp[k] + 1; q < F->urp[k + 1]; q++) {
            gs_int j = F->uci[q]; /* a column of A, at position qi[j] > k */
            if (W->mark[j] != i) {
                W->mark[j] = i;
                w[j] = 0.0;
                if (W->qi[j] < i) gs_fi_heap_push(W->heap, &hlen, W->qi[j]);
                else W->ucand[(*nu)++] = j;
            }
            w[j] -= wk * F->uv[q];
        }
    }
    return GS_OK;
}

/* Row i of L: the p largest candidates, stored by position; MILU adds l_ik (u_k 1) of those left out. */
static gs_status store_l_row(const gs_factor_opts *o, gs_int i, ilutp_work *W, ilutp_fac *F, gs_int nl, double *c)
{
    gs_int ml = nl;
    nl = gs_fi_keep_largest(W->cand, nl, o->max_fill);
    if (o->milu)
        for (gs_int t = nl; t < ml; t++) *c += W->w[W->qp[W->cand[t].col]] * W->urs[W->cand[t].col];
    GS_CALL(gs_fi_grow(&F->lci, &F->lcap, F->lnz + nl, sizeof *F->lci));
    GS_CALL(gs_fi_grow(&F->lv, &F->lvcap, F->lnz + nl, sizeof *F->lv));
    for (gs_int t = 0; t < nl; t++) {
        F->lci[F->lnz] = W->cand[t].col;
        F->lv[F->lnz++] = W->w[W->qp[W->cand[t].col]];
    }
    F->lrp[i + 1] = (gs_int)F->lnz;
    return GS_OK;
}

/* Row i of U: drop, keep the p largest, pivot (exchange positions i and j), MILU, the pivot rule; stored
 * with A's column numbers (diagonal first). */
static gs_status store_u_row(const gs_factor_opts *o, gs_factor_info *info, gs_int i, double thr, double row_inf,
                             bool has_diag, ilutp_work *W, ilutp_fac *F, gs_int nu, double c)
{
    double *w = W->w;
    gs_fi_cand *cand = W->cand;
    gs_int m = 0;
    for (gs_int t = 0; t < nu; t++) {
        gs_int j = W->ucand[t];
        if (j == W->qp[i]) continue;
        if (!isfinite(w[j])) return gs_fi_nonfinite_error(o, i, W->qi[j], w[j], "U factor (ILUTP)");
        if (w[j] == 0.0 || fabs(w[j]) < thr) {
            c += w[j];
            continue;
        }
        cand[m].col = W->qi[j];
        cand[m++].mag = fabs(w[j]);
    }
    gs_int mu = m;
    m = gs_fi_keep_largest(cand, m, o->max_fill);
    for (gs_int t = m; t < mu; t++) c += w[W->qp[cand[t].col]];

    /* the largest kept |w_j| (cand is sorted by position: the first maximum has the smaller position) */
    gs_int b = -1;
    for (gs_int t = 0; t < m; t++)
        if (b < 0 || cand[t].mag > cand[b].mag) b = t;
    if (b >= 0 && o->perm_tol * cand[b].mag > fabs(w[W->qp[i]])) {
        const gs_int jp = cand[b].col, cj = W->qp[jp], ci = W->qp[i];
        W->qp[i] = cj;
        W->qp[jp] = ci;
        W->qi[cj] = i;
        W->qi[ci] = jp;
        if (w[ci] != 0.0 && fabs(w[ci]) >= thr) { /* the former diagonal, now at position jp */
            cand[b].mag = fabs(w[ci]);
        } else {
            c += w[ci];
            memmove(cand + b, cand + b + 1, (size_t)(m - b - 1) * sizeof *cand);
            m--;
        }
        if (info) info->columns_exchanged++;
    }

    double piv = w[W->qp[i]];
    if (o->milu) piv += c;
    if (!isfinite(piv)) return gs_fi_nonfinite_error(o, i, i, piv, "U factor (ILUTP)");
    GS_CALL(gs_fi_ilu_pivot(o, info, i, row_inf, has_diag, &piv));
    GS_CALL(gs_fi_grow(&F->uci, &F->ucap, F->unz + m + 1, sizeof *F->uci));
    GS_CALL(gs_fi_grow(&F->uv, &F->uvcap, F->unz + m + 1, sizeof *F->uv));
    F->uci[F->unz] = W->qp[i];
    F->uv[F->unz++] = piv;
    double rs = piv;
    for (gs_int t = 0; t < m; t++) {
        gs_int j = W->qp[cand[t].col];
        F->uci[F->unz] = j;
        F->uv[F->unz++] = w[j];
        rs += w[j];
    }
    F->urp[i + 1] = (gs_int)F->unz;
    if (W->urs) W->urs[i] = rs;
    return GS_OK;
}

/* U's columns from A's numbering to the final positions, each row's strict part sorted. */
static gs_status renumber_u(ilutp_fac *F, const gs_int *qi, gs_int n)
{
    gs_status st = GS_OK;
    pos_val *tmp = NULL;
    gs_int longest = 0;
    for (gs_int i = 0; i < n; i++)
        if (F->urp[i + 1] - F->urp[i] > longest) longest = F->urp[i + 1] - F->urp[i];
    GS_TRY(GS_MALLOC(tmp, longest > 0 ? (size_t)longest : 1));
    for (gs_int i = 0; i < n; i++) {
        gs_int b = F->urp[i] + 1, e = F->urp[i + 1], m = e - b;
        F->uci[F->urp[i]] = i; /* qi of the pivot's column is i: fixed since row i */
        for (gs_int t = 0; t < m; t++) {
            tmp[t].pos = qi[F->uci[b + t]];
            tmp[t].val = F->uv[b + t];
        }
        qsort(tmp, (size_t)m, sizeof *tmp, cmp_pos);
        for (gs_int t = 0; t < m; t++) {
            F->uci[b + t] = tmp[t].pos;
            F->uv[b + t] = tmp[t].val;
        }
    }
cleanup:
    gs_free(&tmp);
    return st;
}

static void work_free(ilutp_work *W)
{
    gs_free(&W->w);
    gs_free(&W->urs);
    gs_free(&W->mark);
    gs_free(&W->heap);
    gs_free(&W->ucand);
    gs_free(&W->qp);
    gs_free(&W->qi);
    gs_free(&W->cand);
}

static gs_status check_args(const gs_csr *A, const gs_factor_opts *o)
{
    GS_CALL(gs_factor_check_input(A, "ILUTP factorization"));
    if (A->nnz > 0 && !A->val) return GS_ERROR(GS_ERR_ARG, "ILUTP factorization: the matrix has no values");
    if (!(o->drop_tol >= 0.0))
        return GS_ERROR(GS_ERR_ARG, "ILUTP: the drop tolerance must be >= 0, got %g", o->drop_tol);
    if (o->max_fill < 0) return GS_ERROR(GS_ERR_ARG, "ILUTP: max_fill (p) must be >= 0, got %d", o->max_fill);
    if (!(o->perm_tol >= 0.0) || !isfinite(o->perm_tol))
        return GS_ERROR(GS_ERR_ARG, "ILUTP: the pivot tolerance must be finite and >= 0, got %g", o->perm_tol);
    return GS_OK;
}

/* One ILUTP of A + alpha diag(s) into ctx's L, U and colperm. */
static gs_status ilutp_attempt(const gs_csr *A, const gs_factor_opts *o, double alpha, void *ctx,
                               gs_factor_info *info)
{
    gs_status st = GS_OK;
    ilutp_out *out = ctx;
    ilutp_work W;
    ilutp_fac F;
    memset(&W, 0, sizeof W);
    memset(&F, 0, sizeof F);

    gs_fi_info_init(info);
    memset(out->L, 0, sizeof *out->L);
    memset(out->U, 0, sizeof *out->U);
    GS_CALL(check_args(A, o));
    const gs_int n = A->nrows;
    GS_TRY(GS_MALLOC(W.w, n));
    GS_TRY(GS_MALLOC(W.mark, n));
    GS_TRY(GS_MALLOC(W.heap, n));
    GS_TRY(GS_MALLOC(W.ucand, n));
    GS_TRY(GS_MALLOC(W.qp, n));
    GS_TRY(GS_MALLOC(W.qi, n));
    GS_TRY(GS_MALLOC(W.cand, n));
    if (o->milu) GS_TRY(GS_MALLOC(W.urs, n));
    GS_TRY(GS_MALLOC(F.lrp, (size_t)n + 1));
    GS_TRY(GS_MALLOC(F.urp, (size_t)n + 1));
    for (gs_int j = 0; j < n; j++) {
        W.mark[j] = -1;
        W.qp[j] = W.qi[j] = j;
    }
    F.lrp[0] = F.urp[0] = 0;

    for (gs_int i = 0; i < n; i++) {
        double row_inf, sum_sq;
        bool has_diag;
        GS_TRY(gs_fi_scan_row(A, o, i, &row_inf, &sum_sq, NULL));
        const double norm2 = sqrt(sum_sq);
        const double thr = norm2 > 0.0 ? o->drop_tol * norm2 : 0.0;

        /* w = a_i; columns at positions < i go to the heap, the others to ucand (position i always) */
        gs_int hlen = 0, nu = 0, nl = 0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            W.w[j] = A->val[p];
            W.mark[j] = i;
            if (W.qi[j] < i) gs_fi_heap_push(W.heap, &hlen, W.qi[j]);
            else W.ucand[nu++] = j;
        }
        const gs_int d = W.qp[i]; /* the column of A at position i */
        has_diag = W.mark[d] == i; /* for the message: A stores an entry at position i */
        if (!has_diag) {
            W.w[d] = 0.0;
            W.mark[d] = i;
            W.ucand[nu++] = d;
        }
        if (alpha != 0.0) W.w[d] += alpha * gs_fi_pivot_scale(row_inf);

        double c = 0.0;
        GS_TRY(eliminate(o, i, thr, &W, &F, hlen, &nu, &nl, &c));
        GS_TRY(store_l_row(o, i, &W, &F, nl, &c));
        GS_TRY(store_u_row(o, info, i, thr, row_inf, has_diag, &W, &F, nu, c));
    }
    GS_TRY(renumber_u(&F, W.qi, n));

    /* A matrix with no entries in L still needs valid (minimal) arrays. */
    GS_TRY(gs_fi_grow(&F.lci, &F.lcap, F.lnz + 1, sizeof *F.lci));
    GS_TRY(gs_fi_grow(&F.lv, &F.lvcap, F.lnz + 1, sizeof *F.lv));
    GS_TRY(gs_fi_grow(&F.uci, &F.ucap, F.unz + 1, sizeof *F.uci));
    GS_TRY(gs_fi_grow(&F.uv, &F.uvcap, F.unz + 1, sizeof *F.uv));
    if (n > 0) memcpy(out->colperm, W.qp, (size_t)n * sizeof *W.qp);
    gs_fi_csr_adopt(out->L, n, (gs_int)F.lnz, F.lrp, F.lci, F.lv);
    gs_fi_csr_adopt(out->U, n, (gs_int)F.unz, F.urp, F.uci, F.uv);
    memset(&F, 0, sizeof F);
    if (info) {
        info->nnz_L = out->L->nnz;
        info->nnz_U = out->U->nnz;
    }

cleanup:
    work_free(&W);
    gs_free(&F.lrp);
    gs_free(&F.lci);
    gs_free(&F.lv);
    gs_free(&F.urp);
    gs_free(&F.uci);
    gs_free(&F.uv);
    return st;
}

gs_status gs_ilutp(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_int *colperm,
                   gs_factor_info *info)
{
    if (!o) o = &default_opts;
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilutp: output L or U is NULL");
    if (!colperm && A && A->nrows > 0) return GS_ERROR(GS_ERR_ARG, "gs_ilutp: colperm is NULL");
    ilutp_out out = {L, U, colperm};
    return gs_fi_factor_with_policy(A, o, ilutp_attempt, &out, info);
}
