/* Model-problem generators: hand-checked rows, nonzero counts, symmetry, row sums, sorted columns,
 * agreement with an independent COO-built 5-point Laplacian, and the size-limit errors. */
#include <math.h>
#include <string.h>

#include "core/csr.h"
#include "core/generate.h"
#include "testutil.h"

/* Entry (i, j) of a sorted CSR matrix, 0 when not stored. */
static double entry(const gs_csr *A, gs_int i, gs_int j)
{
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->colind[p] == j) return A->val[p];
    return 0.0;
}

static double row_sum(const gs_csr *A, gs_int i)
{
    double s = 0.0;
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p];
    return s;
}

/* Row i has exactly the columns cols[0..len) (ascending) with the values vals[0..len). */
static void assert_row(const gs_csr *A, gs_int i, int len, const gs_int *cols, const double *vals)
{
    assert_int_equal(A->rowptr[i + 1] - A->rowptr[i], len);
    for (int k = 0; k < len; k++) {
        assert_int_equal(A->colind[A->rowptr[i] + k], cols[k]);
        assert_true(A->val[A->rowptr[i] + k] == vals[k]);
    }
}

/* Structure every generator guarantees: square, sorted, diagonal present with value diag, and the
 * row sums: zero on interior rows (is_interior says which), never negative elsewhere. */
static void check_common(const gs_csr *A, gs_int nx, gs_int ny, gs_int nz, double diag, int reach)
{
    assert_int_equal(A->nrows, nx * ny * nz);
    assert_int_equal(A->ncols, A->nrows);
    assert_int_equal(A->rowptr[0], 0);
    assert_int_equal(A->rowptr[A->nrows], A->nnz);
    assert_true(gs_csr_is_sorted(A));
    for (gs_int k = 0; k < nz; k++)
        for (gs_int j = 0; j < ny; j++)
            for (gs_int i = 0; i < nx; i++) {
                gs_int p = i + nx * (j + ny * k);
                assert_true(entry(A, p, p) == diag);
                bool interior = i >= reach && i < nx - reach && j >= reach && j < ny - reach &&
                                (nz == 1 || (k >= reach && k < nz - reach));
                double s = row_sum(A, p);
                if (interior) assert_true(fabs(s) < 1e-12);
                else assert_true(s > 1e-12);
            }
}

static void test_poisson2d(void **state)
{
    gs_csr A = {0}, B = {0};
    GS_ASSERT_OK(gs_gen_poisson2d(4, 3, &A));
    /* 5 per row minus one per missing neighbour: 5*12 - 2*3 (x ends) - 2*4 (y ends) */
    assert_int_equal(A.nnz, 46);
    check_common(&A, 4, 3, 1, 4.0, 1);
    {
        const gs_int c[] = {0, 1, 4};
        const double v[] = {4, -1, -1};
        assert_row(&A, 0, 3, c, v); /* corner (0,0) */
    }
    {
        const gs_int c[] = {1, 4, 5, 6, 9};
        const double v[] = {-1, -1, 4, -1, -1};
        assert_row(&A, 5, 5, c, v); /* interior (1,1) */
    }
    {
        const gs_int c[] = {7, 10, 11};
        const double v[] = {-1, -1, 4};
        assert_row(&A, 11, 3, c, v); /* corner (3,2) */
    }
    bool structural = false, numerical = false;
    GS_ASSERT_OK(gs_csr_symmetry(&A, 0.0, &structural, &numerical));
    assert_true(structural && numerical);
    gs_csr_free(&A);

    /* agrees entry for entry with the COO-built reference Laplacian of the test helpers */
    GS_ASSERT_OK(gs_gen_poisson2d(37, 23, &A));
    GS_ASSERT_OK(gs_test_laplace2d(37, 23, &B));
    assert_int_equal(A.nnz, B.nnz);
    assert_memory_equal(A.rowptr, B.rowptr, (A.nrows + 1) * sizeof(gs_int));
    assert_memory_equal(A.colind, B.colind, A.nnz * sizeof(gs_int));
    for (gs_int p = 0; p < A.nnz; p++) assert_true(A.val[p] == B.val[p]);
    gs_csr_free(&A);
    gs_csr_free(&B);
}

