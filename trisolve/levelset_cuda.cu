/* Level-set triangular solve on the GPU, x = T^{-1} b, on the level-set plan built on the GPU by the
 * analysis it shares with the sync-free solver (gs_ts_analysis_run, analysis_cuda.cu).
 *
 * Solve: two launches. A gather bp[p] = b[perm[p]], then ONE persistent kernel that walks the levels of
 * the plan (rows renumbered level by level, HEC storage, 1/diagonal; the layout of levelset_ref.c, whose
 * host twin computes the same arithmetic: x[perm[p]] = (b[perm[p]] - ELL entries in order - remainder
 * entries in order) * dinv[p]).
 *   - a wide level (more than LS_THREADS rows) is shared by all blocks, a thread per row, and ends
 *     with a software grid barrier (an arrival counter; the grid is launched cooperatively, so every
 *     block is resident and the barrier cannot deadlock);
 *   - a run of thin levels (Naumov's chain) is solved by block 0 alone with __syncthreads between its
 *     levels, while the other blocks wait at the grid barrier that follows the chain;
 *   - before each barrier every thread loads the row it will solve in the next level (bp, 1/diagonal
 *     and the first LS_PF ELL entries: none depend on x) and prefetches into L2 the row it will solve
 *     LS_L2_AHEAD levels later, so that a level adds the barrier plus one read of x from L2 to the
 *     solve rather than reads from device memory.
 * Cost: ~4 us per wide level (barrier + x read) and ~1-2 us per chain level on the H100; slower than the
 * sync-free solver everywhere it was measured (docs/notes-trisolve.md).
 *
 * Analysis = upload of T's CSR + row check, level computation, sort and HEC layout on the GPU
 * (gs_ts_analysis_run; gs_ts_analysis_run_dev for a factor already in device memory) + chains on the
 * host from the downloaded level pointers (O(levels)).
 *
 * Precision (preconditioner.precision): the plan's values (ELL, remainder, 1/diagonal) are double, or
 * float with "single"; the kernel is instantiated for both value types and widens each value to double
 * where it is used, so b, x and the sums stay double: x_i = (b_i - sum_j (double)l_ij_f x_j) * (double)dinv_f_i. */
#include <cuda_runtime.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

/* ================================================================ the level-set solver */

#define LS_THREADS 1024 /* threads per block; also the widest level of a single-block chain */
#define LS_PF 8         /* ELL entries of a thread's next row held in registers across a barrier */
#define LS_L2_AHEAD 4   /* levels ahead whose row data a thread prefetches into L2 */

/* The device plan and the per-level schedule, passed by value; V: the type of the plan's values. */
template <typename V>
struct ls_dev {
    gs_int n, w, nlevels;
    const gs_int *__restrict__ level_ptr;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col;
    const V *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const V *__restrict__ rem_val;
    const V *__restrict__ dinv;
    const double *__restrict__ bp;            /* b by position: bp[p] = b[perm[p]] (gathered first) */
    const unsigned char *__restrict__ single; /* per level: 1 = part of a chain run by block 0 */
    unsigned *bar;                            /* [0] arrivals since the launch began */
    bool has_rem;
    int l2_ahead;
};

typedef struct ls_cuda_data {
    gs_ts_analysis A; /* the plan on the device and the analysis times */
    gs_ls_plan P;     /* statistics and chains for view() (host arrays freed after analysis) */
    unsigned char *single;
    unsigned *bar;
    double *bp;
    int grid; /* blocks of the persistent kernel */
    bool cooperative;
    double time_chains;
} ls_cuda_data;

/* bp[p] = b[perm[p]]: the gather of b, so that a row's data are all indexed by its position (no
 * dependent read perm -> b on the critical path of a level). */
static __global__ void ls_gather_kernel(gs_int n, const gs_int *__restrict__ perm, const double *__restrict__ b,
                                        double *bp)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p < n) bp[p] = __ldg(b + __ldg(perm + p));
}

/* A row loaded ahead of its level: everything except the x values it reads (values kept as V). */
template <typename V>
struct ls_row {
    gs_int p;
    double b;
    V d;
    gs_int c[LS_PF];
    V v[LS_PF];
};

