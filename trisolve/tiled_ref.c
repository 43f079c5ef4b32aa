/* Tiled triangular solve (TileSpTRSV) on the host: rows renumbered level by level, the renumbered
 * factor cut into 16x16 tiles stored per tile in COO / CSR / dense (off-diagonal) or DIA / CSR / dense
 * (diagonal) form with 8-bit local indices, tile-level levels and chains, the level-set / sync-free
 * variant rule, and x = T^{-1} b solved tile row by tile row. This is the host implementation of
 * "tiled" and the reference of the GPU data layout: tiled_cuda.cu uploads exactly this plan and
 * evaluates the same arithmetic (see tiled_kernels.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/mem.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/tiled_kernels.h"
#include "trisolve/trisolve_impl.h"

void gs_tl_plan_free(gs_tl_plan *P)
{
    if (!P) return;
    gs_free(&P->perm);
    gs_free(&P->dinv);
    gs_free(&P->tile_ptr);
    gs_free(&P->tiles);
    gs_free(&P->diag);
    gs_free(&P->idx);
    gs_free(&P->val);
    gs_free(&P->level_ptr);
    gs_free(&P->level_rows);
    gs_free(&P->chain_ptr);
    gs_free(&P->chain_single);
    gs_free(&P->chain_max_rows);
}

static int cmp_gs_int(const void *a, const void *b)
{
    gs_int x = *(const gs_int *)a, y = *(const gs_int *)b;
    return (x > y) - (x < y);
}

/* offset of the strictly lower in-tile entry (r, c), r > c, in a packed dense diagonal tile */
static inline int packed_lower(int r, int c) { return 15 * c - c * (c - 1) / 2 + (r - c - 1); }

/* perm: rows sorted by level (stable, so the rows of a level keep their original order) */
static gs_status renumber_by_levels(const gs_csr *T, gs_uplo uplo, gs_tl_plan *P)
{
    gs_status st = GS_OK;
    gs_int n = T->nrows, *level = NULL, *start = NULL;
    GS_TRY(GS_MALLOC(level, n));
    P->row_levels = gs_ls_levels(T, uplo, level);
    GS_TRY(GS_CALLOC(start, (size_t)P->row_levels + 1));
    GS_TRY(GS_MALLOC(P->perm, n));
    for (gs_int i = 0; i < n; i++) start[level[i] + 1]++;
    for (gs_int l = 0; l < P->row_levels; l++) start[l + 1] += start[l];
    for (gs_int i = 0; i < n; i++) P->perm[start[level[i]]++] = i;
cleanup:
    gs_free(&level);
    gs_free(&start);
    return st;
}

/* Tile rows are handed out in chunks: tile rows differ in cost (a dense row), so dynamic. Below
 * TL_PARALLEL_NNZ entries one thread is faster than waking the team (H100 machine, 16 threads: cage10's L,
 * 150k entries, built in 2.3 ms sequentially and in 4.8 ms with the passes in parallel). */
#define TL_ROW_CHUNK 256
#define TL_PARALLEL_NNZ 500000

static int tl_threads(const gs_csr *B)
{
#ifdef _OPENMP
    return B->nnz > TL_PARALLEL_NNZ ? omp_get_max_threads() : 1;
#else
    (void)B;
    return 1;
#endif
}

static int tl_thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The distinct off-diagonal tile columns of tile row I (list[0 .. m-1], increasing) with their entry
 * counts cnt[J], and the strictly lower entry count of its diagonal tile; mark[] (nt, the caller's,
 * never equal to I before the call) marks the columns seen. */
