/* Tests of ParILU / ParIC on the host backend (the reference sweeps): one in-place forward sweep is
 * the exact ILU(0) / ILU(k) / IC(0) (the oracles of precond/factor.h), synchronous sweeps converge to
 * it, zero sweeps give the scaled initial guess, missing diagonals are inserted, pivots follow the
 * zero_pivot policy, diagnostics decrease and agree with a dense computation, the random order is
 * reproducible, and the preconditioner (alone and inside RAS) works in GMRES and PCG. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "factor_dense.h"
#include "parilu_cases.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/block.h"
#include "precond/factor.h"
#include "precond/parilu.h"
#include "precond/precond.h"
#include "solver/solver.h"

/* ParILU/ParIC of A with the pc_fixture's configuration. */
static gs_parilu *factor(pc_fixture *f, const gs_csr *A)
{
    gs_parilu *p = NULL;
    GS_ASSERT_OK(gs_parilu_create(f->be, f->cfg, &p));
    GS_ASSERT_OK(gs_parilu_setup_symbolic(p, A));
    GS_ASSERT_OK(gs_parilu_setup_numeric(p, A));
    return p;
}

/* The oracle: classical ILU(k) of precond/factor.h. */
static void ilu_oracle(const gs_csr *A, int k, gs_csr *L, gs_csr *U)
{
    GS_ASSERT_OK(gs_iluk_symbolic(A, k, L, U));
    GS_ASSERT_OK(gs_ilu_numeric(A, NULL, L, U, NULL));
}

/* Same pattern; max |x - y| / max |y| over the values. */
static double factor_diff(const gs_csr *X, const gs_csr *Y)
{
    assert_int_equal(X->nrows, Y->nrows);
    assert_int_equal(X->nnz, Y->nnz);
    assert_memory_equal(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof(gs_int));
    assert_memory_equal(X->colind, Y->colind, (size_t)X->nnz * sizeof(gs_int));
    return gs_test_rel_diff(X->nnz, X->val, Y->val);
}

/* max over L and U of factor_diff against the ILU(k) oracle */
static double diff_to_ilu(const gs_parilu *p, const gs_csr *A, int k)
{
    const gs_csr *L = NULL, *U = NULL;
    gs_csr Lr = {0}, Ur = {0};
    gs_parilu_factors(p, &L, &U);
    assert_non_null(L);
    ilu_oracle(A, k, &Lr, &Ur);
    double dl = factor_diff(L, &Lr), du = factor_diff(U, &Ur);
    gs_csr_free(&Lr);
    gs_csr_free(&Ur);
    return dl > du ? dl : du;
}

static const gs_report_entry *view_key(const gs_parilu *p, gs_report *rep, const char *key)
{
    gs_parilu_view(p, rep, "preconditioner");
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fail_msg("report key %s missing", key);
    return e;
}

/* ---------------------------------------------------------------- exactness of one in-place sweep */

/* One asynchronous sweep on the host in forward (Gaussian-elimination) order is the Gauss-Seidel
 * sweep that reproduces ILU(k) exactly: every value a task reads is final when it runs. */
static void check_one_sweep_is_ilu(pc_fixture *f, const char *what, const gs_csr *A, int k)
{
    char s[64];
    pc_fixture_set(f, "preconditioner.sweeps=1");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    pc_fixture_set(f, "preconditioner.order=forward");
    snprintf(s, sizeof s, "preconditioner.fill_level=%d", k);
    pc_fixture_set(f, s);
    gs_parilu *p = factor(f, A);
    double d = diff_to_ilu(p, A, k);
    fprintf(stderr, "%s (n = %d, ILU(%d)): one forward in-place sweep vs ILU: %.3g\n", what, (int)A->nrows, k, d);
    assert_true(d <= 1e-13);
    gs_parilu_destroy(&p);
}

static void test_one_sweep_equals_ilu0(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(37, 29, &A)); /* n = 1073 */
    check_one_sweep_is_ilu(f, "laplace2d", &A, 0);
    check_one_sweep_is_ilu(f, "laplace2d", &A, 2);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_random_sparse(700, 6, 1.2, 11, &A));
    check_one_sweep_is_ilu(f, "random diagonally dominant", &A, 0);
    check_one_sweep_is_ilu(f, "random diagonally dominant", &A, 1);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_load("sherman1.mtx", &A));
    check_one_sweep_is_ilu(f, "sherman1", &A, 0);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_load("pde900.mtx", &A));
    check_one_sweep_is_ilu(f, "pde900", &A, 0);
    gs_csr_free(&A);
}

static void check_one_sweep_is_ic0(pc_fixture *f, const char *what, const gs_csr *A)
{
    pc_fixture_set(f, "preconditioner.symmetric=true");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    pc_fixture_set(f, "preconditioner.order=forward");
    gs_parilu *p = factor(f, A);
    const gs_csr *L = NULL, *U = NULL;
    gs_csr Lr = {0}, LTr = {0};
    gs_parilu_factors(p, &L, &U);
    GS_ASSERT_OK(gs_ic0(A, NULL, &Lr, &LTr, NULL));
    double dl = factor_diff(L, &Lr), du = factor_diff(U, &LTr);
    fprintf(stderr, "%s (n = %d): one forward in-place ParIC sweep vs IC(0): L %.3g, L^T %.3g\n", what,
            (int)A->nrows, dl, du);
    assert_true(dl <= 1e-13 && du <= 1e-13);
    gs_csr_free(&Lr);
    gs_csr_free(&LTr);
    gs_parilu_destroy(&p);
}

