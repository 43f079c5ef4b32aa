/* Krylov methods written once against the backend interface: CG, BiCGStab, GMRES(m), FGMRES(m).
 * Every stop has a reason; outcomes are not errors (gs_ksp_solve returns GS_OK for a diverged solve). */
#ifndef GS_SOLVER_H
#define GS_SOLVER_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/report.h"
#include "precond/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_reason {
    GS_REASON_NONE = 0,
    GS_CONVERGED_RTOL,
    GS_CONVERGED_ATOL,
    GS_CONVERGED_ZERO_RHS,      /* b = 0: x = 0 */
    GS_DIVERGED_MAX_IT,
    GS_DIVERGED_BREAKDOWN,      /* detail names the vanished quantity */
    GS_DIVERGED_NAN,            /* NaN/Inf in a residual or scalar */
    GS_DIVERGED_STAGNATION,
    GS_DIVERGED_PC_FAILED,
    GS_DIVERGED_INDEFINITE,     /* CG: p'Ap <= 0 */
    GS_DIVERGED_INTERRUPTED,    /* SIGINT/SIGTERM */
    GS_DIVERGED_DTOL            /* ||r|| > divergence_tolerance * max(||b||, ||r0||) */
} gs_reason;

const char *gs_reason_name(gs_reason r); /* "converged_rtol", "diverged_breakdown", ... */
bool gs_reason_converged(gs_reason r);

typedef enum gs_baseline { GS_BASELINE_RHS = 0, GS_BASELINE_R0 = 1 } gs_baseline;
typedef enum gs_ortho { GS_ORTHO_CGS2 = 0, GS_ORTHO_MGS = 1, GS_ORTHO_DCGS2 = 2 } gs_ortho;

typedef struct gs_ksp_params {
    int max_iterations;
    double rtol, atol;
    gs_baseline baseline;
    int restart;               /* GMRES/FGMRES */
    gs_ortho ortho;
    int stagnation_window;     /* stop if no progress over this many iterations (0: off) */
    double divergence_tolerance; /* stop when ||r|| > this * max(||b||, ||r0||) (0: off) */
    bool allow_variable_pc;    /* accept a variable preconditioner without FGMRES (config override) */
    double projected_limit;    /* stop as stagnated when the rate of the last GS_KSP_PROJECTION_WINDOW
                                * iterations needs over this * max_iterations to converge (0: off) */
} gs_ksp_params;

/* Iterations over which the projected convergence (gs_ksp_params.projected_limit) measures the rate. */
#define GS_KSP_PROJECTION_WINDOW 100

/* Called once per iteration (and at iteration 0) with the monitored residual norm. */
typedef void (*gs_ksp_monitor_fn)(void *ctx, int iteration, double resnorm);

typedef struct gs_solve_result {
    gs_reason reason;
    int iterations;
    double bnorm;      /* ||b|| */
    double r0norm;     /* ||b - A x0|| */
    double resnorm;    /* last monitored residual norm */
    /* What stopped the solve, in words, as long as it is ("" when nothing did), e.g. "rho = r0'r vanished
     * (|rho| = 1e-310) at iteration 12". The text belongs to the solver that wrote it: valid until its
     * next solve or its destruction (copy it to keep it). */
    const char *detail;
    struct gs_ksp *solver_; /* private: the solver whose text detail is (gs_ksp_stop writes there) */
} gs_solve_result;

typedef struct gs_ksp gs_ksp;
#define GS_KSP_DETAIL_START 256 /* the detail buffer's first size (it grows for longer texts) */
typedef struct gs_ksp_ops {
    gs_status (*solve)(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                       gs_solve_result *res);
    void (*destroy)(gs_ksp *ksp);
} gs_ksp_ops;

enum { GS_KSP_WORK = 8, GS_KSP_MWORK = 2 };

struct gs_ksp {
    const gs_ksp_ops *ops;
    void *data;
    const char *type;
    gs_backend *be;
    gs_ksp_params prm;
    bool accepts_variable_pc; /* FGMRES */
    gs_ksp_monitor_fn monitor;
    void *monitor_ctx;
    char *detail;        /* the text of the last solve's detail (gs_solve_result.detail), grown as needed */
    size_t detail_cap;
    bool detail_cut;     /* growing it ran out of host memory (the solve then fails with GS_ERR_MEM) */
    /* the method's vectors, kept from one solve to the next (gs_ksp_work, solver/ksp_impl.h) */
    gs_vector *work[GS_KSP_WORK];
    gs_mvec *mwork[GS_KSP_MWORK];
    gs_kstate *kwork; /* the fused CG's scalars, kept likewise (gs_ksp_work_kstate) */
};

typedef gs_status (*gs_ksp_create_fn)(gs_ksp *ksp);
typedef struct gs_ksp_entry {
    const char *name;
    gs_ksp_create_fn create;
    const char *help;
} gs_ksp_entry;
extern const gs_ksp_entry gs_ksp_registry[];

gs_status gs_ksp_create(const char *type, gs_backend *be, const gs_ksp_params *prm, gs_ksp **ksp);
gs_status gs_ksp_params_from_config(const gs_config *cfg, gs_ksp_params *prm);
void gs_ksp_set_monitor(gs_ksp *ksp, gs_ksp_monitor_fn fn, void *ctx);
/* Solve A x = b with x holding the initial guess. pc may be NULL (none). */
gs_status gs_ksp_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                       gs_solve_result *res);
void gs_ksp_destroy(gs_ksp **ksp);

/* True residual ||b - A x||_2 (allocates a work vector). */
gs_status gs_true_residual(const gs_matrix *A, const gs_vector *b, const gs_vector *x, double *norm);

#ifdef __cplusplus
}
#endif
#endif
