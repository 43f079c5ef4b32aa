/* The cuda backend: vectors in device memory; BLAS-1 and gathers as grid-stride kernels; dot, dot2
 * and nrm2 as two-stage block reductions; Krylov-basis products V'w and V h through cublasDgemv;
 * y = alpha A x + beta y through our own CSR kernels (core/spmv_cuda.cu; cuSPARSE SpMV on request);
 * timers as CUDA events.
 *
 * Everything is enqueued on one non-blocking stream (cuBLAS and cuSPARSE are bound to it), so the
 * ops are ordered among themselves and asynchronous to the host. The only host waits are where a
 * scalar must reach the host (dot, dot2, nrm2, mdot), in upload/download, synchronize and
 * timer_stop. Scalars come back in one small copy into pinned memory.
 *
 * Index maps are checked on the device without a sync: a gather or scatter that meets an index
 * outside its vector writes NaN (gather) or nothing (scatter) and records the first such index in a
 * device-side flag; the next reduction or synchronize reports it as GS_ERR_ARG.
 *
 * The backend works on the device that was current when it was created (gs_backend_cuda_create
 * makes device_id current for the calling thread). Environment knobs for benchmarks:
 * GS_SPMV = own (default) | own:vec=V,rows=R,long=L | cusparse | cusparse-alg1 | cusparse-alg2 picks
 * the SpMV of every matrix (gs_backend_cuda_spmv_select changes it later; the choice is shown at the
 * end of the device name). With cuSPARSE, CSR_ALG2 is the default (bit-wise reproducible run to run,
 * so iteration counts are reproducible; our kernels are too); GS_CUDA_SPMV_ALG=1 selects CSR_ALG1
 * for "cusparse", and alone (GS_SPMV unset) means "cusparse-alg1". */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <math_constants.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/kstate_logic.h"
#include "core/mem.h"
#include "core/spmv_cuda.h"

/* ------------------------------------------------------------------------------------------------ */
/* Backend state.                                                                                    */

#define THREADS 256            /* threads per block of the elementwise kernels and partial sums */
#define RED_MAX_BLOCKS 1024    /* partial sums per reduction (the final stage reduces these) */
#define RED_FINAL_THREADS 1024 /* one block combines the partial sums */
#define RES_CAP_INIT 1024      /* doubles in the result buffer (mdot needs k of them) */
#define STAGE_CAP_INIT 1024    /* doubles in the mgemv coefficient staging buffer */

enum { MAP_GATHER = 1, MAP_SCATTER = 2 };

/* First invalid index met by a gather/scatter kernel; pos == -1 when none. Lives at the start of the
 * result buffer so that it comes back with every reduction result in the same copy. */
typedef struct {
    int pos, index, len, op;
} map_flag;

#define RES_HEADER 16 /* bytes before the result doubles: sizeof(map_flag), keeps them 8-aligned */
static_assert(sizeof(map_flag) == RES_HEADER, "the result doubles start right after the map flag");

/* Work space blocks (gs_backend_cuda_work_alloc): `live` are handed out, `idle` were given back and wait
 * for reuse; held_bytes = the idle ones' bytes. */
typedef struct {
    void *ptr;
    size_t bytes;
} work_block;

#define WORK_IDLE_MAX 64 /* idle blocks kept at most */

typedef struct {
    work_block *live; /* cap_live entries, nlive used */
    work_block idle[WORK_IDLE_MAX]; /* oldest first */
    int nlive, cap_live, nidle;
    size_t held_bytes, held_cap;
} work_cache;

typedef struct {
    int sm_count;
    bool spmv_own;              /* SpMV by our kernels (else cuSPARSE with spmv_alg) */
    gs_spmv_params spmv_prm;    /* forced shape of our kernels (zeros: chosen per matrix) */
    cusparseSpMVAlg_t spmv_alg;
    char spmv_mode[64];         /* the mode string, as selected */
    char gpu_name[128];         /* device name without the SpMV suffix */
    cudaStream_t stream;
    cublasHandle_t cublas;
    cusparseHandle_t cusparse;
    double *partials;    /* device, 2 * RED_MAX_BLOCKS */
    char *res_dev;       /* device: map_flag + res_cap doubles */
    char *res_host;      /* pinned mirror */
    gs_int res_cap;
    double *stage_dev;   /* device copy of mgemv's h */
    double *stage_host;  /* pinned staging of h */
    gs_int stage_cap;
    cudaEvent_t stage_free; /* recorded after the staging copy: the pinned buffer may be reused */
    work_cache work;        /* stream-ordered work space kept for reuse (gs_backend_cuda_work_alloc) */
    bool analysis_pool;     /* analysis work space from cudaMallocAsync's pool (gs_backend_cuda_set_analysis_pool) */
} cuda_ctx;

typedef struct {
    gs_int *rowptr, *colind;
    double *val;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy; /* re-pointed at each call (no allocation in spmv) */
    void *buffer;
    bool empty; /* no rows, no columns or no entries: y = beta y without cuSPARSE */
    gs_spmv_plan *own; /* our kernels (then no cuSPARSE descriptors) */
    char desc[48];     /* which cuSPARSE algorithm, for gs_mat_cuda_spmv_describe */
} cuda_mat;

static cuda_ctx *ctx_of(const gs_backend *be) { return (cuda_ctx *)be->impl; }
static double *res_values(char *res) { return (double *)(res + RES_HEADER); }

static unsigned grid_for(const cuda_ctx *c, gs_int n)
{
    long long b = ((long long)n + THREADS - 1) / THREADS;
    long long cap = (long long)c->sm_count * 16; /* enough resident blocks to saturate memory */
    if (b > cap) b = cap;
    return (unsigned)(b < 1 ? 1 : b);
}

/* ------------------------------------------------------------------------------------------------ */
/* Elementwise kernels (grid-stride; 64-bit loop index so i + stride cannot overflow).              */

#define GRID_STRIDE(i, n)                                                                     \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)(n);    \
         i += (long long)gridDim.x * blockDim.x)

static __global__ void k_set(gs_int n, double a, double *x)
{
    GRID_STRIDE(i, n) x[i] = a;
}

static __global__ void k_scale(gs_int n, double a, double *x)
{
    GRID_STRIDE(i, n) x[i] *= a;
}

static __global__ void k_axpy(gs_int n, double a, const double *x, double *y)
{
    GRID_STRIDE(i, n) y[i] += a * x[i];
}

/* y = a x + b y; b == 0 does not read y (it may hold NaN) */
static __global__ void k_axpby(gs_int n, double a, const double *x, double b, double *y)
{
    if (b == 0.0) {
        GRID_STRIDE(i, n) y[i] = a * x[i];
    } else {
        GRID_STRIDE(i, n) y[i] = a * x[i] + b * y[i];
    }
}

/* z = a x + b y + c z; c == 0 does not read z */
static __global__ void k_axpbypcz(gs_int n, double a, const double *x, double b, const double *y, double c,
                                  double *z)
{
    if (c == 0.0) {
        GRID_STRIDE(i, n) z[i] = a * x[i] + b * y[i];
    } else {
        GRID_STRIDE(i, n) z[i] = a * x[i] + b * y[i] + c * z[i];
    }
}

static __global__ void k_pointwise_mult(gs_int n, const double *x, const double *y, double *z)
{
    GRID_STRIDE(i, n) z[i] = x[i] * y[i];
}

