/* The merged-level transformation on the host (merge_ref.c, the twin of the GPU builder) on the whole
 * case suite, for m = 1, 2, 3, 8 levels per group: T_D holds exactly the diagonal and the entries inside
 * a group (CSR order, same values) and has at most m levels; M = I + R has a unit diagonal, reads only
 * earlier groups and has at most ceil(levels / m) levels; R satisfies its definition T_D R = T_O row by
 * row; every row of R sums to less than 1 in magnitude (the suite is diagonally dominant); the two
 * solves agree with the reference within TRI_TOL; a fill limit below R's size builds nothing. On the
 * 5-point 2D and 7-point 3D triangles the levels fall from `levels` to m + ceil(levels / m). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/merge_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

static double find(const gs_csr *A, gs_int i, gs_int j)
{
    for (gs_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++)
        if (A->colind[q] == j) return A->val[q];
    return 0.0;
}

static void check_merge(const tri_case *c, gs_int m, const gs_csr *TD, const gs_csr *M, const gs_ts_merge_stats *st)
{
    const gs_csr *T = &c->T;
    const gs_int n = T->nrows;
    gs_int *level = NULL, *lv = NULL;
    double *row = NULL;
    GS_ASSERT_OK(GS_MALLOC(level, n > 0 ? n : 1));
    GS_ASSERT_OK(GS_MALLOC(lv, n > 0 ? n : 1));
    GS_ASSERT_OK(GS_CALLOC(row, n > 0 ? n : 1));
    const gs_int levels = gs_ls_levels(T, c->uplo, level);
    assert_int_equal(st->levels, levels);
    assert_int_equal(st->m, m);
    assert_int_equal(st->groups, (levels + m - 1) / m);
    assert_true(gs_csr_is_sorted(TD) && gs_csr_is_sorted(M));
    GS_ASSERT_OK(gs_trisolve_check_factor(TD, c->uplo, c->unit));
    GS_ASSERT_OK(gs_trisolve_check_factor(M, c->uplo, true));

    /* T_D: T's diagonal and in-group entries, in order, same values */
    long long td_off = 0;
    for (gs_int i = 0; i < n; i++) {
        gs_int d = TD->rowptr[i];
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            gs_int j = T->colind[q];
            if (j != i && level[j] / m != level[i] / m) continue;
            assert_true(d < TD->rowptr[i + 1]);
            assert_int_equal(TD->colind[d], j);
            assert_true(TD->val[d] == T->val[q]);
            if (j != i) td_off++;
            d++;
        }
        assert_int_equal(d, TD->rowptr[i + 1]);
    }
    assert_int_equal(st->nnz_td_off, td_off);
    assert_true(gs_ls_levels(TD, c->uplo, lv) <= m);

    /* M: earlier groups only; at most `groups` levels; statistics */
    gs_int max_row = 0;
    double growth = 0.0;
    for (gs_int i = 0; i < n; i++) {
        double s = 0.0;
        for (gs_int q = M->rowptr[i]; q < M->rowptr[i + 1]; q++) {
            assert_true(level[M->colind[q]] / m < level[i] / m);
            s += fabs(M->val[q]);
        }
        if (M->rowptr[i + 1] - M->rowptr[i] > max_row) max_row = M->rowptr[i + 1] - M->rowptr[i];
        if (s > growth) growth = s;
    }
    assert_int_equal(st->nnz_r, M->nnz);
    assert_int_equal(st->max_row_r, max_row);
    assert_true(fabs(st->growth - growth) <= 1e-12 * (1.0 + growth));
    assert_true(growth < 1.0); /* diagonally dominant suite */
    if (n > 0) assert_true(gs_ls_levels(M, c->uplo, lv) <= st->groups);

    /* T_D R = T_O, row by row: d_i R_i + sum_{k in group, k != i} t_ik R_k - T_O,i = 0 */
    for (gs_int i = 0; i < n; i++) {
        double d = c->unit ? 1.0 : find(T, i, i), scale = 0.0;
        for (gs_int q = M->rowptr[i]; q < M->rowptr[i + 1]; q++) row[M->colind[q]] += d * M->val[q];
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            gs_int j = T->colind[q];
            if (j == i) continue;
            scale += fabs(T->val[q]);
            if (level[j] / m < level[i] / m) row[j] -= T->val[q];
            else
                for (gs_int s = M->rowptr[j]; s < M->rowptr[j + 1]; s++) row[M->colind[s]] += T->val[q] * M->val[s];
        }
        scale += fabs(d);
        for (gs_int j = 0; j < n; j++) {
            if (!(fabs(row[j]) <= 1e-13 * scale)) fprintf(stderr, "%s m=%d: (T_D R - T_O)(%d,%d) = %.3e\n", c->name,
                                                          (int)m, (int)i, (int)j, row[j]);
            assert_true(fabs(row[j]) <= 1e-13 * scale);
            row[j] = 0.0;
        }
        if (n > 2000) i += n / 200; /* large cases: a sample of the rows (O(n) per row) */
    }
    gs_free(&level);
    gs_free(&lv);
    gs_free(&row);
}

