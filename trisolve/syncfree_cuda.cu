/* Sync-free triangular solve on the GPU, x = T^{-1} b, in ONE kernel without any barrier: every row
 * starts as soon as the rows it reads are solved, x_i = (b_i - sum_{j != i} t_ij x_j) * (1/t_ii). This file
 * holds the kernels and their launches; the analysis and the solver's operations are in
 * syncfree_analysis_cuda.cu.
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
 * Schedule: the level-set plan built on the GPU (gs_ts_analysis_run) with entry columns given as
 * POSITIONS: rows renumbered level by level, so that the rows taken together become ready together and
 * no warp holds rows far from the wavefront. A persistent grid of warps (GS_SF_WARPS_PER_SM per SM) takes
 * 32 positions per ticket (the next ticket is requested while the chunk is solved) and solves them a
 * thread per row, each spinning on the ready values of its pending entries (all polled in parallel,
 * the sum formed in entry order once all are there). Any row length (ELL part of at most GS_SF_ELL_MAX
 * entries + CSR remainder read 4 at a time), any structure. Plans whose levels are wider than what that
 * grid holds run a block per GS_SF_BLOCK positions instead, one ticket per block (sf_once_kernel).
 *
 * Warp runs (chosen by gs_ts_syncfree_rule, syncfree_rules.c, after T's row levels; sf_wrun_kernel below): a
 * warp per run of up to GS_SF_WRUN_ROWS strictly linked rows, the run's recurrence solved by a scan over
 * the lanes; the GPU analysis builds the plan with run_rows = GS_SF_WRUN_ROWS.
 *
 * Run schedule (forced by the parameters only, syncfree.schedule = runs: slower than the level order):
 * the units renumbered level by level are runs of up to GS_SF_RUN_ROWS consecutive rows, each reading
 * the row before it (syncfree_kernels.h; syncfree_ref.c is the host twin of the plan and of the
 * arithmetic). A thread takes a run and solves its rows in order, passing the value of a row to the
 * next in a register; all ELL values of the run's rows are polled together, so a row whose predecessor
 * has just been solved usually finds its other values there. On a PDE factor in natural order a run
 * level covers up to GS_SF_RUN_ROWS row levels along a grid line: fewer cross-SM hops on the critical
 * path (poisson2d 1024^2: 2047 row levels, 1279 run levels).
 *
 * Merged schedule (merge_kernels.h, merge_ref.c; chosen by gs_ts_syncfree_merge_rule, syncfree_rules.c, from
 * T's level plan): m consecutive levels form a group, x = M^{-1} (T_D^{-1} b) with M = I + T_D^{-1} T_O,
 * T_D and M built on the GPU (merge_cuda.cu); two stages, each a level-order plan solved by this kernel
 * (y between them), m and ceil(levels / m) levels instead of `levels` (poisson2d 1024^2 m = 16: 16 + 128
 * levels for 2047). A first stage of at most GS_SF_TD_SYNC_LEVELS levels runs a plain launch per level, or one
 * launch for at most two (sf_td2_kernel, m = 2 on the 3D factors); and when its rows have at most
 * GS_SF_FOLD_MAX entries (the 3D factors), it is folded into M's kernel instead: each M row forms its own
 * y_i from b and a fold table by M position (sf_fold_table_kernel, sf_chunk's FOLD; sf_td2_kernel's
 * operations, so the same bits), one launch per solve (H100, poisson3d with the merged schedule forced,
 * L+U: 375 us folded, 430 with a launch of its own for the first stage).
 *
 * Wide rows (the grid rules of syncfree_rules.c, docs/notes-trisolve.md section 4.2): rows of more than 8 ELL
 * entries are shared by 2 or 4 lanes (sf_split_chunk: each polls a slice of the entries, the partial sums
 * meet in a butterfly of shuffles), so a lane issues fewer polls per round; in large level-order plans
 * with a remainder, the first SF_REM_PREFETCH remainder entries (SF_SPLIT_REM_PREFETCH with lanes per row,
 * held by sub-lane 0) are polled with the ELL part (RP of sf_chunk, sf_split_chunk) instead of after it,
 * which keeps a row slightly longer than the ELL width from adding a round trip (2D merged M: every
 * critical row has 17 entries with an ELL width of 16; with lanes per row, L+U 581 us with the early
 * remainder, 671 without).
 *
 * Cost: one dependency hop between SMs (store, polling load, return) is ~0.4 us on the H100 in isolation
 * and ~0.65 us per level at scale, so a solve costs ~levels x hop (docs/notes-trisolve.md section 1); the
 * bytes are a small term.
 *
 * Precision (preconditioner.precision): the plan stores its values (ELL, remainder, 1/diagonal) in double,
 * or in float with "single" (the kernels are instantiated for both value types): each value is widened
 * to double where it is used, so b, x, the sums and the published ready values stay double,
 * x_i = (b_i - sum_j (double)l_ij_f x_j) * (double)dinv_f_i; only the value bytes read are halved.
 *
 * Not used (docs/notes-trisolve.md section 7): a chunked natural-order schedule with dependencies inside
 * a chunk through shared memory is slower on every benchmark factor (a step inside a chunk that carries
 * real row data costs about what an L2 hop costs). */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/syncfree_cuda.h"

/* SF_EMPTY, sf_hi_empty, sf_bits: the ready values' conventions (trisolve_cuda.h) */

/* ================================================================ level-order schedule */

#define SF_REM_PREFETCH 4  /* remainder entries per row polled with the ELL part (sf_chunk's RP) */
#ifndef SF_SPLIT_REM_PREFETCH
#define SF_SPLIT_REM_PREFETCH 1 /* ... the same with lanes per row (sf_split_chunk's RP, sub-lane 0's slots) */
#endif

/* V: the type the plan stores its values in (double, or float with preconditioner.precision = "single");
 * they are widened to double where they are used, so the arithmetic is double either way. */
