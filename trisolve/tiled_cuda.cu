/* Tiled triangular solve (TileSpTRSV) on the GPU, x = T^{-1} b: the tile plan of tiled_ref.c (rows
 * renumbered level by level, 16x16 tiles in COO / CSR / dense form, diagonal tiles in DIA / CSR /
 * packed dense form, 8-bit local indices) is uploaded unchanged, and every tile row is solved by ONE
 * warp: its two halves multiply the off-diagonal tiles (lane (h, r) owns row r of the tiles of half h),
 * a shuffle adds the halves, then the 16 lanes substitute through the diagonal tile with a shuffle per
 * column (x_k broadcast from lane k). The arithmetic is exactly that of tiled_ref.c (see
 * tiled_kernels.h), written with explicit roundings (__fma_rn, __dadd_rn, __dsub_rn, __dmul_rn) so that
 * the compiler cannot contract it differently: both variants and the host twin agree bit for bit.
 *
 * A tile row's off-diagonal tiles are taken in batches of NB per half (NB = 4 or 16, from the plan's
 * widest tile row). Lane r of a half loads the header of the batch's r-th tile, and every lane loads
 * its own row's entries of the batch's tiles into registers (tl_row_cache: the first few per tile);
 * the row's b, 1/diagonal and position are loaded too. None of this depends on x, so it is in flight
 * while the warp waits. Then lane r gathers x[16 J_k + r] for every tile k of the batch (one load
 * instruction covers a whole tile column: 16 consecutive values), the half writes them to the warp's
 * shared buffer sx[k][c], and each lane applies its cached entries in order, reading x from shared
 * memory. So after the wait a batch costs shared-memory reads and FMAs, not dependent global reads per
 * tile (docs/notes-trisolve.md section 4.6).
 *
 * Two schedules of the same tile-row work (the variant, chosen in analyse by gs_tl_choose_variant:
 * the rule of tiled_ref.c, or forced by the solver's parameters, tiled.variant = levelset | syncfree):
 *
 *  levelset  tile rows level by level (tile levels of the plan). Consecutive thin levels (at most
 *            GS_TL_CHAIN_TILE_ROWS tile rows each) form a chain run by ONE thread block, a warp per
 *            tile row, with __syncthreads between levels (reached by every thread: the loops around
 *            it are block-uniform); every wider level is one multi-block launch whose kernel boundary
 *            is the level barrier. x is kept by position in xp. The launch sequence is captured once
 *            into a CUDA graph in analyse; its kernels read b and x from a small device struct that a
 *            tiny kernel sets before a replay when the pointers change, so any pair of vectors works
 *            without re-capturing.
 *
 *  syncfree  ONE kernel, no global barrier: a warp per tile row in ticket order. Every warp takes a
 *            ticket t from a global atomic counter and solves tile row t (position order is a
 *            dependency order: a tile row depends only on tile rows J < t). Tickets are taken by
 *            running warps, so the warp with the smallest unfinished ticket always has all its inputs:
 *            no deadlock whatever order the hardware starts blocks in. Ready values, as in
 *            syncfree_cuda.cu: x by position in two generations of 64-bit values, SF_EMPTY until
 *            solved; the gathering lanes poll their tile-column values (relaxed loads at GPU scope,
 *            served by L2) until none is SF_EMPTY, and a solved value is published by a relaxed store
 *            of its bits (sf_bits), with the same position of the other generation reset to SF_EMPTY
 *            for the next solve. No flag, no fence: the value is its own flag. Each solve launches the
 *            same W warps, each takes exactly one ticket, and solves are stream-ordered, so solve k
 *            (from 0) holds tickets kW .. kW+W-1 and uses generation k mod 2. analyse sets both
 *            generations to SF_EMPTY and the counter to 0.
 *
 * Each x_p is written to x[perm[p]] once. Solve allocates nothing. Analysis time = host plan build +
 * upload + (levelset) graph capture and instantiation. */
#include <cuda_runtime.h>

#include "core/mem.h"
#include "trisolve/tiled_kernels.h"
#include "trisolve/trisolve_cuda.h"

