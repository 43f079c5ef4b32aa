/* Level-set triangular solve on the GPU, x = T^{-1} b, and the GPU builder of the level-set plan that it
 * shares with the sync-free solver (gs_ls_dplan_build, see trisolve_cuda.h).
 *
 * Solve: two launches. A gather bp[p] = b[perm[p]], then ONE persistent kernel that walks the levels of
 * the plan (rows renumbered level by level, HEC storage, 1/diagonal; the layout of levelset_ref.c, whose
 * host twin computes the same arithmetic: x[perm[p]] = (b[perm[p]] - ELL entries in order - remainder
 * entries in order) * dinv[p]).
 *   - a wide level (more than LS_THREADS rows) is shared by all blocks, a thread per row, and ends
 *     with a software grid barrier (an arrival counter; the grid is launched cooperatively, so every
 *     block is resident and the barrier cannot deadlock);
 *   - a run of thin levels (Naumov's chain) is solved by block 0 alone with __syncthreads between its
 *     levels, while the other blocks wait at the grid barrier that follows the chain;
 *   - before each barrier every thread loads the row it will solve in the next level (bp, 1/diagonal
 *     and the first LS_PF ELL entries: none depend on x) and prefetches into L2 the row it will solve
 *     LS_L2_AHEAD levels later, so that a level adds the barrier plus one read of x from L2 to the
 *     solve rather than reads from device memory.
 * Cost: ~4 us per wide level (barrier + x read) and ~1-2 us per chain level on the H100; slower than the
 * sync-free solver everywhere it was measured (docs/notes-trisolve.md).
 *
 * Analysis = upload of T's CSR + level computation, sort and HEC layout on the GPU (gs_ls_dplan_build)
 * + chains on the host from the downloaded level pointers. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

/* ================================================================ the GPU plan builder */

#define LV_THREADS 256 /* rows per block of the level kernel (one ticket per block) */

/* Small results of the level kernel, downloaded once. */
struct lv_stats {
    unsigned long long ticket;   /* next block rank */
    unsigned long long long_sum; /* sum of the lengths of rows with at least `cap` entries */
    int max_level, max_len;
    int hist[GS_LS_ELL_MAX_WIDTH + 1]; /* off-diagonal row lengths, the last bucket pooled */
};

struct lv_args {
    gs_int n, cap;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const double *__restrict__ val;
    gs_int *level;     /* -1 until known */
    gs_int *len;       /* off-diagonal entries of each row */
    double *dinv_orig; /* 1/diagonal by original row (1 for a unit diagonal: no diagonal is stored) */
    gs_int *idx;       /* i: the values of the sort */
    lv_stats *stats;
};

/* level(i) = 0 without dependencies, else 1 + max level(j). A block of LV_THREADS rows takes the next
 * rank by ticket; rank r is row r (lower) or n-1-r (upper), so every dependency has a smaller rank and
 * belongs to a block that runs or has finished: the row of smallest unknown level can always finish.
 * A warp loops until all its rows are known; in each round a row reads the levels of up to 4 entries
 * from its cursor and consumes the known prefix (no lane ever blocks, so lanes depending on lanes of
 * the same warp make progress without relying on independent thread scheduling). */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_levels_kernel(lv_args A)
{
    __shared__ unsigned long long s_ticket, s_long_sum;
    __shared__ int s_hist[GS_LS_ELL_MAX_WIDTH + 1];
    __shared__ int s_max_level, s_max_len;
    const int tid = (int)threadIdx.x;
    if (tid <= A.cap) s_hist[tid] = 0;
    if (tid == 0) {
        s_ticket = atomicAdd(&A.stats->ticket, 1ULL);
        s_long_sum = 0;
        s_max_level = 0;
        s_max_len = 0;
    }
    __syncthreads();
    const long long r = (long long)s_ticket * LV_THREADS + tid;
    const bool active = r < (long long)A.n;
    const gs_int i = active ? (LOWER ? (gs_int)r : A.n - 1 - (gs_int)r) : 0;

    gs_int q = 0, q1 = 0, len = 0;
    if (active) {
        q = A.rowptr[i];
        q1 = A.rowptr[i + 1];
        double dinv = 1.0;
        for (gs_int k = q; k < q1; k++) {
            if (A.col[k] == i) dinv = 1.0 / A.val[k];
            else len++;
        }
        A.len[i] = len;
        A.dinv_orig[i] = dinv;
        A.idx[i] = i;
    }

    gs_int lv = 0;
    bool done = !active;
    for (;;) {
        if (!done) {
            gs_int j[4], got[4];
#pragma unroll
            for (int u = 0; u < 4; u++) j[u] = q + u < q1 ? A.col[q + u] : -1;
#pragma unroll
            for (int u = 0; u < 4; u++) got[u] = (j[u] >= 0 && j[u] != i) ? gs_ts_ld_relaxed(A.level + j[u]) : -2;
            int u = 0;
#pragma unroll
            for (int v = 0; v < 4; v++) { /* the known prefix: -2 = diagonal, -1 = not yet known */
                if (u != v || j[v] < 0 || got[v] == -1) continue;
                if (got[v] >= 0 && got[v] + 1 > lv) lv = got[v] + 1;
                u++;
            }
            q += u;
            if (q >= q1) {
                gs_ts_st_relaxed(A.level + i, lv);
                done = true;
            }
        }
        if (__all_sync(0xffffffffu, done)) break;
    }

    if (active) {
        atomicAdd(&s_hist[len < A.cap ? len : A.cap], 1);
        if (len >= A.cap) atomicAdd(&s_long_sum, (unsigned long long)len);
        atomicMax(&s_max_level, lv);
        atomicMax(&s_max_len, len);
    }
    __syncthreads();
    if (tid <= A.cap && s_hist[tid]) atomicAdd(&A.stats->hist[tid], s_hist[tid]);
    if (tid == 0) {
        if (s_long_sum) atomicAdd(&A.stats->long_sum, s_long_sum);
        atomicMax(&A.stats->max_level, s_max_level);
        atomicMax(&A.stats->max_len, s_max_len);
    }
}

