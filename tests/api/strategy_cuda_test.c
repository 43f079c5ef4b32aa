/* The strategy on the cuda backend (label gpu): the same attempts and solutions as on the host for
 * matrices that need the matching, the scaling and ILUTP (every transform and preconditioner of the
 * ladder applied on the GPU), and the GPU trial of CG without a preconditioner on an SPD system large
 * enough for it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "api/strategy.h"
#include "cfg/config.h"
#include "core/generate.h"
#include "core/mem.h"

static const char *const AUTO[] = {"solver.type=auto", "preconditioner.type=auto", "system.matching=auto",
                                   "system.scaling=auto", "system.reorder=auto", NULL};

static void solve_on(gs_backend *be, const gs_csr *A, const char *const *settings, gs_strategy_result *r,
                     double *x)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    for (const char *const *s = AUTO; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    for (const char *const *s = settings; s && *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    const gs_int n = A->nrows;
    double *ones = NULL, *b = NULL, *x0 = NULL;
    GS_ASSERT_OK(GS_MALLOC(ones, n));
    GS_ASSERT_OK(GS_MALLOC(b, n));
    GS_ASSERT_OK(GS_CALLOC(x0, n));
    for (gs_int i = 0; i < n; i++) ones[i] = 1.0;
    gs_csr_spmv(1.0, A, ones, 0.0, b);
    gs_test_poison(n, x);
    GS_ASSERT_OK(gs_strategy_solve(be, A, b, x0, cfg, true, NULL, x, r));
    gs_free(&ones);
    gs_free(&b);
    gs_free(&x0);
    gs_config_destroy(&cfg);
}

/* Host and GPU walk the same ladder and end with the same solution (to the solve's tolerance). */
static void compare(const char *name, const char *const *settings)
{
    gs_csr A = {0};
    gs_backend *host = NULL, *cuda = NULL;
    GS_ASSERT_OK(gs_test_load(name, &A));
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_cuda_create(0, &cuda));
    double *xh = NULL, *xd = NULL;
    GS_ASSERT_OK(GS_MALLOC(xh, A.nrows));
    GS_ASSERT_OK(GS_MALLOC(xd, A.nrows));
    gs_strategy_result rh, rd;
    solve_on(host, &A, settings, &rh, xh);
    solve_on(cuda, &A, settings, &rd, xd);
    fprintf(stderr, "%s: host %d attempts (%s, %d it), cuda %d attempts (%s, %d it)\n", name, rh.nattempts,
            rh.rec[rh.chosen].rung, rh.rec[rh.chosen].iterations, rd.nattempts, rd.rec[rd.chosen].rung,
            rd.rec[rd.chosen].iterations);
    assert_int_equal(rh.nattempts, rd.nattempts);
    for (int k = 0; k < rh.nattempts; k++) assert_string_equal(rh.rec[k].rung, rd.rec[k].rung);
    assert_true(rh.rec[rh.chosen].converged && rd.rec[rd.chosen].converged);
    assert_true(abs(rh.rec[rh.chosen].iterations - rd.rec[rd.chosen].iterations) <= 2);
    /* both meet the tolerance in the original system (the error against x* = 1 depends on the
     * conditioning: bayer10's is 1e-2 at this residual) */
    assert_true(rh.final.residual_true <= 1e-8 * 10 && rd.final.residual_true <= 1e-8 * 10);
    gs_strategy_result_free(&rh);
    gs_strategy_result_free(&rd);
    gs_free(&xh);
    gs_free(&xd);
    gs_backend_destroy(&host);
    gs_backend_destroy(&cuda);
    gs_csr_free(&A);
}

static void test_matched(void **state)
{
    (void)state;
    compare("west0067.mtx", NULL);
    if (gs_test_quick() < 2) compare("bayer10.mtx", NULL); /* racecheck: one matrix, the same ladder */
}

/* ILUTP with a column permutation applied on the GPU, after matching, scaling and RCM. */
static void test_ilutp(void **state)
{
    (void)state;
    const char *const s[] = {"solver.type=gmres", "preconditioner.type=ilutp", "preconditioner.pivot_tolerance=0.5",
                             "system.matching=mwm", "system.reorder=rcm", NULL};
    compare("impcol_a.mtx", s);
    if (gs_test_quick() < 2) compare("west0497.mtx", s);
}

/* Poisson 3D 40^3 (64000 rows): the trial runs and its verdict is one of the two continuations. */
static void test_trial(void **state)
{
    (void)state;
    if (gs_test_quick() >= 2) skip(); /* racecheck: 64000 rows of CG is minutes there; memcheck runs it */
    gs_csr A = {0};
    gs_backend *cuda = NULL;
    GS_ASSERT_OK(gs_gen_poisson3d(40, 40, 40, &A));
    GS_ASSERT_OK(gs_backend_cuda_create(0, &cuda));
    double *x = NULL;
    GS_ASSERT_OK(GS_MALLOC(x, A.nrows));
    gs_strategy_result r;
    solve_on(cuda, &A, NULL, &r, x);
    assert_true(r.choice.trial);
    assert_string_equal(r.rec[0].rung, "cg-none-trial");
    assert_int_equal(r.rec[0].iterations, GS_TRIAL_ITERATIONS);
    assert_non_null(strstr(r.rec[0].detail, "projected"));
    assert_true(r.nattempts >= 2);
    assert_true(strcmp(r.rec[1].rung, "cg-none") == 0 || strcmp(r.rec[1].rung, "ic0") == 0);
    assert_true(r.rec[r.chosen].converged);
    double err = 0.0;
    for (gs_int i = 0; i < A.nrows; i++) err = fmax(err, fabs(x[i] - 1.0));
    assert_true(err < 1e-5);
    fprintf(stderr, "poisson3d 40^3: trial then %s, %d iterations\n", r.rec[1].rung, r.rec[1].iterations);
    gs_strategy_result_free(&r);
    gs_free(&x);
    gs_backend_destroy(&cuda);
    gs_csr_free(&A);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matched),
        cmocka_unit_test(test_ilutp),
        cmocka_unit_test(test_trial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
