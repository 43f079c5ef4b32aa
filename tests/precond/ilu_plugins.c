/* Tests of the ilu0 / iluk / ilut / ic0 preconditioner plug-ins (precond/ilu.c) on the host backend:
 * apply equals U \ (L \ r) computed here from the factors, exact settings invert A, report keys,
 * zero pivots, the IC(0) symmetry check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "cfg/config.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "factor_dense.h"
#include "precond/factor.h"
#include "precond/precond.h"

/* The plug-in by name through the registry. */
static void make_pc(pc_fixture *f, const char *type, gs_pc **pc)
{
    GS_ASSERT_OK(gs_pc_create(type, f->be, f->cfg, pc));
    assert_string_equal((*pc)->type, type);
}

static double *random_vector(gs_int n, uint64_t seed)
{
    double *r = malloc((size_t)n * sizeof *r);
    assert_non_null(r);
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.3;
    return r;
}

/* Set up pc on A, apply to a random r, compare with U \ (L \ r) for the given host factors. */
static void check_apply(pc_fixture *f, gs_pc *pc, const gs_csr *A, const gs_csr *L, bool unit_lower, const gs_csr *U)
{
    gs_int n = A->nrows;
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    double *r = random_vector(n, 42), *z = malloc((size_t)n * sizeof *z), *y = malloc((size_t)n * sizeof *y),
           *zr = malloc((size_t)n * sizeof *zr);
    assert_non_null(z);
    assert_non_null(y);
    assert_non_null(zr);
    pc_fixture_apply(f, pc, r, z);
    pc_fixture_trisolve(L, true, unit_lower, r, y);
    pc_fixture_trisolve(U, false, false, y, zr);
    double err = gs_test_rel_diff(n, z, zr);
    if (err > 1e-13) fail_msg("%s: apply differs from U\\(L\\r) by %g", pc->type, err);
    free(r);
    free(z);
    free(y);
    free(zr);
}

static void test_ilu0_apply(void **state)
{
    pc_fixture *f = *state;
    const char *solvers[] = {"trisolve.lower.type=reference", "trisolve.lower.type=auto"};
    for (int s = 0; s < 2; s++) {
        pc_fixture_set(f, solvers[s]);
        pc_fixture_set(f, s == 0 ? "trisolve.upper.type=reference" : "trisolve.upper.type=auto");
        gs_csr A = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_test_convdiff2d(9, 7, 0.8, &A));
        GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
        GS_ASSERT_OK(gs_ilu_numeric(&A, NULL, &L, &U, NULL));
        gs_pc *pc = NULL;
        make_pc(f, "ilu0", &pc);
        check_apply(f, pc, &A, &L, true, &U);
        assert_false(pc->variable);
        gs_pc_destroy(&pc);
        assert_null(pc);
        gs_csr_free(&A);
        gs_csr_free(&L);
        gs_csr_free(&U);
    }
}

static void test_iluk_apply(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.fill_level=2");
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_random_sparse(61, 4, 1.3, 8, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 2, &L, &U));
    GS_ASSERT_OK(gs_ilu_numeric(&A, NULL, &L, &U, NULL));
    gs_pc *pc = NULL;
    make_pc(f, "iluk", &pc);
    check_apply(f, pc, &A, &L, true, &U);
    gs_pc_destroy(&pc);
    /* ilu0 ignores fill_level */
    gs_csr_free(&L);
    gs_csr_free(&U);
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    GS_ASSERT_OK(gs_ilu_numeric(&A, NULL, &L, &U, NULL));
    make_pc(f, "ilu0", &pc);
    check_apply(f, pc, &A, &L, true, &U);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

static void test_ilut_apply(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.drop_tolerance=0.01");
    pc_fixture_set(f, "preconditioner.max_fill=3");
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(8, 8, 2.0, &A));
    gs_factor_opts o = {GS_ZERO_PIVOT_ERROR, 1e-8, 0, 0.01, 3, 0, NULL, 0.0, false, 0.0};
    GS_ASSERT_OK(gs_ilut(&A, &o, &L, &U, NULL));
    gs_pc *pc = NULL;
    make_pc(f, "ilut", &pc);
    check_apply(f, pc, &A, &L, true, &U);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

static void test_ic0_apply(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, L = {0}, LT = {0};
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &A));
    GS_ASSERT_OK(gs_ic0(&A, NULL, &L, &LT, NULL));
    gs_pc *pc = NULL;
    make_pc(f, "ic0", &pc);
    check_apply(f, pc, &A, &L, false, &LT);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&LT);
}

