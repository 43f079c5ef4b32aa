/* Jacobi triangular solves on the GPU, x ~ T^{-1} b (jacobi_ref.c is the host twin and says the math):
 *   jacobi        x_0 = D^{-1} b, then `sweeps` times x <- D^{-1} (b - (T - D) x), ONE fused kernel per
 *                 sweep that reads the factor once: off-diagonal CSR, a thread per row, and a warp per
 *                 row for the rows longer than the layout's threshold (extra blocks of the same launch).
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
 * The per-solve launch sequence is captured once into a CUDA graph in analyse (when it has at most
 * JAC_GRAPH_MAX_LAUNCHES kernels; longer sequences are launched directly). As in levelset_cuda.cu the
 * kernels read b and x from a small device struct that a one-thread kernel sets before the replay when
 * the pointers change, so any vectors may be used and a solve may itself be captured by a caller. */
#include <cuda_runtime.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

/* ---- the private interface of jacobi_ref.c and jacobi_cuda.cu (declared identically in both) ---- */
extern "C" {
gs_status gs_trisolve_create_jacobi_cuda(gs_trisolve *ts);
gs_status gs_jacobi_split(const gs_csr *T, bool unit_diag, gs_csr *N, double **dinv);
void gs_jacobi_layout(gs_int *long_row, gs_int *rows_per_block, gs_int *local_sweeps);
bool gs_jacobi_in_place(const gs_trisolve *ts);
bool gs_jacobi_descending(const gs_trisolve *ts);
void gs_jacobi_view_common(const gs_trisolve *ts, gs_report *rep, const char *prefix, gs_int nlong,
                           gs_int max_row);
}

#define JAC_GRAPH_MAX_LAUNCHES 64 /* longer launch sequences are not worth a graph of that many nodes */
#define JAC_WARP 32

/* The uploaded factor, passed by value to the kernels. */
struct jac_dev {
    gs_int n;          /* rows */
    gs_int row_blocks; /* ceil(n / threads per block): the thread-per-row (or row-range) blocks */
    gs_int nlong;      /* rows handled by a warp */
    gs_int long_row;   /* a row is long when it has more off-diagonal entries than this */
    const gs_int *__restrict__ rp;        /* n + 1: off-diagonal CSR */
    const gs_int *__restrict__ ci;
    const double *__restrict__ val;
    const double *__restrict__ dinv;      /* n, 1 / t_ii (NULL for a unit diagonal) */
    const gs_int *__restrict__ long_rows; /* nlong, increasing */
    const gs_int *__restrict__ blk_long;  /* row_blocks + 1: long rows of row block r are
                                             long_rows[blk_long[r] .. blk_long[r+1]-1] (async only) */
    double *w;                            /* n: the second Jacobi buffer (synchronous only) */
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
    int sweeps;
    gs_int *rp, *ci, *long_rows, *blk_long;
    double *val, *dinv, *w;
    jac_args *args;
    cudaGraphExec_t exec; /* NULL: launched directly */
    const double *last_b;
    double *last_x;
    gs_int launches;
    double time_analyse, time_upload, time_graph;
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
template <bool UNIT>
static __device__ __forceinline__ double jac_x0(const jac_dev &M, const double *b, gs_int j)
{
    return UNIT ? b[j] : b[j] * M.dinv[j];
}

/* sum over the warp, lane 0 holds the result (the tree jac_row in jacobi_ref.c reproduces); every lane
 * of the warp must call it */
static __device__ __forceinline__ double jac_warp_sum(double p)
{
    for (int off = JAC_WARP / 2; off > 0; off >>= 1) p += __shfl_down_sync(0xffffffffu, p, off);
    return p;
}

/* x = D^{-1} b (sweeps = 0 for jacobi; the start of the asynchronous iteration) */
template <bool UNIT>
static __global__ void jac_start_kernel(jac_dev M, const jac_args *args)
{
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < M.n) args->x[i] = jac_x0<UNIT>(M, args->b, i);
}

