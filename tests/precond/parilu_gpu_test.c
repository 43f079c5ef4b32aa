/* parilu_cuda_matches_reference: the GPU ParILU/ParIC sweep and unscaling against the host reference.
 *   - synchronous sweeps (deterministic on both): GPU == host within 1e-12 after 1, 3 and 5 sweeps,
 *     the output buffer poisoned with NaN before every GPU sweep (a task that is not written shows);
 *   - the unscaling kernel (gs_parilu_unscale_dev) on the GPU sweep values == gs_parilu_unscale on the
 *     same values, bit for bit, into poisoned outputs; its non-finite positions as the host scan's;
 *   - the device-resident numeric setup (factors built and analysed on the GPU) == the former path
 *     (values downloaded, unscaled on the host, host CSRs analysed), bit for bit: the factors
 *     (gs_parilu_download_factors) and z = M^{-1} r, for triangular solvers that read the device
 *     factors (auto, syncfree, levelset, jacobi) and one that downloads them (reference), also after
 *     a second numeric setup on new values; and close to the host backend's preconditioner;
 *   - zero pivots (error policy) and diverged values (non-finite L or U entries) fail with the host's
 *     messages, word for word (also through RAS);
 *   - the pivot flags (first bad pivot under zero_pivot = error, shifted rows under shift) agree;
 *   - asynchronous GPU sweeps (a thread per task, in place) converge to ILU(0) / IC(0): loose bound
 *     5e-2 after 5 sweeps, tight 1e-10 after 50;
 *   - the whole preconditioner (and RAS with local = parilu) on the cuda backend applies the same
 *     operator as on the host backend; diagnostics agree.
 * Matrices larger than a warp and not a multiple of 32, with an empty row, a dense row and rows
 * without a stored diagonal. */
#include <limits.h>
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
#include "trisolve/trisolve.h"

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

/* The plan's L and U patterns with room for values. */
static void factor_patterns(const gs_parilu_plan *P, gs_csr *L, gs_csr *U)
{
    GS_ASSERT_OK(gs_csr_alloc(L, P->n, P->n, P->L.nnz, true));
    memcpy(L->rowptr, P->L.rowptr, ((size_t)P->n + 1) * sizeof(gs_int));
    if (P->L.nnz > 0) memcpy(L->colind, P->L.colind, (size_t)P->L.nnz * sizeof(gs_int));
    GS_ASSERT_OK(gs_csr_alloc(U, P->n, P->n, P->U.nnz, true));
    memcpy(U->rowptr, P->U.rowptr, ((size_t)P->n + 1) * sizeof(gs_int));
    if (P->U.nnz > 0) memcpy(U->colind, P->U.colind, (size_t)P->U.nnz * sizeof(gs_int));
}

/* The lowest position of a non-finite value in T (UINT_MAX: none). */
static unsigned first_nonfinite(const gs_csr *T)
{
    for (gs_int q = 0; q < T->nnz; q++)
        if (!isfinite(T->val[q])) return (unsigned)q;
    return UINT_MAX;
}

/* The unscaling kernel on the device values x (sweep values of K) against gs_parilu_unscale on the
 * same values downloaded: identical bits, every output written (poisoned first), same non-finite
 * positions. */
