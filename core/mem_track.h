/* Accounting of a backend's memory: the bytes each live allocation holds (a hash table keyed by the
 * pointer), their sum, and the most that sum reached since the last reset (the high-water mark). */
#ifndef GS_MEM_TRACK_H
#define GS_MEM_TRACK_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_mem_track {
    void **ptr;     /* open addressing, linear probing; NULL = empty slot */
    size_t *bytes;
    size_t cap, n;  /* slots (a power of two), live allocations */
    size_t live;    /* bytes held now */
    size_t peak;    /* most bytes held since the last reset */
} gs_mem_track;

/* p (not NULL) now holds bytes. false when the table could not grow (out of host memory; nothing
 * recorded): the caller gives the allocation back and fails. */
bool gs_mem_track_add(gs_mem_track *t, void *p, size_t bytes);
/* p was freed (a pointer not recorded is ignored). */
void gs_mem_track_remove(gs_mem_track *t, void *p);
/* The high-water mark starts again from the bytes held now. */
void gs_mem_track_reset_peak(gs_mem_track *t);
/* Releases the table (the counts start from zero). */
void gs_mem_track_free(gs_mem_track *t);

#ifdef __cplusplus
}
#endif
#endif