#define TL_WIDE_THREADS 256                             /* multi-block level kernel: 8 tile rows per block */
#define TL_SF_THREADS 256                               /* sync-free kernel: 8 tile rows per block */
#define TL_CHAIN_MAX_THREADS (GS_TL_CHAIN_TILE_ROWS * 32) /* chain kernel: a warp per tile row of a level */
/* ... with 16-tile batches (~200 registers per thread) at most 8 warps, which loop over the level's tile rows */
#define TL_CHAIN_THREADS(NB) ((NB) == TL_NB_LARGE ? TL_CHAIN_MAX_THREADS / 2 : TL_CHAIN_MAX_THREADS)
#define TL_CHAIN_STAGE 1024                             /* level pointers staged in shared memory */
#define TL_FULL 0xffffffffu
#define TL_NB_SMALL 4  /* tiles per half and batch when no tile row has more than 2 x 4 off-diagonal tiles */
#define TL_NB_LARGE 16 /* ... otherwise: one tile header per lane of the half */

/* Shared memory of a block: per warp, x of one batch for both halves (2 x NB tile columns of 16 values). */
static size_t tl_shared_bytes(int nb, int threads) { return (size_t)(threads / 32) * 2 * (size_t)nb * GS_TILE * sizeof(double); }

/* The uploaded plan, passed by value to the kernels. */
struct tl_dev {
    gs_int n, nt;
    const gs_int *__restrict__ perm;
    const double *__restrict__ dinv;
    const gs_int *__restrict__ tile_ptr;
    const gs_tile *__restrict__ tiles;
    const gs_tile *__restrict__ diag;
    const uint8_t *__restrict__ idx;
    const double *__restrict__ val;
    const gs_int *__restrict__ level_ptr;
    const gs_int *__restrict__ level_rows;
    double *xp; /* level-set variant: x by position, written and read by the same kernel (not restrict) */
};

/* b and x of the current solve, read by the level-set graph's kernels. */
struct tl_args {
    const double *b;
    double *x;
};

typedef struct tl_cuda_data {
    gs_tl_plan P; /* arrays freed after upload; statistics kept for view() */
    gs_tl_variant variant;
    bool forced;
    int nb; /* TL_NB_SMALL or TL_NB_LARGE */
    gs_int *perm, *tile_ptr, *level_ptr, *level_rows;
    double *dinv, *val, *xp;
    gs_tile *tiles, *diag;
    uint8_t *idx;
    long long *ready; /* sync-free variant: 2n ready values (two generations) */
    unsigned long long *ticket;
    tl_args *args;
    cudaGraphExec_t exec;
    const double *last_b;
    double *last_x;
    gs_int launches; /* kernels per solve */
    double time_analyse, time_upload, time_graph;
} tl_cuda_data;

/* Lane r's entries of row r in one off-diagonal tile, loaded before the wait: the first TL_CACHE(NB) of
 * them (value and column, in the tile's order), how many there are in all (ne), and the tile's format.
 * Dense tiles are not cached (16 values per row, read after the wait with independent loads). */
#define TL_CACHE(NB) ((NB) == TL_NB_SMALL ? 4 : 2)

template <int C>
struct tl_row_cache {
    double v[C];
    unsigned cols; /* 4 bits per cached entry */
    int ne;        /* entries of the row in the tile; -1: a dense tile */
};

