/* CUDA-backend accessors for plug-ins that call vendor libraries themselves (e.g. cuSPARSE SpSV):
 * the backend's stream, so that their work is ordered with the backend's. Only for *_cuda.cu files. */
#ifndef GS_BACKEND_CUDA_H
#define GS_BACKEND_CUDA_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend's cudaStream_t (as void *); NULL for a non-cuda backend. */
void *gs_backend_cuda_stream(gs_backend *be);

#ifdef __cplusplus
}
#endif
#endif
