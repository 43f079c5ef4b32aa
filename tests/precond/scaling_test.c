/* Tests of the power-of-two equilibrations (Ruiz, row/column) and of C = Dr P A Q Dc (precond/scaling.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "precond/scaling.h"

/* A random m x n matrix: entries present with probability density, magnitudes 10^U(-range, range),
 * random signs, 1 in 10 a stored zero; rows i % 7 == 3 and columns j % 11 == 5 (j % 7 == 3 when
 * symmetric) get no entry at all. symmetric: m == n, a_ji = a_ij. */
static void random_matrix(gs_int m, gs_int n, double density, double range, bool symmetric, uint64_t seed,
                          gs_csr *A)
{
    uint64_t s = seed;
    gs_int cap = m * n, k = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < m; i++)
        for (gs_int j = symmetric ? i : 0; j < n; j++) {
            bool empty = symmetric ? (i % 7 == 3 || j % 7 == 3) : (i % 7 == 3 || j % 11 == 5);
            if (empty || gs_test_rand(&s) >= density) continue; /* some rows and columns stay empty */
            double mag = pow(10.0, range * (2.0 * gs_test_rand(&s) - 1.0));
            double a = gs_test_rand(&s) < 0.1 ? 0.0 : (gs_test_rand(&s) < 0.5 ? -mag : mag);
            ri[k] = i;
            ci[k] = j;
            v[k++] = a;
            if (symmetric && j != i) {
                ri[k] = j;
                ci[k] = i;
                v[k++] = a;
            }
        }
    GS_ASSERT_OK(gs_csr_from_coo(m, n, k, ri, ci, v, A));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static bool is_pow2(double x)
{
    int e;
    return x > 0.0 && isfinite(x) && frexp(x, &e) == 0.5;
}

/* Every scale a power of two (1 for an empty row or column: no nonzero value), the scaling exact
 * (a (dr dc) == a 2^(log2 dr + log2 dc)), and every nonempty row and column inf-norm in [lo, hi]. */
static void check_scaled(const gs_csr *A, const double *dr, const double *dc, double lo, double hi)
{
    double *cn = NULL;
    GS_ASSERT_OK(GS_CALLOC(cn, A->ncols));
    for (gs_int i = 0; i < A->nrows; i++) {
        assert_true(is_pow2(dr[i]));
        double rn = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            double x = A->val[p] * (dr[i] * dc[j]); /* as gs_csr_transform */
            if (A->val[p] == 0.0) continue;
            assert_true(x == ldexp(A->val[p], ilogb(dr[i]) + ilogb(dc[j])));
            x = fabs(x);
            rn = fmax(rn, x);
            cn[j] = fmax(cn[j], x);
        }
        if (rn == 0.0) {
            assert_true(dr[i] == 1.0);
        } else {
            if (!(rn >= lo && rn <= hi)) fprintf(stderr, "row %d norm %.17g outside [%g, %g]\n", (int)i, rn, lo, hi);
            assert_true(rn >= lo && rn <= hi);
        }
    }
    for (gs_int j = 0; j < A->ncols; j++) {
        assert_true(is_pow2(dc[j]));
        if (cn[j] == 0.0) {
            assert_true(dc[j] == 1.0);
        } else {
            if (!(cn[j] >= lo && cn[j] <= hi))
                fprintf(stderr, "column %d norm %.17g outside [%g, %g]\n", (int)j, cn[j], lo, hi);
            assert_true(cn[j] >= lo && cn[j] <= hi);
        }
    }
    gs_free(&cn);
}

/* Row/column pass: every nonempty row and column norm in (1/2, 1] (so every entry <= 1). */
static void test_rowcol_random(void **state)
{
    (void)state;
    for (int c = 0; c < 60; c++) {
        gs_int m = 1 + c % 37, n = 1 + (c * 7) % 41;
        gs_csr A = {0};
        random_matrix(m, n, 0.3, c % 3 == 0 ? 1.0 : 100.0, false, 100 + c, &A);
        double *dr = NULL, *dc = NULL;
        GS_ASSERT_OK(GS_MALLOC(dr, m));
        GS_ASSERT_OK(GS_MALLOC(dc, n));
        GS_ASSERT_OK(gs_scale_rowcol(&A, dr, dc));
        check_scaled(&A, dr, dc, nextafter(0.5, 1.0), 1.0);
        gs_free(&dr);
        gs_free(&dc);
        gs_csr_free(&A);
    }
}

/* Ruiz: converged well within the iteration limit; norms in [(1 - tol)/2, 2]; a symmetric matrix keeps
 * dr == dc. */
