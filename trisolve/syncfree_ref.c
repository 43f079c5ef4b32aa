/* The run schedule of the sync-free solver on the host, x = T^{-1} b: the host twin of the GPU analysis
 * (analysis_cuda.cu with run_rows > 1) and of the run kernel's arithmetic (syncfree_cuda.cu),
 * x_i = (b_i - sum_j t_ij x_j) * (1/t_ii) with the entries in CSR order. trisolve_impl.h says what a
 * run is; here every step is written sequentially, in the order the GPU's result must agree with:
 *   1. t = dependency index (lower: row t, upper: row n-1-t); row t is linked when it reads row t-1
 *      (warp runs, run_rows = GS_SF_WRUN_ROWS: and every other entry's index is at most t - run_rows);
 *      a chain of linked rows is cut into runs of run_rows rows from its first row;
 *   2. level(run) = 1 + max level of the runs that its rows read outside the run (runs in index order
 *      are in dependency order, so every such level is known when it is read);
 *   3. runs sorted by (level, run index): run position rp; position of the k-th row of the run at rp:
 *      p = k * nruns + rp (warp runs: p = rp * run_rows + k);
 *   4. HEC layout by position: the first ell_width off-diagonal entries of each row in the ELL part
 *      (column-major), the rest in the remainder, columns given as positions; dinv by position. */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

void gs_sf_runs_plan_free(gs_sf_runs_plan *P)
{
    if (!P) return;
    gs_free(&P->run_first);
    gs_free(&P->run_level);
    gs_free(&P->order);
    gs_free(&P->level_ptr);
    gs_free(&P->perm);
    gs_free(&P->ell_col);
    gs_free(&P->ell_val);
    gs_free(&P->rem_ptr);
    gs_free(&P->rem_col);
    gs_free(&P->rem_val);
    gs_free(&P->dinv);
}

/* Row of dependency index t. */
static inline gs_int row_of(gs_int n, gs_uplo uplo, gs_int t) { return uplo == GS_LOWER ? t : n - 1 - t; }

