/* Tests of the maximum-product matching and its scaling (precond/matching.c): brute-force optimum over
 * all n! permutations, the +-1 / <= 1 scaling, structural rank and its message, real matrices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "io/mmio.h"
#include "precond/scaling.h"

#define MAXN 8

/* A small dense matrix: a[i][j] with present[i][j] saying the entry is stored (it may be a stored 0). */
typedef struct dense {
    int n;
    double a[MAXN][MAXN];
    bool present[MAXN][MAXN];
} dense;

static void dense_to_csr(const dense *D, gs_csr *A)
{
    gs_int ri[MAXN * MAXN], ci[MAXN * MAXN];
    double v[MAXN * MAXN];
    gs_int k = 0;
    for (int i = 0; i < D->n; i++)
        for (int j = 0; j < D->n; j++)
            if (D->present[i][j]) {
                ri[k] = i;
                ci[k] = j;
                v[k] = D->a[i][j];
                k++;
            }
    GS_ASSERT_OK(gs_csr_from_coo(D->n, D->n, k, ri, ci, v, A));
}

/* Brute force over all permutations sigma (column j takes row sigma[j]): the largest number of nonzero
 * entries a permutation can cover (the structural rank) and, when that is n, the largest
 * sum_j log|a_(sigma(j), j)|. */
static void brute(const dense *D, int j, int *used, double sum, int cnt, int *best_cnt, double *best_sum)
{
    if (j == D->n) {
        if (cnt > *best_cnt) *best_cnt = cnt;
        if (cnt == D->n && sum > *best_sum) *best_sum = sum;
        return;
    }
    for (int i = 0; i < D->n; i++) {
        if (used[i]) continue;
        used[i] = 1;
        bool nz = D->present[i][j] && D->a[i][j] != 0.0;
        brute(D, j + 1, used, nz ? sum + log(fabs(D->a[i][j])) : sum, cnt + nz, best_cnt, best_sum);
        used[i] = 0;
    }
}

/* A random n x n matrix: each entry present with probability density, magnitude 10^U(-range, range),
 * random sign, 1 in 10 present entries a stored zero. nonsingular: the entries of a random
 * permutation are added as nonzeros, so a perfect matching exists. */
static void random_dense(int n, double density, double range, bool nonsingular, uint64_t *s, dense *D)
{
    memset(D, 0, sizeof *D);
    D->n = n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (gs_test_rand(s) >= density) continue;
            D->present[i][j] = true;
            double mag = pow(10.0, range * (2.0 * gs_test_rand(s) - 1.0));
            D->a[i][j] = gs_test_rand(s) < 0.1 ? 0.0 : (gs_test_rand(s) < 0.5 ? -mag : mag);
        }
    if (!nonsingular) return;
    int perm[MAXN];
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(gs_test_rand(s) * (i + 1));
        int t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    for (int j = 0; j < n; j++) {
        int i = perm[j];
        if (D->present[i][j] && D->a[i][j] != 0.0) continue;
        D->present[i][j] = true;
        D->a[i][j] = pow(10.0, range * (2.0 * gs_test_rand(s) - 1.0));
    }
}

/* The matching's guarantees on a structurally nonsingular A: rowperm a permutation putting nonzeros on
 * the diagonal, |dr a dc| == 1 there and <= 1 everywhere (1e-12). This is also a certificate of
 * optimality: every perfect matching's scaled product is <= 1 = the matched one's, and scaling
 * multiplies all of them by the same prod(dr) prod(dc). Returns sum_j log|a_(rowperm[j], j)|. */