static void test_paric_one_sweep_equals_ic0(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(41, 23, &A));
    check_one_sweep_is_ic0(f, "laplace2d", &A);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_load("gr_30_30.mtx", &A));
    check_one_sweep_is_ic0(f, "gr_30_30", &A);
    gs_csr_free(&A);
    make_random_spd(333, 5, 7, &A);
    check_one_sweep_is_ic0(f, "random SPD", &A);

    /* IC(1) (fill_level = 1) has no oracle in factor.h; the exact factorization on S is the one
     * whose nonlinear residual (A - L L^T)_S vanishes, and one forward sweep must reach it. */
    pc_fixture_set(f, "preconditioner.fill_level=1");
    pc_fixture_set(f, "preconditioner.diagnostics=true");
    gs_parilu *p = factor(f, &A);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    double nl = view_key(p, rep, "preconditioner.nonlinear_residual")->d;
    const gs_csr *L = NULL;
    gs_parilu_factors(p, &L, NULL);
    fprintf(stderr, "random SPD, IC(1) pattern (nnz(L) = %d > %d): nonlinear residual after one sweep %.3g\n",
            (int)L->nnz, (int)(A.nnz + A.nrows) / 2, nl);
    assert_true(L->nnz > (A.nnz + A.nrows) / 2); /* fill was added */
    assert_true(nl < 1e-14);
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- synchronous convergence */

/* Synchronous (Jacobi-like) sweeps are not exact after one sweep but converge to the ILU(0) fixed
 * point. Bounds (max |x - x_ILU(0)| / max |x_ILU(0)| over L and U): after 5 sweeps <= 5e-2 (loose:
 * the iterate is only roughly settled), after 50 sweeps <= 1e-10 (tight). */
static void check_sync_convergence(pc_fixture *f, const char *what, const gs_csr *A)
{
    pc_fixture_set(f, "preconditioner.sweep_type=synchronous");
    pc_fixture_set(f, "preconditioner.order=forward");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    gs_parilu *p = factor(f, A);
    double d1 = diff_to_ilu(p, A, 0);
    gs_parilu_destroy(&p);
    pc_fixture_set(f, "preconditioner.sweeps=5");
    p = factor(f, A);
    double d5 = diff_to_ilu(p, A, 0);
    gs_parilu_destroy(&p);
    pc_fixture_set(f, "preconditioner.sweeps=50");
    p = factor(f, A);
    double d50 = diff_to_ilu(p, A, 0);
    gs_parilu_destroy(&p);
    fprintf(stderr, "%s: synchronous sweeps vs ILU(0): 1: %.3g  5: %.3g  50: %.3g\n", what, d1, d5, d50);
    assert_true(d1 > 1e-6); /* one Jacobi-like sweep is not the exact factorization */
    assert_true(d5 <= 5e-2);
    assert_true(d5 < d1);
    assert_true(d50 <= 1e-10);
}

static void test_synchronous_sweeps_converge(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(30, 35, &A));
    check_sync_convergence(f, "laplace2d", &A);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_convdiff2d(33, 31, 1.0, &A));
    check_sync_convergence(f, "convdiff2d", &A);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_random_sparse(600, 5, 1.5, 3, &A));
    check_sync_convergence(f, "random diagonally dominant", &A);
    gs_csr_free(&A);
}

/* The host synchronous sweep is deterministic (OpenMP over independent tasks): two runs agree
 * bit for bit; and asynchronous backward sweeps also converge to ILU(0). */
static void test_deterministic_and_backward(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(40, 37, 0.7, &A));
    pc_fixture_set(f, "preconditioner.sweeps=4");
    gs_parilu *p1 = factor(f, &A), *p2 = factor(f, &A);
    const gs_csr *L1, *U1, *L2, *U2;
    gs_parilu_factors(p1, &L1, &U1);
    gs_parilu_factors(p2, &L2, &U2);
    assert_memory_equal(L1->val, L2->val, (size_t)L1->nnz * sizeof(double));
    assert_memory_equal(U1->val, U2->val, (size_t)U1->nnz * sizeof(double));
    gs_parilu_destroy(&p1);
    gs_parilu_destroy(&p2);

    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    pc_fixture_set(f, "preconditioner.order=backward");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    p1 = factor(f, &A);
    double d1 = diff_to_ilu(p1, &A, 0);
    gs_parilu_destroy(&p1);
    pc_fixture_set(f, "preconditioner.sweeps=40");
    p1 = factor(f, &A);
    double d40 = diff_to_ilu(p1, &A, 0);
    gs_parilu_destroy(&p1);
    fprintf(stderr, "asynchronous backward: 1 sweep %.3g, 40 sweeps %.3g\n", d1, d40);
    assert_true(d1 > 1e-6); /* backward order is the worst Gauss-Seidel order: not exact */
    assert_true(d40 <= 1e-10);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- initial guess */

