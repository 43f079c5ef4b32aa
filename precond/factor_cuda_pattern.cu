/* ILU(0) and IC(0) on the GPU with their patterns built on the device from A (precond/factor_cuda.h):
 * only A is uploaded (or read from the caller's device copy); the factorization itself is the shared one of
 * factor_cuda.cu and factor_cuda_kernels.cu. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/mem.h"
#include "precond/factor_cuda_impl.h"

/* ================================================================ ILU(0) */

/* Entries of ILU(0)'s U factor (A's upper part plus the diagonals A lacks), counted on the host: only
 * where nnz(A) + n may exceed the 32-bit index range, with the host symbolic factorization's message. */
static gs_status fc_ilu0_check_size(const gs_csr *A)
{
    int64_t unz = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int p = A->rowptr[i], pe = A->rowptr[i + 1], d = p;
        while (d < pe && A->colind[d] < i) d++;
        unz += (pe - d) + ((d < pe && A->colind[d] == i) ? 0 : 1);
        if (unz > (int64_t)GS_INT_MAX)
            return GS_ERROR(GS_ERR_MEM, "the factor would have more than %d nonzeros (32-bit indices)",
                            (int)GS_INT_MAX);
    }
    return GS_OK;
}

/* Row r of ILU(0)'s patterns on the host (for a message): lrow = A's columns left of r, urow = r then
 * A's columns right of it. */
static gs_status fc_ilu0_row_pattern(const gs_csr *A, gs_int r, gs_int **lrow, gs_int **urow)
{
    const gs_int p0 = A->rowptr[r], pe = A->rowptr[r + 1];
    gs_int p = p0, nl = 0, nu = 0;
    GS_CALL(GS_MALLOC(*lrow, (size_t)(pe - p0) + 1));
    GS_CALL(GS_MALLOC(*urow, (size_t)(pe - p0) + 1));
    for (; p < pe && A->colind[p] < r; p++) (*lrow)[nl++] = A->colind[p];
    if (p == pe || A->colind[p] != r) (*urow)[nu++] = r;
    for (; p < pe; p++) (*urow)[nu++] = A->colind[p];
    return GS_OK;
}

/* Rounds a count up to a multiple of m (arrays carved after it stay 256-byte aligned). */
static size_t fc_round_up(size_t count, size_t m) { return (count + m - 1) / m * m; }

/* The pattern of ILU(0) from A (n > 0 rows) and the factorization on it: one arena for A (unless A_dev
 * gives it), L and U (their entries within nnz(A) + n), the work arrays; the factors handed over (keep, or
 * new host CSRs FL, FU). */
