/* The GPU analysis shared by the level-order triangular solvers (syncfree, levelset): T's CSR uploaded
 * through a pinned staging buffer, its rows checked on the device, and its level-set plan (levels,
 * rows renumbered level by level, HEC layout, 1/diagonal) built by kernels (analysis_kernels_cuda.cu);
 * trisolve_cuda.h says the steps, each a function here (lv_row_pass, lv_schedule, lv_levels, lv_values,
 * lv_layout). Host work is O(1) besides the staging copy (parallel, core/staging_cuda.h) and O(levels) downloads.
 *
 * Where the time goes (poisson3d 100^3, L: n = 10^6, 40 MB of CSR): the upload is the floor; a
 * pageable cudaMemcpy moves ~6-7 GB/s on the H100 host, because the driver
 * copies through its own pinned buffer with one thread. Here the OpenMP threads copy the arrays into a
 * pinned staging buffer of ST_SLOTS chunks while the DMA engine drains the chunks already filled, and
 * the level kernel runs while the values (60% of the bytes) are still on their way. Allocating pinned
 * memory costs about as much per byte as a pageable copy, so the buffer is small, allocated once per
 * process and reused by every later analysis (its allocation time is reported as staging_alloc_time
 * of the analysis that paid it).
 *
 * A factor already in device memory (gs_ts_analysis_run_dev: the output of a GPU factorization) skips
 * the staging: its arrays are copied inside the device. A single-precision plan (opts->single) gets its
 * values rounded to float by the layout kernel; everything before the layout is the same. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/carve.h"
#include "core/mem.h"
#include "core/staging_cuda.h"
#include "trisolve/analysis_cuda.h"

/* ================================================================ stream-ordered work space */

/* By default the backend's work space (gs_backend_cuda_work_alloc: blocks given back are kept idle and
 * handed out again, no cudaFree and no synchronization). Opt-in on a backend with
 * gs_backend_cuda_set_analysis_pool instead: the default pool then keeps up
 * to GS_TS_POOL_KEEP bytes (at most 1/8 of the device) of freed blocks cached (the default threshold, 0,
 * returns them at every synchronization; a cudaMalloc that fails trims the pool and retries,
 * backend_cuda.cu). Measured on the H100 (gpusolve, ILU(0) + BiCGStab, poisson3d 100^3, fresh process):
 * the pool makes later allocations cheap (merged builder 2.5 vs 3.4-4.3 ms, the upper analysis 4.4 vs
 * 5.9-7.4 ms) but its first allocation costs 6-11 ms (T's plan 7.8-12.9 vs 1.4-2.4 ms), so the setup of
 * a run is 3-7 ms longer with it (18.9-25.2 vs 15.6-22.0 ms): off by default. The backend's work space
 * also where the device has no memory pools. */
#define GS_TS_POOL_KEEP ((unsigned long long)4 << 30)

static int ts_pool_state(gs_backend *be)
{
    static int state = 0; /* the device's default pool: 0 unknown, 1 ready, -1 none */
    if (!gs_backend_cuda_analysis_pool(be)) return -1;
    if (state != 0) return state;
    int dev = 0, ok = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || !ok ||
        cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        state = -1;
        return state;
    }
    unsigned long long keep = GS_TS_POOL_KEEP, cur = 0;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b / 8 < keep) keep = total_b / 8;
    else (void)cudaGetLastError();
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &cur) == cudaSuccess && cur < keep &&
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess)
        (void)cudaGetLastError();
    state = 1;
    return state;
}

gs_status gs_ts_work_alloc(gs_backend *be, void **p, size_t bytes)
{
    *p = NULL;
    if (ts_pool_state(be) < 0) return gs_backend_cuda_work_alloc(be, p, bytes, "analysis work space");
    cudaStream_t s = gs_ts_stream(be);
    cudaError_t e = cudaMallocAsync(p, bytes ? bytes : 1, s);
    if (e != cudaSuccess && gs_cuda_alloc_retry((int)e)) e = cudaMallocAsync(p, bytes ? bytes : 1, s);
    if (e == cudaSuccess) return GS_OK;
    *p = NULL;
    return gs_cuda_alloc_error(be, (int)e, bytes, "analysis work space");
}