static gs_int tile_row_columns(const gs_csr *B, const gs_tl_plan *P, gs_int I, gs_int *mark, gs_int *cnt,
                               gs_int *list, gs_int *diag_nnz)
{
    gs_int m = 0, dn = 0, n = P->n, p1 = (I + 1) * GS_TILE < n ? (I + 1) * GS_TILE : n;
    for (gs_int p = I * GS_TILE; p < p1; p++)
        for (gs_int q = B->rowptr[p]; q < B->rowptr[p + 1]; q++) {
            gs_int pc = B->colind[q], J = pc / GS_TILE;
            if (pc == p) continue;
            if (J == I) {
                dn++;
                continue;
            }
            if (mark[J] != I) {
                mark[J] = I;
                cnt[J] = 0;
                list[m++] = J;
            }
            cnt[J]++;
        }
    qsort(list, (size_t)m, sizeof *list, cmp_gs_int);
    *diag_nnz = dn;
    return m;
}

/* Pass 1: the nonempty off-diagonal tiles of every tile row (columns increasing) with their entry
 * counts, and the strictly lower entry count of every diagonal tile. B is lower triangular. Two
 * parallel sweeps over the tile rows (each thread with its own nt-long scratch): count, then, after a
 * prefix sum, the same columns written in place. Scratch of both passes: 3 and 2 ints per tile row and
 * thread, i.e. at most 12 bytes per row of T with 16 threads -- less than B's 12 bytes per entry. */
static gs_status find_tiles(const gs_csr *B, gs_tl_plan *P)
{
    gs_status st = GS_OK;
    gs_int nt = P->nt, ntiles = 0, max_m = 0;
    const int threads = tl_threads(B);
    gs_int *scratch = NULL;
    const size_t per = 3 * (size_t)nt; /* mark, cnt, list */
    GS_TRY(GS_MALLOC(scratch, per * (size_t)threads));
    for (size_t k = 0; k < per * (size_t)threads; k += per)
        for (gs_int J = 0; J < nt; J++) scratch[k + (size_t)J] = -1; /* mark: no tile row is -1 */

#pragma omp parallel for schedule(dynamic, TL_ROW_CHUNK) num_threads(threads) reduction(max : max_m)
    for (gs_int I = 0; I < nt; I++) {
        gs_int *w = scratch + per * (size_t)tl_thread_num(), dn = 0;
        gs_int m = tile_row_columns(B, P, I, w, w + nt, w + 2 * (size_t)nt, &dn);
        P->tile_ptr[I + 1] = m;
        if (m > max_m) max_m = m;
    }
    P->tile_ptr[0] = 0;
    for (gs_int I = 0; I < nt; I++) P->tile_ptr[I + 1] += P->tile_ptr[I];
    ntiles = P->tile_ptr[nt];
    P->ntiles = ntiles;
    P->max_tiles_per_row = max_m;
    GS_TRY(GS_MALLOC(P->tiles, (size_t)ntiles + 1));
    for (size_t k = 0; k < per * (size_t)threads; k += per)
        for (gs_int J = 0; J < nt; J++) scratch[k + (size_t)J] = -1;

#pragma omp parallel for schedule(dynamic, TL_ROW_CHUNK) num_threads(threads)
    for (gs_int I = 0; I < nt; I++) {
        gs_int *w = scratch + per * (size_t)tl_thread_num(), dn = 0;
        const gs_int *cnt = w + nt, *list = w + 2 * (size_t)nt;
        gs_int m = tile_row_columns(B, P, I, w, w + nt, w + 2 * (size_t)nt, &dn);
        gs_tile *out = P->tiles + P->tile_ptr[I];
        for (gs_int k = 0; k < m; k++) {
            memset(&out[k], 0, sizeof out[k]);
            out[k].col = list[k];
            out[k].nnz = (uint16_t)cnt[list[k]];
        }
        memset(&P->diag[I], 0, sizeof P->diag[I]);
        P->diag[I].col = I;
        P->diag[I].nnz = (uint16_t)dn;
    }
cleanup:
    gs_free(&scratch);
    return st;
}

