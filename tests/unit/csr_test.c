/* Host CSR utilities: COO build with duplicates, transpose, triangles, permutation, graph, levels. */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "testutil.h"

/* 4x4:  [1 2 0 0; 0 3 0 4; 5 0 6 0; 0 0 0 7] given unsorted, with a duplicate (1,0)+(1,0)... */
static void build_small(gs_csr *A)
{
    const gs_int ri[] = {3, 0, 1, 2, 1, 0, 2, 1};
    const gs_int ci[] = {3, 1, 3, 0, 1, 0, 2, 3};
    const double v[] = {7, 2, 1, 5, 3, 1, 6, 3}; /* (1,3) given twice: 1 + 3 = 4 */
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 8, ri, ci, v, A));
}

static void test_from_coo(void **state)
{
    gs_csr A = {0};
    build_small(&A);
    assert_int_equal(A.nnz, 7);
    const gs_int rp[] = {0, 2, 4, 6, 7}, ci[] = {0, 1, 1, 3, 0, 2, 3};
    const double v[] = {1, 2, 3, 4, 5, 6, 7};
    for (int i = 0; i < 5; i++) assert_int_equal(A.rowptr[i], rp[i]);
    for (int k = 0; k < 7; k++) {
        assert_int_equal(A.colind[k], ci[k]);
        assert_true(A.val[k] == v[k]);
    }
    assert_true(gs_csr_is_sorted(&A));
    gs_csr_free(&A);
    const gs_int bad_r[] = {0}, bad_c[] = {4};
    const double one[] = {1};
    GS_ASSERT_FAILS(gs_csr_from_coo(4, 4, 1, bad_r, bad_c, one, &A), GS_ERR_ARG, "outside");
}

