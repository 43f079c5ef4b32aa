/* The sync-free triangular solver on the GPU (the type "syncfree" on cuda; syncfree_cuda.cu holds the kernels
 * and describes the schedules): its analysis -- T's levels and the row statistics from the GPU analysis,
 * the schedule by the rules of syncfree_rules.c (level order, merged levels built on the GPU with their
 * first stage's form, warp runs), each stage's plan, kernel and grid -- and the solver's operations. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/syncfree_cuda.h"

static void sf_stage_release(gs_backend *be, sf_stage *S)
{
    gs_ts_analysis_free(be, &S->A);
    gs_ts_work_free(be, S->ready); /* the ticket shares its block */
    S->ready = NULL;
    S->ticket = NULL;
}

static void sf_release(gs_trisolve *ts, sf_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
    for (int k = 0; k < 2; k++) sf_stage_release(be, &d->st[k]);
    gs_ts_work_free(be, d->y);
    gs_ts_work_free(be, d->fold_arena);
    d->y = NULL;
    d->fold_arena = NULL;
    d->td_fold = false;
    d->fold_w = 0;
    d->fold_b = NULL;
    d->fold_t = d->fold_d = d->fold_di = NULL;
    d->nstages = 0;
    d->wruns_rule = false;
    d->row_levels = -1;
}

/* The kernel and grid of a stage whose plan is built (syncfree_rules.c: gs_sf_kernel_rule picks the kernel
 * instance and the lanes per row, gs_sf_grid_rule the grid, given how many blocks of that kernel a
 * multiprocessor holds, the early remainder and the block per GS_SF_BLOCK positions). */
static gs_status sf_grid(sf_stage *d, const gs_syncfree_params *prm)
{
    const gs_ls_dplan *D = &d->A.D;
    gs_sf_plan_shape sh;
    gs_sf_grid g;
    sh.run_rows = D->run_rows;
    sh.ell_width = D->ell_width;
    sh.nunits = D->nunits;
    sh.npos = D->npos;
    sh.nlevels = D->nlevels;
    sh.rem = D->rem_nnz > 0;
    sh.sms = d->A.sms;
    gs_sf_kernel_rule(&sh, prm, &g);
    const void *kernel = gs_sf_grid_kernel(D, &g);
    int per_sm = 0;
    GS_CALL(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, GS_SF_BLOCK, 0)));
    gs_sf_grid_rule(&sh, prm, per_sm, &g);
    d->run_rows = D->run_rows;
    d->wmax = g.wmax;
    d->lpr = g.lpr;
    d->blocks = g.blocks;
    d->rem_prefetch = g.rem_prefetch;
    d->once = g.once;
    return GS_OK;
}

/* The grid of a stage whose plan S->A is built, and two generations of ready values (all SF_EMPTY)
 * with the ticket counter at 0; stamp: the plan's analysis time ends here (else it was stamped before). */