/* Formats from the entry counts (thresholds in tiled_kernels.h) and the offsets into idx / val. */
static void choose_formats(gs_tl_plan *P)
{
    int64_t io = 0, vo = 0;
    for (gs_int t = 0; t < P->ntiles; t++) {
        gs_tile *tl = &P->tiles[t];
        int nnz = tl->nnz;
        tl->fmt = nnz <= GS_TILE_COO_MAX     ? GS_TILE_COO
                  : nnz >= GS_TILE_DENSE_MIN ? GS_TILE_DENSE
                                             : GS_TILE_CSR;
        tl->idx_off = io;
        tl->val_off = vo;
        if (tl->fmt == GS_TILE_COO) {
            io += nnz;
            vo += nnz;
        } else if (tl->fmt == GS_TILE_CSR) {
            io += GS_TILE + nnz;
            vo += nnz;
        } else {
            vo += GS_TILE * GS_TILE;
        }
        P->fmt_count[tl->fmt]++;
    }
    for (gs_int I = 0; I < P->nt; I++) {
        gs_tile *d = &P->diag[I];
        int nnz = d->nnz;
        d->fmt = nnz == 0 ? GS_DTILE_DIA : nnz >= GS_DTILE_DENSE_MIN ? GS_DTILE_DENSE : GS_DTILE_CSR;
        d->idx_off = io;
        d->val_off = vo;
        if (d->fmt == GS_DTILE_CSR) {
            io += GS_TILE + nnz;
            vo += nnz;
        } else if (d->fmt == GS_DTILE_DENSE) {
            vo += GS_DTILE_PACKED;
        }
        P->diag_count[d->fmt]++;
    }
    P->idx_len = io;
    P->val_len = vo;
}

/* Entry k (row-major order) of tile tl at local (r, c) = v. CSR tiles count their rows' entries in
 * idx[r]; finish_csr turns the counts into row starts. */
static inline void put_entry(gs_tl_plan *P, const gs_tile *tl, bool diagonal, int k, int r, int c, double v)
{
    uint8_t *ix = P->idx + tl->idx_off;
    double *vv = P->val + tl->val_off;
    if (!diagonal && tl->fmt == GS_TILE_COO) {
        ix[k] = (uint8_t)(r << 4 | c);
        vv[k] = v;
    } else if (!diagonal && tl->fmt == GS_TILE_DENSE) {
        vv[c * GS_TILE + r] = v;
    } else if (diagonal && tl->fmt == GS_DTILE_DENSE) {
        vv[packed_lower(r, c)] = v;
    } else { /* CSR, off-diagonal or diagonal */
        ix[r]++;
        ix[GS_TILE + k] = (uint8_t)c;
        vv[k] = v;
    }
}

static inline void finish_csr(gs_tl_plan *P, const gs_tile *tl)
{
    uint8_t *ix = P->idx + tl->idx_off;
    int start = 0;
    for (int r = 0; r < GS_TILE; r++) {
        int c = ix[r];
        ix[r] = (uint8_t)start;
        start += c;
    }
}

/* Pass 2: entries into their tiles, 1/diagonal by position; tile rows in parallel (each writes only
 * its own tiles and positions), each thread with its own nt-long scratch. */
static gs_status fill_tiles(const gs_csr *B, bool unit_diag, gs_tl_plan *P)
{
    gs_status st = GS_OK;
    gs_int n = P->n, nt = P->nt;
    const int threads = tl_threads(B);
    gs_int *scratch = NULL;
    const size_t per = 2 * (size_t)nt; /* where, cur */
    GS_TRY(GS_MALLOC(scratch, per * (size_t)threads));

#pragma omp parallel for schedule(dynamic, TL_ROW_CHUNK) num_threads(threads)
    for (gs_int I = 0; I < nt; I++) {
        gs_int *where = scratch + per * (size_t)tl_thread_num(), *cur = where + nt;
        gs_int t0 = P->tile_ptr[I], t1 = P->tile_ptr[I + 1], dk = 0;
        gs_int p0 = I * GS_TILE, p1 = p0 + GS_TILE < n ? p0 + GS_TILE : n;
        for (gs_int t = t0; t < t1; t++) {
            where[P->tiles[t].col] = t;
            cur[P->tiles[t].col] = 0;
        }
        for (gs_int p = p0; p < p1; p++) {
            P->dinv[p] = 1.0;
            for (gs_int q = B->rowptr[p]; q < B->rowptr[p + 1]; q++) {
                gs_int pc = B->colind[q], J = pc / GS_TILE;
                int r = (int)(p - p0), c = (int)(pc - J * GS_TILE);
                if (pc == p) {
                    if (!unit_diag) P->dinv[p] = 1.0 / B->val[q];
                } else if (J == I) {
                    put_entry(P, &P->diag[I], true, (int)dk++, r, c, B->val[q]);
                } else {
                    put_entry(P, &P->tiles[where[J]], false, (int)cur[J]++, r, c, B->val[q]);
                }
            }
        }
        for (gs_int t = t0; t < t1; t++)
            if (P->tiles[t].fmt == GS_TILE_CSR) finish_csr(P, &P->tiles[t]);
        if (P->diag[I].fmt == GS_DTILE_CSR) finish_csr(P, &P->diag[I]);
    }
cleanup:
    gs_free(&scratch);
    return st;
}

