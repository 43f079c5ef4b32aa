/* Tests of ILUTP (precond/ilutp.c): pivot_tolerance 0 gives gs_ilut's arrays exactly; with pivoting it
 * equals an independent dense ILUTP (explicit column swaps) on random matrices with zero diagonals;
 * tau = 0, p = n gives A Q = L U; it factors real matrices with zero diagonals, and GMRES(30) + ILUTP
 * converges on west0067 and impcol_a. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "factor_dense.h"
#include "precond/factor.h"
#include "precond/precond.h"
#include "solver/solver.h"

static gs_factor_opts opts(double tau, int p, double ptol)
{
    gs_factor_opts o;
    memset(&o, 0, sizeof o);
    o.zero_pivot = GS_ZERO_PIVOT_ERROR;
    o.shift = 1e-8;
    o.drop_tol = tau;
    o.max_fill = p;
    o.perm_tol = ptol;
    o.min_pivot = 1e-8;
    return o;
}

static void assert_same_csr(const gs_csr *X, const gs_csr *Y, const char *what)
{
    assert_int_equal(X->nrows, Y->nrows);
    assert_int_equal(X->nnz, Y->nnz);
    if (memcmp(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof *X->rowptr) != 0)
        fail_msg("%s: row pointers differ", what);
    if (memcmp(X->colind, Y->colind, (size_t)X->nnz * sizeof *X->colind) != 0) fail_msg("%s: columns differ", what);
    if (memcmp(X->val, Y->val, (size_t)X->nnz * sizeof *X->val) != 0) fail_msg("%s: values differ", what);
}

/* A copy of A without the diagonal entries of the rows i with i % every == phase. */
static void drop_diagonals(const gs_csr *A, int every, int phase, gs_csr *B)
{
    gs_int n = A->nrows, nnz = 0;
    GS_ASSERT_OK(gs_csr_alloc(B, n, n, A->nnz, true));
    B->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            if (A->colind[p] == i && i % every == phase) continue;
            B->colind[nnz] = A->colind[p];
            B->val[nnz++] = A->val[p];
        }
        B->rowptr[i + 1] = nnz;
    }
    B->nnz = nnz;
}

/* ---------------------------------------------------------------------------------------------------- */
/* A dense ILUTP written from the rule with explicit column exchanges: the columns of A's copy and of
 * the rows of U computed so far are swapped when positions i and j are exchanged. f = L\U of A Q,
 * perm[k] = the column of A at position k. Returns -1, or the row (0-based) of a zero pivot. */

typedef struct dcand {
    int pos;
    double mag;
} dcand;

