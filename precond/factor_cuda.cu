/* The GPU factorizations' host side (precond/factor_cuda.h): the input checks and the messages in the
 * host's wording, the driver steps every factorization shares (the work arrays, the factorization's launch
 * sequence, the hand-over of the factors), and numeric ILU on host patterns (any fill level). ILU(0) and
 * IC(0) with their patterns built on the device: factor_cuda_pattern.cu; the kernels, their schedule and
 * arithmetic: factor_cuda_kernels.cu. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/mem.h"
#include "core/staging_cuda.h"
#include "precond/factor_cuda_impl.h"

/* ================================================================ checks and messages */

const gs_factor_opts gs_fc_default_opts = {GS_ZERO_PIVOT_ERROR, 0.0, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

bool gs_factor_cuda_available(void) { return true; }

/* 0-based row number of local row i as reported in messages and info (precond/factor.h). */
static gs_int fc_reported(const gs_factor_opts *o, gs_int i)
{
    return (o->row_names ? o->row_names[i] : i) + o->row_offset;
}

void gs_fc_info_init(gs_factor_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    info->first_shifted = -1;
    for (int k = 0; k < 16; k++) info->shifted_rows[k] = -1;
}

/* MILU has no GPU factorization (the caller factors on the host instead). */
gs_status gs_fc_check_opts(const gs_factor_opts *o, const char *who)
{
    if (o->milu)
        return GS_ERROR(GS_ERR_UNSUPPORTED,
                        "%s on the GPU: MILU (preconditioner.milu) is computed on the host only; set "
                        "preconditioner.factor_on = \"host\"",
                        who);
    return GS_OK;
}

gs_status gs_fc_check_backend(gs_backend *be, const char *who)
{
    if (!be || be->kind != GS_BACKEND_CUDA || !gs_backend_cuda_stream(be))
        return GS_ERROR(GS_ERR_ARG, "%s on the GPU needs the cuda backend, got the %s backend", who,
                        be && be->name ? be->name : "(none)");
    return GS_OK;
}

/* A square, arrays present, row pointers spanning [0, nnz] (rows themselves: on the device). */
gs_status gs_fc_check_matrix(const gs_csr *A, const char *who)
{
    if (!A) return GS_ERROR(GS_ERR_ARG, "%s: the matrix is NULL", who);
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix must be square, got %d x %d", who, (int)A->nrows, (int)A->ncols);
    if (A->nrows < 0 || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix has no row pointers or column indices", who);
    if (A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz)
        return GS_ERROR(GS_ERR_ARG, "%s: the row pointers run from %d to %d, expected 0 to nnz = %d", who,
                        (int)A->rowptr[0], (int)A->rowptr[A->nrows], (int)A->nnz);
    return GS_OK;
}

/* A_dev, a device copy of A given by the caller (the solver's operator), must have A's sizes. */
gs_status gs_fc_check_dev_copy(const gs_csr *A, const gs_csr_dev *A_dev, const char *who)
{
    if (!A_dev) return GS_OK;
    if (A_dev->nrows != A->nrows || A_dev->ncols != A->ncols || A_dev->nnz != A->nnz ||
        (A->nnz > 0 && (!A_dev->colind || !A_dev->val)) || (A->nrows > 0 && !A_dev->rowptr))
        return GS_ERROR(GS_ERR_ARG,
                        "%s on the GPU: the device copy of A is %d x %d with %d entries, the host matrix %d x %d "
                        "with %d; pass the upload of the same matrix",
                        who, (int)A_dev->nrows, (int)A_dev->ncols, (int)A_dev->nnz, (int)A->nrows, (int)A->ncols,
                        (int)A->nnz);
    return GS_OK;
}

/* A on the device for a factorization: the caller's copy A_dev (written on stream s, only read), or A
 * uploaded into ap, ac, av (room for it in the arena) through the pinned staging buffer, released before
 * return; *d gets whichever, *upload the upload's wall time (0 for A_dev). */
static gs_status fc_device_A(const gs_csr *A, const gs_csr_dev *A_dev, gs_int *ap, gs_int *ac, double *av,
                            cudaStream_t s, gs_csr_dev *d, double *upload)
{
    gs_status st = GS_OK;
    gs_stage S;
    const size_t nn = (size_t)A->nrows, na = (size_t)A->nnz;
    memset(&S, 0, sizeof S);
    *upload = 0.0;
    if (A_dev) {
        *d = *A_dev;
        return GS_OK;
    }
    d->nrows = A->nrows;
    d->ncols = A->ncols;
    d->nnz = A->nnz;
    d->rowptr = ap;
    d->colind = ac;
    d->val = av;
    double t0 = gs_wtime();
    GS_TRY(gs_stage_begin(&S, (nn + 1) * sizeof(gs_int) + na * (sizeof(gs_int) + sizeof(double))));
    GS_TRY(gs_stage_copy(&S, ap, A->rowptr, (nn + 1) * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, ac, A->colind, na * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, av, A->val, na * sizeof(double), s));
    GS_TRY(gs_stage_end(&S));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s))); /* the small (unstaged) copies too */
    *upload = gs_wtime() - t0;