template <int C>
static __device__ __forceinline__ void tl_cache_row(const tl_dev &S, const gs_tile *tp, int r, tl_row_cache<C> &rc)
{
    const int fmt = tp->fmt, nnz = tp->nnz;
    const uint8_t *ix = S.idx + tp->idx_off;
    const double *v = S.val + tp->val_off;
    rc.cols = 0u;
#pragma unroll
    for (int c = 0; c < C; c++) rc.v[c] = 0.0;
    if (fmt == GS_TILE_DENSE) {
        rc.ne = -1;
    } else if (fmt == GS_TILE_CSR) {
        const int e0 = ix[r], end = r == GS_TILE - 1 ? nnz : (int)ix[r + 1];
        rc.ne = end - e0;
#pragma unroll
        for (int c = 0; c < C; c++)
            if (c < end - e0) {
                rc.v[c] = v[e0 + c];
                rc.cols |= (unsigned)ix[GS_TILE + e0 + c] << (4 * c);
            }
    } else { /* COO (at most GS_TILE_COO_MAX entries, row-major): the entries of row r in order */
        int m = 0;
#pragma unroll
        for (int e = 0; e < GS_TILE_COO_MAX; e++) {
            if (e < nnz) {
                const unsigned rcx = ix[e];
                if ((int)(rcx >> 4) == r) {
#pragma unroll
                    for (int c = 0; c < C; c++)
                        if (m == c) {
                            rc.v[c] = v[e];
                            rc.cols |= (rcx & 15u) << (4 * c);
                        }
                    m++;
                }
            }
        }
        rc.ne = m;
    }
}

/* acc += row r of the tile times x (xs: the tile column's 16 values in shared memory), in the tile's entry
 * order: the cached entries, then (rare: more than C entries in the row, or a dense tile) the rest from
 * global memory. */
template <int C>
static __device__ __forceinline__ double tl_apply_row(const tl_dev &S, const gs_tile *tp, int r,
                                                      const tl_row_cache<C> &rc, const double *xs, double acc)
{
#pragma unroll
    for (int c = 0; c < C; c++)
        if (c < rc.ne) acc = __fma_rn(rc.v[c], xs[(rc.cols >> (4 * c)) & 15u], acc);
    if (rc.ne >= 0 && rc.ne <= C) return acc;
    const int fmt = tp->fmt, nnz = tp->nnz;
    const uint8_t *ix = S.idx + tp->idx_off;
    const double *v = S.val + tp->val_off;
    if (fmt == GS_TILE_DENSE) {
        /* column-major values: lanes r read consecutive doubles */
#pragma unroll
        for (int c = 0; c < GS_TILE; c++) acc = __fma_rn(v[c * GS_TILE + r], xs[c], acc);
    } else if (fmt == GS_TILE_CSR) {
        const int end = r == GS_TILE - 1 ? nnz : (int)ix[r + 1];
        for (int e = ix[r] + C; e < end; e++) acc = __fma_rn(v[e], xs[ix[GS_TILE + e]], acc);
    } else {
        int m = 0;
        for (int e = 0; e < nnz; e++) {
            const unsigned rcx = ix[e];
            if ((int)(rcx >> 4) == r) {
                if (m >= C) acc = __fma_rn(v[e], xs[rcx & 15u], acc);
                m++;
            }
        }
    }
    return acc;
}

/* Tile row I by the calling warp (all 32 lanes must call it: it shuffles over the full warp):
 *   y_r = sum over the off-diagonal tiles (I, J) of B(16I + r, 16J + c) x_{16J + c}
 *   s_r = b[perm[16I + r]] - y_r;  for k = 0..14: x_k = s_k dinv_k, s_r -= B(r, k) x_k (r > k);
 *   x_r = s_r dinv_r, stored to x[perm[16I + r]] and by position (xp, or cur with SYNC).
 * SYNC: x by position is read from the ready values cur (polled until not SF_EMPTY) and published there;
 * nxt (the other generation) is reset. sx: this warp's shared buffer of 2 x NB x 16 doubles. */
