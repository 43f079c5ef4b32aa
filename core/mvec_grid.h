/* The launch shapes of the cuda backend's Krylov-basis products (core/backend_cuda_mvec.cu), chosen on
 * the host by pure rules so that they can be unit-tested without a GPU.
 *
 * mdot, h = V(:,0:k)' w (mdot2: the same with two vectors, w read as a pair): the k columns are taken GS_MDOT_COLS at a time (a column tile: each thread keeps
 * one running sum per column of the tile and reads w once for all of them); a grid of row_blocks x
 * col_tiles blocks of GS_MDOT_THREADS threads; each block leaves one partial sum per column of its tile,
 * and a second kernel adds a column's row_blocks partial sums in a fixed order (row_blocks == 1: the
 * first kernel writes h itself). The grid depends only on (n, k, SM count), so h is reproducible.
 *
 * mgemv, y = alpha V(:,0:k) h + beta y: h travels as a kernel argument, GS_MGEMV_COLS coefficients per
 * launch (no copy, no staging buffer); more columns take more launches, the later ones adding to y.
 * mgemv2 (two outputs, two coefficient vectors) takes the same GS_MGEMV_COLS columns per launch. */
#ifndef GS_MVEC_GRID_H
#define GS_MVEC_GRID_H

#include "core/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_MDOT_COLS 8          /* columns per tile: running sums per thread */
#define GS_MDOT_THREADS 256     /* threads per block of the first mdot kernel */
#define GS_MDOT_ROWS_PER_THREAD 4 /* a block is given at least this many rows per thread */
#define GS_MDOT_BLOCKS_PER_SM 8 /* blocks of the whole grid per SM, at most (once there are enough rows) */
#define GS_MDOT_PARTIAL_CAP 16384 /* partial sums the backend's buffer holds: row_blocks * k at most */
#define GS_MDOT_MAX_TILES 65535 /* grid.y at most: more tiles are looped over by the blocks */
#define GS_MGEMV_COLS 64        /* coefficients of h per mgemv launch */

typedef struct gs_mdot_grid {
    int row_blocks; /* blocks along the rows (grid.x) */
    int col_tiles;  /* blocks along the column tiles (grid.y), <= GS_MDOT_MAX_TILES */
    int tiles;      /* column tiles in all: ceil(k / GS_MDOT_COLS) */
} gs_mdot_grid;

/* The mdot grid for n rows, k >= 1 columns and nvec (1: mdot, 2: mdot2) vectors on a device of sm_count
 * SMs: row_blocks is the smallest of (rows / (threads x GS_MDOT_ROWS_PER_THREAD)),
 * (GS_MDOT_BLOCKS_PER_SM x sm_count / tiles) and (GS_MDOT_PARTIAL_CAP / (nvec k)), and at least 1. */
gs_mdot_grid gs_mdot_grid_rule(gs_int n, gs_int k, int nvec, int sm_count);

/* Launches mgemv needs for k columns: ceil(k / GS_MGEMV_COLS). */
int gs_mgemv_launches(gs_int k);

#ifdef __cplusplus
}
#endif

#endif
