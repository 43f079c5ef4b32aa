/* The cuda backend's Krylov-basis products, as our own kernels: h = V(:,0:k)' w (mdot) and
 * y = alpha V(:,0:k) h + beta y (mgemv), and their two-vector forms for GMRES's one-reduction Arnoldi
 * step (mdot2, mgemv2), V column-major with leading dimension n. The launch shapes come
 * from the host rules of core/mvec_grid.h. mdot sums in an order fixed by (n, k, SM count), so GMRES's
 * iterations are reproducible run to run; mgemv takes h as a kernel argument, so it needs no copy, no
 * staging buffer and no wait. Nothing here loads a library module on first use: the first solve of a
 * process costs what the later ones do. */
#include <cuda_runtime.h>

#include <stddef.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda_impl.h"
#include "core/cuda_check.h"
#include "core/mvec_grid.h"

#define MDOT_WARPS (GS_MDOT_THREADS / 32)

/* Stage 1 of mdot (NV = 1: w0) and mdot2 (NV = 2: w0 and w1). Block (bx, by) takes the column tiles by,
 * by + gridDim.y, ... and, of each, the rows bx, bx + gridDim.x, ... in steps of a block: one running sum
 * per column of the tile and vector, each vector read once. Sum (v, j) -- vector v, column j -- goes to
 * out[v k + j] when the grid has one block along the rows (direct), else to
 * partials[(v k + j) gridDim.x + bx]. */
template <int NV>
static __global__ void __launch_bounds__(GS_MDOT_THREADS)
    k_mdot_partial(gs_int n, gs_int k, const double *__restrict__ V, const double *__restrict__ w0,
                   const double *__restrict__ w1, double *__restrict__ out, bool direct)
{
    __shared__ double sh[NV][GS_MDOT_COLS][MDOT_WARPS];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const gs_int tiles = (k + GS_MDOT_COLS - 1) / GS_MDOT_COLS;
    for (gs_int tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
        const gs_int j0 = tile * GS_MDOT_COLS;
        const int nc = k - j0 < GS_MDOT_COLS ? (int)(k - j0) : GS_MDOT_COLS;
        const double *Vt = V + (size_t)j0 * (size_t)n;
        double acc[NV][GS_MDOT_COLS];
#pragma unroll
        for (int v = 0; v < NV; v++)
#pragma unroll
            for (int c = 0; c < GS_MDOT_COLS; c++) acc[v][c] = 0.0;
        GRID_STRIDE(i, n)
        {
            double wi[NV];
            wi[0] = w0[i];
            if (NV > 1) wi[NV - 1] = w1[i];
#pragma unroll
            for (int c = 0; c < GS_MDOT_COLS; c++)
                if (c < nc) {
                    const double vc = Vt[(size_t)c * (size_t)n + (size_t)i];
#pragma unroll
                    for (int v = 0; v < NV; v++) acc[v][c] += vc * wi[v];
                }
        }
#pragma unroll
        for (int v = 0; v < NV; v++)
#pragma unroll
            for (int c = 0; c < GS_MDOT_COLS; c++) {
                double s = acc[v][c];
                for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
                if (lane == 0) sh[v][c][warp] = s;
            }
        __syncthreads();
        if ((int)threadIdx.x < NV * nc) {
            const int v = (int)threadIdx.x / nc, c = (int)threadIdx.x % nc;
            double s = 0.0;
            for (int p = 0; p < MDOT_WARPS; p++) s += sh[v][c][p];
            const size_t o = (size_t)v * (size_t)k + (size_t)(j0 + c);
            if (direct) out[o] = s;
            else out[o * gridDim.x + blockIdx.x] = s;
        }
        __syncthreads(); /* sh is rewritten by the next tile */
    }
}

