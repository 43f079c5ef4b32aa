/* The report entries of a run's strategy and reported attempt (api/run_report.h), shared by the CLI and
 * the library. */
#include "api/run_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg/effect.h"
#include "core/mem.h"
#include "core/version.h"
#include "core/json.h"

/* The strategy's choices and attempts: strategy.* keys and the "attempts" array. */
gs_status gs_run_report_strategy(gs_report *rep, const gs_strategy_result *sr)
{
    gs_status st = GS_OK;
    json_t *attempts = NULL;
    char *text = NULL;
    GS_TRY(gs_report_bool(rep, "strategy.automatic", sr->automatic));
    if (sr->automatic) {
        GS_TRY(gs_report_string(rep, "strategy.class", gs_matrix_class_name(sr->choice.cls)));
        GS_TRY(gs_report_string(rep, "strategy.rule", sr->choice.why));
    }
    GS_TRY(gs_report_int(rep, "strategy.attempts", sr->nattempts));
    GS_TRY(gs_report_int(rep, "strategy.reported_attempt", sr->chosen + 1));
    if (sr->stopped[0]) GS_TRY(gs_report_string(rep, "strategy.stopped", sr->stopped));
    attempts = gs_strategy_attempts_json(sr);
    text = gs_json_text(attempts);
    if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory writing the attempts of the run");
    GS_TRY(gs_report_json(rep, "attempts", text));
cleanup:
    json_decref(attempts);
    free(text);
    return st;
}

/* The reported attempt's outcome: times, iterations, residuals, reason, error against x*. */
gs_status gs_run_report_outcome(gs_report *rep, const gs_strategy_result *sr, const double *xstar, const double *x,
                                gs_int n)
{
    const gs_attempt *a = &sr->final;
    GS_CALL(gs_report_merge(rep, a->rep));
    GS_CALL(gs_report_string(rep, "system.matching", gs_config_string(sr->cfg, "system.matching")));
    GS_CALL(gs_report_string(rep, "system.scaling", gs_config_string(sr->cfg, "system.scaling")));
    GS_CALL(gs_report_string(rep, "system.reorder", gs_config_string(sr->cfg, "system.reorder")));
    GS_CALL(gs_report_string(rep, "solver.type", gs_config_string(sr->cfg, "solver.type")));
    GS_CALL(gs_report_string(rep, "preconditioner.type", gs_config_string(sr->cfg, "preconditioner.type")));
    GS_CALL(gs_report_double(rep, "time.preprocess", a->time_preprocess));
    GS_CALL(gs_report_double(rep, "time.setup_symbolic", a->time_setup_symbolic));
    GS_CALL(gs_report_double(rep, "time.setup_numeric", a->time_setup_numeric));
    GS_CALL(gs_report_string(rep, "solve.reason", gs_reason_name(a->res.reason)));
    GS_CALL(gs_report_bool(rep, "solve.converged", a->solved && gs_reason_converged(a->res.reason)));
    GS_CALL(gs_report_string(rep, "solve.detail", a->detail ? a->detail : ""));
    if (!a->solved) return GS_OK;
    GS_CALL(gs_report_double(rep, "time.solve", a->time_solve));
    GS_CALL(gs_report_double(rep, "time.per_iteration", a->res.iterations > 0 ? a->time_solve / a->res.iterations : 0.0));
    GS_CALL(gs_report_int(rep, "solve.iterations", a->res.iterations));
    GS_CALL(gs_report_double(rep, "solve.residual_true", a->residual_true));
    GS_CALL(gs_report_double(rep, "solve.residual_true_abs", a->residual_true_abs));
    GS_CALL(gs_report_double(rep, "solve.residual_monitored", a->residual_monitored));
    GS_CALL(gs_report_double(rep, "solve.bnorm", a->bnorm));
    GS_CALL(gs_report_double(rep, "solve.r0norm", a->r0norm_original));
    if (a->refinements > 0) GS_CALL(gs_report_int(rep, "solve.refinements", a->refinements));
    if (a->res.iterations > 0) GS_CALL(gs_report_double(rep, "time.preconditioner_apply", a->time_pc_apply));
    if (xstar) {
        double num = 0.0, den = 0.0;
        for (gs_int i = 0; i < n; i++) {
            num += (x[i] - xstar[i]) * (x[i] - xstar[i]);
            den += xstar[i] * xstar[i];
        }
        GS_CALL(gs_report_double(rep, "solve.error_vs_xstar", den > 0 ? sqrt(num / den) : sqrt(num)));
    }
    /* a "converged" solve whose true residual misses the target is reported, never hidden */
    if (a->true_missed)
        GS_CALL(gs_report_string(rep, "solve.warning",
                                 "the recomputed true residual is over 10x the tolerance the monitored one met"));
    return GS_OK;
}

gs_status gs_run_report_provenance(gs_report *rep, time_t started, int argc, char *const *argv)
{
    gs_status st = GS_OK;
    char when[32] = "unknown", host[256] = "unknown";
    char *text = NULL;
    json_t *args = NULL;
    struct tm tm;
    if (gmtime_r(&started, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    GS_TRY(gs_report_string(rep, "gpusolve.version", GS_VERSION));
    GS_TRY(gs_report_string(rep, "gpusolve.commit", gs_version_commit()));
    GS_TRY(gs_report_string(rep, "started_at", when));
    GS_TRY(gs_report_string(rep, "host", host));
    if (argv) {
        args = json_array();
        for (int i = 0; args && i < argc; i++)
            if (!gs_json_append(args, gs_json_string(argv[i]))) GS_FAIL(GS_ERR_MEM, "out of host memory for the command line");
        text = gs_json_text(args);
        if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory for the command line");
        GS_TRY(gs_report_json(rep, "command_line", text));
    }
cleanup:
    json_decref(args);
    free(text);
    return st;
}

gs_status gs_run_report_memory(gs_report *rep, const gs_backend *be)
{
    size_t live = 0, peak = 0;
    if (!be) {
        GS_CALL(gs_report_json(rep, "backend.memory_peak_bytes", "null"));
        GS_CALL(gs_report_string(rep, "backend.memory_note", "no backend was created"));
    } else {
        (void)gs_backend_mem_usage(be, &live, &peak);
        GS_CALL(gs_report_int(rep, "backend.memory_peak_bytes", (long long)peak));
    }
    return GS_OK;
}

typedef struct warn_list {
    json_t *arr;
    bool failed;
} warn_list;

static void collect_warning(void *ctx, const char *msg)
{
    warn_list *w = ctx;
    if (!w->failed && !gs_json_append(w->arr, gs_json_string(msg))) w->failed = true;
}

gs_status gs_run_report_warnings(gs_report *rep, const gs_config *user, const gs_strategy_result *sr)
{
    gs_status st = GS_OK;
    warn_list w = {json_array(), false};
    char *text = NULL;
    if (!w.arr) return GS_ERROR(GS_ERR_MEM, "out of host memory for the warnings");
    if (user) gs_cfg_effect_check(user, sr ? sr->cfg : NULL, collect_warning, &w);
    if (sr && sr->final.true_missed)
        collect_warning(&w, "the recomputed true residual is over 10x the tolerance the monitored one met");
    text = w.failed ? NULL : gs_json_text(w.arr);
    if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory for the warnings");
    GS_TRY(gs_report_json(rep, "warnings", text));
cleanup:
    json_decref(w.arr);
    free(text);
    return st;
}
