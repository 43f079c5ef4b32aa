/* The GPU analysis shared by the level-order triangular solvers (syncfree, levelset): T's CSR uploaded
 * through a pinned staging buffer, its rows checked on the device, and its level-set plan (levels,
 * rows renumbered level by level, HEC layout, 1/diagonal) built by kernels; trisolve_cuda.h says the
 * steps. Host work is O(1) besides the staging copy (parallel, core/staging_cuda.h) and O(levels) downloads.
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
#include "trisolve/trisolve_cuda.h"

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

/* ================================================================ the plan kernels */

#define LV_THREADS 256 /* units per block of the level kernel (one ticket per block) */
#define LV_HIST GS_LS_ELL_MAX_WIDTH /* the row-length histogram: buckets 0 .. LV_HIST-1 and ">= LV_HIST" */

/* Small results of the row, run, level and layout kernels, downloaded after each. */
struct lv_stats {
    unsigned long long ticket;   /* next block rank of the level kernel */
    unsigned long long long_sum; /* sum of the lengths of rows with at least LV_HIST entries */
    unsigned long long linked;   /* rows reading the row before them in dependency order */
    int max_level, max_len;
    int nunits;        /* runs (or rows) of the schedule */
    int bad_row;       /* smallest row failing the structural check; n when none */
    int bad_value_row; /* smallest row with a zero or non-finite diagonal; n when none */
    int hist[LV_HIST + 1];
};

static __global__ void lv_stats_init_kernel(lv_stats *S, gs_int n)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    S->ticket = 0;
    S->long_sum = 0;
    S->linked = 0;
    S->max_level = 0;
    S->max_len = 0;
    S->nunits = n;
    S->bad_row = n;
    S->bad_value_row = n;
    for (int k = 0; k <= LV_HIST; k++) S->hist[k] = 0;
}

struct lv_rows_args {
    gs_int n, nnz;
    bool unit;
    gs_int near; /* > 0: the strict link of warp runs: no other entry less than this many rows back */
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    gs_int *level; /* set to -1 (unknown) */
    gs_int *len;   /* off-diagonal entries of each row */
    gs_int *idx;   /* i: the values of the sort */
    gs_int *key;   /* by dependency index t: -1 when row t reads row t-1, else t (chain starts) */
    lv_stats *stats;
};

/* One thread per row i (dependency index t = i for lower, n-1-i for upper). The row check of
 * gs_ts_check_rows: a row is faulty when any of the conditions holds, so their order does not matter
 * here: row pointers inside 0 .. nnz and increasing, columns inside 0 .. n-1, strictly increasing, on
 * the factor's side, a diagonal entry present exactly when the factor is not unit. The smallest faulty
 * row is kept (atomicMin). Also: the off-diagonal length, its histogram, whether the row reads its
 * predecessor in dependency order (i-1 for lower, i+1 for upper: the link of a run; with A.near > 0 the
 * strict link of warp runs: and no other entry has a dependency index within A.near of the row's). */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_rows_kernel(lv_rows_args A)
{
    __shared__ unsigned long long s_long_sum, s_linked;
    __shared__ int s_hist[LV_HIST + 1];
    __shared__ int s_max_len, s_bad;
    const int tid = (int)threadIdx.x;
    if (tid <= LV_HIST) s_hist[tid] = 0;
    if (tid == 0) {
        s_long_sum = 0;
        s_linked = 0;
        s_max_len = 0;
        s_bad = INT_MAX;
    }
    __syncthreads();
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < A.n) {
        const gs_int t = LOWER ? i : A.n - 1 - i, pred = LOWER ? i - 1 : i + 1;
        gs_int a = A.rowptr[i], e = A.rowptr[i + 1], len = 0;
        bool bad = a < 0 || e < a || e > A.nnz, linked = false, near = false;
        if (!bad) {
            bool has_diag = false;
            gs_int prev = 0;
            for (gs_int k = a; k < e; k++) {
                gs_int j = A.col[k];
                if (j < 0 || j >= A.n || (k > a && j <= prev) || (LOWER ? j > i : j < i)) bad = true;
                if (j == i) has_diag = true;
                else len++;
                if (t > 0 && j == pred) linked = true;
                else if (j != i && t - (LOWER ? j : A.n - 1 - j) < A.near) near = true;
                prev = j;
            }
            if (has_diag == A.unit) bad = true; /* a unit factor stores no diagonal, any other one does */
            if (near) linked = false;
        }
        if (bad) atomicMin(&s_bad, (int)i);
        A.len[i] = len;
        A.idx[i] = i;
        A.level[i] = -1;
        A.key[t] = linked ? -1 : t;
        atomicAdd(&s_hist[len < LV_HIST ? len : LV_HIST], 1);
        if (len >= LV_HIST) atomicAdd(&s_long_sum, (unsigned long long)len);
        if (linked) atomicAdd(&s_linked, 1ULL);
        atomicMax(&s_max_len, len);
    }
    __syncthreads();
    if (tid <= LV_HIST && s_hist[tid]) atomicAdd(&A.stats->hist[tid], s_hist[tid]);
    if (tid == 0) {
        if (s_long_sum) atomicAdd(&A.stats->long_sum, s_long_sum);
        if (s_linked) atomicAdd(&A.stats->linked, s_linked);
        atomicMax(&A.stats->max_len, s_max_len);
        if (s_bad != INT_MAX) atomicMin(&A.stats->bad_row, s_bad);
    }
}

/* chain_start(t) = max over t' <= t of key(t'): the dependency index where t's chain of links begins */
struct lv_max_op {
    __device__ __forceinline__ gs_int operator()(const gs_int &a, const gs_int &b) const { return a > b ? a : b; }
};