static __device__ void report_bad_index(map_flag *f, long long pos, gs_int index, gs_int len, int op)
{
    if (atomicCAS(&f->pos, -1, (int)pos) == -1) {
        f->index = index;
        f->len = len;
        f->op = op;
    }
}

/* y[i] = x[idx[i]], i < m; an index outside [0, nx) gives NaN and is reported */
static __global__ void k_gather(gs_int m, const double *x, gs_int nx, const gs_int *idx, double *y, map_flag *f)
{
    GRID_STRIDE(i, m)
    {
        gs_int p = idx[i];
        if (p >= 0 && p < nx) {
            y[i] = x[p];
        } else {
            y[i] = CUDART_NAN;
            report_bad_index(f, i, p, nx, MAP_GATHER);
        }
    }
}

/* y[idx[i]] = x[i] for idx[i] >= 0; an index >= ny is skipped and reported */
static __global__ void k_scatter(gs_int m, const double *x, const gs_int *idx, gs_int ny, double *y, map_flag *f)
{
    GRID_STRIDE(i, m)
    {
        gs_int p = idx[i];
        if (p < 0) continue;
        if (p < ny) y[p] = x[i];
        else report_bad_index(f, i, p, ny, MAP_SCATTER);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Reductions: stage 1 gives each block a pair of partial results (s0, s1); stage 2, one block,      */
/* combines them. The order of summation depends only on n, so results are reproducible.            */

enum { RED_DOT, RED_DOT2, RED_SSQ, RED_SSQ_SCALED, RED_AMAX };

/* s0 combines by max for RED_AMAX (s1 then counts non-finite entries), by + otherwise */
template <int MODE> static __device__ double combine0(double a, double b)
{
    return MODE == RED_AMAX ? fmax(a, b) : a + b;
}

/* Block-wide reduction of (s0, s1); the result is valid in thread 0. */
template <int MODE> static __device__ void block_reduce(double &s0, double &s1)
{
    __shared__ double sh0[32], sh1[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        s0 = combine0<MODE>(s0, __shfl_down_sync(0xffffffffu, s0, off));
        s1 += __shfl_down_sync(0xffffffffu, s1, off);
    }
    if (lane == 0) {
        sh0[warp] = s0;
        sh1[warp] = s1;
    }
    __syncthreads();
    if (warp == 0) {
        const unsigned nwarps = (blockDim.x + 31u) >> 5;
        /* 0 is the identity of both + and max over absolute values */
        s0 = lane < nwarps ? sh0[lane] : 0.0;
        s1 = lane < nwarps ? sh1[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) {
            s0 = combine0<MODE>(s0, __shfl_down_sync(0xffffffffu, s0, off));
            s1 += __shfl_down_sync(0xffffffffu, s1, off);
        }
    }
}

/* Stage 1. DOT: s0 = sum a.*b; DOT2: s0 = sum a.*b, s1 = sum c.*d (one pass over all four);
 * SSQ: s0 = sum a.^2; SSQ_SCALED: s0 = sum (a/scale).^2; AMAX: s0 = max |a_i| over finite entries,
 * s1 = number of non-finite entries. out[2*blockIdx.x + {0,1}]. */
template <int MODE>
static __global__ void k_reduce_partial(gs_int n, const double *__restrict__ a, const double *__restrict__ b,
                                        const double *__restrict__ c, const double *__restrict__ d,
                                        double scale, double *out)
{
    double s0 = 0.0, s1 = 0.0;
    GRID_STRIDE(i, n)
    {
        if (MODE == RED_DOT) {
            s0 += a[i] * b[i];
        } else if (MODE == RED_DOT2) {
            s0 += a[i] * b[i];
            s1 += c[i] * d[i];
        } else if (MODE == RED_SSQ) {
            s0 += a[i] * a[i];
        } else if (MODE == RED_SSQ_SCALED) {
            double v = a[i] / scale;
            s0 += v * v;
        } else {
            double v = fabs(a[i]);
            if (isfinite(v)) s0 = fmax(s0, v);
            else s1 += 1.0;
        }
    }
    block_reduce<MODE>(s0, s1);
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = s0;
        out[2 * blockIdx.x + 1] = s1;
    }
}

/* Stage 2: out[0..1] = combination of the nparts pairs in partials. */
template <int MODE> static __global__ void k_reduce_final(int nparts, const double *partials, double *out)
{
    double s0 = 0.0, s1 = 0.0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        s0 = combine0<MODE>(s0, partials[2 * p]);
        s1 += partials[2 * p + 1];
    }
    block_reduce<MODE>(s0, s1);
    if (threadIdx.x == 0) {
        out[0] = s0;
        out[1] = s1;
    }
}

/* Copies the map flag and m result doubles to the host in one transfer, waits, reports a pending
 * invalid index, and returns the values in out (may be NULL when only the flag is wanted). */
static gs_status fetch_results(cuda_ctx *c, gs_int m, double *out)
{
    size_t bytes = RES_HEADER + (size_t)m * sizeof(double);
    GS_CALL(GS_CUDA(cudaMemcpyAsync(c->res_host, c->res_dev, bytes, cudaMemcpyDeviceToHost, c->stream)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream)));
    map_flag f;
    memcpy(&f, c->res_host, sizeof f);
    if (f.pos >= 0) {
        /* clear it so the next check starts clean, then report */
        GS_CALL(GS_CUDA(cudaMemsetAsync(c->res_dev, 0xff, sizeof(map_flag), c->stream)));
        return GS_ERROR(GS_ERR_ARG,
                        "%s: index %d at position %d of the index map is outside the %s vector of length "
                        "%d (detected on the device at the next synchronization after gs_vec_%s)",
                        f.op == MAP_GATHER ? "gather" : "scatter", f.index, f.pos,
                        f.op == MAP_GATHER ? "source" : "destination", f.len,
                        f.op == MAP_GATHER ? "gather" : "scatter");
    }
    if (out && m > 0) memcpy(out, res_values(c->res_host), (size_t)m * sizeof(double));
    return GS_OK;
}

template <int MODE>
static gs_status launch_reduce(cuda_ctx *c, gs_int n, const double *a, const double *b, const double *cc,
                               const double *d, double scale)
{
    double *dst = res_values(c->res_dev);
    long long want = ((long long)n + THREADS - 1) / THREADS;
    int blocks = (int)(want < 1 ? 1 : (want > RED_MAX_BLOCKS ? RED_MAX_BLOCKS : want));
    if (blocks == 1) { /* one block covers it: write the result directly, skip stage 2 */
        k_reduce_partial<MODE><<<1, THREADS, 0, c->stream>>>(n, a, b, cc, d, scale, dst);
        GS_CALL(GS_CUDA_LAUNCHED("k_reduce_partial"));
        return GS_OK;
    }
    k_reduce_partial<MODE><<<blocks, THREADS, 0, c->stream>>>(n, a, b, cc, d, scale, c->partials);
    GS_CALL(GS_CUDA_LAUNCHED("k_reduce_partial"));
    k_reduce_final<MODE><<<1, RED_FINAL_THREADS, 0, c->stream>>>(blocks, c->partials, dst);
    GS_CALL(GS_CUDA_LAUNCHED("k_reduce_final"));
    return GS_OK;
}

