/* The JSON of a report through jansson: strings made valid UTF-8 (each invalid byte as \xNN), a reason's
 * detail kept whole however long (the solver's buffer grows; the attempts' records and the report keep
 * it), provenance members, and the backends' memory accounting (live and peak bytes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/run_report.h"
#include "core/json.h"
#include "core/mem_track.h"
#include "solver/ksp_impl.h"
#include "testutil.h"

static void utf8_repair(void **state)
{
    struct {
        const char *in, *out;
    } cases[] = {
        {"plain.mtx", "plain.mtx"},
        {"caf\xc3\xa9.mtx", "caf\xc3\xa9.mtx"},               /* valid 2-byte UTF-8 kept */
        {"\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80"}, /* 3 and 4 bytes */
        {"caf\xe9.mtx", "caf\\xe9.mtx"},                      /* Latin-1 */
        {"a\xff\xfe" "b", "a\\xff\\xfeb"},
        {"\xc0\xaf", "\\xc0\\xaf"},                           /* overlong '/' */
        {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                  /* a surrogate */
        {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},         /* beyond U+10FFFF */
        {"x\xe2\x82", "x\\xe2\\x82"},                         /* cut short at the end */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *u = gs_json_utf8(cases[i].in);
        assert_non_null(u);
        assert_string_equal(u, cases[i].out);
        free(u);
    }
}

/* The report's JSON text, parsed back (strictly: jansson refuses invalid UTF-8). */
static json_t *round_trip(const gs_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    GS_ASSERT_OK(gs_report_write_json(r, f));
    fclose(f);
    assert_true(len > 0 && buf[len - 1] == '\n');
    assert_null(memchr(buf, '\n', len - 1)); /* one line */
    json_error_t err;
    json_t *v = json_loads(buf, 0, &err);
    if (!v) fail_msg("not JSON: %s: %s", err.text, buf);
    free(buf);
    return v;
}

static void report_strings_valid_utf8(void **state)
{
    gs_report *r = NULL;
    GS_ASSERT_OK(gs_report_create(&r));
    GS_ASSERT_OK(gs_report_string(r, "matrix.source", "/tmp/bad\xff\xfe.mtx"));
    GS_ASSERT_OK(gs_report_string(r, "matrix.name", "\"quoted\"\tand\x01control"));
    GS_ASSERT_OK(gs_report_double(r, "time.x", 0.1));
    GS_ASSERT_OK(gs_report_double(r, "time.inf", INFINITY));
    GS_ASSERT_OK(gs_report_int(r, "matrix.rows", 5));
    json_t *v = round_trip(r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "matrix"), "source")),
                        "/tmp/bad\\xff\\xfe.mtx");
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "matrix"), "name")),
                        "\"quoted\"\tand\x01control");
    assert_true(json_real_value(json_object_get(json_object_get(v, "time"), "x")) == 0.1); /* exact */
    assert_true(json_is_null(json_object_get(json_object_get(v, "time"), "inf")));
    /* first-seen order: matrix (source, name, rows), then time */
    const char *key;
    json_t *m;
    int i = 0;
    const char *order[] = {"source", "name", "rows"};
    json_object_foreach(json_object_get(v, "matrix"), key, m) assert_string_equal(key, order[i++]);
    json_decref(v);
    gs_report_destroy(&r);
}

/* A text of n characters ending in "END". */
static char *long_text(size_t n)
{
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = (char)('a' + i % 26);
    memcpy(s + n - 3, "END", 3);
    s[n] = '\0';
    return s;
}

static void solver_detail_grows(void **state)
{
    gs_backend *be = NULL;
    gs_ksp *ksp = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    GS_ASSERT_OK(gs_ksp_create("cg", be, NULL, &ksp));
    gs_solve_result res = {0};
    res.solver_ = ksp;
    char *t = long_text(3000);
    gs_ksp_stop(&res, GS_DIVERGED_BREAKDOWN, "breakdown: %s", t);
    assert_int_equal(strlen(res.detail), strlen("breakdown: ") + 3000);
    gs_ksp_detail_append(&res, " (and %d more)", 7);
    assert_non_null(strstr(res.detail, "END (and 7 more)"));
    assert_false(ksp->detail_cut);
    free(t);
    gs_ksp_destroy(&ksp);
    gs_backend_destroy(&be);
}