/* flag(t) = 1 when row t starts a run: its chain starts there, or the run before it is full. */
static __global__ void lv_run_flags_kernel(gs_int n, gs_int run_rows, const gs_int *__restrict__ chain_start,
                                           gs_int *flag)
{
    gs_int t = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t < n) flag[t] = (t - chain_start[t]) % run_rows == 0 ? 1 : 0;
}

/* run_first[run] = its first dependency index (rid = exclusive sum of the flags); run_first[nruns] = n. */
static __global__ void lv_run_first_kernel(gs_int n, const gs_int *__restrict__ flag, const gs_int *__restrict__ rid,
                                           gs_int *run_first, lv_stats *stats)
{
    gs_int t = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t >= n) return;
    if (flag[t]) run_first[rid[t]] = t;
    if (t == n - 1) {
        gs_int nruns = rid[t] + flag[t];
        run_first[nruns] = n;
        stats->nunits = nruns;
    }
}

/* The known prefix of up to 4 polled entries (in[k]: entry k exists; got[k]: its level, -2 = nothing to
 * wait for, -1 = not yet known): how many are consumed, and *lv = max(*lv, level + 1) over them. */
static __device__ __forceinline__ int lv_known_prefix(const gs_int got[4], const bool in[4], gs_int *lv)
{
    int c = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (c != k || !in[k] || got[k] == -1) continue;
        if (got[k] >= 0 && got[k] + 1 > *lv) *lv = got[k] + 1;
        c++;
    }
    return c;
}

struct lv_level_args {
    gs_int n, nunits;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const gs_int *__restrict__ run_first; /* NULL: every unit is one row */
    gs_int *level;                        /* by row: -1 until its unit's level is known */
    gs_int *unit_level;                   /* by unit (runs only; NULL for rows) */
    lv_stats *stats;
};

