/* One gpusolve run on a matrix already read: system -> backend -> preconditioner setup -> Krylov solve
 * -> true residual -> report (text or one JSON object), history CSV, solution file, exit code.
 * Reading the matrix is separate (gs_app_problem_read), so a sweep reads it once for all its runs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "app/sweep.h"
#include "app/system.h"
#include "core/atomic_file.h"
#include "core/backend.h"
#include "core/mem.h"
#include "core/report.h"
#include "core/signal.h"
#include "io/mmio.h"
#include "precond/ordering.h"
#include "precond/precond.h"
#include "solver/solver.h"

/* Residual history, appended by the solver's monitor (host scalars only). */
typedef struct {
    int *it;
    double *res, *t;
    int n, cap;
    double t0;
    gs_status st; /* first append failure */
} history;

static void history_monitor(void *ctx, int iteration, double resnorm)
{
    history *h = ctx;
    if (h->st != GS_OK) return;
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 1024;
        if ((h->st = gs_realloc(&h->it, (size_t)cap, sizeof *h->it)) != GS_OK ||
            (h->st = gs_realloc(&h->res, (size_t)cap, sizeof *h->res)) != GS_OK ||
            (h->st = gs_realloc(&h->t, (size_t)cap, sizeof *h->t)) != GS_OK)
            return;
        h->cap = cap;
    }
    h->it[h->n] = iteration;
    h->res[h->n] = resnorm;
    h->t[h->n] = gs_wtime() - h->t0;
    h->n++;
}

static gs_status history_write(const history *h, const char *path, double baseline)
{
    gs_atomic_file af;
    GS_CALL(gs_atomic_open(&af, path));
    fprintf(af.f, "iteration,residual,relative_residual,time_s\n");
    for (int i = 0; i < h->n; i++)
        fprintf(af.f, "%d,%.17g,%.17g,%.9f\n", h->it[i], h->res[i], baseline > 0 ? h->res[i] / baseline : h->res[i],
                h->t[i]);
    gs_status st = gs_atomic_commit(&af);
    if (st != GS_OK) {
        gs_atomic_abort(&af);
        GS_CALL(st);
    }
    return GS_OK;
}

static void history_free(history *h)
{
    gs_free(&h->it);
    gs_free(&h->res);
    gs_free(&h->t);
}

/* Seconds of one preconditioner application: the median of 9 applications to b after the solve,
 * each timed with backend events (CUDA events on the GPU), so the solve itself is not perturbed. */
