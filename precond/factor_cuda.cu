/* Numeric ILU (IKJ on a fixed pattern, any fill level) and IC(0) on the GPU: the twins of gs_ilu_numeric
 * and gs_ic0 (precond/ilu_factor.c, the reference the tests compare with entry by entry).
 *
 * Arithmetic. Row i of ILU: w = a_i on the pattern; for k < i in L's pattern, increasing:
 *     w_k = w_k / u_kk;  if w_k != 0: w_j = w_j - w_k u_kj  for j > k in row k of U and in the pattern;
 * IC(0): for j < i in the pattern, increasing:
 *     s = a_ij - sum_{k<j} l_ik l_jk (increasing k),  l_ij = s / l_jj,  d = d - l_ij^2  (d = a_ii first),
 *     l_ii = sqrt(d).
 * Every product, difference and quotient is rounded separately (__dmul_rn, __dsub_rn, __ddiv_rn: no
 * fused multiply-add) and each w_j / s sees its updates in the host's order, so the factors are the
 * host's bit for bit (IC(0) may differ in the sign of an exact zero), and so are pivot decisions.
 *
 * Schedule. Row i may use row k only once row k is final, and it needs exactly the rows of its L
 * pattern: the dependency DAG of the lower factor. The alternatives on the model problems:
 *   - one launch (or one grid barrier) per level costs ~4-10 us per level: poisson3d 100 has 298
 *     levels, poisson2d 1024 has 2047 (the second would take 10-20 ms in barriers alone);
 *   - sync-free in natural row order needs no level analysis, but consecutive rows of a stencil form
 *     a chain (row i needs row i-1), so the rows taken together by one warp wait on each other, and
 *     the rows in flight cover only a slab of the grid;
 *   - sync-free in level order (chosen): rows sorted by level, so the rows taken together are
 *     independent and sit on the wavefront; the cost is ~ levels x (one dependency hop + the row's
 *     own critical work) plus one level analysis (~ levels x one hop of an int) and a sort.
 * Kernels: (1) input checks (first malformed row by atomicMin, the host formats the host's message);
 * (2) levels of L: a thread per row, blocks take their rows by ticket in row order, each row spinning
 * on the levels of its dependencies (always of smaller rows, taken by running blocks: no deadlock);
 * (3) a stable radix sort of (level, row) gives the order; (4) the factorization: a persistent grid of
 * warps takes rows by ticket in that order, G lanes per row (8 for short rows, 32 for long ones), and
 * each row, in lock-step rounds that never block a warp:
 *   prologue (before any wait): loads its pattern and A's row into shared memory (w), and resolves the
 *     pattern side of its work: for every k of its L pattern and every entry of the source row (U row k
 *     for ILU, L row k for IC(0)) the position it updates in row i, kept in a compacted list of pairs;
 *   wait: polls the ready flags of its dependencies (acquire loads, G at a time, in parallel);
 *   run: loads the values of all pairs at once (one round trip through L2), then applies them in order
 *     in shared memory (ILU: the updates of one k in parallel; IC(0): one lane, in the host's order);
 *   finish: pivot checks and the policy, stores the row (L2), __threadfence, then a release store of
 *     its ready flag. Rows longer than the shared buffer keep w in the output arrays instead.
 * Deadlock: a row waits only for rows of smaller positions, taken earlier by warps that are running;
 * rows of the same warp wait for each other only through non-blocking polls between rounds.
 * Errors: the first failing row in elimination order is found by atomicMin on (row, kind, position),
 * kinds ordered as the host checks them; the message is then formatted on the host from that key. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/backend_cuda.h"
#include "core/mem.h"
#include "core/staging_cuda.h"
#include "core/carve.h"
#include "core/cuda_check.h"
#include "core/gpu_sync_cuda.h"
#include "precond/factor_cuda.h"

/* ================================================================ errors and constants */


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

static __host__ __device__ __forceinline__ unsigned long long fc_key(gs_int row, unsigned kind, long long pos)
{
    unsigned long long p = pos > (long long)FC_POS_MAX ? FC_POS_MAX : (unsigned long long)pos;
    return ((unsigned long long)(unsigned)row << 32) | ((unsigned long long)kind << 28) | p;
}

/* ================================================================ kernel 1: input checks */

struct fc_check_args {
    gs_int n, nnz_a, nnz_l, nnz_u;
    const gs_int *ap, *ac, *lp, *lc, *up, *uc; /* lp..uc only for ILU */
    fc_stats *stats;
};

/* Row pointers within [0, nnz] and nondecreasing; row i of A: columns in range and increasing (the first
 * offending entry); ILU: row i of L strictly lower and increasing, row i of U starting with the diagonal,
 * increasing, below n. */
static __global__ void __launch_bounds__(FC_CHECK_THREADS) fc_check_kernel(fc_check_args C)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= C.n) return;
    bool bad = false;
    gs_int b = C.ap[i], e = C.ap[i + 1];
    if (b < 0 || e < b || e > C.nnz_a) {
        atomicMin(&C.stats->bad_ptr, ((unsigned long long)i << 2) | 0ULL);
        bad = true;
    } else {
        for (gs_int p = b; p < e; p++) {
            gs_int j = C.ac[p];
            if (j < 0 || j >= C.n || (p > b && j <= C.ac[p - 1])) {
                atomicMin(&C.stats->bad_a, ((unsigned long long)i << 32) | (unsigned long long)(p - b));
                bad = true;
                break;
            }
        }
    }
    if (C.lp) {
        gs_int lb = C.lp[i], le = C.lp[i + 1], ub = C.up[i], ue = C.up[i + 1];
        bool lptr = lb < 0 || le < lb || le > C.nnz_l, uptr = ub < 0 || ue < ub || ue > C.nnz_u;
        if (lptr || uptr) {
            atomicMin(&C.stats->bad_ptr, ((unsigned long long)i << 2) | (lptr ? 1ULL : 2ULL));
            bad = true;
        } else {
            int kind = -1;
            for (gs_int p = lb; p < le && kind < 0; p++) {
                gs_int j = C.lc[p];
                if (j < 0 || j >= i || (p > lb && j <= C.lc[p - 1])) kind = FC_PAT_L;
            }
            if (kind < 0 && (ue <= ub || C.uc[ub] != i)) kind = FC_PAT_UDIAG;
            for (gs_int p = ub + 1; p < ue && kind < 0; p++)
                if (C.uc[p] >= C.n || C.uc[p] <= C.uc[p - 1]) kind = FC_PAT_USORT;
            if (kind >= 0) {
                atomicMin(&C.stats->bad_pat, ((unsigned long long)i << 2) | (unsigned long long)kind);
                bad = true;
            }
        }
    }
    if (bad) atomicExch(&C.stats->invalid, 1);
}

/* ================================================================ kernel 2: levels of L */

struct fc_level_args {
    gs_int n;
    int skip_last; /* IC(0): the last entry of each row is the diagonal, not a dependency */
    const gs_int *__restrict__ ptr;
    const gs_int *__restrict__ col;
    gs_int *level; /* -1 until known */
    gs_int *idx;   /* i: the values of the sort */
    fc_stats *stats;
};

/* level(i) = 0 without dependencies, else 1 + max level(j) over j in row i. A block takes the next
 * LV_THREADS rows by ticket, so every dependency (a smaller row) belongs to a running or finished block.
 * Each round a row reads up to 4 levels from its cursor and consumes the known prefix; no lane blocks,
 * so lanes depending on lanes of the same warp progress. */
static __global__ void __launch_bounds__(FC_LV_THREADS) fc_level_kernel(fc_level_args A)
{
    __shared__ unsigned long long s_ticket;
    __shared__ int s_max;
    if (A.stats->invalid) return; /* uniform: before any barrier */
    if (threadIdx.x == 0) {
        s_ticket = atomicAdd(&A.stats->lv_ticket, 1ULL);
        s_max = 0;
    }
    __syncthreads();
    const long long r = (long long)s_ticket * FC_LV_THREADS + threadIdx.x;
    const bool active = r < (long long)A.n;
    const gs_int i = active ? (gs_int)r : 0;
    gs_int q = 0, qe = 0, lv = 0;
    if (active) {
        q = A.ptr[i];
        qe = A.ptr[i + 1] - A.skip_last;
        A.idx[i] = i;
    }
    bool done = !active;
    for (;;) {
        if (!done) {
            gs_int got[4];
#pragma unroll
            for (int u = 0; u < 4; u++) got[u] = q + u < qe ? gs_gpu_ld_relaxed(A.level + A.col[q + u]) : -1;
            int adv = 0;
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (adv == u && q + u < qe && got[u] >= 0) {
                    if (got[u] + 1 > lv) lv = got[u] + 1;
                    adv++;
                }
            q += adv;
            if (q >= qe) {
                gs_gpu_st_relaxed(A.level + i, lv);
                done = true;
            }
        }
        if (__all_sync(FC_FULL, done)) break;
    }
    if (active) atomicMax(&s_max, (int)lv);
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&A.stats->max_level, s_max);
}