/* out[0..1] = reduction MODE over n entries, on the host. */
template <int MODE>
static gs_status reduce_to_host(cuda_ctx *c, gs_int n, const double *a, const double *b, const double *cc,
                        const double *d, double scale, double out[2])
{
    GS_CALL(launch_reduce<MODE>(c, n, a, b, cc, d, scale));
    GS_CALL(fetch_results(c, 2, out));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Memory.                                                                                           */

bool gs_cuda_alloc_retry(int cuda_error)
{
    if ((cudaError_t)cuda_error != cudaErrorMemoryAllocation) return false;
    (void)cudaGetLastError();
    /* the default pool may hold freed work space of the stream-ordered allocations (analysis_pool) */
    int dev = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess || cudaMemPoolTrimTo(pool, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

gs_status gs_cuda_alloc_error(const gs_backend *be, int cuda_error, size_t bytes, const char *what)
{
    const cudaError_t e = (cudaError_t)cuda_error;
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    return GS_ERROR(e == cudaErrorMemoryAllocation ? GS_ERR_DEVICE_MEM : GS_ERR_CUDA,
                    "device allocation of %zu bytes (%.1f MiB)%s%s failed on %s: %s (%s); the device has "
                    "%zu bytes (%.1f MiB) free of %zu (%.1f MiB)",
                    bytes, (double)bytes / 1048576.0, what && what[0] ? " of " : "", what ? what : "",
                    be->device_name, cudaGetErrorName(e), cudaGetErrorString(e), free_b, (double)free_b / 1048576.0,
                    total_b, (double)total_b / 1048576.0);
}

static void work_trim(cuda_ctx *c);

static gs_status cuda_alloc(gs_backend *be, void **p, size_t bytes)
{
    *p = NULL;
    /* like gs_malloc, a zero-byte request still yields a valid pointer */
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation && ctx_of(be) && ctx_of(be)->work.nidle > 0) { /* idle work space first */
        (void)cudaGetLastError();
        work_trim(ctx_of(be));
        e = cudaMalloc(p, bytes ? bytes : 1);
    }
    if (e != cudaSuccess && gs_cuda_alloc_retry((int)e)) e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaSuccess) return GS_OK;
    *p = NULL;
    return gs_cuda_alloc_error(be, (int)e, bytes, NULL);
}

static void cuda_free(gs_backend *be, void *p)
{
    if (p && cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

/* ---- Work space kept for reuse (gs_backend_cuda_work_alloc). A cudaMalloc of a few MiB costs 60-90 us
 * on the H100 and a cudaFree as much, after it has waited for the device: with plain allocations, the
 * merged triangular-solve analysis of the L of poisson3d 100^3 spends 3.1 of its 6.3 ms in 27 allocations
 * and 21 frees (docs/notes-trisolve.md section 3.3). A block given back stays idle and is handed out
 * again to a later request that it fits (at most twice the request); the work queued before it was given
 * back and the work queued after it is handed out again are ordered by the backend's stream, so no
 * synchronization is needed. Sizes are rounded up to
 * 512 bytes, or to 2 MiB from 1 MiB on (the granularity the driver maps large allocations in anyway).
 * Idle blocks go back to CUDA when the backend is destroyed, on gs_backend_cuda_work_trim, before a
 * device allocation that failed is retried, and beyond WORK_IDLE_MAX blocks or held_cap bytes (the oldest
 * first). */
#define WORK_GRAIN_SMALL ((size_t)512)
#define WORK_GRAIN_LARGE ((size_t)2 << 20)

static size_t work_round(size_t bytes)
{
    const size_t g = bytes >= WORK_GRAIN_LARGE / 2 ? WORK_GRAIN_LARGE : WORK_GRAIN_SMALL;
    if (bytes == 0) return g;
    if (bytes > SIZE_MAX - g) return bytes; /* cudaMalloc will refuse it */
    return (bytes + g - 1) / g * g;
}

/* The `drop` oldest idle blocks back to CUDA, after the work queued on the stream. */
static void work_drop_oldest(cuda_ctx *c, int drop)
{
    work_cache *w = &c->work;
    if (drop <= 0) return;
    if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
    for (int k = 0; k < drop; k++) {
        if (cudaFree(w->idle[k].ptr) != cudaSuccess) (void)cudaGetLastError();
        w->held_bytes -= w->idle[k].bytes;
    }
    for (int k = drop; k < w->nidle; k++) w->idle[k - drop] = w->idle[k];
    w->nidle -= drop;
}

static void work_trim(cuda_ctx *c) { work_drop_oldest(c, c->work.nidle); }

gs_status gs_backend_cuda_work_alloc(gs_backend *be, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    if (!be || be->kind != GS_BACKEND_CUDA || !be->impl) return gs_backend_alloc(be, p, bytes);
    cuda_ctx *c = ctx_of(be);
    work_cache *w = &c->work;
    if (w->nlive == w->cap_live) {
        const int cap = w->cap_live ? 2 * w->cap_live : 32;
        GS_CALL(gs_realloc(&w->live, (size_t)cap, sizeof *w->live));
        w->cap_live = cap;
    }
    const size_t want = work_round(bytes);
    int best = -1; /* the smallest idle block that fits, at most twice the request */
    for (int k = 0; k < w->nidle; k++)
        if (w->idle[k].bytes >= want && w->idle[k].bytes / 2 <= want &&
            (best < 0 || w->idle[k].bytes < w->idle[best].bytes))
            best = k;
    work_block b;
    if (best >= 0) {
        b = w->idle[best];
        w->held_bytes -= b.bytes;
        for (int k = best; k + 1 < w->nidle; k++) w->idle[k] = w->idle[k + 1]; /* keep the age order */
        w->nidle--;
    } else {
        b.bytes = want;
        b.ptr = NULL;
        cudaError_t e = cudaMalloc(&b.ptr, want);
        if (e == cudaErrorMemoryAllocation && w->nidle > 0) { /* the idle blocks first */
            (void)cudaGetLastError();
            work_trim(c);
            e = cudaMalloc(&b.ptr, want);
        }
        if (e != cudaSuccess && gs_cuda_alloc_retry((int)e)) e = cudaMalloc(&b.ptr, want);
        if (e != cudaSuccess) return gs_cuda_alloc_error(be, (int)e, bytes, what);
    }
    w->live[w->nlive++] = b;
    *p = b.ptr;
    return GS_OK;
}

void gs_backend_cuda_work_free(gs_backend *be, void *p)
{
    if (!p) return;
    if (!be || be->kind != GS_BACKEND_CUDA || !be->impl) {
        gs_backend_free(be, p);
        return;
    }
    cuda_ctx *c = ctx_of(be);
    work_cache *w = &c->work;
    int k = w->nlive - 1; /* the latest first: work space is mostly given back in reverse order */
    while (k >= 0 && w->live[k].ptr != p) k--;
    if (k < 0) { /* not a work block (a caller's mistake): freed as an ordinary allocation */
        if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
        cuda_free(be, p);
        return;
    }
    const work_block b = w->live[k];
    w->live[k] = w->live[--w->nlive];
    if (b.bytes > w->held_cap) {
        if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
        cuda_free(be, b.ptr);
        return;
    }
    int drop = 0; /* the oldest idle blocks that must go to make room */
    size_t held = w->held_bytes;
    while (drop < w->nidle && (w->nidle - drop >= WORK_IDLE_MAX || held + b.bytes > w->held_cap))
        held -= w->idle[drop++].bytes;
    work_drop_oldest(c, drop);
    w->idle[w->nidle++] = b;
    w->held_bytes += b.bytes;
}

void gs_backend_cuda_work_trim(gs_backend *be)
{
    if (be && be->kind == GS_BACKEND_CUDA && be->impl) work_trim(ctx_of(be));
}

void gs_backend_cuda_set_analysis_pool(gs_backend *be, bool on)
{
    if (be && be->kind == GS_BACKEND_CUDA && be->impl) ctx_of(be)->analysis_pool = on;
}

bool gs_backend_cuda_analysis_pool(const gs_backend *be)
{
    return be && be->kind == GS_BACKEND_CUDA && be->impl && ((const cuda_ctx *)be->impl)->analysis_pool;
}

static gs_status cuda_upload(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    cuda_ctx *c = ctx_of(be);
    if (!bytes) return GS_OK;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream))); /* the caller may reuse src at once */
    return GS_OK;
}

