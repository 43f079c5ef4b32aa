/* Tests of RCM, METIS k-way partitions and overlap growth (precond/ordering.c). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "precond/ordering.h"

/* Tridiagonal path graph 0 - 1 - ... - (n-1) (with diagonal), as a matrix. */
static void path_matrix(gs_int n, gs_csr *A)
{
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    gs_int cap = 3 * n, k = 0;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        for (gs_int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            ri[k] = i;
            ci[k] = j;
            v[k] = i == j ? 2.0 : -1.0;
            k++;
        }
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, A));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static gs_int bandwidth(const gs_csr *A)
{
    gs_int bw = 0;
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int d = abs(A->colind[p] - i);
            if (d > bw) bw = d;
        }
    return bw;
}

static void random_perm(gs_int n, uint64_t seed, gs_int *perm)
{
    uint64_t s = seed;
    for (gs_int i = 0; i < n; i++) perm[i] = i;
    for (gs_int i = n - 1; i > 0; i--) {
        gs_int j = (gs_int)(gs_test_rand(&s) * (double)(i + 1));
        if (j > i) j = i;
        gs_int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* A path numbered 0..4: the pseudo-peripheral start is 0, CM gives 0 1 2 3 4, reversed 4 3 2 1 0. */
static void test_rcm_path_hand_checked(void **state)
{
    (void)state;
    gs_csr A = {0};
    path_matrix(5, &A);
    gs_int perm[5];
    GS_ASSERT_OK(gs_rcm(&A, perm));
    const gs_int expect[5] = {4, 3, 2, 1, 0};
    assert_memory_equal(perm, expect, sizeof expect);
    gs_csr_free(&A);
}

/* Star: centre 0 joined to 1..4. Start 0 -> last level {1..4}, min degree then index -> 1; BFS from
 * 1 has eccentricity 2 > 1, so r = 1; from 1 the last level is {2,3,4}: 2 gives eccentricity 2, not
 * more -> stop at 1. CM from 1: 1, 0, 2, 3, 4; reversed: 4 3 2 0 1. */
static void test_rcm_star_hand_checked(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 0, 0, 0, 1, 2, 3, 4};
    gs_int ci[] = {0, 1, 2, 3, 4, 1, 2, 3, 4};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(5, 5, 9, ri, ci, NULL, &A)); /* only A(0, j): symmetrized by RCM */
    gs_int perm[5];
    GS_ASSERT_OK(gs_rcm(&A, perm));
    const gs_int expect[5] = {4, 3, 2, 0, 1};
    assert_memory_equal(perm, expect, sizeof expect);
    gs_csr_free(&A);
}

static void test_rcm_reduces_bandwidth_of_shuffled_laplacian(void **state)
{
    (void)state;
    const gs_int nx = 23, ny = 37, n = nx * ny;
    gs_csr A = {0}, S = {0}, R = {0};
    gs_int *shuffle = NULL, *perm = NULL, *perm2 = NULL;
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(GS_MALLOC(shuffle, n));
    GS_ASSERT_OK(GS_MALLOC(perm, n));
    GS_ASSERT_OK(GS_MALLOC(perm2, n));
    random_perm(n, 12345, shuffle);
    GS_ASSERT_OK(gs_csr_permute(&A, shuffle, &S));
    gs_int bw_shuffled = bandwidth(&S);
    assert_true(bw_shuffled > n / 2); /* the shuffle really destroyed the banded structure */

    GS_ASSERT_OK(gs_rcm(&S, perm));
    assert_true(gs_perm_is_valid(n, perm));
    GS_ASSERT_OK(gs_csr_permute(&S, perm, &R));
    gs_int bw_rcm = bandwidth(&R);
    /* Level sets of a grid are anti-diagonals of at most min(nx, ny) vertices: bandwidth ~ min + 1. */
    assert_true(bw_rcm <= 2 * nx);
    assert_true(bw_rcm < bw_shuffled / 10);

    /* deterministic: same input, same permutation */
    GS_ASSERT_OK(gs_rcm(&S, perm2));
    assert_memory_equal(perm, perm2, (size_t)n * sizeof *perm);

    gs_csr_free(&A);
    gs_csr_free(&S);
    gs_csr_free(&R);
    gs_free(&shuffle);
    gs_free(&perm);
    gs_free(&perm2);
}