cleanup:
    {
        gs_status se = gs_stage_end(&S);
        if (st == GS_OK) st = se;
    }
    return st;
}

gs_status gs_fc_device_A(const gs_csr *A, const gs_csr_dev *A_dev, gs_int *ap, gs_int *ac, double *av,
                         cudaStream_t s, fc_dev &D, double *upload)
{
    gs_csr_dev Ad;
    GS_CALL(fc_device_A(A, A_dev, ap, ac, av, s, &Ad, upload));
    D.ap = Ad.rowptr;
    D.ac = Ad.colind;
    D.av = Ad.val;
    return GS_OK;
}

gs_status gs_fc_check_A(cudaStream_t s, const gs_csr *A, const fc_dev &D, fc_stats *hs)
{
    fc_check_args ca;
    memset(&ca, 0, sizeof ca);
    ca.n = A->nrows;
    ca.nnz_a = A->nnz;
    ca.ap = D.ap;
    ca.ac = D.ac;
    ca.stats = D.stats;
    return gs_fc_check_launch(s, ca, hs);
}

/* Messages of the device checks, the host's wording: row pointers, A's rows, then the patterns. */
gs_status gs_fc_input_error(const fc_stats *s, const gs_csr *A, const char *who)
{
    if (s->bad_ptr != FC_NONE) {
        static const char *names[3] = {"the matrix", "the L pattern", "the U pattern"};
        gs_int r = (gs_int)(s->bad_ptr >> 2);
        return GS_ERROR(GS_ERR_ARG, "%s: the row pointers of %s decrease or leave 0..nnz at row %d (1-based)", who,
                        names[s->bad_ptr & 3ULL], (int)r + 1);
    }
    if (s->bad_a != FC_NONE) {
        gs_int r = (gs_int)(s->bad_a >> 32), p = A->rowptr[r] + (gs_int)(s->bad_a & 0xFFFFFFFFULL);
        gs_int j = A->colind[p];
        if (j < 0 || j >= A->ncols)
            return GS_ERROR(GS_ERR_ARG, "%s: row %d (1-based) has column %d, outside 1..%d", who, (int)r + 1,
                            (int)j + 1, (int)A->ncols);
        return GS_ERROR(GS_ERR_ARG,
                        "%s: row %d (1-based) is not sorted or has a duplicate column %d; "
                        "sort and sum duplicates first (gs_csr_sort_dedupe)",
                        who, (int)r + 1, (int)j + 1);
    }
    if (s->bad_pat != FC_NONE) {
        int r = (int)(s->bad_pat >> 2) + 1;
        switch ((int)(s->bad_pat & 3ULL)) {
        case FC_PAT_L:
            return GS_ERROR(GS_ERR_ARG,
                            "ILU numeric factorization: row %d (1-based) of the L pattern is not "
                            "strictly lower triangular and sorted",
                            r);
        case FC_PAT_UDIAG:
            return GS_ERROR(GS_ERR_ARG,
                            "ILU numeric factorization: row %d (1-based) of the U pattern does not "
                            "start with its diagonal",
                            r);
        default:
            return GS_ERROR(GS_ERR_ARG,
                            "ILU numeric factorization: row %d (1-based) of the U pattern is not "
                            "sorted upper triangular",
                            r);
        }
    }
    return GS_ERROR(GS_ERR_INTERNAL, "%s: the device checks flagged the input but recorded no row", who);
}

