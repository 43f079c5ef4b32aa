/* The automatic choice of method and the fallback ladder (api/strategy.h; the rule and the ladders are
 * documented in docs/algorithms.md#automatic-choice). */
#include "api/strategy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"
#include "core/json.h"

/* ---------------------------------------------------------------------------------------------- */
/* the ladders                                                                                    */

#define NO_PREPROCESS "system.matching=none", "system.scaling=none", "system.reorder=none"
#define MATCHED(reorder) "system.matching=mwm", "system.scaling=matching", "system.reorder=" reorder
#define GROW "preconditioner.zero_pivot=grow"

/* The rungs, from the cheapest preconditioner to a nearly exact pivoting factorization. BiCGStab where
 * one preconditioner application per half step is cheap and restarts would stall GMRES(30); GMRES(50)
 * with the stronger factorizations, whose residual never grows. */
static const gs_rung rung_ic0 = {"ic0", {"solver.type=cg", "preconditioner.type=ic0", GROW, NO_PREPROCESS}};
static const gs_rung rung_ilu0 = {"ilu0", {"solver.type=bicgstab", "preconditioner.type=ilu0", GROW, NO_PREPROCESS}};
static const gs_rung rung_iluk1 = {
    "iluk1",
    {"solver.type=bicgstab", "preconditioner.type=iluk", "preconditioner.fill_level=1", GROW, NO_PREPROCESS}};
static const gs_rung rung_mwm_ilu0 = {
    "mwm-ilu0", {"solver.type=bicgstab", "preconditioner.type=ilu0", GROW, MATCHED("none")}};
static const gs_rung rung_mwm_ilut = {
    "mwm-ilut",
    {"solver.type=bicgstab", "preconditioner.type=ilut", "preconditioner.drop_tolerance=1e-3",
     "preconditioner.max_fill=20", GROW, MATCHED("rcm")}};
static const gs_rung rung_mwm_iluk1 = {
    "mwm-iluk1",
    {"solver.type=gmres", "solver.restart=50", "preconditioner.type=iluk", "preconditioner.fill_level=1", GROW,
     MATCHED("rcm")}};
static const gs_rung rung_mwm_ilutp = {
    "mwm-ilutp",
    {"solver.type=gmres", "solver.restart=50", "preconditioner.type=ilutp", "preconditioner.drop_tolerance=1e-4",
     "preconditioner.max_fill=50", "preconditioner.pivot_tolerance=0.1", GROW, MATCHED("rcm")}};
static const gs_rung rung_mwm_ilutp_deep = {
    "mwm-ilutp-deep",
    {"solver.type=gmres", "solver.restart=100", "preconditioner.type=ilutp", "preconditioner.drop_tolerance=1e-7",
     "preconditioner.max_fill=400", "preconditioner.pivot_tolerance=0.5", GROW, MATCHED("rcm")}};

/* The ladders: each class starts at its first rung (GS_CLASS_* below) and climbs. */
static const gs_rung *const ladder_spd[] = {&rung_ic0,       &rung_ilu0,      &rung_mwm_ilut,      &rung_iluk1,
                                            &rung_mwm_iluk1, &rung_mwm_ilutp, &rung_mwm_ilutp_deep};
static const gs_rung *const ladder_nonsym[] = {&rung_ilu0,      &rung_mwm_ilut,  &rung_mwm_iluk1,
                                               &rung_iluk1,     &rung_mwm_ilutp, &rung_mwm_ilutp_deep};
static const gs_rung *const ladder_weak[] = {&rung_mwm_ilut,  &rung_mwm_iluk1,      &rung_iluk1,
                                             &rung_mwm_ilutp, &rung_mwm_ilutp_deep};
/* saddle points: the matching breaks the symmetric structure the factorization can use, so without it
 * first */
static const gs_rung *const ladder_indef[] = {&rung_iluk1,     &rung_mwm_ilut,  &rung_mwm_ilu0,
                                              &rung_mwm_iluk1, &rung_mwm_ilutp, &rung_mwm_ilutp_deep};

#define NRUNGS(l) ((int)(sizeof(l) / sizeof((l)[0])))

