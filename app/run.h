/* One run of the CLI on a problem read once (run.c), and what every run writes beside its report
 * (run_output.c). A sweep (sweep.h) runs each of its runs through these. */
#ifndef GS_APP_RUN_H
#define GS_APP_RUN_H

#include <stdbool.h>
#include <stdio.h>

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
    char be_key[96];      /* "backend:id:spmv" it was created for */
} gs_app_problem;

/* Reads spec into p (on failure p holds nothing and the error is pending). */
gs_status gs_app_problem_read(gs_app_problem *p, const char *spec);
void gs_app_problem_free(gs_app_problem *p);
/* One run of cfg (which holds no lists) on p: report (text line or JSON object), outputs, exit code. */
int gs_app_run_problem(const gs_app_opts *o, gs_app_problem *p, const gs_config *cfg, const gs_app_run_ctx *ctx,
                       gs_app_outcome *out);

/* In --json mode, the JSON object of a run that could not start because the matrix could not be read
 * (status "error", the message, the exit code of st, the configuration). */
void gs_app_report_read_error(const gs_app_opts *o, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                              const char *message);
/* The report as one JSON object with the member "sweep": {"index", "count", "varied": {"key": value}}
 * (varied keys written as flat dotted names, values typed as in the configuration). */
void gs_app_write_json(const gs_report *rep, const gs_app_run_ctx *ctx, const gs_config *cfg, FILE *f);
/* The varied keys of a run as "key=value key=value" (empty for a single run). */
void gs_app_varied_text(const gs_app_run_ctx *ctx, const gs_config *cfg, char *buf, size_t len);
/* The value of the key path in cfg as text (empty for a key the schema does not know). */
void gs_app_value_text(const gs_config *cfg, const char *path, char *buf, size_t len);

#endif
