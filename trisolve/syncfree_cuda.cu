/* Sync-free triangular solve on the GPU, x = T^{-1} b, in ONE kernel without any barrier: every row
 * starts as soon as the rows it reads are solved, x_i = (b_i - sum_{j != i} t_ij x_j) * (1/t_ii).
 *
 * Ready values instead of flags: the solver owns two arrays of n values, one per generation. A solved
 * row stores its value there (relaxed store at GPU scope) and its consumers spin on that value itself
 * (relaxed loads, served by L2) until it is no longer SF_EMPTY (all bits set, a NaN that arithmetic
 * never produces; a result with that bit pattern is stored as the canonical NaN): one L2 round trip per
 * dependency instead of two (flag, then value). While solve k uses one array it resets the other to
 * SF_EMPTY, so solve k+1 needs no memset and no extra launch. Work is taken by atomic tickets in
 * dependency order and a row only waits for rows of smaller tickets (taken by running blocks/warps),
 * so the row of smallest unsolved rank can always progress, whatever order blocks start in. The ticket
 * counter is never reset: a solve takes a fixed number K of tickets, so ticket T belongs to solve T / K,
 * which selects the generation. Every lane polls without blocking in warp-wide rounds (lanes depending
 * on lanes of the same warp progress without independent thread scheduling), and every row sums its
 * entries in a fixed order (bit-identical results from solve to solve).
 *
 * Schedule: the level-set plan built on the GPU (gs_ls_dplan_build) with entry columns given as
 * POSITIONS: rows renumbered level by level, so that the rows taken together become ready together and
 * no warp holds rows far from the wavefront. A persistent grid of warps (SF_WARPS_PER_SM per SM) takes
 * 32 positions per ticket (the next ticket is requested while the chunk is solved) and solves them a
 * thread per row, each spinning on the ready values of its pending entries (all polled in parallel,
 * the sum formed in entry order once all are there). Any row length (ELL part of at most SF_ELL_MAX
 * entries + CSR remainder read 4 at a time), any structure.
 *
 * Cost: one dependency hop between SMs (store, polling load, return) is ~0.5-0.9 us on the H100, so a
 * solve costs ~levels x hop (docs/notes-trisolve.md); the bytes are a small term.
 *
 * Experiment (compiled only with -DGS_TRISOLVE_TUNING, chosen with GS_SF_MODE=chunked): a chunked
 * natural-order schedule, a block per chunk of consecutive rows, dependencies inside the chunk through
 * shared memory and external ones copied from L2 by poller threads. It was slower on every benchmark
 * factor (a step through shared memory measured ~0.44 us, no cheaper than an L2 hop), see the notes. */
#include <cuda_runtime.h>
#ifdef GS_TRISOLVE_TUNING
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

#define SF_EMPTY (-1LL) /* the bit pattern of a not-yet-solved value */
#define SF_QNAN 0x7FF8000000000000LL

/* A result never takes the bit pattern SF_EMPTY (it would read as "not solved"): that NaN becomes the
 * canonical quiet NaN. */
static __device__ __forceinline__ long long sf_bits(double v)
{
    long long bits = __double_as_longlong(v);
    return bits == SF_EMPTY ? SF_QNAN : bits;
}

/* ================================================================ level-order schedule */

#define SF_BLOCK 128       /* threads per block (4 warps) */
#define SF_ELL_MAX 16      /* widest ELL part: entries a thread keeps in registers */
#define SF_WARPS_PER_SM 8  /* persistent warps per multiprocessor (capped by occupancy) */

struct sf_dev {
    gs_int n, w;
    bool has_rem;
    unsigned long long nchunks, per_solve; /* per_solve = K = nchunks + warps */
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col; /* positions */
    const double *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const double *__restrict__ rem_val;
    const double *__restrict__ dinv;
    long long *ready; /* 2n: the values by position of two generations */
    unsigned long long *ticket;
#ifdef GS_TRISOLVE_TUNING
    unsigned sleep_ns; /* experiments only: back-off of a lane whose poll found nothing new */
#endif
};

/* Position p = 32 * chunk + lane (one row per lane): x[perm[p]] = (b[perm[p]] - ELL entries in order -
 * remainder entries in order) * dinv[p], each entry's x read from this generation's ready array (cur)
 * once it is no longer SF_EMPTY; the value is published in cur[p] and nxt[p] is reset for the next
 * solve. */
