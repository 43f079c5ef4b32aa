/* The system a run solves: b, x0 and (for rhs = "Ax") the known solution, in the matrix's numbering. */
#ifndef GS_APP_SYSTEM_H
#define GS_APP_SYSTEM_H

#include <stdint.h>

#include "app/app.h"
#include "cfg/config.h"
#include "core/csr.h"

typedef struct gs_system {
    double *b, *x0, *xstar; /* xstar NULL unless rhs = "Ax" */
    char rhs_desc[256], x0_desc[256];
} gs_system;

/* b from system.rhs (ones | random | Ax | file) or rhs_path; x0 from system.x0 (zero | file) or x0_path. */
gs_status gs_system_build(const gs_csr *A, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                          gs_system *sys);
void gs_system_free(gs_system *sys);
/* Entry i of system.rhs = "random" (and of x* = "random") for system.seed: uniform in [-1, 1), splitmix64
 * at counter i + 1, so any range of rows is made without the rows before it. */
double gs_system_random(uint64_t seed, int64_t i);
/* A vector of n entries from a file, or from standard input ("-"), which a sweep reads once for all runs. */
gs_status gs_system_read_vector(const char *path, gs_int n, double **x);

/* "-" among the options: at most one of the matrix, -b and -x may read standard input; -o - makes the
 * solution take standard output (o->solution becomes that descriptor's /dev/fd name) and sends everything
 * else printed there to standard error; refused with --json, whose objects own standard output. Returns
 * 0, or the exit code of a usage error after its message. */
int gs_app_stdio_prepare(gs_app_opts *o);

#endif
