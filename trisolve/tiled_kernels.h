/* Private to trisolve/: the tile plan of TileSpTRSV (Lu & Liu, CCF THPC 2023) shared by the host twin
 * (tiled_ref.c, which builds it and solves with it sequentially) and the GPU solver (tiled_cuda.cu,
 * which uploads it unchanged); the create functions are in trisolve_impl.h.
 *
 * The plan of a triangular factor T (lower or upper, unit or non-unit):
 *  - rows and columns renumbered level by level (the paper's first step; levels of gs_ls_levels, rows
 *    of a level in increasing original order): position p holds original row perm[p]. Every
 *    dependency lies in an earlier level, so the renumbered factor B = T(perm, perm) is LOWER
 *    triangular in positions for both sides, and one kernel serves L and U;
 *  - B cut into 16x16 tiles; tile row I holds positions 16I .. 16I+15 (the last one may be short).
 *    Only nonempty off-diagonal tiles are stored, in tile-CSR order: tiles[tile_ptr[I] ..
 *    tile_ptr[I+1]-1] with strictly increasing tile columns J < I. Because J < I <= nt-1, every
 *    off-diagonal tile column is a full 16 positions (only the last tile row can be short);
 *  - every tile row has a diagonal tile diag[I] holding the strictly lower in-tile entries (the
 *    diagonal itself is dinv[p] = 1 / B(p,p), 1 for a unit diagonal);
 *  - the entries of a tile live in two pooled arrays, local indices 8-bit (row r and column c in
 *    0..15): idx[idx_off ..] and val[val_off ..], by format:
 *      off-diagonal  COO    nnz <= GS_TILE_COO_MAX:   idx[k] = r << 4 | c, val[k]; row-major order
 *                    CSR    otherwise:                idx[r] = first entry of row r (16 bytes; the end of
 *                                                     row 15 is nnz), idx[16 + k] = c, val[k]
 *                    DENSE  nnz >= GS_TILE_DENSE_MIN: val[c * 16 + r] (column-major, zeros stored)
 *      diagonal      DIA    no strictly lower entry:  nothing stored (the 16 rows are independent)
 *                    CSR    otherwise:                as the off-diagonal CSR (columns c < r)
 *                    DENSE  nnz >= GS_DTILE_DENSE_MIN: the 120 strictly lower slots packed column by
 *                                                     column: (r, c), r > c, at 15c - c(c-1)/2 + r-c-1
 *    Thresholds (bytes per tile: COO 9 nnz, CSR 16 + 9 nnz, dense 2048 / 960): a tile of up to 12
 *    entries is cheaper as a list than with 16 row pointers; from 192 of 256 entries (75%) a dense
 *    tile costs at most 18% more bytes than CSR and needs no index loads and no divergent row
 *    loops; a diagonal tile from 96 of its 120 strictly lower slots (80%) is stored packed dense;
 *  - tile-level dependencies: tile row I depends on the tile rows J of its off-diagonal tiles.
 *    tile level(I) = 0 without off-diagonal tiles, else 1 + max tile level(J). level_rows lists the
 *    tile rows level by level (increasing within a level). Chains for the level-set variant: maximal
 *    runs of consecutive levels of at most chain_rows tile rows each (chain_single = 1, run by one
 *    thread block with a block barrier between levels); a wider level is a chain of its own
 *    (chain_single = 0, one multi-block launch).
 *
 * The arithmetic of one tile row, bit for bit the same on the host and the GPU: a warp's
 * two halves h = 0, 1 take the off-diagonal tiles tile_ptr[I] + h, + h + 2, ...; lane (h, r) sums the
 * row-r products of its tiles in tile order, each tile's entries in increasing column order, into
 * acc[h][r]; s_r = b[perm[p]] - (acc[0][r] + acc[1][r]); then for k = 0 .. 14: x_k = s_k * dinv_k and
 * s_r -= B(r, k) x_k for every in-tile entry (r, k), r > k; finally x_r = s_r * dinv_r. Every product
 * is accumulated with one fused multiply-add (fma / __fma_rn), every other step is one IEEE-rounded
 * operation, so the result does not depend on the schedule (variant) nor on the device. */
#ifndef GS_TILED_IMPL_H
#define GS_TILED_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/csr.h"
#include "core/report.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TILE 16

/* Formats of an off-diagonal tile and of a diagonal tile (values of gs_tile.fmt). */
enum { GS_TILE_COO = 0, GS_TILE_CSR = 1, GS_TILE_DENSE = 2 };
enum { GS_DTILE_DIA = 0, GS_DTILE_CSR = 1, GS_DTILE_DENSE = 2 };
#define GS_TILE_COO_MAX 12     /* off-diagonal: nnz <= 12 -> COO */
#define GS_TILE_DENSE_MIN 192  /* off-diagonal: nnz >= 192 (of 256) -> dense */
#define GS_DTILE_DENSE_MIN 96  /* diagonal: strictly lower nnz >= 96 (of 120) -> packed dense */
#define GS_DTILE_PACKED 120    /* strictly lower slots of a 16x16 tile */

