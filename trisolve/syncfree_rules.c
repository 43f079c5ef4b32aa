/* The sync-free solver's rules (syncfree_kernels.h), pure host functions: the schedule after T's row
 * levels, the levels per group of the merged schedule, what the parameters force, the kernel instance and
 * its grid, and the form of the merged schedule's first stage. syncfree_cuda.cu applies them to the plans
 * its analysis builds on the GPU; tests/trisolve/syncfree_rules_test.c checks them on the host. */
#include "trisolve/syncfree_kernels.h"

/* ---------------------------------------------------------------- the schedule
 *
 * syncfree on cuda runs one of these schedules (syncfree_kernels.h): "levels" (a thread per row, rows in
 * level order), "merged" (two level-order solves, T = T_D + T_O, m levels per group: the merge rule below),
 * "wruns" (a warp per run of up to 32 consecutive rows, each reading the row before it, the run's
 * recurrence solved by a scan over the lanes) and "runs" (a thread per run of 4; slower than the level
 * order on the benchmark factors, forced by the parameters only). The cost of each is about
 * (levels of its units) x (one cross-SM hop) while the grid keeps up; warp runs cut the levels where rows
 * read their predecessor, i.e. along the grid lines of a PDE factor in natural order (3D 7-point 100^3:
 * 202 run levels for 298 row levels; 2D 5-point 1024^2: 1055 for 2047), merging cuts them by m.
 *
 * Rule (docs/notes-trisolve.md sections 4.4 and 5): warp runs when the factor has a long critical path
 * (at least 64 row levels), at least GS_SF_WRUN_MIN_LINKED of its rows linked by the strict link (a run
 * then averages many rows and holes cost at most 4.1 n positions), no row of more than GS_SF_WRUN_MAX_ROW
 * off-diagonal entries (the kernel's ELL slots), and merging does not pay more than m = 2 (the merge rule's
 * m for wide levels). H100, L us: poisson3d 100^3 133 with warp runs against 179 in the level order;
 * laplace27 64^3 (rows of 13, 4 warps per SM) 250 against 302. Not chosen: poisson2d 1024^2, whose
 * merged schedule (m = 16, 16 + 128 levels, 261 us) walks fewer levels than its 1055 run levels. */

gs_int gs_ts_syncfree_rule(const gs_ts_row_stats *s, gs_int nlevels, gs_int merge_m)
{
    if (s->n <= 0 || nlevels < 64 || merge_m > 2 || s->max_row_length > GS_SF_WRUN_MAX_ROW) return 1;
    if ((double)s->linked_rows < GS_SF_WRUN_MIN_LINKED * (double)s->n) return 1;
    return GS_SF_WRUN_ROWS;
}

gs_int gs_ts_syncfree_merge_rule(gs_int n, gs_int levels, gs_int max_row_length)
{
    /* Merging pays where the level order pays many thin levels and the fill of R stays small (short rows);
     * H100, bench_trisolve --merge-stages (docs/notes-trisolve.md section 4.3,
     * docs/results/trisolve_merge_stages_h100.txt):
     *   poisson2d 1024^2 (2047 levels of 512 rows, 2 entries per row): L+U 2654 us in the level order,
     *     1079 with m = 4, 832 with m = 8, 786 with m = 16;
     *   poisson3d / convdiff3d 100^3 (298 levels of 3356 rows), both solves sync-free: no gain (m = 2, 4:
     *     485-504 against 489 us; m = 8: 1505: the second solve's wide levels cost ~2.6 us each);
     *   laplace27 64^3 (13 entries per row): R's fill makes it slower at every m (m = 2: 2575 against
     *     1004 us).
     * m is chosen so that a level of M holds ~8192 rows (2D: 16). With wide levels (3D) m = 2, where the
     * first solve (2 levels) runs level-synchronously (syncfree_cuda.cu) and the second has half the levels:
     * poisson3d / convdiff3d L+U 438 us, against 485 with a sync-free first stage (m = 3: 479, m = 4: 473).
     * (Where the rows are strictly linked, gs_ts_syncfree_rule takes warp runs instead.) */
    if (n <= 0 || levels < 64 || max_row_length > 4) return 1;
    if ((double)n / (double)levels > 1024.0) return 2;
    const double want = 8192.0 * (double)levels / (double)n;
    gs_int m = 2;
    while (m < GS_SF_MERGE_RULE_MAX && (double)m * 1.4142 < want) m *= 2; /* the power of two nearest want */
    return m;
}

