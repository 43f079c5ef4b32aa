/* Tiled triangular solve (TileSpTRSV) on the GPU, x = T^{-1} b: the tile plan of tiled_ref.c (rows
 * renumbered level by level, 16x16 tiles in COO / CSR / dense form, diagonal tiles in DIA / CSR /
 * packed dense form, 8-bit local indices) is uploaded unchanged, and every tile row is solved by ONE
 * warp: its two halves multiply the off-diagonal tiles (lane (h, r) owns row r of the tiles of half h),
 * a shuffle adds the halves, then the 16 lanes substitute through the diagonal tile with a shuffle per
 * column (x_k broadcast from lane k). The arithmetic is exactly that of tiled_ref.c (see
 * tiled_impl.h), written with explicit roundings (__fma_rn, __dadd_rn, __dsub_rn, __dmul_rn) so that
 * the compiler cannot contract it differently: both variants and the host twin agree bit for bit.
 *
 * Two schedules of the same tile-row work (the variant, chosen in analyse by gs_tl_choose_variant:
 * the rule of tiled_ref.c, or forced by the environment variable GS_TILED_VARIANT=levelset|syncfree):
 *
 *  levelset  tile rows level by level (tile levels of the plan). Consecutive thin levels (at most
 *            GS_TL_CHAIN_TILE_ROWS tile rows each) form a chain run by ONE thread block, a warp per
 *            tile row, with __syncthreads between levels (reached by every thread: the loops around
 *            it are block-uniform); every wider level is one multi-block launch whose kernel boundary
 *            is the level barrier. The launch sequence is captured once into a CUDA graph in analyse;
 *            its kernels read b and x from a small device struct that a tiny kernel sets before a
 *            replay when the pointers change, so any pair of vectors works without re-capturing.
 *
 *  syncfree  ONE kernel, no global barrier: a warp per tile row in ticket order. Every warp takes a
 *            ticket t from a global atomic counter and solves tile row t (position order is a
 *            dependency order: a tile row depends only on tile rows J < t). Tickets are taken by
 *            running warps, so the warp with the smallest unfinished ticket always has all its inputs:
 *            no deadlock whatever order the hardware starts blocks in. Before reading the x of tile
 *            row J, each lane that reads it spins on flag_J with acquire loads at device scope and
 *            then reads x through L2 (ld.cg: L1 is not coherent between SMs); after writing its 16
 *            x values the warp fences (every writing lane: __threadfence), meets at __syncwarp, and
 *            lane 0 stores flag_I = gen with release semantics at device scope.
 *            Generation counter instead of memsets: each solve launches the same W warps, each takes
 *            exactly one ticket, and solves are stream-ordered, so solve k (from 0) holds tickets
 *            kW .. kW+W-1 and a warp with ticket T knows gen = T / W + 1 (mod 2^32). Every solve
 *            rewrites every flag, so a stale flag holds gen - 1 (0 before the first solve) and never
 *            equals gen. analyse zeroes the flags and the counter.
 *
 * Internally x is also kept by position (xp, allocated in analyse) so that the off-diagonal tiles read
 * 16 consecutive values; each x_p is written to xp[p] and to x[perm[p]] once. Solve allocates nothing.
 * Analysis time = host plan build + upload + (levelset) graph capture and instantiation. */
#include <cuda_runtime.h>

#include "core/mem.h"
#include "trisolve/tiled_impl.h"
#include "trisolve/trisolve_cuda.h"

#define TL_WIDE_THREADS 256                             /* multi-block level kernel: 8 tile rows per block */
#define TL_SF_THREADS 256                               /* sync-free kernel: 8 tile rows per block */
#define TL_CHAIN_MAX_THREADS (GS_TL_CHAIN_TILE_ROWS * 32) /* chain kernel: a warp per tile row of a level */
#define TL_CHAIN_STAGE 1024                             /* level pointers staged in shared memory */
#define TL_FULL 0xffffffffu

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
    double *xp; /* x by position: written and read by the same kernel, so neither const nor restrict */
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
    gs_int *perm, *tile_ptr, *level_ptr, *level_rows;
    double *dinv, *val, *xp;
    gs_tile *tiles, *diag;
    uint8_t *idx;
    unsigned *flags;
    unsigned long long *ticket;
    tl_args *args;
    cudaGraphExec_t exec;
    const double *last_b;
    double *last_x;
    gs_int launches; /* kernels per solve */
    double time_analyse, time_upload, time_graph;
} tl_cuda_data;

