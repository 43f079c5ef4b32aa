/* Level-set triangular solve on the GPU, x = T^{-1} b: the plan of levelset_ref.c (levels, rows
 * renumbered level by level, HEC storage = column-major ELL part + CSR remainder, 1/diagonal) is
 * uploaded; consecutive thin levels form chains run by ONE thread block with __syncthreads between
 * levels (Naumov), each wide level is one multi-block launch with a thread per row. The whole launch
 * sequence of a solve is captured once into a CUDA graph in analyse and replayed by solve.
 *
 * The graph is independent of b and x: its kernels read the two pointers from a small device struct
 * that one tiny kernel sets before the replay (only when they differ from the previous solve), so any
 * pair of vectors can be used without re-capturing or updating graph nodes, and a solve may itself be
 * captured into a caller's graph.
 *
 * Analysis time = host level pass + plan build + upload + graph capture/instantiation (reported). */
#include <cuda_runtime.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

#define LS_LEVEL_THREADS 256 /* threads per block of the multi-block (wide level) kernel */

/* The uploaded plan, passed by value to the kernels. */
struct ls_hec {
    gs_int n, w;
    const gs_int *__restrict__ level_ptr;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col;
    const double *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const double *__restrict__ rem_val;
    const double *__restrict__ dinv;
};

/* b and x of the current solve, read by the graph's kernels. */
struct ls_args {
    const double *b;
    double *x;
};

typedef struct ls_cuda_data {
    gs_ls_plan P; /* arrays freed after upload and capture; statistics kept for view() */
    gs_int *level_ptr, *perm, *ell_col, *rem_ptr, *rem_col;
    double *ell_val, *rem_val, *dinv;
    ls_args *args;
    cudaGraphExec_t exec;
    const double *last_b;
    double *last_x;
    gs_int launches; /* kernels per solve in the graph */
    double time_analyse, time_upload, time_graph;
} ls_cuda_data;

/* x[perm[p]] = (b[perm[p]] - sum_k ell_val[k,p] x[ell_col[k,p]] - sum_rem rem_val x[rem_col]) * dinv[p] */
static __device__ __forceinline__ void ls_row(const ls_hec &H, const double *b, double *x, gs_int p)
{
    gs_int i = H.perm[p];
    double s = b[i];
    size_t q = (size_t)p;
    for (gs_int k = 0; k < H.w; k++, q += (size_t)H.n) {
        gs_int j = H.ell_col[q];
        if (j < 0) break; /* padding only follows the row's entries */
        s -= H.ell_val[q] * x[j];
    }
    gs_int r1 = H.rem_ptr[p + 1];
    for (gs_int r = H.rem_ptr[p]; r < r1; r++) s -= H.rem_val[r] * x[H.rem_col[r]];
    x[i] = s * H.dinv[p];
}

/* One block solves levels l0 .. l1-1 of a chain; __syncthreads makes level l's x visible to level l+1
 * (same block, so global writes are visible after the barrier). The chain's level pointers are staged
 * in shared memory LS_CHAIN_STAGE at a time, which takes one dependent global load off every level
 * of a long chain of tiny levels. */
#define LS_CHAIN_STAGE 1024
static __global__ void ls_chain_kernel(ls_hec H, const ls_args *args, gs_int l0, gs_int l1)
{
    __shared__ gs_int lp[LS_CHAIN_STAGE + 1];
    const double *b = args->b;
    double *x = args->x;
    for (gs_int c0 = l0; c0 < l1; c0 += LS_CHAIN_STAGE) {
        gs_int c1 = c0 + LS_CHAIN_STAGE < l1 ? c0 + LS_CHAIN_STAGE : l1;
        for (gs_int k = (gs_int)threadIdx.x; k <= c1 - c0; k += (gs_int)blockDim.x) lp[k] = H.level_ptr[c0 + k];
        __syncthreads();
        for (gs_int l = 0; l < c1 - c0; l++) {
            gs_int p1 = lp[l + 1];
            for (gs_int p = lp[l] + (gs_int)threadIdx.x; p < p1; p += (gs_int)blockDim.x) ls_row(H, b, x, p);
            __syncthreads(); /* also protects lp before the next stage overwrites it */
        }
    }
}

/* One wide level, positions p0 .. p1-1, a thread per row; the kernel boundary is the level barrier. */
static __global__ void ls_level_kernel(ls_hec H, const ls_args *args, gs_int p0, gs_int p1)
{
    gs_int p = p0 + (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p < p1) ls_row(H, args->b, args->x, p);
}

static __global__ void ls_set_args_kernel(ls_args *a, const double *b, double *x)
{
    a->b = b;
    a->x = x;
}

static void ls_release(gs_trisolve *ts, ls_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* replays done */
    if (d->exec && cudaGraphExecDestroy(d->exec) != cudaSuccess) (void)cudaGetLastError();
    d->exec = NULL;
    gs_ts_free_array(be, &d->level_ptr);
    gs_ts_free_array(be, &d->perm);
    gs_ts_free_array(be, &d->ell_col);
    gs_ts_free_array(be, &d->ell_val);
    gs_ts_free_array(be, &d->rem_ptr);
    gs_ts_free_array(be, &d->rem_col);
    gs_ts_free_array(be, &d->rem_val);
    gs_ts_free_array(be, &d->dinv);
    gs_ls_plan_free(&d->P);
}