gs_status gs_sf_runs_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int run_rows, gs_int max_width,
                                gs_sf_runs_plan *P)
{
    gs_status st = GS_OK;
    gs_int n = T->nrows, *run_of = NULL, *pos_of = NULL, *cnt = NULL, *hist = NULL;
    const gs_int *rp = T->rowptr, *ci = T->colind;
    const double *v = T->val;

    const bool warp = run_rows == GS_SF_WRUN_ROWS;
    memset(P, 0, sizeof *P);
    if (run_rows < 1) GS_FAIL(GS_ERR_ARG, "run plan: run_rows is %d; expected >= 1", (int)run_rows);
    if (max_width < 1 || max_width > GS_LS_ELL_MAX_WIDTH)
        GS_FAIL(GS_ERR_ARG, "run plan: ELL width limit %d outside 1..%d", (int)max_width, GS_LS_ELL_MAX_WIDTH);
    P->n = n;
    P->run_rows = run_rows;

    /* 1. runs: a new run where the chain breaks or the run is full; row statistics on the way */
    GS_TRY(GS_MALLOC(P->run_first, (size_t)n + 1));
    GS_TRY(GS_MALLOC(run_of, n));
    {
        gs_int chain_start = 0;
        for (gs_int t = 0; t < n; t++) {
            gs_int i = row_of(n, uplo, t), pred = uplo == GS_LOWER ? i - 1 : i + 1, len = 0;
            bool linked = false, near = false; /* near: another entry less than run_rows rows back */
            for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
                if (ci[q] == i) continue;
                len++;
                if (t > 0 && ci[q] == pred) linked = true;
                else if (t - (uplo == GS_LOWER ? ci[q] : n - 1 - ci[q]) < run_rows) near = true;
            }
            if (len > P->max_row_length) P->max_row_length = len;
            if (warp && near) linked = false; /* the strict link */
            if (linked) P->linked_rows++;
            if (!linked) chain_start = t;
            if ((t - chain_start) % run_rows == 0) P->run_first[P->nruns++] = t;
            run_of[i] = P->nruns - 1;
        }
        P->run_first[P->nruns] = n;
    }

    /* 2. run levels in run index order (dependency order) */
    GS_TRY(GS_MALLOC(P->run_level, P->nruns > 0 ? P->nruns : 1));
    for (gs_int r = 0; r < P->nruns; r++) {
        gs_int lv = 0;
        for (gs_int t = P->run_first[r]; t < P->run_first[r + 1]; t++) {
            gs_int i = row_of(n, uplo, t);
            for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
                gs_int j = ci[q];
                if (j == i || run_of[j] == r) continue;
                if (P->run_level[run_of[j]] + 1 > lv) lv = P->run_level[run_of[j]] + 1;
            }
        }
        P->run_level[r] = lv;
        if (lv + 1 > P->nlevels) P->nlevels = lv + 1;
    }

    /* 3. stable counting sort of the runs by level; positions */
    GS_TRY(GS_CALLOC(P->level_ptr, (size_t)P->nlevels + 1));
    GS_TRY(GS_MALLOC(P->order, P->nruns > 0 ? P->nruns : 1));
    for (gs_int r = 0; r < P->nruns; r++) P->level_ptr[P->run_level[r] + 1]++;
    for (gs_int l = 0; l < P->nlevels; l++) P->level_ptr[l + 1] += P->level_ptr[l];
    GS_TRY(GS_MALLOC(cnt, (size_t)P->nlevels + 1));
    memcpy(cnt, P->level_ptr, ((size_t)P->nlevels + 1) * sizeof(gs_int));
    for (gs_int r = 0; r < P->nruns; r++) P->order[cnt[P->run_level[r]]++] = r;
    P->npos = run_rows * P->nruns;
    GS_TRY(GS_MALLOC(P->perm, P->npos > 0 ? P->npos : 1));
    GS_TRY(GS_MALLOC(pos_of, n));
    for (gs_int q = 0; q < P->npos; q++) P->perm[q] = -1;
    for (gs_int r = 0; r < P->nruns; r++) {
        gs_int run = P->order[r];
        for (gs_int t = P->run_first[run]; t < P->run_first[run + 1]; t++) {
            gs_int k = t - P->run_first[run], i = row_of(n, uplo, t), p = warp ? r * run_rows + k : k * P->nruns + r;
            P->perm[p] = i;
            pos_of[i] = p;
        }
    }

    /* 4. ELL width (the plan's rule), HEC arrays by position */
    {
        gs_int cap = max_width;
        long long nnz_off = 0;
        GS_TRY(GS_CALLOC(hist, (size_t)cap + 1));
        for (gs_int i = 0; i < n; i++) {
            gs_int len = rp[i + 1] - rp[i] - (unit_diag ? 0 : 1);
            hist[len < cap ? len : cap]++;
            nnz_off += len;
        }
        P->ell_width = gs_ls_ell_width(n, hist, cap, (gs_int)nnz_off);
    }
    size_t npos = (size_t)P->npos, w = (size_t)P->ell_width;
    GS_TRY(GS_MALLOC(P->ell_col, w * npos > 0 ? w * npos : 1));
    GS_TRY(GS_MALLOC(P->ell_val, w * npos > 0 ? w * npos : 1));
    GS_TRY(GS_MALLOC(P->rem_ptr, npos + 1));
    GS_TRY(GS_MALLOC(P->dinv, npos > 0 ? npos : 1));
    P->rem_ptr[0] = 0;
    for (gs_int p = 0; p < P->npos; p++) {
        gs_int i = P->perm[p], len = i < 0 ? 0 : rp[i + 1] - rp[i] - (unit_diag ? 0 : 1);
        P->rem_ptr[p + 1] = P->rem_ptr[p] + (len > P->ell_width ? len - P->ell_width : 0);
    }
    P->rem_nnz = P->rem_ptr[P->npos];
    GS_TRY(GS_MALLOC(P->rem_col, P->rem_nnz > 0 ? P->rem_nnz : 1));
    GS_TRY(GS_MALLOC(P->rem_val, P->rem_nnz > 0 ? P->rem_nnz : 1));
    for (gs_int p = 0; p < P->npos; p++) {
        gs_int i = P->perm[p], k = 0, r = P->rem_ptr[p];
        double diag = 1.0;
        if (i >= 0)
            for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
                if (ci[q] == i) {
                    diag = v[q];
                    continue;
                }
                if (k < P->ell_width) {
                    P->ell_col[(size_t)k * npos + (size_t)p] = pos_of[ci[q]];
                    P->ell_val[(size_t)k * npos + (size_t)p] = v[q];
                } else {
                    P->rem_col[r] = pos_of[ci[q]];
                    P->rem_val[r] = v[q];
                    r++;
                }
                k++;
            }
        for (; k < P->ell_width; k++) {
            P->ell_col[(size_t)k * npos + (size_t)p] = -1;
            P->ell_val[(size_t)k * npos + (size_t)p] = 0.0;
        }
        P->dinv[p] = (unit_diag || i < 0) ? 1.0 : 1.0 / diag;
    }
