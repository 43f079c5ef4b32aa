/* The Krylov front: method registry, parameters from the configuration, the checked public entry
 * points, and the stopping logic shared by every method (converged when ||r|| <= max(rtol*baseline,
 * atol)). */
#include "solver/solver.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"
#include "solver/ksp_impl.h"

/* The registry: solver/registry.def (a new method: its file and one line there). */
#define GS_KSP_ENTRY(...) {__VA_ARGS__},
const gs_ksp_entry gs_ksp_registry[] = {
#include "solver/registry.def"
    {NULL, NULL, NULL},
};
#undef GS_KSP_ENTRY

const char *gs_reason_name(gs_reason r)
{
    switch (r) {
    case GS_REASON_NONE: return "none";
    case GS_CONVERGED_RTOL: return "converged_rtol";
    case GS_CONVERGED_ATOL: return "converged_atol";
    case GS_CONVERGED_ZERO_RHS: return "converged_zero_rhs";
    case GS_DIVERGED_MAX_IT: return "diverged_max_it";
    case GS_DIVERGED_BREAKDOWN: return "diverged_breakdown";
    case GS_DIVERGED_NAN: return "diverged_nan";
    case GS_DIVERGED_STAGNATION: return "diverged_stagnation";
    case GS_DIVERGED_DTOL: return "diverged_dtol";
    case GS_DIVERGED_PC_FAILED: return "diverged_pc_failed";
    case GS_DIVERGED_INDEFINITE: return "diverged_indefinite";
    case GS_DIVERGED_INTERRUPTED: return "diverged_interrupted";
    }
    return "unknown";
}

bool gs_reason_converged(gs_reason r)
{
    return r == GS_CONVERGED_RTOL || r == GS_CONVERGED_ATOL || r == GS_CONVERGED_ZERO_RHS;
}

/* The schema's defaults (cfg/schema.c), for a solver created without parameters. */
static const gs_ksp_params default_params = {
    .max_iterations = 1000,
    .rtol = 1e-8,
    .atol = 0.0,
    .baseline = GS_BASELINE_RHS,
    .restart = 30,
    .ortho = GS_ORTHO_DCGS2,
    .stagnation_window = 0,
    .divergence_tolerance = 1e5,
    .allow_variable_pc = false,
    .projected_limit = 0.0,
};

static gs_status check_params(const gs_ksp_params *p)
{
    if (p->max_iterations < 0)
        return GS_ERROR(GS_ERR_ARG, "solver.max_iterations = %d: expected a count >= 0", p->max_iterations);
    if (!(p->rtol >= 0.0 && p->rtol <= 1.0))
        return GS_ERROR(GS_ERR_ARG, "solver.rtol = %g: expected a number in [0, 1]", p->rtol);
    if (!(p->atol >= 0.0))
        return GS_ERROR(GS_ERR_ARG, "solver.atol = %g: expected a number >= 0", p->atol);
    if (p->restart < 1)
        return GS_ERROR(GS_ERR_ARG, "solver.restart = %d: expected a restart length >= 1", p->restart);
    if (p->stagnation_window < 0)
        return GS_ERROR(GS_ERR_ARG, "solver.stagnation_window = %d: expected a count >= 0 (0: off)",
                        p->stagnation_window);
    if (!(p->projected_limit >= 0.0))
        return GS_ERROR(GS_ERR_ARG, "solver.projected_limit = %g: expected a factor >= 0 (0: off)", p->projected_limit);
    if (!(p->divergence_tolerance == 0.0 || p->divergence_tolerance >= 1.0))
        return GS_ERROR(GS_ERR_ARG,
                        "solver.divergence_tolerance = %g: expected 0 (off) or a factor >= 1 (below 1 the start "
                        "itself would count as divergence)",
                        p->divergence_tolerance);
    if (p->baseline != GS_BASELINE_RHS && p->baseline != GS_BASELINE_R0)
        return GS_ERROR(GS_ERR_ARG, "solver.baseline: unknown value %d (expected rhs or r0)", (int)p->baseline);
    if (p->ortho != GS_ORTHO_CGS2 && p->ortho != GS_ORTHO_MGS && p->ortho != GS_ORTHO_DCGS2)
        return GS_ERROR(GS_ERR_ARG, "solver.orthogonalization: unknown value %d (expected cgs2, dcgs2 or mgs)",
                        (int)p->ortho);
    return GS_OK;
}