static gs_status pc_apply_time(gs_pc *pc, const gs_vector *b, double *seconds)
{
    enum { REPS = 9 };
    gs_status st = GS_OK;
    gs_vector *z = NULL;
    gs_timer t = {0};
    double ts[REPS];
    GS_TRY(gs_vec_create(pc->be, b->n, &z));
    for (int k = 0; k < REPS; k++) {
        GS_TRY(gs_timer_start(pc->be, &t));
        GS_TRY(gs_pc_apply(pc, b, z));
        GS_TRY(gs_timer_stop(&t, &ts[k]));
    }
    for (int a = 1; a < REPS; a++) /* insertion sort of 9 values */
        for (int c = a; c > 0 && ts[c] < ts[c - 1]; c--) {
            double tmp = ts[c];
            ts[c] = ts[c - 1];
            ts[c - 1] = tmp;
        }
    *seconds = ts[REPS / 2];
cleanup:
    gs_timer_destroy(&t);
    gs_vec_destroy(&z);
    return st;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static const char *rep_s(const gs_report *rep, const char *k)
{
    const gs_report_entry *e = gs_report_find(rep, k);
    return e && e->type == GS_REPORT_STRING ? e->s : "?";
}
static long long rep_i(const gs_report *rep, const char *k)
{
    const gs_report_entry *e = gs_report_find(rep, k);
    return e ? e->i : -1;
}
static double rep_d(const gs_report *rep, const char *k)
{
    const gs_report_entry *e = gs_report_find(rep, k);
    return e ? e->d : NAN;
}

/* The text report: a block people read, ending with a line scripts can grep. */
static void print_text(const gs_report *rep, const gs_config *cfg, bool quiet, const char *prefix)
{
#define S(k) rep_s(rep, k)
#define I(k) rep_i(rep, k)
#define D(k) rep_d(rep, k)
    if (!quiet) {
        printf("gpusolve %s\n", S("gpusolve.version"));
        printf("matrix          %s: %lld x %lld, %lld nonzeros\n", S("matrix.source"), I("matrix.rows"),
               I("matrix.rows"), I("matrix.nnz"));
        printf("system          rhs = %s, x0 = %s, reorder = %s\n", S("system.rhs"), S("system.x0"),
               S("system.reorder"));
        printf("backend         %s: %s\n", S("backend.name"), S("backend.device"));
        printf("where           read: %s; setup: %s; solve: %s\n", S("where.read"), S("where.setup"),
               S("where.solve"));
        const char *ks = gs_config_string(cfg, "solver.type");
        printf("solver          %s", ks);
        if (strstr(ks, "gmres"))
            printf("(%lld, %s)", gs_config_int(cfg, "solver.restart"), gs_config_string(cfg, "solver.orthogonalization"));
        printf(", rtol %g, atol %g, max_iterations %lld\n", gs_config_double(cfg, "solver.rtol"),
               gs_config_double(cfg, "solver.atol"), gs_config_int(cfg, "solver.max_iterations"));
        printf("preconditioner  %s\n", gs_config_string(cfg, "preconditioner.type"));
        printf("configuration   (keys set by the file or -s; --print-config shows all)\n");
        for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) {
            if (gs_config_is_default(cfg, k->path)) continue;
            printf("  %-34s ", k->path);
            switch (k->type) {
            case GS_CFG_INT: printf("%lld", gs_config_int(cfg, k->path)); break;
            case GS_CFG_DOUBLE: printf("%g", gs_config_double(cfg, k->path)); break;
            case GS_CFG_BOOL: printf("%s", gs_config_bool(cfg, k->path) ? "true" : "false"); break;
            default: printf("\"%s\"", gs_config_string(cfg, k->path)); break;
            }
            printf("   (%s)\n", gs_config_origin(cfg, k->path));
        }
        bool any = false;
        for (int i = 0; i < rep->n; i++) {
            const char *k = rep->e[i].key;
            if ((strncmp(k, "preconditioner.", 15) || !strcmp(k, "preconditioner.type") ||
                 !strncmp(k, "preconditioner.time_setup", 25)) && strncmp(k, "trisolve.", 9))
                continue;
            if (!any) printf("setup details\n");
            any = true;
            printf("  %-40s ", k);
            gs_report_write_value(&rep->e[i], stdout);
            printf("\n");
        }
        printf("times [s]       read %.4f  setup_symbolic %.4f  setup_numeric %.4f  solve %.4f  total %.4f\n",
               D("time.read"), D("time.setup_symbolic"), D("time.setup_numeric"), D("time.solve"), D("time.total"));
        if (gs_report_find(rep, "solve.iterations")) {
            printf("iterations      %lld", I("solve.iterations"));
            if (I("solve.iterations") > 0) printf("  (%.3f ms per iteration)", 1e3 * D("time.per_iteration"));
            if (gs_report_find(rep, "time.preconditioner_apply"))
                printf("  (preconditioner application %.3f ms)", 1e3 * D("time.preconditioner_apply"));
            printf("\n");
            printf("residual        ||b - Ax|| / ||b|| = %.3e  (true, recomputed; monitored %.3e)\n",
                   D("solve.residual_true"), D("solve.residual_monitored"));
            if (gs_report_find(rep, "solve.error_vs_xstar"))
                printf("error           ||x - x*|| / ||x*|| = %.3e\n", D("solve.error_vs_xstar"));
        }
        if (gs_report_find(rep, "solve.detail") && *S("solve.detail"))
            printf("detail          %s\n", S("solve.detail"));
        if (gs_report_find(rep, "output.solution")) printf("solution        %s\n", S("output.solution"));
        if (gs_report_find(rep, "output.history")) printf("history         %s\n", S("output.history"));
    }
    printf("%s", prefix);
    printf("reason=%s iterations=%lld residual=%.3e setup_s=%.4f solve_s=%.4f backend=%s\n", S("solve.reason"),
           I("solve.iterations"), D("solve.residual_true"), D("time.setup_symbolic") + D("time.setup_numeric"),
           D("time.solve"), S("backend.name"));
#undef S
#undef I
#undef D
}