static void test_poisson3d(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson3d(3, 4, 5, &A));
    /* 7*60 - 2*(ny*nz + nx*nz + nx*ny) = 420 - 2*(20 + 15 + 12) */
    assert_int_equal(A.nnz, 326);
    check_common(&A, 3, 4, 5, 6.0, 1);
    {
        /* interior (1,1,1): p = 1 + 3*(1 + 4*1) = 16; neighbours -12, -3, -1, +1, +3, +12 */
        const gs_int c[] = {4, 13, 15, 16, 17, 19, 28};
        const double v[] = {-1, -1, -1, 6, -1, -1, -1};
        assert_row(&A, 16, 7, c, v);
    }
    {
        const gs_int c[] = {0, 1, 3, 12};
        const double v[] = {6, -1, -1, -1};
        assert_row(&A, 0, 4, c, v); /* corner */
    }
    bool structural = false, numerical = false;
    GS_ASSERT_OK(gs_csr_symmetry(&A, 0.0, &structural, &numerical));
    assert_true(structural && numerical);
    gs_csr_free(&A);

    /* a 1 x 1 x 1 grid is the 1 x 1 matrix [6]; a line is tridiagonal */
    GS_ASSERT_OK(gs_gen_poisson3d(1, 1, 1, &A));
    assert_int_equal(A.nnz, 1);
    assert_true(A.val[0] == 6.0);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_poisson3d(1, 1, 9, &A));
    assert_int_equal(A.nnz, 3 * 9 - 2);
    gs_csr_free(&A);
}

static void test_laplace27(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_laplace27(4, 5, 6, &A));
    /* per direction 3n - 2 (self, left, right) pairs: 10 * 13 * 16 */
    assert_int_equal(A.nnz, 10 * 13 * 16);
    check_common(&A, 4, 5, 6, 26.0, 1);
    /* interior row: all 27, in order; corner row: the 2x2x2 cube */
    gs_int p = 1 + 4 * (2 + 5 * 3);
    assert_int_equal(A.rowptr[p + 1] - A.rowptr[p], 27);
    gs_int q = A.rowptr[p];
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++, q++) assert_int_equal(A.colind[q], p + dx + 4 * dy + 20 * dz);
    {
        const gs_int c[] = {0, 1, 4, 5, 20, 21, 24, 25};
        const double v[] = {26, -1, -1, -1, -1, -1, -1, -1};
        assert_row(&A, 0, 8, c, v);
    }
    bool structural = false, numerical = false;
    GS_ASSERT_OK(gs_csr_symmetry(&A, 0.0, &structural, &numerical));
    assert_true(structural && numerical);
    gs_csr_free(&A);
}

