/* y = alpha A x + beta y for a CSR matrix on the GPU: a "vector" kernel (vec threads per row, several
 * rows per thread group) for the ordinary rows and a split path for the long ones.
 *
 * Why this shape. SpMV is a stream over val and colind (12 bytes per entry, each read once) with
 * gathers from x; it is bound by memory bandwidth, and bandwidth is only reached with enough bytes in
 * flight. So:
 *  - vec consecutive threads share a row, the warp covering 32/vec consecutive rows: the warp's loads
 *    of val and colind are one contiguous, coalesced range (thread-per-row would read 32 rows that lie
 *    far apart, one 8-byte word per row per load);
 *  - each thread group takes `rows` rows spaced a block's width apart and issues the loads of all of
 *    them before the first use, so every warp has `rows` times more independent loads in flight than
 *    one row would give (the rows of one load instruction stay consecutive across the warp);
 *  - val and colind are loaded with the streaming hint (ld.global.cs: evict first), so they do not
 *    push x and y out of L2; x, gathered and reused by neighbouring rows, goes through the read-only
 *    path (ld.global.nc);
 *  - a row's partial sums are combined by an xor-butterfly of shuffles within its vec lanes: a fixed
 *    order, so results are reproducible bit for bit;
 *  - rows much longer than the average (a dense row) would hold their warp for thousands of steps
 *    while the rest of the matrix is done: the plan lists them at creation and the vector kernel skips
 *    them; they are cut into chunks of GS_SPMV_CHUNK entries, one thread block per chunk writes a
 *    partial sum, and one warp per long row adds its partials in order (deterministic, no atomics).
 * beta == 0 never reads y (it may hold NaN: 0 * NaN would be NaN). */
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/kstate_logic.h"
#include "core/mem.h"
#include "core/spmv_cuda.h"

#define SPMV_THREADS 256 /* threads per block of every SpMV kernel */
#define FULL_MASK 0xffffffffu

struct gs_spmv_plan {
    gs_backend *be;
    gs_int nrows, ncols, nnz;
    const gs_int *rowptr, *colind; /* device, owned by the caller */
    const double *val;
    int vec, rows;        /* vector kernel: threads per row, rows per thread group */
    gs_int long_above;    /* rows with more entries take the split path (GS_INT_MAX: none) */
    gs_int nlong, nchunks;
    gs_int *long_rows;    /* device, nlong: the long rows, increasing */
    gs_int *chunk_first;  /* device, nlong + 1: long row r owns chunks chunk_first[r] .. chunk_first[r+1]-1 */
    gs_int *chunk_owner;  /* device, nchunks: index (into long_rows) of the row a chunk belongs to */
    double *partial;      /* device, nchunks: one partial sum per chunk */
    unsigned fused_blocks; /* one-wave grid of the fused CG launch (0: not computed, no fusion) */
    char desc[160];
};


/* ------------------------------------------------------------------------------------------------ */
/* Kernels.                                                                                          */

