/* Tests of IC(0) (precond/ilu_factor.c): Cholesky of a tridiagonal SPD matrix, L L^T = A on the
 * pattern, relation to ILU(0), non-positive pivots. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "factor_dense.h"
#include "precond/factor.h"

static const gs_factor_opts opts_error = {GS_ZERO_PIVOT_ERROR, 1e-8, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

static void check_ic0_structure(const gs_csr *A, const gs_csr *L, const gs_csr *LT)
{
    gs_int n = A->nrows;
    assert_true(gs_csr_is_sorted(L));
    assert_true(gs_csr_is_sorted(LT));
    /* L: the lower triangle of A with the diagonal last in each row */
    for (gs_int i = 0; i < n; i++) {
        assert_int_equal(L->colind[L->rowptr[i + 1] - 1], i);
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1] - 1; p++) assert_true(csr_has(A, i, L->colind[p]));
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] <= i) assert_true(csr_has(L, i, A->colind[p]));
    }
    /* LT is exactly the transpose */
    assert_int_equal(LT->nnz, L->nnz);
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++)
            assert_true(csr_get(LT, L->colind[p], i) == L->val[p]);
}

/* A tridiagonal SPD matrix has no fill: IC(0) is its Cholesky factor. */
static void test_tridiagonal_is_cholesky(void **state)
{
    gs_csr A = {0}, L = {0}, LT = {0};
    make_tridiag(41, -1.0, 2.5, -1.0, &A);
    gs_factor_info info;
    GS_ASSERT_OK(gs_ic0(&A, &opts_error, &L, &LT, &info));
    check_ic0_structure(&A, &L, &LT);
    assert_int_equal(info.nshifted, 0);
    assert_int_equal(info.nnz_L, L.nnz);
    assert_int_equal(info.nnz_U, LT.nnz);
    int n = 41;
    double *d = dense_from_csr(&A);
    assert_true(dense_cholesky(n, d));
    double m = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) m = fmax(m, fabs(csr_get(&L, i, j) - d[i * n + j]));
    assert_true(m < 1e-14 * dense_max_abs(n, d));
    free(d);
    gs_csr_free(&L);
    gs_csr_free(&LT);
    gs_csr_free(&A);
}

/* (L L^T)_ij = a_ij for every (i,j) of the lower pattern. */
static void check_llt_on_pattern(const gs_csr *A)
{
    gs_csr L = {0}, LT = {0};
    GS_ASSERT_OK(gs_ic0(A, &opts_error, &L, &LT, NULL));
    check_ic0_structure(A, &L, &LT);
    int n = A->nrows;
    double amax = 0.0;
    for (gs_int p = 0; p < A->nnz; p++) amax = fmax(amax, fabs(A->val[p]));
    for (int i = 0; i < n; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int j = A->colind[p];
            if (j > i) continue;
            double s = 0.0; /* sum_k l_ik l_jk */
            for (gs_int q = L.rowptr[i]; q < L.rowptr[i + 1]; q++) s += L.val[q] * csr_get(&L, j, L.colind[q]);
            if (fabs(s - A->val[p]) > 1e-12 * amax)
                fail_msg("(L L^T)(%d,%d) = %.17g but a_ij = %.17g", i, j, s, A->val[p]);
        }
    gs_csr_free(&L);
    gs_csr_free(&LT);
}

static void test_llt_matches_a_on_pattern(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &A));
    check_llt_on_pattern(&A);
    gs_csr_free(&A);
    make_random_spd(57, 3, 9, &A);
    check_llt_on_pattern(&A);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_load("nos4.mtx", &A));
    check_llt_on_pattern(&A);
    gs_csr_free(&A);
}

/* For symmetric A: ILU(0) = (L D^{-1}) (D L^T) with D = diag(L) of IC(0). */
static void test_relation_to_ilu0(void **state)
{
    gs_csr A = {0}, L = {0}, LT = {0}, Li = {0}, Ui = {0};
    make_random_spd(43, 4, 21, &A);
    GS_ASSERT_OK(gs_ic0(&A, &opts_error, &L, &LT, NULL));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &Li, &Ui));
    GS_ASSERT_OK(gs_ilu_numeric(&A, &opts_error, &Li, &Ui, NULL));
    for (gs_int i = 0; i < A.nrows; i++) {
        double dii = csr_get(&L, i, i);
        for (gs_int p = Li.rowptr[i]; p < Li.rowptr[i + 1]; p++) {
            gs_int j = Li.colind[p];
            double want = csr_get(&L, i, j) / csr_get(&L, j, j);
            assert_true(fabs(Li.val[p] - want) <= 1e-13 * fmax(1.0, fabs(want)));
        }
        for (gs_int p = Ui.rowptr[i]; p < Ui.rowptr[i + 1]; p++) {
            gs_int j = Ui.colind[p];
            double want = dii * csr_get(&L, j, i);
            assert_true(fabs(Ui.val[p] - want) <= 1e-13 * fmax(1.0, fabs(want)));
        }
    }
    gs_csr_free(&L);
    gs_csr_free(&LT);
    gs_csr_free(&Li);
    gs_csr_free(&Ui);
    gs_csr_free(&A);
}