template <int WMAX>
static __device__ __forceinline__ void sf_chunk(const sf_dev &S, const double *__restrict__ b, double *__restrict__ x,
                                                long long *cur, long long *nxt, gs_int p)
{
    const bool active = p < S.n;
    gs_int i = 0, c[WMAX], rq = 0, r1 = 0;
    double v[WMAX], xv[WMAX], bi = 0.0, di = 0.0;
    unsigned pend = 0;
#pragma unroll
    for (int k = 0; k < WMAX; k++) {
        c[k] = -1;
        v[k] = 0.0;
        xv[k] = 0.0;
    }
    if (active) {
        i = __ldg(S.perm + p);
        bi = __ldg(b + i);
        di = __ldg(S.dinv + p);
#pragma unroll
        for (int k = 0; k < WMAX; k++)
            if (k < S.w) {
                size_t q = (size_t)k * (size_t)S.n + (size_t)p;
                c[k] = __ldg(S.ell_col + q);
                v[k] = __ldg(S.ell_val + q);
            }
#pragma unroll
        for (int k = 0; k < WMAX; k++)
            if (c[k] >= 0) pend |= 1u << k;
        if (S.has_rem) {
            rq = __ldg(S.rem_ptr + p);
            r1 = __ldg(S.rem_ptr + p + 1);
        }
    }
    bool done = !active, ell_done = false;
    double s = 0.0;
    for (;;) {
        if (!done) {
#ifdef GS_TRISOLVE_TUNING
            const unsigned before = pend;
#endif
            long long got[WMAX];
#pragma unroll
            for (int k = 0; k < WMAX; k++) got[k] = (pend >> k) & 1u ? gs_ts_ld_relaxed(cur + c[k]) : SF_EMPTY;
#pragma unroll
            for (int k = 0; k < WMAX; k++)
                if (((pend >> k) & 1u) && got[k] != SF_EMPTY) {
                    xv[k] = __longlong_as_double(got[k]);
                    pend &= ~(1u << k);
                }
            if (pend == 0) {
                if (!ell_done) { /* the ELL entries in order */
                    s = bi;
#pragma unroll
                    for (int k = 0; k < WMAX; k++)
                        if (c[k] >= 0) s -= v[k] * xv[k];
                    ell_done = true;
                }
                while (rq < r1) { /* then the remainder in order, as far as it is solved, 4 reads at a time */
                    gs_int j[4];
                    long long g[4];
                    double rv[4];
#pragma unroll
                    for (int u = 0; u < 4; u++) {
                        j[u] = rq + u < r1 ? __ldg(S.rem_col + rq + u) : -1;
                        rv[u] = rq + u < r1 ? __ldg(S.rem_val + rq + u) : 0.0;
                    }
#pragma unroll
                    for (int u = 0; u < 4; u++) g[u] = j[u] >= 0 ? gs_ts_ld_relaxed(cur + j[u]) : SF_EMPTY;
                    int adv = 0;
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        if (adv == u && j[u] >= 0 && g[u] != SF_EMPTY) {
                            s -= rv[u] * __longlong_as_double(g[u]);
                            adv++;
                        }
                    rq += adv;
                    if (adv < 4) break; /* a value not solved yet (or the end): next round */
                }
                if (rq >= r1) {
                    long long bits = sf_bits(s * di);
                    x[i] = __longlong_as_double(bits);
                    gs_ts_st_relaxed(cur + p, bits);
                    nxt[p] = SF_EMPTY;
                    done = true;
                }
            }
#ifdef GS_TRISOLVE_TUNING
            if (S.sleep_ns && pend != 0 && pend == before) __nanosleep(S.sleep_ns);
#endif
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
}

/* A persistent warp takes 32 positions per ticket until its ticket is past the last chunk; the first
 * ticket tells the solve (generation) it belongs to. */
template <int WMAX>
static __global__ void __launch_bounds__(SF_BLOCK)
    sf_kernel(sf_dev S, const double *__restrict__ b, double *__restrict__ x)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(S.ticket, 1ULL);
    t = __shfl_sync(0xffffffffu, t, 0);
    const unsigned long long solve = t / S.per_solve, first = solve * S.per_solve;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)S.n : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.n);
    for (;;) {
        const unsigned long long chunk = t - first;
        if (chunk >= S.nchunks) break; /* this warp's one ticket past the last chunk */
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL); /* in flight while the chunk is solved */
        sf_chunk<WMAX>(S, b, x, cur, nxt, (gs_int)(chunk * 32ULL) + (gs_int)lane);
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}

typedef void (*sf_kernel_fn)(sf_dev, const double *, double *);

static sf_kernel_fn sf_pick(int wmax)
{
    if (wmax <= 4) return sf_kernel<4>;
    if (wmax <= 8) return sf_kernel<8>;
    return sf_kernel<16>;
}

/* ================================================================ chunked (natural-order) schedule
 * EXPERIMENT, compiled only with -DGS_TRISOLVE_TUNING and chosen with GS_SF_MODE=chunked: measured
 * slower than the level order on every benchmark factor (docs/notes-trisolve.md, version 3), kept for
 * the record of what was tried. */
#ifdef GS_TRISOLVE_TUNING

#define SFC_THREADS 1024                    /* threads per block: one block per chunk */
#define SFC_POLLERS 256                     /* threads copying external values into shared memory */
#define SFC_PSLOTS 8                        /* external slots per poller thread (at most) */
#define SFC_CT (SFC_THREADS - SFC_POLLERS)  /* compute threads; a chunk has B <= SFC_CT * RPT rows */
#define SFC_MAX_WIDTH 16                    /* longest row (off-diagonal entries) of the chunked mode */
#define SFC_IDLE_NS 64                      /* a compute warp none of whose rows can progress sleeps */
#define SFC_POLL_NS 128                     /* a poller warp whose round delivered nothing sleeps */

/* One entry of a row: its shared-memory slot (-1 = padding after the row's entries) and its value. */
struct sfc_ent {
    int slot, pad;
    double val;
};

/* Statistics of the factor for the choice of the schedule. */
struct sfc_stats {
    unsigned long long dist_hist[33]; /* entries by bit length of the distance |i - j| */
    unsigned long long nnz_off;
    int max_len;
};

/* Off-diagonal row lengths and the distances of the dependencies. */
static __global__ void sfc_stats_kernel(gs_int n, const gs_int *__restrict__ rowptr, const gs_int *__restrict__ col,
                                        sfc_stats *st)
{
    __shared__ unsigned long long s_hist[33];
    __shared__ unsigned long long s_nnz;
    __shared__ int s_max;
    if (threadIdx.x < 33) s_hist[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        s_nnz = 0;
        s_max = 0;
    }
    __syncthreads();
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        int len = 0;
        for (gs_int q = rowptr[i]; q < rowptr[i + 1]; q++) {
            gs_int j = col[q];
            if (j == i) continue;
            unsigned d = (unsigned)(j < i ? i - j : j - i);
            atomicAdd(&s_hist[32 - __clz(d)], 1ULL);
            len++;
        }
        atomicAdd(&s_nnz, (unsigned long long)len);
        atomicMax(&s_max, len);
    }
    __syncthreads();
    if (threadIdx.x < 33 && s_hist[threadIdx.x]) atomicAdd(&st->dist_hist[threadIdx.x], s_hist[threadIdx.x]);
    if (threadIdx.x == 0) {
        atomicAdd(&st->nnz_off, s_nnz);
        atomicMax(&st->max_len, s_max);
    }
}

/* rank <-> row: lower rows in increasing, upper rows in decreasing order */
static __device__ __forceinline__ gs_int sfc_row(bool lower, gs_int n, gs_int r) { return lower ? r : n - 1 - r; }