/* ================================================================ IC(0) pattern and transpose */

/* cnt[i] = entries of row i of A left of the diagonal + 1 (the diagonal of L); cnt[n] = 0. */
static __global__ void fc_ic_count_kernel(gs_int n, const gs_int *__restrict__ ap, const gs_int *__restrict__ ac,
                                          gs_int *cnt, const fc_stats *stats)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i > n || stats->invalid) return;
    if (i == n) {
        cnt[n] = 0;
        return;
    }
    gs_int c = 0;
    for (gs_int p = ap[i]; p < ap[i + 1] && ac[p] < i; p++) c++;
    cnt[i] = c + 1;
}

/* Row i of L's pattern: A's columns left of the diagonal, then i; row[e] = i and eidx[e] = e (the
 * transpose's sort input). */
static __global__ void fc_ic_fill_kernel(gs_int n, const gs_int *__restrict__ ap, const gs_int *__restrict__ ac,
                                         const gs_int *__restrict__ lp, gs_int *lc, gs_int *row, gs_int *eidx,
                                         const fc_stats *stats)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n || stats->invalid) return;
    gs_int b = lp[i], e = lp[i + 1], a = ap[i];
    for (gs_int t = b; t < e - 1; t++) lc[t] = ac[a + (t - b)];
    lc[e - 1] = i;
    for (gs_int t = b; t < e; t++) {
        row[t] = i;
        eidx[t] = t;
    }
}

/* After the stable sort of L's entries by column (tcol, tidx): LT's row pointers (every column of L
 * holds its diagonal, so no row of LT is empty), columns and values. */
static __global__ void fc_ic_transpose_kernel(gs_int n, gs_int nnz, const gs_int *__restrict__ tcol,
                                              const gs_int *__restrict__ tidx, const gs_int *__restrict__ row,
                                              const double *lv, gs_int *tp, gs_int *tc, double *tv,
                                              const fc_stats *stats)
{
    const gs_int s = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (s >= nnz || stats->invalid) return;
    gs_int c = tcol[s], e = tidx[s];
    if (s == 0 || tcol[s - 1] != c) tp[c] = s;
    if (s == nnz - 1) tp[n] = nnz;
    tc[s] = row[e];
    tv[s] = lv[e];
}

/* ================================================================ ILU(0) pattern */

/* The pattern of ILU(0) is A's, split at the diagonal (gs_iluk_symbolic with k = 0): row i of L = the
 * columns of A left of i; row i of U = i (inserted when A lacks it), then the columns right of it.
 * lcnt[i], ucnt[i] = their lengths; lcnt[n] = ucnt[n] = 0 (the scans give the row pointers). */
static __global__ void fc_ilu0_count_kernel(gs_int n, const gs_int *__restrict__ ap, const gs_int *__restrict__ ac,
                                            gs_int *lcnt, gs_int *ucnt, const fc_stats *stats)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i > n || stats->invalid) return;
    if (i == n) {
        lcnt[n] = ucnt[n] = 0;
        return;
    }
    gs_int p = ap[i], pe = ap[i + 1], d = p;
    while (d < pe && ac[d] < i) d++;
    lcnt[i] = d - p;
    ucnt[i] = (pe - d) + ((d < pe && ac[d] == i) ? 0 : 1);
}

/* Rows of L and U as counted above, from the scanned row pointers lp, up. */
static __global__ void fc_ilu0_fill_kernel(gs_int n, const gs_int *__restrict__ ap, const gs_int *__restrict__ ac,
                                           const gs_int *__restrict__ lp, const gs_int *__restrict__ up, gs_int *lc,
                                           gs_int *uc, const fc_stats *stats)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n || stats->invalid) return;
    gs_int p = ap[i], pe = ap[i + 1], ql = lp[i], qu = up[i];
    for (; p < pe && ac[p] < i; p++) lc[ql++] = ac[p];
    if (p == pe || ac[p] != i) uc[qu++] = i; /* the inserted diagonal */
    for (; p < pe; p++) uc[qu++] = ac[p];
}

/* ================================================================ kernel 4: the factorization */

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

/* Shared memory of one row group: the row (columns, w), per dependency k the start of its source row
 * and the prefix count of source entries, and the compacted pairs (source entry, step << 16 | target)
 * with their values. */
template <int G>
struct fc_smem {
    static constexpr int CAP = 4 * G;  /* longest row kept in shared memory */
    static constexpr int PCAP = 8 * G; /* pairs per batch */
    double w[CAP];
    double pv[PCAP];
    gs_int col[CAP];
    gs_int sb[CAP];
    gs_int off[CAP + 1];
    gs_int pq[PCAP];
    gs_int ptg[PCAP];
};

/* A row and where its work stands (the same in every lane of its group). */
struct fc_row {
    gs_int i, ab, ae, lb, le, ub, ue, m, nl; /* m entries in the pattern, nl of them dependencies */
    gs_int P, f1, nb, cursor;                /* source entries in all; end of the prepared ones; pairs */
    bool fast;                               /* the row lives in shared memory */
    double row_inf, aii, d, lcur, scur;
    bool have_s;
};

template <int G>
static __device__ __forceinline__ unsigned fc_ballot(bool pred, int gw, unsigned gmask)
{
    unsigned b = __ballot_sync(gmask, pred);
    return G == 32 ? b : (b >> (gw * G)) & ((1u << G) - 1u);
}

template <int G>
static __device__ __forceinline__ double fc_group_max(double v, unsigned gmask)
{
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(gmask, v, o, G));
    return v;
}

/* Position of key in a[lo, hi) (sorted), or -1. */
static __device__ __forceinline__ gs_int fc_find(const gs_int *a, gs_int lo, gs_int hi, gs_int key)
{
    gs_int l = lo, h = hi;
    while (l < h) {
        gs_int mid = l + ((h - l) >> 1);
        if (a[mid] < key) l = mid + 1;
        else h = mid;
    }
    return l < hi && a[l] == key ? l : -1;
}

/* The next batch of pairs from source entry f0 on: lanes take G source entries at a time (entry f of the
 * flattened list belongs to dependency p with off[p] <= f < off[p+1]) and keep those that touch row i:
 * the pivot of the source row, and entries whose column is in row i's pattern (ILU: right of position p;
 * IC(0): left of it), compacted in order. */
template <int MODE, int G>
static __device__ void fc_prepare(const fc_factor_args &F, fc_smem<G> &S, fc_row &R, gs_int f0, int gl, int gw,
                                  unsigned gmask)
{
    gs_int nb = 0, f = f0;
    while (f < R.P && nb + G <= fc_smem<G>::PCAP) {
        const gs_int ff = f + gl;
        bool keep = false;
        gs_int q = 0, packed = 0;
        if (ff < R.P) {
            gs_int lo = 0, hi = R.nl - 1; /* largest p with off[p] <= ff */
            while (lo < hi) {
                gs_int mid = (lo + hi + 1) >> 1;
                if (S.off[mid] <= ff) lo = mid;
                else hi = mid - 1;
            }
            const gs_int p = lo, k = S.col[p];
            q = S.sb[p] + (ff - S.off[p]);
            const gs_int c = MODE == FC_ILU ? __ldg(F.uc + q) : __ldg(F.lc + q);
            gs_int t = -1;
            if (c == k) t = FC_DIAG;
            else t = MODE == FC_ILU ? fc_find(S.col, p + 1, R.m, c) : fc_find(S.col, 0, p, c);
            if (t >= 0) {
                keep = true;
                packed = (p << 16) | t;
            }
        }
        const unsigned bits = fc_ballot<G>(keep, gw, gmask);
        if (keep) {
            const gs_int slot = nb + __popc(bits & ((1u << gl) - 1u));
            S.pq[slot] = q;
            S.ptg[slot] = packed;
        }
        nb += __popc(bits);
        f += G;
    }
    R.nb = nb;
    R.f1 = f < R.P ? f : R.P;
    __syncwarp(gmask);
}

/* Prologue of the row at position pos (no waiting): pattern, w = a_i, ||a_i||_inf, the non-finite check
 * of A's row, and the first batch of pairs (rows in shared memory). */
