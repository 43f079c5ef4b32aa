/* JSON output through jansson: every string made valid UTF-8 (each byte that does not belong to a
 * valid UTF-8 sequence becomes the four characters \xNN, NN its value in lowercase hex), non-finite
 * doubles as null, doubles with 17 significant digits (they read back exactly), members in the order
 * they were added, and one compact object per line. */
#ifndef GS_JSON_H
#define GS_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The flags of every dump: compact, members in insertion order, doubles with 17 digits. */
#define GS_JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

/* A copy of s with every invalid UTF-8 byte as \xNN (malloc'd; NULL when out of memory). */
char *gs_json_utf8(const char *s);
/* New values (NULL when out of memory): a string (NULL s: ""), a double (null when not finite). */
json_t *gs_json_string(const char *s);
json_t *gs_json_real(double v);
/* obj[key] = v, stealing v; the key made valid UTF-8 like a string. Returns false when out of memory:
 * obj or v NULL (a value that could not be made), or the member not added. */
bool gs_json_set(json_t *obj, const char *key, json_t *v);
/* arr += v, stealing v; false when out of memory (arr or v NULL included). */
bool gs_json_append(json_t *arr, json_t *v);
/* The value as compact text (malloc'd, without a newline; NULL when out of memory). */
char *gs_json_text(const json_t *v);
/* The value as one line on f, written at once (nothing is written when the text cannot be made). */
gs_status gs_json_write_line(const json_t *v, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
