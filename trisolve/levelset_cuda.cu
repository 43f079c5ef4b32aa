/* Level-set triangular solve on the GPU, x = T^{-1} b, on the level-set plan built on the GPU by the
 * analysis it shares with the sync-free solver (gs_ts_analysis_run, analysis_cuda.cu), with the
 * columns of the entries given as POSITIONS (rows renumbered level by level).
 *
 * Solve: three launches. A gather xp[p] = b[perm[p]]; ONE persistent kernel that walks the levels of the
 * plan (HEC storage, 1/diagonal; the layout of levelset_ref.c, whose host twin computes the same
 * arithmetic: x_p = (b_p - ELL entries in order - remainder entries in order) * dinv[p]), reading and
 * writing x only by position in xp, where b_p is replaced by x_p once its row is solved; a scatter
 * x[perm[p]] = xp[p]. By position, the rows of a level are consecutive and, in PDE factors, so are the
 * rows they read: the loads and stores of a level are coalesced.
 *   - A level is thin when its rows times the factor's average entries per row are at most
 *     LS_BLOCK_WORK (and it has at most LS_THREADS rows). A run of thin levels (Naumov's chain) is
 *     solved by block 0 alone with __syncthreads between its levels, while the other blocks go ahead to
 *     the grid barrier that follows the chain.
 *   - A wide level is shared by all blocks, consecutive positions per block (a thread per row), and ends
 *     with a software grid barrier (an arrival counter; the grid is launched cooperatively, so every
 *     block is resident and the barrier cannot deadlock). The grid has enough blocks for one row per
 *     thread and at most LS_BLOCK_WORK entries per block in the widest wide level.
 *   - Ahead of the walk, per thread: the column positions of its row two levels ahead are copied into
 *     shared memory (cp.async, double-buffered, up to LS_STAGE_MAX per row), the row's other data (b,
 *     values, 1/diagonal) three levels ahead are prefetched into L2, and the schedule of the next four
 *     levels is held in registers. So a level costs one L2 round trip for the x values and the row's
 *     data, issued together, plus the barrier.
 * Cost on the H100 (docs/notes-trisolve.md section 4.1): ~1.8 us per level on the 3D Poisson factor,
 * ~1.4 us on the 2D one, ~2.8 us on the 27-point one; faster than cuSPARSE's SpSV on the 3D and 2D
 * factors, slower than the sync-free solver everywhere.
 *
 * Analysis = upload of T's CSR + row check, level computation, sort and HEC layout on the GPU
 * (gs_ts_analysis_run; gs_ts_analysis_run_dev for a factor already in device memory) + chains, grid and
 * schedule on the host from the downloaded level pointers (O(levels)).
 *
 * Precision (preconditioner.precision): the plan's values (ELL, remainder, 1/diagonal) are double, or
 * float with "single"; the kernel is instantiated for both value types and widens each value to double
 * where it is used, so b, x and the sums stay double: x_i = (b_i - sum_j (double)l_ij_f x_j) * (double)dinv_f_i. */
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

/* ================================================================ the level-set solver */

#define LS_THREADS 1024 /* threads per block; also the most rows of a level in a single-block chain */
#define LS_STAGE_MAX 16 /* ELL column indices of a row staged in shared memory, two levels ahead */
#define LS_BLOCK_WORK 2048 /* entries per block and level: thinner levels form chains in one block */

/* One level of the schedule, one 16-byte load: positions [p0, p1); single = 1 when the level belongs
 * to a chain that block 0 runs alone; chunk: the rows of each block (consecutive positions; the whole
 * level in a chain, ceil(rows / blocks) at most LS_THREADS in a wide level). */
struct ls_level {
    gs_int p0, p1, single, chunk;
};

/* The device plan and the schedule, passed by value; V: the type of the plan's values. */
template <typename V>
struct ls_dev {
    gs_int n, w, nlevels;
    const ls_level *__restrict__ sched; /* nlevels */
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col;
    const V *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const V *__restrict__ rem_val;
    const V *__restrict__ dinv;
    double *xp;    /* by position: b gathered first (xp[p] = b[perm[p]]), overwritten by x row by row */
    unsigned *bar;                 /* [0] arrivals since the launch began */
    bool has_rem;
};