static gs_status cuda_download(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    cuda_ctx *c = ctx_of(be);
    if (!bytes) return GS_OK;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream)));
    return GS_OK;
}

static gs_status cuda_copy(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    cuda_ctx *c = ctx_of(be);
    if (!bytes || dst == src) return GS_OK;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c->stream)));
    return GS_OK;
}

static gs_status cuda_synchronize(gs_backend *be)
{
    cuda_ctx *c = ctx_of(be);
    GS_CALL(fetch_results(c, 0, NULL)); /* waits for the stream and reports a bad index map */
    return GS_OK;
}

static gs_status cuda_mem_info(gs_backend *be, size_t *free_bytes, size_t *total_bytes)
{
    GS_CALL(GS_CUDA(cudaMemGetInfo(free_bytes, total_bytes)));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Vector ops.                                                                                       */

static gs_status cuda_set(gs_vector *x, double alpha)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* x = alpha */
    k_set<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_set"));
    return GS_OK;
}

static gs_status cuda_scale(gs_vector *x, double alpha)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* x = alpha x (IEEE: 0 * NaN stays NaN, as on the host) */
    k_scale<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_scale"));
    return GS_OK;
}

static gs_status cuda_axpy(double alpha, const gs_vector *x, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* y = y + alpha x */
    k_axpy<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data, y->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpy"));
    return GS_OK;
}

static gs_status cuda_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* y = alpha x + beta y */
    k_axpby<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data, beta, y->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpby"));
    return GS_OK;
}

static gs_status cuda_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double cz,
                               gs_vector *z)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* z = a x + b y + c z */
    k_axpbypcz<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, a, x->data, b, y->data, cz, z->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpbypcz"));
    return GS_OK;
}

static gs_status cuda_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* z = x .* y */
    k_pointwise_mult<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, x->data, y->data, z->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_pointwise_mult"));
    return GS_OK;
}

static gs_status cuda_dot(const gs_vector *x, const gs_vector *y, double *result)
{
    cuda_ctx *c = ctx_of(x->be);
    double r[2];
    /* x'y */
    GS_CALL(reduce_to_host<RED_DOT>(c, x->n, x->data, y->data, NULL, NULL, 1.0, r));
    *result = r[0];
    return GS_OK;
}

static gs_status cuda_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                           double result[2])
{
    cuda_ctx *c = ctx_of(x->be);
    /* {x'y, u'v} in one pass over the four vectors and one transfer */
    GS_CALL(reduce_to_host<RED_DOT2>(c, x->n, x->data, y->data, u->data, v->data, 1.0, result));
    return GS_OK;
}

/* ||x||_2. Fast path: sqrt(sum x_i^2) in one pass. When that sum overflowed, underflowed or is not
 * finite, fall back to m = max|x_i| and m * sqrt(sum (x_i/m)^2), which is what the host computes;
 * a NaN or Inf entry gives NaN, as on the host. */
static gs_status cuda_nrm2(const gs_vector *x, double *result)
{
    cuda_ctx *c = ctx_of(x->be);
    double r[2];
    GS_CALL(reduce_to_host<RED_SSQ>(c, x->n, x->data, NULL, NULL, NULL, 1.0, r));
    /* below 1e-280 some squares may have underflowed: the sum could have lost digits */
    if (isfinite(r[0]) && r[0] >= 1e-280) {
        *result = sqrt(r[0]);
        return GS_OK;
    }
    GS_CALL(reduce_to_host<RED_AMAX>(c, x->n, x->data, NULL, NULL, NULL, 1.0, r));
    const double m = r[0];
    if (r[1] > 0.0) {
        *result = nan("");
        return GS_OK;
    }
    if (m == 0.0) {
        *result = 0.0;
        return GS_OK;
    }
    GS_CALL(reduce_to_host<RED_SSQ_SCALED>(c, x->n, x->data, NULL, NULL, NULL, m, r));
    *result = m * sqrt(r[0]);
    return GS_OK;
}

/* Makes room for m result doubles. The buffer also holds the map flag, which in-flight kernels may
 * write: wait for the stream and report a pending flag before replacing it. */
static gs_status ensure_results(cuda_ctx *c, gs_int m)
{
    gs_status st = GS_OK;
    char *dev = NULL, *host = NULL;
    gs_int cap = c->res_cap;
    if (m <= cap) return GS_OK;
    GS_CALL(fetch_results(c, 0, NULL));
    while (cap < m) cap = cap > GS_INT_MAX / 2 ? m : 2 * cap;
    size_t bytes = RES_HEADER + (size_t)cap * sizeof(double);
    GS_TRY(GS_CUDA(cudaMalloc((void **)&dev, bytes)));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&host, bytes)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(dev, 0xff, sizeof(map_flag), c->stream))); /* pos = -1: no bad index */
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    cudaFree(c->res_dev);
    cudaFreeHost(c->res_host);
    c->res_dev = dev;
    c->res_host = host;
    c->res_cap = cap;
    return GS_OK;
cleanup:
    if (dev) cudaFree(dev);
    if (host) cudaFreeHost(host);
    return st;
}

static gs_status cuda_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    cuda_ctx *c = ctx_of(V->be);
    const double one = 1.0, zero = 0.0;
    if (k <= 0) return GS_OK;
    if (V->n == 0) { /* empty columns: every product is 0 (cuBLAS would not touch h) */
        for (gs_int j = 0; j < k; j++) h[j] = 0.0;
        return GS_OK;
    }
    GS_CALL(ensure_results(c, k));
    /* h = V(:,0:k)' w, V column-major n x k with leading dimension n: one gemv */
    GS_CALL(GS_CUBLAS(cublasDgemv(c->cublas, CUBLAS_OP_T, V->n, k, &one, V->data, V->n, w->data, 1, &zero,
                            res_values(c->res_dev), 1)));
    GS_CALL(fetch_results(c, k, h));
    return GS_OK;
}

static gs_status ensure_stage(cuda_ctx *c, gs_int k)
{
    gs_status st = GS_OK;
    double *dev = NULL, *host = NULL;
    gs_int cap = c->stage_cap;
    if (k <= cap) return GS_OK;
    while (cap < k) cap = cap > GS_INT_MAX / 2 ? k : 2 * cap;
    GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream))); /* the old buffers may still be read */
    GS_TRY(GS_CUDA(cudaMalloc((void **)&dev, (size_t)cap * sizeof(double))));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&host, (size_t)cap * sizeof(double))));
    cudaFree(c->stage_dev);
    cudaFreeHost(c->stage_host);
    c->stage_dev = dev;
    c->stage_host = host;
    c->stage_cap = cap;
    return GS_OK;
cleanup:
    if (dev) cudaFree(dev);
    if (host) cudaFreeHost(host);
    return st;
}

