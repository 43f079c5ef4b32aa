/* Jacobi triangular solves on the GPU, x ~ T^{-1} b (jacobi_ref.c is the host twin and says the math):
 *   jacobi        x_0 = D^{-1} b, then `sweeps` times x <- D^{-1} (b - (T - D) x), ONE fused kernel per
 *                 sweep that reads the factor once: an ELL copy, a thread per row, when every row fits
 *                 (at most 16 entries, little padding); else off-diagonal CSR, a thread (or 2 lanes, on
 *                 rows of 8+ entries on average) per row, and a warp per row for the rows longer than
 *                 the layout's threshold (extra blocks of the same launch). gs_jacobi_sweep_shape
 *                 (jacobi_ref.c) decides, for this file and the host twin alike.
 *                 Double buffered between x and a work vector w, arranged so that the last sweep
 *                 writes x; the first sweep reads x_0 = D^{-1} b straight from b (no start pass).
 *                 Deterministic: the same summation order in every run.
 *   async-jacobi  block-asynchronous Jacobi: x = D^{-1} b, then `sweeps` launches of one kernel whose
 *                 thread block r owns rows [r R, (r+1) R) (R = rows per block) and updates them IN PLACE,
 *                 reading the newest values x holds (relaxed GPU-scope loads and stores, served by
 *                 L2, so values other blocks wrote are seen). Inside a block the rows are relaxed Jacobi
 *                 style (all reads, barrier, all writes) a few local sweeps per launch. blockIdx is
 *                 mapped to row blocks so that the block scheduled first (blocks are dispatched in
 *                 increasing blockIdx) owns the rows with the fewest dependencies: ascending for L,
 *                 descending for U ("dependency"), or fixed "forward" / "backward". With
 *                 deterministic = true it runs the `jacobi` kernels (bit-identical results).
 *
 * Precision (gs_trisolve_params.single): the factor's VALUES (off-diagonal t_ij and 1/t_ii) are stored
 * as V = double or float; vectors and arithmetic stay double: x_i <- (b_i - sum_j (double)t_ij x_j) *
 * (double)dinv_i with dinv = (V)(1.0 / t_ii). The sweeps are bandwidth-bound, so float values cut the
 * bytes a sweep reads (8 + 4 -> 4 + 4 per off-diagonal entry). The double kernels are those of the
 * double-only solver (a cast of a double to double is no operation): bit-identical results.
 *
 * Analysis on the device (jac_analyse_any; analyse uploads a host factor once, analyse_dev reads one
 * already on the device). A checked factor stores its diagonal exactly once per row (non-unit), last in
 * a lower row and first in an upper one (sorted columns, one side), or nowhere (unit). So the
 * off-diagonal entries of row i are ONE contiguous run of T's arrays, and the diagonals before it are
 * known: the split  N = T - D  is a shift, no scan:
 *     N.rowptr[i] = T.rowptr[i] - i           (unit: T.rowptr[i])
 *     N row i     = T entries rowptr[i] + s .. rowptr[i+1] - 1 - (1 - s)   (s = 1 for upper non-unit)
 *     dinv[i]     = 1 / T(i, i) at rowptr[i+1] - 1 (lower) or rowptr[i] (upper),
 * exactly the arrays of the sequential split (jacobi_ref.c), in the same order. The long rows (more
 * than GS_JACOBI_LONG_ROW off-diagonal entries) are listed by an exclusive scan of their flags, lpos;
 * lpos at a row block's first row is that block's first long row, so blk_long[r] = lpos[r R]. Steps:
 *   1. row pass, a thread per row: off-diagonal length, long flag, block maxima and counts (one
 *      atomic per block). For a factor given on the device it also evaluates the row predicate of
 *      gs_ts_check_rows (the host factor was checked by gs_trisolve_analyse); the first faulty row
 *      (atomicMin) is described by gs_ts_check_rows on a host copy of the rows up to it, so the message
 *      is exactly gs_trisolve_check_factor's;
 *   2. exclusive scan of the long flags (cub::DeviceScan) and one download of the counts;
 *   3. the solver's arrays in one allocation, filled by a thread per row (row pointers, 1/diagonal,
 *      long-row list, blk_long, entries of the short rows) and a warp per long row (its entries).
 * Host work is O(1) besides the upload; one synchronisation in step 2 and one at the end.
 *
 * The per-solve launch sequence is captured once into a CUDA graph in analyse (when it has at most
 * JAC_GRAPH_MAX_LAUNCHES kernels; longer sequences are launched directly). As in levelset_cuda.cu the
 * kernels read b and x from a small device struct that a one-thread kernel sets before the replay when
 * the pointers change, so any vectors may be used and a solve may itself be captured by a caller. */
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <math.h>
#include <string.h>

#include "core/carve.h"
#include "core/mem.h"
#include "core/staging_cuda.h"
#include "trisolve/jacobi_kernels.h"
#include "trisolve/trisolve_cuda.h"

#define JAC_GRAPH_MAX_LAUNCHES 64 /* longer launch sequences are not worth a graph of that many nodes */
#define JAC_WARP 32
#define JAC_BUILD_THREADS 256 /* threads per block of the analysis kernels */

/* The split factor, passed by value to the kernels; V = double or float (values only). */
template <typename V>
struct jac_dev {
    gs_int n;          /* rows */
    gs_int row_blocks; /* ceil(n / threads per block): the thread-per-row (or row-range) blocks */
    gs_int nlong;      /* rows handled by a warp */
    gs_int long_row;   /* a row is long when it has more off-diagonal entries than this */
    const gs_int *__restrict__ rp;        /* n + 1: off-diagonal CSR */
    const gs_int *__restrict__ ci;
    const V *__restrict__ val;
    const V *__restrict__ dinv;           /* n, 1 / t_ii (NULL for a unit diagonal) */
    const gs_int *__restrict__ long_rows; /* nlong, increasing */
    const gs_int *__restrict__ blk_long;  /* row_blocks + 1: long rows of row block r are
                                             long_rows[blk_long[r] .. blk_long[r+1]-1] (async only) */
    double *w;                            /* n: the second Jacobi buffer (synchronous only) */
    int lanes;                            /* synchronous sweep: lanes per short row (1, 2, 4, 8 or 16) */
    gs_int ell_w;                         /* synchronous sweep from the ELL copy: its width; 0: CSR */
    const gs_int *__restrict__ ell_ci;    /* ell_w x n, column-major, -1 after a row's end */
    const V *__restrict__ ell_val;
};