typedef struct ls_cuda_data {
    gs_ts_analysis A; /* the plan on the device and the analysis times */
    gs_ls_plan P;     /* statistics and chains for view() (host arrays freed after analysis) */
    ls_level *sched;
    unsigned *bar;
    double *xp; /* n: b, then x, by position */
    int grid;  /* blocks of the persistent kernel */
    int stage; /* ELL slots staged per row: 4, 8 or 16 (the template argument K) */
    double time_chains;
} ls_cuda_data;

/* xp[p] = b[perm[p]]: the gather of b, so that a row's data are all indexed by its position, and the
 * scatter x[perm[p]] = xp[p] once every level is solved. The walk reads and writes only positions: the
 * rows of a level are consecutive positions and, in PDE factors, so are the rows they read. */
static __global__ void ls_gather_kernel(gs_int n, const gs_int *__restrict__ perm, const double *__restrict__ b,
                                        double *xp)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p < n) xp[p] = __ldg(b + __ldg(perm + p));
}

static __global__ void ls_scatter_kernel(gs_int n, const gs_int *__restrict__ perm, const double *__restrict__ xp,
                                         double *x)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p < n) x[__ldg(perm + p)] = xp[p];
}

static __device__ __forceinline__ void ls_prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* Asynchronous copies global -> shared (cp.async, sm_80+): 4 bytes, then the group of this level. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
static __device__ __forceinline__ void ls_cp_async4(int *dst, const gs_int *src)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(src) : "memory");
}
static __device__ __forceinline__ void ls_cp_commit(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* every group but the newest is complete (and its data visible to this thread) */
static __device__ __forceinline__ void ls_cp_wait_older(void) { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
#else /* before sm_80: a plain copy (the load is waited for where it is stored) */
static __device__ __forceinline__ void ls_cp_async4(int *dst, const gs_int *src) { *dst = __ldg(src); }
static __device__ __forceinline__ void ls_cp_commit(void) {}
static __device__ __forceinline__ void ls_cp_wait_older(void) {}
#endif

/* This thread's row (position) in a level, -1 for none: block 0's threads in a chain level, every
 * thread of the grid in a wide level (a wide level wider than the grid: its first row). */
static __device__ __forceinline__ gs_int ls_row_of(const ls_level &s)
{
    if (s.single && blockIdx.x != 0) return -1;
    gs_int t = (gs_int)threadIdx.x;
    if (t >= s.chunk) return -1;
    gs_int p = s.p0 + (s.single ? 0 : (gs_int)blockIdx.x * s.chunk) + t;
    return p < s.p1 ? p : -1;
}

static __device__ __forceinline__ ls_level ls_load_level(const ls_level *sched, gs_int l, gs_int nlevels)
{
    int4 v = __ldg((const int4 *)(sched + (l < nlevels ? l : nlevels - 1)));
    ls_level s = {v.x, v.y, v.z, v.w};
    return s;
}

/* Stage the column indices of row p (slots k < min(K, w)) into this thread's column of buffer buf
 * (buf[k * LS_THREADS]); one commit group per call, also without a row. */
template <typename V, int K>
static __device__ __forceinline__ void ls_stage(const ls_dev<V> &H, gs_int p, int *buf)
{
    if (p >= 0) {
#pragma unroll
        for (int k = 0; k < K; k++)
            if (k < H.w) ls_cp_async4(buf + k * LS_THREADS, H.ell_col + (size_t)k * (size_t)H.n + (size_t)p);
    }
    ls_cp_commit();
}

/* Bring the data of row p (a few levels ahead) into L2: all of it is indexed by position. */
template <typename V>
static __device__ __forceinline__ void ls_touch(const ls_dev<V> &H, gs_int p)
{
    ls_prefetch_l2(H.xp + p);
    ls_prefetch_l2(H.dinv + p);
    for (gs_int k = 0; k < H.w; k++) {
        size_t q = (size_t)k * (size_t)H.n + (size_t)p;
        ls_prefetch_l2(H.ell_col + q);
        ls_prefetch_l2(H.ell_val + q);
    }
}

/* A thread's loads ahead, after its row of level l: the column positions of its row of level l + 2
 * (p2) into buf, the shared buffer just read, and the data of its row of level l + 3 (p3) into L2. */
template <typename V, int K>
static __device__ __forceinline__ void ls_ahead(const ls_dev<V> &H, gs_int p2, gs_int p3, int *buf)
{
    ls_stage<V, K>(H, p2, buf);
    if (p3 >= 0) ls_touch(H, p3);
}

/* The ELL slots from k0 (past the staged ones, or all from 0) and the remainder: s -= t_pj x_j in order;
 * x read through L2.
 * Slots are read 4 at a time (independent loads), then applied in order. */
template <typename V>
static __device__ __forceinline__ double ls_tail(const ls_dev<V> &H, gs_int p, gs_int k0, double s, const double *x)
{
    for (; k0 < H.w; k0 += 4) {
        gs_int j[4];
        double v[4], xj[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            size_t q = (size_t)(k0 + u) * (size_t)H.n + (size_t)p;
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
    if (H.has_rem) {
        gs_int q1 = __ldg(H.rem_ptr + p + 1);
        for (gs_int q = __ldg(H.rem_ptr + p); q < q1; q++)
            s -= (double)__ldg(H.rem_val + q) * __ldcg(x + __ldg(H.rem_col + q));
    }
    return s;
}

/* xp[p] = (xp[p] - sum of the ELL entries in order - sum of the remainder in order) * dinv[p], all by
 * position (xp[p] holds b until its row is solved), the first K column positions from this thread's
 * staged column buf. Every load that does not depend on x (values, b, dinv) is issued with the x loads:
 * one L2 round trip for a row of at most K entries. */
template <typename V, int K>
static __device__ __forceinline__ void ls_solve(const ls_dev<V> &H, gs_int p, const int *buf, double *x)
{
    double xv[K];
    V vv[K];
    bool has[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        gs_int c = k < H.w ? buf[k * LS_THREADS] : -1;
        has[k] = c >= 0;
        xv[k] = has[k] ? __ldcg(x + c) : 0.0;
        vv[k] = has[k] ? __ldg(H.ell_val + (size_t)k * (size_t)H.n + (size_t)p) : (V)0;
    }
    double s = __ldcg(x + p); /* b, by the gather kernel before this launch */
    const double d = (double)__ldg(H.dinv + p);
#pragma unroll
    for (int k = 0; k < K; k++)
        if (has[k]) s -= (double)vv[k] * xv[k];
    if ((H.w > K && has[K - 1]) || H.has_rem) s = ls_tail(H, p, has[K - 1] ? K : H.w, s, x);
    x[p] = s * d;
}

/* A row solved without staging (rows beyond one per thread of levels wider than the grid): every ELL
 * slot and the remainder through ls_tail, the same order as ls_solve. */
template <typename V>
static __device__ __forceinline__ void ls_solve_plain(const ls_dev<V> &H, gs_int p, double *x)
{
    x[p] = ls_tail(H, p, 0, __ldcg(x + p), x) * (double)__ldg(H.dinv + p);
}

static __device__ __forceinline__ void ls_fence_acq_rel(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* The software grid barrier in two halves, so that the block's loads for later levels are issued between
 * them; warp 0, whose thread 0 fences and polls, issues its own after the wait, so that the fence does
 * not wait for them. The grid is co-resident (cooperative launch), so spinning cannot deadlock. bar[0]
 * counts arrivals since the launch began: barrier k (from 1) is passed once it reaches k * gridDim.x.
 * Arrive: __syncthreads (the block's x writes happen before), thread 0 fences (release at GPU scope)
 * and adds 1. Wait: thread 0 polls with acquire loads (the x written by every block before it arrived
 * is visible), then __syncthreads. The counter goes back to 0 at the end of the launch (ls_grid_exit). */
static __device__ __forceinline__ void ls_grid_arrive(unsigned *bar)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        ls_fence_acq_rel();
        atomicAdd(bar, 1u);
    }
}

static __device__ __forceinline__ void ls_grid_wait(const unsigned *bar, unsigned target)
{
    if (threadIdx.x == 0) {
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

/* The level walk. Per thread, level l: its row's column indices were staged into shared buffer l mod 2
 * two levels earlier (cp.async), its row data prefetched into L2 three levels earlier; the schedule of
 * levels l .. l+3 is held in registers (s0 .. s3). After solving its row of level l the thread stages
 * its row of level l + 2 and prefetches that of level l + 3, then meets the others: __syncthreads
 * inside a chain (block 0 alone), the grid barrier otherwise. */
template <typename V, int K>
static __global__ void __launch_bounds__(LS_THREADS, 1) ls_fused_kernel(ls_dev<V> H, double *__restrict__ x)
{
    extern __shared__ int ls_smem[]; /* [2][K][LS_THREADS] staged column indices */
    int *buf0 = ls_smem + threadIdx.x, *buf1 = ls_smem + K * LS_THREADS + threadIdx.x;
    unsigned barriers = 0;
    ls_level s0 = ls_load_level(H.sched, 0, H.nlevels), s1 = ls_load_level(H.sched, 1, H.nlevels);
    ls_level s2 = ls_load_level(H.sched, 2, H.nlevels), s3 = ls_load_level(H.sched, 3, H.nlevels);
    gs_int p_cur = ls_row_of(s0), p_next = H.nlevels > 1 ? ls_row_of(s1) : -1;
    ls_stage<V, K>(H, p_cur, buf0);
    ls_stage<V, K>(H, p_next, buf1);
    if (H.nlevels > 2) {
        gs_int p = ls_row_of(s2);
        if (p >= 0) ls_touch(H, p);
    }
    for (gs_int l = 0; l < H.nlevels; l++) {
        int *buf = (l & 1) ? buf1 : buf0;
        ls_cp_wait_older(); /* level l's group (the newest is level l + 1's) */
        if (p_cur >= 0) {
            ls_solve<V, K>(H, p_cur, buf, x);
            gs_int stride = s0.single ? (gs_int)blockDim.x : (gs_int)(gridDim.x * blockDim.x);
            for (gs_int p = p_cur + stride; p < s0.p1; p += stride) ls_solve_plain(H, p, x);
        }
        if (l + 1 == H.nlevels) break;
        const bool chain = s0.single && s1.single, grid_bar = !chain && gridDim.x > 1;
        if (grid_bar) ls_grid_arrive(H.bar);
        /* level l + 2's column indices into the buffer just read, level l + 3's data into L2 */
        gs_int p2 = l + 2 < H.nlevels ? ls_row_of(s2) : -1, p3 = l + 3 < H.nlevels ? ls_row_of(s3) : -1;
        const bool late = grid_bar && threadIdx.x < 32; /* warp 0 (the poller's) loads after the barrier */
        if (!late) ls_ahead<V, K>(H, p2, p3, buf);
        if (grid_bar) {
            barriers++;
            ls_grid_wait(H.bar, barriers * gridDim.x);
        } else if (!chain || blockIdx.x == 0) {
            __syncthreads(); /* the next level is of the same chain, or the grid is one block */
        }
        if (late) ls_ahead<V, K>(H, p2, p3, buf);
        p_cur = p_next;
        p_next = p2;
        s0 = s1;
        s1 = s2;
        s2 = s3;
        s3 = ls_load_level(H.sched, l + 4, H.nlevels);
    }
    ls_grid_exit(H.bar, barriers);
}

static void ls_release(gs_trisolve *ts, ls_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* solves done */
    gs_ts_analysis_free(be, &d->A);
    gs_ts_free_array(be, &d->sched);
    gs_ts_free_array(be, &d->xp);
    gs_ls_plan_free(&d->P);
}

/* ELL slots staged per row: the ELL width rounded up to 4, 8 or 16 (wider: 16, the rest read in the
 * solve), and the level walk's kernel of that K for the plan's value type. */
static int ls_stage_slots(gs_int w) { return w <= 4 ? 4 : w <= 8 ? 8 : LS_STAGE_MAX; }

static const void *ls_kernel_of(bool single, int K)
{
    if (single) return K == 4 ? (const void *)ls_fused_kernel<float, 4>
                       : K == 8 ? (const void *)ls_fused_kernel<float, 8>
                                : (const void *)ls_fused_kernel<float, 16>;
    return K == 4 ? (const void *)ls_fused_kernel<double, 4>
           : K == 8 ? (const void *)ls_fused_kernel<double, 8>
                    : (const void *)ls_fused_kernel<double, 16>;
}

static size_t ls_smem_bytes(int K) { return (size_t)2 * (size_t)K * LS_THREADS * sizeof(int); }

/* The analysis of a factor given on the host (T) or already in device memory (dT, T NULL: a GPU
 * factorization's output, read there without a round trip); the chains and the grid are shared. */
static gs_status ls_cuda_analyse_from(gs_trisolve *ts, const gs_csr *T, const gs_csr_dev *dT)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    ls_level *sched = NULL;
    double t1;

    ls_release(ts, d);
    memset(&d->P, 0, sizeof d->P);
    /* rows renumbered level by level; values in float with preconditioner.precision = "single" */
    gs_ts_plan_opts po = {GS_LS_ELL_MAX_WIDTH, true, 0, 0, ts->prm.single}; /* columns as positions */
    po.level_blocks_per_sm = ts->prm.analysis.level_blocks_per_sm;
    GS_TRY(T ? gs_ts_analysis_run(be, T, ts->uplo, ts->unit_diag, &po, &d->A)
             : gs_ts_analysis_run_dev(be, dT, ts->uplo, ts->unit_diag, &po, &d->A));
    t1 = gs_wtime();

    /* chains on the host from the level pointers, then the grid and the schedule (per level its
     * positions, whether block 0 runs it alone and the rows of each block) */
    {
        const gs_ls_dplan *D = &d->A.D;
        gs_ls_plan *P = &d->P;
        /* a block's work per level: rows x entries per row (the factor's average) */
        double per_row = D->n > 0 ? (double)D->nnz_off / (double)D->n : 0.0;
        if (per_row < 1.0) per_row = 1.0;
        const double work = LS_BLOCK_WORK;
        gs_int chain_rows = (gs_int)(work / per_row);
        if (chain_rows > LS_THREADS) chain_rows = LS_THREADS;
        if (chain_rows < 32) chain_rows = 32;
        P->n = D->n;
        P->nlevels = D->nlevels;
        P->level_ptr = D->h_level_ptr;
        st = gs_ls_plan_chains(P, chain_rows);
        P->level_ptr = NULL;
        GS_TRY(st);
        P->ell_width = D->ell_width;
        P->rem_nnz = D->rem_nnz;
        P->nnz_offdiag = D->nnz_off;
        P->max_row_length = D->max_row_length;
        P->time_levels = d->A.t.levels;

        /* the persistent grid: enough blocks for one row per thread in the widest wide level, and for
         * at most `work` entries per block there; at most the resident blocks */
        gs_int widest_wide = 0;
        for (gs_int c = 0; c < P->nchains; c++)
            if (!P->chain_single[c] && P->chain_max_rows[c] > widest_wide) widest_wide = P->chain_max_rows[c];
        int dev = 0, coop = 0, per_sm = 0;
        d->stage = ls_stage_slots(D->ell_width);
        const void *kernel = ls_kernel_of(D->single, d->stage);
        GS_TRY(GS_CUDA(cudaGetDevice(&dev)));
        GS_TRY(GS_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev)));
        GS_TRY(GS_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)ls_smem_bytes(d->stage))));
        GS_TRY(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, LS_THREADS,
                                                                     ls_smem_bytes(d->stage))));
        long long want = ((long long)widest_wide + LS_THREADS - 1) / LS_THREADS, cap = (long long)d->A.sms * per_sm;
        long long by_work = (long long)ceil((double)widest_wide * per_row / work);
        if (by_work > want) want = by_work;
        if (want < 1) want = 1;
        if (!coop || cap < 1) cap = 1; /* one block needs no grid barrier */
        d->grid = (int)(want < cap ? want : cap);

        GS_TRY(GS_CALLOC(sched, (size_t)P->nlevels + 1));
        for (gs_int c = 0; c < P->nchains; c++)
            for (gs_int l = P->chain_ptr[c]; l < P->chain_ptr[c + 1]; l++) {
                gs_int rows = D->h_level_ptr[l + 1] - D->h_level_ptr[l];
                gs_int chunk = P->chain_single[c] ? rows : (gs_int)((rows + d->grid - 1) / d->grid);
                sched[l].p0 = D->h_level_ptr[l];
                sched[l].p1 = D->h_level_ptr[l + 1];
                sched[l].single = P->chain_single[c];
                sched[l].chunk = chunk < LS_THREADS ? chunk : LS_THREADS;
            }
        GS_TRY(gs_ts_upload_array(be, &d->sched, sched, (size_t)P->nlevels + 1));
        {
            void *p = NULL;
            GS_TRY(gs_backend_alloc(be, &p, (size_t)P->n * sizeof(double)));
            d->xp = (double *)p;
        }
    }
    if (!d->bar) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, 2 * sizeof(unsigned)));
        d->bar = (unsigned *)p;
    }
    GS_TRY(GS_CUDA(cudaMemsetAsync(d->bar, 0, 2 * sizeof(unsigned), s)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    d->time_chains = gs_wtime() - t1;
    gs_ts_analysis_done(&d->A);
cleanup:
    gs_free(&sched);
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
    H.sched = d->sched;
    H.perm = d->A.D.perm;
    H.ell_col = d->A.D.ell_col;
    H.ell_val = ell_val;
    H.rem_ptr = d->A.D.rem_ptr;
    H.rem_col = d->A.D.rem_col;
    H.rem_val = rem_val;
    H.dinv = dinv;
    H.xp = d->xp;
    H.bar = d->bar;
    H.has_rem = d->A.D.rem_nnz > 0;
    if (H.n == 0 || H.nlevels == 0) return GS_OK;
    double *xp = d->xp;
    const void *kernel = ls_kernel_of(sizeof(V) == sizeof(float), d->stage);
    ls_gather_kernel<<<(unsigned)((H.n + 255) / 256), 256, 0, s>>>(H.n, H.perm, b, d->xp);
    GS_CALL(GS_CUDA_LAUNCHED("ls_gather_kernel"));
    void *args[] = {(void *)&H, (void *)&xp};
    if (d->grid > 1)
        GS_CALL(GS_CUDA(cudaLaunchCooperativeKernel(kernel, dim3((unsigned)d->grid), dim3(LS_THREADS), args,
                                                    ls_smem_bytes(d->stage), s)));
    else
        GS_CALL(GS_CUDA(cudaLaunchKernel(kernel, dim3(1), dim3(LS_THREADS), args, ls_smem_bytes(d->stage), s)));
    ls_scatter_kernel<<<(unsigned)((H.n + 255) / 256), 256, 0, s>>>(H.n, H.perm, d->xp, x);
    GS_CALL(GS_CUDA_LAUNCHED("ls_scatter_kernel"));
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
                        "cuda level sets (GPU analysis, HEC with position columns, one persistent kernel: grid "
                        "barriers between wide levels, chains of thin levels in one block, column positions "
                        "staged in shared memory two levels ahead)");
    /* single: the factor's values in float, applied with double accumulation (b, x, sums in double) */
    gs_ts_report_string(rep, prefix, "precision", ts->prm.single ? "single" : "double");
    gs_ts_analysis_view(&d->A, rep, prefix);
    gs_ls_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "graph_kernels", 3); /* kernels per solve: gather of b, level walk, scatter */
    gs_ts_report_int(rep, prefix, "grid_blocks", d->grid);
    gs_ts_report_int(rep, prefix, "block_threads", LS_THREADS);
    gs_ts_report_int(rep, prefix, "staged_slots", d->stage); /* column indices staged per row, 2 levels ahead */
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