static gs_status cuda_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    cuda_ctx *c = ctx_of(V->be);
    if (k <= 0 || V->n == 0) return GS_OK;
    GS_CALL(ensure_stage(c, k));
    /* h goes through pinned memory so the copy is truly asynchronous; the previous copy out of the
     * staging buffer must be done before it is overwritten (normally long done: no wait) */
    GS_CALL(GS_CUDA(cudaEventSynchronize(c->stage_free)));
    memcpy(c->stage_host, h, (size_t)k * sizeof(double));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(c->stage_dev, c->stage_host, (size_t)k * sizeof(double), cudaMemcpyHostToDevice,
                              c->stream)));
    GS_CALL(GS_CUDA(cudaEventRecord(c->stage_free, c->stream)));
    /* y = alpha V(:,0:k) h + beta y (cuBLAS does not read y when beta == 0) */
    GS_CALL(GS_CUBLAS(cublasDgemv(c->cublas, CUBLAS_OP_N, V->n, k, &alpha, V->data, V->n, c->stage_dev, 1, &beta,
                            y->data, 1)));
    return GS_OK;
}

static gs_status cuda_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (idx->n == 0) return GS_OK;
    /* y[i] = x[idx[i]] */
    k_gather<<<grid_for(c, idx->n), THREADS, 0, c->stream>>>(idx->n, x->data, x->n, idx->data, y->data,
                                                             (map_flag *)c->res_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_gather"));
    return GS_OK;
}

static gs_status cuda_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (idx->n == 0) return GS_OK;
    /* y[idx[i]] = x[i] where idx[i] >= 0 (a map with repeated targets leaves any one of them) */
    k_scatter<<<grid_for(c, idx->n), THREADS, 0, c->stream>>>(idx->n, x->data, idx->data, y->n, y->data,
                                                              (map_flag *)c->res_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_scatter"));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Sparse operators.                                                                                 */

static void cuda_mat_release(cuda_mat *m)
{
    if (!m) return;
    gs_spmv_plan_destroy(&m->own);
    if (m->vx) cusparseDestroyDnVec(m->vx);
    if (m->vy) cusparseDestroyDnVec(m->vy);
    if (m->mat) cusparseDestroySpMat(m->mat);
    if (m->buffer) cudaFree(m->buffer);
    if (m->rowptr) cudaFree(m->rowptr);
    if (m->colind) cudaFree(m->colind);
    if (m->val) cudaFree(m->val);
    (void)cudaGetLastError();
    gs_free(&m);
}

/* Uploads A; then either plans our kernels (row-length statistics, long-row lists) or creates the
 * cuSPARSE descriptors, sizes and allocates the SpMV buffer once and runs the SpMV analysis
 * (preprocess) once, so that spmv itself allocates nothing. */
static gs_status cuda_mat_create(gs_backend *be, const gs_csr *A, gs_matrix *M)
{
    gs_status st = GS_OK;
    cuda_ctx *c = ctx_of(be);
    cuda_mat *m = NULL;
    double *tx = NULL, *ty = NULL; /* stand-in vectors for the analysis */
    size_t buf_bytes = 0;
    const double one = 1.0, zero = 0.0;
    cusparseStatus_t pre;

    GS_CALL(gs_calloc(&m, 1, sizeof *m));
    GS_TRY(cuda_alloc(be, (void **)&m->rowptr, ((size_t)A->nrows + 1) * sizeof(gs_int)));
    GS_TRY(cuda_alloc(be, (void **)&m->colind, (size_t)A->nnz * sizeof(gs_int)));
    GS_TRY(cuda_alloc(be, (void **)&m->val, (size_t)A->nnz * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMemcpyAsync(m->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(gs_int),
                             cudaMemcpyHostToDevice, c->stream)));
    if (A->nnz > 0) {
        GS_TRY(GS_CUDA(cudaMemcpyAsync(m->colind, A->colind, (size_t)A->nnz * sizeof(gs_int), cudaMemcpyHostToDevice,
                                 c->stream)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(m->val, A->val, (size_t)A->nnz * sizeof(double), cudaMemcpyHostToDevice,
                                 c->stream)));
    }
    m->empty = A->nrows == 0 || A->ncols == 0 || A->nnz == 0;
    if (!c->spmv_own)
        snprintf(m->desc, sizeof m->desc, "cuSPARSE %s%s",
                 c->spmv_alg == CUSPARSE_SPMV_CSR_ALG1 ? "CSR_ALG1" : "CSR_ALG2", m->empty ? " (no entries)" : "");
    if (c->spmv_own) {
        /* the plan reads A's row pointers on the host and uploads its lists on the backend's stream */
        GS_TRY(gs_spmv_plan_create(be, A, m->rowptr, m->colind, m->val, &c->spmv_prm, &m->own));
    } else if (!m->empty) {
        GS_TRY(cuda_alloc(be, (void **)&tx, (size_t)A->ncols * sizeof(double)));
        GS_TRY(cuda_alloc(be, (void **)&ty, (size_t)A->nrows * sizeof(double)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(tx, 0, (size_t)A->ncols * sizeof(double), c->stream)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(ty, 0, (size_t)A->nrows * sizeof(double), c->stream)));
        GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&m->mat, A->nrows, A->ncols, A->nnz, m->rowptr, m->colind, m->val,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                       CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&m->vx, A->ncols, tx, CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&m->vy, A->nrows, ty, CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseSpMV_bufferSize(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat, m->vx,
                                             &zero, m->vy, CUDA_R_64F, c->spmv_alg, &buf_bytes)));
        if (buf_bytes > 0) GS_TRY(cuda_alloc(be, &m->buffer, buf_bytes));
        /* analysis of the pattern, reused by every later SpMV with this buffer; an algorithm without
         * a preprocessing step may answer NOT_SUPPORTED, which only means there is nothing to reuse */
        pre = cusparseSpMV_preprocess(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat, m->vx, &zero,
                                      m->vy, CUDA_R_64F, c->spmv_alg, m->buffer);
        if (pre != CUSPARSE_STATUS_NOT_SUPPORTED) {
            st = gs_cusparse_check(pre, "cusparseSpMV_preprocess(...)", __FILE__, __LINE__);
            if (st != GS_OK) goto cleanup;
        }
    }
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream))); /* A's host arrays may be freed after return */
    cuda_free(be, tx);
    cuda_free(be, ty);
    M->impl = m;
    return GS_OK;
cleanup:
    cudaStreamSynchronize(c->stream);
    (void)cudaGetLastError();
    cuda_free(be, tx);
    cuda_free(be, ty);
    cuda_mat_release(m);
    return st;
}

static void cuda_mat_destroy(gs_matrix *M)
{
    cuda_ctx *c = ctx_of(M->be);
    if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
    cuda_mat_release((cuda_mat *)M->impl);
    M->impl = NULL;
}

