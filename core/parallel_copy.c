/* dst = src by all OpenMP threads: the copy into the pinned staging buffer of a GPU upload
 * (core/staging_cuda.h), which a single thread cannot do at the rate the host-to-device link takes it. */
#include <string.h>

#include "core/mem.h"

/* Pieces a copy is cut into: large enough that a thread streams, small enough to balance the threads. */
#define COPY_PIECE ((size_t)64 << 10)
/* Below this a single memcpy is faster than waking the thread team. */
#define COPY_PARALLEL_BYTES ((size_t)256 << 10)

void gs_parallel_copy(void *dst, const void *src, size_t bytes)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    long long pieces = (long long)((bytes + COPY_PIECE - 1) / COPY_PIECE);
#pragma omp parallel for schedule(static) if (bytes >= COPY_PARALLEL_BYTES)
    for (long long k = 0; k < pieces; k++) {
        size_t off = (size_t)k * COPY_PIECE, len = bytes - off < COPY_PIECE ? bytes - off : COPY_PIECE;
        memcpy(d + off, s + off, len);
    }
}
