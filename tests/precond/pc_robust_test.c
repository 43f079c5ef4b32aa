/* Tests of the robustness options of the ILU plug-ins on the host backend: the ilutp preconditioner
 * (z = Q U^{-1} L^{-1} r from gs_ilutp's factors, its report keys), zero_pivot = "grow" and milu through
 * the configuration, and the stability estimate ||M^{-1} 1||_inf ||A||_inf of gs_pc_setup_numeric with
 * preconditioner.stability_limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "core/report.h"
#include "factor_dense.h"
#include "precond/factor.h"
#include "precond/precond.h"

static gs_pc *setup(pc_fixture *f, const char *type, const gs_csr *A)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create(type, f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    return pc;
}

/* ilutp on west0067 and impcol_a: apply = Q U^{-1} L^{-1} r with the factors and permutation of
 * gs_ilutp under the same options; the report names the exchanges. */
static void test_ilutp_apply(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "trisolve.lower.type = \"reference\"");
    pc_fixture_set(f, "trisolve.upper.type = \"reference\"");
    pc_fixture_set(f, "preconditioner.drop_tolerance = 1e-4");
    pc_fixture_set(f, "preconditioner.max_fill = 20");
    pc_fixture_set(f, "preconditioner.pivot_tolerance = 0.5");
    const char *names[] = {"west0067.mtx", "impcol_a.mtx"};
    for (int m = 0; m < 2; m++) {
        gs_csr A = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_test_load(names[m], &A));
        gs_int n = A.nrows;
        gs_int *cp = malloc((size_t)n * sizeof *cp);
        double *r = malloc((size_t)n * sizeof *r), *z = malloc((size_t)n * sizeof *z),
               *y = malloc((size_t)n * sizeof *y), *v = malloc((size_t)n * sizeof *v);
        assert_true(cp && r && z && y && v);
        gs_factor_opts o;
        memset(&o, 0, sizeof o);
        o.drop_tol = 1e-4;
        o.max_fill = 20;
        o.perm_tol = 0.5;
        o.shift = 1e-8;
        o.min_pivot = 1e-8;
        gs_factor_info info;
        GS_ASSERT_OK(gs_ilutp(&A, &o, &L, &U, cp, &info));
        assert_true(info.columns_exchanged > 0);
        gs_pc *pc = setup(f, "ilutp", &A);
        uint64_t seed = 9;
        for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.4;
        pc_fixture_apply(f, pc, r, z);
        pc_fixture_trisolve(&L, true, true, r, y);
        pc_fixture_trisolve(&U, false, false, y, v);
        double *zr = y; /* z = Q v: z[cp[k]] = v[k] */
        for (gs_int k = 0; k < n; k++) zr[cp[k]] = v[k];
        double err = gs_test_rel_diff(n, z, zr);
        if (err > 1e-14) fail_msg("%s: ilutp apply differs from Q U\\(L\\r) by %g", names[m], err);

        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_pc_view(pc, rep);
        assert_string_equal(pc_fixture_find(rep, "preconditioner.factorization")->s, "ILUTP");
        assert_true(pc_fixture_find(rep, "preconditioner.pivot_tolerance")->d == 0.5);
        assert_int_equal(pc_fixture_find(rep, "preconditioner.columns_exchanged")->i, info.columns_exchanged);
        assert_int_equal(pc_fixture_find(rep, "preconditioner.nnz_L")->i, L.nnz);
        assert_int_equal(pc_fixture_find(rep, "preconditioner.nnz_U")->i, U.nnz);
        assert_true(pc_fixture_find(rep, "preconditioner.shift_used")->d == 0.0);
        assert_int_equal(pc_fixture_find(rep, "preconditioner.refactorizations")->i, 0);
        assert_false(pc_fixture_find(rep, "preconditioner.milu")->i);
        assert_string_equal(pc_fixture_find(rep, "preconditioner.factor_on")->s, "host");
        assert_true(isfinite(pc_fixture_find(rep, "preconditioner.stability_estimate")->d));
        gs_report_destroy(&rep);
        gs_pc_destroy(&pc);
        free(cp);
        free(r);
        free(z);
        free(y);
        free(v);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&A);
    }
}

/* pivot_tolerance 0: ilutp applies as ilut (no exchange, the same result bit for bit). */
static void test_ilutp_tol0_is_ilut(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.pivot_tolerance = 0");
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_load("sherman1.mtx", &A));
    gs_int n = A.nrows;
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    assert_true(r && z1 && z2);
    for (gs_int i = 0; i < n; i++) r[i] = sin(0.1 * i);
    gs_pc *p1 = setup(f, "ilut", &A), *p2 = setup(f, "ilutp", &A);
    pc_fixture_apply(f, p1, r, z1);
    pc_fixture_apply(f, p2, r, z2);
    assert_memory_equal(z1, z2, (size_t)n * sizeof *z1);
    assert_true(p1->stability_estimate == p2->stability_estimate);
    gs_pc_destroy(&p1);
    gs_pc_destroy(&p2);
    free(r);
    free(z1);
    free(z2);
    gs_csr_free(&A);
}