static void check_unscale(const char *what, gs_backend *dev, const gs_parilu_plan *P, const gs_parilu_kernel *K,
                          const double *sd, const double *x)
{
    gs_parilu_factor_dev F;
    gs_csr Lr = {0}, Ur = {0};
    double *xh = NULL, *lh = NULL, *uh = NULL, *ld = NULL, *ud = NULL;
    const gs_int nl = P->L.nnz, nu = P->U.nnz;
    GS_ASSERT_OK(gs_parilu_factor_dev_create(dev, P, &F));
    GS_ASSERT_OK(gs_backend_upload(dev, F.sd, sd, (size_t)P->n * sizeof(double)));
    GS_ASSERT_OK(GS_MALLOC(xh, P->ntasks));
    GS_ASSERT_OK(GS_MALLOC(lh, nl));
    GS_ASSERT_OK(GS_MALLOC(uh, nu));
    GS_ASSERT_OK(gs_backend_download(dev, xh, x, (size_t)P->ntasks * sizeof(double)));
    factor_patterns(P, &Lr, &Ur);
    gs_parilu_unscale(P, sd, xh, &Lr, &Ur);
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&ld, (size_t)nl * sizeof(double)));
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&ud, (size_t)nu * sizeof(double)));
    gs_test_poison(nl, lh);
    gs_test_poison(nu, uh);
    GS_ASSERT_OK(gs_backend_upload(dev, ld, lh, (size_t)nl * sizeof(double)));
    GS_ASSERT_OK(gs_backend_upload(dev, ud, uh, (size_t)nu * sizeof(double)));
    GS_ASSERT_OK(gs_parilu_unscale_dev(dev, K, &F, x, ld, ud));
    GS_ASSERT_OK(gs_backend_download(dev, lh, ld, (size_t)nl * sizeof(double)));
    GS_ASSERT_OK(gs_backend_download(dev, uh, ud, (size_t)nu * sizeof(double)));
    unsigned pos[2];
    GS_ASSERT_OK(gs_backend_download(dev, pos, F.nonfinite, sizeof pos));
    fprintf(stderr, "  %s: GPU unscaling vs gs_parilu_unscale (%d + %d entries): L %s, U %s; non-finite at %u %u\n",
            what, (int)nl, (int)nu, memcmp(lh, Lr.val, (size_t)nl * sizeof(double)) ? "DIFFERS" : "identical",
            memcmp(uh, Ur.val, (size_t)nu * sizeof(double)) ? "DIFFERS" : "identical", pos[0], pos[1]);
    assert_memory_equal(lh, Lr.val, (size_t)nl * sizeof(double));
    assert_memory_equal(uh, Ur.val, (size_t)nu * sizeof(double));
    assert_true(pos[0] == first_nonfinite(&Lr));
    assert_true(pos[1] == first_nonfinite(&Ur));
    gs_backend_free(dev, ld);
    gs_backend_free(dev, ud);
    gs_parilu_factor_dev_free(dev, &F);
    gs_csr_free(&Lr);
    gs_csr_free(&Ur);
    gs_free(&xh);
    gs_free(&lh);
    gs_free(&uh);
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
    check_unscale(what, dev, &P, &d.K, sd, d.xa);
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

/* Factors of the parilu plug-in (through its data: the engine). On cuda they stay on the device
 * until asked for: before the download there are none on the host. */
static void pc_factors(gs_pc *pc, const gs_csr **L, const gs_csr **U)
{
    gs_parilu *p = (gs_parilu *)pc->data;
    if (pc->be->kind == GS_BACKEND_CUDA) {
        gs_parilu_factors(p, L, U);
        assert_null(*L);
        assert_null(*U);
    }
    GS_ASSERT_OK(gs_parilu_download_factors(p));
    gs_parilu_factors(p, L, U);
    assert_non_null(*L);
    assert_non_null(*U);
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

/* ---- the device-resident numeric setup against the former path ---- */

/* The former numeric setup, step by step, on the cuda backend: the same plan, initial guess and GPU
 * sweeps as the engine (synchronous: deterministic), then the values downloaded and unscaled on the
 * host (gs_parilu_unscale) into host CSRs L and U. */
static void former_factors(gs_backend *dev, const gs_config *cfg, const gs_csr *A, gs_csr *L, gs_csr *U)
{
    gs_parilu_opts o;
    gs_parilu_plan P = {0};
    gs_parilu_kernel K;
    GS_ASSERT_OK(gs_parilu_opts_from_config(cfg, &o));
    assert_false(o.asynchronous);
    GS_ASSERT_OK(gs_parilu_plan_build(A, o.symmetric, o.fill_level, o.order, o.seed, &P));
    const gs_int n = P.n, nt = P.ntasks;
    const size_t bytes = (size_t)nt * sizeof(double);
    double *sd = NULL, *ta = NULL, *x0 = NULL, *ps = NULL, *xh = NULL, *xa = NULL, *xb = NULL;
    GS_ASSERT_OK(GS_MALLOC(sd, n));
    GS_ASSERT_OK(GS_MALLOC(ps, n));
    GS_ASSERT_OK(GS_MALLOC(ta, nt));
    GS_ASSERT_OK(GS_MALLOC(x0, nt));
    GS_ASSERT_OK(GS_MALLOC(xh, nt));
    GS_ASSERT_OK(gs_parilu_initial_guess(&P, A, &o, NULL, sd, ta, x0, ps, NULL));
    GS_ASSERT_OK(gs_parilu_kernel_create(dev, &P, o.zero_pivot == GS_ZERO_PIVOT_SHIFT, &K));
    GS_ASSERT_OK(gs_parilu_kernel_set(dev, &K, ta, ps));
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&xa, bytes));
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&xb, bytes));
    GS_ASSERT_OK(gs_backend_upload(dev, xa, x0, bytes));
    for (int s = 1; s <= o.sweeps; s++) {
        GS_ASSERT_OK(gs_parilu_sweep(dev, &K, xa, xb, s));
        double *t = xa;
        xa = xb;
        xb = t;
    }
    GS_ASSERT_OK(gs_backend_download(dev, xh, xa, bytes));
    factor_patterns(&P, L, U);
    gs_parilu_unscale(&P, sd, xh, L, U);
    gs_backend_free(dev, xa);
    gs_backend_free(dev, xb);
    gs_parilu_kernel_free(dev, &K);
    gs_parilu_plan_free(&P);
    gs_free(&sd);
    gs_free(&ps);
    gs_free(&ta);
    gs_free(&x0);
    gs_free(&xh);
}