void gs_ts_work_free(gs_backend *be, void *p)
{
    if (!p) return;
    if (ts_pool_state(be) < 0) { /* kept for a later analysis step, ordered by the stream */
        gs_backend_cuda_work_free(be, p);
        return;
    }
    if (cudaFreeAsync(p, gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
}

/* The analysis work space, freed at its end: T's CSR, per-row work arrays, the run arrays, the sort
 * output, CUB's; remlen for npos_max positions (0: allocated once the runs are counted, warp runs). */
struct lv_work {
    gs_int *rowptr, *col;
    double *val;
    lv_stats *stats;
    gs_int *level, *len, *idx, *key, *chain_start, *flag, *rid, *run_first, *unit_level, *skeys, *sunits, *pos,
        *remlen;
    void *cub;
};

static size_t lv_work_carve(char *base, size_t n, size_t nnz, bool runs, size_t npos_max, size_t cub_bytes,
                            lv_work *W)
{
    gs_carver c = {base, 0};
    W->rowptr = c.take<gs_int>(nnz ? n + 1 : 0); /* nnz = 0: T is on the device already, no copy */
    W->col = c.take<gs_int>(nnz);
    W->val = c.take<double>(nnz);
    W->stats = c.take<lv_stats>(1);
    W->level = c.take<gs_int>(n);
    W->len = c.take<gs_int>(n);
    W->idx = c.take<gs_int>(n);
    W->key = c.take<gs_int>(n);
    W->chain_start = c.take<gs_int>(runs ? n : 0);
    W->flag = c.take<gs_int>(runs ? n : 0);
    W->rid = c.take<gs_int>(runs ? n : 0);
    W->run_first = c.take<gs_int>(runs ? n + 1 : 0);
    W->unit_level = c.take<gs_int>(runs ? n : 0);
    W->skeys = c.take<gs_int>(n);
    W->sunits = c.take<gs_int>(n);
    W->pos = c.take<gs_int>(n);
    W->remlen = c.take<gs_int>(npos_max ? npos_max + 1 : 0);
    W->cub = c.take<char>(cub_bytes);
    return c.off;
}

/* The plan's own arrays in D->arena (sizes from D's statistics). */
static size_t lv_plan_carve(char *base, gs_ls_dplan *D)
{
    size_t np = (size_t)D->npos, w = (size_t)D->ell_width, rem = (size_t)D->rem_nnz;
    gs_carver c = {base, 0};
    D->perm = c.take<gs_int>(np);
    D->level_ptr = c.take<gs_int>((size_t)D->nlevels + 1);
    D->ell_col = c.take<gs_int>(w * np);
    D->rem_ptr = c.take<gs_int>(np + 1);
    D->rem_col = c.take<gs_int>(rem);
    /* the values in the plan's precision; the other precision's pointers stay NULL */
    D->ell_val = D->single ? NULL : c.take<double>(w * np);
    D->rem_val = D->single ? NULL : c.take<double>(rem);
    D->dinv = D->single ? NULL : c.take<double>(np);
    D->ell_val_f = D->single ? c.take<float>(w * np) : NULL;
    D->rem_val_f = D->single ? c.take<float>(rem) : NULL;
    D->dinv_f = D->single ? c.take<float>(np) : NULL;
    return c.off;
}

void gs_ls_dplan_free(gs_backend *be, gs_ls_dplan *D)
{
    if (!D) return;
    if (D->arena) gs_backend_cuda_work_free(be, D->arena); /* kept for reuse, ordered by the stream */
    D->arena = NULL;
    D->perm = D->level_ptr = D->ell_col = D->rem_ptr = D->rem_col = NULL;
    D->ell_val = D->rem_val = D->dinv = NULL;
    D->ell_val_f = D->rem_val_f = D->dinv_f = NULL;
    gs_free(&D->h_level_ptr);
}

void gs_ts_analysis_free(gs_backend *be, gs_ts_analysis *A)
{
    if (!A) return;
    gs_ls_dplan_free(be, &A->D);
    gs_ts_work_free(be, A->kept);
    A->kept = NULL;
    A->row_level = NULL;
    memset(&A->tdev, 0, sizeof A->tdev);
}

/* The first faulty row found on the device is `row` (< n): the host check of rows 0 .. row gives the
 * error of the first faulty row with gs_trisolve_check_factor's message; it finding none is a bug in
 * one of the two predicates. */
static gs_status lv_report_fault(gs_backend *be, const gs_csr *T, const gs_csr_dev *dT, gs_uplo uplo,
                                bool unit_diag, int row, const char *what)
{
    if (!T) { /* a device factor: its host copy, on this error path only */
        gs_status st = GS_OK;
        gs_csr H;
        memset(&H, 0, sizeof H);
        GS_TRY(gs_csr_alloc(&H, dT->nrows, dT->ncols, dT->nnz, true));
        GS_TRY(gs_backend_download(be, H.rowptr, dT->rowptr, ((size_t)dT->nrows + 1) * sizeof(gs_int)));
        if (dT->nnz > 0) {
            GS_TRY(gs_backend_download(be, H.colind, dT->colind, (size_t)dT->nnz * sizeof(gs_int)));
            GS_TRY(gs_backend_download(be, H.val, dT->val, (size_t)dT->nnz * sizeof(double)));
        }
        st = lv_report_fault(be, &H, NULL, uplo, unit_diag, row, what);
    cleanup:
        gs_csr_free(&H);
        return st;
    }
    GS_CALL(gs_ts_check_rows(T, uplo, unit_diag, (gs_int)row + 1));
    return GS_ERROR(GS_ERR_INTERNAL, "the device check flagged row %d (1-based) of the %s factor (%s) but the "
                                     "host check finds no fault in rows 1..%d", row + 1,
                    uplo == GS_LOWER ? "lower" : "upper", what, row + 1);
}

/* The row-length histogram capped at `cap` (<= LV_HIST) from the one capped at LV_HIST: hist[cap] pools
 * the rows of at least cap entries, *long_sum = the sum of their lengths. */
static void lv_cap_hist(const lv_stats *hs, gs_int cap, gs_int *hist, long long *long_sum)
{
    *long_sum = (long long)hs->long_sum;
    for (int k = 0; k <= cap; k++) hist[k] = 0;
    for (int k = 0; k <= LV_HIST; k++) {
        if (k < cap) {
            hist[k] = hs->hist[k];
        } else {
            hist[cap] += hs->hist[k];
            if (k < LV_HIST) *long_sum += (long long)k * hs->hist[k];
        }
    }
}

/* One analysis in progress: what its steps share. */
struct lv_ctx {
    gs_backend *be;
    const gs_csr *T;      /* a host factor, or NULL */
    const gs_csr_dev *dT; /* a device factor, or NULL */
    gs_uplo uplo;
    bool unit_diag;
    const gs_ts_plan_opts *opts;
    gs_ts_analysis *A;
    cudaStream_t s, vs;   /* vs: the values' stream (a host factor) */
    cudaEvent_t values_in;
    void *work, *work_pos; /* work_pos: warp runs' remlen, sized once the runs are counted */
    gs_stage U;
    lv_stats hs;
    lv_work W;
    gs_int n, nnz;
    size_t nn, nz, max_run_rows;
    gs_int forced;        /* the rows per run asked for (1: given levels) */
    size_t sort_bytes, scan_bytes, max_bytes, flag_bytes;
    const gs_int *rowptr, *col; /* T's pattern on the device (the work space's copy, or dT's) */
    const double *val;
    double t_check;
    gs_ts_row_stats rs;
    gs_int run_rows, max_width;
    const gs_int *row_level; /* the sort's keys: the units' levels */
};

/* The work space: T's CSR (a host T is copied in; a device T is read in place), per-row work arrays, the run
 * arrays, the sort output and CUB's workspace. */
static gs_status lv_work_setup(lv_ctx &c)
{
    const size_t npos_max = c.max_run_rows * c.nn;
    GS_CALL(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, c.sort_bytes, (const unsigned *)NULL, (unsigned *)NULL,
                                                    (const gs_int *)NULL, (gs_int *)NULL, (int)c.n, 0, 32, c.s)));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, c.scan_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                  (int)(npos_max < (size_t)INT_MAX ? npos_max + 1 : INT_MAX), c.s)));
    if (c.max_run_rows > 1) GS_CALL(gs_lv_runs_bytes(c.s, c.n, &c.max_bytes, &c.flag_bytes));
    size_t cub_bytes = c.sort_bytes;
    if (c.scan_bytes > cub_bytes) cub_bytes = c.scan_bytes;
    if (c.max_bytes > cub_bytes) cub_bytes = c.max_bytes;
    if (c.flag_bytes > cub_bytes) cub_bytes = c.flag_bytes;
    const size_t copy_nz = c.T ? (c.nz ? c.nz : 1) : 0;
    const size_t remlen_n = c.max_run_rows == GS_SF_WRUN_ROWS ? 0 : npos_max; /* warp runs: later */
    GS_CALL(gs_ts_work_alloc(c.be, &c.work, lv_work_carve(NULL, c.nn, copy_nz, c.max_run_rows > 1, remlen_n,
                                                          cub_bytes, &c.W)));
    lv_work_carve((char *)c.work, c.nn, copy_nz, c.max_run_rows > 1, remlen_n, cub_bytes, &c.W);
    c.rowptr = c.T ? c.W.rowptr : c.dT->rowptr;
    c.col = c.T ? c.W.col : c.dT->colind;
    c.val = c.T ? c.W.val : c.dT->val;
    return GS_OK;
}

