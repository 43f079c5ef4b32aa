/* The residual history of a run (history.h). */
#include "app/history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"
#include "core/mem.h"

#define HISTORY_FLUSH 0.1


static void history_fail(gs_app_history *h, gs_status st)
{
    if (h->st != GS_OK) return;
    h->st = st;
    h->err = strdup(gs_error_message());
}

/* The live file restarted for attempt `attempt`: emptied, the header written. */
static gs_status live_restart(gs_app_history *h, int attempt)
{
    if (fflush(h->af.f) != 0) return gs_atomic_write_error(&h->af, __FILE__, __LINE__);
    if (ftruncate(h->af.fd, 0) != 0 || lseek(h->af.fd, 0, SEEK_SET) != 0)
        return GS_ERROR(GS_ERR_IO, "%s: cannot empty the history's temporary file %s: %s", h->af.path, h->af.tmp,
                        strerror(errno));
    h->live_attempt = attempt;
    if (fprintf(h->af.f, "iteration,residual,relative_residual,time_s\n") < 0)
        return gs_atomic_write_error(&h->af, __FILE__, __LINE__);
    return GS_OK;
}

static int live_row(gs_app_history *h, int i)
{
    return fprintf(h->af.f, "%d,%.17g,%.17g,%.9f\n", h->it[i], h->res[i], h->bnorm > 0 ? h->res[i] / h->bnorm : h->res[i],
                   h->t[i]);
}

static void history_append(gs_app_history *h, int iteration, double resnorm)
{
    if (h->st != GS_OK) return;
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 1024;
        gs_status st;
        if ((st = gs_realloc(&h->it, (size_t)cap, sizeof *h->it)) != GS_OK ||
            (st = gs_realloc(&h->attempt, (size_t)cap, sizeof *h->attempt)) != GS_OK ||
            (st = gs_realloc(&h->res, (size_t)cap, sizeof *h->res)) != GS_OK ||
            (st = gs_realloc(&h->t, (size_t)cap, sizeof *h->t)) != GS_OK) {
            history_fail(h, st);
            return;
        }
        h->cap = cap;
    }
    const double now = gs_wtime();
    if (!h->started) {
        h->started = true;
        h->t0 = now;
    }
    h->it[h->n] = iteration;
    h->attempt[h->n] = h->current;
    h->res[h->n] = resnorm;
    h->t[h->n] = now - h->t0;
    h->n++;
    if (!h->live) return;
    gs_status st = GS_OK;
    const bool first = h->live_attempt != h->current; /* the attempt's first row: shown at once */
    if (first) st = live_restart(h, h->current);
    if (st == GS_OK && live_row(h, h->n - 1) < 0) st = gs_atomic_write_error(&h->af, __FILE__, __LINE__);
    if (st == GS_OK && (first || now - h->flushed >= HISTORY_FLUSH)) {
        if (fflush(h->af.f) != 0) st = gs_atomic_write_error(&h->af, __FILE__, __LINE__);
        h->flushed = now;
    }
    if (st != GS_OK) history_fail(h, st);
}

void gs_app_history_monitor(void *ctx, int iteration, double resnorm)
{
    gs_app_history *h = ctx;
    if (h->keep) history_append(h, iteration, resnorm);
    if (h->mon) gs_app_monitor_iteration(h->mon, iteration, resnorm);
}

void gs_app_history_attempt_begin(void *ctx, int index)
{
    gs_app_history *h = ctx;
    h->current = index;
    h->started = false;
    if (h->mon) gs_app_monitor_attempt(h->mon, index);
}

gs_status gs_app_history_open(gs_app_history *h, const char *path)
{
    gs_output_target t;
    h->live_attempt = -1;
    if (gs_output_probe(path, &t) != GS_OK || t.kind != GS_OUTPUT_FILE) {
        gs_error_clear(); /* reported by the writing at the end, as for any output */
        return GS_OK;
    }
    GS_CALL(gs_atomic_open(&h->af, path));
    h->live = true;
    h->flushed = gs_wtime();
    return GS_OK;
}

gs_status gs_app_history_write(gs_app_history *h, const char *path, int attempt)
{
    gs_status st = GS_OK;
    if (h->st != GS_OK) return GS_ERROR(h->st, "%s", h->err ? h->err : gs_status_name(h->st));
    if (h->live) {
        if (h->live_attempt != attempt) {
            GS_CALL(live_restart(h, attempt));
            for (int i = 0; i < h->n; i++)
                if (h->attempt[i] == attempt && live_row(h, i) < 0) GS_CALL(gs_atomic_write_error(&h->af, __FILE__, __LINE__));
        }
        h->live = false;
        st = gs_atomic_commit(&h->af);
        if (st != GS_OK) gs_atomic_abort(&h->af);
        return st;
    }
    gs_atomic_file af;
    GS_CALL(gs_atomic_open(&af, path));
    fprintf(af.f, "iteration,residual,relative_residual,time_s\n");
    for (int i = 0; i < h->n; i++)
        if (h->attempt[i] == attempt)
            fprintf(af.f, "%d,%.17g,%.17g,%.9f\n", h->it[i], h->res[i], h->bnorm > 0 ? h->res[i] / h->bnorm : h->res[i],
                    h->t[i]);
    st = gs_atomic_commit(&af);
    if (st != GS_OK) {
        gs_atomic_abort(&af);
        GS_CALL(st);
    }
    return GS_OK;
}

void gs_app_history_free(gs_app_history *h)
{
    if (h->live) gs_atomic_abort(&h->af);
    h->live = false;
    gs_free(&h->it);
    gs_free(&h->attempt);
    gs_free(&h->res);
    gs_free(&h->t);
    free(h->err);
    h->err = NULL;
}