template <typename V>
struct sf_dev {
    gs_int n, w; /* n: positions (rows in level order; run_rows x runs for runs) */
    gs_int nunits; /* rows, or runs (the position stride of a run's rows) */
    bool has_rem;
    unsigned long long nchunks, per_solve; /* per_solve = K = nchunks + warps */
    const gs_int *__restrict__ perm;
    const gs_int *__restrict__ ell_col; /* positions */
    const V *__restrict__ ell_val;
    const gs_int *__restrict__ rem_ptr;
    const gs_int *__restrict__ rem_col;
    const V *__restrict__ rem_val;
    const V *__restrict__ dinv;
    long long *ready; /* 2n: the values by position of two generations */
    unsigned long long *ticket;
    /* merged, T_D folded into M (sf_fold_table_kernel): by M position, up to fold_w entries
     * (b index, t_ij, 1/t_jj of T_D; b index -1: none) and 1/t_ii of T_D */
    int fold_w;
    const gs_int *__restrict__ fold_b;
    const V *__restrict__ fold_t, *__restrict__ fold_d, *__restrict__ fold_di;
};

/* The first RP remainder entries of position p into slots c[0..RP-1], v[0..RP-1] (the caller passes its
 * slots after the ELL part), the remainder cursor rq past them and its end r1: read with the row's static
 * data, so that they are polled with the ELL part from the first round (sf_chunk's and sf_split_chunk's RP). */
template <int RP, typename V>
static __device__ __forceinline__ void sf_rem_head(const sf_dev<V> &S, gs_int p, gs_int *c, V *v, gs_int &rq, gs_int &r1)
{
    rq = __ldg(S.rem_ptr + p);
    r1 = __ldg(S.rem_ptr + p + 1);
#pragma unroll
    for (int u = 0; u < RP; u++)
        if (rq < r1) {
            c[u] = __ldg(S.rem_col + rq);
            v[u] = __ldg(S.rem_val + rq);
            rq++;
        }
}

/* s = s0 - v[0] g[0] - v[1] g[1] - ... in slot order, over ALL N slots: an unused slot holds v = +0 and
 * g = +0 (bits 0), whose product subtracts +0 and leaves s exactly as it is (also when s is -0), so the result
 * is the same bits as skipping it. No test per slot: a select after each product would put a dependent
 * FSEL pair on the critical path of every row (warp runs, H100, us per factor: laplace27 288 without the
 * tests, 362 with them; poisson3d 155 and 171; docs/notes-trisolve.md section 1). */
template <int N, typename V>
static __device__ __forceinline__ double sf_sub_all(double s0, const V *v, const long long *g)
{
    double s = s0;
#pragma unroll
    for (int k = 0; k < N; k++) s -= (double)v[k] * __longlong_as_double(g[k]);
    return s;
}

/* The polling loops of the level-order and run kernels, written once. They are macros rather than functions:
 * the same tokens at every use give the machine code of the loops written out in place, which a
 * __forceinline__ function with reference parameters does not (it schedules the kernels differently), and
 * these kernels' timings depend on it (docs/notes-trisolve.md section 1).
 *
 * SF_POLL_ROUND: one polling round over the N slots of a row: a slot still empty is polled into its own
 * register (a predicated load, nothing moved), then one compare per slot says in `all` (declared here)
 * whether all are there. A round's instructions are on the critical path: no pending mask, no selects. */
#define SF_POLL_ROUND(N, cur, c, g, all)                                                                  \
    _Pragma("unroll") for (int k = 0; k < (N); k++) if (sf_hi_empty((g)[k])) (g)[k] =                   \
        gs_gpu_ld_relaxed((cur) + (c)[k]);                                                               \
    bool all = true;                                                                                     \
    _Pragma("unroll") for (int k = 0; k < (N); k++) all &= !sf_hi_empty((g)[k]);

/* SF_REM_POLL: a row's remainder entries rq .. r1-1 in order, as far as they are solved, 4 reads at a time:
 * s -= v x for each, rq moved past them; it stops at a value not solved yet (or the end: rq = r1). POLL(j)
 * gives the bits of the value at position j >= 0 (SF_EMPTY while it is not solved): SF_POLL_READY reads
 * every value from the ready array cur; the run kernel also takes its previous row's value from a
 * register. */
#define SF_REM_POLL(S, rq, r1, s, POLL)                                                                  \
    while ((rq) < (r1)) {                                                                                \
        gs_int j_[4];                                                                                    \
        long long g_[4];                                                                                 \
        double rv_[4];                                                                                   \
        _Pragma("unroll") for (int u = 0; u < 4; u++)                                                    \
        {                                                                                                \
            j_[u] = (rq) + u < (r1) ? __ldg((S).rem_col + (rq) + u) : -1;                                \
            rv_[u] = (rq) + u < (r1) ? (double)__ldg((S).rem_val + (rq) + u) : 0.0;                      \
        }                                                                                                \
        _Pragma("unroll") for (int u = 0; u < 4; u++) g_[u] = POLL(j_[u]);                               \
        int adv_ = 0;                                                                                    \
        _Pragma("unroll") for (int u = 0; u < 4; u++) if (adv_ == u && j_[u] >= 0 && g_[u] != SF_EMPTY)  \
        {                                                                                                \
            (s) -= rv_[u] * __longlong_as_double(g_[u]);                                                 \
            adv_++;                                                                                      \
        }                                                                                                \
        (rq) += adv_;                                                                                    \
        if (adv_ < 4) break; /* a value not solved yet (or the end): next round */                       \
    }
#define SF_POLL_READY(j) ((j) >= 0 ? gs_gpu_ld_relaxed(cur + (j)) : SF_EMPTY)

/* Row i at position p solved: x_i = s * dinv written, its ready value published at GPU scope (sf_bits), the
 * next solve's slot reset; the published value returned. */
static __device__ __forceinline__ double sf_publish(double *__restrict__ x, gs_int i, long long *cur, long long *nxt,
                                                    gs_int p, double v)
{
    long long bits = sf_bits(v);
    x[i] = __longlong_as_double(bits);
    gs_gpu_st_relaxed(cur + p, bits);
    nxt[p] = SF_EMPTY;
    return __longlong_as_double(bits);
}

