/* gs_factor_numeric_dev (precond/factor_kernels.h): the device factorization of a kind, on the cuda
 * backend; A read from the solver's operator where it is resident on that backend with A's sizes. */
#include "precond/factor_kernels.h"

#include "core/backend_cuda.h"
#include "precond/factor_cuda.h"

/* The operator's device copy when it is A's (sizes), else NULL (A is uploaded). */
static const gs_csr_dev *resident_A(const gs_matrix *op, const gs_csr *A, gs_csr_dev *view)
{
    if (!op || !A || !gs_mat_cuda_csr(op, view)) return NULL;
    return view->nrows == A->nrows && view->ncols == A->ncols && view->nnz == A->nnz ? view : NULL;
}

gs_status gs_factor_numeric_dev(gs_backend *be, gs_factor_kind kind, const gs_csr *A, const gs_matrix *op,
                                const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info,
                                gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_csr_dev Av;
    switch (kind) {
    case GS_FACTOR_ILU: return gs_ilu_numeric_cuda(be, A, o, L, U, info, t, keep);
    case GS_FACTOR_ILU0_A: return gs_ilu0_numeric_cuda(be, A, resident_A(op, A, &Av), o, L, U, info, t, keep);
    case GS_FACTOR_IC0: return gs_ic0_numeric_cuda(be, A, resident_A(op, A, &Av), o, L, U, info, t, keep);
    }
    return GS_ERROR(GS_ERR_ARG, "gs_factor_numeric_dev: unknown factorization kind %d", (int)kind);
}
