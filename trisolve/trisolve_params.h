/* The parameters of the triangular solvers, one typed struct per solver, all in gs_trisolve_params and
 * given at creation (gs_trisolve_create). Every field's zero value means "the solver's rule decides", so
 * a zeroed struct gives the product's behaviour and a test or a benchmark forces one choice and leaves
 * the rest to the rules. The rules themselves are pure host functions beside each solver
 * (syncfree_rules.c, tiled_ref.c, jacobi_ref.c), unit-tested on the host; docs/notes-trisolve.md
 * section 6 lists the fields with what each forces. gs_trisolve_params_set sets one field by name
 * ("syncfree.schedule=levels"), for command-line options of the benchmark programs. */
#ifndef GS_TRISOLVE_PARAMS_H
#define GS_TRISOLVE_PARAMS_H

#include <stdbool.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A choice a rule makes, forced on or off. */
typedef enum gs_ts_switch { GS_TS_AUTO = 0, GS_TS_ON = 1, GS_TS_OFF = 2 } gs_ts_switch;

/* The GPU analysis of the level-order solvers (levelset, syncfree; analysis_cuda.cu). */
typedef struct gs_ts_analysis_params {
    int level_blocks_per_sm; /* blocks of 256 threads per multiprocessor of the row-level kernel (0: 4) */
} gs_ts_analysis_params;

/* The schedules of syncfree on cuda (syncfree_kernels.h describes each). */
typedef enum gs_sf_schedule {
    GS_SF_SCHEDULE_AUTO = 0, /* the rule, after T's row levels (gs_ts_syncfree_rule, gs_ts_syncfree_merge_rule) */
    GS_SF_SCHEDULE_LEVELS,   /* rows in level order, a lane per row (or lanes per row) */
    GS_SF_SCHEDULE_MERGED,   /* merged levels, merge_levels per group */
    GS_SF_SCHEDULE_WRUNS,    /* a warp per run of up to 32 linked rows */
    GS_SF_SCHEDULE_RUNS      /* a thread per run of 4 linked rows (measurements) */
} gs_sf_schedule;

/* syncfree on cuda (syncfree_cuda.cu; the rules in syncfree_rules.c). */
typedef struct gs_syncfree_params {
    gs_sf_schedule schedule;
    int merge_levels;          /* with schedule = merged: levels per group, 1 .. 64 (0: 4) */
    int warps_per_sm;          /* persistent warps per multiprocessor (0: the rule; else at least 4, in
                                  whole blocks of 4 warps, capped by residency) */
    int lanes_per_row;         /* 0: the rule; 1, 2 or 4 lanes share a row of more than 4 ELL entries */
    gs_ts_switch ell6;         /* OFF: no 6-slot kernel instance (rows of 5-6 entries take the 8-slot one) */
    gs_ts_switch rem_prefetch; /* the first remainder entries polled with the ELL part */
    gs_ts_switch once;         /* a block per 128 positions instead of the persistent grid, where it applies */
    gs_ts_switch td_sync;      /* merged: the first stage (T_D) level-synchronous, a launch per level */
    gs_ts_switch td_one_pass;  /* ... OFF: a launch per level even for two levels (ON: the rule) */
    gs_ts_switch td_fold;      /* ... OFF: never folded into M's kernel (ON: the rule) */
    long long merge_pool_start; /* merged: first size (entries) of the GPU builder's pool of R (0: its guess) */
} gs_syncfree_params;

/* tiled (tiled_ref.c, tiled_cuda.cu). */
typedef enum gs_tiled_force { GS_TILED_AUTO = 0, GS_TILED_LEVELSET, GS_TILED_SYNCFREE } gs_tiled_force;
typedef struct gs_tiled_params {
    gs_tiled_force variant; /* AUTO: gs_tl_variant_rule */
} gs_tiled_params;

/* jacobi / async-jacobi sweeps (jacobi_ref.c, jacobi_cuda.cu; the rule gs_jacobi_sweep_shape). */
typedef struct gs_jacobi_params {
    int lanes;        /* lanes per row of the synchronous sweep's short rows: 0 (the rule), 1, 2, 4, 8, 16 */
    gs_ts_switch ell; /* the ELL copy: ON wherever the rows fit (at most 16 entries), OFF never */
} gs_jacobi_params;

/* The names of gs_trisolve_params_set (trisolve.h): syncfree.schedule (auto|levels|merged|wruns|runs),
 * syncfree.merge_levels, syncfree.warps_per_sm, syncfree.lanes_per_row, syncfree.merge_pool_start,
 * syncfree.ell6, syncfree.rem_prefetch, syncfree.once, syncfree.td_sync, syncfree.td_one_pass,
 * syncfree.td_fold (auto|on|off, or 1|0), analysis.level_blocks_per_sm, tiled.variant
 * (auto|levelset|syncfree), jacobi.lanes, jacobi.ell (auto|on|off, or 1|0). */

#ifdef __cplusplus
}
#endif
#endif