static gs_status fc_nonfinite_error(const gs_factor_opts *o, gs_int i, gs_int j, double v, const char *what)
{
    return GS_ERROR(GS_ERR_NUMERIC,
                    "non-finite value %g in row %d (1-based), column %d of the %s: the factorization "
                    "is unstable for this matrix (tiny pivots, growth); try "
                    "preconditioner.zero_pivot = \"shift\" with a larger shift, a reordering, or "
                    "another preconditioner",
                    v, (int)fc_reported(o, i) + 1, (int)j + 1, what);
}

gs_status gs_fc_download(cudaStream_t s, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return GS_OK;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    return GS_OK;
}

/* The message of the first failing row r (key from the kernel), the host's wording; values the message
 * shows are read back from where the failing row stored them. ILU: lv_row/uv_row = the device values of
 * row r (L and U parts); IC(0): lv_row = row r of L on the device. */
gs_status gs_fc_factor_error(cudaStream_t s, unsigned long long key, const gs_csr *A, const gs_factor_opts *o,
                             bool ic, const gs_int *L_colind_row, const double *lv_row, const gs_int *U_colind_row,
                             const double *uv_row)
{
    const gs_int r = (gs_int)(key >> 32);
    const unsigned kind = (unsigned)((key >> 28) & 0xFULL);
    const gs_int pos = (gs_int)(key & FC_POS_MAX);
    const gs_int rr = fc_reported(o, r) + 1;
    double v = 0.0;
    if (kind == FC_KIND_A) {
        gs_int p = A->rowptr[r] + pos;
        return GS_ERROR(GS_ERR_NUMERIC,
                        "the matrix entry A(%d,%d) = %g is not finite (row %d, 1-based); the "
                        "input matrix must hold finite values",
                        (int)rr, (int)A->colind[p] + 1, A->val[p], (int)rr);
    }
    if (kind == FC_KIND_L) {
        GS_CALL(gs_fc_download(s, &v, lv_row + pos, sizeof v));
        return fc_nonfinite_error(o, r, L_colind_row[pos], v, ic ? "incomplete Cholesky factor" : "L factor");
    }
    if (ic) {
        /* the row stored d = a_ii - sum_k l_ik^2 in its diagonal slot */
        gs_int nd = 0;
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1] && A->colind[p] < r; p++) nd++;
        GS_CALL(gs_fc_download(s, &v, lv_row + nd, sizeof v));
        if (kind == FC_KIND_U) return fc_nonfinite_error(o, r, r, v, "incomplete Cholesky factor");
        if (o->zero_pivot == GS_ZERO_PIVOT_GROW)
            return GS_ERROR(GS_ERR_NUMERIC,
                            "pivot at row %d (1-based) of the incomplete Cholesky factorization: a_ii - sum_k "
                            "l_ik^2 = %g is not positive or below min_pivot * ||a_i||_inf",
                            (int)rr, v);
        if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT)
            return GS_ERROR(GS_ERR_NUMERIC,
                            "non-positive pivot at row %d (1-based) of the incomplete Cholesky "
                            "factorization: a_ii - sum_k l_ik^2 = %g (must be > 0; the matrix is not "
                            "positive definite, or IC(0) broke down on it); set "
                            "preconditioner.zero_pivot = \"shift\" to perturb it, or use ilu0",
                            (int)rr, v);
        return GS_ERROR(GS_ERR_NUMERIC,
                        "non-positive pivot at row %d (1-based) of the incomplete Cholesky "
                        "factorization: %g, and preconditioner.shift = %g cannot replace it (need a "
                        "positive, finite shift)",
                        (int)rr, v, o->shift);
    }
    GS_CALL(gs_fc_download(s, &v, uv_row + (kind == FC_KIND_U ? pos : 0), sizeof v));
    if (kind == FC_KIND_U) return fc_nonfinite_error(o, r, U_colind_row[pos], v, "U factor");
    if (o->zero_pivot == GS_ZERO_PIVOT_GROW)
        return GS_ERROR(GS_ERR_NUMERIC,
                        "pivot at row %d (1-based) of the factorization: |u_ii| = %g is below "
                        "max(DBL_MIN, min_pivot * ||a_i||_inf)",
                        (int)rr, fabs(v));
    if (o->zero_pivot != GS_ZERO_PIVOT_SHIFT) {
        bool has_diag = false;
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1]; p++) has_diag |= A->colind[p] == r;
        return GS_ERROR(GS_ERR_NUMERIC,
                        "zero pivot at row %d (1-based) of the factorization: u_ii = %g%s; set "
                        "preconditioner.zero_pivot = \"grow\" or \"shift\" to perturb it, or system.matching = \"mwm\" to put "
                        "large entries on the diagonal",
                        (int)rr, v, has_diag ? "" : " (A stores no diagonal entry in this row)");
    }
    return GS_ERROR(GS_ERR_NUMERIC,
                    "zero pivot at row %d (1-based) of the factorization: u_ii = %g, and "
                    "preconditioner.shift = %g cannot replace it (need a positive, finite shift)",
                    (int)rr, v, o->shift);
}