template <int NB, bool SYNC>
static __device__ __forceinline__ void tl_tile_row(const tl_dev &S, gs_int I, const double *b, double *x,
                                                   long long *cur, long long *nxt, double *sx)
{
    constexpr int C = TL_CACHE(NB);
    const unsigned lane = threadIdx.x & 31u;
    const int r = (int)(lane & 15u);
    const int h = (int)(lane >> 4);
    const gs_int t0 = S.tile_ptr[I], t1 = S.tile_ptr[I + 1];
    const gs_int m0 = (t1 - t0 + 1) / 2;               /* tiles of half 0: t0, t0 + 2, ... */
    const gs_int mh = h == 0 ? m0 : (t1 - t0) / 2;     /* tiles of this half */

    /* the row's data (independent of x: in flight while the batches wait) */
    const gs_int p = I * GS_TILE + r;
    const bool valid = lane < 16 && p < S.n; /* the last tile row may be short */
    const gs_int orig = valid ? S.perm[p] : 0;
    const double di = valid ? S.dinv[p] : 0.0;
    const double bo = valid ? b[orig] : 0.0;
    const gs_tile d = S.diag[I];
    double *sh = sx + h * (NB * GS_TILE); /* [k][c]: x_{16 J_k + c} of the batch's k-th tile of this half */
    double acc = 0.0;

    for (gs_int k0 = 0; k0 < m0; k0 += NB) { /* warp-uniform: half 0 has the most tiles */
        const int cnt = mh - k0 < NB ? (int)(mh - k0) : NB; /* <= 0: half 1 has no tile left */
        const gs_tile *tb = S.tiles + (t0 + h + 2 * k0);     /* the batch's tiles: tb[0], tb[2], ... */
        /* before the wait: the tile columns (lane r loads the r-th header) and this row's entries */
        const gs_int J = r < cnt ? tb[2 * r].col : 0;
        tl_row_cache<C> rc[NB];
#pragma unroll
        for (int k = 0; k < NB; k++)
            if (k < cnt) tl_cache_row<C>(S, tb + 2 * k, r, rc[k]);
        gs_int q[NB]; /* x position this lane gathers for tile k: a full tile column, J < I */
#pragma unroll
        for (int k = 0; k < NB; k++) q[k] = GS_TILE * __shfl_sync(TL_FULL, J, k, 16) + r;
        if (SYNC) {
            long long g[NB]; /* SF_EMPTY until seen; 0 for slots past cnt */
#pragma unroll
            for (int k = 0; k < NB; k++) g[k] = k < cnt ? SF_EMPTY : 0LL;
            bool done;
            do {
#pragma unroll
                for (int k = 0; k < NB; k++)
                    if (sf_hi_empty(g[k])) g[k] = gs_gpu_ld_relaxed(cur + q[k]);
                done = true;
#pragma unroll
                for (int k = 0; k < NB; k++) done = done && !sf_hi_empty(g[k]);
            } while (!__all_sync(TL_FULL, done));
#pragma unroll
            for (int k = 0; k < NB; k++)
                if (k < cnt) sh[k * GS_TILE + r] = __longlong_as_double(g[k]);
        } else {
#pragma unroll
            for (int k = 0; k < NB; k++)
                if (k < cnt) sh[k * GS_TILE + r] = S.xp[q[k]];
        }
        __syncwarp();
        /* lane (h, r): row r of the batch's tiles in tile order, each tile's entries by increasing column */
#pragma unroll
        for (int k = 0; k < NB; k++)
            if (k < cnt) acc = tl_apply_row<C>(S, tb + 2 * k, r, rc[k], sh + k * GS_TILE, acc);
        __syncwarp(); /* the buffer is rewritten by the next batch */
    }
    acc = __dadd_rn(acc, __shfl_down_sync(TL_FULL, acc, 16)); /* lanes 0..15: acc[0][r] + acc[1][r] */
    double s = valid ? __dsub_rn(bo, acc) : 0.0;

    /* d is warp-uniform: the branches below hold full-warp shuffles */
    if (d.fmt == GS_DTILE_CSR) {
        /* each lane walks its row's entries (columns increasing) in step with k */
        const uint8_t *ix = S.idx + d.idx_off;
        const double *v = S.val + d.val_off;
        int e = 0, end = 0;
        if (lane < 16) {
            e = ix[r];
            end = r == GS_TILE - 1 ? (int)d.nnz : (int)ix[r + 1];
        }
        int nc = e < end ? (int)ix[GS_TILE + e] : GS_TILE;
        for (int k = 0; k < GS_TILE - 1; k++) {
            const double xk = __shfl_sync(TL_FULL, __dmul_rn(s, di), k); /* s_k is final: columns < k */
            if (nc == k) {
                s = __fma_rn(-v[e], xk, s);
                e++;
                nc = e < end ? (int)ix[GS_TILE + e] : GS_TILE;
            }
        }
    } else if (d.fmt == GS_DTILE_DENSE) {
        /* packed column k holds rows k+1..15: lanes r > k read consecutive doubles */
        const double *v = S.val + d.val_off;
        for (int k = 0; k < GS_TILE - 1; k++) {
            const double xk = __shfl_sync(TL_FULL, __dmul_rn(s, di), k);
            if (lane < 16 && r > k) s = __fma_rn(-v[15 * k - k * (k - 1) / 2 + (r - k - 1)], xk, s);
        }
    }

    const double xv = __dmul_rn(s, di);
    if (valid) {
        if (SYNC) {
            gs_gpu_st_relaxed(cur + p, sf_bits(xv)); /* publishes x_p: its consumers poll this value */
            nxt[p] = SF_EMPTY;                       /* ready for the next solve */
        } else {
            S.xp[p] = xv;
        }
        x[orig] = xv;
    }
}