template <int MODE, int G>
static __device__ void fc_begin(const fc_factor_args &F, fc_smem<G> &S, fc_row &R, gs_int pos, int gl, int gw,
                                unsigned gmask)
{
    constexpr int CAP = fc_smem<G>::CAP;
    const gs_int i = __ldg(F.perm + pos);
    R.i = i;
    R.ab = __ldg(F.ap + i);
    R.ae = __ldg(F.ap + i + 1);
    R.lb = __ldg(F.lp + i);
    R.le = __ldg(F.lp + i + 1);
    if (MODE == FC_ILU) {
        R.ub = __ldg(F.up + i);
        R.ue = __ldg(F.up + i + 1);
        R.nl = R.le - R.lb;
        R.m = R.nl + (R.ue - R.ub);
    } else {
        R.ub = R.ue = 0;
        R.m = R.le - R.lb;
        R.nl = R.m - 1;
    }
    R.fast = R.m <= CAP;
    R.cursor = 0;
    R.P = R.f1 = R.nb = 0;
    R.lcur = R.scur = 0.0;
    R.have_s = false;

    /* ||a_i||_inf and the first non-finite entry of A's row */
    double amax = 0.0;
    unsigned long long bad = FC_NONE;
    for (gs_int p = R.ab + gl; p < R.ae; p += G) {
        double a = __ldg(F.av + p);
        if (!isfinite(a)) {
            unsigned long long k = fc_key(i, FC_KIND_A, p - R.ab);
            if (k < bad) bad = k;
        }
        amax = fmax(amax, fabs(a));
    }
    if (bad != FC_NONE) atomicMin(&F.stats->err_key, bad);
    R.row_inf = fc_group_max<G>(amax, gmask);
    /* IC(0): the strict lower entries of A come first in its row, then a_ii if A stores it */
    R.aii = 0.0;
    if (MODE == FC_IC0 && R.ab + R.nl < R.ae && __ldg(F.ac + R.ab + R.nl) == i) R.aii = __ldg(F.av + R.ab + R.nl);
    R.d = R.aii;

    if (!R.fast) {
        /* w in place in the output arrays */
        if (MODE == FC_ILU) {
            for (gs_int t = gl; t < R.nl; t += G) __stcg(F.lv + R.lb + t, 0.0);
            for (gs_int t = gl; t < R.ue - R.ub; t += G) __stcg(F.uv + R.ub + t, 0.0);
            __syncwarp(gmask);
            for (gs_int p = R.ab + gl; p < R.ae; p += G) {
                const gs_int c = __ldg(F.ac + p);
                gs_int t = c < i ? fc_find(F.lc, R.lb, R.le, c) : fc_find(F.uc, R.ub, R.ue, c);
                if (t >= 0) __stcg((c < i ? F.lv : F.uv) + t, __ldg(F.av + p));
            }
        } else {
            for (gs_int t = gl; t < R.nl; t += G) __stcg(F.lv + R.lb + t, __ldg(F.av + R.ab + t));
        }
        __syncwarp(gmask);
        return;
    }

    /* the row in shared memory: columns, w = a_i on the pattern (entries of A outside it dropped) */
    for (gs_int t = gl; t < R.m; t += G) {
        gs_int c;
        if (MODE == FC_ILU) c = t < R.nl ? __ldg(F.lc + R.lb + t) : __ldg(F.uc + R.ub + (t - R.nl));
        else c = __ldg(F.lc + R.lb + t);
        S.col[t] = c;
        S.w[t] = 0.0;
    }
    __syncwarp(gmask);
    if (MODE == FC_ILU) {
        for (gs_int p = R.ab + gl; p < R.ae; p += G) {
            gs_int t = fc_find(S.col, 0, R.m, __ldg(F.ac + p));
            if (t >= 0) S.w[t] = __ldg(F.av + p);
        }
    } else {
        for (gs_int t = gl; t < R.nl; t += G) S.w[t] = __ldg(F.av + R.ab + t);
    }

    /* the source row of every dependency k (ILU: row k of U, pivot first; IC(0): row k of L, pivot last)
     * and the exclusive prefix of their lengths */
    gs_int carry = 0;
    for (gs_int base = 0; base < R.nl; base += G) {
        const gs_int p = base + gl;
        gs_int cnt = 0;
        if (p < R.nl) {
            const gs_int k = S.col[p];
            const gs_int *sp = MODE == FC_ILU ? F.up : F.lp;
            const gs_int sbeg = __ldg(sp + k);
            S.sb[p] = sbeg;
            cnt = __ldg(sp + k + 1) - sbeg;
        }
        gs_int incl = cnt;
#pragma unroll
        for (int dlt = 1; dlt < G; dlt <<= 1) {
            gs_int u = __shfl_up_sync(gmask, incl, dlt, G);
            if (gl >= dlt) incl += u;
        }
        if (p < R.nl) S.off[p] = carry + incl - cnt;
        carry += __shfl_sync(gmask, incl, G - 1, G);
    }
    if (gl == 0) S.off[R.nl] = carry;
    R.P = carry;
    __syncwarp(gmask);
    fc_prepare<MODE, G>(F, S, R, 0, gl, gw, gmask);
}

/* Values of the prepared pairs, then their updates in order (all dependencies are final). */
template <int MODE, int G>
static __device__ void fc_run_fast(const fc_factor_args &F, fc_smem<G> &S, fc_row &R, int gl, int gw, unsigned gmask)
{
    const double *src = MODE == FC_ILU ? F.uv : F.lv;
    for (;;) {
        for (gs_int c = gl; c < R.nb; c += G) S.pv[c] = __ldcg(src + S.pq[c]);
        __syncwarp(gmask);
        if (MODE == FC_ILU) {
            /* per dependency p: l = w_p / u_kk (every lane), then w_t -= l u_kt for its pairs in parallel;
             * w_p = l is stored after the barrier (no later update touches position p) */
            gs_int c = 0;
            while (c < R.nb) {
                const gs_int p = S.ptg[c] >> 16;
                if ((S.ptg[c] & 0xFFFF) == FC_DIAG) {
                    R.lcur = __ddiv_rn(S.w[p], S.pv[c]);
                    c++;
                }
                gs_int ce = c;
                for (;;) {
                    const gs_int x = ce + gl;
                    const bool same = x < R.nb && (S.ptg[x] >> 16) == p;
                    const unsigned bits = fc_ballot<G>(same, gw, gmask);
                    const unsigned all = G == 32 ? FC_FULL : (1u << G) - 1u;
                    const int run = bits == all ? G : __ffs(~bits) - 1;
                    ce += run;
                    if (run < G) break;
                }
                if (R.lcur != 0.0) {
                    for (gs_int x = c + gl; x < ce; x += G) {
                        const gs_int t = S.ptg[x] & 0xFFFF;
                        S.w[t] = __dsub_rn(S.w[t], __dmul_rn(R.lcur, S.pv[x]));
                    }
                }
                c = ce;
                __syncwarp(gmask);
                if (gl == 0) S.w[p] = R.lcur;
            }
        } else if (gl == 0) {
            /* one lane, the host's order: s = a_ij - l_ik l_jk ..., l_ij = s / l_jj, d -= l_ij^2 */
            for (gs_int c = 0; c < R.nb; c++) {
                const gs_int p = S.ptg[c] >> 16, t = S.ptg[c] & 0xFFFF;
                if (!R.have_s) {
                    R.scur = S.w[p];
                    R.have_s = true;
                }
                if (t == FC_DIAG) {
                    const double l = __ddiv_rn(R.scur, S.pv[c]);
                    S.w[p] = l;
                    R.d = __dsub_rn(R.d, __dmul_rn(l, l));
                    R.have_s = false;
                } else {
                    R.scur = __dsub_rn(R.scur, __dmul_rn(S.w[t], S.pv[c]));
                }
            }
        }
        __syncwarp(gmask);
        if (R.f1 >= R.P) break;
        fc_prepare<MODE, G>(F, S, R, R.f1, gl, gw, gmask);
    }
}

/* A row longer than the shared buffer: w stays in the output arrays (L2, written only by this group),
 * one dependency at a time. */
