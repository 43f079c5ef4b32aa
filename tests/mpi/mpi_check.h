/* The MPI test programs' check: a failed condition prints this rank's message and is counted (main sums
 * the counts over the ranks, so that every rank exits with the same verdict). */
#ifndef GS_TESTS_MPI_CHECK_H
#define GS_TESTS_MPI_CHECK_H

#include <stdio.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

#endif
