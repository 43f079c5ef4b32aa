/* The effective configuration: libconfig files and -s overrides validated against one schema table
 * (every key: path, type, default, range or choices, help). Every lookup by path is of a key the
 * schema declares; asking for an undeclared key is a programming error (aborts with its name). */
#ifndef GS_CONFIG_H
#define GS_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "core/report.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_cfg_type { GS_CFG_INT, GS_CFG_DOUBLE, GS_CFG_BOOL, GS_CFG_STRING, GS_CFG_CHOICE } gs_cfg_type;

/* One schema row. choices: "a|b|c" for GS_CFG_CHOICE. Ranges inclusive. */
typedef struct gs_cfg_key {
    const char *path; /* "solver.restart", "trisolve.lower.type" */
    gs_cfg_type type;
    const char *def;  /* default as text ("30", "1e-8", "true", "gmres") */
    double min, max;  /* numeric range (INT, DOUBLE) */
    const char *choices;
    const char *help;
} gs_cfg_key;

/* The schema: rows in display order, terminated by a row with path == NULL. */
extern const gs_cfg_key gs_cfg_schema[];

typedef struct gs_config gs_config;

gs_status gs_config_create(gs_config **cfg); /* all defaults */
void gs_config_destroy(gs_config **cfg);
gs_status gs_config_copy(const gs_config *src, gs_config **dst);
/* Merge a libconfig file / text into cfg; errors name file, line, key, and what is allowed
 * (GS_ERR_CONFIG; GS_ERR_IO when the file cannot be opened). On error cfg is unchanged. */
gs_status gs_config_load_file(gs_config *cfg, const char *path);
gs_status gs_config_load_string(gs_config *cfg, const char *text, const char *name);
/* "-s group.key=value": value parsed by the key's schema type. */
gs_status gs_config_set(gs_config *cfg, const char *assignment);

/* Parameter sweeps. A key may hold a list of values: `blocks = [16, 128];` (or a libconfig list
 * `( ... )`) in a file, or -s values through gs_config_set_list. Each value is validated like a
 * single one. Lists are refused (GS_ERR_CONFIG "lists are for sweeps ...") unless allowed; a copy
 * keeps the setting. The getters below return a list's first value; gs_config_pick reduces a list to
 * one value, which is how a sweep makes the configuration of each run. */
void gs_config_allow_lists(gs_config *cfg, bool allow);
/* "-s group.key=v1,v2,...": the key takes the values (append false: replacing what it held) or
 * gets them added to its list (append true: the same key given again). Values of string keys are
 * never split at commas (they are paths): give such a key several times instead. */
gs_status gs_config_set_list(gs_config *cfg, const char *assignment, bool append);
/* Number of values the key holds: 1 unless a list (0 for an unknown path). */
int gs_config_count(const gs_config *cfg, const char *path);
/* The key keeps only its value number index (0-based), with that value's origin. */
gs_status gs_config_pick(gs_config *cfg, const char *path, int index);
/* The key's value as libconfig text: `16`, `"gmres"`, or a list `[16, 128, 512]`. */
void gs_config_print_value(const gs_config *cfg, const char *path, FILE *f);

long long gs_config_int(const gs_config *cfg, const char *path);
double gs_config_double(const gs_config *cfg, const char *path);
bool gs_config_bool(const gs_config *cfg, const char *path);
const char *gs_config_string(const gs_config *cfg, const char *path); /* STRING and CHOICE */
bool gs_config_is_default(const gs_config *cfg, const char *path);
/* Where the value came from: "default", "file:LINE", or "-s". */
const char *gs_config_origin(const gs_config *cfg, const char *path);

/* Effective configuration in libconfig syntax, defaults marked with a comment when mark_defaults. */
void gs_config_print(const gs_config *cfg, FILE *f, bool mark_defaults);
/* Every key into the report as "config.<path>" with its typed value. */
gs_status gs_config_to_report(const gs_config *cfg, gs_report *rep);
/* --help-config: the schema table (path, type, default, allowed, help). */
void gs_config_print_schema(FILE *f);
/* The schema in Markdown (docs/config-keys.md is generated from it). */
void gs_config_print_schema_markdown(FILE *f);

#ifdef __cplusplus
}
#endif
#endif