/* Zero sweeps: the factors are the scaled A's triangles, unscaled:
 *   ParILU  l_ij = a_ij / |a_jj|,  u_ij = a_ij;     ParIC  l_ij = a_ij / sqrt(|a_jj|).
 * The 2D Laplacian has a_ii = 4, sqrt = 2: every scaling is a power of two, so the match is exact. */
static void test_zero_sweeps_is_initial_guess(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, R = {0};
    GS_ASSERT_OK(gs_test_laplace2d(19, 17, &A));
    pc_fixture_set(f, "preconditioner.sweeps=0");
    gs_parilu *p = factor(f, &A);
    const gs_csr *L, *U;
    gs_parilu_factors(p, &L, &U);
    for (gs_int i = 0; i < A.nrows; i++) {
        for (gs_int q = L->rowptr[i]; q < L->rowptr[i + 1]; q++) {
            gs_int j = L->colind[q];
            assert_true(L->val[q] == csr_get(&A, i, j) / fabs(csr_get(&A, j, j)));
        }
        for (gs_int q = U->rowptr[i]; q < U->rowptr[i + 1]; q++) assert_true(U->val[q] == csr_get(&A, i, U->colind[q]));
    }
    assert_int_equal(L->nnz + U->nnz, A.nnz);
    gs_parilu_destroy(&p);

    pc_fixture_set(f, "preconditioner.symmetric=true");
    p = factor(f, &A);
    gs_parilu_factors(p, &L, &U);
    for (gs_int i = 0; i < A.nrows; i++)
        for (gs_int q = L->rowptr[i]; q < L->rowptr[i + 1]; q++) {
            gs_int j = L->colind[q];
            assert_true(j <= i);
            assert_true(L->val[q] == csr_get(&A, i, j) / sqrt(fabs(csr_get(&A, j, j))));
        }
    GS_ASSERT_OK(gs_csr_transpose(L, &R));
    assert_true(factor_diff(U, &R) == 0.0);
    gs_csr_free(&R);
    gs_parilu_destroy(&p);
    gs_csr_free(&A);

    /* a general diagonal: the same formulas up to a few roundings */
    GS_ASSERT_OK(gs_test_random_sparse(257, 4, 1.3, 5, &A));
    pc_fixture_set(f, "preconditioner.symmetric=false");
    p = factor(f, &A);
    gs_parilu_factors(p, &L, &U);
    for (gs_int i = 0; i < A.nrows; i++) {
        for (gs_int q = L->rowptr[i]; q < L->rowptr[i + 1]; q++) {
            double want = csr_get(&A, i, L->colind[q]) / fabs(csr_get(&A, L->colind[q], L->colind[q]));
            assert_true(fabs(L->val[q] - want) <= 8 * DBL_EPSILON * fabs(want));
        }
        for (gs_int q = U->rowptr[i]; q < U->rowptr[i + 1]; q++) {
            double want = csr_get(&A, i, U->colind[q]);
            assert_true(fabs(U->val[q] - want) <= 8 * DBL_EPSILON * fabs(want));
        }
    }
    gs_parilu_destroy(&p);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- missing diagonal, pivots */

/* A copy of A without the diagonal entries of the listed rows. */
static void drop_diagonals(const gs_csr *A, int nd, const gs_int *rows, gs_csr *B)
{
    GS_ASSERT_OK(gs_csr_alloc(B, A->nrows, A->ncols, A->nnz, true));
    gs_int q = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        bool drop = false;
        for (int k = 0; k < nd; k++) drop |= rows[k] == i;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (drop && A->colind[p] == i) continue;
            B->colind[q] = A->colind[p];
            B->val[q++] = A->val[p];
        }
        B->rowptr[i + 1] = q;
    }
    B->nnz = q;
}

/* Rows without a stored diagonal: inserted into S and reported; their zero a_ii cannot be scaled
 * (an error naming the row under zero_pivot = error); under shift the pivots the elimination
 * produces there (u_ii = -sum_k l_ik u_ki != 0) are found, and one forward sweep is ILU(0) of A. */
static void test_missing_diagonal_inserted(void **state)
{
    pc_fixture *f = *state;
    gs_csr L2 = {0}, A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(13, 11, &L2));
    const gs_int rows[3] = {40, 77, 141};
    drop_diagonals(&L2, 3, rows, &A);
    assert_int_equal(A.nnz, L2.nnz - 3);

    pc_fixture_set(f, "preconditioner.sweeps=1");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    gs_parilu *p = NULL;
    GS_ASSERT_OK(gs_parilu_create(f->be, f->cfg, &p));
    GS_ASSERT_OK(gs_parilu_setup_symbolic(p, &A));
    GS_ASSERT_FAILS(gs_parilu_setup_numeric(p, &A), GS_ERR_NUMERIC, "A(41,41)");
    gs_parilu_destroy(&p);

    pc_fixture_set(f, "preconditioner.zero_pivot=shift");
    p = factor(f, &A);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    assert_int_equal(view_key(p, rep, "preconditioner.diagonal_inserted")->i, 3);
    assert_int_equal(view_key(p, rep, "preconditioner.zero_diagonal")->i, 3);
    assert_int_equal(view_key(p, rep, "preconditioner.pivots_shifted")->i, 0);
    const gs_csr *U;
    gs_parilu_factors(p, NULL, &U);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(U->colind[U->rowptr[rows[k]]], rows[k]); /* the diagonal is in S */
        assert_true(U->val[U->rowptr[rows[k]]] < 0.0);             /* -(1/u + 1/u) for the Laplacian */
    }
    double d = diff_to_ilu(p, &A, 0);
    fprintf(stderr, "missing diagonals: one forward sweep vs ILU(0): %.3g\n", d);
    assert_true(d <= 1e-13);
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p);
    gs_csr_free(&A);
    gs_csr_free(&L2);
}

