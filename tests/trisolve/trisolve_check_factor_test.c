/* gs_trisolve_check_factor: every violation of the factor conventions is reported with its kind, the
 * 1-based row (and column) and what was expected; valid factors pass. */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "trisolve/trisolve.h"

/* 4x4 factor from per-row column/value lists (cols terminated by -1). */
static void make(gs_csr *T, const int cols[4][5], const double vals[4][5])
{
    gs_int nnz = 0;
    for (int i = 0; i < 4; i++)
        for (int k = 0; cols[i][k] >= 0; k++) nnz++;
    GS_ASSERT_OK(gs_csr_alloc(T, 4, 4, nnz, true));
    gs_int q = 0;
    for (int i = 0; i < 4; i++) {
        T->rowptr[i] = q;
        for (int k = 0; cols[i][k] >= 0; k++) {
            T->colind[q] = cols[i][k];
            T->val[q++] = vals[i][k];
        }
    }
    T->rowptr[4] = q;
}

static const double ones[4][5] = {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}};

static void test_valid_factors(void **state)
{
    gs_csr T = {0};
    const int lower[4][5] = {{0, -1}, {0, 1, -1}, {2, -1}, {0, 2, 3, -1}};
    make(&T, lower, ones);
    GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, false));
    gs_csr_free(&T);
    const int strict_lower[4][5] = {{-1}, {0, -1}, {-1}, {0, 1, 2, -1}};
    make(&T, strict_lower, ones);
    GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, true));
    gs_csr_free(&T);
    const int upper[4][5] = {{0, 2, -1}, {1, 2, 3, -1}, {2, -1}, {3, -1}};
    make(&T, upper, ones);
    GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_UPPER, false));
    gs_csr_free(&T);
    gs_csr E = {0};
    GS_ASSERT_OK(gs_csr_alloc(&E, 0, 0, 0, true));
    GS_ASSERT_OK(gs_trisolve_check_factor(&E, GS_UPPER, false));
    gs_csr_free(&E);
}

static void test_missing_and_zero_diagonal(void **state)
{
    gs_csr T = {0};
    const int lower[4][5] = {{0, -1}, {0, 1, -1}, {0, 1, -1}, {3, -1}}; /* row 3 lacks (3,3) */
    make(&T, lower, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_NUMERIC,
                    "no diagonal entry at row 3 (1-based)");
    gs_csr_free(&T);

    const int upper[4][5] = {{0, 2, -1}, {2, 3, -1}, {2, -1}, {3, -1}}; /* row 2 lacks (2,2) */
    make(&T, upper, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_UPPER, false), GS_ERR_NUMERIC,
                    "the upper factor has no diagonal entry at row 2 (1-based)");
    gs_csr_free(&T);

    const int ok[4][5] = {{0, -1}, {0, 1, -1}, {1, 2, -1}, {3, -1}};
    const double zero4[4][5] = {{1}, {1, 2}, {1, 3}, {0.0}};
    make(&T, ok, zero4);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_NUMERIC,
                    "zero diagonal at row 4 (1-based) of the lower factor");
    T.val[T.nnz - 1] = NAN;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_NUMERIC,
                    "diagonal at row 4 (1-based) of the lower factor is nan");
    gs_csr_free(&T);
}

static void test_wrong_side_and_stored_unit_diagonal(void **state)
{
    gs_csr T = {0};
    const int lower_bad[4][5] = {{0, -1}, {0, 1, 3, -1}, {2, -1}, {3, -1}}; /* (1,3) above the diagonal */
    make(&T, lower_bad, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG,
                    "entry at row 2, column 4 (1-based) above the diagonal");
    gs_csr_free(&T);

    const int upper_bad[4][5] = {{0, -1}, {1, -1}, {2, -1}, {1, 3, -1}}; /* (3,1) below the diagonal */
    make(&T, upper_bad, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_UPPER, false), GS_ERR_ARG,
                    "entry at row 4, column 2 (1-based) below the diagonal");
    gs_csr_free(&T);

    const int unit_with_diag[4][5] = {{-1}, {0, -1}, {0, 2, -1}, {-1}};
    make(&T, unit_with_diag, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, true), GS_ERR_ARG,
                    "stores a diagonal entry at row 3 (1-based)");
    gs_csr_free(&T);
}

static void test_malformed_csr(void **state)
{
    gs_csr T = {0};
    const int unsorted[4][5] = {{0, -1}, {0, 1, -1}, {1, 0, 2, -1}, {3, -1}};
    make(&T, unsorted, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG,
                    "row 3 (1-based) of the lower factor is not sorted: column 1 comes after column 2");
    gs_csr_free(&T);

    const int dup[4][5] = {{0, -1}, {1, 1, -1}, {2, -1}, {3, -1}};
    make(&T, dup, ones);
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG, "not sorted");
    gs_csr_free(&T);

    const int ok[4][5] = {{0, -1}, {0, 1, -1}, {2, -1}, {3, -1}};
    make(&T, ok, ones);
    T.colind[1] = 9;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG,
                    "row 2 (1-based) of the lower factor has column 10 outside 1..4");
    T.colind[1] = -3;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG, "column -2 outside 1..4");
    T.colind[1] = 0;
    T.rowptr[2] = 6; /* row 2 would run past nnz */
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG,
                    "row pointer is invalid at row 2 (1-based): 1 .. 6 with nnz = 5");
    T.rowptr[2] = 3;
    T.rowptr[3] = 4;
    T.rowptr[4] = 4;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG, "rowptr[n] is 4; expected nnz = 5");
    T.rowptr[4] = 5;
    T.ncols = 5;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG, "is 4 x 5; expected a square matrix");
    T.ncols = 4;
    double *v = T.val;
    T.val = NULL;
    GS_ASSERT_FAILS(gs_trisolve_check_factor(&T, GS_LOWER, false), GS_ERR_ARG, "no values (pattern only)");
    T.val = v;
    GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, false));
    GS_ASSERT_FAILS(gs_trisolve_check_factor(NULL, GS_UPPER, false), GS_ERR_ARG, "upper triangular factor is NULL");
    gs_csr_free(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_factors),
        cmocka_unit_test(test_missing_and_zero_diagonal),
        cmocka_unit_test(test_wrong_side_and_stored_unit_diagonal),
        cmocka_unit_test(test_malformed_csr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
