/* Shared test helpers: cmocka includes, small matrices, poisoning, GPU skip. */
#ifndef GS_TESTUTIL_H
#define GS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"

/* assert a gs call returns GS_OK, printing the error trace otherwise */
#define GS_ASSERT_OK(expr)                                                             \
    do {                                                                               \
        gs_status t_st_ = (expr);                                                      \
        if (t_st_ != GS_OK) {                                                          \
            gs_error_print(stderr);                                                    \
            gs_error_clear();                                                          \
        }                                                                              \
        assert_int_equal(t_st_, GS_OK);                                                \
    } while (0)

/* assert a call fails with a given status and that its message contains `needle` */
#define GS_ASSERT_FAILS(expr, status, needle)                                          \
    do {                                                                               \
        gs_error_clear();                                                              \
        gs_status t_st_ = (expr);                                                      \
        if (t_st_ != (status) || !strstr(gs_error_message(), (needle)))                \
            fprintf(stderr, "got %s: %s\n", gs_status_name(t_st_), gs_error_message()); \
        assert_int_equal(t_st_, (status));                                             \
        assert_non_null(strstr(gs_error_message(), (needle)));                         \
        gs_error_clear();                                                              \
    } while (0)

/* Exit 77 (ctest: skipped) unless a CUDA device is usable. Call first in main() of gpu tests. */
void gs_test_require_gpu(void);

/* The environment's GS_TEST_QUICK as a level: 0 (unset, empty or "0"), 1, or 2 (any value >= 2).
 * bench/gpu_sanitize.sh sets 1 for memcheck/synccheck and 2 for racecheck, which is far slower.
 * Level 1: tests skip their largest cases and the deliberate device API failures (which the sanitizer
 * would report as errors). Level 2: also the medium ones (real matrices, second random size, the
 * longest solves) -- one case of each kind of structure is kept. */
int gs_test_quick(void);

/* Deterministic pseudo-random numbers (xorshift), uniform in [0,1). */
double gs_test_rand(uint64_t *state);

/* 2D 5-point Laplacian on an nx x ny grid (SPD, n = nx*ny). */
gs_status gs_test_laplace2d(gs_int nx, gs_int ny, gs_csr *A);
/* 2D convection-diffusion (upwind, nonsymmetric) on nx x ny with convection strength beta. */
gs_status gs_test_convdiff2d(gs_int nx, gs_int ny, double beta, gs_csr *A);
/* Random sparse square matrix with about `per_row` off-diagonal entries per row and a diagonal
 * made dominant by `dominance` (> 1: strictly dominant). */
gs_status gs_test_random_sparse(gs_int n, int per_row, double dominance, uint64_t seed, gs_csr *A);
/* Load a matrix from data/matrices/<name> (GS_DATA_DIR). */
gs_status gs_test_load(const char *name, gs_csr *A);

/* max_i |x_i - y_i| / max(max_i |y_i|, tiny) */
double gs_test_rel_diff(gs_int n, const double *x, const double *y);
/* fill with NaN */
void gs_test_poison(gs_int n, double *x);

#endif
