/* Level-set triangular solve on the host: level analysis, rows renumbered level by level, the reordered
 * factor in HEC form (column-major ELL part + CSR remainder), chains of thin levels, and the solve
 * level by level with x_i = (b_i - sum_j t_ij x_j) * (1/t_ii). This is the host implementation of
 * "levelset" and the reference of the GPU data layout: levelset_cuda.cu uploads exactly this plan. */
#include <string.h>

#include "core/mem.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/trisolve_impl.h"

/* A level with at least this many rows is solved by an OpenMP loop on the host. */
#define GS_LS_HOST_PARALLEL_ROWS 4096

gs_int gs_ls_levels(const gs_csr *T, gs_uplo uplo, gs_int *level)
{
    gs_int n = T->nrows, nlev = 0;
    const gs_int *rp = T->rowptr, *ci = T->colind;
    /* level(i) = 1 + max level(j) over the dependencies j of row i; rows visited in dependency order so
     * every level(j) is final when row i reads it. */
    for (gs_int r = 0; r < n; r++) {
        gs_int i = (uplo == GS_LOWER) ? r : n - 1 - r, lv = 0;
        for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
            gs_int j = ci[q];
            bool dep = (uplo == GS_LOWER) ? j < i : j > i;
            if (dep && level[j] + 1 > lv) lv = level[j] + 1;
        }
        level[i] = lv;
        if (lv + 1 > nlev) nlev = lv + 1;
    }
    return nlev;
}

void gs_ls_plan_free(gs_ls_plan *P)
{
    if (!P) return;
    gs_free(&P->level_ptr);
    gs_free(&P->perm);
    gs_free(&P->chain_ptr);
    gs_free(&P->chain_single);
    gs_free(&P->chain_max_rows);
    gs_free(&P->ell_col);
    gs_free(&P->ell_val);
    gs_free(&P->rem_ptr);
    gs_free(&P->rem_col);
    gs_free(&P->rem_val);
    gs_free(&P->dinv);
}

gs_int gs_ls_ell_width(gs_int n, const gs_int *hist, gs_int cap, gs_int nnz_off)
{
    gs_int w = 0;
    if (n == 0 || cap <= 0) return 0;
    gs_int longer = n - hist[0]; /* rows longer than w, for w = 0 */
    while (w < cap && (double)longer > 0.1 * (double)n) {
        w++;
        longer -= hist[w]; /* at w = cap this also removes the longer rows pooled there: the loop ends */
    }
    while (w > 0 && (double)w * (double)n > 2.0 * (double)nnz_off + (double)n) w--;
    return w;
}

/* ELL width of the plan from the off-diagonal row lengths (gs_ls_ell_width with the histogram capped at
 * GS_LS_ELL_MAX_WIDTH, or at the longest row when that is shorter). */
static gs_status choose_ell_width(gs_int n, const gs_int *len, gs_int maxlen, gs_int nnz_off, gs_int *w_out)
{
    gs_status st = GS_OK;
    gs_int *hist = NULL;
    gs_int cap = maxlen < GS_LS_ELL_MAX_WIDTH ? maxlen : GS_LS_ELL_MAX_WIDTH;
    if (n == 0 || maxlen == 0) {
        *w_out = 0;
        return GS_OK;
    }
    GS_TRY(GS_CALLOC(hist, (size_t)cap + 1));
    for (gs_int p = 0; p < n; p++) hist[len[p] < cap ? len[p] : cap]++;
    *w_out = gs_ls_ell_width(n, hist, cap, nnz_off);
cleanup:
    gs_free(&hist);
    return st;
}

gs_status gs_ls_plan_chains(gs_ls_plan *P, gs_int chain_rows)
{
    gs_status st = GS_OK;
    gs_free(&P->chain_ptr);
    gs_free(&P->chain_single);
    gs_free(&P->chain_max_rows);
    P->chain_rows = chain_rows;
    P->nchains = P->single_chains = P->multi_chains = 0;
    P->max_level_rows = 0;
    GS_TRY(GS_MALLOC(P->chain_ptr, (size_t)P->nlevels + 1));
    GS_TRY(GS_MALLOC(P->chain_single, P->nlevels));
    GS_TRY(GS_MALLOC(P->chain_max_rows, P->nlevels));
    P->chain_ptr[0] = 0;
    for (gs_int l = 0; l < P->nlevels; l++) {
        gs_int rows = P->level_ptr[l + 1] - P->level_ptr[l];
        bool thin = rows <= chain_rows;
        gs_int c = P->nchains;
        if (rows > P->max_level_rows) P->max_level_rows = rows;
        if (thin && c > 0 && P->chain_single[c - 1]) { /* extend the open chain */
            P->chain_ptr[c] = l + 1;
            if (rows > P->chain_max_rows[c - 1]) P->chain_max_rows[c - 1] = rows;
            continue;
        }
        P->chain_single[c] = thin ? 1 : 0;
        P->chain_max_rows[c] = rows;
        P->chain_ptr[c + 1] = l + 1;
        P->nchains++;
        if (thin) P->single_chains++;
        else P->multi_chains++;
    }
cleanup:
    return st;
}