static void test_ruiz_random(void **state)
{
    (void)state;
    const double tol = 1e-2;
    for (int c = 0; c < 60; c++) {
        bool sym = c % 2 == 1;
        gs_int m = 2 + c % 43, n = sym ? m : 1 + (c * 5) % 31;
        gs_csr A = {0};
        random_matrix(m, n, 0.3, c % 3 == 0 ? 1.0 : 100.0, sym, 500 + c, &A);
        double *dr = NULL, *dc = NULL;
        GS_ASSERT_OK(GS_MALLOC(dr, m));
        GS_ASSERT_OK(GS_MALLOC(dc, n));
        int iters = -1;
        GS_ASSERT_OK(gs_scale_ruiz(&A, 100, tol, dr, dc, &iters));
        assert_true(iters >= 0 && iters < 100);
        check_scaled(&A, dr, dc, (1.0 - tol) / 2.0, iters > 0 ? 2.0 : 2.0 * (1.0 + tol));
        if (sym) assert_memory_equal(dr, dc, (size_t)m * sizeof *dr);
        gs_free(&dr);
        gs_free(&dc);
        gs_csr_free(&A);
    }
}

/* Already equilibrated (a signed permutation with ones, plus entries <= 1): scales all 1 for both. The
 * iteration limit 0 also leaves Ruiz's scales at 1. */
static void test_equilibrated_and_limits(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 1, 2, 2}, ci[] = {1, 2, 0, 1, 2};
    double v[] = {-1.0, 0.25, 1.0, 0.5, 1.0};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 5, ri, ci, v, &A));
    double dr[3], dc[3];
    int iters = -1;
    GS_ASSERT_OK(gs_scale_rowcol(&A, dr, dc));
    for (int k = 0; k < 3; k++) assert_true(dr[k] == 1.0 && dc[k] == 1.0);
    GS_ASSERT_OK(gs_scale_ruiz(&A, 50, 1e-2, dr, dc, &iters));
    assert_int_equal(iters, 0);
    for (int k = 0; k < 3; k++) assert_true(dr[k] == 1.0 && dc[k] == 1.0);
    A.val[0] = 1e8;
    GS_ASSERT_OK(gs_scale_ruiz(&A, 0, 1e-2, dr, dc, &iters));
    assert_int_equal(iters, 0);
    for (int k = 0; k < 3; k++) assert_true(dr[k] == 1.0 && dc[k] == 1.0);
    GS_ASSERT_OK(gs_scale_ruiz(&A, 1, 1e-2, dr, dc, &iters));
    assert_int_equal(iters, 1);
    /* 1x1 [3]: rowcol 3 -> 3/4 (row 2^-2, column 1); Ruiz 1/sqrt(3) each, rounded to 1/2: 3/4 */
    gs_csr B = {0};
    gs_int z = 0;
    double three = 3.0;
    GS_ASSERT_OK(gs_csr_from_coo(1, 1, 1, &z, &z, &three, &B));
    GS_ASSERT_OK(gs_scale_rowcol(&B, dr, dc));
    assert_true(dr[0] == 0.25 && dc[0] == 1.0);
    GS_ASSERT_OK(gs_scale_ruiz(&B, 50, 1e-2, dr, dc, &iters));
    assert_int_equal(iters, 1);
    assert_true(dr[0] == 0.5 && dc[0] == 0.5);
    gs_csr_free(&B);
    gs_csr_free(&A);
}

/* Extreme entries (1e-300 next to 1e300), empty rows and columns, pattern-only, n = 0, bad input. */
static void test_edges(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 2, 3}, ci[] = {0, 3, 3, 0};
    double v[] = {1e300, 1e-300, 4e-300, -2e299};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 4, ri, ci, v, &A));
    double dr[4], dc[4];
    int iters;
    GS_ASSERT_OK(gs_scale_rowcol(&A, dr, dc));
    check_scaled(&A, dr, dc, nextafter(0.5, 1.0), 1.0);
    assert_true(dr[1] == 1.0 && dc[1] == 1.0 && dc[2] == 1.0);
    GS_ASSERT_OK(gs_scale_ruiz(&A, 200, 1e-2, dr, dc, &iters));
    assert_true(iters < 200);
    check_scaled(&A, dr, dc, 0.99 / 2.0, 2.0);
    gs_free(&A.val); /* pattern only */
    GS_ASSERT_OK(gs_scale_rowcol(&A, dr, dc));
    GS_ASSERT_OK(gs_scale_ruiz(&A, 10, 1e-2, dr, dc, &iters));
    for (int k = 0; k < 4; k++) assert_true(dr[k] == 1.0 && dc[k] == 1.0);
    assert_int_equal(iters, 0);
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_csr_alloc(&A, 0, 0, 0, true));
    GS_ASSERT_OK(gs_scale_rowcol(&A, dr, dc));
    GS_ASSERT_OK(gs_scale_ruiz(&A, 10, 1e-2, dr, dc, &iters));
    gs_csr_free(&A);

    double w[] = {1.0, INFINITY, 1.0, 1.0};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 4, ri, ci, w, &A));
    GS_ASSERT_FAILS(gs_scale_rowcol(&A, dr, dc), GS_ERR_NUMERIC, "entry (1, 4) (1-based) is inf");
    GS_ASSERT_FAILS(gs_scale_ruiz(&A, 10, 1e-2, dr, dc, &iters), GS_ERR_NUMERIC, "is inf");
    A.val[1] = 1.0;
    GS_ASSERT_FAILS(gs_scale_ruiz(&A, 10, 0.0, dr, dc, &iters), GS_ERR_ARG, "expected 0 < tol < 1");
    GS_ASSERT_FAILS(gs_scale_ruiz(&A, -1, 0.1, dr, dc, &iters), GS_ERR_ARG, "max_iter");
    GS_ASSERT_FAILS(gs_scale_rowcol(&A, NULL, dc), GS_ERR_ARG, "NULL output");
    gs_csr_free(&A);
}