/* b and x of the current solve, read by the graph's kernels. */
struct jac_args {
    const double *b;
    double *x;
};

typedef struct jac_cuda_data {
    gs_int n, nnz_off, nlong, max_row;
    gs_int long_row, threads, local_sweeps; /* the layout (gs_jacobi_layout) */
    bool in_place, descending;
    bool single;      /* values stored in float */
    int lanes;        /* of the synchronous sweep's short rows (gs_jacobi_sweep_shape, jacobi_ref.c) */
    int ell_w;        /* the synchronous sweep reads an ELL copy of this width (0: CSR) */
    gs_int *ell_ci;
    void *ell_val;
    bool from_device; /* the last analysis read a factor in device memory (analyse_dev) */
    int sweeps;
    void *arena; /* one device allocation holding the arrays below */
    gs_int *rp, *ci, *long_rows, *blk_long;
    void *val, *dinv; /* double or float (single); dinv NULL for a unit diagonal */
    double *w;
    jac_args *args;
    cudaGraphExec_t exec; /* NULL: launched directly */
    const double *last_b;
    double *last_x;
    gs_int launches;
    long long factor_bytes; /* rp, ci, values and dinv: what a sweep streams */
    double time_analyse, time_upload, time_build, time_graph;
} jac_cuda_data;

/* x entries other blocks may write during the same launch: relaxed loads and stores at GPU scope
 * (PTX memory model: "morally strong", hence coherent between SMs: served from L2, never from a stale
 * L1 line; no data race in the model's sense). `asm volatile` keeps the compiler from merging, caching
 * or hoisting them (out of the local-sweep loop, across the barriers), while the factor loads around
 * them stay free to be scheduled early. */
static __device__ __forceinline__ double jac_load_fresh(const double *p)
{
    double v;
    asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
static __device__ __forceinline__ void jac_store_fresh(double *p, double v)
{
    asm volatile("st.relaxed.gpu.global.f64 [%0], %1;" : : "l"(p), "d"(v));
}

/* x_0(j) = D^{-1} b: the start vector, read directly by the first sweep */
template <typename V, bool UNIT>
static __device__ __forceinline__ double jac_x0(const jac_dev<V> &M, const double *b, gs_int j)
{
    return UNIT ? b[j] : b[j] * (double)M.dinv[j];
}

/* sum over the warp, lane 0 holds the result (the tree jac_row in jacobi_ref.c reproduces); every lane
 * of the warp must call it */
static __device__ __forceinline__ double jac_warp_sum(double p)
{
    for (int off = JAC_WARP / 2; off > 0; off >>= 1) p += __shfl_down_sync(0xffffffffu, p, off);
    return p;
}

/* x = D^{-1} b (sweeps = 0 for jacobi; the start of the asynchronous iteration) */
template <typename V, bool UNIT>
static __global__ void jac_start_kernel(jac_dev<V> M, const jac_args *args)
{
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < M.n) args->x[i] = jac_x0<V, UNIT>(M, args->b, i);
}

/* One synchronous sweep  out_i = D^{-1} (b_i - sum_{j != i} t_ij in_j)  (in = x_0 = D^{-1} b when FIRST).
 * Blocks [0, row_blocks): M.lanes threads per row (long rows skipped): one thread sums the row in order,
 * or G lanes sum entries a + l, a + l + G, ... and a shuffle tree adds them (jac_row in jacobi_ref.c);
 * blocks after them: a warp per long row.
 * in_w / out_w select the buffers: 1 = the work vector w, 0 = the caller's x (never equal). */