static double check_matching(const gs_csr *A, const gs_int *rowperm, const double *dr, const double *dc)
{
    gs_int n = A->nrows;
    assert_true(gs_perm_is_valid(n, rowperm));
    double sum = 0.0;
    gs_int *iperm = NULL;
    GS_ASSERT_OK(GS_MALLOC(iperm, n));
    gs_perm_invert(n, rowperm, iperm);
    gs_int matched = 0;
    for (gs_int r = 0; r < n; r++) {
        assert_true(dr[r] > 0.0 && isfinite(dr[r]));
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            gs_int j = A->colind[p];
            double a = A->val ? A->val[p] : 1.0;
            double s = fabs(a * (dr[r] * dc[j])); /* as gs_csr_transform */
            if (a == 0.0) s = 0.0; /* a stored zero: its scales may multiply past DBL_MAX */
            if (s > 1.0 + 1e-12) fprintf(stderr, "scaled entry (%d, %d) = %.17g > 1\n", (int)r, (int)j, s);
            assert_true(s <= 1.0 + 1e-12);
            if (iperm[r] == j) {
                assert_true(a != 0.0);
                if (fabs(s - 1.0) > 1e-12) fprintf(stderr, "matched (%d, %d) scaled to %.17g\n", (int)r, (int)j, s);
                assert_true(fabs(s - 1.0) <= 1e-12);
                sum += log(fabs(a));
                matched++;
            }
        }
    }
    for (gs_int j = 0; j < n; j++) assert_true(dc[j] > 0.0 && isfinite(dc[j]));
    assert_int_equal(matched, n);
    gs_free(&iperm);
    return sum;
}

/* Whether some scaling for the matching col j <- row rowperm[j] has every log-scale within [-H, H]
 * (Bellman-Ford from the upper bounds, independent of gs_mwm's Dijkstra): with x_k = log dr_k,
 * log dc_(m(k)) = s_k - x_k, s_k = -log|a_(k, m(k))|, the bounds "<= 1" read
 * x_i - x_k <= log|a_(k, j)| - log|a_(i, j)| for each other nonzero a_ij, j = m(k). */
static bool scaling_fits(const dense *D, const gs_int *rowperm, double H)
{
    int n = D->n, col[MAXN];
    double x[MAXN], s[MAXN];
    for (int j = 0; j < n; j++) col[rowperm[j]] = j;
    for (int k = 0; k < n; k++) {
        s[k] = -log(fabs(D->a[k][col[k]]));
        x[k] = fmin(H, s[k] + H);
    }
    for (int it = 0; it < n + 1; it++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                int k = rowperm[j];
                if (k == i || !D->present[i][j] || D->a[i][j] == 0.0) continue;
                x[i] = fmin(x[i], x[k] + log(fabs(D->a[k][j])) - log(fabs(D->a[i][j])));
            }
    for (int k = 0; k < n; k++)
        if (x[k] < fmax(-H, s[k] - H) - 1e-9) return false;
    return true;
}

/* true when a scale sits at the ends of the double range, where gs_mwm clamps scales that a matrix
 * with entries over 600 orders of magnitude can need (the scaled entries then miss their bounds). */
static bool scales_clamped(gs_int n, const double *dr, const double *dc)
{
    for (gs_int k = 0; k < n; k++)
        if (dr[k] <= ldexp(1.0, -1020) || dr[k] >= ldexp(1.0, 1020) || dc[k] <= ldexp(1.0, -1020) ||
            dc[k] >= ldexp(1.0, 1020))
            return true;
    return false;
}

/* Many random small matrices against the brute-force optimum and rank. allow_clamped: entries so
 * spread that no scaling fits in doubles; there only the matching itself is checked. */
