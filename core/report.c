/* Ordered key/value results rendered as text lines or one nested JSON object. */
#include "core/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/mem.h"

gs_status gs_report_create(gs_report **r)
{
    GS_CALL(gs_calloc(r, 1, sizeof **r));
    return GS_OK;
}

void gs_report_destroy(gs_report **r)
{
    if (!r || !*r) return;
    for (int i = 0; i < (*r)->n; i++) {
        gs_free(&(*r)->e[i].key);
        gs_free(&(*r)->e[i].s);
    }
    gs_free(&(*r)->e);
    gs_free(r);
}

static gs_status dup_string(const char *s, char **out)
{
    size_t len = strlen(s);
    GS_CALL(gs_malloc(out, len + 1, 1));
    memcpy(*out, s, len + 1);
    return GS_OK;
}

const gs_report_entry *gs_report_find(const gs_report *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->e[i].key, key) == 0) return &r->e[i];
    return NULL;
}

/* The entry for key, created at the end when absent (its old string value released). */
static gs_status slot(gs_report *r, const char *key, gs_report_entry **out)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->e[i].key, key) == 0) {
            gs_free(&r->e[i].s);
            *out = &r->e[i];
            return GS_OK;
        }
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 32;
        GS_CALL(gs_realloc(&r->e, (size_t)cap, sizeof *r->e));
        r->cap = cap;
    }
    gs_report_entry *e = &r->e[r->n];
    memset(e, 0, sizeof *e);
    GS_CALL(dup_string(key, &e->key));
    r->n++;
    *out = e;
    return GS_OK;
}

gs_status gs_report_int(gs_report *r, const char *key, long long v)
{
    gs_report_entry *e;
    GS_CALL(slot(r, key, &e));
    e->type = GS_REPORT_INT;
    e->i = v;
    return GS_OK;
}

gs_status gs_report_double(gs_report *r, const char *key, double v)
{
    gs_report_entry *e;
    GS_CALL(slot(r, key, &e));
    e->type = GS_REPORT_DOUBLE;
    e->d = v;
    return GS_OK;
}

static gs_status text_entry(gs_report *r, const char *key, const char *v, gs_report_type type)
{
    /* copy the value first: a failed copy must not leave a string entry without its string */
    char *s = NULL;
    gs_report_entry *e;
    GS_CALL(dup_string(v ? v : "", &s));
    gs_status st = slot(r, key, &e);
    if (st != GS_OK) {
        gs_free(&s);
        GS_CALL(st);
    }
    e->type = type;
    e->s = s;
    return GS_OK;
}

gs_status gs_report_string(gs_report *r, const char *key, const char *v)
{
    return text_entry(r, key, v, GS_REPORT_STRING);
}

gs_status gs_report_json(gs_report *r, const char *key, const char *json)
{
    return text_entry(r, key, json, GS_REPORT_JSON);
}

gs_status gs_report_merge(gs_report *dst, const gs_report *src)
{
    for (int i = 0; i < src->n; i++) {
        const gs_report_entry *e = &src->e[i];
        switch (e->type) {
        case GS_REPORT_INT: GS_CALL(gs_report_int(dst, e->key, e->i)); break;
        case GS_REPORT_DOUBLE: GS_CALL(gs_report_double(dst, e->key, e->d)); break;
        case GS_REPORT_BOOL: GS_CALL(gs_report_bool(dst, e->key, e->i != 0)); break;
        case GS_REPORT_STRING:
        case GS_REPORT_JSON: GS_CALL(text_entry(dst, e->key, e->s, e->type)); break;
        }
    }
    return GS_OK;
}

gs_status gs_report_bool(gs_report *r, const char *key, bool v)
{
    gs_report_entry *e;
    GS_CALL(slot(r, key, &e));
    e->type = GS_REPORT_BOOL;
    e->i = v;
    return GS_OK;
}

gs_status gs_report_keyf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len) return GS_ERROR(GS_ERR_ARG, "report key too long: %s", fmt);
    return GS_OK;
}

void gs_json_write_string(FILE *f, const char *s)
{
    json_t *v = gs_json_string(s);
    char *t = gs_json_text(v);
    fputs(t ? t : "\"\"", f);
    free(t);
    json_decref(v);
}

static void write_value(FILE *f, const gs_report_entry *e)
{
    switch (e->type) {
    case GS_REPORT_INT: fprintf(f, "%lld", e->i); break;
    case GS_REPORT_BOOL: fputs(e->i ? "true" : "false", f); break;
    case GS_REPORT_DOUBLE: fprintf(f, "%.6g", e->d); break;
    case GS_REPORT_STRING:
    case GS_REPORT_JSON: fputs(e->s, f); break;
    }
}

void gs_report_write_value(const gs_report_entry *e, FILE *f) { write_value(f, e); }

/* One entry's value as JSON (NULL when out of memory). */
static json_t *entry_json(const gs_report_entry *e)
{
    switch (e->type) {
    case GS_REPORT_INT: return json_integer(e->i);
    case GS_REPORT_BOOL: return json_boolean(e->i);
    case GS_REPORT_DOUBLE: return gs_json_real(e->d);
    case GS_REPORT_STRING: return gs_json_string(e->s);
    case GS_REPORT_JSON: {
        json_error_t err;
        json_t *v = json_loads(e->s, JSON_DECODE_ANY, &err);
        return v ? v : gs_json_string(e->s); /* not JSON after all: kept as its text */
    }
    }
    return json_null();
}

/* Adds one entry under its dotted key: each component but the last names a nested object, created where
 * it is first seen. A key whose place holds a value already (an earlier "a" for "a.b", or an earlier
 * "a.b" for "a") is left out: the first one wins. */
static bool add_entry(json_t *root, const gs_report_entry *e)
{
    json_t *obj = root;
    char name[256];
    const char *k = e->key;
    for (const char *dot; (dot = strchr(k, '.')) != NULL; k = dot + 1) {
        snprintf(name, sizeof name, "%.*s", (int)(dot - k), k);
        json_t *next = json_object_get(obj, name);
        if (!next) {
            next = json_object();
            if (!gs_json_set(obj, name, next)) return false;
        } else if (!json_is_object(next)) {
            return true;
        }
        obj = next;
    }
    if (json_object_get(obj, k)) return true;
    return gs_json_set(obj, k, entry_json(e));
}

gs_status gs_report_to_json(const gs_report *r, json_t **out)
{
    json_t *root = json_object();
    *out = NULL;
    for (int i = 0; root && i < r->n; i++)
        if (!add_entry(root, &r->e[i])) {
            json_decref(root);
            root = NULL;
        }
    if (!root) return GS_ERROR(GS_ERR_MEM, "out of host memory writing the report as JSON");
    *out = root;
    return GS_OK;
}

gs_status gs_report_write_json(const gs_report *r, FILE *f)
{
    json_t *root = NULL;
    GS_CALL(gs_report_to_json(r, &root));
    gs_status st = gs_json_write_line(root, f);
    json_decref(root);
    GS_CALL(st);
    return GS_OK;
}

void gs_report_write_text(const gs_report *r, FILE *f, const char *prefix, const char *indent)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    for (int i = 0; i < r->n; i++) {
        const char *k = r->e[i].key;
        if (plen && strncmp(k, prefix, plen) != 0) continue;
        fprintf(f, "%s%-34s ", indent ? indent : "", k + plen);
        write_value(f, &r->e[i]);
        fputc('\n', f);
    }
}
