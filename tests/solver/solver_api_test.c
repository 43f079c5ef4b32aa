/* The Krylov front: registry and creation by name, parameters from the configuration, reason names,
 * argument checks of gs_ksp_solve, the variable-preconditioner rule, gs_true_residual, and every host
 * allocation failing in turn. */
#include "ksp_fixture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cfg/config.h"
#include "core/mem.h"

static void test_registry(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    const char *expect[] = {"cg", "bicgstab", "gmres", "fgmres"};
    int count = 0;
    for (const gs_ksp_entry *e = gs_ksp_registry; e->name; e++, count++) {
        assert_true(count < 4);
        assert_string_equal(e->name, expect[count]);
        assert_non_null(e->help);
        gs_ksp *ksp = NULL;
        GS_ASSERT_OK(gs_ksp_create(e->name, be, NULL, &ksp));
        assert_string_equal(ksp->type, e->name);
        assert_ptr_equal(ksp->be, be);
        assert_true(ksp->accepts_variable_pc == (strcmp(e->name, "fgmres") == 0));
        /* NULL params: the schema defaults */
        assert_int_equal(ksp->prm.restart, 30);
        assert_int_equal(ksp->prm.max_iterations, 1000);
        assert_true(ksp->prm.rtol == 1e-8);
        gs_ksp_destroy(&ksp);
        assert_null(ksp);
    }
    assert_int_equal(count, 4);

    gs_ksp *ksp = NULL;
    GS_ASSERT_FAILS(gs_ksp_create("minres", be, NULL, &ksp), GS_ERR_ARG, "cg, bicgstab, gmres, fgmres");
    assert_null(ksp);
    GS_ASSERT_FAILS(gs_ksp_create("minres", be, NULL, &ksp), GS_ERR_ARG, "\"minres\"");

    gs_ksp_params prm = sys_params(1e-8, 100);
    prm.restart = 0;
    GS_ASSERT_FAILS(gs_ksp_create("gmres", be, &prm, &ksp), GS_ERR_ARG, "solver.restart");
    prm = sys_params(-1.0, 100);
    GS_ASSERT_FAILS(gs_ksp_create("cg", be, &prm, &ksp), GS_ERR_ARG, "solver.rtol");
    prm = sys_params(NAN, 100);
    GS_ASSERT_FAILS(gs_ksp_create("cg", be, &prm, &ksp), GS_ERR_ARG, "solver.rtol");
    prm = sys_params(1e-8, -3);
    GS_ASSERT_FAILS(gs_ksp_create("bicgstab", be, &prm, &ksp), GS_ERR_ARG, "solver.max_iterations");
    assert_null(ksp);
    gs_ksp_destroy(&ksp); /* NULL is fine */
    gs_backend_destroy(&be);
}

static void test_params_from_config(void **state)
{
    gs_config *cfg = NULL;
    gs_ksp_params prm;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_ksp_params_from_config(cfg, &prm));
    assert_int_equal(prm.max_iterations, 1000);
    assert_true(prm.rtol == 1e-8);
    assert_true(prm.atol == 0.0);
    assert_int_equal(prm.baseline, GS_BASELINE_RHS);
    assert_int_equal(prm.restart, 30);
    assert_int_equal(prm.ortho, GS_ORTHO_DCGS2);
    assert_int_equal(prm.stagnation_window, 0);
    assert_false(prm.allow_variable_pc);

    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=17"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.rtol=1e-6"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.atol=1e-12"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.max_iterations=77"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.baseline=r0"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.orthogonalization=mgs"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.stagnation_window=9"));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.allow_variable_preconditioner=true"));
    GS_ASSERT_OK(gs_ksp_params_from_config(cfg, &prm));
    assert_int_equal(prm.restart, 17);
    assert_true(prm.rtol == 1e-6);
    assert_true(prm.atol == 1e-12);
    assert_int_equal(prm.max_iterations, 77);
    assert_int_equal(prm.baseline, GS_BASELINE_R0);
    assert_int_equal(prm.ortho, GS_ORTHO_MGS);
    assert_int_equal(prm.stagnation_window, 9);
    GS_ASSERT_OK(gs_config_set(cfg, "solver.orthogonalization=cgs2"));
    GS_ASSERT_OK(gs_ksp_params_from_config(cfg, &prm));
    assert_int_equal(prm.ortho, GS_ORTHO_CGS2);
    assert_true(prm.allow_variable_pc);

    /* the configured type creates the configured solver */
    gs_backend *be = NULL;
    gs_ksp *ksp = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.type=bicgstab"));
    GS_ASSERT_OK(gs_ksp_create(gs_config_string(cfg, "solver.type"), be, &prm, &ksp));
    assert_string_equal(ksp->type, "bicgstab");
    assert_int_equal(ksp->prm.restart, 17);
    gs_ksp_destroy(&ksp);
    gs_backend_destroy(&be);
    gs_config_destroy(&cfg);
}

