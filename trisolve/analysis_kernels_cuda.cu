/* The kernels of the GPU analysis of the level-order solvers (analysis_cuda.cu runs them, trisolve_cuda.h
 * says the steps): the row pass, the runs, the levels of rows and of runs, the positions after the sort, the
 * HEC layout; and their launches. */
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <limits.h>

#include "trisolve/analysis_cuda.h"


static __global__ void lv_stats_init_kernel(lv_stats *S, gs_int n)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    S->ticket = 0;
    S->long_sum = 0;
    S->linked = 0;
    S->max_level = 0;
    S->max_len = 0;
    S->nunits = n;
    S->bad_row = n;
    S->bad_value_row = n;
    for (int k = 0; k <= LV_HIST; k++) S->hist[k] = 0;
}


/* One thread per row i (dependency index t = i for lower, n-1-i for upper). The row check of
 * gs_ts_check_rows: a row is faulty when any of the conditions holds, so their order does not matter
 * here: row pointers inside 0 .. nnz and increasing, columns inside 0 .. n-1, strictly increasing, on
 * the factor's side, a diagonal entry present exactly when the factor is not unit. The smallest faulty
 * row is kept (atomicMin). Also: the off-diagonal length, its histogram, whether the row reads its
 * predecessor in dependency order (i-1 for lower, i+1 for upper: the link of a run; with A.near > 0 the
 * strict link of warp runs: and no other entry has a dependency index within A.near of the row's). */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_rows_kernel(lv_rows_args A)
{
    __shared__ unsigned long long s_long_sum, s_linked;
    __shared__ int s_hist[LV_HIST + 1];
    __shared__ int s_max_len, s_bad;
    const int tid = (int)threadIdx.x;
    if (tid <= LV_HIST) s_hist[tid] = 0;
    if (tid == 0) {
        s_long_sum = 0;
        s_linked = 0;
        s_max_len = 0;
        s_bad = INT_MAX;
    }
    __syncthreads();
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < A.n) {
        const gs_int t = LOWER ? i : A.n - 1 - i, pred = LOWER ? i - 1 : i + 1;
        gs_int a = A.rowptr[i], e = A.rowptr[i + 1], len = 0;
        bool bad = a < 0 || e < a || e > A.nnz, linked = false, near = false;
        if (!bad) {
            bool has_diag = false;
            gs_int prev = 0;
            for (gs_int k = a; k < e; k++) {
                gs_int j = A.col[k];
                if (j < 0 || j >= A.n || (k > a && j <= prev) || (LOWER ? j > i : j < i)) bad = true;
                if (j == i) has_diag = true;
                else len++;
                if (t > 0 && j == pred) linked = true;
                else if (j != i && t - (LOWER ? j : A.n - 1 - j) < A.near) near = true;
                prev = j;
            }
            if (has_diag == A.unit) bad = true; /* a unit factor stores no diagonal, any other one does */
            if (near) linked = false;
        }
        if (bad) atomicMin(&s_bad, (int)i);
        A.len[i] = len;
        A.idx[i] = i;
        A.level[i] = -1;
        A.key[t] = linked ? -1 : t;
        atomicAdd(&s_hist[len < LV_HIST ? len : LV_HIST], 1);
        if (len >= LV_HIST) atomicAdd(&s_long_sum, (unsigned long long)len);
        if (linked) atomicAdd(&s_linked, 1ULL);
        atomicMax(&s_max_len, len);
    }
    __syncthreads();
    if (tid <= LV_HIST && s_hist[tid]) atomicAdd(&A.stats->hist[tid], s_hist[tid]);
    if (tid == 0) {
        if (s_long_sum) atomicAdd(&A.stats->long_sum, s_long_sum);
        if (s_linked) atomicAdd(&A.stats->linked, s_linked);
        atomicMax(&A.stats->max_len, s_max_len);
        if (s_bad != INT_MAX) atomicMin(&A.stats->bad_row, s_bad);
    }
}

