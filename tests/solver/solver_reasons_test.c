/* Every way a Krylov solve stops, for every method: zero rhs, converged at the start, the iteration
 * limit, NaN (in A, in the middle of the iteration), a failing preconditioner, CG on indefinite A or
 * with an indefinite preconditioner, BiCGStab and GMRES breakdowns, stagnation, an interrupt, and the
 * GMRES happy breakdown. */
#include "ksp_fixture.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"

static ksp_hist hist;
static const char *all_types[] = {"cg", "bicgstab", "gmres", "fgmres"};

static void laplace_sys(ksp_sys *s, gs_int nx, gs_int ny)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    sys_setup(s, &A, 17);
}

/* Diagonal matrix from a list. */
static void diag_sys(ksp_sys *s, gs_int n, const double *d)
{
    gs_csr A = {0};
    gs_int *idx = NULL;
    GS_ASSERT_OK(GS_MALLOC(idx, n));
    for (gs_int i = 0; i < n; i++) idx[i] = i;
    GS_ASSERT_OK(gs_csr_from_coo(n, n, n, idx, idx, d, &A));
    gs_free(&idx);
    sys_setup(s, &A, 5);
}

static void test_zero_rhs(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 11, 13);
    double *zero = NULL, *x0 = NULL;
    GS_ASSERT_OK(GS_CALLOC(zero, s.n));
    GS_ASSERT_OK(GS_MALLOC(x0, s.n));
    for (gs_int i = 0; i < s.n; i++) x0[i] = 1.0 + i;
    sys_set_b(&s, zero);
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        sys_set_x(&s, x0);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("zero rhs", &res);
        assert_int_equal(res.reason, GS_CONVERGED_ZERO_RHS);
        assert_int_equal(res.iterations, 0);
        assert_true(res.bnorm == 0.0);
        assert_true(res.resnorm == 0.0);
        assert_true(res.r0norm > 0.0); /* ||A x0|| */
        assert_non_null(strstr(res.detail, "b = 0"));
        assert_int_equal(hist.n, 1);
        GS_ASSERT_OK(gs_vec_download(s.x, s.xh));
        for (gs_int i = 0; i < s.n; i++) assert_true(s.xh[i] == 0.0);
    }
    gs_free(&zero);
    gs_free(&x0);
    sys_teardown(&s);
}

static void test_converged_at_start(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 12, 9);
    gs_pc *pc = sys_jacobi(&s);
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        sys_set_x(&s, s.xstar);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, pc, &hist, &res));
        print_result("x0 = x*", &res);
        assert_int_equal(res.reason, GS_CONVERGED_RTOL);
        assert_int_equal(res.iterations, 0);
        assert_int_equal(hist.n, 1);
        assert_true(res.r0norm <= 1e-10 * res.bnorm);
        assert_non_null(strstr(res.detail, "iteration 0"));
        assert_true(sys_error(&s) == 0.0); /* x untouched */
    }
    gs_pc_destroy(&pc);
    sys_teardown(&s);
}

static void test_max_iterations(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 30, 37);
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 5);
        prm.restart = 3; /* GMRES: the limit falls inside the second cycle */
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("max_iterations = 5", &res);
        assert_int_equal(res.reason, GS_DIVERGED_MAX_IT);
        assert_int_equal(res.iterations, 5);
        assert_int_equal(hist.n, 6);
        assert_non_null(strstr(res.detail, "max_iterations"));
        /* x holds the last iterate: better than x0 = 0 */
        assert_true(sys_true_resnorm(&s) < res.bnorm);

        prm.max_iterations = 0;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        assert_int_equal(res.reason, GS_DIVERGED_MAX_IT);
        assert_int_equal(res.iterations, 0);
    }
    sys_teardown(&s);
}

static void test_nan_in_matrix(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(10, 11, &A));
    A.val[A.rowptr[40] + 1] = NAN;
    ksp_sys s;
    sys_setup(&s, &A, 3);
    double *b = NULL;
    GS_ASSERT_OK(GS_MALLOC(b, s.n));
    for (gs_int i = 0; i < s.n; i++) b[i] = 1.0;
    sys_set_b(&s, b);
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        print_result("NaN in A", &res);
        assert_int_equal(res.reason, GS_DIVERGED_NAN);
        assert_non_null(strstr(res.detail, "NaN"));
        assert_non_null(strstr(res.detail, "iteration"));
    }
    gs_free(&b);
    sys_teardown(&s);
}

