/* One attempt of a run: a configuration with every "auto" resolved, solved end to end on a backend —
 * preprocessing (api/preprocess.h), upload, preconditioner setup, Krylov solve, the solution mapped
 * back, and the true residual ||b - A x|| of the ORIGINAL system. When the system was scaled, the
 * Krylov method monitors the scaled residual; a solve that meets its tolerance there but not in the
 * original norm is continued from its solution with a proportionally tighter tolerance (at most
 * GS_ATTEMPT_MAX_REFINEMENTS times), so that "converged" means what the user asked for. */
#ifndef GS_API_ATTEMPT_H
#define GS_API_ATTEMPT_H

#include <stdbool.h>

#include "api/preprocess.h"
#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"
#include "solver/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_ATTEMPT_MAX_REFINEMENTS 3

/* The transformed system of the last attempt, kept for the next one when its preprocessing is the same
 * (attempts of a fallback ladder often differ only in the preconditioner). */
typedef struct gs_attempt_cache {
    bool valid;
    gs_transform T;
    gs_csr C;          /* the transformed matrix (empty when T is the identity: A is used) */
    gs_matrix *M;      /* the operator on the backend */
    gs_backend *be;
} gs_attempt_cache;

void gs_attempt_cache_free(gs_attempt_cache *c);

/* What one attempt did. */
typedef struct gs_attempt {
    gs_solve_result res;    /* reason (setup failures: GS_DIVERGED_PC_FAILED), iterations, detail */
    char *detail;           /* the reason's detail, as long as it is (owned; NULL: none) */
    double time_preprocess, time_setup_symbolic, time_setup_numeric, time_solve, time_pc_apply;
    double residual_true;   /* ||b - A x|| / ||b|| of the original system (||b - A x|| when b = 0) */
    double residual_true_abs, bnorm, r0norm_original;
    double residual_monitored; /* last monitored norm / its baseline (the transformed system's) */
    int refinements;        /* tighter re-solves after a converged scaled solve */
    bool solved;            /* the Krylov solve ran (x holds its result) */
    bool true_missed;       /* converged by the monitored residual, yet the true one is > 10x the target */
    gs_report *rep;         /* system.*, preconditioner.*, trisolve.* entries of this attempt (owned) */
} gs_attempt;

void gs_attempt_free(gs_attempt *a);

/* Monitor of the Krylov iterations (every attempt, every refinement; iteration numbers continue
 * across refinements). */
typedef struct gs_attempt_monitor {
    gs_ksp_monitor_fn fn;
    void *ctx;
} gs_attempt_monitor;

/* An attempt set up once and solved for many right-hand sides: the operator (in `cache`, borrowed), the
 * preconditioner after both setup phases, the Krylov method and its vectors. */
typedef struct gs_attempt_setup {
    gs_backend *be;
    gs_attempt_cache *cache;  /* the transform and operator the setup was built on (not owned) */
    const gs_csr *A;          /* the original matrix (not owned; its values may be replaced, see refactor) */
    gs_pc *pc;
    gs_ksp *ksp;
    gs_ksp_params prm;        /* the configuration's; a solve's re-solves change the method's copy */
    gs_vector *vb, *vy, *vr;
    double *host;
    double time_pc_apply;     /* one application, measured by the first solve (< 0 before) */
    bool ready;               /* both setup phases succeeded: gs_attempt_solve may run */
} gs_attempt_setup;

/* Phase one of an attempt: preprocessing `pre` (through `cache`), upload, preconditioner setup (both
 * phases) and the Krylov method of cfg (its "auto" types resolved). cfg, A and cache must outlive s (the
 * preconditioner reads cfg). Fills out's setup part (time_preprocess, time_setup_*, rep). A numerical
 * failure of the preprocessing or the setup, or an interrupt, is an outcome: GS_OK with out->res.reason
 * set and s->ready false. Any other failure is returned as an error status (s then holds nothing). */
gs_status gs_attempt_setup_run(gs_backend *be, const gs_csr *A, const gs_config *cfg, const gs_preprocess *pre,
                               gs_attempt_cache *cache, gs_attempt_setup *s, gs_attempt *out);
/* Phase two: solves A x = b (x0 the guess; arrays in A's numbering) with the setup (s->ready). Fills
 * out's solve part (res, detail, residuals, time_solve, time_pc_apply, solved ...; its setup part is left
 * as it is), so one gs_attempt may be solved again with a new right-hand side. */
gs_status gs_attempt_solve(gs_attempt_setup *s, const double *b, const double *x0, const gs_attempt_monitor *mon,
                           double *x, gs_attempt *out);
/* Whether the setup can take new values of A with the same pattern (gs_attempt_refactor): its
 * preprocessing depends on the pattern alone (no matching, no scaling). */
bool gs_attempt_can_refactor(const gs_attempt_setup *s);
/* New values in s->A (same pattern as at the setup): the transformed matrix and the operator made again,
 * then the preconditioner's numeric setup alone (its symbolic phase -- patterns, levels, partitions --
 * is kept). out's setup part is replaced (time_setup_symbolic 0). A numerical failure: GS_OK with
 * out->res.reason = GS_DIVERGED_PC_FAILED and s->ready false. */
gs_status gs_attempt_refactor(gs_attempt_setup *s, gs_attempt *out);
void gs_attempt_setup_free(gs_attempt_setup *s);

/* Both phases at once: solves A x = b (A square, sorted, original numbering; b, x0 of length n) with cfg
 * (solver.*, preconditioner.*, trisolve.* read from it; its "auto" types must be resolved already) after
 * the preprocessing `pre`. x receives the solution in A's numbering whenever out->solved. A numerical
 * failure of the preprocessing or the setup (structurally singular matrix, zero pivot, unstable factors)
 * is an outcome: GS_OK with reason GS_DIVERGED_PC_FAILED and the message in out->detail. Any other
 * failure is returned as an error status. */
gs_status gs_attempt_run(gs_backend *be, const gs_csr *A, const double *b, const double *x0, const gs_config *cfg,
                         const gs_preprocess *pre, gs_attempt_cache *cache, const gs_attempt_monitor *mon, double *x,
                         gs_attempt *out);

#ifdef __cplusplus
}
#endif
#endif
