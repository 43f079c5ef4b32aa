/* The one-pass symmetry check (gs_csr_find_asymmetry, gs_csr_symmetry) against a reference built on the
 * transpose (A and A^T merged row by row, the check IC(0) used before): the same verdicts, the same first
 * asymmetric pair in row order with the same values, and the same IC(0) error message, on value
 * asymmetries, one-sided entries (explicit zeros among them), NaN and Inf, long rows, empty rows, unsorted
 * rows and random matrices large enough for the parallel path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "core/mem.h"
#include "precond/precond.h"

/* The relative tolerance of the ic0 plug-in's check (precond/ilu.c). */
#define IC0_TOL 1e-10

/* What the reference finds. */
typedef struct ref_result {
    bool structural, numerical; /* gs_csr_symmetry's answers */
    bool found;                 /* a failing pair, missing entries read as 0 */
    gs_int i, j;
    double aij, aji;
} ref_result;

static double ref_value(const gs_csr *A, gs_int p)
{
    return A->val ? A->val[p] : 1.0;
}

/* Reference: rows of A against rows of A^T entry by entry (structure and values of stored pairs), then the
 * merge of both rows for the first (i, j) with |a_ij - a_ji| > tol max(|a_ij|, |a_ji|) or one NaN. */
static void reference(const gs_csr *A, double tol, ref_result *r)
{
    gs_csr AT = {0};
    memset(r, 0, sizeof *r);
    r->i = r->j = -1;
    GS_ASSERT_OK(gs_csr_transpose(A, &AT));
    bool s = true, num = true;
    for (gs_int i = 0; i < A->nrows && s; i++) {
        gs_int a = A->rowptr[i], b = AT.rowptr[i], len = A->rowptr[i + 1] - a;
        if (len != AT.rowptr[i + 1] - b) {
            s = false;
            break;
        }
        for (gs_int k = 0; k < len; k++) {
            if (A->colind[a + k] != AT.colind[b + k]) {
                s = false;
                break;
            }
            double x = ref_value(A, a + k), y = ref_value(&AT, b + k);
            if (fabs(x - y) > tol * fmax(fabs(x), fabs(y))) num = false;
        }
    }
    r->structural = s;
    r->numerical = s && num;
    for (gs_int i = 0; i < A->nrows && !r->found; i++) {
        gs_int p = A->rowptr[i], pe = A->rowptr[i + 1], q = AT.rowptr[i], qe = AT.rowptr[i + 1];
        while ((p < pe || q < qe) && !r->found) {
            gs_int cj = p < pe ? A->colind[p] : GS_INT_MAX, ct = q < qe ? AT.colind[q] : GS_INT_MAX;
            gs_int j = cj < ct ? cj : ct;
            double x = cj == j ? ref_value(A, p++) : 0.0, y = ct == j ? ref_value(&AT, q++) : 0.0;
            if (fabs(x - y) > tol * fmax(fabs(x), fabs(y)) || isnan(x) != isnan(y)) {
                r->found = true;
                r->i = i;
                r->j = j;
                r->aij = x;
                r->aji = y;
            }
        }
    }
    gs_csr_free(&AT);
}

/* The same double, NaN included. */
static void assert_same_double(double x, double y)
{
    if (memcmp(&x, &y, sizeof x) != 0) fprintf(stderr, "values differ: %.17g vs %.17g\n", x, y);
    assert_memory_equal(&x, &y, sizeof x);
}