/* info's shifted rows: the rows below `limit` (the failing row, or n) flagged by the kernel, ascending. */
gs_status gs_fc_collect_shifts(cudaStream_t s, const unsigned char *d_shifted, gs_int n, gs_int limit,
                               const gs_factor_opts *o, gs_factor_info *info)
{
    gs_status st = GS_OK;
    unsigned char *h = NULL;
    if (!info || limit <= 0) return GS_OK;
    GS_TRY(GS_MALLOC(h, n));
    GS_TRY(gs_fc_download(s, h, d_shifted, (size_t)limit));
    for (gs_int i = 0; i < limit; i++) {
        if (!h[i]) continue;
        gs_int r = fc_reported(o, i);
        if (info->nshifted < 16) info->shifted_rows[info->nshifted] = r;
        if (info->nshifted == 0) info->first_shifted = r;
        info->nshifted++;
    }
cleanup:
    gs_free(&h);
    return st;
}

/* Lanes per row from the mean pattern length: 8 for stencil-like rows (four rows per warp: more rows in
 * flight on a wide wavefront), 32 for long rows (ILU(k), 27-point). */
int gs_fc_lanes(double mean_len) { return mean_len <= 16.0 ? 8 : 32; }

/* ================================================================ the steps every factorization shares */

void gs_fc_carve_work(gs_carver &c, fc_dev &D, size_t nn)
{
    D.level = c.take<gs_int>(nn);
    D.idx = c.take<gs_int>(nn);
    D.keys = c.take<gs_int>(nn);
    D.perm = c.take<gs_int>(nn);
    D.flag = c.take<int>(nn);
    D.shifted = c.take<unsigned char>(nn);
    D.cub = c.take<char>(D.cub_bytes);
}

gs_status gs_fc_factor(cudaStream_t s, int mode, gs_int n, const fc_dev &D, const gs_factor_opts *o, int lanes)
{
    const size_t nn = (size_t)n;
    GS_CALL(GS_CUDA(cudaMemsetAsync(D.flag, 0, nn * sizeof(int), s)));
    GS_CALL(GS_CUDA(cudaMemsetAsync(D.shifted, 0, nn, s)));
    GS_CALL(gs_fc_level_order(s, n, D.lp, D.lc, mode == FC_IC0 ? 1 : 0, D.level, D.idx, D.keys, D.perm, D.cub,
                              D.cub_bytes, D.stats));
    fc_factor_args F;
    memset(&F, 0, sizeof F);
    F.n = n;
    F.nchunks = ((unsigned long long)n + (unsigned long long)(32 / lanes) - 1ULL) / (unsigned long long)(32 / lanes);
    F.perm = D.perm;
    F.ap = D.ap;
    F.ac = D.ac;
    F.av = D.av;
    F.lp = D.lp;
    F.lc = D.lc;
    F.up = D.up;
    F.uc = D.uc;
    F.lv = D.lv;
    F.uv = D.uv;
    F.flag = D.flag;
    F.shifted = D.shifted;
    F.stats = D.stats;
    F.shift_policy = o->zero_pivot == GS_ZERO_PIVOT_SHIFT;
    F.shift = o->shift;
    F.min_pivot = o->zero_pivot == GS_ZERO_PIVOT_GROW ? o->min_pivot : 0.0;
    GS_CALL(gs_fc_launch_factor(s, mode, lanes, F));
    return GS_OK;
}

