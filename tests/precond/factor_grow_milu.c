/* Tests of the grow pivot policy (refactor A + alpha diag(s) with alpha = shift, 10 shift, ...) and of
 * MILU ((L U) 1 = (A + alpha diag(s)) 1) in the host factorizations: ILU numeric, ILUT, ILUTP, IC(0). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "factor_dense.h"
#include "precond/factor.h"

enum { F_ILU0, F_ILUT, F_ILUTP, F_IC0, F_COUNT };
static const char *fname[F_COUNT] = {"ILU(0)", "ILUT", "ILUTP", "IC(0)"};

static gs_factor_opts grow_opts(double shift, double min_pivot)
{
    gs_factor_opts o;
    memset(&o, 0, sizeof o);
    o.zero_pivot = GS_ZERO_PIVOT_GROW;
    o.shift = shift;
    o.min_pivot = min_pivot;
    o.drop_tol = 0.0;
    o.max_fill = 1000000;
    return o;
}

/* Factor A with kind f; L, U (IC(0): L, L^T), cp = colperm for ILUTP. */
static gs_status factor(int f, const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_int *cp,
                        gs_factor_info *info)
{
    switch (f) {
    case F_ILU0: {
        gs_status st = gs_iluk_symbolic(A, 0, L, U);
        if (st != GS_OK) return st;
        return gs_ilu_numeric(A, o, L, U, info);
    }
    case F_ILUT: return gs_ilut(A, o, L, U, info);
    case F_ILUTP: return gs_ilutp(A, o, L, U, cp, info);
    default: return gs_ic0(A, o, L, U, info);
    }
}

/* 4 on the diagonal, -1 beside it, except rows 10 and 11: the singular block [[1, 1], [1, 1]] alone. ILU
 * and IC(0) meet u_11,11 = 0 there; with the shift, u = (1 + alpha) - 1 / (1 + alpha) ~ 2 alpha. */
static void make_block_matrix(gs_int n, gs_csr *A)
{
    GS_ASSERT_OK(gs_csr_alloc(A, n, n, 3 * n, true));
    gs_int nnz = 0;
    A->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        bool blk = i == 10 || i == 11;
        for (gs_int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            bool jblk = j == 10 || j == 11;
            if (blk != jblk) continue;
            A->colind[nnz] = j;
            A->val[nnz++] = blk ? 1.0 : (j == i ? 4.0 : -1.0);
        }
        A->rowptr[i + 1] = nnz;
    }
    A->nnz = nnz;
}

/* The alpha the driver accepts on the block matrix and the number of refactorizations (0: none passes),
 * by the same operations as the factorizations (s = 1 on the block's rows). */
static double expected_alpha(double shift, double min_pivot, int *refact)
{
    double alpha = shift;
    for (int t = 1; t <= GS_FACTOR_GROW_MAX; t++, alpha *= 10.0) {
        double d = 1.0 + alpha * 1.0, l = 1.0 / d, u = d - l * 1.0;
        if (u >= DBL_MIN && u >= min_pivot) {
            *refact = t;
            return alpha;
        }
    }
    *refact = 0;
    return 0.0;
}

/* A + alpha diag(s), s_i = ||a_i||_inf (1 for a zero row), every diagonal stored. */
static void shifted_copy(const gs_csr *A, double alpha, gs_csr *B)
{
    gs_int n = A->nrows, nnz = 0;
    GS_ASSERT_OK(gs_csr_alloc(B, n, n, A->nnz + n, true));
    B->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        double s = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s = fmax(s, fabs(A->val[p]));
        if (s == 0.0) s = 1.0;
        bool done = false;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            if (!done && j >= i) {
                if (j > i) {
                    B->colind[nnz] = i;
                    B->val[nnz++] = 0.0 + alpha * s;
                }
                done = true;
            }
            B->colind[nnz] = j;
            B->val[nnz++] = j == i ? A->val[p] + alpha * s : A->val[p];
        }
        if (!done) {
            B->colind[nnz] = i;
            B->val[nnz++] = 0.0 + alpha * s;
        }
        B->rowptr[i + 1] = nnz;
    }
    B->nnz = nnz;
}