static gs_status cuda_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y)
{
    cuda_ctx *c = ctx_of(A->be);
    cuda_mat *m = (cuda_mat *)A->impl;
    if (A->nrows == 0) return GS_OK;
    if (m->own) { /* y = alpha A x + beta y by our kernels (beta == 0 does not read y) */
        GS_CALL(gs_spmv_plan_apply(m->own, alpha, x->data, beta, y->data, c->stream));
        return GS_OK;
    }
    if (beta == 0.0) /* y is not an input then; it may hold NaN, and 0 * NaN is NaN */
        GS_CALL(GS_CUDA(cudaMemsetAsync(y->data, 0, (size_t)A->nrows * sizeof(double), c->stream)));
    if (m->empty) { /* A x = 0: y = beta y */
        if (beta != 0.0 && beta != 1.0) {
            k_scale<<<grid_for(c, A->nrows), THREADS, 0, c->stream>>>(A->nrows, beta, y->data);
            GS_CALL(GS_CUDA_LAUNCHED("k_scale"));
        }
        return GS_OK;
    }
    GS_CALL(GS_CUSPARSE(cusparseDnVecSetValues(m->vx, (void *)x->data)));
    GS_CALL(GS_CUSPARSE(cusparseDnVecSetValues(m->vy, y->data)));
    /* y = alpha A x + beta y */
    GS_CALL(GS_CUSPARSE(cusparseSpMV(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, m->mat, m->vx, &beta,
                               m->vy, CUDA_R_64F, c->spmv_alg, m->buffer)));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Fused CG: scalars on the device, one kernel per step, records in host-mapped memory (kstate_logic.h */
/* holds the scalar steps, shared with the host backend).                                            */

typedef struct {
    gs_kscalars k;
    unsigned count; /* blocks finished in the current reduction kernel (the last one resets it) */
} ks_dev;

typedef struct {
    ks_dev *d;             /* device */
    double *partials;      /* device, one per block of the largest grid */
    size_t partials_cap;   /* doubles in partials */
    gs_krec *ring_host;    /* pinned, mapped: written by the kernels, read by the host after the event */
    gs_krec *ring_dev;     /* the device address of ring_host */
    cudaEvent_t ev[GS_KS_RING];
} cuda_ks;

/* Blocks per SM of the fused kernels: one full wave (8 x 256 threads = 2048 resident per SM), so that
 * the last block's pass over the partial sums stays short (about 4 loads per thread on an H100). */
#define KS_BLOCKS_PER_SM 8

static unsigned ks_grid(const cuda_ctx *c, gs_int n)
{
    long long b = ((long long)n + THREADS - 1) / THREADS;
    long long cap = (long long)c->sm_count * KS_BLOCKS_PER_SM;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

/* Every block contributes s; the last block to finish (all others have published their partial sums)
 * adds the partials in block order, so the total does not depend on scheduling, and returns true in its
 * thread 0 with *total. Grids come from ks_grid (partials has room for its largest). */
static __device__ bool ks_last_block_total(double s, double *partials, unsigned *count, double *total)
{
    __shared__ bool last;
    double unused = 0.0;
    block_reduce<RED_DOT>(s, unused);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s;
        __threadfence(); /* the partial is visible before the count says so */
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    double t = 0.0;
#pragma unroll 4
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) t += __ldcg(&partials[b]);
    __syncthreads(); /* block_reduce's shared arrays are reused */
    block_reduce<RED_DOT>(t, unused);
    if (threadIdx.x == 0) {
        *total = t;
        *count = 0;
    }
    return threadIdx.x == 0;
}

static __global__ void k_ks_begin(ks_dev *d, int it, gs_ks_start start) { ksl_begin(&d->k, it, &start); }

/* The stop code is read once per block at entry: it is only written by the last block of a kernel,
 * after every block has read it, so all blocks agree. */
static __global__ void k_cg_pq(gs_int n, ks_dev *d, double *partials, int it, const double *__restrict__ p,
                               const double *__restrict__ q, gs_krec *ring)
{
    if (d->k.stop) return;
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n) s += p[i] * q[i];
    if (ks_last_block_total(s, partials, &d->count, &tot)) ksl_after_pq(&d->k, it, tot, &ring[it % GS_KS_RING]);
}

static __global__ void k_cg_update(gs_int n, ks_dev *d, double *partials, int it, double *__restrict__ x,
                                   double *__restrict__ r, const double *__restrict__ p,
                                   const double *__restrict__ q, int rz_is_rr, gs_krec *ring)
{
    if (d->k.stop) return;
    const double alpha = d->k.s[KS_ALPHA];
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n)
    {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        s += ri * ri;
    }
    if (ks_last_block_total(s, partials, &d->count, &tot))
        ksl_after_rr(&d->k, it, tot, rz_is_rr, &ring[it % GS_KS_RING]);
}

static __global__ void k_cg_rz(gs_int n, ks_dev *d, double *partials, int it, const double *__restrict__ r,
                               const double *__restrict__ z, gs_krec *ring)
{
    if (d->k.stop) return;
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n) s += r[i] * z[i];
    if (ks_last_block_total(s, partials, &d->count, &tot)) ksl_after_rz(&d->k, it, tot, &ring[it % GS_KS_RING]);
}

static __global__ void k_cg_direction(gs_int n, const ks_dev *d, int it, const double *__restrict__ z,
                                      double *__restrict__ p)
{
    if (d->k.stop) return;
    const double beta = ksl_beta(&d->k, it);
    GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i];
}

static cuda_ks *cks(gs_kstate *ks) { return (cuda_ks *)ks->impl; }

static void cuda_ks_destroy(gs_kstate *ks)
{
    cuda_ks *k = cks(ks);
    if (!k) return;
    cuda_ctx *c = ctx_of(ks->be);
    if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
    for (int j = 0; j < GS_KS_RING; j++)
        if (k->ev[j]) cudaEventDestroy(k->ev[j]);
    if (k->ring_host) cudaFreeHost(k->ring_host);
    cuda_free(ks->be, k->partials);
    cuda_free(ks->be, k->d);
    (void)cudaGetLastError();
    gs_free(&ks->impl);
}

static gs_status cuda_ks_create(gs_backend *be, gs_kstate *ks)
{
    gs_status st = GS_OK;
    cuda_ctx *c = ctx_of(be);
    cuda_ks *k = NULL;
    GS_CALL(gs_calloc(&k, 1, sizeof *k));
    ks->impl = k;
    GS_TRY(cuda_alloc(be, (void **)&k->d, sizeof(ks_dev)));
    k->partials_cap = (size_t)c->sm_count * KS_BLOCKS_PER_SM;
    GS_TRY(cuda_alloc(be, (void **)&k->partials, k->partials_cap * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(k->d, 0, sizeof(ks_dev), c->stream)));
    GS_TRY(GS_CUDA(cudaHostAlloc((void **)&k->ring_host, GS_KS_RING * sizeof(gs_krec), cudaHostAllocMapped)));
    GS_TRY(GS_CUDA(cudaHostGetDevicePointer((void **)&k->ring_dev, k->ring_host, 0)));
    for (int j = 0; j < GS_KS_RING; j++) {
        k->ring_host[j].it = -1;
        GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&k->ev[j], cudaEventDisableTiming)));
    }
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    return GS_OK;
cleanup:
    cuda_ks_destroy(ks);
    return st;
}

static gs_status cuda_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start)
{
    cuda_ctx *c = ctx_of(ks->be);
    k_ks_begin<<<1, 1, 0, c->stream>>>(cks(ks)->d, it, *start);
    GS_CALL(GS_CUDA_LAUNCHED("k_ks_begin"));
    return GS_OK;
}

static gs_status cuda_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    k_cg_pq<<<ks_grid(c, p->n), THREADS, 0, c->stream>>>(p->n, k->d, k->partials, it, p->data, q->data, k->ring_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_pq"));
    return GS_OK;
}

