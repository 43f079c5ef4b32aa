/* The exit codes of a run (documented in README.md): one mapping of statuses and solve reasons, used by
 * the gpusolve command and the library (whose GPUSOLVE_EXIT_* classes are these values). */
#ifndef GS_API_EXIT_CODES_H
#define GS_API_EXIT_CODES_H

#include "core/status.h"
#include "solver/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

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
/* The class of an exit code as one word, for reports: "converged", "not_converged", "usage", "input",
 * "numerical", "device", "interrupted", "internal" ("unknown" for any other code). */
const char *gs_exit_class_name(int code);

#ifdef __cplusplus
}
#endif
#endif