/* After the sort (keys = sorted levels, perm = rows): level_ptr, the inverse permutation and the
 * remainder length of every position (remlen[n] = 0 for the exclusive scan). */
static __global__ void lv_positions_kernel(gs_int n, gs_int nlevels, gs_int w, const gs_int *__restrict__ keys,
                                           const gs_int *__restrict__ perm, const gs_int *__restrict__ len,
                                           gs_int *level_ptr, gs_int *pos_of, gs_int *remlen)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= n) return;
    gs_int i = perm[p], lv = keys[p], prev = p > 0 ? keys[p - 1] : -1;
    pos_of[i] = p;
    gs_int extra = len[i] - w;
    remlen[p] = extra > 0 ? extra : 0;
    for (gs_int l = prev + 1; l <= lv; l++) level_ptr[l] = p; /* first position of each level */
    if (p == n - 1) {
        for (gs_int l = lv + 1; l <= nlevels; l++) level_ptr[l] = n;
        remlen[n] = 0;
    }
}

struct lv_layout_args {
    gs_int n, w;
    bool position_cols, has_rem;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const double *__restrict__ val;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ pos_of;
    const double *__restrict__ dinv_orig;
    const gs_int *__restrict__ rem_ptr;
    gs_int *ell_col, *rem_col;
    double *ell_val, *rem_val, *dinv;
};

/* One thread per position p: the off-diagonal entries of row perm[p] in order, the first w in the ELL
 * slots k*n + p (padding -1 / 0 after them), the rest in the remainder; dinv[p]. */
static __global__ void lv_layout_kernel(lv_layout_args A)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= A.n) return;
    gs_int i = A.perm[p], k = 0, r = A.has_rem ? A.rem_ptr[p] : 0;
    size_t s = (size_t)p;
    for (gs_int q = A.rowptr[i]; q < A.rowptr[i + 1]; q++) {
        gs_int j = A.col[q];
        if (j == i) continue;
        gs_int c = A.position_cols ? A.pos_of[j] : j;
        if (k < A.w) {
            A.ell_col[s] = c;
            A.ell_val[s] = A.val[q];
            s += (size_t)A.n;
        } else {
            A.rem_col[r] = c;
            A.rem_val[r] = A.val[q];
            r++;
        }
        k++;
    }
    for (; k < A.w; k++, s += (size_t)A.n) {
        A.ell_col[s] = -1;
        A.ell_val[s] = 0.0;
    }
    A.dinv[p] = A.dinv_orig[i];
}

/* Hands out 256-byte aligned pieces of one allocation; with base NULL it only adds up the size. */
struct lv_carver {
    char *base;
    size_t off;
    template <typename T>
    T *take(size_t count)
    {
        T *p = base ? (T *)(base + off) : NULL;
        off += (count * sizeof(T) + 256) & ~(size_t)255;
        return p;
    }
};

/* The analysis scratch: per-row work arrays, the sort output, the CUB workspace. */
struct lv_scratch {
    lv_stats *stats;
    gs_int *level, *len, *idx, *keys, *pos, *remlen;
    double *dinv;
    void *cub;
};

