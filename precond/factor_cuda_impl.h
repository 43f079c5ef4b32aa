/* Private to the GPU factorizations: factor_cuda_kernels.cu (the kernels and their launches),
 * factor_cuda.cu (the checks and messages, the driver steps the factorizations share, ILU on host
 * patterns) and factor_cuda_pattern.cu (ILU(0) and IC(0), their patterns built on the device). CUDA C++. */
#ifndef GS_FACTOR_CUDA_IMPL_H
#define GS_FACTOR_CUDA_IMPL_H

#include <cuda_runtime.h>

#include "core/backend.h"
#include "core/carve.h"
#include "core/csr.h"
#include "precond/factor_cuda.h"

#define FC_NONE 0xFFFFFFFFFFFFFFFFULL /* no failure recorded */
#define FC_POS_MAX 0x0FFFFFFFu         /* positions in a key are clamped to 28 bits */
#define FC_FULL 0xFFFFFFFFu

/* Failure kinds in the host's order of checks within a row. */
enum { FC_KIND_A = 0, FC_KIND_L = 1, FC_KIND_U = 2, FC_KIND_PIVOT = 3 };
/* Pattern failures in the host's order within a row (check_patterns of ilu_factor.c). */
enum { FC_PAT_L = 0, FC_PAT_UDIAG = 1, FC_PAT_USORT = 2 };
enum { FC_ILU = 0, FC_IC0 = 1 };

#define FC_CHECK_THREADS 256
#define FC_LV_THREADS 256 /* rows per block of the level kernel (one ticket per block) */
#define FC_BLOCK 128      /* threads per block of the factorization kernel */
#define FC_DIAG 0xFFFF    /* pair target: the pivot of the source row */

/* Small results of the kernels, downloaded once. */
struct fc_stats {
    unsigned long long err_key; /* first failure: row << 32 | kind << 28 | position in the row */
    unsigned long long bad_a;   /* first malformed entry of A: row << 32 | offset in the row */
    unsigned long long bad_ptr; /* first bad row pointer: row << 2 | array (0 A, 1 L, 2 U) */
    unsigned long long bad_pat; /* first malformed pattern row: row << 2 | FC_PAT_* */
    unsigned long long lv_ticket, f_ticket;
    int invalid; /* set by the check kernel: the later kernels return at once */
    int max_level;
    int nshifted;
    int pad;
};

struct fc_check_args {
    gs_int n, nnz_a, nnz_l, nnz_u;
    const gs_int *ap, *ac, *lp, *lc, *up, *uc; /* lp..uc only for ILU */
    fc_stats *stats;
};

struct fc_factor_args {
    gs_int n;
    unsigned long long nchunks; /* tickets of 32 / G rows */
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ap;
    const gs_int *__restrict__ ac;
    const double *__restrict__ av;
    const gs_int *__restrict__ lp;
    const gs_int *__restrict__ lc;
    const gs_int *__restrict__ up; /* ILU only */
    const gs_int *__restrict__ uc;
    double *lv, *uv; /* outputs, read by other rows during the launch: never through the read-only path */
    int *flag;       /* 0 until the row is final */
    unsigned char *shifted;
    fc_stats *stats;
    int shift_policy;
    double shift;
    double min_pivot; /* grow policy: a pivot below min_pivot * s_i fails (0 otherwise) */
};

/* The device arrays of one factorization (pieces of its arena): A (only read: an upload of ours, or the
 * caller's device copy), the factors (IC(0): L only, up, uc, uv NULL), the kernels' statistics and the
 * level order's and the factorization's work arrays. */
struct fc_dev {
    const gs_int *ap, *ac;
    const double *av;
    gs_int *lp, *lc, *up, *uc;
    double *lv, *uv;
    fc_stats *stats;
    gs_int *level, *idx, *keys, *perm;
    int *flag;
    unsigned char *shifted;
    void *cub;
    size_t cub_bytes; /* at least the level sort's */
};

/* ---------------------------------------------------------------- launches (factor_cuda_kernels.cu) */

/* hs initialised and copied to ca.stats, then the check kernel queued: the first malformed row of A (and of
 * the L/U patterns when ca has them). */
gs_status gs_fc_check_launch(cudaStream_t s, const fc_check_args &ca, fc_stats *hs);
/* Levels of the rows of (ptr, col) into level, rows sorted by level into perm (stable: rows of a level in
 * increasing order); skip_last: the last entry of a row is its diagonal (IC(0)); scratch: keys (n), cub
 * workspace of cub_bytes. */
gs_status gs_fc_level_order(cudaStream_t s, gs_int n, const gs_int *ptr, const gs_int *col, int skip_last,
                            gs_int *level, gs_int *idx, gs_int *keys, gs_int *perm, void *cub, size_t cub_bytes,
                            fc_stats *stats);
/* The factorization kernel (mode FC_ILU or FC_IC0, g lanes per row) as a persistent grid. */
gs_status gs_fc_launch_factor(cudaStream_t s, int mode, int g, const fc_factor_args &F);
/* cub workspace of a sort of count pairs on the given key bits (0: cub could not size it); the bits of
 * the largest key n - 1. */
