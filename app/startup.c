/* Process start-up (startup.h). The CUDA context, the cuBLAS/cuSPARSE handles and the backend's
 * buffers take from tens to hundreds of milliseconds to create, the time it takes to read a matrix of a
 * few megabytes: done on a second thread, the two overlap. The thread does what the run would do
 * (gs_backend_create, gs_backend_select_spmv); a failure there is dropped, and the run creates the
 * backend again on its own thread, so errors are reported exactly as without the overlap. */
#include "app/startup.h"

#include <stdio.h>
#include <string.h>

static void *prefetch_main(void *arg)
{
    gs_app_prefetch *pf = arg;
    const double t0 = gs_wtime();
    gs_backend *be = NULL;
    if (gs_backend_create(pf->name, pf->id, &be) == GS_OK && be->kind == GS_BACKEND_CUDA &&
        gs_backend_select_spmv(be, pf->spmv) == GS_OK)
        pf->be = be;
    else
        gs_backend_destroy(&be);
    gs_error_clear(); /* this thread's error state: the run reports its own */
    pf->seconds = gs_wtime() - t0;
    return NULL;
}

void gs_app_backend_key(const gs_config *cfg, char *key, size_t len)
{
    snprintf(key, len, "%s:%d:%s:%lld", gs_config_string(cfg, "device.backend"), (int)gs_config_int(cfg, "device.id"),
             gs_config_string(cfg, "device.spmv"), gs_config_int(cfg, "device.threads"));
}

void gs_app_prefetch_start(gs_app_prefetch *pf, const gs_config *cfg)
{
    memset(pf, 0, sizeof *pf);
    const char *name = gs_config_string(cfg, "device.backend");
    if (strcmp(name, "auto") != 0 && strcmp(name, "cuda") != 0) return;
    snprintf(pf->name, sizeof pf->name, "%s", name);
    snprintf(pf->spmv, sizeof pf->spmv, "%s", gs_config_string(cfg, "device.spmv"));
    pf->id = (int)gs_config_int(cfg, "device.id");
    gs_app_backend_key(cfg, pf->key, sizeof pf->key);
    pf->started = pthread_create(&pf->thread, NULL, prefetch_main, pf) == 0;
}

void gs_app_prefetch_take(gs_app_prefetch *pf, gs_app_problem *p)
{
    if (!pf->be) return;
    if (!p) { /* the read failed: its error stays pending for the caller */
        gs_backend_destroy(&pf->be);
        return;
    }
    /* the backend works on the device current for the thread that uses it */
    if (gs_backend_make_current(pf->be) != GS_OK) {
        gs_backend_destroy(&pf->be);
        gs_error_clear(); /* the run makes the backend again and reports what fails */
        return;
    }
    p->be = pf->be;
    snprintf(p->be_key, sizeof p->be_key, "%s", pf->key);
    p->time_init = pf->seconds;
    p->init_overlapped = true;
    pf->be = NULL;
}

void gs_app_prefetch_finish(gs_app_prefetch *pf, gs_app_problem *p)
{
    if (!pf->started) return;
    pthread_join(pf->thread, NULL);
    pf->started = false;
    gs_app_prefetch_take(pf, p);
}
