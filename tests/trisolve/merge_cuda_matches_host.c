/* The merged-level transformation built on the GPU (merge_cuda.cu, through the same steps as the sync-free
 * solver's analysis: T's level plan, row levels, the builder) against the host twin (merge_ref.c) on the
 * whole case suite for m = 2, 3, 8: T_D and M identical bit for bit (row pointers, columns, values, outputs
 * poisoned by fresh allocations on both sides), the same statistics, and the levels given to the two
 * stages' plans equal to level mod m and level / m of the host plan's levels; and the fill limit refusing
 * exactly when the host twin does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/merge_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

static gs_backend *gpu, *host;

static int setup(void **state)
{
    (void)state;
    return tri_backends_create(&gpu, &host);
}

static int teardown(void **state)
{
    (void)state;
    tri_backends_destroy(&gpu, &host);
    return 0;
}

static void same_csr(const char *what, const tri_case *c, gs_int m, const gs_csr *A, const gs_csr *B)
{
    if (A->nnz != B->nnz) fprintf(stderr, "%s m=%d %s: nnz %d (gpu) vs %d (host)\n", c->name, (int)m, what,
                                  (int)A->nnz, (int)B->nnz);
    assert_int_equal(A->nrows, B->nrows);
    assert_int_equal(A->nnz, B->nnz);
    assert_memory_equal(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof(gs_int));
    if (A->nnz > 0) {
        assert_memory_equal(A->colind, B->colind, (size_t)A->nnz * sizeof(gs_int));
        for (gs_int q = 0; q < A->nnz; q++) {
            if (memcmp(&A->val[q], &B->val[q], sizeof(double)) != 0)
                fprintf(stderr, "%s m=%d %s: entry %d: %.17g (gpu) vs %.17g (host)\n", c->name, (int)m, what, (int)q,
                        A->val[q], B->val[q]);
            assert_memory_equal(&A->val[q], &B->val[q], sizeof(double));
        }
    }
}

static void test_suite(void **state)
{
    (void)state;
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    const gs_int ms[4] = {2, 3, 8, GS_SF_MERGE_MAX}; /* the last: passes without rows where levels < m */
    int grown = 0, refused = 0; /* builds whose passes stopped for a larger pool; refused by the fill */
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        const size_t n = (size_t)c->T.nrows;
        /* every other case starts from a pool of 64 entries, so that the passes stop, the pool grows and
         * they resume (the first guess holds most of the suite's R); under the sanitizers only the cases
         * under 1000 rows do (each growth replays the passes, and every launch is slow there) */
        const long long pool_start = k % 2 && (!gs_test_quick() || n < 1000) ? 64 : 0;
        const double tc = gs_wtime();
        gs_int *stage = NULL, *hlev = NULL; /* the stages' given levels (GPU), T's levels by row (host) */
        gs_ls_plan P;
        memset(&P, 0, sizeof P);
        GS_ASSERT_OK(GS_MALLOC(stage, 2 * n + 1));
        GS_ASSERT_OK(GS_MALLOC(hlev, n + 1));
        GS_ASSERT_OK(gs_ls_plan_build(&c->T, c->uplo, c->unit, 1, &P));
        for (gs_int l = 0; l < P.nlevels; l++)
            for (gs_int p = P.level_ptr[l]; p < P.level_ptr[l + 1]; p++) hlev[P.perm[p]] = l;
        for (int a = 0; a < 4; a++) {
            gs_csr TDg, Mg, TDh, Mh;
            memset(stage, 0xA5, (2 * n + 1) * sizeof(gs_int)); /* poisoned */
            gs_ts_merge_stats sg, sh;
            const long long limit = (long long)GS_SF_MERGE_FILL * ((long long)c->T.nnz + c->T.nrows);
            GS_ASSERT_OK(gs_ts_merge_build_host(&c->T, c->uplo, c->unit, ms[a], limit, &TDh, &Mh, &sh));
            GS_ASSERT_OK(gs_ts_merge_build_gpu(gpu, &c->T, c->uplo, c->unit, ms[a], limit, pool_start, &TDg, &Mg, &sg,
                                                stage));
            assert_int_equal(sg.too_much_fill, sh.too_much_fill);
            assert_int_equal(sg.levels, sh.levels);
            assert_int_equal(sg.groups, sh.groups);
            assert_int_equal(sg.m, sh.m);
            grown += sg.pool_grown > 0 ? 1 : 0;
            refused += sh.too_much_fill ? 1 : 0;
            if (sh.too_much_fill) continue;
            assert_int_equal(sg.nnz_td_off, sh.nnz_td_off);
            assert_int_equal(sg.nnz_r, sh.nnz_r);
            assert_int_equal(sg.max_row_r, sh.max_row_r);
            assert_true(sg.growth == sh.growth);
            same_csr("T_D", c, ms[a], &TDg, &TDh);
            same_csr("M", c, ms[a], &Mg, &Mh);
            /* T_D's plan gets the level inside the group, M's the group */
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(stage[i], hlev[i] % ms[a]);
                assert_int_equal(stage[n + i], hlev[i] / ms[a]);
            }
            gs_csr_free(&TDg);
            gs_csr_free(&Mg);
            gs_csr_free(&TDh);
            gs_csr_free(&Mh);
        }
        gs_free(&stage);
        gs_free(&hlev);
        gs_ls_plan_free(&P);
        if (gs_test_quick()) fprintf(stderr, "  %s: %.2f s\n", c->name, gs_wtime() - tc);
    }
    tri_suite_free(&S);
    fprintf(stderr, "builds whose pool grew: %d, refused: %d\n", grown, refused);
    assert_true(grown > 0);   /* the passes resumed after a pool growth, and matched the host */
    assert_true(refused > 0); /* and refusals matched */
}