/* CG without a preconditioner: the GPU trial's candidate (gs_strategy_wants_trial). */
static const gs_rung rung_cg_none = {"cg-none", {"solver.type=cg", "preconditioner.type=none", NO_PREPROCESS}};

bool gs_strategy_wants_trial(const gs_auto_choice *c, gs_backend_kind kind, gs_int n)
{
    return c->cls == GS_CLASS_SPD && kind == GS_BACKEND_CUDA && n >= GS_TRIAL_MIN_ROWS;
}

double gs_strategy_projected_iterations(double r0, double rk, int k, double target)
{
    if (k <= 0 || !(r0 > 0.0) || !(rk < r0)) return INFINITY;
    if (rk <= target) return k;
    return k * log(target / r0) / log(rk / r0);
}

const char *gs_matrix_class_name(gs_matrix_class c)
{
    switch (c) {
    case GS_CLASS_SPD: return "spd";
    case GS_CLASS_NONSYM: return "nonsymmetric";
    case GS_CLASS_WEAK_DIAG: return "weak-diagonal";
    case GS_CLASS_SYM_INDEF: return "symmetric-indefinite";
    }
    return "unknown";
}

void gs_strategy_rule(const gs_csr_stats *s, gs_backend_kind kind, gs_auto_choice *c)
{
    (void)kind;
    memset(c, 0, sizeof *c);
    const gs_int n = s->nrows;
    const gs_int bad = s->diag_missing + s->diag_zero;
    const double spread = s->row_norm_min > 0 ? s->row_norm_max / s->row_norm_min : 1.0;
    const bool weak = (double)s->diag_weak > GS_RULE_WEAK_FRACTION * (double)n;
    c->first = 0;
    if (s->sym_numerical && bad == 0 && s->diag_negative == 0 && n > 0) {
        c->cls = GS_CLASS_SPD;
        c->ladder = ladder_spd;
        c->nrungs = NRUNGS(ladder_spd);
        snprintf(c->why, sizeof c->why,
                 "numerically symmetric with every diagonal entry positive (possibly SPD): CG + IC(0)");
    } else if (s->sym_numerical) {
        c->cls = GS_CLASS_SYM_INDEF;
        c->ladder = ladder_indef;
        c->nrungs = NRUNGS(ladder_indef);
        snprintf(c->why, sizeof c->why,
                 "symmetric with %d zero or missing and %d negative diagonal entries (indefinite, e.g. a saddle "
                 "point): BiCGStab + ILU(1), the pivots of zero diagonal entries made by the fill",
                 (int)bad, (int)s->diag_negative);
    } else if (bad > 0 || weak || spread > GS_RULE_SCALE_SPREAD) {
        c->cls = GS_CLASS_WEAK_DIAG;
        c->ladder = ladder_weak;
        c->nrungs = NRUNGS(ladder_weak);
        snprintf(c->why, sizeof c->why,
                 "nonsymmetric with %d zero or missing and %d weak diagonal entries, row norms spread over %.1e: "
                 "BiCGStab + ILUT after a maximum-weight matching and its scaling",
                 (int)bad, (int)s->diag_weak, spread);
    } else {
        c->cls = GS_CLASS_NONSYM;
        c->ladder = ladder_nonsym;
        c->nrungs = NRUNGS(ladder_nonsym);
        snprintf(c->why, sizeof c->why, "nonsymmetric with a usable diagonal: BiCGStab + ILU(0)");
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* attempts                                                                                       */

static bool is_auto(const gs_config *cfg, const char *path) { return strcmp(gs_config_string(cfg, path), "auto") == 0; }

/* cfg with a rung's settings: every one (force), or only those of keys the user left "auto" or at their
 * default (the first attempt respects what the user chose). */
static gs_status apply_rung(gs_config *cfg, const gs_config *user, const gs_rung *r, bool force)
{
    for (int k = 0; k < GS_RUNG_MAX_SETTINGS && r->settings[k]; k++) {
        char key[96];
        size_t klen = strcspn(r->settings[k], "=");
        snprintf(key, sizeof key, "%.*s", (int)klen, r->settings[k]);
        bool user_left = gs_config_is_default(user, key);
        const gs_cfg_key *row = NULL;
        for (const gs_cfg_key *q = gs_cfg_schema; q->path; q++)
            if (strcmp(q->path, key) == 0) row = q;
        if (row && row->type == GS_CFG_CHOICE && is_auto(user, key)) user_left = true;
        if (force || user_left) GS_CALL(gs_config_set(cfg, r->settings[k]));
    }
    return GS_OK;
}

/* The system.* keys still "auto" after the rule: the matching's scaling with a matching, else nothing. */
static gs_status resolve_preprocess(gs_config *cfg, gs_preprocess *p)
{
    static const char *keys[] = {"system.matching", "system.scaling", "system.reorder"};
    if (is_auto(cfg, "system.scaling") && strcmp(gs_config_string(cfg, "system.matching"), "mwm") == 0)
        GS_CALL(gs_config_set(cfg, "system.scaling=matching"));
    for (int k = 0; k < 3; k++)
        if (is_auto(cfg, keys[k])) {
            char a[64];
            snprintf(a, sizeof a, "%s=none", keys[k]);
            GS_CALL(gs_config_set(cfg, a));
        }
    const char *m = gs_config_string(cfg, "system.matching"), *s = gs_config_string(cfg, "system.scaling"),
               *r = gs_config_string(cfg, "system.reorder");
    p->matching = strcmp(m, "mwm") == 0 ? GS_MATCHING_MWM : GS_MATCHING_NONE;
    p->scaling = strcmp(s, "ruiz") == 0     ? GS_SCALING_RUIZ
                 : strcmp(s, "rowcol") == 0 ? GS_SCALING_ROWCOL
                 : strcmp(s, "matching") == 0 ? GS_SCALING_MATCHING
                                              : GS_SCALING_NONE;
    p->reorder = strcmp(r, "rcm") == 0 ? GS_REORDER_RCM : strcmp(r, "nd") == 0 ? GS_REORDER_ND : GS_REORDER_NONE;
    if (p->scaling == GS_SCALING_MATCHING && p->matching != GS_MATCHING_MWM)
        return GS_ERROR(GS_ERR_CONFIG,
                        "system.scaling = \"matching\" is the scaling of the maximum-weight matching: it needs "
                        "system.matching = \"mwm\" (or choose scaling \"ruiz\" or \"rowcol\")");
    return GS_OK;
}

/* The limits of an attempt that a fallback may follow (unless the user set them): a solve that cannot
 * converge in time at its current rate gives way early, and factors whose stability estimate shows
 * explosive growth are refused before iterating. */
static gs_status fallback_limits(gs_config *c, const gs_config *user)
{
    /* preconditioned CG accelerates as it goes (its rate over a window underestimates what follows:
     * IC(0) on the 2D Laplacian 1024^2 needs 573 iterations, yet at iteration 200 its last 100 projected
     * more than 2000), so it runs to its limit */
    const bool cg_pc = strcmp(gs_config_string(c, "solver.type"), "cg") == 0 &&
                       strcmp(gs_config_string(c, "preconditioner.type"), "none") != 0;
    if (!cg_pc && gs_config_is_default(user, "solver.projected_limit"))
        GS_CALL(gs_config_set(c, "solver.projected_limit=" GS_STRATEGY_PROJECTED_LIMIT));
    if (gs_config_is_default(user, "preconditioner.stability_limit"))
        GS_CALL(gs_config_set(c, "preconditioner.stability_limit=" GS_STRATEGY_STABILITY_LIMIT));
    return GS_OK;
}

gs_status gs_strategy_explicit_config(const gs_config *cfg, bool fallback, gs_config **c, gs_preprocess *pre)
{
    if (is_auto(cfg, "solver.type") || is_auto(cfg, "preconditioner.type"))
        return GS_ERROR(GS_ERR_INTERNAL, "an explicit configuration was asked of one with an \"auto\" type");
    GS_CALL(gs_config_copy(cfg, c));
    gs_status st = resolve_preprocess(*c, pre);
    if (st == GS_OK && fallback) st = fallback_limits(*c, cfg);
    if (st != GS_OK) {
        gs_config_destroy(c);
        GS_CALL(st);
    }
    return GS_OK;
}

/* "gmres(30) + ilut(1e-3, 20); matching mwm, scaling matching, reorder rcm" */
static void describe(const gs_config *cfg, char *buf, size_t len)
{
    const char *ks = gs_config_string(cfg, "solver.type"), *pc = gs_config_string(cfg, "preconditioner.type");
    char solver[48], prec[64];
    if (strstr(ks, "gmres"))
        snprintf(solver, sizeof solver, "%s(%lld)", ks, gs_config_int(cfg, "solver.restart"));
    else
        snprintf(solver, sizeof solver, "%s", ks);
    if (strcmp(pc, "iluk") == 0 || strcmp(pc, "bilu") == 0)
        snprintf(prec, sizeof prec, "%s(%lld)", pc, gs_config_int(cfg, "preconditioner.fill_level"));
    else if (strcmp(pc, "ilut") == 0 || strcmp(pc, "bilut") == 0)
        snprintf(prec, sizeof prec, "%s(%g, %lld)", pc, gs_config_double(cfg, "preconditioner.drop_tolerance"),
                 gs_config_int(cfg, "preconditioner.max_fill"));
    else if (strcmp(pc, "ilutp") == 0)
        snprintf(prec, sizeof prec, "ilutp(%g, %lld, %g)", gs_config_double(cfg, "preconditioner.drop_tolerance"),
                 gs_config_int(cfg, "preconditioner.max_fill"), gs_config_double(cfg, "preconditioner.pivot_tolerance"));
    else
        snprintf(prec, sizeof prec, "%s", pc);
    snprintf(buf, len, "%s + %s; matching %s, scaling %s, reorder %s", solver, prec,
             gs_config_string(cfg, "system.matching"), gs_config_string(cfg, "system.scaling"),
             gs_config_string(cfg, "system.reorder"));
}

/* Whether attempt a is a better result to report than b: converged first, then the smaller true residual. */
static bool better(const gs_attempt *a, const gs_attempt *b)
{
    bool ca = a->solved && gs_reason_converged(a->res.reason) && !a->true_missed;
    bool cb = b->solved && gs_reason_converged(b->res.reason) && !b->true_missed;
    if (ca != cb) return ca;
    if (a->solved != b->solved) return a->solved;
    return a->residual_true < b->residual_true || (!isnan(a->residual_true) && isnan(b->residual_true));
}

gs_status gs_strategy_record(const gs_config *cfg, const char *rung, const gs_attempt *a, gs_attempt_record *r)
{
    memset(r, 0, sizeof *r);
    describe(cfg, r->method, sizeof r->method);
    snprintf(r->rung, sizeof r->rung, "%s", rung);
    snprintf(r->reason, sizeof r->reason, "%s", gs_reason_name(a->res.reason));
    if (a->detail) GS_CALL(gs_strprintf(&r->detail, "%s", a->detail));
    r->iterations = a->res.iterations;
    r->time_setup = a->time_preprocess + a->time_setup_symbolic + a->time_setup_numeric;
    r->time_solve = a->time_solve;
    r->residual_true = a->solved ? a->residual_true : NAN;
    r->converged = a->solved && gs_reason_converged(a->res.reason) && !a->true_missed;
    return GS_OK;
}

void gs_attempt_record_free(gs_attempt_record *r) { gs_free(&r->detail); }

void gs_strategy_kept_free(gs_strategy_kept **k)
{
    if (!k || !*k) return;
    gs_attempt_setup_free(&(*k)->setup);
    gs_attempt_cache_free(&(*k)->cache);
    gs_config_destroy(&(*k)->cfg);
    gs_free(k);
}

void gs_strategy_result_free(gs_strategy_result *r)
{
    gs_strategy_kept_free(&r->kept);
    for (int k = 0; k < r->nattempts; k++) gs_attempt_record_free(&r->rec[k]);
    gs_attempt_free(&r->final);
    gs_config_destroy(&r->cfg);
}

/* The converged reported attempt's setup moved into out->kept, with the strategy's cache (the attempt was
 * the last one made, so the cache holds its operator) and its configuration (out->cfg becomes a copy). */
static gs_status keep_setup(gs_strategy_result *out, gs_attempt_setup *su, gs_attempt_cache *cache, const char *rung)
{
    gs_strategy_kept *kp = NULL;
    gs_config *copy = NULL;
    GS_CALL(gs_calloc(&kp, 1, sizeof *kp));
    gs_status st = gs_config_copy(out->cfg, &copy);
    if (st != GS_OK) {
        gs_free(&kp);
        GS_CALL(st);
    }
    kp->cfg = out->cfg;
    out->cfg = copy;
    kp->cache = *cache;
    memset(cache, 0, sizeof *cache);
    kp->setup = *su;
    kp->setup.cache = &kp->cache;
    memset(su, 0, sizeof *su);
    snprintf(kp->rung, sizeof kp->rung, "%s", rung);
    out->kept = kp;
    return GS_OK;
}

/* The configuration of attempt k: the user's as it is (k = 0 without a rule), the user's with a pending
 * rung (the rule's first choice, or the GPU trial's verdict; what the user chose is kept), or the next
 * rung of the ladder whose method differs from every attempt made (*next advances); *none when the
 * ladder is exhausted. */
static gs_status attempt_config(const gs_config *user, const gs_strategy_result *out, int k, const gs_rung **pending,
                                int *next, gs_config **c, const char **rung, bool *none)
{
    *none = false;
    *rung = "configuration";
    if (*pending) {
        GS_CALL(gs_config_copy(user, c));
        GS_CALL(apply_rung(*c, user, *pending, false));
        *rung = (*pending)->name;
        *pending = NULL;
        return GS_OK;
    }
    if (k == 0) return gs_config_copy(user, c);
    for (; *next < out->choice.nrungs; (*next)++) {
        const gs_rung *r = out->choice.ladder[*next];
        gs_preprocess p;
        char method[160];
        GS_CALL(gs_config_copy(user, c));
        GS_CALL(apply_rung(*c, user, r, true));
        GS_CALL(resolve_preprocess(*c, &p));
        describe(*c, method, sizeof method);
        bool seen = false;
        for (int a = 0; a < out->nattempts; a++) seen |= strcmp(out->rec[a].method, method) == 0;
        if (!seen) {
            *rung = r->name;
            (*next)++;
            return GS_OK;
        }
        gs_config_destroy(c);
    }
    *none = true;
    return GS_OK;
}

/* The trial's view of the residual: ||r|| at its start, at its middle iteration GS_TRIAL_ITERATIONS / 2
 * and at its last iteration, passed on to the caller's monitor. */
typedef struct trial_monitor {
    const gs_attempt_monitor *next;
    double r0, rmid, rk;
    int k;
} trial_monitor;

static void trial_monitor_fn(void *ctx, int iteration, double resnorm)
{
    trial_monitor *m = ctx;
    if (iteration == 0) m->r0 = resnorm;
    if (iteration == GS_TRIAL_ITERATIONS / 2) m->rmid = resnorm;
    m->rk = resnorm;
    m->k = iteration;
    if (m->next && m->next->fn) m->next->fn(m->next->ctx, iteration, resnorm);
}

/* After the GPU trial: CG without a preconditioner goes on when it is projected to converge soon, else
 * the rule's first rung; the verdict goes into the attempt's detail. */
static const gs_rung *trial_verdict(const trial_monitor *m, double target, gs_strategy_result *out, int *next,
                                    gs_attempt_record *rec)
{
    /* the rate from the start: optimistic where CG's first iterations remove the rough error fast (the 2D
     * Laplacian 1024^2), and then the continuation's own projection (solver.projected_limit) hands over to
     * the rule's preconditioner; the rate of the second half alone would turn down CG where it is the
     * fastest (3D Poisson 100^3: 234 iterations, projected 600 from the second half) */
    const double need = gs_strategy_projected_iterations(m->r0, m->rk, m->k, target);
    const bool keep = need <= GS_TRIAL_NONE_ITERATIONS;
    if (gs_strprintf(&rec->detail,
             "trial of CG without a preconditioner: ||r|| x%.3g in %d iterations (x%.3g in the last %d), projected "
             "%.3g iterations to converge (at most %d keep it): %s",
             m->r0 > 0 ? m->rk / m->r0 : NAN, m->k, m->rmid > 0 ? m->rk / m->rmid : NAN,
             m->k - GS_TRIAL_ITERATIONS / 2, need, GS_TRIAL_NONE_ITERATIONS,
             keep ? "it continues from here" : "the rule's preconditioner starts from here") != GS_OK)
        gs_error_clear(); /* the verdict holds without its words */
    if (keep) return &rung_cg_none; /* then, on failure, the rule's first rung */
    *next = out->choice.first + 1;
    return out->choice.ladder[out->choice.first];
}

static gs_status strategy_solve(gs_backend *be, const gs_csr *A, const double *b, const double *x0, const gs_config *cfg,
                                bool fallback, const gs_strategy_hooks *hooks, bool keep, double *x,
                                gs_strategy_result *out)
{
    gs_status st = GS_OK;
    gs_attempt_cache cache;
    gs_config *c = NULL;
    double *xt = NULL, *xs = NULL;
    const double *start = x0; /* the guess of the next attempt (the trial's solution after a trial) */
    memset(&cache, 0, sizeof cache);
    memset(out, 0, sizeof *out);
    out->chosen = -1;
    out->automatic = is_auto(cfg, "solver.type") || is_auto(cfg, "preconditioner.type");
    if (out->automatic || fallback) {
        gs_csr_stats s;
        GS_TRY(gs_csr_stats_compute(A, &s));
        gs_strategy_rule(&s, be->kind, &out->choice);
        out->choice.trial = out->automatic && gs_strategy_wants_trial(&out->choice, be->kind, A->nrows);
    }
    GS_TRY(GS_MALLOC(xt, A->nrows));
    const double t0 = gs_wtime(), budget = gs_config_double(cfg, "solver.fallback_budget");
    const gs_rung *pending = out->automatic ? out->choice.ladder[out->choice.first] : NULL;
    int next = out->automatic ? out->choice.first + 1 : 0;
    if (out->choice.trial) {
        pending = &rung_cg_none;
        next = out->choice.first;
    }
    for (int k = 0; k < GS_STRATEGY_MAX_ATTEMPTS; k++) {
        const char *rung = NULL;
        bool none = false;
        const bool trial = k == 0 && out->choice.trial;
        GS_TRY(attempt_config(cfg, out, k, &pending, &next, &c, &rung, &none));
        if (none) {
            snprintf(out->stopped, sizeof out->stopped, "every rung of the %s ladder was tried",
                     gs_matrix_class_name(out->choice.cls));
            break;
        }
        gs_preprocess pre;
        GS_TRY(resolve_preprocess(c, &pre));
        if (fallback) GS_TRY(fallback_limits(c, cfg));
        if (trial) {
            char lim[64];
            snprintf(lim, sizeof lim, "solver.max_iterations=%d", GS_TRIAL_ITERATIONS);
            GS_TRY(gs_config_set(c, lim));
            GS_TRY(gs_config_set(c, "solver.projected_limit=0"));
        }
        if (hooks && hooks->attempt_begin) hooks->attempt_begin(hooks->ctx, k);
        trial_monitor tm = {hooks ? &hooks->monitor : NULL, NAN, NAN, NAN, 0};
        gs_attempt_monitor tmon = {trial_monitor_fn, &tm};
        gs_attempt a;
        gs_attempt_setup su;
        st = gs_attempt_setup_run(be, A, c, &pre, &cache, &su, &a);
        if (st == GS_OK && su.ready)
            st = gs_attempt_solve(&su, b, start, trial ? &tmon : hooks ? &hooks->monitor : NULL, xt, &a);
        if (st != GS_OK) {
            gs_error_push(st, __FILE__, __LINE__, "gs_attempt_run");
            gs_attempt_setup_free(&su);
            gs_attempt_free(&a);
            goto cleanup;
        }
        gs_attempt_record *rec = &out->rec[out->nattempts++];
        st = gs_strategy_record(c, trial ? "cg-none-trial" : rung, &a, rec);
        if (st != GS_OK) {
            gs_error_push(st, __FILE__, __LINE__, "gs_strategy_record");
            gs_attempt_setup_free(&su);
            gs_attempt_free(&a);
            goto cleanup;
        }
        if (trial && !rec->converged && a.solved && a.res.reason == GS_DIVERGED_MAX_IT) {
            /* the verdict, and the next attempt starts where the trial stopped */
            gs_ksp_params prm;
            GS_TRY(gs_ksp_params_from_config(cfg, &prm));
            double target = fmax(prm.rtol * (prm.baseline == GS_BASELINE_R0 ? a.r0norm_original : a.bnorm), prm.atol);
            pending = trial_verdict(&tm, target, out, &next, rec);
            GS_TRY(GS_MALLOC(xs, A->nrows));
            memcpy(xs, xt, (size_t)A->nrows * sizeof *xs);
            start = xs;
        }
        if (out->chosen < 0 || better(&a, &out->final)) {
            gs_attempt_free(&out->final);
            gs_config_destroy(&out->cfg);
            out->final = a;
            out->cfg = c;
            c = NULL;
            out->chosen = k;
            if (a.solved) memcpy(x, xt, (size_t)A->nrows * sizeof *x);
        } else {
            gs_attempt_free(&a);
        }
        if (rec->converged && keep && su.ready && out->chosen == k) {
            st = keep_setup(out, &su, &cache, rec->rung);
            if (st != GS_OK) {
                gs_error_push(st, __FILE__, __LINE__, "keep_setup");
                gs_attempt_setup_free(&su);
                goto cleanup;
            }
        }
        gs_attempt_setup_free(&su);
        gs_config_destroy(&c);
        if (rec->converged) break;
        if (strcmp(rec->reason, gs_reason_name(GS_DIVERGED_INTERRUPTED)) == 0) {
            snprintf(out->stopped, sizeof out->stopped, "interrupted");
            break;
        }
        if (trial && pending) continue; /* the trial is not a failed attempt */
        if (!fallback) break;
        if (rec->detail && strstr(rec->detail, "structurally singular")) {
            snprintf(out->stopped, sizeof out->stopped, "the matrix is structurally singular: no rung can help");
            break;
        }
        if (budget > 0 && gs_wtime() - t0 >= budget) {
            snprintf(out->stopped, sizeof out->stopped,
                     "solver.fallback_budget = %g s spent (%.3g s) after %d attempts", budget, gs_wtime() - t0,
                     out->nattempts);
            break;
        }
        if (k + 1 == GS_STRATEGY_MAX_ATTEMPTS)
            snprintf(out->stopped, sizeof out->stopped, "%d attempts made", GS_STRATEGY_MAX_ATTEMPTS);
    }
cleanup:
    gs_config_destroy(&c);
    gs_attempt_cache_free(&cache);
    gs_free(&xt);
    gs_free(&xs);
    if (st != GS_OK) gs_strategy_result_free(out);
    return st;
}

gs_status gs_strategy_solve(gs_backend *be, const gs_csr *A, const double *b, const double *x0, const gs_config *cfg,
                            bool fallback, const gs_strategy_hooks *hooks, double *x, gs_strategy_result *out)
{
    return strategy_solve(be, A, b, x0, cfg, fallback, hooks, false, x, out);
}

gs_status gs_strategy_solve_keep(gs_backend *be, const gs_csr *A, const double *b, const double *x0,
                                 const gs_config *cfg, bool fallback, const gs_strategy_hooks *hooks, double *x,
                                 gs_strategy_result *out)
{
    return strategy_solve(be, A, b, x0, cfg, fallback, hooks, true, x, out);
}

json_t *gs_strategy_attempts_json(const gs_strategy_result *r)
{
    json_t *arr = json_array();
    for (int k = 0; arr && k < r->nattempts; k++) {
        const gs_attempt_record *a = &r->rec[k];
        json_t *o = json_object();
        bool ok = o && gs_json_set(o, "index", json_integer(k)) && gs_json_set(o, "rung", gs_json_string(a->rung)) &&
                  gs_json_set(o, "method", gs_json_string(a->method)) &&
                  gs_json_set(o, "reason", gs_json_string(a->reason)) &&
                  gs_json_set(o, "detail", gs_json_string(a->detail ? a->detail : "")) &&
                  gs_json_set(o, "iterations", json_integer(a->iterations)) &&
                  gs_json_set(o, "time_setup", gs_json_real(a->time_setup)) &&
                  gs_json_set(o, "time_solve", gs_json_real(a->time_solve)) &&
                  gs_json_set(o, "residual_true", gs_json_real(a->residual_true)) &&
                  gs_json_set(o, "converged", json_boolean(a->converged));
        if (!ok || !gs_json_append(arr, o)) {
            if (!ok) json_decref(o);
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}