gs_status gs_app_problem_read(gs_app_problem *p, const char *spec)
{
    memset(p, 0, sizeof *p);
    p->spec = spec;
    double t = gs_wtime();
    GS_CALL(gs_app_matrix_from_spec(spec, &p->A, &p->is_gen));
    p->time_read = gs_wtime() - t;
    return GS_OK;
}

void gs_app_problem_free(gs_app_problem *p)
{
    gs_backend_destroy(&p->be);
    gs_csr_free(&p->A);
    p->be_key[0] = '\0';
}

/* The backend a run asks for: the problem's cached one when device.backend and device.id match
 * (creating a CUDA context and library handles once per sweep, not once per run). */
static gs_status problem_backend(gs_app_problem *p, const gs_config *cfg, gs_backend **be)
{
    char key[sizeof p->be_key];
    const char *name = gs_config_string(cfg, "device.backend");
    int id = (int)gs_config_int(cfg, "device.id");
    snprintf(key, sizeof key, "%s:%d", name, id);
    if (p->be && strcmp(key, p->be_key) == 0) {
        *be = p->be;
        return GS_OK;
    }
    gs_backend_destroy(&p->be);
    p->be_key[0] = '\0';
    GS_CALL(gs_backend_create(name, id, &p->be));
    snprintf(p->be_key, sizeof p->be_key, "%s", key);
    *be = p->be;
    return GS_OK;
}

static void outcome_from_report(const gs_report *rep, gs_app_outcome *out)
{
    const gs_report_entry *e = gs_report_find(rep, "solve.reason");
    snprintf(out->reason, sizeof out->reason, "%s", e && e->type == GS_REPORT_STRING ? e->s : "none");
    out->iterations = gs_report_find(rep, "solve.iterations") ? rep_i(rep, "solve.iterations") : -1;
    out->setup_s = rep_d(rep, "time.setup_symbolic") + rep_d(rep, "time.setup_numeric");
    out->solve_s = gs_report_find(rep, "time.solve") ? rep_d(rep, "time.solve") : NAN;
    out->residual_true = gs_report_find(rep, "solve.residual_true") ? rep_d(rep, "solve.residual_true") : NAN;
}