gs_status gs_ls_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int chain_rows, gs_ls_plan *P)
{
    gs_status st = GS_OK;
    gs_int *level = NULL, *len = NULL;
    gs_int n = T->nrows;
    const gs_int *rp = T->rowptr, *ci = T->colind;
    const double *v = T->val;
    double t0 = gs_wtime();

    memset(P, 0, sizeof *P);
    if (chain_rows < 1) GS_FAIL(GS_ERR_ARG, "level-set plan: chain_rows is %d; expected >= 1", (int)chain_rows);
    P->n = n;
    P->chain_rows = chain_rows;

    /* levels, then a stable counting sort of the rows by level (rows of a level stay in increasing order) */
    GS_TRY(GS_MALLOC(level, n));
    P->nlevels = gs_ls_levels(T, uplo, level);
    GS_TRY(GS_CALLOC(P->level_ptr, (size_t)P->nlevels + 1));
    GS_TRY(GS_MALLOC(P->perm, n));
    for (gs_int i = 0; i < n; i++) P->level_ptr[level[i] + 1]++;
    for (gs_int l = 0; l < P->nlevels; l++) {
        gs_int r = P->level_ptr[l + 1];
        if (r > P->max_level_rows) P->max_level_rows = r;
        P->level_ptr[l + 1] += P->level_ptr[l];
    }
    for (gs_int i = 0; i < n; i++) P->perm[P->level_ptr[level[i]]++] = i; /* level_ptr[l] now = old [l+1] */
    for (gs_int l = P->nlevels; l > 0; l--) P->level_ptr[l] = P->level_ptr[l - 1];
    P->level_ptr[0] = 0;
    P->time_levels = gs_wtime() - t0;

    /* off-diagonal row lengths by position, and the ELL width */
    GS_TRY(GS_MALLOC(len, n));
    for (gs_int p = 0; p < n; p++) {
        gs_int i = P->perm[p];
        len[p] = rp[i + 1] - rp[i] - (unit_diag ? 0 : 1);
        P->nnz_offdiag += len[p];
        if (len[p] > P->max_row_length) P->max_row_length = len[p];
    }
    GS_TRY(choose_ell_width(n, len, P->max_row_length, P->nnz_offdiag, &P->ell_width));

    /* HEC arrays: the first ell_width off-diagonal entries of each row in the ELL part, the rest in the
     * remainder; dinv by position */
    size_t ell_size = (size_t)P->ell_width * (size_t)n;
    GS_TRY(GS_MALLOC(P->ell_col, ell_size));
    GS_TRY(GS_MALLOC(P->ell_val, ell_size));
    GS_TRY(GS_MALLOC(P->rem_ptr, (size_t)n + 1));
    GS_TRY(GS_MALLOC(P->dinv, n));
    P->rem_ptr[0] = 0;
    for (gs_int p = 0; p < n; p++)
        P->rem_ptr[p + 1] = P->rem_ptr[p] + (len[p] > P->ell_width ? len[p] - P->ell_width : 0);
    P->rem_nnz = P->rem_ptr[n];
    GS_TRY(GS_MALLOC(P->rem_col, P->rem_nnz));
    GS_TRY(GS_MALLOC(P->rem_val, P->rem_nnz));
    for (gs_int p = 0; p < n; p++) {
        gs_int i = P->perm[p], k = 0, r = P->rem_ptr[p];
        double diag = 1.0;
        for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
            if (ci[q] == i) {
                diag = v[q];
                continue;
            }
            if (k < P->ell_width) {
                size_t s = (size_t)k * (size_t)n + (size_t)p;
                P->ell_col[s] = ci[q];
                P->ell_val[s] = v[q];
            } else {
                P->rem_col[r] = ci[q];
                P->rem_val[r] = v[q];
                r++;
            }
            k++;
        }
        for (; k < P->ell_width; k++) {
            size_t s = (size_t)k * (size_t)n + (size_t)p;
            P->ell_col[s] = -1;
            P->ell_val[s] = 0.0;
        }
        P->dinv[p] = unit_diag ? 1.0 : 1.0 / diag;
    }

    /* chains: maximal runs of levels with at most chain_rows rows each; a wider level stands alone */
    GS_TRY(gs_ls_plan_chains(P, chain_rows));
    P->time_build = gs_wtime() - t0;