/* The fill limit: R's size accepted, one entry less refused, on both sides (a 27-point triangle, m = 4). */
static void test_fill_limit(void **state)
{
    (void)state;
    gs_csr A = {0}, T = {0}, TD, M;
    gs_ts_merge_stats sg, sh;
    GS_ASSERT_OK(gs_gen_laplace27(9, 10, 11, &A));
    GS_ASSERT_OK(tri_from_matrix(&A, GS_UPPER, false, &T));
    GS_ASSERT_OK(gs_ts_merge_build_host(&T, GS_UPPER, false, 4, (long long)1 << 40, &TD, &M, &sh));
    assert_false(sh.too_much_fill);
    const long long need = sh.nnz_r;
    gs_csr_free(&TD);
    gs_csr_free(&M);
    GS_ASSERT_OK(gs_ts_merge_build_gpu(gpu, &T, GS_UPPER, false, 4, need, 0, &TD, &M, &sg, NULL));
    assert_false(sg.too_much_fill);
    assert_int_equal(M.nnz, need);
    gs_csr_free(&TD);
    gs_csr_free(&M);
    GS_ASSERT_OK(gs_ts_merge_build_host(&T, GS_UPPER, false, 4, need - 1, &TD, &M, &sh));
    GS_ASSERT_OK(gs_ts_merge_build_gpu(gpu, &T, GS_UPPER, false, 4, need - 1, 0, &TD, &M, &sg, NULL));
    assert_true(sh.too_much_fill);
    assert_true(sg.too_much_fill);
    assert_null(TD.rowptr);
    assert_null(M.rowptr);
    gs_csr_free(&A);
    gs_csr_free(&T);
}

/* An empty factor: nothing to merge, empty T_D and M on both sides (the GPU builder launches no kernel
 * with zero blocks). */
static void test_empty(void **state)
{
    (void)state;
    gs_csr T = {0}, TD, M, TDh, Mh;
    gs_ts_merge_stats sg, sh;
    GS_ASSERT_OK(gs_csr_alloc(&T, 0, 0, 0, true));
    GS_ASSERT_OK(gs_ts_merge_build_host(&T, GS_LOWER, false, 4, 100, &TDh, &Mh, &sh));
    GS_ASSERT_OK(gs_ts_merge_build_gpu(gpu, &T, GS_LOWER, false, 4, 100, 0, &TD, &M, &sg, NULL));
    assert_int_equal(sg.levels, sh.levels);
    assert_int_equal(sg.groups, sh.groups);
    assert_int_equal(TD.nrows, 0);
    assert_int_equal(M.nrows, 0);
    assert_int_equal(TD.nnz, 0);
    assert_int_equal(M.nnz, 0);
    gs_csr_free(&TD);
    gs_csr_free(&M);
    gs_csr_free(&TDh);
    gs_csr_free(&Mh);
    gs_csr_free(&T);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_fill_limit),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
