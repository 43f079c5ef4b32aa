/* The text report at its four levels (-q: the summary line; default: a screen; -v: the setup's facts and
 * the strategy's attempts; -vv: everything, the configuration included), the warnings, and error
 * messages with their trace only where it helps (app/report_text.h). */
#include "app/report_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/version.h"

int gs_app_verbosity(const gs_config *cfg)
{
    if (gs_config_bool(cfg, "output.quiet")) return GS_VERBOSITY_QUIET;
    return (int)gs_config_int(cfg, "output.verbosity");
}

gs_status gs_app_set_verbosity(gs_config *cfg, int level)
{
    if (level == GS_APP_LEVEL_UNSET) return GS_OK;
    char one[64];
    snprintf(one, sizeof one, "output.verbosity=%d", level);
    GS_CALL(gs_config_set(cfg, one));
    GS_CALL(gs_config_set(cfg, level < GS_VERBOSITY_DEFAULT ? "output.quiet=true" : "output.quiet=false"));
    return GS_OK;
}

void gs_app_print_version(FILE *f)
{
    char cuda[160], flags[256];
    gs_version_cuda(cuda, sizeof cuda);
    gs_version_build_flags(flags, sizeof flags);
    fprintf(f, "gpusolve %s\ncommit %s\ncuda %s\nbuild %s\n", GS_VERSION, gs_version_commit(), cuda, flags);
}

static int error_level = GS_VERBOSITY_DEFAULT;

void gs_app_set_error_verbosity(int level) { error_level = level; }

void gs_app_error_print(FILE *f) { gs_error_print_user(f, error_level >= GS_VERBOSITY_SETUP); }

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

/* The lines saying how the method was chosen and what each attempt did (none for a single explicit
 * attempt). */
static void print_strategy(const gs_strategy_result *sr)
{
    if (sr->automatic)
        printf("strategy        auto (%s): %s\n", gs_matrix_class_name(sr->choice.cls), sr->choice.why);
    if (sr->nattempts > 1 || (sr->nattempts == 1 && !sr->rec[0].converged && sr->stopped[0])) {
        for (int k = 0; k < sr->nattempts; k++) {
            const gs_attempt_record *a = &sr->rec[k];
            printf("attempt %-7d %s -> %s, %d iterations, setup %.4f s, solve %.4f s%s\n", k + 1, a->method, a->reason,
                   a->iterations, a->time_setup, a->time_solve, k == sr->chosen ? " (reported)" : "");
            if (!a->converged && a->detail && a->detail[0]) printf("                %s\n", a->detail);
        }
        if (sr->stopped[0]) printf("fallback        stopped: %s\n", sr->stopped);
    }
}

/* The method in one line: "gmres(30, cgs2) + ilu0; matching none, scaling none, reorder rcm", with how
 * it was chosen when automatic or after a fallback. */
static void print_method(const gs_config *run, const gs_strategy_result *sr)
{
    const char *ks = gs_config_string(run, "solver.type");
    printf("method          %s", ks);
    if (strstr(ks, "gmres"))
        printf("(%lld, %s)", gs_config_int(run, "solver.restart"), gs_config_string(run, "solver.orthogonalization"));
    printf(" + %s; matching %s, scaling %s, reorder %s", gs_config_string(run, "preconditioner.type"),
           gs_config_string(run, "system.matching"), gs_config_string(run, "system.scaling"),
           gs_config_string(run, "system.reorder"));
    if (sr && sr->automatic) printf("  (auto: %s)", gs_matrix_class_name(sr->choice.cls));
    printf("\n");
    if (sr && sr->nattempts > 1)
        printf("attempts        %d (attempt %d reported; -v lists them)\n", sr->nattempts, sr->chosen + 1);
}

/* The keys set by the file or -s, with where each came from. */
static void print_configuration(const gs_config *cfg)
{
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
}

/* The setup's facts: the preconditioner's (level 1), and the triangular solvers' internals too (level 2). */
static void print_setup_details(const gs_report *rep, int level)
{
    bool any = false;
    for (int i = 0; i < rep->n; i++) {
        const char *k = rep->e[i].key;
        const bool pc = !strncmp(k, "preconditioner.", 15) && strcmp(k, "preconditioner.type") != 0 &&
                        strncmp(k, "preconditioner.time_setup", 25) != 0;
        const bool ts = !strncmp(k, "trisolve.", 9);
        const char *field = ts ? strchr(k + 9, '.') : NULL; /* trisolve.SIDE.FIELD */
        const bool ts_type = field && (!strcmp(field, ".type") || !strcmp(field, ".selected") ||
                                       !strcmp(field, ".implementation"));
        if (!(pc || (ts && (level >= GS_VERBOSITY_ALL || ts_type)))) continue;
        if (!any) printf("setup details\n");
        any = true;
        printf("  %-40s ", k);
        gs_report_write_value(&rep->e[i], stdout);
        printf("\n");
    }
}