static void run_random_cases(int ncases, double range, uint64_t seed, bool allow_clamped)
{
    int clamped = 0;
    uint64_t s = seed;
    int singular_seen = 0, nonsingular_seen = 0;
    for (int c = 0; c < ncases; c++) {
        int n = 1 + (int)(gs_test_rand(&s) * MAXN);
        double density = 0.15 + 0.7 * gs_test_rand(&s);
        dense D;
        random_dense(n, density, range, gs_test_rand(&s) < 0.7, &s, &D);
        int used[MAXN] = {0}, best_cnt = 0;
        double best_sum = -INFINITY;
        brute(&D, 0, used, 0.0, 0, &best_cnt, &best_sum);
        gs_csr A = {0};
        dense_to_csr(&D, &A);
        gs_int rowperm[MAXN], rank = -1;
        double dr[MAXN], dc[MAXN];
        gs_error_clear();
        gs_status st = gs_mwm(&A, rowperm, dr, dc, &rank);
        assert_int_equal(rank, best_cnt);
        if (best_cnt == n) {
            if (st != GS_OK) gs_error_print(stderr);
            assert_int_equal(st, GS_OK);
            double sum = 0.0;
            if (allow_clamped && scales_clamped(n, dr, dc)) {
                /* only where no scaling fits: log 2^-1022 = -708.4 */
                assert_false(scaling_fits(&D, rowperm, 707.0));
                clamped++;
                assert_true(gs_perm_is_valid(n, rowperm));
                for (int j = 0; j < n; j++) {
                    assert_true(D.present[rowperm[j]][j] && D.a[rowperm[j]][j] != 0.0);
                    sum += log(fabs(D.a[rowperm[j]][j]));
                }
            } else {
                sum = check_matching(&A, rowperm, dr, dc);
            }
            double scale = 1.0;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (D.a[i][j] != 0.0) scale = fmax(scale, fabs(log(fabs(D.a[i][j]))));
            if (fabs(sum - best_sum) > 1e-12 * n * scale)
                fprintf(stderr, "case %d (n %d): matched log-product %.17g, optimum %.17g\n", c, n, sum, best_sum);
            assert_true(fabs(sum - best_sum) <= 1e-12 * n * scale);
            nonsingular_seen++;
        } else {
            assert_int_equal(st, GS_ERR_NUMERIC);
            char want[64];
            snprintf(want, sizeof want, "structural rank %d of %d", best_cnt, n);
            if (!strstr(gs_error_message(), want)) fprintf(stderr, "%s\n", gs_error_message());
            assert_non_null(strstr(gs_error_message(), want));
            assert_true(gs_perm_is_valid(n, rowperm));
            singular_seen++;
        }
        gs_error_clear();
        gs_csr_free(&A);
    }
    assert_true(singular_seen > ncases / 10);
    assert_true(nonsingular_seen > ncases / 2);
    assert_true(clamped <= ncases / 10);
    if (clamped) print_message("%d of %d matrices need scales beyond the double range\n", clamped, ncases);
}

static void test_random_small_against_brute_force(void **state)
{
    (void)state;
    run_random_cases(2500, 150.0, 12345, false);
}

/* Entries over 600 orders of magnitude (1e-300..1e300): the logs keep the matching exact. Some 5% of
 * these matrices admit no scaling within the double range (checked independently); every other one
 * gets the full guarantee, so the narrowing of the scales finds a fitting scaling whenever one exists. */
static void test_random_small_huge_range(void **state)
{
    (void)state;
    run_random_cases(800, 300.0, 777, true);
}

/* Entries 1..10 with many ties in the product. */
static void test_random_small_narrow_range(void **state)
{
    (void)state;
    run_random_cases(1200, 0.5, 99, false);
}

/* Hand-checked 3 x 3: the diagonal (1, 1, 1) is a perfect matching but the anti-diagonal-like
 * permutation (rows 2, 0, 1 for columns 0, 1, 2) has product 4 * 5 * 6. */
static void test_small_hand_checked(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 1, 1, 2, 2}, ci[] = {0, 1, 1, 2, 0, 2};
    double v[] = {1, 5, 1, 6, 4, 1};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 6, ri, ci, v, &A));
    gs_int rowperm[3], rank;
    double dr[3], dc[3];
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    const gs_int expect[3] = {2, 0, 1};
    assert_memory_equal(rowperm, expect, sizeof expect);
    assert_int_equal(rank, 3);
    assert_true(fabs(check_matching(&A, rowperm, dr, dc) - log(120.0)) < 1e-14);
    /* NULL scales, NULL rank */
    gs_int rp2[3];
    GS_ASSERT_OK(gs_mwm(&A, rp2, NULL, NULL, NULL));
    assert_memory_equal(rp2, expect, sizeof expect);
    GS_ASSERT_OK(gs_mwm(&A, rp2, dr, NULL, NULL));
    GS_ASSERT_OK(gs_mwm(&A, rp2, NULL, dc, NULL));
    gs_csr_free(&A);
}

static void test_sizes_zero_and_one(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_int rowperm[1] = {-7}, rank = -1;
    double dr[1], dc[1];
    GS_ASSERT_OK(gs_csr_alloc(&A, 0, 0, 0, true));
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    assert_int_equal(rank, 0);
    gs_csr_free(&A);

    gs_int r0 = 0;
    double v = -1e-200;
    GS_ASSERT_OK(gs_csr_from_coo(1, 1, 1, &r0, &r0, &v, &A));
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    assert_int_equal(rowperm[0], 0);
    assert_int_equal(rank, 1);
    assert_true(fabs(fabs(v * (dr[0] * dc[0])) - 1.0) < 1e-15);
    A.val[0] = 0.0; /* a stored zero is no entry */
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, dr, dc, &rank), GS_ERR_NUMERIC, "structural rank 0 of 1");
    assert_int_equal(rank, 0);
    assert_int_equal(rowperm[0], 0);
    gs_csr_free(&A);
}

