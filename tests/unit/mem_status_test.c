/* Allocation wrappers (overflow, fault injection) and the error trace. */
#include <stdint.h>
#include <string.h>

#include "core/csr.h"
#include "core/mem.h"
#include "testutil.h"

static gs_status inner(void) { return GS_ERROR(GS_ERR_IO, "file.mtx:3: bad entry"); }
static gs_status outer(void)
{
    GS_CALL(inner());
    return GS_OK;
}

static void test_trace(void **state)
{
    gs_error_clear();
    assert_int_equal(outer(), GS_ERR_IO);
    assert_string_equal(gs_error_message(), "file.mtx:3: bad entry");
    assert_int_equal(gs_error_status(), GS_ERR_IO);
    /* a second error while one is pending keeps the root cause */
    GS_ERROR(GS_ERR_ARG, "later");
    assert_string_equal(gs_error_message(), "file.mtx:3: bad entry");
    gs_error_clear();
    assert_string_equal(gs_error_message(), "");
    assert_string_equal(gs_status_name(GS_ERR_CUSPARSE), "GS_ERR_CUSPARSE");
}

/* A message longer than the inline buffer is kept whole; a short one after it is the short one. */
static void test_long_message(void **state)
{
    char detail[5001];
    memset(detail, 'x', sizeof detail - 1);
    detail[sizeof detail - 1] = '\0';
    detail[4321] = 'Y';
    gs_error_clear();
    GS_ERROR(GS_ERR_NUMERIC, "zero pivot: %s (end)", detail);
    const char *m = gs_error_message();
    assert_int_equal(strlen(m), strlen("zero pivot: ") + 5000 + strlen(" (end)"));
    assert_int_equal(m[strlen("zero pivot: ") + 4321], 'Y');
    assert_non_null(strstr(m, "x (end)"));
    gs_error_clear();
    GS_ERROR(GS_ERR_IO, "short");
    assert_string_equal(gs_error_message(), "short");
    gs_error_clear();
}

static void test_overflow(void **state)
{
    double *p = NULL;
    GS_ASSERT_FAILS(gs_malloc(&p, SIZE_MAX / 2, 8), GS_ERR_MEM, "overflows");
    assert_null(p);
}

/* Every allocation of a CSR pipeline fails in turn: each ends with GS_ERR_MEM and nothing leaks
 * (run under valgrind/ASan in the sanitizer job). */
static void test_fault_injection(void **state)
{
    long k = 1, failures = 0;
    for (;; k++) {
        gs_csr A = {0}, AT = {0}, G = {0};
        gs_alloc_fail_at(k);
        gs_status st = gs_test_laplace2d(9, 7, &A);
        if (st == GS_OK) st = gs_csr_transpose(&A, &AT);
        if (st == GS_OK) st = gs_csr_symmetric_graph(&A, &G);
        gs_alloc_fail_at(0);
        gs_csr_free(&A);
        gs_csr_free(&AT);
        gs_csr_free(&G);
        if (st == GS_OK) break;
        assert_int_equal(st, GS_ERR_MEM);
        assert_non_null(strstr(gs_error_message(), "out of host memory"));
        gs_error_clear();
        failures++;
    }
    assert_true(failures >= 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_long_message),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_fault_injection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
