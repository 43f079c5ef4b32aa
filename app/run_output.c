/* What every run writes beside its report (app/run.h): the values of the keys its sweep varies, as text
 * and as the JSON member "sweep", the report as one JSON object with that member (through jansson), the
 * provenance every object carries, and the JSON object of an error. */
#include "app/run.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/run_report.h"
#include "app/report_text.h"
#include "app/sweep.h"
#include "core/json.h"
#include "core/mem.h"

/* ---------------------------------------------------------------------------------------------- */
/* the command line, for the reports' provenance                                                  */

static struct {
    int argc;
    char *const *argv;
    bool json;
    time_t started;
} cli;

gs_status gs_app_set_command_line(int argc, char *const *argv, bool json)
{
    /* a copy of the array as given: getopt_long reorders argv (options first) */
    static char **copy;
    gs_free(&copy);
    cli.argc = 0;
    cli.argv = NULL;
    cli.json = json;
    cli.started = time(NULL);
    if (argc <= 0) return GS_OK;
    GS_CALL(gs_malloc(&copy, (size_t)argc, sizeof *copy));
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    cli.argc = argc;
    cli.argv = copy;
    return GS_OK;
}

bool gs_app_json_wanted(void) { return cli.json; }

void gs_app_note_config(const gs_config *cfg)
{
    gs_app_set_error_verbosity(gs_app_verbosity(cfg));
    if (strcmp(gs_config_string(cfg, "output.format"), "json") == 0) cli.json = true;
}

bool gs_app_argv_wants_json(int argc, char *const *argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) break;
        const size_t n = strlen(a);
        if (n >= 3 && strncmp(a, "--json", n) == 0) return true; /* getopt_long takes --j, --js, --jso */
        const char *set = NULL; /* the assignment of -s X, -sX, --set X, --set=X */
        if ((strcmp(a, "-s") == 0 || strcmp(a, "--set") == 0) && i + 1 < argc) set = argv[++i];
        else if (strncmp(a, "-s", 2) == 0 && a[2] != '-') set = a + 2;
        else if (strncmp(a, "--set=", 6) == 0) set = a + 6;
        if (set) {
            while (*set == ' ' || *set == '\t') set++;
            if (strncmp(set, "output.format", 13) == 0) {
                const char *v = set + 13 + strspn(set + 13, " \t");
                if (*v == '=') {
                    v++;
                    v += strspn(v, " \t\"");
                    if (strncmp(v, "json", 4) == 0) return true;
                }
            }
        }
    }
    return false;
}

int gs_app_usage_error(const char *fmt, const char *arg)
{
    char *msg = NULL;
    if (gs_strprintf(&msg, fmt, arg) != GS_OK) gs_error_clear();
    fprintf(stderr, "gpusolve: %s\ntry 'gpusolve --help'\n", msg ? msg : fmt);
    if (cli.json) gs_app_report_error(NULL, NULL, NULL, GS_ERR_CONFIG, msg ? msg : fmt, GS_EXIT_USAGE);
    gs_free(&msg);
    return GS_EXIT_USAGE;
}

int gs_app_fail(const gs_config *cfg)
{
    gs_status st = gs_error_status();
    int code = gs_exit_code_for_status(st);
    fputs("gpusolve: error: ", stderr);
    gs_app_error_print(stderr);
    if (cli.json || (cfg && strcmp(gs_config_string(cfg, "output.format"), "json") == 0)) {
        char *msg = NULL; /* the message outlives the pending error, which building the object may replace */
        if (gs_strprintf(&msg, "%s", gs_error_message()) != GS_OK) gs_error_clear();
        gs_error_clear();
        gs_app_report_error(NULL, cfg, NULL, st, msg ? msg : gs_status_name(st), code);
        gs_free(&msg);
    }
    gs_error_clear();
    return code;
}

gs_status gs_app_report_provenance(gs_report *rep, time_t started)
{
    return gs_run_report_provenance(rep, started ? started : cli.started ? cli.started : time(NULL), cli.argc, cli.argv);
}

/* ---------------------------------------------------------------------------------------------- */
/* writing the varied values                                                                      */

/* The value of key path in cfg as JSON (NULL when out of memory; null for a key the schema lacks). */
static json_t *config_value_json(const gs_config *cfg, const char *path)
{
    const gs_cfg_key *key = gs_sweep_key(path);
    if (!key) return json_null();
    switch (key->type) {
    case GS_CFG_INT: return json_integer(gs_config_int(cfg, path));
    case GS_CFG_DOUBLE: return gs_json_real(gs_config_double(cfg, path));
    case GS_CFG_BOOL: return json_boolean(gs_config_bool(cfg, path));
    case GS_CFG_STRING:
    case GS_CFG_CHOICE: return gs_json_string(gs_config_string(cfg, path));
    }
    return json_null();
}