/* NaN appearing mid-solve: the preconditioner's 4th application returns NaN. */
static void test_nan_during_iteration(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 20, 21);
    for (int t = 0; t < 4; t++) {
        gs_pc *pc = sys_test_pc(&s, 1.0, false, 4, 0);
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 500);
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, pc, NULL, &res));
        print_result("NaN from the preconditioner", &res);
        assert_int_equal(res.reason, GS_DIVERGED_NAN);
        assert_non_null(strstr(res.detail, "NaN"));
        assert_non_null(strstr(res.detail, "at iteration"));
        assert_true(res.iterations >= 1 && res.iterations <= 4);
        gs_pc_destroy(&pc);
    }
    sys_teardown(&s);
}

/* A preconditioner whose apply fails: the status (an error, not a reason) reaches the caller. */
static void test_pc_failure_propagates(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 20, 21);
    for (int t = 0; t < 4; t++) {
        gs_pc *pc = sys_test_pc(&s, 1.0, false, 0, 3);
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 500);
        sys_set_x(&s, NULL);
        GS_ASSERT_FAILS(sys_solve(&s, all_types[t], &prm, pc, NULL, &res), GS_ERR_NUMERIC,
                        "failure injected at application 3");
        assert_int_equal(test_pc_applications(pc), 3);
        gs_pc_destroy(&pc);
    }
    sys_teardown(&s);
}

static void test_cg_indefinite(void **state)
{
    /* diag(1, -1, 1, -1, ...), b = ones: p'Ap = sum d_i = 0 at the first step */
    {
        enum { n = 50 };
        double d[n], ones[n];
        for (int i = 0; i < n; i++) {
            d[i] = i % 2 ? -1.0 : 1.0;
            ones[i] = 1.0;
        }
        ksp_sys s;
        diag_sys(&s, n, d);
        sys_set_b(&s, ones);
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        GS_ASSERT_OK(sys_solve(&s, "cg", &prm, NULL, NULL, &res));
        print_result("cg diag(1,-1,...)", &res);
        assert_int_equal(res.reason, GS_DIVERGED_INDEFINITE);
        assert_non_null(strstr(res.detail, "p'Ap"));
        assert_non_null(strstr(res.detail, "at iteration 1"));
        sys_teardown(&s);
    }
    /* a real symmetric indefinite KKT matrix */
    {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_load("tumorAntiAngiogenesis_2.mtx", &A));
        ksp_sys s;
        sys_setup(&s, &A, 19);
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 5000);
        GS_ASSERT_OK(sys_solve(&s, "cg", &prm, NULL, NULL, &res));
        print_result("cg tumorAntiAngiogenesis_2", &res);
        assert_false(gs_reason_converged(res.reason));
        assert_true(res.reason == GS_DIVERGED_INDEFINITE || res.reason == GS_DIVERGED_BREAKDOWN);
        assert_non_null(strstr(res.detail, "at iteration"));
        sys_teardown(&s);
    }
    /* SPD A with a negative definite preconditioner: r'M^{-1}r < 0 */
    {
        ksp_sys s;
        laplace_sys(&s, 9, 10);
        gs_pc *pc = sys_test_pc(&s, -1.0, false, 0, 0);
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        GS_ASSERT_OK(sys_solve(&s, "cg", &prm, pc, NULL, &res));
        print_result("cg with -D^{-1}", &res);
        assert_int_equal(res.reason, GS_DIVERGED_BREAKDOWN);
        assert_non_null(strstr(res.detail, "preconditioner is not positive definite"));
        gs_pc_destroy(&pc);
        sys_teardown(&s);
    }
}