static size_t lv_scratch_carve(char *base, size_t n, size_t cub_bytes, lv_scratch *S)
{
    lv_carver c = {base, 0};
    S->stats = c.take<lv_stats>(1);
    S->level = c.take<gs_int>(n);
    S->len = c.take<gs_int>(n);
    S->idx = c.take<gs_int>(n);
    S->keys = c.take<gs_int>(n);
    S->pos = c.take<gs_int>(n);
    S->remlen = c.take<gs_int>(n + 1);
    S->dinv = c.take<double>(n);
    S->cub = c.take<char>(cub_bytes);
    return c.off;
}

/* The plan's own arrays in D->arena (sizes from D's statistics). */
static size_t lv_plan_carve(char *base, gs_ls_dplan *D)
{
    size_t n = (size_t)D->n, w = (size_t)D->ell_width, rem = (size_t)D->rem_nnz;
    lv_carver c = {base, 0};
    D->perm = c.take<gs_int>(n);
    D->level_ptr = c.take<gs_int>((size_t)D->nlevels + 1);
    D->ell_col = c.take<gs_int>(w * n);
    D->ell_val = c.take<double>(w * n);
    D->rem_ptr = c.take<gs_int>(n + 1);
    D->rem_col = c.take<gs_int>(rem);
    D->rem_val = c.take<double>(rem);
    D->dinv = c.take<double>(n);
    return c.off;
}

void gs_ts_dcsr_free(gs_backend *be, gs_ts_dcsr *A)
{
    if (!A) return;
    if (A->mem) {
        if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
        gs_backend_free(be, A->mem);
    }
    A->mem = NULL;
    A->rowptr = A->col = NULL;
    A->val = NULL;
}

gs_status gs_ts_dcsr_upload(gs_backend *be, const gs_csr *T, gs_ts_dcsr *A)
{
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be);
    double t0 = gs_wtime();
    size_t n = (size_t)T->nrows, nnz = (size_t)T->nnz;
    memset(A, 0, sizeof *A);
    A->n = T->nrows;
    A->nnz = T->nnz;
    {
    lv_carver c = {NULL, 0};
    c.take<gs_int>(n + 1);
    c.take<gs_int>(nnz);
    c.take<double>(nnz);
    GS_TRY(gs_backend_alloc(be, &A->mem, c.off));
    c.base = (char *)A->mem;
    c.off = 0;
    A->rowptr = c.take<gs_int>(n + 1);
    A->col = c.take<gs_int>(nnz);
    A->val = c.take<double>(nnz);
    GS_TRY(TS_CUDA(cudaMemcpyAsync(A->rowptr, T->rowptr, (n + 1) * sizeof(gs_int), cudaMemcpyHostToDevice, s)));
    if (nnz > 0) {
        GS_TRY(TS_CUDA(cudaMemcpyAsync(A->col, T->colind, nnz * sizeof(gs_int), cudaMemcpyHostToDevice, s)));
        GS_TRY(TS_CUDA(cudaMemcpyAsync(A->val, T->val, nnz * sizeof(double), cudaMemcpyHostToDevice, s)));
    }
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    A->time_upload = gs_wtime() - t0;
    }
cleanup:
    if (st != GS_OK) gs_ts_dcsr_free(be, A);
    return st;
}

void gs_ls_dplan_free(gs_backend *be, gs_ls_dplan *D)
{
    if (!D) return;
    if (D->arena) {
        if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
        gs_backend_free(be, D->arena);
    }
    D->arena = NULL;
    D->perm = D->level_ptr = D->ell_col = D->rem_ptr = D->rem_col = NULL;
    D->ell_val = D->rem_val = D->dinv = NULL;
    gs_free(&D->h_level_ptr);
}

