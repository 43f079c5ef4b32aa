/* A 2D Laplacian system for the library tests: A (m^2 rows), b[i] = 1 + i mod 5, x = 0. */
#ifndef GS_TEST_LIB_SYSTEM_H
#define GS_TEST_LIB_SYSTEM_H

#include <string.h>

#include "core/csr.h"
#include "core/mem.h"
#include "testutil.h"

typedef struct system {
    gs_csr A;
    double *b, *x;
} system_t;

static inline void make_system(system_t *s, gs_int m)
{
    memset(s, 0, sizeof *s);
    GS_ASSERT_OK(gs_test_laplace2d(m, m, &s->A));
    GS_ASSERT_OK(GS_MALLOC(s->b, s->A.nrows));
    GS_ASSERT_OK(GS_CALLOC(s->x, s->A.nrows));
    for (gs_int i = 0; i < s->A.nrows; i++) s->b[i] = 1.0 + (double)(i % 5);
}

static inline void free_system(system_t *s)
{
    gs_csr_free(&s->A);
    gs_free(&s->b);
    gs_free(&s->x);
}

#endif