/* Stage 2 of mdot: a warp per column adds its nparts partial sums (lane-strided, then across the warp). */
static __global__ void k_mdot_final(gs_int k, int nparts, const double *__restrict__ partials,
                                    double *__restrict__ h)
{
    const unsigned lane = threadIdx.x & 31u;
    const long long j = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (j >= k) return; /* the whole warp leaves together */
    double s = 0.0;
    for (int p = (int)lane; p < nparts; p += 32) s += partials[(size_t)j * (size_t)nparts + (size_t)p];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) h[j] = s;
}

/* Makes room for m result doubles. The buffer also holds the map flag, which in-flight kernels may
 * write: wait for the stream and report a pending flag before replacing it. */
static gs_status ensure_results(cuda_ctx *c, gs_int m)
{
    gs_status st = GS_OK;
    char *dev = NULL, *host = NULL;
    gs_int cap = c->res_cap;
    if (m <= cap) return GS_OK;
    GS_CALL(gs_cuda_be_fetch_results(c, 0, NULL));
    while (cap < m) cap = cap > GS_INT_MAX / 2 ? m : 2 * cap;
    size_t bytes = RES_HEADER + (size_t)cap * sizeof(double);
    GS_TRY(GS_CUDA(cudaMalloc((void **)&dev, bytes)));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&host, bytes)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(dev, 0xff, sizeof(map_flag), c->stream))); /* pos = -1: no bad index */
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    if (!gs_mem_track_add(c->mem, dev, bytes))
        GS_FAIL(GS_ERR_MEM, "out of host memory recording a device allocation of %zu bytes", bytes);
    gs_mem_track_remove(c->mem, c->res_dev);
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

/* h = V(:,0:k)' [w0 w1] (NV columns of w): h[v k + j] for vector v, column j. */
template <int NV>
static gs_status mdot_nv(const gs_mvec *V, gs_int k, const double *w0, const double *w1, double *h)
{
    cuda_ctx *c = ctx_of(V->be);
    const gs_int sums = NV * k;
    if (k <= 0) return GS_OK;
    if (V->n == 0) { /* empty columns: every product is 0 */
        for (gs_int j = 0; j < sums; j++) h[j] = 0.0;
        return GS_OK;
    }
    GS_CALL(ensure_results(c, sums));
    const gs_mdot_grid g = gs_mdot_grid_rule(V->n, k, NV, c->sm_count);
    double *res = res_values(c->res_dev);
    const bool direct = g.row_blocks == 1;
    const dim3 grid((unsigned)g.row_blocks, (unsigned)g.col_tiles);
    k_mdot_partial<NV><<<grid, GS_MDOT_THREADS, 0, c->stream>>>(V->n, k, V->data, w0, w1,
                                                                direct ? res : c->partials, direct);
    GS_CALL(GS_CUDA_LAUNCHED("k_mdot_partial"));
    if (!direct) {
        const long long blocks = ((long long)sums + MDOT_WARPS - 1) / MDOT_WARPS;
        k_mdot_final<<<(unsigned)blocks, GS_MDOT_THREADS, 0, c->stream>>>(sums, g.row_blocks, c->partials, res);
        GS_CALL(GS_CUDA_LAUNCHED("k_mdot_final"));
    }
    GS_CALL(gs_cuda_be_fetch_results(c, sums, h));
    return GS_OK;
}

gs_status gs_cuda_be_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    return mdot_nv<1>(V, k, w->data, NULL, h);
}

gs_status gs_cuda_be_mdot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h)
{
    return mdot_nv<2>(V, k, x->data, y->data, h);
}

/* GS_MGEMV_COLS coefficients by value (kernel arguments live in the constant bank: no copy to make). */
typedef struct {
    double h[GS_MGEMV_COLS];
} mgemv_coef;