/* q = A p with p'q and alpha computed by the SpMV kernel itself (core/spmv_cuda.h) when the matrix uses
 * our SpMV without long rows; otherwise the SpMV and k_cg_pq. The partial sums grow to the SpMV grid
 * once (the stream is drained first: queued kernels may still use the old array). */
static gs_status cuda_cg_spmv_pq(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    const cuda_mat *m = (const cuda_mat *)A->impl;
    size_t need = 0;
    if (!m->own || !gs_spmv_plan_fuses_cg(m->own, &need)) {
        GS_CALL(cuda_spmv(1.0, A, p, 0.0, q));
        return cuda_cg_pq(ks, it, p, q);
    }
    if (need > k->partials_cap) {
        double *grown = NULL;
        GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream)));
        GS_CALL(cuda_alloc(ks->be, (void **)&grown, need * sizeof(double)));
        cuda_free(ks->be, k->partials);
        k->partials = grown;
        k->partials_cap = need;
    }
    gs_kscalars *scal = (gs_kscalars *)((char *)k->d + offsetof(ks_dev, k));
    unsigned *count = (unsigned *)((char *)k->d + offsetof(ks_dev, count));
    GS_CALL(gs_spmv_plan_apply_cg_pq(m->own, p->data, q->data, scal, count, k->partials, it, k->ring_dev, c->stream));
    return GS_OK;
}

static gs_status cuda_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                                const gs_vector *q, bool rz_is_rr)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    k_cg_update<<<ks_grid(c, x->n), THREADS, 0, c->stream>>>(x->n, k->d, k->partials, it, x->data, r->data, p->data,
                                                              q->data, rz_is_rr ? 1 : 0, k->ring_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_update"));
    return GS_OK;
}

static gs_status cuda_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    k_cg_rz<<<ks_grid(c, r->n), THREADS, 0, c->stream>>>(r->n, k->d, k->partials, it, r->data, z->data, k->ring_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_rz"));
    return GS_OK;
}

static gs_status cuda_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    cuda_ctx *c = ctx_of(ks->be);
    k_cg_direction<<<ks_grid(c, p->n), THREADS, 0, c->stream>>>(p->n, cks(ks)->d, it, z->data, p->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_direction"));
    return GS_OK;
}

static gs_status cuda_ks_mark(gs_kstate *ks, int it)
{
    cuda_ctx *c = ctx_of(ks->be);
    GS_CALL(GS_CUDA(cudaEventRecord(cks(ks)->ev[it % GS_KS_RING], c->stream)));
    return GS_OK;
}

static gs_status cuda_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    cuda_ks *k = cks(ks);
    GS_CALL(GS_CUDA(cudaEventSynchronize(k->ev[it % GS_KS_RING])));
    const volatile gs_krec *src = &k->ring_host[it % GS_KS_RING];
    rec->it = src->it;
    rec->code = src->code;
    rec->rnorm = src->rnorm;
    rec->value = src->value;
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Timers: events on the backend stream; the elapsed time is GPU time between the two records.      */

static gs_status cuda_timer_start(gs_timer *t)
{
    cuda_ctx *c = ctx_of(t->be);
    if (!t->start) GS_CALL(GS_CUDA(cudaEventCreate((cudaEvent_t *)&t->start)));
    if (!t->stop) GS_CALL(GS_CUDA(cudaEventCreate((cudaEvent_t *)&t->stop)));
    t->t0 = gs_wtime();
    GS_CALL(GS_CUDA(cudaEventRecord((cudaEvent_t)t->start, c->stream)));
    return GS_OK;
}

static gs_status cuda_timer_stop(gs_timer *t, double *seconds)
{
    cuda_ctx *c = ctx_of(t->be);
    float ms = 0.0f;
    if (!t->start || !t->stop)
        return GS_ERROR(GS_ERR_ARG, "timer stopped without being started on the cuda backend");
    GS_CALL(GS_CUDA(cudaEventRecord((cudaEvent_t)t->stop, c->stream)));
    GS_CALL(GS_CUDA(cudaEventSynchronize((cudaEvent_t)t->stop)));
    GS_CALL(GS_CUDA(cudaEventElapsedTime(&ms, (cudaEvent_t)t->start, (cudaEvent_t)t->stop)));
    *seconds = 1e-3 * (double)ms;
    return GS_OK;
}

static void cuda_timer_destroy(gs_timer *t)
{
    if (t->start) cudaEventDestroy((cudaEvent_t)t->start);
    if (t->stop) cudaEventDestroy((cudaEvent_t)t->stop);
    (void)cudaGetLastError();
    t->start = t->stop = NULL;
}

/* ------------------------------------------------------------------------------------------------ */
/* Creation and destruction.                                                                         */