template <int MODE, int G>
static __device__ void fc_run_slow(const fc_factor_args &F, fc_row &R, int gl, int gw, unsigned gmask)
{
    const gs_int i = R.i;
    for (gs_int p = 0; p < R.nl; p++) {
        const gs_int k = __ldg(F.lc + R.lb + p);
        if (MODE == FC_ILU) {
            const gs_int kb = __ldg(F.up + k), ke = __ldg(F.up + k + 1);
            const double l = __ddiv_rn(__ldcg(F.lv + R.lb + p), __ldcg(F.uv + kb));
            if (l != 0.0) {
                for (gs_int q = kb + 1 + gl; q < ke; q += G) {
                    const gs_int c = __ldg(F.uc + q);
                    double *dst = NULL;
                    if (c < i) {
                        gs_int t = fc_find(F.lc, R.lb + p + 1, R.le, c);
                        if (t >= 0) dst = F.lv + t;
                    } else {
                        gs_int t = fc_find(F.uc, R.ub, R.ue, c);
                        if (t >= 0) dst = F.uv + t;
                    }
                    if (dst) __stcg(dst, __dsub_rn(__ldcg(dst), __dmul_rn(l, __ldcg(F.uv + q))));
                }
            }
            __syncwarp(gmask);
            if (gl == 0) __stcg(F.lv + R.lb + p, l);
        } else {
            /* s = a_ij - sum l_ik l_jk over row j = k of L: products in parallel, summed in order */
            const gs_int jb = __ldg(F.lp + k), je = __ldg(F.lp + k + 1) - 1; /* je: l_jj */
            double s = __ldcg(F.lv + R.lb + p);
            for (gs_int q0 = jb; q0 < je; q0 += G) {
                const gs_int q = q0 + gl;
                double prod = 0.0;
                bool found = false;
                if (q < je) {
                    gs_int t = fc_find(F.lc, R.lb, R.lb + p, __ldg(F.lc + q));
                    if (t >= 0) {
                        prod = __dmul_rn(__ldcg(F.lv + t), __ldcg(F.lv + q));
                        found = true;
                    }
                }
                unsigned bits = fc_ballot<G>(found, gw, gmask);
                while (bits) {
                    const int b = __ffs(bits) - 1;
                    s = __dsub_rn(s, __shfl_sync(gmask, prod, b, G));
                    bits &= bits - 1u;
                }
            }
            const double l = __ddiv_rn(s, __ldcg(F.lv + je));
            R.d = __dsub_rn(R.d, __dmul_rn(l, l));
            __syncwarp(gmask);
            if (gl == 0) __stcg(F.lv + R.lb + p, l);
        }
        __syncwarp(gmask); /* the next dependency reads what this one wrote */
    }
}

/* Replace a pivot per the shift policy (*v = sign * shift * ||a_i||_inf, or shift for a zero row);
 * false when the policy is "error" or the shift cannot be used. */
static __device__ __forceinline__ bool fc_shift_pivot(const fc_factor_args &F, const fc_row &R, double *v, bool ic)
{
    if (!F.shift_policy) return false;
    double s = __dmul_rn(F.shift, R.row_inf);
    if (!(s >= DBL_MIN)) s = F.shift;
    if (!(s >= DBL_MIN) || !isfinite(s)) return false;
    *v = ic ? s : (*v < 0.0 ? -s : s);
    F.shifted[R.i] = 1;
    atomicAdd(&F.stats->nshifted, 1);
    return true;
}

/* The grow policy's bound min_pivot * s_i (s_i = ||a_i||_inf, 1 for a zero row; 0 for the other policies):
 * an ILU pivot fails below it (and below DBL_MIN), an IC(0) pivot d below it (and at d <= 0). */
static __device__ __forceinline__ double fc_pivot_bound(const fc_factor_args &F, const fc_row &R)
{
    return __dmul_rn(F.min_pivot, R.row_inf > 0.0 ? R.row_inf : 1.0);
}

/* Checks in the host's order, the pivot policy, the row's values stored, then its ready flag. A failing
 * row stores the offending value where the host message reads it (ILU: the unshifted u_ii; IC(0): d). */
template <int MODE, int G>
static __device__ void fc_finish(const fc_factor_args &F, fc_smem<G> &S, fc_row &R, int gl, unsigned gmask)
{
    const gs_int i = R.i;
    unsigned long long bad = FC_NONE;
    if (MODE == FC_ILU) {
        for (gs_int t = gl; t < R.m; t += G) {
            const bool lower = t < R.nl;
            double *dst = lower ? F.lv + R.lb + t : F.uv + R.ub + (t - R.nl);
            double v = R.fast ? S.w[t] : __ldcg(dst);
            if (!isfinite(v)) {
                unsigned long long k = fc_key(i, lower ? FC_KIND_L : FC_KIND_U, lower ? t : t - R.nl);
                if (k < bad) bad = k;
            } else if (t == R.nl && (fabs(v) < DBL_MIN || fabs(v) < fc_pivot_bound(F, R))) {
                if (!fc_shift_pivot(F, R, &v, false)) {
                    unsigned long long k = fc_key(i, FC_KIND_PIVOT, 0);
                    if (k < bad) bad = k;
                }
            }
            if (R.fast || t == R.nl) __stcg(dst, v);
        }
    } else {
        for (gs_int t = gl; t < R.nl; t += G) {
            double v = R.fast ? S.w[t] : __ldcg(F.lv + R.lb + t);
            if (!isfinite(v)) {
                unsigned long long k = fc_key(i, FC_KIND_L, t);
                if (k < bad) bad = k;
            }
            if (R.fast) __stcg(F.lv + R.lb + t, v);
        }
        if (gl == 0) {
            double d = R.d, out;
            if (!isfinite(d)) {
                unsigned long long k = fc_key(i, FC_KIND_U, 0);
                if (k < bad) bad = k;
                out = d;
            } else if (d <= 0.0 || d < fc_pivot_bound(F, R)) {
                if (fc_shift_pivot(F, R, &d, true)) {
                    out = __dsqrt_rn(d);
                } else {
                    unsigned long long k = fc_key(i, FC_KIND_PIVOT, 0);
                    if (k < bad) bad = k;
                    out = d;
                }
            } else {
                out = __dsqrt_rn(d);
            }
            __stcg(F.lv + R.le - 1, out);
        }
    }
    if (bad != FC_NONE) atomicMin(&F.stats->err_key, bad);
    __threadfence(); /* this lane's stores are visible device-wide before the flag */
    __syncwarp(gmask);
    if (gl == 0) gs_gpu_st_release(F.flag + i, 1);
}

enum { FC_WAIT = 0, FC_RUN = 1, FC_DONE = 2 };

/* A warp's ticket: 32 / G consecutive positions of the level order, one per group, advanced in rounds
 * that never block: waiting groups poll, ready groups run to the end. */
template <int MODE, int G>
static __device__ void fc_chunk(const fc_factor_args &F, fc_smem<G> &S, gs_int pos, int gl, int gw, unsigned gmask)
{
    fc_row R;
    int state = FC_DONE;
    if (pos < F.n) {
        fc_begin<MODE, G>(F, S, R, pos, gl, gw, gmask);
        state = R.nl > 0 ? FC_WAIT : FC_RUN;
    }
    for (;;) {
        if (state == FC_WAIT) {
            const gs_int p = R.cursor + gl;
            bool ready = true;
            if (p < R.nl) ready = gs_gpu_ld_acquire(F.flag + __ldg(F.lc + R.lb + p)) != 0;
            const unsigned waiting = fc_ballot<G>(!ready, gw, gmask);
            if (waiting == 0) {
                R.cursor += G;
                if (R.cursor >= R.nl) state = FC_RUN;
            } else {
                R.cursor += __ffs(waiting) - 1;
            }
        }
        if (state == FC_RUN) {
            __syncwarp(gmask); /* the lanes' acquire loads come before every lane's reads of those rows */
            if (R.fast) fc_run_fast<MODE, G>(F, S, R, gl, gw, gmask);
            else fc_run_slow<MODE, G>(F, R, gl, gw, gmask);
            fc_finish<MODE, G>(F, S, R, gl, gmask);
            state = FC_DONE;
        }
        if (__all_sync(FC_FULL, state == FC_DONE)) break;
    }
}

/* Persistent warps take tickets (32 / G rows of the level order each) until past the last; the next
 * ticket is requested while the current one is worked on. */
template <int MODE, int G>
static __global__ void __launch_bounds__(FC_BLOCK) fc_factor_kernel(fc_factor_args F)
{
    __shared__ fc_smem<G> smem[FC_BLOCK / G];
    if (F.stats->invalid) return; /* uniform over the grid */
    const unsigned lane = threadIdx.x & 31u;
    const int gl = (int)(lane % G), gw = (int)(lane / G);
    const unsigned gmask = G == 32 ? FC_FULL : ((1u << G) - 1u) << (gw * G);
    fc_smem<G> &S = smem[threadIdx.x / G];
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(&F.stats->f_ticket, 1ULL);
    t = __shfl_sync(FC_FULL, t, 0);
    while (t < F.nchunks) {
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(&F.stats->f_ticket, 1ULL);
        fc_chunk<MODE, G>(F, S, (gs_int)(t * (unsigned long long)(32 / G)) + gw, gl, gw, gmask);
        t = __shfl_sync(FC_FULL, next, 0);
    }
}

typedef void (*fc_kernel_fn)(fc_factor_args);

