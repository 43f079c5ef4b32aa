/* Our CSR SpMV on the GPU, y = alpha A x + beta y (double values, 32-bit indices): a plan chosen at
 * creation from the row-length statistics (threads per row, rows per thread group, which rows are
 * "long" and split over several blocks), applied on a stream any number of times.
 *
 * Internal to the cuda backend (core/backend_cuda.cu); tests and benchmarks use the two backend hooks
 * at the end to force a variant and to see which one a matrix got. Only in builds with CUDA
 * (GS_HAVE_CUDA): callers outside *.cu files guard their use with #ifdef GS_HAVE_CUDA. */
#ifndef GS_SPMV_CUDA_H
#define GS_SPMV_CUDA_H

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forced kernel parameters; a 0 (or GS_SPMV_LONG_AUTO) field is chosen from the matrix. */
typedef struct gs_spmv_params {
    int vec;              /* threads per row in the vector kernel: 2, 4, 8, 16 or 32 */
    int rows;             /* rows per thread group (independent loads in flight): 1, 2 or 4 */
    long long long_above; /* rows with more entries than this take the split path; GS_SPMV_LONG_AUTO:
                             chosen from the statistics; GS_SPMV_LONG_OFF: no row is long */
} gs_spmv_params;

#define GS_SPMV_LONG_AUTO (-1LL)
#define GS_SPMV_LONG_OFF (-2LL)

/* Entries per block of the split path: a long row of L entries is cut into ceil(L / 2048) chunks. */
#define GS_SPMV_CHUNK 2048

typedef struct gs_spmv_plan gs_spmv_plan;

/* Parses "key=value[,key=value...]" with keys vec (2|4|8|16|32|auto), rows (1|2|4|auto) and long
 * (a row length N >= 0, auto or off); "" gives every field automatic. */
gs_status gs_spmv_params_parse(const char *text, gs_spmv_params *prm);

/* Plans y = alpha A x + beta y for the host matrix A whose device copy is rowptr/colind/val (owned by
 * the caller, which keeps them alive while the plan lives). The split path's lists are uploaded
 * through `be`. prm may be NULL (all automatic). */
gs_status gs_spmv_plan_create(gs_backend *be, const gs_csr *A, const gs_int *rowptr, const gs_int *colind,
                              const double *val, const gs_spmv_params *prm, gs_spmv_plan **plan);
/* y = alpha A x + beta y, enqueued on `stream` (a cudaStream_t); beta == 0 never reads y. x and y
 * are device arrays of ncols and nrows doubles; they must not overlap. */
gs_status gs_spmv_plan_apply(const gs_spmv_plan *plan, double alpha, const double *x, double beta, double *y,
                             void *stream);
/* Fused CG step (solver/cg.c): q = A p and, in the same kernel, p'q followed by the scalar step
 * ksl_after_pq (core/kstate_logic.h) on the scalars k, iteration it's record in ring. Possible when
 * gs_spmv_plan_fuses_cg says so (no long rows, square, not empty); partials needs *partials doubles
 * (one per thread block), count a device counter that is 0 between kernels. */
struct gs_kscalars;
bool gs_spmv_plan_fuses_cg(const gs_spmv_plan *plan, size_t *partials);
gs_status gs_spmv_plan_apply_cg_pq(const gs_spmv_plan *plan, const double *p, double *q, struct gs_kscalars *k,
                                   unsigned *count, double *partials, int it, gs_krec *ring, void *stream);
/* Frees the plan's own device arrays (not the matrix) and NULLs *plan; safe on NULL. The caller makes
 * sure no apply is still running (stream synchronized). */
void gs_spmv_plan_destroy(gs_spmv_plan **plan);
/* e.g. "own vector vec=8 rows=4, 12 long rows (> 224 entries) in 40 chunks". */
const char *gs_spmv_plan_describe(const gs_spmv_plan *plan);
/* The chosen shape (for tests): vec, rows per group, long-row threshold (GS_INT_MAX: none), number of
 * long rows and of chunks. Any pointer may be NULL. */
void gs_spmv_plan_shape(const gs_spmv_plan *plan, int *vec, int *rows, gs_int *long_above, gs_int *nlong,
                        gs_int *nchunks);

/* ---- backend hooks (implemented in backend_cuda.cu) ---- */

/* Chooses the SpMV of matrices created on `be` from now on (matrices already created keep theirs):
 *   "own"                      our kernels, shape chosen per matrix (the default)
 *   "own:vec=8,rows=2,long=64" our kernels with forced parameters (see gs_spmv_params_parse)
 *   "cusparse"                 cuSPARSE SpMV, CSR_ALG2
 *   "cusparse-alg1", "cusparse-alg2"
 * The choice is shown at the end of be->device_name ("... [SpMV own]"). GS_ERR_ARG for an unknown
 * mode or a backend other than cuda (declared in core/backend_cuda.h). */
/* Which SpMV the matrix got, e.g. "own vector vec=8 rows=4" or "cuSPARSE CSR_ALG2". */
const char *gs_mat_cuda_spmv_describe(const gs_matrix *M);
/* The plan of a matrix created with our kernels, NULL for a cuSPARSE one (for tests). */
const gs_spmv_plan *gs_mat_cuda_spmv_plan(const gs_matrix *M);

#ifdef __cplusplus
}
#endif
#endif
