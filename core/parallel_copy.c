/* dst = src by all OpenMP threads: the copy into the pinned staging buffer of a GPU upload
 * (core/staging_cuda.h), which a single thread cannot do at the rate the host-to-device link takes it. */
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/mem.h"

/* Pieces a copy is cut into: large enough that a thread streams, small enough to balance the threads. */
#define COPY_PIECE ((size_t)64 << 10)
/* Below this a single memcpy is faster than waking the thread team. */
#define COPY_PARALLEL_BYTES ((size_t)256 << 10)
/* Threads of one copy. A staged upload runs one parallel region per 2 MB chunk, and a region lasts as
 * long as its slowest thread: with every core in the team, a thread preempted by the CUDA driver's own
 * threads stalls the region for a scheduler time slice, and an 84 MB upload (42 regions) took 20-70 ms
 * instead of 6 ms in some runs on the 16-core H100 host. A few threads already copy faster than the
 * link drains (~25 GB/s), and leave cores free. */
#define COPY_MAX_THREADS 6

static int copy_threads(void)
{
#ifdef _OPENMP
    int t = omp_get_num_procs() - 2;
    if (t > COPY_MAX_THREADS) t = COPY_MAX_THREADS;
    if (t > omp_get_max_threads()) t = omp_get_max_threads(); /* device.threads */
    return t < 1 ? 1 : t;
#else
    return 1;
#endif
}

void gs_parallel_copy(void *dst, const void *src, size_t bytes)
{
    char *d = (char *)dst;
    const char *s = (const char *)src;
    long long pieces = (long long)((bytes + COPY_PIECE - 1) / COPY_PIECE);
    const int threads = copy_threads();
    (void)threads; /* without OpenMP */
#pragma omp parallel for schedule(static) num_threads(threads) if (bytes >= COPY_PARALLEL_BYTES)
    for (long long k = 0; k < pieces; k++) {
        size_t off = (size_t)k * COPY_PIECE, len = bytes - off < COPY_PIECE ? bytes - off : COPY_PIECE;
        memcpy(d + off, s + off, len);
    }
}
