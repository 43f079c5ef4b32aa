/* Stand-in for the GPU ILU / IC(0) numeric factorization in a build without CUDA (GS_WITH_CUDA=OFF):
 * no cuda backend can exist there, so the factorization always runs on the host; asking for the GPU
 * one is a request this build cannot serve. */
#include <string.h>

#include "precond/factor_cuda.h"

bool gs_factor_cuda_available(void) { return false; }

void gs_factor_dev_free(gs_factor_dev *f)
{
    if (f) memset(f, 0, sizeof *f); /* nothing can have been kept without CUDA */
}

static gs_status unsupported(const char *what, gs_factor_cuda_times *t)
{
    if (t) memset(t, 0, sizeof *t);
    return GS_ERROR(GS_ERR_UNSUPPORTED,
                    "%s on the GPU: this gpusolve was built without CUDA (rebuild with -DGS_WITH_CUDA=ON, or "
                    "set preconditioner.factor_on = \"host\")",
                    what);
}

gs_status gs_ilu_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U,
                              gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    (void)keep;
    (void)be;
    (void)A;
    (void)o;
    (void)L;
    (void)U;
    (void)info;
    return unsupported("ILU numeric factorization", t);
}

gs_status gs_ilu0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                               gs_csr *L, gs_csr *U, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    (void)keep;
    (void)be;
    (void)A;
    (void)o;
    (void)info;
    (void)A_dev;
    if (L) memset(L, 0, sizeof *L);
    if (U) memset(U, 0, sizeof *U);
    return unsupported("ILU(0) factorization", t);
}

gs_status gs_ic0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                              gs_csr *L, gs_csr *LT, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    (void)keep;
    (void)be;
    (void)A;
    (void)A_dev;
    (void)o;
    (void)L;
    (void)LT;
    (void)info;
    return unsupported("IC(0) factorization", t);
}
