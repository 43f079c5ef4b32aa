/* The launch-shape rules of the cuda backend's Krylov-basis products (core/mvec_grid.h). */
#include "core/mvec_grid.h"

gs_mdot_grid gs_mdot_grid_rule(gs_int n, gs_int k, int nvec, int sm_count)
{
    gs_mdot_grid g;
    const long long tiles = k > 0 ? ((long long)k + GS_MDOT_COLS - 1) / GS_MDOT_COLS : 1;
    const long long per_block = (long long)GS_MDOT_THREADS * GS_MDOT_ROWS_PER_THREAD;
    long long rb = n > 0 ? ((long long)n + per_block - 1) / per_block : 1;
    const long long occupancy = (long long)GS_MDOT_BLOCKS_PER_SM * (sm_count > 0 ? sm_count : 1) / tiles;
    const long long sums = (long long)(k > 0 ? k : 1) * (nvec > 1 ? nvec : 1);
    const long long partial = GS_MDOT_PARTIAL_CAP / sums;
    if (rb > occupancy) rb = occupancy;
    if (rb > partial) rb = partial;
    g.row_blocks = (int)(rb < 1 ? 1 : rb);
    g.tiles = (int)tiles;
    g.col_tiles = (int)(tiles > GS_MDOT_MAX_TILES ? GS_MDOT_MAX_TILES : tiles);
    return g;
}

int gs_mgemv_launches(gs_int k)
{
    return k > 0 ? (int)(((long long)k + GS_MGEMV_COLS - 1) / GS_MGEMV_COLS) : 0;
}