int gs_app_run_problem(const gs_app_opts *o, gs_app_problem *p, const gs_config *cfg, const gs_app_run_ctx *ctx,
                       gs_app_outcome *out)
{
    gs_status st = GS_OK;
    gs_report *rep = NULL;
    const gs_csr *A0 = &p->A;
    gs_csr Ap = {0};
    const gs_csr *Asolve = A0;
    gs_system sys = {0};
    gs_int *perm = NULL;
    gs_backend *be = NULL;
    gs_matrix *M = NULL;
    gs_pc *pc = NULL;
    gs_ksp *ksp = NULL;
    gs_vector *vb = NULL, *vx = NULL;
    double *x = NULL;
    history hist = {0};
    gs_solve_result res = {0};
    gs_app_run_ctx single = {0, 1, NULL, NULL, NULL};
    if (!ctx) ctx = &single;
    bool json = strcmp(gs_config_string(cfg, "output.format"), "json") == 0;
    bool in_sweep = ctx->count > 1;
    const char *hist_path = ctx->history ? ctx->history : o->history ? o->history : gs_config_string(cfg, "output.history");
    const char *sol_path = ctx->solution ? ctx->solution : o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    int code = GS_EXIT_INTERNAL;
    bool solved = false;
    double t_start = gs_wtime(), t;
    gs_app_outcome dummy;
    if (!out) out = &dummy;
    memset(out, 0, sizeof *out);

    gs_error_clear();
    if (gs_report_create(&rep) != GS_OK) {
        fputs("gpusolve: error: out of host memory\n", stderr);
        out->error = true;
        out->exit_code = GS_EXIT_DEVICE;
        snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(GS_ERR_MEM));
        return GS_EXIT_DEVICE;
    }
    GS_TRY(gs_report_string(rep, "gpusolve.version", GS_VERSION));
    GS_TRY(gs_report_string(rep, "matrix.source", p->spec));

    /* the matrix, read once by the caller */
    GS_TRY(gs_report_double(rep, "time.read", p->time_read));
    GS_TRY(gs_report_string(rep, "where.read", "host"));
    GS_TRY(gs_report_string(rep, "matrix.name", p->is_gen ? p->spec : base_name(p->spec)));
    GS_TRY(gs_report_int(rep, "matrix.rows", A0->nrows));
    GS_TRY(gs_report_int(rep, "matrix.nnz", A0->nnz));

    /* system */
    GS_TRY(gs_system_build(A0, cfg, o->rhs_path, o->x0_path, &sys));
    GS_TRY(gs_report_string(rep, "system.rhs", sys.rhs_desc));
    GS_TRY(gs_report_string(rep, "system.x0", sys.x0_desc));
    const char *reorder = gs_config_string(cfg, "system.reorder");
    GS_TRY(gs_report_string(rep, "system.reorder", reorder));
    if (strcmp(reorder, "rcm") == 0) {
        t = gs_wtime();
        GS_TRY(GS_MALLOC(perm, A0->nrows));
        GS_TRY(gs_rcm(A0, perm));
        GS_TRY(gs_csr_permute(A0, perm, &Ap));
        GS_TRY(gs_system_permute(&sys, A0->nrows, perm));
        Asolve = &Ap;
        GS_TRY(gs_report_double(rep, "time.reorder", gs_wtime() - t));
    }

    /* backend (kept by the problem for the next run) and operator */
    GS_TRY(problem_backend(p, cfg, &be));
    GS_TRY(gs_report_string(rep, "backend.name", be->name));
    GS_TRY(gs_report_string(rep, "backend.device", be->device_name));
    GS_TRY(gs_report_string(rep, "where.setup", be->kind == GS_BACKEND_CUDA ? "host factorization, GPU analysis" : "host"));
    GS_TRY(gs_report_string(rep, "where.solve", be->kind == GS_BACKEND_CUDA ? be->device_name : "host"));
    GS_TRY(gs_mat_create(be, Asolve, &M));
    GS_TRY(gs_vec_create(be, A0->nrows, &vb));
    GS_TRY(gs_vec_create(be, A0->nrows, &vx));
    GS_TRY(gs_vec_upload(vb, sys.b));
    GS_TRY(gs_vec_upload(vx, sys.x0));

    /* preconditioner: a numerical failure in setup (zero pivot) is a solve outcome, not a crash */
    GS_TRY(gs_pc_create(gs_config_string(cfg, "preconditioner.type"), be, cfg, &pc));
    GS_TRY(gs_pc_set_operator(pc, M)); /* a GPU factorization reads A there */
    /* the preconditioner's own diagnostics follow under preconditioner.* / trisolve.* */
    gs_status setup_st = gs_pc_setup_symbolic(pc, Asolve);
    if (setup_st == GS_OK) setup_st = gs_pc_setup_numeric(pc, Asolve);
    if (setup_st == GS_ERR_NUMERIC) {
        res.reason = GS_DIVERGED_PC_FAILED;
        snprintf(res.detail, sizeof res.detail, "preconditioner setup failed: %s", gs_error_message());
        gs_error_clear();
        GS_TRY(gs_report_double(rep, "time.setup_symbolic", pc->time_symbolic));
        GS_TRY(gs_report_double(rep, "time.setup_numeric", pc->time_numeric));
        GS_TRY(gs_report_string(rep, "solve.reason", gs_reason_name(res.reason)));
        GS_TRY(gs_report_string(rep, "solve.detail", res.detail));
        GS_TRY(gs_report_bool(rep, "solve.converged", false));
        code = GS_EXIT_NUMERICAL;
        goto cleanup;
    }
    GS_TRY(setup_st);
    GS_TRY(gs_report_double(rep, "time.setup_symbolic", pc->time_symbolic));
    GS_TRY(gs_report_double(rep, "time.setup_numeric", pc->time_numeric));
    gs_pc_view(pc, rep);
    /* views return no status: a report entry that could not be allocated leaves GS_ERR_MEM pending */
    if (gs_error_status() == GS_ERR_MEM) GS_TRY(GS_ERR_MEM);

    /* solve */
    gs_ksp_params prm;
    GS_TRY(gs_ksp_params_from_config(cfg, &prm));
    GS_TRY(gs_ksp_create(gs_config_string(cfg, "solver.type"), be, &prm, &ksp));
    if (hist_path[0]) gs_ksp_set_monitor(ksp, history_monitor, &hist);
    gs_timer timer = {0};
    GS_TRY(gs_timer_start(be, &timer));
    hist.t0 = gs_wtime();
    GS_TRY(gs_ksp_solve(ksp, M, pc, vb, vx, &res));
    double t_solve = 0.0;
    GS_TRY(gs_timer_stop(&timer, &t_solve));
    gs_timer_destroy(&timer);
    solved = true;

    /* the residual printed is the true one, recomputed */
    double rtrue = NAN;
    GS_TRY(gs_true_residual(M, vb, vx, &rtrue));
    double bnorm = res.bnorm;
    GS_TRY(GS_MALLOC(x, A0->nrows));
    GS_TRY(gs_vec_download(vx, x));
    if (perm) GS_TRY(gs_vector_unpermute(x, A0->nrows, perm));
    GS_TRY(gs_report_double(rep, "time.solve", t_solve));
    GS_TRY(gs_report_double(rep, "time.per_iteration", res.iterations > 0 ? t_solve / res.iterations : 0.0));
    GS_TRY(gs_report_int(rep, "solve.iterations", res.iterations));
    GS_TRY(gs_report_string(rep, "solve.reason", gs_reason_name(res.reason)));
    GS_TRY(gs_report_bool(rep, "solve.converged", gs_reason_converged(res.reason)));
    GS_TRY(gs_report_string(rep, "solve.detail", res.detail));
    GS_TRY(gs_report_double(rep, "solve.residual_true", bnorm > 0 ? rtrue / bnorm : rtrue));
    GS_TRY(gs_report_double(rep, "solve.residual_true_abs", rtrue));
    GS_TRY(gs_report_double(rep, "solve.residual_monitored", bnorm > 0 ? res.resnorm / bnorm : res.resnorm));
    GS_TRY(gs_report_double(rep, "solve.bnorm", bnorm));
    GS_TRY(gs_report_double(rep, "solve.r0norm", res.r0norm));
    if (res.iterations > 0) {
        double t_apply = 0.0;
        GS_TRY(pc_apply_time(pc, vb, &t_apply));
        GS_TRY(gs_report_double(rep, "time.preconditioner_apply", t_apply));
    }
    if (sys.xstar) {
        double num = 0.0, den = 0.0;
        /* x* lives in the original numbering: compare with the unpermuted x */
        if (perm) GS_TRY(gs_vector_unpermute(sys.xstar, A0->nrows, perm));
        for (gs_int i = 0; i < A0->nrows; i++) {
            num += (x[i] - sys.xstar[i]) * (x[i] - sys.xstar[i]);
            den += sys.xstar[i] * sys.xstar[i];
        }
        GS_TRY(gs_report_double(rep, "solve.error_vs_xstar", den > 0 ? sqrt(num / den) : sqrt(num)));
    }
    code = gs_exit_code_for_reason(res.reason);
    /* a "converged" solve whose true residual misses the target is reported, never hidden */
    if (code == GS_EXIT_CONVERGED && !(rtrue <= fmax(prm.rtol * (prm.baseline == GS_BASELINE_R0 ? res.r0norm : bnorm), prm.atol) * 10.0 + 1e-300) &&
        res.reason != GS_CONVERGED_ZERO_RHS) {
        GS_TRY(gs_report_string(rep, "solve.warning",
                                "the recomputed true residual is over 10x the tolerance the monitored one met"));
    }

    /* outputs (atomic); an interrupted solve writes no solution */
    if (sol_path[0] && res.reason != GS_DIVERGED_INTERRUPTED) {
        GS_TRY(gs_mm_write_vector(sol_path, A0->nrows, x));
        GS_TRY(gs_report_string(rep, "output.solution", sol_path));
    }
    if (hist_path[0]) {
        GS_TRY(hist.st);
        GS_TRY(history_write(&hist, hist_path, bnorm));
        GS_TRY(gs_report_string(rep, "output.history", hist_path));
    }

