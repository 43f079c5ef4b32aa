/* Text helpers shared by the cfg/ sources (not part of the public API). */
#ifndef GS_CONFIG_INTERNAL_H
#define GS_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg/config.h"
#include "core/status.h"

/* Limits on configuration text (docs/failures.md): a configuration holds a few dozen settings, so
 * these only stop hostile or mistaken input (-c /dev/zero, a matrix given as -c) early, with little
 * memory and a message instead of libconfig's. */
#define GS_CFG_TEXT_MAX ((size_t)16 << 20) /* bytes of one configuration with its @include files */
#define GS_CFG_NEST_MAX 64                 /* groups and lists inside one another */
#define GS_CFG_INCLUDE_DEPTH_MAX 10        /* @include inside @include: libconfig 1.5's own limit */

/* The part of `path` below group `prefix` ("" is the root), or NULL when path is not inside it:
 * gs_cfg_below("trisolve", "trisolve.lower.type") = "lower.type". */
const char *gs_cfg_below(const char *prefix, const char *path);
/* The shortest text that strtod reads back as exactly x, always a libconfig float literal
 * ("30.0", "1e-08", "0.1"). */
void gs_cfg_format_double(double x, char *buf, size_t len);
/* A range bound: integral values without a decimal point ("10000"), infinity as "inf". */
void gs_cfg_format_bound(double x, char *buf, size_t len);

/* Reads the configuration file path whole into *text (NUL-terminated, gs_malloc'ed; *len bytes),
 * at most `limit` bytes. Read calls interrupted by a signal are retried, and a SIGINT/SIGTERM stops
 * the reading (GS_ERR_INTERRUPTED). A missing, unreadable file or a folder is GS_ERR_IO; a file over
 * the limit, with a NUL byte (binary data) or starting with a byte-order mark is GS_ERR_CONFIG. */
gs_status gs_cfg_read_text(const char *path, size_t limit, char **text, size_t *len);

/* The texts of a configuration: its own and those of the files it @includes, kept for checks that run
 * after libconfig has parsed them (gs_cfg_sources_free releases them). */
typedef struct gs_cfg_sources {
    int n, cap;
    char **text; /* owned */
    char **name; /* owned: the name messages use (the path as libconfig resolves it) */
} gs_cfg_sources;

/* Checks configuration text before libconfig reads it, following its @include lines as libconfig does
 * (resolved as dir + "/" + the name without a leading '/', or as given when dir is NULL), with messages
 * that name the file and line:
 *   - an @include of a folder (libconfig 1.5 would end the process), of a missing file (libconfig:
 *     "cannot open include file", no file named), of a FIFO or device, or of a file over the size limit;
 *   - a comment opened with slash-star and never closed (libconfig ignores everything after it);
 *   - groups and lists nested deeper than GS_CFG_NEST_MAX (libconfig: "memory exhausted");
 *   - a setting given twice in one group (libconfig: "duplicate setting name", no name), naming the
 *     key and both places.
 * Syntax errors are left to libconfig: where the text stops making sense, the checks stop. The texts
 * of the included files are added to src (the caller's own text is not). GS_ERR_CONFIG, GS_ERR_IO or
 * GS_ERR_INTERRUPTED. */
gs_status gs_cfg_prescan(const char *text, const char *name, const char *dir, gs_cfg_sources *src);
void gs_cfg_sources_free(gs_cfg_sources *src);

/* ---------------------------------------------------------------- the configuration's storage, shared by
 * config.c (values, checks, -s, lists, access) and config_load.c (libconfig text) */

/* The value of one key. origin NULL means the schema default. */
typedef struct gs_cfg_value {
    long long i;  /* GS_CFG_INT */
    double d;     /* GS_CFG_DOUBLE */
    bool b;       /* GS_CFG_BOOL */
    char *s;      /* GS_CFG_STRING, GS_CFG_CHOICE (owned) */
    char *origin; /* "FILE:LINE" or "-s" (owned); NULL: default */
} gs_cfg_value;

/* A key's sweep list: every value it takes, in order; vals[0] is also the key's value v[k]. A list is
 * shared by the copies of a configuration (a sweep makes one copy per run: copying a long list for each
 * would make a sweep quadratic) and copied before it changes; refs counts its holders. */
typedef struct gs_cfg_list {
    int refs;           /* configurations holding it (atomic) */
    int n, cap;         /* values, room */
    gs_cfg_value *vals; /* owned */
} gs_cfg_list;

struct gs_config {
    int n;               /* rows of gs_cfg_schema */
    gs_cfg_value *v;     /* v[k] is the value of gs_cfg_schema[k] */
    gs_cfg_list **lists; /* lists[k]: the sweep list of key k (NULL: the single value v[k]) */
    bool allow_lists;   /* lists accepted (gs_config_allow_lists); refused otherwise */
};

/* A value as written, before it is checked against a key: a libconfig scalar, or -s text already
 * converted to the key's type. s is borrowed. */
typedef enum raw_kind { RAW_INT, RAW_FLOAT, RAW_BOOL, RAW_STRING } raw_kind;
typedef struct raw_value {
    raw_kind kind;
    long long i;
    double d;
    bool b;
    const char *s;
} raw_value;

#define PATH_MAX_LEN 256  /* longest dotted path we build from a file's group names */
#define WHERE_MAX_LEN 1100 /* "FILE:LINE" or "-s assignment" as shown in messages */
#define LIST_MAX_LEN 900   /* "a, b, c" lists of keys or choices in messages */

/* The schema row of a dotted path (-1: none); whether a group of the schema has that prefix; the last
 * component of a path; the name of a type in messages. */
int gs_cfg_key_index(const char *path);
bool gs_cfg_group_exists(const char *prefix);
const char *gs_cfg_leaf_of(const char *path);
const char *gs_cfg_type_word(gs_cfg_type t);
/* "a, b, c": the keys and groups directly below prefix. */
void gs_cfg_group_members(const char *prefix, char *buf, size_t len);
/* GS_ERR_CONFIG for a name the schema does not know (where: "FILE:LINE" or "-s ..."), with the closest
 * known name. */
gs_status gs_cfg_unknown_name(const char *where, const char *path, bool written_as_group);
/* Checks raw against key k (type, finiteness, range, choices) and fills *out (out->s borrowed). */
gs_status gs_cfg_check_value(int k, const raw_value *raw, const char *where, gs_cfg_value *out);
/* Key k of cfg takes the value val (a copy) from origin, its list (if any) dropped; or the n values of a
 * list. */
gs_status gs_cfg_store(gs_config *cfg, int k, const gs_cfg_value *val, const char *origin);
gs_status gs_cfg_store_list(gs_config *cfg, int k, const gs_cfg_value *vals, int n, const char *origin);
/* Exchange the values and lists of two configurations (a checked copy committed). */
void gs_cfg_swap_values(gs_config *a, gs_config *b);

#endif