/* z = U^{-1} (L^{-1} r) with triangular solvers of cfg on be analysing the host CSRs L and U. */
static void former_apply(gs_backend *be, const gs_config *cfg, bool sym, const gs_csr *L, const gs_csr *U,
                         const double *r, double *z)
{
    gs_trisolve *lo = NULL, *up = NULL;
    gs_vector *vr = NULL, *vw = NULL, *vz = NULL;
    const gs_int n = L->nrows;
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, be, GS_LOWER, !sym, false, &lo));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, be, GS_UPPER, false, false, &up));
    GS_ASSERT_OK(gs_trisolve_analyse(lo, L));
    GS_ASSERT_OK(gs_trisolve_analyse(up, U));
    GS_ASSERT_OK(gs_vec_create(be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(be, n, &vw));
    GS_ASSERT_OK(gs_vec_create(be, n, &vz));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    GS_ASSERT_OK(gs_trisolve_solve(lo, vr, vw));
    GS_ASSERT_OK(gs_trisolve_solve(up, vw, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vw);
    gs_vec_destroy(&vz);
    gs_trisolve_destroy(&lo);
    gs_trisolve_destroy(&up);
}

/* z = M^{-1} r with an existing preconditioner (z poisoned first). */
static void pc_apply_host(gs_pc *pc, gs_int n, const double *r, double *z)
{
    gs_vector *vr = NULL, *vz = NULL;
    GS_ASSERT_OK(gs_vec_create(pc->be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(pc->be, n, &vz));
    gs_test_poison(n, z);
    GS_ASSERT_OK(gs_vec_upload(vz, z));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
}

static void assert_same_bits(const char *what, gs_int n, const double *x, const double *y)
{
    if (memcmp(x, y, (size_t)n * sizeof(double)) != 0)
        fprintf(stderr, "  %s: NOT bit-identical (relative difference %.3g)\n", what, gs_test_rel_diff(n, x, y));
    assert_memory_equal(x, y, (size_t)n * sizeof(double));
}

static void assert_same_csr(const char *what, const gs_csr *X, const gs_csr *Y)
{
    assert_int_equal(X->nrows, Y->nrows);
    assert_int_equal(X->nnz, Y->nnz);
    assert_memory_equal(X->rowptr, Y->rowptr, ((size_t)X->nrows + 1) * sizeof(gs_int));
    assert_memory_equal(X->colind, Y->colind, (size_t)X->nnz * sizeof(gs_int));
    assert_same_bits(what, X->nnz, X->val, Y->val);
}

/* Report entry `key` as an integer / a double (must exist). */
static long long rep_int(gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "  report key %s missing\n", key);
    assert_non_null(e);
    return e->i;
}

static double rep_double(gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "  report key %s missing\n", key);
    assert_non_null(e);
    return e->d;
}

/* One matrix and setting: the parilu preconditioner on cuda for every trisolve type in `types`
 * against the former path (bit for bit: factors and z), then a second numeric setup on 3A (the
 * patterns uploaded once are re-used), then the view and the host backend (trisolve reference). */
