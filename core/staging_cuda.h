/* Pinned, chunked host-to-device uploads shared by the GPU setup steps (triangular-solve analysis, GPU
 * factorization, Jacobi analysis): a pageable cudaMemcpy moves ~6-7 GB/s on the H100 host because the
 * driver copies through its own pinned buffer with one thread; here the OpenMP threads copy the data
 * into a small pinned staging buffer of GS_STAGE_SLOTS chunks while the DMA engine drains the chunks
 * already filled. The buffer is allocated once per process by the first upload of at least
 * GS_STAGE_MIN_BYTES and reused; one upload holds it at a time. Only for *_cuda.cu files. */
#ifndef GS_STAGING_CUDA_H
#define GS_STAGING_CUDA_H

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define GS_STAGE_SLOT_BYTES ((size_t)2 << 20) /* one chunk: ~50 us of DMA, long enough to hide a copy's start */
#define GS_STAGE_SLOTS 4                      /* chunks in flight: the host copies ahead of the DMA engine */
#define GS_STAGE_MIN_BYTES ((size_t)1 << 20)  /* smaller uploads go directly from pageable memory */

/* One upload's use of the staging buffer (zero it, or let gs_stage_begin do it). */
typedef struct gs_stage {
    bool locked, staged, used; /* used: this upload went through the staging buffer */
    int next;                  /* slot the next chunk goes to */
    bool pending[GS_STAGE_SLOTS];       /* a DMA out of the slot may still run */
    cudaEvent_t drained[GS_STAGE_SLOTS]; /* recorded after the slot's last DMA */
    double alloc_time;         /* seconds spent allocating the buffer (the first upload of the process) */
    long long bytes;           /* bytes queued */
} gs_stage;

/* Takes the staging buffer (allocating it the first time) when `total` bytes are worth staging;
 * otherwise (or when pinned memory cannot be had) the copies go directly from pageable memory. */
gs_status gs_stage_begin(gs_stage *U, size_t total);
/* dst (device) = src (host), `bytes` bytes, queued on stream s, chunk by chunk through the slots. src must
 * stay valid until gs_stage_end. */
gs_status gs_stage_copy(gs_stage *U, void *dst, const void *src, size_t bytes, cudaStream_t s);
/* Waits until every DMA out of the buffer has drained and gives the buffer back. Safe to call twice and
 * after a failed gs_stage_begin; returns the first failure of a wait. */
gs_status gs_stage_end(gs_stage *U);

#endif