cleanup:
    gs_free(&level);
    gs_free(&len);
    if (st != GS_OK) gs_ls_plan_free(P);
    return st;
}

/* x[perm[p]] = (b[perm[p]] - sum_k ell_val[k,p] x[ell_col[k,p]] - sum_rem ...) * dinv[p] */
static inline void solve_position(const gs_ls_plan *P, const double *b, double *x, gs_int p)
{
    gs_int n = P->n, i = P->perm[p];
    double s = b[i];
    for (gs_int k = 0; k < P->ell_width; k++) {
        size_t q = (size_t)k * (size_t)n + (size_t)p;
        gs_int j = P->ell_col[q];
        if (j < 0) break;
        s -= P->ell_val[q] * x[j];
    }
    for (gs_int q = P->rem_ptr[p]; q < P->rem_ptr[p + 1]; q++) s -= P->rem_val[q] * x[P->rem_col[q]];
    x[i] = s * P->dinv[p];
}

void gs_ls_plan_solve_host(const gs_ls_plan *P, const double *b, double *x)
{
    for (gs_int l = 0; l < P->nlevels; l++) {
        gs_int p0 = P->level_ptr[l], p1 = P->level_ptr[l + 1];
#ifdef _OPENMP
        if (p1 - p0 >= GS_LS_HOST_PARALLEL_ROWS) {
#pragma omp parallel for schedule(static)
            for (gs_int p = p0; p < p1; p++) solve_position(P, b, x, p);
            continue;
        }
#endif
        for (gs_int p = p0; p < p1; p++) solve_position(P, b, x, p);
    }
}

void gs_ls_plan_view(const gs_ls_plan *P, gs_report *rep, const char *prefix)
{
    gs_ts_report_int(rep, prefix, "levels", P->nlevels);
    gs_ts_report_int(rep, prefix, "chains", P->nchains);
    gs_ts_report_int(rep, prefix, "single_block_chains", P->single_chains);
    gs_ts_report_int(rep, prefix, "multi_block_levels", P->multi_chains);
    gs_ts_report_int(rep, prefix, "max_rows_per_level", P->max_level_rows);
    gs_ts_report_double(rep, prefix, "avg_rows_per_level", P->nlevels ? (double)P->n / P->nlevels : 0.0);
    gs_ts_report_int(rep, prefix, "chain_rows", P->chain_rows);
    gs_ts_report_int(rep, prefix, "ell_width", P->ell_width);
    gs_ts_report_double(rep, prefix, "ell_fill",
                        P->ell_width && P->n ? (double)(P->nnz_offdiag - P->rem_nnz) /
                                                   ((double)P->ell_width * (double)P->n)
                                             : 0.0);
    gs_ts_report_int(rep, prefix, "remainder_nnz", P->rem_nnz);
    gs_ts_report_int(rep, prefix, "max_row_length", P->max_row_length);
    gs_ts_report_double(rep, prefix, "level_time", P->time_levels);
}

/* ---------------------------------------------------------------- "levelset" on the host backend */

typedef struct ls_host_data {
    gs_ls_plan P;
    double time_analyse;
} ls_host_data;

static gs_status ls_host_analyse(gs_trisolve *ts, const gs_csr *T)
{
    ls_host_data *d = (ls_host_data *)ts->data;
    double t0 = gs_wtime();
    gs_ls_plan_free(&d->P);
    GS_CALL(gs_ls_plan_build(T, ts->uplo, ts->unit_diag, GS_LS_CHAIN_ROWS, &d->P));
    d->time_analyse = gs_wtime() - t0;
    return GS_OK;
}

static gs_status ls_host_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    ls_host_data *d = (ls_host_data *)ts->data;
    gs_ls_plan_solve_host(&d->P, b->data, x->data);
    return GS_OK;
}

static void ls_host_destroy(gs_trisolve *ts)
{
    ls_host_data *d = (ls_host_data *)ts->data;
    if (!d) return;
    gs_ls_plan_free(&d->P);
    gs_free(&ts->data);
}

static void ls_host_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const ls_host_data *d = (const ls_host_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation", "host level sets (HEC layout)");
    gs_ls_plan_view(&d->P, rep, prefix);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops ls_host_ops = {ls_host_analyse, ls_host_solve, ls_host_destroy, ls_host_view, NULL};

gs_status gs_trisolve_create_levelset_host(gs_trisolve *ts)
{
    ls_host_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &ls_host_ops;
    return GS_OK;
}