template <typename V, bool UNIT, bool FIRST>
static __global__ void jac_sweep_kernel(jac_dev<V> M, const jac_args *args, int in_w, int out_w)
{
    const double *b = args->b;
    const double *in = in_w ? M.w : args->x;
    double *out = out_w ? M.w : args->x;
    if (M.ell_w > 0) {
        /* ELL copy (every row has at most ell_w entries): a thread per row, the k-th entries of a warp's
         * rows adjacent in memory; the entries in row order, as the CSR thread-per-row sum */
        gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
        if (i >= M.n) return;
        double s = b[i];
        size_t q = (size_t)i;
        for (gs_int k = 0; k < M.ell_w; k++, q += (size_t)M.n) {
            gs_int j = M.ell_ci[q];
            if (j < 0) break;
            s -= (double)M.ell_val[q] * (FIRST ? jac_x0<V, UNIT>(M, b, j) : in[j]);
        }
        out[i] = UNIT ? s : s * (double)M.dinv[i];
    } else if ((gs_int)blockIdx.x < M.row_blocks && M.lanes > 1) {
        /* G lanes per row: the G lanes of a row are consecutive lanes of one warp and take the same path */
        const int G = M.lanes;
        long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        gs_int i = (gs_int)(g / G), l = (gs_int)(g % G);
        if (i >= M.n) return;
        gs_int a = M.rp[i], e = M.rp[i + 1];
        if (e - a > M.long_row) return;
        double p = 0.0;
        for (gs_int q = a + l; q < e; q += G) {
            gs_int j = M.ci[q];
            p += (double)M.val[q] * (FIRST ? jac_x0<V, UNIT>(M, b, j) : in[j]);
        }
        unsigned lane = threadIdx.x % JAC_WARP, mask = ((1u << G) - 1u) << (lane & ~(unsigned)(G - 1));
        for (int off = G / 2; off > 0; off >>= 1) p += __shfl_down_sync(mask, p, off, G);
        if (l == 0) out[i] = UNIT ? b[i] - p : (b[i] - p) * (double)M.dinv[i];
    } else if ((gs_int)blockIdx.x < M.row_blocks) {
        gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
        if (i >= M.n) return;
        gs_int a = M.rp[i], e = M.rp[i + 1];
        if (e - a > M.long_row) return; /* a warp of the tail blocks does this row */
        double s = b[i];
        for (gs_int q = a; q < e; q++) {
            gs_int j = M.ci[q];
            s -= (double)M.val[q] * (FIRST ? jac_x0<V, UNIT>(M, b, j) : in[j]);
        }
        out[i] = UNIT ? s : s * (double)M.dinv[i];
    } else {
        /* warp-uniform: t is the same for all 32 lanes, so either the whole warp returns or none */
        gs_int warps = (gs_int)(blockDim.x / JAC_WARP);
        gs_int t = ((gs_int)blockIdx.x - M.row_blocks) * warps + (gs_int)(threadIdx.x / JAC_WARP);
        if (t >= M.nlong) return;
        gs_int lane = (gs_int)(threadIdx.x % JAC_WARP);
        gs_int i = M.long_rows[t];
        gs_int a = M.rp[i], e = M.rp[i + 1];
        double p = 0.0;
        for (gs_int q = a + lane; q < e; q += JAC_WARP) {
            gs_int j = M.ci[q];
            p += (double)M.val[q] * (FIRST ? jac_x0<V, UNIT>(M, b, j) : in[j]);
        }
        p = jac_warp_sum(p);
        if (lane == 0) out[i] = UNIT ? b[i] - p : (b[i] - p) * (double)M.dinv[i];
    }
}

/* One global sweep of block-asynchronous Jacobi, in place on x. Block blockIdx.x owns row block r
 * (descending: the mirror image) and relaxes its rows local_sweeps times:
 *   v_i = D^{-1} (b_i - sum_{j != i} t_ij x_j)  for every own row (x read as it is now), barrier,
 *   x_i = v_i, barrier.
 * Short rows: a thread each (thread k of the block <-> row r*R + k); long rows of the block: its warps in
 * turn, their values staged in shared memory (at most R of them). Every barrier is reached by all threads
 * of the block: the loops around them have block-uniform bounds. */
template <typename V, bool UNIT>
static __global__ void jac_async_kernel(jac_dev<V> M, const jac_args *args, int descending, int local_sweeps)
{
    extern __shared__ double s_long[]; /* blockDim.x doubles */
    const double *b = args->b;
    double *x = args->x;
    gs_int r = descending ? M.row_blocks - 1 - (gs_int)blockIdx.x : (gs_int)blockIdx.x;
    gs_int i = r * (gs_int)blockDim.x + (gs_int)threadIdx.x;
    gs_int a = 0, e = 0;
    bool mine = false; /* a short row of this thread */
    double bi = 0.0, di = 1.0;
    if (i < M.n) {
        a = M.rp[i];
        e = M.rp[i + 1];
        mine = e - a <= M.long_row;
        bi = b[i];
        if (!UNIT) di = (double)M.dinv[i];
    }
    gs_int l0 = M.blk_long[r], l1 = M.blk_long[r + 1];
    gs_int lane = (gs_int)(threadIdx.x % JAC_WARP), warp = (gs_int)(threadIdx.x / JAC_WARP);
    gs_int warps = (gs_int)(blockDim.x / JAC_WARP);

    for (int ls = 0; ls < local_sweeps; ls++) {
        double v = 0.0;
        if (mine) {
            double s = bi;
            for (gs_int q = a; q < e; q++) s -= (double)M.val[q] * jac_load_fresh(x + M.ci[q]);
            v = UNIT ? s : s * di;
        }
        for (gs_int t = l0 + warp; t < l1; t += warps) { /* warp-uniform bounds */
            gs_int k = M.long_rows[t];
            gs_int ka = M.rp[k], ke = M.rp[k + 1];
            double p = 0.0;
            for (gs_int q = ka + lane; q < ke; q += JAC_WARP) p += (double)M.val[q] * jac_load_fresh(x + M.ci[q]);
            p = jac_warp_sum(p);
            if (lane == 0) s_long[t - l0] = UNIT ? b[k] - p : (b[k] - p) * (double)M.dinv[k];
        }
        __syncthreads(); /* every read of this local sweep precedes every write (Jacobi inside the block) */
        if (mine) jac_store_fresh(x + i, v);
        for (gs_int t = l0 + (gs_int)threadIdx.x; t < l1; t += (gs_int)blockDim.x)
            jac_store_fresh(x + M.long_rows[t], s_long[t - l0]);
        __syncthreads(); /* the next local sweep reads these values and reuses s_long */
    }
}

static __global__ void jac_set_args_kernel(jac_args *a, const double *b, double *x)
{
    a->b = b;
    a->x = x;
}

template <typename V>
static jac_dev<V> jac_device_view(const jac_cuda_data *d)
{
    jac_dev<V> M;
    M.n = d->n;
    M.row_blocks = (d->n + d->threads - 1) / d->threads;
    M.nlong = d->nlong;
    M.long_row = d->long_row;
    M.rp = d->rp;
    M.ci = d->ci;
    M.val = (const V *)d->val;
    M.dinv = (const V *)d->dinv;
    M.long_rows = d->long_rows;
    M.blk_long = d->blk_long;
    M.w = d->w;
    M.lanes = 1;
    M.ell_w = 0;
    M.ell_ci = NULL;
    M.ell_val = NULL;
    return M;
}