/* chain_start(t) = max over t' <= t of key(t'): the dependency index where t's chain of links begins */
struct lv_max_op {
    __device__ __forceinline__ gs_int operator()(const gs_int &a, const gs_int &b) const { return a > b ? a : b; }
};

/* flag(t) = 1 when row t starts a run: its chain starts there, or the run before it is full. */
static __global__ void lv_run_flags_kernel(gs_int n, gs_int run_rows, const gs_int *__restrict__ chain_start,
                                           gs_int *flag)
{
    gs_int t = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t < n) flag[t] = (t - chain_start[t]) % run_rows == 0 ? 1 : 0;
}

/* run_first[run] = its first dependency index (rid = exclusive sum of the flags); run_first[nruns] = n. */
static __global__ void lv_run_first_kernel(gs_int n, const gs_int *__restrict__ flag, const gs_int *__restrict__ rid,
                                           gs_int *run_first, lv_stats *stats)
{
    gs_int t = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t >= n) return;
    if (flag[t]) run_first[rid[t]] = t;
    if (t == n - 1) {
        gs_int nruns = rid[t] + flag[t];
        run_first[nruns] = n;
        stats->nunits = nruns;
    }
}

/* The known prefix of up to 4 polled entries (in[k]: entry k exists; got[k]: its level, -2 = nothing to
 * wait for, -1 = not yet known): how many are consumed, and *lv = max(*lv, level + 1) over them. */
static __device__ __forceinline__ int lv_known_prefix(const gs_int got[4], const bool in[4], gs_int *lv)
{
    int c = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (c != k || !in[k] || got[k] == -1) continue;
        if (got[k] >= 0 && got[k] + 1 > *lv) *lv = got[k] + 1;
        c++;
    }
    return c;
}