static void test_reason_names(void **state)
{
    const struct {
        gs_reason r;
        const char *name;
        bool converged;
    } cases[] = {
        {GS_REASON_NONE, "none", false},
        {GS_CONVERGED_RTOL, "converged_rtol", true},
        {GS_CONVERGED_ATOL, "converged_atol", true},
        {GS_CONVERGED_ZERO_RHS, "converged_zero_rhs", true},
        {GS_DIVERGED_MAX_IT, "diverged_max_it", false},
        {GS_DIVERGED_BREAKDOWN, "diverged_breakdown", false},
        {GS_DIVERGED_NAN, "diverged_nan", false},
        {GS_DIVERGED_STAGNATION, "diverged_stagnation", false},
        {GS_DIVERGED_PC_FAILED, "diverged_pc_failed", false},
        {GS_DIVERGED_INDEFINITE, "diverged_indefinite", false},
        {GS_DIVERGED_INTERRUPTED, "diverged_interrupted", false},
        {GS_DIVERGED_DTOL, "diverged_dtol", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(gs_reason_name(cases[i].r), cases[i].name);
        assert_true(gs_reason_converged(cases[i].r) == cases[i].converged);
    }
}

static void test_solve_argument_checks(void **state)
{
    ksp_sys s;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(5, 7, &A));
    sys_setup(&s, &A, 1);
    gs_ksp *ksp = NULL;
    gs_solve_result res;
    GS_ASSERT_OK(gs_ksp_create("gmres", s.be, NULL, &ksp));

    gs_vector *short_b = NULL;
    GS_ASSERT_OK(gs_vec_create(s.be, s.n - 1, &short_b));
    GS_ASSERT_OK(gs_vec_set(short_b, 1.0));
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, NULL, short_b, s.x, &res), GS_ERR_ARG, "right-hand side has 34");
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, NULL, s.b, short_b, &res), GS_ERR_ARG, "solution vector has 34");
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, NULL, s.b, s.b, &res), GS_ERR_ARG, "same vector");
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, NULL, NULL, s.b, s.x, &res), GS_ERR_ARG, "must all be given");

    /* a rectangular operator */
    gs_csr R = {0};
    gs_int ri[] = {0, 1, 2}, ci[] = {0, 1, 3};
    double rv[] = {1, 2, 3};
    gs_matrix *RM = NULL;
    GS_ASSERT_OK(gs_csr_from_coo(3, 4, 3, ri, ci, rv, &R));
    GS_ASSERT_OK(gs_mat_create(s.be, &R, &RM));
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, RM, NULL, s.b, s.x, &res), GS_ERR_ARG, "3 x 4");
    gs_mat_destroy(&RM);
    gs_csr_free(&R);

    /* another backend */
    gs_backend *be2 = NULL;
    gs_vector *b2 = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be2));
    GS_ASSERT_OK(gs_vec_create(be2, s.n, &b2));
    GS_ASSERT_OK(gs_vec_set(b2, 1.0));
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, NULL, b2, s.x, &res), GS_ERR_ARG, "backend");
    gs_vec_destroy(&b2);
    gs_backend_destroy(&be2);

    /* a preconditioner of the wrong size or not set up */
    gs_pc *pc = sys_test_pc(&s, 1.0, false, 0, 0);
    pc->n = s.n + 1;
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, pc, s.b, s.x, &res), GS_ERR_ARG, "n = 36");
    pc->n = s.n;
    pc->state = GS_PC_SYMBOLIC;
    GS_ASSERT_FAILS(gs_ksp_solve(ksp, s.M, pc, s.b, s.x, &res), GS_ERR_ARG, "not set up");
    pc->state = GS_PC_READY;
    GS_ASSERT_OK(gs_ksp_solve(ksp, s.M, pc, s.b, s.x, &res));
    assert_true(gs_reason_converged(res.reason));

    gs_pc_destroy(&pc);
    gs_vec_destroy(&short_b);
    gs_ksp_destroy(&ksp);
    sys_teardown(&s);
}

/* A preconditioner that changes between applications is refused unless the method is flexible or the
 * user allows it. */
