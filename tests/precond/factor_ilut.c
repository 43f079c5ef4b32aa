/* Tests of ILUT(p, tau) (precond/ilu_factor.c) against dense LU and a dense ILUT reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "factor_dense.h"
#include "precond/factor.h"

static gs_factor_opts ilut_opts(double tau, int p)
{
    gs_factor_opts o = {GS_ZERO_PIVOT_ERROR, 1e-8, 0, tau, p, 0, NULL, 0.0, false, 0.0};
    return o;
}

static double *factor_to_dense(const gs_csr *L, const gs_csr *U)
{
    int n = L->nrows;
    double *f = calloc((size_t)n * n, sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
            assert_true(L->colind[p] < i);
            f[i * n + L->colind[p]] = L->val[p];
        }
        assert_int_equal(U->colind[U->rowptr[i]], i);
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) f[i * n + U->colind[p]] = U->val[p];
    }
    return f;
}

static double rel_max_diff(int n, const double *f, const double *d)
{
    double m = 0.0;
    for (int i = 0; i < n * n; i++) m = fmax(m, fabs(f[i] - d[i]));
    return m / fmax(dense_max_abs(n, d), 1e-300);
}

static void make_matrices(gs_csr M[4])
{
    memset(M, 0, 4 * sizeof *M);
    GS_ASSERT_OK(gs_test_random_sparse(45, 4, 1.2, 7, &M[0]));
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &M[1]));
    GS_ASSERT_OK(gs_test_convdiff2d(6, 8, 1.0, &M[2]));
    GS_ASSERT_OK(gs_test_random_sparse(60, 6, 1.05, 29, &M[3]));
}

/* tau = 0, p >= n: the exact LU. */
static void test_tau0_is_exact_lu(void **state)
{
    gs_csr M[4];
    make_matrices(M);
    for (int m = 0; m < 4; m++) {
        int n = M[m].nrows;
        gs_csr L = {0}, U = {0};
        gs_factor_opts o = ilut_opts(0.0, n);
        gs_factor_info info;
        GS_ASSERT_OK(gs_ilut(&M[m], &o, &L, &U, &info));
        assert_true(gs_csr_is_sorted(&L));
        assert_true(gs_csr_is_sorted(&U));
        assert_int_equal(info.nnz_L, L.nnz);
        assert_int_equal(info.nnz_U, U.nnz);
        assert_int_equal(info.nshifted, 0);
        double *d = dense_from_csr(&M[m]);
        dense_lu(n, d);
        double *f = factor_to_dense(&L, &U);
        double err = rel_max_diff(n, f, d);
        if (err > 1e-13) fail_msg("matrix %d: ILUT(n, 0) differs from the dense LU by %g", m, err);
        /* no stored entry is an exact zero (except possibly a diagonal) */
        for (gs_int p = 0; p < L.nnz; p++) assert_true(L.val[p] != 0.0);
        free(d);
        free(f);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&M[m]);
    }
}

/* Equal (to rounding) to an independent dense ILUT for several (p, tau). */
static void test_matches_dense_ilut(void **state)
{
    gs_csr M[4];
    make_matrices(M);
    const double taus[] = {0.0, 1e-3, 1e-2, 5e-2, 0.2};
    const int ps[] = {0, 1, 2, 3, 5, 1000};
    for (int m = 0; m < 4; m++) {
        int n = M[m].nrows;
        for (size_t a = 0; a < sizeof taus / sizeof *taus; a++)
            for (size_t b = 0; b < sizeof ps / sizeof *ps; b++) {
                gs_csr L = {0}, U = {0};
                gs_factor_opts o = ilut_opts(taus[a], ps[b]);
                GS_ASSERT_OK(gs_ilut(&M[m], &o, &L, &U, NULL));
                double *d = dense_from_csr(&M[m]);
                assert_true(dense_ilut(n, d, taus[a], ps[b]));
                double *f = factor_to_dense(&L, &U);
                double err = rel_max_diff(n, f, d);
                if (err > 1e-13)
                    fail_msg("matrix %d, tau %g, p %d: sparse and dense ILUT differ by %g", m, taus[a], ps[b], err);
                /* the same pattern: every nonzero of the dense ILUT is stored */
                gs_int cnt = 0;
                for (int i = 0; i < n * n; i++) cnt += d[i] != 0.0;
                assert_int_equal(cnt, L.nnz + U.nnz);
                free(d);
                free(f);
                gs_csr_free(&L);
                gs_csr_free(&U);
            }
        gs_csr_free(&M[m]);
    }
}

