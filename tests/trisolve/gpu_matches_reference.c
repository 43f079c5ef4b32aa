/* A GPU triangular solver (TS_TYPE, set per test executable) against the host reference on the whole
 * case suite: random factors (n = 1000, 4099; empty rows; a dense row), a 5000-row bidiagonal chain,
 * diagonal and identity factors, mixed wide/thin levels, 3D Poisson triangles and triangles of real
 * matrices; lower and upper, unit and non-unit. x is poisoned with NaN before every solve; each
 * case is solved twice (graph replay / new generation) and must agree within TRI_TOL; deterministic
 * solvers must give bit-identical results. Also: switching b/x vectors, many consecutive solves,
 * re-analysis with new values, and the view keys. */
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

#ifndef TS_TYPE
#error "TS_TYPE must name the trisolve type under test"
#endif
#ifndef TS_DETERMINISTIC
#define TS_DETERMINISTIC 1
#endif

static gs_backend *gpu, *host;

static int setup(void **state) { return tri_backends_create(&gpu, &host); }

static int teardown(void **state)
{
    tri_backends_destroy(&gpu, &host);
    return 0;
}

/* Sync-free variants: a solver of the case analysed with the environment as it is (ta, if asked for) and one
 * analysed with the measurement knob KNOB set the other way (t2; TESTED is the knob's value under test,
 * 0 or 1), with the parameters PRM (NULL: the defaults). */
static inline void knob_pair(const tri_case *c, const gs_trisolve_params *prm, const char *knob, int tested,
                             gs_trisolve **ta, gs_trisolve **t2)
{
    if (ta) {
        GS_ASSERT_OK(gs_trisolve_create(TS_TYPE, gpu, c->uplo, c->unit, prm, ta));
        GS_ASSERT_OK(gs_trisolve_analyse(*ta, &c->T));
    }
    setenv(knob, tested == 1 ? "0" : "1", 1);
    GS_ASSERT_OK(gs_trisolve_create(TS_TYPE, gpu, c->uplo, c->unit, prm, t2));
    GS_ASSERT_OK(gs_trisolve_analyse(*t2, &c->T));
    setenv(knob, tested == 1 ? "1" : "0", 1);
}

/* The parameters of the double / single comparisons (one sweep, the dependency order: ignored by the exact
 * solvers; single: the factor's values in float). */
static inline gs_trisolve_params knob_params(int single)
{
    gs_trisolve_params prm;
    memset(&prm, 0, sizeof prm);
    prm.sweeps = 1;
    prm.block_order = "dependency";
    prm.single = single == 1;
    return prm;
}

/* How many stages of the solver (the whole of it, or the merged schedule's .td and .m) report KEY = VALUE. */
static inline int stages_with(gs_trisolve *ts, const char *key, long long value)
{
    gs_report *rr = NULL;
    int count = 0;
    GS_ASSERT_OK(gs_report_create(&rr));
    gs_trisolve_view(ts, rr, "t");
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



static void check(const char *what, const tri_case *c, gs_int n, const double *x, const double *xr)
{
    double e = gs_test_rel_diff(n, x, xr);
    if (!(e <= TRI_TOL)) fprintf(stderr, "%s %s (%s): relative error %.3e > %.1e\n", TS_TYPE, c->name, what, e, TRI_TOL);
    assert_true(e <= TRI_TOL);
}

static void test_suite(void **state)
{
    tri_suite S;
    int folded = 0; /* TS_TD_FOLD: cases whose merged schedule folds T_D into M */
    int early = 0;  /* TS_REM_PREFETCH: cases whose kernel (a stage's) polls the remainder early */
    int once = 0;   /* TS_ONCE: stages solved by a block per 128 positions instead of the persistent grid */
    GS_ASSERT_OK(tri_suite_build(&S, true));
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
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

        gs_trisolve *ts = NULL;
        gs_vector *b = NULL, *b2 = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b2));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &y));
        GS_ASSERT_OK(gs_vec_upload(b, hb));
        GS_ASSERT_OK(gs_vec_upload(b2, hb2));
        GS_ASSERT_OK(gs_trisolve_create(TS_TYPE, gpu, c->uplo, c->unit, NULL, &ts));
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));

        tri_gpu_solve(ts, b, x, x1, poison);
        check("first solve", c, n, x1, xr);
        tri_gpu_solve(ts, b, x, x2, poison); /* replay */
        check("second solve", c, n, x2, xr);
        if (TS_DETERMINISTIC) assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