/* Runs as units: level(run) = 0 without dependencies outside the run, else 1 + max level(j) over them (a
 * run: dependency indices run_first[u] .. run_first[u+1]-1, at most 32 consecutive rows whose entries are
 * one contiguous range of the CSR). A warp per run, lane k holding its k-th row; a block of LV_THREADS / 32
 * runs takes the next rank by ticket; run u holds dependency indices below those of run u+1, so every
 * dependency belongs to a run of a smaller rank, of a warp that runs or has finished: the run of smallest
 * unknown level can always finish. Each lane loops until its row is through: in each round it reads the
 * levels of up to 4 entries from its cursor and consumes the known prefix, oldest dependency first (lower:
 * from the row's first column; upper: from its last, so that a cursor stuck on the newest dependency does
 * not then read the older ones a round trip at a time); the warp's rounds end together (__all_sync), then
 * the run's level is the maximum over its lanes. The rows passed the check, but entries outside the
 * factor's side are skipped anyway. */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_run_levels_kernel(lv_level_args A)
{
    __shared__ unsigned long long s_ticket;
    __shared__ int s_max_level;
    const int tid = (int)threadIdx.x, lane = tid & 31;
    if (tid == 0) {
        s_ticket = atomicAdd(&A.stats->ticket, 1ULL);
        s_max_level = 0;
    }
    __syncthreads();
    const long long u = (long long)s_ticket * (LV_THREADS / 32) + (tid >> 5);
    const bool run = u < (long long)A.nunits;
    gs_int lo = 0, hi = -1, i = 0, left = 0, q = 0; /* left: entries of the row not yet consumed */
    if (run) {
        const gs_int t0 = A.run_first[u], t1 = A.run_first[u + 1];
        lo = LOWER ? t0 : A.n - t1; /* the run's rows lo .. hi */
        hi = LOWER ? t1 - 1 : A.n - 1 - t0;
        if (lane < t1 - t0) {
            i = LOWER ? t0 + lane : A.n - 1 - (t0 + lane);
            const gs_int a = A.rowptr[i], e = A.rowptr[i + 1];
            left = e - a;
            q = LOWER ? a : e - 1; /* the cursor: forward for lower, backward for upper */
        }
    }
    const bool active = run && lane < hi - lo + 1;
    gs_int lv = 0;
    bool done = !active;
    for (;;) {
        if (!done) {
            gs_int got[4];
            bool in[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                in[k] = k < left;
                gs_int j = in[k] ? A.col[LOWER ? q + k : q - k] : 0;
                bool dep = LOWER ? (j >= 0 && j < lo) : (j > hi && j < A.n); /* outside the run */
                got[k] = (in[k] && dep) ? gs_gpu_ld_relaxed(A.level + j) : -2;
            }
            const int c = lv_known_prefix(got, in, &lv);
            left -= c;
            q += LOWER ? c : -c;
            if (left <= 0) done = true;
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const gs_int o = __shfl_xor_sync(0xffffffffu, lv, off);
        if (o > lv) lv = o;
    }
    if (active) gs_gpu_st_relaxed(A.level + i, lv);
    if (run && lane == 0) {
        A.unit_level[u] = lv;
        atomicMax(&s_max_level, lv);
    }
    __syncthreads();
    if (tid == 0) atomicMax(&A.stats->max_level, s_max_level);
}

/* Persistent blocks of the warp level kernel per multiprocessor (at most): polling warps load L2, and
 * fewer of them finish sooner. H100, level_time ms of the level order from device factors
 * (`bench_trisolve --gen G --n N --device-factors --types syncfree --reps 50 --no-jacobi --param
 * analysis.level_blocks_per_sm=b --param syncfree.schedule=levels`), b = 3 / 4 / 6 / 8, one factor:
 * poisson3d 100^3 0.62 / 0.55 / 0.53 / 0.52 (the other 0.65 / 0.57 / 0.59 / 0.59), laplace27 64^3 0.45 /
 * 0.49 / 0.54 / 0.54, poisson2d 1024^2 0.87 / 0.92 / 1.02 / 1.02: 4 is the best compromise. Neither a 500 ns back-off after a fruitless poll nor passing
 * the levels of the block's earlier warps through shared memory is faster (docs/notes-trisolve.md section
 * 3.3). */
#define LV_WARP_BLOCKS_PER_SM 4

/* One ticket's rows of lv_levels_warp_kernel: dependency index u for this thread (see below). */
template <bool LOWER>
static __device__ __forceinline__ void lv_warp_rows(const lv_level_args &A, const long long u, int *s_max_level)
{
    const int lane = (int)(threadIdx.x & 31u);
    const long long w0 = u - lane;                              /* the warp's first one */
    const bool active = u < (long long)A.n;
    const gs_int n = A.n;
    /* a row j is inside the warp when its dependency index (j, or n-1-j for upper) is at least w0 */
    const gs_int i = active ? (LOWER ? (gs_int)u : n - 1 - (gs_int)u) : 0;
    const gs_int pred = LOWER ? i - 1 : i + 1;
    gs_int q0 = 0, len = 0, pos = 0, ka = -1, kb = -1; /* [ka, kb): the entries inside the warp other than pred */
    if (active) {
        q0 = A.rowptr[i];
        len = A.rowptr[i + 1] - q0;
    }
    gs_int ext = 0;
    bool link = false, ext_done = !active, published = !active;
    int lv = 0, max_lv = 0;
    gs_int pa[4];               /* the window's dependency indices to poll (-1: none) */
    bool in[4], window = false; /* pa and in hold the entries pos .. pos+3 */
    bool first = true;
    for (;;) {
        bool newly = false; /* this lane's external entries were all read in this round */
        /* 1. external dependencies */
        if (!ext_done) {
            gs_int got[4];
            if (!window) {
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    /* entries in dependency order, the oldest first: lower from the row's start, upper from
                     * its end (an upper row's nearest columns are the rows solved last) */
                    in[k] = pos + k < len;
                    const gs_int e = LOWER ? q0 + pos + k : q0 + len - 1 - pos - k;
                    gs_int j = in[k] ? A.col[e] : 0;
                    bool dep = LOWER ? (j >= 0 && j < i) : (j > i && j < n);
                    bool inside = dep && (long long)(LOWER ? j : n - 1 - j) >= w0;
                    pa[k] = -1; /* not a dependency, or one inside the warp (step 2) */
                    if (in[k] && inside) {
                        if (j == pred) link = true;
                        else {
                            if (ka < 0 || e < ka) ka = e;
                            if (e + 1 > kb) kb = e + 1;
                        }
                    } else if (in[k] && dep) {
                        pa[k] = LOWER ? j : n - 1 - j;
                    }
                }
                window = true;
            }
#pragma unroll
            for (int k = 0; k < 4; k++) got[k] = pa[k] >= 0 ? gs_gpu_ld_relaxed(A.level + pa[k]) : -2;
            const int c = lv_known_prefix(got, in, &ext);
            pos += c;
            if (c > 0) window = false; /* the next round reads the entries from the new cursor */
            if (pos >= len) {
                ext_done = true;
                newly = true;
            }
        }
        /* the levels inside the warp depend only on which lanes are through their external entries (and on
         * those lanes' ext), so a round in which no lane got through changes nothing: poll again */
        if (!first && !__any_sync(0xffffffffu, newly)) continue;
        first = false;

        /* 2. inside the warp (the link flags and ranges are complete once ext_done: until then the lane
         *    is not known and its level is not used by a known lane) */
        const unsigned heads = __ballot_sync(0xffffffffu, !link); /* lane 0 is a head: its pred is outside */
        const int hd = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));
        const bool other = ka >= 0;
        int span = other ? kb - ka : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            int o = __shfl_xor_sync(0xffffffffu, span, d);
            span = o > span ? o : span;
        }
        lv = ext;
        int known = ext_done ? 1 : 0;
        for (;;) {
            int a = lv - lane, kn = known;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                int oa = __shfl_up_sync(0xffffffffu, a, d), ok = __shfl_up_sync(0xffffffffu, kn, d);
                if (lane - d >= hd) {
                    if (oa > a) a = oa;
                    kn &= ok;
                }
            }
            lv = a + lane;
            known = kn;
            if (span == 0) break;
            bool changed = false;
            for (int k = 0; k < span; k++) {
                int src = lane;
                if (other && ka + k < kb) {
                    gs_int j = A.col[ka + k];
                    bool dep = LOWER ? (j >= 0 && j < i) : (j > i && j < n);
                    if (dep && j != pred) {
                        long long tj = LOWER ? j : n - 1 - j;
                        if (tj >= w0) src = (int)(tj - w0);
                    }
                }
                int v = __shfl_sync(0xffffffffu, lv, src), vk = __shfl_sync(0xffffffffu, known, src);
                if (src != lane) {
                    if (v + 1 > lv) {
                        lv = v + 1;
                        changed = true;
                    }
                    if (known && !vk) {
                        known = 0;
                        changed = true;
                    }
                }
            }
            if (!__any_sync(0xffffffffu, changed)) break;
        }

        /* 3. publish */
        if (!published && known) {
            gs_gpu_st_relaxed(A.level + u, lv);
            max_lv = lv;
            published = true;
        }
        if (__all_sync(0xffffffffu, published)) break;
    }
    if (active) atomicMax(s_max_level, max_lv);
}