/* ================================================================ the factors */

void gs_factor_dev_free(gs_factor_dev *f)
{
    if (!f) return;
    if (f->be && (f->arena[0] || f->arena[1]) &&
        cudaStreamSynchronize((cudaStream_t)gs_backend_cuda_stream(f->be)) != cudaSuccess)
        (void)cudaGetLastError();
    for (int k = 0; k < 2; k++)
        if (f->arena[k]) gs_backend_free(f->be, f->arena[k]);
    memset(f, 0, sizeof *f);
}

/* The device CSR view of arrays inside a factorization's arena. */
gs_csr_dev gs_fc_view(gs_int n, gs_int nnz, const gs_int *rowptr, const gs_int *colind, const double *val)
{
    gs_csr_dev v;
    v.nrows = v.ncols = n;
    v.nnz = nnz;
    v.rowptr = rowptr;
    v.colind = colind;
    v.val = val;
    return v;
}

/* The factors built by a successful call (F1, F2) become the caller's (L, U; F1, F2 are zeroed so that
 * the cleanup frees nothing), with their sizes in info. */
void gs_fc_publish(gs_csr *F1, gs_csr *F2, gs_csr *L, gs_csr *U, gs_factor_info *info)
{
    *L = *F1;
    *U = *F2;
    memset(F1, 0, sizeof *F1);
    memset(F2, 0, sizeof *F2);
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = U->nnz;
    }
}

/* The end of a factorization that builds its own patterns (ILU(0) on the device, IC(0)): with keep the
 * factors l and u stay on the device (keep takes the arenas; the host CSRs get only their sizes), without
 * it they come back into new host CSRs FL and FU. */
gs_status gs_fc_hand_over(gs_backend *be, cudaStream_t s, gs_csr_dev l, gs_csr_dev u, void **arenas, int narenas,
                          gs_factor_dev *keep, gs_csr *FL, gs_csr *FU)
{
    const gs_csr_dev *src[2] = {&l, &u};
    gs_csr *dst[2] = {FL, FU};
    if (keep) {
        keep->be = be;
        for (int k = 0; k < narenas; k++) {
            keep->arena[k] = arenas[k];
            arenas[k] = NULL;
        }
        keep->L = l;
        keep->U = u;
        for (int f = 0; f < 2; f++) {
            dst[f]->nrows = dst[f]->ncols = src[f]->nrows;
            dst[f]->nnz = src[f]->nnz;
        }
        return GS_OK;
    }
    for (int f = 0; f < 2; f++) {
        const size_t nn = (size_t)src[f]->nrows, nz = (size_t)src[f]->nnz;
        GS_CALL(gs_csr_alloc(dst[f], src[f]->nrows, src[f]->ncols, src[f]->nnz, true));
        GS_CALL(GS_CUDA(cudaMemcpyAsync(dst[f]->rowptr, src[f]->rowptr, (nn + 1) * sizeof(gs_int),
                                        cudaMemcpyDeviceToHost, s)));
        if (nz)
            GS_CALL(GS_CUDA(cudaMemcpyAsync(dst[f]->colind, src[f]->colind, nz * sizeof(gs_int), cudaMemcpyDeviceToHost,
                                            s)));
        if (nz)
            GS_CALL(GS_CUDA(cudaMemcpyAsync(dst[f]->val, src[f]->val, nz * sizeof(double), cudaMemcpyDeviceToHost, s)));
    }
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    return GS_OK;
}

/* ================================================================ numeric ILU on host patterns */

