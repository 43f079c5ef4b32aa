/* The process's age (process.h). */
#define _GNU_SOURCE /* CLOCK_BOOTTIME */
#include "core/process.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/backend.h"

/* the program's constructors: the fallback origin of the process's age */
static double loaded_at;
__attribute__((constructor)) static void mark_loaded(void) { loaded_at = gs_wtime(); }

/* the process's start time in seconds since boot, from /proc/self/stat (field 22, in clock ticks);
 * negative when it cannot be read */
static double start_since_boot(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1.0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *s = strrchr(buf, ')'); /* the command name may hold blanks and parentheses */
    if (!s) return -1.0;
    unsigned long long ticks = 0;
    int field = 2;
    for (s++; *s && field < 22; s++)
        if (*s == ' ') field++;
    if (field != 22 || sscanf(s, "%llu", &ticks) != 1) return -1.0;
    const long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)ticks / (double)hz : -1.0;
}

double gs_process_age(void)
{
    struct timespec now;
    const double start = start_since_boot();
    if (start >= 0 && clock_gettime(CLOCK_BOOTTIME, &now) == 0) {
        const double age = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec - start;
        if (age >= 0 && age < 1e7) return age;
    }
    return gs_wtime() - loaded_at;
}
