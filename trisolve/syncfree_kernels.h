/* The sync-free solver's schedules, declared once: the run plans built by the host twin (syncfree_ref.c)
 * and on the GPU (analysis_cuda.cu), the pure host rules that choose the schedule, the kernel instance
 * and its grid (syncfree_rules.c, unit-tested on the host), and what the solver (syncfree_cuda.cu) tells
 * auto. Private to trisolve/. */
#ifndef GS_SYNCFREE_KERNELS_H
#define GS_SYNCFREE_KERNELS_H

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- the sync-free solver's schedules
 *
 * "levels": rows renumbered level by level, a thread per row (the level-set plan, levelset_kernels.h, with
 * entry columns as positions). "runs": a thread per RUN of up to GS_SF_RUN_ROWS consecutive rows, each of
 * which reads the row before it in dependency order (lower: row i reads i-1; upper: i reads i+1), so
 * that the dependency inside a run is passed in a register instead of through a cross-SM hop; runs are
 * renumbered level by level of the run graph (level(run) = 1 + max level of the runs its rows read
 * outside the run). A chain of linked rows is cut into runs of GS_SF_RUN_ROWS from its first row. On
 * PDE factors in natural order (chains along the grid lines) the run levels are fewer than the row
 * levels: 2D 5-point 1024^2 1279 run levels for 2047 row levels, 3D 7-point 100^3 223 for 298. */
#define GS_SF_RUN_ROWS 4 /* rows per run */
/* Warp runs (run_rows = GS_SF_WRUN_ROWS; docs/notes-trisolve.md section 4.4): a WARP per run of up to 32
 * rows, lane k holding the run's k-th row. A row is linked only when it reads the row before it AND every
 * other entry lies at least GS_SF_WRUN_ROWS rows back in dependency order, so that no row reads a row of
 * its own run but its predecessor: with c_k = (b_k - the entries outside the run) / t_kk and
 * a_k = t_{k,k-1} / t_kk, the run is the recurrence x_k = c_k - a_k x_{k-1}, which a scan of the affine
 * maps x -> -a_k x + c_k over the lanes solves in 5 steps. Positions: the k-th row of the run at run
 * position rp is at p = rp * GS_SF_WRUN_ROWS + k (a warp's rows adjacent; holes past the run's end). */
#define GS_SF_WRUN_ROWS 32
#define GS_SF_RUN_ELL 4  /* ELL entries per row the run kernel keeps in registers; the rest: remainder */

/* Row statistics of a factor that the GPU analysis collects before it chooses a schedule. */
typedef struct gs_ts_row_stats {
    gs_int n;
    gs_int max_row_length; /* off-diagonal entries of the longest row */
    long long nnz_offdiag;
    long long linked_rows; /* rows linked to the row before them in dependency order (warp runs' strict link) */
} gs_ts_row_stats;

/* ---------------------------------------------------------------- the rules (syncfree_rules.c)
 *
 * The schedule after T's row levels (docs/notes-trisolve.md section 5), given the row statistics, the row
 * levels and the levels per group the merge rule asks for: GS_SF_WRUN_ROWS = warp runs, 1 = the level
 * order (merged where m > 1). */
gs_int gs_ts_syncfree_rule(const gs_ts_row_stats *s, gs_int nlevels, gs_int merge_m);
#define GS_SF_WRUN_MIN_LINKED 0.9 /* warp runs: at least this fraction of the rows linked (positions <= 4.1 n) */
#define GS_SF_WRUN_MAX_ROW 16     /* ... and rows of at most 16 entries (the kernel's ELL slots; longer rows
                                     go through its remainder loop, an entry at a time) */
/* Levels per group for T's level plan statistics (n rows, levels, longest row's off-diagonal entries),
 * 1 = the level order. */
gs_int gs_ts_syncfree_merge_rule(gs_int n, gs_int levels, gs_int max_row_length);
#define GS_SF_MERGE_RULE_MAX 16
#define GS_SF_MERGE_DEFAULT 4
#define GS_SF_MERGE_MAX 64
#define GS_SF_MERGE_FILL 8 /* R may hold at most this many times T's entries + n */

/* The rows per run the parameters force: schedule levels or merged (whose two solves are level orders)
 * -> 1, runs -> GS_SF_RUN_ROWS, wruns -> GS_SF_WRUN_ROWS, auto -> 0 (the rule decides). */
