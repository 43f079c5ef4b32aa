/* BILU(k), BILUT and RAS(delta) on the cuda backend give the host backend's result (the gather,
 * the two block-diagonal triangular solves and the restricted scatter all run on the device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "precond/block.h"
#include "precond/precond.h"

static gs_pc *make_pc(gs_backend *be, gs_config *cfg, gs_pc_create_fn create, const char *type, const gs_csr *A)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_calloc(&pc, 1, sizeof *pc));
    pc->type = type;
    pc->be = be;
    pc->cfg = cfg;
    GS_ASSERT_OK(create(pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    return pc;
}

static void apply_on(gs_backend *be, gs_config *cfg, gs_pc_create_fn create, const char *type, const gs_csr *A,
                     const double *r, double *z)
{
    gs_int n = A->nrows;
    gs_pc *pc = make_pc(be, cfg, create, type, A);
    gs_vector *vr = NULL, *vz = NULL;
    double *poison = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(be, n, &vz));
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    GS_ASSERT_OK(gs_vec_upload(vz, poison));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    /* a second application reuses the work vectors: same result */
    double *z2 = poison;
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z2));
    if (!pc->variable) assert_memory_equal(z, z2, (size_t)n * sizeof *z);
    gs_free(&poison);
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
    gs_pc_destroy(&pc);
}

static void compare(const char *type, gs_pc_create_fn create, const char *const *settings)
{
    gs_backend *host = NULL, *dev = NULL;
    gs_config *cfg = NULL;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_backend_host_create(&host));
    GS_ASSERT_OK(gs_backend_create("cuda", 0, &dev));
    GS_ASSERT_OK(gs_config_create(&cfg));
    for (const char *const *s = settings; *s; s++) GS_ASSERT_OK(gs_config_set(cfg, *s));
    /* exact triangular solves on both sides */
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=levelset"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=levelset"));
    GS_ASSERT_OK(gs_test_convdiff2d(53, 47, 1.5, &A)); /* n = 2491: not a multiple of 32 */
    gs_int n = A.nrows;
    double *r = NULL, *zh = NULL, *zd = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(zh, n));
    GS_ASSERT_OK(GS_MALLOC(zd, n));
    uint64_t seed = 77;
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.5;
    apply_on(host, cfg, create, type, &A, r, zh);
    apply_on(dev, cfg, create, type, &A, r, zd);
    double diff = gs_test_rel_diff(n, zd, zh);
    fprintf(stderr, "%s: device vs host rel diff %.3g\n", type, diff);
    assert_true(diff < 1e-12);
    gs_free(&r);
    gs_free(&zh);
    gs_free(&zd);
    gs_csr_free(&A);
    gs_config_destroy(&cfg);
    gs_backend_destroy(&dev);
    gs_backend_destroy(&host);
}

static void test_bilu_device_matches_host(void **state)
{
    (void)state;
    const char *s[] = {"preconditioner.blocks=37", "preconditioner.fill_level=1", NULL};
    compare("bilu", gs_pc_create_bilu, s);
}

static void test_bilut_device_matches_host(void **state)
{
    (void)state;
    const char *s[] = {"preconditioner.blocks=20", "preconditioner.drop_tolerance=1e-3", "preconditioner.max_fill=8",
                       NULL};
    compare("bilut", gs_pc_create_bilut, s);
}

static void test_ras_device_matches_host(void **state)
{
    (void)state;
    const char *s[] = {"preconditioner.blocks=24", "preconditioner.overlap=2", "preconditioner.local=iluk",
                       "preconditioner.fill_level=0", NULL};
    compare("ras", gs_pc_create_ras, s);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bilu_device_matches_host),
        cmocka_unit_test(test_bilut_device_matches_host),
        cmocka_unit_test(test_ras_device_matches_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
