/* The NCCL transport's stand-in in a build without NCCL (dist/nccl.h): the ranks always exchange through
 * MPI; asking for NCCL is an error. */
#include "dist/nccl.h"

#include <stdio.h>
#include <string.h>

bool gs_nccl_built(void) { return false; }

gs_status gs_nccl_create(MPI_Comm comm, gs_backend *local, const char *want, gs_nccl **out, char *why,
                         size_t why_len)
{
    (void)comm, (void)local;
    *out = NULL;
    snprintf(why, why_len, "%s", strcmp(want, "mpi") == 0 ? "device.transport = \"mpi\"" : "built without NCCL");
    if (strcmp(want, "nccl") == 0)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "device.transport = \"nccl\": this gpusolve was built without NCCL "
                                            "(GS_WITH_NCCL=OFF); use \"auto\" or \"mpi\"");
    return GS_OK;
}

void gs_nccl_destroy(gs_nccl **n) { *n = NULL; }

gs_status gs_nccl_allgather(void *ctx, const double *send, double *recv, size_t count, void *stream)
{
    (void)ctx, (void)send, (void)recv, (void)count, (void)stream;
    return GS_ERROR(GS_ERR_INTERNAL, "NCCL gather in a build without NCCL");
}

gs_status gs_nccl_halo_begin(gs_nccl *n, const gs_halo *h, const double *sendv, double *xh, void *stream)
{
    (void)n, (void)h, (void)sendv, (void)xh, (void)stream;
    return GS_ERROR(GS_ERR_INTERNAL, "NCCL exchange in a build without NCCL");
}

gs_status gs_nccl_halo_end(gs_nccl *n, void *stream)
{
    (void)n, (void)stream;
    return GS_ERROR(GS_ERR_INTERNAL, "NCCL exchange in a build without NCCL");
}

gs_status gs_nccl_time(gs_nccl *n, double *seconds)
{
    (void)n;
    *seconds = 0.0;
    return GS_OK;
}

void gs_nccl_time_reset(gs_nccl *n) { (void)n; }
