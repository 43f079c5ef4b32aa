/* parilu_cuda_matches_reference: the GPU ParILU/ParIC sweep against the host reference.
 *   - synchronous sweeps (deterministic on both): GPU == host within 1e-12 after 1, 3 and 5 sweeps,
 *     the output buffer poisoned with NaN before every GPU sweep (a task that is not written shows);
 *   - the pivot flags (first bad pivot under zero_pivot = error, shifted rows under shift) agree;
 *   - asynchronous GPU sweeps (a thread per task, in place) converge to ILU(0) / IC(0): loose bound
 *     5e-2 after 5 sweeps, tight 1e-10 after 50;
 *   - the whole preconditioner (and RAS with local = parilu) on the cuda backend applies the same
 *     operator as on the host backend; diagnostics agree.
 * Matrices larger than a warp and not a multiple of 32, with an empty row, a dense row and rows
 * without a stored diagonal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cfg/config.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/factor.h"
#include "precond/parilu.h"
#include "precond/precond.h"

#include "parilu_cases.h"

typedef struct side {
    gs_backend *be;
    gs_parilu_kernel K;
    double *xa, *xb; /* backend value buffers */
} side;

static void side_create(side *s, gs_backend *be, const gs_parilu_plan *P, bool shift, const double *task_a,
                        const double *pivot_shift, const double *x0)
{
    memset(s, 0, sizeof *s);
    s->be = be;
    GS_ASSERT_OK(gs_parilu_kernel_create(be, P, shift, &s->K));
    GS_ASSERT_OK(gs_parilu_kernel_set(be, &s->K, task_a, pivot_shift));
    size_t bytes = (size_t)P->ntasks * sizeof(double);
    GS_ASSERT_OK(gs_backend_alloc(be, (void **)&s->xa, bytes));
    GS_ASSERT_OK(gs_backend_alloc(be, (void **)&s->xb, bytes));
    GS_ASSERT_OK(gs_backend_upload(be, s->xa, x0, bytes));
}

static void side_free(side *s)
{
    gs_parilu_kernel_free(s->be, &s->K);
    gs_backend_free(s->be, s->xa);
    gs_backend_free(s->be, s->xb);
}

static void download_flags(side *s, gs_parilu_flags *f, unsigned char *shifted)
{
    GS_ASSERT_OK(gs_backend_download(s->be, f, s->K.flags, sizeof *f));
    GS_ASSERT_OK(gs_backend_download(s->be, shifted, s->K.shifted, (size_t)s->K.n));
}

/* Synchronous sweeps on host and device from the same initial guess; compare after 1, 3, 5. */
static void check_sync(const char *what, const gs_csr *A, bool sym, gs_zero_pivot zp)
{
    gs_backend *host = NULL, *dev = NULL;
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    gs_parilu_plan P = {0};
    GS_ASSERT_OK(gs_parilu_plan_build(A, sym, 0, GS_PARILU_FORWARD, 0, &P));
    gs_parilu_opts o = {0};
    o.symmetric = sym;
    o.zero_pivot = zp;
    o.shift = 1e-3;
    gs_int n = P.n, nt = P.ntasks;
    double *sd = NULL, *ta = NULL, *x0 = NULL, *ps = NULL, *xh = NULL, *xd = NULL, *nan = NULL;
    GS_ASSERT_OK(GS_MALLOC(sd, n));
    GS_ASSERT_OK(GS_MALLOC(ps, n));
    GS_ASSERT_OK(GS_MALLOC(ta, nt));
    GS_ASSERT_OK(GS_MALLOC(x0, nt));
    GS_ASSERT_OK(GS_MALLOC(xh, nt));
    GS_ASSERT_OK(GS_MALLOC(xd, nt));
    GS_ASSERT_OK(GS_MALLOC(nan, nt));
    gs_test_poison(nt, nan);
    GS_ASSERT_OK(gs_parilu_initial_guess(&P, A, &o, NULL, sd, ta, x0, ps, NULL));
    side h, d;
    side_create(&h, host, &P, zp == GS_ZERO_PIVOT_SHIFT, ta, ps, x0);
    side_create(&d, dev, &P, zp == GS_ZERO_PIVOT_SHIFT, ta, ps, x0);
    size_t bytes = (size_t)nt * sizeof(double);
    for (int s = 1; s <= 5; s++) {
        GS_ASSERT_OK(gs_backend_upload(dev, d.xb, nan, bytes)); /* poison the output */
        GS_ASSERT_OK(gs_parilu_sweep_ref(host, &h.K, h.xa, h.xb, s));
        GS_ASSERT_OK(gs_parilu_sweep_cuda(dev, &d.K, d.xa, d.xb, s));
        double *t = h.xa;
        h.xa = h.xb;
        h.xb = t;
        t = d.xa;
        d.xa = d.xb;
        d.xb = t;
        if (s == 1 || s == 3 || s == 5) {
            GS_ASSERT_OK(gs_backend_download(host, xh, h.xa, bytes));
            GS_ASSERT_OK(gs_backend_download(dev, xd, d.xa, bytes));
            double diff = gs_test_rel_diff(nt, xd, xh);
            fprintf(stderr, "%s (%s, n = %d, |S| = %d): synchronous sweep %d: GPU vs host %.3g\n", what,
                    sym ? "ParIC" : "ParILU", (int)n, (int)nt, s, diff);
            assert_true(diff <= 1e-12);
        }
    }
    gs_parilu_flags fh, fd;
    unsigned char *sh = NULL, *sdv = NULL;
    GS_ASSERT_OK(GS_MALLOC(sh, n));
    GS_ASSERT_OK(GS_MALLOC(sdv, n));
    download_flags(&h, &fh, sh);
    download_flags(&d, &fd, sdv);
    fprintf(stderr, "  flags: host first_bad %llx shifts %llu, GPU first_bad %llx shifts %llu\n", fh.first_bad,
            fh.shifts, fd.first_bad, fd.shifts);
    assert_true(fh.first_bad == fd.first_bad);
    assert_true(fh.shifts == fd.shifts);
    assert_memory_equal(sh, sdv, (size_t)n);
    gs_free(&sh);
    gs_free(&sdv);
    side_free(&h);
    side_free(&d);
    gs_free(&sd);
    gs_free(&ps);
    gs_free(&ta);
    gs_free(&x0);
    gs_free(&xh);
    gs_free(&xd);
    gs_free(&nan);
    gs_parilu_plan_free(&P);
    gs_backend_destroy(&dev);
    gs_backend_destroy(&host);
}