/* xp[p]: through L2 in the sync-free kernel (written by other SMs during the kernel); a plain load in
 * the level-set kernels (written by an earlier kernel, or by this block before a __syncthreads). */
template <bool SYNC>
static __device__ __forceinline__ double tl_xp(const double *xp, gs_int p)
{
    if (SYNC) return __ldcg(xp + p);
    return xp[p];
}

/* Tile row I by the calling warp (all 32 lanes must call it: it shuffles over the full warp):
 *   y_r = sum over the off-diagonal tiles (I, J) of B(16I + r, 16J + c) xp[16J + c]
 *   s_r = b[perm[16I + r]] - y_r;  for k = 0..14: x_k = s_k dinv_k, s_r -= B(r, k) x_k (r > k);
 *   x_r = s_r dinv_r, stored to xp[16I + r] and x[perm[16I + r]].
 * SYNC: wait for flag_J == gen before reading tile row J's x; publish flag_I = gen at the end. */
template <bool SYNC>
static __device__ void tl_tile_row(const tl_dev &S, gs_int I, const double *b, double *x, unsigned *flags,
                                   unsigned gen)
{
    const unsigned lane = threadIdx.x & 31u;
    const int r = (int)(lane & 15u);
    const int h = (int)(lane >> 4);
    const unsigned half = 0xffffu << (16 * h); /* the 16 lanes of this half */
    const gs_int t0 = S.tile_ptr[I], t1 = S.tile_ptr[I + 1];
    double acc = 0.0;

    /* half h: tiles t0 + h, t0 + h + 2, ...; the 16 lanes of a half always take the same tile */
    for (gs_int t = t0 + h; t < t1; t += 2) {
        const gs_tile tl = S.tiles[t];
        const gs_int base = tl.col * GS_TILE; /* a full tile column: base + 15 < 16 I <= n - 1 */
        if (SYNC)
            while (gs_gpu_ld_acquire(flags + tl.col) != gen) {
            }
        const uint8_t *ix = S.idx + tl.idx_off;
        const double *v = S.val + tl.val_off;
        if (tl.fmt == GS_TILE_DENSE) {
            /* column-major values: lanes r read consecutive doubles; x_c shuffled from lane c of the half */
            const double xr = tl_xp<SYNC>(S.xp, base + r);
            for (int c = 0; c < GS_TILE; c++)
                acc = __fma_rn(v[c * GS_TILE + r], __shfl_sync(half, xr, c, 16), acc);
        } else if (tl.fmt == GS_TILE_CSR) {
            const int end = r == GS_TILE - 1 ? (int)tl.nnz : (int)ix[r + 1];
            for (int k = ix[r]; k < end; k++)
                acc = __fma_rn(v[k], tl_xp<SYNC>(S.xp, base + (gs_int)ix[GS_TILE + k]), acc);
        } else { /* COO: every lane scans the (at most GS_TILE_COO_MAX) entries and takes those of its row */
            for (int k = 0; k < (int)tl.nnz; k++) {
                const unsigned rc = ix[k];
                if ((int)(rc >> 4) == r)
                    acc = __fma_rn(v[k], tl_xp<SYNC>(S.xp, base + (gs_int)(rc & 15u)), acc);
            }
        }
    }
    acc = __dadd_rn(acc, __shfl_down_sync(TL_FULL, acc, 16)); /* lanes 0..15: acc[0][r] + acc[1][r] */

    const gs_int p = I * GS_TILE + r;
    const bool valid = lane < 16 && p < S.n; /* the last tile row may be short */
    const gs_int orig = valid ? S.perm[p] : 0;
    const double di = valid ? S.dinv[p] : 0.0;
    double s = valid ? __dsub_rn(b[orig], acc) : 0.0;

    const gs_tile d = S.diag[I]; /* warp-uniform: the branches below hold full-warp shuffles */
    if (d.fmt == GS_DTILE_CSR) {
        /* each lane walks its row's entries (columns increasing) in step with k */
        const uint8_t *ix = S.idx + d.idx_off;
        const double *v = S.val + d.val_off;
        int q = 0, e = 0;
        if (lane < 16) {
            q = ix[r];
            e = r == GS_TILE - 1 ? (int)d.nnz : (int)ix[r + 1];
        }
        int nc = q < e ? (int)ix[GS_TILE + q] : GS_TILE;
        for (int k = 0; k < GS_TILE - 1; k++) {
            const double xk = __shfl_sync(TL_FULL, __dmul_rn(s, di), k); /* s_k is final: columns < k */
            if (nc == k) {
                s = __fma_rn(-v[q], xk, s);
                q++;
                nc = q < e ? (int)ix[GS_TILE + q] : GS_TILE;
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
        S.xp[p] = xv;
        x[orig] = xv;
    }
    if (SYNC) {
        __threadfence(); /* this lane's x stores are visible device-wide before anything after */
        __syncwarp();    /* ... and before lane 0 passes this point */
        if (lane == 0) gs_gpu_st_release(flags + I, gen); /* publishes the 16 x values of tile row I */
    }
}

/* One wide tile level: tile rows level_rows[w0 .. w1-1], a warp each; the kernel boundary is the level
 * barrier. */
static __global__ void __launch_bounds__(TL_WIDE_THREADS)
    tl_level_kernel(tl_dev S, const tl_args *a, gs_int w0, gs_int w1)
{
    const gs_int w = w0 + (gs_int)blockIdx.x * (TL_WIDE_THREADS / 32) + (gs_int)(threadIdx.x / 32);
    if (w >= w1) return; /* warp-uniform */
    tl_tile_row<false>(S, S.level_rows[w], a->b, a->x, nullptr, 0u);
}

/* One block solves the thin tile levels l0 .. l1-1 of a chain, a warp per tile row, __syncthreads
 * between levels (global writes of the block are visible to the block after the barrier). The level
 * pointers are staged in shared memory TL_CHAIN_STAGE at a time. */
static __global__ void __launch_bounds__(TL_CHAIN_MAX_THREADS)
    tl_chain_kernel(tl_dev S, const tl_args *a, gs_int l0, gs_int l1)
{
    __shared__ gs_int lp[TL_CHAIN_STAGE + 1];
    const double *b = a->b;
    double *x = a->x;
    const gs_int warp = (gs_int)(threadIdx.x / 32), nwarps = (gs_int)(blockDim.x / 32);
    for (gs_int c0 = l0; c0 < l1; c0 += TL_CHAIN_STAGE) {
        const gs_int c1 = l1 - c0 > TL_CHAIN_STAGE ? c0 + TL_CHAIN_STAGE : l1;
        for (gs_int k = (gs_int)threadIdx.x; k <= c1 - c0; k += (gs_int)blockDim.x)
            lp[k] = S.level_ptr[c0 + k];
        __syncthreads();
        for (gs_int l = 0; l < c1 - c0; l++) {
            const gs_int w1 = lp[l + 1];
            for (gs_int w = lp[l] + warp; w < w1; w += nwarps) /* warp-uniform */
                tl_tile_row<false>(S, S.level_rows[w], b, x, nullptr, 0u);
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
static __global__ void __launch_bounds__(TL_SF_THREADS)
    tl_syncfree_kernel(tl_dev S, unsigned *flags, unsigned long long *ticket, unsigned long long nwarps,
                       const double *b, double *x)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long T = 0;
    if (lane == 0) T = atomicAdd(ticket, 1ULL);
    T = __shfl_sync(TL_FULL, T, 0);
    const unsigned long long k = T / nwarps, t = T - k * nwarps;
    const unsigned gen = (unsigned)(k + 1);
    if (t >= (unsigned long long)S.nt) return; /* warp-uniform */
    tl_tile_row<true>(S, (gs_int)t, b, x, flags, gen);
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
    gs_ts_free_array(be, &d->flags);
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

    GS_TRY(TS_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)));
    GS_TRY(TS_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)));
    capturing = true;
    for (gs_int c = 0; c < P->nchains; c++) {
        gs_int l0 = P->chain_ptr[c], l1 = P->chain_ptr[c + 1];
        if (P->chain_single[c]) {
            /* levels l0..l1-1 of at most chain_rows tile rows each: a warp per tile row of the widest */
            int threads = (int)P->chain_max_rows[c] * 32;
            if (threads > TL_CHAIN_MAX_THREADS) threads = TL_CHAIN_MAX_THREADS; /* warps loop over rows */
            tl_chain_kernel<<<1, threads, 0, cs>>>(S, d->args, l0, l1);
            GS_TRY(TS_LAUNCHED("tl_chain_kernel"));
        } else {
            gs_int w0 = P->level_ptr[l0], w1 = P->level_ptr[l0 + 1];
            unsigned blocks = (unsigned)((w1 - w0 + TL_WIDE_THREADS / 32 - 1) / (TL_WIDE_THREADS / 32));
            tl_level_kernel<<<blocks, TL_WIDE_THREADS, 0, cs>>>(S, d->args, w0, w1);
            GS_TRY(TS_LAUNCHED("tl_level_kernel"));
        }
    }
    capturing = false;
    GS_TRY(TS_CUDA(cudaStreamEndCapture(cs, &g)));
    GS_TRY(TS_CUDA(cudaGraphInstantiate(&d->exec, g, 0)));
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
    GS_TRY(gs_tl_choose_variant(&d->P, &d->variant, &d->forced));
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
        GS_TRY(gs_backend_alloc(be, &p, n * sizeof(double)));
        d->xp = (double *)p;
        p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, nt * sizeof(unsigned)));
        d->flags = (unsigned *)p;
        p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(unsigned long long)));
        d->ticket = (unsigned long long *)p;
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->xp, 0, n * sizeof(double), s)));
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->flags, 0, nt * sizeof(unsigned), s)));
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->ticket, 0, sizeof(unsigned long long), s)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
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
        tl_syncfree_kernel<<<blocks, TL_SF_THREADS, 0, s>>>(tl_device_plan(d), d->flags, d->ticket, nwarps,
                                                             b->data, x->data);
        GS_CALL(TS_LAUNCHED("tl_syncfree_kernel"));
        return GS_OK;
    }
    /* The pointer update can be skipped when b and x are those of the previous solve, unless this solve
     * is being captured into an outer graph (its replays must set them themselves). */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CALL(TS_CUDA(cudaStreamIsCapturing(s, &capture)));
    if (b->data != d->last_b || x->data != d->last_x || capture != cudaStreamCaptureStatusNone) {
        tl_set_args_kernel<<<1, 1, 0, s>>>(d->args, b->data, x->data);
        GS_CALL(TS_LAUNCHED("tl_set_args_kernel"));
        d->last_b = b->data;
        d->last_x = x->data;
    }
    GS_CALL(TS_CUDA(cudaGraphLaunch(d->exec, s)));
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
                            ? "cuda tiles, sync-free variant (a warp per tile row, ticket order, ready flags)"
                            : "cuda tiles, level-set variant (a warp per tile row, chains, CUDA graph)");
    gs_ts_report_string(rep, prefix, "variant", gs_tl_variant_name(d->variant));
    if (gs_report_keyf(key, sizeof key, "%s.variant_forced", prefix) == GS_OK)
        (void)gs_report_bool(rep, key, d->forced);
    gs_tl_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "kernels_per_solve", d->launches);
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