static void check_device_setup(const char *what, const char *const *settings, const gs_csr *A,
                               const char *const *types)
{
    gs_backend *host = NULL, *dev = NULL;
    gs_config *cfg = NULL;
    gs_csr A3 = {0};
    const gs_int n = A->nrows;
    double *r = NULL, *z = NULL, *zf = NULL, *zh = NULL;
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    GS_ASSERT_OK(gs_config_create(&cfg));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    const bool sym = gs_config_bool(cfg, "preconditioner.symmetric");
    GS_ASSERT_OK(gs_csr_copy(A, &A3));
    for (gs_int k = 0; k < A3.nnz; k++) A3.val[k] *= 3.0;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z, n));
    GS_ASSERT_OK(GS_MALLOC(zf, n));
    GS_ASSERT_OK(GS_MALLOC(zh, n));
    uint64_t seed = 77;
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.5;

    gs_csr Lf = {0}, Uf = {0}, Lf3 = {0}, Uf3 = {0};
    former_factors(dev, cfg, A, &Lf, &Uf);
    former_factors(dev, cfg, &A3, &Lf3, &Uf3);
    for (const char *const *t = types; *t; t++) {
        char key[96];
        snprintf(key, sizeof key, "trisolve.lower.type=%s", *t);
        GS_ASSERT_OK(gs_config_set(cfg, key));
        snprintf(key, sizeof key, "trisolve.upper.type=%s", *t);
        GS_ASSERT_OK(gs_config_set(cfg, key));
        fprintf(stderr, "%s (%s, n = %d), trisolve %s: device setup vs former path\n", what, sym ? "ParIC" : "ParILU",
                (int)n, *t);
        gs_pc *pc = make_pc(dev, cfg, "parilu", A);
        const gs_csr *L = NULL, *U = NULL;
        /* z: bit for bit the former path's */
        pc_apply_host(pc, n, r, z);
        former_apply(dev, cfg, sym, &Lf, &Uf, r, zf);
        assert_same_bits("z = M^{-1} r", n, z, zf);
        /* the factors the solvers were analysed on */
        pc_factors(pc, &L, &U);
        assert_same_csr("L", L, &Lf);
        assert_same_csr("U", U, &Uf);
        /* the view: sizes from the host patterns, the step times */
        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_pc_view(pc, rep);
        assert_int_equal(rep_int(rep, "preconditioner.nnz_L"), Lf.nnz);
        assert_int_equal(rep_int(rep, "preconditioner.nnz_U"), Uf.nnz);
        assert_true(rep_double(rep, "preconditioner.fill_ratio") == (double)(Lf.nnz + Uf.nnz) / (double)A->nnz);
        assert_true(rep_double(rep, "preconditioner.time_download") >= 0.0);
        assert_true(rep_double(rep, "preconditioner.time_unscale") >= 0.0);
        assert_true(rep_double(rep, "preconditioner.time_trisolve_analysis") > 0.0);
        gs_report_destroy(&rep);
        /* a second numeric setup on new values, same pattern */
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A3));
        pc_apply_host(pc, n, r, z);
        former_apply(dev, cfg, sym, &Lf3, &Uf3, r, zf);
        assert_same_bits("z = M^{-1} r after a second numeric setup", n, z, zf);
        pc_factors(pc, &L, &U);
        assert_same_csr("L (second setup)", L, &Lf3);
        assert_same_csr("U (second setup)", U, &Uf3);
        gs_pc_destroy(&pc);
    }
    /* the host backend (exact solvers on both sides): equal up to the sweeps' rounding (FMA) */
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=reference"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=reference"));
    gs_report *rh = NULL, *rd = NULL;
    GS_ASSERT_OK(gs_report_create(&rh));
    GS_ASSERT_OK(gs_report_create(&rd));
    apply_on(host, cfg, "parilu", A, r, zh, rh);
    apply_on(dev, cfg, "parilu", A, r, z, rd);
    double diff = gs_test_rel_diff(n, z, zh);
    fprintf(stderr, "%s: device vs host backend apply %.3g\n", what, diff);
    assert_true(diff <= 1e-9);
    const char *ints[] = {"preconditioner.nnz_L", "preconditioner.nnz_U", "preconditioner.pivots_shifted",
                          "preconditioner.pivot_shift_events", "preconditioner.zero_diagonal", NULL};
    for (const char *const *k = ints; *k; k++) assert_int_equal(rep_int(rd, *k), rep_int(rh, *k));
    assert_string_equal(gs_report_find(rd, "preconditioner.shifted_rows")->s,
                        gs_report_find(rh, "preconditioner.shifted_rows")->s);
    assert_true(rep_double(rd, "preconditioner.fill_ratio") == rep_double(rh, "preconditioner.fill_ratio"));
    gs_report_destroy(&rh);
    gs_report_destroy(&rd);

    gs_csr_free(&Lf);
    gs_csr_free(&Uf);
    gs_csr_free(&Lf3);
    gs_csr_free(&Uf3);
    gs_csr_free(&A3);
    gs_free(&r);
    gs_free(&z);
    gs_free(&zf);
    gs_free(&zh);
    gs_config_destroy(&cfg);
    gs_backend_destroy(&dev);
    gs_backend_destroy(&host);
}

