/* The strategy of a run: the automatic choice of method (solver.type / preconditioner.type /
 * system.* = "auto") from the matrix's cheap facts, and the fallback ladder that retries a failed solve
 * with stronger settings (solver.fallback = "auto"). docs/algorithms.md#automatic-choice states the rule
 * and the ladders. */
#ifndef GS_API_STRATEGY_H
#define GS_API_STRATEGY_H

#include <stdbool.h>

#include "api/attempt.h"
#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/csr_stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_RUNG_MAX_SETTINGS 12
/* solver.projected_limit of the attempts when a fallback may follow (unless the user set it). */
#define GS_STRATEGY_PROJECTED_LIMIT "2"
/* preconditioner.stability_limit of those attempts (unless the user set it): ||M^-1 1||_inf ||A||_inf
 * beyond this means factors with explosive growth (west2021's ILU(0): 1e22; converging factors of the
 * development set stay below 1e12). */
#define GS_STRATEGY_STABILITY_LIMIT "1e16"
#define GS_STRATEGY_MAX_ATTEMPTS 10

/* One rung of a ladder: configuration settings "key=value" (NULL-terminated). */
typedef struct gs_rung {
    const char *name;
    const char *settings[GS_RUNG_MAX_SETTINGS];
} gs_rung;

typedef enum gs_matrix_class {
    GS_CLASS_SPD = 0,      /* numerically symmetric, every diagonal entry positive */
    GS_CLASS_NONSYM,       /* a nonzero diagonal of usable size, scaled within GS_RULE_SCALE_SPREAD */
    GS_CLASS_WEAK_DIAG,    /* zero, missing or weak diagonal entries, or badly scaled rows */
    GS_CLASS_SYM_INDEF     /* symmetric with zero or negative diagonal entries (saddle points, KKT) */
} gs_matrix_class;

/* Rows whose largest entries differ by more than this factor count as badly scaled. */
#define GS_RULE_SCALE_SPREAD 1e8
/* Weak diagonal entries (core/csr_stats.h) in more than this fraction of the rows make the diagonal weak. */
#define GS_RULE_WEAK_FRACTION 0.01

typedef struct gs_auto_choice {
    gs_matrix_class cls;
    const gs_rung *const *ladder; /* the class's ladder */
    int nrungs;
    int first;             /* the rung the first attempt uses */
    bool trial;            /* CG without a preconditioner is tried first (gs_strategy_wants_trial) */
    char why[400];         /* the facts that decided, in words */
} gs_auto_choice;

/* On the GPU an IC(0) iteration costs several unpreconditioned ones (two triangular solves against one
 * SpMV) and its setup costs many more, so for an SPD-looking system of at least GS_TRIAL_MIN_ROWS rows
 * CG runs GS_TRIAL_ITERATIONS iterations without a preconditioner first; when, at the rate they
 * show, it would converge within GS_TRIAL_NONE_ITERATIONS iterations, it continues without one (from
 * where the trial stopped); otherwise IC(0) starts from the trial's solution. */
#define GS_TRIAL_MIN_ROWS 50000
#define GS_TRIAL_ITERATIONS 50
#define GS_TRIAL_NONE_ITERATIONS 500
bool gs_strategy_wants_trial(const gs_auto_choice *c, gs_backend_kind kind, gs_int n);
/* The iterations a solve needs to take ||r|| from r0 to target when k iterations took it from r0 to rk
 * (at the same geometric rate; INFINITY when rk >= r0). */
double gs_strategy_projected_iterations(double r0, double rk, int k, double target);
const char *gs_matrix_class_name(gs_matrix_class c);
/* The rule: class, ladder and first rung from the facts of A and the backend's kind. Pure. */
void gs_strategy_rule(const gs_csr_stats *s, gs_backend_kind kind, gs_auto_choice *c);

