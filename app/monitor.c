/* The monitor lines of a run (iteration, ||r||, ||r|| / ||r_0|| of the attempt, seconds since its solve
 * began) and the progress line of a terminal. */
#include "app/monitor.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"

#define PROGRESS_AFTER 1.0   /* a single solve shows the progress line once it has run this long [s] */
#define PROGRESS_REDRAW 0.2  /* at most this often [s] */

gs_status gs_monitor_parse(const char *text, const char *what, gs_monitor_spec *spec)
{
    spec->every = 0;
    spec->period = 0.0;
    if (!text || !text[0]) return GS_OK;
    char *end = NULL;
    errno = 0;
    if (text[0] >= '0' && text[0] <= '9') {
        size_t len = strlen(text);
        if (len > 1 && text[len - 1] == 's') { /* Ns: a number of seconds */
            double v = strtod(text, &end);
            if (end == text + len - 1 && errno == 0 && isfinite(v) && v > 0) {
                spec->period = v;
                return GS_OK;
            }
        } else {
            long v = strtol(text, &end, 10);
            if (*end == '\0' && errno == 0 && v >= 1 && v <= 1000000000L) {
                spec->every = (int)v;
                return GS_OK;
            }
        }
    }
    return GS_ERROR(GS_ERR_CONFIG,
                    "%s: expected K, a whole number >= 1 (a line every K-th iteration; 1: every one), or Ns, a "
                    "number of seconds > 0 followed by s (at most one line per N seconds, e.g. 1s or 0.5s)",
                    what);
}

/* ---------------------------------------------------------------------------------------------- */
/* the progress line                                                                              */

static struct {
    bool shown;        /* something is on the line now */
    long index, count; /* the sweep's run (count 0: not in a sweep) */
} line;

bool gs_progress_available(void) { return isatty(STDERR_FILENO) == 1; }

void gs_progress_clear(void)
{
    if (!line.shown) return;
    fputs("\r\033[K", stderr); /* carriage return, erase to the end of the line */
    fflush(stderr);
    line.shown = false;
}

/* Rewrites the line with text (short enough not to wrap). */
static void progress_draw(const char *text)
{
    fprintf(stderr, "\r%s\033[K", text);
    fflush(stderr);
    line.shown = true;
}

void gs_progress_sweep(long index, long count, bool draw)
{
    line.index = index;
    line.count = count;
    if (!draw || !gs_progress_available() || count <= 1) return;
    char text[96];
    snprintf(text, sizeof text, "gpusolve: sweep run %ld of %ld", index + 1, count);
    progress_draw(text);
}

static void progress_iteration(gs_app_monitor *m, double now)
{
    const bool sweep = line.count > 1;
    if (now < m->redraw_t || (!sweep && now - m->run_t0 < PROGRESS_AFTER)) return;
    m->redraw_t = now + PROGRESS_REDRAW;
    char text[160], where[64] = "", attempt[32] = "";
    if (sweep) snprintf(where, sizeof where, "run %ld of %ld, ", line.index + 1, line.count);
    if (m->attempt > 1) snprintf(attempt, sizeof attempt, "attempt %d, ", m->attempt);
    snprintf(text, sizeof text, "gpusolve: %s%siteration %d, relative residual %.2e, %.1f s", where, attempt,
             m->last_it, m->r0 > 0 ? m->last_res / m->r0 : m->last_res, m->last_t);
    progress_draw(text);
}

/* ---------------------------------------------------------------------------------------------- */
/* the monitor lines                                                                              */

static void print_header(const gs_app_monitor *m)
{
    if (m->tag)
        fprintf(m->f, "%-9s  %9s  %12s  %12s  %10s\n", "# attempt", "iteration", "residual", "relative", "time_s");
    else
        fprintf(m->f, "%-11s  %12s  %12s  %10s\n", "# iteration", "residual", "relative", "time_s");
    fflush(m->f);
}

static void print_line(gs_app_monitor *m)
{
    const double rel = m->r0 > 0 ? m->last_res / m->r0 : m->last_res;
    if (m->tag) fprintf(m->f, "%9d  ", m->attempt);
    fprintf(m->f, m->tag ? "%9d  %12.6e  %12.6e  %10.4f\n" : "%11d  %12.6e  %12.6e  %10.4f\n", m->last_it, m->last_res,
            rel, m->last_t);
    fflush(m->f); /* a reader of the pipe sees the line now, not when the solve ends */
    m->printed_it = m->last_it;
    m->printed_t = m->last_t;
}

void gs_app_monitor_begin(gs_app_monitor *m, const gs_monitor_spec *spec, FILE *f, bool tag, const char *title)
{
    memset(m, 0, sizeof *m);
    m->spec = *spec;
    m->f = gs_monitor_spec_on(spec) ? f : NULL;
    m->tag = tag;
    m->progress = !m->f && gs_progress_available();
    m->run_t0 = gs_wtime();
    m->printed_it = -1;
    m->last_it = -1;
    if (m->f) {
        gs_progress_clear();
        if (title && title[0]) fprintf(m->f, "# %s\n", title);
        print_header(m);
    }
}

bool gs_app_monitor_active(const gs_app_monitor *m) { return m->f || m->progress; }

/* The last iteration seen, when it was not printed (the last line of an attempt is always shown). */
static void print_pending(gs_app_monitor *m)
{
    if (m->f && m->started && m->last_it >= 0 && m->last_it != m->printed_it) print_line(m);
}

void gs_app_monitor_attempt(gs_app_monitor *m, int index)
{
    print_pending(m);
    m->attempt = index + 1;
    m->started = false;
    m->printed_it = m->last_it = -1;
}

void gs_app_monitor_iteration(gs_app_monitor *m, int iteration, double resnorm)
{
    if (!m->f && !m->progress) return;
    const double now = gs_wtime();
    if (!m->started) { /* the attempt's solve begins: its time 0 and its first residual */
        m->started = true;
        m->t0 = now;
        m->r0 = resnorm;
        m->printed_it = -1;
    }
    m->last_it = iteration;
    m->last_res = resnorm;
    m->last_t = now - m->t0;
    if (m->f) {
        const bool due = m->printed_it < 0 || (m->spec.every > 0 && iteration % m->spec.every == 0) ||
                         (m->spec.period > 0 && m->last_t - m->printed_t >= m->spec.period);
        if (due) print_line(m);
    }
    if (m->progress) progress_iteration(m, now);
}

void gs_app_monitor_end(gs_app_monitor *m)
{
    print_pending(m);
    gs_progress_clear();
}
