/* Host allocation wrappers with overflow checks and a fault-injection counter. */
#include "core/mem.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_long alloc_fail_at;
static atomic_long alloc_count;

void gs_alloc_fail_at(long k)
{
    atomic_store(&alloc_fail_at, k);
    atomic_store(&alloc_count, 0);
}

long gs_alloc_count(void) { return atomic_load(&alloc_count); }

static int injected_failure(void)
{
    long n = atomic_fetch_add(&alloc_count, 1) + 1;
    long k = atomic_load(&alloc_fail_at);
    return k > 0 && n == k;
}

static gs_status checked_bytes(size_t count, size_t size, size_t *bytes)
{
    if (size != 0 && count > SIZE_MAX / size)
        return GS_ERROR(GS_ERR_MEM, "allocation of %zu x %zu bytes overflows size_t", count, size);
    *bytes = count * size;
    if (*bytes == 0) *bytes = 1;
    return GS_OK;
}

gs_status gs_malloc(void *p, size_t count, size_t size)
{
    void **pp = (void **)p;
    size_t bytes = 0;
    *pp = NULL;
    GS_CALL(checked_bytes(count, size, &bytes));
    void *q = injected_failure() ? NULL : malloc(bytes);
    if (!q) return GS_ERROR(GS_ERR_MEM, "out of host memory: could not allocate %zu bytes", bytes);
    *pp = q;
    return GS_OK;
}

gs_status gs_calloc(void *p, size_t count, size_t size)
{
    GS_CALL(gs_malloc(p, count, size));
    size_t bytes = count * size;
    memset(*(void **)p, 0, bytes ? bytes : 1);
    return GS_OK;
}

gs_status gs_realloc(void *p, size_t count, size_t size)
{
    void **pp = (void **)p;
    size_t bytes = 0;
    GS_CALL(checked_bytes(count, size, &bytes));
    void *q = injected_failure() ? NULL : realloc(*pp, bytes);
    if (!q) return GS_ERROR(GS_ERR_MEM, "out of host memory: could not allocate %zu bytes", bytes);
    *pp = q;
    return GS_OK;
}

gs_status gs_strprintf(char **s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return GS_ERROR(GS_ERR_ARG, "gs_strprintf: the format \"%.60s\" cannot be written", fmt);
    char *t = NULL;
    GS_CALL(gs_malloc(&t, (size_t)n + 1, 1));
    va_start(ap, fmt);
    vsnprintf(t, (size_t)n + 1, fmt, ap);
    va_end(ap);
    gs_free(s);
    *s = t;
    return GS_OK;
}

void gs_free(void *p)
{
    void **pp = (void **)p;
    if (pp && *pp) {
        free(*pp);
        *pp = NULL;
    }
}
