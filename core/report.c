/* Ordered key/value results rendered as text lines or one nested JSON object. */
#include "core/report.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

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
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void write_value(FILE *f, const gs_report_entry *e, bool json)
{
    switch (e->type) {
    case GS_REPORT_INT: fprintf(f, "%lld", e->i); break;
    case GS_REPORT_BOOL: fputs(e->i ? "true" : "false", f); break;
    case GS_REPORT_DOUBLE:
        if (json && !isfinite(e->d)) fputs("null", f);
        else fprintf(f, json ? "%.17g" : "%.6g", e->d);
        break;
    case GS_REPORT_STRING:
        if (json) gs_json_write_string(f, e->s);
        else fputs(e->s, f);
        break;
    case GS_REPORT_JSON: fputs(e->s, f); break;
    }
}

void gs_report_write_value(const gs_report_entry *e, FILE *f) { write_value(f, e, false); }

/* Length of the first `depth` dotted components of key (through the dot before component depth). */
static size_t prefix_len(const char *key, int depth)
{
    size_t n = 0;
    for (int d = 0; d < depth; d++) {
        const char *dot = strchr(key + n, '.');
        if (!dot) return strlen(key);
        n = (size_t)(dot - key) + 1;
    }
    return n;
}

/* Writes the members under prefix (length plen, depth components) in first-seen order; each
 * nested group is written once, where its first key appears. */
static void write_group(const gs_report *r, FILE *f, const char *prefix, size_t plen, int depth)
{
    bool first = true;
    for (int i = 0; i < r->n; i++) {
        const char *k = r->e[i].key;
        if (strncmp(k, prefix, plen) != 0) continue;
        const char *rest = k + plen;
        const char *dot = strchr(rest, '.');
        size_t nlen = dot ? (size_t)(dot - rest) : strlen(rest);
        /* skip a member already written (a group whose earlier key came first) */
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            const char *kj = r->e[j].key;
            if (strncmp(kj, prefix, plen) == 0 && strncmp(kj + plen, rest, nlen) == 0 &&
                (kj[plen + nlen] == '.' || kj[plen + nlen] == '\0'))
                seen = true;
        }
        if (seen) continue;
        fputs(first ? "" : ",", f);
        first = false;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)nlen, rest);
        gs_json_write_string(f, name);
        fputc(':', f);
        if (dot) {
            fputc('{', f);
            write_group(r, f, k, prefix_len(k, depth + 1), depth + 1);
            fputc('}', f);
        } else {
            write_value(f, &r->e[i], true);
        }
    }
}

void gs_report_write_json(const gs_report *r, FILE *f)
{
    fputc('{', f);
    write_group(r, f, "", 0, 0);
    fputs("}\n", f);
}

void gs_report_write_text(const gs_report *r, FILE *f, const char *prefix, const char *indent)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    for (int i = 0; i < r->n; i++) {
        const char *k = r->e[i].key;
        if (plen && strncmp(k, prefix, plen) != 0) continue;
        fprintf(f, "%s%-34s ", indent ? indent : "", k + plen);
        write_value(f, &r->e[i], false);
        fputc('\n', f);
    }
}