/* The witnesses named in the message. */
static void test_singular_messages(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_int rowperm[4], rank;
    double dr[4], dc[4];
    /* column 3 (1-based) empty */
    gs_int r1[] = {0, 1, 1, 2, 3, 3}, c1[] = {0, 1, 3, 1, 0, 3};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 6, r1, c1, NULL, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, dr, dc, &rank), GS_ERR_NUMERIC,
                    "structural rank 3 of 4 (no row permutation puts nonzeros on the whole diagonal; e.g. column 3 "
                    "(1-based) has no nonzero entry)");
    assert_int_equal(rank, 3);
    assert_true(gs_perm_is_valid(4, rowperm));
    gs_csr_free(&A);
    /* rows 1, 2, 3 live in columns 1, 2 only; row 4 fills columns 3, 4 */
    gs_int r2[] = {0, 0, 1, 2, 2, 3, 3}, c2[] = {0, 1, 1, 0, 1, 2, 3};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 7, r2, c2, NULL, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, dr, dc, &rank), GS_ERR_NUMERIC,
                    "structural rank 3 of 4 (no row permutation puts nonzeros on the whole diagonal; e.g. the 3 rows "
                    "1, 2, 3 (1-based) have all their nonzeros in only 2 columns: 1, 2)");
    assert_int_equal(rank, 3);
    /* a stored zero that would have completed the matching: said so */
    gs_csr_free(&A);
    gs_int r3[] = {0, 1, 1}, c3[] = {0, 0, 1};
    double v3[] = {2.0, 3.0, 0.0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 3, r3, c3, v3, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, dr, dc, &rank), GS_ERR_NUMERIC,
                    "column 2 (1-based) has no nonzero entry (stored zeros do not count)");
    assert_int_equal(rank, 1);
    gs_csr_free(&A);
    /* an empty row with every column reachable: the row is named */
    gs_int r4[] = {0, 0, 2, 2}, c4[] = {0, 1, 1, 2};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 4, r4, c4, NULL, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, dr, dc, &rank), GS_ERR_NUMERIC, "row 2 (1-based) has no nonzero entry");
    assert_int_equal(rank, 2);
    gs_csr_free(&A);
}

static void test_bad_input(void **state)
{
    (void)state;
    gs_csr A = {0};
    gs_int rowperm[3], rank;
    gs_int ri[] = {0, 1, 2}, ci[] = {0, 1, 2};
    double v[] = {1.0, NAN, 2.0};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 3, ri, ci, v, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, NULL, NULL, &rank), GS_ERR_NUMERIC, "entry (2, 2) (1-based) is nan");
    A.val[1] = -INFINITY;
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, NULL, NULL, &rank), GS_ERR_NUMERIC, "is -inf");
    GS_ASSERT_FAILS(gs_mwm(&A, NULL, NULL, NULL, &rank), GS_ERR_ARG, "row permutation is NULL");
    gs_csr_free(&A);
    gs_int r2[] = {0, 1, 1};
    GS_ASSERT_OK(gs_csr_from_coo(2, 3, 3, r2, ci, NULL, &A));
    GS_ASSERT_FAILS(gs_mwm(&A, rowperm, NULL, NULL, &rank), GS_ERR_ARG, "square matrix is required");
    gs_csr_free(&A);
}

/* Pattern only: every perfect matching is optimal, all scales 1. */
static void test_pattern_only(void **state)
{
    (void)state;
    gs_int ri[] = {0, 1, 1, 2}, ci[] = {1, 0, 2, 0};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(3, 3, 4, ri, ci, NULL, &A));
    gs_free(&A.val);
    gs_int rowperm[3], rank;
    double dr[3], dc[3];
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    const gs_int expect[3] = {2, 0, 1};
    assert_memory_equal(rowperm, expect, sizeof expect);
    for (int k = 0; k < 3; k++) assert_true(dr[k] == 1.0 && dc[k] == 1.0);
    gs_csr_free(&A);
}