/* Tile levels (level(I) = 1 + max level(J) over the off-diagonal tiles (I, J), 0 without any), the
 * tile rows sorted by level, and the chains of the level-set variant. */
static gs_status tile_levels(gs_tl_plan *P)
{
    gs_status st = GS_OK;
    gs_int nt = P->nt, *lev = NULL, *start = NULL;
    GS_TRY(GS_MALLOC(lev, nt));
    P->nlevels = 0;
    for (gs_int I = 0; I < nt; I++) {
        gs_int lv = 0;
        for (gs_int t = P->tile_ptr[I]; t < P->tile_ptr[I + 1]; t++)
            if (lev[P->tiles[t].col] + 1 > lv) lv = lev[P->tiles[t].col] + 1;
        lev[I] = lv;
        if (lv + 1 > P->nlevels) P->nlevels = lv + 1;
    }
    GS_TRY(GS_CALLOC(P->level_ptr, (size_t)P->nlevels + 1));
    GS_TRY(GS_MALLOC(P->level_rows, nt));
    GS_TRY(GS_MALLOC(start, (size_t)P->nlevels + 1));
    for (gs_int I = 0; I < nt; I++) P->level_ptr[lev[I] + 1]++;
    for (gs_int l = 0; l < P->nlevels; l++) P->level_ptr[l + 1] += P->level_ptr[l];
    memcpy(start, P->level_ptr, ((size_t)P->nlevels + 1) * sizeof *start);
    for (gs_int I = 0; I < nt; I++) P->level_rows[start[lev[I]]++] = I;

    /* chains: the level-set solver's rule (gs_ls_plan_chains) applied to the tile levels, a tile row
     * standing for a row; the chain arrays move to P, whatever the outcome (P frees them) */
    {
        gs_ls_plan C;
        memset(&C, 0, sizeof C);
        C.n = nt;
        C.nlevels = P->nlevels;
        C.level_ptr = P->level_ptr;
        gs_status chains = gs_ls_plan_chains(&C, P->chain_rows);
        P->chain_ptr = C.chain_ptr;
        P->chain_single = C.chain_single;
        P->chain_max_rows = C.chain_max_rows;
        P->nchains = C.nchains;
        P->single_chains = C.single_chains;
        P->multi_chains = C.multi_chains;
        P->max_level_rows = C.max_level_rows;
        GS_TRY(chains);
    }
cleanup:
    gs_free(&lev);
    gs_free(&start);
    return st;
}