gs_int gs_sf_forced_run_rows(const gs_syncfree_params *p)
{
    switch (p->schedule) {
    case GS_SF_SCHEDULE_LEVELS:
    case GS_SF_SCHEDULE_MERGED: return 1; /* merged: its two solves */
    case GS_SF_SCHEDULE_RUNS: return GS_SF_RUN_ROWS;
    case GS_SF_SCHEDULE_WRUNS: return GS_SF_WRUN_ROWS;
    case GS_SF_SCHEDULE_AUTO: break;
    }
    return 0;
}

gs_int gs_sf_forced_merge_levels(const gs_syncfree_params *p)
{
    if (p->schedule == GS_SF_SCHEDULE_AUTO) return 0; /* the rule decides */
    if (p->schedule != GS_SF_SCHEDULE_MERGED) return 1;
    return p->merge_levels > 0 ? p->merge_levels : GS_SF_MERGE_DEFAULT;
}

/* ---------------------------------------------------------------- the kernel and its grid
 *
 * Persistent warps per multiprocessor (capped by occupancy). H100, level-order and merged schedules, L+U us
 * with 8 / 12 / 16 warps: poisson3d 356.5 / 349.4 / 374.5, poisson2d 582.7 / 563.8 / 584.5, laplace27
 * 719.4 / 717.7 / 735.6 (convdiff3d 357.2 / 350.5 with 8 / 12): GS_SF_WARPS_PER_SM. More than 8 ELL
 * entries per row in one lane: fewer pollers (laplace27 L: 527 us with 4 warps per SM, 589 with 8):
 * GS_SF_WARPS_PER_SM_WIDE. Warp runs: 16 warps per SM for rows of at most 4 ELL entries (probe, 3D: 545 us
 * with 1, 149 with 16), 4 for wider rows, whose polls load L2 (probe: laplace27 best at 4).
 *
 * Lanes per row (sf_split_chunk) of a level-order plan. Rows of more than 8 ELL entries: 4 lanes when a
 * grid of GS_SF_LANES_RULE_WARPS warps per multiprocessor then still holds two average levels, else 2 (the
 * more lanes per row, the fewer polls per lane and round, but the fewer rows in flight). H100, L+U us with
 * 1 / 2 / 4 lanes per row, level width 593 / 8192 rows: laplace27 64^3 in the level order (13 entries)
 * 1003 / 807 / 753; poisson2d 1024^2 merged M (up to 17) 733 / 688 / 785. The parameters force 1, 2 or 4
 * for rows of more than 4 entries. */

static int lanes_rule(const gs_sf_plan_shape *s, const gs_syncfree_params *p)
{
    if (s->run_rows != 1) return 1;
    if (p->lanes_per_row > 0) {
        const int k = p->lanes_per_row;
        return s->ell_width > 4 && (k == 2 || k == 4) ? k : 1;
    }
    if (s->ell_width <= 8 || s->nlevels < 1) return 1;
    const double avg = (double)s->nunits / (double)s->nlevels, lanes = 32.0 * GS_SF_LANES_RULE_WARPS * s->sms;
    return lanes / 4.0 >= 2.0 * avg ? 4 : 2;
}

void gs_sf_kernel_rule(const gs_sf_plan_shape *s, const gs_syncfree_params *p, gs_sf_grid *g)
{
    g->lpr = 1;
    g->rem_prefetch = false;
    g->once = false;
    g->blocks = 1;
    if (s->run_rows == GS_SF_WRUN_ROWS) {
        g->wmax = s->ell_width <= 4 ? 4 : s->ell_width <= 8 ? 8 : 16;
        return;
    }
    /* entry slots of the kernel: each slot costs instructions in every polling round, idle or not */
    const bool six = p->ell6 != GS_TS_OFF;
    g->wmax = s->run_rows > 1              ? GS_SF_RUN_ELL
              : s->ell_width <= 4          ? 4
              : s->ell_width <= 6 && six   ? 6
              : s->ell_width <= 8          ? 8
                                           : 16;
    g->lpr = lanes_rule(s, p);
}

/* Blocks of the persistent grid: want_warps per multiprocessor (the parameters' when they force at least one
 * block), at most resident_per_sm blocks (when known) and at least one per SM, at most one per chunk of
 * need blocks. */