/* An empty row, a dense row and rows without a diagonal (zero_pivot = shift): one forward sweep is
 * still ILU(0) under the same policy - the empty row's pivot becomes the shift itself in both. */
static void test_awkward_matrix(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, Lr = {0}, Ur = {0};
    parilu_awkward_matrix(&A);
    pc_fixture_set(f, "preconditioner.zero_pivot=shift");
    pc_fixture_set(f, "preconditioner.shift=1e-4");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    gs_parilu *p = factor(f, &A);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    assert_int_equal(view_key(p, rep, "preconditioner.diagonal_inserted")->i, 3);
    assert_int_equal(view_key(p, rep, "preconditioner.zero_diagonal")->i, 3);
    assert_int_equal(view_key(p, rep, "preconditioner.pivots_shifted")->i, 1);
    assert_string_equal(view_key(p, rep, "preconditioner.shifted_rows")->s, "201");
    gs_factor_opts o = {0};
    o.zero_pivot = GS_ZERO_PIVOT_SHIFT;
    o.shift = 1e-4;
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &Lr, &Ur));
    GS_ASSERT_OK(gs_ilu_numeric(&A, &o, &Lr, &Ur, NULL));
    const gs_csr *L, *U;
    gs_parilu_factors(p, &L, &U);
    double dl = factor_diff(L, &Lr), du = factor_diff(U, &Ur);
    fprintf(stderr, "awkward matrix: one forward sweep vs ILU(0) with shifts: L %.3g, U %.3g\n", dl, du);
    assert_true(dl <= 1e-13 && du <= 1e-13);
    assert_true(U->val[U->rowptr[200]] == 1e-4);
    /* and synchronous sweeps get there too */
    pc_fixture_set(f, "preconditioner.sweep_type=synchronous");
    pc_fixture_set(f, "preconditioner.sweeps=60");
    gs_parilu_destroy(&p);
    p = factor(f, &A);
    gs_parilu_factors(p, &L, &U);
    dl = factor_diff(L, &Lr);
    du = factor_diff(U, &Ur);
    fprintf(stderr, "awkward matrix: 60 synchronous sweeps vs ILU(0): L %.3g, U %.3g\n", dl, du);
    assert_true(dl <= 1e-10 && du <= 1e-10);
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p);
    gs_csr_free(&Lr);
    gs_csr_free(&Ur);
    gs_csr_free(&A);
}

/* A 2x2 block [[1,1],[1,1]] appended to a Laplacian: its second pivot is 1 - 1*1 = 0 in the sweep.
 * zero_pivot = error names that row and the sweep; shift replaces it and reports the row. */
static void test_zero_pivot_policies(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    parilu_singular_tail(7, 6, &A); /* n = 42 + 2 */
    for (int sym = 0; sym < 2; sym++) {
        pc_fixture_set(f, sym ? "preconditioner.symmetric=true" : "preconditioner.symmetric=false");
        pc_fixture_set(f, "preconditioner.zero_pivot=error");
        pc_fixture_set(f, "preconditioner.sweeps=2");
        pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
        gs_parilu *p = NULL;
        GS_ASSERT_OK(gs_parilu_create(f->be, f->cfg, &p));
        GS_ASSERT_OK(gs_parilu_setup_symbolic(p, &A));
        GS_ASSERT_FAILS(gs_parilu_setup_numeric(p, &A), GS_ERR_NUMERIC, "row 44 (1-based) in sweep 1 of 2");
        gs_parilu_destroy(&p);

        pc_fixture_set(f, "preconditioner.zero_pivot=shift");
        pc_fixture_set(f, "preconditioner.shift=1e-3");
        p = factor(f, &A);
        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        assert_int_equal(view_key(p, rep, "preconditioner.pivots_shifted")->i, 1);
        assert_string_equal(view_key(p, rep, "preconditioner.shifted_rows")->s, "44");
        assert_int_equal(view_key(p, rep, "preconditioner.pivot_shift_events")->i, 2); /* once per sweep */
        const gs_csr *L, *U;
        gs_parilu_factors(p, &L, &U);
        /* row 44's pivot = shift * ||row of the scaled A||_inf = 1e-3 (ParIC: its square root) */
        double piv = sym ? L->val[L->rowptr[44] - 1] : U->val[U->rowptr[43]];
        assert_true(fabs(piv - (sym ? sqrt(1e-3) : 1e-3)) <= 1e-15);
        gs_report_destroy(&rep);
        gs_parilu_destroy(&p);
    }
    gs_csr_free(&A);
}

