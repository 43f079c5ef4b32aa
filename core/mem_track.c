/* Live allocations by pointer: a hash table with linear probing and backward-shift deletion, so a free
 * finds its size in O(1) on average; live and peak bytes kept as the table changes. The table's own
 * memory comes from calloc, outside gs_malloc's fault-injection count: accounting never makes an
 * allocation of the solver fail. */
#include "core/mem_track.h"

#include <stdint.h>
#include <stdlib.h>

static size_t slot_of(const gs_mem_track *t, const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & (t->cap - 1);
}

/* Records p with bytes; returns the bytes p was recorded with before (0 when new). */
static size_t put(gs_mem_track *t, void *p, size_t bytes)
{
    size_t i = slot_of(t, p), old = 0;
    while (t->ptr[i] && t->ptr[i] != p) i = (i + 1) & (t->cap - 1);
    if (t->ptr[i]) old = t->bytes[i];
    else t->n++;
    t->ptr[i] = p;
    t->bytes[i] = bytes;
    return old;
}

/* Doubles the table (the entries rehashed); false when out of memory. */
static bool grow(gs_mem_track *t)
{
    size_t cap = t->cap ? 2 * t->cap : 256;
    void **ptr = calloc(cap, sizeof *ptr);
    size_t *bytes = calloc(cap, sizeof *bytes);
    if (!ptr || !bytes) {
        free(ptr);
        free(bytes);
        return false;
    }
    gs_mem_track old = *t;
    t->ptr = ptr;
    t->bytes = bytes;
    t->cap = cap;
    t->n = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.ptr[i]) (void)put(t, old.ptr[i], old.bytes[i]);
    free(old.ptr);
    free(old.bytes);
    return true;
}

bool gs_mem_track_add(gs_mem_track *t, void *p, size_t bytes)
{
    if (!t || !p) return true;
    if (2 * (t->n + 1) > t->cap && !grow(t)) return false;
    /* an address recorded already was freed unseen and handed out again: its old size goes */
    t->live -= put(t, p, bytes);
    t->live += bytes;
    if (t->live > t->peak) t->peak = t->live;
    return true;
}

void gs_mem_track_remove(gs_mem_track *t, void *p)
{
    if (!t || !p || t->cap == 0) return;
    size_t i = slot_of(t, p);
    while (t->ptr[i] && t->ptr[i] != p) i = (i + 1) & (t->cap - 1);
    if (!t->ptr[i]) return;
    t->live -= t->bytes[i];
    t->ptr[i] = NULL;
    t->n--;
    /* backward shift: move later entries of the probe run into the hole when their home allows it */
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & (t->cap - 1);
        if (!t->ptr[j]) break;
        size_t home = slot_of(t, t->ptr[j]);
        /* the entry at j may move to hole when hole lies cyclically in [home, j) */
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            t->ptr[hole] = t->ptr[j];
            t->bytes[hole] = t->bytes[j];
            t->ptr[j] = NULL;
            hole = j;
        }
    }
}

void gs_mem_track_reset_peak(gs_mem_track *t)
{
    if (t) t->peak = t->live;
}

void gs_mem_track_free(gs_mem_track *t)
{
    if (!t) return;
    free(t->ptr);
    free(t->bytes);
    *t = (gs_mem_track){0};
}
