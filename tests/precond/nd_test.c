/* Tests of the nested-dissection ordering (gs_nd, precond/ordering.c): a valid, deterministic
 * permutation that cuts the Cholesky fill of a 2D grid; trivial graphs give the identity. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "precond/ordering.h"

/* nnz of the Cholesky factor L (diagonal included) of B = A(perm, perm) for a symmetric pattern A:
 * elimination tree by Liu's ancestor walk, then row k of L = the union of the tree paths from each
 * j < k with b_kj != 0 up to k. perm NULL = natural order. */
static int64_t cholesky_nnz(const gs_csr *A, const gs_int *perm)
{
    gs_csr B = {0};
    if (perm) GS_ASSERT_OK(gs_csr_permute(A, perm, &B));
    else GS_ASSERT_OK(gs_csr_copy(A, &B));
    gs_int n = B.nrows, *parent = NULL, *anc = NULL, *mark = NULL;
    GS_ASSERT_OK(GS_MALLOC(parent, n));
    GS_ASSERT_OK(GS_MALLOC(anc, n));
    GS_ASSERT_OK(GS_MALLOC(mark, n));
    for (gs_int k = 0; k < n; k++) {
        parent[k] = anc[k] = -1;
        for (gs_int p = B.rowptr[k]; p < B.rowptr[k + 1]; p++) {
            gs_int i = B.colind[p];
            while (i != -1 && i < k) {
                gs_int next = anc[i];
                anc[i] = k;
                if (next == -1) parent[i] = k;
                i = next;
            }
        }
    }
    int64_t nnz = 0;
    for (gs_int k = 0; k < n; k++) {
        mark[k] = k;
        nnz++;
        for (gs_int p = B.rowptr[k]; p < B.rowptr[k + 1]; p++)
            for (gs_int i = B.colind[p]; i < k && mark[i] != k; i = parent[i]) {
                mark[i] = k;
                nnz++;
            }
    }
    gs_free(&parent);
    gs_free(&anc);
    gs_free(&mark);
    gs_csr_free(&B);
    return nnz;
}

/* 2D Poisson on 45 x 31 (n = 1395): a permutation, the same twice, far less fill than the natural
 * (banded) order, and less than its inverse read the wrong way round (perm is new -> old). */
static void test_nd_grid(void **state)
{
    (void)state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(45, 31, &A));
    gs_int n = A.nrows, *perm = NULL, *perm2 = NULL, *iperm = NULL;
    GS_ASSERT_OK(GS_MALLOC(perm, n));
    GS_ASSERT_OK(GS_MALLOC(perm2, n));
    GS_ASSERT_OK(GS_MALLOC(iperm, n));
    GS_ASSERT_OK(gs_nd(&A, perm));
    assert_true(gs_perm_is_valid(n, perm));
    GS_ASSERT_OK(gs_nd(&A, perm2));
    assert_memory_equal(perm, perm2, (size_t)n * sizeof *perm);
    gs_perm_invert(n, perm, iperm);
    int64_t fill_nd = cholesky_nnz(&A, perm), fill_nat = cholesky_nnz(&A, NULL), fill_inv = cholesky_nnz(&A, iperm);
    print_message("Cholesky nnz: nd %lld, natural %lld, inverse of nd %lld\n", (long long)fill_nd,
                  (long long)fill_nat, (long long)fill_inv);
    assert_true(fill_nd * 10 < fill_nat * 7);
    assert_true(fill_nd < fill_inv);
    gs_free(&perm);
    gs_free(&perm2);
    gs_free(&iperm);
    gs_csr_free(&A);
}

/* A nonsymmetric pattern is symmetrized: an upper bidiagonal matrix orders like a path. Two separate
 * grids and isolated vertices (a disconnected graph) also give a permutation, also after allocation
 * failures. */
static void test_nd_nonsymmetric_and_disconnected(void **state)
{
    (void)state;
    const gs_int n = 301;
    gs_int ri[2 * 301], ci[2 * 301], k = 0;
    for (gs_int i = 0; i < n; i++) {
        ri[k] = i;
        ci[k++] = i;
        if (i + 1 < n) {
            ri[k] = i;
            ci[k++] = i + 1;
        }
    }
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, NULL, &A));
    gs_int perm[301];
    GS_ASSERT_OK(gs_nd(&A, perm));
    assert_true(gs_perm_is_valid(n, perm));
    gs_csr_free(&A);

    /* block diagonal: two 10 x 7 grids, then 5 isolated vertices (rows with only a diagonal) */
    gs_csr G = {0};
    GS_ASSERT_OK(gs_test_laplace2d(10, 7, &G));
    gs_int m = G.nrows, *r2 = NULL, *c2 = NULL;
    GS_ASSERT_OK(GS_MALLOC(r2, 2 * G.nnz + 5));
    GS_ASSERT_OK(GS_MALLOC(c2, 2 * G.nnz + 5));
    k = 0;
    for (int b = 0; b < 2; b++)
        for (gs_int i = 0; i < m; i++)
            for (gs_int p = G.rowptr[i]; p < G.rowptr[i + 1]; p++) {
                r2[k] = i + b * m;
                c2[k++] = G.colind[p] + b * m;
            }
    for (gs_int i = 2 * m; i < 2 * m + 5; i++) {
        r2[k] = i;
        c2[k++] = i;
    }
    GS_ASSERT_OK(gs_csr_from_coo(2 * m + 5, 2 * m + 5, k, r2, c2, NULL, &A));
    GS_ASSERT_OK(gs_nd(&A, perm));
    assert_true(gs_perm_is_valid(2 * m + 5, perm));
    /* every allocation failing in turn: GS_ERR_MEM, then success */
    long kk;
    for (kk = 1;; kk++) {
        gs_error_clear();
        gs_alloc_fail_at(kk);
        gs_status st = gs_nd(&A, perm);
        long attempted = gs_alloc_count();
        gs_alloc_fail_at(0);
        if (attempted < kk) {
            assert_int_equal(st, GS_OK);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
    }
    assert_true(kk > 3);
    assert_true(gs_perm_is_valid(2 * m + 5, perm));
    gs_free(&r2);
    gs_free(&c2);
    gs_csr_free(&G);
    gs_csr_free(&A);
}

/* Graphs without edges (a diagonal, an empty matrix), n = 1 and n = 0: the identity. */
static void test_nd_trivial(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_int ri[37], perm[37];
    for (gs_int i = 0; i < 37; i++) ri[i] = i;
    GS_ASSERT_OK(gs_csr_from_coo(37, 37, 37, ri, ri, NULL, &A));
    GS_ASSERT_OK(gs_nd(&A, perm));
    for (gs_int i = 0; i < 37; i++) assert_int_equal(perm[i], i);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_alloc(&A, 5, 5, 0, true));
    GS_ASSERT_OK(gs_nd(&A, perm));
    for (gs_int i = 0; i < 5; i++) assert_int_equal(perm[i], i);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_from_coo(1, 1, 1, ri, ri, NULL, &A));
    perm[0] = -1;
    GS_ASSERT_OK(gs_nd(&A, perm));
    assert_int_equal(perm[0], 0);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_alloc(&A, 0, 0, 0, true));
    GS_ASSERT_OK(gs_nd(&A, perm));
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_alloc(&A, 2, 3, 0, true));
    GS_ASSERT_FAILS(gs_nd(&A, perm), GS_ERR_ARG, "square matrix is required");
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nd_grid),
        cmocka_unit_test(test_nd_nonsymmetric_and_disconnected),
        cmocka_unit_test(test_nd_trivial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
