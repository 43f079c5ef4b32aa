/* Stand-in for the GPU ParILU sweep in a build without CUDA (GS_WITH_CUDA=OFF): a cuda backend cannot
 * exist there, so this is reached only by a programming error; it says so. */
#include "precond/parilu.h"

gs_status gs_parilu_sweep_cuda(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep)
{
    (void)be;
    (void)K;
    (void)in;
    (void)out;
    (void)sweep;
    return GS_ERROR(GS_ERR_UNSUPPORTED, "ParILU sweeps on the GPU: this gpusolve was built without CUDA "
                                        "(rebuild with -DGS_WITH_CUDA=ON)");
}

gs_status gs_parilu_unscale_cuda(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                 const double *x, double *lval, double *uval)
{
    (void)be;
    (void)K;
    (void)F;
    (void)x;
    (void)lval;
    (void)uval;
    return GS_ERROR(GS_ERR_UNSUPPORTED, "ParILU unscaling on the GPU: this gpusolve was built without CUDA "
                                        "(rebuild with -DGS_WITH_CUDA=ON)");
}
