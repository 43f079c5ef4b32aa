/* The triangular solvers' parameters and the sync-free solver's rules on the host (syncfree_rules.c):
 * setting fields by name and refusing bad ones; what the parameters force (schedule, levels per group);
 * the kernel instance, the lanes per row and the grid of the documented rule on the shapes of the
 * benchmark factors, and each parameter forcing its choice; the merged schedule's first stage. */
#include <string.h>

#include "testutil.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve.h"

/* params_set: names, values, and the field each sets; bad names and values refused with their name */
static void test_params_set(void **state)
{
    gs_trisolve_params p = gs_trisolve_params_default();
    assert_int_equal(p.sweeps, 3);
    assert_string_equal(p.block_order, "dependency");
    assert_int_equal(p.syncfree.schedule, GS_SF_SCHEDULE_AUTO);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.schedule=merged", NULL));
    assert_int_equal(p.syncfree.schedule, GS_SF_SCHEDULE_MERGED);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.schedule", "wruns"));
    assert_int_equal(p.syncfree.schedule, GS_SF_SCHEDULE_WRUNS);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.merge_levels=3", NULL));
    assert_int_equal(p.syncfree.merge_levels, 3);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.warps_per_sm=8", NULL));
    assert_int_equal(p.syncfree.warps_per_sm, 8);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.lanes_per_row=2", NULL));
    assert_int_equal(p.syncfree.lanes_per_row, 2);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.ell6=0", NULL));
    assert_int_equal(p.syncfree.ell6, GS_TS_OFF);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.rem_prefetch=1", NULL));
    assert_int_equal(p.syncfree.rem_prefetch, GS_TS_ON);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.once=on", NULL));
    assert_int_equal(p.syncfree.once, GS_TS_ON);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.td_sync=off", NULL));
    assert_int_equal(p.syncfree.td_sync, GS_TS_OFF);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.td_one_pass=0", NULL));
    assert_int_equal(p.syncfree.td_one_pass, GS_TS_OFF);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.td_fold=auto", NULL));
    assert_int_equal(p.syncfree.td_fold, GS_TS_AUTO);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "syncfree.merge_pool_start=64", NULL));
    assert_int_equal(p.syncfree.merge_pool_start, 64);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "analysis.level_blocks_per_sm=6", NULL));
    assert_int_equal(p.analysis.level_blocks_per_sm, 6);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "tiled.variant=levelset", NULL));
    assert_int_equal(p.tiled.variant, GS_TILED_LEVELSET);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "jacobi.lanes=16", NULL));
    assert_int_equal(p.jacobi.lanes, 16);
    GS_ASSERT_OK(gs_trisolve_params_set(&p, "jacobi.ell=1", NULL));
    assert_int_equal(p.jacobi.ell, GS_TS_ON);

    const gs_trisolve_params before = p;
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.schedule=chunked", NULL), GS_ERR_ARG,
                    "syncfree.schedule = 'chunked'; expected auto, levels, merged, wruns or runs");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.merge_levels=8x", NULL), GS_ERR_ARG,
                    "syncfree.merge_levels = '8x'; expected an integer in 0..64");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.merge_levels=65", NULL), GS_ERR_ARG, "merge_levels");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.warps_per_sm=3", NULL), GS_ERR_ARG,
                    "syncfree.warps_per_sm is 3; expected 4..64");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.lanes_per_row=3", NULL), GS_ERR_ARG, "lanes_per_row is 3");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.once=maybe", NULL), GS_ERR_ARG, "expected auto, on or off");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "tiled.variant=sync-free", NULL), GS_ERR_ARG,
                    "tiled.variant = 'sync-free'; expected auto, levelset or syncfree");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "jacobi.lanes=3", NULL), GS_ERR_ARG, "jacobi.lanes is 3");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "jacobi.ell=2", NULL), GS_ERR_ARG, "jacobi.ell = '2'");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.speed=11", NULL), GS_ERR_ARG,
                    "unknown trisolve parameter 'syncfree.speed'");
    GS_ASSERT_FAILS(gs_trisolve_params_set(&p, "syncfree.once", NULL), GS_ERR_ARG, "expected name=value");
    assert_memory_equal(&p, &before, sizeof p); /* a refused setting changes nothing */

    /* the check of a whole struct, as gs_trisolve_create runs it */
    gs_trisolve_params q = gs_trisolve_params_default();
    GS_ASSERT_OK(gs_trisolve_params_check(&q));
    q.syncfree.schedule = (gs_sf_schedule)9;
    GS_ASSERT_FAILS(gs_trisolve_params_check(&q), GS_ERR_ARG, "syncfree.schedule is 9");
    q = gs_trisolve_params_default();
    q.sweeps = -1;
    GS_ASSERT_FAILS(gs_trisolve_params_check(&q), GS_ERR_ARG, "trisolve sweeps is -1; expected >= 0");
}

