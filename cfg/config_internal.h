/* Text helpers shared by the cfg/ sources (not part of the public API). */
#ifndef GS_CONFIG_INTERNAL_H
#define GS_CONFIG_INTERNAL_H

#include <stddef.h>

/* The part of `path` below group `prefix` ("" is the root), or NULL when path is not inside it:
 * gs_cfg_below("trisolve", "trisolve.lower.type") = "lower.type". */
const char *gs_cfg_below(const char *prefix, const char *path);
/* The shortest text that strtod reads back as exactly x, always a libconfig float literal
 * ("30.0", "1e-08", "0.1"). */
void gs_cfg_format_double(double x, char *buf, size_t len);
/* A range bound: integral values without a decimal point ("10000"), infinity as "inf". */
void gs_cfg_format_bound(double x, char *buf, size_t len);

#endif