gs_status gs_ls_dplan_build(gs_backend *be, const gs_ts_dcsr *A, gs_uplo uplo, gs_int max_width, bool position_cols,
                            gs_ls_dplan *D)
{
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be);
    void *scratch = NULL;
    lv_stats hs;
    gs_int n = A->n;
    double t1 = gs_wtime();

    memset(D, 0, sizeof *D);
    memset(&hs, 0, sizeof hs);
    if (max_width < 1 || max_width > GS_LS_ELL_MAX_WIDTH)
        return GS_ERROR(GS_ERR_INTERNAL, "level-set plan: ELL width limit %d outside 1..%d", (int)max_width,
                        GS_LS_ELL_MAX_WIDTH);
    D->n = n;
    D->max_width = max_width;
    D->position_cols = position_cols;
    GS_TRY(GS_MALLOC(D->h_level_ptr, 1));
    D->h_level_ptr[0] = 0;
    if (n == 0) {
        GS_TRY(gs_backend_alloc(be, &D->arena, 256));
        D->level_ptr = D->perm = D->rem_ptr = (gs_int *)D->arena;
        GS_TRY(TS_CUDA(cudaMemsetAsync(D->arena, 0, 256, s)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
        return GS_OK;
    }

    {
        /* scratch: per-row work arrays, the sort output and the CUB workspace */
        size_t sort_bytes = 0, scan_bytes = 0;
        GS_TRY(TS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const unsigned *)NULL, (unsigned *)NULL,
                                                        (const gs_int *)NULL, (gs_int *)NULL, (int)n, 0, 32, s)));
        GS_TRY(TS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                     (int)n + 1, s)));
        size_t cub_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes, nn = (size_t)n;
        lv_scratch S;
        GS_TRY(gs_backend_alloc(be, &scratch, lv_scratch_carve(NULL, nn, cub_bytes, &S)));
        lv_scratch_carve((char *)scratch, nn, cub_bytes, &S);
        lv_stats *d_stats = S.stats;
        gs_int *d_level = S.level, *d_len = S.len, *d_idx = S.idx;
        gs_int *d_keys = S.keys, *d_pos = S.pos, *d_remlen = S.remlen;
        double *d_dinv = S.dinv;
        void *d_cub = S.cub;
        const gs_int *d_rowptr = A->rowptr, *d_col = A->col;
        const double *d_val = A->val;

        /* 1. levels (+ lengths, 1/diagonals, histogram) */
        GS_TRY(TS_CUDA(cudaMemsetAsync(d_stats, 0, sizeof(lv_stats), s)));
        GS_TRY(TS_CUDA(cudaMemsetAsync(d_level, 0xFF, nn * sizeof(gs_int), s))); /* -1: unknown */

        lv_args la;
        la.n = n;
        la.cap = max_width;
        la.rowptr = d_rowptr;
        la.col = d_col;
        la.val = d_val;
        la.level = d_level;
        la.len = d_len;
        la.dinv_orig = d_dinv;
        la.idx = d_idx;
        la.stats = d_stats;
        unsigned blocks = (unsigned)((nn + LV_THREADS - 1) / LV_THREADS);
        if (uplo == GS_LOWER) {
            lv_levels_kernel<true><<<blocks, LV_THREADS, 0, s>>>(la);
            GS_TRY(TS_LAUNCHED("lv_levels_kernel<lower>"));
        } else {
            lv_levels_kernel<false><<<blocks, LV_THREADS, 0, s>>>(la);
            GS_TRY(TS_LAUNCHED("lv_levels_kernel<upper>"));
        }
        GS_TRY(TS_CUDA(cudaMemcpyAsync(&hs, d_stats, sizeof hs, cudaMemcpyDeviceToHost, s)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
        D->time_levels = gs_wtime() - t1;
        t1 = gs_wtime();

        /* 2. sizes from the statistics (the ELL-width rule of the host plan) */
        D->nlevels = hs.max_level + 1;
        D->max_row_length = hs.max_len;
        long long nnz_off = (long long)hs.long_sum, rem = 0;
        for (int k = 0; k < max_width; k++) nnz_off += (long long)k * hs.hist[k];
        D->nnz_off = (gs_int)nnz_off;
        D->ell_width = gs_ls_ell_width(n, hs.hist, max_width, D->nnz_off);
        for (int k = D->ell_width + 1; k < max_width; k++) rem += (long long)(k - D->ell_width) * hs.hist[k];
        rem += (long long)hs.long_sum - (long long)hs.hist[max_width] * D->ell_width;
        D->rem_nnz = (gs_int)rem;

        size_t nl = (size_t)D->nlevels;
        GS_TRY(gs_backend_alloc(be, &D->arena, lv_plan_carve(NULL, D)));
        lv_plan_carve((char *)D->arena, D);

        /* 3. stable sort of the rows by level: perm, level_ptr, inverse permutation, remainder pointers */
        int end_bit = 1;
        while (end_bit < 31 && ((gs_int)1 << end_bit) <= hs.max_level) end_bit++;
        GS_TRY(TS_CUDA(cub::DeviceRadixSort::SortPairs(d_cub, sort_bytes, (const unsigned *)d_level, (unsigned *)d_keys,
                                                        (const gs_int *)d_idx, D->perm, (int)n, 0, end_bit, s)));
        unsigned pblocks = (unsigned)((nn + 255) / 256);
        lv_positions_kernel<<<pblocks, 256, 0, s>>>(n, D->nlevels, D->ell_width, d_keys, D->perm, d_len, D->level_ptr,
                                                    d_pos, d_remlen);
        GS_TRY(TS_LAUNCHED("lv_positions_kernel"));
        if (rem > 0) {
            GS_TRY(TS_CUDA(cub::DeviceScan::ExclusiveSum(d_cub, scan_bytes, (const gs_int *)d_remlen, D->rem_ptr,
                                                         (int)n + 1, s)));
        } else {
            GS_TRY(TS_CUDA(cudaMemsetAsync(D->rem_ptr, 0, (nn + 1) * sizeof(gs_int), s)));
        }

        /* 4. the HEC layout by position */
        lv_layout_args ly;
        ly.n = n;
        ly.w = D->ell_width;
        ly.position_cols = position_cols;
        ly.has_rem = rem > 0;
        ly.rowptr = d_rowptr;
        ly.col = d_col;
        ly.val = d_val;
        ly.perm = D->perm;
        ly.pos_of = d_pos;
        ly.dinv_orig = d_dinv;
        ly.rem_ptr = D->rem_ptr;
        ly.ell_col = D->ell_col;
        ly.rem_col = D->rem_col;
        ly.ell_val = D->ell_val;
        ly.rem_val = D->rem_val;
        ly.dinv = D->dinv;
        lv_layout_kernel<<<pblocks, 256, 0, s>>>(ly);
        GS_TRY(TS_LAUNCHED("lv_layout_kernel"));

        gs_free(&D->h_level_ptr);
        GS_TRY(GS_MALLOC(D->h_level_ptr, nl + 1));
        GS_TRY(TS_CUDA(cudaMemcpyAsync(D->h_level_ptr, D->level_ptr, (nl + 1) * sizeof(gs_int),
                                       cudaMemcpyDeviceToHost, s)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
        D->time_layout = gs_wtime() - t1;
    }
cleanup:
    if (scratch) {
        if (st != GS_OK && cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
        gs_backend_free(be, scratch);
    }
    if (st != GS_OK) gs_ls_dplan_free(be, D);
    return st;
}

/* ================================================================ the level-set solver */

#define LS_THREADS 1024 /* threads per block; also the widest level of a single-block chain */
#define LS_PF 8         /* ELL entries of a thread's next row held in registers across a barrier */
#define LS_L2_AHEAD 4   /* levels ahead whose row data a thread prefetches into L2 */

/* The device plan and the per-level schedule, passed by value. */
struct ls_dev {
    gs_int n, w, nlevels;
    const gs_int *__restrict__ level_ptr;
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col;
    const double *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const double *__restrict__ rem_val;
    const double *__restrict__ dinv;
    const double *__restrict__ bp;            /* b by position: bp[p] = b[perm[p]] (gathered first) */
    const unsigned char *__restrict__ single; /* per level: 1 = part of a chain run by block 0 */
    unsigned *bar;                            /* [0] arrivals since the launch began */
    bool has_rem;
    int l2_ahead;
};

typedef struct ls_cuda_data {
    gs_ls_dplan D;
    gs_ls_plan P; /* statistics and chains for view() (host arrays freed after analysis) */
    unsigned char *single;
    unsigned *bar;
    double *bp;
    int grid; /* blocks of the persistent kernel */
    bool cooperative;
    double time_analyse, time_upload, time_chains;
} ls_cuda_data;

/* bp[p] = b[perm[p]]: the gather of b, so that a row's data are all indexed by its position (no
 * dependent read perm -> b on the critical path of a level). */
static __global__ void ls_gather_kernel(gs_int n, const gs_int *__restrict__ perm, const double *__restrict__ b,
                                        double *bp)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p < n) bp[p] = __ldg(b + __ldg(perm + p));
}

/* A row loaded ahead of its level: everything except the x values it reads. */
struct ls_row {
    gs_int p;
    double b, d;
    gs_int c[LS_PF];
    double v[LS_PF];
};

static __device__ __forceinline__ void ls_fetch(const ls_dev &H, gs_int p, ls_row &r)
{
    r.p = p;
    if (p < 0) return;
    r.b = H.bp[p]; /* written by the gather kernel before this launch */
    r.d = __ldg(H.dinv + p);
#pragma unroll
    for (int k = 0; k < LS_PF; k++) {
        r.c[k] = -1;
        r.v[k] = 0.0;
        if (k < H.w) {
            size_t q = (size_t)k * (size_t)H.n + (size_t)p;
            r.c[k] = __ldg(H.ell_col + q);
            r.v[k] = __ldg(H.ell_val + q);
        }
    }
}

static __device__ __forceinline__ void ls_prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* Bring the data of row p (a few levels ahead) into L2: all of it is indexed by position. */
static __device__ __forceinline__ void ls_touch(const ls_dev &H, gs_int p)
{
    ls_prefetch_l2(H.bp + p);
    ls_prefetch_l2(H.dinv + p);
    ls_prefetch_l2(H.perm + p);
    for (gs_int k = 0; k < H.w; k++) {
        size_t q = (size_t)k * (size_t)H.n + (size_t)p;
        ls_prefetch_l2(H.ell_col + q);
        ls_prefetch_l2(H.ell_val + q);
    }
}

/* x[perm[p]] = (bp[p] - sum of the ELL entries in order - sum of the remainder in order) * dinv[p]; x
 * read through L2 (values written by other SMs before the barrier). ELL slots past LS_PF are read 4 at a
 * time (independent loads), then applied in order. */
static __device__ __forceinline__ void ls_solve(const ls_dev &H, const ls_row &r, double *x)
{
    double xv[LS_PF];
#pragma unroll
    for (int k = 0; k < LS_PF; k++) xv[k] = r.c[k] >= 0 ? __ldcg(x + r.c[k]) : 0.0;
    double s = r.b;
#pragma unroll
    for (int k = 0; k < LS_PF; k++)
        if (r.c[k] >= 0) s -= r.v[k] * xv[k];
    if (H.w > LS_PF && r.c[LS_PF - 1] >= 0) {
        for (gs_int k0 = LS_PF; k0 < H.w; k0 += 4) {
            gs_int j[4];
            double v[4], xj[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                size_t q = (size_t)(k0 + u) * (size_t)H.n + (size_t)r.p;
                j[u] = k0 + u < H.w ? __ldg(H.ell_col + q) : -1;
                v[u] = k0 + u < H.w ? __ldg(H.ell_val + q) : 0.0;
            }
#pragma unroll
            for (int u = 0; u < 4; u++) xj[u] = j[u] >= 0 ? __ldcg(x + j[u]) : 0.0;
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (j[u] >= 0) s -= v[u] * xj[u];
            if (j[3] < 0) break; /* padding only follows the row's entries */
        }
    }
    if (H.has_rem) {
        gs_int q1 = __ldg(H.rem_ptr + r.p + 1);
        for (gs_int q = __ldg(H.rem_ptr + r.p); q < q1; q++)
            s -= __ldg(H.rem_val + q) * __ldcg(x + __ldg(H.rem_col + q));
    }
    x[__ldg(H.perm + r.p)] = s * r.d;
}

static __device__ __forceinline__ void ls_fence_acq_rel(void) { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/* All blocks meet. The grid is co-resident (cooperative launch), so spinning cannot deadlock. bar[0]
 * counts arrivals since the launch began: barrier k (from 0) is passed once it reaches
 * (k + 1) * gridDim.x. Thread 0 of each block: fence (the block's x writes, ordered before it by
 * __syncthreads, are released at GPU scope), arrive, spin with acquire loads. The counter goes back
 * to 0 at the end of the launch (ls_grid_exit). */
static __device__ __forceinline__ void ls_grid_barrier(unsigned *bar, unsigned target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        ls_fence_acq_rel();
        atomicAdd(bar, 1u);
        while (gs_ts_ld_acquire(bar) < target) {
        }
    }
    __syncthreads();
}

/* The last block to leave resets the arrival counter for the next launch (all blocks pass the same
 * barriers, so the total is known). */
static __device__ __forceinline__ void ls_grid_exit(unsigned *bar, unsigned barriers)
{
    if (threadIdx.x == 0 && gridDim.x > 1) {
        unsigned old = atomicAdd(bar, 1u);
        if (old + 1u == (barriers + 1u) * gridDim.x) bar[0] = 0u;
    }
}

/* The index of this thread's first row in level l (-1: none): block 0's threads in a chain level, every
 * thread of the grid in a wide level. */
static __device__ __forceinline__ gs_int ls_first_row(const ls_dev &H, gs_int l)
{
    if (H.single[l] && blockIdx.x != 0) return -1;
    gs_int p0 = H.level_ptr[l], p1 = H.level_ptr[l + 1];
    gs_int t = H.single[l] ? (gs_int)threadIdx.x : (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    return t < p1 - p0 ? p0 + t : -1;
}

/* A row solved without the register prefetch (rows beyond one per thread of levels wider than the grid). */
static __device__ __forceinline__ void ls_solve_plain(const ls_dev &H, gs_int p, double *x)
{
    double s = H.bp[p];
    size_t q = (size_t)p;
    for (gs_int k = 0; k < H.w; k++, q += (size_t)H.n) {
        gs_int j = __ldg(H.ell_col + q);
        if (j < 0) break;
        s -= __ldg(H.ell_val + q) * __ldcg(x + j);
    }
    if (H.has_rem) {
        gs_int q1 = __ldg(H.rem_ptr + p + 1);
        for (gs_int r = __ldg(H.rem_ptr + p); r < q1; r++) s -= __ldg(H.rem_val + r) * __ldcg(x + __ldg(H.rem_col + r));
    }
    x[__ldg(H.perm + p)] = s * __ldg(H.dinv + p);
}

static __global__ void __launch_bounds__(LS_THREADS, 1) ls_fused_kernel(ls_dev H, double *__restrict__ x)
{
    ls_row cur;
    unsigned barriers = 0;
    ls_fetch(H, ls_first_row(H, 0), cur);
    for (gs_int l = 1; l <= H.l2_ahead && l < H.nlevels; l++) {
        gs_int p = ls_first_row(H, l);
        if (p >= 0) ls_touch(H, p);
    }
    for (gs_int l = 0; l < H.nlevels; l++) {
        const bool single = H.single[l] != 0;
        if (cur.p >= 0) ls_solve(H, cur, x);
        if (cur.p >= 0) { /* rows beyond one per thread (levels wider than the block / grid) */
            gs_int stride = single ? (gs_int)blockDim.x : (gs_int)(gridDim.x * blockDim.x);
            gs_int p1 = H.level_ptr[l + 1];
            for (gs_int p = cur.p + stride; p < p1; p += stride) ls_solve_plain(H, p, x);
        }
        if (l + 1 == H.nlevels) break;
        ls_fetch(H, ls_first_row(H, l + 1), cur); /* independent of x: in flight across the barrier */
        if (H.l2_ahead > 0 && l + 1 + H.l2_ahead < H.nlevels) {
            gs_int p = ls_first_row(H, l + 1 + H.l2_ahead);
            if (p >= 0) ls_touch(H, p);
        }
        if (single && H.single[l + 1]) {
            if (blockIdx.x == 0) __syncthreads(); /* the next level belongs to the same chain */
        } else if (gridDim.x > 1) {
            barriers++;
            ls_grid_barrier(H.bar, barriers * gridDim.x);
        } else {
            __syncthreads();
        }
    }
    ls_grid_exit(H.bar, barriers);
}

static void ls_release(gs_trisolve *ts, ls_cuda_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError(); /* solves done */
    gs_ls_dplan_free(be, &d->D);
    gs_ts_free_array(be, &d->single);
    gs_ts_free_array(be, &d->bp);
    gs_ls_plan_free(&d->P);
}

static gs_status ls_cuda_analyse(gs_trisolve *ts, const gs_csr *T)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    unsigned char *single = NULL;
    gs_ts_dcsr A;
    double t0 = gs_wtime(), t1;

    memset(&A, 0, sizeof A);
    ls_release(ts, d);
    memset(&d->P, 0, sizeof d->P);
    GS_TRY(gs_ts_dcsr_upload(be, T, &A));
    d->time_upload = A.time_upload;
    GS_TRY(gs_ls_dplan_build(be, &A, ts->uplo, GS_LS_ELL_MAX_WIDTH, false, &d->D));
    gs_ts_dcsr_free(be, &A);
    t1 = gs_wtime();

    /* chains on the host from the level pointers (the rule of the host plan, chain_rows = LS_THREADS) */
    {
        gs_ls_plan *P = &d->P;
        P->n = d->D.n;
        P->nlevels = d->D.nlevels;
        P->level_ptr = d->D.h_level_ptr;
        gs_int chain_rows = LS_THREADS;
        st = gs_ls_plan_chains(P, chain_rows);
        P->level_ptr = NULL;
        GS_TRY(st);
        P->ell_width = d->D.ell_width;
        P->rem_nnz = d->D.rem_nnz;
        P->nnz_offdiag = d->D.nnz_off;
        P->max_row_length = d->D.max_row_length;
        P->time_levels = d->D.time_levels;
        GS_TRY(GS_MALLOC(single, (size_t)P->nlevels + 1));
        for (gs_int c = 0; c < P->nchains; c++)
            for (gs_int l = P->chain_ptr[c]; l < P->chain_ptr[c + 1]; l++) single[l] = P->chain_single[c];
        GS_TRY(gs_ts_upload_array(be, &d->single, single, (size_t)P->nlevels + 1));
        {
            void *p = NULL;
            GS_TRY(gs_backend_alloc(be, &p, (size_t)P->n * sizeof(double)));
            d->bp = (double *)p;
        }

        /* the persistent grid: as many blocks as the widest wide level needs, at most the resident ones */
        gs_int widest_wide = 0;
        for (gs_int c = 0; c < P->nchains; c++)
            if (!P->chain_single[c] && P->chain_max_rows[c] > widest_wide) widest_wide = P->chain_max_rows[c];
        int dev = 0, sms = 0, coop = 0, per_sm = 0;
        GS_TRY(TS_CUDA(cudaGetDevice(&dev)));
        GS_TRY(TS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)));
        GS_TRY(TS_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev)));
        GS_TRY(TS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ls_fused_kernel, LS_THREADS, 0)));
        long long want = ((long long)widest_wide + LS_THREADS - 1) / LS_THREADS, cap = (long long)sms * per_sm;
        if (want < 1) want = 1;
        if (!coop || cap < 1) cap = 1; /* one block needs no grid barrier */
        d->grid = (int)(want < cap ? want : cap);
        d->cooperative = coop != 0;
    }
    if (!d->bar) {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, 2 * sizeof(unsigned)));
        d->bar = (unsigned *)p;
    }
    GS_TRY(TS_CUDA(cudaMemsetAsync(d->bar, 0, 2 * sizeof(unsigned), s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    d->time_chains = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
cleanup:
    gs_free(&single);
    gs_ts_dcsr_free(be, &A);
    if (st != GS_OK) ls_release(ts, d);
    return st;
}

static gs_status ls_cuda_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    ls_dev H;
    H.n = d->D.n;
    H.w = d->D.ell_width;
    H.nlevels = d->D.nlevels;
    H.level_ptr = d->D.level_ptr;
    H.perm = d->D.perm;
    H.ell_col = d->D.ell_col;
    H.ell_val = d->D.ell_val;
    H.rem_ptr = d->D.rem_ptr;
    H.rem_col = d->D.rem_col;
    H.rem_val = d->D.rem_val;
    H.dinv = d->D.dinv;
    H.bp = d->bp;
    H.single = d->single;
    H.bar = d->bar;
    H.has_rem = d->D.rem_nnz > 0;
    H.l2_ahead = LS_L2_AHEAD;
    double *xp = x->data;
    ls_gather_kernel<<<(unsigned)((H.n + 255) / 256), 256, 0, s>>>(H.n, H.perm, b->data, d->bp);
    GS_CALL(TS_LAUNCHED("ls_gather_kernel"));
    if (d->grid > 1) {
        void *args[] = {(void *)&H, (void *)&xp};
        GS_CALL(TS_CUDA(cudaLaunchCooperativeKernel((const void *)ls_fused_kernel, dim3((unsigned)d->grid),
                                                    dim3(LS_THREADS), args, 0, s)));
    } else {
        ls_fused_kernel<<<1, LS_THREADS, 0, s>>>(H, xp);
        GS_CALL(TS_LAUNCHED("ls_fused_kernel"));
    }
    return GS_OK;
}

static void ls_cuda_destroy(gs_trisolve *ts)
{
    ls_cuda_data *d = (ls_cuda_data *)ts->data;
    if (!d) return;
    ls_release(ts, d);
    gs_ts_free_array(ts->be, &d->bar);
    gs_free(&ts->data);
}

static void ls_cuda_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const ls_cuda_data *d = (const ls_cuda_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation",
                        "cuda level sets (GPU analysis, HEC, one persistent kernel: grid barriers between wide "
                        "levels, chains of thin levels in one block)");
    gs_ls_plan_view(&d->P, rep, prefix);
    gs_ts_report_int(rep, prefix, "graph_kernels", 2); /* kernels per solve: gather of b, the level walk */
    gs_ts_report_int(rep, prefix, "grid_blocks", d->grid);
    gs_ts_report_int(rep, prefix, "block_threads", LS_THREADS);
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "layout_time", d->D.time_layout);
    gs_ts_report_double(rep, prefix, "chains_time", d->time_chains);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops ls_cuda_ops = {ls_cuda_analyse, ls_cuda_solve, ls_cuda_destroy, ls_cuda_view};

gs_status gs_trisolve_create_levelset_cuda(gs_trisolve *ts)
{
    ls_cuda_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "levelset_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &ls_cuda_ops;
    return GS_OK;
}