/* Several components (two paths and isolated vertices), nonsymmetric pattern, an empty row. */
static void test_rcm_disconnected_nonsymmetric(void **state)
{
    (void)state;
    /* vertices 0..9: path 0-3-6 via one-directional entries, path 1-4, isolated 2, 5, 7, 8, 9 (9 has
     * an empty row) */
    gs_int ri[] = {0, 3, 6, 1, 4, 2, 5, 7, 8, 0, 3};
    gs_int ci[] = {3, 6, 6, 4, 4, 2, 5, 7, 8, 0, 3};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(10, 10, 11, ri, ci, NULL, &A));
    gs_int perm[10];
    GS_ASSERT_OK(gs_rcm(&A, perm));
    assert_true(gs_perm_is_valid(10, perm));
    /* each path must be numbered consecutively with bandwidth 1 */
    gs_csr B = {0};
    GS_ASSERT_OK(gs_csr_permute(&A, perm, &B));
    assert_true(bandwidth(&B) <= 1);
    gs_csr_free(&A);
    gs_csr_free(&B);
}

static void test_rcm_errors(void **state)
{
    (void)state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_alloc(&A, 3, 4, 0, true));
    gs_int perm[4];
    GS_ASSERT_FAILS(gs_rcm(&A, perm), GS_ERR_ARG, "square");
    gs_csr_free(&A);
}

static void test_partition_laplacian_8_parts(void **state)
{
    (void)state;
    const gs_int nx = 40, ny = 40, n = nx * ny, np = 8;
    gs_csr A = {0};
    gs_int *part = NULL, *part2 = NULL;
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(GS_MALLOC(part, n));
    GS_ASSERT_OK(GS_MALLOC(part2, n));
    for (gs_int i = 0; i < n; i++) part[i] = -7;
    GS_ASSERT_OK(gs_partition_kway(&A, np, 1, part));
    gs_int count[8] = {0};
    for (gs_int i = 0; i < n; i++) {
        assert_in_range(part[i], 0, np - 1);
        count[part[i]]++;
    }
    for (gs_int p = 0; p < np; p++) {
        assert_true(count[p] > 0);
        assert_true(count[p] <= (gs_int)(1.1 * n / np) + 1); /* METIS balances within a few % */
    }
    /* a good partition of a grid cuts few edges: far fewer than a random assignment (~7/8 of 2n) */
    gs_int cut = 0;
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++)
            if (part[A.colind[p]] != part[i]) cut++;
    assert_true(cut / 2 < 400);

    /* deterministic for a fixed seed */
    GS_ASSERT_OK(gs_partition_kway(&A, np, 1, part2));
    assert_memory_equal(part, part2, (size_t)n * sizeof *part);

    gs_csr_free(&A);
    gs_free(&part);
    gs_free(&part2);
}

/* preconditioner.partition: "contiguous" gives consecutive ranges whose sizes differ by at most one
 * (1003 rows, not a multiple of the parts), the same on any matrix of that size, parts past n rows empty;
 * "metis" is gs_partition_kway; the names round-trip; errors. */