gs_status gs_ksp_create(const char *type, gs_backend *be, const gs_ksp_params *prm, gs_ksp **ksp)
{
    gs_status st = GS_OK;
    gs_ksp *k = NULL;
    const gs_ksp_entry *e = NULL;

    if (!ksp) return GS_ERROR(GS_ERR_ARG, "gs_ksp_create: no output pointer");
    *ksp = NULL;
    if (!be) return GS_ERROR(GS_ERR_ARG, "gs_ksp_create: no backend");
    for (const gs_ksp_entry *r = gs_ksp_registry; type && r->name; r++)
        if (strcmp(r->name, type) == 0) e = r;
    if (!e) {
        char names[256] = "";
        size_t len = 0;
        for (const gs_ksp_entry *r = gs_ksp_registry; r->name; r++) {
            int w = snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", r->name);
            if (w < 0 || (size_t)w >= sizeof names - len) break;
            len += (size_t)w;
        }
        return GS_ERROR(GS_ERR_ARG, "unknown solver type \"%s\" (expected one of: %s)", type ? type : "(null)",
                        names);
    }
    if (!prm) prm = &default_params;
    GS_CALL(check_params(prm));

    GS_CALL(gs_calloc(&k, 1, sizeof *k));
    k->type = e->name;
    k->be = be;
    k->prm = *prm;
    GS_TRY(gs_malloc(&k->detail, GS_KSP_DETAIL_START, 1)); /* room for the usual details: no growth */
    k->detail_cap = GS_KSP_DETAIL_START;
    k->detail[0] = '\0';
    GS_TRY(e->create(k));
    *ksp = k;
    return GS_OK;
cleanup:
    gs_ksp_destroy(&k);
    return st;
}

gs_status gs_ksp_params_from_config(const gs_config *cfg, gs_ksp_params *prm)
{
    if (!cfg || !prm) return GS_ERROR(GS_ERR_ARG, "gs_ksp_params_from_config: no configuration or output");
    *prm = default_params;
    prm->max_iterations = (int)gs_config_int(cfg, "solver.max_iterations");
    prm->rtol = gs_config_double(cfg, "solver.rtol");
    prm->atol = gs_config_double(cfg, "solver.atol");
    prm->restart = (int)gs_config_int(cfg, "solver.restart");
    prm->stagnation_window = (int)gs_config_int(cfg, "solver.stagnation_window");
    prm->divergence_tolerance = gs_config_double(cfg, "solver.divergence_tolerance");
    prm->allow_variable_pc = gs_config_bool(cfg, "solver.allow_variable_preconditioner");
    prm->projected_limit = gs_config_double(cfg, "solver.projected_limit");

    const char *baseline = gs_config_string(cfg, "solver.baseline");
    if (strcmp(baseline, "rhs") == 0) prm->baseline = GS_BASELINE_RHS;
    else if (strcmp(baseline, "r0") == 0) prm->baseline = GS_BASELINE_R0;
    else return GS_ERROR(GS_ERR_CONFIG, "solver.baseline = \"%s\": expected \"rhs\" or \"r0\"", baseline);

    const char *ortho = gs_config_string(cfg, "solver.orthogonalization");
    if (strcmp(ortho, "cgs2") == 0) prm->ortho = GS_ORTHO_CGS2;
    else if (strcmp(ortho, "mgs") == 0) prm->ortho = GS_ORTHO_MGS;
    else if (strcmp(ortho, "dcgs2") == 0) prm->ortho = GS_ORTHO_DCGS2;
    else return GS_ERROR(GS_ERR_CONFIG, "solver.orthogonalization = \"%s\": expected \"cgs2\", \"dcgs2\" or \"mgs\"",
                         ortho);

    GS_CALL(check_params(prm));
    return GS_OK;
}

void gs_ksp_set_monitor(gs_ksp *ksp, gs_ksp_monitor_fn fn, void *ctx)
{
    if (!ksp) return;
    ksp->monitor = fn;
    ksp->monitor_ctx = ctx;
}