/* 1. The pattern (a host T's through the staging buffer); the row pass on it: check, lengths, links. */
static gs_status lv_row_pass(lv_ctx &c)
{
    gs_ts_analysis *A = c.A;
    GS_CALL(gs_lv_stats_init(c.s, c.W.stats, c.n));
    if (c.T) {
        GS_CALL(gs_stage_begin(&c.U, (c.nn + 1) * sizeof(gs_int) + c.nz * (sizeof(gs_int) + sizeof(double))));
        A->t.staging_alloc = c.U.alloc_time;
        GS_CALL(gs_stage_copy(&c.U, c.W.rowptr, c.T->rowptr, (c.nn + 1) * sizeof(gs_int), c.s));
        GS_CALL(gs_stage_copy(&c.U, c.W.col, c.T->colind, c.nz * sizeof(gs_int), c.s));
    } /* a device T: read where it is (the caller keeps it until the analysis returns) */
    c.t_check = gs_wtime();
    A->t.upload = c.t_check - A->t0; /* the pattern's part */
    lv_rows_args ra;
    ra.n = c.n;
    ra.nnz = c.nnz;
    ra.unit = c.unit_diag;
    ra.near = c.forced == GS_SF_RUN_ROWS ? 0 : GS_SF_WRUN_ROWS; /* the strict link unless runs are forced */
    ra.rowptr = c.rowptr;
    ra.col = c.col;
    ra.level = c.W.level;
    ra.len = c.W.len;
    ra.idx = c.W.idx;
    ra.key = c.W.key;
    ra.stats = c.W.stats;
    GS_CALL(gs_lv_rows(c.s, c.uplo == GS_LOWER, ra));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&c.hs, c.W.stats, sizeof c.hs, cudaMemcpyDeviceToHost, c.s)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c.s)));
    if (c.hs.bad_row < c.n) GS_CALL(lv_report_fault(c.be, c.T, c.dT, c.uplo, c.unit_diag, c.hs.bad_row, "structure"));
    return GS_OK;
}

