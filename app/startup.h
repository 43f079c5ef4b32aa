/* Process start-up: the GPU backend (CUDA context, library handles, the backend's buffers) brought up on
 * a thread of its own while the main thread reads the matrix. */
#ifndef GS_APP_STARTUP_H
#define GS_APP_STARTUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "app/run.h"
#include "cfg/config.h"
#include "core/backend.h"

/* The key of the backend a configuration asks for (device.backend, device.id, device.spmv and
 * device.threads): a problem's backend is reused while its key stays the same. */
void gs_app_backend_key(const gs_config *cfg, char *key, size_t len);

/* A backend being started beside the read. Only a cuda backend is started ahead (device.backend "auto"
 * or "cuda" with a usable GPU): the host backend costs nothing to create and takes its thread team from
 * the thread that creates it. */
typedef struct gs_app_prefetch {
    pthread_t thread;
    bool started;
    char name[16], spmv[64], key[96];
    int id;
    gs_backend *be;  /* the started backend (NULL: none, e.g. its creation failed: the run creates it
                        again on the main thread and reports that error) */
    double seconds;  /* the start-up's wall time */
} gs_app_prefetch;

/* Starts the backend cfg asks for on a thread (nothing when it is not a cuda one or no thread can be
 * made). */
void gs_app_prefetch_start(gs_app_prefetch *pf, const gs_config *cfg);
/* Waits for it, then gs_app_prefetch_take. Safe when nothing was started. */
void gs_app_prefetch_finish(gs_app_prefetch *pf, gs_app_problem *p);
/* Hands the started backend pf->be to p (p->be, p->be_key; p->time_init and p->init_overlapped), made
 * current for the calling thread; without p (the read failed) it is destroyed and the read's pending
 * error is left as it is. */
void gs_app_prefetch_take(gs_app_prefetch *pf, gs_app_problem *p);

#endif