static void test_device_setup_matches_former_path(void **state)
{
    (void)state;
    const int quick = gs_test_quick();
    /* solvers reading the device factors (auto: syncfree or cusparse) and one that downloads them */
    const char *all_types[] = {"auto", "syncfree", "levelset", "jacobi", "reference", NULL};
    const char *few_types[] = {"auto", "reference", NULL};
    const char *const *types = quick ? few_types : all_types;
    gs_csr A = {0};

    GS_ASSERT_OK(gs_test_laplace2d(45, 39, &A)); /* n = 1755 */
    const char *ic[] = {"preconditioner.symmetric=true", "preconditioner.sweeps=5", NULL};
    check_device_setup("poisson2d", ic, &A, types);
    const char *ilu1[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=3", "preconditioner.fill_level=1",
                          NULL};
    if (quick < 2) check_device_setup("poisson2d, fill level 1", ilu1, &A, types);
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_test_random_sparse(1017, 7, 1.2, 11, &A));
    const char *rnd[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=4", "preconditioner.order=random",
                         "preconditioner.seed=5", NULL};
    check_device_setup("random nonsymmetric", rnd, &A, types);
    gs_csr_free(&A);

    parilu_singular_tail(11, 7, &A); /* n = 79: zero pivots replaced */
    const char *sh_ilu[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=3",
                            "preconditioner.zero_pivot=shift", NULL};
    check_device_setup("singular tail, shift", sh_ilu, &A, types);
    const char *sh_ic[] = {"preconditioner.symmetric=true", "preconditioner.sweeps=3",
                           "preconditioner.zero_pivot=shift", NULL};
    if (quick < 2) check_device_setup("singular tail, shift", sh_ic, &A, types);
    gs_csr_free(&A);

    if (quick < 2) {
        parilu_awkward_matrix(&A); /* empty row, dense row, zero diagonals; host copies for diagnostics */
        const char *awk[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=3",
                             "preconditioner.zero_pivot=shift", "preconditioner.diagnostics=true", NULL};
        check_device_setup("awkward, diagnostics", awk, &A, types);
        gs_csr_free(&A);
    }
}

/* The numeric setup of `type` fails on both backends with the same status and the same message. */
static void compare_failure(const char *type, const char *const *settings, const gs_csr *A, const char *needle)
{
    char msg[2][1024];
    gs_backend *be[2] = {NULL, NULL};
    GS_ASSERT_OK(gs_backend_host_create(&be[0]));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &be[1]));
    for (int b = 0; b < 2; b++) {
        gs_config *cfg = NULL;
        gs_pc *pc = NULL;
        GS_ASSERT_OK(gs_config_create(&cfg));
        for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
        GS_ASSERT_OK(gs_pc_create(type, be[b], cfg, &pc));
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
        gs_error_clear();
        gs_status st = gs_pc_setup_numeric(pc, A);
        snprintf(msg[b], sizeof msg[b], "%s", gs_error_message());
        gs_error_clear();
        fprintf(stderr, "%s on %s: %s: %s\n", type, b ? "cuda" : "host", gs_status_name(st), msg[b]);
        assert_int_equal(st, GS_ERR_NUMERIC);
        if (strcmp(type, "parilu") == 0 && b == 1) {
            /* no factors after a failed setup */
            GS_ASSERT_FAILS(gs_parilu_download_factors((gs_parilu *)pc->data), GS_ERR_ARG, "numeric setup");
        }
        gs_pc_destroy(&pc);
        gs_config_destroy(&cfg);
    }
    assert_string_equal(msg[1], msg[0]);
    assert_non_null(strstr(msg[0], needle));
    gs_backend_destroy(&be[1]);
    gs_backend_destroy(&be[0]);
}

