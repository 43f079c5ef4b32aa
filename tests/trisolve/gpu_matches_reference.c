/* A GPU triangular solver against the host reference on the whole case suite, for every variant of a
 * group of solver parameters: random factors (n = 1000, 4099; empty rows; a dense row), a 5000-row
 * bidiagonal chain, diagonal and identity factors, mixed wide/thin levels, 3D Poisson triangles and
 * triangles of real matrices; lower and upper, unit and non-unit. x is poisoned with NaN before every
 * solve; each case is solved twice (graph replay / new generation) and must agree within TRI_TOL;
 * deterministic solvers give bit-identical results. Also: switching b/x vectors, many consecutive
 * solves, re-analysis with new values, and the view keys.
 *
 *   usage: gpu_matches_reference TYPE [GROUP [PART/PARTS]]
 *
 * TYPE is the trisolve type; GROUP names a list of parameter variants (below; default: the defaults
 * alone); PART/PARTS (e.g. 1/3) keeps the variants k with k % PARTS == PART, so that a long group runs
 * as several tests in parallel. A variant sets solver parameters (trisolve_params.h) and may name a switch whose other value
 * must give the same bits (a partner solver, compared on every case, in double and optionally in single:
 * a kernel form of one schedule against another), a view key that some stage must report on some case
 * (so that the forced form really ran), and the schedule the view must report. The suite is built once
 * and every variant runs over it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"
#include "trisolve/trisolve_impl.h"

typedef struct variant {
    const char *name;
    const char *params;    /* "name=value,..." (gs_trisolve_params_set); NULL: the defaults */
    const char *pair;      /* a switch whose other value gives a partner solver with the same bits */
    bool pair_single;      /* the pair compared in single precision too */
    const char *count_key; /* some stage of some case reports count_key = count_value */
    long long count_value;
    const char *schedule;  /* the schedule the view reports (merged: or levels where the fill refused it) */
} variant;

static const variant defaults[] = {{"default", NULL, NULL, false, NULL, 0, NULL}};

/* syncfree: the schedules (each forced, also on factors where the rule picks another) and the merged
 * schedule with 4 (its first stage level-synchronous, the rule) and 3 (sync-free, forced) levels per group */
static const variant sf_schedules[] = {
    {"default", NULL, NULL, false, NULL, 0, NULL},
    {"levels", "syncfree.schedule=levels", NULL, false, NULL, 0, "levels"},
    {"runs", "syncfree.schedule=runs", NULL, false, NULL, 0, "runs"},
    {"wruns", "syncfree.schedule=wruns", NULL, false, NULL, 0, "wruns"},
    {"merged4", "syncfree.schedule=merged,syncfree.merge_levels=4,syncfree.td_sync=on", NULL, false, NULL, 0,
     "merged"},
    {"merged3", "syncfree.schedule=merged,syncfree.merge_levels=3,syncfree.td_sync=off", NULL, false, NULL, 0,
     "merged"},
};

/* syncfree, the merged schedule's forms: the two-level first stage in one launch against a launch per level,
 * folded into M's kernel against its own launch (double and single); the remainder polled early against
 * after the ELL part; lanes sharing a row; a block per 128 positions against the persistent grid */
static const variant sf_merged[] = {
    {"merged2-onepass", "syncfree.schedule=merged,syncfree.merge_levels=2,syncfree.td_sync=on,syncfree.td_fold=off",
     "syncfree.td_one_pass", false, "merge_td_one_pass", 1, "merged"},
    {"merged2-fold", "syncfree.schedule=merged,syncfree.merge_levels=2,syncfree.td_sync=on", "syncfree.td_fold", true,
     "merge_td_fold", 1, "merged"},
    {"merged-remprefetch", "syncfree.schedule=merged,syncfree.rem_prefetch=on", "syncfree.rem_prefetch", false,
     "remainder_prefetch", 1, "merged"},
    {"merged-lanes4-remprefetch", "syncfree.schedule=merged,syncfree.lanes_per_row=4,syncfree.rem_prefetch=on",
     "syncfree.rem_prefetch", false, "remainder_prefetch", 1, "merged"},
    {"merged-once", "syncfree.schedule=merged,syncfree.merge_levels=3,syncfree.td_sync=off,syncfree.once=on",
     "syncfree.once", true, "persistent", 0, "merged"},
    {"merged-lanes2", "syncfree.schedule=merged,syncfree.lanes_per_row=2", NULL, false, NULL, 0, "merged"},
    {"merged-lanes4", "syncfree.schedule=merged,syncfree.lanes_per_row=4", NULL, false, NULL, 0, "merged"},
};

