/* The cuda backend: vectors in device memory; BLAS-1 and gathers as grid-stride kernels; dot, dot2
 * and nrm2 as two-stage block reductions (core/backend_cuda_vec.cu); Krylov-basis products V'w and V h
 * as our own kernels (core/backend_cuda_mvec.cu); y = alpha A x + beta y through our own CSR kernels
 * (core/spmv_cuda.cu; cuSPARSE SpMV on request); the fused CG steps (core/backend_cuda_kstate.cu); timers
 * as CUDA events. This file holds the memory (device allocations, the work space kept for reuse), the
 * transfers, the sparse operators, the timers and the creation; core/backend_cuda_impl.h the state the
 * files share.
 *
 * Everything is enqueued on one non-blocking stream (cuSPARSE is bound to it), so the
 * ops are ordered among themselves and asynchronous to the host. The only host waits are where a
 * scalar must reach the host (dot, dot2, nrm2, mdot), in upload/download, synchronize and
 * timer_stop. Scalars come back in one small copy into pinned memory.
 *
 * Index maps are checked on the device without a sync: a gather or scatter that meets an index
 * outside its vector writes NaN (gather) or nothing (scatter) and records the first such index in a
 * device-side flag; the next reduction or synchronize reports it as GS_ERR_ARG.
 *
 * The backend works on the device that was current when it was created (gs_backend_cuda_create
 * makes device_id current for the calling thread). The SpMV of every matrix created on it is our
 * kernels (core/spmv_cuda.cu) unless gs_backend_cuda_spmv_select (the configuration's device.spmv,
 * through gs_backend_select_spmv) chose cuSPARSE or forced kernel parameters; the choice is shown at
 * the end of the device name. With cuSPARSE, CSR_ALG2 is the default (bit-wise reproducible run to
 * run, so iteration counts are reproducible; our kernels are too). */
#include <cuda_runtime.h>
#include <cusparse.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/backend_cuda_impl.h"
#include "core/cuda_check.h"
#include "core/mem.h"
#include "core/spmv_cuda.h"

/* Copies the map flag and m result doubles to the host in one transfer, waits, reports a pending
 * invalid index, and returns the values in out (may be NULL when only the flag is wanted). */
gs_status gs_cuda_be_fetch_results(cuda_ctx *c, gs_int m, double *out)
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

/* ------------------------------------------------------------------------------------------------ */
/* Memory.                                                                                           */

void gs_backend_cuda_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = 0;
    if (cudaDriverGetVersion(driver) != cudaSuccess) *driver = 0;
    (void)cudaGetLastError();
}

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

gs_status gs_cuda_be_alloc(gs_backend *be, void **p, size_t bytes)
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
    if (e == cudaSuccess) {
        if (gs_mem_track_add(&be->mem, *p, bytes)) return GS_OK;
        if (cudaFree(*p) != cudaSuccess) (void)cudaGetLastError();
        *p = NULL;
        return GS_ERROR(GS_ERR_MEM, "out of host memory recording a device allocation of %zu bytes", bytes);
    }
    *p = NULL;
    return gs_cuda_alloc_error(be, (int)e, bytes, NULL);
}

void gs_cuda_be_free(gs_backend *be, void *p)
{
    if (be) gs_mem_track_remove(&be->mem, p);
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
        gs_mem_track_remove(c->mem, w->idle[k].ptr);
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
        if (!gs_mem_track_add(&be->mem, b.ptr, want)) {
            if (cudaFree(b.ptr) != cudaSuccess) (void)cudaGetLastError();
            return GS_ERROR(GS_ERR_MEM, "out of host memory recording a device allocation of %zu bytes", want);
        }
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
        gs_cuda_be_free(be, p);
        return;
    }
    const work_block b = w->live[k];
    w->live[k] = w->live[--w->nlive];
    if (b.bytes > w->held_cap) {
        if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
        gs_cuda_be_free(be, b.ptr);
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
    GS_CALL(gs_cuda_be_fetch_results(c, 0, NULL)); /* waits for the stream and reports a bad index map */
    return GS_OK;
}

static gs_status cuda_mem_info(gs_backend *be, size_t *free_bytes, size_t *total_bytes)
{
    GS_CALL(GS_CUDA(cudaMemGetInfo(free_bytes, total_bytes)));
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
    gs_cuda_be_free(m->be, m->buffer);
    gs_cuda_be_free(m->be, m->rowptr);
    gs_cuda_be_free(m->be, m->colind);
    gs_cuda_be_free(m->be, m->val);
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
    m->be = be;
    GS_TRY(gs_cuda_be_alloc(be, (void **)&m->rowptr, ((size_t)A->nrows + 1) * sizeof(gs_int)));
    GS_TRY(gs_cuda_be_alloc(be, (void **)&m->colind, (size_t)A->nnz * sizeof(gs_int)));
    GS_TRY(gs_cuda_be_alloc(be, (void **)&m->val, (size_t)A->nnz * sizeof(double)));
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
        GS_TRY(gs_cuda_be_alloc(be, (void **)&tx, (size_t)A->ncols * sizeof(double)));
        GS_TRY(gs_cuda_be_alloc(be, (void **)&ty, (size_t)A->nrows * sizeof(double)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(tx, 0, (size_t)A->ncols * sizeof(double), c->stream)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(ty, 0, (size_t)A->nrows * sizeof(double), c->stream)));
        GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&m->mat, A->nrows, A->ncols, A->nnz, m->rowptr, m->colind, m->val,
                                       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                       CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&m->vx, A->ncols, tx, CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&m->vy, A->nrows, ty, CUDA_R_64F)));
        GS_TRY(GS_CUSPARSE(cusparseSpMV_bufferSize(c->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m->mat, m->vx,
                                             &zero, m->vy, CUDA_R_64F, c->spmv_alg, &buf_bytes)));
        if (buf_bytes > 0) GS_TRY(gs_cuda_be_alloc(be, &m->buffer, buf_bytes));
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
    gs_cuda_be_free(be, tx);
    gs_cuda_be_free(be, ty);
    M->impl = m;
    return GS_OK;
