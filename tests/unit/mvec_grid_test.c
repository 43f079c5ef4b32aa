/* The launch-shape rules of the cuda backend's Krylov-basis products (core/mvec_grid.h), on the host:
 * every limit of the mdot grid reached and respected, the partial-sum buffer never overrun, the column
 * tiles covering k, and the mgemv launch count. The kernels themselves are compared with the host
 * backend in tests/core/backend_cuda_matches_host.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/mvec_grid.h"

static void check_invariants(gs_int n, gs_int k, int nvec, int sm)
{
    gs_mdot_grid g = gs_mdot_grid_rule(n, k, nvec, sm);
    assert_true(g.row_blocks >= 1);
    assert_true(g.col_tiles >= 1 && g.col_tiles <= GS_MDOT_MAX_TILES);
    assert_int_equal(g.tiles, (k + GS_MDOT_COLS - 1) / GS_MDOT_COLS);
    assert_true(g.col_tiles <= g.tiles);
    /* the partial sums fit the buffer whenever there is more than one row block */
    if (g.row_blocks > 1) assert_true((long long)g.row_blocks * k * nvec <= GS_MDOT_PARTIAL_CAP);
    /* never more blocks along the rows than rows need */
    const long long per_block = (long long)GS_MDOT_THREADS * GS_MDOT_ROWS_PER_THREAD;
    assert_true(g.row_blocks == 1 || (long long)(g.row_blocks - 1) * per_block < n);
}

static void test_small_systems_one_block(void **state)
{
    (void)state;
    /* 1030 rows, 30 columns on 132 SMs: 2 row blocks (1024 rows per block), 4 tiles */
    gs_mdot_grid g = gs_mdot_grid_rule(1030, 30, 1, 132);
    assert_int_equal(g.row_blocks, 2);
    assert_int_equal(g.tiles, 4);
    assert_int_equal(g.col_tiles, 4);
    g = gs_mdot_grid_rule(1000, 1, 1, 132);
    assert_int_equal(g.row_blocks, 1); /* the first kernel writes h itself */
    assert_int_equal(g.tiles, 1);
    g = gs_mdot_grid_rule(1, 9, 1, 132);
    assert_int_equal(g.row_blocks, 1);
    assert_int_equal(g.tiles, 2);
}

static void test_large_systems_capped(void **state)
{
    (void)state;
    /* 10^6 rows, 31 columns: 4 tiles; the occupancy limit 8 x 132 / 4 = 264 blocks along the rows */
    gs_mdot_grid g = gs_mdot_grid_rule(1000000, 31, 1, 132);
    assert_int_equal(g.tiles, 4);
    assert_int_equal(g.row_blocks, 264);
    /* 200 columns: 25 tiles, occupancy 42, partial sums 16384 / 200 = 81 -> 42 */
    g = gs_mdot_grid_rule(1000000, 200, 1, 132);
    assert_int_equal(g.row_blocks, 42);
    /* 1500 columns: the partial-sum limit 16384 / 1500 = 10 (occupancy 1056 / 188 = 5 -> 5) */
    g = gs_mdot_grid_rule(1000000, 1500, 1, 132);
    assert_int_equal(g.row_blocks, 5);
    /* 3000 columns on 1000 SMs: occupancy 8000 / 375 = 21, partial sums 16384 / 3000 = 5 */
    g = gs_mdot_grid_rule(1000000, 3000, 1, 1000);
    assert_int_equal(g.row_blocks, 5);
    /* more columns than the buffer holds partial sums for: one block along the rows, writing h */
    g = gs_mdot_grid_rule(1000000, 20000, 1, 132);
    assert_int_equal(g.row_blocks, 1);
    /* more tiles than grid.y allows: the blocks loop over them */
    g = gs_mdot_grid_rule(100, 600000, 1, 132);
    assert_int_equal(g.tiles, 75000);
    assert_int_equal(g.col_tiles, GS_MDOT_MAX_TILES);
}

/* mdot2 leaves twice the partial sums: the buffer limit halves row_blocks where it binds */
static void test_two_vectors(void **state)
{
    (void)state;
    gs_mdot_grid g = gs_mdot_grid_rule(1000000, 31, 2, 132); /* occupancy binds: as for one vector */
    assert_int_equal(g.row_blocks, 264);
    assert_int_equal(g.tiles, 4);
    g = gs_mdot_grid_rule(1000000, 1500, 2, 132); /* 16384 / 3000 = 5, occupancy 5 */
    assert_int_equal(g.row_blocks, 5);
    g = gs_mdot_grid_rule(1000000, 200, 2, 132); /* 16384 / 400 = 40 < occupancy 42 */
    assert_int_equal(g.row_blocks, 40);
    g = gs_mdot_grid_rule(1000000, 10000, 2, 132); /* 20000 sums: one block along the rows */
    assert_int_equal(g.row_blocks, 1);
}

static void test_degenerate_inputs(void **state)
{
    (void)state;
    gs_mdot_grid g = gs_mdot_grid_rule(0, 5, 1, 132);
    assert_int_equal(g.row_blocks, 1);
    g = gs_mdot_grid_rule(1000, 5, 1, 0); /* an unknown SM count counts as one */
    assert_int_equal(g.row_blocks, 1);
    g = gs_mdot_grid_rule(100000, 5, 1, 0);
    assert_int_equal(g.row_blocks, 8);
}

static void test_invariants_sweep(void **state)
{
    (void)state;
    static const gs_int ns[] = {1, 31, 33, 1000, 1025, 100003, 1000000, 2000000000};
    static const gs_int ks[] = {1, 7, 8, 9, 31, 64, 65, 200, 1500, 16384, 16385, 600000};
    static const int sms[] = {1, 16, 132, 1000};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
            for (size_t c = 0; c < sizeof sms / sizeof sms[0]; c++)
                for (int nvec = 1; nvec <= 2; nvec++) check_invariants(ns[a], ks[b], nvec, sms[c]);
}

static void test_mgemv_launches(void **state)
{
    (void)state;
    assert_int_equal(gs_mgemv_launches(0), 0);
    assert_int_equal(gs_mgemv_launches(1), 1);
    assert_int_equal(gs_mgemv_launches(GS_MGEMV_COLS), 1);
    assert_int_equal(gs_mgemv_launches(GS_MGEMV_COLS + 1), 2);
    assert_int_equal(gs_mgemv_launches(1500), (1500 + GS_MGEMV_COLS - 1) / GS_MGEMV_COLS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_systems_one_block),
        cmocka_unit_test(test_large_systems_capped),
        cmocka_unit_test(test_degenerate_inputs),
        cmocka_unit_test(test_invariants_sweep),
        cmocka_unit_test(test_mgemv_launches),
        cmocka_unit_test(test_two_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