/* The kernels of one solve on stream s (captured into the graph, or launched directly). */
template <typename V>
static gs_status jac_enqueue_values(const jac_cuda_data *d, bool unit, cudaStream_t s)
{
    jac_dev<V> M = jac_device_view<V>(d);
    unsigned threads = (unsigned)d->threads;
    unsigned row_blocks = (unsigned)M.row_blocks;

    if (d->in_place || d->sweeps == 0) {
        /* x = D^{-1} b */
        if (unit) jac_start_kernel<V, true><<<row_blocks, threads, 0, s>>>(M, d->args);
        else jac_start_kernel<V, false><<<row_blocks, threads, 0, s>>>(M, d->args);
        GS_CALL(GS_CUDA_LAUNCHED("jac_start_kernel"));
    }
    if (d->in_place) {
        /* sweeps x (in place) <- D^{-1} (b - (T - D) x), newest values */
        size_t shmem = (size_t)d->threads * sizeof(double);
        for (int k = 0; k < d->sweeps; k++) {
            if (unit)
                jac_async_kernel<V, true><<<row_blocks, threads, shmem, s>>>(M, d->args, d->descending ? 1 : 0,
                                                                             (int)d->local_sweeps);
            else
                jac_async_kernel<V, false><<<row_blocks, threads, shmem, s>>>(M, d->args, d->descending ? 1 : 0,
                                                                              (int)d->local_sweeps);
            GS_CALL(GS_CUDA_LAUNCHED("jac_async_kernel"));
        }
        return GS_OK;
    }
    /* sweep k (1-based) writes x when sweeps - k is even, else w; it reads what sweep k-1 wrote; the
     * short rows take d->lanes threads each */
    unsigned warps_per_block = threads / JAC_WARP;
    M.lanes = d->lanes;
    M.row_blocks = (gs_int)(((long long)d->n * d->lanes + threads - 1) / threads);
    M.ell_w = d->ell_w;
    M.ell_ci = d->ell_ci;
    M.ell_val = (const V *)d->ell_val;
    unsigned blocks = (unsigned)M.row_blocks + (unsigned)((d->nlong + (gs_int)warps_per_block - 1) / (gs_int)warps_per_block);
    for (int k = 1; k <= d->sweeps; k++) {
        int out_w = (d->sweeps - k) % 2 != 0;
        int in_w = !out_w;
        if (k == 1) {
            if (unit) jac_sweep_kernel<V, true, true><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
            else jac_sweep_kernel<V, false, true><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
        } else {
            if (unit) jac_sweep_kernel<V, true, false><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
            else jac_sweep_kernel<V, false, false><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
        }
        GS_CALL(GS_CUDA_LAUNCHED("jac_sweep_kernel"));
    }
    return GS_OK;
}

static gs_status jac_enqueue(const jac_cuda_data *d, bool unit, cudaStream_t s)
{
    if (d->n == 0) return GS_OK;
    if (d->single) GS_CALL(jac_enqueue_values<float>(d, unit, s));
    else GS_CALL(jac_enqueue_values<double>(d, unit, s));
    return GS_OK;
}

/* Capture the launch sequence on a private stream and instantiate it. */
static gs_status jac_capture(jac_cuda_data *d, bool unit)
{
    gs_status st = GS_OK;
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    bool capturing = false;

    GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)));
    GS_TRY(GS_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)));
    capturing = true;
    GS_TRY(jac_enqueue(d, unit, cs));
    capturing = false;
    GS_TRY(GS_CUDA(cudaStreamEndCapture(cs, &g)));
    GS_TRY(GS_CUDA(cudaGraphInstantiate(&d->exec, g, 0)));
cleanup:
    if (capturing) { /* end the broken capture so the stream can be destroyed */
        cudaGraph_t junk = NULL;
        if (cudaStreamEndCapture(cs, &junk) == cudaSuccess && junk) cudaGraphDestroy(junk);
        (void)cudaGetLastError();
    }
    if (g && cudaGraphDestroy(g) != cudaSuccess) (void)cudaGetLastError();
    if (cs && cudaStreamDestroy(cs) != cudaSuccess) (void)cudaGetLastError();
    return st;
}

static void jac_release(gs_trisolve *ts, jac_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* solves done */
    if (d->exec && cudaGraphExecDestroy(d->exec) != cudaSuccess) (void)cudaGetLastError();
    d->exec = NULL;
    gs_ts_free_array(be, &d->arena);
    d->rp = d->ci = d->long_rows = d->blk_long = d->ell_ci = NULL;
    d->val = d->dinv = d->ell_val = NULL;
    d->w = NULL;
}

/* ================================================================ the analysis on the device */

/* Small results of the row pass, downloaded once. */
struct jac_stats {
    int bad_row; /* first row failing the row predicate; n when none (factors from the device only) */
    int max_row; /* off-diagonal entries of the longest row */
    int nlong;   /* rows with more than long_row of them */
};

/* T's CSR on the device (the caller's arrays, or the upload of a host factor). */
struct jac_src {
    gs_int n, nnz;
    const gs_int *rowptr, *colind;
    const double *val;
};

/* The off-diagonal run of row i (entries rowptr[i] = a .. rowptr[i+1] = e of a checked factor): T's
 * entries in0 .. in0 + len - 1 are N's entries out0 .. out0 + len - 1 (see the file comment). */
static __device__ __forceinline__ void jac_off_run(bool lower, bool unit, gs_int i, gs_int a, gs_int e, gs_int *in0,
                                                   gs_int *out0, gs_int *len)
{
    *in0 = (!unit && !lower) ? a + 1 : a;
    *out0 = unit ? a : a - i;
    *len = unit ? e - a : e - a - 1;
}

/* The row predicate of gs_ts_check_rows (common.c row_fault_of): row pointers inside 0 .. nnz and
 * increasing, columns in range, strictly increasing and on the factor's side, then the diagonal: none
 * for a unit factor, else present, nonzero and finite. */
