/* The hand-over of a backend started beside the read (app/startup.c, gs_app_prefetch_take): to the
 * problem when the read succeeded (key, time.init, overlapped), destroyed with the read's error left
 * pending when it failed. The host backend stands in for the cuda one the thread makes on a GPU. */
#include <string.h>

#include "app/startup.h"
#include "testutil.h"

static void test_read_failed_keeps_error(void **state)
{
    (void)state;
    gs_app_prefetch pf;
    memset(&pf, 0, sizeof pf);
    GS_ASSERT_OK(gs_backend_create("host", 0, &pf.be));
    gs_error_clear();
    (void)GS_ERROR(GS_ERR_IO, "cannot open 'a.mtx': No such file or directory");
    gs_app_prefetch_take(&pf, NULL);
    assert_null(pf.be);
    assert_int_equal(gs_error_status(), GS_ERR_IO);
    assert_non_null(strstr(gs_error_message(), "a.mtx"));
    gs_error_clear();
}

static void test_read_succeeded_hands_over(void **state)
{
    (void)state;
    gs_app_prefetch pf;
    gs_app_problem p;
    memset(&pf, 0, sizeof pf);
    memset(&p, 0, sizeof p);
    GS_ASSERT_OK(gs_backend_create("host", 0, &pf.be));
    snprintf(pf.key, sizeof pf.key, "%s", "auto:0:own:0");
    pf.seconds = 0.25;
    gs_backend *be = pf.be;
    gs_app_prefetch_take(&pf, &p);
    assert_null(pf.be);
    assert_ptr_equal(p.be, be);
    assert_string_equal(p.be_key, "auto:0:own:0");
    assert_true(p.init_overlapped);
    assert_true(p.time_init == 0.25);
    assert_int_equal(gs_error_status(), GS_OK);
    gs_backend_destroy(&p.be);
    /* nothing started: nothing handed over */
    gs_app_prefetch_take(&pf, &p);
    assert_null(p.be);
    gs_app_prefetch_finish(&pf, &p);
    assert_null(p.be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_failed_keeps_error),
        cmocka_unit_test(test_read_succeeded_hands_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