static void random_perm(gs_int n, uint64_t seed, gs_int *perm)
{
    uint64_t s = seed;
    for (gs_int i = 0; i < n; i++) perm[i] = i;
    for (gs_int i = n - 1; i > 0; i--) {
        gs_int j = (gs_int)(gs_test_rand(&s) * (double)(i + 1));
        gs_int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* C against a dense reference C(i, j) = dr[r] * A(r, c) * dc[c], r = rowmap[i], c = colmap[j]; C's rows
 * sorted, the stored pattern (stored zeros included) carried over. */
static void check_transform(const gs_csr *A, const gs_int *rowmap, const gs_int *colmap, const double *dr,
                            const double *dc)
{
    gs_int m = A->nrows, n = A->ncols;
    gs_csr C = {0};
    GS_ASSERT_OK(gs_csr_transform(A, rowmap, colmap, dr, dc, &C));
    assert_int_equal(C.nrows, m);
    assert_int_equal(C.ncols, n);
    assert_int_equal(C.nnz, A->nnz);
    assert_true(gs_csr_is_sorted(&C));
    bool values = A->val || dr || dc;
    assert_true((C.val != NULL) == values);
    double *ref = NULL;
    signed char *has = NULL;
    GS_ASSERT_OK(GS_CALLOC(ref, (size_t)m * n));
    GS_ASSERT_OK(GS_CALLOC(has, (size_t)m * n));
    for (gs_int r = 0; r < m; r++)
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            ref[(size_t)r * n + A->colind[p]] = A->val ? A->val[p] : 1.0;
            has[(size_t)r * n + A->colind[p]] = 1;
        }
    for (gs_int i = 0; i < m; i++) {
        gs_int r = rowmap ? rowmap[i] : i;
        gs_int p = C.rowptr[i];
        for (gs_int j = 0; j < n; j++) {
            gs_int c = colmap ? colmap[j] : j;
            if (!has[(size_t)r * n + c]) continue;
            assert_true(p < C.rowptr[i + 1]);
            assert_int_equal(C.colind[p], j);
            double want = ref[(size_t)r * n + c] * ((dr ? dr[r] : 1.0) * (dc ? dc[c] : 1.0));
            if (values) assert_true(C.val[p] == want);
            p++;
        }
        assert_int_equal(p, C.rowptr[i + 1]);
    }
    gs_free(&ref);
    gs_free(&has);
    gs_csr_free(&C);
}

static void test_transform_dense_reference(void **state)
{
    (void)state;
    for (int c = 0; c < 40; c++) {
        gs_int m = 1 + c % 13, n = c % 4 == 0 ? m : 1 + (c * 3) % 17;
        if (c == 39) m = 97, n = 83; /* rows longer than 64: the qsort path */
        gs_csr A = {0};
        random_matrix(m, n, c == 39 ? 0.9 : 0.4, 3.0, false, 900 + c, &A);
        gs_int *rowmap = NULL, *colmap = NULL;
        double *dr = NULL, *dc = NULL;
        GS_ASSERT_OK(GS_MALLOC(rowmap, m));
        GS_ASSERT_OK(GS_MALLOC(colmap, n));
        GS_ASSERT_OK(GS_MALLOC(dr, m));
        GS_ASSERT_OK(GS_MALLOC(dc, n));
        random_perm(m, 31 + c, rowmap);
        random_perm(n, 77 + c, colmap);
        uint64_t s = 5 + c;
        for (gs_int i = 0; i < m; i++) dr[i] = 0.5 + gs_test_rand(&s);
        for (gs_int j = 0; j < n; j++) dc[j] = -(0.5 + gs_test_rand(&s));
        for (int variant = 0; variant < 16; variant++)
            check_transform(&A, variant & 1 ? rowmap : NULL, variant & 2 ? colmap : NULL, variant & 4 ? dr : NULL,
                            variant & 8 ? dc : NULL);
        gs_free(&A.val); /* pattern only: values appear only with scales */
        check_transform(&A, rowmap, colmap, NULL, NULL);
        check_transform(&A, rowmap, colmap, dr, NULL);
        check_transform(&A, NULL, colmap, NULL, dc);
        gs_free(&rowmap);
        gs_free(&colmap);
        gs_free(&dr);
        gs_free(&dc);
        gs_csr_free(&A);
    }
}

static void test_transform_bad_maps(void **state)
{
    (void)state;
    gs_csr A = {0}, C = {0};
    GS_ASSERT_OK(gs_test_laplace2d(3, 2, &A));
    gs_int bad[6] = {0, 1, 2, 3, 4, 4};
    GS_ASSERT_FAILS(gs_csr_transform(&A, bad, NULL, NULL, NULL, &C), GS_ERR_ARG, "the row map is not a permutation");
    GS_ASSERT_FAILS(gs_csr_transform(&A, NULL, bad, NULL, NULL, &C), GS_ERR_ARG, "the column map is not a permutation");
    assert_null(C.rowptr);
    GS_ASSERT_OK(gs_csr_alloc(&C, 0, 0, 0, true));
    gs_csr E = {0};
    GS_ASSERT_OK(gs_csr_transform(&C, NULL, NULL, NULL, NULL, &E));
    assert_int_equal(E.nrows, 0);
    gs_csr_free(&E);
    gs_csr_free(&C);
    gs_csr_free(&A);
}

/* A stored zero between scales whose product passes DBL_MAX stays 0 (not 0 * inf = NaN). */
static void test_transform_zero_times_huge_scales(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 1}, ci[] = {0, 1, 1};
    double v[] = {0.0, 1e-300, 3.0};
    gs_csr A = {0}, C = {0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 3, ri, ci, v, &A));
    double dr[2] = {ldexp(1.0, 1000), 0.5}, dc[2] = {ldexp(1.0, 100), ldexp(1.0, -100)};
    GS_ASSERT_OK(gs_csr_transform(&A, NULL, NULL, dr, dc, &C));
    assert_true(C.val[0] == 0.0);
    assert_true(C.val[1] == ldexp(1e-300, 900));
    assert_true(C.val[2] == ldexp(3.0, -101));
    gs_csr_free(&C);
    gs_csr_free(&A);
}