/* One synchronous sweep  out_i = D^{-1} (b_i - sum_{j != i} t_ij in_j)  (in = x_0 = D^{-1} b when FIRST).
 * Blocks [0, row_blocks): a thread per row (long rows skipped); blocks after them: a warp per long row.
 * in_w / out_w select the buffers: 1 = the work vector w, 0 = the caller's x (never equal). */
template <bool UNIT, bool FIRST>
static __global__ void jac_sweep_kernel(jac_dev M, const jac_args *args, int in_w, int out_w)
{
    const double *b = args->b;
    const double *in = in_w ? M.w : args->x;
    double *out = out_w ? M.w : args->x;
    if ((gs_int)blockIdx.x < M.row_blocks) {
        gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
        if (i >= M.n) return;
        gs_int a = M.rp[i], e = M.rp[i + 1];
        if (e - a > M.long_row) return; /* a warp of the tail blocks does this row */
        double s = b[i];
        for (gs_int q = a; q < e; q++) {
            gs_int j = M.ci[q];
            s -= M.val[q] * (FIRST ? jac_x0<UNIT>(M, b, j) : in[j]);
        }
        out[i] = UNIT ? s : s * M.dinv[i];
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
            p += M.val[q] * (FIRST ? jac_x0<UNIT>(M, b, j) : in[j]);
        }
        p = jac_warp_sum(p);
        if (lane == 0) out[i] = UNIT ? b[i] - p : (b[i] - p) * M.dinv[i];
    }
}

/* One global sweep of block-asynchronous Jacobi, in place on x. Block blockIdx.x owns row block r
 * (descending: the mirror image) and relaxes its rows local_sweeps times:
 *   v_i = D^{-1} (b_i - sum_{j != i} t_ij x_j)  for every own row (x read as it is now), barrier,
 *   x_i = v_i, barrier.
 * Short rows: a thread each (thread k of the block <-> row r*R + k); long rows of the block: its warps in
 * turn, their values staged in shared memory (at most R of them). Every barrier is reached by all threads
 * of the block: the loops around them have block-uniform bounds. */
