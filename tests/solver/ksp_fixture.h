/* Test fixture for the Krylov tests: a system A x* = b with a known random x* on the host backend,
 * solve helpers, a residual-history monitor, and a hand-made Jacobi-like preconditioner whose sign,
 * variability, NaN injection and failure can be chosen. */
#ifndef GS_KSP_FIXTURE_H
#define GS_KSP_FIXTURE_H

#include "testutil.h"

#include "precond/precond.h"
#include "solver/solver.h"

typedef struct ksp_sys {
    gs_backend *be;
    gs_csr A;       /* host copy */
    gs_matrix *M;   /* on the backend */
    gs_int n;
    double *xstar;  /* the known solution */
    double *bh;     /* b = A x* on the host */
    double *xh;     /* scratch for downloads */
    gs_vector *b, *x;
} ksp_sys;

/* Takes *A over (zeroes it); x*_i uniform in [-1, 1) from seed; b = A x*; x = 0. Asserts on failure. */
void sys_setup(ksp_sys *s, gs_csr *A, uint64_t seed);
/* The same on a named backend ("host", "cuda"). */
void sys_setup_on(ksp_sys *s, gs_csr *A, uint64_t seed, const char *backend);
void sys_teardown(ksp_sys *s);
/* x = x0 (NULL: zero) */
void sys_set_x(ksp_sys *s, const double *x0);
/* b = given host vector */
void sys_set_b(ksp_sys *s, const double *b);
/* ||x - x*||_2 / ||x*||_2 */
double sys_error(ksp_sys *s);
/* ||b - A x||_2 by gs_true_residual */
double sys_true_resnorm(ksp_sys *s);

/* A system whose CG residual grows tenfold in the first iteration: A = diag(1, ..., 1, 1e4, ..., 1e4)
 * (first half 1), b = 1 on the first half and 0.1 on the second: ||r_1|| ~ 9.9 ||r_0|| (alpha ~ 1/101
 * sends the stiff half's residual from 0.1 to -9.9). On a named backend. */
void sys_setup_growth(ksp_sys *s, gs_int n, const char *backend);

/* Defaults with rtol and max_iterations set. */
gs_ksp_params sys_params(double rtol, int max_it);

/* Residual history from the monitor. */
typedef struct ksp_hist {
    int n;
    int it[20000];
    double r[20000];
    int raise_at; /* > 0: raise(SIGINT) when the monitor sees this iteration */
} ksp_hist;
void hist_monitor(void *ctx, int iteration, double resnorm);

/* Creates the solver `type`, sets the monitor when hist is not NULL, solves, destroys the solver. */
gs_status sys_solve(ksp_sys *s, const char *type, const gs_ksp_params *prm, gs_pc *pc, ksp_hist *hist,
                    gs_solve_result *res);

/* Jacobi from the registry (set up). */
gs_pc *sys_jacobi(ksp_sys *s);

/* z = sign * c_k * D^{-1} r at the k-th application, c_k = 1 + 0.5 sin(k) when variable (pc->variable is
 * set), else 1. At application nan_at (> 0) z is NaN; at fail_at (> 0) apply fails (GS_ERR_NUMERIC). */
gs_pc *sys_test_pc(ksp_sys *s, double sign, bool variable, int nan_at, int fail_at);
int test_pc_applications(const gs_pc *pc);

/* Print a one-line summary (for the test log). */
void print_result(const char *what, const gs_solve_result *res);

#endif
