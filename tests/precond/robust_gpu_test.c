/* The robustness options on the cuda backend give the host backend's result: the ilutp preconditioner
 * (host factors, triangular solves and the permutation's scatter on the device), zero_pivot = "grow" with
 * the GPU factorization (its first attempt on the device, a failed one refactored on the host; the GPU's
 * pivot bound min_pivot * ||a_i||_inf against the host's), IC(0) grow, MILU (factored on the host), and
 * the stability estimate. Outputs are poisoned first; n > 32 and not a multiple of 32. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/precond.h"

typedef struct run_out {
    double *z;                /* pc(r) */
    double estimate;          /* the stability estimate */
    double shift_used;
    long long refactorizations, exchanges;
    char factor_on[16];
} run_out;

static const gs_report_entry *find(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fail_msg("report key %s missing", key);
    return e;
}

/* Set up `type` on be with the settings, apply it to r twice (the same result when not variable). */
static void run_on(gs_backend *be, const char *type, const char *const *settings, const gs_csr *A, const double *r,
                   run_out *out)
{
    gs_config *cfg = NULL;
    gs_pc *pc = NULL;
    gs_vector *vr = NULL, *vz = NULL;
    gs_int n = A->nrows;
    double *z2 = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    GS_ASSERT_OK(gs_pc_create(type, be, cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    GS_ASSERT_OK(gs_vec_create(be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(be, n, &vz));
    GS_ASSERT_OK(GS_MALLOC(out->z, n));
    GS_ASSERT_OK(GS_MALLOC(z2, n));
    gs_test_poison(n, out->z);
    GS_ASSERT_OK(gs_vec_upload(vz, out->z));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, out->z));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z2));
    if (!pc->variable) assert_memory_equal(out->z, z2, (size_t)n * sizeof *z2);
    for (gs_int i = 0; i < n; i++) assert_true(isfinite(out->z[i]));

    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    out->estimate = find(rep, "preconditioner.stability_estimate")->d;
    out->shift_used = find(rep, "preconditioner.shift_used")->d;
    out->refactorizations = find(rep, "preconditioner.refactorizations")->i;
    const gs_report_entry *e = gs_report_find(rep, "preconditioner.columns_exchanged");
    out->exchanges = e ? e->i : 0;
    snprintf(out->factor_on, sizeof out->factor_on, "%s", find(rep, "preconditioner.factor_on")->s);
    gs_report_destroy(&rep);
    gs_free(&z2);
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
    gs_pc_destroy(&pc);
    gs_config_destroy(&cfg);
}

/* The same preconditioner on the host and the cuda backend: z within 16 n eps (relative), the same
 * shift, refactorizations and exchanges; the device run's factor_on returned in dev_factor_on. */
static void compare(const char *label, const char *type, const char *const *settings, const gs_csr *A,
                    char *dev_factor_on, run_out *host_out)
{
    gs_backend *host = NULL, *dev = NULL;
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    gs_int n = A->nrows;
    double *r = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    uint64_t seed = 1234;
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.5;
    run_out h, d;
    run_on(host, type, settings, A, r, &h);
    run_on(dev, type, settings, A, r, &d);
    double diff = gs_test_rel_diff(n, d.z, h.z), tol = 16.0 * n * DBL_EPSILON;
    fprintf(stderr,
            "%-28s n %5d: device vs host rel diff %.3g (tol %.3g); estimate %.17g / %.17g; shift %g / %g after %lld / "
            "%lld; exchanges %lld; factor_on %s / %s\n",
            label, (int)n, diff, tol, d.estimate, h.estimate, d.shift_used, h.shift_used, d.refactorizations,
            h.refactorizations, h.exchanges, d.factor_on, h.factor_on);
    assert_true(diff <= tol);
    /* the estimate solves with the ones vector, where a shifted pivot (1e-8) amplifies the cancellation
     * in its row: device and host summation orders then agree to far fewer digits than z does (whose
     * largest entry is that amplified row); an estimate for a rejection threshold needs a few digits */
    assert_true(fabs(d.estimate - h.estimate) <= 1e-6 * fabs(h.estimate));
    assert_true(d.shift_used == h.shift_used);
    assert_int_equal(d.refactorizations, h.refactorizations);
    assert_int_equal(d.exchanges, h.exchanges);
    if (dev_factor_on) snprintf(dev_factor_on, 16, "%s", d.factor_on);
    if (host_out) {
        *host_out = h;
        host_out->z = NULL;
    }
    gs_free(&h.z);
    gs_free(&d.z);
    gs_free(&r);
    gs_backend_destroy(&dev);
    gs_backend_destroy(&host);
}

/* B = A with its rows shifted cyclically: row i of B is row (i + sh) mod n of A. For a diagonally
 * dominant A, B has (mostly) zero diagonal entries, is as well conditioned, and ILUTP's column exchanges
 * recover A's pivots. */
