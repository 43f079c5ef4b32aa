/* ParILU / ParIC on the host (precond/parilu.h): the plan (pattern S, U by columns, the task list in its
 * execution order), the scaling and initial guess of a numeric setup, and the unscaled factors. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/parilu.h"

/* ------------------------------------------------------------------------------------------------ */
/* Plan                                                                                             */

void gs_parilu_plan_free(gs_parilu_plan *P)
{
    if (!P) return;
    gs_csr_free(&P->L);
    gs_csr_free(&P->U);
    gs_free(&P->uc_ptr);
    gs_free(&P->uc_ind);
    gs_free(&P->u_map);
    gs_free(&P->task_row);
    gs_free(&P->task_col);
    gs_free(&P->task_dst);
    gs_free(&P->task_src);
    memset(P, 0, sizeof *P);
}

/* The pattern of T^T (rows sorted) and map[p] = position in T^T of T's entry p. */
static gs_status transpose_pattern(const gs_csr *T, gs_int **tptr, gs_int **tind, gs_int **map)
{
    gs_status st = GS_OK;
    gs_int n = T->nrows, *ptr = NULL, *ind = NULL, *mp = NULL, *next = NULL;
    GS_TRY(GS_CALLOC(ptr, (size_t)n + 1));
    GS_TRY(GS_MALLOC(ind, T->nnz));
    GS_TRY(GS_MALLOC(mp, T->nnz));
    GS_TRY(GS_MALLOC(next, n));
    for (gs_int p = 0; p < T->nnz; p++) ptr[T->colind[p] + 1]++;
    for (gs_int j = 0; j < n; j++) ptr[j + 1] += ptr[j];
    memcpy(next, ptr, (size_t)n * sizeof *next);
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = T->rowptr[i]; p < T->rowptr[i + 1]; p++) {
            gs_int pos = next[T->colind[p]]++;
            ind[pos] = i;
            mp[p] = pos;
        }
    *tptr = ptr;
    *tind = ind;
    *map = mp;
    ptr = ind = mp = NULL;
cleanup:
    gs_free(&ptr);
    gs_free(&ind);
    gs_free(&mp);
    gs_free(&next);
    return st;
}

/* Strict lower pattern Ls + the diagonal, last in each row (the ParIC L). */
static gs_status append_diagonal(const gs_csr *Ls, gs_csr *L)
{
    gs_status st = GS_OK;
    gs_int n = Ls->nrows;
    if ((int64_t)Ls->nnz + n > GS_INT_MAX)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "ParIC: the factor would have more than %d entries (32-bit indices)",
                        (int)GS_INT_MAX);
    GS_TRY(gs_csr_alloc(L, n, n, Ls->nnz + n, false));
    gs_int q = 0;
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = Ls->rowptr[i]; p < Ls->rowptr[i + 1]; p++) L->colind[q++] = Ls->colind[p];
        L->colind[q++] = i;
        L->rowptr[i + 1] = q;
    }
cleanup:
    return st;
}

/* splitmix64: a fixed generator, so the random task order is the same on every platform. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Reorder the four task arrays by perm (new position t takes old task perm[t]). */
static gs_status permute_tasks(gs_parilu_plan *P, const gs_int *perm)
{
    gs_status st = GS_OK;
    gs_int *tmp = NULL;
    gs_int nt = P->ntasks;
    gs_int **arrays[4] = {&P->task_row, &P->task_col, &P->task_dst, &P->task_src};
    GS_TRY(GS_MALLOC(tmp, nt));
    for (int a = 0; a < 4; a++) {
        gs_int *v = *arrays[a];
        for (gs_int t = 0; t < nt; t++) tmp[t] = v[perm[t]];
        memcpy(v, tmp, (size_t)nt * sizeof *v);
    }
cleanup:
    gs_free(&tmp);
    return st;
}

