/* gs_trisolve_check_factor on factors large enough for the parallel row scan: whatever the number of
 * threads, the FIRST faulty row is reported, with the message of a sequential scan (exact strings), when
 * faults sit in different threads' row ranges, at the first and last row, and when a later structural
 * fault follows an earlier value fault. Also gs_ts_check_rows on a prefix of the rows. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve_impl.h"

/* Order of the test factors: above the parallel threshold of the scan; GS_TEST_QUICK: smaller. */
static gs_int test_n(void) { return gs_test_quick() ? 30011 : 200003; }

/* The exact message of the pending error equals `want`. */
static void assert_message(gs_status st, gs_status want_st, const char *want)
{
    if (st != want_st || strcmp(gs_error_message(), want) != 0)
        fprintf(stderr, "got %s: \"%s\"\nwant %s: \"%s\"\n", gs_status_name(st), gs_error_message(),
                gs_status_name(want_st), want);
    assert_int_equal(st, want_st);
    assert_string_equal(gs_error_message(), want);
    gs_error_clear();
}

static void check_fails(const gs_csr *T, gs_uplo uplo, bool unit, gs_status want_st, const char *want)
{
    gs_error_clear();
    assert_message(gs_trisolve_check_factor(T, uplo, unit), want_st, want);
}

/* Position of the diagonal entry of row i (-1 when none). */
static gs_int diag_pos(const gs_csr *T, gs_int i)
{
    for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
        if (T->colind[q] == i) return q;
    return -1;
}

/* A row of T with at least two off-diagonal entries, at or after row `from` (rows without dependencies
 * and rows with one entry are skipped). */
static gs_int row_with_two(const gs_csr *T, bool unit, gs_int from)
{
    for (gs_int i = from; i < T->nrows; i++)
        if (T->rowptr[i + 1] - T->rowptr[i] - (unit ? 0 : 1) >= 2) return i;
    fail_msg("no row with two off-diagonal entries after %d", (int)from);
    return -1;
}

static void set_threads(int t)
{
#ifdef _OPENMP
    omp_set_num_threads(t);
#else
    (void)t;
#endif
}

/* Each fault kind once, placed far into the matrix (another thread's range than row 0). */
static void test_each_fault_kind(void **state)
{
    const gs_int n = test_n();
    gs_csr T = {0};
    char want[512];
    for (int threads = 1; threads <= 7; threads += 3) {
        set_threads(threads);
        GS_ASSERT_OK(tri_random(n, 4, GS_LOWER, false, 11, &T));
        GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, false));

        gs_int i = row_with_two(&T, false, (3 * n) / 4), q = T.rowptr[i];
        gs_int c0 = T.colind[q], c1 = T.colind[q + 1];
        T.colind[q] = c1; /* unsorted: c1 then c1 (not increasing) */
        snprintf(want, sizeof want, "row %d (1-based) of the lower factor is not sorted: column %d comes after "
                 "column %d; expected strictly increasing columns (sorted CSR)", (int)i + 1, (int)c1 + 1, (int)c1 + 1);
        check_fails(&T, GS_LOWER, false, GS_ERR_ARG, want);
        T.colind[q] = n + 4; /* out of range */
        snprintf(want, sizeof want, "row %d (1-based) of the lower factor has column %d outside 1..%d", (int)i + 1,
                 (int)n + 5, (int)n);
        check_fails(&T, GS_LOWER, false, GS_ERR_ARG, want);
        T.colind[q] = c0;

        gs_int d = diag_pos(&T, i);
        double dv = T.val[d];
        T.val[d] = 0.0;
        snprintf(want, sizeof want, "zero diagonal at row %d (1-based) of the lower factor", (int)i + 1);
        check_fails(&T, GS_LOWER, false, GS_ERR_NUMERIC, want);
        T.val[d] = -INFINITY;
        snprintf(want, sizeof want, "the diagonal at row %d (1-based) of the lower factor is -inf (not finite)",
                 (int)i + 1);
        check_fails(&T, GS_LOWER, false, GS_ERR_NUMERIC, want);
        T.val[d] = dv;
        T.colind[d] = i + 1; /* the diagonal moved above it: an entry on the wrong side */
        snprintf(want, sizeof want, "the lower factor has an entry at row %d, column %d (1-based) above the diagonal; "
                 "a lower factor holds only columns j <= i", (int)i + 1, (int)i + 2);
        check_fails(&T, GS_LOWER, false, GS_ERR_ARG, want);
        T.colind[d] = i;
        /* the row pointer of row i+1 (0-based) runs backwards */
        gs_int keep = T.rowptr[i + 1];
        T.rowptr[i + 1] = T.rowptr[i] - 1;
        snprintf(want, sizeof want, "the lower factor's row pointer is invalid at row %d (1-based): %d .. %d with "
                 "nnz = %d", (int)i + 1, (int)T.rowptr[i], (int)T.rowptr[i] - 1, (int)T.nnz);
        check_fails(&T, GS_LOWER, false, GS_ERR_ARG, want);
        T.rowptr[i + 1] = keep;
        GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, false));
        /* a non-unit factor checked as unit stores a diagonal in its first row */
        check_fails(&T, GS_LOWER, true, GS_ERR_ARG,
                    "the unit-diagonal lower factor stores a diagonal entry at row 1 (1-based); with unit_diag the "
                    "diagonal is implied and must not be stored");
        gs_csr_free(&T);

        /* upper, unit: a missing diagonal is no fault, a stored one is */
        GS_ASSERT_OK(tri_random(n, 4, GS_UPPER, true, 12, &T));
        GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_UPPER, true));
        snprintf(want, sizeof want, "the upper factor has no diagonal entry at row 1 (1-based); every row of a "
                 "non-unit factor must store its diagonal");
        check_fails(&T, GS_UPPER, false, GS_ERR_NUMERIC, want);
        gs_csr_free(&T);
    }
    set_threads(4);
}