static void test_paric_rejects_nonsymmetric(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(9, 8, 1.0, &A));
    pc_fixture_set(f, "preconditioner.symmetric=true");
    gs_parilu *p = NULL;
    GS_ASSERT_OK(gs_parilu_create(f->be, f->cfg, &p));
    GS_ASSERT_OK(gs_parilu_setup_symbolic(p, &A));
    GS_ASSERT_FAILS(gs_parilu_setup_numeric(p, &A), GS_ERR_ARG, "needs a symmetric matrix");
    /* a numeric setup with another pattern is refused too */
    A.nnz--;
    A.rowptr[A.nrows]--;
    GS_ASSERT_FAILS(gs_parilu_setup_numeric(p, &A), GS_ERR_ARG, "pattern must not change");
    A.nnz++;
    A.rowptr[A.nrows]++;
    gs_parilu_destroy(&p);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- diagnostics */

/* Parse "v0,v1,..." into v (at most max values); returns the count. */
static int parse_list(const char *s, double *v, int max)
{
    int m = 0;
    while (*s && m < max) {
        char *end = NULL;
        v[m++] = strtod(s, &end);
        if (end == s) break;
        s = *end == ',' ? end + 1 : end;
    }
    return m;
}

/* ||A - LU||_F / ||A||_F and ||(A - LU)_S||_F / ||A_S||_F computed densely (independently). */
static void dense_residuals(const gs_csr *A, const gs_csr *L, const gs_csr *U, bool unit, const gs_csr *S1,
                            const gs_csr *S2, double *nl, double *full)
{
    int n = A->nrows;
    double *a = dense_from_csr(A), *l = dense_from_csr(L), *u = dense_from_csr(U);
    if (unit)
        for (int i = 0; i < n; i++) l[(size_t)i * n + i] = 1.0;
    double fn = 0, fd = 0, sn = 0, sd = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double lu = 0.0;
            for (int k = 0; k < n; k++) lu += l[(size_t)i * n + k] * u[(size_t)k * n + j];
            double e = a[(size_t)i * n + j] - lu;
            fn += e * e;
            fd += a[(size_t)i * n + j] * a[(size_t)i * n + j];
            if (csr_has(S1, i, j) || (S2 && csr_has(S2, i, j))) {
                sn += e * e;
                sd += a[(size_t)i * n + j] * a[(size_t)i * n + j];
            }
        }
    *nl = sqrt(sn / sd);
    *full = sqrt(fn / fd);
    free(a);
    free(l);
    free(u);
}

static void check_diagnostics(pc_fixture *f, const gs_csr *A, bool sym)
{
    pc_fixture_set(f, sym ? "preconditioner.symmetric=true" : "preconditioner.symmetric=false");
    pc_fixture_set(f, "preconditioner.diagnostics=true");
    pc_fixture_set(f, "preconditioner.sweep_type=synchronous");
    pc_fixture_set(f, "preconditioner.sweeps=12");
    gs_parilu *p = factor(f, A);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    double r[64], e[64];
    int m = parse_list(view_key(p, rep, "preconditioner.sweep_residuals")->s, r, 64);
    int me = parse_list(view_key(p, rep, "preconditioner.sweep_ilu_residuals")->s, e, 64);
    assert_int_equal(m, 13);
    assert_int_equal(me, 13);
    fprintf(stderr, "%s nonlinear residuals:", sym ? "ParIC" : "ParILU");
    for (int s = 0; s < m; s++) fprintf(stderr, " %.2e", r[s]);
    fprintf(stderr, "\n%s ILU residuals:      ", sym ? "ParIC" : "ParILU");
    for (int s = 0; s < m; s++) fprintf(stderr, " %.2e", e[s]);
    fprintf(stderr, "\n");
    /* the nonlinear residual decreases every sweep (the 7-digit text rounding allowed for) */
    for (int s = 0; s + 1 < m; s++) assert_true(r[s + 1] <= r[s] * (1 + 1e-6));
    assert_true(r[m - 1] < 1e-3 * r[0]);
    assert_true(e[m - 1] < e[0]);
    /* the final values as doubles, equal to a dense computation on the returned factors */
    double nl = view_key(p, rep, "preconditioner.nonlinear_residual")->d;
    double il = view_key(p, rep, "preconditioner.ilu_residual")->d;
    assert_true(fabs(nl - r[m - 1]) <= 1e-6 * nl);
    const gs_csr *L, *U;
    gs_parilu_factors(p, &L, &U);
    double dn, df;
    dense_residuals(A, L, U, !sym, L, sym ? NULL : U, &dn, &df);
    fprintf(stderr, "final: nonlinear %.6e (dense %.6e), ILU %.6e (dense %.6e)\n", nl, dn, il, df);
    assert_true(fabs(nl - dn) <= 1e-9 * dn + 1e-15);
    assert_true(fabs(il - df) <= 1e-9 * df);
    assert_non_null(gs_report_find(rep, "preconditioner.time_sweeps"));
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p);

    /* the exact factorization solves the nonlinear equations: residual ~ rounding */
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    p = factor(f, A);
    GS_ASSERT_OK(gs_report_create(&rep));
    double nl1 = view_key(p, rep, "preconditioner.nonlinear_residual")->d;
    double il1 = view_key(p, rep, "preconditioner.ilu_residual")->d;
    fprintf(stderr, "one exact sweep: nonlinear %.3g, ILU %.3g\n", nl1, il1);
    assert_true(nl1 < 1e-14);
    assert_true(fabs(il1 - e[m - 1]) <= 1e-3 * il1); /* 12 synchronous sweeps reached the same ILU residual */
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p);
    pc_fixture_set(f, "preconditioner.diagnostics=false");
}

