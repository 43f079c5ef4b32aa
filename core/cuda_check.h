/* CUDA runtime, cuBLAS and cuSPARSE return codes as gs_status, the vendor's error named: the one mapping
 * every file that calls CUDA uses (the *_cuda.cu files, and the benchmark programs that call the vendor
 * libraries themselves). An allocation failure is GS_ERR_DEVICE_MEM, anything else the library's status
 * (GS_ERR_CUDA, GS_ERR_CUBLAS, GS_ERR_CUSPARSE). A failed CUDA call also clears CUDA's non-sticky error
 * state, so that the next launch check does not report it again.
 *
 * The macros are expressions of type gs_status, for the propagation macros of core/status.h:
 *   GS_TRY(GS_CUDA(cudaMemsetAsync(p, 0, bytes, s)));
 *   kernel<<<grid, block, 0, s>>>(...);
 *   GS_CALL(GS_CUDA_LAUNCHED("kernel"));   (a bad launch configuration or an earlier asynchronous fault) */
#ifndef GS_CUDA_CHECK_H
#define GS_CUDA_CHECK_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/status.h"

static inline const char *gs_cublas_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_<unknown>";
}

static inline gs_status gs_cuda_check(cudaError_t e, const char *expr, const char *file, int line)
{
    if (e == cudaSuccess) return GS_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error so that later launch checks do not see it */
    return gs_error_set(e == cudaErrorMemoryAllocation ? GS_ERR_DEVICE_MEM : GS_ERR_CUDA, file, line,
                        "CUDA call %s failed: %s (%s)", expr, cudaGetErrorName(e), cudaGetErrorString(e));
}

static inline gs_status gs_cublas_check(cublasStatus_t s, const char *expr, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS) return GS_OK;
    return gs_error_set(s == CUBLAS_STATUS_ALLOC_FAILED ? GS_ERR_DEVICE_MEM : GS_ERR_CUBLAS, file, line,
                        "cuBLAS call %s failed: %s (%d)", expr, gs_cublas_status_name(s), (int)s);
}

static inline gs_status gs_cusparse_check(cusparseStatus_t s, const char *expr, const char *file, int line)
{
    if (s == CUSPARSE_STATUS_SUCCESS) return GS_OK;
    return gs_error_set(s == CUSPARSE_STATUS_ALLOC_FAILED ? GS_ERR_DEVICE_MEM : GS_ERR_CUSPARSE, file, line,
                        "cuSPARSE call %s failed: %s (%s)", expr, cusparseGetErrorName(s),
                        cusparseGetErrorString(s));
}

#define GS_CUDA(call) gs_cuda_check((call), #call, __FILE__, __LINE__)
#define GS_CUBLAS(call) gs_cublas_check((call), #call, __FILE__, __LINE__)
#define GS_CUSPARSE(call) gs_cusparse_check((call), #call, __FILE__, __LINE__)
#define GS_CUDA_LAUNCHED(kernel_name) \
    gs_cuda_check(cudaGetLastError(), "launch of kernel " kernel_name, __FILE__, __LINE__)

#endif
