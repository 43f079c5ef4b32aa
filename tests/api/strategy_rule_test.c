/* The automatic rule (api/strategy.c) on each class of matrix: facts computed from small matrices with
 * the structure of each class, and facts set by hand at the class boundaries. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "api/strategy.h"
#include "core/csr_stats.h"
#include "core/mem.h"

static void facts_of(const gs_csr *A, gs_csr_stats *s) { GS_ASSERT_OK(gs_csr_stats_compute(A, s)); }

static const char *first_rung(const gs_auto_choice *c) { return c->ladder[c->first]->name; }

/* Rung settings that set solver.type and preconditioner.type: every rung resolves both. */
static void assert_rungs_complete(const gs_auto_choice *c)
{
    for (int r = 0; r < c->nrungs; r++) {
        bool solver = false, pc = false;
        for (int k = 0; k < GS_RUNG_MAX_SETTINGS && c->ladder[r]->settings[k]; k++) {
            solver |= strncmp(c->ladder[r]->settings[k], "solver.type=", 12) == 0;
            pc |= strncmp(c->ladder[r]->settings[k], "preconditioner.type=", 20) == 0;
        }
        assert_true(solver && pc);
    }
}

static void test_spd(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_csr_stats s;
    gs_auto_choice c;
    GS_ASSERT_OK(gs_test_laplace2d(13, 11, &A));
    facts_of(&A, &s);
    gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
    assert_int_equal(c.cls, GS_CLASS_SPD);
    assert_string_equal(first_rung(&c), "ic0");
    assert_non_null(strstr(c.why, "symmetric"));
    assert_rungs_complete(&c);
    gs_csr_free(&A);
}

static void test_nonsymmetric(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_csr_stats s;
    gs_auto_choice c;
    GS_ASSERT_OK(gs_test_convdiff2d(15, 9, 20.0, &A));
    facts_of(&A, &s);
    assert_false(s.sym_numerical);
    gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
    assert_int_equal(c.cls, GS_CLASS_NONSYM);
    assert_string_equal(first_rung(&c), "ilu0");
    assert_rungs_complete(&c);
    gs_csr_free(&A);
}

/* A zero diagonal entry (west0067's kind of matrix): matching first. */
static void test_zero_diagonal(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_csr_stats s;
    gs_auto_choice c;
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    facts_of(&A, &s);
    assert_true(s.diag_missing + s.diag_zero > 0);
    gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
    assert_int_equal(c.cls, GS_CLASS_WEAK_DIAG);
    assert_string_equal(first_rung(&c), "mwm-ilut");
    assert_non_null(strstr(c.why, "zero or missing"));
    gs_csr_free(&A);
}

/* A symmetric saddle point [[I, B], [B^T, 0]]: indefinite, matching first. */
static void test_saddle_point(void **state)
{
    (void)state;
    enum { N1 = 40, N2 = 17 };
    gs_int ri[N1 + 4 * N2], ci[N1 + 4 * N2];
    double v[N1 + 4 * N2];
    int k = 0;
    for (int i = 0; i < N1; i++) ri[k] = i, ci[k] = i, v[k++] = 2.0;
    for (int j = 0; j < N2; j++) { /* B(2j, j) = 1, B(2j+1, j) = -1 and the transposes */
        ri[k] = 2 * j, ci[k] = N1 + j, v[k++] = 1.0;
        ri[k] = N1 + j, ci[k] = 2 * j, v[k++] = 1.0;
        ri[k] = 2 * j + 1, ci[k] = N1 + j, v[k++] = -1.0;
        ri[k] = N1 + j, ci[k] = 2 * j + 1, v[k++] = -1.0;
    }
    gs_csr A = {0};
    gs_csr_stats s;
    gs_auto_choice c;
    GS_ASSERT_OK(gs_csr_from_coo(N1 + N2, N1 + N2, k, ri, ci, v, &A));
    facts_of(&A, &s);
    assert_true(s.sym_numerical);
    assert_int_equal(s.diag_missing, N2);
    gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
    assert_int_equal(c.cls, GS_CLASS_SYM_INDEF);
    assert_string_equal(first_rung(&c), "iluk1");
    gs_csr_free(&A);
}

/* The boundaries set by hand: badly scaled rows and weak diagonals move a nonsymmetric matrix to the
 * matching rungs; a negative diagonal keeps a symmetric matrix off CG. */
static void test_boundaries(void **state)
{
    (void)state;
    gs_csr_stats s;
    gs_auto_choice c;
    memset(&s, 0, sizeof s);
    s.nrows = s.ncols = 1000;
    s.diag_positive = 1000;
    s.row_norm_min = 1.0;
    s.row_norm_max = GS_RULE_SCALE_SPREAD; /* at the limit: still fine */
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_NONSYM);
    s.row_norm_max = 2.0 * GS_RULE_SCALE_SPREAD;
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_WEAK_DIAG);
    s.row_norm_max = 1.0;
    s.diag_weak = 10; /* 1% of the rows: at the limit */
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_NONSYM);
    s.diag_weak = 11;
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_WEAK_DIAG);
    s.diag_weak = 0;
    s.sym_numerical = s.sym_structural = true;
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_SPD);
    s.diag_positive = 999;
    s.diag_negative = 1;
    gs_strategy_rule(&s, GS_BACKEND_CUDA, &c);
    assert_int_equal(c.cls, GS_CLASS_SYM_INDEF);
    assert_string_equal(gs_matrix_class_name(c.cls), "symmetric-indefinite");
}

/* The GPU trial: SPD-looking systems of at least GS_TRIAL_MIN_ROWS rows on the cuda backend, and the
 * projection of a trial's rate. */
static void test_trial(void **state)
{
    (void)state;
    gs_auto_choice c;
    memset(&c, 0, sizeof c);
    c.cls = GS_CLASS_SPD;
    assert_true(gs_strategy_wants_trial(&c, GS_BACKEND_CUDA, GS_TRIAL_MIN_ROWS));
    assert_false(gs_strategy_wants_trial(&c, GS_BACKEND_CUDA, GS_TRIAL_MIN_ROWS - 1));
    assert_false(gs_strategy_wants_trial(&c, GS_BACKEND_HOST, GS_TRIAL_MIN_ROWS));
    c.cls = GS_CLASS_NONSYM;
    assert_false(gs_strategy_wants_trial(&c, GS_BACKEND_CUDA, GS_TRIAL_MIN_ROWS));
    /* 50 iterations took ||r|| from 1 to 1e-2: 1e-8 needs 200 */
    assert_true(fabs(gs_strategy_projected_iterations(1.0, 1e-2, 50, 1e-8) - 200.0) < 1e-9);
    assert_true(gs_strategy_projected_iterations(1.0, 1e-9, 50, 1e-8) == 50.0); /* already there */
    assert_true(isinf(gs_strategy_projected_iterations(1.0, 1.0, 50, 1e-8)));   /* no progress */
    assert_true(isinf(gs_strategy_projected_iterations(1.0, 2.0, 50, 1e-8)));
    assert_true(isinf(gs_strategy_projected_iterations(0.0, 0.0, 50, 1e-8)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spd),          cmocka_unit_test(test_nonsymmetric),
        cmocka_unit_test(test_zero_diagonal), cmocka_unit_test(test_saddle_point),
        cmocka_unit_test(test_boundaries),   cmocka_unit_test(test_trial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