gs_int gs_sf_forced_run_rows(const gs_syncfree_params *p);
/* The levels per group the parameters force: merged -> merge_levels (0: GS_SF_MERGE_DEFAULT), levels,
 * runs or wruns -> 1 (not merged), auto -> 0 (the rule decides). */
gs_int gs_sf_forced_merge_levels(const gs_syncfree_params *p);

/* The kernels' launch shape (syncfree_cuda.cu): blocks of GS_SF_BLOCK threads (4 warps). */
#define GS_SF_BLOCK 128
#define GS_SF_ELL_MAX 16 /* widest ELL part: entries a lane keeps in registers */

/* What the grid rules see of a stage's plan. */
typedef struct gs_sf_plan_shape {
    gs_int run_rows;  /* 1: rows in level order; GS_SF_RUN_ROWS: runs; GS_SF_WRUN_ROWS: warp runs */
    gs_int ell_width; /* of the plan's ELL part */
    gs_int nunits;    /* rows or runs */
    gs_int npos;      /* positions */
    gs_int nlevels;   /* levels of the units */
    bool rem;         /* the plan has a remainder */
    int sms;          /* multiprocessors of the device */
} gs_sf_plan_shape;

/* The kernel of a stage and its grid. */
typedef struct gs_sf_grid {
    int wmax;          /* ELL slots of the kernel instance (4, 6, 8, 16; runs: GS_SF_RUN_ELL) */
    int lpr;           /* lanes per row (sf_split_chunk), 1: a lane per row */
    int blocks;        /* thread blocks of GS_SF_BLOCK threads */
    bool rem_prefetch; /* the first remainder entries polled with the ELL part */
    bool once;         /* a block per GS_SF_BLOCK positions instead of the persistent grid (sf_once_kernel) */
} gs_sf_grid;

/* The kernel instance of a plan (docs/notes-trisolve.md section 4.2): g->wmax, the smallest instance
 * holding the ELL part (each slot costs instructions in every polling round), and g->lpr, the lanes
 * sharing a row of more than 8 ELL entries in the level order: 4 when a grid of GS_SF_LANES_RULE_WARPS
 * warps per multiprocessor still holds two average levels, else 2. The parameters force either. */
void gs_sf_kernel_rule(const gs_sf_plan_shape *s, const gs_syncfree_params *p, gs_sf_grid *g);
/* The grid of the kernel g->wmax, g->lpr, given how many of its blocks a multiprocessor holds
 * (resident_per_sm; 0: unknown, no cap): g->blocks = warps per multiprocessor (warp runs:
 * GS_SF_WR_WARPS_PER_SM, 4 for rows of more than 4 ELL entries; level order: GS_SF_WARPS_PER_SM,
 * GS_SF_WARPS_PER_SM_WIDE for rows of more than 8 ELL entries in one lane) on every multiprocessor, at
 * most one per chunk; g->rem_prefetch where the plan has a remainder and more than
 * GS_SF_REM_PREFETCH_WAVES times the positions the grid holds; g->once where the average level holds
 * more rows than the persistent grid and the plan has no remainder (then a block per GS_SF_BLOCK
 * positions). The parameters force the warps, the early remainder and the block per 128 positions. */
void gs_sf_grid_rule(const gs_sf_plan_shape *s, const gs_syncfree_params *p, int resident_per_sm, gs_sf_grid *g);
#define GS_SF_WARPS_PER_SM 12
#define GS_SF_WARPS_PER_SM_WIDE 4
#define GS_SF_WR_WARPS_PER_SM 16
#define GS_SF_WR_WARPS_PER_SM_WIDE 4
#define GS_SF_LANES_RULE_WARPS 8
#define GS_SF_REM_PREFETCH_WAVES 4

/* The merged schedule's first stage (T_D, td_levels levels): sync = level-synchronous, a launch per level
 * (at most GS_SF_TD_SYNC_LEVELS levels); one_pass = its two levels in one launch; fold = folded into M's
 * kernel (T_D of at most GS_SF_FOLD_MAX entries per row, no remainder, as many positions as M, and M run a
 * lane per row in the persistent grid without early remainder). The parameters force each. */
