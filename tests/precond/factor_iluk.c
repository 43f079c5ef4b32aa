/* Tests of ILU(k) symbolic + numeric factorization (precond/ilu_factor.c) against dense references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "factor_dense.h"
#include "precond/factor.h"

static const gs_factor_opts opts_error = {GS_ZERO_PIVOT_ERROR, 1e-8, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

/* Symbolic + numeric ILU(k); returns the status of the numeric phase. */
static gs_status iluk(const gs_csr *A, int k, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info)
{
    GS_ASSERT_OK(gs_iluk_symbolic(A, k, L, U));
    return gs_ilu_numeric(A, o, L, U, info);
}

/* Structural checks every factor pair must pass: sorted, L strict lower, U starts with the diagonal. */
static void check_structure(const gs_csr *L, const gs_csr *U)
{
    gs_int n = L->nrows;
    assert_int_equal(L->ncols, n);
    assert_int_equal(U->nrows, n);
    assert_true(gs_csr_is_sorted(L));
    assert_true(gs_csr_is_sorted(U));
    assert_int_equal(L->rowptr[n], L->nnz);
    assert_int_equal(U->rowptr[n], U->nnz);
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) assert_true(L->colind[p] < i);
        assert_true(U->rowptr[i + 1] > U->rowptr[i]);
        assert_int_equal(U->colind[U->rowptr[i]], i);
    }
}

/* max |F(i,j) - D(i,j)| over all (i,j), F given by the sparse L (strict) and U; relative to max |D|. */
static double factor_vs_dense(const gs_csr *L, const gs_csr *U, const double *d)
{
    int n = L->nrows;
    double *f = calloc((size_t)n * n, sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) f[i * n + L->colind[p]] = L->val[p];
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) f[i * n + U->colind[p]] = U->val[p];
    }
    double m = 0.0;
    for (int i = 0; i < n * n; i++) m = fmax(m, fabs(f[i] - d[i]));
    free(f);
    return m / fmax(dense_max_abs(n, d), 1e-300);
}

static void test_k0_pattern_is_pattern_of_A(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_random_sparse(47, 4, 1.5, 3, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    check_structure(&L, &U);
    assert_null(L.val);
    assert_null(U.val);
    assert_int_equal(L.nnz + U.nnz, A.nnz);
    for (gs_int i = 0; i < A.nrows; i++)
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) {
            gs_int j = A.colind[p];
            assert_true(j < i ? csr_has(&L, i, j) : csr_has(&U, i, j));
        }
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* A without some diagonal entries: they are inserted structurally. */
static void test_missing_diagonal_inserted(void **state)
{
    /* 4x4: row 0 has no diagonal, row 2 neither; row 3 empty except (3,1). */
    gs_int ri[] = {0, 0, 1, 1, 2, 2, 3};
    gs_int ci[] = {1, 3, 0, 1, 0, 3, 1};
    double v[] = {1, 2, 3, 4, 5, 6, 7};
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 7, ri, ci, v, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    check_structure(&L, &U);
    assert_int_equal(L.nnz + U.nnz, A.nnz + 3); /* diagonals of rows 0, 2, 3 */
    for (gs_int i = 0; i < 4; i++) assert_true(csr_has(&U, i, i));
    /* the inserted u_00 = 0 is a zero pivot at row 1, and the message says A has no diagonal there */
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL), GS_ERR_NUMERIC,
                    "zero pivot at row 1 (1-based)");
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL), GS_ERR_NUMERIC, "no diagonal entry");
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* ILU(k) patterns equal those of dense level-of-fill elimination, k = 0..4. */
static void test_pattern_matches_dense_levels(void **state)
{
    gs_csr M[3] = {{0}};
    GS_ASSERT_OK(gs_test_random_sparse(53, 3, 1.5, 11, &M[0]));
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &M[1]));
    GS_ASSERT_OK(gs_test_convdiff2d(6, 7, 0.7, &M[2]));
    for (int m = 0; m < 3; m++) {
        int n = M[m].nrows;
        bool *mask = malloc((size_t)n * n * sizeof *mask);
        assert_non_null(mask);
        for (int k = 0; k <= 4; k++) {
            gs_csr L = {0}, U = {0};
            GS_ASSERT_OK(gs_iluk_symbolic(&M[m], k, &L, &U));
            check_structure(&L, &U);
            dense_iluk_mask(&M[m], k, mask);
            gs_int count = 0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    bool in = j < i ? csr_has(&L, i, j) : csr_has(&U, i, j);
                    if (in != mask[i * n + j])
                        fail_msg("matrix %d, k = %d: entry (%d,%d) %s in ILU(k) but %s in the dense levels", m, k,
                                 i, j, in ? "is" : "is not", mask[i * n + j] ? "is" : "is not");
                    count += mask[i * n + j];
                }
            assert_int_equal(L.nnz + U.nnz, count);
            gs_csr_free(&L);
            gs_csr_free(&U);
        }
        free(mask);
        gs_csr_free(&M[m]);
    }
}