static void test_convdiff3d(void **state)
{
    gs_csr A = {0}, P = {0};
    const gs_int nx = 5, ny = 4, nz = 3;
    GS_ASSERT_OK(gs_gen_convdiff3d(nx, ny, nz, 2.0, &A));
    assert_int_equal(A.nnz, 7 * 60 - 2 * (ny * nz + nx * nz + nx * ny));
    /* Pe = 2: cell Péclet numbers (2, 1, 0.5); diagonal 6 + 2 + 1 + 0.5 */
    check_common(&A, nx, ny, nz, 9.5, 1);
    {
        gs_int p = 2 + nx * (1 + ny * 1);
        const gs_int c[] = {p - nx * ny, p - nx, p - 1, p, p + 1, p + nx, p + nx * ny};
        const double v[] = {-1.5, -2, -3, 9.5, -1, -1, -1}; /* upwind side: west, south, below */
        assert_row(&A, p, 7, c, v);
    }
    /* weakly diagonally dominant in every row */
    for (gs_int i = 0; i < A.nrows; i++) {
        double off = 0.0;
        for (gs_int q = A.rowptr[i]; q < A.rowptr[i + 1]; q++)
            if (A.colind[q] != i) off += fabs(A.val[q]);
        assert_true(entry(&A, i, i) >= off - 1e-12);
    }
    bool structural = false, numerical = true;
    GS_ASSERT_OK(gs_csr_symmetry(&A, 1e-12, &structural, &numerical));
    assert_true(structural);
    assert_false(numerical);
    gs_csr_free(&A);

    /* negative wind: the upwind side flips to east, north, above */
    GS_ASSERT_OK(gs_gen_convdiff3d(nx, ny, nz, -2.0, &A));
    {
        gs_int p = 2 + nx * (1 + ny * 1);
        const gs_int c[] = {p - nx * ny, p - nx, p - 1, p, p + 1, p + nx, p + nx * ny};
        const double v[] = {-1, -1, -1, 9.5, -3, -2, -1.5};
        assert_row(&A, p, 7, c, v);
    }
    gs_csr_free(&A);

    /* no wind: exactly the 7-point Poisson matrix */
    GS_ASSERT_OK(gs_gen_convdiff3d(nx, ny, nz, 0.0, &A));
    GS_ASSERT_OK(gs_gen_poisson3d(nx, ny, nz, &P));
    assert_int_equal(A.nnz, P.nnz);
    assert_memory_equal(A.colind, P.colind, A.nnz * sizeof(gs_int));
    for (gs_int q = 0; q < A.nnz; q++) assert_true(A.val[q] == P.val[q]);
    gs_csr_free(&A);
    gs_csr_free(&P);

    GS_ASSERT_FAILS(gs_gen_convdiff3d(3, 3, 3, NAN, &A), GS_ERR_ARG, "not a finite number");
}

static void test_by_name(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_by_name("poisson3d", 6, 0, 0, 0.0, &A)); /* ny = nz = nx */
    assert_int_equal(A.nrows, 216);
    assert_int_equal(A.nnz, 7 * 216 - 6 * 36);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_by_name("poisson2d", 6, 5, 0, 0.0, &A));
    assert_int_equal(A.nrows, 30);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_by_name("laplace27", 3, 0, 0, 0.0, &A));
    assert_int_equal(A.nnz, 7 * 7 * 7);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_by_name("convdiff3d", 3, 0, 0, 1.0, &A));
    assert_true(A.val[0] == 6.0 + 1.75);
    gs_csr_free(&A);
    GS_ASSERT_FAILS(gs_gen_by_name("poisson4d", 6, 0, 0, 0.0, &A), GS_ERR_ARG, "poisson4d");
}

static void test_size_limits(void **state)
{
    gs_csr A = {0};
    /* 8e9 unknowns do not fit 32-bit indices */
    GS_ASSERT_FAILS(gs_gen_poisson3d(2000, 2000, 2000, &A), GS_ERR_ARG, "GS_INT_MAX = 2147483647");
    assert_null(A.rowptr);
    GS_ASSERT_FAILS(gs_gen_poisson2d(100000, 100000, &A), GS_ERR_ARG, "10000000000 unknowns");
    /* 1e8 unknowns fit, but about 2.7e9 nonzeros of the 27-point stencil do not */
    GS_ASSERT_FAILS(gs_gen_laplace27(1000, 1000, 100, &A), GS_ERR_ARG, "nonzeros");
    GS_ASSERT_FAILS(gs_gen_poisson3d(0, 5, 5, &A), GS_ERR_ARG, "at least 1");
    GS_ASSERT_FAILS(gs_gen_poisson2d(5, -3, &A), GS_ERR_ARG, "at least 1");
}