cleanup:;
    char prefix[1024] = "";
    if (in_sweep) {
        char varied[900];
        gs_app_varied_text(ctx, cfg, varied, sizeof varied);
        snprintf(prefix, sizeof prefix, "%s ", varied);
    }
    if (st != GS_OK) {
        code = gs_exit_code_for_status(st);
        out->error = true;
        snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(gs_error_status()));
        gs_report_string(rep, "status", "error");
        gs_report_string(rep, "error.status", gs_status_name(gs_error_status()));
        gs_report_string(rep, "error.message", gs_error_message());
        gs_report_int(rep, "exit_code", code);
        if (in_sweep) /* which run of the sweep failed: its index and varied values */
            fprintf(stderr, "gpusolve: error (%.*s): ", (int)strlen(prefix) - 1, prefix);
        else
            fputs("gpusolve: error: ", stderr);
        gs_error_print(stderr);
        if (json) {
            gs_config_to_report(cfg, rep);
            gs_app_write_json(rep, ctx, cfg, stdout);
        } else if (in_sweep) {
            printf("%sstatus=error exit_code=%d error=%s\n", prefix, code, gs_status_name(gs_error_status()));
        }
    } else {
        outcome_from_report(rep, out);
        /* the closing entries can fail to allocate like any other: then the run fails */
        gs_status rst = gs_report_string(rep, "status", "ok");
        if (rst == GS_OK) rst = gs_report_int(rep, "exit_code", code);
        if (rst == GS_OK) rst = gs_report_double(rep, "time.total", gs_wtime() - t_start + p->time_read);
        if (rst == GS_OK && json) rst = gs_config_to_report(cfg, rep);
        if (rst != GS_OK) {
            code = gs_exit_code_for_status(rst);
            out->error = true;
            snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(rst));
            fputs("gpusolve: error: ", stderr);
            gs_error_print(stderr);
        } else if (json) {
            gs_app_write_json(rep, ctx, cfg, stdout);
        } else {
            print_text(rep, cfg, in_sweep || gs_config_bool(cfg, "output.quiet"), prefix);
        }
        if (solved && res.reason == GS_DIVERGED_INTERRUPTED)
            fprintf(stderr, "gpusolve: interrupted by signal %d after %d iterations; no solution written\n",
                    gs_interrupt_signal(), res.iterations);
    }
    out->exit_code = code;
    out->solved = solved;
    fflush(stdout);
    history_free(&hist);
    gs_free(&x);
    gs_vec_destroy(&vb);
    gs_vec_destroy(&vx);
    gs_ksp_destroy(&ksp);
    gs_pc_destroy(&pc);
    gs_mat_destroy(&M);
    /* a failed device may be left in an error state: the next run starts a fresh backend (destroyed
     * only here, after every object created on it) */
    if (code == GS_EXIT_DEVICE) gs_backend_destroy(&p->be);
    gs_free(&perm);
    gs_system_free(&sys);
    gs_csr_free(&Ap);
    gs_report_destroy(&rep);
    gs_error_clear();
    return code;
}

int gs_app_run(const gs_app_opts *o, const gs_config *cfg)
{
    gs_app_problem p;
    if (gs_app_problem_read(&p, o->matrix) != GS_OK) {
        /* report the read failure the way a run reports any error: message, JSON object, code */
        gs_status st = gs_error_status();
        int code = gs_exit_code_for_status(st);
        fputs("gpusolve: error: ", stderr);
        gs_error_print(stderr);
        if (strcmp(gs_config_string(cfg, "output.format"), "json") == 0) {
            gs_app_run_ctx ctx = {0, 1, NULL, NULL, NULL};
            gs_app_report_read_error(o, cfg, &ctx, st, gs_error_message());
        }
        gs_error_clear();
        return code;
    }
    int code = gs_app_run_problem(o, &p, cfg, NULL, NULL);
    gs_app_problem_free(&p);
    return code;
}