/* 5-point Laplacian, natural order: ILU(1) adds exactly (i, i-nx+1) and (i, i+nx-1) where they exist. */
static void test_ilu1_laplacian_fill(void **state)
{
    const gs_int nx = 7, ny = 9;
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 1, &L, &U));
    assert_int_equal(L.nnz + U.nnz, A.nnz + 2 * (nx - 1) * (ny - 1));
    for (gs_int y = 0; y < ny; y++)
        for (gs_int x = 0; x < nx; x++) {
            gs_int i = y * nx + x;
            assert_int_equal(csr_has(&L, i, i - nx + 1), y > 0 && x < nx - 1);
            assert_int_equal(csr_has(&U, i, i + nx - 1), y < ny - 1 && x > 0);
        }
    /* ILU(2) fills further: (i, i-nx+2) appears at level 2 */
    gs_csr L2 = {0}, U2 = {0};
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 2, &L2, &U2));
    assert_true(L2.nnz + U2.nnz > L.nnz + U.nnz);
    assert_true(csr_has(&L2, 2 * nx + 3, nx + 5));
    assert_false(csr_has(&L, 2 * nx + 3, nx + 5));
    gs_csr_free(&L2);
    gs_csr_free(&U2);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* k >= n: the exact LU (pattern holds every nonzero of the dense LU, values agree). */
static void test_large_k_is_exact_lu(void **state)
{
    gs_csr M[3] = {{0}};
    GS_ASSERT_OK(gs_test_random_sparse(40, 3, 1.2, 5, &M[0]));
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &M[1]));
    GS_ASSERT_OK(gs_test_convdiff2d(5, 11, 2.0, &M[2]));
    for (int m = 0; m < 3; m++) {
        int n = M[m].nrows;
        int ks[2] = {n, 1000000};
        for (int t = 0; t < 2; t++) {
            gs_csr L = {0}, U = {0};
            gs_factor_info info;
            GS_ASSERT_OK(iluk(&M[m], ks[t], &opts_error, &L, &U, &info));
            check_structure(&L, &U);
            assert_int_equal(info.nshifted, 0);
            assert_int_equal(info.nnz_L, L.nnz);
            assert_int_equal(info.nnz_U, U.nnz);
            double *d = dense_from_csr(&M[m]);
            dense_lu(n, d);
            /* entries outside the symbolic pattern are exactly zero in the dense LU */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (!(j < i ? csr_has(&L, i, j) : csr_has(&U, i, j))) assert_true(d[i * n + j] == 0.0);
            double err = factor_vs_dense(&L, &U, d);
            if (err > 1e-13) fail_msg("matrix %d, k = %d: |LU - dense LU| = %g", m, ks[t], err);
            free(d);
            gs_csr_free(&L);
            gs_csr_free(&U);
        }
        gs_csr_free(&M[m]);
    }
}