/* Per rank r: the number of external entries (columns of earlier chunks) and 1/diagonal. */
static __global__ void sfc_count_kernel(bool lower, gs_int n, gs_int B, const gs_int *__restrict__ rowptr,
                                        const gs_int *__restrict__ col, const double *__restrict__ val,
                                        gs_int *ext_cnt, double *dinv)
{
    gs_int r = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r > n) return;
    if (r == n) {
        ext_cnt[n] = 0; /* for the exclusive scan */
        return;
    }
    gs_int i = sfc_row(lower, n, r), first = r / B * B, cnt = 0;
    double d = 1.0;
    for (gs_int q = rowptr[i]; q < rowptr[i + 1]; q++) {
        gs_int j = col[q];
        if (j == i) {
            d = 1.0 / val[q];
            continue;
        }
        if (sfc_row(lower, n, j) < first) cnt++; /* rank of j (the map is its own inverse) */
    }
    ext_cnt[r] = cnt;
    dinv[r] = d;
}

/* The external entries as keys (chunk << 32 | rank of the column) with their entry index. */
static __global__ void sfc_keys_kernel(bool lower, gs_int n, gs_int B, const gs_int *__restrict__ rowptr,
                                       const gs_int *__restrict__ col, const gs_int *__restrict__ ext_off,
                                       unsigned long long *keys, gs_int *qidx)
{
    gs_int r = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= n) return;
    gs_int i = sfc_row(lower, n, r), c = r / B, first = c * B, o = ext_off[r];
    for (gs_int q = rowptr[i]; q < rowptr[i + 1]; q++) {
        gs_int j = col[q];
        if (j == i) continue;
        gs_int rj = sfc_row(lower, n, j);
        if (rj < first) {
            keys[o] = ((unsigned long long)c << 32) | (unsigned)rj;
            qidx[o] = q;
            o++;
        }
    }
}

/* Sorted keys: 1 where a (chunk, column) pair starts. */
static __global__ void sfc_flags_kernel(gs_int E, const unsigned long long *__restrict__ keys, gs_int *flag)
{
    gs_int e = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (e < E) flag[e] = (e == 0 || keys[e] != keys[e - 1]) ? 1 : 0;
}

/* uid1 = inclusive scan of the flags (unique index + 1): ext_ptr (first unique index of each chunk),
 * ext_rank (the rank each unique external slot reads), and the largest number of slots of a chunk. */
static __global__ void sfc_chunkptr_kernel(gs_int E, gs_int nchunks, const unsigned long long *__restrict__ keys,
                                           const gs_int *__restrict__ flag, const gs_int *__restrict__ uid1,
                                           gs_int *ext_ptr, gs_int *ext_rank)
{
    gs_int e = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= E) return;
    gs_int c = (gs_int)(keys[e] >> 32), cp = e > 0 ? (gs_int)(keys[e - 1] >> 32) : -1;
    for (gs_int cc = cp + 1; cc <= c; cc++) ext_ptr[cc] = uid1[e] - 1;
    if (e == E - 1)
        for (gs_int cc = c + 1; cc <= nchunks; cc++) ext_ptr[cc] = uid1[e];
    if (flag[e]) ext_rank[uid1[e] - 1] = (gs_int)(keys[e] & 0xffffffffULL);
}

/* The shared-memory slot of every external entry: B + its unique index within the chunk; and the
 * largest number of external slots of a chunk. */
static __global__ void sfc_map_kernel(gs_int E, gs_int B, const unsigned long long *__restrict__ keys,
                                      const gs_int *__restrict__ qidx, const gs_int *__restrict__ uid1,
                                      const gs_int *__restrict__ ext_ptr, gs_int *slot_of_entry, int *max_ext)
{
    gs_int e = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= E) return;
    gs_int c = (gs_int)(keys[e] >> 32);
    slot_of_entry[qidx[e]] = B + uid1[e] - 1 - ext_ptr[c];
    if (e == E - 1 || (gs_int)(keys[e + 1] >> 32) != c) atomicMax(max_ext, ext_ptr[c + 1] - ext_ptr[c]);
}

/* One thread per rank r: the row's entries in rank order of their columns (the oldest dependency
 * first, so that a row consumes its ready prefix in one round once its last dependency arrives), slot
 * k at ent[k * n + r], padding after them. */
static __global__ void sfc_layout_kernel(bool lower, gs_int n, gs_int B, gs_int w, const gs_int *__restrict__ rowptr,
                                         const gs_int *__restrict__ col, const double *__restrict__ val,
                                         const gs_int *__restrict__ slot_of_entry, sfc_ent *ent)
{
    gs_int r = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (r >= n) return;
    gs_int i = sfc_row(lower, n, r), first = r / B * B, k = 0;
    gs_int q0 = rowptr[i], q1 = rowptr[i + 1];
    for (gs_int t = 0; t < q1 - q0; t++) {
        gs_int q = lower ? q0 + t : q1 - 1 - t;
        gs_int j = col[q];
        if (j == i) continue;
        gs_int rj = sfc_row(lower, n, j);
        sfc_ent e;
        e.slot = rj >= first ? rj - first : slot_of_entry[q];
        e.pad = 0;
        e.val = val[q];
        ent[(size_t)k * (size_t)n + (size_t)r] = e;
        k++;
    }
    for (; k < w; k++) {
        sfc_ent e;
        e.slot = -1;
        e.pad = 0;
        e.val = 0.0;
        ent[(size_t)k * (size_t)n + (size_t)r] = e;
    }
}

struct sfc_dev {
    gs_int n, w, B, nchunks;
    const sfc_ent *__restrict__ ent;
    const double *__restrict__ dinv; /* by rank */
    const gs_int *__restrict__ ext_ptr;
    const gs_int *__restrict__ ext_rank;
    long long *ready; /* 2n: the values by rank of two generations */
    unsigned long long *ticket;
    unsigned idle_ns, poll_ns;
};