static void test_partition_contiguous(void **state)
{
    (void)state;
    const gs_int n = 1003;
    gs_csr A = {0}, B = {0};
    gs_int *part = NULL, *part2 = NULL;
    GS_ASSERT_OK(gs_test_laplace2d(17, 59, &A)); /* 1003 rows */
    path_matrix(n, &B);
    GS_ASSERT_OK(GS_MALLOC(part, n));
    GS_ASSERT_OK(GS_MALLOC(part2, n));
    const gs_int nps[] = {1, 2, 3, 7, 32, 1003};
    for (int t = 0; t < 6; t++) {
        const gs_int np = nps[t];
        for (gs_int i = 0; i < n; i++) part[i] = part2[i] = -5;
        GS_ASSERT_OK(gs_partition(&A, np, GS_PARTITION_CONTIGUOUS, 1, part));
        GS_ASSERT_OK(gs_partition(&B, np, GS_PARTITION_CONTIGUOUS, 9, part2));
        assert_memory_equal(part, part2, (size_t)n * sizeof *part); /* the pattern and the seed do not matter */
        gs_int *count = NULL;
        GS_ASSERT_OK(GS_CALLOC(count, (size_t)np));
        for (gs_int i = 0; i < n; i++) {
            assert_in_range(part[i], 0, np - 1);
            if (i > 0) assert_true(part[i] == part[i - 1] || part[i] == part[i - 1] + 1);
            count[part[i]]++;
        }
        assert_int_equal(part[0], 0);
        assert_int_equal(part[n - 1], np - 1);
        for (gs_int p = 0; p < np; p++) assert_in_range(count[p], n / np, n / np + 1);
        /* each part's range by formula, as a rank that never sees the matrix computes it */
        assert_int_equal(gs_partition_contiguous_start(n, np, 0), 0);
        assert_int_equal(gs_partition_contiguous_start(n, np, np), n);
        for (gs_int i = 0; i < n; i++) {
            assert_true(gs_partition_contiguous_start(n, np, part[i]) <= i);
            assert_true(i < gs_partition_contiguous_start(n, np, part[i] + 1));
        }
        gs_free(&count);
    }
    gs_int small[3];
    gs_csr C = {0};
    path_matrix(3, &C);
    GS_ASSERT_OK(gs_partition(&C, 5, GS_PARTITION_CONTIGUOUS, 1, small)); /* parts 2 and 4 stay empty */
    assert_int_equal(small[0], 0);
    assert_int_equal(small[1], 1 * 5 / 3);
    assert_int_equal(small[2], 2 * 5 / 3);
    const gs_int starts[6] = {0, 1, 2, 2, 3, 3}; /* parts 2 and 4 empty */
    for (gs_int r = 0; r <= 5; r++) assert_int_equal(gs_partition_contiguous_start(3, 5, r), starts[r]);
    /* 64-bit products: 2^31 - 1 rows over 7 parts */
    assert_int_equal(gs_partition_contiguous_start(GS_INT_MAX, 7, 7), GS_INT_MAX);
    assert_int_equal(gs_partition_contiguous_start(GS_INT_MAX, 7, 3), (gs_int)((3LL * GS_INT_MAX + 6) / 7));
    GS_ASSERT_OK(gs_partition(&A, 8, GS_PARTITION_METIS, 1, part));
    GS_ASSERT_OK(gs_partition_kway(&A, 8, 1, part2));
    assert_memory_equal(part, part2, (size_t)n * sizeof *part);
    assert_int_equal(gs_partition_kind_of("contiguous"), GS_PARTITION_CONTIGUOUS);
    assert_int_equal(gs_partition_kind_of("metis"), GS_PARTITION_METIS);
    assert_string_equal(gs_partition_kind_name(GS_PARTITION_CONTIGUOUS), "contiguous");
    assert_string_equal(gs_partition_kind_name(GS_PARTITION_METIS), "metis");
    GS_ASSERT_FAILS(gs_partition(&A, 0, GS_PARTITION_CONTIGUOUS, 1, part), GS_ERR_ARG, "at least 1");
    GS_ASSERT_FAILS(gs_partition(&A, 2, GS_PARTITION_CONTIGUOUS, 1, NULL), GS_ERR_ARG, "NULL");
    gs_csr_free(&A);
    gs_csr_free(&B);
    gs_csr_free(&C);
    gs_free(&part);
    gs_free(&part2);
}

static void test_partition_edge_cases(void **state)
{
    (void)state;
    gs_csr A = {0}, D = {0};
    path_matrix(37, &A);
    gs_int part[37];

    /* nparts == 1: all zeros */
    for (int i = 0; i < 37; i++) part[i] = -1;
    GS_ASSERT_OK(gs_partition_kway(&A, 1, 3, part));
    for (int i = 0; i < 37; i++) assert_int_equal(part[i], 0);

    /* nparts == n and > n: one vertex per part */
    GS_ASSERT_OK(gs_partition_kway(&A, 37, 3, part));
    for (int i = 0; i < 37; i++) assert_int_equal(part[i], i);
    for (int i = 0; i < 37; i++) part[i] = -1;
    GS_ASSERT_OK(gs_partition_kway(&A, 100, 3, part));
    for (int i = 0; i < 37; i++) assert_int_equal(part[i], i);

    /* a diagonal matrix has no edges: contiguous split, every part used, sizes differ by <= 1 */
    gs_int ri[37];
    for (int i = 0; i < 37; i++) ri[i] = i;
    GS_ASSERT_OK(gs_csr_from_coo(37, 37, 37, ri, ri, NULL, &D));
    GS_ASSERT_OK(gs_partition_kway(&D, 5, 3, part));
    gs_int count[5] = {0};
    for (int i = 0; i < 37; i++) {
        assert_in_range(part[i], 0, 4);
        if (i > 0) assert_true(part[i] >= part[i - 1]);
        count[part[i]]++;
    }
    for (int p = 0; p < 5; p++) assert_in_range(count[p], 7, 8);

    /* a path into 4 parts with METIS: valid ids */
    GS_ASSERT_OK(gs_partition_kway(&A, 4, 3, part));
    for (int i = 0; i < 37; i++) assert_in_range(part[i], 0, 3);

    GS_ASSERT_FAILS(gs_partition_kway(&A, 0, 1, part), GS_ERR_ARG, "at least 1");
    gs_csr_free(&A);
    gs_csr_free(&D);
}