/* Runs as units: level(run) = 0 without dependencies outside the run, else 1 + max level(j) over them (a
 * run: dependency indices run_first[u] .. run_first[u+1]-1, at most 32 consecutive rows whose entries are
 * one contiguous range of the CSR). A warp per run, lane k holding its k-th row; a block of LV_THREADS / 32
 * runs takes the next rank by ticket; run u holds dependency indices below those of run u+1, so every
 * dependency belongs to a run of a smaller rank, of a warp that runs or has finished: the run of smallest
 * unknown level can always finish. Each lane loops until its row is through: in each round it reads the
 * levels of up to 4 entries from its cursor and consumes the known prefix, oldest dependency first (lower:
 * from the row's first column; upper: from its last, so that a cursor stuck on the newest dependency does
 * not then read the older ones a round trip at a time); the warp's rounds end together (__all_sync), then
 * the run's level is the maximum over its lanes. The rows passed the check, but entries outside the
 * factor's side are skipped anyway. */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_run_levels_kernel(lv_level_args A)
{
    __shared__ unsigned long long s_ticket;
    __shared__ int s_max_level;
    const int tid = (int)threadIdx.x, lane = tid & 31;
    if (tid == 0) {
        s_ticket = atomicAdd(&A.stats->ticket, 1ULL);
        s_max_level = 0;
    }
    __syncthreads();
    const long long u = (long long)s_ticket * (LV_THREADS / 32) + (tid >> 5);
    const bool run = u < (long long)A.nunits;
    gs_int lo = 0, hi = -1, i = 0, left = 0, q = 0; /* left: entries of the row not yet consumed */
    if (run) {
        const gs_int t0 = A.run_first[u], t1 = A.run_first[u + 1];
        lo = LOWER ? t0 : A.n - t1; /* the run's rows lo .. hi */
        hi = LOWER ? t1 - 1 : A.n - 1 - t0;
        if (lane < t1 - t0) {
            i = LOWER ? t0 + lane : A.n - 1 - (t0 + lane);
            const gs_int a = A.rowptr[i], e = A.rowptr[i + 1];
            left = e - a;
            q = LOWER ? a : e - 1; /* the cursor: forward for lower, backward for upper */
        }
    }
    const bool active = run && lane < hi - lo + 1;
    gs_int lv = 0;
    bool done = !active;
    for (;;) {
        if (!done) {
            gs_int got[4];
            bool in[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                in[k] = k < left;
                gs_int j = in[k] ? A.col[LOWER ? q + k : q - k] : 0;
                bool dep = LOWER ? (j >= 0 && j < lo) : (j > hi && j < A.n); /* outside the run */
                got[k] = (in[k] && dep) ? gs_gpu_ld_relaxed(A.level + j) : -2;
            }
            const int c = lv_known_prefix(got, in, &lv);
            left -= c;
            q += LOWER ? c : -c;
            if (left <= 0) done = true;
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const gs_int o = __shfl_xor_sync(0xffffffffu, lv, off);
        if (o > lv) lv = o;
    }
    if (active) gs_gpu_st_relaxed(A.level + i, lv);
    if (run && lane == 0) {
        A.unit_level[u] = lv;
        atomicMax(&s_max_level, lv);
    }
    __syncthreads();
    if (tid == 0) atomicMax(&A.stats->max_level, s_max_level);
}


/* One ticket's rows of lv_levels_warp_kernel: dependency index u for this thread (see below). */
template <bool LOWER>
static __device__ __forceinline__ void lv_warp_rows(const lv_level_args &A, const long long u, int *s_max_level)
{
    const int lane = (int)(threadIdx.x & 31u);
    const long long w0 = u - lane;                              /* the warp's first one */
    const bool active = u < (long long)A.n;
    const gs_int n = A.n;
    /* a row j is inside the warp when its dependency index (j, or n-1-j for upper) is at least w0 */
    const gs_int i = active ? (LOWER ? (gs_int)u : n - 1 - (gs_int)u) : 0;
    const gs_int pred = LOWER ? i - 1 : i + 1;
    gs_int q0 = 0, len = 0, pos = 0, ka = -1, kb = -1; /* [ka, kb): the entries inside the warp other than pred */
    if (active) {
        q0 = A.rowptr[i];
        len = A.rowptr[i + 1] - q0;
    }
    gs_int ext = 0;
    bool link = false, ext_done = !active, published = !active;
    int lv = 0, max_lv = 0;
    gs_int pa[4];               /* the window's dependency indices to poll (-1: none) */
    bool in[4], window = false; /* pa and in hold the entries pos .. pos+3 */
    bool first = true;
    for (;;) {
        bool newly = false; /* this lane's external entries were all read in this round */
        /* 1. external dependencies */
        if (!ext_done) {
            gs_int got[4];
            if (!window) {
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    /* entries in dependency order, the oldest first: lower from the row's start, upper from
                     * its end (an upper row's nearest columns are the rows solved last) */
                    in[k] = pos + k < len;
                    const gs_int e = LOWER ? q0 + pos + k : q0 + len - 1 - pos - k;
                    gs_int j = in[k] ? A.col[e] : 0;
                    bool dep = LOWER ? (j >= 0 && j < i) : (j > i && j < n);
                    bool inside = dep && (long long)(LOWER ? j : n - 1 - j) >= w0;
                    pa[k] = -1; /* not a dependency, or one inside the warp (step 2) */
                    if (in[k] && inside) {
                        if (j == pred) link = true;
                        else {
                            if (ka < 0 || e < ka) ka = e;
                            if (e + 1 > kb) kb = e + 1;
                        }
                    } else if (in[k] && dep) {
                        pa[k] = LOWER ? j : n - 1 - j;
                    }
                }
                window = true;
            }
#pragma unroll
            for (int k = 0; k < 4; k++) got[k] = pa[k] >= 0 ? gs_gpu_ld_relaxed(A.level + pa[k]) : -2;
            const int c = lv_known_prefix(got, in, &ext);
            pos += c;
            if (c > 0) window = false; /* the next round reads the entries from the new cursor */
            if (pos >= len) {
                ext_done = true;
                newly = true;
            }
        }
        /* the levels inside the warp depend only on which lanes are through their external entries (and on
         * those lanes' ext), so a round in which no lane got through changes nothing: poll again */
        if (!first && !__any_sync(0xffffffffu, newly)) continue;
        first = false;

        /* 2. inside the warp (the link flags and ranges are complete once ext_done: until then the lane
         *    is not known and its level is not used by a known lane) */
        const unsigned heads = __ballot_sync(0xffffffffu, !link); /* lane 0 is a head: its pred is outside */
        const int hd = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));
        const bool other = ka >= 0;
        int span = other ? kb - ka : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            int o = __shfl_xor_sync(0xffffffffu, span, d);
            span = o > span ? o : span;
        }
        lv = ext;
        int known = ext_done ? 1 : 0;
        for (;;) {
            int a = lv - lane, kn = known;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                int oa = __shfl_up_sync(0xffffffffu, a, d), ok = __shfl_up_sync(0xffffffffu, kn, d);
                if (lane - d >= hd) {
                    if (oa > a) a = oa;
                    kn &= ok;
                }
            }
            lv = a + lane;
            known = kn;
            if (span == 0) break;
            bool changed = false;
            for (int k = 0; k < span; k++) {
                int src = lane;
                if (other && ka + k < kb) {
                    gs_int j = A.col[ka + k];
                    bool dep = LOWER ? (j >= 0 && j < i) : (j > i && j < n);
                    if (dep && j != pred) {
                        long long tj = LOWER ? j : n - 1 - j;
                        if (tj >= w0) src = (int)(tj - w0);
                    }
                }
                int v = __shfl_sync(0xffffffffu, lv, src), vk = __shfl_sync(0xffffffffu, known, src);
                if (src != lane) {
                    if (v + 1 > lv) {
                        lv = v + 1;
                        changed = true;
                    }
                    if (known && !vk) {
                        known = 0;
                        changed = true;
                    }
                }
            }
            if (!__any_sync(0xffffffffu, changed)) break;
        }

        /* 3. publish */
        if (!published && known) {
            gs_gpu_st_relaxed(A.level + u, lv);
            max_lv = lv;
            published = true;
        }
        if (__all_sync(0xffffffffu, published)) break;
    }
    if (active) atomicMax(s_max_level, max_lv);
}


