/* The preprocessing transform (api/preprocess.c): C = P_r Dr A Dc P_c^T entry by entry against a dense
 * copy, the right-hand side, guess and solution maps round-tripping, the matched diagonal, and the
 * structurally singular error, for every combination of matching, scaling and reordering. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "api/preprocess.h"
#include "core/mem.h"

/* An n x n matrix with random values over many orders of magnitude and zero diagonal entries in every
 * third row, structurally nonsingular (a cyclic off-diagonal entry in each row). */
static void awkward(gs_int n, uint64_t seed, gs_csr *A)
{
    gs_int cap = 6 * n, k = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        double mag = pow(10.0, 12.0 * gs_test_rand(&seed) - 6.0);
        if (i % 3 != 0) ri[k] = i, ci[k] = i, v[k++] = mag * (gs_test_rand(&seed) - 0.5);
        ri[k] = i, ci[k] = (i + 1) % n, v[k++] = mag * (1.0 + gs_test_rand(&seed));
        for (int e = 0; e < 3; e++) {
            ri[k] = i;
            ci[k] = (gs_int)(gs_test_rand(&seed) * n);
            v[k++] = mag * (gs_test_rand(&seed) - 0.5);
        }
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, A));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static double entry(const gs_csr *A, gs_int i, gs_int j)
{
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->colind[p] == j) return A->val[p];
    return 0.0;
}

/* Every entry of C against its formula; the maps are permutations. */
static void check_entries(const gs_csr *A, const gs_transform *T, const gs_csr *C)
{
    const gs_int n = A->nrows;
    assert_true(gs_csr_is_sorted(C));
    for (gs_int i = 0; i < n; i++) {
        gs_int r = T->rowmap ? T->rowmap[i] : i;
        for (gs_int j = 0; j < n; j++) {
            gs_int c = T->colmap ? T->colmap[j] : j;
            double want = (T->dr ? T->dr[r] : 1.0) * entry(A, r, c) * (T->dc ? T->dc[c] : 1.0);
            double got = entry(C, i, j);
            assert_true(fabs(got - want) <= 1e-15 * fabs(want));
        }
    }
}

/* C y = b~ for y the guess map of x and b = A x; the solution map returns x. */
static void check_maps(const gs_csr *A, const gs_transform *T, const gs_csr *C)
{
    const gs_int n = A->nrows;
    double *x = NULL, *b = NULL, *bt = NULL, *y = NULL, *Cy = NULL, *xb = NULL;
    GS_ASSERT_OK(GS_MALLOC(x, n));
    GS_ASSERT_OK(GS_MALLOC(b, n));
    GS_ASSERT_OK(GS_MALLOC(bt, n));
    GS_ASSERT_OK(GS_MALLOC(y, n));
    GS_ASSERT_OK(GS_MALLOC(Cy, n));
    GS_ASSERT_OK(GS_MALLOC(xb, n));
    uint64_t seed = 7;
    for (gs_int i = 0; i < n; i++) x[i] = gs_test_rand(&seed) - 0.5;
    gs_csr_spmv(1.0, A, x, 0.0, b);
    gs_test_poison(n, bt);
    gs_test_poison(n, y);
    gs_test_poison(n, xb);
    gs_transform_rhs(T, b, bt);
    gs_transform_guess(T, x, y);
    gs_csr_spmv(1.0, C, y, 0.0, Cy);
    for (gs_int i = 0; i < n; i++) {
        gs_int r = T->rowmap ? T->rowmap[i] : i;
        double scale = 0.0; /* the size of row i's terms, for a relative comparison */
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1]; p++)
            scale += fabs(A->val[p] * x[A->colind[p]]) * (T->dr ? T->dr[r] : 1.0);
        assert_true(fabs(Cy[i] - bt[i]) <= 1e-13 * scale + 1e-300);
    }
    gs_transform_solution(T, y, xb);
    assert_true(gs_test_rel_diff(n, xb, x) <= 1e-15);
    gs_free(&x);
    gs_free(&b);
    gs_free(&bt);
    gs_free(&y);
    gs_free(&Cy);
    gs_free(&xb);
}

static void test_every_combination(void **state)
{
    (void)state;
    const gs_int n = 77;
    gs_csr A = {0};
    awkward(n, 3, &A);
    const gs_matching_kind ms[] = {GS_MATCHING_NONE, GS_MATCHING_MWM};
    const gs_scaling_kind ss[] = {GS_SCALING_NONE, GS_SCALING_RUIZ, GS_SCALING_ROWCOL, GS_SCALING_MATCHING};
    const gs_reorder_kind rs[] = {GS_REORDER_NONE, GS_REORDER_RCM, GS_REORDER_ND};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 3; c++) {
                gs_preprocess p = {ms[a], ss[b], rs[c]};
                gs_transform T;
                gs_csr C = {0};
                if (ss[b] == GS_SCALING_MATCHING && ms[a] == GS_MATCHING_NONE) {
                    GS_ASSERT_FAILS(gs_transform_build(&A, &p, &T, &C), GS_ERR_CONFIG, "system.matching");
                    continue;
                }
                GS_ASSERT_OK(gs_transform_build(&A, &p, &T, &C));
                check_entries(&A, &T, &C);
                check_maps(&A, &T, &C);
                if (ms[a] == GS_MATCHING_MWM) /* the matched matrix has its whole diagonal */
                    for (gs_int i = 0; i < n; i++) {
                        double d = entry(&C, i, i);
                        assert_true(d != 0.0);
                        if (ss[b] == GS_SCALING_MATCHING) assert_true(fabs(fabs(d) - 1.0) <= 1e-12);
                    }
                gs_report *rep = NULL;
                GS_ASSERT_OK(gs_report_create(&rep));
                GS_ASSERT_OK(gs_transform_view(&T, rep));
                assert_string_equal(gs_report_find(rep, "system.matching")->s, gs_matching_name(ms[a]));
                assert_string_equal(gs_report_find(rep, "system.reorder")->s, gs_reorder_name(rs[c]));
                gs_report_destroy(&rep);
                gs_transform_free(&T);
                gs_csr_free(&C);
            }
    gs_csr_free(&A);
}

/* Structurally singular: two rows with the same single column. */
static void test_structurally_singular(void **state)
{
    (void)state;
    gs_int ri[] = {0, 1, 2, 2}, ci[] = {0, 0, 1, 2};
    double v[] = {1.0, 2.0, 3.0, 4.0};
    gs_csr A = {0}, C = {0};
    gs_transform T;
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 4, ri, ci, v, &A));
    gs_preprocess p = {GS_MATCHING_MWM, GS_SCALING_MATCHING, GS_REORDER_RCM};
    GS_ASSERT_FAILS(gs_transform_build(&A, &p, &T, &C), GS_ERR_NUMERIC, "structural rank 2 of 3");
    assert_null(C.rowptr);
    assert_null(T.rowmap);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_combination),
        cmocka_unit_test(test_structurally_singular),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
