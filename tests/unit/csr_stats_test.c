/* The one-pass matrix facts (core/csr_stats.c): a hand-checked 5x5 case, and the chunked parallel pass
 * equal to the one-thread pass field by field on a matrix large enough to be split (zero, missing and
 * weak diagonal entries spread over every chunk). */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

#include "core/csr_stats.h"
#include "core/mem.h"

static void test_small(void **state)
{
    (void)state;
    /* row 0: 4 -1; row 1: -1 4 -1 (dominant); row 2: missing diagonal; row 3: zero diagonal; row 4: weak */
    gs_int ri[] = {0, 0, 1, 1, 1, 2, 3, 3, 4, 4};
    gs_int ci[] = {0, 1, 0, 1, 2, 3, 3, 4, 3, 4};
    double v[] = {4, -1, -1, 4, -1, 2, 0, 5, 1e6, 1e-4};
    gs_csr A = {0};
    gs_csr_stats s;
    GS_ASSERT_OK(gs_csr_from_coo(5, 5, 10, ri, ci, v, &A));
    GS_ASSERT_OK(gs_csr_stats_compute(&A, &s));
    assert_int_equal(s.diag_missing, 1);
    assert_int_equal(s.missing_rows[0], 3);
    assert_int_equal(s.diag_zero, 1);
    assert_int_equal(s.zero_rows[0], 4);
    assert_int_equal(s.diag_weak, 1);
    assert_int_equal(s.diag_positive, 3);
    assert_int_equal(s.explicit_zeros, 1);
    assert_true(s.abs_max == 1e6 && s.abs_min_nonzero == 1e-4);
    assert_true(s.row_norm_min == 2.0 && s.row_norm_max == 1e6);
    assert_int_equal(s.dominant_strict, 2);
    assert_int_equal(s.bandwidth, 1);
    assert_false(s.sym_structural);
    gs_csr_free(&A);
}

static void test_parallel_equals_serial(void **state)
{
    (void)state;
#ifndef _OPENMP
    skip();
#else
    const gs_int n = 250007;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, 3 * n));
    GS_ASSERT_OK(GS_MALLOC(ci, 3 * n));
    GS_ASSERT_OK(GS_MALLOC(v, 3 * n));
    gs_int k = 0;
    uint64_t seed = 11;
    for (gs_int i = 0; i < n; i++) {
        if (i % 9973 != 5) { /* a missing diagonal now and then */
            ri[k] = i, ci[k] = i;
            v[k++] = i % 7919 == 3 ? 0.0 : (i % 4001 == 1 ? 1e-9 : 2.0 + gs_test_rand(&seed));
        }
        ri[k] = i, ci[k] = (i + 1 + (gs_int)(gs_test_rand(&seed) * 50)) % n, v[k++] = -gs_test_rand(&seed);
        if (i % 3 == 0) ri[k] = i, ci[k] = (i * 7) % n, v[k++] = i % 11 == 0 ? 0.0 : 1.0;
    }
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, &A));
    gs_csr_stats one, many;
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    GS_ASSERT_OK(gs_csr_stats_compute(&A, &one));
    omp_set_num_threads(threads > 1 ? threads : 4);
    GS_ASSERT_OK(gs_csr_stats_compute(&A, &many));
    omp_set_num_threads(threads);
    assert_true(one.diag_missing > 10 && one.diag_zero > 10 && one.diag_weak > 10);
    assert_memory_equal(&one, &many, sizeof one);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&A);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_parallel_equals_serial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