gs_status gs_tl_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int chain_rows, gs_tl_plan *P)
{
    gs_status st = GS_OK;
    gs_csr B = {0};
    gs_int n = T->nrows;
    double t0 = gs_wtime();

    memset(P, 0, sizeof *P);
    if (chain_rows < 1) GS_FAIL(GS_ERR_ARG, "tile plan: chain_rows is %d; expected >= 1", (int)chain_rows);
    P->n = n;
    P->nt = (gs_int)(((int64_t)n + GS_TILE - 1) / GS_TILE);
    P->chain_rows = chain_rows;
    P->nnz_offdiag = T->nnz - (unit_diag ? 0 : n);

    /* B = T(perm, perm): lower triangular in positions for both sides, rows sorted */
    GS_TRY(renumber_by_levels(T, uplo, P));
    GS_TRY(gs_csr_permute(T, P->perm, &B));
    P->time_levels = gs_wtime() - t0;

    GS_TRY(GS_MALLOC(P->tile_ptr, (size_t)P->nt + 1));
    GS_TRY(GS_MALLOC(P->diag, P->nt));
    GS_TRY(find_tiles(&B, P));
    choose_formats(P);
    if ((uint64_t)P->idx_len > SIZE_MAX / 2 || (uint64_t)P->val_len > SIZE_MAX / sizeof(double))
        GS_FAIL(GS_ERR_MEM, "tile plan: %lld index bytes and %lld values do not fit in memory",
                (long long)P->idx_len, (long long)P->val_len);
    GS_TRY(GS_CALLOC(P->idx, (size_t)P->idx_len)); /* zeros: CSR row counts, dense padding */
    GS_TRY(GS_CALLOC(P->val, (size_t)P->val_len));
    GS_TRY(GS_MALLOC(P->dinv, n));
    GS_TRY(fill_tiles(&B, unit_diag, P));
    for (gs_int I = 0; I < P->nt; I++)
        if (!unit_diag || P->diag[I].nnz > 0) P->nonempty_diag++;
    GS_TRY(tile_levels(P));
    P->time_build = gs_wtime() - t0;
cleanup:
    gs_csr_free(&B);
    if (st != GS_OK) gs_tl_plan_free(P);
    return st;
}

/* One tile row I: the arithmetic of tiled_kernels.h, lane (h, r) of the GPU warp = acc[h][r]. Every
 * product is accumulated by fma() (one rounding), as the GPU's __fma_rn, and every other operation is
 * a single IEEE operation, so host and GPU agree bit for bit. */
static void solve_tile_row(const gs_tl_plan *P, gs_int I, const double *b, double *x, double *xp)
{
    double acc[2][GS_TILE], s[GS_TILE], di[GS_TILE];
    int q[GS_TILE], e[GS_TILE];
    gs_int t0 = P->tile_ptr[I], t1 = P->tile_ptr[I + 1], p0 = I * GS_TILE;
    int rows = P->n - p0 < GS_TILE ? (int)(P->n - p0) : GS_TILE;
    memset(acc, 0, sizeof acc);

    /* acc[h][r] = sum over the off-diagonal tiles of half h of B(p0 + r, :) xp */
    for (gs_int t = t0; t < t1; t++) {
        const gs_tile *tl = &P->tiles[t];
        double *a = acc[(t - t0) & 1];
        const uint8_t *ix = P->idx + tl->idx_off;
        const double *v = P->val + tl->val_off;
        const double *xj = xp + (size_t)tl->col * GS_TILE;
        if (tl->fmt == GS_TILE_DENSE) {
            for (int r = 0; r < GS_TILE; r++)
                for (int c = 0; c < GS_TILE; c++) a[r] = fma(v[c * GS_TILE + r], xj[c], a[r]);
        } else if (tl->fmt == GS_TILE_CSR) {
            for (int r = 0; r < GS_TILE; r++) {
                int end = r == GS_TILE - 1 ? tl->nnz : ix[r + 1];
                for (int k = ix[r]; k < end; k++) a[r] = fma(v[k], xj[ix[GS_TILE + k]], a[r]);
            }
        } else {
            for (int k = 0; k < tl->nnz; k++) a[ix[k] >> 4] = fma(v[k], xj[ix[k] & 15], a[ix[k] >> 4]);
        }
    }
    for (int r = 0; r < GS_TILE; r++) {
        bool valid = r < rows;
        di[r] = valid ? P->dinv[p0 + r] : 0.0;
        s[r] = valid ? b[P->perm[p0 + r]] - (acc[0][r] + acc[1][r]) : 0.0;
    }

    /* in-tile substitution: x_k = s_k dinv_k, then s_r -= B(r, k) x_k for r > k */
    const gs_tile *d = &P->diag[I];
    const uint8_t *ix = P->idx + d->idx_off;
    const double *v = P->val + d->val_off;
    if (d->fmt == GS_DTILE_CSR) {
        for (int r = 0; r < GS_TILE; r++) {
            q[r] = ix[r];
            e[r] = r == GS_TILE - 1 ? d->nnz : ix[r + 1];
        }
        for (int k = 0; k < GS_TILE - 1; k++) {
            double xk = s[k] * di[k];
            for (int r = k + 1; r < GS_TILE; r++)
                if (q[r] < e[r] && ix[GS_TILE + q[r]] == k) {
                    s[r] = fma(-v[q[r]], xk, s[r]);
                    q[r]++;
                }
        }
    } else if (d->fmt == GS_DTILE_DENSE) {
        for (int k = 0; k < GS_TILE - 1; k++) {
            double xk = s[k] * di[k];
            for (int r = k + 1; r < GS_TILE; r++) s[r] = fma(-v[packed_lower(r, k)], xk, s[r]);
        }
    }
    for (int r = 0; r < rows; r++) {
        double xv = s[r] * di[r];
        xp[p0 + r] = xv;
        x[P->perm[p0 + r]] = xv;
    }
}

