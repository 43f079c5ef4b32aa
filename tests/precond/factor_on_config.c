/* preconditioner.factor_on on the host backend (no GPU needed): "device" is refused naming the key,
 * "auto" and "host" factor on the host and say so in the report; the GPU factorization entry points
 * refuse a host backend (or, in a build without CUDA, say the build cannot do it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/factor.h"
#include "precond/factor_cuda.h"
#include "precond/precond.h"

static void test_device_refused_on_host_backend(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(9, 8, &A));
    pc_fixture_set(f, "preconditioner.factor_on=device");
    const char *types[] = {"ilu0", "iluk", "ic0", "ilut"};
    for (int t = 0; t < 4; t++) {
        gs_pc *pc = NULL;
        GS_ASSERT_OK(gs_pc_create(types[t], f->be, f->cfg, &pc));
        GS_ASSERT_FAILS(gs_pc_setup_symbolic(pc, &A), GS_ERR_CONFIG, "preconditioner.factor_on = \"device\"");
        gs_pc_destroy(&pc);
    }
    gs_csr_free(&A);
}

static void test_auto_and_host_factor_on_host(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_laplace2d(9, 8, &A));
    const char *where[] = {"preconditioner.factor_on=auto", "preconditioner.factor_on=host"};
    const char *types[] = {"ilu0", "ic0", "ilut"};
    for (int w = 0; w < 2; w++) {
        pc_fixture_set(f, where[w]);
        for (int t = 0; t < 3; t++) {
            gs_pc *pc = NULL;
            gs_report *rep = NULL;
            GS_ASSERT_OK(gs_pc_create(types[t], f->be, f->cfg, &pc));
            GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
            GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
            GS_ASSERT_OK(gs_report_create(&rep));
            gs_pc_view(pc, rep);
            const gs_report_entry *e = gs_report_find(rep, "preconditioner.factor_on");
            assert_non_null(e);
            assert_string_equal(e->s, "host");
            assert_null(gs_report_find(rep, "preconditioner.time_factor_kernel"));
            gs_report_destroy(&rep);
            gs_pc_destroy(&pc);
        }
    }
    gs_csr_free(&A);
}

static void test_key_choices(void **state)
{
    pc_fixture *f = *state;
    assert_string_equal(gs_config_string(f->cfg, "preconditioner.factor_on"), "auto");
    GS_ASSERT_FAILS(gs_config_set(f->cfg, "preconditioner.factor_on=gpu"), GS_ERR_CONFIG, "factor_on");
}

/* The GPU entry points with a host backend: refused before any device work, outputs as documented. */
static void test_gpu_entry_points_refuse_host_backend(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, L = {0}, U = {0}, F = {0}, FT = {0};
    gs_factor_info info;
    gs_factor_cuda_times t;
    GS_ASSERT_OK(gs_test_laplace2d(6, 5, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
#ifdef GS_HAVE_CUDA
    assert_true(gs_factor_cuda_available());
    GS_ASSERT_FAILS(gs_ilu_numeric_cuda(f->be, &A, NULL, &L, &U, &info, &t, NULL), GS_ERR_ARG, "needs the cuda backend");
    GS_ASSERT_FAILS(gs_ic0_numeric_cuda(f->be, &A, NULL, NULL, &F, &FT, &info, &t, NULL), GS_ERR_ARG, "needs the cuda backend");
#else
    assert_false(gs_factor_cuda_available());
    GS_ASSERT_FAILS(gs_ilu_numeric_cuda(f->be, &A, NULL, &L, &U, &info, &t, NULL), GS_ERR_UNSUPPORTED, "without CUDA");
    GS_ASSERT_FAILS(gs_ic0_numeric_cuda(f->be, &A, NULL, NULL, &F, &FT, &info, &t, NULL), GS_ERR_UNSUPPORTED, "without CUDA");
#endif
    assert_null(L.val);
    assert_null(U.val);
    assert_null(F.rowptr);
    assert_null(FT.rowptr);
    assert_true(t.kernel == 0.0 && t.upload == 0.0 && t.download == 0.0);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_device_refused_on_host_backend),
        PC_FIXTURE_TEST(test_auto_and_host_factor_on_host),
        PC_FIXTURE_TEST(test_key_choices),
        PC_FIXTURE_TEST(test_gpu_entry_points_refuse_host_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