/* Position p = 32 * chunk + lane (one row per lane): x[perm[p]] = (b[perm[p]] - ELL entries in order -
 * remainder entries in order) * dinv[p], each entry's x read from this generation's ready array (cur)
 * once it is no longer SF_EMPTY; the value is published in cur[p] and nxt[p] is reset for the next
 * solve. RP > 0 (plans with a remainder): the first RP remainder entries of the row are loaded with the
 * ELL part and polled with it from the first round, so that a row with a few entries past the ELL width
 * does not add a dependent load and a polling round trip to its level once its ELL values are there;
 * the rest of the remainder (rows longer than w + RP) is read 4 at a time afterwards. Same order of the
 * arithmetic either way. FOLD (merged schedule, T_D of two levels): b is the right-hand side of T, and the
 * row forms its y_i = (b_i - sum_j t_ij (b_j * (1/t_jj))) * (1/t_ii) from the fold table (sf_td2_kernel's
 * operations in its order: the same bits) instead of reading it from a first stage. */
template <int WMAX, int RP, typename V, bool FOLD = false, bool REM = true>
static __device__ __forceinline__ void sf_chunk(const sf_dev<V> &S, const double *__restrict__ b,
                                                double *__restrict__ x, long long *cur, long long *nxt, gs_int p)
{
    constexpr int NS = WMAX + RP; /* entry slots: the ELL part, then the first RP remainder entries */
    const bool active = p < S.n;
    gs_int i = 0, c[NS], rq = 0, r1 = 0;
    V v[NS];
    long long g[NS]; /* the polled values (bits), SF_EMPTY until they arrive; 0 for unused slots */
    double bi = 0.0, di = 0.0;
#pragma unroll
    for (int k = 0; k < NS; k++) {
        c[k] = -1;
        v[k] = (V)0;
    }
    if (active) {
        i = __ldg(S.perm + p);
        if constexpr (FOLD) {
            gs_int fb[GS_SF_FOLD_MAX];
            V ft[GS_SF_FOLD_MAX], fd[GS_SF_FOLD_MAX];
#pragma unroll
            for (int k = 0; k < GS_SF_FOLD_MAX; k++) {
                fb[k] = -1;
                if (k < S.fold_w) {
                    const size_t q = (size_t)k * (size_t)S.n + (size_t)p;
                    fb[k] = __ldg(S.fold_b + q);
                    ft[k] = __ldg(S.fold_t + q);
                    fd[k] = __ldg(S.fold_d + q);
                }
            }
            double sy = __ldg(b + i);
#pragma unroll
            for (int k = 0; k < GS_SF_FOLD_MAX; k++)
                if (fb[k] >= 0) sy -= (double)ft[k] * (__ldg(b + fb[k]) * (double)fd[k]);
            bi = sy * (double)__ldg(S.fold_di + p);
        } else {
            bi = __ldg(b + i);
        }
        di = (double)__ldg(S.dinv + p);
#pragma unroll
        for (int k = 0; k < WMAX; k++)
            if (k < S.w) {
                size_t q = (size_t)k * (size_t)S.n + (size_t)p;
                c[k] = __ldg(S.ell_col + q);
                v[k] = __ldg(S.ell_val + q);
            }
        if constexpr (REM)
            if (S.has_rem) sf_rem_head<RP>(S, p, c + WMAX, v + WMAX, rq, r1);
    }
#pragma unroll
    for (int k = 0; k < NS; k++) g[k] = c[k] >= 0 ? SF_EMPTY : 0LL;
    bool done = !active, ell_done = false;
    double s = 0.0;
    for (;;) {
        if (!done) {
            SF_POLL_ROUND(NS, cur, c, g, all)
            if (all) {
                if (!ell_done) { /* the ELL entries in order, then the remainder's first RP (sf_sub_all) */
                    s = sf_sub_all<NS>(bi, v, g);
                    ell_done = true;
                }
                /* then the remainder in order, as far as it is solved (plans with one) */
                if constexpr (REM) SF_REM_POLL(S, rq, r1, s, SF_POLL_READY)
                if (rq >= r1) {
                    sf_publish(x, i, cur, nxt, p, s * di);
                    done = true;
                }
            }
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
}

/* LPR > 1 lanes per row (rows with many entries): the row at position p = (32 / LPR) * chunk + lane / LPR
 * is shared by LPR consecutive lanes; sub-lane l polls ELL entries l, l + LPR, l + 2 LPR, ... (WL at most)
 * and sums them in that order (t_l); once every sub-lane of the row has its values, the partial sums are
 * added by a butterfly of shuffles (the same value in every sub-lane, the same order in every solve), and
 * sub-lane 0 forms s = b - sum, goes through the remainder in order like sf_chunk and publishes. Fewer
 * polls per lane and round than a lane holding the whole row. RP > 0: sub-lane 0 also holds the first RP
 * remainder entries in slots of its own, polled from the first round and subtracted right after the
 * butterfly's total, in order (the same arithmetic as the remainder loop). */
template <int WL, int LPR, typename V, int RP, bool REM = true>
static __device__ __forceinline__ void sf_split_chunk(const sf_dev<V> &S, const double *__restrict__ b,
                                                      double *__restrict__ x, long long *cur, long long *nxt,
                                                      gs_int p, unsigned lane)
{
    const unsigned sub = lane % LPR, grp = lane - sub;
    const unsigned rowmask = ((1u << LPR) - 1u) << grp;
    const bool active = p < S.n;
    constexpr int NS = WL + RP; /* entry slots: WL of the ELL part, then (sub-lane 0) the remainder's first RP */
    gs_int i = 0, c[NS], rq = 0, r1 = 0;
    V v[NS];
    long long g[NS]; /* the polled values (bits), SF_EMPTY until they arrive; 0 for unused slots */
    double bi = 0.0, di = 0.0;
#pragma unroll
    for (int k = 0; k < NS; k++) {
        c[k] = -1;
        v[k] = (V)0;
    }
    if (active) {
        if (sub == 0) {
            i = __ldg(S.perm + p);
            bi = __ldg(b + i);
            di = (double)__ldg(S.dinv + p);
            if constexpr (REM)
                if (S.has_rem) sf_rem_head<RP>(S, p, c + WL, v + WL, rq, r1);
        }
#pragma unroll
        for (int k = 0; k < WL; k++) {
            const int e = (int)sub + k * LPR;
            if (e < S.w) {
                size_t q = (size_t)e * (size_t)S.n + (size_t)p;
                c[k] = __ldg(S.ell_col + q);
                v[k] = __ldg(S.ell_val + q);
            }
        }
    }
    /* unused slots: g = -0 in the ELL part (added: t + (+0 * -0) = t exactly, also when t is -0), +0 in the
     * remainder's (subtracted, as in sf_sub_all) */
#pragma unroll
    for (int k = 0; k < NS; k++) g[k] = c[k] >= 0 ? SF_EMPTY : k < WL ? SF_NEG_ZERO : 0LL;
    bool done = !active, tdone = !active, comb = !active;
    double t = 0.0, s = 0.0;
    for (;;) {
        if (!tdone) {
            SF_POLL_ROUND(NS, cur, c, g, all)
            if (all) { /* every slot, no test (sf_sub_all) */
#pragma unroll
                for (int k = 0; k < WL; k++) t += (double)v[k] * __longlong_as_double(g[k]);
                tdone = true;
            }
        }
        const unsigned ready = __ballot_sync(0xffffffffu, tdone);
        double tot = t;
#pragma unroll
        for (int o = 1; o < LPR; o <<= 1) tot += __shfl_xor_sync(0xffffffffu, tot, o);
        if (!comb && (ready & rowmask) == rowmask) {
            comb = true;
            if (sub == 0) s = sf_sub_all<RP>(bi - tot, v + WL, g + WL); /* the remainder's first RP, polled with
                                                                            the ELL part */
            else done = true;
        }
        /* sub-lane 0: the remainder in order, as far as it is solved (sf_chunk's). These kernels' timings
         * are sensitive to code layout (docs/notes-trisolve.md section 1): a change here is measured A/B. */
        if (comb && !done) {
            if constexpr (REM) SF_REM_POLL(S, rq, r1, s, SF_POLL_READY)
            if (rq >= r1) {
                sf_publish(x, i, cur, nxt, p, s * di);
                done = true;
            }
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
}

/* ================================================================ run schedule
 *
 * Lane = the run at run position rp = 32 * chunk + lane: its rows k = 0 .. len-1 at positions
 * p_k = k * nunits + rp, solved in order, x[perm[p_k]] = (b - ELL entries in order - remainder entries
 * in order) * dinv[p_k] like sf_chunk. All ELL entries of all K rows are loaded at the start and their
 * ready values polled together in each round (so that a row whose predecessor in the run has just
 * finished finds its other values already there); the entry that reads the run's previous row (column
 * p_{k-1}) takes the value from a register instead. Rows are finished in order within a round as far as
 * their values are known; a row's remainder is read when it is the next row, 4 values at a time. */
template <int K, int W, typename V>
static __device__ __forceinline__ void sf_run_chunk(const sf_dev<V> &S, const double *__restrict__ b,
                                                    double *__restrict__ x, long long *cur, long long *nxt, gs_int rp)
{
    const bool active = rp < S.nunits;
    gs_int pos[K], row[K], c[K][W];
    double bi[K], di[K], xv[K][W];
    V v[K][W];
    unsigned pend = 0; /* bit k*W + e: ELL entry e of row k waits for a value from another thread */
    int len = 0;
#pragma unroll
    for (int k = 0; k < K; k++) {
        pos[k] = k * S.nunits + rp;
        row[k] = -1;
        bi[k] = 0.0;
        di[k] = 0.0;
#pragma unroll
        for (int e = 0; e < W; e++) {
            c[k][e] = -1;
            v[k][e] = (V)0;
            xv[k][e] = 0.0;
        }
    }
    if (active) {
#pragma unroll
        for (int k = 0; k < K; k++) {
            row[k] = __ldg(S.perm + pos[k]);
            if (row[k] >= 0 && len == k) len = k + 1; /* a run's rows fill its first positions */
        }
#pragma unroll
        for (int k = 0; k < K; k++)
            if (k < len) {
                bi[k] = __ldg(b + row[k]);
                di[k] = (double)__ldg(S.dinv + pos[k]);
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (e < S.w) {
                        size_t q = (size_t)e * (size_t)S.n + (size_t)pos[k];
                        c[k][e] = __ldg(S.ell_col + q);
                        v[k][e] = __ldg(S.ell_val + q);
                    }
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (c[k][e] >= 0 && !(k > 0 && c[k][e] == pos[k > 0 ? k - 1 : 0])) pend |= 1u << (k * W + e);
            }
    }
    bool done = !active || len == 0, started = false;
    int kc = 0;                /* the next row of the run */
    double s = 0.0, prev = 0.0; /* the partial sum of row kc; the value of row kc-1 */
    gs_int rq = 0, r1 = 0;     /* row kc's remainder cursor */
    for (;;) {
        if (!done) {
            long long got[K][W];
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int e = 0; e < W; e++)
                    got[k][e] = (pend >> (k * W + e)) & 1u ? gs_gpu_ld_relaxed(cur + c[k][e]) : SF_EMPTY;
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int e = 0; e < W; e++)
                    if (((pend >> (k * W + e)) & 1u) && got[k][e] != SF_EMPTY) {
                        xv[k][e] = __longlong_as_double(got[k][e]);
                        pend &= ~(1u << (k * W + e));
                    }
#pragma unroll
            for (int k = 0; k < K; k++) {
                if (k != kc || k >= len) continue;
                if ((pend >> (k * W)) & ((1u << W) - 1u)) break; /* row k's ELL values are not all here */
                const gs_int pprev = k > 0 ? pos[k - 1] : -1;
                if (!started) { /* the ELL entries in order */
                    s = bi[k];
#pragma unroll
                    for (int e = 0; e < W; e++)
                        if (c[k][e] >= 0) s -= (double)v[k][e] * (c[k][e] == pprev ? prev : xv[k][e]);
                    started = true;
                    if (S.has_rem) {
                        rq = __ldg(S.rem_ptr + pos[k]);
                        r1 = __ldg(S.rem_ptr + pos[k] + 1);
                    }
                }
                /* then the remainder in order, as far as it is solved (the previous row's value from prev) */
#define SF_POLL_LINKED(j) \
    ((j) < 0 ? SF_EMPTY : (j) == pprev ? __double_as_longlong(prev) : gs_gpu_ld_relaxed(cur + (j)))
                SF_REM_POLL(S, rq, r1, s, SF_POLL_LINKED)
#undef SF_POLL_LINKED
                if (rq < r1) break; /* row k waits for its remainder: next round */
                prev = sf_publish(x, row[k], cur, nxt, pos[k], s * di[k]);
                started = false;
                kc++;
            }
            if (kc >= len) done = true;
        }
        if (__all_sync(0xffffffffu, done)) break;
    }
}


/* A persistent warp's first ticket (lane 0 takes it, all lanes get it): the solve it belongs to (K tickets
 * per solve, K = S.per_solve) gives the solve's first ticket and the generation: cur = this solve's ready
 * values, nxt = the other array, reset for the next solve. */
template <typename V>
static __device__ __forceinline__ unsigned long long sf_first_ticket(const sf_dev<V> &S, unsigned lane,
                                                                     unsigned long long *first, long long **cur,
                                                                     long long **nxt)
{
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(S.ticket, 1ULL);
    t = __shfl_sync(0xffffffffu, t, 0);
    const unsigned long long solve = t / S.per_solve;
    *first = solve * S.per_solve;
    *cur = S.ready + ((solve & 1ULL) ? (size_t)S.n : 0);
    *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.n);
    return t;
}
/* A persistent warp takes 32 units (rows of the level order, or runs) per ticket until its ticket is
 * past the last chunk; the first ticket tells the solve (generation) it belongs to. K = 1: level order
 * (sf_chunk, WMAX ELL entries per row); K > 1: runs (sf_run_chunk, WMAX ELL entries per row). */
template <int WMAX, int K, typename V, int RP, int LPR = 1, bool FOLD = false, bool REM = true>
static __global__ void __launch_bounds__(GS_SF_BLOCK)
    sf_kernel(sf_dev<V> S, const double *__restrict__ b, double *__restrict__ x)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long first;
    long long *cur, *nxt;
    unsigned long long t = sf_first_ticket(S, lane, &first, &cur, &nxt);
    for (;;) {
        const unsigned long long chunk = t - first;
        if (chunk >= S.nchunks) break; /* this warp's one ticket past the last chunk */
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL); /* in flight while the chunk is solved */
        if constexpr (LPR > 1)
            sf_split_chunk<WMAX / LPR, LPR, V, RP, REM>(S, b, x, cur, nxt,
                                               (gs_int)(chunk * (32ULL / LPR)) + (gs_int)(lane / LPR), lane);
        else if constexpr (K == 1)
            sf_chunk<WMAX, RP, V, FOLD, REM>(S, b, x, cur, nxt, (gs_int)(chunk * 32ULL) + (gs_int)lane);
        else sf_run_chunk<K, WMAX, V>(S, b, x, cur, nxt, (gs_int)(chunk * 32ULL) + (gs_int)lane);
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}