/* Rows as units (no runs): the same levels, with the dependencies inside a warp passed by shuffles. The
 * 32 lanes of a warp hold 32 consecutive dependency indices, so a dependency on a row of the same warp (on
 * a PDE factor in natural order: the row before) costs a few shuffles instead of a round trip through L2
 * per link of the chain. The warp works in rounds:
 *   1. each lane not yet through its row polls the levels of its dependencies OUTSIDE the warp as
 *      lv_run_levels_kernel does (4 entries a round from a cursor, the known prefix consumed), in
 *      dependency order, oldest first (an upper row from its last column: its first columns are the rows
 *      solved last, and a cursor stuck on them would read the rest one round trip at a time); they belong to
 *      earlier warps (of this block, running, or of blocks with smaller tickets), so the warp of smallest
 *      unknown rank always progresses. The window's dependency indices stay in registers until part of
 *      it is known (the columns are read again only when the cursor moves);
 *   2. inside the warp, for every lane: level = max(external, 1 + level of each dependency in the warp),
 *      known = all its external entries read and every dependency in the warp known. The link to the
 *      previous lane is a segmented scan over the runs of linked lanes (5 steps; max of level - lane, AND
 *      of known); other dependencies in the warp (a contiguous range of the lane's sorted columns, at most
 *      31) take rounds of shuffles until nothing changes. Started from known = "external entries read"
 *      and only ever lowered, this converges to the exact answer on a DAG (at most 32 rounds);
 *   3. lanes that became known publish their level.
 * Steps 2 and 3 change nothing in a round in which no lane got through its external entries, so such a
 * round goes straight back to polling. Most rounds are such rounds, and with ~1000 polling threads per SM
 * their instructions are what a hop costs: with the skip and the kept window the kernel takes, H100, level
 * order, device factors, ms for the two factors, poisson3d 100^3 0.55 / 0.57, laplace27 64^3 0.49 / 0.51,
 * poisson2d 1024^2 0.92 / 0.94, against 0.70 / 0.80, 0.60 / 0.73 and 1.43 / 1.62 without them
 * (docs/notes-trisolve.md section 3.3).
 * The levels are kept by dependency index here (A.level[t], t = i for lower, n-1-i for upper), so that
 * lower and upper factors poll and publish in the same address order (by row index, the upper factors'
 * level kernels take 2-20x longer than the lower ones', erratically, on the H100); lv_reverse_kernel
 * gives them by row. Lanes publish as soon as they are known, not when the whole warp is: a warp that
 * spans the end of one grid line and the start of the next must not chain the two (3D 100^3: 313 warps
 * per plane would otherwise form one chain through all planes, 16-22 ms instead of ~1). A persistent grid of
 * LV_WARP_BLOCKS_PER_SM blocks per SM takes the tickets (a block finishes its ticket's rows before it takes
 * the next; tickets are taken in order, so every dependency is in a running or finished ticket). */