/* syncfree, the level-order kernel's forms: early remainder (a lane per row, lanes per row), a block per 128
 * positions, 1, 2 and 4 lanes per row */
static const variant sf_kernels[] = {
    {"levels-remprefetch", "syncfree.schedule=levels,syncfree.rem_prefetch=on", "syncfree.rem_prefetch", false,
     "remainder_prefetch", 1, "levels"},
    {"levels-lanes2-remprefetch", "syncfree.schedule=levels,syncfree.lanes_per_row=2,syncfree.rem_prefetch=on",
     "syncfree.rem_prefetch", false, "remainder_prefetch", 1, "levels"},
    {"levels-once", "syncfree.schedule=levels,syncfree.once=on", "syncfree.once", true, "persistent", 0, "levels"},
    {"levels-lanes1", "syncfree.schedule=levels,syncfree.lanes_per_row=1", NULL, false, NULL, 0, "levels"},
    {"levels-lanes2", "syncfree.schedule=levels,syncfree.lanes_per_row=2", NULL, false, NULL, 0, "levels"},
    {"levels-lanes4", "syncfree.schedule=levels,syncfree.lanes_per_row=4", NULL, false, NULL, 0, "levels"},
};

static const struct {
    const char *name;
    const variant *v;
    int n;
} groups[] = {
    {"default", defaults, 1},
    {"schedules", sf_schedules, (int)(sizeof sf_schedules / sizeof sf_schedules[0])},
    {"merged", sf_merged, (int)(sizeof sf_merged / sizeof sf_merged[0])},
    {"kernels", sf_kernels, (int)(sizeof sf_kernels / sizeof sf_kernels[0])},
};

static const char *ts_type;        /* the solver under test */
static bool deterministic;         /* bit-identical repeated solves (all but cusparse) */
static const variant *variants;
static int nvariants;
static gs_backend *gpu, *host;
static tri_suite suite;