static fc_kernel_fn fc_pick(int mode, int g)
{
    if (mode == FC_ILU) return g == 8 ? fc_factor_kernel<FC_ILU, 8> : fc_factor_kernel<FC_ILU, 32>;
    return g == 8 ? fc_factor_kernel<FC_IC0, 8> : fc_factor_kernel<FC_IC0, 32>;
}

/* ================================================================ host side */

static const gs_factor_opts fc_default_opts = {GS_ZERO_PIVOT_ERROR, 0.0, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

bool gs_factor_cuda_available(void) { return true; }


/* 0-based row number of local row i as reported in messages and info (precond/factor.h). */
static gs_int fc_reported(const gs_factor_opts *o, gs_int i)
{
    return (o->row_names ? o->row_names[i] : i) + o->row_offset;
}

static void fc_info_init(gs_factor_info *info)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    info->first_shifted = -1;
    for (int k = 0; k < 16; k++) info->shifted_rows[k] = -1;
}

/* MILU has no GPU factorization (the caller factors on the host instead). */
static gs_status fc_check_opts(const gs_factor_opts *o, const char *who)
{
    if (o->milu)
        return GS_ERROR(GS_ERR_UNSUPPORTED,
                        "%s on the GPU: MILU (preconditioner.milu) is computed on the host only; set "
                        "preconditioner.factor_on = \"host\"",
                        who);
    return GS_OK;
}

static gs_status fc_check_backend(gs_backend *be, const char *who)
{
    if (!be || be->kind != GS_BACKEND_CUDA || !gs_backend_cuda_stream(be))
        return GS_ERROR(GS_ERR_ARG, "%s on the GPU needs the cuda backend, got the %s backend", who,
                        be && be->name ? be->name : "(none)");
    return GS_OK;
}

/* A square, arrays present, row pointers spanning [0, nnz] (rows themselves: on the device). */
static gs_status fc_check_matrix(const gs_csr *A, const char *who)
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
static gs_status fc_check_dev_copy(const gs_csr *A, const gs_csr_dev *A_dev, const char *who)
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

/* Messages of the device checks, the host's wording: row pointers, A's rows, then the patterns. */
static gs_status fc_input_error(const fc_stats *s, const gs_csr *A, const char *who)
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

static gs_status fc_download(cudaStream_t s, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return GS_OK;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    return GS_OK;
}

/* The message of the first failing row r (key from the kernel), the host's wording; values the message
 * shows are read back from where the failing row stored them. ILU: lv_row/uv_row = the device values of
 * row r (L and U parts); IC(0): lv_row = row r of L on the device. */
static gs_status fc_factor_error(cudaStream_t s, unsigned long long key, const gs_csr *A, const gs_factor_opts *o,
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
        GS_CALL(fc_download(s, &v, lv_row + pos, sizeof v));
        return fc_nonfinite_error(o, r, L_colind_row[pos], v, ic ? "incomplete Cholesky factor" : "L factor");
    }
    if (ic) {
        /* the row stored d = a_ii - sum_k l_ik^2 in its diagonal slot */
        gs_int nd = 0;
        for (gs_int p = A->rowptr[r]; p < A->rowptr[r + 1] && A->colind[p] < r; p++) nd++;
        GS_CALL(fc_download(s, &v, lv_row + nd, sizeof v));
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
    GS_CALL(fc_download(s, &v, uv_row + (kind == FC_KIND_U ? pos : 0), sizeof v));
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
static gs_status fc_collect_shifts(cudaStream_t s, const unsigned char *d_shifted, gs_int n, gs_int limit,
                                   const gs_factor_opts *o, gs_factor_info *info)
{
    gs_status st = GS_OK;
    unsigned char *h = NULL;
    if (!info || limit <= 0) return GS_OK;
    GS_TRY(GS_MALLOC(h, n));
    GS_TRY(fc_download(s, h, d_shifted, (size_t)limit));
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
static int fc_lanes(double mean_len) { return mean_len <= 16.0 ? 8 : 32; }

/* Bits of the largest key n - 1 (the sorts need no more passes than that). */
static int fc_key_bits(gs_int n)
{
    int b = 1;
    while (b < 31 && ((gs_int)1 << b) < n) b++;
    return b;
}

/* Levels of the rows of (ptr, col) into level, rows sorted by level into perm (stable: rows of a level in
 * increasing order); scratch: keys (n), cub workspace of cub_bytes. */
static gs_status fc_level_order(cudaStream_t s, gs_int n, const gs_int *ptr, const gs_int *col, int skip_last,
                                gs_int *level, gs_int *idx, gs_int *keys, gs_int *perm, void *cub, size_t cub_bytes,
                                fc_stats *stats)
{
    GS_CALL(GS_CUDA(cudaMemsetAsync(level, 0xFF, (size_t)n * sizeof(gs_int), s)));
    fc_level_args la;
    la.n = n;
    la.skip_last = skip_last;
    la.ptr = ptr;
    la.col = col;
    la.level = level;
    la.idx = idx;
    la.stats = stats;
    unsigned blocks = (unsigned)(((size_t)n + FC_LV_THREADS - 1) / FC_LV_THREADS);
    /* level(i) = 1 + max level of the rows i depends on */
    fc_level_kernel<<<blocks, FC_LV_THREADS, 0, s>>>(la);
    GS_CALL(GS_CUDA_LAUNCHED("fc_level_kernel"));
    /* perm = rows sorted by (level, row) */
    size_t bytes = cub_bytes;
    GS_CALL(GS_CUDA(cub::DeviceRadixSort::SortPairs(cub, bytes, (const unsigned *)level, (unsigned *)keys,
                                                    (const gs_int *)idx, perm, (int)n, 0, fc_key_bits(n), s)));
    return GS_OK;
}

/* cub workspace of a sort of count pairs on the given key bits (0: cub could not size it). */
static size_t fc_sort_bytes(gs_int count, int bits)
{
    size_t b = 0;
    if (cub::DeviceRadixSort::SortPairs(NULL, b, (const unsigned *)NULL, (unsigned *)NULL, (const gs_int *)NULL,
                                        (gs_int *)NULL, (int)count, 0, bits, (cudaStream_t)0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return b;
}

/* The factorization kernel as a persistent grid: as many blocks as fit at once (at most one warp per
 * ticket). */
static gs_status fc_launch_factor(cudaStream_t s, int mode, int g, const fc_factor_args &F)
{
    int dev = 0, sms = 0, per_sm = 0;
    fc_kernel_fn k = fc_pick(mode, g);
    GS_CALL(GS_CUDA(cudaGetDevice(&dev)));
    GS_CALL(GS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)));
    GS_CALL(GS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, FC_BLOCK, 0)));
    if (per_sm < 1) per_sm = 1;
    unsigned long long need = (F.nchunks + FC_BLOCK / 32 - 1) / (FC_BLOCK / 32);
    unsigned long long blocks = (unsigned long long)sms * (unsigned long long)per_sm;
    if (blocks > need) blocks = need;
    if (blocks < 1) blocks = 1;
    /* every row: IKJ ILU or row-wise IC(0) once the rows of its L pattern are final */
    k<<<(unsigned)blocks, FC_BLOCK, 0, s>>>(F);
    GS_CALL(gs_cuda_check(cudaGetLastError(), mode == FC_ILU ? "launch of kernel fc_factor_kernel<ILU>"
                                                              : "launch of kernel fc_factor_kernel<IC0>",
                           __FILE__, __LINE__));
    return GS_OK;
}

static void fc_stats_init(fc_stats *h)
{
    memset(h, 0, sizeof *h);
    h->err_key = h->bad_a = h->bad_ptr = h->bad_pat = FC_NONE;
}

/* ---------------------------------------------------------------- ILU */

void gs_factor_dev_free(gs_factor_dev *f)
{
    if (!f) return;
    if (f->be && (f->arena[0] || f->arena[1]) && cudaStreamSynchronize((cudaStream_t)gs_backend_cuda_stream(f->be)) != cudaSuccess)
        (void)cudaGetLastError();
    for (int k = 0; k < 2; k++)
        if (f->arena[k]) gs_backend_free(f->be, f->arena[k]);
    memset(f, 0, sizeof *f);
}