/* 2. The schedule (rows unless runs are forced): rows, or runs of up to run_rows linked rows (chain starts by
 * a max-scan). */
static gs_status lv_schedule(lv_ctx &c)
{
    gs_ls_dplan *D = &c.A->D;
    c.rs.n = c.n;
    c.rs.max_row_length = c.hs.max_len;
    c.rs.linked_rows = (long long)c.hs.linked;
    {
        long long ls = 0;
        gs_int hist[LV_HIST + 1];
        lv_cap_hist(&c.hs, LV_HIST, hist, &ls);
        c.rs.nnz_offdiag = ls;
        for (int k = 0; k < LV_HIST; k++) c.rs.nnz_offdiag += (long long)k * hist[k];
    }
    c.A->linked_rows = c.rs.linked_rows;
    c.run_rows = (gs_int)c.max_run_rows;
    if (c.forced > 1 && c.forced != c.run_rows)
        return GS_ERROR(GS_ERR_INTERNAL, "%d rows per run asked for; expected 1, %d or %d", (int)c.forced,
                        GS_SF_RUN_ROWS, GS_SF_WRUN_ROWS);
    D->run_rows = c.run_rows;
    /* the thread-per-run kernel holds run_max_width entries per row; warp runs a lane per row */
    c.max_width = c.run_rows == GS_SF_RUN_ROWS ? c.opts->run_max_width : c.opts->max_width;
    D->max_width = c.max_width;
    if (c.run_rows > 1) {
        GS_CALL(gs_lv_runs(c.s, c.n, c.run_rows, c.W.cub, c.max_bytes, c.flag_bytes, c.W.key, c.W.chain_start,
                           c.W.flag, c.W.rid, c.W.run_first, c.W.stats));
        GS_CALL(GS_CUDA(cudaMemcpyAsync(&c.hs.nunits, &c.W.stats->nunits, sizeof(int), cudaMemcpyDeviceToHost, c.s)));
        GS_CALL(GS_CUDA(cudaStreamSynchronize(c.s)));
        D->nunits = c.hs.nunits;
        if ((long long)c.run_rows * D->nunits > (long long)INT_MAX)
            return GS_ERROR(GS_ERR_ARG, "%d runs of %d rows need %lld positions, more than a 32-bit index holds",
                            (int)D->nunits, (int)c.run_rows, (long long)c.run_rows * D->nunits);
        D->npos = c.run_rows * D->nunits;
        if (c.run_rows == GS_SF_WRUN_ROWS) {
            GS_CALL(gs_ts_work_alloc(c.be, &c.work_pos, ((size_t)D->npos + 1) * sizeof(gs_int)));
            c.W.remlen = (gs_int *)c.work_pos;
        }
    }
    return GS_OK;
}

/* 3. Levels of the units: level = 1 + max level of what the unit reads outside itself (given instead for the
 * merged schedule's stages). */
static gs_status lv_levels(lv_ctx &c)
{
    const gs_ls_dplan *D = &c.A->D;
    lv_level_args la;
    la.n = c.n;
    la.nunits = D->nunits;
    la.rowptr = c.rowptr;
    la.col = c.col;
    la.run_first = c.run_rows > 1 ? c.W.run_first : NULL;
    la.level = c.W.level;
    la.unit_level = c.run_rows > 1 ? c.W.unit_level : NULL;
    la.stats = c.W.stats;
    c.row_level = c.run_rows > 1 ? c.W.unit_level : c.W.level; /* the sort's keys */
    if (c.opts->given_level) {
        c.row_level = c.opts->given_level; /* given (merged schedule): nothing to compute */
        GS_CALL(GS_CUDA_LAUNCHED("lv_levels_kernel"));
    } else if (c.run_rows == 1) {
        /* rows: a warp at a time, links inside a warp by shuffles, levels by dependency index in W.key
         * (free once the row pass is done: only runs read it) */
        la.level = c.W.key;
        GS_CALL(GS_CUDA(cudaMemsetAsync(c.W.key, 0xFF, c.nn * sizeof(gs_int), c.s)));
        long long per_sm = LV_WARP_BLOCKS_PER_SM;
        if (c.opts->level_blocks_per_sm > 0) per_sm = c.opts->level_blocks_per_sm; /* the solver's parameters */
        const long long ublocks = (long long)(((size_t)D->nunits + LV_THREADS - 1) / LV_THREADS);
        const unsigned pblocks = (unsigned)(ublocks < per_sm * c.A->sms ? ublocks : per_sm * c.A->sms);
        GS_CALL(gs_lv_levels_rows(c.s, c.uplo == GS_LOWER, la, pblocks, c.W.level));
        if (c.uplo == GS_LOWER) c.row_level = c.W.key;
    } else {
        /* runs: a warp per run */
        GS_CALL(gs_lv_levels_runs(c.s, c.uplo == GS_LOWER, la));
    }
    return GS_OK;
}