/* what the parameters force: rows per run and levels per group */
static void test_forced(void **state)
{
    gs_syncfree_params p;
    memset(&p, 0, sizeof p);
    assert_int_equal(gs_sf_forced_run_rows(&p), 0);
    assert_int_equal(gs_sf_forced_merge_levels(&p), 0);
    p.schedule = GS_SF_SCHEDULE_LEVELS;
    assert_int_equal(gs_sf_forced_run_rows(&p), 1);
    assert_int_equal(gs_sf_forced_merge_levels(&p), 1);
    p.schedule = GS_SF_SCHEDULE_RUNS;
    assert_int_equal(gs_sf_forced_run_rows(&p), GS_SF_RUN_ROWS);
    assert_int_equal(gs_sf_forced_merge_levels(&p), 1);
    p.schedule = GS_SF_SCHEDULE_WRUNS;
    assert_int_equal(gs_sf_forced_run_rows(&p), GS_SF_WRUN_ROWS);
    assert_int_equal(gs_sf_forced_merge_levels(&p), 1);
    p.schedule = GS_SF_SCHEDULE_MERGED;
    assert_int_equal(gs_sf_forced_run_rows(&p), 1);
    assert_int_equal(gs_sf_forced_merge_levels(&p), GS_SF_MERGE_DEFAULT);
    p.merge_levels = 8;
    assert_int_equal(gs_sf_forced_merge_levels(&p), 8);
}

static gs_sf_plan_shape shape(gs_int run_rows, gs_int ell_width, gs_int nunits, gs_int nlevels, bool rem, int sms)
{
    gs_sf_plan_shape s;
    s.run_rows = run_rows;
    s.ell_width = ell_width;
    s.nunits = nunits;
    s.npos = run_rows == GS_SF_WRUN_ROWS ? nunits * GS_SF_WRUN_ROWS : nunits;
    s.nlevels = nlevels;
    s.rem = rem;
    s.sms = sms;
    return s;
}

/* the grid of a shape under parameters p, with `resident` blocks per multiprocessor */
static gs_sf_grid grid(const gs_sf_plan_shape *s, const gs_syncfree_params *p, int resident)
{
    gs_sf_grid g;
    memset(&g, 0xA5, sizeof g);
    gs_sf_kernel_rule(s, p, &g);
    gs_sf_grid_rule(s, p, resident, &g);
    return g;
}

/* the documented rule on the shapes of the benchmark factors (132 multiprocessors, an H100) */
static void test_grid_rule(void **state)
{
    gs_syncfree_params p;
    memset(&p, 0, sizeof p);
    /* poisson3d 100^3 L, warp runs: ELL 3 -> 4 slots, 16 warps per SM */
    gs_sf_plan_shape s = shape(GS_SF_WRUN_ROWS, 3, 40000, 202, false, 132);
    gs_sf_grid g = grid(&s, &p, 16);
    assert_int_equal(g.wmax, 4);
    assert_int_equal(g.lpr, 1);
    assert_int_equal(g.blocks, 132 * GS_SF_WR_WARPS_PER_SM / 4);
    assert_false(g.rem_prefetch || g.once);
    /* laplace27 64^3 L, warp runs: rows of 13 -> 16 slots, 4 warps per SM; at most the resident blocks */
    s = shape(GS_SF_WRUN_ROWS, 13, 10000, 380, false, 132);
    g = grid(&s, &p, 16);
    assert_int_equal(g.wmax, 16);
    assert_int_equal(g.blocks, 132 * GS_SF_WR_WARPS_PER_SM_WIDE / 4);
    p.warps_per_sm = 32; /* forced: 8 blocks, capped by residency */
    g = grid(&s, &p, 6);
    assert_int_equal(g.blocks, 132 * 6);
    memset(&p, 0, sizeof p);
    /* a small plan: one block per chunk of 4 runs at most */
    s = shape(GS_SF_WRUN_ROWS, 3, 10, 70, false, 132);
    assert_int_equal(grid(&s, &p, 16).blocks, 3);

    /* level order, 27-point rows (13 entries, 593 rows per level): 4 lanes per row, 12 warps per SM */
    s = shape(1, 13, 262144, 442, true, 132);
    g = grid(&s, &p, 16);
    assert_int_equal(g.wmax, 16);
    assert_int_equal(g.lpr, 4);
    assert_int_equal(g.blocks, 132 * GS_SF_WARPS_PER_SM / 4);
    assert_true(g.rem_prefetch); /* 262144 positions > 4 x the 50688 lanes */
    assert_false(g.once);
    /* merged M of poisson2d 1024^2 (rows up to 17 entries, ELL 16, 8192 rows per level): 2 lanes per row */
    s = shape(1, 16, 1048576, 128, true, 132);
    g = grid(&s, &p, 16);
    assert_int_equal(g.lpr, 2);
    assert_true(g.rem_prefetch);
    /* wide rows in one lane (forced): 4 warps per SM */
    p.lanes_per_row = 1;
    g = grid(&s, &p, 16);
    assert_int_equal(g.lpr, 1);
    assert_int_equal(g.blocks, 132 * GS_SF_WARPS_PER_SM_WIDE / 4);
    p.lanes_per_row = 4;
    assert_int_equal(grid(&s, &p, 16).lpr, 4);
    s.ell_width = 4; /* forced lanes only for rows of more than 4 entries */
    assert_int_equal(grid(&s, &p, 16).lpr, 1);
    memset(&p, 0, sizeof p);

    /* the kernel instance by ELL width; no 6-slot kernel when the parameters refuse it */
    s = shape(1, 5, 100000, 300, false, 132);
    assert_int_equal(grid(&s, &p, 16).wmax, 6);
    p.ell6 = GS_TS_OFF;
    assert_int_equal(grid(&s, &p, 16).wmax, 8);
    memset(&p, 0, sizeof p);
    s.ell_width = 0;
    assert_int_equal(grid(&s, &p, 16).wmax, 4);
    s = shape(GS_SF_RUN_ROWS, 9, 100000, 300, false, 132);
    g = grid(&s, &p, 16);
    assert_int_equal(g.wmax, GS_SF_RUN_ELL);
    assert_int_equal(g.lpr, 1);

    /* cage10-like (11397 rows, 50 levels, a remainder): the grid holds every row, so no early remainder */
    s = shape(1, 16, 11397, 50, true, 132);
    g = grid(&s, &p, 16);
    assert_false(g.rem_prefetch);
    p.rem_prefetch = GS_TS_ON;
    assert_true(grid(&s, &p, 16).rem_prefetch);
    p.rem_prefetch = GS_TS_OFF;
    s = shape(1, 13, 262144, 442, true, 132);
    assert_false(grid(&s, &p, 16).rem_prefetch);
    memset(&p, 0, sizeof p);

    /* the first stage of poisson2d's merged schedule: 16 levels of 65536 rows, no remainder -> a block per
     * 128 positions */
    s = shape(1, 2, 1048576, 16, false, 132);
    g = grid(&s, &p, 16);
    assert_true(g.once);
    assert_int_equal(g.blocks, 1048576 / GS_SF_BLOCK);
    assert_false(g.rem_prefetch);
    p.once = GS_TS_OFF;
    g = grid(&s, &p, 16);
    assert_false(g.once);
    assert_int_equal(g.blocks, 132 * GS_SF_WARPS_PER_SM / 4);
    /* forced on where it applies; never with a remainder or lanes per row */
    p.once = GS_TS_ON;
    s = shape(1, 3, 1000000, 298, false, 132);
    assert_true(grid(&s, &p, 16).once);
    s.rem = true;
    assert_false(grid(&s, &p, 16).once);
}

