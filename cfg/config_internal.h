/* Text helpers shared by the cfg/ sources (not part of the public API). */
#ifndef GS_CONFIG_INTERNAL_H
#define GS_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