static int dcand_cmp(const void *a, const void *b)
{
    const dcand *x = a, *y = b;
    if (x->mag != y->mag) return x->mag > y->mag ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Zero every w[lo..hi) but the p largest nonzero ones (ties: the smaller position). */
static void dense_keep_largest(double *w, int lo, int hi, int p, dcand *c)
{
    int m = 0;
    for (int j = lo; j < hi; j++)
        if (w[j] != 0.0) c[m++] = (dcand){j, fabs(w[j])};
    qsort(c, (size_t)m, sizeof *c, dcand_cmp);
    for (int t = p; t < m; t++) w[c[t].pos] = 0.0;
}

static void swap_d(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

static int dense_ilutp(int n, const double *a, double tau, int p, double ptol, double *f, int *perm)
{
    double *aq = malloc((size_t)n * n * sizeof *aq), *w = malloc((size_t)n * sizeof *w);
    dcand *c = malloc((size_t)n * sizeof *c);
    assert_true(aq && w && c);
    memcpy(aq, a, (size_t)n * n * sizeof *aq);
    memset(f, 0, (size_t)n * n * sizeof *f);
    for (int k = 0; k < n; k++) perm[k] = k;
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++) {
        double nrm = 0.0;
        for (int j = 0; j < n; j++) nrm += a[i * n + j] * a[i * n + j];
        nrm = sqrt(nrm);
        const double thr = nrm > 0.0 ? tau * nrm : 0.0;
        for (int j = 0; j < n; j++) w[j] = aq[i * n + j];
        for (int k = 0; k < i; k++) {
            if (w[k] == 0.0) continue;
            double wk = w[k] / f[k * n + k];
            if (wk == 0.0 || fabs(wk) < thr) {
                w[k] = 0.0;
                continue;
            }
            w[k] = wk;
            for (int j = k + 1; j < n; j++)
                if (f[k * n + j] != 0.0) w[j] -= wk * f[k * n + j];
        }
        for (int j = i + 1; j < n; j++)
            if (fabs(w[j]) < thr) w[j] = 0.0;
        dense_keep_largest(w, 0, i, p, c);
        dense_keep_largest(w, i + 1, n, p, c);
        int jb = -1;
        for (int j = i + 1; j < n; j++)
            if (w[j] != 0.0 && (jb < 0 || fabs(w[j]) > fabs(w[jb]))) jb = j;
        if (jb >= 0 && ptol * fabs(w[jb]) > fabs(w[i])) {
            int t = perm[i];
            perm[i] = perm[jb];
            perm[jb] = t;
            for (int r = 0; r < n; r++) swap_d(&aq[r * n + i], &aq[r * n + jb]);
            for (int r = 0; r < i; r++) swap_d(&f[r * n + i], &f[r * n + jb]);
            swap_d(&w[i], &w[jb]);
            if (fabs(w[jb]) < thr) w[jb] = 0.0; /* the former diagonal, now at jb */
        }
        if (fabs(w[i]) < DBL_MIN) bad = i;
        for (int j = 0; j < n; j++) f[i * n + j] = w[j];
    }
    free(aq);
    free(w);
    free(c);
    return bad;
}

/* Dense L\U from the sparse factors (positions), checking the storage convention. */
static double *factors_to_dense(const gs_csr *L, const gs_csr *U)
{
    int n = L->nrows;
    double *f = calloc((size_t)n * n, sizeof *f);
    assert_non_null(f);
    assert_true(gs_csr_is_sorted(L));
    assert_true(gs_csr_is_sorted(U));
    for (int i = 0; i < n; i++) {
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
            assert_true(L->colind[p] < i);
            assert_true(L->val[p] != 0.0);
            f[i * n + L->colind[p]] = L->val[p];
        }
        assert_int_equal(U->colind[U->rowptr[i]], i);
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) f[i * n + U->colind[p]] = U->val[p];
        for (gs_int p = U->rowptr[i] + 1; p < U->rowptr[i + 1]; p++) assert_true(U->val[p] != 0.0);
    }
    return f;
}

static void assert_permutation(const gs_int *perm, gs_int n)
{
    char *seen = calloc((size_t)n + 1, 1);
    assert_non_null(seen);
    for (gs_int k = 0; k < n; k++) {
        assert_true(perm[k] >= 0 && perm[k] < n);
        assert_false(seen[perm[k]]);
        seen[perm[k]] = 1;
    }
    free(seen);
}

/* ---------------------------------------------------------------------------------------------------- */

/* pivot_tolerance 0: the arrays of gs_ilut, bit for bit, the identity permutation, no exchange; under
 * every policy and with MILU. */