template <typename V>
static __device__ __forceinline__ void ls_fetch(const ls_dev<V> &H, gs_int p, ls_row<V> &r)
{
    r.p = p;
    if (p < 0) return;
    r.b = H.bp[p]; /* written by the gather kernel before this launch */
    r.d = __ldg(H.dinv + p);
#pragma unroll
    for (int k = 0; k < LS_PF; k++) {
        r.c[k] = -1;
        r.v[k] = (V)0;
        if (k < H.w) {
            size_t q = (size_t)k * (size_t)H.n + (size_t)p;
            r.c[k] = __ldg(H.ell_col + q);
            r.v[k] = __ldg(H.ell_val + q);
        }
    }
}

static __device__ __forceinline__ void ls_prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* Bring the data of row p (a few levels ahead) into L2: all of it is indexed by position. */
template <typename V>
static __device__ __forceinline__ void ls_touch(const ls_dev<V> &H, gs_int p)
{
    ls_prefetch_l2(H.bp + p);
    ls_prefetch_l2(H.dinv + p);
    ls_prefetch_l2(H.perm + p);
    for (gs_int k = 0; k < H.w; k++) {
        size_t q = (size_t)k * (size_t)H.n + (size_t)p;
        ls_prefetch_l2(H.ell_col + q);
        ls_prefetch_l2(H.ell_val + q);
    }
}

/* x[perm[p]] = (bp[p] - sum of the ELL entries in order - sum of the remainder in order) * dinv[p]; x
 * read through L2 (values written by other SMs before the barrier). ELL slots past LS_PF are read 4 at a
 * time (independent loads), then applied in order. */
template <typename V>
static __device__ __forceinline__ void ls_solve(const ls_dev<V> &H, const ls_row<V> &r, double *x)
{
    double xv[LS_PF];
#pragma unroll
    for (int k = 0; k < LS_PF; k++) xv[k] = r.c[k] >= 0 ? __ldcg(x + r.c[k]) : 0.0;
    double s = r.b;
#pragma unroll
    for (int k = 0; k < LS_PF; k++)
        if (r.c[k] >= 0) s -= (double)r.v[k] * xv[k];
    if (H.w > LS_PF && r.c[LS_PF - 1] >= 0) {
        for (gs_int k0 = LS_PF; k0 < H.w; k0 += 4) {
            gs_int j[4];
            double v[4], xj[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                size_t q = (size_t)(k0 + u) * (size_t)H.n + (size_t)r.p;
                j[u] = k0 + u < H.w ? __ldg(H.ell_col + q) : -1;
                v[u] = k0 + u < H.w ? (double)__ldg(H.ell_val + q) : 0.0;
            }
#pragma unroll
            for (int u = 0; u < 4; u++) xj[u] = j[u] >= 0 ? __ldcg(x + j[u]) : 0.0;
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (j[u] >= 0) s -= v[u] * xj[u];
            if (j[3] < 0) break; /* padding only follows the row's entries */
        }
    }
    if (H.has_rem) {
        gs_int q1 = __ldg(H.rem_ptr + r.p + 1);
        for (gs_int q = __ldg(H.rem_ptr + r.p); q < q1; q++)
            s -= (double)__ldg(H.rem_val + q) * __ldcg(x + __ldg(H.rem_col + q));
    }
    x[__ldg(H.perm + r.p)] = s * (double)r.d;
}

static __device__ __forceinline__ void ls_fence_acq_rel(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* All blocks meet. The grid is co-resident (cooperative launch), so spinning cannot deadlock. bar[0]
 * counts arrivals since the launch began: barrier k (from 0) is passed once it reaches
 * (k + 1) * gridDim.x. Thread 0 of each block: fence (the block's x writes, ordered before it by
 * __syncthreads, are released at GPU scope), arrive, spin with acquire loads. The counter goes back
 * to 0 at the end of the launch (ls_grid_exit). */
static __device__ __forceinline__ void ls_grid_barrier(unsigned *bar, unsigned target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        ls_fence_acq_rel();
        atomicAdd(bar, 1u);
        while (gs_gpu_ld_acquire(bar) < target) {
        }
    }
    __syncthreads();
}