/* A host T's values, on a second stream while the level kernel runs (after the stream-ordered allocation of
 * the work space on s); then the levels' count. */
static gs_status lv_values(lv_ctx &c)
{
    gs_ts_analysis *A = c.A;
    double t_values = gs_wtime();
    if (c.T) {
        GS_CALL(GS_CUDA(cudaStreamCreateWithFlags(&c.vs, cudaStreamNonBlocking)));
        GS_CALL(GS_CUDA(cudaEventCreateWithFlags(&c.values_in, cudaEventDisableTiming)));
        GS_CALL(GS_CUDA(cudaEventRecord(c.values_in, c.s)));
        GS_CALL(GS_CUDA(cudaStreamWaitEvent(c.vs, c.values_in, 0)));
        GS_CALL(gs_stage_copy(&c.U, c.W.val, c.T->val, c.nz * sizeof(double), c.vs));
        GS_CALL(GS_CUDA(cudaEventRecord(c.values_in, c.vs)));
    }
    GS_CALL(gs_stage_end(&c.U)); /* every chunk has left the staging buffer */
    A->t.upload += gs_wtime() - t_values; /* + the values' part */
    A->t.upload_bytes = c.U.bytes;
    A->t.staged = c.U.used;

    double t1 = gs_wtime();
    if (c.opts->given_level) {
        c.hs.max_level = c.opts->given_max_level;
    } else {
        GS_CALL(GS_CUDA(cudaMemcpyAsync(&c.hs.max_level, &c.W.stats->max_level, sizeof(int), cudaMemcpyDeviceToHost,
                                        c.s)));
        GS_CALL(GS_CUDA(cudaStreamSynchronize(c.s)));
    }
    A->t.levels = gs_wtime() - t1;
    return GS_OK;
}

/* 5-6. The plan from the sizes (the ELL-width rule of the host plan): a stable sort of the units by level
 * (positions, level_ptr, remainder pointers), then the HEC layout by position once the values are on the
 * device, and the value part of the check. */
static gs_status lv_layout(lv_ctx &c)
{
    gs_ts_analysis *A = c.A;
    gs_ls_dplan *D = &A->D;
    const gs_int n = c.n;
    gs_int hist[LV_HIST + 1];
    long long long_sum = 0, rem = 0;
    lv_cap_hist(&c.hs, c.max_width, hist, &long_sum);
    D->ell_width = gs_ls_ell_width(n, hist, c.max_width, D->nnz_off);
    for (int k = D->ell_width + 1; k < c.max_width; k++) rem += (long long)(k - D->ell_width) * hist[k];
    rem += long_sum - (long long)hist[c.max_width] * D->ell_width;
    D->rem_nnz = (gs_int)rem;

    size_t nl = (size_t)D->nlevels, np = (size_t)D->npos;
    const size_t plan_bytes = lv_plan_carve(NULL, D);
    GS_CALL(gs_backend_cuda_work_alloc(c.be, &D->arena, plan_bytes, "triangular-solve plan"));
    lv_plan_carve((char *)D->arena, D);
    if (c.opts->poison_plan) GS_CALL(GS_CUDA(cudaMemsetAsync(D->arena, 0xA5, plan_bytes, c.s)));

    /* 5. stable sort of the units by level: positions, level_ptr, remainder pointers */
    int end_bit = 1;
    while (end_bit < 31 && ((gs_int)1 << end_bit) <= c.hs.max_level) end_bit++;
    GS_CALL(GS_CUDA(cub::DeviceRadixSort::SortPairs(c.W.cub, c.sort_bytes, (const unsigned *)c.row_level,
                                                    (unsigned *)c.W.skeys, (const gs_int *)c.W.idx, c.W.sunits,
                                                    (int)D->nunits, 0, end_bit, c.s)));
    lv_pos_args pa;
    pa.n = n;
    pa.nunits = D->nunits;
    pa.npos = D->npos;
    pa.nlevels = D->nlevels;
    pa.run_rows = c.run_rows;
    pa.w = D->ell_width;
    pa.lower = c.uplo == GS_LOWER;
    pa.warp = c.run_rows == GS_SF_WRUN_ROWS;
    pa.keys = c.W.skeys;
    pa.units = c.W.sunits;
    pa.run_first = c.run_rows > 1 ? c.W.run_first : NULL;
    pa.len = c.W.len;
    pa.level_ptr = D->level_ptr;
    pa.perm = D->perm;
    pa.pos_of = c.W.pos;
    pa.remlen = c.W.remlen;
    GS_CALL(gs_lv_positions(c.s, pa));
    if (rem > 0) {
        GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(c.W.cub, c.scan_bytes, (const gs_int *)c.W.remlen, D->rem_ptr,
                                                      (int)np + 1, c.s)));
    } else {
        GS_CALL(GS_CUDA(cudaMemsetAsync(D->rem_ptr, 0, (np + 1) * sizeof(gs_int), c.s)));
    }

    /* 6. the HEC layout by position once the values are on the device */
    if (c.values_in) GS_CALL(GS_CUDA(cudaStreamWaitEvent(c.s, c.values_in, 0)));
    lv_layout_args<double> ly;
    ly.npos = D->npos;
    ly.w = D->ell_width;
    ly.position_cols = c.opts->position_cols;
    ly.has_rem = rem > 0;
    ly.unit = c.unit_diag;
    ly.rowptr = c.rowptr;
    ly.col = c.col;
    ly.val = c.val;
    ly.perm = D->perm;
    ly.pos_of = c.W.pos;
    ly.rem_ptr = D->rem_ptr;
    ly.ell_col = D->ell_col;
    ly.rem_col = D->rem_col;
    ly.ell_val = D->ell_val;
    ly.rem_val = D->rem_val;
    ly.dinv = D->dinv;
    ly.stats = c.W.stats;
    GS_CALL(gs_lv_layout(c.s, ly, D->single, D->ell_val_f, D->rem_val_f, D->dinv_f));

    gs_free(&D->h_level_ptr);
    GS_CALL(GS_MALLOC(D->h_level_ptr, nl + 1));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(D->h_level_ptr, D->level_ptr, (nl + 1) * sizeof(gs_int), cudaMemcpyDeviceToHost,
                                    c.s)));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&c.hs.bad_value_row, &c.W.stats->bad_value_row, sizeof(int),
                                    cudaMemcpyDeviceToHost, c.s)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c.s)));
    if (c.hs.bad_value_row < n)
        GS_CALL(lv_report_fault(c.be, c.T, c.dT, c.uplo, c.unit_diag, c.hs.bad_value_row, "diagonal value"));
    return GS_OK;
}