/* The record of one attempt (the JSON "attempts" array, one text line each). */
typedef struct gs_attempt_record {
    char method[160];   /* "gmres(30) + ilu0; matching mwm, scaling matching, reorder rcm" */
    char rung[32];      /* the ladder rung's name, or "configuration" for the user's own */
    char reason[32];
    char *detail;       /* as long as it is (owned; NULL: none) */
    int iterations;
    double time_setup;  /* preprocessing + symbolic + numeric setup, seconds */
    double time_solve;
    double residual_true;
    bool converged;
} gs_attempt_record;

/* The reported attempt's setup kept alive for more right-hand sides (gs_strategy_hooks.keep). */
typedef struct gs_strategy_kept {
    gs_attempt_cache cache; /* its transform and operator */
    gs_attempt_setup setup; /* setup.cache == &cache */
    gs_config *cfg;         /* the configuration its preconditioner reads (owned) */
    char rung[32];
} gs_strategy_kept;

void gs_strategy_kept_free(gs_strategy_kept **k);

typedef struct gs_strategy_result {
    bool automatic;        /* some type was "auto": the rule ran */
    gs_auto_choice choice; /* when automatic, or when the fallback needed a ladder */
    int nattempts;
    gs_attempt_record rec[GS_STRATEGY_MAX_ATTEMPTS];
    int chosen;            /* the attempt reported (its solution is in x) */
    gs_attempt final;      /* that attempt's data (owns its report) */
    gs_config *cfg;        /* that attempt's configuration (owned) */
    char stopped[200];     /* why no further attempt was made ("" when the last converged) */
    gs_strategy_kept *kept; /* gs_strategy_solve_keep: the reported attempt's setup when it converged */
} gs_strategy_result;

typedef struct gs_strategy_hooks {
    void (*attempt_begin)(void *ctx, int index); /* before attempt `index` (0-based) starts */
    gs_attempt_monitor monitor;
    void *ctx;
} gs_strategy_hooks;

/* Solves A x = b (x0 the guess; every array in A's numbering) with cfg: the first attempt is cfg with its
 * "auto" keys resolved by the rule; while an attempt fails and `fallback` holds (solver.fallback = auto,
 * as the caller decides), the next rung of the ladder within solver.fallback_budget seconds. x receives
 * the reported attempt's solution: the first that converged, else the one with the smallest true
 * residual. Errors (not numerical outcomes) end the run with their status. */
gs_status gs_strategy_solve(gs_backend *be, const gs_csr *A, const double *b, const double *x0, const gs_config *cfg,
                            bool fallback, const gs_strategy_hooks *hooks, double *x, gs_strategy_result *out);
/* The same, keeping the reported attempt's setup in out->kept when it converged (NULL otherwise), for
 * more right-hand sides. */
gs_status gs_strategy_solve_keep(gs_backend *be, const gs_csr *A, const double *b, const double *x0,
                                 const gs_config *cfg, bool fallback, const gs_strategy_hooks *hooks, double *x,
                                 gs_strategy_result *out);
void gs_strategy_result_free(gs_strategy_result *r);
/* The configuration of the first attempt gs_strategy_solve makes for an explicit configuration cfg
 * (solver.type and preconditioner.type not "auto"): cfg with its system.* keys resolved into *pre and,
 * with a fallback, the limits that let a failing attempt give way early. */
gs_status gs_strategy_explicit_config(const gs_config *cfg, bool fallback, gs_config **c, gs_preprocess *pre);
/* The record of an attempt made with cfg (its method described from cfg). */
gs_status gs_strategy_record(const gs_config *cfg, const char *rung, const gs_attempt *a, gs_attempt_record *r);
/* Releases a record's detail. */
void gs_attempt_record_free(gs_attempt_record *r);

/* The attempts as a new JSON array (one object each: index, rung, method, reason, detail, iterations,
 * time_setup, time_solve, residual_true, converged); NULL when out of memory. */
struct json_t *gs_strategy_attempts_json(const gs_strategy_result *r);

#ifdef __cplusplus
}
#endif
#endif