gs_status gs_ksp_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                       gs_solve_result *res)
{
    if (!ksp || !A || !b || !x || !res)
        return GS_ERROR(GS_ERR_ARG, "gs_ksp_solve: the solver, matrix, right-hand side, solution and result "
                                    "must all be given");
    memset(res, 0, sizeof *res);
    res->reason = GS_REASON_NONE;
    res->detail = "";
    res->solver_ = ksp;

    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "the matrix is %d x %d: a Krylov solve needs a square matrix", A->nrows,
                        A->ncols);
    if (b->n != A->nrows)
        return GS_ERROR(GS_ERR_ARG, "the right-hand side has %d entries for a matrix with %d rows", b->n, A->nrows);
    if (x->n != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "the solution vector has %d entries for a matrix with %d columns", x->n,
                        A->ncols);
    if (b == x || b->data == x->data)
        return GS_ERROR(GS_ERR_ARG, "the right-hand side and the solution are the same vector");
    if (A->be != ksp->be || b->be != ksp->be || x->be != ksp->be)
        return GS_ERROR(GS_ERR_ARG, "the matrix, b and x must live on the solver's backend \"%s\"",
                        ksp->be->name ? ksp->be->name : "?");
    if (pc) {
        const char *pname = pc->type ? pc->type : "(unnamed)";
        if (pc->be != ksp->be)
            return GS_ERROR(GS_ERR_ARG, "preconditioner \"%s\" lives on another backend than the solver", pname);
        if (pc->n != A->nrows)
            return GS_ERROR(GS_ERR_ARG, "preconditioner \"%s\" was set up for n = %d, the matrix has n = %d", pname,
                            pc->n, A->nrows);
        if (pc->state != GS_PC_READY)
            return GS_ERROR(GS_ERR_ARG, "preconditioner \"%s\" is not set up: call gs_pc_setup_symbolic and "
                                        "gs_pc_setup_numeric before solving", pname);
        if (pc->variable && !ksp->accepts_variable_pc && !ksp->prm.allow_variable_pc)
            return GS_ERROR(GS_ERR_CONFIG,
                            "the preconditioner changes between applications (asynchronous triangular solves): "
                            "use solver.type = \"fgmres\" or set solver.allow_variable_preconditioner = true");
    }

    if (pc && pc->identity) pc = NULL; /* M = I: the unpreconditioned recurrences, no copies */
    ksp->detail_cut = false;
    GS_CALL(ksp->ops->solve(ksp, A, pc, b, x, res));
    if (ksp->detail_cut) return GS_ERROR(GS_ERR_MEM, "out of host memory for the detail of the solve's reason");
    if (res->reason == GS_REASON_NONE)
        return GS_ERROR(GS_ERR_INTERNAL, "solver \"%s\" returned without a reason after %d iterations", ksp->type,
                        res->iterations);
    return GS_OK;
}

gs_status gs_ksp_work(gs_ksp *ksp, int slot, gs_int n, gs_vector **v)
{
    gs_vector **w = &ksp->work[slot];
    if (*w && (*w)->n != n) gs_vec_destroy(w);
    if (!*w) GS_CALL(gs_vec_create(ksp->be, n, w));
    *v = *w;
    return GS_OK;
}

gs_status gs_ksp_work_mvec(gs_ksp *ksp, int slot, gs_int n, gs_int k, gs_mvec **V)
{
    gs_mvec **w = &ksp->mwork[slot];
    if (*w && ((*w)->n != n || (*w)->k != k)) gs_mvec_destroy(w);
    if (!*w) GS_CALL(gs_mvec_create(ksp->be, n, k, w));
    *V = *w;
    return GS_OK;
}

gs_status gs_ksp_work_kstate(gs_ksp *ksp, gs_kstate **ks)
{
    if (!ksp->kwork) GS_CALL(gs_ks_create(ksp->be, &ksp->kwork));
    *ks = ksp->kwork;
    return GS_OK;
}