/* Sum over the VEC lanes of a thread group (xor butterfly: every lane ends with the same total). */
template <int VEC> static __device__ __forceinline__ double group_sum(double s)
{
#pragma unroll
    for (int o = VEC / 2; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
    return s;
}

/* Fused CG (DOT): besides q = A p, the kernel computes p'q and the scalar step after it
 * (ksl_after_pq: alpha = r'z / p'Ap, or a stop) -- the work of a separate p'Ap kernel that would read p
 * and q again. Each block adds its rows' p_r q_r in a fixed order, the last block to finish adds the
 * block sums in block order (deterministic), as the fused CG kernels of backend_cuda.cu do. */
struct spmv_dot {
    gs_kscalars *k;    /* the CG scalars; nothing is done once k->stop is set */
    unsigned *count;   /* blocks finished (the last one resets it) */
    double *partials;  /* one per block */
    int it;
    gs_krec *ring;
};

/* Sum of s over the block in a fixed order (warps by butterfly, then warp 0 over the warp sums); the
 * total is valid in thread 0. Every thread of the block must call it. */
static __device__ double block_sum(double s)
{
    __shared__ double warp_sums[SPMV_THREADS / 32];
    s = group_sum<32>(s);
    if ((threadIdx.x & 31u) == 0) warp_sums[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < SPMV_THREADS / 32 ? warp_sums[threadIdx.x] : 0.0;
        s = group_sum<32>(s);
    }
    __syncthreads(); /* warp_sums may be reused by the caller's next block_sum */
    return s;
}

/* The block's share s of p'q; the last block adds all shares in block order and takes the CG step. */
static __device__ void dot_finish(const spmv_dot &D, double s)
{
    __shared__ bool last;
    s = block_sum(s);
    if (threadIdx.x == 0) {
        D.partials[blockIdx.x] = s;
        __threadfence(); /* the share is visible before the count says so */
        last = atomicAdd(D.count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    double t = 0.0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) t += __ldcg(&D.partials[b]);
    t = block_sum(t);
    if (threadIdx.x == 0) {
        *D.count = 0;
        ksl_after_pq(D.k, D.it, t, &D.ring[D.it % GS_KS_RING]);
    }
}

/* Vector kernel: y_r = alpha sum_k a_rk x_k (+ beta y_r) for every row r with at most long_above
 * entries. Block b covers rows [b G R, (b+1) G R) with G = SPMV_THREADS / VEC groups and R = ROWS;
 * group g takes rows b G R + j G + g, j < R, so the groups of one warp read consecutive rows for each
 * j. Lane l of a group multiplies entries l, l + VEC, ... of each of its rows. */
template <int VEC, int ROWS, bool BETA0, bool DOT>
static __global__ void __launch_bounds__(SPMV_THREADS)
    k_spmv_vector(gs_int nrows, gs_int long_above, const gs_int *__restrict__ rowptr,
                  const gs_int *__restrict__ colind, const double *__restrict__ val,
                  const double *__restrict__ x, double alpha, double beta, double *__restrict__ y,
                  long long nvb, spmv_dot D)
{
    constexpr int GROUPS = SPMV_THREADS / VEC;
    /* the stop code is read once at entry; only the last block of a kernel writes it, after every
     * block has read it, so the whole grid agrees */
    if (DOT && D.k->stop) return;
    const int lane = (int)(threadIdx.x % VEC);
    double dot = 0.0;
    /* virtual blocks of GROUPS * ROWS rows, a one-wave grid striding over them (launch_vector): fewer
     * blocks to schedule, and few block sums for the last block of the fused CG step */
    for (long long vb = blockIdx.x; vb < nvb; vb += gridDim.x) {
        const long long base = vb * (GROUPS * ROWS) + threadIdx.x / VEC;
        gs_int begin[ROWS], end[ROWS];
        bool mine[ROWS];
        gs_int maxlen = 0;
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            const long long r = base + (long long)j * GROUPS;
            begin[j] = end[j] = 0;
            mine[j] = false;
            if (r < nrows) {
                begin[j] = __ldg(rowptr + r);
                end[j] = __ldg(rowptr + r + 1);
                mine[j] = end[j] - begin[j] <= long_above;
                if (!mine[j]) end[j] = begin[j]; /* the split path writes this row */
            }
            maxlen = max(maxlen, end[j] - begin[j]);
        }
        double sum[ROWS];
#pragma unroll
        for (int j = 0; j < ROWS; j++) sum[j] = 0.0;
        /* unsigned step counter: off + VEC cannot overflow for any row length below 2^31 */
        for (unsigned off = (unsigned)lane; off < (unsigned)maxlen; off += VEC) {
            /* all ROWS loads of val/colind first, then all gathers of x, then the products: the loads of
             * one step are independent and in flight together */
            gs_int col[ROWS];
            double a[ROWS], xv[ROWS];
#pragma unroll
            for (int j = 0; j < ROWS; j++) {
                const gs_int k = begin[j] + (gs_int)off;
                const bool in = off < (unsigned)(end[j] - begin[j]);
                col[j] = in ? __ldcs(colind + k) : -1;
                a[j] = in ? __ldcs(val + k) : 0.0;
            }
#pragma unroll
            for (int j = 0; j < ROWS; j++) xv[j] = col[j] >= 0 ? __ldg(x + col[j]) : 0.0;
#pragma unroll
            for (int j = 0; j < ROWS; j++)
                if (col[j] >= 0) sum[j] = fma(a[j], xv[j], sum[j]);
        }
        /* every lane of the warp reaches the shuffles (no early exit above) */
#pragma unroll
        for (int j = 0; j < ROWS; j++) sum[j] = group_sum<VEC>(sum[j]);
        /* lane j % VEC writes row j: for each j the warp's stores go to consecutive rows */
#pragma unroll
        for (int j = 0; j < ROWS; j++) {
            if (mine[j] && lane == j % VEC) {
                const long long r = base + (long long)j * GROUPS;
                const double yr = BETA0 ? alpha * sum[j] : alpha * sum[j] + beta * y[r];
                y[r] = yr;
                if (DOT) dot += x[r] * yr; /* x = p, y = q of a square matrix */
            }
        }
    }
    if (DOT) dot_finish(D, dot);
}

/* Split path, stage 1: partial[c] = sum of a_rk x_k over chunk c, i.e. over entries
 * [rowptr[r] + q CHUNK, min(rowptr[r] + (q+1) CHUNK, rowptr[r+1])) of long row r = long_rows[o],
 * o = chunk_owner[c], q = c - chunk_first[o]. One block per chunk; each thread has CHUNK / THREADS
 * independent entries in flight. */
static __global__ void __launch_bounds__(SPMV_THREADS)
    k_spmv_long_partial(const gs_int *__restrict__ long_rows, const gs_int *__restrict__ chunk_first,
                        const gs_int *__restrict__ chunk_owner, const gs_int *__restrict__ rowptr,
                        const gs_int *__restrict__ colind, const double *__restrict__ val,
                        const double *__restrict__ x, double *__restrict__ partial)
{
    const gs_int c = (gs_int)blockIdx.x;
    const gs_int o = chunk_owner[c];
    const gs_int r = long_rows[o];
    const long long lo = (long long)rowptr[r] + (long long)(c - chunk_first[o]) * GS_SPMV_CHUNK;
    const long long row_end = rowptr[r + 1];
    const long long hi = lo + GS_SPMV_CHUNK < row_end ? lo + GS_SPMV_CHUNK : row_end;
    constexpr int PER_THREAD = GS_SPMV_CHUNK / SPMV_THREADS;
    gs_int col[PER_THREAD];
    double a[PER_THREAD];
    double s = 0.0;
#pragma unroll
    for (int t = 0; t < PER_THREAD; t++) {
        const long long k = lo + (long long)t * SPMV_THREADS + threadIdx.x;
        col[t] = k < hi ? __ldcs(colind + k) : -1;
        a[t] = k < hi ? __ldcs(val + k) : 0.0;
    }
#pragma unroll
    for (int t = 0; t < PER_THREAD; t++)
        if (col[t] >= 0) s = fma(a[t], __ldg(x + col[t]), s);
    s = block_sum(s); /* a fixed order */
    if (threadIdx.x == 0) partial[c] = s;
}

/* Split path, stage 2: y_r = alpha sum_c partial[c] (+ beta y_r) over the chunks of long row r; one
 * warp per long row (w is the same for the 32 lanes of a warp, so a warp exits as a whole). */
template <bool BETA0>
static __global__ void __launch_bounds__(SPMV_THREADS)
    k_spmv_long_finish(gs_int nlong, const gs_int *__restrict__ long_rows, const gs_int *__restrict__ chunk_first,
                       const double *__restrict__ partial, double alpha, double beta, double *__restrict__ y)
{
    const long long w = ((long long)blockIdx.x * SPMV_THREADS + threadIdx.x) >> 5;
    const int lane = (int)(threadIdx.x & 31u);
    if (w >= nlong) return;
    double s = 0.0;
    for (gs_int c = chunk_first[w] + lane; c < chunk_first[w + 1]; c += 32) s += partial[c];
    s = group_sum<32>(s);
    if (lane == 0) {
        const gs_int r = long_rows[w];
        y[r] = BETA0 ? alpha * s : alpha * s + beta * y[r];
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Launch.                                                                                           */

/* Thread blocks of the vector kernel for the plan's shape. */
static unsigned vector_blocks(const gs_spmv_plan *p)
{
    const long long per_block = (long long)(SPMV_THREADS / p->vec) * p->rows;
    return (unsigned)(((long long)p->nrows + per_block - 1) / per_block);
}

/* Blocks per SM of the fused (one-wave) launch: what the kernel's occupancy allows. */
template <int VEC, int ROWS>
static unsigned fused_grid(const gs_spmv_plan *p)
{
    int per_sm = 0, dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_spmv_vector<VEC, ROWS, true, true>, SPMV_THREADS, 0) !=
            cudaSuccess) {
        (void)cudaGetLastError();
        per_sm = 1;
        sms = 1;
    }
    long long g = (long long)(per_sm < 1 ? 1 : per_sm) * (sms < 1 ? 1 : sms), nvb = vector_blocks(p);
    return (unsigned)(g < nvb ? g : nvb);
}

template <int VEC, int ROWS, bool DOT>
static gs_status launch_vector(const gs_spmv_plan *p, double alpha, const double *x, double beta, double *y,
                               const spmv_dot &D, cudaStream_t s)
{
    const long long nvb = vector_blocks(p);
    /* one wave striding over the row blocks, for the plain SpMV too: on the H100 (bench_spmv, median of
     * 300) poisson3d 100^3 0.0403 ms (86% of the copy bandwidth) against 0.0426 ms (82%) with a block per
     * row block; laplace27 and poisson2d the same either way */
    const unsigned blocks = p->fused_blocks > 0 ? p->fused_blocks : (unsigned)nvb;
    /* y = alpha A x + beta y over the short rows */
    if (beta == 0.0)
        k_spmv_vector<VEC, ROWS, true, DOT><<<blocks, SPMV_THREADS, 0, s>>>(p->nrows, p->long_above, p->rowptr,
                                                                            p->colind, p->val, x, alpha, beta, y, nvb, D);
    else
        k_spmv_vector<VEC, ROWS, false, DOT><<<blocks, SPMV_THREADS, 0, s>>>(
            p->nrows, p->long_above, p->rowptr, p->colind, p->val, x, alpha, beta, y, nvb, D);
    return GS_CUDA_LAUNCHED("k_spmv_vector");
}

template <int VEC, bool DOT>
static gs_status launch_vector_rows(const gs_spmv_plan *p, double alpha, const double *x, double beta, double *y,
                                    const spmv_dot &D, cudaStream_t s)
{
    switch (p->rows) {
    case 1: return launch_vector<VEC, 1, DOT>(p, alpha, x, beta, y, D, s);
    case 2: return launch_vector<VEC, 2, DOT>(p, alpha, x, beta, y, D, s);
    case 4: return launch_vector<VEC, 4, DOT>(p, alpha, x, beta, y, D, s);
    }
    return GS_ERROR(GS_ERR_INTERNAL, "SpMV plan holds rows per group = %d; expected 1, 2 or 4", p->rows);
}

/* The vector kernel over the short rows, with the fused p'q step when DOT. */
template <bool DOT>
static gs_status launch_short(const gs_spmv_plan *p, double alpha, const double *x, double beta, double *y,
                              const spmv_dot &D, cudaStream_t s)
{
    switch (p->vec) {
    case 2: return launch_vector_rows<2, DOT>(p, alpha, x, beta, y, D, s);
    case 4: return launch_vector_rows<4, DOT>(p, alpha, x, beta, y, D, s);
    case 8: return launch_vector_rows<8, DOT>(p, alpha, x, beta, y, D, s);
    case 16: return launch_vector_rows<16, DOT>(p, alpha, x, beta, y, D, s);
    case 32: return launch_vector_rows<32, DOT>(p, alpha, x, beta, y, D, s);
    }
    return GS_ERROR(GS_ERR_INTERNAL, "SpMV plan holds vec = %d; expected 2, 4, 8, 16 or 32", p->vec);
}

/* fused_grid for the plan's shape */
static unsigned fused_grid_for(const gs_spmv_plan *p)
{
#define FG_ROWS(V)                                         \
    switch (p->rows) {                                     \
    case 1: return fused_grid<V, 1>(p);                    \
    case 2: return fused_grid<V, 2>(p);                    \
    case 4: return fused_grid<V, 4>(p);                    \
    }                                                      \
    return 0
    switch (p->vec) {
    case 2: FG_ROWS(2);
    case 4: FG_ROWS(4);
    case 8: FG_ROWS(8);
    case 16: FG_ROWS(16);
    case 32: FG_ROWS(32);
    }
#undef FG_ROWS
    return 0;
}

bool gs_spmv_plan_fuses_cg(const gs_spmv_plan *p, size_t *partials)
{
    if (partials) *partials = p ? (size_t)p->fused_blocks : 0;
    return p && p->nlong == 0 && p->nrows > 0 && p->nrows == p->ncols && p->fused_blocks > 0;
}

gs_status gs_spmv_plan_apply_cg_pq(const gs_spmv_plan *p, const double *x, double *y, struct gs_kscalars *k,
                                   unsigned *count, double *partials, int it, gs_krec *ring, void *stream)
{
    if (!gs_spmv_plan_fuses_cg(p, NULL))
        return GS_ERROR(GS_ERR_INTERNAL, "fused SpMV + p'Ap asked of a plan with long rows or an empty/non-square "
                                         "matrix");
    spmv_dot D = {k, count, partials, it, ring};
    GS_CALL(launch_short<true>(p, 1.0, x, 0.0, y, D, (cudaStream_t)stream));
    return GS_OK;
}

gs_status gs_spmv_plan_apply(const gs_spmv_plan *p, double alpha, const double *x, double beta, double *y,
                             void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (p->nrows == 0) return GS_OK;
    const spmv_dot none = {NULL, NULL, NULL, 0, NULL};
    GS_CALL(launch_short<false>(p, alpha, x, beta, y, none, s));
    if (p->nlong == 0) return GS_OK;
    /* partial[c] = sum over chunk c of the long rows' a_rk x_k */
    k_spmv_long_partial<<<(unsigned)p->nchunks, SPMV_THREADS, 0, s>>>(p->long_rows, p->chunk_first, p->chunk_owner,
                                                                      p->rowptr, p->colind, p->val, x, p->partial);
    GS_CALL(GS_CUDA_LAUNCHED("k_spmv_long_partial"));
    /* y_r = alpha sum of r's partials + beta y_r for each long row r */
    const unsigned warps_per_block = SPMV_THREADS / 32;
    const unsigned blocks = (unsigned)(((long long)p->nlong + warps_per_block - 1) / warps_per_block);
    if (beta == 0.0)
        k_spmv_long_finish<true><<<blocks, SPMV_THREADS, 0, s>>>(p->nlong, p->long_rows, p->chunk_first, p->partial,
                                                                 alpha, beta, y);
    else
        k_spmv_long_finish<false><<<blocks, SPMV_THREADS, 0, s>>>(p->nlong, p->long_rows, p->chunk_first,
                                                                  p->partial, alpha, beta, y);
    GS_CALL(GS_CUDA_LAUNCHED("k_spmv_long_finish"));
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Plan.                                                                                             */

/* One "key=value" of a parameter string; *ok false when the value is not allowed. */
static void parse_one(const char *key, size_t key_len, const char *value, gs_spmv_params *prm, bool *ok,
                      bool *known)
{
    char *end = NULL;
    long long v = 0;
    bool is_auto = strcmp(value, "auto") == 0;
    *known = true;
    *ok = true;
    if (!is_auto) {
        v = strtoll(value, &end, 10);
        if (!value[0] || *end) v = -1000; /* not a number: rejected below unless "off" */
    }
    if (key_len == 3 && strncmp(key, "vec", 3) == 0) {
        *ok = is_auto || v == 2 || v == 4 || v == 8 || v == 16 || v == 32;
        prm->vec = is_auto ? 0 : (int)v;
    } else if (key_len == 4 && strncmp(key, "rows", 4) == 0) {
        *ok = is_auto || v == 1 || v == 2 || v == 4;
        prm->rows = is_auto ? 0 : (int)v;
    } else if (key_len == 4 && strncmp(key, "long", 4) == 0) {
        if (strcmp(value, "off") == 0) prm->long_above = GS_SPMV_LONG_OFF;
        else if (is_auto) prm->long_above = GS_SPMV_LONG_AUTO;
        else if (v >= 0 && v <= GS_INT_MAX) prm->long_above = v;
        else *ok = false;
    } else {
        *known = false;
    }
}

gs_status gs_spmv_params_parse(const char *text, gs_spmv_params *prm)
{
    gs_spmv_params p = {0, 0, GS_SPMV_LONG_AUTO};
    const char *s = text ? text : "";
    while (*s) {
        char item[64], *eq = NULL;
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        bool ok = false, known = false;
        if (len == 0 || len >= sizeof item)
            return GS_ERROR(GS_ERR_ARG, "SpMV parameters \"%s\": expected key=value items separated by commas "
                                        "(vec=2|4|8|16|32|auto, rows=1|2|4|auto, long=N|auto|off)", text);
        memcpy(item, s, len);
        item[len] = '\0';
        eq = strchr(item, '=');
        if (!eq)
            return GS_ERROR(GS_ERR_ARG, "SpMV parameters \"%s\": item \"%s\" has no '='; expected e.g. vec=8",
                            text, item);
        parse_one(item, (size_t)(eq - item), eq + 1, &p, &ok, &known);
        if (!known)
            return GS_ERROR(GS_ERR_ARG, "SpMV parameters \"%s\": unknown key in \"%s\"; the keys are vec, rows "
                                        "and long", text, item);
        if (!ok)
            return GS_ERROR(GS_ERR_ARG, "SpMV parameters \"%s\": bad value in \"%s\"; allowed: vec=2|4|8|16|32|"
                                        "auto, rows=1|2|4|auto, long=N (0 <= N <= %d)|auto|off", text, item,
                            (int)GS_INT_MAX);
        s += len;
        if (*s == ',') s++;
    }
    *prm = p;
    return GS_OK;
}

/* Smallest power of two >= v, within [2, 32]. */
static int vec_for(double avg)
{
    int v = 2;
    while (v < 32 && (double)v < avg) v *= 2;
    return v;
}

/* Device copy of count gs_ints (count may be 0). */
static gs_status upload_ints(gs_backend *be, gs_int **dst, const gs_int *src, size_t count)
{
    void *p = NULL;
    GS_CALL(gs_backend_alloc(be, &p, count * sizeof(gs_int)));
    *dst = (gs_int *)p;
    if (count > 0) GS_CALL(gs_backend_upload(be, p, src, count * sizeof(gs_int)));
    return GS_OK;
}

gs_status gs_spmv_plan_create(gs_backend *be, const gs_csr *A, const gs_int *rowptr, const gs_int *colind,
                              const double *val, const gs_spmv_params *prm, gs_spmv_plan **plan)
{
    gs_status st = GS_OK;
    gs_spmv_plan *p = NULL;
    gs_int *long_rows = NULL, *chunk_first = NULL, *chunk_owner = NULL; /* host staging */
    gs_spmv_params want = {0, 0, GS_SPMV_LONG_AUTO};
    long long nlong = 0, nchunks = 0, short_nnz = 0, short_rows = 0;
    gs_int maxlen = 0;
    double avg = 0.0;

    *plan = NULL;
    if (prm) want = *prm;
    if (want.vec != 0 && want.vec != 2 && want.vec != 4 && want.vec != 8 && want.vec != 16 && want.vec != 32)
        return GS_ERROR(GS_ERR_ARG, "SpMV: vec = %d threads per row requested; expected 2, 4, 8, 16 or 32",
                        want.vec);
    if (want.rows != 0 && want.rows != 1 && want.rows != 2 && want.rows != 4)
        return GS_ERROR(GS_ERR_ARG, "SpMV: rows = %d per thread group requested; expected 1, 2 or 4", want.rows);
    if (want.long_above < 0 && want.long_above != GS_SPMV_LONG_AUTO && want.long_above != GS_SPMV_LONG_OFF)
        return GS_ERROR(GS_ERR_ARG, "SpMV: long-row threshold %lld; expected N >= 0, auto or off",
                        want.long_above);
    if (A->nrows > 0 && !A->rowptr)
        return GS_ERROR(GS_ERR_ARG, "SpMV: the host matrix (%d rows) has no row pointers", (int)A->nrows);

    GS_CALL(gs_calloc(&p, 1, sizeof *p));
    p->be = be;
    p->nrows = A->nrows;
    p->ncols = A->ncols;
    p->nnz = A->nnz;
    p->rowptr = rowptr;
    p->colind = colind;
    p->val = val;

    /* long rows: by default those longer than 32 times the average (at least 32, at most 1024
     * entries), i.e. rows that would hold their warp many times longer than a typical one */
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > maxlen) maxlen = len;
    }
    avg = A->nrows > 0 ? (double)A->nnz / (double)A->nrows : 0.0;
    if (want.long_above == GS_SPMV_LONG_OFF) {
        p->long_above = GS_INT_MAX;
    } else if (want.long_above == GS_SPMV_LONG_AUTO) {
        double t = ceil(32.0 * avg);
        p->long_above = (gs_int)(t < 32.0 ? 32.0 : t > 1024.0 ? 1024.0 : t);
    } else {
        p->long_above = (gs_int)want.long_above;
    }
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > p->long_above) {
            nlong++;
            nchunks += (len + GS_SPMV_CHUNK - 1) / GS_SPMV_CHUNK;
        } else {
            short_nnz += len;
            short_rows++;
        }
    }
    if (nchunks > GS_INT_MAX) /* cannot happen with 32-bit nnz; guards the grid size */
        GS_FAIL(GS_ERR_INTERNAL, "SpMV: %lld chunks of long rows exceed the index range", nchunks);

    /* threads per row: the smallest power of two covering the average short row, so that most rows
     * take one step; rows per group: enough that a warp has 16..32 rows' loads in flight */
    p->vec = want.vec ? want.vec : vec_for(short_rows > 0 ? (double)short_nnz / (double)short_rows : 0.0);
    p->rows = want.rows ? want.rows : p->vec <= 8 ? 4 : 2;

    p->nlong = (gs_int)nlong;
    p->nchunks = (gs_int)nchunks;
    if (nlong > 0) {
        gs_int r = 0, c = 0;
        GS_TRY(GS_MALLOC(long_rows, nlong));
        GS_TRY(GS_MALLOC(chunk_first, nlong + 1));
        GS_TRY(GS_MALLOC(chunk_owner, nchunks));
        for (gs_int i = 0; i < A->nrows; i++) {
            gs_int len = A->rowptr[i + 1] - A->rowptr[i];
            if (len <= p->long_above) continue;
            long_rows[r] = i;
            chunk_first[r] = c;
            for (gs_int q = 0; q < (len + GS_SPMV_CHUNK - 1) / GS_SPMV_CHUNK; q++) chunk_owner[c++] = r;
            r++;
        }
        chunk_first[r] = c;
        GS_TRY(upload_ints(be, &p->long_rows, long_rows, (size_t)nlong));
        GS_TRY(upload_ints(be, &p->chunk_first, chunk_first, (size_t)nlong + 1));
        GS_TRY(upload_ints(be, &p->chunk_owner, chunk_owner, (size_t)nchunks));
        GS_TRY(gs_backend_alloc(be, (void **)&p->partial, (size_t)nchunks * sizeof(double)));
    }

    /* the fused CG step (gs_spmv_plan_apply_cg_pq) runs on a one-wave grid of this many blocks */
    p->fused_blocks = p->nrows > 0 ? fused_grid_for(p) : 0;
    if (nlong > 0)
        snprintf(p->desc, sizeof p->desc, "own vector vec=%d rows=%d, %d long rows (> %d entries, longest %d) in "
                 "%d chunks", p->vec, p->rows, (int)p->nlong, (int)p->long_above, (int)maxlen, (int)p->nchunks);
    else
        snprintf(p->desc, sizeof p->desc, "own vector vec=%d rows=%d, no long rows (longest %d entries)", p->vec,
                 p->rows, (int)maxlen);
    *plan = p;
    p = NULL;
cleanup:
    gs_free(&long_rows);
    gs_free(&chunk_first);
    gs_free(&chunk_owner);
    gs_spmv_plan_destroy(&p);
    return st;
}

void gs_spmv_plan_destroy(gs_spmv_plan **plan)
{
    gs_spmv_plan *p = plan ? *plan : NULL;
    if (!p) return;
    if (p->long_rows) gs_backend_free(p->be, p->long_rows);
    if (p->chunk_first) gs_backend_free(p->be, p->chunk_first);
    if (p->chunk_owner) gs_backend_free(p->be, p->chunk_owner);
    if (p->partial) gs_backend_free(p->be, p->partial);
    gs_free(plan);
}

const char *gs_spmv_plan_describe(const gs_spmv_plan *plan) { return plan ? plan->desc : "none"; }

void gs_spmv_plan_shape(const gs_spmv_plan *plan, int *vec, int *rows, gs_int *long_above, gs_int *nlong,
                        gs_int *nchunks)
{
    if (vec) *vec = plan->vec;
    if (rows) *rows = plan->rows;
    if (long_above) *long_above = plan->long_above;
    if (nlong) *nlong = plan->nlong;
    if (nchunks) *nchunks = plan->nchunks;
}