static void test_sync_sweeps_match(void **state)
{
    (void)state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &A)); /* n = 2491 */
    check_sync("convdiff2d", &A, false, GS_ZERO_PIVOT_ERROR);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_random_sparse(1017, 7, 1.1, 3, &A));
    check_sync("random", &A, false, GS_ZERO_PIVOT_ERROR);
    gs_csr_free(&A);
    parilu_awkward_matrix(&A);
    check_sync("awkward (empty row, dense row, missing diagonals)", &A, false, GS_ZERO_PIVOT_SHIFT);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_laplace27(9, 11, 7, &A)); /* n = 693 */
    check_sync("laplace27", &A, true, GS_ZERO_PIVOT_ERROR);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_laplace2d(45, 39, &A));
    check_sync("laplace2d", &A, true, GS_ZERO_PIVOT_ERROR);
    gs_csr_free(&A);
}

/* A singular 2x2 tail [[1,1],[1,1]] after a 2D Laplacian: both backends flag the same pivot (error
 * policy) or shift the same rows (shift policy). */
static void test_pivot_flags_match(void **state)
{
    (void)state;
    gs_csr A = {0};
    parilu_singular_tail(11, 7, &A); /* 77 rows + 2 */
    check_sync("singular tail", &A, false, GS_ZERO_PIVOT_ERROR);
    check_sync("singular tail", &A, false, GS_ZERO_PIVOT_SHIFT);
    check_sync("singular tail", &A, true, GS_ZERO_PIVOT_ERROR);
    check_sync("singular tail", &A, true, GS_ZERO_PIVOT_SHIFT);
    gs_csr_free(&A);
}

/* The preconditioner on the cuda backend with the given settings. */
static gs_pc *make_pc(gs_backend *be, gs_config *cfg, const char *type, const gs_csr *A)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create(type, be, cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    return pc;
}

/* Factors of the parilu plug-in (through its data: the engine). */
static void pc_factors(const gs_pc *pc, const gs_csr **L, const gs_csr **U)
{
    gs_parilu_factors((const gs_parilu *)pc->data, L, U);
}