static gs_status sf_stage_finish(gs_backend *be, sf_stage *S, const gs_syncfree_params *prm, bool stamp = true)
{
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be);
    GS_TRY(sf_grid(S, prm));
    {
        void *p = NULL;
        size_t np = (size_t)S->A.D.npos;
        static_assert(sizeof(unsigned long long) == sizeof(long long), "the ticket takes one ready slot");
        GS_TRY(gs_ts_work_alloc(be, &p, (2 * np + 1) * sizeof(long long))); /* the ticket after the values */
        S->ready = (long long *)p;
        S->ticket = (unsigned long long *)(S->ready + 2 * np);
        GS_TRY(GS_CUDA(cudaMemsetAsync(S->ready, 0xFF, 2 * np * sizeof(long long), s)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(S->ticket, 0, sizeof(unsigned long long), s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    }
    if (stamp) gs_ts_analysis_done(&S->A);
cleanup:
    if (st != GS_OK) sf_stage_release(be, S);
    return st;
}

/* The plan of one stage from a factor on the host (T) or in device memory (dT), then sf_stage_finish. */
static gs_status sf_stage_build(gs_backend *be, sf_stage *S, const gs_csr *T, const gs_csr_dev *dT, gs_uplo uplo,
                                bool unit_diag, const gs_ts_plan_opts *po, const gs_syncfree_params *prm)
{
    GS_CALL(T ? gs_ts_analysis_run(be, T, uplo, unit_diag, po, &S->A)
              : gs_ts_analysis_run_dev(be, dT, uplo, unit_diag, po, &S->A));
    GS_CALL(sf_stage_finish(be, S, prm));
    return GS_OK;
}

static size_t sf_align256(size_t b) { return (b + 255) / 256 * 256; }

/* The fold table of a merged schedule whose T_D (stage 0, at most two levels, no remainder, ELL width at
 * most GS_SF_FOLD_MAX) and M (stage 1) plans are built: d->fold_arena and its parts, d->fold_w. */
static gs_status sf_fold_build(gs_backend *be, sf_data *d)
{
    gs_status st = GS_OK;
    const gs_ls_dplan *T = &d->st[0].A.D, *M = &d->st[1].A.D;
    const gs_int n = M->npos;
    const int w = T->ell_width;
    const size_t vs = T->single ? sizeof(float) : sizeof(double), wn = (size_t)w * (size_t)n;
    const size_t off_t = sf_align256(wn * sizeof(gs_int)), off_d = off_t + sf_align256(wn * vs),
                 off_di = off_d + sf_align256(wn * vs);
    void *p = NULL;
    gs_int *pos = NULL;
    GS_TRY(gs_ts_work_alloc(be, &p, off_di + (size_t)n * vs));
    d->fold_arena = (char *)p;
    d->fold_b = (const gs_int *)d->fold_arena;
    d->fold_t = d->fold_arena + off_t;
    d->fold_d = d->fold_arena + off_d;
    d->fold_di = d->fold_arena + off_di;
    if (n == 0) goto cleanup;
    p = NULL;
    GS_TRY(gs_ts_work_alloc(be, &p, (size_t)n * sizeof(gs_int)));
    pos = (gs_int *)p;
    /* the table by M position: T_D's entries of each row (sf_fold_table_kernel) */
    GS_TRY(gs_sf_fold_table(gs_ts_stream(be), T, M, pos, (gs_int *)d->fold_arena, d->fold_arena + off_t,
                            d->fold_arena + off_d, d->fold_arena + off_di));
cleanup:
    gs_ts_work_free(be, pos);
    if (st == GS_OK) {
        d->fold_w = w;
    } else {
        gs_ts_work_free(be, d->fold_arena);
        d->fold_arena = NULL;
        d->fold_b = NULL;
        d->fold_t = d->fold_d = d->fold_di = NULL;
    }
    return st;
}

/* A CSR of gs_ts_merge_dev given back to the work space once its plan is built (its view is not used
 * afterwards; gs_ts_merge_dev_free skips the NULLs). */
static void sf_merge_dev_drop(gs_backend *be, gs_int **rowptr, gs_int **colind, double **val)
{
    gs_ts_work_free(be, *rowptr);
    gs_ts_work_free(be, *colind);
    gs_ts_work_free(be, *val);
    *rowptr = *colind = NULL;
    *val = NULL;
}

/* merged schedule with m levels per group from T's level plan (stage 0's plan, built and checked): T_D
 * and M built on the GPU (merge_cuda.cu), then a level-order plan of each as the two stages. Too much fill
 * (R over GS_SF_MERGE_FILL times T's entries + n): *built = false, T's plan stays stage 0. */
static gs_status sf_merged_build(gs_trisolve *ts, sf_data *d, const gs_csr *T, const gs_csr_dev *dT, gs_int m,
                                 const gs_ts_plan_opts *po, bool *built)
{
    gs_status st = GS_OK;
    gs_backend *be = ts->be;
    gs_ts_merge_dev R;
    const double t0 = gs_wtime();
    const long long nnz = T ? T->nnz : dT->nnz, n = T ? T->nrows : dT->nrows;
    memset(&R, 0, sizeof R);
    *built = false;
    GS_TRY(gs_ts_merge_prepare(be, T, dT, ts->unit_diag, m, (long long)GS_SF_MERGE_FILL * (nnz + n),
                               ts->prm.syncfree.merge_pool_start, &d->st[0].A, &R, &d->merge));
    d->merge_time = gs_wtime() - t0;
    if (d->merge.too_much_fill) goto cleanup;
    gs_ts_analysis_free(be, &d->st[0].A);
    {
        /* the stages' levels follow from T's: the level inside the group for T_D, the group for M */
        gs_ts_plan_opts pd = *po, pm = *po;
        pd.given_level = R.td_level;
        pd.given_max_level = R.td_max_level;
        pm.given_level = R.m_level;
        pm.given_max_level = R.m_max_level;
        /* stage 0's grid and ready values only when it is not folded into M's kernel (below); each CSR is
         * given back once its plan is built, for the next steps to reuse */
        GS_TRY(gs_ts_analysis_run_dev(be, &R.TD, ts->uplo, ts->unit_diag, &pd, &d->st[0].A));
        gs_ts_analysis_done(&d->st[0].A);
        sf_merge_dev_drop(be, &R.td_rowptr, &R.td_colind, &R.td_val);
        GS_TRY(sf_stage_build(be, &d->st[1], NULL, &R.M, ts->uplo, true, &pm, &ts->prm.syncfree));
        sf_merge_dev_drop(be, &R.m_rowptr, &R.m_colind, &R.m_val);
    }
    {
        const sf_stage *M = &d->st[1];
        const gs_ls_dplan *TD = &d->st[0].A.D;
        gs_sf_grid mg;
        gs_sf_td_shape ts_shape;
        gs_sf_td_choice c;
        mg.wmax = M->wmax;
        mg.lpr = M->lpr;
        mg.blocks = M->blocks;
        mg.rem_prefetch = M->rem_prefetch;
        mg.once = M->once;
        ts_shape.td_levels = TD->nlevels;
        ts_shape.td_ell_width = TD->ell_width;
        ts_shape.td_rem = TD->rem_nnz > 0;
        ts_shape.same_positions = TD->npos == M->A.D.npos;
        ts_shape.m_run_rows = M->run_rows;
        ts_shape.m = &mg;
        gs_sf_td_rule(&ts_shape, &ts->prm.syncfree, &c);
        d->td_sync = c.sync;
        d->td_one_pass = c.one_pass;
        d->td_fold = c.fold; /* T_D folded into M's kernel: no first launch and no y */
    }
    if (d->td_fold) {
        GS_TRY(sf_fold_build(be, d)); /* stage 0's plan stays, for the table's build and its statistics */
    } else {
        void *p = NULL;
        GS_TRY(sf_stage_finish(be, &d->st[0], &ts->prm.syncfree, false));
        GS_TRY(gs_ts_work_alloc(be, &p, ((size_t)R.TD.nrows + 1) * sizeof(double)));
        d->y = (double *)p;
    }
    *built = true;
cleanup:
    gs_ts_merge_dev_free(be, &R);
    return st;
}

/* levels per group of the merged schedule: forced (> 0), or the rule's from T's row levels */
static gs_int sf_merge_levels(gs_int forced, gs_int n, gs_int nlevels, gs_int max_row_length)
{
    return forced > 0 ? forced : gs_ts_syncfree_merge_rule(n, nlevels, max_row_length);
}

/* The schedule after T's row levels: GS_SF_WRUN_ROWS when the rule picks warp runs (auto only: forced
 * is 0), else 1 (merged where sf_merge_levels is above 1). */
static gs_int sf_after_levels(gs_int forced, const gs_ts_row_stats *rs, gs_int nlevels)
{
    if (forced != 0) return 1;
    return gs_ts_syncfree_rule(rs, nlevels, sf_merge_levels(0, rs->n, nlevels, rs->max_row_length));
}

/* levels_only of T's analysis: T's own plan would be thrown away (merging or warp runs wanted): its
 * levels are enough. ctx: the levels per group forced (0: auto) */
static bool sf_levels_only(const gs_ts_row_stats *rs, gs_int nlevels, const void *ctx)
{
    const gs_int forced = *(const gs_int *)ctx;
    return sf_merge_levels(forced, rs->n, nlevels, rs->max_row_length) > 1 ||
           sf_after_levels(forced, rs, nlevels) == GS_SF_WRUN_ROWS;
}

/* The analysis of a factor given on the host (T) or already in device memory (dT, T NULL: a GPU
 * factorization's output, read there without a round trip); everything after the plan is shared. With
 * preconditioner.precision = "single" the plan stores its values in float. Auto: T's row levels first
 * (rows as units), then the rule: T's level plan, the merged schedule, or warp runs (a second analysis
 * of T's device copy with runs as units). */
static gs_status sf_analyse_from(gs_trisolve *ts, const gs_csr *T, const gs_csr_dev *dT)
{
    sf_data *d = (sf_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    gs_ts_plan_opts po = {GS_SF_ELL_MAX, true, 0, GS_SF_RUN_ELL, ts->prm.single};
    gs_int m = 0;
    bool built = false;

    sf_release(ts, d);
    memset(&d->merge, 0, sizeof d->merge);
    d->merge_time = 0.0;
    d->t0 = gs_wtime();
    po.forced_run_rows = gs_sf_forced_run_rows(&ts->prm.syncfree); /* the schedule rule, or the one forced */
    po.level_blocks_per_sm = ts->prm.analysis.level_blocks_per_sm;
    m = gs_sf_forced_merge_levels(&ts->prm.syncfree);
    d->forced = po.forced_run_rows > 0;
    /* T's analysis (checks the rows): the level order's only stage, or, where the merged schedule or warp
     * runs are wanted, only T's levels (no plan: the next plan checks T's diagonal) */
    po.levels_only = sf_levels_only;
    po.levels_ctx = &m;
    GS_TRY(T ? gs_ts_analysis_run(be, T, ts->uplo, ts->unit_diag, &po, &d->st[0].A)
             : gs_ts_analysis_run_dev(be, dT, ts->uplo, ts->unit_diag, &po, &d->st[0].A));
    d->tplan_time = gs_wtime() - d->t0;
    if (d->st[0].A.D.run_rows == 1) d->row_levels = d->st[0].A.D.nlevels;
    if (d->st[0].A.row_level) {
        const gs_ls_dplan *D = &d->st[0].A.D;
        gs_ts_row_stats rs;
        rs.n = D->n;
        rs.max_row_length = D->max_row_length;
        rs.nnz_offdiag = D->nnz_off;
        rs.linked_rows = d->st[0].A.linked_rows;
        if (sf_after_levels(m, &rs, D->nlevels) == GS_SF_WRUN_ROWS) {
            /* warp runs: the runs' plan from T's device copy (the levels-only analysis uploaded a host T) */
            gs_ts_analysis L = d->st[0].A;
            memset(&d->st[0].A, 0, sizeof d->st[0].A);
            po.forced_run_rows = GS_SF_WRUN_ROWS;
            po.levels_only = NULL;
            st = gs_ts_analysis_run_dev(be, T ? &L.tdev : dT, ts->uplo, ts->unit_diag, &po, &d->st[0].A);
            gs_ts_analysis_free(be, &L);
            if (st != GS_OK) goto cleanup;
            d->st[0].A.t0 = d->t0; /* the stage's times cover both passes (the upload was the first's) */
            d->st[0].A.t.upload = L.t.upload;
            d->st[0].A.t.upload_bytes = L.t.upload_bytes;
            d->st[0].A.t.staged = L.t.staged;
            d->st[0].A.t.staging_alloc = L.t.staging_alloc;
            d->wruns_rule = true;
        } else {
            GS_TRY(sf_merged_build(ts, d, T, dT, sf_merge_levels(m, D->n, D->nlevels, D->max_row_length), &po,
                                   &built));
            if (!built) { /* too much fill: T's plan after all, its levels given */
                gs_ts_analysis L = d->st[0].A;
                memset(&d->st[0].A, 0, sizeof d->st[0].A);
                po.given_level = L.row_level;
                po.given_max_level = L.D.nlevels - 1;
                st = T ? gs_ts_analysis_run(be, T, ts->uplo, ts->unit_diag, &po, &d->st[0].A)
                       : gs_ts_analysis_run_dev(be, dT, ts->uplo, ts->unit_diag, &po, &d->st[0].A);
                gs_ts_analysis_free(be, &L);
                if (st != GS_OK) goto cleanup;
            }
        }
    }
    if (built) {
        d->nstages = 2;
    } else {
        GS_TRY(sf_stage_finish(be, &d->st[0], &ts->prm.syncfree));
        d->nstages = 1;
    }
    d->total_time = gs_wtime() - d->t0;
cleanup:
    if (st != GS_OK) sf_release(ts, d);
    return st;
}

static gs_status sf_analyse(gs_trisolve *ts, const gs_csr *T)
{
    GS_CALL(sf_analyse_from(ts, T, NULL));
    return GS_OK;
}

static gs_status sf_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T)
{
    GS_CALL(sf_analyse_from(ts, NULL, T));
    return GS_OK;
}

static gs_status sf_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    const sf_data *d = (const sf_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    if (d->nstages == 2 && d->td_fold) { /* one launch: M's rows form their y from b */
        GS_CALL(gs_sf_stage_solve(&d->st[1], s, b->data, x->data, false, false, d));
    } else if (d->nstages == 2) {
        GS_CALL(gs_sf_stage_solve(&d->st[0], s, b->data, d->y, d->td_sync, d->td_one_pass, NULL));
        GS_CALL(gs_sf_stage_solve(&d->st[1], s, d->y, x->data, false, false, NULL));
    } else {
        GS_CALL(gs_sf_stage_solve(&d->st[0], s, b->data, x->data, false, false, NULL));
    }
    return GS_OK;
}

static void sf_destroy(gs_trisolve *ts)
{
    sf_data *d = (sf_data *)ts->data;
    if (!d) return;
    sf_release(ts, d);
    gs_free(&ts->data);
}

static void sf_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const sf_data *d = (const sf_data *)ts->data;
    const sf_stage *S0 = &d->st[0];
    bool runs = S0->run_rows > 1, merged = d->nstages == 2;
    const bool wruns = S0->run_rows == GS_SF_WRUN_ROWS;
    gs_ts_report_string(rep, prefix, "implementation",
                        merged && d->td_fold
                            ? "cuda sync-free, merged levels (T = T_D + T_O, x = M^{-1} T_D^{-1} b with "
                              "M = I + T_D^{-1} T_O: one level-order solve of levels/m levels whose rows form "
                              "their y = T_D^{-1} b themselves (T_D of two levels folded in); a thread per row "
                              "spinning on the values it reads; persistent warps taking 32 rows per ticket)"
                        : merged ? "cuda sync-free, merged levels (T = T_D + T_O, x = M^{-1} T_D^{-1} b with "
                                   "M = I + T_D^{-1} T_O: two level-order solves of m and levels/m levels; a "
                                   "thread per row spinning on the values it reads; persistent warps taking 32 "
                                   "rows per ticket)"
                        : wruns ? "cuda sync-free, warp runs (GPU analysis; a warp per run of up to 32 linked rows: "
                                  "its entries outside the run polled, the run's recurrence solved by a scan over "
                                  "the lanes; runs in run-level order, persistent warps taking a run per ticket)"
                        : runs ? "cuda sync-free (GPU analysis; runs of linked rows in level order, a thread per run "
                                 "keeping the run's dependency in a register and spinning on the values it reads; "
                                 "persistent warps taking 32 runs per ticket)"
                               : "cuda sync-free (GPU analysis; rows in level order, a thread per row spinning on the "
                                 "values it reads; persistent warps taking 32 rows per ticket)");
    gs_ts_report_string(rep, prefix, "schedule", merged ? "merged" : wruns ? "wruns" : runs ? "runs" : "levels");
    /* single: the factor's values in float, applied with double accumulation (b, x, sums in double) */
    gs_ts_report_string(rep, prefix, "precision", ts->prm.single ? "single" : "double");
    gs_ts_report_int(rep, prefix, "schedule_forced", d->forced ? 1 : 0);
    if (merged) {
        char sub[256];
        gs_ts_report_int(rep, prefix, "merge_levels_per_group", d->merge.m);
        gs_ts_report_int(rep, prefix, "merge_td_level_sync", d->td_sync ? 1 : 0);
        gs_ts_report_int(rep, prefix, "merge_td_one_pass", d->td_one_pass ? 1 : 0);
        gs_ts_report_int(rep, prefix, "merge_td_fold", d->td_fold ? 1 : 0);
        gs_ts_report_int(rep, prefix, "levels", d->merge.levels); /* of T; each stage reports its own */
        gs_ts_report_int(rep, prefix, "merge_groups", d->merge.groups);
        gs_ts_report_int(rep, prefix, "merge_nnz_r", d->merge.nnz_r);
        gs_ts_report_int(rep, prefix, "merge_max_row_r", d->merge.max_row_r);
        gs_ts_report_double(rep, prefix, "merge_growth", d->merge.growth);
        gs_ts_report_double(rep, prefix, "merge_time", d->merge_time);
        gs_ts_report_double(rep, prefix, "merge_build_time", d->merge.build_time);
        gs_ts_report_int(rep, prefix, "merge_pool_grown", d->merge.pool_grown);
        gs_ts_report_double(rep, prefix, "merge_tplan_time", d->tplan_time);
        gs_ts_report_double(rep, prefix, "analysis_time", d->total_time);
        for (int k = 0; k < 2; k++) {
            snprintf(sub, sizeof sub, "%s.%s", prefix, k == 0 ? "td" : "m");
            gs_ts_analysis_view(&d->st[k].A, rep, sub);
            gs_ts_report_int(rep, sub, "warps", (long long)d->st[k].blocks * (GS_SF_BLOCK / 32));
            gs_ts_report_int(rep, sub, "remainder_prefetch", d->st[k].rem_prefetch ? 1 : 0);
            gs_ts_report_int(rep, sub, "lanes_per_row", d->st[k].lpr);
            gs_ts_report_int(rep, sub, "persistent", d->st[k].once ? 0 : 1);
        }
        gs_ts_report_int(rep, prefix, "threads_per_block", GS_SF_BLOCK);
        return;
    }
    if (d->merge.too_much_fill) gs_ts_report_int(rep, prefix, "merge_refused_fill", 1);
    gs_ts_analysis_view(&S0->A, rep, prefix);
    if (d->wruns_rule) gs_ts_report_double(rep, prefix, "row_levels_time", d->tplan_time); /* the rule's pass */
    gs_ts_report_int(rep, prefix, "warps", (long long)S0->blocks * (GS_SF_BLOCK / 32));
    gs_ts_report_int(rep, prefix, "remainder_prefetch", S0->rem_prefetch ? 1 : 0);
    gs_ts_report_int(rep, prefix, "lanes_per_row", S0->lpr);
    gs_ts_report_int(rep, prefix, "persistent", S0->once ? 0 : 1);
    gs_ts_report_int(rep, prefix, "threads_per_block", GS_SF_BLOCK);
}

static const gs_trisolve_ops sf_ops = {sf_analyse, sf_solve, sf_destroy, sf_view, sf_analyse_dev};

gs_int gs_ts_syncfree_levels(const gs_trisolve *ts)
{
    if (!ts || ts->ops != &sf_ops || !ts->analysed || !ts->data) return -1;
    const sf_data *d = (const sf_data *)ts->data;
    return d->row_levels >= 0 ? d->row_levels : d->st[0].A.D.nlevels;
}

gs_status gs_trisolve_create_syncfree_cuda(gs_trisolve *ts)
{
    sf_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "syncfree_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &sf_ops;
    return GS_OK;
}
