/* The text report of a run at its verbosity, the warnings, and error messages for people: the message
 * alone, its internal trace only at -v or with GS_DEBUG set. */
#ifndef GS_APP_REPORT_TEXT_H
#define GS_APP_REPORT_TEXT_H

#include <stdio.h>

#include "api/strategy.h"
#include "cfg/config.h"
#include "core/report.h"

/* The report levels (output.verbosity; output.quiet = true is GS_VERBOSITY_QUIET). */
enum {
    GS_VERBOSITY_QUIET = -1,  /* the summary line only (-q, --quiet) */
    GS_VERBOSITY_DEFAULT = 0, /* a screen: matrix, method, where, times, iterations, residual, reason */
    GS_VERBOSITY_SETUP = 1,   /* + the setup's facts and the strategy's attempts (-v) */
    GS_VERBOSITY_ALL = 2      /* + the configuration and every internal fact (-vv) */
};

/* No -q or -v on the command line. */
#define GS_APP_LEVEL_UNSET (-99)

/* The configuration's report level. */
int gs_app_verbosity(const gs_config *cfg);
/* The level of -q/-v (GS_APP_LEVEL_UNSET: none given) into cfg: output.verbosity, and output.quiet. */
gs_status gs_app_set_verbosity(gs_config *cfg, int level);
/* --version: the version, the git commit, the CUDA toolkit and runtime (or "host only build"), the build
 * flags. */
void gs_app_print_version(FILE *f);

/* The level error messages are printed at (set by main from -v and the configuration). */
void gs_app_set_error_verbosity(int level);
/* The pending error's message on f (after the caller's "gpusolve: error: "), and its trace of
 * "  at file.c:LINE" lines when the level is at least GS_VERBOSITY_SETUP, when the environment variable
 * GS_DEBUG is set (not empty, not "0"), or for an internal error (GS_ERR_INTERNAL). */
void gs_app_error_print(FILE *f);

/* The run's text report at `level` on stdout, ending with the summary line (prefixed by `prefix`).
 * cfg: the user's configuration; sr: the strategy's result (NULL when the run stopped before it). */
void gs_app_print_text(const gs_report *rep, const gs_config *cfg, const gs_strategy_result *sr, int level,
                       const char *prefix);
/* Each entry of the report's "warnings" array as "gpusolve: warning: ..." on f. */
void gs_app_print_warnings(const gs_report *rep, FILE *f);

#endif