/* the merged schedule's first stage */
static void test_td_rule(void **state)
{
    gs_syncfree_params p;
    gs_sf_grid m;
    gs_sf_td_shape s;
    gs_sf_td_choice c;
    memset(&p, 0, sizeof p);
    memset(&m, 0, sizeof m);
    m.lpr = 1;
    s.td_levels = 2;
    s.td_ell_width = 3;
    s.td_rem = false;
    s.same_positions = true;
    s.m_run_rows = 1;
    s.m = &m;
    gs_sf_td_rule(&s, &p, &c); /* the 3D factors, m = 2: folded */
    assert_true(c.sync && c.one_pass && c.fold);
    s.td_ell_width = GS_SF_FOLD_MAX + 1;
    gs_sf_td_rule(&s, &p, &c); /* rows too long to fold: one launch */
    assert_true(c.sync && c.one_pass && !c.fold);
    s.td_ell_width = 3;
    m.rem_prefetch = true;
    gs_sf_td_rule(&s, &p, &c);
    assert_false(c.fold);
    m.rem_prefetch = false;
    p.td_fold = GS_TS_OFF;
    gs_sf_td_rule(&s, &p, &c);
    assert_true(c.one_pass && !c.fold);
    p.td_one_pass = GS_TS_OFF;
    gs_sf_td_rule(&s, &p, &c);
    assert_true(c.sync && !c.one_pass && !c.fold);
    memset(&p, 0, sizeof p);
    s.td_levels = 4; /* a launch per level */
    gs_sf_td_rule(&s, &p, &c);
    assert_true(c.sync && !c.one_pass && !c.fold);
    s.td_levels = 16; /* poisson2d, m = 16: sync-free */
    gs_sf_td_rule(&s, &p, &c);
    assert_false(c.sync || c.one_pass || c.fold);
    p.td_sync = GS_TS_ON;
    gs_sf_td_rule(&s, &p, &c);
    assert_true(c.sync && !c.one_pass);
    p.td_sync = GS_TS_OFF;
    s.td_levels = 2;
    gs_sf_td_rule(&s, &p, &c);
    assert_false(c.sync || c.one_pass || c.fold);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_set),
        cmocka_unit_test(test_forced),
        cmocka_unit_test(test_grid_rule),
        cmocka_unit_test(test_td_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
