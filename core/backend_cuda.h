/* CUDA-backend accessors for plug-ins that call vendor libraries themselves (e.g. cuSPARSE SpSV):
 * the backend's stream, so that their work is ordered with the backend's; the device arrays of a matrix.
 * Declarations in plain C: a build without CUDA links the stand-ins of backend_cuda_nocuda.c. */
#ifndef GS_BACKEND_CUDA_H
#define GS_BACKEND_CUDA_H

#include "core/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend's cudaStream_t (as void *); NULL for a non-cuda backend. */
void *gs_backend_cuda_stream(gs_backend *be);

/* The device arrays of a matrix created on a cuda backend (gs_mat_create), borrowed: valid until
 * gs_mat_destroy, to be only read, on the backend's stream (a GPU factorization reads A there instead
 * of uploading it again). false (view zeroed) for any other matrix. */
bool gs_mat_cuda_csr(const gs_matrix *M, gs_csr_dev *view);

/* After a device allocation of `bytes` failed with CUDA error `cuda_error` (a cudaError_t): true when the
 * device's default memory pool held freed blocks worth returning (the device is synchronized and the
 * pool trimmed; retry the allocation once), false otherwise. */
bool gs_cuda_alloc_retry(int cuda_error);
/* The error of a failed device allocation (GS_ERR_DEVICE_MEM for out of memory, else GS_ERR_CUDA): what,
 * the size, the device, CUDA's error, the device's free and total memory. Clears CUDA's error state. */
gs_status gs_cuda_alloc_error(const gs_backend *be, int cuda_error, size_t bytes, const char *what);

#ifdef __cplusplus
}
#endif
#endif