/* n = 2003 (not a multiple of 32): a random sparse matrix with a diagonal dominant in every row, rows
 * scaled over 40 orders of magnitude (which multiplies every matching's product by the same factor),
 * then shuffled so that almost no diagonal entry is stored. The shuffle's inverse is the unique
 * optimum (each row's diagonal is its largest entry); the scaled permuted matrix has a diagonal of +-1. */
static void test_shuffled_rows_n2003(void **state)
{
    (void)state;
    const gs_int n = 2003;
    gs_csr B = {0}, A = {0}, C = {0};
    GS_ASSERT_OK(gs_test_random_sparse(n, 5, 1e3, 4242, &B));
    /* spread the magnitudes: row i times 10^(i % 40 - 20) keeps the diagonal dominant in each row */
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = B.rowptr[i]; p < B.rowptr[i + 1]; p++) B.val[p] *= pow(10.0, (double)(i % 40 - 20));
    gs_int *shuffle = NULL, *rowperm = NULL;
    double *dr = NULL, *dc = NULL;
    GS_ASSERT_OK(GS_MALLOC(shuffle, n));
    GS_ASSERT_OK(GS_MALLOC(rowperm, n));
    GS_ASSERT_OK(GS_MALLOC(dr, n));
    GS_ASSERT_OK(GS_MALLOC(dc, n));
    uint64_t s = 5;
    for (gs_int i = 0; i < n; i++) shuffle[i] = i;
    for (gs_int i = n - 1; i > 0; i--) {
        gs_int k = (gs_int)(gs_test_rand(&s) * (i + 1));
        gs_int t = shuffle[i];
        shuffle[i] = shuffle[k];
        shuffle[k] = t;
    }
    GS_ASSERT_OK(gs_csr_transform(&B, shuffle, NULL, NULL, NULL, &A)); /* A(i, :) = B(shuffle[i], :) */
    gs_int rank;
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    assert_int_equal(rank, n);
    check_matching(&A, rowperm, dr, dc);
    gs_int *inv = NULL;
    GS_ASSERT_OK(GS_MALLOC(inv, n));
    gs_perm_invert(n, shuffle, inv);
    assert_memory_equal(rowperm, inv, (size_t)n * sizeof *inv);
    GS_ASSERT_OK(gs_csr_transform(&A, rowperm, NULL, dr, dc, &C));
    double *diag = NULL;
    GS_ASSERT_OK(GS_MALLOC(diag, n));
    gs_int missing;
    gs_csr_diagonal(&C, diag, &missing, NULL);
    assert_int_equal(missing, 0);
    for (gs_int i = 0; i < n; i++) assert_true(fabs(fabs(diag[i]) - 1.0) <= 1e-12);
    gs_free(&diag);
    gs_free(&inv);
    gs_free(&shuffle);
    gs_free(&rowperm);
    gs_free(&dr);
    gs_free(&dc);
    gs_csr_free(&A);
    gs_csr_free(&B);
    gs_csr_free(&C);
}

/* Real matrices with (almost) empty diagonals: a perfect matching, scaled entries <= 1. */
static void check_real_matrix(const char *path)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_mm_read_matrix(path, &A, NULL));
    gs_int n = A.nrows, *rowperm = NULL, rank;
    double *dr = NULL, *dc = NULL;
    GS_ASSERT_OK(GS_MALLOC(rowperm, n));
    GS_ASSERT_OK(GS_MALLOC(dr, n));
    GS_ASSERT_OK(GS_MALLOC(dc, n));
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    assert_int_equal(rank, n);
    check_matching(&A, rowperm, dr, dc);
    gs_free(&rowperm);
    gs_free(&dr);
    gs_free(&dc);
    gs_csr_free(&A);
}

static void test_real_matrices(void **state)
{
    (void)state;
    const char *names[] = {"west0067.mtx", "impcol_a.mtx", "west0497.mtx", "bayer10.mtx", "e05r0000.mtx.gz"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/matrices/%s", GS_DATA_DIR, names[k]);
        check_real_matrix(path);
    }
}