template <bool UNIT>
static __global__ void jac_async_kernel(jac_dev M, const jac_args *args, int descending, int local_sweeps)
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
        if (!UNIT) di = M.dinv[i];
    }
    gs_int l0 = M.blk_long[r], l1 = M.blk_long[r + 1];
    gs_int lane = (gs_int)(threadIdx.x % JAC_WARP), warp = (gs_int)(threadIdx.x / JAC_WARP);
    gs_int warps = (gs_int)(blockDim.x / JAC_WARP);

    for (int ls = 0; ls < local_sweeps; ls++) {
        double v = 0.0;
        if (mine) {
            double s = bi;
            for (gs_int q = a; q < e; q++) s -= M.val[q] * jac_load_fresh(x + M.ci[q]);
            v = UNIT ? s : s * di;
        }
        for (gs_int t = l0 + warp; t < l1; t += warps) { /* warp-uniform bounds */
            gs_int k = M.long_rows[t];
            gs_int ka = M.rp[k], ke = M.rp[k + 1];
            double p = 0.0;
            for (gs_int q = ka + lane; q < ke; q += JAC_WARP) p += M.val[q] * jac_load_fresh(x + M.ci[q]);
            p = jac_warp_sum(p);
            if (lane == 0) s_long[t - l0] = UNIT ? b[k] - p : (b[k] - p) * M.dinv[k];
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

static jac_dev jac_device_view(const jac_cuda_data *d)
{
    jac_dev M;
    M.n = d->n;
    M.row_blocks = (d->n + d->threads - 1) / d->threads;
    M.nlong = d->nlong;
    M.long_row = d->long_row;
    M.rp = d->rp;
    M.ci = d->ci;
    M.val = d->val;
    M.dinv = d->dinv;
    M.long_rows = d->long_rows;
    M.blk_long = d->blk_long;
    M.w = d->w;
    return M;
}

/* The kernels of one solve on stream s (captured into the graph, or launched directly). */
static gs_status jac_enqueue(const jac_cuda_data *d, bool unit, cudaStream_t s)
{
    jac_dev M = jac_device_view(d);
    unsigned threads = (unsigned)d->threads;
    unsigned row_blocks = (unsigned)M.row_blocks;
    if (d->n == 0) return GS_OK;

    if (d->in_place || d->sweeps == 0) {
        /* x = D^{-1} b */
        if (unit) jac_start_kernel<true><<<row_blocks, threads, 0, s>>>(M, d->args);
        else jac_start_kernel<false><<<row_blocks, threads, 0, s>>>(M, d->args);
        GS_CALL(TS_LAUNCHED("jac_start_kernel"));
    }
    if (d->in_place) {
        /* sweeps x (in place) <- D^{-1} (b - (T - D) x), newest values */
        size_t shmem = (size_t)d->threads * sizeof(double);
        for (int k = 0; k < d->sweeps; k++) {
            if (unit)
                jac_async_kernel<true><<<row_blocks, threads, shmem, s>>>(M, d->args, d->descending ? 1 : 0,
                                                                          (int)d->local_sweeps);
            else
                jac_async_kernel<false><<<row_blocks, threads, shmem, s>>>(M, d->args, d->descending ? 1 : 0,
                                                                           (int)d->local_sweeps);
            GS_CALL(TS_LAUNCHED("jac_async_kernel"));
        }
        return GS_OK;
    }
    /* sweep k (1-based) writes x when sweeps - k is even, else w; it reads what sweep k-1 wrote */
    unsigned warps_per_block = threads / JAC_WARP;
    unsigned blocks = row_blocks + (unsigned)((d->nlong + (gs_int)warps_per_block - 1) / (gs_int)warps_per_block);
    for (int k = 1; k <= d->sweeps; k++) {
        int out_w = (d->sweeps - k) % 2 != 0;
        int in_w = !out_w;
        if (k == 1) {
            if (unit) jac_sweep_kernel<true, true><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
            else jac_sweep_kernel<false, true><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
        } else {
            if (unit) jac_sweep_kernel<true, false><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
            else jac_sweep_kernel<false, false><<<blocks, threads, 0, s>>>(M, d->args, in_w, out_w);
        }
        GS_CALL(TS_LAUNCHED("jac_sweep_kernel"));
    }
    return GS_OK;
}

/* Capture the launch sequence on a private stream and instantiate it. */
static gs_status jac_capture(jac_cuda_data *d, bool unit)
{
    gs_status st = GS_OK;
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    bool capturing = false;

    GS_TRY(TS_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)));
    GS_TRY(TS_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)));
    capturing = true;
    GS_TRY(jac_enqueue(d, unit, cs));
    capturing = false;
    GS_TRY(TS_CUDA(cudaStreamEndCapture(cs, &g)));
    GS_TRY(TS_CUDA(cudaGraphInstantiate(&d->exec, g, 0)));
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
    gs_ts_free_array(be, &d->rp);
    gs_ts_free_array(be, &d->ci);
    gs_ts_free_array(be, &d->val);
    gs_ts_free_array(be, &d->dinv);
    gs_ts_free_array(be, &d->long_rows);
    gs_ts_free_array(be, &d->blk_long);
    gs_ts_free_array(be, &d->w);
}