/* The last block to leave resets the arrival counter for the next launch (all blocks pass the same
 * barriers, so the total is known). */
static __device__ __forceinline__ void ls_grid_exit(unsigned *bar, unsigned barriers)
{
    if (threadIdx.x == 0 && gridDim.x > 1) {
        unsigned old = atomicAdd(bar, 1u);
        if (old + 1u == (barriers + 1u) * gridDim.x) bar[0] = 0u;
    }
}

/* The index of this thread's first row in level l (-1: none): block 0's threads in a chain level, every
 * thread of the grid in a wide level. */
template <typename V>
static __device__ __forceinline__ gs_int ls_first_row(const ls_dev<V> &H, gs_int l)
{
    if (H.single[l] && blockIdx.x != 0) return -1;
    gs_int p0 = H.level_ptr[l], p1 = H.level_ptr[l + 1];
    gs_int t = H.single[l] ? (gs_int)threadIdx.x : (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    return t < p1 - p0 ? p0 + t : -1;
}

/* A row solved without the register prefetch (rows beyond one per thread of levels wider than the grid). */
template <typename V>
static __device__ __forceinline__ void ls_solve_plain(const ls_dev<V> &H, gs_int p, double *x)
{
    double s = H.bp[p];
    size_t q = (size_t)p;
    for (gs_int k = 0; k < H.w; k++, q += (size_t)H.n) {
        gs_int j = __ldg(H.ell_col + q);
        if (j < 0) break;
        s -= (double)__ldg(H.ell_val + q) * __ldcg(x + j);
    }
    if (H.has_rem) {
        gs_int q1 = __ldg(H.rem_ptr + p + 1);
        for (gs_int r = __ldg(H.rem_ptr + p); r < q1; r++)
            s -= (double)__ldg(H.rem_val + r) * __ldcg(x + __ldg(H.rem_col + r));
    }
    x[__ldg(H.perm + p)] = s * (double)__ldg(H.dinv + p);
}

template <typename V>
static __global__ void __launch_bounds__(LS_THREADS, 1) ls_fused_kernel(ls_dev<V> H, double *__restrict__ x)
{
    ls_row<V> cur;
    unsigned barriers = 0;
    ls_fetch(H, ls_first_row(H, 0), cur);
    for (gs_int l = 1; l <= H.l2_ahead && l < H.nlevels; l++) {
        gs_int p = ls_first_row(H, l);
        if (p >= 0) ls_touch(H, p);
    }
    for (gs_int l = 0; l < H.nlevels; l++) {
        const bool single = H.single[l] != 0;
        if (cur.p >= 0) ls_solve(H, cur, x);
        if (cur.p >= 0) { /* rows beyond one per thread (levels wider than the block / grid) */
            gs_int stride = single ? (gs_int)blockDim.x : (gs_int)(gridDim.x * blockDim.x);
            gs_int p1 = H.level_ptr[l + 1];
            for (gs_int p = cur.p + stride; p < p1; p += stride) ls_solve_plain(H, p, x);
        }
        if (l + 1 == H.nlevels) break;
        ls_fetch(H, ls_first_row(H, l + 1), cur); /* independent of x: in flight across the barrier */
        if (H.l2_ahead > 0 && l + 1 + H.l2_ahead < H.nlevels) {
            gs_int p = ls_first_row(H, l + 1 + H.l2_ahead);
            if (p >= 0) ls_touch(H, p);
        }
        if (single && H.single[l + 1]) {
            if (blockIdx.x == 0) __syncthreads(); /* the next level belongs to the same chain */
        } else if (gridDim.x > 1) {
            barriers++;
            ls_grid_barrier(H.bar, barriers * gridDim.x);
        } else {
            __syncthreads();
        }
    }
    ls_grid_exit(H.bar, barriers);
}

static void ls_release(gs_trisolve *ts, ls_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* solves done */
    gs_ts_analysis_free(be, &d->A);
    gs_ts_free_array(be, &d->single);
    gs_ts_free_array(be, &d->bp);
    gs_ls_plan_free(&d->P);
}

/* The analysis of a factor given on the host (T) or already in device memory (dT, T NULL: a GPU
 * factorization's output, read there without a round trip); the chains and the grid are shared. */
static gs_status ls_cuda_analyse_from(gs_trisolve *ts, const gs_csr *T, const gs_csr_dev *dT)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    unsigned char *single = NULL;
    double t1;

    ls_release(ts, d);
    memset(&d->P, 0, sizeof d->P);
    /* rows renumbered level by level; values in float with preconditioner.precision = "single" */
    gs_ts_plan_opts po = {GS_LS_ELL_MAX_WIDTH, false, NULL, 0, 0, ts->prm.single};
    GS_TRY(T ? gs_ts_analysis_run(be, T, ts->uplo, ts->unit_diag, &po, &d->A)
             : gs_ts_analysis_run_dev(be, dT, ts->uplo, ts->unit_diag, &po, &d->A));
    t1 = gs_wtime();

    /* chains on the host from the level pointers (the rule of the host plan, chain_rows = LS_THREADS) */
    {
        const gs_ls_dplan *D = &d->A.D;
        gs_ls_plan *P = &d->P;
        P->n = D->n;
        P->nlevels = D->nlevels;
        P->level_ptr = D->h_level_ptr;
        gs_int chain_rows = LS_THREADS;
        st = gs_ls_plan_chains(P, chain_rows);
        P->level_ptr = NULL;
        GS_TRY(st);
        P->ell_width = D->ell_width;
        P->rem_nnz = D->rem_nnz;
        P->nnz_offdiag = D->nnz_off;
        P->max_row_length = D->max_row_length;
        P->time_levels = d->A.t.levels;
        GS_TRY(GS_MALLOC(single, (size_t)P->nlevels + 1));
        for (gs_int c = 0; c < P->nchains; c++)
            for (gs_int l = P->chain_ptr[c]; l < P->chain_ptr[c + 1]; l++) single[l] = P->chain_single[c];
        GS_TRY(gs_ts_upload_array(be, &d->single, single, (size_t)P->nlevels + 1));
        {
            void *p = NULL;
            GS_TRY(gs_backend_alloc(be, &p, (size_t)P->n * sizeof(double)));
            d->bp = (double *)p;
        }

        /* the persistent grid: as many blocks as the widest wide level needs, at most the resident ones */
        gs_int widest_wide = 0;
        for (gs_int c = 0; c < P->nchains; c++)
            if (!P->chain_single[c] && P->chain_max_rows[c] > widest_wide) widest_wide = P->chain_max_rows[c];
        int dev = 0, coop = 0, per_sm = 0;
        GS_TRY(TS_CUDA(cudaGetDevice(&dev)));
        GS_TRY(TS_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev)));
        const void *kernel = D->single ? (const void *)ls_fused_kernel<float> : (const void *)ls_fused_kernel<double>;
        GS_TRY(TS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, LS_THREADS, 0)));
        long long want = ((long long)widest_wide + LS_THREADS - 1) / LS_THREADS, cap = (long long)d->A.sms * per_sm;
        if (want < 1) want = 1;
        if (!coop || cap < 1) cap = 1; /* one block needs no grid barrier */
        d->grid = (int)(want < cap ? want : cap);
        d->cooperative = coop != 0;
    }
    if (!d->bar) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, 2 * sizeof(unsigned)));
        d->bar = (unsigned *)p;
    }
    GS_TRY(TS_CUDA(cudaMemsetAsync(d->bar, 0, 2 * sizeof(unsigned), s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    d->time_chains = gs_wtime() - t1;
    gs_ts_analysis_done(&d->A);
cleanup:
    gs_free(&single);
    if (st != GS_OK) ls_release(ts, d);
    return st;
}

static gs_status ls_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    GS_CALL(ls_cuda_analyse_from(ts, T, NULL));
    return GS_OK;
}

static gs_status ls_cuda_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T)
{
    GS_CALL(ls_cuda_analyse_from(ts, NULL, T));
    return GS_OK;
}

