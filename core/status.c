/* Error state: the first message of a failure plus a short trace of where it propagated. */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GS_TRACE_MAX 16

/* The message lives in `inline_msg` when it fits, else in a block of its size (`long_msg`): messages are
 * never cut. Without memory for the block, the inline copy is kept, cut. */
typedef struct {
    gs_status st;
    char inline_msg[1024];
    char *long_msg;
    char trace[GS_TRACE_MAX][160];
    int ntrace;
} gs_error_state;

static _Thread_local gs_error_state err;

const char *gs_status_name(gs_status st)
{
    switch (st) {
    case GS_OK: return "GS_OK";
    case GS_ERR_ARG: return "GS_ERR_ARG";
    case GS_ERR_MEM: return "GS_ERR_MEM";
    case GS_ERR_DEVICE_MEM: return "GS_ERR_DEVICE_MEM";
    case GS_ERR_CUDA: return "GS_ERR_CUDA";
    case GS_ERR_CUSPARSE: return "GS_ERR_CUSPARSE";
    case GS_ERR_CUBLAS: return "GS_ERR_CUBLAS";
    case GS_ERR_METIS: return "GS_ERR_METIS";
    case GS_ERR_IO: return "GS_ERR_IO";
    case GS_ERR_CONFIG: return "GS_ERR_CONFIG";
    case GS_ERR_UNSUPPORTED: return "GS_ERR_UNSUPPORTED";
    case GS_ERR_NO_DEVICE: return "GS_ERR_NO_DEVICE";
    case GS_ERR_NUMERIC: return "GS_ERR_NUMERIC";
    case GS_ERR_INTERRUPTED: return "GS_ERR_INTERRUPTED";
    case GS_ERR_INTERNAL: return "GS_ERR_INTERNAL";
    }
    return "GS_ERR_UNKNOWN";
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

gs_status gs_error_set(gs_status st, const char *file, int line, const char *fmt, ...)
{
    if (err.st != GS_OK) return st; /* keep the root cause */
    err.st = st;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    const int len = vsnprintf(err.inline_msg, sizeof err.inline_msg, fmt, ap);
    va_end(ap);
    free(err.long_msg);
    err.long_msg = NULL;
    if (len >= (int)sizeof err.inline_msg) {
        err.long_msg = malloc((size_t)len + 1);
        if (err.long_msg) vsnprintf(err.long_msg, (size_t)len + 1, fmt, again);
    }
    va_end(again);
    err.ntrace = 0;
    snprintf(err.trace[err.ntrace++], sizeof err.trace[0], "%s:%d", base_name(file), line);
    return st;
}

void gs_error_push(gs_status st, const char *file, int line, const char *expr)
{
    if (err.st == GS_OK) { /* a callee failed without a message: keep at least its status */
        err.st = st;
        snprintf(err.inline_msg, sizeof err.inline_msg, "%s", gs_status_name(st));
        free(err.long_msg);
        err.long_msg = NULL;
        err.ntrace = 0;
    }
    if (err.ntrace < GS_TRACE_MAX)
        snprintf(err.trace[err.ntrace++], sizeof err.trace[0], "%s:%d: %.100s", base_name(file),
                 line, expr);
}

const char *gs_error_message(void)
{
    if (err.st == GS_OK) return "";
    return err.long_msg ? err.long_msg : err.inline_msg;
}
gs_status gs_error_status(void) { return err.st; }

void gs_error_print(FILE *f)
{
    if (err.st == GS_OK) return;
    fprintf(f, "%s\n", gs_error_message());
    for (int i = 0; i < err.ntrace; i++) fprintf(f, "  at %s\n", err.trace[i]);
}

/* GS_DEBUG: a user-facing switch for bug reports, not a tuning knob. */
static bool debug_requested(void)
{
    const char *d = getenv("GS_DEBUG");
    return d && d[0] && strcmp(d, "0") != 0;
}

void gs_error_print_user(FILE *f, bool trace)
{
    if (trace || debug_requested() || err.st == GS_ERR_INTERNAL) {
        gs_error_print(f);
        return;
    }
    const char *m = gs_error_message();
    fprintf(f, "%s\n", m[0] ? m : gs_status_name(err.st));
}

void gs_error_clear(void)
{
    err.st = GS_OK;
    err.inline_msg[0] = '\0';
    free(err.long_msg);
    err.long_msg = NULL;
    err.ntrace = 0;
}