static void test_tol0_equals_ilut(void **state)
{
    gs_csr M[8];
    memset(M, 0, sizeof M);
    GS_ASSERT_OK(gs_test_random_sparse(45, 4, 1.2, 7, &M[0]));
    GS_ASSERT_OK(gs_test_random_sparse(101, 6, 0.7, 29, &M[1]));
    GS_ASSERT_OK(gs_test_convdiff2d(13, 9, 1.0, &M[2]));
    GS_ASSERT_OK(gs_test_laplace2d(7, 11, &M[3]));
    GS_ASSERT_OK(gs_test_load("sherman1.mtx", &M[4]));
    GS_ASSERT_OK(gs_test_load("pde225.mtx", &M[5]));
    GS_ASSERT_OK(gs_test_load("orsirr_1.mtx", &M[6]));
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &M[7])); /* zero pivots: compared under shift and grow */
    const double taus[] = {0.0, 1e-4, 1e-2, 0.1};
    const int ps[] = {0, 2, 10, 100000};
    const gs_zero_pivot pol[] = {GS_ZERO_PIVOT_ERROR, GS_ZERO_PIVOT_SHIFT, GS_ZERO_PIVOT_GROW};
    int compared = 0;
    for (int m = 0; m < 8; m++) {
        gs_int n = M[m].nrows;
        gs_int *cp = malloc((size_t)n * sizeof *cp);
        assert_non_null(cp);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int z = 0; z < 3; z++)
                    for (int milu = 0; milu < 2; milu++) {
                        gs_factor_opts o = opts(taus[a], ps[b], 0.0);
                        o.zero_pivot = pol[z];
                        o.shift = 1e-3;
                        o.milu = milu;
                        gs_csr L1 = {0}, U1 = {0}, L2 = {0}, U2 = {0};
                        gs_factor_info i1, i2;
                        gs_error_clear();
                        gs_status s1 = gs_ilut(&M[m], &o, &L1, &U1, &i1);
                        gs_error_clear();
                        gs_status s2 = gs_ilutp(&M[m], &o, &L2, &U2, cp, &i2);
                        gs_error_clear();
                        assert_int_equal(s1, s2);
                        if (s1 == GS_OK) {
                            assert_same_csr(&L1, &L2, "L");
                            assert_same_csr(&U1, &U2, "U");
                            for (gs_int k = 0; k < n; k++) assert_int_equal(cp[k], k);
                            assert_int_equal(i2.columns_exchanged, 0);
                            assert_int_equal(i1.nshifted, i2.nshifted);
                            assert_true(i1.shift_used == i2.shift_used);
                            assert_int_equal(i1.refactorizations, i2.refactorizations);
                            compared++;
                        }
                        gs_csr_free(&L1);
                        gs_csr_free(&U1);
                        gs_csr_free(&L2);
                        gs_csr_free(&U2);
                    }
        free(cp);
        gs_csr_free(&M[m]);
    }
    printf("pivot_tolerance 0 = ILUT on %d factorizations\n", compared);
    assert_true(compared > 300);
}

/* With pivoting: the dense ILUTP's permutation, pattern and values (n not a multiple of 32, a third of the
 * diagonal missing). */
static void test_matches_dense_ilutp(void **state)
{
    const gs_int sizes[] = {7, 13, 33, 45, 67};
    const double taus[] = {0.0, 1e-3, 1e-2, 0.05};
    const int ps[] = {2, 3, 6, 1000};
    const double ptols[] = {0.1, 0.5, 1.0};
    int ok = 0, failed = 0, exchanges = 0;
    for (int s = 0; s < 5; s++) {
        gs_csr R = {0}, A = {0};
        GS_ASSERT_OK(gs_test_random_sparse(sizes[s], 4, 0.6, 100 + (uint64_t)s, &R));
        drop_diagonals(&R, 3, s % 3, &A);
        int n = A.nrows;
        double *a = dense_from_csr(&A), *f = malloc((size_t)n * n * sizeof *f);
        int *dperm = malloc((size_t)n * sizeof *dperm);
        gs_int *cp = malloc((size_t)n * sizeof *cp);
        assert_true(f && dperm && cp);
        for (int t = 0; t < 4; t++)
            for (int q = 0; q < 4; q++)
                for (int r = 0; r < 3; r++) {
                    gs_factor_opts o = opts(taus[t], ps[q], ptols[r]);
                    gs_csr L = {0}, U = {0};
                    gs_factor_info info;
                    gs_error_clear();
                    gs_status st = gs_ilutp(&A, &o, &L, &U, cp, &info);
                    int bad = dense_ilutp(n, a, taus[t], ps[q], ptols[r], f, dperm);
                    if (bad >= 0) { /* the same row fails */
                        assert_int_equal(st, GS_ERR_NUMERIC);
                        const char *m = strstr(gs_error_message(), "zero pivot at row ");
                        assert_non_null(m);
                        assert_int_equal(atoi(m + strlen("zero pivot at row ")), bad + 1);
                        gs_error_clear();
                        failed++;
                        continue;
                    }
                    GS_ASSERT_OK(st);
                    assert_permutation(cp, n);
                    for (int k = 0; k < n; k++) assert_int_equal(cp[k], dperm[k]);
                    double *g = factors_to_dense(&L, &U);
                    gs_int cnt = 0;
                    for (int k = 0; k < n * n; k++) {
                        cnt += f[k] != 0.0;
                        if (fabs(g[k] - f[k]) > 1e-13 * fmax(1.0, fabs(f[k])))
                            fail_msg("n %d tau %g p %d ptol %g: entry (%d,%d) %.17g vs dense %.17g", n, taus[t], ps[q],
                                     ptols[r], k / n, k % n, g[k], f[k]);
                    }
                    assert_int_equal(cnt, L.nnz + U.nnz);
                    exchanges += info.columns_exchanged;
                    ok++;
                    free(g);
                    gs_csr_free(&L);
                    gs_csr_free(&U);
                }
        free(a);
        free(f);
        free(dperm);
        free(cp);
        gs_csr_free(&R);
        gs_csr_free(&A);
    }
    printf("dense ILUTP: %d equal, %d zero pivots in both, %d column exchanges\n", ok, failed, exchanges);
    assert_true(ok >= 90);
    assert_true(exchanges > 500);
}

