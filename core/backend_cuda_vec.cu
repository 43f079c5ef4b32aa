/* The cuda backend's vector operations: x = alpha, x = alpha x, y += alpha x, y = a x + b y, z = a x + b y
 * + c z, z = x .* y as grid-stride kernels; gathers and scatters whose bad indices are recorded on the
 * device (a NaN or nothing is written, the first bad index waits in the map flag for the next
 * synchronization); x'y, {x'y, u'v} and ||x||_2 as two-stage block reductions whose order of summation
 * depends only on n (results reproducible run to run). The state and the block reduction are in
 * core/backend_cuda_impl.h. */
#include <cuda_runtime.h>
#include <math_constants.h>

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda_impl.h"
#include "core/cuda_check.h"

/* ------------------------------------------------------------------------------------------------ */
/* Elementwise kernels.                                                                              */

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
/* combines them.                                                                                    */

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
    GS_CALL(gs_cuda_be_fetch_results(c, 2, out));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Vector ops.                                                                                       */

gs_status gs_cuda_be_scale_n(cuda_ctx *c, gs_int n, double a, double *x)
{
    /* x = a x (IEEE: 0 * NaN stays NaN, as on the host) */
    k_scale<<<grid_for(c, n), THREADS, 0, c->stream>>>(n, a, x);
    GS_CALL(GS_CUDA_LAUNCHED("k_scale"));
    return GS_OK;
}

gs_status gs_cuda_be_set(gs_vector *x, double alpha)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* x = alpha */
    k_set<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_set"));
    return GS_OK;
}

gs_status gs_cuda_be_scale(gs_vector *x, double alpha)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    return gs_cuda_be_scale_n(c, x->n, alpha, x->data);
}

gs_status gs_cuda_be_axpy(double alpha, const gs_vector *x, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* y = y + alpha x */
    k_axpy<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data, y->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpy"));
    return GS_OK;
}

gs_status gs_cuda_be_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* y = alpha x + beta y */
    k_axpby<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, alpha, x->data, beta, y->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpby"));
    return GS_OK;
}

gs_status gs_cuda_be_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double cz,
                               gs_vector *z)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* z = a x + b y + c z */
    k_axpbypcz<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, a, x->data, b, y->data, cz, z->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_axpbypcz"));
    return GS_OK;
}

gs_status gs_cuda_be_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    cuda_ctx *c = ctx_of(x->be);
    if (x->n == 0) return GS_OK;
    /* z = x .* y */
    k_pointwise_mult<<<grid_for(c, x->n), THREADS, 0, c->stream>>>(x->n, x->data, y->data, z->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_pointwise_mult"));
    return GS_OK;
}

gs_status gs_cuda_be_dot(const gs_vector *x, const gs_vector *y, double *result)
{
    cuda_ctx *c = ctx_of(x->be);
    double r[2];
    /* x'y */
    GS_CALL(reduce_to_host<RED_DOT>(c, x->n, x->data, y->data, NULL, NULL, 1.0, r));
    *result = r[0];
    return GS_OK;
}

gs_status gs_cuda_be_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
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
gs_status gs_cuda_be_nrm2(const gs_vector *x, double *result)
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

gs_status gs_cuda_be_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (idx->n == 0) return GS_OK;
    /* y[i] = x[idx[i]] */
    k_gather<<<grid_for(c, idx->n), THREADS, 0, c->stream>>>(idx->n, x->data, x->n, idx->data, y->data,
                                                             (map_flag *)c->res_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_gather"));
    return GS_OK;
}

gs_status gs_cuda_be_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    cuda_ctx *c = ctx_of(x->be);
    if (idx->n == 0) return GS_OK;
    /* y[idx[i]] = x[i] where idx[i] >= 0 (a map with repeated targets leaves any one of them) */
    k_scatter<<<grid_for(c, idx->n), THREADS, 0, c->stream>>>(idx->n, x->data, idx->data, y->n, y->data,
                                                              (map_flag *)c->res_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_scatter"));
    return GS_OK;
}