/* Rows as units (no runs): the same levels, with the dependencies inside a warp passed by shuffles. The
 * 32 lanes of a warp hold 32 consecutive dependency indices, so a dependency on a row of the same warp (on
 * a PDE factor in natural order: the row before) costs a few shuffles instead of a round trip through L2
 * per link of the chain. The warp works in rounds:
 *   1. each lane not yet through its row polls the levels of its dependencies OUTSIDE the warp as
 *      lv_run_levels_kernel does (4 entries a round from a cursor, the known prefix consumed), in
 *      dependency order, oldest first (an upper row from its last column: its first columns are the rows
 *      solved last, and a cursor stuck on them would read the rest one round trip at a time); they belong to
 *      earlier warps (of this block, running, or of blocks with smaller tickets), so the warp of smallest
 *      unknown rank always progresses. The window's dependency indices stay in registers until part of
 *      it is known (the columns are read again only when the cursor moves);
 *   2. inside the warp, for every lane: level = max(external, 1 + level of each dependency in the warp),
 *      known = all its external entries read and every dependency in the warp known. The link to the
 *      previous lane is a segmented scan over the runs of linked lanes (5 steps; max of level - lane, AND
 *      of known); other dependencies in the warp (a contiguous range of the lane's sorted columns, at most
 *      31) take rounds of shuffles until nothing changes. Started from known = "external entries read"
 *      and only ever lowered, this converges to the exact answer on a DAG (at most 32 rounds);
 *   3. lanes that became known publish their level.
 * Steps 2 and 3 change nothing in a round in which no lane got through its external entries, so such a
 * round goes straight back to polling. Most rounds are such rounds, and with ~1000 polling threads per SM
 * their instructions are what a hop costs: with the skip and the kept window the kernel takes, H100, level
 * order, device factors, ms for the two factors, poisson3d 100^3 0.55 / 0.57, laplace27 64^3 0.49 / 0.51,
 * poisson2d 1024^2 0.92 / 0.94, against 0.70 / 0.80, 0.60 / 0.73 and 1.43 / 1.62 without them
 * (docs/notes-trisolve.md section 3.3).
 * The levels are kept by dependency index here (A.level[t], t = i for lower, n-1-i for upper), so that
 * lower and upper factors poll and publish in the same address order (by row index, the upper factors'
 * level kernels take 2-20x longer than the lower ones', erratically, on the H100); lv_reverse_kernel
 * gives them by row. Lanes publish as soon as they are known, not when the whole warp is: a warp that
 * spans the end of one grid line and the start of the next must not chain the two (3D 100^3: 313 warps
 * per plane would otherwise form one chain through all planes, 16-22 ms instead of ~1). A persistent grid of
 * LV_WARP_BLOCKS_PER_SM blocks per SM takes the tickets (a block finishes its ticket's rows before it takes
 * the next; tickets are taken in order, so every dependency is in a running or finished ticket). */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_levels_warp_kernel(lv_level_args A)
{
    __shared__ unsigned long long s_ticket;
    __shared__ int s_max_level;
    const int tid = (int)threadIdx.x;
    if (tid == 0) s_max_level = 0;
    for (;;) { /* a persistent block: one ticket of LV_THREADS rows after the other */
        __syncthreads(); /* the previous ticket's rows are done with s_ticket */
        if (tid == 0) s_ticket = atomicAdd(&A.stats->ticket, 1ULL);
        __syncthreads();
        if (s_ticket * LV_THREADS >= (unsigned long long)A.n) break;
        lv_warp_rows<LOWER>(A, (long long)s_ticket * LV_THREADS + tid, &s_max_level);
    }
    __syncthreads();
    if (tid == 0) atomicMax(&A.stats->max_level, s_max_level);
}

/* level[i] = level_t[n-1-i]: an upper factor's levels by row from the warp kernel's by dependency index */
static __global__ void lv_reverse_kernel(gs_int n, const gs_int *__restrict__ level_t, gs_int *__restrict__ level)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) level[i] = level_t[n - 1 - i];
}

struct lv_pos_args {
    gs_int n, nunits, npos, nlevels, run_rows, w;
    bool lower, warp; /* warp: warp runs' positions */
    const gs_int *__restrict__ keys;      /* sorted unit levels */
    const gs_int *__restrict__ units;     /* sorted units: rows (run_rows = 1) or run indices */
    const gs_int *__restrict__ run_first; /* runs only */
    const gs_int *__restrict__ len;
    gs_int *level_ptr, *perm, *pos_of, *remlen;
};

/* After the sort, one thread per unit position rp: level_ptr (first unit position of each level); the
 * positions of the unit's rows, p = k * nunits + rp for its k-th row (p = rp for rows; warp runs:
 * p = rp * run_rows + k), perm and the inverse pos_of; positions past a run's end are holes (perm -1);
 * the remainder length of each position (remlen[npos] = 0 for the exclusive scan). */
static __global__ void lv_positions_kernel(lv_pos_args A)
{
    gs_int rp = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (rp >= A.nunits) return;
    gs_int lv = A.keys[rp], prev = rp > 0 ? A.keys[rp - 1] : -1;
    for (gs_int l = prev + 1; l <= lv; l++) A.level_ptr[l] = rp;
    if (rp == A.nunits - 1) {
        for (gs_int l = lv + 1; l <= A.nlevels; l++) A.level_ptr[l] = A.nunits;
        A.remlen[A.npos] = 0;
    }
    gs_int u = A.units[rp];
    gs_int t0 = A.run_first ? A.run_first[u] : 0, t1 = A.run_first ? A.run_first[u + 1] : 1;
    for (gs_int k = 0; k < A.run_rows; k++) {
        gs_int p = A.warp ? rp * A.run_rows + k : k * A.nunits + rp;
        if (t0 + k < t1) {
            gs_int i = !A.run_first ? u : (A.lower ? t0 + k : A.n - 1 - (t0 + k));
            gs_int extra = A.len[i] - A.w;
            A.perm[p] = i;
            A.pos_of[i] = p;
            A.remlen[p] = extra > 0 ? extra : 0;
        } else {
            A.perm[p] = -1;
            A.remlen[p] = 0;
        }
    }
}