/* y = alpha V(:, 0:kc) h + beta y for kc <= GS_MGEMV_COLS columns of V; beta == 0 does not read y. */
static __global__ void k_mgemv(gs_int n, int kc, double alpha, const double *__restrict__ V, mgemv_coef h,
                               double beta, double *__restrict__ y)
{
    GRID_STRIDE(i, n)
    {
        double s = 0.0;
#pragma unroll
        for (int j = 0; j < GS_MGEMV_COLS; j++)
            if (j < kc) s += V[(size_t)j * (size_t)n + (size_t)i] * h.h[j];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

gs_status gs_cuda_be_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    cuda_ctx *c = ctx_of(V->be);
    const gs_int n = V->n;
    if (n == 0 || k <= 0) return GS_OK; /* k == 0 is y = beta y, done by gs_mvec_gemv */
    const int launches = gs_mgemv_launches(k);
    for (int l = 0; l < launches; l++) {
        const gs_int j0 = (gs_int)l * GS_MGEMV_COLS;
        const int kc = k - j0 < GS_MGEMV_COLS ? (int)(k - j0) : GS_MGEMV_COLS;
        mgemv_coef coef;
        memset(&coef, 0, sizeof coef);
        memcpy(coef.h, h + j0, (size_t)kc * sizeof(double));
        /* the first launch applies beta; the later ones add their columns to y */
        k_mgemv<<<grid_for(c, n), THREADS, 0, c->stream>>>(n, kc, alpha, V->data + (size_t)j0 * (size_t)n, coef,
                                                           l == 0 ? beta : 1.0, y->data);
        GS_CALL(GS_CUDA_LAUNCHED("k_mgemv"));
    }
    return GS_OK;
}

/* Two coefficient vectors of GS_MGEMV_COLS, by value. */
typedef struct {
    double p[GS_MGEMV_COLS], q[GS_MGEMV_COLS];
} mgemv2_coef;

/* x = a x + V(:, 0:kc) p, then y = b y + d x + V(:, 0:kc) q with the new x, for kc <= GS_MGEMV_COLS. */
static __global__ void k_mgemv2(gs_int n, int kc, const double *__restrict__ V, mgemv2_coef h, double a,
                                double *__restrict__ x, double b, double d, double *__restrict__ y)
{
    GRID_STRIDE(i, n)
    {
        double sp = 0.0, sq = 0.0;
#pragma unroll
        for (int j = 0; j < GS_MGEMV_COLS; j++)
            if (j < kc) {
                const double v = V[(size_t)j * (size_t)n + (size_t)i];
                sp += v * h.p[j];
                sq += v * h.q[j];
            }
        const double xn = a * x[i] + sp;
        x[i] = xn;
        y[i] = b * y[i] + d * xn + sq;
    }
}

gs_status gs_cuda_be_mgemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                            double b, double d, gs_vector *y)
{
    cuda_ctx *c = ctx_of(V->be);
    const gs_int n = V->n;
    if (n == 0 || k <= 0) return GS_OK; /* k == 0 is done by gs_mvec_gemv2 */
    const int launches = gs_mgemv_launches(k);
    for (int l = 0; l < launches; l++) {
        const gs_int j0 = (gs_int)l * GS_MGEMV_COLS;
        const int kc = k - j0 < GS_MGEMV_COLS ? (int)(k - j0) : GS_MGEMV_COLS;
        mgemv2_coef coef;
        memset(&coef, 0, sizeof coef);
        memcpy(coef.p, p + j0, (size_t)kc * sizeof(double));
        memcpy(coef.q, q + j0, (size_t)kc * sizeof(double));
        /* the first launch applies a and b, the last adds d x (x complete by then); the others add */
        k_mgemv2<<<grid_for(c, n), THREADS, 0, c->stream>>>(n, kc, V->data + (size_t)j0 * (size_t)n, coef,
                                                            l == 0 ? a : 1.0, x->data, l == 0 ? b : 1.0,
                                                            l == launches - 1 ? d : 0.0, y->data);
        GS_CALL(GS_CUDA_LAUNCHED("k_mgemv2"));
    }
    return GS_OK;
}