/* precision = single on the host backend: the host triangular solvers store double factors only, so the
 * numeric setup refuses it with a message naming the key and the backend (never silently double) */
static void test_single_precision_host_refused(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "preconditioner.precision=single");
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson2d(9, 7, &A));
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create("ilu0", f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_UNSUPPORTED, "preconditioner.precision");
    gs_pc_destroy(&pc);
    GS_ASSERT_OK(gs_pc_create("none", f->be, f->cfg, &pc)); /* nothing to store: accepted */
    gs_csr_free(&A);
    gs_pc_destroy(&pc);
}

/* ILU(k >= n) and ILUT(n, 0) are exact: A z = r. */
static void test_exact_settings_invert_A(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_random_sparse(50, 3, 1.2, 77, &A));
    gs_int n = A.nrows;
    pc_fixture_set(f, "preconditioner.fill_level=50");
    pc_fixture_set(f, "preconditioner.drop_tolerance=0");
    pc_fixture_set(f, "preconditioner.max_fill=50");
    const char *types[] = {"iluk", "ilut"};
    for (int t = 0; t < 2; t++) {
        gs_pc *pc = NULL;
        make_pc(f, types[t], &pc);
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        double *r = random_vector(n, 5), *z = malloc((size_t)n * sizeof *z), *az = malloc((size_t)n * sizeof *az);
        assert_non_null(z);
        assert_non_null(az);
        pc_fixture_apply(f, pc, r, z);
        gs_csr_spmv(1.0, &A, z, 0.0, az);
        double err = gs_test_rel_diff(n, az, r);
        if (err > 1e-12) fail_msg("%s with exact settings: |A z - r| / |r| = %g", types[t], err);
        free(r);
        free(z);
        free(az);
        gs_pc_destroy(&pc);
    }
    gs_csr_free(&A);
}

/* A second numeric setup with new values equals a fresh preconditioner built on them. */
static void test_numeric_setup_again(void **state)
{
    pc_fixture *f = *state;
    const char *types[] = {"ilu0", "iluk", "ilut", "ic0"};
    pc_fixture_set(f, "preconditioner.fill_level=1");
    pc_fixture_set(f, "preconditioner.drop_tolerance=0.02");
    for (int t = 0; t < 4; t++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_laplace2d(6, 7, &A));
        gs_int n = A.nrows;
        gs_pc *pc = NULL, *fresh = NULL;
        make_pc(f, types[t], &pc);
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        double *r = random_vector(n, 9), *z1 = malloc((size_t)n * sizeof *z1), *z2 = malloc((size_t)n * sizeof *z2);
        assert_non_null(z1);
        assert_non_null(z2);
        pc_fixture_apply(f, pc, r, z1);
        /* new values, same pattern: a_ii += 0.1 i, off-diagonals scaled by 0.9 */
        for (gs_int i = 0; i < n; i++)
            for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
                A.val[p] = A.colind[p] == i ? A.val[p] + 0.1 * i : 0.9 * A.val[p];
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        pc_fixture_apply(f, pc, r, z2);
        assert_true(gs_test_rel_diff(n, z2, z1) > 1e-3); /* it did change */
        make_pc(f, types[t], &fresh);
        GS_ASSERT_OK(gs_pc_setup_symbolic(fresh, &A));
        GS_ASSERT_OK(gs_pc_setup_numeric(fresh, &A));
        pc_fixture_apply(f, fresh, r, z1);
        if (gs_test_rel_diff(n, z2, z1) != 0.0)
            fail_msg("%s: numeric setup again differs from a fresh one by %g", types[t], gs_test_rel_diff(n, z2, z1));
        free(r);
        free(z1);
        free(z2);
        gs_pc_destroy(&pc);
        gs_pc_destroy(&fresh);
        gs_csr_free(&A);
    }
}

static bool has_prefix_key(const gs_report *rep, const char *prefix)
{
    for (int i = 0; i < rep->n; i++)
        if (strncmp(rep->e[i].key, prefix, strlen(prefix)) == 0) return true;
    return false;
}

