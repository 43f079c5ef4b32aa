/* Private to the GPU analysis of the level-order solvers: the arguments and the launches of its kernels
 * (analysis_kernels_cuda.cu), used by its steps (analysis_cuda.cu). CUDA C++. */
#ifndef GS_ANALYSIS_CUDA_H
#define GS_ANALYSIS_CUDA_H

#include <cuda_runtime.h>

#include "trisolve/trisolve_cuda.h"

#define LV_THREADS 256 /* units per block of the level kernel (one ticket per block) */
#define LV_HIST GS_LS_ELL_MAX_WIDTH /* the row-length histogram: buckets 0 .. LV_HIST-1 and ">= LV_HIST" */

/* Persistent blocks of the warp level kernel per multiprocessor (at most): polling warps load L2, and
 * fewer of them finish sooner. H100, level_time ms of the level order from device factors
 * (`bench_trisolve --gen G --n N --device-factors --types syncfree --reps 50 --no-jacobi --param
 * analysis.level_blocks_per_sm=b --param syncfree.schedule=levels`), b = 3 / 4 / 6 / 8, one factor:
 * poisson3d 100^3 0.62 / 0.55 / 0.53 / 0.52 (the other 0.65 / 0.57 / 0.59 / 0.59), laplace27 64^3 0.45 /
 * 0.49 / 0.54 / 0.54, poisson2d 1024^2 0.87 / 0.92 / 1.02 / 1.02: 4 is the best compromise. Neither a
 * 500 ns back-off after a fruitless poll nor passing the levels of the block's earlier warps through shared
 * memory is faster (docs/notes-trisolve.md section 3.3). */
#define LV_WARP_BLOCKS_PER_SM 4

/* Small results of the row, run, level and layout kernels, downloaded after each. */
struct lv_stats {
    unsigned long long ticket;   /* next block rank of the level kernel */
    unsigned long long long_sum; /* sum of the lengths of rows with at least LV_HIST entries */
    unsigned long long linked;   /* rows reading the row before them in dependency order */
    int max_level, max_len;
    int nunits;        /* runs (or rows) of the schedule */
    int bad_row;       /* smallest row failing the structural check; n when none */
    int bad_value_row; /* smallest row with a zero or non-finite diagonal; n when none */
    int hist[LV_HIST + 1];
};

struct lv_rows_args {
    gs_int n, nnz;
    bool unit;
    gs_int near; /* > 0: the strict link of warp runs: no other entry less than this many rows back */
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    gs_int *level; /* set to -1 (unknown) */
    gs_int *len;   /* off-diagonal entries of each row */
    gs_int *idx;   /* i: the values of the sort */
    gs_int *key;   /* by dependency index t: -1 when row t reads row t-1, else t (chain starts) */
    lv_stats *stats;
};

struct lv_level_args {
    gs_int n, nunits;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const gs_int *__restrict__ run_first; /* NULL: every unit is one row */
    gs_int *level;                        /* by row: -1 until its unit's level is known */
    gs_int *unit_level;                   /* by unit (runs only; NULL for rows) */
    lv_stats *stats;
};

struct lv_pos_args {
    gs_int n, nunits, npos, nlevels, run_rows, w;
    bool lower, warp; /* warp: warp runs' positions */
    const gs_int *__restrict__ keys;      /* sorted unit levels */
    const gs_int *__restrict__ units;     /* sorted units: rows (run_rows = 1) or run indices */
    const gs_int *__restrict__ run_first; /* runs only */
    const gs_int *__restrict__ len;
    gs_int *level_ptr, *perm, *pos_of, *remlen;
};

template <typename V>
struct lv_layout_args {
    gs_int npos, w;
    bool position_cols, has_rem, unit;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const double *__restrict__ val;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ pos_of;
    const gs_int *__restrict__ rem_ptr;
    gs_int *ell_col, *rem_col;
    V *ell_val, *rem_val, *dinv; /* double, or float for a single-precision plan */
    lv_stats *stats;
};

/* The kernels' launches (analysis_kernels_cuda.cu), each checked. */
gs_status gs_lv_stats_init(cudaStream_t s, lv_stats *S, gs_int n);
/* The row pass (lv_rows_kernel): check, lengths and their histogram, links. */
gs_status gs_lv_rows(cudaStream_t s, bool lower, const lv_rows_args &ra);
/* CUB's workspace of the runs' scans over n rows: the chain starts' max-scan and the run flags' sum. */
gs_status gs_lv_runs_bytes(cudaStream_t s, gs_int n, size_t *max_bytes, size_t *flag_bytes);
/* The runs of up to run_rows linked rows: chain starts (max-scan of key), run flags, their sum rid, run_first
 * and stats->nunits (cub: max_bytes and flag_bytes of gs_lv_runs_bytes). */
gs_status gs_lv_runs(cudaStream_t s, gs_int n, gs_int run_rows, void *cub, size_t max_bytes, size_t flag_bytes,
                     const gs_int *key, gs_int *chain_start, gs_int *flag, gs_int *rid, gs_int *run_first,
                     lv_stats *stats);
/* The levels of rows as units (lv_levels_warp_kernel over pblocks persistent blocks, levels by dependency
 * index in la.level; an upper factor's then by row into level), or of runs as units (lv_run_levels_kernel). */
gs_status gs_lv_levels_rows(cudaStream_t s, bool lower, const lv_level_args &la, unsigned pblocks, gs_int *level);
gs_status gs_lv_levels_runs(cudaStream_t s, bool lower, const lv_level_args &la);
/* The positions after the sort (lv_positions_kernel), and the HEC layout by position (lv_layout_kernel; with
 * single the values in float into ell_val_f, rem_val_f and dinv_f instead of ly's). */
gs_status gs_lv_positions(cudaStream_t s, const lv_pos_args &pa);
gs_status gs_lv_layout(cudaStream_t s, const lv_layout_args<double> &ly, bool single, float *ell_val_f,
                       float *rem_val_f, float *dinv_f);

#endif