static __device__ bool jac_row_valid(const jac_src &T, bool lower, bool unit, gs_int i, gs_int a, gs_int e)
{
    if (a < 0 || e < a || e > T.nnz) return false;
    bool has_diag = false;
    double diag = 0.0;
    gs_int prev = 0;
    for (gs_int q = a; q < e; q++) {
        gs_int j = T.colind[q];
        if (j < 0 || j >= T.n) return false;
        if (q > a && j <= prev) return false;
        if (lower ? j > i : j < i) return false;
        if (j == i) {
            has_diag = true;
            diag = T.val[q];
        }
        prev = j;
    }
    if (unit) return !has_diag;
    return has_diag && diag != 0.0 && isfinite(diag);
}

static __global__ void jac_stats_init_kernel(jac_stats *S, gs_int n)
{
    S->bad_row = (int)n;
    S->max_row = 0;
    S->nlong = 0;
}

struct jac_max_op {
    __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};

/* Step 1, a thread per row i <= n: len_i = off-diagonal entries of row i, lflag_i = [len_i > long_row]
 * (lflag_n = 0, so that the exclusive scan's last entry is the count), max len and count of long rows
 * (a block reduction, one atomic each per block). CHECK: the row predicate first (the first faulty row
 * by atomicMin; its len and flag are 0, so the scan stays inside its bounds). */
template <bool CHECK>
static __global__ void __launch_bounds__(JAC_BUILD_THREADS)
    jac_rows_kernel(jac_src T, bool lower, bool unit, gs_int long_row, gs_int *lflag, jac_stats *S)
{
    typedef cub::BlockReduce<int, JAC_BUILD_THREADS> block_reduce;
    __shared__ typename block_reduce::TempStorage red_max, red_sum;
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    int len = 0, flag = 0;
    if (i < T.n) {
        gs_int a = T.rowptr[i], e = T.rowptr[i + 1];
        if (!CHECK || jac_row_valid(T, lower, unit, i, a, e)) {
            len = (int)(unit ? e - a : e - a - 1);
            flag = len > long_row;
        } else {
            atomicMin(&S->bad_row, (int)i);
        }
        lflag[i] = flag;
    } else if (i == T.n) {
        lflag[i] = 0;
    }
    int max_len = block_reduce(red_max).Reduce(len, jac_max_op());
    int longs = block_reduce(red_sum).Sum(flag);
    if (threadIdx.x == 0) {
        if (max_len > 0) atomicMax(&S->max_row, max_len);
        if (longs > 0) atomicAdd(&S->nlong, longs);
    }
}

/* The solver's arrays (V: the value type) and where step 3 reads from. */
template <typename V>
struct jac_fill_args {
    jac_src T;
    bool lower, unit;
    gs_int long_row, rows_per_block, row_blocks;
    const gs_int *lpos; /* n + 1: exclusive scan of the long flags */
    gs_int *rp, *ci, *long_rows, *blk_long; /* blk_long NULL: not needed (synchronous sweeps) */
    V *val, *dinv;                         /* dinv NULL for a unit diagonal */
    gs_int ell_w;                          /* > 0: also the ELL copy (every row fits) */
    gs_int *ell_ci;
    V *ell_val;
};

/* Step 3, a thread per row i <= n:  N.rowptr[i] (shift), dinv[i] = (V)(1 / t_ii), long_rows[lpos[i]] = i
 * for a long row, blk_long[r] = lpos[r R] at the first row of each row block (blk_long[row_blocks] =
 * lpos[n] = nlong), and the entries of a short row (t_ij rounded to V). */
template <typename V>
static __global__ void jac_fill_kernel(jac_fill_args<V> A)
{
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    const gs_int n = A.T.n;
    if (i > n) return;
    if (i == n) {
        A.rp[n] = A.unit ? A.T.nnz : A.T.nnz - n;
        if (A.blk_long) A.blk_long[A.row_blocks] = A.lpos[n];
        return;
    }
    gs_int a = A.T.rowptr[i], e = A.T.rowptr[i + 1], in0, out0, len;
    jac_off_run(A.lower, A.unit, i, a, e, &in0, &out0, &len);
    A.rp[i] = out0;
    if (!A.unit) A.dinv[i] = (V)(1.0 / A.T.val[A.lower ? e - 1 : a]);
    if (A.blk_long && i % A.rows_per_block == 0) A.blk_long[i / A.rows_per_block] = A.lpos[i];
    if (len > A.long_row) {
        A.long_rows[A.lpos[i]] = i; /* its entries: jac_fill_long_kernel */
        return;
    }
    if (A.ell_w == 0)
        for (gs_int t = 0; t < len; t++) {
            A.ci[out0 + t] = A.T.colind[in0 + t];
            A.val[out0 + t] = (V)A.T.val[in0 + t];
        }
    for (gs_int t = 0; t < A.ell_w; t++) { /* or the ELL copy: the row's entries, then -1 / 0 */
        size_t q = (size_t)t * (size_t)n + (size_t)i;
        A.ell_ci[q] = t < len ? A.T.colind[in0 + t] : -1;
        A.ell_val[q] = t < len ? (V)A.T.val[in0 + t] : (V)0;
    }
}

/* Step 3, the entries of the long rows: a warp per long row (after jac_fill_kernel listed them). */
template <typename V>
static __global__ void jac_fill_long_kernel(jac_fill_args<V> A, gs_int nlong)
{
    gs_int t = (gs_int)((blockIdx.x * blockDim.x + threadIdx.x) / JAC_WARP);
    gs_int lane = (gs_int)(threadIdx.x % JAC_WARP);
    if (t >= nlong) return;
    gs_int i = A.long_rows[t];
    gs_int in0, out0, len;
    jac_off_run(A.lower, A.unit, i, A.T.rowptr[i], A.T.rowptr[i + 1], &in0, &out0, &len);
    for (gs_int k = lane; k < len; k += JAC_WARP) {
        A.ci[out0 + k] = A.T.colind[in0 + k];
        A.val[out0 + k] = (V)A.T.val[in0 + k];
    }
}