static void test_diagnostics_decrease(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(13, 12, 0.8, &A)); /* n = 156: the dense check stays cheap */
    check_diagnostics(f, &A, false);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_laplace2d(12, 14, &A));
    check_diagnostics(f, &A, true);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- orders */

static void test_random_order_reproducible(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(41, 39, 1.0, &A)); /* |S| = 7919 tasks: 62 chunks */

    /* the plan: a permutation of the forward task list made of whole chunks */
    gs_parilu_plan F = {0}, R = {0}, R2 = {0}, R3 = {0};
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_FORWARD, 0, &F));
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_RANDOM, 7, &R));
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_RANDOM, 7, &R2));
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_RANDOM, 8, &R3));
    assert_int_equal(F.ntasks, A.nnz);
    assert_memory_equal(R.task_dst, R2.task_dst, (size_t)R.ntasks * sizeof(gs_int));
    assert_true(memcmp(R.task_dst, R3.task_dst, (size_t)R.ntasks * sizeof(gs_int)) != 0);
    assert_true(memcmp(R.task_dst, F.task_dst, (size_t)R.ntasks * sizeof(gs_int)) != 0);
    /* posF[x] = position in the forward list of the task writing x[x] */
    gs_int *posF = malloc((size_t)F.ntasks * sizeof *posF);
    char *seen = calloc((size_t)F.ntasks, 1);
    assert_non_null(posF);
    assert_non_null(seen);
    for (gs_int t = 0; t < F.ntasks; t++) posF[F.task_dst[t]] = t;
    int jumps = 0;
    for (gs_int t = 0; t < R.ntasks; t++) {
        assert_false(seen[R.task_dst[t]]); /* a permutation */
        seen[R.task_dst[t]] = 1;
        if (t + 1 == R.ntasks) break;
        /* the forward order continues inside a chunk; a jump only lands on a chunk start */
        gs_int a = posF[R.task_dst[t]], b = posF[R.task_dst[t + 1]];
        if (b != a + 1) {
            assert_int_equal(b % GS_PARILU_CHUNK, 0);
            jumps++;
        }
    }
    fprintf(stderr, "random order: %d chunk jumps in %d tasks\n", jumps, (int)R.ntasks);
    assert_true(jumps > 10 && jumps <= (R.ntasks + GS_PARILU_CHUNK - 1) / GS_PARILU_CHUNK);
    free(seen);
    free(posF);
    /* backward is the exact reverse */
    gs_parilu_plan B = {0};
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_BACKWARD, 0, &B));
    for (gs_int t = 0; t < B.ntasks; t++) assert_int_equal(B.task_dst[t], F.task_dst[F.ntasks - 1 - t]);
    gs_parilu_plan_free(&F);
    gs_parilu_plan_free(&R);
    gs_parilu_plan_free(&R2);
    gs_parilu_plan_free(&R3);
    gs_parilu_plan_free(&B);

    /* the factorization: same seed -> bit-identical, another seed -> different values */
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    pc_fixture_set(f, "preconditioner.order=random");
    pc_fixture_set(f, "preconditioner.sweeps=3");
    pc_fixture_set(f, "preconditioner.seed=7");
    gs_parilu *p1 = factor(f, &A), *p2 = factor(f, &A);
    pc_fixture_set(f, "preconditioner.seed=8");
    gs_parilu *p3 = factor(f, &A);
    const gs_csr *L1, *U1, *L2, *U2, *L3, *U3;
    gs_parilu_factors(p1, &L1, &U1);
    gs_parilu_factors(p2, &L2, &U2);
    gs_parilu_factors(p3, &L3, &U3);
    assert_memory_equal(L1->val, L2->val, (size_t)L1->nnz * sizeof(double));
    assert_memory_equal(U1->val, U2->val, (size_t)U1->nnz * sizeof(double));
    assert_true(memcmp(U1->val, U3->val, (size_t)U1->nnz * sizeof(double)) != 0);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    assert_string_equal(view_key(p1, rep, "preconditioner.order")->s, "random");
    assert_int_equal(view_key(p1, rep, "preconditioner.seed")->i, 7);
    gs_report_destroy(&rep);
    gs_parilu_destroy(&p1);
    gs_parilu_destroy(&p2);
    gs_parilu_destroy(&p3);
    /* and many random-order sweeps reach ILU(0) */
    pc_fixture_set(f, "preconditioner.sweeps=40");
    p1 = factor(f, &A);
    assert_true(diff_to_ilu(p1, &A, 0) <= 1e-10);
    gs_parilu_destroy(&p1);
    gs_csr_free(&A);
}