/* The device CSR view of arrays inside a factorization's arena. */
static gs_csr_dev fc_view(gs_int n, gs_int nnz, const gs_int *rowptr, const gs_int *colind, const double *val)
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
static void fc_publish(gs_csr *F1, gs_csr *F2, gs_csr *L, gs_csr *U, gs_factor_info *info)
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
static gs_status fc_hand_over(gs_backend *be, cudaStream_t s, gs_csr_dev l, gs_csr_dev u, void **arenas, int narenas,
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
        if (nz) GS_CALL(GS_CUDA(cudaMemcpyAsync(dst[f]->colind, src[f]->colind, nz * sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
        if (nz) GS_CALL(GS_CUDA(cudaMemcpyAsync(dst[f]->val, src[f]->val, nz * sizeof(double), cudaMemcpyDeviceToHost, s)));
    }
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    return GS_OK;
}

/* Device arrays of one ILU factorization (pieces of one arena). */
struct fc_ilu_dev {
    const gs_int *ap, *ac; /* A: only read (an upload of ours, or the caller's device copy) */
    const double *av;
    gs_int *lp, *lc, *up, *uc, *level, *idx, *keys, *perm;
    double *lv, *uv;
    int *flag;
    unsigned char *shifted;
    fc_stats *stats;
    void *cub;
    size_t cub_bytes; /* at least the level sort's */
};

/* The ILU work once A and the patterns are on the device and their check kernel is queued: levels of L,
 * the level order, the factorization; hs = the kernels' statistics (the stream synchronized). */
static gs_status fc_ilu_factor(cudaStream_t s, gs_int n, const fc_ilu_dev &D, const gs_factor_opts *o, int lanes,
                               fc_stats *hs)
{
    const size_t nn = (size_t)n;
    GS_CALL(GS_CUDA(cudaMemsetAsync(D.flag, 0, nn * sizeof(int), s)));
    GS_CALL(GS_CUDA(cudaMemsetAsync(D.shifted, 0, nn, s)));
    GS_CALL(fc_level_order(s, n, D.lp, D.lc, 0, D.level, D.idx, D.keys, D.perm, D.cub, D.cub_bytes, D.stats));
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
    GS_CALL(fc_launch_factor(s, FC_ILU, lanes, F));
    GS_CALL(fc_download(s, hs, D.stats, sizeof *hs));
    return GS_OK;
}

gs_status gs_ilu_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U,
                              gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    void *arena = NULL;
    double *lval_new = NULL, *uval_new = NULL;
    fc_stats hs;
    gs_factor_cuda_times tm;
    gs_stage S;
    const char *who = "ILU numeric factorization";
    double t0;

    memset(&tm, 0, sizeof tm);
    memset(&S, 0, sizeof S);
    fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &fc_default_opts;
    GS_CALL(fc_check_backend(be, who));
    GS_CALL(fc_check_opts(o, who));
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilu_numeric_cuda: L or U is NULL");
    GS_CALL(fc_check_matrix(A, who));
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

    gs_factor_dev_free(keep);
    if (!L->val && !keep) GS_TRY(GS_MALLOC(lval_new, L->nnz));
    if (!U->val && !keep) GS_TRY(GS_MALLOC(uval_new, U->nnz));
    tm.lanes_per_row = fc_lanes(n > 0 ? ((double)L->nnz + (double)U->nnz) / n : 0.0);
    if (n > 0) {
        cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
        const size_t nn = (size_t)n, na = (size_t)A->nnz, nl = (size_t)L->nnz, nu = (size_t)U->nnz;
        const size_t sort_bytes = fc_sort_bytes(n, fc_key_bits(n));
        if (sort_bytes == 0)
            GS_FAIL(GS_ERR_CUDA, "ILU on the GPU: cub could not size the level sort for n = %d", (int)n);

        /* one device allocation for everything */
        gs_carver c = {NULL, 0};
        fc_ilu_dev D;
        gs_int *d_ap = NULL, *d_ac = NULL;
        double *d_av = NULL;
        memset(&D, 0, sizeof D);
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
            D.level = c.take<gs_int>(nn);
            D.idx = c.take<gs_int>(nn);
            D.keys = c.take<gs_int>(nn);
            D.perm = c.take<gs_int>(nn);
            D.flag = c.take<int>(nn);
            D.shifted = c.take<unsigned char>(nn);
            D.cub = c.take<char>(sort_bytes);
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
        tm.upload = gs_wtime() - t0;

        /* device work */
        t0 = gs_wtime();
        fc_stats_init(&hs);
        GS_TRY(GS_CUDA(cudaMemcpyAsync(D.stats, &hs, sizeof hs, cudaMemcpyHostToDevice, s)));
        fc_check_args ca;
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
        /* the first malformed row of A and of the patterns */
        fc_check_kernel<<<(unsigned)((nn + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS), FC_CHECK_THREADS, 0, s>>>(ca);
        GS_TRY(GS_CUDA_LAUNCHED("fc_check_kernel"));
        GS_TRY(fc_ilu_factor(s, n, D, o, tm.lanes_per_row, &hs));
        tm.kernel = gs_wtime() - t0;
        tm.levels = hs.invalid ? 0 : hs.max_level + 1;

        if (hs.invalid) GS_TRY(fc_input_error(&hs, A, who));
        t0 = gs_wtime();
        if (hs.err_key != FC_NONE) {
            gs_int r = (gs_int)(hs.err_key >> 32);
            if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, r, o, info));
            GS_TRY(fc_factor_error(s, hs.err_key, A, o, false, L->colind + L->rowptr[r], D.lv + L->rowptr[r],
                                   U->colind + U->rowptr[r], D.uv + U->rowptr[r]));
        }
        if (keep) { /* the factors stay where they are */
            keep->be = be;
            keep->arena[0] = arena;
            arena = NULL;
            keep->L = fc_view(n, L->nnz, D.lp, D.lc, D.lv);
            keep->U = fc_view(n, U->nnz, D.up, D.uc, D.uv);
        } else {
            double *lv = L->val ? L->val : lval_new, *uv = U->val ? U->val : uval_new;
            GS_TRY(GS_CUDA(cudaMemcpyAsync(lv, D.lv, nl * sizeof(double), cudaMemcpyDeviceToHost, s)));
            GS_TRY(GS_CUDA(cudaMemcpyAsync(uv, D.uv, nu * sizeof(double), cudaMemcpyDeviceToHost, s)));
            GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
        }
        if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, n, o, info));
        tm.download = gs_wtime() - t0;
    }

    if (lval_new) L->val = lval_new;
    if (uval_new) U->val = uval_new;
    lval_new = uval_new = NULL;
    if (info) {
        info->nnz_L = L->nnz;
        info->nnz_U = U->nnz;
    }
    if (t) *t = tm;

cleanup:
    {
        gs_status se = gs_stage_end(&S); /* after a failed copy: no DMA out of the buffer is left */
        if (st == GS_OK) st = se;
    }
    if (arena) gs_backend_free(be, arena);
    gs_free(&lval_new);
    gs_free(&uval_new);
    return st;
}

/* ---------------------------------------------------------------- ILU(0), pattern built on the device */

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