/* The development set beside the repository, where present (skipped per file otherwise). */
static void test_shared_matrices(void **state)
{
    (void)state;
    const char *names[] = {"west2021.mtx", "gemat11.mtx.gz", "lnsp3937.mtx.gz", "lns__131.mtx", "plskz362.mtx",
                           "qh1484.mtx", "rdist2.mtx.gz", "mcfe.mtx.gz", "fs_760_3.mtx"};
    int found = 0;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/../shared/data/matrices/%s", GS_SOURCE_DIR, names[k]);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fclose(f);
        check_real_matrix(path);
        found++;
    }
    if (!found) skip();
}

/* Reducible 2 x 2 whose duals drift: [1e-150 1e150; 0 1e-150]. "(0,1) scaled <= 1" forces
 * dr1 >= 1e300 dr0, and with dc_j = 1 / (1e-150 dr_j) the narrowest scaling has every scale within
 * 1e+-225: dr = (1e-75, 1e225), dc = (1e225, 1e-75). balance_scales must find it. */
static void test_spread_scales_narrowed(void **state)
{
    (void)state;
    gs_int ri[] = {0, 0, 1}, ci[] = {0, 1, 1};
    double v[] = {1e-150, 1e150, -1e-150};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 3, ri, ci, v, &A));
    gs_int rowperm[2], rank;
    double dr[2], dc[2];
    GS_ASSERT_OK(gs_mwm(&A, rowperm, dr, dc, &rank));
    check_matching(&A, rowperm, dr, dc);
    double widest = 0.0;
    for (int k = 0; k < 2; k++) widest = fmax(widest, fmax(fabs(log10(dr[k])), fabs(log10(dc[k]))));
    print_message("widest scale 1e%.2f (narrowest possible 1e225)\n", widest);
    assert_true(widest >= 225.0 - 1e-6 && widest <= 225.1);
    assert_true(fabs(log10(dr[0]) + 75.0) < 0.1 && fabs(log10(dc[1]) + 75.0) < 0.1);
    gs_csr_free(&A);
}

/* Every allocation of gs_mwm failing in turn gives GS_ERR_MEM (the sanitizer runs of the suite check
 * that nothing leaks), on the search path, the singular-error path and the narrowing path. */
static void test_allocation_failures(void **state)
{
    (void)state;
    gs_csr A[3] = {{0}};
    char path[1024];
    snprintf(path, sizeof path, "%s/matrices/west0067.mtx", GS_DATA_DIR);
    GS_ASSERT_OK(gs_mm_read_matrix(path, &A[0], NULL));
    gs_int r1[] = {0, 0, 1, 2, 2, 3, 3}, c1[] = {0, 1, 1, 0, 1, 2, 3};
    GS_ASSERT_OK(gs_csr_from_coo(4, 4, 7, r1, c1, NULL, &A[1]));
    gs_int r2[] = {0, 0, 1}, c2[] = {0, 1, 1};
    double v2[] = {1e-150, 1e150, -1e-150};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 3, r2, c2, v2, &A[2]));
    const gs_status final[3] = {GS_OK, GS_ERR_NUMERIC, GS_OK};
    gs_int rowperm[67], rank;
    double dr[67], dc[67];
    for (int m = 0; m < 3; m++) {
        long k;
        for (k = 1;; k++) {
            gs_error_clear();
            gs_alloc_fail_at(k);
            gs_status st = gs_mwm(&A[m], rowperm, dr, dc, &rank);
            long attempted = gs_alloc_count();
            gs_alloc_fail_at(0);
            if (attempted < k) {
                assert_int_equal(st, final[m]);
                break;
            }
            assert_int_equal(st, GS_ERR_MEM);
        }
        assert_true(k > 10);
        gs_csr_free(&A[m]);
    }
    gs_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_hand_checked),
        cmocka_unit_test(test_sizes_zero_and_one),
        cmocka_unit_test(test_singular_messages),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_pattern_only),
        cmocka_unit_test(test_random_small_against_brute_force),
        cmocka_unit_test(test_random_small_huge_range),
        cmocka_unit_test(test_random_small_narrow_range),
        cmocka_unit_test(test_spread_scales_narrowed),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_shuffled_rows_n2003),
        cmocka_unit_test(test_real_matrices),
        cmocka_unit_test(test_shared_matrices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