/* The two launches of a solve with the plan's values of type V (ell_val, rem_val, dinv): bp = b by
 * position, then the level walk x[perm[p]] = (bp[p] - sum (double)t_pj x_j) * (double)dinv[p]. */
template <typename V>
static gs_status ls_launch(const ls_cuda_data *d, const V *ell_val, const V *rem_val, const V *dinv, cudaStream_t s,
                           const double *b, double *x)
{
    ls_dev<V> H;
    H.n = d->A.D.n;
    H.w = d->A.D.ell_width;
    H.nlevels = d->A.D.nlevels;
    H.level_ptr = d->A.D.level_ptr;
    H.perm = d->A.D.perm;
    H.ell_col = d->A.D.ell_col;
    H.ell_val = ell_val;
    H.rem_ptr = d->A.D.rem_ptr;
    H.rem_col = d->A.D.rem_col;
    H.rem_val = rem_val;
    H.dinv = dinv;
    H.bp = d->bp;
    H.single = d->single;
    H.bar = d->bar;
    H.has_rem = d->A.D.rem_nnz > 0;
    H.l2_ahead = LS_L2_AHEAD;
    double *xp = x;
    ls_gather_kernel<<<(unsigned)((H.n + 255) / 256), 256, 0, s>>>(H.n, H.perm, b, d->bp);
    GS_CALL(TS_LAUNCHED("ls_gather_kernel"));
    if (d->grid > 1) {
        void *args[] = {(void *)&H, (void *)&xp};
        GS_CALL(TS_CUDA(cudaLaunchCooperativeKernel((const void *)ls_fused_kernel<V>, dim3((unsigned)d->grid),
                                                    dim3(LS_THREADS), args, 0, s)));
    } else {
        ls_fused_kernel<V><<<1, LS_THREADS, 0, s>>>(H, xp);
        GS_CALL(TS_LAUNCHED("ls_fused_kernel"));
    }
    return GS_OK;
}