static void long_detail_survives_to_the_json(void **state)
{
    gs_strategy_result sr;
    memset(&sr, 0, sizeof sr);
    gs_report *rep = NULL;
    char *t = long_text(2000);
    GS_ASSERT_OK(gs_config_create(&sr.cfg));
    GS_ASSERT_OK(gs_report_create(&sr.final.rep));
    sr.final.res.reason = GS_DIVERGED_PC_FAILED;
    sr.final.detail = strdup(t);
    sr.nattempts = 1;
    GS_ASSERT_OK(gs_strategy_record(sr.cfg, "configuration", &sr.final, &sr.rec[0]));
    GS_ASSERT_OK(gs_report_create(&rep));
    GS_ASSERT_OK(gs_run_report_provenance(rep, 86400 * 365, 2, (char *const[]){"gpusolve", "m\xff.mtx"}));
    GS_ASSERT_OK(gs_run_report_strategy(rep, &sr));
    GS_ASSERT_OK(gs_run_report_outcome(rep, &sr, NULL, NULL, 0));
    GS_ASSERT_OK(gs_run_report_warnings(rep, sr.cfg, &sr));
    json_t *v = round_trip(rep);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "solve"), "detail")), t);
    json_t *a0 = json_array_get(json_object_get(v, "attempts"), 0);
    assert_string_equal(json_string_value(json_object_get(a0, "detail")), t);
    /* provenance: 1971-01-01T00:00:00Z, the command line (repaired), the version and commit */
    assert_string_equal(json_string_value(json_object_get(v, "started_at")), "1971-01-01T00:00:00Z");
    json_t *cl = json_object_get(v, "command_line");
    assert_int_equal(json_array_size(cl), 2);
    assert_string_equal(json_string_value(json_array_get(cl, 1)), "m\\xff.mtx");
    assert_non_null(json_string_value(json_object_get(json_object_get(v, "gpusolve"), "commit")));
    assert_true(json_string_length(json_object_get(v, "host")) > 0);
    assert_int_equal(json_array_size(json_object_get(v, "warnings")), 0);
    json_decref(v);
    free(t);
    gs_report_destroy(&rep);
    gs_strategy_result_free(&sr);
}

static void memory_high_water_mark(void **state)
{
    gs_mem_track t = {0};
    char blocks[2000];
    for (int i = 0; i < 2000; i++) assert_true(gs_mem_track_add(&t, &blocks[i], 10)); /* the table grows */
    assert_int_equal(t.live, 20000);
    assert_int_equal(t.peak, 20000);
    for (int i = 0; i < 2000; i += 2) gs_mem_track_remove(&t, &blocks[i]);
    assert_int_equal(t.live, 10000);
    assert_int_equal(t.peak, 20000);
    gs_mem_track_remove(&t, &blocks[0]); /* not recorded any more: ignored */
    assert_int_equal(t.live, 10000);
    gs_mem_track_reset_peak(&t);
    assert_int_equal(t.peak, 10000);
    assert_true(gs_mem_track_add(&t, &blocks[0], 500));
    assert_int_equal(t.peak, 10500);
    for (int i = 1; i < 2000; i += 2) gs_mem_track_remove(&t, &blocks[i]); /* every lookup still finds its block */
    gs_mem_track_remove(&t, &blocks[0]);
    assert_int_equal(t.live, 0);
    assert_int_equal(t.n, 0);
    gs_mem_track_free(&t);

    /* the host backend: its vectors count, and the peak starts again from what is held */
    gs_backend *be = NULL;
    gs_vector *v = NULL, *w = NULL;
    size_t live = 0, peak = 0;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    gs_backend_mem_peak_reset(be);
    GS_ASSERT_OK(gs_vec_create(be, 1000, &v));
    GS_ASSERT_OK(gs_vec_create(be, 500, &w));
    gs_vec_destroy(&w);
    assert_true(gs_backend_mem_usage(be, &live, &peak));
    assert_int_equal(live, 8000);
    assert_int_equal(peak, 12000);
    gs_backend_mem_peak_reset(be);
    assert_true(gs_backend_mem_usage(be, &live, &peak));
    assert_int_equal(peak, 8000);
    gs_vec_destroy(&v);
    gs_backend_destroy(&be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_repair),
        cmocka_unit_test(report_strings_valid_utf8),
        cmocka_unit_test(solver_detail_grows),
        cmocka_unit_test(long_detail_survives_to_the_json),
        cmocka_unit_test(memory_high_water_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