cleanup:
    gs_free(&run_of);
    gs_free(&pos_of);
    gs_free(&cnt);
    gs_free(&hist);
    if (st != GS_OK) gs_sf_runs_plan_free(P);
    return st;
}

/* The warp kernel's solve of the run at run position r (trisolve_impl.h): lanes' sums, then the scan. */
static void warp_run_solve(const gs_sf_runs_plan *P, gs_int r, const double *b, double *xp, double *x)
{
    enum { W = GS_SF_WRUN_ROWS };
    double A[W], B[W];
    size_t npos = (size_t)P->npos;
    for (gs_int k = 0; k < W; k++) {
        gs_int p = r * W + k, i = P->perm[p];
        A[k] = 1.0;
        B[k] = 0.0;
        if (i < 0) continue;
        double s = b[i], link = 0.0;
        for (gs_int e = 0; e < P->ell_width; e++) {
            gs_int c = P->ell_col[(size_t)e * npos + (size_t)p];
            if (c < 0) break;
            if (k > 0 && c == p - 1) link = P->ell_val[(size_t)e * npos + (size_t)p];
            else s -= P->ell_val[(size_t)e * npos + (size_t)p] * xp[c];
        }
        for (gs_int q = P->rem_ptr[p]; q < P->rem_ptr[p + 1]; q++) {
            if (k > 0 && P->rem_col[q] == p - 1) link = P->rem_val[q];
            else s -= P->rem_val[q] * xp[P->rem_col[q]];
        }
        A[k] = -(link * P->dinv[p]);
        B[k] = s * P->dinv[p];
    }
    for (int off = 1; off < W; off <<= 1)
        for (int k = W - 1; k >= off; k--) { /* descending: lane k - off still holds the previous step's pair */
            B[k] = fma(A[k], B[k - off], B[k]);
            A[k] = A[k] * A[k - off];
        }
    for (gs_int k = 0; k < W; k++) {
        gs_int p = r * W + k, i = P->perm[p];
        if (i < 0) break;
        xp[p] = B[k];
        x[i] = B[k];
    }
}

gs_status gs_sf_runs_solve_host(const gs_sf_runs_plan *P, const double *b, double *x)
{
    double *xp = NULL;
    size_t npos = (size_t)P->npos;
    GS_CALL(GS_MALLOC(xp, npos > 0 ? npos : 1));
    if (P->run_rows == GS_SF_WRUN_ROWS) {
        for (gs_int r = 0; r < P->nruns; r++) warp_run_solve(P, r, b, xp, x);
        gs_free(&xp);
        return GS_OK;
    }
    for (gs_int r = 0; r < P->nruns; r++)
        for (gs_int k = 0; k < P->run_rows; k++) {
            gs_int p = k * P->nruns + r, i = P->perm[p];
            if (i < 0) break; /* the run's rows fill its first positions */
            double s = b[i];
            for (gs_int e = 0; e < P->ell_width; e++) {
                gs_int c = P->ell_col[(size_t)e * npos + (size_t)p];
                if (c < 0) break;
                s -= P->ell_val[(size_t)e * npos + (size_t)p] * xp[c];
            }
            for (gs_int q = P->rem_ptr[p]; q < P->rem_ptr[p + 1]; q++) s -= P->rem_val[q] * xp[P->rem_col[q]];
            xp[p] = s * P->dinv[p];
            x[i] = xp[p];
        }
    gs_free(&xp);
    return GS_OK;
}