static void check_overlap(const gs_csr *G, gs_int k, const gs_int *in, int layers, gs_int kexp, const gs_int *expect)
{
    gs_int *out = NULL, kout = -1;
    GS_ASSERT_OK(gs_grow_overlap(G, k, in, layers, &out, &kout));
    assert_int_equal(kout, kexp);
    if (kexp > 0) assert_memory_equal(out, expect, (size_t)kexp * sizeof *out);
    gs_free(&out);
}

static void test_grow_overlap_path(void **state)
{
    (void)state;
    gs_csr A = {0}, G = {0};
    path_matrix(10, &A);
    GS_ASSERT_OK(gs_csr_symmetric_graph(&A, &G));
    const gs_int in[] = {4, 5};
    const gs_int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    check_overlap(&G, 2, in, 0, 2, in);
    check_overlap(&G, 2, in, 1, 4, (const gs_int[]){3, 4, 5, 6});
    check_overlap(&G, 2, in, 2, 6, (const gs_int[]){2, 3, 4, 5, 6, 7});
    check_overlap(&G, 2, in, 50, 10, all);
    /* two ends grow inwards; the result is sorted */
    check_overlap(&G, 2, (const gs_int[]){0, 9}, 1, 4, (const gs_int[]){0, 1, 8, 9});
    check_overlap(&G, 2, (const gs_int[]){0, 9}, 5, 10, all);
    /* empty input stays empty */
    check_overlap(&G, 0, NULL, 3, 0, NULL);

    gs_int *out = NULL, kout = 0;
    GS_ASSERT_FAILS(gs_grow_overlap(&G, 2, (const gs_int[]){5, 4}, 1, &out, &kout), GS_ERR_ARG, "increasing");
    GS_ASSERT_FAILS(gs_grow_overlap(&G, 1, (const gs_int[]){10}, 1, &out, &kout), GS_ERR_ARG, "outside");
    assert_null(out);
    gs_csr_free(&A);
    gs_csr_free(&G);
}

/* Overlap of a METIS part of a grid by one layer adds exactly the part's outer boundary. */
static void test_grow_overlap_grid_part(void **state)
{
    (void)state;
    const gs_int nx = 17, ny = 19, n = nx * ny;
    gs_csr A = {0}, G = {0};
    gs_int *part = NULL, *in = NULL, *out = NULL, kout = 0;
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(gs_csr_symmetric_graph(&A, &G));
    GS_ASSERT_OK(GS_MALLOC(part, n));
    GS_ASSERT_OK(GS_MALLOC(in, n));
    GS_ASSERT_OK(gs_partition_kway(&A, 4, 7, part));
    gs_int k = 0;
    for (gs_int i = 0; i < n; i++)
        if (part[i] == 2) in[k++] = i;
    GS_ASSERT_OK(gs_grow_overlap(&G, k, in, 1, &out, &kout));
    /* expected: members of part 2 plus every vertex adjacent to one */
    gs_int kexp = 0;
    for (gs_int i = 0; i < n; i++) {
        bool member = part[i] == 2;
        for (gs_int p = G.rowptr[i]; p < G.rowptr[i + 1] && !member; p++) member = part[G.colind[p]] == 2;
        if (member) {
            assert_true(kexp < kout);
            assert_int_equal(out[kexp], i);
            kexp++;
        }
    }
    assert_int_equal(kout, kexp);
    assert_true(kout > k);
    gs_csr_free(&A);
    gs_csr_free(&G);
    gs_free(&part);
    gs_free(&in);
    gs_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rcm_path_hand_checked),
        cmocka_unit_test(test_rcm_star_hand_checked),
        cmocka_unit_test(test_rcm_reduces_bandwidth_of_shuffled_laplacian),
        cmocka_unit_test(test_rcm_disconnected_nonsymmetric),
        cmocka_unit_test(test_rcm_errors),
        cmocka_unit_test(test_partition_laplacian_8_parts),
        cmocka_unit_test(test_partition_edge_cases),
        cmocka_unit_test(test_partition_contiguous),
        cmocka_unit_test(test_grow_overlap_path),
        cmocka_unit_test(test_grow_overlap_grid_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