/* Only the lower triangle is read: garbage in the upper one changes nothing. */
static void test_reads_lower_triangle_only(void **state)
{
    gs_csr A = {0}, L1 = {0}, LT1 = {0}, L2 = {0}, LT2 = {0};
    GS_ASSERT_OK(gs_test_laplace2d(5, 6, &A));
    GS_ASSERT_OK(gs_ic0(&A, &opts_error, &L1, &LT1, NULL));
    for (gs_int i = 0; i < A.nrows; i++)
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
            if (A.colind[p] > i) A.val[p] = 123.0;
    GS_ASSERT_OK(gs_ic0(&A, &opts_error, &L2, &LT2, NULL));
    assert_int_equal(L1.nnz, L2.nnz);
    assert_memory_equal(L1.val, L2.val, (size_t)L1.nnz * sizeof(double));
    gs_csr_free(&L1);
    gs_csr_free(&LT1);
    gs_csr_free(&L2);
    gs_csr_free(&LT2);
    gs_csr_free(&A);
}

/* Non-positive pivots: error names the row; shift repairs and records it. */
static void test_nonpositive_pivot(void **state)
{
    gs_csr A = {0}, L = {0}, LT = {0};
    make_tridiag(12, -1.0, 2.0, -1.0, &A);
    /* row 5 (0-based 4): a_44 = 0.3 makes a_44 - l_43^2 < 0 */
    for (gs_int p = A.rowptr[4]; p < A.rowptr[5]; p++)
        if (A.colind[p] == 4) A.val[p] = 0.3;
    GS_ASSERT_FAILS(gs_ic0(&A, &opts_error, &L, &LT, NULL), GS_ERR_NUMERIC, "non-positive pivot at row 5 (1-based)");
    assert_null(L.rowptr);
    gs_factor_opts sh = opts_error;
    sh.zero_pivot = GS_ZERO_PIVOT_SHIFT;
    sh.shift = 1.5; /* large enough that row 6 needs no shift after it */
    sh.row_offset = 100;
    gs_factor_info info;
    GS_ASSERT_OK(gs_ic0(&A, &sh, &L, &LT, &info));
    assert_int_equal(info.nshifted, 1);
    assert_int_equal(info.first_shifted, 104);
    assert_int_equal(info.shifted_rows[0], 104);
    /* l_44 = sqrt(shift * ||a_4||_inf) = sqrt(1.5 * 1.0) */
    assert_true(fabs(csr_get(&L, 4, 4) - sqrt(1.5)) < 1e-15);
    for (gs_int p = 0; p < L.nnz; p++) assert_true(isfinite(L.val[p]) && L.val[p] != 0.0);
    gs_csr_free(&L);
    gs_csr_free(&LT);
    gs_csr_free(&A);

    /* an exactly zero pivot (0.25 - (1/2)^2) */
    gs_int ri[] = {0, 1, 1, 2}, ci[] = {0, 0, 1, 2};
    double v[] = {4, 1, 2, 3};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 4, ri, ci, v, &A));
    A.val[2] = 0.25; /* 0.25 - (1/2)^2 = 0 */
    sh = opts_error;
    GS_ASSERT_FAILS(gs_ic0(&A, &sh, &L, &LT, NULL), GS_ERR_NUMERIC, "non-positive pivot at row 2 (1-based)");
    gs_csr_free(&A);
}

static void test_allocation_failures(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(5, 4, &A));
    for (long k = 1;; k++) {
        gs_csr L = {0}, LT = {0};
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_ic0(&A, &opts_error, &L, &LT, NULL);
        gs_alloc_fail_at(0);
        gs_error_clear();
        gs_csr_free(&L);
        gs_csr_free(&LT);
        if (st == GS_OK) {
            assert_true(k > 4);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
        assert_true(k < 100);
    }
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tridiagonal_is_cholesky),
        cmocka_unit_test(test_llt_matches_a_on_pattern),
        cmocka_unit_test(test_relation_to_ilu0),
        cmocka_unit_test(test_reads_lower_triangle_only),
        cmocka_unit_test(test_nonpositive_pivot),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