template <typename V>
using sf_kernel_fn = void (*)(sf_dev<V>, const double *, double *);

/* Plans whose average level holds more rows than the persistent grid (the merged schedule's first stage
 * on the 2D factor: 16 levels of 65k rows): a block per GS_SF_BLOCK positions, not persistent. Each block takes
 * one ticket, which gives its positions and the solve (generation: per_solve = blocks); its warps solve
 * their 32 positions like sf_kernel's (sf_chunk, a lane per row). A block waits only for positions of
 * smaller tickets, taken by blocks that run or have finished, so no wait can deadlock. Many more rows are
 * in flight than with the persistent grid, which hides the dependent reads at the start of every row
 * (perm -> b) in a pass over wide levels. Plans without a remainder only (gs_sf_grid_rule). */
template <int WMAX, typename V>
static __global__ void __launch_bounds__(GS_SF_BLOCK)
    sf_once_kernel(sf_dev<V> S, const double *__restrict__ b, double *__restrict__ x)
{
    __shared__ unsigned long long tk;
    if (threadIdx.x == 0) tk = atomicAdd(S.ticket, 1ULL);
    __syncthreads();
    const unsigned long long t = tk, solve = t / S.per_solve, chunk = t - solve * S.per_solve;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)S.n : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.n);
    sf_chunk<WMAX, 0, V, false, false>(S, b, x, cur, nxt,
                                       (gs_int)(chunk * (unsigned long long)GS_SF_BLOCK) + (gs_int)threadIdx.x);
}