void gs_ksp_destroy(gs_ksp **ksp)
{
    if (!ksp || !*ksp) return;
    if ((*ksp)->ops && (*ksp)->ops->destroy) (*ksp)->ops->destroy(*ksp);
    for (int k = 0; k < GS_KSP_WORK; k++) gs_vec_destroy(&(*ksp)->work[k]);
    for (int k = 0; k < GS_KSP_MWORK; k++) gs_mvec_destroy(&(*ksp)->mwork[k]);
    gs_ks_destroy(&(*ksp)->kwork);
    gs_free(&(*ksp)->detail);
    gs_free(ksp);
}

gs_status gs_true_residual(const gs_matrix *A, const gs_vector *b, const gs_vector *x, double *norm)
{
    gs_status st = GS_OK;
    gs_vector *r = NULL;
    if (!A || !b || !x || !norm) return GS_ERROR(GS_ERR_ARG, "gs_true_residual: missing argument");
    if (b->n != A->nrows || x->n != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "true residual: b has %d and x %d entries for a %d x %d matrix", b->n, x->n,
                        A->nrows, A->ncols);
    GS_TRY(gs_vec_create(A->be, A->nrows, &r));
    GS_TRY(gs_ksp_residual(A, b, x, r));
    GS_TRY(gs_vec_nrm2(r, norm));
cleanup:
    gs_vec_destroy(&r);
    return st;
}

/* ---- shared by the methods (ksp_impl.h) ---- */

gs_status gs_ksp_residual(const gs_matrix *A, const gs_vector *b, const gs_vector *x, gs_vector *r)
{
    GS_CALL(gs_vec_copy(b, r));
    GS_CALL(gs_mat_spmv(-1.0, A, x, 1.0, r));
    return GS_OK;
}

/* The detail's text written into the solver's buffer, grown to fit (append: after the text there). Out
 * of host memory, the text is cut at the buffer's end (or is a fixed note when there is none). */
static void detail_vprintf(gs_solve_result *res, bool append, const char *fmt, va_list ap)
{
    gs_ksp *k = res->solver_;
    if (!k) { /* a result no solve started (cannot happen through gs_ksp_solve) */
        res->detail = "(no detail: the result belongs to no solver)";
        return;
    }
    size_t used = append && k->detail ? strlen(k->detail) : 0;
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) n = 0;
    size_t need = used + (size_t)n + 1;
    if (need > k->detail_cap) {
        size_t cap = need < 256 ? 256 : need;
        if (gs_realloc(&k->detail, cap, 1) == GS_OK) {
            k->detail_cap = cap;
        } else { /* the detail is cut; gs_ksp_solve reports GS_ERR_MEM when the method returns */
            gs_error_clear();
            k->detail_cut = true;
        }
    }
    if (!k->detail) {
        res->detail = "(out of host memory for the detail)";
        return;
    }
    if (used < k->detail_cap) vsnprintf(k->detail + used, k->detail_cap - used, fmt, ap);
    res->detail = k->detail;
}

void gs_ksp_stop(gs_solve_result *res, gs_reason reason, const char *fmt, ...)
{
    va_list ap;
    res->reason = reason;
    va_start(ap, fmt);
    detail_vprintf(res, false, fmt, ap);
    va_end(ap);
}

void gs_ksp_detail_append(gs_solve_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    detail_vprintf(res, true, fmt, ap);
    va_end(ap);
}

bool gs_ksp_nonfinite(gs_solve_result *res, const char *what, double v, int it)
{
    if (isfinite(v)) return false;
    gs_ksp_stop(res, GS_DIVERGED_NAN, "%s = %s at iteration %d", what, isnan(v) ? "NaN" : "Inf", it);
    return true;
}

bool gs_ksp_met(const gs_ksp_track *t, double rnorm) { return rnorm <= t->bound; }

/* Reason and detail for a met tolerance: RTOL when the relative bound holds, else ATOL. `what` names
 * the norm ("||r||", "true ||b - Ax||"). */
static void set_converged(const gs_ksp *ksp, const gs_ksp_track *t, const char *what, double rnorm, int it,
                          gs_solve_result *res)
{
    const char *base = ksp->prm.baseline == GS_BASELINE_R0 ? "||r0||" : "||b||";
    if (rnorm <= t->rtol_bound)
        gs_ksp_stop(res, GS_CONVERGED_RTOL, "%s = %.3e <= rtol*%s = %.3e at iteration %d", what, rnorm, base,
                    t->rtol_bound, it);
    else
        gs_ksp_stop(res, GS_CONVERGED_ATOL, "%s = %.3e <= atol = %.3e at iteration %d", what, rnorm,
                    ksp->prm.atol, it);
}