/* max |(A Q - L U)_ij| / max |a_ij| over the rows, with (L U)_i = u_i + sum_k l_ik u_k. */
static double factor_residual(const gs_csr *A, const gs_csr *L, const gs_csr *U, const gs_int *cp)
{
    gs_int n = A->nrows;
    double *row = calloc((size_t)n, sizeof *row);
    gs_int *qi = malloc((size_t)n * sizeof *qi);
    assert_true(row && qi);
    for (gs_int k = 0; k < n; k++) qi[cp[k]] = k;
    double amax = 0.0, err = 0.0;
    for (gs_int p = 0; p < A->nnz; p++) amax = fmax(amax, fabs(A->val[p]));
    for (gs_int i = 0; i < n; i++) {
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) row[qi[A->colind[p]]] += A->val[p];
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) row[U->colind[p]] -= U->val[p];
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
            gs_int k = L->colind[p];
            for (gs_int q = U->rowptr[k]; q < U->rowptr[k + 1]; q++) row[U->colind[q]] -= L->val[p] * U->val[q];
        }
        for (gs_int j = 0; j < n; j++) {
            err = fmax(err, fabs(row[j]));
            row[j] = 0.0;
        }
    }
    free(row);
    free(qi);
    return err / amax;
}

/* tau = 0, p >= n: an exact LU with column pivoting, A Q = L U (to rounding), on matrices whose diagonal
 * is mostly zero; the permutation is a permutation. */
static void test_exact_with_pivoting(void **state)
{
    const char *names[] = {"west0067.mtx", "impcol_a.mtx", "lns__131.mtx", "plskz362.mtx"};
    const double bound[] = {1e-12, 1e-12, 1e-12, 1e-12};
    const bool needs_pivoting[] = {true, true, false, true}; /* lns__131: fill creates its pivots */
    for (int m = 0; m < 4; m++) {
        gs_csr A = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_test_load(names[m], &A));
        gs_int n = A.nrows;
        gs_int *cp = malloc((size_t)n * sizeof *cp);
        assert_non_null(cp);
        gs_factor_opts o = opts(0.0, n, 1.0);
        gs_factor_info info;
        GS_ASSERT_OK(gs_ilutp(&A, &o, &L, &U, cp, &info));
        assert_permutation(cp, n);
        assert_true(info.columns_exchanged > 0);
        double res = factor_residual(&A, &L, &U, cp);
        printf("%-14s exact ILUTP: ||A Q - L U||_max / ||A||_max = %.2e, %d exchanges, fill %.2f\n", names[m], res,
               (int)info.columns_exchanged, (double)(L.nnz + U.nnz) / A.nnz);
        assert_true(res < bound[m]);
        /* LU without pivoting meets a zero pivot */
        gs_csr L0 = {0}, U0 = {0};
        gs_error_clear();
        gs_status s0 = gs_ilut(&A, &o, &L0, &U0, NULL);
        gs_error_clear();
        if (needs_pivoting[m]) assert_int_equal(s0, GS_ERR_NUMERIC);
        gs_csr_free(&L0);
        gs_csr_free(&U0);
        free(cp);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&A);
    }
}

