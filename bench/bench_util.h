/* Helpers shared by the benchmark drivers: command-line number parsing, the median of a set of timings,
 * the CUDA-event timing loop (warm-up, single timed runs, one timed batch), relative differences, and
 * main()'s check for a usable GPU. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"

/* *out = s as a decimal integer in [lo, hi]; 0, or -1 after a message "<prog>: <opt> expects ...". */
int bench_parse_int(const char *prog, const char *s, const char *opt, long lo, long hi, long *out);

/* *out = s as a finite number; 0, or -1 after a message "<prog>: <opt> expects ...". */
int bench_parse_double(const char *prog, const char *s, const char *opt, double *out);

/* Sorts t[0..m) ascending (m >= 1) and returns its median (the mean of the middle two for even m). */
double bench_median(double *t, int m);

/* max_i |x_i - y_i| / max_i |y_i| (the plain maximum difference when y = 0); INFINITY on a NaN. */
double bench_rel_diff(gs_int n, const double *x, const double *y);

/* The matrix of the drivers' --matrix / --gen options: Matrix Market file `matrix` when not NULL, else
 * the generated `gen` of size nx x ny x nz (ny, nz = 0: nx; poisson2d uses nx x ny) with Peclet number
 * peclet (convdiff3d); label = the file name or "<gen> <nx>x<ny>[x<nz>]". */
gs_status bench_load_matrix(const char *matrix, const char *gen, gs_int nx, gs_int ny, gs_int nz, double peclet,
                            gs_csr *A, char *label, size_t label_size);

/* One run of the operation being timed. */
typedef gs_status (*bench_op_fn)(void *ctx);

/* `warm` untimed runs and a device synchronize; then `reps` single runs, each between two timer events
 * (gs_timer: CUDA events on the cuda backend), into t[0..reps) sorted ascending, *median and *min;
 * then, when mean != NULL, one batch of `reps` back-to-back runs between two events: *mean = batch / reps
 * (includes the overlap of consecutive launches). median, min may be NULL. */
gs_status bench_time_events(gs_backend *be, bench_op_fn op, void *ctx, int warm, int reps, double *t,
                            double *median, double *min, double *mean);

/* cuSPARSE csrilu02 (ic false) or csric02 on A (builds with CUDA only, bench_cusparse_factor.c): `warm`
 * untimed then `reps` timed runs on be's stream, each with a fresh info so that the analysis is timed
 * too: ta[r] analysis, tf[r] factorization (seconds, CUDA events). With err: the max relative difference
 * of the result to the host ILU(0) / IC(0) factors Lh, Uh (both NULL: computed here). A zero pivot
 * reported by cuSPARSE is GS_ERR_NUMERIC naming the row. */
gs_status bench_cusparse_factor(gs_backend *be, const gs_csr *A, bool ic, int warm, int reps, double *ta,
                                double *tf, const gs_csr *Lh, const gs_csr *Uh, double *err);

/* 0 when a CUDA device is usable; otherwise prints "<prog>: no usable GPU (why)" and returns 77, the
 * drivers' exit status for "skipped" (also in a build without CUDA). */
int bench_require_gpu(const char *prog);

#endif
