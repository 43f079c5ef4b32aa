/* One ParILU/ParIC sweep on the GPU, and the unscaling of its values into the factors L and U, the
 * twins of parilu_ref.c. The sweep: a thread per task of the list (thread
 * t takes task t, so the list order is the order of thread blocks: forward, backward or a shuffled
 * block order), each evaluating equation (3),
 *     l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj   (i > j),     u_ij = a_ij - sum_{k<i} l_ik u_kj   (i <= j)
 * (ParIC: u_kj = l_jk, l_ii = sqrt(a_ii - sum_{k<i} l_ik^2)) by merging row i of L with column j of U.
 *
 * Synchronous (in != out): reads only `in` (through the read-only cache), writes `out`: the result
 * is a deterministic function of `in`, equal to the host sweep up to rounding (FMA contraction).
 * Asynchronous (in == out): in place; loads bypass L1 (__ldcg: served by L2, the coherence point of
 * the device) so a task sees values other blocks wrote earlier in the same launch - the paper's K40
 * behaviour, where global loads were cached in L2 only. 8-byte aligned loads and stores of doubles
 * are single transactions, so a value read concurrently with its update is the old or the new one,
 * never a mixture.
 *
 * A pivot that cannot be used is handled as on the host: replaced under the shift policy (counted,
 * row flagged), otherwise recorded by atomicMin on (sweep * n + row) with the old value kept, so no
 * task ever divides by a zero pivot.
 *
 * The unscaling (a thread per task, writing the entry of L or U its value becomes) uses the correctly
 * rounded intrinsics __dmul_rn / __ddiv_rn in the host's order of operations, so the factors equal the
 * host's gs_parilu_unscale bit for bit whatever nvcc's contraction settings are. */
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>

#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "precond/parilu.h"


/* Synchronous sweeps read `in`, which no thread writes during the launch: the read-only path. The
 * asynchronous ones read values being rewritten: L2 only. */
template <bool ASYNC>
static __device__ __forceinline__ double load_x(const double *p)
{
    return ASYNC ? __ldcg(p) : __ldg(p);
}

template <bool ASYNC>
static __global__ void __launch_bounds__(GS_PARILU_CHUNK)
    parilu_sweep_kernel(gs_parilu_kernel K, const double *in, double *out, int sweep)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= K.ntasks) return;
    const gs_int i = K.task_row[t], j = K.task_col[t], dst = K.task_dst[t];
    const gs_int m = i < j ? i : j;
    const double *xu = in + K.u_off;
    double s = K.task_a[t];
    gs_int p = K.l_ptr[i], pe = K.l_ptr[i + 1];
    gs_int q = K.u_ptr[j], qe = K.u_ptr[j + 1];
    /* s = a_ij - sum_{k < min(i,j)} l_ik u_kj over the k in both sorted lists, increasing k */
    while (p < pe && q < qe) {
        const gs_int kl = K.l_ind[p], ku = K.u_ind[q];
        if (kl >= m || ku >= m) break;
        if (kl == ku) {
            s -= load_x<ASYNC>(in + p) * load_x<ASYNC>(xu + q);
            p++;
            q++;
        } else if (kl < ku) {
            p++;
        } else {
            q++;
        }
    }
    double v;
    if (i > j) {
        v = s / load_x<ASYNC>(xu + K.u_ptr[j + 1] - 1); /* u_jj: last of column j, never tiny */
    } else if (i < j) {
        v = s;
    } else {
        bool ok = K.symmetric ? (s >= DBL_MIN) : (fabs(s) >= DBL_MIN);
        if (ok) {
            v = K.symmetric ? sqrt(s) : s;
        } else if (K.shift && !isnan(s)) {
            const double r = K.pivot_shift[i];
            v = K.symmetric ? sqrt(r) : (s < 0.0 ? -r : r);
            K.shifted[i] = 1;
            atomicAdd(&K.flags->shifts, 1ull);
        } else {
            atomicMin(&K.flags->first_bad, (unsigned long long)sweep * (unsigned long long)K.n + (unsigned long long)i);
            v = load_x<ASYNC>(in + dst); /* keep the previous pivot */
        }
    }
    out[dst] = v;
}