/* The analysis work space: the uploaded CSR (host factors), the long flags and their scan, the counts
 * and CUB's scratch. Returns its size. */
struct jac_work {
    gs_int *rowptr, *colind;
    double *val;
    gs_int *lflag, *lpos;
    jac_stats *stats;
    void *cub;
};

static size_t jac_work_carve(char *base, size_t n, size_t nnz, bool upload, size_t cub_bytes, jac_work *W)
{
    gs_carver c = {base, 0};
    memset(W, 0, sizeof *W);
    if (upload) {
        W->rowptr = c.take<gs_int>(n + 1);
        W->colind = c.take<gs_int>(nnz);
        W->val = c.take<double>(nnz);
    }
    W->lflag = c.take<gs_int>(n + 1);
    W->lpos = c.take<gs_int>(n + 1);
    W->stats = c.take<jac_stats>(1);
    W->cub = c.take<char>(cub_bytes);
    return c.off;
}

/* The solver's arrays in d->arena (sizes from d): returns the size; sets the pointers when base is set.
 * The factor's part (rp, ci, values, dinv) is also counted in d->factor_bytes. */
static size_t jac_arena_carve(char *base, jac_cuda_data *d, bool unit)
{
    gs_carver c = {base, 0};
    size_t n = (size_t)d->n, nnz = (size_t)d->nnz_off, vsize = d->single ? sizeof(float) : sizeof(double);
    size_t row_blocks = (n + (size_t)d->threads - 1) / (size_t)d->threads;
    d->rp = c.take<gs_int>(n + 1);
    /* the entries: CSR, or only the ELL copy (below) when the synchronous sweep reads that */
    d->ci = c.take<gs_int>(d->ell_w > 0 ? 0 : nnz);
    d->val = c.take<char>(d->ell_w > 0 ? 0 : nnz * vsize);
    d->dinv = unit ? NULL : c.take<char>(n * vsize);
    d->factor_bytes = (long long)((n + 1 + nnz) * sizeof(gs_int) + (nnz + (unit ? 0 : n)) * vsize);
    d->long_rows = c.take<gs_int>((size_t)d->nlong);
    d->blk_long = d->in_place ? c.take<gs_int>(row_blocks + 1) : NULL;
    d->w = d->in_place ? NULL : c.take<double>(n);
    d->ell_ci = c.take<gs_int>((size_t)d->ell_w * n);
    d->ell_val = c.take<char>((size_t)d->ell_w * n * vsize);
    if (d->ell_w > 0) /* the synchronous sweep streams the ELL copy instead of the CSR entries */
        d->factor_bytes = (long long)((size_t)d->ell_w * n * (sizeof(gs_int) + vsize) + (unit ? 0 : n) * vsize);
    return c.off;
}

/* T's CSR from host memory into the work space on the backend's stream, through the pinned staging
 * buffer (core/staging_cuda.h: ~3x the bandwidth of a pageable copy); returns once every byte has left
 * the staging buffer, which is given back before the build kernels run. */
static gs_status jac_upload_factor(const gs_csr *T, const jac_work *W, cudaStream_t s)
{
    gs_status st = GS_OK;
    gs_stage U;
    const size_t n = (size_t)T->nrows, nnz = (size_t)T->nnz;
    memset(&U, 0, sizeof U);
    GS_TRY(gs_stage_begin(&U, (n + 1) * sizeof(gs_int) + nnz * (sizeof(gs_int) + sizeof(double))));
    GS_TRY(gs_stage_copy(&U, W->rowptr, T->rowptr, (n + 1) * sizeof(gs_int), s));
    if (nnz > 0) {
        GS_TRY(gs_stage_copy(&U, W->colind, T->colind, nnz * sizeof(gs_int), s));
        GS_TRY(gs_stage_copy(&U, W->val, T->val, nnz * sizeof(double), s));
    }
cleanup:
    {
        gs_status se = gs_stage_end(&U);
        if (st == GS_OK) st = se;
    }
    return st;
}

/* The device row pass flagged `bad` (< n) first: gs_ts_check_rows on a host copy of rows 0 .. bad gives
 * the error of the first faulty row with exactly gs_trisolve_check_factor's message. Rows before `bad`
 * are valid, so rowptr[bad] lies in 0 .. nnz and their entries end there; row bad's entries are copied
 * when its row pointers are in range (otherwise the check stops at them). */
static gs_status jac_report_fault(gs_trisolve *ts, const jac_src *T, gs_int bad)
{
    const char *side = ts->uplo == GS_LOWER ? "lower" : "upper";
    gs_status st = GS_OK;
    gs_csr H = {0};
    gs_int m = 0;
    GS_TRY(GS_MALLOC(H.rowptr, (size_t)bad + 2));
    GS_TRY(gs_backend_download(ts->be, H.rowptr, T->rowptr, ((size_t)bad + 2) * sizeof(gs_int)));
    {
        gs_int a = H.rowptr[bad], e = H.rowptr[bad + 1];
        if (a < 0 || a > T->nnz)
            GS_FAIL(GS_ERR_INTERNAL, "the %s factor's row %d (1-based) starts at entry %d, outside 0..%d, although "
                                     "the rows before it passed the device check", side, (int)bad + 1, (int)a,
                    (int)T->nnz);
        m = (e >= a && e <= T->nnz) ? e : a;
    }
    GS_TRY(GS_MALLOC(H.colind, m));
    GS_TRY(GS_MALLOC(H.val, m));
    if (m > 0) {
        GS_TRY(gs_backend_download(ts->be, H.colind, T->colind, (size_t)m * sizeof(gs_int)));
        GS_TRY(gs_backend_download(ts->be, H.val, T->val, (size_t)m * sizeof(double)));
    }
    H.nrows = H.ncols = T->n;
    H.nnz = T->nnz; /* the bound of the row-pointer check; only entries below m are read */
    GS_TRY(gs_ts_check_rows(&H, ts->uplo, ts->unit_diag, bad + 1));
    GS_FAIL(GS_ERR_INTERNAL, "the device check flagged row %d (1-based) of the %s factor but the host check finds no "
                             "fault in rows 1..%d", (int)bad + 1, side, (int)bad + 1);
cleanup:
    gs_csr_free(&H);
    return st;
}

