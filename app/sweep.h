/* Parameter sweeps: the Cartesian product of the configuration keys that hold lists, run against one
 * matrix read once. A single run is a sweep of one. */
#ifndef GS_APP_SWEEP_H
#define GS_APP_SWEEP_H

#include <stdbool.h>
#include <stdio.h>

#include "app/app.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"

/* The keys a sweep varies (those holding more than one value), in schema order. Keys linked by one
 * wildcard assignment (-s "trisolve.*.sweeps=1,2,4") form one dimension and take their values
 * together; every other varied key is a dimension of its own. Runs are the Cartesian product of the
 * dimensions, the last dimension varying fastest. */
typedef struct gs_sweep {
    int nkeys;
    const char **keys; /* schema paths (static strings) */
    int *count;        /* values of each key */
    int *dim;          /* the dimension of each key */
    int ndims;
    int *dim_count;    /* values along each dimension */
    long nruns;        /* product of the dimension counts: 1 for a single run */
} gs_sweep;

/* Runs beyond this are refused (a typo like [1, 2, ..., 10000] x 5 keys is not a plan). */
#define GS_SWEEP_MAX_RUNS 100000L

/* link: NULL, or one entry per schema row: 0 = independent, else the keys with the same number are
 * linked (they must hold equally many values; a linked key holding one value is not varied). */
gs_status gs_sweep_plan(const gs_config *cfg, const int *link, gs_sweep *sw);
void gs_sweep_free(gs_sweep *sw);
/* idx[k] = the value number key k takes in run `run`. */
void gs_sweep_indices(const gs_sweep *sw, long run, int *idx);
/* *out = cfg with every varied key reduced to its value in run `run` (a new configuration). */
gs_status gs_sweep_config(const gs_config *cfg, const gs_sweep *sw, long run, gs_config **out);

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
    char be_key[96];      /* "backend:id" it was created for */
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

/* The CLI's work after option parsing: every run of the sweep cfg describes (read once), or with
 * dry_run only the list of runs. Returns the sweep's exit code: 0 when every run converged, else the
 * most serious code of its runs (gs_exit_code_worse). */
int gs_app_sweep(const gs_app_opts *o, const gs_config *cfg, const int *link, bool dry_run);
/* The more serious of two exit codes, in the order
 * 6 interrupted > 70 internal > 5 device > 3 input > 2 usage > 4 numerical > 1 not converged > 0. */
int gs_exit_code_worse(int a, int b);

#endif