template <bool LOWER>
static __global__ void __launch_bounds__(LV_THREADS) lv_levels_warp_kernel(lv_level_args A)
{
    __shared__ unsigned long long s_ticket;
    __shared__ int s_max_level;
    const int tid = (int)threadIdx.x;
    if (tid == 0) s_max_level = 0;
    for (;;) { /* a persistent block: one ticket of LV_THREADS rows after the other */
        __syncthreads(); /* the previous ticket's rows are done with s_ticket */
        if (tid == 0) s_ticket = atomicAdd(&A.stats->ticket, 1ULL);
        __syncthreads();
        if (s_ticket * LV_THREADS >= (unsigned long long)A.n) break;
        lv_warp_rows<LOWER>(A, (long long)s_ticket * LV_THREADS + tid, &s_max_level);
    }
    __syncthreads();
    if (tid == 0) atomicMax(&A.stats->max_level, s_max_level);
}

/* level[i] = level_t[n-1-i]: an upper factor's levels by row from the warp kernel's by dependency index */
static __global__ void lv_reverse_kernel(gs_int n, const gs_int *__restrict__ level_t, gs_int *__restrict__ level)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) level[i] = level_t[n - 1 - i];
}


/* After the sort, one thread per unit position rp: level_ptr (first unit position of each level); the
 * positions of the unit's rows, p = k * nunits + rp for its k-th row (p = rp for rows; warp runs:
 * p = rp * run_rows + k), perm and the inverse pos_of; positions past a run's end are holes (perm -1);
 * the remainder length of each position (remlen[npos] = 0 for the exclusive scan). */
static __global__ void lv_positions_kernel(lv_pos_args A)
{
    gs_int rp = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (rp >= A.nunits) return;
    gs_int lv = A.keys[rp], prev = rp > 0 ? A.keys[rp - 1] : -1;
    for (gs_int l = prev + 1; l <= lv; l++) A.level_ptr[l] = rp;
    if (rp == A.nunits - 1) {
        for (gs_int l = lv + 1; l <= A.nlevels; l++) A.level_ptr[l] = A.nunits;
        A.remlen[A.npos] = 0;
    }
    gs_int u = A.units[rp];
    gs_int t0 = A.run_first ? A.run_first[u] : 0, t1 = A.run_first ? A.run_first[u + 1] : 1;
    for (gs_int k = 0; k < A.run_rows; k++) {
        gs_int p = A.warp ? rp * A.run_rows + k : k * A.nunits + rp;
        if (t0 + k < t1) {
            gs_int i = !A.run_first ? u : (A.lower ? t0 + k : A.n - 1 - (t0 + k));
            gs_int extra = A.len[i] - A.w;
            A.perm[p] = i;
            A.pos_of[i] = p;
            A.remlen[p] = extra > 0 ? extra : 0;
        } else {
            A.perm[p] = -1;
            A.remlen[p] = 0;
        }
    }
}