static __device__ __forceinline__ long long sfc_lds(const long long *p)
{
    long long v;
    asm volatile("ld.volatile.shared.b64 %0, [%1];" : "=l"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
    return v;
}

static __device__ __forceinline__ void sfc_sts(long long *p, long long v)
{
    asm volatile("st.volatile.shared.b64 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(p)), "l"(v) : "memory");
}

/* Block = one chunk (by ticket). Shared memory: the chunk's entries (w * B, slot k of local row l at
 * k * B + l), then the values: B of the chunk's rows, then one per external slot, all SF_EMPTY first.
 *   pollers: thread p owns external slots p + u * SFC_POLLERS (u < SFC_PSLOTS) and polls all of its
 *     pending ones every round (their readiness does not follow their order), copying each value into
 *     shared memory once it is solved; a round that delivered nothing ends with a short sleep;
 *   compute: thread t owns rows l = t + k * SFC_CT (k < RPT). A row waits on the slot of the entry at
 *     its cursor (entries in rank order: the oldest dependency first); a round reads one value per
 *     pending row, and only when some lane of the warp can progress does the warp consume, for each
 *     such row, its ready entries in order (deterministic sums) and solve the row at the end of its
 *     entries. A warp none of whose rows can progress sleeps briefly, leaving the issue slots to the
 *     warps on the critical path (spinning on shared memory would otherwise starve them). */
template <int RPT, bool LOWER>
static __global__ void __launch_bounds__(SFC_THREADS, 1)
    sfc_kernel(sfc_dev S, const double *__restrict__ b, double *__restrict__ x)
{
    extern __shared__ __align__(16) unsigned char sfc_smem[];
    __shared__ unsigned long long s_ticket;
    const int tid = (int)threadIdx.x;
    const gs_int B = S.B, w = S.w, n = S.n;
    if (tid == 0) s_ticket = atomicAdd(S.ticket, 1ULL);
    __syncthreads();
    const unsigned long long t = s_ticket, solve = t / (unsigned long long)S.nchunks;
    const gs_int c = (gs_int)(t - solve * (unsigned long long)S.nchunks), first = c * B;
    const gs_int rows = n - first < B ? n - first : B;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)n : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)n);
    const gs_int e0 = __ldg(S.ext_ptr + c), E = __ldg(S.ext_ptr + c + 1) - e0;
    sfc_ent *s_ent = (sfc_ent *)sfc_smem;
    long long *s_val = (long long *)(sfc_smem + (size_t)w * (size_t)B * sizeof(sfc_ent));

    for (gs_int k = 0; k < w; k++)
        for (gs_int l = tid; l < rows; l += SFC_THREADS)
            s_ent[k * B + l] = S.ent[(size_t)k * (size_t)n + (size_t)(first + l)];
    for (gs_int l = tid; l < B + E; l += SFC_THREADS) s_val[l] = SF_EMPTY;
    __syncthreads();

    if (tid >= SFC_CT) { /* poller */
        const gs_int pt = tid - SFC_CT;
        gs_int rk[SFC_PSLOTS];
        unsigned pend = 0;
#pragma unroll
        for (int u = 0; u < SFC_PSLOTS; u++) {
            const gs_int e = pt + u * SFC_POLLERS;
            rk[u] = e < E ? __ldg(S.ext_rank + e0 + e) : 0;
            if (e < E) pend |= 1u << u;
        }
        for (;;) {
            bool got = false;
            if (pend) {
                long long g[SFC_PSLOTS];
#pragma unroll
                for (int u = 0; u < SFC_PSLOTS; u++) g[u] = (pend >> u) & 1u ? gs_ts_ld_relaxed(cur + rk[u]) : SF_EMPTY;
#pragma unroll
                for (int u = 0; u < SFC_PSLOTS; u++)
                    if (((pend >> u) & 1u) && g[u] != SF_EMPTY) {
                        sfc_sts(s_val + B + pt + u * SFC_POLLERS, g[u]);
                        pend &= ~(1u << u);
                        got = true;
                    }
            }
            if (__all_sync(0xffffffffu, pend == 0)) break;
            if (!__any_sync(0xffffffffu, got) && S.poll_ns) __nanosleep(S.poll_ns);
        }
        return;
    }

    /* compute: s = b_i - (entries consumed so far); the row waits on slot wait[k] (entry cursor[k],
     * whose value is wval[k]); wait[k] < 0: all entries consumed */
    double s[RPT], dv[RPT], wval[RPT];
    gs_int cursor[RPT], wait[RPT];
    unsigned pending = 0;
#pragma unroll
    for (int k = 0; k < RPT; k++) {
        const gs_int l = tid + k * SFC_CT;
        s[k] = 0.0;
        dv[k] = 0.0;
        wval[k] = 0.0;
        cursor[k] = 0;
        wait[k] = -1;
        if (l < rows) {
            const gs_int r = first + l;
            s[k] = __ldg(b + sfc_row(LOWER, n, r));
            dv[k] = __ldg(S.dinv + r);
            if (w > 0) {
                const sfc_ent en = s_ent[l];
                wait[k] = en.slot;
                wval[k] = en.val;
            }
            pending |= 1u << k;
        }
    }
    for (;;) {
        long long v[RPT];
#pragma unroll
        for (int k = 0; k < RPT; k++) v[k] = sfc_lds(s_val + (wait[k] > 0 ? wait[k] : 0)); /* independent reads */
        unsigned ready = 0;
#pragma unroll
        for (int k = 0; k < RPT; k++)
            if (((pending >> k) & 1u) && (wait[k] < 0 || v[k] != SF_EMPTY)) ready |= 1u << k;
        if (__any_sync(0xffffffffu, ready != 0)) {
#pragma unroll
            for (int k = 0; k < RPT; k++) {
                if (!((ready >> k) & 1u)) continue;
                const gs_int l = tid + k * SFC_CT;
                gs_int e = cursor[k], slot = wait[k];
                long long val_bits = v[k];
                while (slot >= 0) { /* consume the ready entries in order */
                    s[k] -= wval[k] * __longlong_as_double(val_bits);
                    e++;
                    slot = -1;
                    if (e < w) {
                        const sfc_ent en = s_ent[e * B + l];
                        slot = en.slot;
                        wval[k] = en.val;
                        if (slot >= 0) {
                            val_bits = sfc_lds(s_val + slot);
                            if (val_bits == SF_EMPTY) break;
                        }
                    }
                }
                cursor[k] = e;
                wait[k] = slot;
                if (slot < 0) { /* all entries consumed: the row is solved */
                    const gs_int r = first + l;
                    const long long bits = sf_bits(s[k] * dv[k]);
                    sfc_sts(s_val + l, bits);
                    gs_ts_st_relaxed(cur + r, bits);
                    x[sfc_row(LOWER, n, r)] = __longlong_as_double(bits);
                    nxt[r] = SF_EMPTY;
                    pending &= ~(1u << k);
                }
            }
        } else if (S.idle_ns) {
            __nanosleep(S.idle_ns);
        }
        if (__all_sync(0xffffffffu, pending == 0)) break;
    }
}

