/* gpusolve CLI: options, the run, exit codes. */
#ifndef GS_APP_H
#define GS_APP_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/csr.h"
#include "core/status.h"
#include "solver/solver.h"

/* Exit codes (documented in README.md). */
enum {
    GS_EXIT_CONVERGED = 0,     /* the solve converged (rtol/atol, or zero right-hand side) */
    GS_EXIT_NOT_CONVERGED = 1, /* iteration limit or stagnation */
    GS_EXIT_USAGE = 2,         /* bad command line or configuration, unsupported request */
    GS_EXIT_INPUT = 3,         /* a matrix/vector file is missing or malformed */
    GS_EXIT_NUMERICAL = 4,     /* breakdown, NaN/Inf, zero pivot, indefinite matrix for CG */
    GS_EXIT_DEVICE = 5,        /* no GPU for backend = cuda, CUDA/cuBLAS/cuSPARSE failure, out of memory */
    GS_EXIT_INTERRUPTED = 6,   /* SIGINT / SIGTERM */
    GS_EXIT_INTERNAL = 70      /* a bug: please report */
};

int gs_exit_code_for_status(gs_status st);
int gs_exit_code_for_reason(gs_reason r);

typedef struct gs_app_opts {
    const char *config_path; /* -c */
    const char *matrix;      /* positional: a .mtx[.gz] path or gen:NAME:N[xNxN] */
    const char *rhs_path;    /* -b */
    const char *x0_path;     /* -x */
    const char *solution;    /* -o */
    const char *history;     /* --history */
    bool json, quiet, print_config;
    const char **overrides;  /* -s key=value, in order */
    int noverrides;
} gs_app_opts;

/* One run: read, set up, solve, report. Returns the exit code. */
int gs_app_run(const gs_app_opts *o, const gs_config *cfg);

/* gen:NAME:NX[xNY[xNZ]][:peclet]  -> a generated matrix; *is_gen false when spec is a file path. */
gs_status gs_app_matrix_from_spec(const char *spec, gs_csr *A, bool *is_gen);

#endif