template <typename V>
static sf_kernel_fn<V> sf_pick_once(int wmax)
{
    if (wmax <= 4) return sf_once_kernel<4, V>;
    if (wmax <= 8) return sf_once_kernel<8, V>;
    return sf_once_kernel<16, V>;
}

/* The level-order kernel of a plan: WMAX ELL slots, rem_prefetch: the remainder's first entries polled with
 * the ELL part (gs_sf_grid_rule), rem: the plan has a remainder at all (else the kernel has no remainder loop:
 * even when it runs zero times, its code and live registers slow the warp-run kernel's rows by ~10-20%,
 * docs/notes-trisolve.md section 1). */
template <typename V>
static sf_kernel_fn<V> sf_pick(int wmax, int run_rows, bool rem_prefetch, int lpr, bool fold, bool rem)
{
    if (fold) { /* sf_merged_build folds only plans of rows, a lane per row, no early remainder */
        if (!rem) {
            if (wmax <= 4) return sf_kernel<4, 1, V, 0, 1, true, false>;
            if (wmax <= 6) return sf_kernel<6, 1, V, 0, 1, true, false>;
            if (wmax <= 8) return sf_kernel<8, 1, V, 0, 1, true, false>;
            return sf_kernel<16, 1, V, 0, 1, true, false>;
        }
        if (wmax <= 4) return sf_kernel<4, 1, V, 0, 1, true>;
        if (wmax <= 6) return sf_kernel<6, 1, V, 0, 1, true>;
        if (wmax <= 8) return sf_kernel<8, 1, V, 0, 1, true>;
        return sf_kernel<16, 1, V, 0, 1, true>;
    }
    if (run_rows > 1) return sf_kernel<GS_SF_RUN_ELL, GS_SF_RUN_ROWS, V, 0>;
    if (lpr == 2)
        return rem_prefetch ? sf_kernel<16, 1, V, SF_SPLIT_REM_PREFETCH, 2>
               : rem        ? sf_kernel<16, 1, V, 0, 2>
                            : sf_kernel<16, 1, V, 0, 2, false, false>;
    if (lpr == 4)
        return rem_prefetch ? sf_kernel<16, 1, V, SF_SPLIT_REM_PREFETCH, 4>
               : rem        ? sf_kernel<16, 1, V, 0, 4>
                            : sf_kernel<16, 1, V, 0, 4, false, false>;
    if (rem_prefetch) {
        if (wmax <= 4) return sf_kernel<4, 1, V, SF_REM_PREFETCH>;
        if (wmax <= 8) return sf_kernel<8, 1, V, SF_REM_PREFETCH>;
        return sf_kernel<16, 1, V, SF_REM_PREFETCH>;
    }
    if (!rem) {
        if (wmax <= 4) return sf_kernel<4, 1, V, 0, 1, false, false>;
        if (wmax <= 6) return sf_kernel<6, 1, V, 0, 1, false, false>;
        if (wmax <= 8) return sf_kernel<8, 1, V, 0, 1, false, false>;
        return sf_kernel<16, 1, V, 0, 1, false, false>;
    }
    if (wmax <= 4) return sf_kernel<4, 1, V, 0>;
    if (wmax <= 6) return sf_kernel<6, 1, V, 0>;
    if (wmax <= 8) return sf_kernel<8, 1, V, 0>;
    return sf_kernel<16, 1, V, 0>;
}