static int setup(void **state)
{
    if (tri_backends_create(&gpu, &host) != 0) return -1;
    if (tri_suite_build(&suite, true) != GS_OK) {
        gs_error_print(stderr);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    tri_suite_free(&suite);
    tri_backends_destroy(&gpu, &host);
    return 0;
}

/* The parameters of a variant (single: the factor's values in float). */
static gs_trisolve_params variant_params(const variant *v, bool single)
{
    gs_trisolve_params p = gs_trisolve_params_default();
    tri_params_apply(&p, v->params);
    p.single = single;
    return p;
}

/* The partner of a variant: its switch set the other way (on or auto -> off, off -> on). */
static gs_trisolve_params partner_params(const variant *v, bool single)
{
    gs_trisolve_params p = variant_params(v, single);
    gs_trisolve_params on = p, off = p;
    char set[96];
    snprintf(set, sizeof set, "%s=on", v->pair);
    GS_ASSERT_OK(gs_trisolve_params_set(&on, set, NULL));
    snprintf(set, sizeof set, "%s=off", v->pair);
    GS_ASSERT_OK(gs_trisolve_params_set(&off, set, NULL));
    return memcmp(&p, &off, sizeof p) == 0 ? on : off; /* p already off: the partner has it on */
}

/* The view of ts under "t" (caller destroys). */
static gs_report *view_of(const gs_trisolve *ts)
{
    gs_report *rr = NULL;
    GS_ASSERT_OK(gs_report_create(&rr));
    gs_trisolve_view(ts, rr, "t");
    return rr;
}

/* How many stages of the solver (the whole of it, or the merged schedule's .td and .m) report KEY = VALUE. */
static int stages_with(const gs_trisolve *ts, const char *key, long long value)
{
    gs_report *rr = view_of(ts);
    int count = 0;
    const char *stages[] = {"t", "t.td", "t.m"};
    for (int q = 0; q < 3; q++) {
        char k[128];
        snprintf(k, sizeof k, "%s.%s", stages[q], key);
        const gs_report_entry *e = gs_report_find(rr, k);
        if (e && e->i == value) count++;
    }
    gs_report_destroy(&rr);
    return count;
}

static long long view_int(const gs_report *rr, const char *key, long long missing)
{
    const gs_report_entry *e = gs_report_find(rr, key);
    return e ? e->i : missing;
}

/* What the sync-free view must say under parameters p: the merged first stage's form (one pass only for a
 * level-synchronous stage of at most two levels, never where the parameters turn it off; folded only in one
 * pass, never where turned off); the early remainder as forced, in every stage with a remainder (but a T_D
 * folded into M's kernel, which has no grid of its own); the persistent grid wherever the block per 128
 * positions is turned off. */
static void check_forced_view(const gs_trisolve *ts, const gs_trisolve_params *p)
{
    if (strcmp(ts_type, "syncfree") != 0) return;
    gs_report *rr = view_of(ts);
    const gs_report_entry *sc = gs_report_find(rr, "t.schedule");
    assert_non_null(sc);
    const bool merged = strcmp(sc->s, "merged") == 0;
    if (merged) {
        const long long sync = view_int(rr, "t.merge_td_level_sync", -1), one = view_int(rr, "t.merge_td_one_pass", -1);
        const long long fold = view_int(rr, "t.merge_td_fold", -1), lv = view_int(rr, "t.td.levels", -1);
        assert_true(sync >= 0 && one >= 0 && fold >= 0 && lv >= 0);
        assert_int_equal(one, sync == 1 && lv <= 2 && p->syncfree.td_one_pass != GS_TS_OFF ? 1 : 0);
        if (fold) assert_int_equal(one, 1);
        if (p->syncfree.td_fold == GS_TS_OFF) assert_int_equal(fold, 0);
        if (p->syncfree.td_sync != GS_TS_AUTO) assert_int_equal(sync, p->syncfree.td_sync == GS_TS_ON ? 1 : 0);
    }
    for (int k = 0; k < (merged ? 2 : 1); k++) {
        const char *stage = merged ? (k == 0 ? "t.td" : "t.m") : "t";
        char key[128];
        snprintf(key, sizeof key, "%s.remainder_prefetch", stage);
        const long long rp = view_int(rr, key, -1);
        snprintf(key, sizeof key, "%s.remainder_nnz", stage);
        const long long rem = view_int(rr, key, -1);
        snprintf(key, sizeof key, "%s.persistent", stage);
        const long long persistent = view_int(rr, key, -1);
        if (merged && k == 0 && view_int(rr, "t.merge_td_fold", 0) == 1) continue; /* T_D has no grid of its own */
        assert_true(rp >= 0 && rem >= 0 && persistent >= 0);
        if (p->syncfree.rem_prefetch != GS_TS_AUTO)
            assert_int_equal(rp, rem > 0 && p->syncfree.rem_prefetch == GS_TS_ON ? 1 : 0);
        if (p->syncfree.once == GS_TS_OFF) assert_int_equal(persistent, 1);
    }
    gs_report_destroy(&rr);
}

static void check(const char *what, const tri_case *c, gs_int n, const double *x, const double *xr)
{
    double e = gs_test_rel_diff(n, x, xr);
    if (!(e <= TRI_TOL)) fprintf(stderr, "%s %s (%s): relative error %.3e > %.1e\n", ts_type, c->name, what, e, TRI_TOL);
    assert_true(e <= TRI_TOL);
}

static gs_trisolve *analysed(const tri_case *c, const gs_trisolve_params *p)
{
    gs_trisolve *ts = NULL;
    GS_ASSERT_OK(gs_trisolve_create(ts_type, gpu, c->uplo, c->unit, p, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));
    return ts;
}

/* The variant's solver and its partner give the same bits (twice each: both generations of the ready
 * values), in double and, with pair_single, in single; the double one equals the reference. */
static void check_pair(const variant *v, const tri_case *c, const gs_vector *b, gs_vector *x, const double *xr,
                       double *x1, double *x2, const double *poison)
{
    const gs_int n = c->T.nrows;
    for (int single = 0; single < (v->pair_single ? 2 : 1); single++) {
        const gs_trisolve_params pa = variant_params(v, single != 0), pb = partner_params(v, single != 0);
        gs_trisolve *ta = analysed(c, &pa), *tb = analysed(c, &pb);
        check_forced_view(tb, &pb);
        for (int rep = 0; rep < 2; rep++) {
            tri_gpu_solve(ta, b, x, x1, poison);
            if (single == 0) check("pair", c, n, x1, xr);
            tri_gpu_solve(tb, b, x, x2, poison);
            if (memcmp(x1, x2, (size_t)n * sizeof(double)) != 0)
                fprintf(stderr, "%s %s: %s on and off differ\n", v->name, c->name, v->pair);
            assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
        }
        gs_trisolve_destroy(&ta);
        gs_trisolve_destroy(&tb);
    }
}

/* One variant over the suite. */
static void suite_variant(const variant *v)
{
    int counted = 0;
    const double t0 = gs_wtime();
    for (int k = 0; k < suite.n; k++) {
        const tri_case *c = &suite.c[k];
        const double tc = gs_wtime();
        gs_int n = c->T.nrows;
        double *hb = NULL, *hb2 = NULL, *xr = NULL, *xr2 = NULL, *x1 = NULL, *x2 = NULL, *poison = NULL;
        GS_ASSERT_OK(GS_MALLOC(hb, n));
        GS_ASSERT_OK(GS_MALLOC(hb2, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(xr2, n));
        GS_ASSERT_OK(GS_MALLOC(x1, n));
        GS_ASSERT_OK(GS_MALLOC(x2, n));
        GS_ASSERT_OK(GS_MALLOC(poison, n));
        gs_test_poison(n, poison);
        tri_rhs(n, (uint64_t)k + 101, hb);
        tri_rhs(n, (uint64_t)k + 202, hb2);
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, hb, xr);
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, hb2, xr2);

        gs_vector *b = NULL, *b2 = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b2));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &y));
        GS_ASSERT_OK(gs_vec_upload(b, hb));
        GS_ASSERT_OK(gs_vec_upload(b2, hb2));
        const gs_trisolve_params prm = variant_params(v, false);
        gs_trisolve *ts = analysed(c, &prm);
        check_forced_view(ts, &prm);
        if (v->count_key) counted += stages_with(ts, v->count_key, v->count_value);

        tri_gpu_solve(ts, b, x, x1, poison);
        check("first solve", c, n, x1, xr);
        tri_gpu_solve(ts, b, x, x2, poison); /* replay */
        check("second solve", c, n, x2, xr);
        if (deterministic) assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
        if (v->pair) check_pair(v, c, b, x, xr, x1, x2, poison);
        /* other vectors, then back: the solver must follow the pointers of each call */
        tri_gpu_solve(ts, b2, y, x2, poison);
        check("other b and x", c, n, x2, xr2);
        tri_gpu_solve(ts, b, y, x2, poison);
        check("b with the other x", c, n, x2, xr);
        tri_gpu_solve(ts, b2, x, x2, poison);
        check("other b with x", c, n, x2, xr2);
        /* the solution may be the next right-hand side */
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
        GS_ASSERT_OK(gs_vec_upload(y, poison));
        GS_ASSERT_OK(gs_trisolve_solve(ts, x, y));
        GS_ASSERT_OK(gs_vec_download(y, x2));
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, xr, x1);
        check("x as rhs", c, n, x2, x1);

        gs_trisolve_destroy(&ts);
        gs_vec_destroy(&b);
        gs_vec_destroy(&b2);
        gs_vec_destroy(&x);
        gs_vec_destroy(&y);
        gs_free(&hb);
        gs_free(&hb2);
        gs_free(&xr);
        gs_free(&xr2);
        gs_free(&x1);
        gs_free(&x2);
        gs_free(&poison);
        if (gs_test_quick()) fprintf(stderr, "  %s %s %s: %.2f s\n", ts_type, v->name, c->name, gs_wtime() - tc);
    }
    fprintf(stderr, "%s %s: %d cases in %.1f s", ts_type, v->name, suite.n, gs_wtime() - t0);
    if (v->count_key) fprintf(stderr, ", %d stages with %s = %lld", counted, v->count_key, v->count_value);
    fprintf(stderr, "\n");
    if (v->count_key) assert_true(counted > 0);
}

