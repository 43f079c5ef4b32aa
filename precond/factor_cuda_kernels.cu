/* The kernels of the GPU factorizations (numeric ILU, IKJ on a fixed pattern, any fill level, and IC(0); the
 * twins of gs_ilu_numeric and gs_ic0, precond/ilu_factor.c, the reference the tests compare with entry by
 * entry) and their launches; the drivers are factor_cuda.cu and factor_cuda_pattern.cu.
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
#include <cuda_runtime.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/cuda_check.h"
#include "core/gpu_sync_cuda.h"
#include "precond/factor_cuda_impl.h"

static __host__ __device__ __forceinline__ unsigned long long fc_key(gs_int row, unsigned kind, long long pos)
{
    unsigned long long p = pos > (long long)FC_POS_MAX ? FC_POS_MAX : (unsigned long long)pos;
    return ((unsigned long long)(unsigned)row << 32) | ((unsigned long long)kind << 28) | p;
}

/* ================================================================ kernel 1: input checks */


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

/* ================================================================ launches */

static void fc_stats_init(fc_stats *h)
{
    memset(h, 0, sizeof *h);
    h->err_key = h->bad_a = h->bad_ptr = h->bad_pat = FC_NONE;
}
/* Bits of the largest key n - 1 (the sorts need no more passes than that). */
int gs_fc_key_bits(gs_int n)
{
    int b = 1;
    while (b < 31 && ((gs_int)1 << b) < n) b++;
    return b;
}
/* cub workspace of a sort of count pairs on the given key bits (0: cub could not size it). */
size_t gs_fc_sort_bytes(gs_int count, int bits)
{
    size_t b = 0;
    if (cub::DeviceRadixSort::SortPairs(NULL, b, (const unsigned *)NULL, (unsigned *)NULL, (const gs_int *)NULL,
                                        (gs_int *)NULL, (int)count, 0, bits, (cudaStream_t)0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return b;
}
/* Levels of the rows of (ptr, col) into level, rows sorted by level into perm (stable: rows of a level in
 * increasing order); scratch: keys (n), cub workspace of cub_bytes. */
gs_status gs_fc_level_order(cudaStream_t s, gs_int n, const gs_int *ptr, const gs_int *col, int skip_last,
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
                                                    (const gs_int *)idx, perm, (int)n, 0, gs_fc_key_bits(n), s)));
    return GS_OK;
}
/* The factorization kernel as a persistent grid: as many blocks as fit at once (at most one warp per
 * ticket). */
gs_status gs_fc_launch_factor(cudaStream_t s, int mode, int g, const fc_factor_args &F)
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

/* hs initialised and copied to the device, then the first malformed row of A (and of the patterns) */
gs_status gs_fc_check_launch(cudaStream_t s, const fc_check_args &ca, fc_stats *hs)
{
    fc_stats_init(hs);
    GS_CALL(GS_CUDA(cudaMemcpyAsync(ca.stats, hs, sizeof *hs, cudaMemcpyHostToDevice, s)));
    const unsigned blocks = (unsigned)(((size_t)ca.n + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS);
    fc_check_kernel<<<blocks, FC_CHECK_THREADS, 0, s>>>(ca);
    GS_CALL(GS_CUDA_LAUNCHED("fc_check_kernel"));
    return GS_OK;
}

static unsigned fc_row_blocks(size_t rows) { return (unsigned)((rows + FC_CHECK_THREADS - 1) / FC_CHECK_THREADS); }

gs_status gs_fc_ilu0_count(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, gs_int *lcnt, gs_int *ucnt,
                           const fc_stats *stats)
{
    fc_ilu0_count_kernel<<<fc_row_blocks((size_t)n + 1), FC_CHECK_THREADS, 0, s>>>(n, ap, ac, lcnt, ucnt, stats);
    GS_CALL(GS_CUDA_LAUNCHED("fc_ilu0_count_kernel"));
    return GS_OK;
}

gs_status gs_fc_ilu0_fill(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, const gs_int *lp,
                          const gs_int *up, gs_int *lc, gs_int *uc, const fc_stats *stats)
{
    fc_ilu0_fill_kernel<<<fc_row_blocks((size_t)n), FC_CHECK_THREADS, 0, s>>>(n, ap, ac, lp, up, lc, uc, stats);
    GS_CALL(GS_CUDA_LAUNCHED("fc_ilu0_fill_kernel"));
    return GS_OK;
}

gs_status gs_fc_ic_count(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, gs_int *cnt,
                         const fc_stats *stats)
{
    fc_ic_count_kernel<<<fc_row_blocks((size_t)n + 1), FC_CHECK_THREADS, 0, s>>>(n, ap, ac, cnt, stats);
    GS_CALL(GS_CUDA_LAUNCHED("fc_ic_count_kernel"));
    return GS_OK;
}

gs_status gs_fc_ic_fill(cudaStream_t s, gs_int n, const gs_int *ap, const gs_int *ac, const gs_int *lp, gs_int *lc,
                        gs_int *row, gs_int *eidx, const fc_stats *stats)
{
    fc_ic_fill_kernel<<<fc_row_blocks((size_t)n), FC_CHECK_THREADS, 0, s>>>(n, ap, ac, lp, lc, row, eidx, stats);
    GS_CALL(GS_CUDA_LAUNCHED("fc_ic_fill_kernel"));
    return GS_OK;
}

gs_status gs_fc_ic_transpose(cudaStream_t s, gs_int n, gs_int nnz, const gs_int *tcol, const gs_int *tidx,
                             const gs_int *row, const double *lv, gs_int *tp, gs_int *tc, double *tv,
                             const fc_stats *stats)
{
    const unsigned blocks = (unsigned)(((size_t)nnz + 255) / 256);
    fc_ic_transpose_kernel<<<blocks, 256, 0, s>>>(n, nnz, tcol, tidx, row, lv, tp, tc, tv, stats);
    GS_CALL(GS_CUDA_LAUNCHED("fc_ic_transpose_kernel"));
    return GS_OK;
}