/* gs_csr_symmetry and gs_csr_find_asymmetry agree with the reference on A; returns the reference. */
static ref_result check_against_reference(const char *what, const gs_csr *A, double tol)
{
    ref_result r;
    reference(A, tol, &r);
    bool s = !r.structural, num = !r.numerical;
    GS_ASSERT_OK(gs_csr_symmetry(A, tol, &s, &num));
    if (s != r.structural || num != r.numerical)
        fprintf(stderr, "%s: gs_csr_symmetry %d/%d, reference %d/%d\n", what, s, num, r.structural, r.numerical);
    assert_int_equal(s, r.structural);
    assert_int_equal(num, r.numerical);
    gs_csr_asymmetry f;
    num = !r.numerical;
    GS_ASSERT_OK(gs_csr_find_asymmetry(A, tol, &num, &f));
    if (num != r.numerical || f.found != r.found || f.i != r.i || f.j != r.j)
        fprintf(stderr, "%s: found %d at (%d,%d) numerical %d; reference %d at (%d,%d) numerical %d\n", what,
                f.found, f.i, f.j, num, r.found, r.i, r.j, r.numerical);
    assert_int_equal(num, r.numerical);
    assert_int_equal(f.found, r.found);
    assert_int_equal(f.i, r.i);
    assert_int_equal(f.j, r.j);
    if (r.found) {
        assert_same_double(f.aij, r.aij);
        assert_same_double(f.aji, r.aji);
    }
    return r;
}

/* The same for sorted rows, whose first pair is named from the upper triangle. */
static ref_result check_sorted(const char *what, const gs_csr *A, double tol)
{
    ref_result r = check_against_reference(what, A, tol);
    if (r.found) assert_true(r.i < r.j);
    return r;
}

/* The ic0 plug-in accepts A exactly when the reference does, and otherwise names the reference's pair in
 * the message it always gave. */
static void check_ic0_message(pc_fixture *f, const gs_csr *A, const ref_result *r)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create("ic0", f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    gs_error_clear();
    gs_status st = gs_pc_setup_numeric(pc, A);
    if (r->numerical || !r->found) {
        /* accepted by the check; the factorization itself may still meet a bad pivot */
        if (st != GS_OK) assert_null(strstr(gs_error_message(), "needs a symmetric matrix"));
    } else {
        char want[512];
        snprintf(want, sizeof want,
                 "preconditioner ic0 needs a symmetric matrix, but A(%d,%d) = %.17g while A(%d,%d) = %.17g "
                 "(1-based; relative tolerance %g); use ilu0 (with bicgstab or gmres) for a nonsymmetric matrix",
                 (int)r->i + 1, (int)r->j + 1, r->aij, (int)r->j + 1, (int)r->i + 1, r->aji, IC0_TOL);
        if (st != GS_ERR_ARG || !strstr(gs_error_message(), want))
            fprintf(stderr, "got %s: %s\nwanted: %s\n", gs_status_name(st), gs_error_message(), want);
        assert_int_equal(st, GS_ERR_ARG);
        assert_non_null(strstr(gs_error_message(), want));
    }
    gs_error_clear();
    gs_pc_destroy(&pc);
}

/* A growable COO list. */
typedef struct coo {
    gs_int n, nnz, cap;
    gs_int *ri, *ci;
    double *v;
} coo;

static void coo_push(coo *c, gs_int i, gs_int j, double v)
{
    if (c->nnz == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->ri = realloc(c->ri, (size_t)c->cap * sizeof *c->ri);
        c->ci = realloc(c->ci, (size_t)c->cap * sizeof *c->ci);
        c->v = realloc(c->v, (size_t)c->cap * sizeof *c->v);
        assert_non_null(c->ri);
        assert_non_null(c->ci);
        assert_non_null(c->v);
    }
    c->ri[c->nnz] = i;
    c->ci[c->nnz] = j;
    c->v[c->nnz] = v;
    c->nnz++;
}

static void coo_build(const coo *c, gs_csr *A)
{
    GS_ASSERT_OK(gs_csr_from_coo(c->n, c->n, c->nnz, c->ri, c->ci, c->v, A));
}

static void coo_free(coo *c)
{
    free(c->ri);
    free(c->ci);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* A 3x3 case from triplets: reference agreement and, when expect is given, the named pair. */
static void small_case(pc_fixture *f, const char *what, gs_int n, gs_int nnz, const gs_int *ri, const gs_int *ci,
                       const double *v, const char *expect)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, &A));
    ref_result r = check_sorted(what, &A, IC0_TOL);
    check_ic0_message(f, &A, &r);
    if (expect) {
        gs_pc *pc = NULL;
        GS_ASSERT_OK(gs_pc_create("ic0", f->be, f->cfg, &pc));
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_ARG, expect);
        gs_pc_destroy(&pc);
    }
    gs_csr_free(&A);
}

