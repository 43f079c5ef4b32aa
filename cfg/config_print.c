/* Renderings of the configuration: the effective values as re-loadable libconfig text, the values
 * as report entries, and the schema as a terminal table or a Markdown table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/config.h"
#include "cfg/config_internal.h"

#define NAME_MAX_LEN 256

/* Whether schema row k is the first row of its direct child of `prefix` (the child's name is
 * rest[0..*len), a key when rest[*len] is '\0', else a group). Children come in schema order. */
static bool first_child_row(const char *prefix, int k, const char **rest, size_t *len)
{
    const char *r = gs_cfg_below(prefix, gs_cfg_schema[k].path);
    if (!r) return false;
    size_t n = strcspn(r, ".");
    for (int j = 0; j < k; j++) {
        const char *q = gs_cfg_below(prefix, gs_cfg_schema[j].path);
        if (q && strncmp(q, r, n) == 0 && (q[n] == '.' || q[n] == '\0')) return false;
    }
    *rest = r;
    *len = n;
    return true;
}

/* A key's value, or its list of sweep values as [a, b, ...] (so a printed sweep reloads as one). */
static void write_value(FILE *f, const gs_config *cfg, int k) { gs_config_print_value(cfg, gs_cfg_schema[k].path, f); }

/* The members of group `prefix` at nesting depth `depth`, keys and subgroups in schema order. */
static void print_group(const gs_config *cfg, FILE *f, bool mark_defaults, const char *prefix, int depth)
{
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const char *rest;
        size_t n;
        if (!first_child_row(prefix, k, &rest, &n)) continue;
        fprintf(f, "%*s%.*s = ", 2 * depth, "", (int)n, rest);
        if (rest[n] == '\0') { /* a key */
            write_value(f, cfg, k);
            fputc(';', f);
            if (mark_defaults && gs_config_is_default(cfg, gs_cfg_schema[k].path)) fputs("  # default", f);
            fputc('\n', f);
        } else { /* a group */
            char sub[NAME_MAX_LEN];
            snprintf(sub, sizeof sub, "%.*s", (int)(rest + n - gs_cfg_schema[k].path), gs_cfg_schema[k].path);
            fputs("{\n", f);
            print_group(cfg, f, mark_defaults, sub, depth + 1);
            fprintf(f, "%*s};\n", 2 * depth, "");
        }
    }
}

void gs_config_print(const gs_config *cfg, FILE *f, bool mark_defaults)
{
    print_group(cfg, f, mark_defaults, "", 0);
}