static void test_variable_pc(void **state)
{
    ksp_sys s;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(17, 19, 1.0, &A));
    sys_setup(&s, &A, 4);
    gs_pc *vpc = sys_test_pc(&s, 1.0, true, 0, 0);
    gs_solve_result res;
    gs_ksp_params prm = sys_params(1e-10, 2000);
    const char *refused[] = {"cg", "bicgstab", "gmres"};
    for (int t = 0; t < 3; t++) {
        GS_ASSERT_FAILS(sys_solve(&s, refused[t], &prm, vpc, NULL, &res), GS_ERR_CONFIG,
                        "use solver.type = \"fgmres\" or set solver.allow_variable_preconditioner = true");
        assert_int_equal(test_pc_applications(vpc), 0); /* refused before any work */
    }

    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "fgmres", &prm, vpc, NULL, &res));
    print_result("fgmres variable pc", &res);
    assert_int_equal(res.reason, GS_CONVERGED_RTOL);
    assert_true(sys_true_resnorm(&s) <= 1e-10 * res.bnorm);
    assert_true(sys_error(&s) < 1e-6);
    assert_true(test_pc_applications(vpc) > 0);

    /* Allowed by the user, GMRES runs, but its update x = x0 + M_last^{-1} V y no longer matches the
     * residual estimate |g_{j+1}|: estimates that met the tolerance are withdrawn by the true residual,
     * and a convergence is only ever reported when the true residual meets the tolerance. */
    static ksp_hist hist;
    prm.allow_variable_pc = true;
    prm.rtol = 1e-6;
    prm.max_iterations = 300;
    sys_set_x(&s, NULL);
    GS_ASSERT_OK(sys_solve(&s, "gmres", &prm, vpc, &hist, &res));
    print_result("gmres variable pc allowed", &res);
    assert_true(res.reason != GS_REASON_NONE);
    assert_true(res.iterations > 0);
    int claims = 0;
    for (int i = 0; i + 1 < hist.n; i++) claims += hist.r[i] <= prm.rtol * res.bnorm;
    printf("    %d estimates met the tolerance before the end; true residual %.3e\n", claims,
           sys_true_resnorm(&s));
    assert_true(claims > 0);
    assert_true(!gs_reason_converged(res.reason) || sys_true_resnorm(&s) <= prm.rtol * res.bnorm);
    gs_pc_destroy(&vpc);
    sys_teardown(&s);
}

static void test_true_residual(void **state)
{
    ksp_sys s;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(9, 13, 3.0, &A));
    sys_setup(&s, &A, 21);
    double *x = NULL, *r = NULL;
    GS_ASSERT_OK(GS_MALLOC(x, s.n));
    GS_ASSERT_OK(GS_MALLOC(r, s.n));
    uint64_t seed = 99;
    for (gs_int i = 0; i < s.n; i++) x[i] = gs_test_rand(&seed);
    sys_set_x(&s, x);
    memcpy(r, s.bh, (size_t)s.n * sizeof *r);
    gs_csr_spmv(-1.0, &s.A, x, 1.0, r);
    double ref = 0.0;
    for (gs_int i = 0; i < s.n; i++) ref += r[i] * r[i];
    ref = sqrt(ref);
    double got = sys_true_resnorm(&s);
    assert_true(ref > 0.0);
    assert_true(fabs(got - ref) <= 1e-12 * ref);
    sys_set_x(&s, s.xstar);
    assert_true(sys_true_resnorm(&s) <= 1e-14 * sqrt((double)s.n) * 10.0);
    gs_free(&x);
    gs_free(&r);
    sys_teardown(&s);
}

/* The k-th host allocation fails, for every k up to a successful solve: the error propagates as
 * GS_ERR_MEM and nothing leaks (checked under the sanitizer build). */
static void test_allocation_failures(void **state)
{
    ksp_sys s;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(8, 9, 1.0, &A));
    sys_setup(&s, &A, 2);
    gs_pc *pc = sys_test_pc(&s, 1.0, false, 0, 0);
    const char *types[] = {"cg", "bicgstab", "gmres", "fgmres"};
    for (int t = 0; t < 4; t++) {
        gs_ksp_params prm = sys_params(1e-8, 500);
        prm.restart = 10;
        int k;
        for (k = 1; k < 200; k++) {
            gs_solve_result res;
            sys_set_x(&s, NULL);
            gs_error_clear();
            gs_alloc_fail_at(k);
            gs_status st = sys_solve(&s, types[t], &prm, t == 0 ? NULL : pc, NULL, &res);
            gs_alloc_fail_at(0);
            if (st == GS_OK) {
                assert_true(res.reason != GS_REASON_NONE);
                assert_true(res.iterations > 0);
                break;
            }
            assert_int_equal(st, GS_ERR_MEM);
            gs_error_clear();
        }
        printf("  %s: %d allocations failed in turn, then success\n", types[t], k - 1);
        assert_true(k > 2 && k < 200);
    }
    gs_pc_destroy(&pc);
    sys_teardown(&s);
}