/* zero_pivot = grow through the configuration, for ilu0 (west0067: zero diagonals) and ilut: the report
 * gives the alpha and the count, the factors pass the pivot bound. */
static void test_grow_through_config(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.zero_pivot = \"grow\"");
    pc_fixture_set(f, "preconditioner.shift = 1e-6");
    pc_fixture_set(f, "preconditioner.min_pivot = 1e-4");
    const char *types[] = {"ilu0", "ilut", "iluk"};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    for (int t = 0; t < 3; t++) {
        gs_pc *pc = setup(f, types[t], &A);
        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_pc_view(pc, rep);
        double alpha = pc_fixture_find(rep, "preconditioner.shift_used")->d;
        long long refact = pc_fixture_find(rep, "preconditioner.refactorizations")->i;
        printf("%s west0067 grow: alpha %g after %lld refactorizations, stability estimate %g\n", types[t], alpha,
               refact, pc_fixture_find(rep, "preconditioner.stability_estimate")->d);
        assert_true(refact >= 1 && refact <= GS_FACTOR_GROW_MAX);
        double want = 1e-6;
        for (long long k = 1; k < refact; k++) want *= 10.0;
        assert_true(alpha == want);
        assert_int_equal(pc_fixture_find(rep, "preconditioner.pivots_shifted")->i, 0);
        gs_report_destroy(&rep);
        gs_pc_destroy(&pc);
    }
    /* the error policy names the row instead */
    pc_fixture_set(f, "preconditioner.zero_pivot = \"error\"");
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create("ilu0", f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_NUMERIC, "zero pivot at row");
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

/* milu through the configuration: reported; IC(0) refuses it; the GPU factorization is never asked for
 * it (factor_on = "device" is refused with the reason). */
static void test_milu_config(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.milu = true");
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(15, 11, 1.0, &A));
    gs_pc *pc = setup(f, "ilu0", &A);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_true(pc_fixture_find(rep, "preconditioner.milu")->i);
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);

    GS_ASSERT_OK(gs_pc_create("ic0", f->be, f->cfg, &pc));
    GS_ASSERT_FAILS(gs_pc_setup_symbolic(pc, &A), GS_ERR_CONFIG, "milu");
    gs_pc_destroy(&pc);

    pc_fixture_set(f, "preconditioner.factor_on = \"device\"");
    GS_ASSERT_OK(gs_pc_create("ilu0", f->be, f->cfg, &pc));
    gs_error_clear();
    assert_int_equal(gs_pc_setup_symbolic(pc, &A), GS_ERR_CONFIG); /* host backend: no GPU at all */
    gs_error_clear();
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

/* ||A||_inf * max_i |(A^{-1} 1)_i| by dense LU (no pivoting: A diagonally dominant here). */
static double dense_estimate(const gs_csr *A)
{
    int n = A->nrows;
    double *a = dense_from_csr(A), *x = malloc((size_t)n * sizeof *x), anorm = 0.0, m = 0.0;
    assert_non_null(x);
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += fabs(a[i * n + j]);
        anorm = fmax(anorm, s);
    }
    dense_lu(n, a);
    for (int i = 0; i < n; i++) {
        x[i] = 1.0;
        for (int j = 0; j < i; j++) x[i] -= a[i * n + j] * x[j];
    }
    for (int i = n - 1; i >= 0; i--) {
        for (int j = i + 1; j < n; j++) x[i] -= a[i * n + j] * x[j];
        x[i] /= a[i * n + i];
    }
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    free(a);
    free(x);
    return m * anorm;
}

/* The estimate by hand: jacobi (max 1/|d_i| times ||A||_inf), an exact ilu0 (tridiagonal: M = A) and an
 * exact ilutp (tau 0, p n); none has none. */