static void test_suite(void **state)
{
    for (int k = 0; k < nvariants; k++) suite_variant(&variants[k]);
}

/* Many solves in a row without host syncs between them (flags generations, graph replays), then a
 * re-analysis with scaled values (x scales inversely) and a view; for each variant. */
static void repeat_reanalyse_view(const variant *v)
{
    const gs_int n = gs_test_quick() ? 1000 : 4099; /* sanitizers: smaller */
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 6, GS_UPPER, false, 77, &T));
    tri_case c = {"random-repeat", T, GS_UPPER, false};
    double *hb = NULL, *xr = NULL, *hx = NULL, *poison = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(hx, n));
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    tri_rhs(n, 5, hb);
    tri_host_solve(host, "reference", &c.T, c.uplo, c.unit, NULL, hb, xr);

    const gs_trisolve_params prm = variant_params(v, false);
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL, *z = NULL;
    GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &z));
    GS_ASSERT_OK(gs_vec_upload(b, hb));
    GS_ASSERT_OK(gs_trisolve_create(ts_type, gpu, GS_UPPER, false, &prm, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_vec_upload(x, poison));
    /* alternate x and z so every solve must write all of its output; sanitizers (GS_TEST_QUICK): 20 */
    const int reps = gs_test_quick() ? 20 : 200;
    for (int r = 0; r < reps; r++) {
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, (r % 2) ? z : x));
        if (r == 0) GS_ASSERT_OK(gs_vec_upload(z, poison));
    }
    GS_ASSERT_OK(gs_vec_download(z, hx));
    check("last solve", &c, n, hx, xr);
    GS_ASSERT_OK(gs_vec_download(x, hx));
    check("last but one solve", &c, n, hx, xr);

    for (gs_int q = 0; q < T.nnz; q++) T.val[q] *= 4.0;
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_vec_upload(x, poison));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    GS_ASSERT_OK(gs_vec_download(x, hx));
    for (gs_int i = 0; i < n; i++) xr[i] *= 0.25;
    check("after re-analysis", &c, n, hx, xr);

    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "trisolve.upper");
    const gs_report_entry *e = gs_report_find(rep, "trisolve.upper.type");
    assert_non_null(e);
    assert_string_equal(e->s, ts_type);
    assert_non_null(gs_report_find(rep, "trisolve.upper.analysis_time"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.implementation"));
    if (strcmp(ts_type, "levelset") == 0) {
        e = gs_report_find(rep, "trisolve.upper.levels");
        assert_non_null(e);
        assert_int_equal(e->i, gs_csr_levels(&T, false, NULL));
        assert_non_null(gs_report_find(rep, "trisolve.upper.chains"));
        assert_non_null(gs_report_find(rep, "trisolve.upper.graph_kernels"));
    }
    if (strcmp(ts_type, "auto") == 0) assert_non_null(gs_report_find(rep, "trisolve.upper.selected"));
    if (strcmp(ts_type, "syncfree") == 0) {
        e = gs_report_find(rep, "trisolve.upper.schedule");
        assert_non_null(e);
        /* merged forced: the level order only where the fill limit refused it (reported) */
        if (v->schedule && strcmp(v->schedule, "merged") == 0 &&
            gs_report_find(rep, "trisolve.upper.merge_refused_fill"))
            assert_string_equal(e->s, "levels");
        else if (v->schedule)
            assert_string_equal(e->s, v->schedule);
        check_forced_view(ts, &prm);
    }
    gs_report_destroy(&rep);

    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&z);
    gs_free(&hb);
    gs_free(&xr);
    gs_free(&hx);
    gs_free(&poison);
    gs_csr_free(&T);
}