template <typename V>
struct lv_layout_args {
    gs_int npos, w;
    bool position_cols, has_rem, unit;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const double *__restrict__ val;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ pos_of;
    const gs_int *__restrict__ rem_ptr;
    gs_int *ell_col, *rem_col;
    V *ell_val, *rem_val, *dinv; /* double, or float for a single-precision plan */
    lv_stats *stats;
};

/* One thread per position p: the off-diagonal entries of row i = perm[p] in order, the first w in the
 * ELL slots k*npos + p (padding -1 / 0 after them), the rest in the remainder; dinv[p] = 1 / t_ii (1 for
 * a unit factor and for holes), and the smallest row whose diagonal is zero or not finite (the value
 * part of the check; the rows passed the structural part, so a non-unit row has exactly one diagonal
 * entry). With V = float the values are rounded once here: (float)t_ij and (float)(1 / t_ii). */
template <typename V>
static __global__ void lv_layout_kernel(lv_layout_args<V> A)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= A.npos) return;
    gs_int i = A.perm[p], k = 0, r = A.has_rem ? A.rem_ptr[p] : 0;
    size_t s = (size_t)p;
    double diag = 1.0;
    if (i >= 0)
        for (gs_int q = A.rowptr[i]; q < A.rowptr[i + 1]; q++) {
            gs_int j = A.col[q];
            if (j == i) {
                diag = A.val[q];
                continue;
            }
            gs_int c = A.position_cols ? A.pos_of[j] : j;
            if (k < A.w) {
                A.ell_col[s] = c;
                A.ell_val[s] = (V)A.val[q];
                s += (size_t)A.npos;
            } else {
                A.rem_col[r] = c;
                A.rem_val[r] = (V)A.val[q];
                r++;
            }
            k++;
        }
    for (; k < A.w; k++, s += (size_t)A.npos) {
        A.ell_col[s] = -1;
        A.ell_val[s] = (V)0;
    }
    if (A.unit || i < 0) {
        A.dinv[p] = (V)1;
    } else {
        A.dinv[p] = (V)(1.0 / diag);
        if (diag == 0.0 || !isfinite(diag)) atomicMin(&A.stats->bad_value_row, (int)i);
    }
}