/* A tridiagonal matrix has no fill: ILU(0) is its LU. */
static void test_ilu0_tridiagonal_is_lu(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    make_tridiag(37, -1.3, 4.0, -0.6, &A);
    GS_ASSERT_OK(iluk(&A, 0, &opts_error, &L, &U, NULL));
    assert_int_equal(L.nnz, 36);
    assert_int_equal(U.nnz, 37 + 36);
    double *d = dense_from_csr(&A);
    dense_lu(37, d);
    assert_true(factor_vs_dense(&L, &U, d) < 1e-14);
    free(d);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* Numeric ILU(k), k = 0, 1, 2, equals dense elimination restricted to the level mask. */
static void test_numeric_matches_dense_masked(void **state)
{
    gs_csr M[3] = {{0}};
    GS_ASSERT_OK(gs_test_random_sparse(59, 4, 1.3, 17, &M[0]));
    GS_ASSERT_OK(gs_test_laplace2d(7, 9, &M[1]));
    GS_ASSERT_OK(gs_test_convdiff2d(8, 6, 1.5, &M[2]));
    for (int m = 0; m < 3; m++) {
        int n = M[m].nrows;
        bool *mask = malloc((size_t)n * n * sizeof *mask);
        assert_non_null(mask);
        for (int k = 0; k <= 2; k++) {
            gs_csr L = {0}, U = {0};
            GS_ASSERT_OK(iluk(&M[m], k, &opts_error, &L, &U, NULL));
            double *d = dense_from_csr(&M[m]);
            dense_iluk_mask(&M[m], k, mask);
            dense_ilu_masked(n, d, mask);
            double err = factor_vs_dense(&L, &U, d);
            if (err > 1e-13) fail_msg("matrix %d, k = %d: ILU(k) differs from the dense masked ILU by %g", m, k, err);
            /* numeric setup again on the same pattern (values overwritten, not reallocated) */
            double *lv = L.val, *uv = U.val;
            GS_ASSERT_OK(gs_ilu_numeric(&M[m], &opts_error, &L, &U, NULL));
            assert_ptr_equal(L.val, lv);
            assert_ptr_equal(U.val, uv);
            assert_true(factor_vs_dense(&L, &U, d) <= err);
            free(d);
            gs_csr_free(&L);
            gs_csr_free(&U);
        }
        free(mask);
        gs_csr_free(&M[m]);
    }
}

/* Entries of A outside the given pattern are dropped: the pattern of the tridiagonal part of A. */
static void test_numeric_drops_entries_outside_pattern(void **state)
{
    gs_csr A = {0}, T = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_random_sparse(31, 3, 1.5, 23, &A));
    make_tridiag(31, 1.0, 1.0, 1.0, &T);
    GS_ASSERT_OK(gs_iluk_symbolic(&T, 0, &L, &U));
    GS_ASSERT_OK(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL));
    int n = 31;
    bool *mask = malloc((size_t)n * n * sizeof *mask);
    assert_non_null(mask);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) mask[i * n + j] = abs(i - j) <= 1;
    double *d = dense_from_csr(&A);
    dense_ilu_masked(n, d, mask);
    assert_true(factor_vs_dense(&L, &U, d) < 1e-14);
    free(d);
    free(mask);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&T);
    gs_csr_free(&A);
}

static int parse_row(const char *msg)
{
    const char *s = strstr(msg, "zero pivot at row ");
    assert_non_null(s);
    return atoi(s + strlen("zero pivot at row "));
}

