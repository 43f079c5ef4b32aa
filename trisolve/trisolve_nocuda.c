/* Stand-ins for the GPU triangular solvers in a build without CUDA (GS_WITH_CUDA=OFF): a cuda backend
 * cannot exist there, so these are reached only by a programming error; they say so. */
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

static gs_status no_cuda(const char *type)
{
    return GS_ERROR(GS_ERR_UNSUPPORTED, "trisolve type %s on the GPU: this gpusolve was built without CUDA "
                                        "(rebuild with -DGS_WITH_CUDA=ON)", type);
}

gs_status gs_trisolve_create_levelset_cuda(gs_trisolve *ts) { return no_cuda("levelset"); }
gs_status gs_trisolve_create_cusparse_cuda(gs_trisolve *ts) { return no_cuda("cusparse"); }
gs_status gs_trisolve_create_syncfree_cuda(gs_trisolve *ts) { return no_cuda("syncfree"); }
gs_status gs_trisolve_create_jacobi_cuda(gs_trisolve *ts) { return no_cuda(ts->type); }
gs_status gs_trisolve_create_tiled_cuda(gs_trisolve *ts) { return no_cuda("tiled"); }

gs_int gs_ts_syncfree_levels(const gs_trisolve *ts)
{
    (void)ts;
    return -1;
}