/* ---------------------------------------------------------------- as a preconditioner */

static int krylov_iterations(pc_fixture *f, const char *type, const gs_csr *A, gs_pc *pc, double rtol)
{
    gs_int n = A->nrows;
    gs_matrix *M = NULL;
    gs_vector *b = NULL, *x = NULL;
    gs_ksp *ksp = NULL;
    gs_ksp_params prm;
    GS_ASSERT_OK(gs_ksp_params_from_config(f->cfg, &prm));
    prm.rtol = rtol;
    prm.restart = 30;
    prm.max_iterations = 3000;
    GS_ASSERT_OK(gs_ksp_create(type, f->be, &prm, &ksp));
    GS_ASSERT_OK(gs_mat_create(f->be, A, &M));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &b));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &x));
    GS_ASSERT_OK(gs_vec_set(b, 1.0));
    GS_ASSERT_OK(gs_vec_set(x, 0.0));
    gs_solve_result res;
    GS_ASSERT_OK(gs_ksp_solve(ksp, M, pc, b, x, &res));
    if (!gs_reason_converged(res.reason)) fprintf(stderr, "%s: %s %s\n", type, gs_reason_name(res.reason), res.detail);
    assert_true(gs_reason_converged(res.reason));
    gs_ksp_destroy(&ksp);
    gs_mat_destroy(&M);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    return res.iterations;
}

static gs_pc *make_pc(pc_fixture *f, const char *type, const gs_csr *A)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create(type, f->be, f->cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    return pc;
}

/* GMRES(30) to 1e-8 with ParILU after 5 synchronous sweeps needs at most 3 iterations more than with
 * the exact ILU(0) (and no fewer than ILU(0) minus 3) on a 2D convection-diffusion problem. */
static void test_gmres_parilu_close_to_ilu0(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(70, 61, 1.0, &A)); /* n = 4270 */
    gs_pc *ilu = make_pc(f, "ilu0", &A);
    pc_fixture_set(f, "preconditioner.sweeps=5");
    gs_pc *par = make_pc(f, "parilu", &A);
    pc_fixture_set(f, "preconditioner.sweeps=0");
    gs_pc *par0 = make_pc(f, "parilu", &A);
    int it_ilu = krylov_iterations(f, "gmres", &A, ilu, 1e-8);
    int it_par = krylov_iterations(f, "gmres", &A, par, 1e-8);
    int it_par0 = krylov_iterations(f, "gmres", &A, par0, 1e-8);
    fprintf(stderr, "GMRES(30) iterations: ILU(0) %d, ParILU(5 sweeps) %d, ParILU(0 sweeps) %d\n", it_ilu, it_par,
            it_par0);
    assert_true(abs(it_par - it_ilu) <= 3);
    assert_true(it_par0 > it_par); /* the sweeps improve on the initial guess */
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(par, rep);
    assert_string_equal(gs_report_find(rep, "preconditioner.type")->s, "parilu");
    assert_string_equal(gs_report_find(rep, "preconditioner.factorization")->s, "ParILU");
    assert_int_equal(gs_report_find(rep, "preconditioner.sweeps")->i, 5);
    assert_string_equal(gs_report_find(rep, "preconditioner.sweep_type")->s, "synchronous");
    assert_string_equal(gs_report_find(rep, "preconditioner.order")->s, "forward");
    assert_true(gs_report_find(rep, "preconditioner.time_sweeps")->d >= 0.0);
    assert_int_equal(gs_report_find(rep, "preconditioner.tasks")->i, A.nnz);
    gs_report_destroy(&rep);
    gs_pc_destroy(&ilu);
    gs_pc_destroy(&par);
    gs_pc_destroy(&par0);
    gs_csr_free(&A);
}

/* PCG to 1e-6 (the paper's Table 2 setting) with ParIC after 0..5 asynchronous sweeps: 5 sweeps
 * within 2 iterations of IC(0). */
static void test_pcg_paric_close_to_ic0(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(64, 60, &A));
    gs_pc *ic = make_pc(f, "ic0", &A);
    int it_ic = krylov_iterations(f, "cg", &A, ic, 1e-6);
    gs_pc_destroy(&ic);
    pc_fixture_set(f, "preconditioner.symmetric=true");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    int it[6];
    fprintf(stderr, "PCG iterations: IC(0) %d, ParIC after 0..5 sweeps:", it_ic);
    for (int s = 0; s <= 5; s++) {
        char a[64];
        snprintf(a, sizeof a, "preconditioner.sweeps=%d", s);
        pc_fixture_set(f, a);
        gs_pc *pc = make_pc(f, "parilu", &A);
        it[s] = krylov_iterations(f, "cg", &A, pc, 1e-6);
        fprintf(stderr, " %d", it[s]);
        gs_pc_destroy(&pc);
    }
    fprintf(stderr, "\n");
    assert_true(abs(it[5] - it_ic) <= 2);
    assert_true(it[0] > it_ic);
    gs_csr_free(&A);
}

/* RAS with local = parilu: one forward in-place sweep factors every subdomain exactly, so it
 * applies the same operator as RAS with local = iluk (fill 0); with synchronous sweeps it is a
 * working preconditioner for GMRES. */