#ifdef TS_TD_ONE_PASS
        { /* the merged first stage the other way (one launch / a launch per level): the same bits */
            gs_trisolve *t2 = NULL;
            knob_pair(c, NULL, "GS_SF_TD_ONE_PASS", TS_TD_ONE_PASS, NULL, &t2);
            tri_gpu_solve(t2, b, x, x2, poison);
            assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
            gs_trisolve_destroy(&t2);
        }
#endif
#ifdef TS_TD_FOLD
        { /* T_D folded into M's kernel or not (the one-launch first stage), in double and in single: the same
           * bits; count the cases that fold */
            for (int single = 0; single < 2; single++) {
                gs_trisolve *tf = NULL, *t2 = NULL;
                const gs_trisolve_params prm = knob_params(single);
                knob_pair(c, &prm, "GS_SF_TD_FOLD", TS_TD_FOLD, &tf, &t2);
                gs_report *fr = NULL;
                GS_ASSERT_OK(gs_report_create(&fr));
                gs_trisolve_view(tf, fr, "t");
                const gs_report_entry *fe = gs_report_find(fr, "t.merge_td_fold");
                if (fe && fe->i) folded++;
                if (fe) assert_true(fe->i == 0 || TS_TD_FOLD == 1);
                gs_report_destroy(&fr);
                tri_gpu_solve(tf, b, x, x1, poison);
                if (single == 0) check("fold", c, n, x1, xr);
                tri_gpu_solve(t2, b, x, x2, poison);
                assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
                gs_trisolve_destroy(&tf);
                gs_trisolve_destroy(&t2);
            }
            tri_gpu_solve(ts, b, x, x1, poison); /* x1 again from the solver under test */
        }
#endif
#ifdef TS_REM_PREFETCH
        { /* the remainder polled with the ELL part or after it: the same arithmetic, so the same bits; count
           * the cases (stages) that poll it early */
            gs_trisolve *t2 = NULL;
            knob_pair(c, NULL, "GS_SF_REM_PREFETCH", TS_REM_PREFETCH, NULL, &t2);
            tri_gpu_solve(t2, b, x, x2, poison);
            assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
            gs_trisolve_destroy(&t2);
            early += stages_with(ts, "remainder_prefetch", 1);
        }
#endif
#ifdef TS_ONCE
        { /* a block per 128 positions or the persistent grid: the same rows, the same arithmetic, so the same
           * bits (twice each: both generations of the ready values), in double and in single; count the stages
           * that run without the persistent grid */
            for (int single = 0; single < 2; single++) {
                gs_trisolve *ta = NULL, *t2 = NULL;
                const gs_trisolve_params prm = knob_params(single);
                knob_pair(c, &prm, "GS_SF_ONCE", TS_ONCE, &ta, &t2);
                for (int rep = 0; rep < 2; rep++) {
                    tri_gpu_solve(ta, b, x, x1, poison);
                    if (single == 0) check("once", c, n, x1, xr);
                    tri_gpu_solve(t2, b, x, x2, poison);
                    assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
                }
                gs_trisolve_destroy(&ta);
                gs_trisolve_destroy(&t2);
            }
            tri_gpu_solve(ts, b, x, x1, poison); /* x1 again from the solver under test */
            once += stages_with(ts, "persistent", 0);
        }
#endif
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
    }
    tri_suite_free(&S);
#ifdef TS_TD_FOLD
    fprintf(stderr, "%s: %d cases fold T_D into M\n", TS_TYPE, folded);
    if (TS_TD_FOLD == 1) assert_true(folded > 0);
#endif
#ifdef TS_REM_PREFETCH
    fprintf(stderr, "%s: %d stages poll the remainder early\n", TS_TYPE, early);
    if (TS_REM_PREFETCH == 1) assert_true(early > 0);