size_t gs_fc_sort_bytes(gs_int count, int bits);
int gs_fc_key_bits(gs_int n);
/* ILU(0)'s pattern (A's, split at the diagonal): the row lengths of L and U (lcnt[n] = ucnt[n] = 0 for the
 * scans), then the rows from the scanned row pointers. */
gs_status gs_fc_ilu0_count(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, gs_int *lcnt, gs_int *ucnt,
                           const fc_stats *stats);
gs_status gs_fc_ilu0_fill(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, const gs_int *lp,
                          const gs_int *up, gs_int *lc, gs_int *uc, const fc_stats *stats);
/* IC(0)'s pattern (A's lower triangle, diagonal last): the row lengths, the rows with row[e] = i and
 * eidx[e] = e, and after the stable sort of L's entries by column, LT's row pointers, columns and values. */
gs_status gs_fc_ic_count(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, gs_int *cnt,
                         const fc_stats *stats);
gs_status gs_fc_ic_fill(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, const gs_int *lp, gs_int *lc,
                        gs_int *row, gs_int *eidx, const fc_stats *stats);
gs_status gs_fc_ic_transpose(cudaStream_t s, gs_int n, gs_int nnz, const gs_int *tcol, const gs_int *tidx,
                             const gs_int *row, const double *lv, gs_int *tp, gs_int *tc, double *tv,
                             const fc_stats *stats);

/* ---------------------------------------------------------------- driver steps (factor_cuda.cu) */

extern const gs_factor_opts gs_fc_default_opts;
void gs_fc_info_init(gs_factor_info *info);
gs_status gs_fc_check_opts(const gs_factor_opts *o, const char *who);
gs_status gs_fc_check_backend(gs_backend *be, const char *who);
gs_status gs_fc_check_matrix(const gs_csr *A, const char *who);
gs_status gs_fc_check_dev_copy(const gs_csr *A, const gs_csr_dev *A_dev, const char *who);
/* A on the device for a factorization: the caller's copy A_dev (written on stream s, only read), or A
 * uploaded into ap, ac, av (room for it in the arena) through the pinned staging buffer, released before
 * return; D.ap, D.ac, D.av get whichever, *upload the upload's wall time (0 for A_dev). */
gs_status gs_fc_device_A(const gs_csr *A, const gs_csr_dev *A_dev, gs_int *ap, gs_int *ac, double *av,
                         cudaStream_t s, fc_dev &D, double *upload);
/* The checks of A alone (row pointers, rows: D.ap, D.ac) queued, their statistics in D.stats; hs as for
 * gs_fc_check_launch. */
gs_status gs_fc_check_A(cudaStream_t s, const gs_csr *A, const fc_dev &D, fc_stats *hs);
/* Messages of the device checks, the host's wording: row pointers, A's rows, then the patterns. */
gs_status gs_fc_input_error(const fc_stats *s, const gs_csr *A, const char *who);
gs_status gs_fc_download(cudaStream_t s, void *dst, const void *src, size_t bytes);
/* The message of the first failing row (key from the kernel), the host's wording (factor_cuda.cu). */
gs_status gs_fc_factor_error(cudaStream_t s, unsigned long long key, const gs_csr *A, const gs_factor_opts *o,
                             bool ic, const gs_int *L_colind_row, const double *lv_row, const gs_int *U_colind_row,
                             const double *uv_row);
/* info's shifted rows: the rows below `limit` (the failing row, or n) flagged by the kernel, ascending. */
gs_status gs_fc_collect_shifts(cudaStream_t s, const unsigned char *d_shifted, gs_int n, gs_int limit,
                               const gs_factor_opts *o, gs_factor_info *info);
/* Lanes per row from the mean pattern length. */
int gs_fc_lanes(double mean_len);
/* The work arrays of D (level order, flags, cub workspace of D.cub_bytes) carved after the caller's. */
void gs_fc_carve_work(gs_carver &c, fc_dev &D, size_t nn);
/* The factorization once A and the patterns are on the device and the check kernel is queued: flags reset,
 * the levels of L and their order, the kernel (mode FC_ILU or FC_IC0, lanes per row); nothing waited for. */
gs_status gs_fc_factor(cudaStream_t s, int mode, gs_int n, const fc_dev &D, const gs_factor_opts *o, int lanes);
/* The device CSR view of arrays inside a factorization's arena. */
gs_csr_dev gs_fc_view(gs_int n, gs_int nnz, const gs_int *rowptr, const gs_int *colind, const double *val);
/* The factors built by a successful call (F1, F2) become the caller's (L, U; F1, F2 are zeroed so that the
 * cleanup frees nothing), with their sizes in info. */
void gs_fc_publish(gs_csr *F1, gs_csr *F2, gs_csr *L, gs_csr *U, gs_factor_info *info);
/* The end of a factorization that builds its own patterns (ILU(0) on the device, IC(0)): with keep the factors
 * l and u stay on the device (keep takes the arenas; the host CSRs get only their sizes), without it they come
 * back into new host CSRs FL and FU. */
gs_status gs_fc_hand_over(gs_backend *be, cudaStream_t s, gs_csr_dev l, gs_csr_dev u, void **arenas, int narenas,
                          gs_factor_dev *keep, gs_csr *FL, gs_csr *FU);

#endif