gs_status gs_parilu_sweep_cuda(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep)
{
    if (!be || be->kind != GS_BACKEND_CUDA)
        return GS_ERROR(GS_ERR_ARG, "ParILU GPU sweep: the arrays must live on the cuda backend (got %s)",
                        be && be->name ? be->name : "none");
    if (!K || !in || !out) return GS_ERROR(GS_ERR_ARG, "ParILU GPU sweep: missing kernel arrays or values");
    if (K->ntasks <= 0) return GS_OK;
    cudaStream_t stream = (cudaStream_t)gs_backend_cuda_stream(be);
    const unsigned blocks = (unsigned)(((long long)K->ntasks + GS_PARILU_CHUNK - 1) / GS_PARILU_CHUNK);
    /* out[dst_t] = equation (3) of task t on `in`, t = blockIdx.x * GS_PARILU_CHUNK + threadIdx.x */
    if (in == out) {
        parilu_sweep_kernel<true><<<blocks, GS_PARILU_CHUNK, 0, stream>>>(*K, in, out, sweep);
        GS_CALL(GS_CUDA_LAUNCHED("parilu_sweep_kernel<asynchronous>"));
    } else {
        parilu_sweep_kernel<false><<<blocks, GS_PARILU_CHUNK, 0, stream>>>(*K, in, out, sweep);
        GS_CALL(GS_CUDA_LAUNCHED("parilu_sweep_kernel<synchronous>"));
    }
    return GS_OK;
}

/* Threads per block of the unscaling. */
#define PARILU_UNSCALE_THREADS 256

static __global__ void __launch_bounds__(PARILU_UNSCALE_THREADS)
    parilu_unscale_kernel(gs_parilu_kernel K, gs_parilu_factor_dev F, const double *__restrict__ x,
                          double *__restrict__ lval, double *__restrict__ uval)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= K.ntasks) return;
    const gs_int i = K.task_row[t], j = K.task_col[t], d = K.task_dst[t];
    const double xd = x[d], si = F.sd[i];
    if (K.symmetric) {
        /* l_ij = l^_ij sd_i;  U = L^T */
        const double v = __dmul_rn(xd, si);
        const gs_int q = F.u_pos[d];
        lval[d] = v;
        uval[q] = v;
        if (!isfinite(v)) {
            atomicMin(&F.nonfinite[0], (unsigned)d);
            atomicMin(&F.nonfinite[1], (unsigned)q);
        }
    } else if (d < K.u_off) {
        /* l_ij = (l^_ij sd_i) / sd_j */
        const double v = __ddiv_rn(__dmul_rn(xd, si), F.sd[j]);
        lval[d] = v;
        if (!isfinite(v)) atomicMin(&F.nonfinite[0], (unsigned)d);
    } else {
        /* u_ij = (u^_ij sd_i) sd_j, written at its CSR position */
        const gs_int q = F.u_pos[d - K.u_off];
        const double v = __dmul_rn(__dmul_rn(xd, si), F.sd[j]);
        uval[q] = v;
        if (!isfinite(v)) atomicMin(&F.nonfinite[1], (unsigned)q);
    }
}

gs_status gs_parilu_unscale_cuda(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                 const double *x, double *lval, double *uval)
{
    if (!be || be->kind != GS_BACKEND_CUDA)
        return GS_ERROR(GS_ERR_ARG, "ParILU GPU unscaling: the arrays must live on the cuda backend (got %s)",
                        be && be->name ? be->name : "none");
    if (!K || !F || !x || !lval || !uval || !F->nonfinite)
        return GS_ERROR(GS_ERR_ARG, "ParILU GPU unscaling: missing kernel arrays, factor arrays or values");
    cudaStream_t stream = (cudaStream_t)gs_backend_cuda_stream(be);
    /* nonfinite = {UINT_MAX, UINT_MAX}: "none" for the atomicMin below */
    GS_CALL(gs_cuda_check(cudaMemsetAsync(F->nonfinite, 0xFF, 2 * sizeof(unsigned), stream),
                          "cudaMemsetAsync(nonfinite)", __FILE__, __LINE__));
    if (K->ntasks <= 0) return GS_OK;
    const unsigned blocks =
        (unsigned)(((long long)K->ntasks + PARILU_UNSCALE_THREADS - 1) / PARILU_UNSCALE_THREADS);
    /* task t: L = D^{1/2} L^ D^{-1/2}, U = D^{1/2} U^ D^{1/2} (ParIC: L = D^{1/2} L^, U = L^T) at x[dst_t] */
    parilu_unscale_kernel<<<blocks, PARILU_UNSCALE_THREADS, 0, stream>>>(*K, *F, x, lval, uval);
    GS_CALL(GS_CUDA_LAUNCHED("parilu_unscale_kernel"));
    return GS_OK;
}