static void test_stability_estimate_values(void **state)
{
    pc_fixture *f = *state;
    gs_csr T = {0};
    make_tridiag(45, -1.0, 2.5, -1.3, &T); /* inner rows: |-1| + 2.5 + |-1.3| = 4.8 */
    T.val[0] = 5.0;                         /* row 0: 5 + 1.3 = 6.3 = ||A||_inf; max 1/d_i stays 1/2.5 */

    gs_pc *pc = setup(f, "jacobi", &T);
    double want = (1.0 / 2.5) * 6.3;
    assert_true(fabs(pc->stability_estimate - want) <= 1e-15 * want);
    gs_pc_destroy(&pc);

    pc = setup(f, "ilu0", &T);
    want = dense_estimate(&T);
    printf("tridiagonal: ||A^-1 1||_inf ||A||_inf = %.6g, ilu0's estimate %.6g\n", want, pc->stability_estimate);
    assert_true(fabs(pc->stability_estimate - want) <= 1e-12 * want);
    gs_pc_destroy(&pc);

    pc_fixture_set(f, "preconditioner.drop_tolerance = 0");
    pc_fixture_set(f, "preconditioner.max_fill = 1000");
    pc_fixture_set(f, "preconditioner.pivot_tolerance = 1");
    gs_csr R = {0};
    GS_ASSERT_OK(gs_test_random_sparse(53, 4, 1.5, 11, &R));
    pc = setup(f, "ilutp", &R);
    want = dense_estimate(&R);
    assert_true(fabs(pc->stability_estimate - want) <= 1e-12 * want);
    gs_pc_destroy(&pc);

    pc = setup(f, "none", &R);
    assert_true(isnan(pc->stability_estimate));
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_null(gs_report_find(rep, "preconditioner.stability_estimate"));
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);
    gs_csr_free(&R);
    gs_csr_free(&T);
}

/* stability_limit: an estimate above it fails the numeric setup with GS_ERR_NUMERIC and the message; the
 * preconditioner is then unusable and the report still shows the estimate; a limit above it passes. */
static void test_stability_limit(void **state)
{
    pc_fixture *f = *state;
    gs_csr T = {0};
    make_tridiag(45, -1.0, 2.5, -1.3, &T);
    double est = dense_estimate(&T);
    char set[128];
    snprintf(set, sizeof set, "preconditioner.stability_limit = %.17g", 0.5 * est);
    pc_fixture_set(f, set);
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create("ilu0", f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &T));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &T), GS_ERR_NUMERIC, "unstable factors: ||M^-1 1||_inf * ||A||_inf = ");
    gs_error_clear();
    assert_int_not_equal(pc->state, GS_PC_READY);
    gs_vector *v = NULL, *w = NULL;
    GS_ASSERT_OK(gs_vec_create(f->be, T.nrows, &v));
    GS_ASSERT_OK(gs_vec_create(f->be, T.nrows, &w));
    GS_ASSERT_FAILS(gs_pc_apply(pc, v, w), GS_ERR_ARG, "before its numeric setup");
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_true(fabs(pc_fixture_find(rep, "preconditioner.stability_estimate")->d - est) <= 1e-12 * est);
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);

    snprintf(set, sizeof set, "preconditioner.stability_limit = %.17g", 2.0 * est);
    pc_fixture_set(f, set);
    pc = setup(f, "ilu0", &T);
    GS_ASSERT_OK(gs_pc_apply(pc, v, w));
    /* a second numeric setup reuses the estimate's vectors and gives the same value */
    double e1 = pc->stability_estimate;
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &T));
    assert_true(pc->stability_estimate == e1);
    gs_pc_destroy(&pc);
    gs_vec_destroy(&v);
    gs_vec_destroy(&w);
    gs_csr_free(&T);
}

/* A non-finite estimate is kept as such (limit 0) and rejected by any limit > 0: the lower bidiagonal
 * A = [[e, 0, 0], [1, e, 0], [0, 1, e]], e = 1e-200, is its own ILU(0) and A^{-1} 1 overflows. */
static void test_stability_nonfinite(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_alloc(&A, 3, 3, 5, true));
    const gs_int rp[] = {0, 1, 3, 5}, ci[] = {0, 0, 1, 1, 2};
    const double va[] = {1e-200, 1.0, 1e-200, 1.0, 1e-200};
    memcpy(A.rowptr, rp, sizeof rp);
    memcpy(A.colind, ci, sizeof ci);
    memcpy(A.val, va, sizeof va);
    gs_pc *pc = setup(f, "ilu0", &A);
    assert_true(isinf(pc->stability_estimate));
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_true(isinf(pc_fixture_find(rep, "preconditioner.stability_estimate")->d));
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);

    pc_fixture_set(f, "preconditioner.stability_limit = 1e300");
    GS_ASSERT_OK(gs_pc_create("ilu0", f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_NUMERIC, "is not finite");
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_ilutp_apply),
        PC_FIXTURE_TEST(test_ilutp_tol0_is_ilut),
        PC_FIXTURE_TEST(test_grow_through_config),
        PC_FIXTURE_TEST(test_milu_config),
        PC_FIXTURE_TEST(test_stability_estimate_values),
        PC_FIXTURE_TEST(test_stability_limit),
        PC_FIXTURE_TEST(test_stability_nonfinite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