static void test_repeat_reanalyse_view(void **state)
{
    for (int k = 0; k < nvariants; k++) repeat_reanalyse_view(&variants[k]);
}

/* A host vector given to a GPU solver is refused before any kernel runs. */
static void test_backend_mismatch(void **state)
{
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(100, 3, GS_LOWER, true, 1, &T));
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(gs_vec_create(host, 100, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, 100, &x));
    GS_ASSERT_OK(gs_trisolve_create(ts_type, gpu, GS_LOWER, true, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "must live on the solver's backend");
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_csr_free(&T);
}

/* auto on a lower factor T: the solve, the solver it selects (and the sync-free schedule: NULL = any), and
 * auto_levels = T's row levels whatever schedule the sync-free analysis then chose */
static void auto_case(const char *name, gs_csr *T, const char *expect, const char *schedule)
{
    gs_int n = T->nrows;
    double *hb = NULL, *xr = NULL, *hx = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(hx, n));
    tri_rhs(n, 3, hb);
    gs_trisolve_reference_host(T, GS_LOWER, false, hb, xr);
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
    GS_ASSERT_OK(gs_vec_upload(b, hb));
    gs_test_poison(n, hx);
    GS_ASSERT_OK(gs_vec_upload(x, hx));
    GS_ASSERT_OK(gs_trisolve_create("auto", gpu, GS_LOWER, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, T));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    GS_ASSERT_OK(gs_vec_download(x, hx));
    tri_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.T = *T;
    check("auto rule", &c, n, hx, xr);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "t");
    const gs_report_entry *e = gs_report_find(rep, "t.selected");
    assert_non_null(e);
    if (strcmp(e->s, expect) != 0) fail_msg("%s: auto selected %s, expected %s", name, e->s, expect);
    if (schedule) {
        e = gs_report_find(rep, "t.schedule");
        assert_non_null(e);
        if (strcmp(e->s, schedule) != 0) fail_msg("%s: schedule %s, expected %s", name, e->s, schedule);
    }
    e = gs_report_find(rep, "t.auto_levels");
    assert_non_null(e);
    assert_int_equal(e->i, gs_csr_levels(T, true, NULL));
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_free(&hb);
    gs_free(&xr);
    gs_free(&hx);
}