void gs_tl_plan_solve_host(const gs_tl_plan *P, const double *b, double *x, double *xp)
{
    for (gs_int I = 0; I < P->nt; I++) solve_tile_row(P, I, b, x, xp);
}

void gs_tl_plan_view(const gs_tl_plan *P, gs_report *rep, const char *prefix)
{
    long long nt = P->nt;
    /* pools + tile descriptors + tile_ptr + dinv and perm */
    long long bytes = (long long)P->idx_len + 8LL * P->val_len +
                      (long long)sizeof(gs_tile) * (P->ntiles + nt) + 4LL * (nt + 1) + 12LL * P->n;
    gs_ts_report_int(rep, prefix, "tile_size", GS_TILE);
    gs_ts_report_int(rep, prefix, "tile_rows", nt);
    gs_ts_report_int(rep, prefix, "tiles", nt * (nt + 1) / 2);
    gs_ts_report_int(rep, prefix, "nonempty_tiles", (long long)P->ntiles + P->nonempty_diag);
    gs_ts_report_int(rep, prefix, "offdiag_tiles", P->ntiles);
    gs_ts_report_int(rep, prefix, "tiles_coo", P->fmt_count[GS_TILE_COO]);
    gs_ts_report_int(rep, prefix, "tiles_csr", P->fmt_count[GS_TILE_CSR]);
    gs_ts_report_int(rep, prefix, "tiles_dense", P->fmt_count[GS_TILE_DENSE]);
    gs_ts_report_int(rep, prefix, "diag_tiles_dia", P->diag_count[GS_DTILE_DIA]);
    gs_ts_report_int(rep, prefix, "diag_tiles_csr", P->diag_count[GS_DTILE_CSR]);
    gs_ts_report_int(rep, prefix, "diag_tiles_dense", P->diag_count[GS_DTILE_DENSE]);
    gs_ts_report_int(rep, prefix, "max_tiles_per_tile_row", P->max_tiles_per_row);
    gs_ts_report_int(rep, prefix, "row_levels", P->row_levels);
    gs_ts_report_int(rep, prefix, "tile_levels", P->nlevels);
    gs_ts_report_int(rep, prefix, "max_tile_rows_per_level", P->max_level_rows);
    gs_ts_report_double(rep, prefix, "tile_parallelism", P->nlevels ? (double)nt / P->nlevels : 0.0);
    gs_ts_report_int(rep, prefix, "chains", P->nchains);
    gs_ts_report_int(rep, prefix, "single_block_chains", P->single_chains);
    gs_ts_report_int(rep, prefix, "multi_block_levels", P->multi_chains);
    gs_ts_report_int(rep, prefix, "chain_tile_rows", P->chain_rows);
    gs_ts_report_int(rep, prefix, "storage_bytes", bytes);
    gs_ts_report_double(rep, prefix, "level_time", P->time_levels);
    gs_ts_report_double(rep, prefix, "build_time", P->time_build);
}