/* This warp's part of the block's dynamic shared memory (tl_shared_bytes). */
template <int NB>
static __device__ __forceinline__ double *tl_warp_buffer(void)
{
    extern __shared__ double tl_sx[];
    return tl_sx + (threadIdx.x / 32) * (2 * NB * GS_TILE);
}

/* One wide tile level: tile rows level_rows[w0 .. w1-1], a warp each; the kernel boundary is the level
 * barrier. */
template <int NB>
static __global__ void __launch_bounds__(TL_WIDE_THREADS)
    tl_level_kernel(tl_dev S, const tl_args *a, gs_int w0, gs_int w1)
{
    const gs_int w = w0 + (gs_int)blockIdx.x * (TL_WIDE_THREADS / 32) + (gs_int)(threadIdx.x / 32);
    if (w >= w1) return; /* warp-uniform */
    tl_tile_row<NB, false>(S, S.level_rows[w], a->b, a->x, nullptr, nullptr, tl_warp_buffer<NB>());
}

/* One block solves the thin tile levels l0 .. l1-1 of a chain, a warp per tile row, __syncthreads
 * between levels (global writes of the block are visible to the block after the barrier). The level
 * pointers are staged in shared memory TL_CHAIN_STAGE at a time. */
template <int NB>
static __global__ void __launch_bounds__(TL_CHAIN_THREADS(NB))
    tl_chain_kernel(tl_dev S, const tl_args *a, gs_int l0, gs_int l1)
{
    __shared__ gs_int lp[TL_CHAIN_STAGE + 1];
    const double *b = a->b;
    double *x = a->x;
    double *sx = tl_warp_buffer<NB>();
    const gs_int warp = (gs_int)(threadIdx.x / 32), nwarps = (gs_int)(blockDim.x / 32);
    for (gs_int c0 = l0; c0 < l1; c0 += TL_CHAIN_STAGE) {
        const gs_int c1 = l1 - c0 > TL_CHAIN_STAGE ? c0 + TL_CHAIN_STAGE : l1;
        for (gs_int k = (gs_int)threadIdx.x; k <= c1 - c0; k += (gs_int)blockDim.x)
            lp[k] = S.level_ptr[c0 + k];
        __syncthreads();
        for (gs_int l = 0; l < c1 - c0; l++) {
            const gs_int w1 = lp[l + 1];
            for (gs_int w = lp[l] + warp; w < w1; w += nwarps) /* warp-uniform */
                tl_tile_row<NB, false>(S, S.level_rows[w], b, x, nullptr, nullptr, sx);
            __syncthreads(); /* level barrier; also protects lp before the next stage overwrites it */
        }
    }
}

static __global__ void tl_set_args_kernel(tl_args *a, const double *b, double *x)
{
    a->b = b;
    a->x = x;
}