/* Where the run ran and what it held: the backend's memory peak (level 1), the provenance (level 2). */
static void print_resources(const gs_report *rep, int level)
{
    const gs_report_entry *peak = gs_report_find(rep, "backend.memory_peak_bytes");
    if (peak && peak->type == GS_REPORT_INT) {
        const double b = (double)peak->i;
        printf("memory          peak %.1f %s of %s memory held by the run's allocations\n",
               b >= 1048576.0 ? b / 1048576.0 : b / 1024.0, b >= 1048576.0 ? "MiB" : "KiB",
               strcmp(rep_s(rep, "backend.name"), "cuda") == 0 ? "device" : "host");
    }
    if (level >= GS_VERBOSITY_ALL && gs_report_find(rep, "started_at"))
        printf("run             started %s on %s; gpusolve %s, commit %s\n", rep_s(rep, "started_at"),
               rep_s(rep, "host"), rep_s(rep, "gpusolve.version"), rep_s(rep, "gpusolve.commit"));
}

/* times, iterations, residuals, the reason's detail, warnings and output files */
static void print_outcome(const gs_report *rep)
{
#define S(k) rep_s(rep, k)
#define I(k) rep_i(rep, k)
#define D(k) rep_d(rep, k)
    printf("times [s]       read %.4f  preprocess %.4f  setup_symbolic %.4f  setup_numeric %.4f  solve %.4f  "
           "total %.4f\n",
           D("time.read"), D("time.preprocess"), D("time.setup_symbolic"), D("time.setup_numeric"), D("time.solve"),
           D("time.total"));
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
    if (gs_report_find(rep, "solve.detail") && *S("solve.detail")) printf("detail          %s\n", S("solve.detail"));
    if (gs_report_find(rep, "solve.warning")) printf("warning         %s\n", S("solve.warning"));
    if (gs_report_find(rep, "output.solution")) printf("solution        %s\n", S("output.solution"));
    if (gs_report_find(rep, "output.history")) printf("history         %s\n", S("output.history"));
#undef S
#undef I
#undef D
}

void gs_app_print_text(const gs_report *rep, const gs_config *cfg, const gs_strategy_result *sr, int level,
                       const char *prefix)
{
#define S(k) rep_s(rep, k)
#define I(k) rep_i(rep, k)
#define D(k) rep_d(rep, k)
    const gs_config *run = sr && sr->cfg ? sr->cfg : cfg;
    if (level >= GS_VERBOSITY_SETUP) printf("gpusolve %s (commit %.12s)\n", S("gpusolve.version"), S("gpusolve.commit"));
    if (level >= GS_VERBOSITY_DEFAULT) {
        printf("matrix          %s: %lld x %lld, %lld nonzeros\n", S("matrix.source"), I("matrix.rows"),
               I("matrix.rows"), I("matrix.nnz"));
        if (level >= GS_VERBOSITY_SETUP)
            printf("system          rhs = %s, x0 = %s, matching = %s, scaling = %s, reorder = %s\n", S("system.rhs"),
                   S("system.x0"), S("system.matching"), S("system.scaling"), S("system.reorder"));
        print_method(run, sr);
        printf("backend         %s: %s\n", S("backend.name"), S("backend.device"));
        printf("where           read: %s; setup: %s; solve: %s\n", S("where.read"), S("where.setup"), S("where.solve"));
    }
    if (level >= GS_VERBOSITY_SETUP) {
        const char *ks = gs_config_string(run, "solver.type");
        printf("solver          %s", ks);
        if (strstr(ks, "gmres"))
            printf("(%lld, %s)", gs_config_int(run, "solver.restart"), gs_config_string(run, "solver.orthogonalization"));
        printf(", rtol %g, atol %g, max_iterations %lld\n", gs_config_double(run, "solver.rtol"),
               gs_config_double(run, "solver.atol"), gs_config_int(run, "solver.max_iterations"));
        printf("preconditioner  %s\n", gs_config_string(run, "preconditioner.type"));
        if (sr) print_strategy(sr);
        if (level >= GS_VERBOSITY_ALL) print_configuration(cfg);
        print_setup_details(rep, level);
        print_resources(rep, level);
    }
    if (level >= GS_VERBOSITY_DEFAULT) print_outcome(rep);
    printf("%s", prefix);
    printf("reason=%s iterations=%lld residual=%.3e setup_s=%.4f solve_s=%.4f backend=%s attempts=%lld\n",
           S("solve.reason"), I("solve.iterations"), D("solve.residual_true"),
           D("time.preprocess") + D("time.setup_symbolic") + D("time.setup_numeric"), D("time.solve"),
           S("backend.name"), I("strategy.attempts"));
#undef S
#undef I
#undef D
}

void gs_app_print_warnings(const gs_report *rep, FILE *f)
{
    const gs_report_entry *e = gs_report_find(rep, "warnings");
    if (!e || e->type != GS_REPORT_JSON) return;
    json_t *arr = json_loads(e->s, 0, NULL);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v)) fprintf(f, "gpusolve: warning: %s\n", json_string_value(v));
    }
    json_decref(arr);
}