/* ================================================================ level-synchronous T_D stage
 *
 * The first stage of the merged schedule has only m levels (T_D), each holding ~n/m rows: one plain
 * launch per level (a thread per position, no flags, no tickets: the levels before it are complete)
 * costs a launch gap per level instead of the sync-free kernel's per-chunk latency over all n rows. The
 * arithmetic is sf_chunk's (ELL entries in order, then the remainder, times 1/diagonal); the values are
 * kept by position in xpos (the plan's columns are positions). */
template <typename V>
static __global__ void __launch_bounds__(256)
    sf_level_kernel(sf_dev<V> S, gs_int p0, gs_int p1, const double *__restrict__ b, double *__restrict__ x,
                    double *__restrict__ xpos)
{
    const gs_int p = p0 + (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= p1) return;
    const gs_int i = __ldg(S.perm + p);
    double s = __ldg(b + i);
    for (int k = 0; k < S.w; k++) {
        const size_t q = (size_t)k * (size_t)S.n + (size_t)p;
        const gs_int c = __ldg(S.ell_col + q);
        if (c >= 0) s -= (double)__ldg(S.ell_val + q) * xpos[c];
    }
    if (S.has_rem)
        for (gs_int q = __ldg(S.rem_ptr + p); q < __ldg(S.rem_ptr + p + 1); q++)
            s -= (double)__ldg(S.rem_val + q) * xpos[__ldg(S.rem_col + q)];
    const double r = s * (double)__ldg(S.dinv + p);
    xpos[p] = r;
    x[i] = r;
}

/* The first stage of the merged schedule when T_D has at most two levels (m = 2, the rule's choice on the
 * 3D factors), in ONE launch instead of one per level: a row of the second level reads rows of the first
 * only, whose values are b_j * (1/t_jj), so it forms them itself from b instead of waiting for a launch
 * that stores them: y_i = (b_i - sum_j t_ij (b_j * dinv_j)) * dinv_i, entries in the plan's order. The
 * same operations in the same order as sf_level_kernel's two launches (its first level stores
 * s * dinv with s = b), so the same bits. */
template <typename V>
static __global__ void __launch_bounds__(256)
    sf_td2_kernel(sf_dev<V> S, const double *__restrict__ b, double *__restrict__ x)
{
    const gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= S.n) return;
    const gs_int i = __ldg(S.perm + p);
    double s = __ldg(b + i);
    for (int k = 0; k < S.w; k++) {
        const size_t q = (size_t)k * (size_t)S.n + (size_t)p;
        const gs_int c = __ldg(S.ell_col + q);
        if (c >= 0) s -= (double)__ldg(S.ell_val + q) * (__ldg(b + __ldg(S.perm + c)) * (double)__ldg(S.dinv + c));
    }
    if (S.has_rem)
        for (gs_int q = __ldg(S.rem_ptr + p); q < __ldg(S.rem_ptr + p + 1); q++) {
            const gs_int c = __ldg(S.rem_col + q);
            s -= (double)__ldg(S.rem_val + q) * (__ldg(b + __ldg(S.perm + c)) * (double)__ldg(S.dinv + c));
        }
    x[i] = s * (double)__ldg(S.dinv + p);
}

/* T_D folded into M (merged schedule, T_D of two levels): pos[perm[q]] = q, the T_D position of each row. */
static __global__ void sf_fold_pos_kernel(gs_int n, const gs_int *__restrict__ perm, gs_int *__restrict__ pos)
{
    const gs_int q = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (q < n) pos[perm[q]] = q;
}

/* The fold table by M position p (row i = mperm[p], T_D position q = tpos[i]): for each of T_D's tw ELL
 * slots of q, the b index of the entry's row (tperm[c]; -1 for an empty slot), t_ij and 1/t_jj (tdinv[c]),
 * and 1/t_ii: what sf_td2_kernel reads for row i, stored in M's order (sf_chunk's FOLD). */
template <typename V>
static __global__ void sf_fold_table_kernel(gs_int n, int tw, const gs_int *__restrict__ mperm,
                                            const gs_int *__restrict__ tpos, const gs_int *__restrict__ tperm,
                                            const gs_int *__restrict__ tcol, const V *__restrict__ tval,
                                            const V *__restrict__ tdinv, gs_int *__restrict__ fb, V *__restrict__ ft,
                                            V *__restrict__ fd, V *__restrict__ fdi)
{
    const gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= n) return;
    const gs_int q = tpos[mperm[p]];
    for (int k = 0; k < tw; k++) {
        const size_t src = (size_t)k * (size_t)n + (size_t)q, dst = (size_t)k * (size_t)n + (size_t)p;
        const gs_int c = tcol[src];
        fb[dst] = c >= 0 ? tperm[c] : -1;
        ft[dst] = c >= 0 ? tval[src] : (V)0;
        fd[dst] = c >= 0 ? tdinv[c] : (V)0;
    }
    fdi[p] = tdinv[q];
}