/* Every GS_KSP_PROJECTION_WINDOW iterations: with the average decrease of log ||r|| per iteration over
 * the window, the iterations still needed to reach the bound; stop when the total would exceed
 * projected_limit * max_iterations (a hopeless solve ends early, e.g. so that a fallback moves on). */
static bool projected_too_slow(const gs_ksp *ksp, gs_ksp_track *t, int it, double rnorm, gs_solve_result *res)
{
    if (ksp->prm.projected_limit <= 0.0 || it - t->check_it < GS_KSP_PROJECTION_WINDOW) return false;
    if (!(rnorm > 0.0 && t->check_norm > 0.0)) { /* an exact zero converges or can give no rate */
        t->check_it = it;
        t->check_norm = rnorm;
        return false;
    }
    const double rate = (log(rnorm) - log(t->check_norm)) / (double)(it - t->check_it); /* < 0: decreasing */
    const double need = rate < 0.0 ? (log(t->bound) - log(rnorm)) / rate : INFINITY;
    const double limit = ksp->prm.projected_limit * ksp->prm.max_iterations;
    if (it + need > limit) {
        gs_ksp_stop(res, GS_DIVERGED_STAGNATION,
                    "||r|| = %.3e at iteration %d: at the rate of the last %d iterations (x%.3g per iteration) the "
                    "tolerance %.3e would take %.3g more iterations, over solver.projected_limit x "
                    "max_iterations = %.0f",
                    rnorm, it, it - t->check_it, exp(rate), t->bound, need, limit);
        return true;
    }
    t->check_it = it;
    t->check_norm = rnorm;
    return false;
}

bool gs_ksp_step(gs_ksp *ksp, gs_ksp_track *t, int it, double rnorm, gs_solve_result *res)
{
    res->iterations = it;
    res->resnorm = rnorm;
    if (ksp->monitor) ksp->monitor(ksp->monitor_ctx, it, rnorm);

    if (!isfinite(rnorm)) {
        gs_ksp_stop(res, GS_DIVERGED_NAN, "residual norm ||r|| = %s at iteration %d%s", isnan(rnorm) ? "NaN" : "Inf",
                    it, it == 0 ? " (||b - A x0||: A or x0 holds NaN or Inf)" : "");
        return true;
    }
    if (gs_ksp_met(t, rnorm)) {
        set_converged(ksp, t, "||r||", rnorm, it, res);
        return true;
    }
    if (rnorm > t->dtol_bound) {
        gs_ksp_stop(res, GS_DIVERGED_DTOL,
                    "||r|| = %.3e at iteration %d exceeds solver.divergence_tolerance x max(||b||, ||r0||) = %.3e: "
                    "the iteration is diverging (a poor or unstable preconditioner, or a method unsuited to A)",
                    rnorm, it, t->dtol_bound);
        return true;
    }
    if (it >= ksp->prm.max_iterations) {
        gs_ksp_stop(res, GS_DIVERGED_MAX_IT,
                    "||r|| = %.3e still above the tolerance %.3e after %d iterations (solver.max_iterations)",
                    rnorm, t->bound, it);
        return true;
    }
    if (rnorm < t->best) {
        t->best = rnorm;
        t->best_it = it;
    } else if (ksp->prm.stagnation_window > 0 && it - t->best_it >= ksp->prm.stagnation_window) {
        gs_ksp_stop(res, GS_DIVERGED_STAGNATION,
                    "||r|| has not decreased below its best %.3e (iteration %d) for %d iterations, at iteration %d",
                    t->best, t->best_it, it - t->best_it, it);
        return true;
    }
    if (projected_too_slow(ksp, t, it, rnorm, res)) return true;
    if (gs_interrupt_requested()) {
        gs_ksp_stop(res, GS_DIVERGED_INTERRUPTED, "interrupted by %s at iteration %d (||r|| = %.3e)",
                    gs_interrupt_cause(), it, rnorm);
        return true;
    }
    return false;
}