/* Hand-made cases with the pair written out. */
static void test_hand_cases(void **state)
{
    pc_fixture *f = *state;
    /* value asymmetry: a_12 = 1, a_21 = 2 (0-based (0,1), (1,0)) */
    {
        gs_int ri[] = {0, 0, 1, 1, 2}, ci[] = {0, 1, 0, 1, 2};
        double v[] = {4, 1, 2, 4, 4};
        small_case(f, "value", 3, 5, ri, ci, v, "A(1,2) = 1 while A(2,1) = 2");
    }
    /* explicit zero facing a missing entry, on either side: symmetric */
    {
        gs_int ri[] = {0, 0, 1, 2, 2}, ci[] = {0, 2, 1, 0, 2};
        double v[] = {4, 0, 4, 0, 4};
        small_case(f, "explicit zeros both sides", 3, 5, ri, ci, v, NULL);
        gs_int ri2[] = {0, 1, 2, 2}, ci2[] = {0, 1, 0, 2};
        double v2[] = {4, 4, 0, 4};
        small_case(f, "explicit zero below", 3, 4, ri2, ci2, v2, NULL);
        gs_int ri3[] = {0, 0, 1, 2}, ci3[] = {0, 2, 1, 2};
        double v3[] = {4, 0, 4, 4};
        small_case(f, "explicit zero above", 3, 4, ri3, ci3, v3, NULL);
    }
    /* a nonzero facing a missing entry: below (named from above, 0 first) and above */
    {
        gs_int ri[] = {0, 1, 2, 2}, ci[] = {0, 1, 1, 2};
        double v[] = {4, 4, -3, 4};
        small_case(f, "one-sided below", 3, 4, ri, ci, v, "A(2,3) = 0 while A(3,2) = -3");
        gs_int ri2[] = {0, 1, 1, 2}, ci2[] = {0, 1, 2, 2};
        double v2[] = {4, 4, -3, 4};
        small_case(f, "one-sided above", 3, 4, ri2, ci2, v2, "A(2,3) = -3 while A(3,2) = 0");
    }
    /* first pair in row order: a one-sided lower entry a_40 (named (0,4), row 0) comes before a value
     * asymmetry in row 1, although it is stored in the last row */
    {
        gs_int ri[] = {0, 1, 1, 2, 2, 3, 4, 4}, ci[] = {0, 1, 2, 1, 2, 3, 0, 4};
        double v[] = {4, 4, 1, 1.5, 4, 4, 7, 4};
        small_case(f, "order", 5, 8, ri, ci, v, "A(1,5) = 0 while A(5,1) = 7");
    }
    /* tolerance: a relative difference of 5e-11 passes, 3e-10 fails */
    {
        gs_int ri[] = {0, 0, 1, 1}, ci[] = {0, 1, 0, 1};
        double v[] = {4, 1, 1 + 5e-11, 4};
        small_case(f, "within tolerance", 2, 4, ri, ci, v, NULL);
        double v2[] = {4, 1, 1 + 3e-10, 4};
        small_case(f, "over tolerance", 2, 4, ri, ci, v2, "A(1,2) = 1 while A(2,1) = 1.0000000003");
    }
    /* NaN facing a number (both stored): the structure and the stored values pass gs_csr_symmetry's test
     * (a NaN difference compares false), so the check lets it through as it always did; NaN facing a
     * missing entry is named; NaN facing NaN passes; Inf facing a missing entry passes (Inf - 0 is not
     * above tol * Inf) */
    {
        gs_int ri[] = {0, 0, 1, 1}, ci[] = {0, 1, 0, 1};
        double v[] = {4, NAN, 1, 4};
        small_case(f, "NaN vs number", 2, 4, ri, ci, v, NULL);
        double v2[] = {4, NAN, NAN, 4};
        small_case(f, "NaN vs NaN", 2, 4, ri, ci, v2, NULL);
        gs_int ri3[] = {0, 0, 1, 2, 2}, ci3[] = {0, 2, 1, 1, 2};
        double v3[] = {4, 0, 4, NAN, 4}; /* plus an explicit zero a_13 facing nothing: pattern asymmetric */
        small_case(f, "NaN one-sided", 3, 5, ri3, ci3, v3, "A(2,3) = 0 while A(3,2) = nan");
        double v4[] = {4, 0, 4, INFINITY, 4};
        small_case(f, "Inf one-sided", 3, 5, ri3, ci3, v4, NULL);
        /* NaN vs number next to a one-sided explicit zero: the pattern differs, so the NaN pair is named */
        gs_int ri5[] = {0, 0, 1, 1, 2, 2}, ci5[] = {0, 1, 0, 1, 0, 2};
        double v5[] = {4, NAN, 1, 4, 0, 4};
        small_case(f, "NaN with asymmetric pattern", 3, 6, ri5, ci5, v5, "A(1,2) = nan while A(2,1) = 1");
    }
}

