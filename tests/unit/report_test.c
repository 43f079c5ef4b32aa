/* Report: typed entries, replacement, nested JSON in first-seen order, NaN as null, escaping. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report.h"
#include "testutil.h"

static char *render_json(const gs_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gs_report_write_json(r, f);
    fclose(f);
    return buf;
}

static void test_json_nesting(void **state)
{
    gs_report *r = NULL;
    GS_ASSERT_OK(gs_report_create(&r));
    GS_ASSERT_OK(gs_report_string(r, "solve.reason", "converged_rtol"));
    GS_ASSERT_OK(gs_report_int(r, "matrix.rows", 1000));
    GS_ASSERT_OK(gs_report_int(r, "solve.iterations", 12));
    GS_ASSERT_OK(gs_report_double(r, "trisolve.lower.time", 0.5));
    GS_ASSERT_OK(gs_report_bool(r, "trisolve.upper.ok", true));
    GS_ASSERT_OK(gs_report_double(r, "solve.nan", NAN));
    GS_ASSERT_OK(gs_report_string(r, "note", "a \"quoted\"\nline"));
    GS_ASSERT_OK(gs_report_int(r, "solve.iterations", 13)); /* replaced, position kept */
    char *s = render_json(r);
    assert_string_equal(s, "{\"solve\":{\"reason\":\"converged_rtol\",\"iterations\":13,\"nan\":null},"
                           "\"matrix\":{\"rows\":1000},\"trisolve\":{\"lower\":{\"time\":0.5},"
                           "\"upper\":{\"ok\":true}},\"note\":\"a \\\"quoted\\\"\\nline\"}\n");
    free(s);
    assert_int_equal(gs_report_find(r, "solve.iterations")->i, 13);
    assert_null(gs_report_find(r, "solve"));
    gs_report_destroy(&r);
    assert_null(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_json_nesting)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