/* The input checks of numeric ILU on the host patterns L, U, in the host's order and wording. */
static gs_status fc_ilu_check(const gs_csr *A, const gs_csr *L, const gs_csr *U, const char *who)
{
    GS_CALL(gs_fc_check_matrix(A, who));
    const gs_int n = A->nrows;
    if (L->nrows != n || L->ncols != n || U->nrows != n || U->ncols != n || !L->rowptr || !U->rowptr) {
        GS_CALL(gs_factor_check_input(A, who)); /* the host reports A's rows first */
        if (A->nnz > 0 && !A->val) return GS_ERROR(GS_ERR_ARG, "ILU numeric factorization: the matrix has no values");
        return GS_ERROR(GS_ERR_ARG,
                        "ILU numeric factorization: the L/U patterns (%d x %d, %d x %d) do not match "
                        "the %d x %d matrix; run the symbolic factorization on this matrix first",
                        (int)L->nrows, (int)L->ncols, (int)U->nrows, (int)U->ncols, (int)n, (int)n);
    }
    if (A->nnz > 0 && !A->val) {
        GS_CALL(gs_factor_check_input(A, who));
        return GS_ERROR(GS_ERR_ARG, "ILU numeric factorization: the matrix has no values");
    }
    if ((L->nnz > 0 && !L->colind) || (U->nnz > 0 && !U->colind) || L->rowptr[0] != 0 || L->rowptr[n] != L->nnz ||
        U->rowptr[0] != 0 || U->rowptr[n] != U->nnz)
        return GS_ERROR(GS_ERR_ARG,
                        "ILU numeric factorization: the L/U patterns are incomplete (row pointers must run from "
                        "0 to nnz, column indices present); run the symbolic factorization on this matrix first");
    return GS_OK;
}

/* A (n > 0 rows) and the patterns on the device in one arena with the values and the work arrays, uploaded
 * through the pinned staging buffer (released before the kernels); the checks, the levels, the
 * factorization; the values back into lv_host, uv_host, or kept on the device (keep). */