/* A random symmetric matrix (about per_row pairs per row, a dense row 0 and column 0 when dense, some
 * empty rows) with `defects` random defects: a value changed on one side (over or within tolerance), one
 * side dropped (nonzero or explicit zero left), NaN or Inf on one side. */
static void random_case(gs_int n, int per_row, bool dense, int defects, uint64_t seed, gs_csr *A)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    coo c = {.n = n};
    for (gs_int i = 0; i < n; i++) {
        if (i % 97 == 13) continue; /* empty row (and column) */
        coo_push(&c, i, i, 10.0 + gs_test_rand(&s));
        for (int k = 0; k < per_row; k++) {
            gs_int j = (gs_int)(gs_test_rand(&s) * n);
            if (j >= n) j = n - 1;
            if (j <= i || j % 97 == 13) continue;
            double a = gs_test_rand(&s) - 0.5;
            coo_push(&c, i, j, a);
            coo_push(&c, j, i, a);
        }
        if (dense && i > 0) {
            coo_push(&c, 0, i, 0.25);
            coo_push(&c, i, 0, 0.25);
        }
    }
    for (int d = 0; d < defects; d++) {
        gs_int k = (gs_int)(gs_test_rand(&s) * c.nnz);
        if (k >= c.nnz) k = c.nnz - 1;
        if (c.ri[k] == c.ci[k]) continue;
        switch ((int)(gs_test_rand(&s) * 7)) {
        case 0: c.v[k] *= 1.0 + 1e-6; break;                 /* over tolerance */
        case 1: c.v[k] *= 1.0 + 2e-11; break;                /* within */
        case 2: c.ri[k] = c.ci[k]; break;                    /* moved onto the diagonal: one side gone */
        case 3: c.v[k] = 0.0; break;                         /* zero facing a value */
        case 4: c.v[k] = NAN; break;
        case 5: c.v[k] = INFINITY; break;
        default: /* drop one side, leaving its mirror alone, or an explicit zero there */
            c.ri[k] = c.ci[k];
            for (gs_int m = 0; m < c.nnz; m++)
                if (gs_test_rand(&s) < 0.5 && m != k && c.ri[m] != c.ci[m]) {
                    c.v[m] = 0.0;
                    break;
                }
            break;
        }
    }
    coo_build(&c, A);
    coo_free(&c);
}