/* The whole solve in one kernel: a warp per tile row in ticket order (see the file comment). */
template <int NB>
static __global__ void __launch_bounds__(TL_SF_THREADS)
    tl_syncfree_kernel(tl_dev S, long long *ready, unsigned long long *ticket, unsigned long long nwarps,
                       const double *b, double *x)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long T = 0;
    if (lane == 0) T = atomicAdd(ticket, 1ULL);
    T = __shfl_sync(TL_FULL, T, 0);
    const unsigned long long k = T / nwarps, t = T - k * nwarps;
    if (t >= (unsigned long long)S.nt) return; /* warp-uniform */
    long long *cur = ready + (size_t)(k & 1ULL) * (size_t)S.n;
    long long *nxt = ready + (size_t)((k + 1ULL) & 1ULL) * (size_t)S.n;
    tl_tile_row<NB, true>(S, (gs_int)t, b, x, cur, nxt, tl_warp_buffer<NB>());
}

/* ---------------------------------------------------------------- host side */

static void tl_release(gs_trisolve *ts, tl_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* solves done */
    if (d->exec && cudaGraphExecDestroy(d->exec) != cudaSuccess) (void)cudaGetLastError();
    d->exec = NULL;
    d->launches = 0;
    gs_ts_free_array(be, &d->perm);
    gs_ts_free_array(be, &d->tile_ptr);
    gs_ts_free_array(be, &d->level_ptr);
    gs_ts_free_array(be, &d->level_rows);
    gs_ts_free_array(be, &d->dinv);
    gs_ts_free_array(be, &d->val);
    gs_ts_free_array(be, &d->xp);
    gs_ts_free_array(be, &d->tiles);
    gs_ts_free_array(be, &d->diag);
    gs_ts_free_array(be, &d->idx);
    gs_ts_free_array(be, &d->ready);
    gs_ts_free_array(be, &d->ticket);
    gs_tl_plan_free(&d->P);
}

static tl_dev tl_device_plan(const tl_cuda_data *d)
{
    tl_dev S;
    S.n = d->P.n;
    S.nt = d->P.nt;
    S.perm = d->perm;
    S.dinv = d->dinv;
    S.tile_ptr = d->tile_ptr;
    S.tiles = d->tiles;
    S.diag = d->diag;
    S.idx = d->idx;
    S.val = d->val;
    S.level_ptr = d->level_ptr;
    S.level_rows = d->level_rows;
    S.xp = d->xp;
    return S;
}

/* Capture the level-set launch sequence (one launch per chain) on a private stream and instantiate it. */
static gs_status tl_capture(tl_cuda_data *d)
{
    gs_status st = GS_OK;
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    bool capturing = false;
    const gs_tl_plan *P = &d->P;
    tl_dev S = tl_device_plan(d);

    GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)));
    GS_TRY(GS_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)));
    capturing = true;
    for (gs_int c = 0; c < P->nchains; c++) {
        gs_int l0 = P->chain_ptr[c], l1 = P->chain_ptr[c + 1];
        if (P->chain_single[c]) {
            /* levels l0..l1-1 of at most chain_rows tile rows each: a warp per tile row of the widest */
            int threads = (int)P->chain_max_rows[c] * 32;
            if (threads > TL_CHAIN_THREADS(d->nb)) threads = TL_CHAIN_THREADS(d->nb); /* warps loop over rows */
            if (d->nb == TL_NB_SMALL)
                tl_chain_kernel<TL_NB_SMALL><<<1, threads, tl_shared_bytes(d->nb, threads), cs>>>(S, d->args, l0, l1);
            else
                tl_chain_kernel<TL_NB_LARGE><<<1, threads, tl_shared_bytes(d->nb, threads), cs>>>(S, d->args, l0, l1);
            GS_TRY(GS_CUDA_LAUNCHED("tl_chain_kernel"));
        } else {
            gs_int w0 = P->level_ptr[l0], w1 = P->level_ptr[l0 + 1];
            unsigned blocks = (unsigned)((w1 - w0 + TL_WIDE_THREADS / 32 - 1) / (TL_WIDE_THREADS / 32));
            const size_t shm = tl_shared_bytes(d->nb, TL_WIDE_THREADS);
            if (d->nb == TL_NB_SMALL)
                tl_level_kernel<TL_NB_SMALL><<<blocks, TL_WIDE_THREADS, shm, cs>>>(S, d->args, w0, w1);
            else
                tl_level_kernel<TL_NB_LARGE><<<blocks, TL_WIDE_THREADS, shm, cs>>>(S, d->args, w0, w1);
            GS_TRY(GS_CUDA_LAUNCHED("tl_level_kernel"));
        }
    }
    capturing = false;
    GS_TRY(GS_CUDA(cudaStreamEndCapture(cs, &g)));
    GS_TRY(GS_CUDA(cudaGraphInstantiate(&d->exec, g, 0)));
    d->launches = P->nchains;
