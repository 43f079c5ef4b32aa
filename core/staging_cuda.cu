/* Pinned, chunked host-to-device uploads (core/staging_cuda.h). */
#include <pthread.h>
#include <string.h>

#include "core/backend.h"
#include "core/cuda_check.h"
#include "core/mem.h"
#include "core/staging_cuda.h"



/* The process's staging buffer: GS_STAGE_SLOTS chunks of pinned, portable host memory, allocated by the
 * first upload of at least GS_STAGE_MIN_BYTES and kept until the process exits (the operating system
 * releases it); one upload uses it at a time (st_lock). st_failed: the allocation failed once (locked
 * memory limit): uploads go directly from pageable memory from then on. */
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static char *st_host = NULL;
static bool st_failed = false;

/* Takes the staging buffer (allocating it the first time) when `total` bytes are worth staging. */
gs_status gs_stage_begin(gs_stage *U, size_t total)
{
    memset(U, 0, sizeof *U);
    if (total < GS_STAGE_MIN_BYTES) return GS_OK;
    pthread_mutex_lock(&st_lock);
    U->locked = true;
    if (!st_host && !st_failed) {
        double t0 = gs_wtime();
        void *p = NULL;
        if (cudaHostAlloc(&p, GS_STAGE_SLOTS * GS_STAGE_SLOT_BYTES, cudaHostAllocPortable) == cudaSuccess) {
            st_host = (char *)p;
        } else {
            (void)cudaGetLastError(); /* not an error of the upload: it copies from pageable memory */
            st_failed = true;
        }
        U->alloc_time = gs_wtime() - t0;
    }
    if (!st_host) return GS_OK;
    for (int k = 0; k < GS_STAGE_SLOTS; k++) GS_CALL(GS_CUDA(cudaEventCreateWithFlags(&U->drained[k], cudaEventDisableTiming)));
    U->staged = U->used = true;
    return GS_OK;
}

/* dst (device) = src (host), `bytes` bytes, queued on stream s: chunk by chunk through the slots in
 * turn, each slot refilled once its previous DMA has drained. */
gs_status gs_stage_copy(gs_stage *U, void *dst, const void *src, size_t bytes, cudaStream_t s)
{
    U->bytes += (long long)bytes;
    if (!U->staged) {
        if (bytes) GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s)));
        return GS_OK;
    }
    for (size_t off = 0; off < bytes; off += GS_STAGE_SLOT_BYTES) {
        size_t len = bytes - off < GS_STAGE_SLOT_BYTES ? bytes - off : GS_STAGE_SLOT_BYTES;
        int k = U->next;
        U->next = (k + 1) % GS_STAGE_SLOTS;
        if (U->pending[k]) GS_CALL(GS_CUDA(cudaEventSynchronize(U->drained[k])));
        char *slot = st_host + (size_t)k * GS_STAGE_SLOT_BYTES;
        gs_parallel_copy(slot, (const char *)src + off, len);
        GS_CALL(GS_CUDA(cudaMemcpyAsync((char *)dst + off, slot, len, cudaMemcpyHostToDevice, s)));
        GS_CALL(GS_CUDA(cudaEventRecord(U->drained[k], s)));
        U->pending[k] = true;
    }
    return GS_OK;
}

/* Waits until every DMA out of the buffer has drained and gives the buffer back. Safe to call twice and
 * after a failed st_begin; the first failure of a wait is returned (the buffer is given back anyway:
 * after a device fault the context is lost and no copy is running). */
gs_status gs_stage_end(gs_stage *U)
{
    gs_status st = GS_OK;
    for (int k = 0; k < GS_STAGE_SLOTS; k++) {
        if (U->pending[k]) {
            gs_status sk = GS_CUDA(cudaEventSynchronize(U->drained[k]));
            if (st == GS_OK) st = sk;
            U->pending[k] = false;
        }
        if (U->drained[k] && cudaEventDestroy(U->drained[k]) != cudaSuccess) (void)cudaGetLastError();
        U->drained[k] = NULL;
    }
    U->staged = false;
    if (U->locked) pthread_mutex_unlock(&st_lock);
    U->locked = false;
    return st;
}