gs_status gs_ilu0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                               gs_csr *L, gs_csr *U, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    void *arena = NULL;
    gs_int *lrow = NULL, *urow = NULL;
    gs_csr FL, FU;
    fc_stats hs;
    gs_factor_cuda_times tm;
    /* the host runs gs_iluk_symbolic(A, 0) first: A's checks carry its name */
    const char *who = "ILU numeric factorization", *who_sym = "ILU(k) symbolic factorization";
    double t0;

    memset(&tm, 0, sizeof tm);
    memset(&FL, 0, sizeof FL);
    memset(&FU, 0, sizeof FU);
    fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &fc_default_opts;
    if (!L || !U) return GS_ERROR(GS_ERR_ARG, "gs_ilu0_numeric_cuda: output L or U is NULL");
    memset(L, 0, sizeof *L);
    memset(U, 0, sizeof *U);
    GS_CALL(fc_check_backend(be, who));
    GS_CALL(fc_check_opts(o, who));
    gs_factor_dev_free(keep);
    GS_CALL(fc_check_matrix(A, who_sym));
    const gs_int n = A->nrows;
    if ((int64_t)A->nnz + n > (int64_t)GS_INT_MAX) { /* U might not fit 32-bit indices: count it here */
        GS_CALL(gs_factor_check_input(A, who_sym));
        GS_CALL(fc_ilu0_check_size(A));
    }
    if (A->nnz > 0 && !A->val) {
        GS_CALL(gs_factor_check_input(A, who_sym));
        return GS_ERROR(GS_ERR_ARG, "ILU numeric factorization: the matrix has no values");
    }
    GS_CALL(fc_check_dev_copy(A, A_dev, "ILU(0)"));
    if (n == 0) {
        GS_TRY(gs_csr_alloc(&FL, 0, 0, 0, true));
        GS_TRY(gs_csr_alloc(&FU, 0, 0, 0, true));
    } else {
        cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
        const size_t nn = (size_t)n, na = (size_t)A->nnz;
        const size_t cap = na + nn + 64; /* L and U together: nnz(A) + the inserted diagonals (+ alignment) */
        size_t scan_bytes = 0;
        if (cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            GS_FAIL(GS_ERR_CUDA, "ILU(0) on the GPU: cub could not size the row-pointer scan for n = %d", (int)n);
        }
        const size_t sort_bytes = fc_sort_bytes(n, fc_key_bits(n));
        if (sort_bytes == 0)
            GS_FAIL(GS_ERR_CUDA, "ILU on the GPU: cub could not size the level sort for n = %d", (int)n);

        /* one device allocation: A, L and U (their entries within `cap`), the work arrays */
        gs_carver c = {NULL, 0};
        fc_ilu_dev D;
        gs_int *lcnt = NULL, *ucnt = NULL, *cols = NULL, *d_ap = NULL, *d_ac = NULL;
        double *vals = NULL, *d_av = NULL;
        /* A's room in the arena only when it is uploaded here */
        const size_t own_n1 = A_dev ? 0 : nn + 1, own_na = A_dev ? 0 : na;
        memset(&D, 0, sizeof D);
        D.cub_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
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
            D.level = c.take<gs_int>(nn);
            D.idx = c.take<gs_int>(nn);
            D.keys = c.take<gs_int>(nn);
            D.perm = c.take<gs_int>(nn);
            D.flag = c.take<int>(nn);
            D.shifted = c.take<unsigned char>(nn);
            D.cub = c.take<char>(D.cub_bytes);
            if (pass == 0) {
                GS_TRY(gs_backend_alloc(be, &arena, c.off));
                c.base = (char *)arena;
            }
        }

        /* A on the device: the caller's copy (written on this stream, only read here), or an upload of A
         * only, through the pinned staging buffer (released before the kernels) */
        {
            gs_csr_dev Ad;
            GS_TRY(fc_device_A(A, A_dev, d_ap, d_ac, d_av, s, &Ad, &tm.upload));
            D.ap = Ad.rowptr;
            D.ac = Ad.colind;
            D.av = Ad.val;
        }

        /* checks of A, then the row lengths of L and U and their prefix sums (the row pointers) */
        t0 = gs_wtime();
        fc_stats_init(&hs);
        GS_TRY(GS_CUDA(cudaMemcpyAsync(D.stats, &hs, sizeof hs, cudaMemcpyHostToDevice, s)));
        fc_check_args ca;
        memset(&ca, 0, sizeof ca);
        ca.n = n;
        ca.nnz_a = A->nnz;
        ca.ap = D.ap;
        ca.ac = D.ac;
        ca.stats = D.stats;
        const unsigned rblocks = (unsigned)((nn + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS);
        fc_check_kernel<<<rblocks, FC_CHECK_THREADS, 0, s>>>(ca);
        GS_TRY(GS_CUDA_LAUNCHED("fc_check_kernel"));
        fc_ilu0_count_kernel<<<(unsigned)((nn + 1 + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS), FC_CHECK_THREADS, 0,
                               s>>>(n, D.ap, D.ac, lcnt, ucnt, D.stats);
        GS_TRY(GS_CUDA_LAUNCHED("fc_ilu0_count_kernel"));
        size_t bytes = D.cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(D.cub, bytes, (const gs_int *)lcnt, D.lp, (int)n + 1, s)));
        bytes = D.cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(D.cub, bytes, (const gs_int *)ucnt, D.up, (int)n + 1, s)));
        gs_int sizes[2] = {0, 0};
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&sizes[0], D.lp + nn, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
        GS_TRY(GS_CUDA(cudaMemcpyAsync(&sizes[1], D.up + nn, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
        GS_TRY(fc_download(s, &hs, D.stats, sizeof hs));
        if (hs.invalid) {
            tm.kernel = gs_wtime() - t0;
            GS_TRY(fc_input_error(&hs, A, who_sym));
        }
        const gs_int nnz_l = sizes[0], nnz_u = sizes[1];
        if (nnz_l < 0 || nnz_u < n || fc_round_up((size_t)nnz_l, 64) + (size_t)nnz_u > cap)
            GS_FAIL(GS_ERR_INTERNAL, "ILU(0) on the GPU: the pattern counts %d + %d do not fit nnz(A) = %d, n = %d",
                    (int)nnz_l, (int)nnz_u, (int)A->nnz, (int)n);
        D.lc = cols;
        D.uc = cols + fc_round_up((size_t)nnz_l, 64);
        D.lv = vals;
        D.uv = vals + fc_round_up((size_t)nnz_l, 32);
        tm.lanes_per_row = fc_lanes(((double)nnz_l + (double)nnz_u) / n);

        /* the patterns, then the factorization on them */
        fc_ilu0_fill_kernel<<<rblocks, FC_CHECK_THREADS, 0, s>>>(n, D.ap, D.ac, D.lp, D.up, D.lc, D.uc, D.stats);
        GS_TRY(GS_CUDA_LAUNCHED("fc_ilu0_fill_kernel"));
        GS_TRY(fc_ilu_factor(s, n, D, o, tm.lanes_per_row, &hs));
        tm.kernel = gs_wtime() - t0;
        tm.levels = hs.max_level + 1;

        t0 = gs_wtime();
        if (hs.err_key != FC_NONE) {
            gs_int r = (gs_int)(hs.err_key >> 32), off[2] = {0, 0};
            if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, r, o, info));
            GS_TRY(fc_ilu0_row_pattern(A, r, &lrow, &urow));
            GS_TRY(fc_download(s, &off[0], D.lp + r, sizeof(gs_int)));
            GS_TRY(fc_download(s, &off[1], D.up + r, sizeof(gs_int)));
            GS_TRY(fc_factor_error(s, hs.err_key, A, o, false, lrow, D.lv + off[0], urow, D.uv + off[1]));
        }
        GS_TRY(fc_hand_over(be, s, fc_view(n, nnz_l, D.lp, D.lc, D.lv), fc_view(n, nnz_u, D.up, D.uc, D.uv), &arena, 1,
                            keep, &FL, &FU));
        if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, n, o, info));
        tm.download = gs_wtime() - t0;
    }

    fc_publish(&FL, &FU, L, U, info);
    if (t) *t = tm;

cleanup:
    if (arena) gs_backend_free(be, arena);
    gs_free(&lrow);
    gs_free(&urow);
    gs_csr_free(&FL);
    gs_csr_free(&FU);
    return st;
}

/* ---------------------------------------------------------------- IC(0) */

