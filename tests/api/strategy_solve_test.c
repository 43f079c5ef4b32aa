/* The strategy driver (gs_strategy_solve) on the host backend: the fallback ladder's order and records,
 * fallback off, the budget, the user's explicit configuration first, a zero-diagonal matrix solved
 * automatically, and the structurally singular stop. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "api/strategy.h"
#include "cfg/config.h"
#include "core/mem.h"

typedef struct fixture {
    gs_backend *be;
    gs_config *cfg;
    gs_csr A;
    double *b, *x0, *x;
} fixture;

static void setup(fixture *f, const char *matrix, const char *const *settings)
{
    memset(f, 0, sizeof *f);
    GS_ASSERT_OK(gs_backend_host_create(&f->be));
    GS_ASSERT_OK(gs_config_create(&f->cfg));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(f->cfg, *s));
    if (matrix)
        GS_ASSERT_OK(gs_test_load(matrix, &f->A));
    else
        GS_ASSERT_OK(gs_test_convdiff2d(23, 19, 30.0, &f->A));
    const gs_int n = f->A.nrows;
    double *ones = NULL;
    GS_ASSERT_OK(GS_MALLOC(ones, n));
    GS_ASSERT_OK(GS_MALLOC(f->b, n));
    GS_ASSERT_OK(GS_CALLOC(f->x0, n));
    GS_ASSERT_OK(GS_MALLOC(f->x, n));
    for (gs_int i = 0; i < n; i++) ones[i] = 1.0;
    gs_csr_spmv(1.0, &f->A, ones, 0.0, f->b);
    gs_free(&ones);
}

static void teardown(fixture *f)
{
    gs_free(&f->b);
    gs_free(&f->x0);
    gs_free(&f->x);
    gs_csr_free(&f->A);
    gs_config_destroy(&f->cfg);
    gs_backend_destroy(&f->be);
}

static const char *const AUTO[] = {"solver.type=auto", "preconditioner.type=auto", "system.matching=auto",
                                   "system.scaling=auto", "system.reorder=auto", NULL};

/* max_iterations = 0: every attempt stops at once, so the ladder is walked to its end, in order. */
static void test_ladder_order(void **state)
{
    (void)state;
    fixture f;
    const char *const s[] = {"solver.type=auto", "preconditioner.type=auto", "solver.max_iterations=0", NULL};
    setup(&f, NULL, s);
    gs_strategy_result r;
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, f.b, f.x0, f.cfg, true, NULL, f.x, &r));
    assert_true(r.automatic);
    assert_int_equal(r.choice.cls, GS_CLASS_NONSYM);
    assert_int_equal(r.nattempts, r.choice.nrungs);
    for (int k = 0; k < r.nattempts; k++) {
        assert_string_equal(r.rec[k].rung, r.choice.ladder[k]->name);
        assert_string_equal(r.rec[k].reason, "diverged_max_it");
        assert_false(r.rec[k].converged);
        for (int j = 0; j < k; j++) assert_true(strcmp(r.rec[k].method, r.rec[j].method) != 0);
    }
    assert_non_null(strstr(r.rec[0].method, "bicgstab + ilu0"));
    assert_non_null(strstr(r.rec[r.nattempts - 1].method, "ilutp"));
    assert_non_null(strstr(r.stopped, "every rung"));
    gs_strategy_result_free(&r);
    teardown(&f);
}

static void test_fallback_off_and_budget(void **state)
{
    (void)state;
    fixture f;
    const char *const s[] = {"solver.type=auto", "preconditioner.type=auto", "solver.max_iterations=0",
                             "solver.fallback_budget=1e-9", NULL};
    setup(&f, NULL, s);
    gs_strategy_result r;
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, f.b, f.x0, f.cfg, false, NULL, f.x, &r));
    assert_int_equal(r.nattempts, 1);
    assert_string_equal(r.stopped, "");
    gs_strategy_result_free(&r);
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, f.b, f.x0, f.cfg, true, NULL, f.x, &r));
    assert_int_equal(r.nattempts, 1);
    assert_non_null(strstr(r.stopped, "solver.fallback_budget"));
    gs_strategy_result_free(&r);
    teardown(&f);
}

