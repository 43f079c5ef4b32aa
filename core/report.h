/* An ordered list of named results (dotted keys, e.g. "preconditioner.nnz_ratio") that plug-ins fill
 * through their view() and app/ renders as the text report or one JSON object. */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GS_REPORT_JSON: s holds one JSON value (an array or object), written as it is in JSON and as its text
 * elsewhere. */
typedef enum gs_report_type {
    GS_REPORT_INT,
    GS_REPORT_DOUBLE,
    GS_REPORT_STRING,
    GS_REPORT_BOOL,
    GS_REPORT_JSON
} gs_report_type;

typedef struct gs_report_entry {
    char *key;
    gs_report_type type;
    long long i;
    double d;
    char *s;
} gs_report_entry;

typedef struct gs_report {
    gs_report_entry *e;
    int n, cap;
} gs_report;

gs_status gs_report_create(gs_report **r);
void gs_report_destroy(gs_report **r);
/* Adding a key that exists replaces its value (position kept). */
gs_status gs_report_int(gs_report *r, const char *key, long long v);
gs_status gs_report_double(gs_report *r, const char *key, double v);
gs_status gs_report_string(gs_report *r, const char *key, const char *v);
gs_status gs_report_bool(gs_report *r, const char *key, bool v);
/* A JSON value given as text (the caller guarantees it is valid JSON). */
gs_status gs_report_json(gs_report *r, const char *key, const char *json);
/* Every entry of src added to dst (replacing entries of the same key). */
gs_status gs_report_merge(gs_report *dst, const gs_report *src);
/* printf-style key: gs_report_intf(r, v, "trisolve.%s.levels", "lower") */
gs_status gs_report_keyf(char *buf, size_t len, const char *fmt, ...);
const gs_report_entry *gs_report_find(const gs_report *r, const char *key);

/* The report as one new JSON object (core/json.h): dotted keys become nested objects in first-seen
 * order; non-finite doubles are null (JSON has no NaN); strings made valid UTF-8 (GS_ERR_MEM when out of
 * memory). */
struct json_t; /* jansson's (core/json.h): includers of this header need not see jansson's names */
gs_status gs_report_to_json(const gs_report *r, struct json_t **out);
/* That object as one line on f, written at once (nothing written on failure). */
gs_status gs_report_write_json(const gs_report *r, FILE *f);
/* "key = value" lines, keys with the given prefix only (NULL or "" = all), prefix stripped. */
void gs_report_write_text(const gs_report *r, FILE *f, const char *prefix, const char *indent);
/* One value as text (doubles with 6 significant digits). */
void gs_report_write_value(const gs_report_entry *e, FILE *f);
/* One JSON string (made valid UTF-8, escaped by jansson). */
void gs_json_write_string(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