/* [[0,1],[1,0]], b = e_1: v = A r0 = e_2 is orthogonal to the shadow residual r0 = e_1. */
static void test_bicgstab_breakdown(void **state)
{
    gs_int ri[] = {0, 1}, ci[] = {1, 0};
    double v[] = {1.0, 1.0}, b[] = {1.0, 0.0};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(2, 2, 2, ri, ci, v, &A));
    ksp_sys s;
    sys_setup(&s, &A, 1);
    sys_set_b(&s, b);
    gs_solve_result res;
    gs_ksp_params prm = sys_params(1e-10, 100);
    GS_ASSERT_OK(sys_solve(&s, "bicgstab", &prm, NULL, NULL, &res));
    print_result("bicgstab [[0,1],[1,0]]", &res);
    assert_int_equal(res.reason, GS_DIVERGED_BREAKDOWN);
    assert_non_null(strstr(res.detail, "r0'v vanished"));
    assert_non_null(strstr(res.detail, "at iteration 1"));
    /* GMRES solves it (x = (0, 1)) */
    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "gmres", &prm, NULL, NULL, &res));
    print_result("gmres [[0,1],[1,0]]", &res);
    assert_true(gs_reason_converged(res.reason));
    GS_ASSERT_OK(gs_vec_download(s.x, s.xh));
    assert_true(fabs(s.xh[0]) < 1e-14 && fabs(s.xh[1] - 1.0) < 1e-14);
    sys_teardown(&s);
}

/* A singular system with b in the range of nothing useful: A = diag(0, 1, ..., 1), b = e_1. */
static void test_singular(void **state)
{
    enum { n = 7 };
    double d[n], b[n] = {1.0};
    for (int i = 0; i < n; i++) d[i] = i ? 1.0 : 0.0;
    ksp_sys s;
    diag_sys(&s, n, d);
    sys_set_b(&s, b);
    const gs_reason expect[] = {GS_DIVERGED_INDEFINITE, GS_DIVERGED_BREAKDOWN, GS_DIVERGED_BREAKDOWN,
                                GS_DIVERGED_BREAKDOWN};
    const char *word[] = {"p'Ap", "r0'v", "singular", "singular"};
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 100);
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        print_result("singular diag(0,1,...)", &res);
        assert_int_equal(res.reason, expect[t]);
        assert_non_null(strstr(res.detail, word[t]));
        assert_non_null(strstr(res.detail, "at iteration 1"));
    }
    sys_teardown(&s);
}

/* Blocks of rotations [[0,1],[-1,0]] with b = (1, 0, 1, 0, ...): A r is orthogonal to r, so no GMRES(1)
 * step ever reduces ||r||. */
static void rotation_sys(ksp_sys *s)
{
    enum { blocks = 3, n = 2 * blocks };
    gs_int ri[n], ci[n];
    double v[n], b[n];
    for (int k = 0; k < blocks; k++) {
        ri[2 * k] = 2 * k, ci[2 * k] = 2 * k + 1, v[2 * k] = 1.0, b[2 * k] = 1.0;
        ri[2 * k + 1] = 2 * k + 1, ci[2 * k + 1] = 2 * k, v[2 * k + 1] = -1.0, b[2 * k + 1] = 0.0;
    }
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, n, ri, ci, v, &A));
    sys_setup(s, &A, 1);
    sys_set_b(s, b);
}

/* GMRES(1) on the rotations stagnates. */
static void test_stagnation(void **state)
{
    ksp_sys s;
    rotation_sys(&s);
    for (int t = 2; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 1000);
        prm.restart = 1;
        prm.stagnation_window = 5;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("gmres(1) on a rotation", &res);
        assert_int_equal(res.reason, GS_DIVERGED_STAGNATION);
        assert_int_equal(res.iterations, 5);
        assert_non_null(strstr(res.detail, "at iteration 5"));
        for (int i = 0; i < hist.n; i++) assert_true(fabs(hist.r[i] - sqrt(3.0)) < 1e-12);

        /* without a window the limit stops it */
        prm.stagnation_window = 0;
        prm.max_iterations = 40;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        assert_int_equal(res.reason, GS_DIVERGED_MAX_IT);
        assert_int_equal(res.iterations, 40);
    }
    sys_teardown(&s);
}

/* The projected convergence (projected_limit): a solve that cannot reach the tolerance in time at the
 * rate of its last 100 iterations stops there as stagnated. GMRES(1) on the rotations makes no progress
 * at all (rate 1); CG and BiCGStab on a Laplacian with an unreachable tolerance and a limit of
 * projected_limit x max_iterations = 101 iterations stop at the first checkpoint, iteration 100. */