static void assert_same_values(const gs_csr *X, const gs_csr *Y)
{
    assert_int_equal(X->nnz, Y->nnz);
    assert_memory_equal(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof *X->rowptr);
    assert_memory_equal(X->colind, Y->colind, (size_t)X->nnz * sizeof *X->colind);
    assert_memory_equal(X->val, Y->val, (size_t)X->nnz * sizeof *X->val);
}

/* The block matrix: each factorization accepts alpha = shift 10^5 after 6 refactorizations (min_pivot
 * 1e-3), and its factors are those of the explicitly shifted matrix under the error policy. */
static void test_grow_alpha_and_count(void **state)
{
    gs_csr A = {0};
    const gs_int n = 37;
    make_block_matrix(n, &A);
    int want_t;
    const double want = expected_alpha(1e-8, 1e-3, &want_t);
    assert_int_equal(want_t, 6);
    gs_int cp[37];
    for (int f = 0; f < F_COUNT; f++) {
        gs_csr L = {0}, U = {0};
        gs_factor_opts o = grow_opts(1e-8, 1e-3);
        gs_factor_info info;
        /* the error policy names the row */
        gs_factor_opts e = o;
        e.zero_pivot = GS_ZERO_PIVOT_ERROR;
        gs_error_clear();
        assert_int_equal(factor(f, &A, &e, &L, &U, cp, NULL), GS_ERR_NUMERIC);
        assert_non_null(strstr(gs_error_message(), "row 12 (1-based)"));
        gs_error_clear();
        gs_csr_free(&L);
        gs_csr_free(&U);

        GS_ASSERT_OK(factor(f, &A, &o, &L, &U, cp, &info));
        printf("%-7s grow: alpha %g after %d refactorizations\n", fname[f], info.shift_used, info.refactorizations);
        assert_true(info.shift_used == want);
        assert_int_equal(info.refactorizations, want_t);
        assert_int_equal(info.nshifted, 0);

        gs_csr S = {0}, L2 = {0}, U2 = {0};
        shifted_copy(&A, want, &S);
        gs_factor_info i2;
        GS_ASSERT_OK(factor(f, &S, &e, &L2, &U2, cp, &i2));
        assert_same_values(&L, &L2);
        assert_same_values(&U, &U2);
        gs_csr_free(&S);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&L2);
        gs_csr_free(&U2);
    }
    gs_csr_free(&A);
}

/* No failing pivot: alpha 0, no refactorization, the error policy's factors. */
static void test_grow_not_needed(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(9, 7, &A));
    gs_int cp[63];
    for (int f = 0; f < F_COUNT; f++) {
        gs_csr L = {0}, U = {0}, L2 = {0}, U2 = {0};
        gs_factor_opts o = grow_opts(1e-8, 1e-8), e = o;
        e.zero_pivot = GS_ZERO_PIVOT_ERROR;
        gs_factor_info info;
        GS_ASSERT_OK(factor(f, &A, &o, &L, &U, cp, &info));
        assert_true(info.shift_used == 0.0);
        assert_int_equal(info.refactorizations, 0);
        GS_ASSERT_OK(factor(f, &A, &e, &L2, &U2, cp, NULL));
        assert_same_values(&L, &L2);
        assert_same_values(&U, &U2);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&L2);
        gs_csr_free(&U2);
    }
    gs_csr_free(&A);
}

/* No alpha up to shift 10^9 passes: GS_ERR_NUMERIC naming the row and the range tried; no shift: the
 * same failure, asking for one; a non-finite A: its own error at once. */
static void test_grow_fails(void **state)
{
    gs_csr A = {0};
    make_block_matrix(37, &A);
    gs_int cp[37];
    int t;
    assert_true(expected_alpha(1e-12, 0.1, &t) == 0.0);
    for (int f = 0; f < F_COUNT; f++) {
        gs_csr L = {0}, U = {0};
        gs_factor_opts o = grow_opts(1e-12, 0.1);
        gs_error_clear();
        assert_int_equal(factor(f, &A, &o, &L, &U, cp, NULL), GS_ERR_NUMERIC);
        const char *m = gs_error_message();
        printf("%s: %s\n", fname[f], m);
        assert_non_null(strstr(m, "row 12 (1-based)"));
        assert_non_null(strstr(m, "10 refactorizations"));
        assert_non_null(strstr(m, "grow"));
        gs_error_clear();
        gs_csr_free(&L);
        gs_csr_free(&U);
        o.shift = 0.0;
        GS_ASSERT_FAILS(factor(f, &A, &o, &L, &U, cp, NULL), GS_ERR_NUMERIC, "positive, finite preconditioner.shift");
        gs_csr_free(&L);
        gs_csr_free(&U);
    }
    A.val[0] = NAN;
    gs_factor_opts o = grow_opts(1e-8, 1e-3);
    gs_csr L = {0}, U = {0};
    GS_ASSERT_FAILS(gs_ilut(&A, &o, &L, &U, NULL), GS_ERR_NUMERIC, "not finite");
    gs_csr_free(&A);
}

