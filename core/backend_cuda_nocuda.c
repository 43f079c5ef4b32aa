/* Stand-in for the cuda backend in a build without CUDA (GS_WITH_CUDA=OFF): never available. */
#include <stddef.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"

#define NOCUDA_REASON "built without CUDA (GS_WITH_CUDA=OFF)"

bool gs_backend_cuda_available(const char **why)
{
    if (why) *why = NOCUDA_REASON;
    return false;
}

int gs_backend_cuda_device_count(void) { return 0; }

gs_status gs_backend_cuda_create(int device_id, gs_backend **be)
{
    *be = NULL;
    return GS_ERROR(GS_ERR_UNSUPPORTED, "cannot create the cuda backend (device %d): " NOCUDA_REASON,
                    device_id);
}

gs_status gs_backend_cuda_spmv_select(gs_backend *be, const char *mode)
{
    return GS_ERROR(GS_ERR_ARG, "SpMV selection \"%s\" asked of a %s backend; only the cuda backend has a choice",
                    mode ? mode : "(null)", be ? be->name : "missing");
}

gs_status gs_backend_cuda_make_current(gs_backend *be)
{
    (void)be;
    return GS_OK;
}

gs_status gs_backend_cuda_ks_combine(gs_kstate *ks, int nranks, gs_cuda_gather_fn gather, void *ctx)
{
    (void)ks, (void)nranks, (void)gather, (void)ctx;
    return GS_ERROR(GS_ERR_ARG, "gs_backend_cuda_ks_combine: " NOCUDA_REASON);
}

void *gs_backend_cuda_stream(gs_backend *be)
{
    (void)be;
    return NULL;
}

bool gs_mat_cuda_csr(const gs_matrix *M, gs_csr_dev *view)
{
    (void)M;
    memset(view, 0, sizeof *view);
    return false;
}

gs_status gs_backend_cuda_work_alloc(gs_backend *be, void **p, size_t bytes, const char *what)
{
    (void)what;
    return gs_backend_alloc(be, p, bytes);
}

void gs_backend_cuda_work_free(gs_backend *be, void *p)
{
    if (p) gs_backend_free(be, p);
}

void gs_backend_cuda_work_trim(gs_backend *be) { (void)be; }

void gs_backend_cuda_set_analysis_pool(gs_backend *be, bool on)
{
    (void)be;
    (void)on;
}

bool gs_backend_cuda_analysis_pool(const gs_backend *be)
{
    (void)be;
    return false;
}

void gs_backend_cuda_versions(int *runtime, int *driver)
{
    *runtime = 0;
    *driver = 0;
}
