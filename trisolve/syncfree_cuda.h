/* Private to the sync-free solver on the GPU: its stages and analysis state (syncfree_analysis_cuda.cu) and
 * the launches of its kernels (syncfree_cuda.cu). CUDA C++. */
#ifndef GS_SYNCFREE_CUDA_H
#define GS_SYNCFREE_CUDA_H

#include "trisolve/trisolve_cuda.h"

/* One solve of the plan: the persistent grid, the ready values and the ticket counter. */
typedef struct sf_stage {
    gs_ts_analysis A; /* the plan (rows or runs in level order, entry columns as positions), the times */
    int blocks, wmax, run_rows;
    bool rem_prefetch; /* the kernel that polls the first SF_REM_PREFETCH remainder entries with the ELL part */
    int lpr;           /* lanes per row (sf_split_chunk), 1: a lane per row */
    bool once;         /* a block per GS_SF_BLOCK positions instead of the persistent grid (sf_once_kernel) */
    long long *ready;
    unsigned long long *ticket;
} sf_stage;

/* levels / runs: one stage, x = T^{-1} b. merged (trisolve_impl.h, merge_ref.c): stage 0 solves
 * y = T_D^{-1} b, stage 1 x = M^{-1} y (unit diagonal). */
typedef struct sf_data {
    sf_stage st[2];
    int nstages;
    bool forced; /* the schedule came from the parameters (syncfree.schedule) */
    gs_ts_merge_stats merge; /* merged: the transformation's statistics (m = 0: not merged) */
    double merge_time;       /* seconds spent building T_D and M (row levels, upload of a host T, builder) */
    double tplan_time;       /* seconds of T's level plan (the start of every analysis) */
    double t0, total_time;   /* the whole analysis */
    double *y;               /* merged: n values between the two solves */
    bool td_sync;            /* merged: stage 0 level-synchronous: one launch per level (sf_level_kernel) */
    bool td_one_pass;        /* ... of at most two levels, in one launch (sf_td2_kernel) */
    bool td_fold;            /* ... or folded into M's kernel (sf_chunk's FOLD): one launch per solve */
    int fold_w;              /* the fold table (sf_fold_table_kernel): T_D entries per row, */
    char *fold_arena;        /* ... in one block: b indices [fold_w n], t_ij, 1/t_jj [fold_w n] and 1/t_ii [n] */
    const gs_int *fold_b;    /* ... the parts of the block; the values in the plans' type (float with single) */
    const void *fold_t, *fold_d, *fold_di;
    bool wruns_rule;         /* warp runs chosen by the rule after T's row levels (tplan_time: that pass) */
    gs_int row_levels;       /* T's row levels where the first analysis had rows as units, else -1 */
} sf_data;

/* The persistent kernel a stage's grid is sized for (cudaOccupancyMaxActiveBlocksPerMultiprocessor): warp runs'
 * or the level order's with g's ELL slots and lanes per row (no early remainder, no fold table). */
const void *gs_sf_grid_kernel(const gs_ls_dplan *D, const gs_sf_grid *g);
/* One solve of stage d on stream s: x = T^{-1} b with the stage's plan and grid; level_sync: a launch per
 * level (merged first stage; one_pass: one launch for its two levels); fold: M's rows form their y from b
 * with fold's table (NULL: none). */
gs_status gs_sf_stage_solve(const sf_stage *d, cudaStream_t s, const double *b, double *x, bool level_sync,
                            bool one_pass, const sf_data *fold);
/* The fold table of a merged schedule (sf_fold_table_kernel): pos (n, work space) gets T_D's position of each
 * row, then fb, ft, fd, fdi (by M position) T_D's entries of each row; values in the plans' type. */
gs_status gs_sf_fold_table(cudaStream_t s, const gs_ls_dplan *T, const gs_ls_dplan *M, gs_int *pos, gs_int *fb,
                           void *ft, void *fd, void *fdi);

#endif
