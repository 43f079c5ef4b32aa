/* One gpusolve run on a matrix already read: system -> backend -> the strategy's attempts (api/strategy.h:
 * preprocessing, preconditioner setup, Krylov solve, true residual; the fallback ladder) -> report (text
 * or one JSON object), history CSV, solution file, exit code.
 * Reading the matrix is separate (gs_app_problem_read), so a sweep reads it once for all its runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/history.h"
#include "app/report_text.h"
#include "app/monitor.h"
#include "app/run.h"
#include "app/startup.h"
#include "app/system.h"
#include "api/run_report.h"
#include "api/strategy.h"
#include "core/atomic_file.h"
#include "core/backend.h"
#include "core/mem.h"
#include "core/process.h"
#include "core/report.h"
#include "core/signal.h"
#include "core/threads.h"
#include "io/mmio.h"
#include "solver/solver.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
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

/* The backend a run asks for: the problem's cached one when device.backend, device.id and device.spmv match
 * (creating a CUDA context and library handles once per sweep, not once per run). */
static gs_status problem_backend(gs_app_problem *p, const gs_config *cfg, gs_backend **be)
{
    char key[sizeof p->be_key];
    /* device.threads in the key too: the host backend describes its team, which a sweep may vary */
    gs_app_backend_key(cfg, key, sizeof key);
    if (p->be && strcmp(key, p->be_key) == 0) {
        *be = p->be;
        return GS_OK;
    }
    gs_backend_destroy(&p->be);
    p->be_key[0] = '\0';
    const double t0 = gs_wtime();
    GS_CALL(gs_backend_create(gs_config_string(cfg, "device.backend"), (int)gs_config_int(cfg, "device.id"), &p->be));
    GS_CALL(gs_backend_select_spmv(p->be, gs_config_string(cfg, "device.spmv")));
    p->time_init = gs_wtime() - t0;
    p->init_overlapped = false;
    snprintf(p->be_key, sizeof p->be_key, "%s", key);
    *be = p->be;
    return GS_OK;
}

static void outcome_from_report(const gs_report *rep, gs_app_outcome *out)
{
    const gs_report_entry *e = gs_report_find(rep, "solve.reason");
    snprintf(out->reason, sizeof out->reason, "%s", e && e->type == GS_REPORT_STRING ? e->s : "none");
    out->iterations = gs_report_find(rep, "solve.iterations") ? rep_i(rep, "solve.iterations") : -1;
    out->setup_s = rep_d(rep, "time.preprocess") + rep_d(rep, "time.setup_symbolic") + rep_d(rep, "time.setup_numeric");
    out->solve_s = gs_report_find(rep, "time.solve") ? rep_d(rep, "time.solve") : NAN;
    out->residual_true = gs_report_find(rep, "solve.residual_true") ? rep_d(rep, "solve.residual_true") : NAN;
}

/* The run's closing: status, exit code, total time, and the report printed (text or JSON). */
static int finish_run(gs_status st, int code, gs_report *rep, const gs_config *cfg, const gs_strategy_result *sr,
                      const gs_app_run_ctx *ctx, bool json, double t_start, double time_read, bool interrupted,
                      gs_app_outcome *out)
{
    char prefix[1024] = "";
    const bool in_sweep = ctx->count > 1;
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
        gs_report_string(rep, "error.class", gs_exit_class_name(code));
        gs_report_int(rep, "exit_code", code);
        gs_app_print_warnings(rep, stderr);
        if (in_sweep) /* which run of the sweep failed: its index and varied values */
            fprintf(stderr, "gpusolve: error (%.*s): ", (int)strlen(prefix) - 1, prefix);
        else
            fputs("gpusolve: error: ", stderr);
        gs_app_error_print(stderr);
        if (json) {
            gs_config_to_report(cfg, rep);
            if (gs_app_write_json(rep, ctx, cfg, stdout) != GS_OK) /* out of memory: a smaller object */
                gs_app_report_error(NULL, NULL, ctx, GS_ERR_MEM, "out of host memory writing the report", code);
        } else if (in_sweep) {
            printf("%sstatus=error exit_code=%d error=%s\n", prefix, code, gs_status_name(gs_error_status()));
        }
        return code;
    }
    outcome_from_report(rep, out);
    /* the closing entries can fail to allocate like any other: then the run fails */
    gs_status rst = gs_report_string(rep, "status", "ok");
    if (rst == GS_OK) rst = gs_report_int(rep, "exit_code", code);
    if (rst == GS_OK) rst = gs_report_double(rep, "time.total", gs_wtime() - t_start + time_read);
    if (rst == GS_OK) rst = gs_report_double(rep, "time.wall", gs_process_age());
    if (rst == GS_OK && json) rst = gs_config_to_report(cfg, rep);
    if (rst != GS_OK) {
        code = gs_exit_code_for_status(rst);
        out->error = true;
        snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(rst));
        fputs("gpusolve: error: ", stderr);
        gs_app_error_print(stderr);
    } else if (json) {
        gs_app_print_warnings(rep, stderr);
        if (gs_app_write_json(rep, ctx, cfg, stdout) != GS_OK) { /* out of memory: nothing written */
            code = gs_exit_code_for_status(gs_error_status());
            out->error = true;
            snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(gs_error_status()));
            fputs("gpusolve: error: ", stderr);
            gs_app_error_print(stderr);
        }
    } else {
        /* a sweep's runs print their summary line (its table follows) unless -v asks for more */
        const int level = gs_app_verbosity(cfg);
        gs_app_print_warnings(rep, stderr);
        gs_app_print_text(rep, cfg, sr, in_sweep && level < GS_VERBOSITY_SETUP ? GS_VERBOSITY_QUIET : level, prefix);
    }
    if (interrupted) {
        if (gs_report_find(rep, "solve.iterations"))
            fprintf(stderr, "gpusolve: interrupted by signal %d after %lld iterations; nothing written\n",
                    gs_interrupt_signal(), rep_i(rep, "solve.iterations"));
        else
            fprintf(stderr, "gpusolve: interrupted by signal %d during the setup; nothing written\n",
                    gs_interrupt_signal());
    }
    return code;
}