/* ILUTP with the default drops meets a zero pivot on impcol_a; grow factors it with every pivot above
 * min_pivot * s_i. */
static void test_grow_ilutp_real(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_load("impcol_a.mtx", &A));
    gs_int n = A.nrows, *cp = malloc((size_t)n * sizeof *cp);
    assert_non_null(cp);
    gs_factor_opts o = grow_opts(1e-8, 1e-8);
    o.drop_tol = 1e-3;
    o.max_fill = 10;
    o.perm_tol = 0.1;
    gs_factor_opts e = o;
    e.zero_pivot = GS_ZERO_PIVOT_ERROR;
    gs_error_clear();
    assert_int_equal(gs_ilutp(&A, &e, &L, &U, cp, NULL), GS_ERR_NUMERIC);
    gs_error_clear();
    gs_factor_info info;
    GS_ASSERT_OK(gs_ilutp(&A, &o, &L, &U, cp, &info));
    printf("impcol_a ILUTP grow: alpha %g, %d refactorizations, %d exchanges\n", info.shift_used,
           info.refactorizations, (int)info.columns_exchanged);
    assert_true(info.refactorizations >= 1);
    for (gs_int i = 0; i < n; i++) {
        double s = 0.0;
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) s = fmax(s, fabs(A.val[p]));
        assert_true(fabs(U.val[U.rowptr[i]]) >= o.min_pivot * s);
    }
    free(cp);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&A);
}

/* ------------------------------------------------------------------------------------------------------ */
/* MILU: (L U) 1 = (A + alpha diag(s)) 1 up to rounding, checked row by row against the rounding scale
 * (|L| |U| 1 + |A| 1)_i. Returns the largest relative defect. */
static double milu_defect(const gs_csr *A, const gs_csr *L, const gs_csr *U, double alpha)
{
    gs_int n = A->nrows;
    double *u1 = malloc((size_t)n * sizeof *u1), *ua = malloc((size_t)n * sizeof *ua), worst = 0.0;
    assert_true(u1 && ua);
    for (gs_int i = 0; i < n; i++) {
        u1[i] = ua[i] = 0.0;
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) {
            u1[i] += U->val[p];
            ua[i] += fabs(U->val[p]);
        }
    }
    for (gs_int i = 0; i < n; i++) {
        double lu = u1[i], scale = ua[i], a1 = 0.0, s = 0.0;
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
            lu += L->val[p] * u1[L->colind[p]];
            scale += fabs(L->val[p]) * ua[L->colind[p]];
        }
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            a1 += A->val[p];
            scale += fabs(A->val[p]);
            s = fmax(s, fabs(A->val[p]));
        }
        a1 += alpha * (s > 0.0 ? s : 1.0);
        worst = fmax(worst, fabs(lu - a1) / scale);
    }
    free(u1);
    free(ua);
    return worst;
}