static ls_hec ls_device_plan(const ls_cuda_data *d)
{
    ls_hec H;
    H.n = d->P.n;
    H.w = d->P.ell_width;
    H.level_ptr = d->level_ptr;
    H.perm = d->perm;
    H.ell_col = d->ell_col;
    H.ell_val = d->ell_val;
    H.rem_ptr = d->rem_ptr;
    H.rem_col = d->rem_col;
    H.rem_val = d->rem_val;
    H.dinv = d->dinv;
    return H;
}

/* Capture the per-solve launch sequence (one launch per chain) on a private stream and instantiate it. */
static gs_status ls_capture(ls_cuda_data *d)
{
    gs_status st = GS_OK;
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    bool capturing = false;
    const gs_ls_plan *P = &d->P;
    ls_hec H = ls_device_plan(d);

    GS_TRY(TS_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking)));
    GS_TRY(TS_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal)));
    capturing = true;
    for (gs_int c = 0; c < P->nchains; c++) {
        gs_int l0 = P->chain_ptr[c], l1 = P->chain_ptr[c + 1];
        if (P->chain_single[c]) {
            /* levels l0..l1-1, each at most chain_rows rows: one block as wide as the widest of them */
            int threads = (int)((P->chain_max_rows[c] + 31) / 32 * 32);
            if (threads < 32) threads = 32;
            ls_chain_kernel<<<1, threads, 0, cs>>>(H, d->args, l0, l1);
            GS_TRY(TS_LAUNCHED("ls_chain_kernel"));
        } else {
            gs_int p0 = P->level_ptr[l0], p1 = P->level_ptr[l0 + 1];
            unsigned blocks = (unsigned)((p1 - p0 + LS_LEVEL_THREADS - 1) / LS_LEVEL_THREADS);
            ls_level_kernel<<<blocks, LS_LEVEL_THREADS, 0, cs>>>(H, d->args, p0, p1);
            GS_TRY(TS_LAUNCHED("ls_level_kernel"));
        }
    }
    capturing = false;
    GS_TRY(TS_CUDA(cudaStreamEndCapture(cs, &g)));
    GS_TRY(TS_CUDA(cudaGraphInstantiate(&d->exec, g, 0)));
    d->launches = P->nchains;
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

static gs_status ls_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    double t0 = gs_wtime(), t1;

    ls_release(ts, d);
    GS_TRY(gs_ls_plan_build(T, ts->uplo, ts->unit_diag, GS_LS_CHAIN_ROWS, &d->P));
    t1 = gs_wtime();
    {
        const gs_ls_plan *P = &d->P;
        size_t n = (size_t)P->n, ell = (size_t)P->ell_width * n;
        GS_TRY(gs_ts_upload_array(be, &d->level_ptr, P->level_ptr, (size_t)P->nlevels + 1));
        GS_TRY(gs_ts_upload_array(be, &d->perm, P->perm, n));
        GS_TRY(gs_ts_upload_array(be, &d->ell_col, P->ell_col, ell));
        GS_TRY(gs_ts_upload_array(be, &d->ell_val, P->ell_val, ell));
        GS_TRY(gs_ts_upload_array(be, &d->rem_ptr, P->rem_ptr, n + 1));
        GS_TRY(gs_ts_upload_array(be, &d->rem_col, P->rem_col, (size_t)P->rem_nnz));
        GS_TRY(gs_ts_upload_array(be, &d->rem_val, P->rem_val, (size_t)P->rem_nnz));
        GS_TRY(gs_ts_upload_array(be, &d->dinv, P->dinv, n));
    }
    if (!d->args) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(ls_args)));
        d->args = (ls_args *)p;
        d->last_b = NULL;
        d->last_x = NULL;
    }
    d->time_upload = gs_wtime() - t1;
    t1 = gs_wtime();
    if (d->P.n > 0) GS_TRY(ls_capture(d));
    d->time_graph = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
cleanup:
    gs_ls_plan_free(&d->P); /* the host arrays are no longer needed; the statistics stay for view */
    if (st != GS_OK) ls_release(ts, d);
    return st;
}

static gs_status ls_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    /* The pointer update can be skipped when b and x are those of the previous solve, unless this
     * solve is being captured into an outer graph (its replays must set them themselves). */
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    GS_CALL(TS_CUDA(cudaStreamIsCapturing(s, &capture)));
    if (b->data != d->last_b || x->data != d->last_x || capture != cudaStreamCaptureStatusNone) {
        ls_set_args_kernel<<<1, 1, 0, s>>>(d->args, b->data, x->data);
        GS_CALL(TS_LAUNCHED("ls_set_args_kernel"));
        d->last_b = b->data;
        d->last_x = x->data;
    }
    GS_CALL(TS_CUDA(cudaGraphLaunch(d->exec, s)));
    return GS_OK;
}

static void ls_cuda_destroy(gs_trisolve *ts)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    if (!d) return;
    ls_release(ts, d);
    gs_ts_free_array(ts->be, &d->args);
    gs_free(&ts->data);
}

static void ls_cuda_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const ls_cuda_data *d = (const ls_cuda_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation", "cuda level sets (HEC, chains, CUDA graph)");
    gs_ls_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "graph_kernels", d->launches);
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "graph_time", d->time_graph);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops ls_cuda_ops = {ls_cuda_analyse, ls_cuda_solve, ls_cuda_destroy, ls_cuda_view};

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
