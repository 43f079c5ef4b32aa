/* The merged-level transformation of a triangular factor, on the host: the host twin of the GPU builder
 * (merge_cuda.cu) and the definition the sync-free solver's "merged" schedule is checked against.
 *
 * A level-order solve pays one dependency hop per level. Merging m consecutive levels into a GROUP
 * (group(i) = level(i) / m) and splitting T = T_D + T_O, with T_D the entries inside a group (and the
 * diagonal) and T_O the entries reading an earlier group:
 *     T x = b   <=>   T_D x = b - T_O x   <=>   x = y - R x,   y = T_D^{-1} b,   R = T_D^{-1} T_O.
 * T_D is block diagonal by groups (at most m levels), R reads only earlier groups, so
 *     x = M^{-1} (T_D^{-1} b),   M = I + R (unit diagonal),
 * two triangular solves with m and ceil(levels / m) levels instead of one with `levels`. The price is
 * the fill of R (a 5-point 2D factor with m = 8: ~5 entries per row; a 7-point 3D factor with m = 4:
 * ~8; docs/notes-trisolve.md section 4.3) and a different rounding: x is the same in exact arithmetic, and for a
 * diagonally dominant T (sum_j |t_ij| < |t_ii|) every row of R has sum_j |R_ij| < 1 (the error analysis
 * of substitution applies to both solves).
 *
 * R row by row, rows in dependency order (lower: increasing, upper: decreasing index), so that every
 * R_k a row reads is final; with the entries of row i taken in CSR order,
 *     acc = 0;  for t_ij, j != i:  group(j) < group(i):  acc[j] = acc[j] + t_ij
 *                                  otherwise:            acc[c] = acc[c] - t_ij * R_jc  (R_j in column order)
 *     R_ic = acc[c] * (1 / t_ii)   (unit diagonal: acc[c]),
 * products and sums rounded separately (no fused multiply-add: this file is compiled with
 * -ffp-contract=off, the GPU builder uses __dmul_rn / __dsub_rn), so the GPU builder, which sums each
 * column's contributions in the same order, gives bit-identical values. */
#include <math.h>
#include <string.h>

#include "core/backend.h"
#include "core/mem.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/merge_kernels.h"
#include "trisolve/trisolve_impl.h"