/* What the run shows and records while it solves: the history's rows (a live file for a regular file),
 * the monitor lines of output.monitor (stdout; stderr when JSON owns stdout) or the progress line of a
 * terminal. The lines carry the attempt number when the strategy may make several attempts. */
static gs_status watch_begin(gs_app_history *h, gs_app_monitor *mon, const gs_config *cfg, const gs_app_run_ctx *ctx,
                             const gs_system *sys, gs_int n, const char *hist_path, bool fallback, bool json)
{
    gs_monitor_spec spec;
    char label[160];
    snprintf(label, sizeof label, "output.monitor = \"%.100s\"", gs_config_string(cfg, "output.monitor"));
    GS_CALL(gs_monitor_parse(gs_config_string(cfg, "output.monitor"), label, &spec));
    const bool automatic = strcmp(gs_config_string(cfg, "solver.type"), "auto") == 0 ||
                           strcmp(gs_config_string(cfg, "preconditioner.type"), "auto") == 0;
    char title[900] = "";
    if (ctx->count > 1) gs_app_varied_text(ctx, cfg, title, sizeof title);
    gs_app_monitor_begin(mon, &spec, json ? stderr : stdout, fallback || automatic, title);
    h->mon = gs_app_monitor_active(mon) ? mon : NULL;
    h->keep = hist_path[0] != '\0';
    double bb = 0.0;
    for (gs_int i = 0; i < n; i++) bb += sys->b[i] * sys->b[i];
    h->bnorm = sqrt(bb);
    if (h->keep) GS_CALL(gs_app_history_open(h, hist_path));
    return GS_OK;
}