/* Incomplete ILUTP factors real matrices with zero diagonals without a zero pivot (zero_pivot = error). */
static void test_real_zero_diagonal(void **state)
{
    const struct {
        const char *name;
        double tau;
        int p;
        double ptol;
    } cases[] = {
        {"west0067.mtx", 1e-3, 10, 0.1}, /* the configuration defaults */
        {"west0067.mtx", 1e-2, 5, 1.0},
        {"impcol_a.mtx", 1e-4, 20, 0.1},
        {"plskz362.mtx", 1e-3, 10, 0.1},
        {"plskz362.mtx", 1e-4, 20, 0.5},
        {"lns__131.mtx", 1e-6, 40, 0.1},
        {"west0497.mtx", 1e-5, 30, 0.1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gs_csr A = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_test_load(cases[c].name, &A));
        gs_int n = A.nrows;
        gs_int *cp = malloc((size_t)n * sizeof *cp);
        assert_non_null(cp);
        gs_factor_opts o = opts(cases[c].tau, cases[c].p, cases[c].ptol);
        gs_factor_info info;
        GS_ASSERT_OK(gs_ilutp(&A, &o, &L, &U, cp, &info));
        assert_permutation(cp, n);
        printf("%-14s ILUTP(tau %g, p %d, pivot_tolerance %g): fill %.2f, %d exchanges\n", cases[c].name, cases[c].tau,
               cases[c].p, cases[c].ptol, (double)(L.nnz + U.nnz) / A.nnz, (int)info.columns_exchanged);
        assert_true(info.columns_exchanged > 0);
        for (gs_int i = 0; i < n; i++) assert_true(fabs(U.val[U.rowptr[i]]) >= DBL_MIN);
        for (gs_int i = 0; i < n; i++) {
            assert_true(L.rowptr[i + 1] - L.rowptr[i] <= cases[c].p);
            assert_true(U.rowptr[i + 1] - U.rowptr[i] <= cases[c].p + 1);
        }
        free(cp);
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&A);
    }
}

/* GMRES(30) + ILUTP (host backend, the solver API), b = A 1, x0 = 0: converges, x close to 1. */
static void gmres_ilutp(const char *name, const char *const *settings, int max_it)
{
    gs_backend *be = NULL;
    gs_config *cfg = NULL;
    gs_csr A = {0};
    gs_matrix *M = NULL;
    gs_pc *pc = NULL;
    gs_ksp *ksp = NULL;
    gs_vector *b = NULL, *x = NULL, *one = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.type = \"ilutp\""));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    GS_ASSERT_OK(gs_test_load(name, &A));
    gs_int n = A.nrows;
    GS_ASSERT_OK(gs_mat_create(be, &A, &M));
    GS_ASSERT_OK(gs_vec_create(be, n, &b));
    GS_ASSERT_OK(gs_vec_create(be, n, &x));
    GS_ASSERT_OK(gs_vec_create(be, n, &one));
    GS_ASSERT_OK(gs_vec_set(one, 1.0));
    GS_ASSERT_OK(gs_mat_spmv(1.0, M, one, 0.0, b));
    GS_ASSERT_OK(gs_vec_set(x, 0.0));
    GS_ASSERT_OK(gs_pc_create("ilutp", be, cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
    gs_ksp_params prm;
    GS_ASSERT_OK(gs_ksp_params_from_config(cfg, &prm));
    prm.restart = 30;
    prm.rtol = 1e-10;
    prm.atol = 0.0;
    prm.max_iterations = max_it;
    GS_ASSERT_OK(gs_ksp_create("gmres", be, &prm, &ksp));
    gs_solve_result res;
    GS_ASSERT_OK(gs_ksp_solve(ksp, M, pc, b, x, &res));
    double tr = 0.0, *xh = malloc((size_t)n * sizeof *xh), err = 0.0;
    assert_non_null(xh);
    GS_ASSERT_OK(gs_true_residual(M, b, x, &tr));
    GS_ASSERT_OK(gs_vec_download(x, xh));
    for (gs_int i = 0; i < n; i++) err = fmax(err, fabs(xh[i] - 1.0));
    printf("%-14s GMRES(30) + ILUTP: %s after %d iterations, true relative residual %.2e, max |x - 1| = %.2e, "
           "stability estimate %.3g\n",
           name, gs_reason_name(res.reason), res.iterations, tr / res.bnorm, err, pc->stability_estimate);
    assert_true(gs_reason_converged(res.reason));
    assert_true(tr <= 1e-9 * res.bnorm);
    assert_true(err < 1e-4);
    free(xh);
    gs_ksp_destroy(&ksp);
    gs_pc_destroy(&pc);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&one);
    gs_mat_destroy(&M);
    gs_csr_free(&A);
    gs_config_destroy(&cfg);
    gs_backend_destroy(&be);
}