/* The analysis of T on the host (dT NULL) or of dT in device memory (T NULL). */
static gs_status lv_analysis(gs_backend *be, const gs_csr *T, const gs_csr_dev *dT, gs_uplo uplo, bool unit_diag,
                             const gs_ts_plan_opts *opts, gs_ts_analysis *A)
{
    gs_status st = GS_OK;
    gs_ls_dplan *D = &A->D;
    lv_ctx c;
    int dev = 0;
    double t1 = 0.0;

    memset(&c, 0, sizeof c);
    c.be = be;
    c.T = T;
    c.dT = dT;
    c.uplo = uplo;
    c.unit_diag = unit_diag;
    c.opts = opts;
    c.A = A;
    c.s = gs_ts_stream(be);
    c.n = T ? T->nrows : dT->nrows;
    c.nnz = T ? T->nnz : dT->nnz;
    c.nn = (size_t)c.n;
    c.nz = (size_t)c.nnz;
    c.forced = opts->given_level ? 1 : opts->forced_run_rows;
    c.max_run_rows = c.forced == GS_SF_WRUN_ROWS ? GS_SF_WRUN_ROWS : c.forced == GS_SF_RUN_ROWS ? GS_SF_RUN_ROWS : 1;
    memset(A, 0, sizeof *A);
    A->t0 = gs_wtime();
    if (opts->max_width < 1 || opts->max_width > GS_LS_ELL_MAX_WIDTH || opts->run_max_width < 0 ||
        opts->run_max_width > GS_LS_ELL_MAX_WIDTH)
        return GS_ERROR(GS_ERR_INTERNAL, "level-set plan: ELL width limits %d, %d outside 1..%d", (int)opts->max_width,
                        (int)opts->run_max_width, GS_LS_ELL_MAX_WIDTH);
    D->n = D->nunits = D->npos = c.n;
    D->run_rows = 1;
    D->max_width = opts->max_width;
    D->position_cols = opts->position_cols;
    D->single = opts->single;
    GS_TRY(GS_CUDA(cudaGetDevice(&dev)));
    GS_TRY(GS_CUDA(cudaDeviceGetAttribute(&A->sms, cudaDevAttrMultiProcessorCount, dev)));
    GS_TRY(GS_MALLOC(D->h_level_ptr, 1));
    D->h_level_ptr[0] = 0;
    if (c.n == 0) { /* nothing to upload or check: an empty plan */
        GS_TRY(gs_backend_cuda_work_alloc(be, &D->arena, 256, "triangular-solve plan"));
        D->level_ptr = D->perm = D->rem_ptr = (gs_int *)D->arena;
        GS_TRY(GS_CUDA(cudaMemsetAsync(D->arena, 0, 256, c.s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(c.s)));
        goto cleanup;
    }

    GS_TRY(lv_work_setup(c));
    GS_TRY(lv_row_pass(c));
    GS_TRY(lv_schedule(c));
    A->t.check = gs_wtime() - c.t_check;
    GS_TRY(lv_levels(c));
    GS_TRY(lv_values(c));
    t1 = gs_wtime();

    /* 4. sizes from the statistics */
    D->nlevels = c.hs.max_level + 1;
    D->max_row_length = c.hs.max_len;
    D->nnz_off = (gs_int)c.rs.nnz_offdiag;
    if (c.run_rows == 1 && !opts->given_level && opts->levels_only &&
        opts->levels_only(&c.rs, D->nlevels, opts->levels_ctx)) {
        /* levels only: no plan (the caller's next plan checks the diagonal); the work block is kept for the
         * levels by row and a host T's uploaded CSR (its values once they are in) */
        if (c.values_in) GS_TRY(GS_CUDA(cudaStreamWaitEvent(c.s, c.values_in, 0)));
        A->row_level = c.row_level;
        if (T) {
            A->tdev.nrows = A->tdev.ncols = c.n;
            A->tdev.nnz = c.nnz;
            A->tdev.rowptr = c.W.rowptr;
            A->tdev.colind = c.W.col;
            A->tdev.val = c.W.val;
        }
        A->kept = c.work;
        c.work = NULL;
        A->t.layout = gs_wtime() - t1;
        goto cleanup;
    }
    GS_TRY(lv_layout(c));
    A->t.layout = gs_wtime() - t1;
    for (gs_int l = 0; l < D->nlevels; l++) {
        gs_int units = D->h_level_ptr[l + 1] - D->h_level_ptr[l];
        if (units > A->max_level_rows) A->max_level_rows = units;
    }
    A->rows_level0 = D->h_level_ptr[1];
cleanup:
    {
        gs_status se = gs_stage_end(&c.U);
        if (st == GS_OK) st = se;
    }
    if (c.vs) {
        if (cudaStreamSynchronize(c.vs) != cudaSuccess) (void)cudaGetLastError(); /* no copy into `work` left */
        if (cudaStreamDestroy(c.vs) != cudaSuccess) (void)cudaGetLastError();
    }
    if (c.values_in && cudaEventDestroy(c.values_in) != cudaSuccess) (void)cudaGetLastError();
    if (c.work || c.work_pos) {
        if (cudaStreamSynchronize(c.s) != cudaSuccess) (void)cudaGetLastError();
        gs_ts_work_free(be, c.work);
        gs_ts_work_free(be, c.work_pos);
    }
    if (st != GS_OK) gs_ts_analysis_free(be, A);
    gs_ts_analysis_done(A);
    return st;
}

gs_status gs_ts_analysis_run(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag,
                             const gs_ts_plan_opts *opts, gs_ts_analysis *A)
{
    return lv_analysis(be, T, NULL, uplo, unit_diag, opts, A);
}

gs_status gs_ts_analysis_run_dev(gs_backend *be, const gs_csr_dev *dT, gs_uplo uplo, bool unit_diag,
                                 const gs_ts_plan_opts *opts, gs_ts_analysis *A)
{
    return lv_analysis(be, NULL, dT, uplo, unit_diag, opts, A);
}

/* The tests' analyses: of the host factor T, or (from_device) of a device copy of it, freed afterwards */
static gs_status lv_analysis_of_copy(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                                     const gs_ts_plan_opts *po, gs_ts_analysis *A)
{
    gs_status st = GS_OK;
    gs_int *drow = NULL, *dcol = NULL;
    double *dval = NULL;
    if (!from_device) return gs_ts_analysis_run(be, T, uplo, unit_diag, po, A);
    GS_TRY(gs_ts_upload_array(be, &drow, T->rowptr, (size_t)T->nrows + 1));
    GS_TRY(gs_ts_upload_array(be, &dcol, T->colind, (size_t)T->nnz));
    GS_TRY(gs_ts_upload_array(be, &dval, T->val, (size_t)T->nnz));
    {
        gs_csr_dev d = {T->nrows, T->ncols, T->nnz, drow, dcol, dval};
        GS_TRY(gs_ts_analysis_run_dev(be, &d, uplo, unit_diag, po, A));
    }
cleanup:
    gs_ts_free_array(be, &drow);
    gs_ts_free_array(be, &dcol);
    gs_ts_free_array(be, &dval);
    return st;
}

gs_status gs_ts_levels_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                           gs_int *nlevels, gs_int *perm, gs_int *level_ptr)
{
    gs_status st = GS_OK;
    gs_ts_analysis A;
    gs_ts_plan_opts po = {16, false, 1, GS_SF_RUN_ELL, false};
    po.poison_plan = true;
    const size_t n = (size_t)T->nrows;
    memset(&A, 0, sizeof A);
    GS_TRY(lv_analysis_of_copy(be, T, uplo, unit_diag, from_device, &po, &A));
    *nlevels = A.D.nlevels;
    if (n > 0) {
        GS_TRY(gs_backend_download(be, perm, A.D.perm, n * sizeof(gs_int)));
        memcpy(level_ptr, A.D.h_level_ptr, ((size_t)A.D.nlevels + 1) * sizeof(gs_int));
    }
cleanup:
    gs_ts_analysis_free(be, &A);
    return st;
}