/* ---------------------------------------------------------------- the variant */

const char *gs_tl_variant_name(gs_tl_variant v) { return v == GS_TL_SYNCFREE ? "syncfree" : "levelset"; }

/* The level-set variant pays one launch per chain (thin levels share one block, each wide level is a
 * multi-block launch); the sync-free variant pays none (tile rows poll their inputs' ready values). The
 * rule (docs/notes-trisolve.md section 4.6): sync-free whenever the tile rows have dependencies -- it is
 * faster on every factor measured, a single chain of thin levels included; level-set only for one tile
 * level, which is one plain launch. The solver's parameters (tiled.variant) force either. */
gs_tl_variant gs_tl_variant_rule(const gs_tl_plan *P)
{
    return P->nlevels <= 1 ? GS_TL_LEVELSET : GS_TL_SYNCFREE; /* no dependencies: one plain launch */
}

gs_tl_variant gs_tl_choose_variant(const gs_tl_plan *P, gs_tiled_force force, bool *forced)
{
    *forced = force != GS_TILED_AUTO;
    if (force == GS_TILED_LEVELSET) return GS_TL_LEVELSET;
    if (force == GS_TILED_SYNCFREE) return GS_TL_SYNCFREE;
    return gs_tl_variant_rule(P);
}

/* ---------------------------------------------------------------- "tiled" on the host backend */

typedef struct tl_host_data {
    gs_tl_plan P;
    double *xp; /* x by position (allocated in analyse: solve allocates nothing) */
    gs_tl_variant variant;
    bool forced;
    double time_analyse;
} tl_host_data;

static gs_status tl_host_analyse(gs_trisolve *ts, const gs_csr *T)
{
    tl_host_data *d = (tl_host_data *)ts->data;
    gs_status st = GS_OK;
    double t0 = gs_wtime();
    gs_tl_plan_free(&d->P);
    gs_free(&d->xp);
    GS_TRY(gs_tl_plan_build(T, ts->uplo, ts->unit_diag, GS_TL_CHAIN_TILE_ROWS, &d->P));
    d->variant = gs_tl_choose_variant(&d->P, ts->prm.tiled.variant, &d->forced);
    GS_TRY(GS_MALLOC(d->xp, T->nrows));
    d->time_analyse = gs_wtime() - t0;
cleanup:
    if (st != GS_OK) gs_tl_plan_free(&d->P);
    return st;
}

static gs_status tl_host_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    tl_host_data *d = (tl_host_data *)ts->data;
    gs_tl_plan_solve_host(&d->P, b->data, x->data, d->xp);
    return GS_OK;
}

static void tl_host_destroy(gs_trisolve *ts)
{
    tl_host_data *d = (tl_host_data *)ts->data;
    if (!d) return;
    gs_tl_plan_free(&d->P);
    gs_free(&d->xp);
    gs_free(&ts->data);
}

static void tl_host_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const tl_host_data *d = (const tl_host_data *)ts->data;
    char key[256];
    gs_ts_report_string(rep, prefix, "implementation", "host tiles (tile rows in order; the GPU layout)");
    gs_ts_report_string(rep, prefix, "variant", gs_tl_variant_name(d->variant));
    if (gs_report_keyf(key, sizeof key, "%s.variant_forced", prefix) == GS_OK)
        (void)gs_report_bool(rep, key, d->forced);
    gs_tl_plan_view(&d->P, rep, prefix);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops tl_host_ops = {tl_host_analyse, tl_host_solve, tl_host_destroy, tl_host_view, NULL};

gs_status gs_trisolve_create_tiled_host(gs_trisolve *ts)
{
    tl_host_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &tl_host_ops;
    return GS_OK;
}