/* The arguments of a with the values written in type V to ell_val, rem_val and dinv. */
template <typename V>
static lv_layout_args<V> lv_layout_in(const lv_layout_args<double> &a, V *ell_val, V *rem_val, V *dinv)
{
    lv_layout_args<V> b;
    b.npos = a.npos;
    b.w = a.w;
    b.position_cols = a.position_cols;
    b.has_rem = a.has_rem;
    b.unit = a.unit;
    b.rowptr = a.rowptr;
    b.col = a.col;
    b.val = a.val;
    b.perm = a.perm;
    b.pos_of = a.pos_of;
    b.rem_ptr = a.rem_ptr;
    b.ell_col = a.ell_col;
    b.rem_col = a.rem_col;
    b.ell_val = ell_val;
    b.rem_val = rem_val;
    b.dinv = dinv;
    b.stats = a.stats;
    return b;
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

/* The analysis of T on the host (dT NULL) or of dT in device memory (T NULL). */
static gs_status lv_analysis(gs_backend *be, const gs_csr *T, const gs_csr_dev *dT, gs_uplo uplo, bool unit_diag,
                             const gs_ts_plan_opts *opts, gs_ts_analysis *A)
{
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be), vs = NULL;
    cudaEvent_t values_in = NULL;
    void *work = NULL, *work_pos = NULL; /* work_pos: warp runs' remlen, sized once the runs are counted */
    gs_stage U;
    lv_stats hs;
    gs_ls_dplan *D = &A->D;
    const gs_int n = T ? T->nrows : dT->nrows, nnz = T ? T->nnz : dT->nnz;
    const size_t nn = (size_t)n, nz = (size_t)nnz;
    const gs_int forced = opts->given_level ? 1 : opts->forced_run_rows;
    const size_t max_run_rows = forced == GS_SF_WRUN_ROWS ? GS_SF_WRUN_ROWS : forced == GS_SF_RUN_ROWS ? GS_SF_RUN_ROWS : 1;
    int dev = 0;

    memset(A, 0, sizeof *A);
    memset(&U, 0, sizeof U);
    memset(&hs, 0, sizeof hs);
    A->t0 = gs_wtime();
    if (opts->max_width < 1 || opts->max_width > GS_LS_ELL_MAX_WIDTH || opts->run_max_width < 0 ||
        opts->run_max_width > GS_LS_ELL_MAX_WIDTH)
        return GS_ERROR(GS_ERR_INTERNAL, "level-set plan: ELL width limits %d, %d outside 1..%d", (int)opts->max_width,
                        (int)opts->run_max_width, GS_LS_ELL_MAX_WIDTH);
    D->n = D->nunits = D->npos = n;
    D->run_rows = 1;
    D->max_width = opts->max_width;
    D->position_cols = opts->position_cols;
    D->single = opts->single;
    GS_TRY(GS_CUDA(cudaGetDevice(&dev)));
    GS_TRY(GS_CUDA(cudaDeviceGetAttribute(&A->sms, cudaDevAttrMultiProcessorCount, dev)));
    GS_TRY(GS_MALLOC(D->h_level_ptr, 1));
    D->h_level_ptr[0] = 0;
    if (n == 0) { /* nothing to upload or check: an empty plan */
        GS_TRY(gs_backend_cuda_work_alloc(be, &D->arena, 256, "triangular-solve plan"));
        D->level_ptr = D->perm = D->rem_ptr = (gs_int *)D->arena;
        GS_TRY(GS_CUDA(cudaMemsetAsync(D->arena, 0, 256, s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        goto cleanup;
    }

    {
        /* work space: T's CSR, per-row work arrays, the run arrays, the sort output and CUB's workspace */
        size_t sort_bytes = 0, scan_bytes = 0, max_bytes = 0, flag_bytes = 0;
        const size_t npos_max = max_run_rows * nn;
        GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const unsigned *)NULL, (unsigned *)NULL,
                                                        (const gs_int *)NULL, (gs_int *)NULL, (int)n, 0, 32, s)));
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                     (int)(npos_max < (size_t)INT_MAX ? npos_max + 1 : INT_MAX), s)));
        if (max_run_rows > 1) {
            GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(NULL, max_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                          lv_max_op(), (int)n, s)));
            GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, flag_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                         (int)n, s)));
        }
        size_t cub_bytes = sort_bytes;
        if (scan_bytes > cub_bytes) cub_bytes = scan_bytes;
        if (max_bytes > cub_bytes) cub_bytes = max_bytes;
        if (flag_bytes > cub_bytes) cub_bytes = flag_bytes;
        lv_work W;
        const size_t copy_nz = T ? (nz ? nz : 1) : 0; /* a host T is copied in; a device T is read in place */
        const size_t remlen_n = max_run_rows == GS_SF_WRUN_ROWS ? 0 : npos_max; /* warp runs: later */
        GS_TRY(gs_ts_work_alloc(be, &work, lv_work_carve(NULL, nn, copy_nz, max_run_rows > 1, remlen_n, cub_bytes, &W)));
        lv_work_carve((char *)work, nn, copy_nz, max_run_rows > 1, remlen_n, cub_bytes, &W);
        const gs_int *rowptr = T ? W.rowptr : dT->rowptr, *col = T ? W.col : dT->colind;
        const double *val = T ? W.val : dT->val;
        const unsigned rblocks = (unsigned)((nn + LV_THREADS - 1) / LV_THREADS);

        /* 1. the pattern; the row pass on it: check, lengths, links */
        lv_stats_init_kernel<<<1, 32, 0, s>>>(W.stats, n);
        GS_TRY(GS_CUDA_LAUNCHED("lv_stats_init_kernel"));
        if (T) {
            GS_TRY(gs_stage_begin(&U, (nn + 1) * sizeof(gs_int) + nz * (sizeof(gs_int) + sizeof(double))));
            A->t.staging_alloc = U.alloc_time;
            GS_TRY(gs_stage_copy(&U, W.rowptr, T->rowptr, (nn + 1) * sizeof(gs_int), s));
            GS_TRY(gs_stage_copy(&U, W.col, T->colind, nz * sizeof(gs_int), s));
        } /* a device T: read where it is (the caller keeps it until the analysis returns) */
        double t_check = gs_wtime();
        A->t.upload = t_check - A->t0; /* the pattern's part */
        lv_rows_args ra;
        ra.n = n;
        ra.nnz = nnz;
        ra.unit = unit_diag;
        ra.near = forced == GS_SF_RUN_ROWS ? 0 : GS_SF_WRUN_ROWS; /* the strict link unless runs are forced */
        ra.rowptr = rowptr;
        ra.col = col;
        ra.level = W.level;
        ra.len = W.len;
        ra.idx = W.idx;
        ra.key = W.key;
        ra.stats = W.stats;
        if (uplo == GS_LOWER) lv_rows_kernel<true><<<rblocks, LV_THREADS, 0, s>>>(ra);
        else lv_rows_kernel<false><<<rblocks, LV_THREADS, 0, s>>>(ra);
        GS_TRY(GS_CUDA_LAUNCHED("lv_rows_kernel"));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&hs, W.stats, sizeof hs, cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        if (hs.bad_row < n) GS_TRY(lv_report_fault(be, T, dT, uplo, unit_diag, hs.bad_row, "structure"));

        /* 2. the schedule (rows unless runs are forced): rows, or runs of up to run_rows linked rows (chain
         * starts by a max-scan) */
        gs_ts_row_stats rs;
        rs.n = n;
        rs.max_row_length = hs.max_len;
        rs.linked_rows = (long long)hs.linked;
        {
            long long ls = 0;
            gs_int hist[LV_HIST + 1];
            lv_cap_hist(&hs, LV_HIST, hist, &ls);
            rs.nnz_offdiag = ls;
            for (int k = 0; k < LV_HIST; k++) rs.nnz_offdiag += (long long)k * hist[k];
        }
        A->linked_rows = rs.linked_rows;
        const gs_int run_rows = (gs_int)max_run_rows;
        if (forced > 1 && forced != run_rows)
            GS_FAIL(GS_ERR_INTERNAL, "%d rows per run asked for; expected 1, %d or %d", (int)forced, GS_SF_RUN_ROWS,
                    GS_SF_WRUN_ROWS);
        D->run_rows = run_rows;
        /* the thread-per-run kernel holds run_max_width entries per row; warp runs a lane per row */
        gs_int max_width = run_rows == GS_SF_RUN_ROWS ? opts->run_max_width : opts->max_width;
        D->max_width = max_width;
        if (run_rows > 1) {
            GS_TRY(GS_CUDA(cub::DeviceScan::InclusiveScan(W.cub, max_bytes, (const gs_int *)W.key, W.chain_start,
                                                          lv_max_op(), (int)n, s)));
            lv_run_flags_kernel<<<rblocks, LV_THREADS, 0, s>>>(n, run_rows, W.chain_start, W.flag);
            GS_TRY(GS_CUDA_LAUNCHED("lv_run_flags_kernel"));
            GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(W.cub, flag_bytes, (const gs_int *)W.flag, W.rid, (int)n, s)));
            lv_run_first_kernel<<<rblocks, LV_THREADS, 0, s>>>(n, W.flag, W.rid, W.run_first, W.stats);
            GS_TRY(GS_CUDA_LAUNCHED("lv_run_first_kernel"));
            GS_TRY(GS_CUDA(cudaMemcpyAsync(&hs.nunits, &W.stats->nunits, sizeof(int), cudaMemcpyDeviceToHost, s)));
            GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
            D->nunits = hs.nunits;
            if ((long long)run_rows * D->nunits > (long long)INT_MAX)
                GS_FAIL(GS_ERR_ARG, "%d runs of %d rows need %lld positions, more than a 32-bit index holds",
                        (int)D->nunits, (int)run_rows, (long long)run_rows * D->nunits);
            D->npos = run_rows * D->nunits;
            if (run_rows == GS_SF_WRUN_ROWS) {
                GS_TRY(gs_ts_work_alloc(be, &work_pos, ((size_t)D->npos + 1) * sizeof(gs_int)));
                W.remlen = (gs_int *)work_pos;
            }
        }

        A->t.check = gs_wtime() - t_check;

        /* 3. levels of the units: level = 1 + max level of what the unit reads outside itself */
        lv_level_args la;
        la.n = n;
        la.nunits = D->nunits;
        la.rowptr = rowptr;
        la.col = col;
        la.run_first = run_rows > 1 ? W.run_first : NULL;
        la.level = W.level;
        la.unit_level = run_rows > 1 ? W.unit_level : NULL;
        la.stats = W.stats;
        unsigned ublocks = (unsigned)(((size_t)D->nunits + LV_THREADS - 1) / LV_THREADS);
        const gs_int *row_level = run_rows > 1 ? W.unit_level : W.level; /* the sort's keys */
        if (opts->given_level) {
            row_level = opts->given_level; /* given (merged schedule): nothing to compute */
        } else if (run_rows == 1) {
            /* rows: a warp at a time, links inside a warp by shuffles, levels by dependency index in W.key
             * (free once the row pass is done: only runs read it) */
            la.level = W.key;
            GS_TRY(GS_CUDA(cudaMemsetAsync(W.key, 0xFF, nn * sizeof(gs_int), s)));
            long long per_sm = LV_WARP_BLOCKS_PER_SM;
            if (opts->level_blocks_per_sm > 0) per_sm = opts->level_blocks_per_sm; /* the solver's parameters */
            const unsigned pblocks = (unsigned)((long long)ublocks < per_sm * A->sms ? (long long)ublocks
                                                                                      : per_sm * A->sms);
            if (uplo == GS_LOWER) {
                lv_levels_warp_kernel<true><<<pblocks, LV_THREADS, 0, s>>>(la);
                row_level = W.key;
            } else {
                lv_levels_warp_kernel<false><<<pblocks, LV_THREADS, 0, s>>>(la);
                GS_TRY(GS_CUDA_LAUNCHED("lv_levels_warp_kernel"));
                lv_reverse_kernel<<<rblocks, LV_THREADS, 0, s>>>(n, W.key, W.level);
            }
        } else {
            /* runs: a warp per run */
            const unsigned wblocks = (unsigned)(((size_t)D->nunits + LV_THREADS / 32 - 1) / (LV_THREADS / 32));
            if (uplo == GS_LOWER) lv_run_levels_kernel<true><<<wblocks, LV_THREADS, 0, s>>>(la);
            else lv_run_levels_kernel<false><<<wblocks, LV_THREADS, 0, s>>>(la);
        }
        GS_TRY(GS_CUDA_LAUNCHED("lv_levels_kernel"));

        /* a host T's values, on a second stream while the level kernel runs (after the stream-ordered
         * allocation of the work space on s) */
        double t_values = gs_wtime();
        if (T) {
            GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&vs, cudaStreamNonBlocking)));
            GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&values_in, cudaEventDisableTiming)));
            GS_TRY(GS_CUDA(cudaEventRecord(values_in, s)));
            GS_TRY(GS_CUDA(cudaStreamWaitEvent(vs, values_in, 0)));
            GS_TRY(gs_stage_copy(&U, W.val, T->val, nz * sizeof(double), vs));
            GS_TRY(GS_CUDA(cudaEventRecord(values_in, vs)));
        }
        GS_TRY(gs_stage_end(&U)); /* every chunk has left the staging buffer */
        A->t.upload += gs_wtime() - t_values; /* + the values' part */
        A->t.upload_bytes = U.bytes;
        A->t.staged = U.used;

        double t1 = gs_wtime();
        if (opts->given_level) {
            hs.max_level = opts->given_max_level;
        } else {
            GS_TRY(GS_CUDA(cudaMemcpyAsync(&hs.max_level, &W.stats->max_level, sizeof(int), cudaMemcpyDeviceToHost, s)));
            GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        }
        A->t.levels = gs_wtime() - t1;
        t1 = gs_wtime();

        /* 4. sizes from the statistics (the ELL-width rule of the host plan) */
        D->nlevels = hs.max_level + 1;
        D->max_row_length = hs.max_len;
        D->nnz_off = (gs_int)rs.nnz_offdiag;
        if (run_rows == 1 && !opts->given_level && opts->levels_only &&
            opts->levels_only(&rs, D->nlevels, opts->levels_ctx)) {
            /* levels only: no plan (the caller's next plan checks the diagonal); the work block is kept
             * for the levels by row and a host T's uploaded CSR (its values once they are in) */
            if (values_in) GS_TRY(GS_CUDA(cudaStreamWaitEvent(s, values_in, 0)));
            A->row_level = row_level;
            if (T) {
                A->tdev.nrows = A->tdev.ncols = n;
                A->tdev.nnz = nnz;
                A->tdev.rowptr = W.rowptr;
                A->tdev.colind = W.col;
                A->tdev.val = W.val;
            }
            A->kept = work;
            work = NULL;
            A->t.layout = gs_wtime() - t1;
            goto cleanup;
        }
        gs_int hist[LV_HIST + 1];
        long long long_sum = 0, rem = 0;
        lv_cap_hist(&hs, max_width, hist, &long_sum);
        D->ell_width = gs_ls_ell_width(n, hist, max_width, D->nnz_off);
        for (int k = D->ell_width + 1; k < max_width; k++) rem += (long long)(k - D->ell_width) * hist[k];
        rem += long_sum - (long long)hist[max_width] * D->ell_width;
        D->rem_nnz = (gs_int)rem;

        size_t nl = (size_t)D->nlevels, np = (size_t)D->npos;
        const size_t plan_bytes = lv_plan_carve(NULL, D);
        GS_TRY(gs_backend_cuda_work_alloc(be, &D->arena, plan_bytes, "triangular-solve plan"));
        lv_plan_carve((char *)D->arena, D);
        if (opts->poison_plan) GS_TRY(GS_CUDA(cudaMemsetAsync(D->arena, 0xA5, plan_bytes, s)));

        /* 5. stable sort of the units by level: positions, level_ptr, remainder pointers */
        int end_bit = 1;
        while (end_bit < 31 && ((gs_int)1 << end_bit) <= hs.max_level) end_bit++;
        GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(W.cub, sort_bytes,
                                                        (const unsigned *)row_level,
                                                        (unsigned *)W.skeys, (const gs_int *)W.idx, W.sunits,
                                                        (int)D->nunits, 0, end_bit, s)));
        lv_pos_args pa;
        pa.n = n;
        pa.nunits = D->nunits;
        pa.npos = D->npos;
        pa.nlevels = D->nlevels;
        pa.run_rows = run_rows;
        pa.w = D->ell_width;
        pa.lower = uplo == GS_LOWER;
        pa.warp = run_rows == GS_SF_WRUN_ROWS;
        pa.keys = W.skeys;
        pa.units = W.sunits;
        pa.run_first = run_rows > 1 ? W.run_first : NULL;
        pa.len = W.len;
        pa.level_ptr = D->level_ptr;
        pa.perm = D->perm;
        pa.pos_of = W.pos;
        pa.remlen = W.remlen;
        lv_positions_kernel<<<(unsigned)(((size_t)D->nunits + 255) / 256), 256, 0, s>>>(pa);
        GS_TRY(GS_CUDA_LAUNCHED("lv_positions_kernel"));
        if (rem > 0) {
            GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(W.cub, scan_bytes, (const gs_int *)W.remlen, D->rem_ptr,
                                                         (int)np + 1, s)));
        } else {
            GS_TRY(GS_CUDA(cudaMemsetAsync(D->rem_ptr, 0, (np + 1) * sizeof(gs_int), s)));
        }

        /* 6. the HEC layout by position once the values are on the device */
        if (values_in) GS_TRY(GS_CUDA(cudaStreamWaitEvent(s, values_in, 0)));
        lv_layout_args<double> ly;
        ly.npos = D->npos;
        ly.w = D->ell_width;
        ly.position_cols = opts->position_cols;
        ly.has_rem = rem > 0;
        ly.unit = unit_diag;
        ly.rowptr = rowptr;
        ly.col = col;
        ly.val = val;
        ly.perm = D->perm;
        ly.pos_of = W.pos;
        ly.rem_ptr = D->rem_ptr;
        ly.ell_col = D->ell_col;
        ly.rem_col = D->rem_col;
        ly.ell_val = D->ell_val;
        ly.rem_val = D->rem_val;
        ly.dinv = D->dinv;
        ly.stats = W.stats;
        if (D->single) {
            lv_layout_kernel<float><<<(unsigned)((np + 255) / 256), 256, 0, s>>>(
                lv_layout_in(ly, D->ell_val_f, D->rem_val_f, D->dinv_f));
        } else {
            lv_layout_kernel<double><<<(unsigned)((np + 255) / 256), 256, 0, s>>>(ly);
        }
        GS_TRY(GS_CUDA_LAUNCHED("lv_layout_kernel"));

        gs_free(&D->h_level_ptr);
        GS_TRY(GS_MALLOC(D->h_level_ptr, nl + 1));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(D->h_level_ptr, D->level_ptr, (nl + 1) * sizeof(gs_int),
                                       cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&hs.bad_value_row, &W.stats->bad_value_row, sizeof(int),
                                       cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        if (hs.bad_value_row < n) GS_TRY(lv_report_fault(be, T, dT, uplo, unit_diag, hs.bad_value_row, "diagonal value"));
        A->t.layout = gs_wtime() - t1;

        for (gs_int l = 0; l < D->nlevels; l++) {
            gs_int units = D->h_level_ptr[l + 1] - D->h_level_ptr[l];
            if (units > A->max_level_rows) A->max_level_rows = units;
        }
        A->rows_level0 = D->h_level_ptr[1];
    }
cleanup:
    {
        gs_status se = gs_stage_end(&U);
        if (st == GS_OK) st = se;
    }
    if (vs) {
        if (cudaStreamSynchronize(vs) != cudaSuccess) (void)cudaGetLastError(); /* no copy into `work` left */
        if (cudaStreamDestroy(vs) != cudaSuccess) (void)cudaGetLastError();
    }
    if (values_in && cudaEventDestroy(values_in) != cudaSuccess) (void)cudaGetLastError();
    if (work || work_pos) {
        if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
        gs_ts_work_free(be, work);
        gs_ts_work_free(be, work_pos);
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