static void test_milu_row_sums(void **state)
{
    gs_csr M[5];
    memset(M, 0, sizeof M);
    GS_ASSERT_OK(gs_test_convdiff2d(17, 13, 1.5, &M[0]));
    GS_ASSERT_OK(gs_test_random_sparse(101, 5, 1.1, 3, &M[1]));
    GS_ASSERT_OK(gs_test_load("sherman1.mtx", &M[2]));
    GS_ASSERT_OK(gs_test_load("orsirr_1.mtx", &M[3]));
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &M[4])); /* ILUTP only (zero diagonal) */
    const double taus[] = {1e-3, 1e-2, 0.1};
    const int ps[] = {2, 5, 20};
    int checked = 0;
    double off = 0.0;
    for (int m = 0; m < 5; m++) {
        gs_int n = M[m].nrows, *cp = malloc((size_t)n * sizeof *cp);
        assert_non_null(cp);
        for (int k = 0; k <= 2 && m < 4; k++) { /* ILU(k) numeric */
            gs_csr L = {0}, U = {0};
            gs_factor_opts o = grow_opts(1e-8, 1e-12);
            o.milu = true;
            gs_factor_info info;
            GS_ASSERT_OK(gs_iluk_symbolic(&M[m], k, &L, &U));
            GS_ASSERT_OK(gs_ilu_numeric(&M[m], &o, &L, &U, &info));
            double d = milu_defect(&M[m], &L, &U, info.shift_used);
            if (d > 1e-13) fail_msg("matrix %d ILU(%d) MILU: (LU)1 - A1 relative defect %g", m, k, d);
            o.milu = false;
            GS_ASSERT_OK(gs_ilu_numeric(&M[m], &o, &L, &U, &info));
            if (k == 0) off = fmax(off, milu_defect(&M[m], &L, &U, info.shift_used));
            checked++;
            gs_csr_free(&L);
            gs_csr_free(&U);
        }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int tp = m < 4 ? 0 : 1; tp < 2; tp++) {
                    gs_csr L = {0}, U = {0};
                    gs_factor_opts o = grow_opts(1e-8, 1e-12);
                    o.milu = true;
                    o.drop_tol = taus[a];
                    o.max_fill = ps[b];
                    o.perm_tol = tp ? 0.5 : 0.0;
                    gs_factor_info info;
                    GS_ASSERT_OK(tp ? gs_ilutp(&M[m], &o, &L, &U, cp, &info) : gs_ilut(&M[m], &o, &L, &U, &info));
                    double d = milu_defect(&M[m], &L, &U, info.shift_used);
                    if (d > 1e-13)
                        fail_msg("matrix %d %s(tau %g, p %d) MILU: (LU)1 - A1 relative defect %g (alpha %g)", m,
                                 tp ? "ILUTP" : "ILUT", taus[a], ps[b], d, info.shift_used);
                    checked++;
                    gs_csr_free(&L);
                    gs_csr_free(&U);
                }
        free(cp);
        gs_csr_free(&M[m]);
    }
    printf("MILU row sums hold on %d factorizations; without MILU the ILU(0) defect reaches %.2e\n", checked, off);
    assert_true(off > 1e-3); /* the identity is MILU's, not ILU's */
}

/* MILU on a pattern that leaves out entries of A: their values go to the pivot too. */
static void test_milu_pattern_drops_entries_of_a(void **state)
{
    gs_csr A = {0}, B = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(11, 9, 0.7, &A));
    GS_ASSERT_OK(gs_csr_copy(&A, &B));
    /* B: A without its entries (i, i + 1) for even i */
    gs_int nnz = 0;
    for (gs_int i = 0; i < B.nrows; i++) {
        gs_int start = nnz;
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) {
            if (i % 2 == 0 && A.colind[p] == i + 1) continue;
            B.colind[nnz] = A.colind[p];
            B.val[nnz++] = A.val[p];
        }
        B.rowptr[i] = start;
    }
    B.rowptr[B.nrows] = nnz;
    B.nnz = nnz;
    assert_true(B.nnz < A.nnz);
    GS_ASSERT_OK(gs_iluk_symbolic(&B, 0, &L, &U));
    gs_factor_opts o = grow_opts(1e-8, 1e-12);
    o.milu = true;
    gs_factor_info info;
    GS_ASSERT_OK(gs_ilu_numeric(&A, &o, &L, &U, &info));
    assert_true(milu_defect(&A, &L, &U, info.shift_used) < 1e-13);
    gs_csr_free(&A);
    gs_csr_free(&B);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_alpha_and_count), cmocka_unit_test(test_grow_not_needed),
        cmocka_unit_test(test_grow_fails),           cmocka_unit_test(test_grow_ilutp_real),
        cmocka_unit_test(test_milu_row_sums),        cmocka_unit_test(test_milu_pattern_drops_entries_of_a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