typedef void (*sfc_kernel_fn)(sfc_dev, const double *, double *);

static sfc_kernel_fn sfc_pick(int rpt, bool lower)
{
    if (rpt >= 4) return lower ? sfc_kernel<4, true> : sfc_kernel<4, false>;
    if (rpt == 2) return lower ? sfc_kernel<2, true> : sfc_kernel<2, false>;
    return lower ? sfc_kernel<1, true> : sfc_kernel<1, false>;
}

#endif /* GS_TRISOLVE_TUNING: the chunked experiment */

/* ================================================================ host side */

#define SF_WARPS_PER_SM_WIDE 4 /* with more than 8 ELL entries per row: fewer pollers (run 1: 527 vs 589 us) */

typedef struct sf_data {
    /* level order */
    gs_ls_dplan D;
    int blocks, wmax;
    gs_int max_level_rows, rows_level0;
    /* both */
    long long *ready;
    unsigned long long *ticket;
    gs_int n;
    double time_analyse, time_upload, time_plan;
    bool chunked;
#ifdef GS_TRISOLVE_TUNING
    /* the chunked experiment */
    void *arena; /* ent, dinv, ext_ptr, ext_rank */
    sfc_ent *ent;
    double *cdinv;
    gs_int *ext_ptr, *ext_rank;
    gs_int w, B, rpt, nchunks, max_ext, n_ext;
    size_t smem;
    double far_fraction;
#endif
} sf_data;

static void sf_release(gs_trisolve *ts, sf_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
    gs_ls_dplan_free(be, &d->D);
#ifdef GS_TRISOLVE_TUNING
    if (d->arena) gs_backend_free(be, d->arena);
    d->arena = NULL;
    d->ent = NULL;
    d->cdinv = NULL;
    d->ext_ptr = d->ext_rank = NULL;
#endif
    gs_ts_free_array(be, &d->ready);
    gs_ts_free_array(be, &d->ticket);
}

