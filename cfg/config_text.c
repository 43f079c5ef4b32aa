/* Text helpers of the configuration: group paths, shortest round-trip doubles, range bounds. */
#include "cfg/config_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gs_cfg_below(const char *prefix, const char *path)
{
    if (!prefix[0]) return path;
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) == 0 && path[n] == '.') return path + n + 1;
    return NULL;
}

void gs_cfg_format_double(double x, char *buf, size_t len)
{
    /* the fewest significant digits (at most 17, always enough for a double) that round-trip */
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    /* %g writes 30 with one digit as "3e+01": moderate magnitudes read better in positional form,
     * with the same significant digits (so the same value) */
    const char *e = strchr(buf, 'e');
    if (e && isfinite(x)) {
        int ex = atoi(e + 1);
        if (ex >= -5 && ex < 16) snprintf(buf, len, "%.*f", prec - 1 - ex > 0 ? prec - 1 - ex : 0, x);
    }
    if (!strpbrk(buf, ".eEni")) { /* "30" would read back as a libconfig integer: make it "30.0" */
        size_t n = strlen(buf);
        if (n + 2 < len) memcpy(buf + n, ".0", 3);
    }
}

void gs_cfg_format_bound(double x, char *buf, size_t len)
{
    if (isinf(x))
        snprintf(buf, len, "%s", x > 0 ? "inf" : "-inf");
    else if (x == floor(x) && fabs(x) < 1e16)
        snprintf(buf, len, "%.0f", x);
    else
        gs_cfg_format_double(x, buf, len);
}