cleanup:
    if (capturing) { /* end the broken capture so that the stream can be destroyed */
        cudaGraph_t junk = NULL;
        if (cudaStreamEndCapture(cs, &junk) == cudaSuccess && junk) cudaGraphDestroy(junk);
        (void)cudaGetLastError();
    }
    if (g && cudaGraphDestroy(g) != cudaSuccess) (void)cudaGetLastError();
    if (cs && cudaStreamDestroy(cs) != cudaSuccess) (void)cudaGetLastError();
    return st;
}

static gs_status tl_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    tl_cuda_data *d = (tl_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be);
    double t0 = gs_wtime(), t1;

    tl_release(ts, d);
    GS_TRY(gs_tl_plan_build(T, ts->uplo, ts->unit_diag, GS_TL_CHAIN_TILE_ROWS, &d->P));
    d->variant = gs_tl_choose_variant(&d->P, ts->prm.tiled.variant, &d->forced);
    /* batch size: the tiles of the widest tile row's half in one batch when they are few */
    d->nb = (d->P.max_tiles_per_row + 1) / 2 <= TL_NB_SMALL ? TL_NB_SMALL : TL_NB_LARGE;
    t1 = gs_wtime();
    {
        const gs_tl_plan *P = &d->P;
        size_t n = (size_t)P->n, nt = (size_t)P->nt;
        GS_TRY(gs_ts_upload_array(be, &d->perm, P->perm, n));
        GS_TRY(gs_ts_upload_array(be, &d->dinv, P->dinv, n));
        GS_TRY(gs_ts_upload_array(be, &d->tile_ptr, P->tile_ptr, nt + 1));
        GS_TRY(gs_ts_upload_array(be, &d->tiles, P->tiles, (size_t)P->ntiles));
        GS_TRY(gs_ts_upload_array(be, &d->diag, P->diag, nt));
        GS_TRY(gs_ts_upload_array(be, &d->idx, P->idx, (size_t)P->idx_len));
        GS_TRY(gs_ts_upload_array(be, &d->val, P->val, (size_t)P->val_len));
        GS_TRY(gs_ts_upload_array(be, &d->level_ptr, P->level_ptr, (size_t)P->nlevels + 1));
        GS_TRY(gs_ts_upload_array(be, &d->level_rows, P->level_rows, nt));
        void *p = NULL;
        if (d->variant == GS_TL_SYNCFREE) { /* two generations of ready values, all SF_EMPTY */
            GS_TRY(gs_backend_alloc(be, &p, 2 * n * sizeof(long long)));
            d->ready = (long long *)p;
            GS_TRY(GS_CUDA(cudaMemsetAsync(d->ready, 0xff, 2 * n * sizeof(long long), s)));
        } else {
            GS_TRY(gs_backend_alloc(be, &p, n * sizeof(double)));
            d->xp = (double *)p;
            GS_TRY(GS_CUDA(cudaMemsetAsync(d->xp, 0, n * sizeof(double), s)));
        }
        p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(unsigned long long)));
        d->ticket = (unsigned long long *)p;
        GS_TRY(GS_CUDA(cudaMemsetAsync(d->ticket, 0, sizeof(unsigned long long), s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    }
    if (!d->args) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(tl_args)));
        d->args = (tl_args *)p;
    }
    d->last_b = NULL; /* the first solve sets the graph's pointers */
    d->last_x = NULL;
    d->time_upload = gs_wtime() - t1;
    t1 = gs_wtime();
    if (d->variant == GS_TL_LEVELSET && d->P.nt > 0) GS_TRY(tl_capture(d));
    if (d->variant == GS_TL_SYNCFREE) d->launches = 1;
    d->time_graph = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