static gs_status fc_ilu0_device(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                                gs_factor_info *info, gs_factor_cuda_times *tm, gs_factor_dev *keep, gs_csr *FL,
                                gs_csr *FU)
{
    gs_status st = GS_OK;
    void *arena = NULL;
    gs_int *lrow = NULL, *urow = NULL;
    fc_stats hs;
    fc_dev D;
    gs_carver c = {NULL, 0};
    gs_int *lcnt = NULL, *ucnt = NULL, *cols = NULL, *d_ap = NULL, *d_ac = NULL;
    double *vals = NULL, *d_av = NULL, t0;
    /* the host runs gs_iluk_symbolic(A, 0) first: A's checks carry its name */
    const char *who_sym = "ILU(k) symbolic factorization";
    const gs_int n = A->nrows;
    cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
    const size_t nn = (size_t)n, na = (size_t)A->nnz;
    const size_t cap = na + nn + 64; /* L and U together: nnz(A) + the inserted diagonals (+ alignment) */
    /* A's room in the arena only when it is uploaded here */
    const size_t own_n1 = A_dev ? 0 : nn + 1, own_na = A_dev ? 0 : na;
    size_t scan_bytes = 0;
    memset(&D, 0, sizeof D);
    {
        if (cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            GS_FAIL(GS_ERR_CUDA, "ILU(0) on the GPU: cub could not size the row-pointer scan for n = %d", (int)n);
        }
        {
            const size_t sort_bytes = gs_fc_sort_bytes(n, gs_fc_key_bits(n));
            if (sort_bytes == 0)
                GS_FAIL(GS_ERR_CUDA, "ILU on the GPU: cub could not size the level sort for n = %d", (int)n);
            D.cub_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
        }

        /* one device allocation: A, L and U (their entries within `cap`), the work arrays */
        for (int pass = 0; pass < 2; pass++) {
            c.off = 0;
            D.stats = c.take<fc_stats>(1);
            d_ap = c.take<gs_int>(own_n1);
            d_ac = c.take<gs_int>(own_na);
            d_av = c.take<double>(own_na);
            D.lp = c.take<gs_int>(nn + 1);
            D.up = c.take<gs_int>(nn + 1);
            lcnt = c.take<gs_int>(nn + 1);
            ucnt = c.take<gs_int>(nn + 1);
            cols = c.take<gs_int>(cap);
            vals = c.take<double>(cap);
            gs_fc_carve_work(c, D, nn);
            if (pass == 0) {
                GS_TRY(gs_backend_alloc(be, &arena, c.off));
                c.base = (char *)arena;
            }
        }

        /* A on the device: the caller's copy (written on this stream, only read here), or an upload of A
         * only, through the pinned staging buffer (released before the kernels) */
        GS_TRY(gs_fc_device_A(A, A_dev, d_ap, d_ac, d_av, s, D, &tm->upload));

        /* checks of A, then the row lengths of L and U and their prefix sums (the row pointers) */
        t0 = gs_wtime();
        GS_TRY(gs_fc_check_A(s, A, D, &hs));
        GS_TRY(gs_fc_ilu0_count(s, n, D.ap, D.ac, lcnt, ucnt, D.stats));
        size_t bytes = D.cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(D.cub, bytes, (const gs_int *)lcnt, D.lp, (int)n + 1, s)));
        bytes = D.cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(D.cub, bytes, (const gs_int *)ucnt, D.up, (int)n + 1, s)));
        gs_int sizes[2] = {0, 0};
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&sizes[0], D.lp + nn, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&sizes[1], D.up + nn, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
        GS_TRY(gs_fc_download(s, &hs, D.stats, sizeof hs));
        if (hs.invalid) {
            tm->kernel = gs_wtime() - t0;
            GS_TRY(gs_fc_input_error(&hs, A, who_sym));
        }
        const gs_int nnz_l = sizes[0], nnz_u = sizes[1];
        if (nnz_l < 0 || nnz_u < n || fc_round_up((size_t)nnz_l, 64) + (size_t)nnz_u > cap)
            GS_FAIL(GS_ERR_INTERNAL, "ILU(0) on the GPU: the pattern counts %d + %d do not fit nnz(A) = %d, n = %d",
                    (int)nnz_l, (int)nnz_u, (int)A->nnz, (int)n);
        D.lc = cols;
        D.uc = cols + fc_round_up((size_t)nnz_l, 64);
        D.lv = vals;
        D.uv = vals + fc_round_up((size_t)nnz_l, 32);
        tm->lanes_per_row = gs_fc_lanes(((double)nnz_l + (double)nnz_u) / n);

        /* the patterns, then the factorization on them */
        GS_TRY(gs_fc_ilu0_fill(s, n, D.ap, D.ac, D.lp, D.up, D.lc, D.uc, D.stats));
        GS_TRY(gs_fc_factor(s, FC_ILU, n, D, o, tm->lanes_per_row));
        GS_TRY(gs_fc_download(s, &hs, D.stats, sizeof hs));
        tm->kernel = gs_wtime() - t0;
        tm->levels = hs.max_level + 1;

        t0 = gs_wtime();
        if (hs.err_key != FC_NONE) {
            gs_int r = (gs_int)(hs.err_key >> 32), off[2] = {0, 0};
            if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, r, o, info));
            GS_TRY(fc_ilu0_row_pattern(A, r, &lrow, &urow));
            GS_TRY(gs_fc_download(s, &off[0], D.lp + r, sizeof(gs_int)));
            GS_TRY(gs_fc_download(s, &off[1], D.up + r, sizeof(gs_int)));
            GS_TRY(gs_fc_factor_error(s, hs.err_key, A, o, false, lrow, D.lv + off[0], urow, D.uv + off[1]));
        }
        GS_TRY(gs_fc_hand_over(be, s, gs_fc_view(n, nnz_l, D.lp, D.lc, D.lv), gs_fc_view(n, nnz_u, D.up, D.uc, D.uv),
                               &arena, 1, keep, FL, FU));
        if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, n, o, info));
        tm->download = gs_wtime() - t0;
    }