static void test_gmres_west0067(void **state)
{
    const char *defaults[] = {NULL}; /* drop_tolerance 1e-3, max_fill 10, pivot_tolerance 0.1 */
    gmres_ilutp("west0067.mtx", defaults, 300);
}

static void test_gmres_impcol_a(void **state)
{
    const char *s[] = {"preconditioner.drop_tolerance = 1e-4", "preconditioner.max_fill = 20", NULL};
    gmres_ilutp("impcol_a.mtx", s, 300);
}

static void test_bad_arguments(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0};
    gs_int cp[9];
    GS_ASSERT_OK(gs_test_laplace2d(3, 3, &A));
    gs_factor_opts o = opts(1e-3, 3, -0.5);
    GS_ASSERT_FAILS(gs_ilutp(&A, &o, &L, &U, cp, NULL), GS_ERR_ARG, "pivot tolerance");
    o = opts(1e-3, 3, NAN);
    GS_ASSERT_FAILS(gs_ilutp(&A, &o, &L, &U, cp, NULL), GS_ERR_ARG, "pivot tolerance");
    o = opts(-1.0, 3, 0.1);
    GS_ASSERT_FAILS(gs_ilutp(&A, &o, &L, &U, cp, NULL), GS_ERR_ARG, "drop tolerance");
    o = opts(0.1, -2, 0.1);
    GS_ASSERT_FAILS(gs_ilutp(&A, &o, &L, &U, cp, NULL), GS_ERR_ARG, "max_fill");
    o = opts(0.1, 2, 0.1);
    GS_ASSERT_FAILS(gs_ilutp(&A, &o, &L, &U, NULL, NULL), GS_ERR_ARG, "colperm");
    /* n = 0 */
    gs_csr E = {0};
    GS_ASSERT_OK(gs_csr_alloc(&E, 0, 0, 0, true));
    GS_ASSERT_OK(gs_ilutp(&E, &o, &L, &U, NULL, NULL));
    assert_int_equal(L.nrows, 0);
    assert_int_equal(U.nnz, 0);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&E);
    gs_csr_free(&A);
}

static void test_allocation_failures(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    gs_int cp[67];
    gs_factor_opts o = opts(1e-3, 4, 0.5);
    for (long k = 1;; k++) {
        gs_csr L = {0}, U = {0};
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_ilutp(&A, &o, &L, &U, cp, NULL);
        gs_alloc_fail_at(0);
        gs_error_clear();
        if (st == GS_OK) {
            assert_true(k > 5);
            gs_csr_free(&L);
            gs_csr_free(&U);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
        assert_null(L.rowptr);
        assert_null(U.rowptr);
        assert_true(k < 200);
    }
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tol0_equals_ilut),      cmocka_unit_test(test_matches_dense_ilutp),
        cmocka_unit_test(test_exact_with_pivoting),   cmocka_unit_test(test_real_zero_diagonal),
        cmocka_unit_test(test_gmres_west0067),        cmocka_unit_test(test_gmres_impcol_a),
        cmocka_unit_test(test_bad_arguments),         cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