cleanup:
    gs_tl_plan_free(&d->P); /* the host arrays are no longer needed; the statistics stay for view */
    if (st != GS_OK) tl_release(ts, d);
    return st;
}

static gs_status tl_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    tl_cuda_data *d = (tl_cuda_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    if (d->P.nt == 0) return GS_OK;
    if (d->variant == GS_TL_SYNCFREE) {
        /* W = blocks * warps per block >= nt warps, each takes exactly one ticket */
        const unsigned wpb = TL_SF_THREADS / 32;
        unsigned blocks = (unsigned)(((size_t)d->P.nt + wpb - 1) / wpb);
        const unsigned long long nwarps = (unsigned long long)blocks * wpb;
        const size_t shm = tl_shared_bytes(d->nb, TL_SF_THREADS);
        if (d->nb == TL_NB_SMALL)
            tl_syncfree_kernel<TL_NB_SMALL><<<blocks, TL_SF_THREADS, shm, s>>>(tl_device_plan(d), d->ready, d->ticket,
                                                                                nwarps, b->data, x->data);
        else
            tl_syncfree_kernel<TL_NB_LARGE><<<blocks, TL_SF_THREADS, shm, s>>>(tl_device_plan(d), d->ready, d->ticket,
                                                                                nwarps, b->data, x->data);
        GS_CALL(GS_CUDA_LAUNCHED("tl_syncfree_kernel"));
        return GS_OK;
    }
    /* The pointer update can be skipped when b and x are those of the previous solve, unless this solve
     * is being captured into an outer graph (its replays must set them themselves). */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CALL(GS_CUDA(cudaStreamIsCapturing(s, &capture)));
    if (b->data != d->last_b || x->data != d->last_x || capture != cudaStreamCaptureStatusNone) {
        tl_set_args_kernel<<<1, 1, 0, s>>>(d->args, b->data, x->data);
        GS_CALL(GS_CUDA_LAUNCHED("tl_set_args_kernel"));
        d->last_b = b->data;
        d->last_x = x->data;
    }
    GS_CALL(GS_CUDA(cudaGraphLaunch(d->exec, s)));
    return GS_OK;
}

static void tl_cuda_destroy(gs_trisolve *ts)
{
    tl_cuda_data *d = (tl_cuda_data *)ts->data;
    if (!d) return;
    tl_release(ts, d);
    gs_ts_free_array(ts->be, &d->args);
    gs_free(&ts->data);
}

static void tl_cuda_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const tl_cuda_data *d = (const tl_cuda_data *)ts->data;
    char key[256];
    gs_ts_report_string(rep, prefix, "implementation",
                        d->variant == GS_TL_SYNCFREE
                            ? "cuda tiles, sync-free variant (a warp per tile row, ticket order, ready values)"
                            : "cuda tiles, level-set variant (a warp per tile row, chains, CUDA graph)");
    gs_ts_report_string(rep, prefix, "variant", gs_tl_variant_name(d->variant));
    if (gs_report_keyf(key, sizeof key, "%s.variant_forced", prefix) == GS_OK)
        (void)gs_report_bool(rep, key, d->forced);
    gs_tl_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "kernels_per_solve", d->launches);
    gs_ts_report_int(rep, prefix, "tile_batch", d->nb); /* off-diagonal tiles per half-warp and batch */
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "graph_time", d->time_graph);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops tl_cuda_ops = {tl_cuda_analyse, tl_cuda_solve, tl_cuda_destroy, tl_cuda_view, NULL};

gs_status gs_trisolve_create_tiled_cuda(gs_trisolve *ts)
{
    tl_cuda_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "tiled_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &tl_cuda_ops;
    return GS_OK;
}
