/* Parameter sweeps: the Cartesian product of the configuration keys that hold lists, run against one
 * matrix read once (sweep_plan.c: the plan; sweep.c: the driver, which runs each through app/run.h). A
 * single run is a sweep of one. */
#ifndef GS_APP_SWEEP_H
#define GS_APP_SWEEP_H

#include <stdbool.h>
#include <stdio.h>

#include "app/app.h"
#include "app/run.h"
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

/* The schema row of a key path (NULL: none). */
const gs_cfg_key *gs_sweep_key(const char *path);

/* The CLI's work after option parsing: every run of the sweep cfg describes (read once), or with
 * dry_run only the list of runs. Returns the sweep's exit code: 0 when every run converged, else the
 * most serious code of its runs (gs_exit_code_worse). */
int gs_app_sweep(const gs_app_opts *o, const gs_config *cfg, const int *link, bool dry_run);
/* The more serious of two exit codes, in the order
 * 6 interrupted > 70 internal > 5 device > 3 input > 2 usage > 4 numerical > 1 not converged > 0. */
int gs_exit_code_worse(int a, int b);

#endif