static void test_ras_local_parilu(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(45, 41, 1.0, &A)); /* n = 1845 */
    pc_fixture_set(f, "preconditioner.blocks=9");
    pc_fixture_set(f, "preconditioner.overlap=1");
    pc_fixture_set(f, "preconditioner.fill_level=0");
    pc_fixture_set(f, "preconditioner.local=iluk");
    gs_pc *ref = make_pc(f, "ras", &A);
    pc_fixture_set(f, "preconditioner.local=parilu");
    pc_fixture_set(f, "preconditioner.sweeps=1");
    pc_fixture_set(f, "preconditioner.sweep_type=asynchronous");
    gs_pc *par = make_pc(f, "ras", &A);

    gs_int n = A.nrows;
    double *r = NULL, *z1 = NULL, *z2 = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z1, n));
    GS_ASSERT_OK(GS_MALLOC(z2, n));
    uint64_t s = 5;
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&s) - 0.5;
    gs_vector *vr = NULL, *vz = NULL;
    GS_ASSERT_OK(gs_vec_create(f->be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &vz));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    gs_test_poison(n, z1);
    GS_ASSERT_OK(gs_vec_upload(vz, z1));
    GS_ASSERT_OK(gs_pc_apply(ref, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z1));
    gs_test_poison(n, z2);
    GS_ASSERT_OK(gs_vec_upload(vz, z2));
    GS_ASSERT_OK(gs_pc_apply(par, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z2));
    double d = gs_test_rel_diff(n, z2, z1);
    fprintf(stderr, "RAS(1) local parilu (1 exact sweep) vs local iluk: %.3g\n", d);
    assert_true(d <= 1e-12);

    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(par, rep);
    assert_string_equal(gs_report_find(rep, "preconditioner.local")->s, "parilu");
    assert_string_equal(gs_report_find(rep, "preconditioner.factorization")->s, "ParILU");
    assert_true(gs_report_find(rep, "preconditioner.extended_size")->i > n);
    gs_report_destroy(&rep);
    gs_pc_destroy(&par);

    pc_fixture_set(f, "preconditioner.sweeps=5");
    pc_fixture_set(f, "preconditioner.sweep_type=synchronous");
    par = make_pc(f, "ras", &A);
    int it_ref = krylov_iterations(f, "gmres", &A, ref, 1e-8);
    int it_par = krylov_iterations(f, "gmres", &A, par, 1e-8);
    fprintf(stderr, "GMRES(30): RAS(1) iluk %d, RAS(1) parilu 5 sweeps %d\n", it_ref, it_par);
    assert_true(it_par <= it_ref + 5);

    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
    gs_free(&r);
    gs_free(&z1);
    gs_free(&z2);
    gs_pc_destroy(&ref);
    gs_pc_destroy(&par);
    gs_csr_free(&A);
}

/* Every host allocation of the setup may fail: the failure is GS_ERR_MEM (or, for the few the
 * backend makes, whatever it reports), never a crash, and the engine can be destroyed after it. */
static void test_allocation_failures(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(9, 8, 0.5, &A));
    pc_fixture_set(f, "preconditioner.diagnostics=true");
    pc_fixture_set(f, "preconditioner.sweeps=2");
    int failures = 0;
    for (long k = 1; k < 400; k++) {
        gs_parilu *p = NULL;
        gs_alloc_fail_at(k);
        gs_status st = gs_parilu_create(f->be, f->cfg, &p);
        if (st == GS_OK) st = gs_parilu_setup_symbolic(p, &A);
        if (st == GS_OK) st = gs_parilu_setup_numeric(p, &A);
        long used = gs_alloc_count();
        gs_alloc_fail_at(0);
        gs_parilu_destroy(&p);
        if (st != GS_OK) {
            assert_int_equal(st, GS_ERR_MEM);
            failures++;
        }
        gs_error_clear();
        if (used < k) break; /* the k-th allocation was never reached: all paths done */
    }
    fprintf(stderr, "allocation failures injected and reported: %d\n", failures);
    assert_true(failures > 10);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_one_sweep_equals_ilu0),
        PC_FIXTURE_TEST(test_paric_one_sweep_equals_ic0),
        PC_FIXTURE_TEST(test_synchronous_sweeps_converge),
        PC_FIXTURE_TEST(test_deterministic_and_backward),
        PC_FIXTURE_TEST(test_zero_sweeps_is_initial_guess),
        PC_FIXTURE_TEST(test_missing_diagonal_inserted),
        PC_FIXTURE_TEST(test_awkward_matrix),
        PC_FIXTURE_TEST(test_zero_pivot_policies),
        PC_FIXTURE_TEST(test_paric_rejects_nonsymmetric),
        PC_FIXTURE_TEST(test_diagnostics_decrease),
        PC_FIXTURE_TEST(test_random_order_reproducible),
        PC_FIXTURE_TEST(test_gmres_parilu_close_to_ilu0),
        PC_FIXTURE_TEST(test_pcg_paric_close_to_ic0),
        PC_FIXTURE_TEST(test_ras_local_parilu),
        PC_FIXTURE_TEST(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