/* The unscaling kernel on diverged values: the first non-finite position of L / U as the host's. */
static void check_unscale_overflow(bool in_u)
{
    gs_backend *dev = NULL;
    gs_csr A = {0};
    gs_parilu_plan P = {0};
    gs_parilu_opts o = {0};
    gs_parilu_kernel K;
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    parilu_overflow_tail(in_u, &A);
    GS_ASSERT_OK(gs_parilu_plan_build(&A, false, 0, GS_PARILU_FORWARD, 0, &P));
    const gs_int n = P.n, nt = P.ntasks;
    const size_t bytes = (size_t)nt * sizeof(double);
    double *sd = NULL, *ta = NULL, *x0 = NULL, *ps = NULL, *xa = NULL, *xb = NULL;
    GS_ASSERT_OK(GS_MALLOC(sd, n));
    GS_ASSERT_OK(GS_MALLOC(ps, n));
    GS_ASSERT_OK(GS_MALLOC(ta, nt));
    GS_ASSERT_OK(GS_MALLOC(x0, nt));
    o.zero_pivot = GS_ZERO_PIVOT_ERROR;
    o.shift = 1e-3;
    GS_ASSERT_OK(gs_parilu_initial_guess(&P, &A, &o, NULL, sd, ta, x0, ps, NULL));
    GS_ASSERT_OK(gs_parilu_kernel_create(dev, &P, false, &K));
    GS_ASSERT_OK(gs_parilu_kernel_set(dev, &K, ta, ps));
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&xa, bytes));
    GS_ASSERT_OK(gs_backend_alloc(dev, (void **)&xb, bytes));
    GS_ASSERT_OK(gs_backend_upload(dev, xa, x0, bytes));
    for (int s = 1; s <= 2; s++) {
        GS_ASSERT_OK(gs_parilu_sweep(dev, &K, xa, xb, s));
        double *t = xa;
        xa = xb;
        xb = t;
    }
    check_unscale(in_u ? "overflow in U" : "overflow in L", dev, &P, &K, sd, xa);
    gs_backend_free(dev, xa);
    gs_backend_free(dev, xb);
    gs_parilu_kernel_free(dev, &K);
    gs_parilu_plan_free(&P);
    gs_csr_free(&A);
    gs_free(&sd);
    gs_free(&ps);
    gs_free(&ta);
    gs_free(&x0);
    gs_backend_destroy(&dev);
}

static void test_device_setup_errors(void **state)
{
    (void)state;
    gs_csr A = {0};
    check_unscale_overflow(false);
    check_unscale_overflow(true);

    parilu_singular_tail(11, 7, &A); /* the last pivot is 0: rows 78-79 */
    const char *zp_ilu[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=3", NULL};
    compare_failure("parilu", zp_ilu, &A, "ParILU: zero pivot u_ii at row 79 (1-based) in sweep 1 of 3");
    const char *zp_ic[] = {"preconditioner.symmetric=true", "preconditioner.sweeps=3", NULL};
    compare_failure("parilu", zp_ic, &A, "ParIC: non-positive pivot a_ii - sum_k l_ik^2 at row 79 (1-based)");
    gs_csr_free(&A);

    const char *two[] = {"preconditioner.symmetric=false", "preconditioner.sweeps=2", NULL};
    const char *ras[] = {"preconditioner.local=parilu", "preconditioner.blocks=2", "preconditioner.overlap=1",
                         "preconditioner.sweeps=2", NULL};
    parilu_overflow_tail(false, &A);
    compare_failure("parilu", two, &A, "non-finite value inf in row 38, column 37 (1-based) of L after 2 sweeps");
    compare_failure("ras", ras, &A, "of L after 2 sweeps");
    gs_csr_free(&A);
    parilu_overflow_tail(true, &A);
    compare_failure("parilu", two, &A, "non-finite value -inf in row 37, column 38 (1-based) of U after 2 sweeps");
    compare_failure("ras", ras, &A, "of U after 2 sweeps");
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
        cmocka_unit_test(test_device_setup_matches_former_path),
        cmocka_unit_test(test_device_setup_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