static gs_status order_tasks(gs_parilu_plan *P, gs_parilu_order order, unsigned seed)
{
    gs_status st = GS_OK;
    gs_int *perm = NULL, *chunk = NULL;
    gs_int nt = P->ntasks;
    if (order == GS_PARILU_FORWARD || nt == 0) return GS_OK;
    GS_TRY(GS_MALLOC(perm, nt));
    if (order == GS_PARILU_BACKWARD) {
        for (gs_int t = 0; t < nt; t++) perm[t] = nt - 1 - t;
    } else {
        /* Fisher-Yates over the chunks; a chunk keeps its tasks in elimination order. */
        gs_int nc = (gs_int)(((int64_t)nt + GS_PARILU_CHUNK - 1) / GS_PARILU_CHUNK);
        GS_TRY(GS_MALLOC(chunk, nc));
        for (gs_int c = 0; c < nc; c++) chunk[c] = c;
        uint64_t s = (uint64_t)seed;
        for (gs_int c = nc - 1; c > 0; c--) {
            gs_int r = (gs_int)(splitmix64(&s) % (uint64_t)(c + 1));
            gs_int tmp = chunk[c];
            chunk[c] = chunk[r];
            chunk[r] = tmp;
        }
        gs_int t = 0;
        for (gs_int c = 0; c < nc; c++) {
            int64_t b = (int64_t)chunk[c] * GS_PARILU_CHUNK, e = b + GS_PARILU_CHUNK;
            if (e > nt) e = nt;
            for (int64_t k = b; k < e; k++) perm[t++] = (gs_int)k;
        }
    }
    GS_TRY(permute_tasks(P, perm));
cleanup:
    gs_free(&perm);
    gs_free(&chunk);
    return st;
}

/* Position of a_ij in A->val for every column of a pattern row (sorted): -1 where A has no entry. */
static void match_row(const gs_csr *A, gs_int i, const gs_int *cols, gs_int m, gs_int *src)
{
    gs_int p = A->rowptr[i], pe = A->rowptr[i + 1];
    for (gs_int k = 0; k < m; k++) {
        while (p < pe && A->colind[p] < cols[k]) p++;
        src[k] = (p < pe && A->colind[p] == cols[k]) ? p : -1;
    }
}