static void test_view(void **state)
{
    pc_fixture *f = *state;
    pc_fixture_set(f, "trisolve.lower.type=reference");
    pc_fixture_set(f, "trisolve.upper.type=reference");
    pc_fixture_set(f, "preconditioner.fill_level=1");
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 1, &L, &U));
    gs_pc *pc = NULL;
    gs_report *rep = NULL;
    make_pc(f, "iluk", &pc);
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_int_equal(pc_fixture_find(rep, "preconditioner.nnz_L")->i, L.nnz);
    assert_int_equal(pc_fixture_find(rep, "preconditioner.nnz_U")->i, U.nnz);
    assert_true(fabs(pc_fixture_find(rep, "preconditioner.fill_ratio")->d - (double)(L.nnz + U.nnz) / A.nnz) < 1e-15);
    assert_true(pc_fixture_find(rep, "preconditioner.fill_ratio")->d > 1.0); /* ILU(1) of a Laplacian fills */
    assert_int_equal(pc_fixture_find(rep, "preconditioner.pivots_shifted")->i, 0);
    assert_string_equal(pc_fixture_find(rep, "preconditioner.shifted_rows")->s, "");
    assert_string_equal(pc_fixture_find(rep, "preconditioner.factorization")->s, "ILU(k)");
    assert_true(has_prefix_key(rep, "trisolve.lower."));
    assert_true(has_prefix_key(rep, "trisolve.upper."));
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

/* Zero pivots through the plug-in: error names the row; shift records it in the report. */
static void test_zero_pivot(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    const char *types[] = {"ilu0", "ilut"};
    for (int t = 0; t < 2; t++) {
        gs_pc *pc = NULL;
        pc_fixture_set(f, "preconditioner.zero_pivot=error");
        make_pc(f, types[t], &pc);
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        gs_error_clear();
        assert_int_equal(gs_pc_setup_numeric(pc, &A), GS_ERR_NUMERIC);
        const char *s = strstr(gs_error_message(), "zero pivot at row ");
        assert_non_null(s);
        int row = atoi(s + strlen("zero pivot at row "));
        gs_error_clear();
        gs_pc_destroy(&pc);

        pc_fixture_set(f, "preconditioner.zero_pivot=shift");
        pc_fixture_set(f, "preconditioner.shift=1e-4");
        make_pc(f, types[t], &pc);
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_pc_view(pc, rep);
        long long ns = pc_fixture_find(rep, "preconditioner.pivots_shifted")->i;
        assert_true(ns >= 1);
        const char *rows = pc_fixture_find(rep, "preconditioner.shifted_rows")->s;
        assert_int_equal(atoi(rows), row);
        int commas = 0;
        for (const char *c = rows; *c; c++) commas += *c == ',';
        assert_int_equal(commas, (ns < 16 ? ns : 16) - 1);
        double *r = random_vector(A.nrows, 3), *z = malloc((size_t)A.nrows * sizeof *z);
        assert_non_null(z);
        pc_fixture_apply(f, pc, r, z);
        for (gs_int i = 0; i < A.nrows; i++) assert_true(isfinite(z[i]));
        free(r);
        free(z);
        gs_report_destroy(&rep);
        gs_pc_destroy(&pc);
    }
    gs_csr_free(&A);
}

/* IC(0) refuses a nonsymmetric matrix, naming the first asymmetric pair. */
static void test_ic0_refuses_nonsymmetric(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(4, 4, &A));
    A.val[A.rowptr[2]] = -1.5; /* A(3,2) (1-based): row 3 holds columns 2, 3, 4, 7 */
    gs_pc *pc = NULL;
    make_pc(f, "ic0", &pc);
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_ARG, "A(2,3) = -1 while A(3,2) = -1.5");
    gs_pc_destroy(&pc);
    gs_csr_free(&A);

    /* an explicit zero on one side only is still symmetric */
    gs_int ri[] = {0, 0, 1, 1, 2}, ci[] = {0, 2, 0, 1, 2};
    double v[] = {4, 0, 1, 4, 4};
    gs_int ri2[] = {0, 0, 1, 1, 2, 2}, ci2[] = {0, 1, 0, 1, 0, 2};
    double v2[] = {4, 1, 1, 4, 0, 4};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 6, ri2, ci2, v2, &A));
    make_pc(f, "ic0", &pc);
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 5, ri, ci, v, &A)); /* A(2,1) = 1 (1-based) but A(1,2) missing */
    make_pc(f, "ic0", &pc);
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_ARG, "A(1,2) = 0 while A(2,1) = 1");
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_ilu0_apply),
        PC_FIXTURE_TEST(test_iluk_apply),
        PC_FIXTURE_TEST(test_ilut_apply),
        PC_FIXTURE_TEST(test_ic0_apply),
        PC_FIXTURE_TEST(test_exact_settings_invert_A),
        PC_FIXTURE_TEST(test_numeric_setup_again),
        PC_FIXTURE_TEST(test_view),
        PC_FIXTURE_TEST(test_zero_pivot),
        PC_FIXTURE_TEST(test_ic0_refuses_nonsymmetric),
        PC_FIXTURE_TEST(test_single_precision_host_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