/* Explicit types: the first attempt is the user's configuration as it is (preprocessing "auto" is
 * none), the ladder follows from its first rung. */
static void test_explicit_first(void **state)
{
    (void)state;
    fixture f;
    const char *const s[] = {"solver.type=bicgstab", "preconditioner.type=jacobi", "system.matching=auto",
                             "solver.max_iterations=0", NULL};
    setup(&f, NULL, s);
    gs_strategy_result r;
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, f.b, f.x0, f.cfg, true, NULL, f.x, &r));
    assert_false(r.automatic);
    assert_string_equal(r.rec[0].rung, "configuration");
    assert_string_equal(r.rec[0].method, "bicgstab + jacobi; matching none, scaling none, reorder none");
    assert_string_equal(r.rec[1].rung, "ilu0");
    assert_int_equal(r.nattempts, 1 + r.choice.nrungs);
    gs_strategy_result_free(&r);
    teardown(&f);
}

/* west0067 (65 of 67 diagonal entries zero): solved automatically, after a matching. */
static void test_zero_diagonal_auto(void **state)
{
    (void)state;
    fixture f;
    setup(&f, "west0067.mtx", AUTO);
    gs_strategy_result r;
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, f.b, f.x0, f.cfg, true, NULL, f.x, &r));
    assert_int_equal(r.choice.cls, GS_CLASS_WEAK_DIAG);
    assert_true(r.rec[r.chosen].converged);
    assert_true(r.final.residual_true <= 1e-8 * 10);
    assert_string_equal(gs_config_string(r.cfg, "system.matching"), "mwm");
    double err = 0.0;
    for (gs_int i = 0; i < f.A.nrows; i++) err = fmax(err, fabs(f.x[i] - 1.0));
    assert_true(err < 1e-4);
    gs_strategy_result_free(&r);
    teardown(&f);
}

/* A structurally singular matrix under matching: the attempt fails in preprocessing and the ladder
 * stops (no rung can help). */
static void test_structurally_singular(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof f);
    GS_ASSERT_OK(gs_backend_host_create(&f.be));
    GS_ASSERT_OK(gs_config_create(&f.cfg));
    for (const char *const *s = AUTO; *s; s++) GS_ASSERT_OK(gs_config_set(f.cfg, *s));
    /* rows 0 and 1 have entries in column 0 only; the diagonal of row 1 is missing */
    gs_int ri[] = {0, 1, 2, 2, 3, 3}, ci[] = {0, 0, 1, 2, 3, 2};
    double v[] = {1.0, 2.0, 3.0, 4.0, 5.0, 1.0};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 6, ri, ci, v, &f.A));
    double b[4] = {1, 2, 7, 6}, x0[4] = {0, 0, 0, 0}, x[4];
    gs_strategy_result r;
    GS_ASSERT_OK(gs_strategy_solve(f.be, &f.A, b, x0, f.cfg, true, NULL, x, &r));
    assert_int_equal(r.nattempts, 1);
    assert_string_equal(r.rec[0].reason, "diverged_pc_failed");
    assert_non_null(strstr(r.rec[0].detail, "structurally singular"));
    assert_non_null(strstr(r.stopped, "structurally singular"));
    gs_strategy_result_free(&r);
    gs_csr_free(&f.A);
    gs_config_destroy(&f.cfg);
    gs_backend_destroy(&f.be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ladder_order),        cmocka_unit_test(test_fallback_off_and_budget),
        cmocka_unit_test(test_explicit_first),      cmocka_unit_test(test_zero_diagonal_auto),
        cmocka_unit_test(test_structurally_singular),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