gs_status gs_config_to_report(const gs_config *cfg, gs_report *rep)
{
    if (!cfg || !rep) return GS_ERROR(GS_ERR_ARG, "gs_config_to_report: cfg or rep is NULL");
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const gs_cfg_key *key = &gs_cfg_schema[k];
        char name[NAME_MAX_LEN];
        snprintf(name, sizeof name, "config.%s", key->path);
        switch (key->type) {
        case GS_CFG_INT: GS_CALL(gs_report_int(rep, name, gs_config_int(cfg, key->path))); break;
        case GS_CFG_DOUBLE: GS_CALL(gs_report_double(rep, name, gs_config_double(cfg, key->path))); break;
        case GS_CFG_BOOL: GS_CALL(gs_report_bool(rep, name, gs_config_bool(cfg, key->path))); break;
        case GS_CFG_STRING:
        case GS_CFG_CHOICE: GS_CALL(gs_report_string(rep, name, gs_config_string(cfg, key->path))); break;
        }
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* the schema as a table                                                                          */

static const char *type_name(gs_cfg_type t)
{
    switch (t) {
    case GS_CFG_INT: return "int";
    case GS_CFG_DOUBLE: return "double";
    case GS_CFG_BOOL: return "bool";
    case GS_CFG_STRING: return "string";
    case GS_CFG_CHOICE: return "choice";
    }
    return "?";
}

/* The default as it is written in a config file ("gmres" quoted, numbers bare). */
static void default_text(const gs_cfg_key *key, char *buf, size_t len)
{
    if (key->type == GS_CFG_STRING || key->type == GS_CFG_CHOICE)
        snprintf(buf, len, "\"%s\"", key->def);
    else
        snprintf(buf, len, "%s", key->def);
}

/* What may be written: "[lo, hi]", "a|b|c", "true|false" or "any text". sep separates choices. */
static void allowed_text(const gs_cfg_key *key, const char *sep, char *buf, size_t len)
{
    char lo[64], hi[64];
    switch (key->type) {
    case GS_CFG_INT:
    case GS_CFG_DOUBLE:
        gs_cfg_format_bound(key->min, lo, sizeof lo);
        gs_cfg_format_bound(key->max, hi, sizeof hi);
        snprintf(buf, len, "[%s, %s]", lo, hi);
        return;
    case GS_CFG_BOOL: snprintf(buf, len, "true%sfalse", sep); return;
    case GS_CFG_STRING: snprintf(buf, len, "any text"); return;
    case GS_CFG_CHOICE: {
        buf[0] = '\0';
        size_t used = 0;
        for (const char *c = key->choices; *c;) {
            size_t n = strcspn(c, "|");
            int w = snprintf(buf + used, len - used, "%s%.*s", used ? sep : "", (int)n, c);
            if (w < 0 || (size_t)w >= len - used) return;
            used += (size_t)w;
            c += n;
            if (*c == '|') c++;
        }
        return;
    }
    }
    buf[0] = '\0';
}

void gs_config_print_schema(FILE *f)
{
    const char *head[4] = {"key", "type", "default", "allowed"};
    int w[4];
    for (int c = 0; c < 4; c++) w[c] = (int)strlen(head[c]);
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        char def[256], allowed[512];
        default_text(&gs_cfg_schema[k], def, sizeof def);
        allowed_text(&gs_cfg_schema[k], "|", allowed, sizeof allowed);
        const char *cell[4] = {gs_cfg_schema[k].path, type_name(gs_cfg_schema[k].type), def, allowed};
        for (int c = 0; c < 4; c++)
            if ((int)strlen(cell[c]) > w[c]) w[c] = (int)strlen(cell[c]);
    }
    fprintf(f, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], head[0], w[1], head[1], w[2], head[2], w[3], head[3],
            "description");
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        char def[256], allowed[512];
        default_text(&gs_cfg_schema[k], def, sizeof def);
        allowed_text(&gs_cfg_schema[k], "|", allowed, sizeof allowed);
        fprintf(f, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], gs_cfg_schema[k].path, w[1],
                type_name(gs_cfg_schema[k].type), w[2], def, w[3], allowed, gs_cfg_schema[k].help);
    }
}

/* Markdown cell text: '|' would end the cell (escaped even inside a code span, as tables require);
 * outside code, '*' and '_' could start emphasis and are escaped too. */
static void write_md(FILE *f, const char *s, bool code)
{
    if (code) fputc('`', f);
    for (; *s; s++) {
        if (*s == '|' || (!code && (*s == '*' || *s == '_'))) fputc('\\', f);
        fputc(*s, f);
    }
    if (code) fputc('`', f);
}

void gs_config_print_schema_markdown(FILE *f)
{
    fputs("| key | type | default | allowed | description |\n", f);
    fputs("|---|---|---|---|---|\n", f);
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const gs_cfg_key *key = &gs_cfg_schema[k];
        char def[256], allowed[512];
        default_text(key, def, sizeof def);
        allowed_text(key, key->type == GS_CFG_CHOICE || key->type == GS_CFG_BOOL ? "`, `" : "", allowed,
                     sizeof allowed);
        fputs("| ", f);
        write_md(f, key->path, true);
        fprintf(f, " | %s | ", type_name(key->type));
        write_md(f, def, true);
        fputs(" | ", f);
        write_md(f, allowed, key->type != GS_CFG_STRING);
        fputs(" | ", f);
        write_md(f, key->help, false);
        fputs(" |\n", f);
    }
}
