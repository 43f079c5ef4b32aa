#ifndef GS_APP_HISTORY_H
#define GS_APP_HISTORY_H

#include <stdbool.h>

#include "app/monitor.h"
#include "core/atomic_file.h"
#include "core/status.h"

/* Residual history, appended by the solver's monitor (host scalars only), each row tagged with the
 * attempt that made it: the history written is the reported attempt's. A history that goes to a
 * regular file is written as the iterations happen, into the output's temporary file (NAME.tmp.PID
 * beside NAME, flushed at least every HISTORY_FLUSH seconds, so that it can be followed with tail -f),
 * which holds the current attempt's rows and is renamed over NAME when the run succeeds; a failed or
 * interrupted run removes it. A stream (FIFO, terminal, descriptor) gets the rows at the end. */
typedef struct gs_app_history {
    int *it, *attempt;
    double *res, *t;
    int n, cap;
    int current;      /* the attempt running */
    bool started;     /* its solve began (t0 is its iteration 0) */
    double t0;
    double bnorm;     /* ||b||: the relative column */
    bool keep;        /* rows are recorded (a history is asked for) */
    gs_atomic_file af;
    bool live;        /* af is open: rows go to it as they come */
    int live_attempt; /* the attempt whose rows af holds (-1: none yet) */
    double flushed;   /* when af was last flushed */
    gs_app_monitor *mon;
    gs_status st;     /* first failure: its message below (the solve goes on; the run fails after it) */
    char *err;        /* (heap) */
} gs_app_history;

/* Opens the live file when the history goes to a regular file (a stream is written at the end). Set
 * keep, bnorm and mon first. */
gs_status gs_app_history_open(gs_app_history *h, const char *path);
/* The solver's monitor (a gs_ksp_monitor_fn, ctx = h): the history's row when keep, the monitor's line or
 * the progress line when mon. */
void gs_app_history_monitor(void *ctx, int iteration, double resnorm);
/* Attempt `index` (0-based) begins (a gs_strategy_hooks attempt callback, ctx = h). */
void gs_app_history_attempt_begin(void *ctx, int index);
/* The reported attempt's rows to path: the live file (rewritten when it holds another attempt's rows)
 * renamed into place, or the rows written through a new output. */
gs_status gs_app_history_write(gs_app_history *h, const char *path, int attempt);
/* Frees the rows; an open live file is removed (the run did not get to write its history). */
void gs_app_history_free(gs_app_history *h);

#endif