static void test_projected_limit(void **state)
{
    ksp_sys s;
    rotation_sys(&s);
    for (int t = 2; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 1000);
        prm.restart = 1;
        prm.projected_limit = 3.0;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        print_result("gmres(1) on a rotation, projected", &res);
        assert_int_equal(res.reason, GS_DIVERGED_STAGNATION);
        assert_int_equal(res.iterations, GS_KSP_PROJECTION_WINDOW);
        assert_non_null(strstr(res.detail, "solver.projected_limit"));
    }
    sys_teardown(&s);

    laplace_sys(&s, 30, 37);
    for (int t = 0; t < 2; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-15, 101);
        prm.projected_limit = 1.0;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("laplace, unreachable tolerance, projected", &res);
        assert_int_equal(res.reason, GS_DIVERGED_STAGNATION);
        /* fused CG reports the iterations it had already queued (at most 2 more) */
        assert_true(res.iterations >= GS_KSP_PROJECTION_WINDOW && res.iterations <= GS_KSP_PROJECTION_WINDOW + 2);
        assert_non_null(strstr(res.detail, "at iteration 100:"));
        prm.projected_limit = 0.0; /* off: the limit stops it */
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        assert_int_equal(res.reason, GS_DIVERGED_MAX_IT);
    }
    sys_teardown(&s);
}

/* Fused CG tests stagnation on the backend (core/kstate_logic.h) with gs_ksp_step's rule: it must stop at
 * the first iteration where ||r|| has stayed above its best for `window` iterations, as read off the
 * monitored history, and the queued iterations after that must not have moved x (the reported
 * iteration is the last one performed). CG's residual is not monotone, so window 1 on a Laplacian with
 * a loose tolerance finds such an iteration. */
static void test_cg_stagnation_on_backend(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 30, 37);
    gs_solve_result res;
    gs_ksp_params prm = sys_params(1e-12, 1000);
    prm.stagnation_window = 1;
    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "cg", &prm, NULL, &hist, &res));
    print_result("cg, stagnation window 1", &res);
    assert_int_equal(res.reason, GS_DIVERGED_STAGNATION);
    /* the expected iteration from the history: the first it with r[it] >= min(r[0..it-1]) */
    double best = hist.r[0];
    int expect = -1;
    for (int i = 1; i < hist.n && expect < 0; i++) {
        if (hist.r[i] < best) best = hist.r[i];
        else expect = hist.it[i];
    }
    assert_true(expect > 0);
    assert_int_equal(res.iterations, expect);
    assert_int_equal(hist.it[hist.n - 1], expect); /* the monitor saw nothing beyond the stop */
    sys_teardown(&s);
}

/* SIGINT during the solve (raised from the monitor at iteration 3) stops it at that iteration; fused CG
 * reports the iterations it had already queued (at most 2 more), the detail names iteration 3. */
/* Divergence: the first monitored ||r|| above divergence_tolerance * max(||b||, ||r0||) stops the solve
 * (CG on a system whose residual grows tenfold in iteration 1); with the test off, the same solve runs
 * on and converges; GMRES (monotone residual) never trips it. */
static void test_divergence(void **state)
{
    static ksp_hist hist;
    ksp_sys s;
    sys_setup_growth(&s, 2, "host");
    gs_solve_result res;
    gs_ksp_params prm = sys_params(1e-10, 100);
    prm.divergence_tolerance = 2.0;
    GS_ASSERT_OK(sys_solve(&s, "cg", &prm, NULL, &hist, &res));
    print_result("cg, divergence_tolerance 2", &res);
    assert_int_equal(res.reason, GS_DIVERGED_DTOL);
    assert_int_equal(res.iterations, 1);
    assert_int_equal(hist.n, 2);
    assert_true(hist.r[1] > 2.0 * hist.r[0]);
    assert_non_null(strstr(res.detail, "solver.divergence_tolerance"));
    assert_non_null(strstr(res.detail, "at iteration 1"));
    prm.divergence_tolerance = 0.0; /* off */
    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "cg", &prm, NULL, NULL, &res));
    assert_true(gs_reason_converged(res.reason));
    prm.divergence_tolerance = 1.0; /* the tightest: any growth above the start */
    for (int t = 2; t < 4; t++) {
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, NULL, &res));
        assert_true(gs_reason_converged(res.reason));
    }
    prm.divergence_tolerance = 0.5; /* below 1: refused */
    gs_ksp *k = NULL;
    GS_ASSERT_FAILS(gs_ksp_create("cg", s.be, &prm, &k), GS_ERR_ARG, "solver.divergence_tolerance");
    sys_teardown(&s);
}