typedef struct gs_sf_td_shape {
    gs_int td_levels, td_ell_width;
    bool td_rem;
    bool same_positions;   /* T_D's plan has as many positions as M's */
    gs_int m_run_rows;
    const gs_sf_grid *m;   /* M's kernel and grid */
} gs_sf_td_shape;
typedef struct gs_sf_td_choice {
    bool sync, one_pass, fold;
} gs_sf_td_choice;
void gs_sf_td_rule(const gs_sf_td_shape *s, const gs_syncfree_params *p, gs_sf_td_choice *c);
#define GS_SF_TD_SYNC_LEVELS 4
#define GS_SF_FOLD_MAX 4

/* T's row levels as an analysed cuda syncfree solver found them (whatever schedule it then chose: level
 * order, merged or warp runs; with runs forced by its parameters, the run levels); -1 when ts is
 * not one (syncfree_cuda.cu; trisolve_nocuda.c without CUDA). auto's rule reads it: SpSV, its alternative,
 * pays one step per row level. */
gs_int gs_ts_syncfree_levels(const gs_trisolve *ts);

/* The run schedule built on the host (syncfree_ref.c): the host twin of the GPU analysis with
 * run_rows > 1 (run_rows = 1 gives the level order with position columns), and the solve with the
 * arithmetic of the run kernel. Positions: the k-th row of the run at run position rp is at position
 * p = k * nruns + rp (the rows of one warp's runs are adjacent for each k); positions k >= the run's
 * length are holes (perm -1). */
typedef struct gs_sf_runs_plan {
    gs_int n, run_rows, nruns, npos, nlevels, ell_width, rem_nnz, max_row_length;
    long long linked_rows; /* rows linked to their predecessor (warp runs: by the strict link) */
    gs_int *run_first; /* nruns + 1: dependency index (lower: row, upper: n-1-row) of each run's first row */
    gs_int *run_level; /* nruns */
    gs_int *order;     /* nruns: the run at run position rp (by level, then run index) */
    gs_int *level_ptr; /* nlevels + 1: first run position of each run level */
    gs_int *perm;      /* npos: row at position p, -1 for a hole */
    gs_int *ell_col;   /* ell_width * npos, column-major; the POSITION of the entry's row, -1 padding */
    double *ell_val;
    gs_int *rem_ptr; /* npos + 1 */
    gs_int *rem_col; /* positions */
    double *rem_val;
    double *dinv; /* npos: 1 / t_ii (1 for a unit factor and for holes) */
} gs_sf_runs_plan;

/* Build the plan of T (checked by gs_trisolve_check_factor); ELL width by gs_ls_ell_width capped at
 * max_width (1 .. GS_LS_ELL_MAX_WIDTH). On failure P is freed. */
gs_status gs_sf_runs_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int run_rows, gs_int max_width,
                                gs_sf_runs_plan *P);
void gs_sf_runs_plan_free(gs_sf_runs_plan *P);
/* The warp-run plan of the GPU analysis (analysis_cuda.cu, cuda backend be; tests): T's rows checked, the
 * plan built with run_rows = GS_SF_WRUN_ROWS and ELL width limit max_width from the host factor or from a
 * device copy of it (from_device), downloaded into P's arrays and scalars (run_first, run_level and order
 * stay NULL: the GPU plan keeps no such arrays). P is freed on failure. */
gs_status gs_ts_wruns_plan_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                               gs_int max_width, gs_sf_runs_plan *P);

/* x = T^{-1} b: runs in run-position order, the rows of a run in order, each
 * x = (b - ELL entries in order - remainder entries in order) * dinv, values kept by position. Warp runs
 * (run_rows = GS_SF_WRUN_ROWS): the entry of a row's predecessor inside its run is left out of the sum
 * (the link, column p - 1), c = s * dinv, a = link * dinv, and the run is solved by the warp kernel's scan
 * in its order: (A_k, B_k) = (-a_k, c_k) (holes: (1, 0)); for off = 1, 2, 4, 8, 16 and every k >= off at
 * once: B_k = fma(A_k, B_{k-off}, B_k), A_k = A_k * A_{k-off}; x_k = B_k. */
gs_status gs_sf_runs_solve_host(const gs_sf_runs_plan *P, const double *b, double *x);

#ifdef __cplusplus
}
#endif
#endif