/* One thread per position p: the off-diagonal entries of row i = perm[p] in order, the first w in the
 * ELL slots k*npos + p (padding -1 / 0 after them), the rest in the remainder; dinv[p] = 1 / t_ii (1 for
 * a unit factor and for holes), and the smallest row whose diagonal is zero or not finite (the value
 * part of the check; the rows passed the structural part, so a non-unit row has exactly one diagonal
 * entry). With V = float the values are rounded once here: (float)t_ij and (float)(1 / t_ii). */
template <typename V>
static __global__ void lv_layout_kernel(lv_layout_args<V> A)
{
    gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= A.npos) return;
    gs_int i = A.perm[p], k = 0, r = A.has_rem ? A.rem_ptr[p] : 0;
    size_t s = (size_t)p;
    double diag = 1.0;
    if (i >= 0)
        for (gs_int q = A.rowptr[i]; q < A.rowptr[i + 1]; q++) {
            gs_int j = A.col[q];
            if (j == i) {
                diag = A.val[q];
                continue;
            }
            gs_int c = A.position_cols ? A.pos_of[j] : j;
            if (k < A.w) {
                A.ell_col[s] = c;
                A.ell_val[s] = (V)A.val[q];
                s += (size_t)A.npos;
            } else {
                A.rem_col[r] = c;
                A.rem_val[r] = (V)A.val[q];
                r++;
            }
            k++;
        }
    for (; k < A.w; k++, s += (size_t)A.npos) {
        A.ell_col[s] = -1;
        A.ell_val[s] = (V)0;
    }
    if (A.unit || i < 0) {
        A.dinv[p] = (V)1;
    } else {
        A.dinv[p] = (V)(1.0 / diag);
        if (diag == 0.0 || !isfinite(diag)) atomicMin(&A.stats->bad_value_row, (int)i);
    }
}

/* The arguments of a with the values written in type V to ell_val, rem_val and dinv. */
template <typename V>
static lv_layout_args<V> lv_layout_in(const lv_layout_args<double> &a, V *ell_val, V *rem_val, V *dinv)
{
    lv_layout_args<V> b;
    b.npos = a.npos;
    b.w = a.w;
    b.position_cols = a.position_cols;
    b.has_rem = a.has_rem;
    b.unit = a.unit;
    b.rowptr = a.rowptr;
    b.col = a.col;
    b.val = a.val;
    b.perm = a.perm;
    b.pos_of = a.pos_of;
    b.rem_ptr = a.rem_ptr;
    b.ell_col = a.ell_col;
    b.rem_col = a.rem_col;
    b.ell_val = ell_val;
    b.rem_val = rem_val;
    b.dinv = dinv;
    b.stats = a.stats;
    return b;
}

/* ================================================================ launches */

gs_status gs_lv_stats_init(cudaStream_t s, lv_stats *S, gs_int n)
{
    lv_stats_init_kernel<<<1, 32, 0, s>>>(S, n);
    GS_CALL(GS_CUDA_LAUNCHED("lv_stats_init_kernel"));
    return GS_OK;
}

static unsigned lv_blocks(size_t units) { return (unsigned)((units + LV_THREADS - 1) / LV_THREADS); }

gs_status gs_lv_rows(cudaStream_t s, bool lower, const lv_rows_args &ra)
{
    if (lower) lv_rows_kernel<true><<<lv_blocks((size_t)ra.n), LV_THREADS, 0, s>>>(ra);
    else lv_rows_kernel<false><<<lv_blocks((size_t)ra.n), LV_THREADS, 0, s>>>(ra);
    GS_CALL(GS_CUDA_LAUNCHED("lv_rows_kernel"));
    return GS_OK;
}