/* Step 3 with value type V: the solver's arrays from T (checked) and the scanned long flags. */
template <typename V>
static gs_status jac_fill(const jac_cuda_data *d, const jac_src &T, bool lower, bool unit, const gs_int *lpos,
                          cudaStream_t s)
{
    jac_fill_args<V> A;
    A.T = T;
    A.lower = lower;
    A.unit = unit;
    A.long_row = d->long_row;
    A.rows_per_block = d->threads;
    A.row_blocks = (d->n + d->threads - 1) / d->threads;
    A.lpos = lpos;
    A.rp = d->rp;
    A.ci = d->ci;
    A.long_rows = d->long_rows;
    A.blk_long = d->blk_long;
    A.val = (V *)d->val;
    A.dinv = (V *)d->dinv;
    A.ell_w = d->ell_w;
    A.ell_ci = d->ell_ci;
    A.ell_val = (V *)d->ell_val;
    /* rows 0 .. n: pointers, 1/diagonal, long-row list, block offsets, short rows' entries */
    unsigned blocks = (unsigned)(((size_t)d->n + JAC_BUILD_THREADS) / JAC_BUILD_THREADS);
    jac_fill_kernel<V><<<blocks, JAC_BUILD_THREADS, 0, s>>>(A);
    GS_CALL(GS_CUDA_LAUNCHED("jac_fill_kernel"));
    if (d->nlong > 0) { /* long rows' entries, a warp each */
        size_t warps = JAC_BUILD_THREADS / JAC_WARP;
        blocks = (unsigned)(((size_t)d->nlong + warps - 1) / warps);
        jac_fill_long_kernel<V><<<blocks, JAC_BUILD_THREADS, 0, s>>>(A, d->nlong);
        GS_CALL(GS_CUDA_LAUNCHED("jac_fill_long_kernel"));
    }
    return GS_OK;
}

/* The analysis of both entry points: hT (host factor, rows checked by gs_trisolve_analyse; uploaded) or
 * dT (device factor, header checked by gs_trisolve_analyse_dev; rows checked here). */
static gs_status jac_analyse_any(gs_trisolve *ts, const gs_csr *hT, const gs_csr_dev *dT)
{
    jac_cuda_data *d = (jac_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    void *work = NULL;
    jac_work W;
    jac_stats hs;
    jac_src T;
    const bool unit = ts->unit_diag, lower = ts->uplo == GS_LOWER;
    double t0 = gs_wtime(), t1 = t0;

    memset(&W, 0, sizeof W);
    memset(&hs, 0, sizeof hs);
    memset(&T, 0, sizeof T);
    jac_release(ts, d);
    gs_jacobi_layout(&d->long_row, &d->threads, &d->local_sweeps);
    if (d->threads < JAC_WARP || d->threads > 1024 || d->threads % JAC_WARP != 0 || d->local_sweeps < 1)
        GS_FAIL(GS_ERR_INTERNAL, "Jacobi layout: %d rows per block and %d local sweeps; expected a multiple of "
                                 "32 up to 1024 and at least 1", (int)d->threads, (int)d->local_sweeps);
    d->in_place = gs_jacobi_in_place(ts);
    d->descending = gs_jacobi_descending(ts);
    d->single = ts->prm.single;
    d->from_device = hT == NULL;
    d->sweeps = ts->prm.sweeps;
    T.n = hT ? hT->nrows : dT->nrows;
    T.nnz = hT ? hT->nnz : dT->nnz;
    d->n = T.n;
    d->nnz_off = d->nlong = d->max_row = 0;
    d->factor_bytes = 0;
    d->time_upload = d->time_build = d->time_graph = 0.0;
    if (!d->args) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(jac_args)));
        d->args = (jac_args *)p;
    }
    d->last_b = NULL; /* the graph is new: set the pointers at the next solve */
    d->last_x = NULL;

    if (T.n > 0) {
        const size_t n = (size_t)T.n;
        const unsigned blocks = (unsigned)((n + JAC_BUILD_THREADS) / JAC_BUILD_THREADS); /* threads for 0 .. n */
        size_t cub_bytes = 0;
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, cub_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                     (int)n + 1, s)));
        GS_TRY(gs_backend_alloc(be, &work, jac_work_carve(NULL, n, (size_t)T.nnz, hT != NULL, cub_bytes, &W)));
        jac_work_carve((char *)work, n, (size_t)T.nnz, hT != NULL, cub_bytes, &W);
        if (hT) {
            t1 = gs_wtime();
            GS_TRY(jac_upload_factor(hT, &W, s));
            d->time_upload = gs_wtime() - t1; /* host-side wall time of the copies (small ones: until queued) */
            T.rowptr = W.rowptr;
            T.colind = W.colind;
            T.val = W.val;
        } else {
            T.rowptr = dT->rowptr;
            T.colind = dT->colind;
            T.val = dT->val;
        }
        t1 = gs_wtime();

        /* 1. row pass: lengths, long flags, counts (device factors: the row check) */
        jac_stats_init_kernel<<<1, 1, 0, s>>>(W.stats, T.n);
        GS_TRY(GS_CUDA_LAUNCHED("jac_stats_init_kernel"));
        if (hT)
            jac_rows_kernel<false><<<blocks, JAC_BUILD_THREADS, 0, s>>>(T, lower, unit, d->long_row, W.lflag, W.stats);
        else
            jac_rows_kernel<true><<<blocks, JAC_BUILD_THREADS, 0, s>>>(T, lower, unit, d->long_row, W.lflag, W.stats);
        GS_TRY(GS_CUDA_LAUNCHED("jac_rows_kernel"));
        /* 2. lpos = exclusive scan of the long flags: a long row's place in the list */
        GS_TRY(GS_CUDA(
            cub::DeviceScan::ExclusiveSum(W.cub, cub_bytes, (const gs_int *)W.lflag, W.lpos, (int)n + 1, s)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&hs, W.stats, sizeof hs, cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        if (hs.bad_row < T.n) GS_TRY(jac_report_fault(ts, &T, (gs_int)hs.bad_row));
        d->nnz_off = unit ? T.nnz : T.nnz - T.n; /* a checked factor stores one diagonal per row, or none */
        if (d->nnz_off < 0)
            GS_FAIL(GS_ERR_INTERNAL, "Jacobi split: factor with n = %d has only %d entries", (int)T.n, (int)T.nnz);
        d->nlong = hs.nlong;
        d->max_row = hs.max_row;
        gs_jacobi_sweep_shape(T.n, (long long)d->nnz_off, d->max_row, d->in_place, &ts->prm.jacobi, &d->lanes,
                              &d->ell_w);

        /* 3. the solver's arrays */
        GS_TRY(gs_backend_alloc(be, &d->arena, jac_arena_carve(NULL, d, unit)));
        jac_arena_carve((char *)d->arena, d, unit);
        if (d->single) GS_TRY(jac_fill<float>(d, T, lower, unit, W.lpos, s));
        else GS_TRY(jac_fill<double>(d, T, lower, unit, W.lpos, s));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s))); /* built: the work space may go */
        d->time_build = gs_wtime() - t1;
    }

    t1 = gs_wtime();
    d->launches = d->in_place ? 1 + d->sweeps : (d->sweeps > 0 ? d->sweeps : 1);
    if (T.n > 0 && d->launches <= JAC_GRAPH_MAX_LAUNCHES) GS_TRY(jac_capture(d, unit));
    d->time_graph = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