/* ================================================================ warp runs (GS_SF_WRUN_ROWS rows)
 *
 * The schedule of trisolve_impl.h's warp runs (docs/notes-trisolve.md section 4.4): a warp per run of up to
 * 32 rows that read the row before them, lane k holding the k-th row at position p = rp * 32 + k (the GPU
 * analysis's plan with run_rows = GS_SF_WRUN_ROWS). Every lane polls the ready values of its row's entries
 * outside the run (all at once, in warp-uniform rounds: a lane that leaves the polling loop on its own
 * makes the scan wait for it, 1900-4100 cycles in the probe), forms c = (b - sum) * (1/t_kk) and
 * a = t_{k,k-1} * (1/t_kk) (the link: the entry whose column is the position before its own), and a
 * Kogge-Stone scan of the affine maps x -> -a x + c over the lanes gives x_k = B_k. Runs are taken by
 * ticket in run-level order (a run reads only runs of smaller level, hence of earlier tickets: no wait can
 * deadlock); generations and the reset of the other ready array as in sf_kernel. S.nunits = runs,
 * S.n = positions; values of type V widened to double. */

template <int WMAX, typename V, bool REM>
static __global__ void __launch_bounds__(GS_SF_BLOCK) sf_wrun_kernel(sf_dev<V> S, const double *__restrict__ b,
                                                                  double *__restrict__ x)
{
    const int lane = (int)(threadIdx.x & 31u);
    unsigned long long first;
    long long *cur, *nxt;
    unsigned long long t = sf_first_ticket(S, (unsigned)lane, &first, &cur, &nxt);
    for (;;) {
        const unsigned long long rp = t - first;
        if (rp >= (unsigned long long)S.nunits) break;
        const gs_int p = (gs_int)rp * GS_SF_WRUN_ROWS + lane, i = __ldg(S.perm + p);
        gs_int c[WMAX];
        double v[WMAX], bi = 0.0, di = 0.0, link = 0.0;
        long long g[WMAX];
        /* The row's ELL part is read at once, not after perm: a hole (perm -1, past the run's end) has
         * columns -1 and values 0 there (lv_layout_kernel), so it needs no test before its loads. */
#pragma unroll
        for (int k = 0; k < WMAX; k++) {
            c[k] = -1;
            v[k] = 0.0;
            if (k < S.w) {
                const size_t q = (size_t)k * (size_t)S.n + (size_t)p;
                c[k] = __ldg(S.ell_col + q);
                v[k] = (double)__ldg(S.ell_val + q);
                if (lane > 0 && c[k] == p - 1) { /* the link: passed by the scan, not polled */
                    link = v[k];
                    c[k] = -1;
                    v[k] = 0.0;
                }
            }
        }
        const bool active = i >= 0;
        gs_int r0 = 0, r1 = 0; /* the remainder's range: read with the row (after the polls it would be a
                                  dependent load on every hop: the polls' asm keeps later loads after them) */
        if (active) {
            bi = __ldg(b + i);
            di = (double)__ldg(S.dinv + p);
            if constexpr (REM) {
                r0 = __ldg(S.rem_ptr + p);
                r1 = __ldg(S.rem_ptr + p + 1);
            }
        }
#pragma unroll
        for (int k = 0; k < WMAX; k++) g[k] = c[k] >= 0 ? gs_gpu_ld_relaxed(cur + c[k]) : 0LL;
        for (;;) { /* warp-uniform rounds: re-poll what is still empty */
            bool pending = false;
#pragma unroll
            for (int k = 0; k < WMAX; k++)
                if (sf_hi_empty(g[k])) {
                    g[k] = gs_gpu_ld_relaxed(cur + c[k]);
                    pending = true;
                }
            if (!__any_sync(0xffffffffu, pending)) break;
        }
        double s = sf_sub_all<WMAX>(bi, v, g);
        if constexpr (REM) { /* the remainder (rows longer than the ELL width), in order */
            for (gs_int q = r0; q < r1; q++) {
                const gs_int col = __ldg(S.rem_col + q);
                const double val = (double)__ldg(S.rem_val + q);
                if (lane > 0 && col == p - 1) {
                    link = val;
                    continue;
                }
                long long gv;
                while (sf_hi_empty(gv = gs_gpu_ld_relaxed(cur + col))) {
                }
                s -= val * __longlong_as_double(gv);
            }
        }
        double A = active ? -(link * di) : 1.0, B = active ? s * di : 0.0;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const double Ao = __shfl_up_sync(0xffffffffu, A, off), Bo = __shfl_up_sync(0xffffffffu, B, off);
            if (lane >= off) {
                B = fma(A, Bo, B);
                A = A * Ao;
            }
        }
        if (active) {
            x[i] = B;
            gs_gpu_st_relaxed(cur + p, sf_bits(B));
        }
        nxt[p] = SF_EMPTY; /* the next solve's array (read by no run of this one) */
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL);
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}

/* REM: the plan has a remainder (else the kernel has no remainder loop, sf_pick's note) */
template <typename V>
static sf_kernel_fn<V> sf_pick_wrun(int wmax, bool rem)
{
    if (rem) {
        if (wmax <= 4) return sf_wrun_kernel<4, V, true>;
        if (wmax <= 8) return sf_wrun_kernel<8, V, true>;
        return sf_wrun_kernel<16, V, true>;
    }
    if (wmax <= 4) return sf_wrun_kernel<4, V, false>;
    if (wmax <= 8) return sf_wrun_kernel<8, V, false>;
    return sf_wrun_kernel<16, V, false>;
}

/* One launch: the persistent warps solve the rows (or runs) of the stage's plan in level order,
 * x = T^{-1} b, with the plan's values of type V (ell_val, rem_val, dinv) widened to double. */