/* Two faults in different threads' ranges: the earlier row is reported, whichever kind it has; with
 * the later fault alone, that one. Faults in the last row and in a prefix of the rows. */
static void test_first_fault_wins(void **state)
{
    const gs_int n = test_n();
    gs_csr T = {0};
    char want[512];
    for (int threads = 2; threads <= 8; threads *= 2) {
        set_threads(threads);
        GS_ASSERT_OK(tri_random(n, 4, GS_UPPER, false, 21, &T));
        gs_int early = row_with_two(&T, false, n / 9), late = row_with_two(&T, false, n - n / 7);
        gs_int de = diag_pos(&T, early);
        double keep_val = T.val[de];
        T.val[de] = 0.0;                                     /* value fault early */
        gs_int ql = T.rowptr[late] + 1, keep_col = T.colind[ql];
        T.colind[ql] = T.colind[ql - 1];                     /* structural fault late (duplicate) */
        snprintf(want, sizeof want, "zero diagonal at row %d (1-based) of the upper factor", (int)early + 1);
        check_fails(&T, GS_UPPER, false, GS_ERR_NUMERIC, want);
        T.val[de] = keep_val;
        snprintf(want, sizeof want, "row %d (1-based) of the upper factor is not sorted: column %d comes after "
                 "column %d; expected strictly increasing columns (sorted CSR)", (int)late + 1,
                 (int)T.colind[ql] + 1, (int)T.colind[ql] + 1);
        check_fails(&T, GS_UPPER, false, GS_ERR_ARG, want);
        /* the prefix up to the late row is valid; including it, the fault is found */
        GS_ASSERT_OK(gs_ts_check_rows(&T, GS_UPPER, false, late));
        gs_error_clear();
        assert_message(gs_ts_check_rows(&T, GS_UPPER, false, late + 1), GS_ERR_ARG, want);
        T.colind[ql] = keep_col;
        GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_UPPER, false));

        /* the last row: its diagonal is NaN */
        gs_int dl = diag_pos(&T, n - 1);
        T.val[dl] = NAN;
        snprintf(want, sizeof want, "the diagonal at row %d (1-based) of the upper factor is nan (not finite)", (int)n);
        check_fails(&T, GS_UPPER, false, GS_ERR_NUMERIC, want);
        gs_csr_free(&T);
    }
    set_threads(4);
}

/* Row pointers that run out of 0 .. nnz in the middle: the rows after the bad one have negative or
 * too large pointers (a thread starting there must not read outside the arrays); the bad row is named. */
static void test_broken_row_pointers(void **state)
{
    const gs_int n = test_n();
    gs_csr T = {0};
    char want[512];
    set_threads(5);
    GS_ASSERT_OK(tri_random(n, 3, GS_LOWER, true, 31, &T));
    gs_int i = n / 3;
    gs_int *saved = NULL;
    GS_ASSERT_OK(GS_MALLOC(saved, n + 1));
    memcpy(saved, T.rowptr, (size_t)(n + 1) * sizeof(gs_int));
    for (gs_int r = i + 1; r < n; r++) T.rowptr[r] = -5 - r; /* negative from row i+1 (0-based) on */
    snprintf(want, sizeof want, "the lower factor's row pointer is invalid at row %d (1-based): %d .. %d with "
             "nnz = %d", (int)i + 1, (int)saved[i], (int)(-5 - (i + 1)), (int)T.nnz);
    check_fails(&T, GS_LOWER, true, GS_ERR_ARG, want);
    for (gs_int r = i + 1; r < n; r++) T.rowptr[r] = T.nnz + r; /* past nnz */
    snprintf(want, sizeof want, "the lower factor's row pointer is invalid at row %d (1-based): %d .. %d with "
             "nnz = %d", (int)i + 1, (int)saved[i], (int)(T.nnz + i + 1), (int)T.nnz);
    check_fails(&T, GS_LOWER, true, GS_ERR_ARG, want);
    memcpy(T.rowptr, saved, (size_t)(n + 1) * sizeof(gs_int));
    GS_ASSERT_OK(gs_trisolve_check_factor(&T, GS_LOWER, true));
    gs_free(&saved);
    gs_csr_free(&T);
    set_threads(4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_fault_kind),
        cmocka_unit_test(test_first_fault_wins),
        cmocka_unit_test(test_broken_row_pointers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