static void test_suite(void **state)
{
    (void)state;
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    const gs_int ms[4] = {1, 2, 3, 8};
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *b = NULL, *xr = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(xr, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(x, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(y, n > 0 ? n : 1));
        tri_rhs(n, (uint64_t)k + 7, b);
        gs_trisolve_reference_host(&c->T, c->uplo, c->unit, b, xr);
        for (int a = 0; a < 4; a++) {
            gs_csr TD, M;
            gs_ts_merge_stats st;
            GS_ASSERT_OK(gs_ts_merge_build_host(&c->T, c->uplo, c->unit, ms[a], (long long)1 << 40, &TD, &M, &st));
            assert_false(st.too_much_fill);
            check_merge(c, ms[a], &TD, &M, &st);
            gs_test_poison(n, x);
            GS_ASSERT_OK(gs_ts_merge_solve_host(&TD, &M, c->uplo, c->unit, b, y, x));
            double e = gs_test_rel_diff(n, x, xr);
            if (!(e <= TRI_TOL)) fprintf(stderr, "merged m=%d %s: relative error %.3e\n", (int)ms[a], c->name, e);
            assert_true(e <= TRI_TOL);
            gs_csr_free(&TD);
            gs_csr_free(&M);
            /* the fill limit: exactly R's size builds it, one entry less builds nothing */
            if (st.nnz_r > 0) {
                gs_ts_merge_stats st2;
                GS_ASSERT_OK(gs_ts_merge_build_host(&c->T, c->uplo, c->unit, ms[a], st.nnz_r, &TD, &M, &st2));
                assert_false(st2.too_much_fill);
                assert_int_equal(M.nnz, st.nnz_r);
                gs_csr_free(&TD);
                gs_csr_free(&M);
                GS_ASSERT_OK(gs_ts_merge_build_host(&c->T, c->uplo, c->unit, ms[a], st.nnz_r - 1, &TD, &M, &st2));
                assert_true(st2.too_much_fill);
                assert_null(TD.rowptr);
                assert_null(M.rowptr);
            }
        }
        gs_free(&b);
        gs_free(&xr);
        gs_free(&x);
        gs_free(&y);
    }
    tri_suite_free(&S);
}

/* Grid triangles in natural order: the level count m + ceil(levels / m) of the two solves. */
static void test_pde_levels(void **state)
{
    (void)state;
    gs_csr A = {0}, T = {0}, TD, M;
    gs_int lv[64 * 64];
    for (int dim = 2; dim <= 3; dim++) {
        const gs_int g = dim == 2 ? 64 : 16;
        GS_ASSERT_OK(dim == 2 ? gs_gen_poisson2d(g, g, &A) : gs_gen_poisson3d(g, g, g, &A));
        for (int side = 0; side < 2; side++) {
            GS_ASSERT_OK(tri_from_matrix(&A, (gs_uplo)side, side == 1, &T));
            const gs_int levels = dim * (g - 1) + 1, m = 4;
            gs_ts_merge_stats st;
            GS_ASSERT_OK(gs_ts_merge_build_host(&T, (gs_uplo)side, side == 1, m, (long long)1 << 40, &TD, &M, &st));
            assert_int_equal(st.levels, levels);
            assert_int_equal(gs_ls_levels(&TD, (gs_uplo)side, lv), m);
            assert_int_equal(gs_ls_levels(&M, (gs_uplo)side, lv), (levels + m - 1) / m);
            /* fill: 2D rows read at most m + 1 rows of the previous group's last level */
            if (dim == 2) assert_true(st.max_row_r <= m + 1);
            gs_csr_free(&TD);
            gs_csr_free(&M);
            gs_csr_free(&T);
        }
        gs_csr_free(&A);
    }
}

/* The rule (what the parameters force: syncfree_rules_test.c). */
static void test_rule(void **state)
{
    (void)state;
    assert_int_equal(gs_ts_syncfree_merge_rule(1048576, 2047, 2), 16); /* 2D 5-point 1024^2 */
    assert_int_equal(gs_ts_syncfree_merge_rule(262144, 1023, 2), GS_SF_MERGE_RULE_MAX); /* capped */
    assert_int_equal(gs_ts_syncfree_merge_rule(1000000, 1023, 2), 8);
    assert_int_equal(gs_ts_syncfree_merge_rule(1000000, 298, 3), 2);  /* 3D: wide levels */
    assert_int_equal(gs_ts_syncfree_merge_rule(262144, 442, 13), 1);  /* 27-point: fill */
    assert_int_equal(gs_ts_syncfree_merge_rule(11397, 50, 2), 1);     /* few levels */
    assert_int_equal(gs_ts_syncfree_merge_rule(0, 0, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_pde_levels),
        cmocka_unit_test(test_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
