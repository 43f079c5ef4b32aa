/* Private to the trisolve CUDA files: CUDA/cuSPARSE return codes as gs_status (vendor error named), the
 * backend's stream, and device arrays allocated and uploaded through the backend. */
#ifndef GS_TRISOLVE_CUDA_H
#define GS_TRISOLVE_CUDA_H

#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "trisolve/trisolve_impl.h"

static inline gs_status gs_ts_cuda_status(cudaError_t e, const char *expr, const char *file, int line)
{
    if (e == cudaSuccess) return GS_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error so that later launch checks do not see it */
    return gs_error_set(e == cudaErrorMemoryAllocation ? GS_ERR_DEVICE_MEM : GS_ERR_CUDA, file, line,
                        "CUDA call %s failed: %s (%s)", expr, cudaGetErrorName(e), cudaGetErrorString(e));
}

static inline gs_status gs_ts_cusparse_status(cusparseStatus_t s, const char *expr, const char *file, int line)
{
    if (s == CUSPARSE_STATUS_SUCCESS) return GS_OK;
    return gs_error_set(s == CUSPARSE_STATUS_ALLOC_FAILED ? GS_ERR_DEVICE_MEM : GS_ERR_CUSPARSE, file, line,
                        "cuSPARSE call %s failed: %s (%s)", expr, cusparseGetErrorName(s),
                        cusparseGetErrorString(s));
}

/* Use inside GS_CALL / GS_TRY: GS_TRY(TS_CUDA(cudaStreamCreate(&s))). */
#define TS_CUDA(call) gs_ts_cuda_status((call), #call, __FILE__, __LINE__)
#define TS_CUSPARSE(call) gs_ts_cusparse_status((call), #call, __FILE__, __LINE__)
/* After every kernel launch: a bad launch configuration or an earlier asynchronous fault. */
#define TS_LAUNCHED(kernel_name) \
    gs_ts_cuda_status(cudaGetLastError(), "launch of kernel " kernel_name, __FILE__, __LINE__)

static inline cudaStream_t gs_ts_stream(gs_backend *be) { return (cudaStream_t)gs_backend_cuda_stream(be); }

/* *dst = device copy of count elements of src (count may be 0: a valid minimal block). */
template <typename T>
static gs_status gs_ts_upload_array(gs_backend *be, T **dst, const T *src, size_t count)
{
    void *p = NULL;
    GS_CALL(gs_backend_alloc(be, &p, count * sizeof(T)));
    *dst = (T *)p;
    if (count > 0) GS_CALL(gs_backend_upload(be, p, src, count * sizeof(T)));
    return GS_OK;
}

/* gs_backend_free and NULL; safe on NULL. */
template <typename T>
static void gs_ts_free_array(gs_backend *be, T **p)
{
    if (*p) gs_backend_free(be, (void *)*p);
    *p = NULL;
}

#endif
