/* gpusolve CLI: options, the run, exit codes. */
#ifndef GS_APP_H
#define GS_APP_H

#include <stdbool.h>

#include "api/exit_codes.h"
#include "cfg/config.h"
#include "core/csr.h"
#include "core/status.h"
#include "solver/solver.h"


typedef struct gs_app_opts {
    const char *config_path; /* -c */
    const char *matrix;      /* positional: a .mtx[.gz] path or gen:NAME:N[xNxN] */
    const char *rhs_path;    /* -b */
    const char *x0_path;     /* -x */
    const char *solution;    /* -o */
    const char *history;     /* --history */
    bool json, print_config;
    const char **overrides;  /* -s key=value, in order */
    int noverrides;
} gs_app_opts;

/* One run: read, set up, solve, report. Returns the exit code. */
int gs_app_run(const gs_app_opts *o, const gs_config *cfg);

/* gen:NAME:NX[xNY[xNZ]][:peclet]  -> a generated matrix; *is_gen false when spec is a file path. */
gs_status gs_app_matrix_from_spec(const char *spec, gs_csr *A, bool *is_gen);
/* A gen: spec parsed (the same checks and messages), sizes filled in (ny, nz default to nx; 2D: nz 1). */
typedef struct gs_app_gen {
    const char *name; /* static */
    gs_int nx, ny, nz;
    double peclet;
} gs_app_gen;
gs_status gs_app_gen_parse(const char *spec, gs_app_gen *gen);

#endif