static int persistent_blocks(const gs_sf_plan_shape *s, const gs_syncfree_params *p, int resident_per_sm,
                             int want_warps, long long need)
{
    const int per_block = GS_SF_BLOCK / 32;
    long long want = want_warps / per_block;
    if (p->warps_per_sm >= per_block) want = p->warps_per_sm / per_block;
    if (resident_per_sm > 0 && want > resident_per_sm) want = resident_per_sm;
    if (want < 1) want = 1;
    long long blocks = (long long)s->sms * want;
    if (blocks > need) blocks = need;
    if (blocks < 1) blocks = 1;
    return (int)blocks;
}

void gs_sf_grid_rule(const gs_sf_plan_shape *s, const gs_syncfree_params *p, int resident_per_sm, gs_sf_grid *g)
{
    const long long per_block = GS_SF_BLOCK / 32;
    g->rem_prefetch = false;
    g->once = false;
    if (s->run_rows == GS_SF_WRUN_ROWS) { /* warp runs: a warp per run */
        const int want = g->wmax == 4 ? GS_SF_WR_WARPS_PER_SM : GS_SF_WR_WARPS_PER_SM_WIDE;
        g->blocks = persistent_blocks(s, p, resident_per_sm, want, ((long long)s->nunits + per_block - 1) / per_block);
        return;
    }
    const int want = g->wmax > 8 && g->lpr == 1 ? GS_SF_WARPS_PER_SM_WIDE : GS_SF_WARPS_PER_SM;
    const long long per_chunk = 32 / g->lpr;
    const long long chunks = ((long long)s->nunits + per_chunk - 1) / per_chunk;
    g->blocks = persistent_blocks(s, p, resident_per_sm, want, (chunks + per_block - 1) / per_block);
    /* The remainder's first entries polled with the ELL part (RP of sf_chunk / sf_split_chunk, whatever the
     * lanes per row) when the rows come in a wavefront (more than GS_SF_REM_PREFETCH_WAVES times the rows
     * the grid holds at once): a row with a few entries past the ELL width then costs no extra round trip
     * on its level (poisson2d 1024^2 merged m = 16: L+U 734 us with it, 784 without). When the grid holds
     * (nearly) every row at once, every row polls from the start and the extra polls only load L2 (cage10:
     * 152 us with it, 141 without), so not there. */
    g->rem_prefetch = s->run_rows == 1 && s->rem &&
                      (p->rem_prefetch != GS_TS_AUTO
                           ? p->rem_prefetch == GS_TS_ON
                           : (long long)s->npos > GS_SF_REM_PREFETCH_WAVES * 32LL * g->blocks * per_block);
    /* Wide levels: when the average level holds more rows than the persistent grid, a block per GS_SF_BLOCK
     * positions (sf_once_kernel; rows of a lane each, no remainder). */
    const double avg = s->nlevels > 0 ? (double)s->nunits / (double)s->nlevels : 0.0;
    const double in_flight = (double)g->blocks * (double)(GS_SF_BLOCK / g->lpr);
    g->once = s->run_rows == 1 && g->lpr == 1 && !s->rem &&
              (p->once != GS_TS_AUTO ? p->once == GS_TS_ON : avg > in_flight);
    if (g->once) {
        g->blocks = (int)(((long long)s->npos + GS_SF_BLOCK - 1) / GS_SF_BLOCK);
        g->rem_prefetch = false;
    }
}

/* ---------------------------------------------------------------- the merged schedule's first stage
 *
 * T_D has m levels of ~n/m rows: a plain launch per level (no flags, no tickets) for at most
 * GS_SF_TD_SYNC_LEVELS levels, one launch for two (sf_td2_kernel: m = 2, the rule's choice on the 3D
 * factors), and folded into M's kernel where T_D's rows are short (H100, poisson3d with the merged schedule
 * forced, L+U: 375 us folded, 430 with a launch of its own for the first stage). */
void gs_sf_td_rule(const gs_sf_td_shape *s, const gs_syncfree_params *p, gs_sf_td_choice *c)
{
    const gs_sf_grid *M = s->m;
    c->sync = p->td_sync != GS_TS_AUTO ? p->td_sync == GS_TS_ON : s->td_levels <= GS_SF_TD_SYNC_LEVELS;
    c->one_pass = c->sync && s->td_levels <= 2 && p->td_one_pass != GS_TS_OFF;
    /* T_D folded into M's kernel: no first launch and no y; the M rows read b and the fold table */
    c->fold = c->one_pass && p->td_fold != GS_TS_OFF && !s->td_rem && s->td_ell_width <= GS_SF_FOLD_MAX &&
              s->same_positions && s->m_run_rows == 1 && M->lpr == 1 && !M->rem_prefetch && !M->once;
}