/* Frees whatever part of the context exists (used by destroy and by a failed create). */
static void cuda_ctx_release(cuda_ctx *c)
{
    if (!c) return;
    if (c->stream) cudaStreamSynchronize(c->stream);
    work_trim(c);
    for (int k = 0; k < c->work.nlive; k++) cudaFree(c->work.live[k].ptr); /* not given back by their owner */
    gs_free(&c->work.live);
    if (c->partials) cudaFree(c->partials);
    if (c->res_dev) cudaFree(c->res_dev);
    if (c->res_host) cudaFreeHost(c->res_host);
    if (c->stage_dev) cudaFree(c->stage_dev);
    if (c->stage_host) cudaFreeHost(c->stage_host);
    if (c->stage_free) cudaEventDestroy(c->stage_free);
    if (c->cusparse) cusparseDestroy(c->cusparse);
    if (c->cublas) cublasDestroy(c->cublas);
    if (c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    gs_free(&c);
}

static void cuda_destroy(gs_backend *be)
{
    if (!be) return;
    cuda_ctx_release(ctx_of(be));
    be->impl = NULL;
    gs_free(&be);
}

static const gs_backend_ops cuda_ops = {
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .copy = cuda_copy,
    .synchronize = cuda_synchronize,
    .mem_info = cuda_mem_info,
    .set = cuda_set,
    .scale = cuda_scale,
    .axpy = cuda_axpy,
    .axpby = cuda_axpby,
    .axpbypcz = cuda_axpbypcz,
    .pointwise_mult = cuda_pointwise_mult,
    .dot = cuda_dot,
    .dot2 = cuda_dot2,
    .nrm2 = cuda_nrm2,
    .mdot = cuda_mdot,
    .mgemv = cuda_mgemv,
    .gather = cuda_gather,
    .scatter = cuda_scatter,
    .mat_create = cuda_mat_create,
    .mat_destroy = cuda_mat_destroy,
    .spmv = cuda_spmv,
    .ks_create = cuda_ks_create,
    .ks_destroy = cuda_ks_destroy,
    .ks_begin = cuda_ks_begin,
    .cg_pq = cuda_cg_pq,
    .cg_spmv_pq = cuda_cg_spmv_pq,
    .cg_update = cuda_cg_update,
    .cg_rz = cuda_cg_rz,
    .cg_direction = cuda_cg_direction,
    .ks_mark = cuda_ks_mark,
    .ks_record = cuda_ks_record,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .timer_destroy = cuda_timer_destroy,
    .destroy = cuda_destroy,
};

bool gs_backend_cuda_available(const char **why)
{
    static char reason[256];
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(reason, sizeof reason, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        if (why) *why = reason;
        return false;
    }
    if (count < 1) {
        snprintf(reason, sizeof reason, "the CUDA runtime sees no device");
        if (why) *why = reason;
        return false;
    }
    if (why) *why = "";
    return true;
}

gs_status gs_backend_cuda_create(int device_id, gs_backend **be)
{
    gs_status st = GS_OK;
    gs_backend *b = NULL;
    cuda_ctx *c = NULL;
    int count = 0;
    const char *why = NULL, *alg_env = NULL, *spmv_env = NULL;
    cudaDeviceProp prop;

    *be = NULL;
    if (!gs_backend_cuda_available(&why))
        return GS_ERROR(GS_ERR_NO_DEVICE, "cannot create the cuda backend: %s", why);
    GS_CALL(GS_CUDA(cudaGetDeviceCount(&count)));
    if (device_id < 0 || device_id >= count)
        return GS_ERROR(GS_ERR_NO_DEVICE, "CUDA device %d requested, but the devices visible are 0..%d",
                        device_id, count - 1);
    GS_CALL(GS_CUDA(cudaSetDevice(device_id)));
    GS_CALL(GS_CUDA(cudaGetDeviceProperties(&prop, device_id)));

    GS_CALL(gs_calloc(&b, 1, sizeof *b));
    GS_TRY(gs_calloc(&c, 1, sizeof *c));
    b->kind = GS_BACKEND_CUDA;
    b->name = "cuda";
    b->device_id = device_id;
    b->ops = &cuda_ops;
    b->impl = c;
    snprintf(c->gpu_name, sizeof c->gpu_name, "%.*s", (int)sizeof c->gpu_name - 1, prop.name);

    c->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    /* idle work space kept at most: 1/16 of the device memory, 4 GiB at most */
    c->work.held_cap = prop.totalGlobalMem / 16 < ((size_t)4 << 30) ? prop.totalGlobalMem / 16 : ((size_t)4 << 30);
    /* SpMV: GS_SPMV, else the older GS_CUDA_SPMV_ALG=1 (cuSPARSE CSR_ALG1), else our kernels */
    alg_env = getenv("GS_CUDA_SPMV_ALG");
    spmv_env = getenv("GS_SPMV");
    if (spmv_env && spmv_env[0]) GS_TRY(gs_backend_cuda_spmv_select(b, spmv_env));
    else GS_TRY(gs_backend_cuda_spmv_select(b, alg_env && strcmp(alg_env, "1") == 0 ? "cusparse-alg1" : "own"));

    GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)));
    GS_TRY(GS_CUBLAS(cublasCreate(&c->cublas)));
    GS_TRY(GS_CUBLAS(cublasSetStream(c->cublas, c->stream)));
    GS_TRY(GS_CUBLAS(cublasSetPointerMode(c->cublas, CUBLAS_POINTER_MODE_HOST)));
    GS_TRY(GS_CUSPARSE(cusparseCreate(&c->cusparse)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(c->cusparse, c->stream)));
    GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(c->cusparse, CUSPARSE_POINTER_MODE_HOST)));

    GS_TRY(cuda_alloc(b, (void **)&c->partials, 2 * RED_MAX_BLOCKS * sizeof(double)));
    c->res_cap = RES_CAP_INIT;
    GS_TRY(cuda_alloc(b, (void **)&c->res_dev, RES_HEADER + (size_t)c->res_cap * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&c->res_host, RES_HEADER + (size_t)c->res_cap * sizeof(double))));
    GS_TRY(GS_CUDA(cudaMemsetAsync(c->res_dev, 0xff, sizeof(map_flag), c->stream))); /* no bad index yet */
    c->stage_cap = STAGE_CAP_INIT;
    GS_TRY(cuda_alloc(b, (void **)&c->stage_dev, (size_t)c->stage_cap * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&c->stage_host, (size_t)c->stage_cap * sizeof(double))));
    GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&c->stage_free, cudaEventDisableTiming)));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    *be = b;
    return GS_OK;
cleanup:
    cuda_ctx_release(c);
    gs_free(&b);
    return st;
}

void *gs_backend_cuda_stream(gs_backend *be)
{
    if (!be || be->kind != GS_BACKEND_CUDA || !be->impl) return NULL;
    return (void *)ctx_of(be)->stream;
}

bool gs_mat_cuda_csr(const gs_matrix *M, gs_csr_dev *view)
{
    memset(view, 0, sizeof *view);
    if (!M || !M->be || M->be->kind != GS_BACKEND_CUDA || !M->impl) return false;
    const cuda_mat *m = (const cuda_mat *)M->impl;
    view->nrows = M->nrows;
    view->ncols = M->ncols;
    view->nnz = M->nnz;
    view->rowptr = m->rowptr;
    view->colind = m->colind;
    view->val = m->val;
    return true;
}

gs_status gs_backend_cuda_spmv_select(gs_backend *be, const char *mode)
{
    cuda_ctx *c = NULL;
    const char *alg_env = getenv("GS_CUDA_SPMV_ALG");
    if (!be || be->kind != GS_BACKEND_CUDA || !be->impl)
        return GS_ERROR(GS_ERR_ARG, "SpMV selection \"%s\" asked of a %s backend; only the cuda backend has a "
                        "choice", mode ? mode : "(null)", be ? be->name : "missing");
    c = ctx_of(be);
    if (!mode) mode = "own";
    if (strcmp(mode, "own") == 0) {
        GS_CALL(gs_spmv_params_parse("", &c->spmv_prm));
        c->spmv_own = true;
    } else if (strncmp(mode, "own:", 4) == 0) {
        GS_CALL(gs_spmv_params_parse(mode + 4, &c->spmv_prm));
        c->spmv_own = true;
    } else if (strcmp(mode, "cusparse") == 0) {
        c->spmv_own = false;
        c->spmv_alg = alg_env && strcmp(alg_env, "1") == 0 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
    } else if (strcmp(mode, "cusparse-alg1") == 0) {
        c->spmv_own = false;
        c->spmv_alg = CUSPARSE_SPMV_CSR_ALG1;
    } else if (strcmp(mode, "cusparse-alg2") == 0) {
        c->spmv_own = false;
        c->spmv_alg = CUSPARSE_SPMV_CSR_ALG2;
    } else {
        return GS_ERROR(GS_ERR_ARG, "SpMV \"%s\" (GS_SPMV) is not known; expected own, own:vec=V,rows=R,long=L, "
                        "cusparse, cusparse-alg1 or cusparse-alg2", mode);
    }
    snprintf(c->spmv_mode, sizeof c->spmv_mode, "%s",
             c->spmv_own ? mode : c->spmv_alg == CUSPARSE_SPMV_CSR_ALG1 ? "cusparse-alg1" : "cusparse-alg2");
    snprintf(be->device_name, sizeof be->device_name, "%.*s [SpMV %.40s]", (int)sizeof be->device_name - 56,
             c->gpu_name, c->spmv_mode);
    return GS_OK;
}

const char *gs_mat_cuda_spmv_describe(const gs_matrix *M)
{
    const cuda_mat *m = NULL;
    if (!M || !M->be || M->be->kind != GS_BACKEND_CUDA || !M->impl) return "not a cuda matrix";
    m = (const cuda_mat *)M->impl;
    if (m->own) return gs_spmv_plan_describe(m->own);
    return m->desc;
}

const gs_spmv_plan *gs_mat_cuda_spmv_plan(const gs_matrix *M)
{
    if (!M || !M->be || M->be->kind != GS_BACKEND_CUDA || !M->impl) return NULL;
    return ((const cuda_mat *)M->impl)->own;
}
