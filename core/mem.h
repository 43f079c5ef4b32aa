/* Host memory: every allocation goes through these wrappers (overflow-checked, fault-injectable). */
#ifndef GS_MEM_H
#define GS_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *p = malloc(count * size); count * size overflow or failure -> GS_ERR_MEM with the size named.
 * count == 0 yields a valid minimal block, never NULL. */
gs_status gs_malloc(void *p, size_t count, size_t size);
/* Same, zero-filled. */
gs_status gs_calloc(void *p, size_t count, size_t size);
/* Resize *p to count*size bytes (contents kept); on failure *p is untouched. */
gs_status gs_realloc(void *p, size_t count, size_t size);
/* free(*p); *p = NULL. p points to a pointer. */
void gs_free(void *p);
/* *s = the printf-style text, as long as it is (the old *s freed after the text is made, so the
 * arguments may name it); on failure *s is untouched. */
gs_status gs_strprintf(char **s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Fault injection (tests): the k-th allocation from now on (1-based) fails; 0 disables.
 * gs_alloc_count() is the number of allocations attempted since the last arm. */
void gs_alloc_fail_at(long k);
long gs_alloc_count(void);

/* dst[0 .. bytes) = src[0 .. bytes) by all OpenMP threads (parallel_copy.c): bulk copies such as the
 * staging copy of a GPU upload (core/staging_cuda.h). */
void gs_parallel_copy(void *dst, const void *src, size_t bytes);

#define GS_MALLOC(ptr, count) gs_malloc(&(ptr), (size_t)(count), sizeof *(ptr))
#define GS_CALLOC(ptr, count) gs_calloc(&(ptr), (size_t)(count), sizeof *(ptr))

#ifdef __cplusplus
}
#endif
#endif