/* A solver keeps its work vectors (and CG its scalars' state) from one solve to the next: the second solve
 * of the same system allocates nothing (the same vectors after it, the same iterations); a system of
 * another size gets vectors of its size. */
static void test_work_vectors_kept(void **state)
{
    (void)state;
    ksp_sys s;
    gs_csr A = {0}, A2 = {0};
    GS_ASSERT_OK(gs_test_laplace2d(11, 13, &A)); /* SPD: every method converges */
    sys_setup(&s, &A, 4);
    gs_pc *pc = sys_jacobi(&s);
    /* a smaller system on the same backend: b2 = A2 * ones */
    GS_ASSERT_OK(gs_test_laplace2d(7, 6, &A2));
    const gs_int n2 = A2.nrows;
    double *ones = NULL, *b2h = NULL, *x2h = NULL;
    GS_ASSERT_OK(GS_MALLOC(ones, n2));
    GS_ASSERT_OK(GS_MALLOC(b2h, n2));
    GS_ASSERT_OK(GS_MALLOC(x2h, n2));
    for (gs_int i = 0; i < n2; i++) ones[i] = 1.0;
    gs_csr_spmv(1.0, &A2, ones, 0.0, b2h);
    gs_matrix *M2 = NULL;
    gs_vector *b2 = NULL, *x2 = NULL;
    GS_ASSERT_OK(gs_mat_create(s.be, &A2, &M2));
    GS_ASSERT_OK(gs_vec_create(s.be, n2, &b2));
    GS_ASSERT_OK(gs_vec_create(s.be, n2, &x2));
    GS_ASSERT_OK(gs_vec_upload(b2, b2h));
    const char *types[] = {"cg", "bicgstab", "gmres", "fgmres"};
    for (int t = 0; t < 4; t++) {
        gs_ksp_params prm = sys_params(1e-10, 500);
        prm.restart = 10;
        gs_ksp *ksp = NULL;
        GS_ASSERT_OK(gs_ksp_create(types[t], s.be, &prm, &ksp));
        long allocs[2];
        int its[2];
        gs_vector *w0 = NULL;
        gs_mvec *m0 = NULL;
        gs_kstate *ks0 = NULL;
        for (int k = 0; k < 2; k++) {
            gs_solve_result res;
            sys_set_x(&s, NULL);
            gs_alloc_fail_at(0); /* counts the allocations from here */
            GS_ASSERT_OK(gs_ksp_solve(ksp, s.M, t == 0 ? NULL : pc, s.b, s.x, &res));
            allocs[k] = gs_alloc_count();
            its[k] = res.iterations;
            assert_true(gs_reason_converged(res.reason));
            if (k == 0) w0 = ksp->work[0], m0 = ksp->mwork[0], ks0 = ksp->kwork;
        }
        assert_non_null(t >= 2 ? (void *)m0 : (void *)w0);
        assert_ptr_equal(ksp->work[0], w0);
        assert_ptr_equal(ksp->mwork[0], m0);
        assert_int_equal(its[0], its[1]);
        if (t == 0) assert_ptr_equal(ksp->kwork, ks0); /* CG's scalars kept too */
        assert_int_equal(allocs[1], 0);                 /* a repeated solve allocates nothing */
        printf("  %s: %ld allocations in the first solve, %ld in the second\n", types[t], allocs[0], allocs[1]);
        /* another size: vectors of that size, and the right solution */
        gs_solve_result res;
        GS_ASSERT_OK(gs_vec_set(x2, 0.0));
        GS_ASSERT_OK(gs_ksp_solve(ksp, M2, NULL, b2, x2, &res));
        assert_true(gs_reason_converged(res.reason));
        GS_ASSERT_OK(gs_vec_download(x2, x2h));
        assert_true(gs_test_rel_diff(n2, x2h, ones) < 1e-6);
        if (t >= 2) assert_int_equal(ksp->mwork[0]->n, n2);
        else assert_int_equal(ksp->work[0]->n, n2);
        gs_ksp_destroy(&ksp);
    }
    gs_vec_destroy(&b2);
    gs_vec_destroy(&x2);
    gs_mat_destroy(&M2);
    gs_csr_free(&A2);
    gs_free(&ones);
    gs_free(&b2h);
    gs_free(&x2h);
    gs_pc_destroy(&pc);
    sys_teardown(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),           cmocka_unit_test(test_params_from_config),
        cmocka_unit_test(test_reason_names),       cmocka_unit_test(test_solve_argument_checks),
        cmocka_unit_test(test_variable_pc),        cmocka_unit_test(test_true_residual),
        cmocka_unit_test(test_allocation_failures), cmocka_unit_test(test_work_vectors_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
