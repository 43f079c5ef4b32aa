/* Live-allocation tracking through the linker's --wrap: an open-addressing set of the blocks the
 * wrapped malloc/calloc/realloc returned and free has not released yet (its own storage is static, so
 * the tracker never allocates). Frees of blocks it did not see (allocated inside a shared library)
 * pass through untouched. */
#include "alloc_track.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

enum { SLOTS = 1 << 18 }; /* far more than the blocks one run holds at once */
#define TOMBSTONE ((void *)1)

static struct {
    void *p;
    size_t size;
} slots[SLOTS];
static long live_blocks;
static size_t live_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (SLOTS - 1);
}

static void track_add(void *p, size_t size)
{
    pthread_mutex_lock(&lock);
    size_t h = hash(p);
    for (size_t i = 0; i < SLOTS; i++, h = (h + 1) & (SLOTS - 1)) {
        if (slots[h].p == NULL || slots[h].p == TOMBSTONE) {
            slots[h].p = p;
            slots[h].size = size;
            live_blocks++;
            live_bytes += size;
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    pthread_mutex_unlock(&lock);
    fputs("alloc_track: the table of live blocks is full\n", stderr);
    abort();
}

/* Removes p when tracked (its size into *size); returns whether it was. */
static int track_remove(void *p, size_t *size)
{
    pthread_mutex_lock(&lock);
    size_t h = hash(p);
    for (size_t i = 0; i < SLOTS && slots[h].p != NULL; i++, h = (h + 1) & (SLOTS - 1)) {
        if (slots[h].p == p) {
            slots[h].p = TOMBSTONE;
            live_blocks--;
            live_bytes -= slots[h].size;
            *size = slots[h].size;
            pthread_mutex_unlock(&lock);
            return 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

void *__wrap_malloc(size_t size)
{
    void *p = __real_malloc(size);
    if (p) track_add(p, size);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    void *p = __real_calloc(n, size);
    if (p) track_add(p, n * size);
    return p;
}

void *__wrap_realloc(void *p, size_t size)
{
    size_t old = 0;
    int tracked = p ? track_remove(p, &old) : 1;
    void *q = __real_realloc(p, size);
    if (q && tracked) track_add(q, size);
    if (!q && p && tracked && size != 0) track_add(p, old); /* failed: p is still allocated */
    return q;
}

void __wrap_free(void *p)
{
    size_t size;
    if (p) track_remove(p, &size);
    __real_free(p);
}

long gs_track_live_blocks(void)
{
    pthread_mutex_lock(&lock);
    long n = live_blocks;
    pthread_mutex_unlock(&lock);
    return n;
}

size_t gs_track_live_bytes(void)
{
    pthread_mutex_lock(&lock);
    size_t n = live_bytes;
    pthread_mutex_unlock(&lock);
    return n;
}