template <typename V>
static gs_status sf_launch(const sf_stage *d, const V *ell_val, const V *rem_val, const V *dinv, cudaStream_t s,
                           const double *b, double *x, bool level_sync, bool one_pass, const sf_data *fold)
{
    const gs_ls_dplan *D = &d->A.D;
    sf_dev<V> S;
    S.n = D->npos;
    S.nunits = D->nunits;
    S.w = D->ell_width;
    S.has_rem = D->rem_nnz > 0;
    S.nchunks = ((unsigned long long)D->nunits + (32ULL / d->lpr) - 1ULL) / (32ULL / d->lpr);
    S.per_solve = S.nchunks + (unsigned long long)d->blocks * (GS_SF_BLOCK / 32);
    S.perm = D->perm;
    S.ell_col = D->ell_col;
    S.ell_val = ell_val;
    S.rem_ptr = D->rem_ptr;
    S.rem_col = D->rem_col;
    S.rem_val = rem_val;
    S.dinv = dinv;
    S.ready = d->ready;
    S.ticket = d->ticket;
    S.fold_w = 0;
    S.fold_b = NULL;
    S.fold_t = S.fold_d = S.fold_di = NULL;
    if (fold) { /* M's rows form y from b (sf_fold_build's table, values of type V like the plans') */
        S.fold_w = fold->fold_w;
        S.fold_b = fold->fold_b;
        S.fold_t = (const V *)fold->fold_t;
        S.fold_d = (const V *)fold->fold_d;
        S.fold_di = (const V *)fold->fold_di;
    }
    if (D->run_rows == GS_SF_WRUN_ROWS) { /* warp runs: a ticket per run */
        S.nchunks = (unsigned long long)D->nunits;
        S.per_solve = S.nchunks + (unsigned long long)d->blocks * (GS_SF_BLOCK / 32);
        sf_pick_wrun<V>(d->wmax, D->rem_nnz > 0)<<<(unsigned)d->blocks, GS_SF_BLOCK, 0, s>>>(S, b, x);
        GS_CALL(GS_CUDA_LAUNCHED("sf_wrun_kernel"));
        return GS_OK;
    }
    if (level_sync && one_pass) { /* at most two levels: one launch (sf_td2_kernel) */
        sf_td2_kernel<V><<<(unsigned)((D->npos + 255) / 256), 256, 0, s>>>(S, b, x);
        GS_CALL(GS_CUDA_LAUNCHED("sf_td2_kernel"));
        return GS_OK;
    }
    if (level_sync) { /* one launch per level; the ready array holds the values by position */
        for (gs_int l = 0; l < D->nlevels; l++) {
            const gs_int p0 = D->h_level_ptr[l], p1 = D->h_level_ptr[l + 1];
            if (p1 <= p0) continue;
            sf_level_kernel<V><<<(unsigned)((p1 - p0 + 255) / 256), 256, 0, s>>>(S, p0, p1, b, x, (double *)d->ready);
            GS_CALL(GS_CUDA_LAUNCHED("sf_level_kernel"));
        }
        return GS_OK;
    }
    if (d->once && !fold) { /* a block per GS_SF_BLOCK positions, one ticket each */
        S.per_solve = (unsigned long long)d->blocks;
        sf_pick_once<V>(d->wmax)<<<(unsigned)d->blocks, GS_SF_BLOCK, 0, s>>>(S, b, x);
        GS_CALL(GS_CUDA_LAUNCHED("sf_once_kernel"));
        return GS_OK;
    }
    sf_kernel_fn<V> kernel = sf_pick<V>(d->wmax, d->run_rows, d->rem_prefetch, d->lpr, fold != NULL, D->rem_nnz > 0);
    kernel<<<(unsigned)d->blocks, GS_SF_BLOCK, 0, s>>>(S, b, x);
    GS_CALL(GS_CUDA_LAUNCHED("sf_kernel"));
    return GS_OK;
}

gs_status gs_sf_stage_solve(const sf_stage *d, cudaStream_t s, const double *b, double *x, bool level_sync,
                            bool one_pass, const sf_data *fold)
{
    const gs_ls_dplan *D = &d->A.D;
    if (D->single)
        GS_CALL(sf_launch<float>(d, D->ell_val_f, D->rem_val_f, D->dinv_f, s, b, x, level_sync, one_pass, fold));
    else GS_CALL(sf_launch<double>(d, D->ell_val, D->rem_val, D->dinv, s, b, x, level_sync, one_pass, fold));
    return GS_OK;
}

/* ================================================================ entry points of the host side */

const void *gs_sf_grid_kernel(const gs_ls_dplan *D, const gs_sf_grid *g)
{
    const bool rem = D->rem_nnz > 0;
    if (D->run_rows == GS_SF_WRUN_ROWS)
        return D->single ? (const void *)sf_pick_wrun<float>(g->wmax, rem)
                         : (const void *)sf_pick_wrun<double>(g->wmax, rem);
    return D->single ? (const void *)sf_pick<float>(g->wmax, D->run_rows, false, g->lpr, false, rem)
                     : (const void *)sf_pick<double>(g->wmax, D->run_rows, false, g->lpr, false, rem);
}

gs_status gs_sf_fold_table(cudaStream_t s, const gs_ls_dplan *T, const gs_ls_dplan *M, gs_int *pos, gs_int *fb,
                           void *ft, void *fd, void *fdi)
{
    const gs_int n = M->npos;
    const int w = T->ell_width;
    const unsigned nb = (unsigned)(((size_t)n + 255) / 256);
    sf_fold_pos_kernel<<<nb, 256, 0, s>>>(n, T->perm, pos);
    GS_CALL(GS_CUDA_LAUNCHED("sf_fold_pos_kernel"));
    if (T->single)
        sf_fold_table_kernel<float><<<nb, 256, 0, s>>>(n, w, M->perm, pos, T->perm, T->ell_col, T->ell_val_f,
                                                       T->dinv_f, fb, (float *)ft, (float *)fd, (float *)fdi);
    else
        sf_fold_table_kernel<double><<<nb, 256, 0, s>>>(n, w, M->perm, pos, T->perm, T->ell_col, T->ell_val,
                                                        T->dinv, fb, (double *)ft, (double *)fd, (double *)fdi);
    GS_CALL(GS_CUDA_LAUNCHED("sf_fold_table_kernel"));
    return GS_OK;
}

