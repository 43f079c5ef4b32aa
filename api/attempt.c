/* One attempt: preprocess, upload, preconditioner setup, Krylov solve, back-transformation and the true
 * residual of the original system (api/attempt.h). */
#include "api/attempt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"
#include "precond/precond.h"
#include "precond/scaling.h"

void gs_attempt_cache_free(gs_attempt_cache *c)
{
    gs_mat_destroy(&c->M);
    gs_csr_free(&c->C);
    gs_transform_free(&c->T);
    memset(c, 0, sizeof *c);
}

void gs_attempt_free(gs_attempt *a)
{
    gs_report_destroy(&a->rep);
    gs_free(&a->detail);
}

/* The attempt's detail, as long as it is (res.detail shows it too); out of host memory it stays as it
 * was and GS_ERR_MEM is returned. */
static gs_status set_detail(gs_attempt *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static gs_status set_detail(gs_attempt *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *t = NULL;
    if (n < 0) return GS_ERROR(GS_ERR_INTERNAL, "the detail's format \"%.60s\" cannot be written", fmt);
    GS_CALL(gs_malloc(&t, (size_t)n + 1, 1));
    va_start(ap, fmt);
    vsnprintf(t, (size_t)n + 1, fmt, ap);
    va_end(ap);
    gs_free(&out->detail);
    out->detail = t;
    out->res.detail = t;
    out->res.solver_ = NULL;
    return GS_OK;
}

/* A numerical failure before the solve (preprocessing or setup) ends the attempt with a reason (GS_OK);
 * out of host memory for its detail, GS_ERR_MEM. */
static gs_status setup_failed(gs_attempt *out, const char *what)
{
    out->res.reason = GS_DIVERGED_PC_FAILED;
    gs_status st = gs_error_status();
    char *msg = NULL; /* the message, copied before the pending error is cleared */
    gs_status cst = gs_strprintf(&msg, "%s", gs_error_message()[0] ? gs_error_message() : gs_status_name(st));
    if (cst != GS_OK) return GS_ERROR(GS_ERR_MEM, "out of host memory for the message of a failed %s", what);
    gs_error_clear();
    cst = set_detail(out, "%s failed: %s", what, msg);
    gs_free(&msg);
    return cst;
}

static gs_status interrupted(gs_attempt *out, const char *phase)
{
    out->res.reason = GS_DIVERGED_INTERRUPTED;
    return set_detail(out, "interrupted by %s during %s", gs_interrupt_cause(), phase);
}

/* The transformed operator for `pre`: the cached one when the preprocessing is the same, else built
 * (a structurally singular matrix under matching: *failed, with the error pending). */
static gs_status operator_for(gs_backend *be, const gs_csr *A, const gs_preprocess *pre, gs_attempt_cache *c,
                              bool *failed, double *t_pre)
{
    *failed = false;
    *t_pre = 0.0;
    if (c->valid && c->be == be && gs_preprocess_equal(&c->T.what, pre)) return GS_OK;
    gs_attempt_cache_free(c);
    double t = gs_wtime();
    if (!gs_preprocess_is_identity(pre)) {
        gs_status st = gs_transform_build(A, pre, &c->T, &c->C);
        if (st == GS_ERR_NUMERIC) {
            *failed = true;
            return GS_OK;
        }
        GS_CALL(st);
    } else {
        c->T.n = A->nrows;
    }
    GS_CALL(gs_mat_create(be, c->C.rowptr ? &c->C : A, &c->M));
    c->be = be;
    c->valid = true;
    *t_pre = gs_wtime() - t;
    return GS_OK;
}

/* ||b - A x|| of the original system from the transformed one: r~ = b~ - C y on the backend, then
 * r(r_i) = r~_i / dr(r_i) on the host (a permutation alone keeps the norm). */
static gs_status original_residual(const gs_attempt_cache *c, const gs_vector *vb, const gs_vector *vy, gs_vector *vr,
                                   double *host, double *norm)
{
    GS_CALL(gs_vec_copy(vb, vr));
    GS_CALL(gs_mat_spmv(-1.0, c->M, vy, 1.0, vr));
    if (!c->T.dr) return gs_vec_nrm2(vr, norm);
    GS_CALL(gs_vec_download(vr, host));
    double s = 0.0;
    for (gs_int i = 0; i < c->T.n; i++) {
        gs_int r = c->T.rowmap ? c->T.rowmap[i] : i;
        double v = host[i] / c->T.dr[r];
        s += v * v;
    }
    *norm = sqrt(s);
    return GS_OK;
}

/* The caller's monitor with iteration numbers continuing across re-solves (a re-solve's iteration 0
 * repeats the last iteration of the one before and is not passed on). */
typedef struct offset_monitor {
    const gs_attempt_monitor *mon;
    int offset;
} offset_monitor;

static void offset_monitor_fn(void *ctx, int iteration, double resnorm)
{
    offset_monitor *m = ctx;
    if (m->offset > 0 && iteration == 0) return;
    m->mon->fn(m->mon->ctx, m->offset + iteration, resnorm);
}

/* The Krylov solve and, after a converged solve of a scaled system whose true residual misses the
 * target, the tighter re-solves from its solution. */
static gs_status solve_and_refine(gs_ksp *ksp, const gs_attempt_cache *c, gs_pc *pc, const gs_vector *vb,
                                  gs_vector *vy, gs_vector *vr, double *host, double target,
                                  const gs_attempt_monitor *mon, gs_attempt *out)
{
    offset_monitor om = {mon, 0};
    const int max_it = ksp->prm.max_iterations;
    if (mon && mon->fn) gs_ksp_set_monitor(ksp, offset_monitor_fn, &om);
    gs_timer timer = {0};
    gs_status st = GS_OK;
    gs_solve_result r;
    double t = 0.0, rtrue = NAN;
    GS_TRY(gs_timer_start(ksp->be, &timer));
    GS_TRY(gs_ksp_solve(ksp, c->M, pc, vb, vy, &out->res));
    GS_TRY(gs_timer_stop(&timer, &t));
    out->time_solve = t;
    out->solved = true;
    GS_TRY(original_residual(c, vb, vy, vr, host, &rtrue));
    while (c->T.dr && gs_reason_converged(out->res.reason) && out->res.reason != GS_CONVERGED_ZERO_RHS &&
           !(rtrue <= target) && isfinite(rtrue) && out->refinements < GS_ATTEMPT_MAX_REFINEMENTS &&
           out->res.iterations < max_it) {
        /* the scaled norm must drop by the factor the true one misses, with a margin */
        double factor = fmax(0.5 * target / rtrue, 1e-8);
        ksp->prm.rtol = 0.0;
        ksp->prm.atol = out->res.resnorm * factor;
        ksp->prm.max_iterations = max_it - out->res.iterations;
        om.offset = out->res.iterations;
        GS_TRY(gs_timer_start(ksp->be, &timer));
        GS_TRY(gs_ksp_solve(ksp, c->M, pc, vb, vy, &r));
        GS_TRY(gs_timer_stop(&timer, &t));
        out->time_solve += t;
        out->refinements++;
        r.iterations += out->res.iterations;
        r.bnorm = out->res.bnorm;
        r.r0norm = out->res.r0norm;
        out->res = r;
        GS_TRY(original_residual(c, vb, vy, vr, host, &rtrue));
    }
    out->residual_true_abs = rtrue;
cleanup:
    gs_timer_destroy(&timer);
    return st;
}

/* A converged reason stated in the original system's terms when the system was scaled (the solver's
 * detail speaks of the scaled one). */
static gs_status restate_converged(gs_attempt *out, double target, bool scaled, gs_reason met)
{
    if (!gs_reason_converged(out->res.reason) || out->res.reason == GS_CONVERGED_ZERO_RHS) return GS_OK;
    if (out->residual_true_abs <= target) {
        out->res.reason = met; /* a re-solve's inner tolerance is absolute: the user's bound decides */
        if (scaled)
            GS_CALL(set_detail(out,
                               "true ||b - Ax|| = %.3e <= %.3e in the original (unscaled) system after %d iterations%s",
                               out->residual_true_abs, target, out->res.iterations,
                               out->refinements == 0   ? ""
                               : out->refinements == 1 ? " (1 tighter re-solve of the scaled system)"
                                                       : " (tighter re-solves of the scaled system)"));
    } else if (!(out->residual_true_abs <= 10.0 * target)) {
        out->true_missed = true;
    }
    return GS_OK;
}

gs_status gs_attempt_setup_run(gs_backend *be, const gs_csr *A, const gs_config *cfg, const gs_preprocess *pre,
                               gs_attempt_cache *cache, gs_attempt_setup *s, gs_attempt *out)
{
    gs_status st = GS_OK;
    const gs_int n = A->nrows;
    bool failed = false;
    memset(out, 0, sizeof *out);
    memset(s, 0, sizeof *s);
    s->be = be;
    s->cache = cache;
    s->A = A;
    s->time_pc_apply = -1.0;
    GS_CALL(gs_report_create(&out->rep));

    GS_TRY(operator_for(be, A, pre, cache, &failed, &out->time_preprocess));
    if (failed) {
        st = setup_failed(out, "preprocessing");
        goto cleanup;
    }
    if (!gs_preprocess_is_identity(pre)) GS_TRY(gs_transform_view(&cache->T, out->rep));
    if (gs_interrupt_requested()) {
        st = interrupted(out, "preprocessing");
        goto cleanup;
    }
    GS_TRY(GS_MALLOC(s->host, n));
    GS_TRY(gs_vec_create(be, n, &s->vb));
    GS_TRY(gs_vec_create(be, n, &s->vy));
    GS_TRY(gs_vec_create(be, n, &s->vr));
    const gs_csr *Ct = cache->C.rowptr ? &cache->C : A;

    /* preconditioner: a numerical failure in setup (zero pivot, unstable factors) is an outcome */
    GS_TRY(gs_pc_create(gs_config_string(cfg, "preconditioner.type"), be, cfg, &s->pc));
    GS_TRY(gs_pc_set_operator(s->pc, cache->M)); /* a GPU factorization reads A there */
    gs_status sst = gs_pc_setup_symbolic(s->pc, Ct);
    if (sst == GS_OK) sst = gs_pc_setup_numeric(s->pc, Ct);
    out->time_setup_symbolic = s->pc->time_symbolic;
    out->time_setup_numeric = s->pc->time_numeric;
    if (sst == GS_ERR_NUMERIC) {
        st = setup_failed(out, "preconditioner setup");
        goto cleanup;
    }
    GS_TRY(sst);
    gs_pc_view(s->pc, out->rep);
    /* views return no status: a report entry that could not be allocated leaves GS_ERR_MEM pending */
    if (gs_error_status() == GS_ERR_MEM) GS_TRY(GS_ERR_MEM);
    if (gs_interrupt_requested()) {
        st = interrupted(out, "setup");
        goto cleanup;
    }
    GS_TRY(gs_ksp_params_from_config(cfg, &s->prm));
    GS_TRY(gs_ksp_create(gs_config_string(cfg, "solver.type"), be, &s->prm, &s->ksp));
    s->ready = true;
    return GS_OK;
cleanup:
    /* an outcome keeps out (its reason and report); an error leaves nothing behind */
    gs_attempt_setup_free(s);
    return st;
}

gs_status gs_attempt_solve(gs_attempt_setup *s, const double *b, const double *x0, const gs_attempt_monitor *mon,
                           double *x, gs_attempt *out)
{
    if (!s->ready) return GS_ERROR(GS_ERR_INTERNAL, "an attempt solved without a complete setup");
    gs_attempt_cache *cache = s->cache;
    const gs_int n = s->A->nrows;
    double *host = s->host;
    /* the solve part of out starts afresh; the method starts from the configuration's parameters */
    memset(&out->res, 0, sizeof out->res);
    out->res.detail = "";
    gs_free(&out->detail);
    out->time_solve = out->time_pc_apply = 0.0;
    out->residual_true = out->residual_true_abs = out->bnorm = out->r0norm_original = NAN;
    out->residual_monitored = NAN;
    out->refinements = 0;
    out->solved = out->true_missed = false;
    s->ksp->prm = s->prm;
    gs_ksp_set_monitor(s->ksp, NULL, NULL);

    /* b~ and y0 on the backend */
    double bnorm = 0.0;
    for (gs_int i = 0; i < n; i++) bnorm += b[i] * b[i];
    out->bnorm = sqrt(bnorm);
    if (cache->C.rowptr) gs_transform_rhs(&cache->T, b, host);
    GS_CALL(gs_vec_upload(s->vb, cache->C.rowptr ? host : b));
    if (cache->C.rowptr) gs_transform_guess(&cache->T, x0, host);
    GS_CALL(gs_vec_upload(s->vy, cache->C.rowptr ? host : x0));

    /* solve; the target in the original system's norms */
    const gs_ksp_params *prm = &s->prm;
    double r0 = 0.0;
    GS_CALL(original_residual(cache, s->vb, s->vy, s->vr, host, &r0));
    out->r0norm_original = r0;
    const double target = fmax(prm->rtol * (prm->baseline == GS_BASELINE_R0 ? r0 : out->bnorm), prm->atol);
    GS_CALL(solve_and_refine(s->ksp, cache, s->pc, s->vb, s->vy, s->vr, host, target, mon, out));
    gs_ksp_set_monitor(s->ksp, NULL, NULL); /* the monitor's context lived in solve_and_refine */
    /* the solver's text copied: the attempt keeps it beyond the solver */
    if (out->res.detail && out->res.detail[0]) GS_CALL(set_detail(out, "%s", out->res.detail));
    GS_CALL(restate_converged(out, target, cache->T.dr != NULL,
                              prm->rtol * (prm->baseline == GS_BASELINE_R0 ? r0 : out->bnorm) >= prm->atol
                                  ? GS_CONVERGED_RTOL
                                  : GS_CONVERGED_ATOL));
    out->residual_true = out->bnorm > 0 ? out->residual_true_abs / out->bnorm : out->residual_true_abs;
    {
        double base = prm->baseline == GS_BASELINE_R0 ? out->res.r0norm : out->res.bnorm;
        out->residual_monitored = base > 0 ? out->res.resnorm / base : out->res.resnorm;
    }

    /* the solution in the original numbering */
    GS_CALL(gs_vec_download(s->vy, cache->C.rowptr ? host : x));
    if (cache->C.rowptr) gs_transform_solution(&cache->T, host, x);
    if (out->res.iterations > 0) {
        /* after the solve, so that the solve itself is not perturbed */
        if (s->time_pc_apply < 0) GS_CALL(gs_pc_apply_time(s->pc, s->vb, s->vr, &s->time_pc_apply));
        out->time_pc_apply = s->time_pc_apply;
    }
    return GS_OK;
}

bool gs_attempt_can_refactor(const gs_attempt_setup *s)
{
    const gs_transform *T = &s->cache->T;
    return s->pc && T->what.matching == GS_MATCHING_NONE && !T->dr && !T->dc;
}

gs_status gs_attempt_refactor(gs_attempt_setup *s, gs_attempt *out)
{
    gs_attempt_cache *c = s->cache;
    const gs_csr *A = s->A;
    if (!gs_attempt_can_refactor(s))
        return GS_ERROR(GS_ERR_ARG, "a setup with a matching or a scaling cannot take new values (they depend on them)");
    s->ready = false;
    gs_attempt_free(out);
    memset(out, 0, sizeof *out);
    GS_CALL(gs_report_create(&out->rep));
    double t = gs_wtime();
    if (c->C.rowptr) { /* a reordering: C = P A P^T again, into C's arrays (the same pattern) */
        gs_csr B = {0};
        GS_CALL(gs_csr_transform(A, c->T.rowmap, c->T.colmap, NULL, NULL, &B));
        bool same = B.nnz == c->C.nnz && B.val && c->C.val &&
                    memcmp(B.rowptr, c->C.rowptr, (size_t)(B.nrows + 1) * sizeof *B.rowptr) == 0 &&
                    memcmp(B.colind, c->C.colind, (size_t)B.nnz * sizeof *B.colind) == 0;
        if (same) memcpy(c->C.val, B.val, (size_t)B.nnz * sizeof *B.val);
        gs_csr_free(&B);
        if (!same) return GS_ERROR(GS_ERR_ARG, "new values of a matrix with another pattern");
    }
    gs_mat_destroy(&c->M);
    GS_CALL(gs_mat_create(s->be, c->C.rowptr ? &c->C : A, &c->M));
    GS_CALL(gs_pc_set_operator(s->pc, c->M));
    out->time_preprocess = gs_wtime() - t;
    if (!gs_preprocess_is_identity(&c->T.what)) GS_CALL(gs_transform_view(&c->T, out->rep));
    gs_status sst = gs_pc_setup_numeric(s->pc, c->C.rowptr ? &c->C : A);
    out->time_setup_numeric = s->pc->time_numeric;
    if (sst == GS_ERR_NUMERIC) {
        GS_CALL(setup_failed(out, "preconditioner setup"));
        return GS_OK;
    }
    GS_CALL(sst);
    gs_pc_view(s->pc, out->rep);
    if (gs_error_status() == GS_ERR_MEM) GS_CALL(GS_ERR_MEM);
    s->time_pc_apply = -1.0;
    s->ready = true;
    return GS_OK;
}

void gs_attempt_setup_free(gs_attempt_setup *s)
{
    gs_ksp_destroy(&s->ksp);
    gs_pc_destroy(&s->pc);
    gs_vec_destroy(&s->vb);
    gs_vec_destroy(&s->vy);
    gs_vec_destroy(&s->vr);
    gs_free(&s->host);
    s->ready = false;
}

gs_status gs_attempt_run(gs_backend *be, const gs_csr *A, const double *b, const double *x0, const gs_config *cfg,
                         const gs_preprocess *pre, gs_attempt_cache *cache, const gs_attempt_monitor *mon, double *x,
                         gs_attempt *out)
{
    gs_attempt_setup s;
    GS_CALL(gs_attempt_setup_run(be, A, cfg, pre, cache, &s, out));
    gs_status st = s.ready ? gs_attempt_solve(&s, b, x0, mon, x, out) : GS_OK;
    gs_attempt_setup_free(&s);
    GS_CALL(st);
    return GS_OK;
}
