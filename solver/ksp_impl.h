/* Private to solver/: the create functions of the methods and the stopping logic they share
 * (baseline, convergence test, NaN/stagnation/interrupt checks, monitor calls, reason details). */
#ifndef GS_KSP_IMPL_H
#define GS_KSP_IMPL_H

#include <stdbool.h>

#include "solver/solver.h"

/* Method constructors named in the registry (solver.c). */
gs_status gs_ksp_create_cg(gs_ksp *ksp);
gs_status gs_ksp_create_bicgstab(gs_ksp *ksp);
gs_status gs_ksp_create_gmres(gs_ksp *ksp);
gs_status gs_ksp_create_fgmres(gs_ksp *ksp);

/* Stopping state of one solve. */
typedef struct gs_ksp_track {
    double rtol_bound; /* rtol * baseline */
    double bound;      /* max(rtol_bound, atol): converged when ||r|| <= bound */
    double best;       /* smallest monitored norm so far (stagnation) */
    int best_it;       /* iteration where it was reached */
    double dtol_bound; /* diverged when ||r|| > dtol_bound (INFINITY: off) */
    int check_it;      /* the projection's last checkpoint: iteration and ||r|| there */
    double check_norm;
} gs_ksp_track;

/* The method's work vector number `slot` (< GS_KSP_WORK) of n entries on the solver's backend, or its
 * multivector number `slot` (< GS_KSP_MWORK) of k columns: kept from the previous solve when the sizes
 * match, else made anew, so that repeated solves allocate nothing; owned by the solver (gs_ksp_destroy
 * frees them). Contents undefined. */
gs_status gs_ksp_work(gs_ksp *ksp, int slot, gs_int n, gs_vector **v);
gs_status gs_ksp_work_mvec(gs_ksp *ksp, int slot, gs_int n, gs_int k, gs_mvec **V);
/* The fused CG's state on the solver's backend, kept from one solve to the next like the vectors (each
 * solve's gs_ks_begin sets every scalar the iterations read). */
gs_status gs_ksp_work_kstate(gs_ksp *ksp, gs_kstate **ks);

/* r = b - A x. */
gs_status gs_ksp_residual(const gs_matrix *A, const gs_vector *b, const gs_vector *x, gs_vector *r);

/* The start of every method: bnorm = ||b||, r = b - A x0, r0norm = ||r||, the bound, the monitor at
 * iteration 0. Ends the solve (*done = true, reason set) when b = 0 (x = 0), when ||b|| or ||r0|| is not
 * finite, when x0 already meets the tolerance, when max_iterations = 0, or when an interrupt is pending. */
gs_status gs_ksp_start(gs_ksp *ksp, const gs_matrix *A, const gs_vector *b, gs_vector *x, gs_vector *r,
                       gs_ksp_track *t, gs_solve_result *res, bool *done);

/* After iteration `it` with monitored norm rnorm: calls the monitor, records iterations/resnorm, and
 * returns true (reason and detail set) when the solve stops: NaN/Inf, converged (rtol, atol), the
 * iteration limit, stagnation, an interrupt. */
bool gs_ksp_step(gs_ksp *ksp, gs_ksp_track *t, int it, double rnorm, gs_solve_result *res);

/* true when rnorm meets the tolerance. */
bool gs_ksp_met(const gs_ksp_track *t, double rnorm);

/* Sets the reason and the detail (printf-style). A stop inside an iteration (breakdown, NaN) leaves
 * res->iterations at the last completed one; the detail names the iteration in progress. */
void gs_ksp_stop(gs_solve_result *res, gs_reason reason, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Adds printf-style text at the end of the detail (the reason unchanged). */
void gs_ksp_detail_append(gs_solve_result *res, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* When v is NaN or Inf: reason GS_DIVERGED_NAN naming `what` and the iteration, returns true. */
bool gs_ksp_nonfinite(gs_solve_result *res, const char *what, double v, int it);

/* The true residual decides convergence: r = b - A x is recomputed (r is overwritten, so a method that
 * continues restarts from it) and *tnorm = ||r||. With reason CONVERGED_* (claimed by a recurrence) or
 * NONE (a GMRES restart): when the true residual meets the tolerance the reason becomes CONVERGED_*
 * with a detail naming it; a claim it does not meet is withdrawn: reason NONE (or DIVERGED_MAX_IT when
 * `it` is the limit, DIVERGED_NAN when ||r|| is not finite), and the caller restarts its recurrence
 * from r. Any other reason is left as it is. */
gs_status gs_ksp_confirm(gs_ksp *ksp, gs_ksp_track *t, const gs_matrix *A, const gs_vector *b,
                         const gs_vector *x, gs_vector *r, int it, gs_solve_result *res, double *tnorm);

#endif
