/* What every run writes beside its report (app/run.h): the values of the keys its sweep varies, as text
 * and as the JSON member "sweep", the report as one JSON object with that member, and the JSON object of a
 * run whose matrix could not be read. */
#include "app/run.h"

#include <stdio.h>
#include <string.h>

#include "app/sweep.h"

/* ---------------------------------------------------------------------------------------------- */
/* writing the varied values                                                                      */

/* The value of key path in cfg, as JSON (json true) or as plain text. */
static void write_config_value(FILE *f, const gs_config *cfg, const char *path, bool json)
{
    const gs_cfg_key *key = gs_sweep_key(path);
    if (!key) return;
    switch (key->type) {
    case GS_CFG_INT: fprintf(f, "%lld", gs_config_int(cfg, path)); break;
    case GS_CFG_DOUBLE: fprintf(f, json ? "%.17g" : "%g", gs_config_double(cfg, path)); break;
    case GS_CFG_BOOL: fputs(gs_config_bool(cfg, path) ? "true" : "false", f); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE:
        if (json)
            gs_json_write_string(f, gs_config_string(cfg, path));
        else
            fputs(gs_config_string(cfg, path), f);
        break;
    }
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

static void write_sweep_member(FILE *f, const gs_app_run_ctx *ctx, const gs_config *cfg)
{
    fprintf(f, "\"sweep\":{\"index\":%ld,\"count\":%ld,\"varied\":{", ctx->index, ctx->count);
    for (int k = 0; ctx->plan && k < ctx->plan->nkeys; k++) {
        if (k) fputc(',', f);
        gs_json_write_string(f, ctx->plan->keys[k]);
        fputc(':', f);
        write_config_value(f, cfg, ctx->plan->keys[k], true);
    }
    fputs("}}", f);
}

void gs_app_write_json(const gs_report *rep, const gs_app_run_ctx *ctx, const gs_config *cfg, FILE *f)
{
    gs_app_run_ctx single = {0, 1, NULL, NULL, NULL};
    if (!ctx) ctx = &single;
    /* The report nests dotted keys; the varied keys are written flat ("preconditioner.blocks": 16,
     * the names -s takes). So the object is {"sweep": {...}, followed by the report's members: the
     * report is written to a temporary file and copied after its opening brace. (A stream, not a
     * buffer: nothing here allocates, so no allocation can fail half-way through an object.) */
    FILE *t = tmpfile();
    if (!t) { /* no temporary file: the report alone is still one valid object */
        gs_report_write_json(rep, f);
        return;
    }
    gs_report_write_json(rep, t);
    long len = ftell(t);
    rewind(t);
    fputc('{', f);
    write_sweep_member(f, ctx, cfg);
    int c = fgetc(t); /* the report's opening brace */
    if (c != '{' || len <= 3) {   /* an empty report "{}\n" adds no member */
        fputs("}\n", f);
        fclose(t);
        return;
    }
    fputc(',', f);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, t)) > 0) fwrite(chunk, 1, got, f);
    fclose(t);
}

void gs_app_report_read_error(const gs_app_opts *o, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                              const char *message)
{
    gs_report *rep = NULL;
    if (gs_report_create(&rep) != GS_OK) return;
    gs_report_string(rep, "gpusolve.version", GS_VERSION);
    gs_report_string(rep, "matrix.source", o->matrix ? o->matrix : "");
    gs_report_string(rep, "status", "error");
    gs_report_string(rep, "error.status", gs_status_name(st));
    gs_report_string(rep, "error.message", message);
    gs_report_int(rep, "exit_code", gs_exit_code_for_status(st));
    gs_config_to_report(cfg, rep);
    gs_app_write_json(rep, ctx, cfg, stdout);
    gs_report_destroy(&rep);
}