/* Many small random matrices, and a few above the size where the scan runs in parallel. */
static void test_random_matrices(void **state)
{
    pc_fixture *f = *state;
    int named = 0, accepted = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        gs_csr A = {0};
        gs_int n = 3 + (gs_int)(seed % 61);
        random_case(n, 3, seed % 5 == 0, (int)(seed % 4), seed, &A);
        char what[64];
        snprintf(what, sizeof what, "small random seed %d", (int)seed);
        ref_result r = check_sorted(what, &A, IC0_TOL);
        if (seed % 8 == 0) check_ic0_message(f, &A, &r);
        if (!r.numerical && r.found) named++;
        else accepted++;
        gs_csr_free(&A);
    }
    /* both outcomes occur, so the comparisons above covered both */
    assert_true(named > 50);
    assert_true(accepted > 50);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        gs_csr A = {0};
        random_case(40003, 6, seed % 2 == 0, (int)(seed % 4) * 3, 1000 + seed, &A);
        assert_true(A.nnz > 200000);
        char what[64];
        snprintf(what, sizeof what, "large random seed %d", (int)seed);
        ref_result r = check_sorted(what, &A, IC0_TOL);
        if (seed <= 4) check_ic0_message(f, &A, &r);
        gs_csr_free(&A);
    }
}

/* Unsorted rows take the transpose path and give what it always gave; a pattern-only matrix reads 1.0. */
static void test_unsorted_and_pattern(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        gs_csr A = {0};
        random_case(30 + (gs_int)seed, 3, seed % 3 == 0, (int)(seed % 3), 500 + seed, &A);
        /* reverse every third row with two or more entries */
        for (gs_int i = 0; i < A.nrows; i += 3)
            for (gs_int a = A.rowptr[i], b = A.rowptr[i + 1] - 1; a < b; a++, b--) {
                gs_int tc = A.colind[a];
                A.colind[a] = A.colind[b];
                A.colind[b] = tc;
                double tv = A.val[a];
                A.val[a] = A.val[b];
                A.val[b] = tv;
            }
        char what[64];
        snprintf(what, sizeof what, "unsorted seed %d", (int)seed);
        (void)check_against_reference(what, &A, IC0_TOL);
        /* pattern only */
        double *val = A.val;
        A.val = NULL;
        GS_ASSERT_OK(gs_csr_sort_dedupe(&A));
        snprintf(what, sizeof what, "pattern seed %d", (int)seed);
        check_sorted(what, &A, IC0_TOL);
        A.val = val;
        gs_csr_free(&A);
    }
    /* a single unsorted row of a symmetric Laplacian (row 24 of 7x7: columns 17 23 24 25 31), out of order
     * in each place of the row: the set of entries stays symmetric, so a scan that missed the disorder
     * would call it symmetric where the transpose path does not */
    const gs_int orders[4][5] = {
        {17, 23, 24, 31, 25}, {17, 24, 23, 25, 31}, {17, 23, 25, 24, 31}, {23, 17, 24, 25, 31}};
    for (int o = 0; o < 4; o++) {
        gs_csr L = {0};
        GS_ASSERT_OK(gs_test_laplace2d(7, 7, &L));
        assert_int_equal(L.rowptr[25] - L.rowptr[24], 5);
        for (int k = 0; k < 5; k++) {
            L.colind[L.rowptr[24] + k] = orders[o][k];
            L.val[L.rowptr[24] + k] = orders[o][k] == 24 ? 4.0 : -1.0;
        }
        ref_result r = check_against_reference("unsorted row of a Laplacian", &L, IC0_TOL);
        assert_false(r.numerical);
        gs_csr_free(&L);
    }
    /* non-square: nothing to mirror */
    gs_int ri[] = {0, 1}, ci[] = {1, 2};
    double v[] = {1, 2};
    gs_csr R = {0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 3, 2, ri, ci, v, &R));
    bool s = true, num = true;
    GS_ASSERT_OK(gs_csr_symmetry(&R, 0.0, &s, &num));
    assert_false(s);
    assert_false(num);
    gs_csr_asymmetry fa;
    GS_ASSERT_OK(gs_csr_find_asymmetry(&R, 0.0, &num, &fa));
    assert_false(num);
    assert_false(fa.found);
    gs_csr_free(&R);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_hand_cases),
        PC_FIXTURE_TEST(test_random_matrices),
        PC_FIXTURE_TEST(test_unsorted_and_pattern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