/* Real matrices with zero pivots in ILU(0): error names a row; shift succeeds and records it. */
static void zero_pivot_case(const char *name)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_load(name, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    gs_error_clear();
    gs_status st = gs_ilu_numeric(&A, &opts_error, &L, &U, NULL);
    assert_int_equal(st, GS_ERR_NUMERIC);
    int row = parse_row(gs_error_message());
    assert_true(row >= 1 && row <= A.nrows);
    assert_non_null(strstr(gs_error_message(), "preconditioner.zero_pivot = \"grow\" or \"shift\""));
    gs_error_clear();

    gs_factor_opts sh = opts_error;
    sh.zero_pivot = GS_ZERO_PIVOT_SHIFT;
    sh.shift = 1e-3;
    gs_factor_info info;
    GS_ASSERT_OK(gs_ilu_numeric(&A, &sh, &L, &U, &info));
    assert_true(info.nshifted >= 1);
    assert_int_equal(info.first_shifted, row - 1);
    assert_int_equal(info.shifted_rows[0], row - 1);
    for (gs_int t = 1; t < 16; t++)
        if (t < info.nshifted) assert_true(info.shifted_rows[t] > info.shifted_rows[t - 1]);
        else assert_int_equal(info.shifted_rows[t], -1);
    for (gs_int p = 0; p < L.nnz; p++) assert_true(isfinite(L.val[p]));
    for (gs_int p = 0; p < U.nnz; p++) assert_true(isfinite(U.val[p]));
    /* the first shifted pivot is +- shift * ||a_i||_inf */
    gs_int r = row - 1;
    double rinf = 0.0;
    for (gs_int p = A.rowptr[r]; p < A.rowptr[r + 1]; p++) rinf = fmax(rinf, fabs(A.val[p]));
    assert_true(fabs(fabs(U.val[U.rowptr[r]]) - 1e-3 * rinf) <= 1e-15 * rinf);

    /* reported rows: row_names then row_offset */
    gs_int *names = malloc((size_t)A.nrows * sizeof *names);
    assert_non_null(names);
    for (gs_int i = 0; i < A.nrows; i++) names[i] = 1000 + 2 * i;
    gs_factor_opts named = opts_error;
    named.row_names = names;
    named.row_offset = 7;
    char want[64];
    snprintf(want, sizeof want, "zero pivot at row %d (1-based)", 1000 + 2 * (row - 1) + 7 + 1);
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &named, &L, &U, NULL), GS_ERR_NUMERIC, want);
    named.zero_pivot = GS_ZERO_PIVOT_SHIFT;
    named.shift = 1e-3;
    GS_ASSERT_OK(gs_ilu_numeric(&A, &named, &L, &U, &info));
    assert_int_equal(info.first_shifted, 1000 + 2 * (row - 1) + 7);
    free(names);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

static void test_zero_pivot_west0067(void **state) { zero_pivot_case("west0067.mtx"); }
static void test_zero_pivot_impcol_a(void **state) { zero_pivot_case("impcol_a.mtx"); }

