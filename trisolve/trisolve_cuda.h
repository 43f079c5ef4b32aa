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

/* ---------------------------------------------------------------- GPU-side helpers shared by the
 * level-set and sync-free solvers: relaxed / acquire / release accesses at device (GPU) scope. They
 * bypass the non-coherent L1, so a value stored by another SM is seen as soon as it reaches L2. */

static __device__ __forceinline__ long long gs_ts_ld_relaxed(const long long *p)
{
    long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_ts_st_relaxed(long long *p, long long v)
{
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ int gs_ts_ld_relaxed(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_ts_st_relaxed(int *p, int v)
{
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ unsigned gs_ts_ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_ts_st_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* ---------------------------------------------------------------- a triangular factor's CSR on the
 * device (one allocation), the input of the GPU analyses. */
struct gs_ts_dcsr {
    gs_int n, nnz;
    gs_int *rowptr, *col;
    double *val;
    void *mem;
    double time_upload; /* seconds */
};

/* Upload T's CSR (synchronized: T may change after the call). */
gs_status gs_ts_dcsr_upload(gs_backend *be, const gs_csr *T, gs_ts_dcsr *A);
/* Free (the stream is synchronized first); safe on a zeroed struct. */
void gs_ts_dcsr_free(gs_backend *be, gs_ts_dcsr *A);

/* ---------------------------------------------------------------- the level-set plan built on the GPU
 * (levelset_cuda.cu): the same plan as gs_ls_plan_build (levels, rows renumbered level by level with
 * the rows of a level in increasing original order, HEC = column-major ELL part + CSR remainder,
 * 1/diagonal by position), computed by kernels from the uploaded CSR so that analysis costs little
 * more than the upload:
 *   1. levels: one thread per row in dependency order (blocks take their rows by an atomic ticket, so
 *      a row only waits for rows of running or finished blocks), each spinning on the level of its
 *      dependencies (-1 = not yet known), with the row lengths, 1/diagonals and a row-length
 *      histogram on the side;
 *   2. a stable radix sort of (level, row) gives perm; level_ptr from the sorted keys;
 *   3. the ELL width by gs_ls_ell_width on the downloaded histogram, the remainder pointers by a scan,
 *      and one thread per position writes its row's ELL slots, remainder entries and 1/diagonal.
 * Columns are original row numbers, or with position_cols the POSITION of the column's row (the
 * sync-free solver keeps its ready values by position). */
struct gs_ls_dplan {
    gs_int n, nlevels, ell_width, rem_nnz, nnz_off, max_row_length, max_width;
    bool position_cols;
    void *arena; /* one device allocation holding the arrays below */
    gs_int *perm, *level_ptr, *ell_col, *rem_ptr, *rem_col;
    double *ell_val, *rem_val, *dinv;
    gs_int *h_level_ptr;              /* host copy of level_ptr (gs_malloc) */
    double time_levels, time_layout; /* seconds */
};

/* Build the plan of the uploaded factor A (checked by gs_trisolve_check_factor: a unit factor stores no
 * diagonal, so every entry j != i is off-diagonal) on be's device; ELL width at most max_width
 * (1 .. GS_LS_ELL_MAX_WIDTH). D is overwritten (free it first); on failure nothing is kept. */
gs_status gs_ls_dplan_build(gs_backend *be, const gs_ts_dcsr *A, gs_uplo uplo, gs_int max_width, bool position_cols,
                            gs_ls_dplan *D);
/* Free the device and host arrays (the stream is synchronized first); keeps the statistics. */
void gs_ls_dplan_free(gs_backend *be, gs_ls_dplan *D);

#endif