#ifdef GS_TRISOLVE_TUNING
/* Carves 256-byte aligned pieces of one allocation; with base NULL it only adds up the size. */
struct sf_carver {
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

/* Scratch of the chunked analysis: per-row counts and offsets, 1/diagonal by rank, the external entries
 * as (chunk, column rank) keys and their sort, the unique slots, the CUB workspace. */
struct sfc_scratch {
    gs_int *ext_cnt, *ext_off, *qidx, *qidx_s, *flag, *uid1, *slot_of_entry, *ext_ptr, *ext_rank;
    unsigned long long *keys, *keys_s;
    double *dinv;
    int *max_ext;
    void *cub;
};

static size_t sfc_scratch_carve(char *base, gs_int n, gs_int nnz, gs_int E, gs_int nchunks, size_t cub_bytes,
                                sfc_scratch *S)
{
    sf_carver c = {base, 0};
    S->ext_cnt = c.take<gs_int>((size_t)n + 1);
    S->ext_off = c.take<gs_int>((size_t)n + 1);
    S->dinv = c.take<double>((size_t)n);
    S->keys = c.take<unsigned long long>((size_t)E);
    S->keys_s = c.take<unsigned long long>((size_t)E);
    S->qidx = c.take<gs_int>((size_t)E);
    S->qidx_s = c.take<gs_int>((size_t)E);
    S->flag = c.take<gs_int>((size_t)E);
    S->uid1 = c.take<gs_int>((size_t)E);
    S->slot_of_entry = c.take<gs_int>((size_t)nnz);
    S->ext_ptr = c.take<gs_int>((size_t)nchunks + 1);
    S->ext_rank = c.take<gs_int>((size_t)E);
    S->max_ext = c.take<int>(1);
    S->cub = c.take<char>(cub_bytes);
    return c.off;
}

/* The chunked plan of the uploaded factor with chunks of B rows (see the file comment). Sets *fits to
 * false (and keeps nothing) when a chunk's entries and values would not fit in shared memory or its
 * external slots in the pollers. The external entries are counted first (scratch sized for n rows and
 * no entries), then the scratch is sized for them. */
static gs_status sfc_build(gs_trisolve *ts, sf_data *d, const gs_ts_dcsr *A, gs_int B, size_t smem_limit, bool *fits)
{
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    void *count_mem = NULL, *scratch = NULL;
    sfc_scratch C0, S;
    const bool lower = ts->uplo == GS_LOWER;
    const gs_int n = A->n, w = d->w, nchunks = (n + B - 1) / B;
    const unsigned tpb = 256, nb = (unsigned)((n + 1 + tpb - 1) / tpb);
    size_t scan_bytes = 0, sort_bytes = 0, iscan_bytes = 0, cub_bytes = 0, smem = 0;
    gs_int E = 0, unique = 0;
    int max_ext = 0, cbits = 1;
    *fits = false;

    /* 1. external entries per row (rank), their offsets, the total; 1/diagonal by rank */
    GS_TRY(TS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1,
                                                 s)));
    GS_TRY(gs_backend_alloc(be, &count_mem, sfc_scratch_carve(NULL, n, 0, 0, 0, scan_bytes, &C0)));
    sfc_scratch_carve((char *)count_mem, n, 0, 0, 0, scan_bytes, &C0);
    sfc_count_kernel<<<nb, tpb, 0, s>>>(lower, n, B, A->rowptr, A->col, A->val, C0.ext_cnt, C0.dinv);
    GS_TRY(TS_LAUNCHED("sfc_count_kernel"));
    GS_TRY(TS_CUDA(cub::DeviceScan::ExclusiveSum(C0.cub, scan_bytes, (const gs_int *)C0.ext_cnt, C0.ext_off,
                                                 (int)n + 1, s)));
    GS_TRY(TS_CUDA(cudaMemcpyAsync(&E, C0.ext_off + n, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));

    /* 2. keys (chunk << 32 | rank of the column) of the external entries, sorted; unique slots */
    while (cbits < 31 && ((gs_int)1 << cbits) < nchunks) cbits++;
    if (E > 0) {
        GS_TRY(TS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const unsigned long long *)NULL,
                                                        (unsigned long long *)NULL, (const gs_int *)NULL,
                                                        (gs_int *)NULL, (int)E, 0, 32 + cbits, s)));
        GS_TRY(TS_CUDA(cub::DeviceScan::InclusiveSum(NULL, iscan_bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)E,
                                                     s)));
    }
    cub_bytes = sort_bytes > iscan_bytes ? sort_bytes : iscan_bytes;
    GS_TRY(gs_backend_alloc(be, &scratch, sfc_scratch_carve(NULL, 0, A->nnz, E, nchunks, cub_bytes, &S)));
    sfc_scratch_carve((char *)scratch, 0, A->nnz, E, nchunks, cub_bytes, &S);
    GS_TRY(TS_CUDA(cudaMemsetAsync(S.max_ext, 0, sizeof(int), s)));
    GS_TRY(TS_CUDA(cudaMemsetAsync(S.ext_ptr, 0, ((size_t)nchunks + 1) * sizeof(gs_int), s)));
    if (E > 0) {
        const unsigned eb = (unsigned)((E + tpb - 1) / tpb);
        sfc_keys_kernel<<<nb, tpb, 0, s>>>(lower, n, B, A->rowptr, A->col, C0.ext_off, S.keys, S.qidx);
        GS_TRY(TS_LAUNCHED("sfc_keys_kernel"));
        GS_TRY(TS_CUDA(cub::DeviceRadixSort::SortPairs(S.cub, sort_bytes, (const unsigned long long *)S.keys, S.keys_s,
                                                        (const gs_int *)S.qidx, S.qidx_s, (int)E, 0, 32 + cbits, s)));
        sfc_flags_kernel<<<eb, tpb, 0, s>>>(E, S.keys_s, S.flag);
        GS_TRY(TS_LAUNCHED("sfc_flags_kernel"));
        GS_TRY(TS_CUDA(cub::DeviceScan::InclusiveSum(S.cub, iscan_bytes, (const gs_int *)S.flag, S.uid1, (int)E, s)));
        sfc_chunkptr_kernel<<<eb, tpb, 0, s>>>(E, nchunks, S.keys_s, S.flag, S.uid1, S.ext_ptr, S.ext_rank);
        GS_TRY(TS_LAUNCHED("sfc_chunkptr_kernel"));
        sfc_map_kernel<<<eb, tpb, 0, s>>>(E, B, S.keys_s, S.qidx_s, S.uid1, S.ext_ptr, S.slot_of_entry, S.max_ext);
        GS_TRY(TS_LAUNCHED("sfc_map_kernel"));
        GS_TRY(TS_CUDA(cudaMemcpyAsync(&unique, S.ext_ptr + nchunks, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
    }
    GS_TRY(TS_CUDA(cudaMemcpyAsync(&max_ext, S.max_ext, sizeof(int), cudaMemcpyDeviceToHost, s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));

    /* 3. does a chunk fit in shared memory, and its external slots in the pollers? */
    smem = (size_t)w * (size_t)B * sizeof(sfc_ent) + ((size_t)B + (size_t)max_ext) * sizeof(long long);
    if (smem > smem_limit || max_ext > SFC_POLLERS * SFC_PSLOTS) goto cleanup; /* *fits stays false */

    /* 4. the plan: entries with their slots, 1/diagonal, external slots */
    {
        sf_carver c = {NULL, 0};
        c.take<sfc_ent>((size_t)w * (size_t)n);
        c.take<double>((size_t)n);
        c.take<gs_int>((size_t)nchunks + 1);
        c.take<gs_int>((size_t)unique);
        GS_TRY(gs_backend_alloc(be, &d->arena, c.off));
        c.base = (char *)d->arena;
        c.off = 0;
        d->ent = c.take<sfc_ent>((size_t)w * (size_t)n);
        d->cdinv = c.take<double>((size_t)n);
        d->ext_ptr = c.take<gs_int>((size_t)nchunks + 1);
        d->ext_rank = c.take<gs_int>((size_t)unique);
    }
    if (w > 0) {
        sfc_layout_kernel<<<nb, tpb, 0, s>>>(lower, n, B, w, A->rowptr, A->col, A->val, S.slot_of_entry, d->ent);
        GS_TRY(TS_LAUNCHED("sfc_layout_kernel"));
    }
    GS_TRY(TS_CUDA(cudaMemcpyAsync(d->cdinv, C0.dinv, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, s)));
    GS_TRY(TS_CUDA(cudaMemcpyAsync(d->ext_ptr, S.ext_ptr, ((size_t)nchunks + 1) * sizeof(gs_int),
                                   cudaMemcpyDeviceToDevice, s)));
    if (unique > 0)
        GS_TRY(TS_CUDA(cudaMemcpyAsync(d->ext_rank, S.ext_rank, (size_t)unique * sizeof(gs_int),
                                       cudaMemcpyDeviceToDevice, s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    d->B = B;
    d->nchunks = nchunks;
    d->max_ext = max_ext;
    d->n_ext = unique;
    d->smem = smem;
    *fits = true;
cleanup:
    if (count_mem || scratch) {
        if (cudaStreamSynchronize(s) != cudaSuccess) (void)cudaGetLastError();
        if (count_mem) gs_backend_free(be, count_mem);
        if (scratch) gs_backend_free(be, scratch);
    }
    if (st != GS_OK || !*fits) {
        if (d->arena) gs_backend_free(be, d->arena);
        d->arena = NULL;
        d->ent = NULL;
        d->cdinv = NULL;
        d->ext_ptr = d->ext_rank = NULL;
    }
    return st;
}

#endif /* GS_TRISOLVE_TUNING */

/* The level-order plan (entry columns as positions) and its persistent grid: SF_WARPS_PER_SM warps per
 * multiprocessor (SF_WARPS_PER_SM_WIDE for rows of more than 8 ELL entries: their polls load L2 more),
 * at most the resident ones and one per 32 rows. */
static gs_status sfl_build(gs_trisolve *ts, sf_data *d, const gs_ts_dcsr *A, int sms)
{
    gs_backend *be = ts->be;
    GS_CALL(gs_ls_dplan_build(be, A, ts->uplo, SF_ELL_MAX, true, &d->D));
    d->max_level_rows = 0;
    for (gs_int l = 0; l < d->D.nlevels; l++) {
        gs_int rows = d->D.h_level_ptr[l + 1] - d->D.h_level_ptr[l];
        if (rows > d->max_level_rows) d->max_level_rows = rows;
    }
    d->rows_level0 = d->D.nlevels > 0 ? d->D.h_level_ptr[1] : 0;
    d->wmax = d->D.ell_width <= 4 ? 4 : d->D.ell_width <= 8 ? 8 : 16;
    int per_sm = 0;
    GS_CALL(TS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sf_pick(d->wmax), SF_BLOCK, 0)));
    long long want_per_sm = (d->wmax > 8 ? SF_WARPS_PER_SM_WIDE : SF_WARPS_PER_SM) / (SF_BLOCK / 32);
#ifdef GS_TRISOLVE_TUNING
    if (getenv("GS_SF_WPSM")) want_per_sm = atoi(getenv("GS_SF_WPSM")) / (SF_BLOCK / 32);
#endif
    if (per_sm > 0 && want_per_sm > per_sm) want_per_sm = per_sm;
    if (want_per_sm < 1) want_per_sm = 1;
    long long chunks = ((long long)d->D.n + 31) / 32, blocks = (long long)sms * want_per_sm;
    long long need = (chunks + SF_BLOCK / 32 - 1) / (SF_BLOCK / 32);
    if (blocks > need) blocks = need;
    if (blocks < 1) blocks = 1;
    d->blocks = (int)blocks;
    return GS_OK;
}

#ifdef GS_TRISOLVE_TUNING
/* The chunked experiment when asked for (GS_SF_MODE=chunked) and applicable: rows of at most
 * SFC_MAX_WIDTH entries, at most 1% of the entries reaching further back than a quarter of the rows in
 * flight, a chunk that fits in shared memory (halving the chunk once if not). */
static gs_status sfc_try(gs_trisolve *ts, sf_data *d, const gs_ts_dcsr *A, int sms, int smem_optin)
{
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    gs_status st = GS_OK;
    sfc_stats hs;
    void *p = NULL;
    memset(&hs, 0, sizeof hs);
    if (!getenv("GS_SF_MODE") || strcmp(getenv("GS_SF_MODE"), "chunked") != 0 || A->n == 0) return GS_OK;
    GS_TRY(gs_backend_alloc(be, &p, sizeof(sfc_stats)));
    GS_TRY(TS_CUDA(cudaMemsetAsync(p, 0, sizeof(sfc_stats), s)));
    sfc_stats_kernel<<<(unsigned)((A->n + 255) / 256), 256, 0, s>>>(A->n, A->rowptr, A->col, (sfc_stats *)p);
    GS_TRY(TS_LAUNCHED("sfc_stats_kernel"));
    GS_TRY(TS_CUDA(cudaMemcpyAsync(&hs, p, sizeof hs, cudaMemcpyDeviceToHost, s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    {
        gs_int w = hs.max_len, rpt = w <= 2 ? 4 : w <= 4 ? 2 : 1, B = SFC_CT * rpt;
        long long far_limit = (long long)sms * B / 4;
        unsigned long long far = 0;
        for (int k = 1; k < 33; k++)
            if ((1LL << (k - 1)) > far_limit) far += hs.dist_hist[k];
        d->far_fraction = hs.nnz_off ? (double)far / (double)hs.nnz_off : 0.0;
        if (hs.max_len > SFC_MAX_WIDTH || d->far_fraction > 0.01) goto cleanup;
        size_t limit = (size_t)smem_optin > 1024 ? (size_t)smem_optin - 1024 : 0; /* static shared memory */
        for (int attempt = 0; attempt < 2 && !d->chunked; attempt++, B /= 2) {
            bool fits = false;
            d->w = w;
            d->rpt = rpt;
            GS_TRY(sfc_build(ts, d, A, B, limit, &fits));
            d->chunked = fits;
        }
        if (d->chunked)
            GS_TRY(TS_CUDA(cudaFuncSetAttribute((const void *)sfc_pick(d->rpt, ts->uplo == GS_LOWER),
                                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)d->smem)));
    }
cleanup:
    if (p) gs_backend_free(be, p);
    return st;
}
#endif

static gs_status sf_analyse(gs_trisolve *ts, const gs_csr *T)
{
    sf_data *d = (sf_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    cudaStream_t s = gs_ts_stream(be);
    gs_ts_dcsr A;
    double t0 = gs_wtime(), t1;
    int dev = 0, sms = 0, smem_optin = 0;

    memset(&A, 0, sizeof A);
    sf_release(ts, d);
    d->chunked = false;
    GS_TRY(gs_ts_dcsr_upload(be, T, &A));
    d->time_upload = A.time_upload;
    t1 = gs_wtime();
    d->n = A.n;
    GS_TRY(TS_CUDA(cudaGetDevice(&dev)));
    GS_TRY(TS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)));
    GS_TRY(TS_CUDA(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)));
#ifdef GS_TRISOLVE_TUNING
    GS_TRY(sfc_try(ts, d, &A, sms, smem_optin));
#else
    (void)smem_optin;
#endif
    if (!d->chunked) GS_TRY(sfl_build(ts, d, &A, sms));
    gs_ts_dcsr_free(be, &A);
    {
        /* two generations of ready values, all SF_EMPTY; the ticket counter from 0 */
        void *p = NULL;
        size_t n = (size_t)d->n;
        GS_TRY(gs_backend_alloc(be, &p, 2 * n * sizeof(long long)));
        d->ready = (long long *)p;
        p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(unsigned long long)));
        d->ticket = (unsigned long long *)p;
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->ready, 0xFF, 2 * n * sizeof(long long), s)));
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->ticket, 0, sizeof(unsigned long long), s)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    }
    d->time_plan = gs_wtime() - t1;
    d->time_analyse = gs_wtime() - t0;