static gs_status ls_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    const ls_cuda_data *d = (const ls_cuda_data *)ts->data;
    const gs_ls_dplan *D = &d->A.D;
    cudaStream_t s = gs_ts_stream(ts->be);
    if (D->single) GS_CALL(ls_launch<float>(d, D->ell_val_f, D->rem_val_f, D->dinv_f, s, b->data, x->data));
    else GS_CALL(ls_launch<double>(d, D->ell_val, D->rem_val, D->dinv, s, b->data, x->data));
    return GS_OK;
}

static void ls_cuda_destroy(gs_trisolve *ts)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    if (!d) return;
    ls_release(ts, d);
    gs_ts_free_array(ts->be, &d->bar);
    gs_free(&ts->data);
}

static void ls_cuda_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const ls_cuda_data *d = (const ls_cuda_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation",
                        "cuda level sets (GPU analysis, HEC, one persistent kernel: grid barriers between wide "
                        "levels, chains of thin levels in one block)");
    /* single: the factor's values in float, applied with double accumulation (b, x, sums in double) */
    gs_ts_report_string(rep, prefix, "precision", ts->prm.single ? "single" : "double");
    gs_ts_analysis_view(&d->A, rep, prefix);
    gs_ls_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "graph_kernels", 2); /* kernels per solve: gather of b, the level walk */
    gs_ts_report_int(rep, prefix, "grid_blocks", d->grid);
    gs_ts_report_int(rep, prefix, "block_threads", LS_THREADS);
    gs_ts_report_double(rep, prefix, "chains_time", d->time_chains);
}

static const gs_trisolve_ops ls_cuda_ops = {ls_cuda_analyse, ls_cuda_solve, ls_cuda_destroy, ls_cuda_view,
                                            ls_cuda_analyse_dev};

gs_status gs_trisolve_create_levelset_cuda(gs_trisolve *ts)
{
    ls_cuda_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "levelset_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &ls_cuda_ops;
    return GS_OK;
}