static gs_status jac_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    jac_cuda_data *d = (jac_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    gs_csr N = {0};
    double *dinv = NULL;
    gs_int *long_rows = NULL, *blk_long = NULL;
    double t0 = gs_wtime(), t1 = t0;
    gs_int n = T->nrows;

    jac_release(ts, d);
    gs_jacobi_layout(&d->long_row, &d->threads, &d->local_sweeps);
    if (d->threads < JAC_WARP || d->threads > 1024 || d->threads % JAC_WARP != 0 || d->local_sweeps < 1)
        GS_FAIL(GS_ERR_INTERNAL, "Jacobi layout: %d rows per block and %d local sweeps; expected a multiple of "
                                 "32 up to 1024 and at least 1", (int)d->threads, (int)d->local_sweeps);
    d->in_place = gs_jacobi_in_place(ts);
    d->descending = gs_jacobi_descending(ts);
    d->sweeps = ts->prm.sweeps;
    d->n = n;

    /* host: off-diagonal CSR, 1/diagonal, the long rows and (async) each row block's share of them */
    GS_TRY(gs_jacobi_split(T, ts->unit_diag, &N, &dinv));
    d->nnz_off = N.nnz;
    d->nlong = 0;
    d->max_row = 0;
    for (gs_int i = 0; i < n; i++) {
        gs_int len = N.rowptr[i + 1] - N.rowptr[i];
        if (len > d->long_row) d->nlong++;
        if (len > d->max_row) d->max_row = len;
    }
    GS_TRY(GS_MALLOC(long_rows, d->nlong));
    {
        gs_int row_blocks = (n + d->threads - 1) / d->threads, t = 0;
        GS_TRY(GS_MALLOC(blk_long, (size_t)row_blocks + 1));
        for (gs_int r = 0; r < row_blocks; r++) {
            blk_long[r] = t;
            gs_int i1 = (r + 1) * d->threads < n ? (r + 1) * d->threads : n;
            for (gs_int i = r * d->threads; i < i1; i++)
                if (N.rowptr[i + 1] - N.rowptr[i] > d->long_row) long_rows[t++] = i;
        }
        blk_long[row_blocks] = t;
        t1 = gs_wtime();
        GS_TRY(gs_ts_upload_array(be, &d->rp, N.rowptr, (size_t)n + 1));
        GS_TRY(gs_ts_upload_array(be, &d->ci, N.colind, (size_t)N.nnz));
        GS_TRY(gs_ts_upload_array(be, &d->val, N.val, (size_t)N.nnz));
        if (!ts->unit_diag) GS_TRY(gs_ts_upload_array(be, &d->dinv, dinv, (size_t)n));
        GS_TRY(gs_ts_upload_array(be, &d->long_rows, long_rows, (size_t)d->nlong));
        if (d->in_place) GS_TRY(gs_ts_upload_array(be, &d->blk_long, blk_long, (size_t)row_blocks + 1));
    }
    if (!d->in_place) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, (size_t)n * sizeof(double)));
        d->w = (double *)p;
    }
    if (!d->args) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(jac_args)));
        d->args = (jac_args *)p;
    }
    d->last_b = NULL; /* the graph is new: set the pointers at the next solve */
    d->last_x = NULL;
    d->time_upload = gs_wtime() - t1;

    t1 = gs_wtime();
    d->launches = d->in_place ? 1 + d->sweeps : (d->sweeps > 0 ? d->sweeps : 1);
    if (n > 0 && d->launches <= JAC_GRAPH_MAX_LAUNCHES) GS_TRY(jac_capture(d, ts->unit_diag));
    d->time_graph = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
cleanup:
    gs_csr_free(&N);
    gs_free(&dinv);
    gs_free(&long_rows);
    gs_free(&blk_long);
    if (st != GS_OK) jac_release(ts, d);
    return st;
}

static gs_status jac_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    jac_cuda_data *d = (jac_cuda_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    /* The pointer update can be skipped when b and x are those of the previous solve, unless this
     * solve is being captured into an outer graph (its replays must set them themselves). */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CALL(TS_CUDA(cudaStreamIsCapturing(s, &capture)));
    if (b->data != d->last_b || x->data != d->last_x || capture != cudaStreamCaptureStatusNone) {
        jac_set_args_kernel<<<1, 1, 0, s>>>(d->args, b->data, x->data);
        GS_CALL(TS_LAUNCHED("jac_set_args_kernel"));
        d->last_b = b->data;
        d->last_x = x->data;
    }
    if (d->exec) GS_CALL(TS_CUDA(cudaGraphLaunch(d->exec, s)));
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
    gs_ts_report_int(rep, prefix, "nnz_offdiag", d->nnz_off);
    gs_ts_report_int(rep, prefix, "kernels_per_solve", d->launches);
    gs_ts_report_string(rep, prefix, "graph", d->exec ? "yes" : "no (launched directly)");
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "graph_time", d->time_graph);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops jac_cuda_ops = {jac_cuda_analyse, jac_cuda_solve, jac_cuda_destroy, jac_cuda_view, NULL};

gs_status gs_trisolve_create_jacobi_cuda(gs_trisolve *ts)
{
    jac_cuda_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "jacobi_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &jac_cuda_ops;
    return GS_OK;
}