gs_status gs_ts_merge_build_host(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int m, long long max_fill,
                                 gs_csr *TD, gs_csr *M, gs_ts_merge_stats *stats)
{
    gs_status st = GS_OK;
    const gs_int n = T->nrows;
    const gs_int *rp = T->rowptr, *ci = T->colind;
    const double *tv = T->val;
    gs_int *level = NULL, *rptr = NULL, *stamp = NULL, *touched = NULL;
    gs_int *rcol = NULL;
    double *rval = NULL, *acc = NULL;
    long long cap = 0, used = 0;

    memset(TD, 0, sizeof *TD);
    memset(M, 0, sizeof *M);
    memset(stats, 0, sizeof *stats);
    const double t0 = gs_wtime();
    if (m < 1) GS_FAIL(GS_ERR_ARG, "merged schedule: %d levels per group; expected >= 1", (int)m);
    stats->m = m;
    GS_TRY(GS_MALLOC(level, n > 0 ? n : 1));
    stats->levels = gs_ls_levels(T, uplo, level);
    stats->groups = (stats->levels + m - 1) / m;

    /* T_D: the diagonal and the entries inside the row's group, in CSR order */
    {
        gs_int nnz = 0;
        for (gs_int i = 0; i < n; i++)
            for (gs_int q = rp[i]; q < rp[i + 1]; q++)
                if (ci[q] == i || level[ci[q]] / m == level[i] / m) nnz++;
        GS_TRY(gs_csr_alloc(TD, n, n, nnz, true));
        nnz = 0;
        for (gs_int i = 0; i < n; i++) {
            for (gs_int q = rp[i]; q < rp[i + 1]; q++)
                if (ci[q] == i || level[ci[q]] / m == level[i] / m) {
                    TD->colind[nnz] = ci[q];
                    TD->val[nnz] = tv[q];
                    nnz++;
                }
            TD->rowptr[i + 1] = nnz;
        }
        stats->nnz_td_off = nnz - (unit_diag ? 0 : n);
    }

    /* R, rows in dependency order; row i's entries at rcol/rval[rptr[i] .. rptr[i] + len) with
     * len = rptr[n + i] (two arrays in one: start and length by row) */
    GS_TRY(GS_MALLOC(rptr, 2 * (size_t)n + 1));
    GS_TRY(GS_MALLOC(stamp, n > 0 ? n : 1));
    GS_TRY(GS_MALLOC(touched, n > 0 ? n : 1));
    GS_TRY(GS_MALLOC(acc, n > 0 ? n : 1));
    for (gs_int i = 0; i < n; i++) stamp[i] = -1;
    cap = (long long)T->nnz + 16;
    GS_TRY(GS_MALLOC(rcol, (size_t)cap));
    GS_TRY(GS_MALLOC(rval, (size_t)cap));
    for (gs_int t = 0; t < n; t++) {
        const gs_int i = uplo == GS_LOWER ? t : n - 1 - t, gi = level[i] / m;
        gs_int nt = 0;
        double d = 1.0;
        for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
            const gs_int j = ci[q];
            if (j == i) {
                d = tv[q];
                continue;
            }
            if (level[j] / m < gi) {
                if (stamp[j] != i) {
                    stamp[j] = i;
                    acc[j] = 0.0;
                    touched[nt++] = j;
                }
                acc[j] = acc[j] + tv[q];
            } else {
                const gs_int s0 = rptr[j], s1 = s0 + rptr[n + j];
                for (gs_int s = s0; s < s1; s++) {
                    const gs_int c = rcol[s];
                    if (stamp[c] != i) {
                        stamp[c] = i;
                        acc[c] = 0.0;
                        touched[nt++] = c;
                    }
                    const double prod = tv[q] * rval[s];
                    acc[c] = acc[c] - prod;
                }
            }
        }
        const double dinv = 1.0 / d;
        /* the row's columns in increasing order (insertion sort: rows are short) */
        for (gs_int a = 1; a < nt; a++) {
            gs_int c = touched[a], b = a - 1;
            while (b >= 0 && touched[b] > c) {
                touched[b + 1] = touched[b];
                b--;
            }
            touched[b + 1] = c;
        }
        if (used + nt > max_fill) { /* too much fill: the caller keeps the level order */
            stats->too_much_fill = true;
            goto cleanup;
        }
        if (used + nt > cap) {
            long long ncap = 2 * cap > used + nt ? 2 * cap : used + nt;
            if (ncap > max_fill) ncap = max_fill;
            GS_TRY(gs_realloc(&rcol, (size_t)ncap, sizeof *rcol));
            GS_TRY(gs_realloc(&rval, (size_t)ncap, sizeof *rval));
            cap = ncap;
        }
        rptr[i] = (gs_int)used;
        rptr[n + i] = nt;
        double rowsum = 0.0;
        for (gs_int a = 0; a < nt; a++) {
            const gs_int c = touched[a];
            const double r = unit_diag ? acc[c] : acc[c] * dinv;
            rcol[used + a] = c;
            rval[used + a] = r;
            rowsum += fabs(r);
        }
        used += nt;
        if (nt > stats->max_row_r) stats->max_row_r = nt;
        if (rowsum > stats->growth || rowsum != rowsum) stats->growth = rowsum;
    }
    stats->nnz_r = used;

    /* M = I + R: unit diagonal (not stored), rows in natural order */
    GS_TRY(gs_csr_alloc(M, n, n, (gs_int)used, true));
    {
        gs_int nnz = 0;
        for (gs_int i = 0; i < n; i++) {
            memcpy(M->colind + nnz, rcol + rptr[i], (size_t)rptr[n + i] * sizeof(gs_int));
            memcpy(M->val + nnz, rval + rptr[i], (size_t)rptr[n + i] * sizeof(double));
            nnz += rptr[n + i];
            M->rowptr[i + 1] = nnz;
        }
    }
cleanup:
    if (st != GS_OK || stats->too_much_fill) {
        gs_csr_free(TD);
        gs_csr_free(M);
    }
    stats->build_time = gs_wtime() - t0;
    gs_free(&level);
    gs_free(&rptr);
    gs_free(&stamp);
    gs_free(&touched);
    gs_free(&acc);
    gs_free(&rcol);
    gs_free(&rval);
    return st;
}

gs_status gs_ts_merge_solve_host(const gs_csr *TD, const gs_csr *M, gs_uplo uplo, bool unit_diag, const double *b,
                                 double *y, double *x)
{
    gs_trisolve_reference_host(TD, uplo, unit_diag, b, y);
    gs_trisolve_reference_host(M, uplo, true, y, x);
    return GS_OK;
}