gs_status gs_parilu_plan_build(const gs_csr *A, bool symmetric, int fill_level, gs_parilu_order order,
                               unsigned seed, gs_parilu_plan *P)
{
    gs_status st = GS_OK;
    gs_csr Ls = {0}, Us = {0};
    if (!P) return GS_ERROR(GS_ERR_ARG, "ParILU plan: output is NULL");
    memset(P, 0, sizeof *P);
    if (!A || A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "ParILU: the matrix must be square, got %d x %d", A ? (int)A->nrows : 0,
                        A ? (int)A->ncols : 0);
    if (!gs_csr_is_sorted(A))
        return GS_ERROR(GS_ERR_ARG, "ParILU: the matrix columns must be strictly increasing in every row "
                                    "(sort and sum duplicates first: gs_csr_sort_dedupe)");
    const gs_int n = A->nrows;
    P->n = n;
    P->nnz_A = A->nnz;
    P->symmetric = symmetric;
    gs_csr_diagonal(A, NULL, &P->diag_inserted, NULL);

    /* S: ILU(k) patterns (diagonal inserted where A lacks it). */
    GS_TRY(gs_iluk_symbolic(A, fill_level, &Ls, &Us));
    if (symmetric) {
        GS_TRY(append_diagonal(&Ls, &P->L));
        /* U = L^T: its pattern, and where each entry of L lands in it */
        gs_int *tp = NULL, *ti = NULL;
        GS_TRY(transpose_pattern(&P->L, &tp, &ti, &P->u_map));
        P->U.nrows = P->U.ncols = n;
        P->U.nnz = P->L.nnz;
        P->U.rowptr = tp;
        P->U.colind = ti;
        P->nnz_l = P->L.nnz;
        P->nnz_u = 0;
    } else {
        P->L = Ls;
        P->U = Us;
        memset(&Ls, 0, sizeof Ls);
        memset(&Us, 0, sizeof Us);
        /* U by columns: column j = rows k <= j increasing, so its diagonal comes last */
        GS_TRY(transpose_pattern(&P->U, &P->uc_ptr, &P->uc_ind, &P->u_map));
        P->nnz_l = P->L.nnz;
        P->nnz_u = P->U.nnz;
    }
    if ((int64_t)P->nnz_l + P->nnz_u > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "ParILU: |S| = %lld entries exceed 32-bit indices",
                (long long)P->nnz_l + P->nnz_u);
    P->ntasks = P->nnz_l + P->nnz_u;

    /* Tasks in Gaussian-elimination order: row i's entries of L, then of U, left to right. */
    gs_int nt = P->ntasks;
    GS_TRY(GS_MALLOC(P->task_row, nt));
    GS_TRY(GS_MALLOC(P->task_col, nt));
    GS_TRY(GS_MALLOC(P->task_dst, nt));
    GS_TRY(GS_MALLOC(P->task_src, nt));
    gs_int t = 0;
    for (gs_int i = 0; i < n; i++) {
        gs_int lb = P->L.rowptr[i], le = P->L.rowptr[i + 1];
        match_row(A, i, P->L.colind + lb, le - lb, P->task_src + t);
        for (gs_int p = lb; p < le; p++, t++) {
            P->task_row[t] = i;
            P->task_col[t] = P->L.colind[p];
            P->task_dst[t] = p;
        }
        if (symmetric) continue;
        gs_int ub = P->U.rowptr[i], ue = P->U.rowptr[i + 1];
        match_row(A, i, P->U.colind + ub, ue - ub, P->task_src + t);
        for (gs_int q = ub; q < ue; q++, t++) {
            P->task_row[t] = i;
            P->task_col[t] = P->U.colind[q];
            P->task_dst[t] = P->nnz_l + P->u_map[q];
        }
    }
    GS_TRY(order_tasks(P, order, seed));

cleanup:
    gs_csr_free(&Ls);
    gs_csr_free(&Us);
    if (st != GS_OK) gs_parilu_plan_free(P);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Scaling, initial guess, unscaling                                                                */

gs_status gs_parilu_initial_guess(const gs_parilu_plan *P, const gs_csr *A, const gs_parilu_opts *o,
                                  const gs_int *row_names, double *sd, double *task_a, double *x0,
                                  double *pivot_shift, gs_int *zero_diag)
{
    const char *who = P->symmetric ? "ParIC" : "ParILU";
    const gs_int n = P->n;
    if (A->nrows != n || A->nnz != P->nnz_A || !A->val)
        return GS_ERROR(GS_ERR_ARG,
                        "%s: numeric setup with a %d x %d matrix of %d entries%s after a symbolic setup with %d "
                        "rows and %d entries; the pattern must not change",
                        who, (int)A->nrows, (int)A->ncols, (int)A->nnz, A->val ? "" : " (no values)", (int)n,
                        (int)P->nnz_A);
    gs_int zd = 0;

    /* d_i = |a_ii|; a zero one cannot be scaled by */
    for (gs_int i = 0; i < n; i++) {
        double aii = 0.0, rmax = 0.0;
        bool stored = false;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double a = A->val[p];
            if (!isfinite(a))
                return GS_ERROR(GS_ERR_NUMERIC,
                                "%s: the matrix entry A(%d,%d) = %g is not finite; the input matrix must hold "
                                "finite values",
                                who, (int)gs_parilu_row_name(row_names, i) + 1, (int)gs_parilu_row_name(row_names, A->colind[p]) + 1, a);
            if (fabs(a) > rmax) rmax = fabs(a);
            if (A->colind[p] == i) {
                aii = a;
                stored = true;
            }
        }
        double d = fabs(aii);
        if (!(d >= DBL_MIN)) {
            if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT)
                return GS_ERROR(GS_ERR_NUMERIC,
                                "%s: the diagonal entry A(%d,%d) is %s; the symmetric scaling "
                                "D^{-1/2} A D^{-1/2} with D = diag(|a_ii|) needs a nonzero diagonal. Set "
                                "preconditioner.zero_pivot = \"shift\" (the row is then scaled by its largest "
                                "entry), reorder the matrix, or use another preconditioner",
                                who, (int)gs_parilu_row_name(row_names, i) + 1, (int)gs_parilu_row_name(row_names, i) + 1,
                                stored ? "zero" : "not stored (zero)");
            d = rmax >= DBL_MIN ? rmax : 1.0;
            zd++;
        }
        sd[i] = sqrt(d);
    }

    /* Â on S and the initial guess: L̂ = strict lower part of Â (+ I implicitly), Û = upper part
     * (ParIC: L̂ = lower part); a_ij = 0 at fill positions. */
    for (gs_int t = 0; t < P->ntasks; t++) {
        gs_int src = P->task_src[t];
        double a = src >= 0 ? A->val[src] / (sd[P->task_row[t]] * sd[P->task_col[t]]) : 0.0;
        task_a[t] = a;
        x0[P->task_dst[t]] = a;
    }

    /* Replacement pivots: shift * ||row i of Â||_inf (the shift itself for a zero row). */
    for (gs_int i = 0; i < n; i++) {
        double m = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double a = fabs(A->val[p]) / (sd[i] * sd[A->colind[p]]);
            if (a > m) m = a;
        }
        double r = o->shift * m;
        if (!(r >= DBL_MIN)) r = o->shift;
        pivot_shift[i] = r;
    }

    /* Initial pivots: â_ii = sign(a_ii); a row without a usable diagonal starts from 1. ParIC needs
     * a positive one (an SPD matrix has a_ii > 0). */
    for (gs_int t = 0; t < P->ntasks; t++) {
        gs_int i = P->task_row[t];
        if (P->task_col[t] != i) continue;
        double *u = &x0[P->task_dst[t]];
        bool ok = P->symmetric ? (*u >= DBL_MIN) : (fabs(*u) >= DBL_MIN);
        if (ok) continue;
        if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT)
            return GS_ERROR(GS_ERR_NUMERIC,
                            "ParIC: the diagonal entry A(%d,%d) = %g is not positive; incomplete Cholesky needs "
                            "a symmetric positive definite matrix (set preconditioner.zero_pivot = \"shift\" to "
                            "start from a positive pivot anyway, or use ParILU: preconditioner.symmetric = false)",
                            (int)gs_parilu_row_name(row_names, i) + 1, (int)gs_parilu_row_name(row_names, i) + 1,
                            task_a[t] * sd[i] * sd[i]);
        *u = 1.0;
    }
    if (zero_diag) *zero_diag = zd;
    return GS_OK;
}

void gs_parilu_unscale(const gs_parilu_plan *P, const double *sd, const double *x, gs_csr *L, gs_csr *U)
{
    const gs_int n = P->n;
    if (P->symmetric) {
        /* L = D^{1/2} L̂, U = L^T */
        for (gs_int i = 0; i < n; i++)
            for (gs_int p = P->L.rowptr[i]; p < P->L.rowptr[i + 1]; p++) {
                L->val[p] = x[p] * sd[i];
                U->val[P->u_map[p]] = L->val[p];
            }
        return;
    }
    /* L = D^{1/2} L̂ D^{-1/2} (unit diagonal kept), U = D^{1/2} Û D^{1/2} */
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = P->L.rowptr[i]; p < P->L.rowptr[i + 1]; p++) L->val[p] = x[p] * sd[i] / sd[P->L.colind[p]];
        for (gs_int q = P->U.rowptr[i]; q < P->U.rowptr[i + 1]; q++)
            U->val[q] = x[P->nnz_l + P->u_map[q]] * sd[i] * sd[P->U.colind[q]];
    }
}