gs_status gs_ts_wruns_plan_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                               gs_int max_width, gs_sf_runs_plan *P)
{
    gs_status st = GS_OK;
    gs_ts_analysis A;
    gs_ts_plan_opts po = {max_width, true, GS_SF_WRUN_ROWS, GS_SF_RUN_ELL, false};
    po.poison_plan = true;
    const size_t n = (size_t)T->nrows;
    memset(&A, 0, sizeof A);
    memset(P, 0, sizeof *P);
    GS_TRY(lv_analysis_of_copy(be, T, uplo, unit_diag, from_device, &po, &A));
    {
        const gs_ls_dplan *D = &A.D;
        const size_t np = (size_t)D->npos, w = (size_t)D->ell_width, rem = (size_t)D->rem_nnz;
        P->n = D->n;
        P->run_rows = n > 0 ? D->run_rows : GS_SF_WRUN_ROWS;
        P->nruns = D->nunits;
        P->npos = D->npos;
        P->nlevels = D->nlevels;
        P->ell_width = D->ell_width;
        P->rem_nnz = D->rem_nnz;
        P->max_row_length = D->max_row_length;
        P->linked_rows = A.linked_rows;
        GS_TRY(GS_MALLOC(P->level_ptr, (size_t)D->nlevels + 1));
        GS_TRY(GS_MALLOC(P->perm, np ? np : 1));
        GS_TRY(GS_MALLOC(P->ell_col, w * np > 0 ? w * np : 1));
        GS_TRY(GS_MALLOC(P->ell_val, w * np > 0 ? w * np : 1));
        GS_TRY(GS_MALLOC(P->rem_ptr, np + 1));
        GS_TRY(GS_MALLOC(P->rem_col, rem ? rem : 1));
        GS_TRY(GS_MALLOC(P->rem_val, rem ? rem : 1));
        GS_TRY(GS_MALLOC(P->dinv, np ? np : 1));
        memcpy(P->level_ptr, D->h_level_ptr, ((size_t)D->nlevels + 1) * sizeof(gs_int));
        if (n > 0) { /* poisoned first: every element must come from the device */
            memset(P->perm, 0xA5, np * sizeof(gs_int));
            memset(P->ell_col, 0xA5, w * np * sizeof(gs_int));
            memset(P->ell_val, 0xA5, w * np * sizeof(double));
            memset(P->rem_ptr, 0xA5, (np + 1) * sizeof(gs_int));
            memset(P->rem_col, 0xA5, rem * sizeof(gs_int));
            memset(P->rem_val, 0xA5, rem * sizeof(double));
            memset(P->dinv, 0xA5, np * sizeof(double));
            GS_TRY(gs_backend_download(be, P->perm, D->perm, np * sizeof(gs_int)));
            GS_TRY(gs_backend_download(be, P->ell_col, D->ell_col, w * np * sizeof(gs_int)));
            GS_TRY(gs_backend_download(be, P->ell_val, D->ell_val, w * np * sizeof(double)));
            GS_TRY(gs_backend_download(be, P->rem_ptr, D->rem_ptr, (np + 1) * sizeof(gs_int)));
            GS_TRY(gs_backend_download(be, P->rem_col, D->rem_col, rem * sizeof(gs_int)));
            GS_TRY(gs_backend_download(be, P->rem_val, D->rem_val, rem * sizeof(double)));
            GS_TRY(gs_backend_download(be, P->dinv, D->dinv, np * sizeof(double)));
        } else {
            P->rem_ptr[0] = 0;
        }
    }
cleanup:
    if (st != GS_OK) gs_sf_runs_plan_free(P);
    gs_ts_analysis_free(be, &A);
    return st;
}