/* auto's rule on cuda: cusparse for a small factor of fewer than 10 levels, syncfree for a deep one; both
 * solve correctly (x poisoned first). Only for TYPE auto. */
static void test_auto_rule(void **state)
{
    if (strcmp(ts_type, "auto") != 0) skip();
    const gs_int n = 5003;
    gs_csr T = {0};
    /* shallow: rows >= 3 read rows 0 and 1 only -> 2 levels */
    GS_ASSERT_OK(gs_csr_alloc(&T, n, n, 3 * n - 6, true));
    gs_int q = 0;
    for (gs_int i = 0; i < n; i++) {
        if (i >= 3) {
            T.colind[q] = 0;
            T.val[q++] = -0.3;
            T.colind[q] = 1;
            T.val[q++] = 0.2;
        }
        T.colind[q] = i;
        T.val[q++] = 2.0 + (double)(i % 7);
        T.rowptr[i + 1] = q;
    }
    auto_case("shallow 2 levels", &T, "cusparse", NULL);
    gs_csr_free(&T);
    /* deep: bidiagonal, n levels */
    GS_ASSERT_OK(gs_csr_alloc(&T, n, n, 2 * n - 1, true));
    q = 0;
    for (gs_int i = 0; i < n; i++) {
        if (i > 0) {
            T.colind[q] = i - 1;
            T.val[q++] = -0.5;
        }
        T.colind[q] = i;
        T.val[q++] = 1.5;
        T.rowptr[i + 1] = q;
    }
    auto_case("bidiagonal chain", &T, "syncfree", NULL);
    gs_csr_free(&T);
    /* the 3D 7-point lower triangle, 60^3: 178 row levels of ~1200 rows, grid lines of 60 strictly linked
     * rows -> warp runs (120 run levels); auto_levels stays T's 178 */
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson3d(60, 60, 60, &A));
    GS_ASSERT_OK(tri_from_matrix(&A, GS_LOWER, false, &T));
    assert_int_equal(gs_csr_levels(&T, true, NULL), 178);
    auto_case("poisson3d 60^3 lower", &T, "syncfree", "wruns");
    gs_csr_free(&T);
    gs_csr_free(&A);
}

/* "PART/PARTS" -> the variants k with k % PARTS == PART, compacted in place (false: malformed). */
static bool keep_part(const char *spec, variant *kept, int *n)
{
    int part = -1, parts = 0, used = 0, m = 0;
    if (sscanf(spec, "%d/%d%n", &part, &parts, &used) != 2 || spec[used] || parts < 1 || part < 0 || part >= parts)
        return false;
    for (int k = 0; k < *n; k++)
        if (k % parts == part) kept[m++] = kept[k];
    *n = m;
    return true;
}

int main(int argc, char **argv)
{
    static variant kept[16];
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s TYPE [GROUP [PART/PARTS]]\n", argv[0]);
        return 2;
    }
    ts_type = argv[1];
    deterministic = strcmp(ts_type, "cusparse") != 0;
    const char *group = argc >= 3 ? argv[2] : "default";
    for (size_t k = 0; k < sizeof groups / sizeof groups[0]; k++)
        if (strcmp(group, groups[k].name) == 0) {
            variants = groups[k].v;
            nvariants = groups[k].n;
        }
    if (!variants || nvariants > (int)(sizeof kept / sizeof kept[0])) {
        fprintf(stderr, "%s: unknown group '%s'\n", argv[0], group);
        return 2;
    }
    if (argc == 4) {
        for (int k = 0; k < nvariants; k++) kept[k] = variants[k];
        if (!keep_part(argv[3], kept, &nvariants)) {
            fprintf(stderr, "%s: part '%s' is not PART/PARTS with 0 <= PART < PARTS\n", argv[0], argv[3]);
            return 2;
        }
        variants = kept;
    }
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_repeat_reanalyse_view),
        cmocka_unit_test(test_backend_mismatch),
        cmocka_unit_test(test_auto_rule),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