gs_status gs_ksp_start(gs_ksp *ksp, const gs_matrix *A, const gs_vector *b, gs_vector *x, gs_vector *r,
                       gs_ksp_track *t, gs_solve_result *res, bool *done)
{
    double bnorm = 0.0, r0norm = 0.0;
    *done = false;
    GS_CALL(gs_vec_nrm2(b, &bnorm));
    GS_CALL(gs_ksp_residual(A, b, x, r));
    GS_CALL(gs_vec_nrm2(r, &r0norm));
    res->bnorm = bnorm;
    res->r0norm = r0norm;
    res->iterations = 0;

    if (bnorm == 0.0) {
        /* b = 0 has the solution x = 0, whatever A is. */
        GS_CALL(gs_vec_set(x, 0.0));
        res->resnorm = 0.0;
        if (ksp->monitor) ksp->monitor(ksp->monitor_ctx, 0, 0.0);
        gs_ksp_stop(res, GS_CONVERGED_ZERO_RHS, "b = 0: the solution is x = 0 (iteration 0)");
        *done = true;
        return GS_OK;
    }
    if (!isfinite(bnorm)) {
        res->resnorm = r0norm;
        if (ksp->monitor) ksp->monitor(ksp->monitor_ctx, 0, r0norm);
        gs_ksp_stop(res, GS_DIVERGED_NAN, "||b|| = %s at iteration 0: the right-hand side holds NaN or Inf",
                    isnan(bnorm) ? "NaN" : "Inf");
        *done = true;
        return GS_OK;
    }
    t->rtol_bound = ksp->prm.rtol * (ksp->prm.baseline == GS_BASELINE_R0 ? r0norm : bnorm);
    t->bound = fmax(t->rtol_bound, ksp->prm.atol);
    t->best = r0norm;
    t->best_it = 0;
    t->check_it = 0;
    t->check_norm = r0norm;
    t->dtol_bound = ksp->prm.divergence_tolerance > 0.0 ? ksp->prm.divergence_tolerance * fmax(bnorm, r0norm)
                                                         : INFINITY;
    *done = gs_ksp_step(ksp, t, 0, r0norm, res);
    return GS_OK;
}

gs_status gs_ksp_confirm(gs_ksp *ksp, gs_ksp_track *t, const gs_matrix *A, const gs_vector *b,
                         const gs_vector *x, gs_vector *r, int it, gs_solve_result *res, double *tnorm)
{
    double norm = 0.0;
    GS_CALL(gs_ksp_residual(A, b, x, r));
    GS_CALL(gs_vec_nrm2(r, &norm));
    *tnorm = norm;
    const bool claimed = res->reason == GS_CONVERGED_RTOL || res->reason == GS_CONVERGED_ATOL;
    if (!claimed && res->reason != GS_REASON_NONE) return GS_OK;
    if (gs_ksp_met(t, norm)) {
        /* Report the bound the true residual meets, keeping the monitored norm in the detail. */
        double monitored = res->resnorm;
        set_converged(ksp, t, "true ||b - Ax||", norm, it, res);
        gs_ksp_detail_append(res, " (monitored ||r|| = %.3e)", monitored);
        return GS_OK;
    }
    if (!claimed) return GS_OK;
    if (!isfinite(norm)) {
        gs_ksp_stop(res, GS_DIVERGED_NAN, "true residual ||b - Ax|| = %s at iteration %d", isnan(norm) ? "NaN" : "Inf",
                    it);
        return GS_OK;
    }
    if (it >= ksp->prm.max_iterations) {
        gs_ksp_stop(res, GS_DIVERGED_MAX_IT,
                    "the monitored ||r|| = %.3e met the tolerance but the true ||b - Ax|| = %.3e > %.3e, at the "
                    "iteration limit %d (solver.max_iterations)",
                    res->resnorm, norm, t->bound, it);
        return GS_OK;
    }
    /* The recurrence drifted from the true residual: the caller restarts from r = b - Ax. */
    res->reason = GS_REASON_NONE;
    res->detail = "";
    return GS_OK;
}