/* Asynchronous GPU sweeps converge to the exact factorization: loose after 5, tight after 50. */
static void check_async(const char *what, const gs_csr *A, bool sym)
{
    gs_backend *dev = NULL;
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, sym ? "preconditioner.symmetric=true" : "preconditioner.symmetric=false"));
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.sweep_type=asynchronous"));
    gs_csr Lr = {0}, Ur = {0};
    if (sym) {
        GS_ASSERT_OK(gs_ic0(A, NULL, &Lr, &Ur, NULL));
    } else {
        GS_ASSERT_OK(gs_iluk_symbolic(A, 0, &Lr, &Ur));
        GS_ASSERT_OK(gs_ilu_numeric(A, NULL, &Lr, &Ur, NULL));
    }
    double d[2];
    const int sweeps[2] = {5, 50};
    for (int k = 0; k < 2; k++) {
        char s[64];
        snprintf(s, sizeof s, "preconditioner.sweeps=%d", sweeps[k]);
        GS_ASSERT_OK(gs_config_set(cfg, s));
        gs_pc *pc = make_pc(dev, cfg, "parilu", A);
        const gs_csr *L, *U;
        pc_factors(pc, &L, &U);
        assert_int_equal(L->nnz, Lr.nnz);
        assert_int_equal(U->nnz, Ur.nnz);
        double dl = gs_test_rel_diff(L->nnz, L->val, Lr.val), du = gs_test_rel_diff(U->nnz, U->val, Ur.val);
        d[k] = dl > du ? dl : du;
        gs_pc_destroy(&pc);
    }
    fprintf(stderr, "%s (%s): asynchronous GPU sweeps vs exact: 5: %.3g  50: %.3g\n", what, sym ? "ParIC" : "ParILU",
            d[0], d[1]);
    assert_true(d[0] <= 5e-2);
    assert_true(d[1] <= 1e-10);
    gs_csr_free(&Lr);
    gs_csr_free(&Ur);
    gs_config_destroy(&cfg);
    gs_backend_destroy(&dev);
}

static void test_async_sweeps_converge(void **state)
{
    (void)state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &A));
    check_async("convdiff2d", &A, false);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_random_sparse(1017, 7, 1.3, 9, &A));
    check_async("random", &A, false);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_laplace27(13, 9, 11, &A));
    check_async("laplace27", &A, true);
    gs_csr_free(&A);
}

/* z = M^{-1} r on a backend (poisoned output first). */
static void apply_on(gs_backend *be, gs_config *cfg, const char *type, const gs_csr *A, const double *r, double *z,
                     gs_report *rep)
{
    gs_int n = A->nrows;
    gs_pc *pc = make_pc(be, cfg, type, A);
    gs_vector *vr = NULL, *vz = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(be, n, &vz));
    gs_test_poison(n, z);
    GS_ASSERT_OK(gs_vec_upload(vz, z));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    if (rep) gs_pc_view(pc, rep);
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
    gs_pc_destroy(&pc);
}

static void compare_apply(const char *type, const char *const *settings, const gs_csr *A, bool diagnostics)
{
    gs_backend *host = NULL, *dev = NULL;
    gs_config *cfg = NULL;
    gs_report *rh = NULL, *rd = NULL;
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_report_create(&rh));
    GS_ASSERT_OK(gs_report_create(&rd));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=levelset"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=levelset"));
    gs_int n = A->nrows;
    double *r = NULL, *zh = NULL, *zd = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(zh, n));
    GS_ASSERT_OK(GS_MALLOC(zd, n));
    uint64_t seed = 41;
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.5;
    apply_on(host, cfg, type, A, r, zh, rh);
    apply_on(dev, cfg, type, A, r, zd, rd);
    double diff = gs_test_rel_diff(n, zd, zh);
    fprintf(stderr, "%s %s: device vs host apply %.3g\n", type, settings[0], diff);
    assert_true(diff <= 1e-10);
    if (diagnostics) {
        double a = gs_report_find(rh, "preconditioner.nonlinear_residual")->d;
        double b = gs_report_find(rd, "preconditioner.nonlinear_residual")->d;
        fprintf(stderr, "  nonlinear residual host %.6e device %.6e\n", a, b);
        assert_true(fabs(a - b) <= 1e-8 * a);
        assert_non_null(gs_report_find(rd, "preconditioner.sweep_residuals"));
    }
    assert_true(gs_report_find(rd, "preconditioner.time_sweeps")->d > 0.0);
    gs_free(&r);
    gs_free(&zh);
    gs_free(&zd);
    gs_report_destroy(&rh);
    gs_report_destroy(&rd);
    gs_config_destroy(&cfg);
    gs_backend_destroy(&dev);
    gs_backend_destroy(&host);
}

static void test_preconditioner_matches_host(void **state)
{
    (void)state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &A));
    const char *s1[] = {"preconditioner.sweeps=3", "preconditioner.diagnostics=true", NULL};
    compare_apply("parilu", s1, &A, true);
    const char *s2[] = {"preconditioner.local=parilu", "preconditioner.blocks=24", "preconditioner.overlap=2",
                        "preconditioner.sweeps=4", NULL};
    compare_apply("ras", s2, &A, false);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_test_laplace2d(61, 43, &A));
    const char *s3[] = {"preconditioner.symmetric=true", "preconditioner.sweeps=5", "preconditioner.fill_level=1",
                        NULL};
    compare_apply("parilu", s3, &A, false);
    gs_csr_free(&A);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_sweeps_match),
        cmocka_unit_test(test_pivot_flags_match),
        cmocka_unit_test(test_async_sweeps_converge),
        cmocka_unit_test(test_preconditioner_matches_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