#ifdef GS_TRISOLVE_TUNING
    if (d->chunked)
        fprintf(stderr, "[sf] chunked n %d w %d B %d rpt %d chunks %d ext %d (max/chunk %d) smem %zu far %.4f | "
                "analyse %.3f ms: upload %.3f plan %.3f\n", (int)d->n, (int)d->w, (int)d->B, (int)d->rpt,
                (int)d->nchunks, (int)d->n_ext, (int)d->max_ext, d->smem, d->far_fraction, 1e3 * d->time_analyse,
                1e3 * d->time_upload, 1e3 * d->time_plan);
    else
        fprintf(stderr, "[sf] level n %d levels %d w %d rem %d wmax %d blocks %d | analyse %.3f ms: upload %.3f "
                "levels %.3f layout %.3f\n", (int)d->n, (int)d->D.nlevels, (int)d->D.ell_width, (int)d->D.rem_nnz,
                d->wmax, d->blocks, 1e3 * d->time_analyse, 1e3 * d->time_upload, 1e3 * d->D.time_levels,
                1e3 * d->D.time_layout);
#endif
cleanup:
    gs_ts_dcsr_free(be, &A);
    if (st != GS_OK) sf_release(ts, d);
    return st;
}

static gs_status sf_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    sf_data *d = (sf_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
#ifdef GS_TRISOLVE_TUNING
    if (d->chunked) {
        sfc_dev C;
        C.n = d->n;
        C.w = d->w;
        C.B = d->B;
        C.nchunks = d->nchunks;
        C.ent = d->ent;
        C.dinv = d->cdinv;
        C.ext_ptr = d->ext_ptr;
        C.ext_rank = d->ext_rank;
        C.ready = d->ready;
        C.ticket = d->ticket;
        C.idle_ns = getenv("GS_SFC_SLEEP") ? (unsigned)atoi(getenv("GS_SFC_SLEEP")) : SFC_IDLE_NS;
        C.poll_ns = getenv("GS_SFC_PSLEEP") ? (unsigned)atoi(getenv("GS_SFC_PSLEEP")) : SFC_POLL_NS;
        sfc_pick(d->rpt, ts->uplo == GS_LOWER)<<<(unsigned)d->nchunks, SFC_THREADS, d->smem, s>>>(C, b->data,
                                                                                                  x->data);
        GS_CALL(TS_LAUNCHED("sfc_kernel"));
        return GS_OK;
    }
#endif
    /* one launch: the persistent warps solve the rows of the plan in level order, x = T^{-1} b */
    sf_dev S;
    S.n = d->D.n;
    S.w = d->D.ell_width;
    S.has_rem = d->D.rem_nnz > 0;
    S.nchunks = ((unsigned long long)d->D.n + 31ULL) / 32ULL;
    S.per_solve = S.nchunks + (unsigned long long)d->blocks * (SF_BLOCK / 32);
    S.perm = d->D.perm;
    S.ell_col = d->D.ell_col;
    S.ell_val = d->D.ell_val;
    S.rem_ptr = d->D.rem_ptr;
    S.rem_col = d->D.rem_col;
    S.rem_val = d->D.rem_val;
    S.dinv = d->D.dinv;
    S.ready = d->ready;
    S.ticket = d->ticket;
#ifdef GS_TRISOLVE_TUNING
    S.sleep_ns = getenv("GS_SF_SLEEP") ? (unsigned)atoi(getenv("GS_SF_SLEEP")) : 0u;
#endif
    sf_pick(d->wmax)<<<(unsigned)d->blocks, SF_BLOCK, 0, s>>>(S, b->data, x->data);
    GS_CALL(TS_LAUNCHED("sf_kernel"));
    return GS_OK;
}