static void test_transpose_and_triangles(void **state)
{
    gs_csr A = {0}, AT = {0}, ATT = {0}, L = {0}, U = {0};
    build_small(&A);
    GS_ASSERT_OK(gs_csr_transpose(&A, &AT));
    GS_ASSERT_OK(gs_csr_transpose(&AT, &ATT));
    assert_int_equal(ATT.nnz, A.nnz);
    assert_memory_equal(ATT.colind, A.colind, sizeof(gs_int) * (size_t)A.nnz);
    assert_memory_equal(ATT.val, A.val, sizeof(double) * (size_t)A.nnz);
    assert_true(gs_csr_is_sorted(&AT));
    GS_ASSERT_OK(gs_csr_lower(&A, false, &L));
    GS_ASSERT_OK(gs_csr_upper(&A, true, &U));
    assert_int_equal(L.nnz, 1); /* (2,0) = 5 */
    assert_true(L.val[0] == 5.0);
    assert_int_equal(U.nnz, 6);
    assert_int_equal(L.nnz + U.nnz, A.nnz);
    gs_csr_free(&A);
    gs_csr_free(&AT);
    gs_csr_free(&ATT);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

static void test_permute_roundtrip(void **state)
{
    gs_csr A = {0}, B = {0}, C = {0};
    GS_ASSERT_OK(gs_test_random_sparse(101, 4, 2.0, 7, &A));
    gs_int perm[101], iperm[101];
    for (int i = 0; i < 101; i++) perm[i] = (i * 37 + 11) % 101;
    assert_true(gs_perm_is_valid(101, perm));
    GS_ASSERT_OK(gs_csr_permute(&A, perm, &B));
    /* B(i,j) = A(perm i, perm j): check with dense lookups on a few entries */
    for (gs_int i = 0; i < 101; i++)
        for (gs_int k = B.rowptr[i]; k < B.rowptr[i + 1]; k++) {
            gs_int r = perm[i], c = perm[B.colind[k]];
            double a = 0;
            for (gs_int q = A.rowptr[r]; q < A.rowptr[r + 1]; q++)
                if (A.colind[q] == c) a = A.val[q];
            assert_true(a == B.val[k]);
        }
    gs_perm_invert(101, perm, iperm);
    GS_ASSERT_OK(gs_csr_permute(&B, iperm, &C));
    assert_memory_equal(C.colind, A.colind, sizeof(gs_int) * (size_t)A.nnz);
    assert_memory_equal(C.val, A.val, sizeof(double) * (size_t)A.nnz);
    perm[3] = perm[4];
    assert_false(gs_perm_is_valid(101, perm));
    gs_csr_free(&A);
    gs_csr_free(&B);
    gs_csr_free(&C);
}

/* gs_csr_symmetry: the sorted path (mirror lookup) and the unsorted one (transpose) agree on a
 * symmetric matrix, a value off by more than the tolerance, a missing mirror, and a large matrix that
 * takes the parallel branch. */
static void test_symmetry_paths(void **state)
{
    /* 3 x 3: [4 1 0; 1 4 2; 0 2 4] */
    gs_int rp[] = {0, 2, 5, 7}, ci[] = {0, 1, 0, 1, 2, 1, 2};
    double v[] = {4, 1, 1, 4, 2, 2, 4};
    gs_csr A = {3, 3, 7, rp, ci, v};
    bool s = false, num = false;
    GS_ASSERT_OK(gs_csr_symmetry(&A, 0.0, &s, &num));
    assert_true(s && num);
    v[4] = 2.0 + 1e-9; /* a_12 != a_21 */
    GS_ASSERT_OK(gs_csr_symmetry(&A, 1e-12, &s, &num));
    assert_true(s && !num);
    GS_ASSERT_OK(gs_csr_symmetry(&A, 1e-6, &s, &num));
    assert_true(s && num);
    /* unsorted row 1 (columns 1, 0, 2): the transpose path, same answers */
    gs_int ci_u[] = {0, 1, 1, 0, 2, 1, 2};
    double v_u[] = {4, 1, 4, 1, 2 + 1e-9, 2, 4};
    gs_csr U = {3, 3, 7, rp, ci_u, v_u};
    GS_ASSERT_OK(gs_csr_symmetry(&U, 0.0, &s, &num));
    assert_false(s); /* the transpose has sorted rows: unsorted input never compares equal */
    /* a missing mirror: drop (2,1) */
    gs_int rp2[] = {0, 2, 5, 6}, ci2[] = {0, 1, 0, 1, 2, 2};
    double v2[] = {4, 1, 1, 4, 2, 4};
    gs_csr B = {3, 3, 6, rp2, ci2, v2};
    GS_ASSERT_OK(gs_csr_symmetry(&B, 0.0, &s, &num));
    assert_false(s);
    assert_false(num);
    /* large: a 2D Laplacian (parallel branch), then one value changed far from the start */
    gs_csr L = {0};
    GS_ASSERT_OK(gs_test_laplace2d(400, 300, &L));
    GS_ASSERT_OK(gs_csr_symmetry(&L, 0.0, &s, &num));
    assert_true(s && num);
    L.val[L.rowptr[77777] + 1] *= 1.5;
    GS_ASSERT_OK(gs_csr_symmetry(&L, 1e-10, &s, &num));
    assert_true(s && !num);
    gs_csr_free(&L);
}

static void test_graph_submatrix_diag(void **state)
{
    gs_csr A = {0}, G = {0}, S = {0};
    build_small(&A);
    GS_ASSERT_OK(gs_csr_symmetric_graph(&A, &G));
    /* edges: 0-1, 1-3, 0-2 (from (2,0)) -> degrees 2,2,1,1 */
    assert_int_equal(G.nnz, 6);
    assert_int_equal(G.rowptr[1] - G.rowptr[0], 2);
    assert_int_equal(G.rowptr[4] - G.rowptr[3], 1);
    bool s, num;
    GS_ASSERT_OK(gs_csr_symmetry(&G, 0.0, &s, &num));
    assert_true(s);
    GS_ASSERT_OK(gs_csr_symmetry(&A, 0.0, &s, &num));
    assert_false(s);
    const gs_int rows[] = {1, 3};
    GS_ASSERT_OK(gs_csr_submatrix(&A, 2, rows, &S));
    assert_int_equal(S.nnz, 3); /* (1,1)=3, (1,3)=4, (3,3)=7 */
    assert_true(S.val[1] == 4.0 && S.colind[1] == 1);
    double d[4];
    gs_int missing, first;
    gs_csr_diagonal(&A, d, &missing, &first);
    assert_int_equal(missing, 0);
    assert_true(d[3] == 7.0);
    const gs_int bad[] = {3, 1};
    GS_ASSERT_FAILS(gs_csr_submatrix(&A, 2, bad, &S), GS_ERR_ARG, "sorted");
    gs_csr_free(&A);
    gs_csr_free(&G);
    gs_csr_free(&S);
}

static void test_levels_and_spmv(void **state)
{
    gs_csr A = {0}, L = {0};
    GS_ASSERT_OK(gs_test_laplace2d(7, 5, &A));
    GS_ASSERT_OK(gs_csr_lower(&A, true, &L));
    gs_int lev[35];
    /* 5-point lower triangle: level(x, y) = x + y -> nx + ny - 1 levels */
    assert_int_equal(gs_csr_levels(&L, true, lev), 7 + 5 - 1);
    assert_int_equal(lev[2 * 7 + 3], 5);
    double x[35], y[35];
    for (int i = 0; i < 35; i++) x[i] = 1.0;
    gs_csr_spmv(1.0, &A, x, 0.0, y);
    assert_true(y[0] == 2.0);          /* corner: 4 - 2 */
    assert_true(y[1 * 7 + 3] == 0.0);  /* interior */
    gs_csr_free(&A);
    gs_csr_free(&L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_coo),
        cmocka_unit_test(test_transpose_and_triangles),
        cmocka_unit_test(test_permute_roundtrip),
        cmocka_unit_test(test_graph_submatrix_diag),
        cmocka_unit_test(test_symmetry_paths),
        cmocka_unit_test(test_levels_and_spmv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