int gs_app_run_problem(const gs_app_opts *o, gs_app_problem *p, const gs_config *cfg, const gs_app_run_ctx *ctx,
                       gs_app_outcome *out)
{
    gs_status st = GS_OK;
    gs_report *rep = NULL;
    const gs_csr *A = &p->A;
    gs_system sys = {0};
    gs_backend *be = NULL;
    double *x = NULL;
    gs_app_history hist = {0};
    gs_app_monitor mon;
    gs_strategy_result sr;
    bool have_sr = false, interrupted = false;
    gs_app_run_ctx single = {0, 1, NULL, NULL, NULL};
    if (!ctx) ctx = &single;
    const bool json = strcmp(gs_config_string(cfg, "output.format"), "json") == 0;
    const char *hist_path = ctx->history ? ctx->history : o->history ? o->history : gs_config_string(cfg, "output.history");
    const char *sol_path = ctx->solution ? ctx->solution : o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    int code = GS_EXIT_INTERNAL;
    const double t_start = gs_wtime();
    const time_t started = time(NULL);
    gs_app_outcome dummy;
    if (!out) out = &dummy;
    memset(out, 0, sizeof *out);
    memset(&sr, 0, sizeof sr);
    memset(&mon, 0, sizeof mon);
    gs_threads_set((int)gs_config_int(cfg, "device.threads"));

    gs_error_clear();
    if (gs_report_create(&rep) != GS_OK) {
        fputs("gpusolve: error: out of host memory\n", stderr);
        out->error = true;
        out->exit_code = GS_EXIT_DEVICE;
        snprintf(out->reason, sizeof out->reason, "%s", gs_status_name(GS_ERR_MEM));
        return GS_EXIT_DEVICE;
    }
    GS_TRY(gs_app_report_provenance(rep, started));
    GS_TRY(gs_report_string(rep, "matrix.source", p->spec));
    GS_TRY(gs_report_double(rep, "time.read", p->time_read));
    GS_TRY(gs_report_string(rep, "where.read", "host"));
    GS_TRY(gs_report_string(rep, "matrix.name", p->is_gen ? p->spec : base_name(p->spec)));
    GS_TRY(gs_report_int(rep, "matrix.rows", A->nrows));
    GS_TRY(gs_report_int(rep, "matrix.nnz", A->nnz));

    /* the system in the matrix's numbering: the strategy's preprocessing is applied and undone inside */
    GS_TRY(gs_system_build(A, cfg, o->rhs_path, o->x0_path, &sys));
    GS_TRY(gs_report_string(rep, "system.rhs", sys.rhs_desc));
    GS_TRY(gs_report_string(rep, "system.x0", sys.x0_desc));

    /* backend (kept by the problem for the next run) */
    GS_TRY(problem_backend(p, cfg, &be));
    gs_backend_mem_peak_reset(be); /* the report's memory peak is this run's */
    GS_TRY(gs_report_double(rep, "time.init", p->time_init));
    GS_TRY(gs_report_string(rep, "backend.name", be->name));
    GS_TRY(gs_report_string(rep, "backend.device", be->device_name));
    GS_TRY(gs_report_bool(rep, "backend.init_overlapped", p->init_overlapped));
    p->time_init = 0.0; /* a later run on the same backend starts nothing */
    p->init_overlapped = false;
    GS_TRY(gs_report_string(rep, "where.setup", be->kind == GS_BACKEND_CUDA ? "host factorization, GPU analysis" : "host"));
    GS_TRY(gs_report_string(rep, "where.solve", be->kind == GS_BACKEND_CUDA ? be->device_name : "host"));

    /* the attempts: the configuration with its "auto" keys resolved, then the fallback ladder (not inside
     * a sweep, which measures the configurations it names) */
    GS_TRY(GS_CALLOC(x, A->nrows));
    const bool fallback = strcmp(gs_config_string(cfg, "solver.fallback"), "auto") == 0 && ctx->count <= 1;
    GS_TRY(watch_begin(&hist, &mon, cfg, ctx, &sys, A->nrows, hist_path, fallback, json));
    gs_strategy_hooks hooks = {gs_app_history_attempt_begin, {hist.keep || hist.mon ? gs_app_history_monitor : NULL, &hist},
                              &hist};
    GS_TRY(gs_strategy_solve(be, A, sys.b, sys.x0, cfg, fallback, &hooks, x, &sr));
    gs_app_monitor_end(&mon);
    have_sr = true;
    GS_TRY(gs_run_report_strategy(rep, &sr));
    GS_TRY(gs_run_report_outcome(rep, &sr, sys.xstar, x, A->nrows));
    GS_TRY(gs_run_report_warnings(rep, cfg, &sr));
    GS_TRY(gs_run_report_memory(rep, be));
    const gs_attempt *fa = &sr.final;
    code = gs_exit_code_for_reason(fa->res.reason);
    /* a signal that arrived in any phase (the last attempt's setup, after its solve) ends the run here:
     * exit 6, no output written */
    if (gs_interrupt_requested()) {
        code = GS_EXIT_INTERRUPTED;
        interrupted = true;
        goto cleanup;
    }

    /* outputs (atomic); a failed solve writes no solution */
    if (sol_path[0] && fa->solved) {
        GS_TRY(gs_mm_write_vector(sol_path, A->nrows, x));
        GS_TRY(gs_report_string(rep, "output.solution", sol_path));
    }
    if (hist_path[0]) {
        GS_TRY(gs_app_history_write(&hist, hist_path, sr.chosen));
        GS_TRY(gs_report_string(rep, "output.history", hist_path));
    }

cleanup:
    gs_app_monitor_end(&mon);
    if (st != GS_OK || interrupted) gs_app_history_free(&hist); /* no history file: its temporary file goes first */
    code = finish_run(st, code, rep, cfg, have_sr ? &sr : NULL, ctx, json, t_start, p->time_read, interrupted, out);
    out->exit_code = code;
    out->solved = have_sr && sr.final.solved;
    fflush(stdout);
    gs_app_history_free(&hist);
    gs_free(&x);
    if (have_sr) gs_strategy_result_free(&sr);
    /* a failed device may be left in an error state: the next run starts a fresh backend */
    if (code == GS_EXIT_DEVICE) gs_backend_destroy(&p->be);
    gs_system_free(&sys);
    gs_report_destroy(&rep);
    gs_error_clear();
    return code;
}

int gs_app_run(const gs_app_opts *o, const gs_config *cfg)
{
    gs_app_problem p;
    gs_app_prefetch pf;
    gs_app_prefetch_start(&pf, cfg); /* the device starts while the matrix is read */
    if (gs_app_problem_read(&p, o->matrix) != GS_OK) {
        gs_app_prefetch_finish(&pf, NULL);
        /* report the read failure the way a run reports any error: message, JSON object, code */
        gs_status st = gs_error_status();
        int code = gs_exit_code_for_status(st);
        fputs("gpusolve: error: ", stderr);
        gs_app_error_print(stderr);
        if (strcmp(gs_config_string(cfg, "output.format"), "json") == 0) {
            gs_app_run_ctx ctx = {0, 1, NULL, NULL, NULL};
            gs_app_report_read_error(o, cfg, &ctx, st, gs_error_message());
        }
        gs_error_clear();
        return code;
    }
    gs_app_prefetch_finish(&pf, &p);
    int code = gs_app_run_problem(o, &p, cfg, NULL, NULL);
    gs_app_problem_free(&p);
    return code;
}