cleanup:
    if (work) {
        if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError(); /* no kernel reads it any more */
        gs_backend_free(be, work);
    }
    if (st != GS_OK) jac_release(ts, d);
    return st;
}

static gs_status jac_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    GS_CALL(jac_analyse_any(ts, T, NULL));
    return GS_OK;
}

static gs_status jac_cuda_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T)
{
    GS_CALL(jac_analyse_any(ts, NULL, T));
    return GS_OK;
}

/* ================================================================ solve, view */

static gs_status jac_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    jac_cuda_data *d = (jac_cuda_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    /* The pointer update can be skipped when b and x are those of the previous solve, unless this
     * solve is being captured into an outer graph (its replays must set them themselves). */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CALL(GS_CUDA(cudaStreamIsCapturing(s, &capture)));
    if (b->data != d->last_b || x->data != d->last_x || capture != cudaStreamCaptureStatusNone) {
        jac_set_args_kernel<<<1, 1, 0, s>>>(d->args, b->data, x->data);
        GS_CALL(GS_CUDA_LAUNCHED("jac_set_args_kernel"));
        d->last_b = b->data;
        d->last_x = x->data;
    }
    if (d->exec) GS_CALL(GS_CUDA(cudaGraphLaunch(d->exec, s)));
    else GS_CALL(jac_enqueue(d, ts->unit_diag, s));
    return GS_OK;
}

static void jac_cuda_destroy(gs_trisolve *ts)
{
    jac_cuda_data *d = (jac_cuda_data *)ts->data;
    if (!d) return;
    jac_release(ts, d);
    gs_ts_free_array(ts->be, &d->args);
    gs_free(&ts->data);
}

static void jac_cuda_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const jac_cuda_data *d = (const jac_cuda_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation",
                        d->in_place ? "cuda block-asynchronous Jacobi (in place, relaxed GPU-scope loads)"
                                    : "cuda Jacobi sweeps (fused CSR kernel, thread/warp per row)");
    gs_jacobi_view_common(ts, rep, prefix, d->nlong, d->max_row);
    gs_ts_report_string(rep, prefix, "precision", d->single ? "single" : "double");
    gs_ts_report_int(rep, prefix, "nnz_offdiag", d->nnz_off);
    gs_ts_report_int(rep, prefix, "factor_bytes", d->factor_bytes);
    gs_ts_report_int(rep, prefix, "kernels_per_solve", d->launches);
    gs_ts_report_int(rep, prefix, "row_lanes", d->lanes); /* threads per short row of a synchronous sweep */
    gs_ts_report_int(rep, prefix, "ell_width", d->ell_w); /* the synchronous sweep's ELL copy; 0: CSR */
    gs_ts_report_string(rep, prefix, "graph", d->exec ? "yes" : "no (launched directly)");
    gs_ts_report_string(rep, prefix, "factor_source", d->from_device ? "device (analyse_dev)" : "host (uploaded)");
    gs_ts_report_string(rep, prefix, "upload_path", d->from_device ? "none" : "pageable");
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "build_time", d->time_build);
    gs_ts_report_double(rep, prefix, "graph_time", d->time_graph);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops jac_cuda_ops = {jac_cuda_analyse, jac_cuda_solve, jac_cuda_destroy, jac_cuda_view,
                                             jac_cuda_analyse_dev};

gs_status gs_trisolve_create_jacobi_cuda(gs_trisolve *ts)
{
    jac_cuda_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "jacobi_cuda needs a cuda backend");
    /* the asynchronous result depends on the block timing: a preconditioner built on it changes between
     * applications (FGMRES) */
    ts->variable = gs_jacobi_in_place(ts);
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &jac_cuda_ops;
    return GS_OK;
}