#endif
#ifdef TS_ONCE
    fprintf(stderr, "%s: %d stages without the persistent grid\n", TS_TYPE, once);
    if (TS_ONCE == 1) assert_true(once > 0);
#endif
    (void)folded;
    (void)early;
    (void)once;
}

/* Many solves in a row without host syncs between them (flags generations, graph replays), then a
 * re-analysis with scaled values (x scales inversely) and a view. */
static void test_repeat_reanalyse_view(void **state)
{
    const gs_int n = 4099;
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 6, GS_UPPER, false, 77, &T));
    tri_case c = {"random4099-repeat", T, GS_UPPER, false};
    double *hb = NULL, *xr = NULL, *hx = NULL, *poison = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(hx, n));
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    tri_rhs(n, 5, hb);
    tri_host_solve(host, "reference", &c.T, c.uplo, c.unit, NULL, hb, xr);

    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL, *z = NULL;
    GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &z));
    GS_ASSERT_OK(gs_vec_upload(b, hb));
    GS_ASSERT_OK(gs_trisolve_create(TS_TYPE, gpu, GS_UPPER, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_vec_upload(x, poison));
    /* alternate x and z so every solve must write all of its output; racecheck (GS_TEST_QUICK=2): 20 */
    const int reps = gs_test_quick() >= 2 ? 20 : 200;
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
    assert_string_equal(e->s, TS_TYPE);
    assert_non_null(gs_report_find(rep, "trisolve.upper.analysis_time"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.implementation"));
    if (strcmp(TS_TYPE, "levelset") == 0) {
        e = gs_report_find(rep, "trisolve.upper.levels");
        assert_non_null(e);
        assert_int_equal(e->i, gs_csr_levels(&T, false, NULL));
        assert_non_null(gs_report_find(rep, "trisolve.upper.chains"));
        assert_non_null(gs_report_find(rep, "trisolve.upper.graph_kernels"));
    }
    if (strcmp(TS_TYPE, "auto") == 0) assert_non_null(gs_report_find(rep, "trisolve.upper.selected"));
#ifdef TS_SCHEDULE
    e = gs_report_find(rep, "trisolve.upper.schedule");
    assert_non_null(e);
    /* merged forced: the level order only where the fill limit refused it (reported) */
    if (strcmp(TS_SCHEDULE, "merged") == 0 && gs_report_find(rep, "trisolve.upper.merge_refused_fill"))
        assert_string_equal(e->s, "levels");
    else
        assert_string_equal(e->s, TS_SCHEDULE);
#endif
    if (strcmp(TS_TYPE, "syncfree") == 0) assert_non_null(gs_report_find(rep, "trisolve.upper.schedule"));
#ifdef TS_TD_ONE_PASS /* merged: a first stage (T_D) of at most two levels in one launch, or one per level */
    {
        const gs_report_entry *sc = gs_report_find(rep, "trisolve.upper.schedule");
        if (sc && strcmp(sc->s, "merged") == 0) {
            const gs_report_entry *op = gs_report_find(rep, "trisolve.upper.merge_td_one_pass");
            const gs_report_entry *sy = gs_report_find(rep, "trisolve.upper.merge_td_level_sync");
            const gs_report_entry *lv = gs_report_find(rep, "trisolve.upper.td.levels");
            assert_non_null(op);
            assert_non_null(sy);
            assert_non_null(lv);
            assert_int_equal(op->i, sy->i == 1 && lv->i <= 2 ? TS_TD_ONE_PASS : 0);
        }
    }
#endif
#ifdef TS_TD_FOLD /* merged: folded only where the first stage is one launch of at most two levels */
    {
        const gs_report_entry *sc = gs_report_find(rep, "trisolve.upper.schedule");
        if (sc && strcmp(sc->s, "merged") == 0) {
            const gs_report_entry *fo = gs_report_find(rep, "trisolve.upper.merge_td_fold");
            const gs_report_entry *op = gs_report_find(rep, "trisolve.upper.merge_td_one_pass");
            assert_non_null(fo);
            assert_non_null(op);
            if (fo->i) assert_int_equal(op->i, 1);
            if (TS_TD_FOLD == 0) assert_int_equal(fo->i, 0);
        }
    }
#endif
#ifdef TS_REM_PREFETCH /* forced: the plan's remainder (if any) polled with the ELL part, or not */
    {
        const gs_report_entry *sc = gs_report_find(rep, "trisolve.upper.schedule");
        const bool merged = sc && strcmp(sc->s, "merged") == 0; /* each stage reports its own (.td, .m) */
        for (int k = 0; k < (merged ? 2 : 1); k++) {
            const char *stage = merged ? (k == 0 ? ".td" : ".m") : "";
            char key[128];
            snprintf(key, sizeof key, "trisolve.upper%s.remainder_nnz", stage);
            e = gs_report_find(rep, key);
            assert_non_null(e);
            snprintf(key, sizeof key, "trisolve.upper%s.remainder_prefetch", stage);
            const gs_report_entry *rp = gs_report_find(rep, key);
            assert_non_null(rp);
            snprintf(key, sizeof key, "trisolve.upper%s.lanes_per_row", stage);
            const gs_report_entry *lp = gs_report_find(rep, key);
            assert_non_null(lp);
            /* any kernel of rows (a lane per row or lanes sharing one) polls the remainder early */
            (void)lp;
            assert_int_equal(rp->i, e->i > 0 ? TS_REM_PREFETCH : 0);
        }
    }
#endif
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

/* A host vector given to a GPU solver is refused before any kernel runs. */
static void test_backend_mismatch(void **state)
{
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(100, 3, GS_LOWER, true, 1, &T));
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(gs_vec_create(host, 100, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, 100, &x));
    GS_ASSERT_OK(gs_trisolve_create(TS_TYPE, gpu, GS_LOWER, true, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "must live on the solver's backend");
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_csr_free(&T);
}

/* auto's rule on cuda: cusparse for a small factor of fewer than 10 levels, syncfree for a deep one; both
 * solve correctly (x poisoned first). Only in the auto executable. */
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

static void test_auto_rule(void **state)
{
    if (strcmp(TS_TYPE, "auto") != 0) skip();
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

int main(void)
{
    gs_test_require_gpu();
#ifdef TS_SCHEDULE /* the sync-free schedule forced for the whole executable */
    setenv("GS_SYNCFREE_SCHEDULE", TS_SCHEDULE, 1);
#endif
#ifdef TS_MERGE /* levels per group of the merged schedule */
    setenv("GS_SYNCFREE_MERGE", TS_MERGE, 1);
#endif
#ifdef TS_TD_SYNC /* the merged schedule's first stage: level-synchronous (1) or sync-free (0) */
    setenv("GS_SF_TD_SYNC", TS_TD_SYNC, 1);
#endif
#ifdef TS_TD_ONE_PASS /* merged: a two-level first stage in one launch (1) or one launch per level (0) */
    setenv("GS_SF_TD_ONE_PASS", TS_TD_ONE_PASS == 1 ? "1" : "0", 1);
#endif
#ifdef TS_TD_FOLD /* merged, two-level first stage: folded into M's kernel (1) or its own launch (0) */
    setenv("GS_SF_TD_FOLD", TS_TD_FOLD == 1 ? "1" : "0", 1);
#endif
#ifdef TS_REM_PREFETCH /* sync-free: the first remainder entries polled with the ELL part (1) or after it (0) */
    setenv("GS_SF_REM_PREFETCH", TS_REM_PREFETCH == 1 ? "1" : "0", 1);
#endif
#ifdef TS_ONCE /* sync-free: a block per 128 positions (1) or the persistent grid (0) where it applies */
    setenv("GS_SF_ONCE", TS_ONCE == 1 ? "1" : "0", 1);
#endif
#ifdef TS_LANES_PER_ROW /* sync-free: lanes sharing a row of more than 4 entries (1, 2, 4) */
    setenv("GS_SF_LANES_PER_ROW", TS_LANES_PER_ROW, 1);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_repeat_reanalyse_view),
        cmocka_unit_test(test_backend_mismatch),
        cmocka_unit_test(test_auto_rule),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
