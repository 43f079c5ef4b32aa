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

/* Chooses the SpMV of matrices created on a cuda backend from now on: "own" (our kernels, the
 * default), "own:vec=V,rows=R,long=L" (our kernels with forced parameters, see core/spmv_cuda.h),
 * "cusparse" (= "cusparse-alg2"), "cusparse-alg1". GS_ERR_ARG for an unknown mode or another backend. */
gs_status gs_backend_cuda_spmv_select(gs_backend *be, const char *mode);
/* cudaSetDevice(be->device_id) for the calling thread. */
gs_status gs_backend_cuda_make_current(gs_backend *be);

/* The device arrays of a matrix created on a cuda backend (gs_mat_create), borrowed: valid until
 * gs_mat_destroy, to be only read, on the backend's stream (a GPU factorization reads A there instead
 * of uploading it again). false (view zeroed) for any other matrix. */
bool gs_mat_cuda_csr(const gs_matrix *M, gs_csr_dev *view);

/* Work space on the backend's stream (temporaries of an analysis, which only work queued on that stream
 * touches): gs_backend_cuda_work_free keeps the block for a later gs_backend_cuda_work_alloc of about its
 * size instead of returning it to CUDA (no cudaFree, no synchronization: both uses are ordered by the
 * stream). Idle blocks are returned on gs_backend_cuda_work_trim, when the backend is destroyed, when a
 * device allocation fails (before it is retried), and beyond 64 blocks or 1/16 of the device memory (at
 * most 4 GiB). what names the space in the error of a failed allocation. Another backend: plain
 * gs_backend_alloc / gs_backend_free. */
gs_status gs_backend_cuda_work_alloc(gs_backend *be, void **p, size_t bytes, const char *what);
void gs_backend_cuda_work_free(gs_backend *be, void *p);
void gs_backend_cuda_work_trim(gs_backend *be);

/* Where the triangular solvers' analyses take their work space on this backend (trisolve/analysis_cuda.cu,
 * gs_ts_work_alloc): the work space above (false, the default), or cudaMallocAsync from the device's default
 * memory pool (true; measurements: cheaper later allocations, a slow first one). Set it before the first
 * analysis on the backend, never while an analysis holds work space. */
void gs_backend_cuda_set_analysis_pool(gs_backend *be, bool on);
bool gs_backend_cuda_analysis_pool(const gs_backend *be);

/* Fused CG across processes (dist/: a GPU per MPI rank): from now on the inner products of the CG state
 * ks (p'Ap, r'r, r'z, made on a cuda backend) are this process's parts; gather, enqueued on the backend's
 * stream (cudaStream_t as void *), must make recv[r * count ..] process r's count doubles of send, for r
 * in 0..nranks-1, with every process calling it in the same order; the parts are then added in process
 * order on the device, so every process takes the same step, and the host never waits for a reduction.
 * One gather per p'Ap (count 1); r'r of a cg_update with rz_is_rr false waits for the cg_rz of the same
 * iteration and goes with it (count 2; another step first sends it alone). GS_ERR_ARG for another
 * backend's state or one combined already. */
typedef gs_status (*gs_cuda_gather_fn)(void *ctx, const double *send, double *recv, size_t count, void *stream);
gs_status gs_backend_cuda_ks_combine(gs_kstate *ks, int nranks, gs_cuda_gather_fn gather, void *ctx);

/* The CUDA runtime's and the driver's versions (1000 * major + 10 * minor; 0 when unknown or, for the
 * driver, when none is installed). A build without CUDA answers 0 for both. */
void gs_backend_cuda_versions(int *runtime, int *driver);

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