cleanup:
    if (arena) gs_backend_free(be, arena);
    gs_free(&lrow);
    gs_free(&urow);
    return st;
}

gs_status gs_ilu0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                               gs_csr *L, gs_csr *U, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    gs_csr FL, FU;
    gs_factor_cuda_times tm;
    /* the host runs gs_iluk_symbolic(A, 0) first: A's checks carry its name */
    const char *who = "ILU numeric factorization", *who_sym = "ILU(k) symbolic factorization";

    memset(&tm, 0, sizeof tm);
    memset(&FL, 0, sizeof FL);
    memset(&FU, 0, sizeof FU);
    gs_fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &gs_fc_default_opts;
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilu0_numeric_cuda: output L or U is NULL");
    memset(L, 0, sizeof *L);
    memset(U, 0, sizeof *U);
    GS_CALL(gs_fc_check_backend(be, who));
    GS_CALL(gs_fc_check_opts(o, who));
    gs_factor_dev_free(keep);
    GS_CALL(gs_fc_check_matrix(A, who_sym));
    const gs_int n = A->nrows;
    if ((int64_t)A->nnz + n > (int64_t)GS_INT_MAX) { /* U might not fit 32-bit indices: count it here */
        GS_CALL(gs_factor_check_input(A, who_sym));
        GS_CALL(fc_ilu0_check_size(A));
    }
    if (A->nnz > 0 && !A->val) {
        GS_CALL(gs_factor_check_input(A, who_sym));
        return GS_ERROR(GS_ERR_ARG, "ILU numeric factorization: the matrix has no values");
    }
    GS_CALL(gs_fc_check_dev_copy(A, A_dev, "ILU(0)"));
    if (n == 0) {
        GS_TRY(gs_csr_alloc(&FL, 0, 0, 0, true));
        GS_TRY(gs_csr_alloc(&FU, 0, 0, 0, true));
    } else {
        GS_TRY(fc_ilu0_device(be, A, A_dev, o, info, &tm, keep, &FL, &FU));
    }
    gs_fc_publish(&FL, &FU, L, U, info);
    if (t) *t = tm;
cleanup:
    gs_csr_free(&FL);
    gs_csr_free(&FU);
    return st;
}

/* ================================================================ IC(0) */

/* L's pattern from A (n > 0 rows; the lower triangle, the diagonal last), the factorization, and LT = L^T:
 * a first arena for A (unless A_dev gives it) and L's row pointers, a second, once L's size is known, for L,
 * LT and the work arrays; the factors handed over (keep, or new host CSRs F1, F2). */
