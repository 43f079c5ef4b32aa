/* Live-allocation tracking for leak checks without a sanitizer: the test executable is linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free, so every allocation made by the
 * statically linked gpusolve code (core/mem.c and anything else in libgs/libgs_app) passes through
 * the wrappers, which keep the set of blocks still allocated. Allocations inside shared libraries
 * (libc's stdio, libconfig, zlib, METIS) are not seen. */
#ifndef GS_ALLOC_TRACK_H
#define GS_ALLOC_TRACK_H

#include <stddef.h>

/* Blocks allocated through the wrappers and not yet freed. */
long gs_track_live_blocks(void);
/* Their total size in bytes. */
size_t gs_track_live_bytes(void);

#endif