gs_status gs_lv_runs_bytes(cudaStream_t s, gs_int n, size_t *max_bytes, size_t *flag_bytes)
{
    GS_CALL(GS_CUDA(cub::DeviceScan::InclusiveScan(NULL, *max_bytes, (const gs_int *)NULL, (gs_int *)NULL,
                                                   lv_max_op(), (int)n, s)));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, *flag_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n,
                                                  s)));
    return GS_OK;
}

gs_status gs_lv_runs(cudaStream_t s, gs_int n, gs_int run_rows, void *cub, size_t max_bytes, size_t flag_bytes,
                     const gs_int *key, gs_int *chain_start, gs_int *flag, gs_int *rid, gs_int *run_first,
                     lv_stats *stats)
{
    const unsigned rblocks = lv_blocks((size_t)n);
    GS_CALL(GS_CUDA(cub::DeviceScan::InclusiveScan(cub, max_bytes, key, chain_start, lv_max_op(), (int)n, s)));
    lv_run_flags_kernel<<<rblocks, LV_THREADS, 0, s>>>(n, run_rows, chain_start, flag);
    GS_CALL(GS_CUDA_LAUNCHED("lv_run_flags_kernel"));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(cub, flag_bytes, (const gs_int *)flag, rid, (int)n, s)));
    lv_run_first_kernel<<<rblocks, LV_THREADS, 0, s>>>(n, flag, rid, run_first, stats);
    GS_CALL(GS_CUDA_LAUNCHED("lv_run_first_kernel"));
    return GS_OK;
}

gs_status gs_lv_levels_rows(cudaStream_t s, bool lower, const lv_level_args &la, unsigned pblocks, gs_int *level)
{
    if (lower) {
        lv_levels_warp_kernel<true><<<pblocks, LV_THREADS, 0, s>>>(la);
    } else {
        lv_levels_warp_kernel<false><<<pblocks, LV_THREADS, 0, s>>>(la);
        GS_CALL(GS_CUDA_LAUNCHED("lv_levels_warp_kernel"));
        lv_reverse_kernel<<<lv_blocks((size_t)la.n), LV_THREADS, 0, s>>>(la.n, la.level, level);
    }
    GS_CALL(GS_CUDA_LAUNCHED("lv_levels_kernel"));
    return GS_OK;
}

gs_status gs_lv_levels_runs(cudaStream_t s, bool lower, const lv_level_args &la)
{
    const unsigned wblocks = (unsigned)(((size_t)la.nunits + LV_THREADS / 32 - 1) / (LV_THREADS / 32));
    if (lower) lv_run_levels_kernel<true><<<wblocks, LV_THREADS, 0, s>>>(la);
    else lv_run_levels_kernel<false><<<wblocks, LV_THREADS, 0, s>>>(la);
    GS_CALL(GS_CUDA_LAUNCHED("lv_levels_kernel"));
    return GS_OK;
}

gs_status gs_lv_positions(cudaStream_t s, const lv_pos_args &pa)
{
    lv_positions_kernel<<<(unsigned)(((size_t)pa.nunits + 255) / 256), 256, 0, s>>>(pa);
    GS_CALL(GS_CUDA_LAUNCHED("lv_positions_kernel"));
    return GS_OK;
}

gs_status gs_lv_layout(cudaStream_t s, const lv_layout_args<double> &ly, bool single, float *ell_val_f,
                       float *rem_val_f, float *dinv_f)
{
    const unsigned blocks = (unsigned)(((size_t)ly.npos + 255) / 256);
    if (single) lv_layout_kernel<float><<<blocks, 256, 0, s>>>(lv_layout_in(ly, ell_val_f, rem_val_f, dinv_f));
    else lv_layout_kernel<double><<<blocks, 256, 0, s>>>(ly);
    GS_CALL(GS_CUDA_LAUNCHED("lv_layout_kernel"));
    return GS_OK;
}