static gs_status fc_ic0_device(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                               gs_factor_info *info, gs_factor_cuda_times *tm, gs_factor_dev *keep, gs_csr *F1,
                               gs_csr *F2)
{
    gs_status st = GS_OK;
    void *arena = NULL, *arena2 = NULL;
    fc_stats hs;
    fc_dev D;
    gs_carver c = {NULL, 0};
    gs_int *up_ap = NULL, *up_ac = NULL, *d_cnt = NULL, *row = NULL, *eidx = NULL, *tcol = NULL, *tidx = NULL;
    gs_int *tp = NULL, *tc = NULL, nnz_l = 0;
    double *up_av = NULL, *tv = NULL, t0;
    void *d_scan = NULL;
    const char *who = "IC(0) factorization";
    const gs_int n = A->nrows;
    cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
    const size_t nn = (size_t)n, na = (size_t)A->nnz;
    /* A's room in the arena only when it is uploaded here */
    const size_t own_n1 = A_dev ? 0 : nn + 1, own_na = A_dev ? 0 : na;
    size_t scan_bytes = 0;
    memset(&D, 0, sizeof D);
    {
        if (cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            GS_FAIL(GS_ERR_CUDA, "IC(0) on the GPU: cub could not size the row-pointer scan for n = %d", (int)n);
        }
        for (int pass = 0; pass < 2; pass++) {
            c.off = 0;
            D.stats = c.take<fc_stats>(1);
            up_ap = c.take<gs_int>(own_n1);
            up_ac = c.take<gs_int>(own_na);
            up_av = c.take<double>(own_na);
            d_cnt = c.take<gs_int>(nn + 1);
            D.lp = c.take<gs_int>(nn + 1);
            d_scan = c.take<char>(scan_bytes);
            if (pass == 0) {
                GS_TRY(gs_backend_alloc(be, &arena, c.off));
                c.base = (char *)arena;
            }
        }

        /* A on the device: the caller's copy, or an upload (released before the kernels) */
        GS_TRY(gs_fc_device_A(A, A_dev, up_ap, up_ac, up_av, s, D, &tm->upload));

        /* checks of A, then L's row pointers: (entries left of the diagonal + 1) summed */
        t0 = gs_wtime();
        GS_TRY(gs_fc_check_A(s, A, D, &hs));
        GS_TRY(gs_fc_ic_count(s, n, D.ap, D.ac, d_cnt, D.stats));
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, (const gs_int *)d_cnt, D.lp, (int)n + 1, s)));
        GS_TRY(gs_fc_download(s, &hs, D.stats, sizeof hs));
        if (hs.invalid) {
            tm->kernel = gs_wtime() - t0;
            GS_TRY(gs_fc_input_error(&hs, A, who));
        }
        GS_TRY(gs_fc_download(s, &nnz_l, D.lp + nn, sizeof nnz_l));
        const size_t nl = (size_t)nnz_l;
        {
            const size_t sort_rows = gs_fc_sort_bytes(n, gs_fc_key_bits(n));
            const size_t sort_ent = gs_fc_sort_bytes(nnz_l, gs_fc_key_bits(n));
            if (!sort_rows || !sort_ent)
                GS_FAIL(GS_ERR_CUDA, "IC(0) on the GPU: cub could not size the sorts (n = %d)", (int)n);
            D.cub_bytes = sort_rows > sort_ent ? sort_rows : sort_ent;
        }
        tm->lanes_per_row = gs_fc_lanes((double)nnz_l / n);

        /* L, LT and the work arrays */
        for (int pass = 0; pass < 2; pass++) {
            c.base = pass ? (char *)arena2 : NULL;
            c.off = 0;
            D.lc = c.take<gs_int>(nl);
            D.lv = c.take<double>(nl);
            row = c.take<gs_int>(nl);
            eidx = c.take<gs_int>(nl);
            tcol = c.take<gs_int>(nl);
            tidx = c.take<gs_int>(nl);
            tp = c.take<gs_int>(nn + 1);
            tc = c.take<gs_int>(nl);
            tv = c.take<double>(nl);
            gs_fc_carve_work(c, D, nn);
            if (pass == 0) GS_TRY(gs_backend_alloc(be, &arena2, c.off));
        }
        /* L's pattern: the strict lower triangle of A, then the diagonal; the factorization */
        GS_TRY(gs_fc_ic_fill(s, n, D.ap, D.ac, D.lp, D.lc, row, eidx, D.stats));
        GS_TRY(gs_fc_factor(s, FC_IC0, n, D, o, tm->lanes_per_row));
        /* LT = L^T: entries sorted by column (stable: rows increasing within a column) */
        size_t bytes = D.cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(D.cub, bytes, (const unsigned *)D.lc, (unsigned *)tcol,
                                                       (const gs_int *)eidx, tidx, (int)nnz_l, 0, gs_fc_key_bits(n),
                                                       s)));
        GS_TRY(gs_fc_ic_transpose(s, n, nnz_l, tcol, tidx, row, D.lv, tp, tc, tv, D.stats));
        GS_TRY(gs_fc_download(s, &hs, D.stats, sizeof hs));
        tm->kernel = gs_wtime() - t0;
        tm->levels = hs.max_level + 1;

        t0 = gs_wtime();
        if (hs.err_key != FC_NONE) {
            gs_int r = (gs_int)(hs.err_key >> 32), lb = 0;
            if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, r, o, info));
            GS_TRY(gs_fc_download(s, &lb, D.lp + r, sizeof lb));
            GS_TRY(gs_fc_factor_error(s, hs.err_key, A, o, true, A->colind + A->rowptr[r], D.lv + lb, NULL, NULL));
        }
        {
            void *arenas[2] = {arena, arena2};
            GS_TRY(gs_fc_hand_over(be, s, gs_fc_view(n, nnz_l, D.lp, D.lc, D.lv), gs_fc_view(n, nnz_l, tp, tc, tv),
                                   arenas, 2, keep, F1, F2));
            arena = arenas[0];
            arena2 = arenas[1];
        }
        if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, n, o, info));
        tm->download = gs_wtime() - t0;
    }