/* Default widest level (in tile rows) that a chain's single thread block runs: 16 warps = 512 threads. */
#define GS_TL_CHAIN_TILE_ROWS 16

/* One stored tile (24 bytes, the same layout on host and device). */
typedef struct gs_tile {
    int64_t idx_off; /* first byte of the tile's local indices in idx[] */
    int64_t val_off; /* first value of the tile in val[] */
    gs_int col;      /* tile column J (diagonal tile: J = I) */
    uint16_t nnz;    /* entries of the tile (diagonal tile: strictly lower in-tile entries) */
    uint8_t fmt;     /* GS_TILE_* (off-diagonal) or GS_DTILE_* (diagonal) */
    uint8_t pad;
} gs_tile;

typedef enum gs_tl_variant { GS_TL_LEVELSET = 0, GS_TL_SYNCFREE = 1 } gs_tl_variant;

typedef struct gs_tl_plan {
    gs_int n, nt;          /* order; tile rows = ceil(n / 16) */
    gs_int *perm;          /* n: position -> original row */
    double *dinv;          /* n, by position */
    gs_int *tile_ptr;      /* nt + 1 */
    gs_tile *tiles;        /* ntiles: nonempty off-diagonal tiles, tile-CSR order */
    gs_tile *diag;         /* nt: the diagonal tile of every tile row */
    uint8_t *idx;          /* idx_len */
    double *val;           /* val_len */
    int64_t idx_len, val_len;
    gs_int ntiles;
    /* tile-level dependencies and chains */
    gs_int nlevels, chain_rows, nchains;
    gs_int *level_ptr;     /* nlevels + 1 */
    gs_int *level_rows;    /* nt */
    gs_int *chain_ptr;     /* nchains + 1, indexes levels */
    uint8_t *chain_single; /* nchains */
    gs_int *chain_max_rows; /* nchains: widest level (tile rows) of each chain */
    /* statistics for view() and the variant rule (kept by gs_tl_plan_free) */
    gs_int row_levels;     /* levels of the rows (before tiling) */
    gs_int nnz_offdiag;
    gs_int fmt_count[3];   /* off-diagonal tiles per GS_TILE_* format */
    gs_int diag_count[3];  /* diagonal tiles per GS_DTILE_* format */
    gs_int nonempty_diag;  /* diagonal tiles with a stored entry (diagonal or strictly lower) */
    gs_int max_tiles_per_row, max_level_rows, single_chains, multi_chains;
    double time_levels;    /* row levels + renumbering, seconds */
    double time_build;     /* the whole plan, seconds */
} gs_tl_plan;

/* Build the plan of T (checked by gs_trisolve_check_factor). chain_rows >= 1. On failure P is freed. */
gs_status gs_tl_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int chain_rows, gs_tl_plan *P);
/* Free the arrays; keeps the scalar statistics. Safe on a zeroed plan. */
void gs_tl_plan_free(gs_tl_plan *P);
/* x = T^{-1} b with the plan, tile row by tile row in position order (a valid schedule of both
 * variants), with the arithmetic described above. xp (n doubles) receives x by position. */
void gs_tl_plan_solve_host(const gs_tl_plan *P, const double *b, double *x, double *xp);
/* "<prefix>.tile_rows", ".tiles", ".nonempty_tiles", ".tiles_coo", ..., ".tile_levels", ... */
void gs_tl_plan_view(const gs_tl_plan *P, gs_report *rep, const char *prefix);

/* The variant of a plan: the one the parameters force (*forced = true), else the rule of
 * gs_tl_variant_rule. */
gs_tl_variant gs_tl_choose_variant(const gs_tl_plan *P, gs_tiled_force force, bool *forced);
/* The documented rule alone (tiled_ref.c): levelset when the tile rows have no dependencies (one tile
 * level: one plain launch, no tickets), else syncfree. Measured on the H100 (docs/notes-trisolve.md
 * section 4.6): the sync-free variant is faster on every factor with dependencies, 1.3-7.8x, including
 * a single chain of thin levels that the level-set variant runs in one block (bidiagonal, 20000 rows). */
gs_tl_variant gs_tl_variant_rule(const gs_tl_plan *P);
const char *gs_tl_variant_name(gs_tl_variant v);

#ifdef __cplusplus
}
#endif
#endif
