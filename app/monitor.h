/* What a run shows while it solves: the monitor lines (--monitor, output.monitor: iteration, residual,
 * relative residual, time, every K-th iteration or at most once per N seconds) and, on a terminal
 * without them, one progress line on stderr, rewritten in place and erased at the end. Both read the
 * host scalars the Krylov method already has (its monitor callback): no device work is added. */
#ifndef GS_APP_MONITOR_H
#define GS_APP_MONITOR_H

#include <stdbool.h>
#include <stdio.h>

#include "core/status.h"

/* How often monitor lines are printed: every `every`-th iteration, or at most once per `period`
 * seconds; both 0: no lines. The first and the last iteration of every attempt are always printed. */
typedef struct gs_monitor_spec {
    int every;
    double period;
} gs_monitor_spec;

/* text: "" (no lines), "K" (an integer >= 1) or "Ns" (N > 0 seconds: "1s", "0.5s"). A malformed text is
 * GS_ERR_CONFIG (exit 2): the message starts with `what` (where the text came from, with the text:
 * "output.monitor = \"x\"") and says what is expected. */
gs_status gs_monitor_parse(const char *text, const char *what, gs_monitor_spec *spec);
static inline bool gs_monitor_spec_on(const gs_monitor_spec *s) { return s->every > 0 || s->period > 0; }

/* The monitor of one run. Lines go to `f` (stdout in text mode, stderr with --json), each flushed as it
 * is printed; `tag` adds the attempt number to every line (the strategy may make several attempts). */
typedef struct gs_app_monitor {
    FILE *f;             /* NULL: no lines */
    gs_monitor_spec spec;
    bool tag;
    bool progress;       /* the progress line (stderr is a terminal, no lines asked for) */
    int attempt;         /* 1-based; 0 before the first */
    bool started;        /* the attempt's iteration 0 was seen */
    double run_t0;       /* the run's start */
    double t0, r0;       /* the attempt's solve start and first residual */
    int printed_it;      /* the last iteration printed (-1: none of this attempt) */
    double printed_t;
    int last_it;         /* the last iteration seen, and its residual and time */
    double last_res, last_t;
    double redraw_t;     /* the progress line's next redraw */
} gs_app_monitor;

/* Starts the monitor of a run (spec off and no progress line: nothing is shown). title: printed before
 * the column header when lines are printed ("" for none; a sweep names its run). */
void gs_app_monitor_begin(gs_app_monitor *m, const gs_monitor_spec *spec, FILE *f, bool tag, const char *title);
/* Whether the monitor needs the iterations (lines or the progress line). */
bool gs_app_monitor_active(const gs_app_monitor *m);
/* Attempt `index` (0-based) of the strategy begins: the last line of the attempt before is printed. */
void gs_app_monitor_attempt(gs_app_monitor *m, int index);
/* One iteration's monitored residual norm (iteration 0: the attempt's solve begins). */
void gs_app_monitor_iteration(gs_app_monitor *m, int iteration, double resnorm);
/* The run's solves are over: the last iteration's line if not printed yet; the progress line erased. */
void gs_app_monitor_end(gs_app_monitor *m);

/* The progress line (stderr only, and only when it is a terminal). */
bool gs_progress_available(void);
/* Inside a sweep: the line names run index (0-based) of count and is shown from the run's start (draw
 * false: not now; the run prints monitor lines). */
void gs_progress_sweep(long index, long count, bool draw);
/* Erases the line (before anything else is printed); no effect when none is shown. */
void gs_progress_clear(void);

#endif