static void row_shift(const gs_csr *A, gs_int sh, gs_csr *B)
{
    gs_int n = A->nrows, nnz = 0;
    GS_ASSERT_OK(gs_csr_alloc(B, n, n, A->nnz, true));
    B->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        gs_int r = (i + sh) % n;
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) {
            B->colind[nnz] = A->colind[p];
            B->val[nnz++] = A->val[p];
        }
        B->rowptr[i + 1] = nnz;
    }
    B->nnz = nnz;
}

/* ilutp: west0067 (zero diagonal) and row-shifted random and convection-diffusion matrices, with the
 * levelset and syncfree device solvers; factors well conditioned (estimates 10..100), so that 16 n eps
 * bounds what the solvers' rounding may differ by. */
static void test_ilutp_device_matches_host(void **state)
{
    (void)state;
    const char *lv[] = {"trisolve.lower.type=levelset", "trisolve.upper.type=levelset", NULL};
    const char *sf[] = {"trisolve.lower.type=syncfree", "trisolve.upper.type=syncfree",
                        "preconditioner.pivot_tolerance=0.5", NULL};
    gs_csr A = {0}, R = {0};
    run_out h;
    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    compare("west0067", "ilutp", lv, &A, NULL, &h);
    assert_true(h.exchanges > 0);
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_test_random_sparse(gs_test_quick() >= 2 ? 301 : 1001, 5, 1.2, 17, &R));
    row_shift(&R, 7, &A);
    compare("random, rows shifted by 7", "ilutp", lv, &A, NULL, &h);
    assert_true(h.exchanges > 0);
    compare("random, rows shifted by 7", "ilutp", sf, &A, NULL, &h);
    gs_csr_free(&R);
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &R)); /* n = 2491 */
    row_shift(&R, 1, &A);
    compare("convdiff, rows shifted by 1", "ilutp", sf, &A, NULL, &h);
    assert_true(h.exchanges > 0);
    gs_csr_free(&R);
    gs_csr_free(&A);
}

/* 4 on the diagonal, -1 beside it, except rows 10 and 11: the block [[1, 1], [1, 1 + eps]] alone; ILU's
 * pivot there is eps, IC(0)'s d too: above DBL_MIN, below min_pivot * ||a_i||_inf for eps < min_pivot. */
static void make_block_matrix(gs_int n, double eps, gs_csr *A)
{
    GS_ASSERT_OK(gs_csr_alloc(A, n, n, 3 * n, true));
    gs_int nnz = 0;
    A->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) {
        bool blk = i == 10 || i == 11;
        for (gs_int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= n) continue;
            bool jblk = j == 10 || j == 11;
            if (blk != jblk) continue;
            A->colind[nnz] = j;
            A->val[nnz++] = blk ? (i == 11 && j == 11 ? 1.0 + eps : 1.0) : (j == i ? 4.0 : -1.0);
        }
        A->rowptr[i + 1] = nnz;
    }
    A->nnz = nnz;
}

/* grow on the GPU factorization paths (ILU(0) pattern on the device, ILU(k) on a host pattern, IC(0)):
 * a pivot caught by the device's bound is refactored on the host with the host's alpha and count; no
 * failing pivot keeps the factors on the device. */
static void test_grow_device_matches_host(void **state)
{
    (void)state;
    const gs_int n = gs_test_quick() >= 2 ? 101 : 1000; /* racecheck: a level per row, a launch per level */
    char on[16];
    const char *types[] = {"ilu0", "iluk", "ic0"};
    gs_csr A = {0};
    make_block_matrix(n, 1e-10, &A); /* pivot 1e-10 < 1e-8 * 1: only the bound rejects it */
    for (int t = 0; t < 3; t++) {
        const char *s[] = {"preconditioner.zero_pivot=grow", "preconditioner.fill_level=1",
                           "trisolve.lower.type=levelset", "trisolve.upper.type=levelset", NULL};
        run_out h;
        compare(types[t], types[t], s, &A, on, &h);
        assert_true(h.refactorizations >= 1);
        assert_string_equal(on, "host");
    }
    gs_csr_free(&A);
    /* n = 2491 (racecheck, GS_TEST_QUICK=2: 483, its solves' launches being slow there): no failing pivot */
    if (gs_test_quick() >= 2)
        GS_ASSERT_OK(gs_test_convdiff2d(23, 21, 1.5, &A));
    else
        GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &A));
    const char *s[] = {"preconditioner.zero_pivot=grow", "trisolve.lower.type=levelset",
                       "trisolve.upper.type=levelset", NULL};
    run_out h;
    compare("ilu0 grow, no shift needed", "ilu0", s, &A, on, &h);
    assert_int_equal(h.refactorizations, 0);
    assert_string_equal(on, "device");
    /* milu: factored on the host with factor_on = "auto" */
    const char *m[] = {"preconditioner.milu=true", "trisolve.lower.type=levelset", "trisolve.upper.type=levelset",
                       NULL};
    compare("ilu0 milu", "ilu0", m, &A, on, &h);
    assert_string_equal(on, "host");
    gs_csr_free(&A);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ilutp_device_matches_host),
        cmocka_unit_test(test_grow_device_matches_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