void gs_app_value_text(const gs_config *cfg, const char *path, char *buf, size_t len)
{
    const gs_cfg_key *key = gs_sweep_key(path);
    buf[0] = '\0';
    if (!key) return;
    switch (key->type) {
    case GS_CFG_INT: snprintf(buf, len, "%lld", gs_config_int(cfg, path)); break;
    case GS_CFG_DOUBLE: snprintf(buf, len, "%g", gs_config_double(cfg, path)); break;
    case GS_CFG_BOOL: snprintf(buf, len, "%s", gs_config_bool(cfg, path) ? "true" : "false"); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE: snprintf(buf, len, "%s", gs_config_string(cfg, path)); break;
    }
}

void gs_app_varied_text(const gs_app_run_ctx *ctx, const gs_config *cfg, char *buf, size_t len)
{
    buf[0] = '\0';
    if (len == 0) return;
    size_t used = 0;
    int w = snprintf(buf, len, "index=%ld", ctx->index);
    if (w < 0 || (size_t)w >= len) return;
    used = (size_t)w;
    for (int k = 0; ctx->plan && k < ctx->plan->nkeys; k++) {
        char v[GS_APP_CELL_LEN * 4];
        gs_app_value_text(cfg, ctx->plan->keys[k], v, sizeof v);
        w = snprintf(buf + used, len - used, " %s=%s", ctx->plan->keys[k], v);
        if (w < 0 || (size_t)w >= len - used) return;
        used += (size_t)w;
    }
}

/* {"index", "count", "varied": {"key": value}} (the varied keys flat, as -s names them). */
static json_t *sweep_member(const gs_app_run_ctx *ctx, const gs_config *cfg)
{
    json_t *sw = json_object(), *varied = json_object();
    bool ok = sw && varied && gs_json_set(sw, "index", json_integer(ctx->index)) &&
              gs_json_set(sw, "count", json_integer(ctx->count));
    for (int k = 0; ok && ctx->plan && k < ctx->plan->nkeys; k++)
        ok = gs_json_set(varied, ctx->plan->keys[k], config_value_json(cfg, ctx->plan->keys[k]));
    if (ok) {
        ok = gs_json_set(sw, "varied", varied);
        varied = NULL;
    }
    json_decref(varied);
    if (!ok) {
        json_decref(sw);
        return NULL;
    }
    return sw;
}

gs_status gs_app_write_json(const gs_report *rep, const gs_app_run_ctx *ctx, const gs_config *cfg, FILE *f)
{
    gs_status st = GS_OK;
    gs_app_run_ctx single = {0, 1, NULL, NULL, NULL};
    if (!ctx) ctx = &single;
    /* {"sweep": {...}, then the report's members}; built whole, then written at once: a failed
     * allocation leaves no half object on stdout */
    json_t *obj = json_object(), *body = NULL;
    GS_TRY(gs_report_to_json(rep, &body));
    if (!gs_json_set(obj, "sweep", sweep_member(ctx, cfg)))
        GS_FAIL(GS_ERR_MEM, "out of host memory writing the report as JSON");
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v)
    {
        if (json_object_set(obj, key, v) != 0) GS_FAIL(GS_ERR_MEM, "out of host memory writing the report as JSON");
    }
    GS_TRY(gs_json_write_line(obj, f));
cleanup:
    json_decref(body);
    json_decref(obj);
    return st;
}

/* The error members of a report: status "error", error.status, error.message, error.class, exit_code. */
static gs_status error_members(gs_report *rep, gs_status st, const char *message, int code)
{
    GS_CALL(gs_report_string(rep, "status", "error"));
    GS_CALL(gs_report_string(rep, "error.status", gs_status_name(st)));
    GS_CALL(gs_report_string(rep, "error.message", message && message[0] ? message : gs_status_name(st)));
    GS_CALL(gs_report_string(rep, "error.class", gs_exit_class_name(code)));
    GS_CALL(gs_report_int(rep, "exit_code", code));
    return GS_OK;
}

void gs_app_report_error(const char *matrix, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                         const char *message, int code)
{
    gs_report *rep = NULL;
    if (gs_report_create(&rep) != GS_OK ||
        gs_app_report_provenance(rep, 0) != GS_OK ||
        (matrix && gs_report_string(rep, "matrix.source", matrix) != GS_OK) ||
        error_members(rep, st, message, code) != GS_OK || (cfg && gs_config_to_report(cfg, rep) != GS_OK)) {
        gs_error_clear(); /* what could be made is written: still one object */
    }
    if (rep && (ctx ? gs_app_write_json(rep, ctx, cfg, stdout) : gs_report_write_json(rep, stdout)) == GS_OK) {
        gs_report_destroy(&rep);
    } else { /* the object says it could not be made: still one object */
        gs_error_clear();
        gs_report_destroy(&rep);
        fputs("{\"status\":\"error\",\"error\":{\"status\":\"GS_ERR_MEM\",\"message\":"
              "\"out of host memory writing the report\",\"class\":\"device\"},\"exit_code\":5}\n",
              stdout);
    }
    fflush(stdout);
}

void gs_app_report_read_error(const gs_app_opts *o, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                              const char *message)
{
    gs_app_report_error(o->matrix ? o->matrix : "", cfg, ctx, st, message, gs_exit_code_for_status(st));
}