static gs_status fc_ilu_device(gs_backend *be, const gs_csr *A, const gs_factor_opts *o, const gs_csr *L,
                               const gs_csr *U, double *lv_host, double *uv_host, gs_factor_info *info,
                               gs_factor_cuda_times *tm, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    void *arena = NULL;
    gs_stage S;
    fc_stats hs;
    fc_dev D;
    gs_carver c = {NULL, 0};
    gs_int *d_ap = NULL, *d_ac = NULL;
    double *d_av = NULL, t0;
    const char *who = "ILU numeric factorization";
    const gs_int n = A->nrows;
    cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
    const size_t nn = (size_t)n, na = (size_t)A->nnz, nl = (size_t)L->nnz, nu = (size_t)U->nnz;
    const size_t sort_bytes = gs_fc_sort_bytes(n, gs_fc_key_bits(n));
    memset(&S, 0, sizeof S);
    memset(&D, 0, sizeof D);
    if (sort_bytes == 0) GS_FAIL(GS_ERR_CUDA, "ILU on the GPU: cub could not size the level sort for n = %d", (int)n);

    /* one device allocation for everything */
    D.cub_bytes = sort_bytes;
    for (int pass = 0; pass < 2; pass++) {
        c.off = 0;
        D.stats = c.take<fc_stats>(1);
        D.ap = d_ap = c.take<gs_int>(nn + 1);
        D.ac = d_ac = c.take<gs_int>(na);
        D.av = d_av = c.take<double>(na);
        D.lp = c.take<gs_int>(nn + 1);
        D.lc = c.take<gs_int>(nl);
        D.up = c.take<gs_int>(nn + 1);
        D.uc = c.take<gs_int>(nu);
        D.lv = c.take<double>(nl);
        D.uv = c.take<double>(nu);
        gs_fc_carve_work(c, D, nn);
        if (pass == 0) {
            GS_TRY(gs_backend_alloc(be, &arena, c.off));
            c.base = (char *)arena;
        }
    }

    /* upload: A, the patterns, through the pinned staging buffer (released before the kernels) */
    t0 = gs_wtime();
    GS_TRY(gs_stage_begin(&S, 3 * (nn + 1) * sizeof(gs_int) + na * (sizeof(gs_int) + sizeof(double)) +
                                  (nl + nu) * sizeof(gs_int)));
    GS_TRY(gs_stage_copy(&S, d_ap, A->rowptr, (nn + 1) * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, d_ac, A->colind, na * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, d_av, A->val, na * sizeof(double), s));
    GS_TRY(gs_stage_copy(&S, D.lp, L->rowptr, (nn + 1) * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, D.lc, L->colind, nl * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, D.up, U->rowptr, (nn + 1) * sizeof(gs_int), s));
    GS_TRY(gs_stage_copy(&S, D.uc, U->colind, nu * sizeof(gs_int), s));
    GS_TRY(gs_stage_end(&S));
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s))); /* the small (unstaged) copies too */
    tm->upload = gs_wtime() - t0;

    /* device work: the first malformed row of A and of the patterns, then the factorization */
    t0 = gs_wtime();
    {
        fc_check_args ca;
        memset(&ca, 0, sizeof ca);
        ca.n = n;
        ca.nnz_a = A->nnz;
        ca.nnz_l = L->nnz;
        ca.nnz_u = U->nnz;
        ca.ap = D.ap;
        ca.ac = D.ac;
        ca.lp = D.lp;
        ca.lc = D.lc;
        ca.up = D.up;
        ca.uc = D.uc;
        ca.stats = D.stats;
        GS_TRY(gs_fc_check_launch(s, ca, &hs));
    }
    GS_TRY(gs_fc_factor(s, FC_ILU, n, D, o, tm->lanes_per_row));
    GS_TRY(gs_fc_download(s, &hs, D.stats, sizeof hs));
    tm->kernel = gs_wtime() - t0;
    tm->levels = hs.invalid ? 0 : hs.max_level + 1;

    if (hs.invalid) GS_TRY(gs_fc_input_error(&hs, A, who));
    t0 = gs_wtime();
    if (hs.err_key != FC_NONE) {
        gs_int r = (gs_int)(hs.err_key >> 32);
        if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, r, o, info));
        GS_TRY(gs_fc_factor_error(s, hs.err_key, A, o, false, L->colind + L->rowptr[r], D.lv + L->rowptr[r],
                                  U->colind + U->rowptr[r], D.uv + U->rowptr[r]));
    }
    if (keep) { /* the factors stay where they are */
        keep->be = be;
        keep->arena[0] = arena;
        arena = NULL;
        keep->L = gs_fc_view(n, L->nnz, D.lp, D.lc, D.lv);
        keep->U = gs_fc_view(n, U->nnz, D.up, D.uc, D.uv);
    } else {
        GS_TRY(GS_CUDA(cudaMemcpyAsync(lv_host, D.lv, nl * sizeof(double), cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(uv_host, D.uv, nu * sizeof(double), cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    }
    if (hs.nshifted > 0) GS_TRY(gs_fc_collect_shifts(s, D.shifted, n, n, o, info));
    tm->download = gs_wtime() - t0;
cleanup:
    {
        gs_status se = gs_stage_end(&S); /* after a failed copy: no DMA out of the buffer is left */
        if (st == GS_OK) st = se;
    }
    if (arena) gs_backend_free(be, arena);
    return st;
}

gs_status gs_ilu_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U,
                              gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    double *lval_new = NULL, *uval_new = NULL;
    gs_factor_cuda_times tm;
    const char *who = "ILU numeric factorization";

    memset(&tm, 0, sizeof tm);
    gs_fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &gs_fc_default_opts;
    GS_CALL(gs_fc_check_backend(be, who));
    GS_CALL(gs_fc_check_opts(o, who));
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilu_numeric_cuda: L or U is NULL");
    GS_CALL(fc_ilu_check(A, L, U, who));
    const gs_int n = A->nrows;

    gs_factor_dev_free(keep);
    if (!L->val && !keep) GS_TRY(GS_MALLOC(lval_new, L->nnz));
    if (!U->val && !keep) GS_TRY(GS_MALLOC(uval_new, U->nnz));
    tm.lanes_per_row = gs_fc_lanes(n > 0 ? ((double)L->nnz + (double)U->nnz) / n : 0.0);
    if (n > 0)
        GS_TRY(fc_ilu_device(be, A, o, L, U, L->val ? L->val : lval_new, U->val ? U->val : uval_new, info, &tm,
                             keep));

    if (lval_new) L->val = lval_new;
    if (uval_new) U->val = uval_new;
    lval_new = uval_new = NULL;
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = U->nnz;
    }
    if (t) *t = tm;

cleanup:
    gs_free(&lval_new);
    gs_free(&uval_new);
    return st;
}