/* A zero pivot whose row of A is zero gets the shift itself; shift = 0 cannot repair. */
static void test_zero_row_shift(void **state)
{
    gs_int ri[] = {0, 1, 2, 2};
    gs_int ci[] = {0, 1, 0, 2};
    double v[] = {2, 0, 1, 3}; /* row 1 is an explicit zero */
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 4, ri, ci, v, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    gs_factor_opts sh = opts_error;
    sh.zero_pivot = GS_ZERO_PIVOT_SHIFT;
    sh.shift = 0.25;
    gs_factor_info info;
    GS_ASSERT_OK(gs_ilu_numeric(&A, &sh, &L, &U, &info));
    assert_int_equal(info.nshifted, 1);
    assert_int_equal(info.first_shifted, 1);
    assert_true(U.val[U.rowptr[1]] == 0.25);
    sh.shift = 0.0;
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &sh, &L, &U, NULL), GS_ERR_NUMERIC, "preconditioner.shift");
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* Non-finite entries of A, and bad arguments. */
static void test_errors(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_laplace2d(4, 5, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 1, &L, &U));
    A.val[A.rowptr[6] + 1] = NAN;
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL), GS_ERR_NUMERIC, "(row 7, 1-based)");
    gs_csr_free(&L);
    gs_csr_free(&U);
    GS_ASSERT_FAILS(gs_iluk_symbolic(&A, -1, &L, &U), GS_ERR_ARG, "fill level");
    assert_null(L.rowptr);
    gs_csr_free(&A);

    /* growth: l_21 = 1e200 / 1e-200 overflows (the pivot 1e-200 is not zero) */
    gs_int ri[] = {0, 0, 1, 1}, ci[] = {0, 1, 0, 1};
    double v[] = {1e-200, 1.0, 1e200, 1.0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 4, ri, ci, v, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL), GS_ERR_NUMERIC,
                    "non-finite value inf in row 2 (1-based), column 1");
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);

    GS_ASSERT_OK(gs_test_laplace2d(3, 3, &A));
    gs_int t = A.colind[0]; /* unsorted row 1 */
    A.colind[0] = A.colind[1];
    A.colind[1] = t;
    GS_ASSERT_FAILS(gs_iluk_symbolic(&A, 0, &L, &U), GS_ERR_ARG, "not sorted");
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_csr_alloc(&A, 3, 4, 0, true));
    GS_ASSERT_FAILS(gs_iluk_symbolic(&A, 0, &L, &U), GS_ERR_ARG, "square");
    gs_csr_free(&A);

    /* patterns of another size */
    gs_csr B = {0};
    GS_ASSERT_OK(gs_test_laplace2d(3, 3, &A));
    GS_ASSERT_OK(gs_test_laplace2d(3, 4, &B));
    GS_ASSERT_OK(gs_iluk_symbolic(&B, 0, &L, &U));
    GS_ASSERT_FAILS(gs_ilu_numeric(&A, &opts_error, &L, &U, NULL), GS_ERR_ARG, "symbolic");
    gs_csr_free(&A);
    gs_csr_free(&B);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

/* n = 0 and n = 1. */
static void test_tiny(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_csr_alloc(&A, 0, 0, 0, true));
    GS_ASSERT_OK(iluk(&A, 3, &opts_error, &L, &U, NULL));
    assert_int_equal(L.nnz + U.nnz, 0);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_int z = 0;
    double v = -5.0;
    GS_ASSERT_OK(gs_csr_from_coo(1, 1, 1, &z, &z, &v, &A));
    GS_ASSERT_OK(iluk(&A, 0, &opts_error, &L, &U, NULL));
    assert_int_equal(U.nnz, 1);
    assert_true(U.val[0] == -5.0);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

/* Every allocation failure returns GS_ERR_MEM and leaves the outputs empty. */
static void test_allocation_failures(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(6, 5, 1.0, &A));
    for (long k = 1;; k++) {
        gs_csr L = {0}, U = {0};
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_iluk_symbolic(&A, 2, &L, &U);
        if (st == GS_OK) st = gs_ilu_numeric(&A, &opts_error, &L, &U, NULL);
        gs_alloc_fail_at(0);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_error_clear();
        if (st == GS_OK) {
            assert_true(k > 5);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
        assert_true(k < 200);
    }
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k0_pattern_is_pattern_of_A),
        cmocka_unit_test(test_missing_diagonal_inserted),
        cmocka_unit_test(test_pattern_matches_dense_levels),
        cmocka_unit_test(test_ilu1_laplacian_fill),
        cmocka_unit_test(test_large_k_is_exact_lu),
        cmocka_unit_test(test_ilu0_tridiagonal_is_lu),
        cmocka_unit_test(test_numeric_matches_dense_masked),
        cmocka_unit_test(test_numeric_drops_entries_outside_pattern),
        cmocka_unit_test(test_zero_pivot_west0067),
        cmocka_unit_test(test_zero_pivot_impcol_a),
        cmocka_unit_test(test_zero_row_shift),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