static void sf_destroy(gs_trisolve *ts)
{
    sf_data *d = (sf_data *)ts->data;
    if (!d) return;
    sf_release(ts, d);
    gs_free(&ts->data);
}

static void sf_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const sf_data *d = (const sf_data *)ts->data;
    gs_ts_report_double(rep, prefix, "upload_time", d->time_upload);
    gs_ts_report_double(rep, prefix, "plan_time", d->time_plan);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
#ifdef GS_TRISOLVE_TUNING
    if (d->chunked) {
        gs_ts_report_string(rep, prefix, "implementation", "cuda sync-free, chunked natural order (experiment)");
        gs_ts_report_int(rep, prefix, "chunk_rows", d->B);
        gs_ts_report_int(rep, prefix, "chunks", d->nchunks);
        gs_ts_report_int(rep, prefix, "external_slots", d->n_ext);
        return;
    }
#endif
    const gs_ls_dplan *D = &d->D;
    gs_ts_report_string(rep, prefix, "implementation",
                        "cuda sync-free (GPU analysis; rows in level order, a thread per row spinning on the "
                        "values it reads; persistent warps taking 32 rows per ticket)");
    gs_ts_report_int(rep, prefix, "levels", D->nlevels);
    gs_ts_report_int(rep, prefix, "max_rows_per_level", d->max_level_rows);
    gs_ts_report_double(rep, prefix, "avg_rows_per_level", D->nlevels ? (double)D->n / D->nlevels : 0.0);
    gs_ts_report_int(rep, prefix, "rows_without_dependencies", d->rows_level0);
    gs_ts_report_int(rep, prefix, "nnz_offdiag", D->nnz_off);
    gs_ts_report_int(rep, prefix, "max_row_length", D->max_row_length);
    gs_ts_report_int(rep, prefix, "ell_width", D->ell_width);
    gs_ts_report_int(rep, prefix, "remainder_nnz", D->rem_nnz);
    gs_ts_report_int(rep, prefix, "warps", (long long)d->blocks * (SF_BLOCK / 32));
    gs_ts_report_int(rep, prefix, "threads_per_block", SF_BLOCK);
    gs_ts_report_double(rep, prefix, "level_time", D->time_levels);
    gs_ts_report_double(rep, prefix, "layout_time", D->time_layout);
}

static const gs_trisolve_ops sf_ops = {sf_analyse, sf_solve, sf_destroy, sf_view};

gs_status gs_trisolve_create_syncfree_cuda(gs_trisolve *ts)
{
    sf_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_ARG, "syncfree_cuda needs a cuda backend");
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &sf_ops;
    return GS_OK;
}