gs_status gs_ic0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                              gs_csr *L, gs_csr *LT, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep)
{
    gs_status st = GS_OK;
    void *arena = NULL, *arena2 = NULL;
    gs_csr F1, F2;
    fc_stats hs;
    gs_factor_cuda_times tm;
    const char *who = "IC(0) factorization";
    double t0;
    gs_int nnz_l = 0;

    memset(&tm, 0, sizeof tm);
    memset(&F1, 0, sizeof F1);
    memset(&F2, 0, sizeof F2);
    fc_info_init(info);
    if (t) memset(t, 0, sizeof *t);
    if (!o) o = &fc_default_opts;
    GS_CALL(fc_check_backend(be, who));
    GS_CALL(fc_check_opts(o, who));
    if (!L || !LT) return GS_ERROR(GS_ERR_ARG, "gs_ic0_numeric_cuda: output L or LT is NULL");
    memset(L, 0, sizeof *L);
    memset(LT, 0, sizeof *LT);
    gs_factor_dev_free(keep);
    GS_CALL(fc_check_matrix(A, who));
    if (A->nnz > 0 && !A->val) {
        GS_CALL(gs_factor_check_input(A, who));
        return GS_ERROR(GS_ERR_ARG, "IC(0) factorization: the matrix has no values");
    }
    const gs_int n = A->nrows;
    if ((int64_t)A->nnz + n > (int64_t)GS_INT_MAX)
        return GS_ERROR(GS_ERR_MEM, "IC(0): the factor may have more than %d nonzeros", (int)GS_INT_MAX);
    GS_CALL(fc_check_dev_copy(A, A_dev, "IC(0)"));
    if (n == 0) {
        GS_TRY(gs_csr_alloc(&F1, 0, 0, 0, true));
        GS_TRY(gs_csr_alloc(&F2, 0, 0, 0, true));
    } else {
        cudaStream_t s = (cudaStream_t)gs_backend_cuda_stream(be);
        const size_t nn = (size_t)n, na = (size_t)A->nnz;
        size_t scan_bytes = 0;
        if (cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s) !=
            cudaSuccess) {
            (void)cudaGetLastError();
            GS_FAIL(GS_ERR_CUDA, "IC(0) on the GPU: cub could not size the row-pointer scan for n = %d", (int)n);
        }
        gs_carver c = {NULL, 0};
        fc_stats *d_stats = NULL;
        gs_int *up_ap = NULL, *up_ac = NULL, *d_cnt = NULL, *d_lp = NULL;
        double *up_av = NULL;
        void *d_scan = NULL;
        /* A's room in the arena only when it is uploaded here */
        const size_t own_n1 = A_dev ? 0 : nn + 1, own_na = A_dev ? 0 : na;
        for (int pass = 0; pass < 2; pass++) {
            c.off = 0;
            d_stats = c.take<fc_stats>(1);
            up_ap = c.take<gs_int>(own_n1);
            up_ac = c.take<gs_int>(own_na);
            up_av = c.take<double>(own_na);
            d_cnt = c.take<gs_int>(nn + 1);
            d_lp = c.take<gs_int>(nn + 1);
            d_scan = c.take<char>(scan_bytes);
            if (pass == 0) {
                GS_TRY(gs_backend_alloc(be, &arena, c.off));
                c.base = (char *)arena;
            }
        }

        /* A on the device: the caller's copy, or an upload (released before the kernels) */
        gs_csr_dev Ad;
        GS_TRY(fc_device_A(A, A_dev, up_ap, up_ac, up_av, s, &Ad, &tm.upload));
        const gs_int *d_ap = Ad.rowptr, *d_ac = Ad.colind;
        const double *d_av = Ad.val;

        /* checks of A, then L's row pointers: (entries left of the diagonal + 1) summed */
        t0 = gs_wtime();
        fc_stats_init(&hs);
        GS_TRY(GS_CUDA(cudaMemcpyAsync(d_stats, &hs, sizeof hs, cudaMemcpyHostToDevice, s)));
        fc_check_args ca;
        memset(&ca, 0, sizeof ca);
        ca.n = n;
        ca.nnz_a = A->nnz;
        ca.ap = d_ap;
        ca.ac = d_ac;
        ca.stats = d_stats;
        const unsigned rblocks = (unsigned)((nn + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS);
        fc_check_kernel<<<rblocks, FC_CHECK_THREADS, 0, s>>>(ca);
        GS_TRY(GS_CUDA_LAUNCHED("fc_check_kernel"));
        fc_ic_count_kernel<<<(unsigned)((nn + 1 + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS), FC_CHECK_THREADS, 0, s>>>(
            n, d_ap, d_ac, d_cnt, d_stats);
        GS_TRY(GS_CUDA_LAUNCHED("fc_ic_count_kernel"));
        GS_TRY(GS_CUDA(cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, (const gs_int *)d_cnt, d_lp, (int)n + 1, s)));
        GS_TRY(fc_download(s, &hs, d_stats, sizeof hs));
        if (hs.invalid) {
            tm.kernel = gs_wtime() - t0;
            GS_TRY(fc_input_error(&hs, A, who));
        }
        GS_TRY(fc_download(s, &nnz_l, d_lp + nn, sizeof nnz_l));
        const size_t nl = (size_t)nnz_l;
        const size_t sort_rows = fc_sort_bytes(n, fc_key_bits(n)), sort_ent = fc_sort_bytes(nnz_l, fc_key_bits(n));
        if (!sort_rows || !sort_ent)
            GS_FAIL(GS_ERR_CUDA, "IC(0) on the GPU: cub could not size the sorts (n = %d)", (int)n);
        const size_t cub_bytes = sort_rows > sort_ent ? sort_rows : sort_ent;
        tm.lanes_per_row = fc_lanes((double)nnz_l / n);

        struct {
            gs_int *lc, *row, *eidx, *tcol, *tidx, *tp, *tc, *level, *idx, *keys, *perm;
            double *lv, *tv;
            int *flag;
            unsigned char *shifted;
            void *cub;
        } D;
        for (int pass = 0; pass < 2; pass++) {
            c.base = pass ? (char *)arena2 : NULL;
            c.off = 0;
            D.lc = c.take<gs_int>(nl);
            D.lv = c.take<double>(nl);
            D.row = c.take<gs_int>(nl);
            D.eidx = c.take<gs_int>(nl);
            D.tcol = c.take<gs_int>(nl);
            D.tidx = c.take<gs_int>(nl);
            D.tp = c.take<gs_int>(nn + 1);
            D.tc = c.take<gs_int>(nl);
            D.tv = c.take<double>(nl);
            D.level = c.take<gs_int>(nn);
            D.idx = c.take<gs_int>(nn);
            D.keys = c.take<gs_int>(nn);
            D.perm = c.take<gs_int>(nn);
            D.flag = c.take<int>(nn);
            D.shifted = c.take<unsigned char>(nn);
            D.cub = c.take<char>(cub_bytes);
            if (pass == 0) GS_TRY(gs_backend_alloc(be, &arena2, c.off));
        }
        GS_TRY(GS_CUDA(cudaMemsetAsync(D.flag, 0, nn * sizeof(int), s)));
        GS_TRY(GS_CUDA(cudaMemsetAsync(D.shifted, 0, nn, s)));
        /* L's pattern: the strict lower triangle of A, then the diagonal */
        fc_ic_fill_kernel<<<rblocks, FC_CHECK_THREADS, 0, s>>>(n, d_ap, d_ac, d_lp, D.lc, D.row, D.eidx, d_stats);
        GS_TRY(GS_CUDA_LAUNCHED("fc_ic_fill_kernel"));
        GS_TRY(fc_level_order(s, n, d_lp, D.lc, 1, D.level, D.idx, D.keys, D.perm, D.cub, cub_bytes, d_stats));
        fc_factor_args F;
        memset(&F, 0, sizeof F);
        F.n = n;
        F.nchunks = ((unsigned long long)n + (unsigned long long)(32 / tm.lanes_per_row) - 1ULL) /
                    (unsigned long long)(32 / tm.lanes_per_row);
        F.perm = D.perm;
        F.ap = d_ap;
        F.ac = d_ac;
        F.av = d_av;
        F.lp = d_lp;
        F.lc = D.lc;
        F.lv = D.lv;
        F.flag = D.flag;
        F.shifted = D.shifted;
        F.stats = d_stats;
        F.shift_policy = o->zero_pivot == GS_ZERO_PIVOT_SHIFT;
        F.shift = o->shift;
        F.min_pivot = o->zero_pivot == GS_ZERO_PIVOT_GROW ? o->min_pivot : 0.0;
        GS_TRY(fc_launch_factor(s, FC_IC0, tm.lanes_per_row, F));
        /* LT = L^T: entries sorted by column (stable: rows increasing within a column) */
        size_t bytes = cub_bytes;
        GS_TRY(GS_CUDA(cub::DeviceRadixSort::SortPairs(D.cub, bytes, (const unsigned *)D.lc, (unsigned *)D.tcol,
                                                       (const gs_int *)D.eidx, D.tidx, (int)nnz_l, 0, fc_key_bits(n),
                                                       s)));
        fc_ic_transpose_kernel<<<(unsigned)((nl + 255) / 256), 256, 0, s>>>(n, nnz_l, D.tcol, D.tidx, D.row, D.lv, D.tp,
                                                                          D.tc, D.tv, d_stats);
        GS_TRY(GS_CUDA_LAUNCHED("fc_ic_transpose_kernel"));
        GS_TRY(fc_download(s, &hs, d_stats, sizeof hs));
        tm.kernel = gs_wtime() - t0;
        tm.levels = hs.max_level + 1;

        t0 = gs_wtime();
        if (hs.err_key != FC_NONE) {
            gs_int r = (gs_int)(hs.err_key >> 32), lb = 0;
            if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, r, o, info));
            GS_TRY(fc_download(s, &lb, d_lp + r, sizeof lb));
            GS_TRY(fc_factor_error(s, hs.err_key, A, o, true, A->colind + A->rowptr[r], D.lv + lb, NULL, NULL));
        }
        {
            void *arenas[2] = {arena, arena2};
            GS_TRY(fc_hand_over(be, s, fc_view(n, nnz_l, d_lp, D.lc, D.lv), fc_view(n, nnz_l, D.tp, D.tc, D.tv), arenas,
                                2, keep, &F1, &F2));
            arena = arenas[0];
            arena2 = arenas[1];
        }
        if (hs.nshifted > 0) GS_TRY(fc_collect_shifts(s, D.shifted, n, n, o, info));
        tm.download = gs_wtime() - t0;
    }

    fc_publish(&F1, &F2, L, LT, info);
    if (t) *t = tm;

cleanup:
    if (arena2) gs_backend_free(be, arena2);
    if (arena) gs_backend_free(be, arena);
    gs_csr_free(&F1);
    gs_csr_free(&F2);
    return st;
}