/* The rule on the output: at most p per row in L and p + diagonal in U; |entries| >= tau ||a_i||_2. */
static void test_drop_rule_holds(void **state)
{
    gs_csr M[4];
    make_matrices(M);
    for (int m = 0; m < 4; m++) {
        gs_csr L = {0}, U = {0};
        const double tau = 0.03;
        const int p = 2;
        gs_factor_opts o = ilut_opts(tau, p);
        GS_ASSERT_OK(gs_ilut(&M[m], &o, &L, &U, NULL));
        for (gs_int i = 0; i < M[m].nrows; i++) {
            double nrm = 0.0;
            for (gs_int q = M[m].rowptr[i]; q < M[m].rowptr[i + 1]; q++) nrm += M[m].val[q] * M[m].val[q];
            nrm = sqrt(nrm);
            assert_true(L.rowptr[i + 1] - L.rowptr[i] <= p);
            assert_true(U.rowptr[i + 1] - U.rowptr[i] <= p + 1);
            for (gs_int q = L.rowptr[i]; q < L.rowptr[i + 1]; q++) assert_true(fabs(L.val[q]) >= tau * nrm);
            for (gs_int q = U.rowptr[i] + 1; q < U.rowptr[i + 1]; q++) assert_true(fabs(U.val[q]) >= tau * nrm);
        }
        gs_csr_free(&L);
        gs_csr_free(&U);

        /* p = 0: no L, U diagonal only (the pivots still carry the row's elimination: selection by p
         * comes after it) */
        o = ilut_opts(0.0, 0);
        GS_ASSERT_OK(gs_ilut(&M[m], &o, &L, &U, NULL));
        assert_int_equal(L.nnz, 0);
        assert_int_equal(U.nnz, M[m].nrows);
        for (gs_int i = 0; i < M[m].nrows; i++) assert_int_equal(U.colind[i], i);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&M[m]);
    }
}

/* nnz(L) + nnz(U) does not grow as tau grows (p >= n). */
static void test_nnz_decreases_with_tau(void **state)
{
    gs_csr M[4];
    make_matrices(M);
    const double taus[] = {0.0, 1e-6, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1.0, INFINITY};
    for (int m = 0; m < 4; m++) {
        gs_int prev = GS_INT_MAX, first = 0, last = 0;
        for (size_t a = 0; a < sizeof taus / sizeof *taus; a++) {
            gs_csr L = {0}, U = {0};
            gs_factor_opts o = ilut_opts(taus[a], M[m].nrows);
            GS_ASSERT_OK(gs_ilut(&M[m], &o, &L, &U, NULL));
            gs_int nnz = L.nnz + U.nnz;
            if (nnz > prev) fail_msg("matrix %d: nnz grew from %d to %d at tau = %g", m, prev, nnz, taus[a]);
            if (a == 0) first = nnz;
            last = nnz;
            prev = nnz;
            gs_csr_free(&L);
            gs_csr_free(&U);
        }
        assert_true(last < first);
        assert_int_equal(last, M[m].nrows); /* tau = inf: the diagonal only */
        gs_csr_free(&M[m]);
    }
}

/* Zero pivots: error names the row; shift succeeds with finite factors. */
static void test_zero_pivot(void **state)
{
    const char *names[] = {"west0067.mtx", "impcol_a.mtx"};
    for (int m = 0; m < 2; m++) {
        gs_csr A = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_test_load(names[m], &A));
        gs_factor_opts o = ilut_opts(1e-2, 5);
        gs_error_clear();
        assert_int_equal(gs_ilut(&A, &o, &L, &U, NULL), GS_ERR_NUMERIC);
        const char *s = strstr(gs_error_message(), "zero pivot at row ");
        assert_non_null(s);
        int row = atoi(s + strlen("zero pivot at row "));
        assert_true(row >= 1 && row <= A.nrows);
        gs_error_clear();
        assert_int_equal(L.nnz + U.nnz, 0);
        o.zero_pivot = GS_ZERO_PIVOT_SHIFT;
        o.shift = 1e-2;
        gs_factor_info info;
        GS_ASSERT_OK(gs_ilut(&A, &o, &L, &U, &info));
        assert_true(info.nshifted >= 1);
        assert_int_equal(info.first_shifted, row - 1);
        for (gs_int p = 0; p < L.nnz; p++) assert_true(isfinite(L.val[p]));
        for (gs_int p = 0; p < U.nnz; p++) assert_true(isfinite(U.val[p]));
        for (gs_int i = 0; i < A.nrows; i++) assert_true(U.val[U.rowptr[i]] != 0.0);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&A);
    }
}

static void test_bad_arguments(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_laplace2d(3, 3, &A));
    gs_factor_opts o = ilut_opts(-1.0, 3);
    GS_ASSERT_FAILS(gs_ilut(&A, &o, &L, &U, NULL), GS_ERR_ARG, "drop tolerance");
    o = ilut_opts(NAN, 3);
    GS_ASSERT_FAILS(gs_ilut(&A, &o, &L, &U, NULL), GS_ERR_ARG, "drop tolerance");
    o = ilut_opts(0.1, -2);
    GS_ASSERT_FAILS(gs_ilut(&A, &o, &L, &U, NULL), GS_ERR_ARG, "max_fill");
    gs_csr_free(&A);
}

static void test_allocation_failures(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(6, 5, 1.0, &A));
    gs_factor_opts o = ilut_opts(1e-3, 4);
    for (long k = 1;; k++) {
        gs_csr L = {0}, U = {0};
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_ilut(&A, &o, &L, &U, NULL);
        gs_alloc_fail_at(0);
        gs_error_clear();
        if (st == GS_OK) {
            assert_true(k > 5);
            gs_csr_free(&L);
            gs_csr_free(&U);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
        assert_null(L.rowptr);
        assert_null(U.rowptr);
        assert_true(k < 200);
    }
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tau0_is_exact_lu),
        cmocka_unit_test(test_matches_dense_ilut),
        cmocka_unit_test(test_drop_rule_holds),
        cmocka_unit_test(test_nnz_decreases_with_tau),
        cmocka_unit_test(test_zero_pivot),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