static void test_interrupt(void **state)
{
    ksp_sys s;
    laplace_sys(&s, 30, 37);
    gs_interrupt_install();
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-10, 1000);
        gs_interrupt_reset();
        hist.raise_at = 3;
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        hist.raise_at = 0;
        print_result("SIGINT at iteration 3", &res);
        assert_true(gs_interrupt_requested());
        assert_int_equal(gs_interrupt_signal(), SIGINT);
        assert_int_equal(res.reason, GS_DIVERGED_INTERRUPTED);
        if (t == 0) assert_true(res.iterations >= 3 && res.iterations <= 5); /* cg */
        else assert_int_equal(res.iterations, 3);
        assert_non_null(strstr(res.detail, "at iteration 3"));
        gs_interrupt_reset();
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sys_teardown(&s);
}

/* Three distinct eigenvalues: the Krylov space is invariant after 3 steps (h(3,2) = 0, the happy
 * breakdown); GMRES and CG are exact there. */
static void test_happy_breakdown(void **state)
{
    enum { n = 50 };
    double d[n];
    for (int i = 0; i < n; i++) d[i] = 1.0 + (double)(i % 3);
    ksp_sys s;
    diag_sys(&s, n, d);
    for (int t = 0; t < 4; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-12, 100);
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("three eigenvalues", &res);
        assert_true(gs_reason_converged(res.reason));
        if (t != 1) assert_int_equal(res.iterations, 3);
        else assert_true(res.iterations <= 3);
        assert_true(sys_error(&s) < 1e-12);
    }
    /* GMRES(2): the happy breakdown cannot happen inside a cycle; restarts still converge */
    gs_solve_result res;
    gs_ksp_params prm = sys_params(1e-12, 100);
    prm.restart = 2;
    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "gmres", &prm, NULL, NULL, &res));
    print_result("three eigenvalues gmres(2)", &res);
    assert_true(gs_reason_converged(res.reason));
    assert_true(sys_error(&s) < 1e-11);
    sys_teardown(&s);
}

/* Below the attainable accuracy (bcsstk01: cond ~ 1e6, ||A|| ||x|| ~ 1e9) the recursive residuals of
 * CG and BiCGStab keep falling while the true residual stalls: their claims are withdrawn (the
 * recurrence restarts from b - Ax) and the solve ends at the limit, not "converged". */
static void test_true_residual_decides(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_load("bcsstk01.mtx", &A));
    ksp_sys s;
    sys_setup(&s, &A, 5);
    for (int t = 0; t < 2; t++) {
        gs_solve_result res;
        gs_ksp_params prm = sys_params(1e-17, 1000);
        sys_set_x(&s, NULL);
        GS_ASSERT_OK(sys_solve(&s, all_types[t], &prm, NULL, &hist, &res));
        print_result("bcsstk01 rtol 1e-17", &res);
        const double bound = prm.rtol * res.bnorm;
        int claims = 0;
        for (int i = 0; i < hist.n; i++) claims += hist.r[i] <= bound;
        printf("    %d monitored norms met the tolerance; true residual %.3e > %.3e\n", claims,
               sys_true_resnorm(&s), bound);
        assert_int_equal(res.reason, GS_DIVERGED_MAX_IT);
        assert_int_equal(res.iterations, 1000);
        assert_true(claims > 0);
        assert_true(sys_true_resnorm(&s) > bound);
    }
    sys_teardown(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_rhs),
        cmocka_unit_test(test_converged_at_start),
        cmocka_unit_test(test_max_iterations),
        cmocka_unit_test(test_nan_in_matrix),
        cmocka_unit_test(test_nan_during_iteration),
        cmocka_unit_test(test_pc_failure_propagates),
        cmocka_unit_test(test_cg_indefinite),
        cmocka_unit_test(test_bicgstab_breakdown),
        cmocka_unit_test(test_singular),
        cmocka_unit_test(test_stagnation),
        cmocka_unit_test(test_projected_limit),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_divergence),
        cmocka_unit_test(test_cg_stagnation_on_backend),
        cmocka_unit_test(test_happy_breakdown),
        cmocka_unit_test(test_true_residual_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