cleanup:
    cudaStreamSynchronize(c->stream);
    (void)cudaGetLastError();
    gs_cuda_be_free(be, tx);
    gs_cuda_be_free(be, ty);
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

gs_status gs_cuda_be_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y)
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
        if (beta != 0.0 && beta != 1.0) GS_CALL(gs_cuda_be_scale_n(c, A->nrows, beta, y->data));
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
    if (c->cusparse) cusparseDestroy(c->cusparse);
    if (c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    gs_free(&c);
}

static void cuda_destroy(gs_backend *be)
{
    if (!be) return;
    cuda_ctx_release(ctx_of(be));
    be->impl = NULL;
    gs_mem_track_free(&be->mem);
    gs_free(&be);
}

static const gs_backend_ops cuda_ops = {
    .alloc = gs_cuda_be_alloc,
    .free = gs_cuda_be_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .copy = cuda_copy,
    .synchronize = cuda_synchronize,
    .mem_info = cuda_mem_info,
    .set = gs_cuda_be_set,
    .scale = gs_cuda_be_scale,
    .axpy = gs_cuda_be_axpy,
    .axpby = gs_cuda_be_axpby,
    .axpbypcz = gs_cuda_be_axpbypcz,
    .pointwise_mult = gs_cuda_be_pointwise_mult,
    .dot = gs_cuda_be_dot,
    .dot2 = gs_cuda_be_dot2,
    .nrm2 = gs_cuda_be_nrm2,
    .mdot = gs_cuda_be_mdot,
    .mgemv = gs_cuda_be_mgemv,
    .mdot2 = gs_cuda_be_mdot2,
    .mgemv2 = gs_cuda_be_mgemv2,
    .gather = gs_cuda_be_gather,
    .scatter = gs_cuda_be_scatter,
    .mat_create = cuda_mat_create,
    .mat_destroy = cuda_mat_destroy,
    .spmv = gs_cuda_be_spmv,
    .ks_create = gs_cuda_be_ks_create,
    .ks_destroy = gs_cuda_be_ks_destroy,
    .ks_begin = gs_cuda_be_ks_begin,
    .cg_pq = gs_cuda_be_cg_pq,
    .cg_spmv_pq = gs_cuda_be_cg_spmv_pq,
    .cg_update = gs_cuda_be_cg_update,
    .cg_rz = gs_cuda_be_cg_rz,
    .cg_direction = gs_cuda_be_cg_direction,
    .ks_mark = gs_cuda_be_ks_mark,
    .ks_record = gs_cuda_be_ks_record,
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

int gs_backend_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

gs_status gs_backend_cuda_create(int device_id, gs_backend **be)
{
    gs_status st = GS_OK;
    gs_backend *b = NULL;
    cuda_ctx *c = NULL;
    int count = 0;
    const char *why = NULL;
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
    c->mem = &b->mem;
    snprintf(c->gpu_name, sizeof c->gpu_name, "%.*s", (int)sizeof c->gpu_name - 1, prop.name);

    c->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    /* idle work space kept at most: 1/16 of the device memory, 4 GiB at most */
    c->work.held_cap = prop.totalGlobalMem / 16 < ((size_t)4 << 30) ? prop.totalGlobalMem / 16 : ((size_t)4 << 30);
    /* our kernels until the caller chooses otherwise (device.spmv, gs_backend_select_spmv) */
    GS_TRY(gs_backend_cuda_spmv_select(b, "own"));

    GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)));
    GS_TRY(GS_CUSPARSE(cusparseCreate(&c->cusparse)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(c->cusparse, c->stream)));
    GS_TRY(GS_CUSPARSE(cusparseSetPointerMode(c->cusparse, CUSPARSE_POINTER_MODE_HOST)));

    GS_TRY(gs_cuda_be_alloc(b, (void **)&c->partials, PARTIALS_CAP * sizeof(double)));
    c->res_cap = RES_CAP_INIT;
    GS_TRY(gs_cuda_be_alloc(b, (void **)&c->res_dev, RES_HEADER + (size_t)c->res_cap * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMallocHost((void **)&c->res_host, RES_HEADER + (size_t)c->res_cap * sizeof(double))));
    GS_TRY(GS_CUDA(cudaMemsetAsync(c->res_dev, 0xff, sizeof(map_flag), c->stream))); /* no bad index yet */
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    *be = b;
    return GS_OK;
cleanup:
    cuda_ctx_release(c);
    gs_free(&b);
    return st;
}

gs_status gs_backend_cuda_make_current(gs_backend *be)
{
    if (!be || be->kind != GS_BACKEND_CUDA) return GS_OK;
    GS_CALL(GS_CUDA(cudaSetDevice(be->device_id)));
    return GS_OK;
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
        c->spmv_alg = CUSPARSE_SPMV_CSR_ALG2;
    } else if (strcmp(mode, "cusparse-alg1") == 0) {
        c->spmv_own = false;
        c->spmv_alg = CUSPARSE_SPMV_CSR_ALG1;
    } else if (strcmp(mode, "cusparse-alg2") == 0) {
        c->spmv_own = false;
        c->spmv_alg = CUSPARSE_SPMV_CSR_ALG2;
    } else {
        return GS_ERROR(GS_ERR_ARG, "SpMV \"%s\" (device.spmv) is not known; expected own, own:vec=V,rows=R,long=L, "
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
