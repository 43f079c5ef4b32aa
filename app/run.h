/* One run of the CLI on a problem read once (run.c), and what every run writes beside its report
 * (run_output.c). A sweep (sweep.h) runs each of its runs through these. */
#ifndef GS_APP_RUN_H
#define GS_APP_RUN_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "app/app.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"

typedef struct gs_sweep gs_sweep; /* sweep.h */

#define GS_APP_CELL_LEN 80 /* one value in a sweep's summary table */

/* Where a run sits in its sweep. plan NULL: a run outside any sweep (index 0 of 1, nothing varied). */
typedef struct gs_app_run_ctx {
    long index, count;
    const gs_sweep *plan;
    const char *history, *solution; /* output paths for this run (NULL: from opts / the config) */
} gs_app_run_ctx;

/* What the sweep's summary table shows of one run. */
typedef struct gs_app_outcome {
    int exit_code;
    bool error;      /* the run failed with an error status (not a solve outcome) */
    bool solved;     /* the Krylov solve ran (iterations and times are meaningful) */
    char reason[64]; /* gs_reason_name, or the status name of an error */
    long long iterations;
    double setup_s, solve_s, residual_true;
} gs_app_outcome;

/* The matrix of a sweep, read (or generated) once, and a backend kept from one run to the next
 * while device.backend and device.id do not change. */
typedef struct gs_app_problem {
    const char *spec; /* as given: path or gen:... */
    gs_csr A;
    bool is_gen;
    double time_read;
    gs_backend *be;       /* cached backend (NULL: none yet) */
    char be_key[96];      /* the key it was created for (gs_app_backend_key) */
    double time_init;     /* its creation's wall time, reported by the next run (then 0) */
    bool init_overlapped; /* it was created while the matrix was read (app/startup.c) */
} gs_app_problem;

/* Reads spec into p (on failure p holds nothing and the error is pending). */
gs_status gs_app_problem_read(gs_app_problem *p, const char *spec);
void gs_app_problem_free(gs_app_problem *p);
/* One run of cfg (which holds no lists) on p: report (text line or JSON object), outputs, exit code. */
int gs_app_run_problem(const gs_app_opts *o, gs_app_problem *p, const gs_config *cfg, const gs_app_run_ctx *ctx,
                       gs_app_outcome *out);

/* The command line (for the reports' command_line and started_at) and whether --json was asked for
 * (for errors found before the configuration is complete). Set once by main. */
gs_status gs_app_set_command_line(int argc, char *const *argv, bool json);
bool gs_app_json_wanted(void);
/* The complete configuration's report level (for error messages) and format (output.format = json: the
 * errors that follow print their JSON object too). */
void gs_app_note_config(const gs_config *cfg);
/* gpusolve.version, gpusolve.commit, started_at (started; 0: when the command began), host, command_line. */
gs_status gs_app_report_provenance(gs_report *rep, time_t started);
/* The JSON object of an error on stdout: status "error", error.status (st's name), error.message,
 * error.class (the exit code's class), exit_code (code), the provenance, matrix.source when matrix is not
 * NULL, the configuration when cfg is not NULL, and the member "sweep" of a run (ctx NULL: none, for
 * errors before any run). */
void gs_app_report_error(const char *matrix, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                         const char *message, int code);
/* Whether argv asks for JSON: --json (or an unambiguous abbreviation) or -s output.format=json, before
 * the "--" that ends the options. */
bool gs_app_argv_wants_json(int argc, char *const *argv);
/* A usage error: "gpusolve: MESSAGE" and "try 'gpusolve --help'" on stderr, with --json its JSON object
 * (error.status GS_ERR_CONFIG, exit code 2) on stdout. Returns 2. fmt takes one string argument. */
int gs_app_usage_error(const char *fmt, const char *arg);
/* The pending error: "gpusolve: error: MESSAGE" on stderr (the trace at -v or with GS_DEBUG), with --json
 * its JSON object (cfg: the configuration when there is one); cleared. Returns its exit code. */
int gs_app_fail(const gs_config *cfg);
/* In --json mode, the JSON object of a run that could not start because the matrix could not be read
 * (status "error", the message, the exit code of st, the configuration). */
void gs_app_report_read_error(const gs_app_opts *o, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                              const char *message);
/* The report as one JSON object with the member "sweep": {"index", "count", "varied": {"key": value}}
 * (varied keys written as flat dotted names, values typed as in the configuration). */
gs_status gs_app_write_json(const gs_report *rep, const gs_app_run_ctx *ctx, const gs_config *cfg, FILE *f);
/* The varied keys of a run as "key=value key=value" (empty for a single run). */
void gs_app_varied_text(const gs_app_run_ctx *ctx, const gs_config *cfg, char *buf, size_t len);
/* The value of the key path in cfg as text (empty for a key the schema does not know). */
void gs_app_value_text(const gs_config *cfg, const char *path, char *buf, size_t len);

#endif