/* A size in the range the benchmarks use builds quickly and is consistent row by row. */
static void test_large(void **state)
{
    gs_csr A = {0};
    const gs_int n = 100;
    double t0 = gs_wtime();
    GS_ASSERT_OK(gs_gen_poisson3d(n, n, n, &A));
    double t = gs_wtime() - t0;
    print_message("poisson3d %d^3: %d rows, %d nonzeros in %.3f s\n", n, A.nrows, A.nnz, t);
    assert_int_equal(A.nrows, n * n * n);
    assert_int_equal(A.nnz, 7 * n * n * n - 6 * n * n);
    assert_true(gs_csr_is_sorted(&A));
    for (gs_int i = 0; i < A.nrows; i++) assert_true(A.rowptr[i + 1] - A.rowptr[i] >= 4);
    gs_csr_free(&A);
}

/* Rows lo..hi-1 are exactly those rows of the whole matrix, for every generator and awkward ranges (empty,
 * one row, across planes, the whole); a range's own limits and errors. */
static void test_rows(void **state)
{
    static const char *names[] = {"poisson2d", "poisson3d", "laplace27", "convdiff3d"};
    for (int g = 0; g < 4; g++) {
        gs_gen_stencil s;
        gs_csr A = {0}, R = {0};
        const gs_int nx = 7, ny = 5, nz = g == 0 ? 1 : 6, n = nx * ny * nz;
        GS_ASSERT_OK(gs_gen_stencil_of(names[g], 3.0, &s));
        GS_ASSERT_OK(gs_gen_by_name(names[g], nx, ny, nz, 3.0, &A));
        assert_int_equal(gs_gen_stencil_nnz(&s, nx, ny, nz), A.nnz);
        const gs_int ranges[][2] = {{0, n}, {0, 0}, {n, n}, {0, 1}, {n - 1, n}, {n / 2 - 2, n / 2 + 2}, {nx - 1, n - nx - 1}, {n / 3, n - 9}};
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            const gs_int lo = ranges[r][0], hi = ranges[r][1];
            GS_ASSERT_OK(gs_gen_stencil_rows(&s, nx, ny, nz, lo, hi, &R));
            assert_int_equal(R.nrows, hi - lo);
            assert_int_equal(R.ncols, n);
            assert_int_equal(R.nnz, A.rowptr[hi] - A.rowptr[lo]);
            for (gs_int i = 0; i <= hi - lo; i++) assert_int_equal(R.rowptr[i], A.rowptr[lo + i] - A.rowptr[lo]);
            for (gs_int p = 0; p < R.nnz; p++) {
                assert_int_equal(R.colind[p], A.colind[A.rowptr[lo] + p]);
                assert_true(R.val[p] == A.val[A.rowptr[lo] + p]);
            }
            gs_csr_free(&R);
        }
        GS_ASSERT_FAILS(gs_gen_stencil_rows(&s, nx, ny, nz, 5, 4, &R), GS_ERR_ARG, "rows 5..3");
        GS_ASSERT_FAILS(gs_gen_stencil_rows(&s, nx, ny, nz, 0, n + 1, &R), GS_ERR_ARG, "of a matrix of");
        gs_csr_free(&A);
    }
    /* the whole 27-point 1000 x 1000 x 100 matrix has too many nonzeros; a slab of it does not */
    gs_gen_stencil s;
    gs_csr R = {0};
    GS_ASSERT_OK(gs_gen_stencil_of("laplace27", 0.0, &s));
    assert_true(gs_gen_stencil_nnz(&s, 1000, 1000, 100) > GS_INT_MAX);
    GS_ASSERT_OK(gs_gen_stencil_rows(&s, 1000, 1000, 100, 49 * 1000000, 49 * 1000000 + 2500, &R));
    assert_int_equal(R.nrows, 2500);
    assert_int_equal(R.colind[0], 48 * 1000000); /* the row below, in the global numbering */
    gs_csr_free(&R);
    GS_ASSERT_FAILS(gs_gen_stencil_of("poisson5d", 0.0, &s), GS_ERR_ARG, "poisson5d");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poisson2d),  cmocka_unit_test(test_poisson3d), cmocka_unit_test(test_laplace27),
        cmocka_unit_test(test_convdiff3d), cmocka_unit_test(test_by_name),   cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_large),      cmocka_unit_test(test_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