cleanup:
    if (arena2) gs_backend_free(be, arena2);
    if (arena) gs_backend_free(be, arena);
    return st;
}

gs_status gs_ic0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                              gs_csr *L, gs_csr *LT, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    gs_csr F1, F2;
    gs_factor_cuda_times tm;
    const char *who = "IC(0) factorization";

    memset(&tm, 0, sizeof tm);
    memset(&F1, 0, sizeof F1);
    memset(&F2, 0, sizeof F2);
    gs_fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &gs_fc_default_opts;
    GS_CALL(gs_fc_check_backend(be, who));
    GS_CALL(gs_fc_check_opts(o, who));
    if (!L || !LT) return GS_ERROR(GS_ERR_ARG, "gs_ic0_numeric_cuda: output L or LT is NULL");
    memset(L, 0, sizeof *L);
    memset(LT, 0, sizeof *LT);
    gs_factor_dev_free(keep);
    GS_CALL(gs_fc_check_matrix(A, who));
    if (A->nnz > 0 && !A->val) {
        GS_CALL(gs_factor_check_input(A, who));
        return GS_ERROR(GS_ERR_ARG, "IC(0) factorization: the matrix has no values");
    }
    const gs_int n = A->nrows;
    if ((int64_t)A->nnz + n > (int64_t)GS_INT_MAX)
        return GS_ERROR(GS_ERR_MEM, "IC(0): the factor may have more than %d nonzeros", (int)GS_INT_MAX);
    GS_CALL(gs_fc_check_dev_copy(A, A_dev, "IC(0)"));
    if (n == 0) {
        GS_TRY(gs_csr_alloc(&F1, 0, 0, 0, true));
        GS_TRY(gs_csr_alloc(&F2, 0, 0, 0, true));
    } else {
        GS_TRY(fc_ic0_device(be, A, A_dev, o, info, &tm, keep, &F1, &F2));
    }
    gs_fc_publish(&F1, &F2, L, LT, info);
    if (t) *t = tm;
cleanup:
    gs_csr_free(&F1);
    gs_csr_free(&F2);
    return st;
}