void gs_ts_analysis_done(gs_ts_analysis *A)
{
    A->t.total = gs_wtime() - A->t0;
    A->t.plan = A->t.total - A->t.upload;
}

void gs_ts_analysis_view(const gs_ts_analysis *A, gs_report *rep, const char *prefix)
{
    const gs_ls_dplan *D = &A->D;
    bool runs = D->run_rows > 1;
    gs_ts_report_double(rep, prefix, "upload_time", A->t.upload);
    gs_ts_report_double(rep, prefix, "staging_alloc_time", A->t.staging_alloc);
    gs_ts_report_int(rep, prefix, "upload_bytes", A->t.upload_bytes);
    gs_ts_report_string(rep, prefix, "upload_path", A->t.staged ? "pinned staging" : "pageable");
    gs_ts_report_double(rep, prefix, "check_time", A->t.check);
    gs_ts_report_double(rep, prefix, "level_time", A->t.levels);
    gs_ts_report_double(rep, prefix, "layout_time", A->t.layout);
    gs_ts_report_double(rep, prefix, "plan_time", A->t.plan);
    gs_ts_report_double(rep, prefix, "analysis_time", A->t.total);
    gs_ts_report_int(rep, prefix, "levels", D->nlevels);
    gs_ts_report_int(rep, prefix, runs ? "max_runs_per_level" : "max_rows_per_level", A->max_level_rows);
    gs_ts_report_double(rep, prefix, runs ? "avg_runs_per_level" : "avg_rows_per_level",
                        D->nlevels ? (double)D->nunits / D->nlevels : 0.0);
    gs_ts_report_int(rep, prefix, runs ? "runs_without_dependencies" : "rows_without_dependencies", A->rows_level0);
    gs_ts_report_int(rep, prefix, "linked_rows", A->linked_rows);
    gs_ts_report_int(rep, prefix, "nnz_offdiag", D->nnz_off);
    gs_ts_report_int(rep, prefix, "max_row_length", D->max_row_length);
    gs_ts_report_int(rep, prefix, "ell_width", D->ell_width);
    gs_ts_report_int(rep, prefix, "remainder_nnz", D->rem_nnz);
    if (runs) {
        gs_ts_report_int(rep, prefix, "run_rows", D->run_rows);
        gs_ts_report_int(rep, prefix, "runs", D->nunits);
    }
}