/* Each allocation failing in turn: GS_ERR_MEM, then success once none is reached. */
#define EVERY_ALLOCATION_FAILS(call)                                                   \
    do {                                                                               \
        long k_;                                                                       \
        for (k_ = 1;; k_++) {                                                          \
            gs_error_clear();                                                          \
            gs_alloc_fail_at(k_);                                                      \
            gs_status st_ = (call);                                                    \
            long attempted_ = gs_alloc_count();                                        \
            gs_alloc_fail_at(0);                                                       \
            if (attempted_ < k_) {                                                     \
                assert_int_equal(st_, GS_OK);                                          \
                break;                                                                 \
            }                                                                          \
            assert_int_equal(st_, GS_ERR_MEM);                                         \
        }                                                                              \
        assert_true(k_ > 1);                                                           \
    } while (0)

static void test_allocation_failures(void **state)
{
    (void)state;
    gs_csr A = {0}, C = {0};
    random_matrix(30, 30, 0.3, 50.0, false, 4, &A);
    double dr[30], dc[30];
    gs_int rowmap[30], colmap[30];
    random_perm(30, 1, rowmap);
    random_perm(30, 2, colmap);
    int iters;
    EVERY_ALLOCATION_FAILS(gs_scale_rowcol(&A, dr, dc));
    EVERY_ALLOCATION_FAILS(gs_scale_ruiz(&A, 50, 1e-2, dr, dc, &iters));
    EVERY_ALLOCATION_FAILS(gs_csr_transform(&A, rowmap, colmap, dr, dc, &C));
    gs_csr_free(&C);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rowcol_random),
        cmocka_unit_test(test_ruiz_random),
        cmocka_unit_test(test_equilibrated_and_limits),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_transform_dense_reference),
        cmocka_unit_test(test_transform_bad_maps),
        cmocka_unit_test(test_transform_zero_times_huge_scales),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
