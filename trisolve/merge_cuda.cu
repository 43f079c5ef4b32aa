/* The merged-level transformation on the GPU (merge_ref.c defines it and is the bit-exact host twin):
 * T_D = T's diagonal and in-group entries, M = I + R with R = T_D^{-1} T_O, group(i) = level(i) / m.
 *
 *   1. T_D: a count kernel (diagonal + in-group entries per row), a scan, a copy kernel;
 *   2. R in m passes, pass t = the rows of local level t (level mod m), whose in-group dependencies
 *      were done by earlier passes; the rows are sorted by pass once (a stable radix sort of level mod
 *      m), so a pass's threads are its rows only. A row's contributions are sorted lists, one per
 *      off-diagonal entry in CSR order ((j, t_ij), or R_j in column order times -t_ij), gone through
 *      column by column: for each column, acc = acc + v over the lists in CSR order (__dmul_rn /
 *      __dadd_rn: never fused), R_ic = acc * (1 / t_ii) -- merge_ref.c's order, with no sort. A thread
 *      per row with its cursors in registers; a warp per row of many entries (a dense row), its cursors
 *      in a work array allocated only where such rows exist. First the rows' entry counts, scanned (the
 *      pool then holds exactly R's entries, and the fill limit is checked pass by pass, refusing exactly
 *      when the host twin does), then the entries;
 *   3. M: row lengths, a scan, a copy kernel out of the pool.
 * The other kernels are thread-per-row (the copy out of the pool: 8 lanes per row). The host only sizes
 * buffers: one download for T_D and the passes' rows, one after the passes (more only where R's pool must grow),
 * one for M. */
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

#define MG_THREADS 256

/* at least one block (an empty factor: every thread returns) */
static inline unsigned mg_blocks(size_t n) { return n > 0 ? (unsigned)((n + MG_THREADS - 1) / MG_THREADS) : 1u; }

struct mg_stats {
    unsigned long long growth_bits; /* max row sum of |R|, as the bits of a non-negative double */
    int max_row;
    int long_rows; /* nonzero: some row takes the warp path (mg_long_kernel) */
};

/* The passes' bookkeeping on the device, so that passes follow each other without the host: R's entries
 * so far (used), the pool index of the current pass's first entry (base), and why the passes stopped. */
enum { MG_RUN = 0, MG_REFUSED = 1, MG_FULL = 2 };
struct mg_ctl {
    long long used, base, need; /* need: the pool size the stopped pass asks for (MG_FULL) */
    int state;                  /* MG_RUN, MG_REFUSED (the fill limit), MG_FULL (the pool is too small) */
    int stopped;                /* the pass that stopped (MG_FULL: redone once the pool has grown) */
};


static __global__ void mg_row_levels_kernel(gs_int n, gs_int nlevels, const gs_int *__restrict__ perm,
                                            const gs_int *__restrict__ level_ptr, gs_int *__restrict__ lev)
{
    const gs_int p = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= n) return;
    gs_int lo = 0, hi = nlevels - 1; /* the level l with level_ptr[l] <= p < level_ptr[l + 1] */
    while (lo < hi) {
        gs_int mid = (lo + hi + 1) / 2;
        if (level_ptr[mid] <= p) lo = mid;
        else hi = mid - 1;
    }
    lev[perm[p]] = lo;
}

static __device__ __forceinline__ bool mg_is_long(const gs_int *__restrict__ rowptr, const gs_int *__restrict__ col,
                                                  gs_int i);

/* T_D's row lengths; long_rows set where a row will take the warp path of R's passes */
static __global__ void mg_td_count_kernel(gs_int n, gs_int m, const gs_int *__restrict__ rowptr,
                                          const gs_int *__restrict__ col, const gs_int *__restrict__ lev,
                                          gs_int *__restrict__ cnt, int *long_rows)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i > n) return;
    if (i == n) {
        cnt[n] = 0;
        return;
    }
    const gs_int gi = lev[i] / m;
    gs_int c = 0;
    for (gs_int q = rowptr[i]; q < rowptr[i + 1]; q++) c += (col[q] == i || lev[col[q]] / m == gi) ? 1 : 0;
    cnt[i] = c;
    if (mg_is_long(rowptr, col, i)) *long_rows = 1;
}

static __global__ void mg_td_copy_kernel(gs_int n, gs_int m, const gs_int *__restrict__ rowptr,
                                         const gs_int *__restrict__ col, const double *__restrict__ val,
                                         const gs_int *__restrict__ lev, const gs_int *__restrict__ td_ptr,
                                         gs_int *__restrict__ td_col, double *__restrict__ td_val)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    const gs_int gi = lev[i] / m;
    gs_int d = td_ptr[i];
    for (gs_int q = rowptr[i]; q < rowptr[i + 1]; q++)
        if (col[q] == i || lev[col[q]] / m == gi) {
            td_col[d] = col[q];
            td_val[d] = val[q];
            d++;
        }
}

struct mg_pass_args {
    gs_int n, m;
    gs_int nrows;      /* the pass's rows: rows[0 .. nrows), increasing */
    const gs_int *rows;
    bool unit;
    const gs_int *rowptr, *col, *lev;
    const double *val;
    long long *cnt;        /* nrows + 1: the number of R entries of the pass's k-th row (cnt[nrows] = 0) */
    const long long *poff; /* exclusive scan of cnt: the k-th row's R entries at base + poff[k] */
    mg_ctl *ctl;           /* base: pool index of this pass's first R entry; state != MG_RUN: skip the pass */
    gs_int *pool_col;      /* R's rows, each in increasing column order */
    double *pool_val;
    long long *rstart; /* pool index of row i's R entries */
    gs_int *rlen;
    mg_stats *stats;
};

/* Row i's contributions form one sorted list per off-diagonal entry, in CSR order: (j, t_ij) for a j of
 * an earlier group, or R_j (strictly increasing columns) times -t_ij for a j of the row's own group.
 * Going through the columns in increasing order and, for each column, through the lists in CSR order is
 * the stable sort by column of the lists' concatenation, which is merge_ref.c's order; each list holds a
 * column at most once. A row of few lists keeps a cursor per list in registers (mg_row_cursors, a thread
 * per row); a row of many lists (a dense row) is a warp's, with its cursors in memory (mg_long_kernel). */

#define MG_CURSORS 8 /* rows of at most this many off-diagonal entries keep a cursor per list (registers) */

/* mg_row for a row of at most MG_CURSORS lists, the same columns and the same sums in the same order: each
 * list keeps a cursor and its next column (a single entry's column once, then GS_INT_MAX), so a column
 * costs one load per list that holds it instead of two bisections per list. */
template <bool WRITE>
static __device__ gs_int mg_row_cursors(const mg_pass_args &A, gs_int i, long long out, double *rowsum)
{
    const gs_int gi = A.lev[i] / A.m, q0 = A.rowptr[i], q1 = A.rowptr[i + 1];
    gs_int dpos = q1 - q0; /* the diagonal's place in the row (the lists skip it) */
    double d = 1.0;
    for (gs_int q = q0; q < q1; q++)
        if (A.col[q] == i) {
            dpos = q - q0;
            d = A.val[q];
        }
    const double dinv = A.unit ? 1.0 : 1.0 / d;
    const int nl = (int)(q1 - q0) - (dpos < q1 - q0 ? 1 : 0);
    long long cur[MG_CURSORS], end[MG_CURSORS];
    gs_int head[MG_CURSORS];
    double coef[MG_CURSORS];
#pragma unroll
    for (int u = 0; u < MG_CURSORS; u++) {
        cur[u] = end[u] = 0;
        head[u] = GS_INT_MAX;
        coef[u] = 0.0;
        if (u < nl) {
            const gs_int q = q0 + u + (u >= dpos ? 1 : 0), j = A.col[q];
            coef[u] = A.val[q];
            if (A.lev[j] / A.m < gi) {
                head[u] = j; /* a single entry: cur == end */
            } else {
                cur[u] = A.rstart[j];
                end[u] = cur[u] + A.rlen[j];
                if (cur[u] < end[u]) head[u] = A.pool_col[cur[u]];
            }
        }
    }
    gs_int cnt = 0;
    for (;;) {
        gs_int c = GS_INT_MAX;
#pragma unroll
        for (int u = 0; u < MG_CURSORS; u++) c = head[u] < c ? head[u] : c;
        if (c == GS_INT_MAX) break;
        double acc = 0.0;
#pragma unroll
        for (int u = 0; u < MG_CURSORS; u++)
            if (head[u] == c) {
                if (cur[u] == end[u]) { /* a single entry */
                    if (WRITE) acc = __dadd_rn(acc, coef[u]);
                    head[u] = GS_INT_MAX;
                } else {
                    if (WRITE) acc = __dadd_rn(acc, -__dmul_rn(coef[u], A.pool_val[cur[u]]));
                    cur[u]++;
                    head[u] = cur[u] < end[u] ? A.pool_col[cur[u]] : GS_INT_MAX;
                }
            }
        if (WRITE) {
            const double r = A.unit ? acc : __dmul_rn(acc, dinv);
            A.pool_col[out + cnt] = c;
            A.pool_val[out + cnt] = r;
            *rowsum += fabs(r);
        }
        cnt++;
    }
    return cnt;
}

/* A row for the warp path (mg_long_kernel): more lists than the cursors hold in registers, or more than one
 * diagonal entry (the cursors skip one). */
static __device__ __forceinline__ bool mg_is_long(const gs_int *__restrict__ rowptr, const gs_int *__restrict__ col,
                                                  gs_int i)
{
    const gs_int q0 = rowptr[i], q1 = rowptr[i + 1];
    if (q1 - q0 > MG_CURSORS + 1) return true;
    gs_int ndiag = 0;
    for (gs_int q = q0; q < q1; q++) ndiag += col[q] == i ? 1 : 0;
    return ndiag > 1 || q1 - q0 - ndiag > MG_CURSORS;
}

/* A list's cursor in mg_long_kernel's memory (one per CSR position q of the row): the pool index of R_j's
 * next entry, or one of these. */
#define MG_DONE (-1LL)   /* the diagonal, or a single entry already used */
#define MG_SINGLE (-2LL) /* the single entry (j, t_ij) of an earlier group, not used yet */

/* the column the list at q gives next (GS_INT_MAX: none left) */
static __device__ __forceinline__ gs_int mg_head(const mg_pass_args &A, const long long *cur, gs_int q)
{
    const long long c = cur[q];
    if (c == MG_DONE) return GS_INT_MAX;
    const gs_int j = A.col[q];
    if (c == MG_SINGLE) return j;
    return c < A.rstart[j] + A.rlen[j] ? A.pool_col[c] : GS_INT_MAX;
}

static __device__ __forceinline__ gs_int mg_warp_min(gs_int v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const gs_int w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w < v ? w : v;
    }
    return v;
}

/* The long rows of a pass, a warp per row (the pass's other rows return at once): the row's R entries
 * counted (cnt[k]) or (WRITE) written, as mg_row_cursors would -- the next column is the warp's minimum over
 * the lists' heads; its value the contributions of the lists holding it, added in CSR order (a ballot per
 * 32 lists, the set lanes in increasing order), acc = acc + v, never fused. cur: a cursor per CSR entry. */
template <bool WRITE>
static __global__ void mg_long_kernel(mg_pass_args A, long long *__restrict__ cur)
{
    const gs_int k = (gs_int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32);
    const int lane = (int)(threadIdx.x & 31u);
    if (k >= A.nrows || A.ctl->state != MG_RUN) return; /* the same for the whole warp */
    const gs_int i = A.rows[k];
    if (!mg_is_long(A.rowptr, A.col, i)) return;
    const gs_int gi = A.lev[i] / A.m, q0 = A.rowptr[i], q1 = A.rowptr[i + 1];
    gs_int qd = -1; /* the last diagonal entry (its value is t_ii, as in merge_ref.c) */
    for (gs_int q = q0 + lane; q < q1; q += 32) {
        const gs_int j = A.col[q];
        if (j == i) qd = q;
        cur[q] = j == i ? MG_DONE : (A.lev[j] / A.m < gi ? MG_SINGLE : A.rstart[j]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const gs_int w = __shfl_xor_sync(0xffffffffu, qd, o);
        qd = w > qd ? w : qd;
    }
    const double dinv = A.unit ? 1.0 : 1.0 / (qd >= 0 ? A.val[qd] : 1.0);
    const long long out = WRITE ? A.ctl->base + A.poff[k] : 0;
    __syncwarp();
    gs_int cnt = 0;
    double rowsum = 0.0;
    for (;;) {
        gs_int c = GS_INT_MAX;
        for (gs_int q = q0 + lane; q < q1; q += 32) {
            const gs_int h = mg_head(A, cur, q);
            c = h < c ? h : c;
        }
        c = mg_warp_min(c);
        if (c == GS_INT_MAX) break;
        double acc = 0.0;
        for (gs_int base = q0; base < q1; base += 32) {
            const gs_int q = base + lane;
            double v = 0.0;
            bool hit = false;
            if (q < q1 && mg_head(A, cur, q) == c) {
                const long long cq = cur[q];
                hit = true;
                if (cq == MG_SINGLE) {
                    v = A.val[q];
                    cur[q] = MG_DONE;
                } else {
                    v = -__dmul_rn(A.val[q], A.pool_val[cq]);
                    cur[q] = cq + 1;
                }
            }
            for (unsigned mask = __ballot_sync(0xffffffffu, hit); mask; mask &= mask - 1) {
                const double w = __shfl_sync(0xffffffffu, v, __ffs(mask) - 1);
                if (WRITE) acc = __dadd_rn(acc, w);
            }
        }
        if (WRITE && lane == 0) {
            const double r = A.unit ? acc : __dmul_rn(acc, dinv);
            A.pool_col[out + cnt] = c;
            A.pool_val[out + cnt] = r;
            rowsum += fabs(r);
        }
        cnt++;
        __syncwarp();
    }
    if (lane != 0) return;
    if (!WRITE) {
        A.cnt[k] = cnt;
        return;
    }
    A.rstart[i] = out;
    A.rlen[i] = cnt;
    atomicMax(&A.stats->max_row, (int)cnt);
    /* a non-negative double orders as its bits (as in mg_combine_kernel) */
    const unsigned long long bits = (unsigned long long)__double_as_longlong(rowsum);
    if (bits > 0) atomicMax(&A.stats->growth_bits, bits);
}

/* the number of R entries of each row of the pass (cnt[nrows] = 0 for the scan) */
static __global__ void mg_count_kernel(mg_pass_args A)
{
    const gs_int k = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (k > A.nrows || A.ctl->state != MG_RUN) return;
    double unused = 0.0;
    if (k == A.nrows) A.cnt[k] = 0;
    else if (!mg_is_long(A.rowptr, A.col, A.rows[k])) A.cnt[k] = mg_row_cursors<false>(A, A.rows[k], 0, &unused);
}

/* The statistics are maxima over all rows: each warp reduces its lanes' values by shuffles and one lane
 * updates the global value, instead of an atomic per row on one address (those serialize: ~0.4 ms per
 * kernel for 10^6 rows on the H100). Every lane of the warp must call it (inactive rows pass 0). */
template <typename U>
static __device__ __forceinline__ void mg_warp_atomic_max(U *dst, U v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const U w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    if ((threadIdx.x & 31u) == 0 && v > 0) atomicMax(dst, v);
}

/* The pass's size (the scan's total) against the fill limit, then against the pool: the pass goes on
 * (base set), or the passes stop (refused, as the host twin refuses; or the pool must grow first). */
static __global__ void mg_pass_check_kernel(mg_ctl *ctl, const long long *__restrict__ total, gs_int t,
                                            long long max_fill, long long cap)
{
    if (ctl->state != MG_RUN) return;
    const long long used = ctl->used, next = used + *total;
    if (next > max_fill || next >= (long long)GS_INT_MAX) {
        ctl->state = MG_REFUSED;
    } else if (next > cap) {
        ctl->state = MG_FULL;
        ctl->stopped = t;
        ctl->need = next;
    } else {
        ctl->base = used;
        ctl->used = next;
    }
}

static __global__ void mg_combine_kernel(mg_pass_args A)
{
    if (A.ctl->state != MG_RUN) return; /* the same for every thread */
    const gs_int k = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    gs_int cnt = 0;
    double rowsum = 0.0;
    if (k < A.nrows && !mg_is_long(A.rowptr, A.col, A.rows[k])) {
        const gs_int i = A.rows[k];
        const long long out = A.ctl->base + A.poff[k];
        cnt = mg_row_cursors<true>(A, i, out, &rowsum);
        A.rstart[i] = out;
        A.rlen[i] = cnt;
    }
    mg_warp_atomic_max(&A.stats->max_row, (int)cnt);
    /* a non-negative double orders as its bits (NaN, all ones in the high bits, above every finite sum) */
    mg_warp_atomic_max(&A.stats->growth_bits, (unsigned long long)__double_as_longlong(rowsum));
}

/* the sort's input: key[i] = level mod m (the pass of row i), val[i] = i */
static __global__ void mg_pass_key_kernel(gs_int n, gs_int m, const gs_int *__restrict__ lev, unsigned *__restrict__ key,
                                          gs_int *__restrict__ val)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    key[i] = (unsigned)(lev[i] % m);
    val[i] = i;
}

/* start[t] = the first position of pass t in the sorted keys (t = 0 .. m; start[m] = n) */
static __global__ void mg_pass_start_kernel(gs_int n, gs_int m, const unsigned *__restrict__ skey, gs_int *start)
{
    const gs_int t = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t > m) return;
    gs_int lo = 0, hi = n;
    while (lo < hi) {
        const gs_int mid = lo + (hi - lo) / 2;
        if (skey[mid] < (unsigned)t) lo = mid + 1;
        else hi = mid;
    }
    start[t] = lo;
}

#define MG_COPY_LANES 8 /* lanes per row of mg_m_copy_kernel: a row's entries are read and written contiguously
                          (a thread per row: 80 us per 3D factor, 400 on 2D, H100) */

static __global__ void mg_m_copy_kernel(gs_int n, const long long *__restrict__ rstart, const gs_int *__restrict__ rlen,
                                        const gs_int *__restrict__ pool_col, const double *__restrict__ pool_val,
                                        const gs_int *__restrict__ m_ptr, gs_int *__restrict__ m_col,
                                        double *__restrict__ m_val)
{
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const gs_int i = (gs_int)(t / MG_COPY_LANES), lane = (gs_int)(t % MG_COPY_LANES);
    if (i >= n) return;
    const long long from = rstart[i];
    const gs_int to = m_ptr[i], len = rlen[i];
    for (gs_int s = lane; s < len; s += MG_COPY_LANES) {
        m_col[to + s] = pool_col[from + s];
        m_val[to + s] = pool_val[from + s];
    }
}

/* rlen with rlen[n] = 0 as the scan input of M's row pointers */
static __global__ void mg_len_kernel(gs_int n, const gs_int *__restrict__ rlen, gs_int *__restrict__ len)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i <= n) len[i] = i < n ? rlen[i] : 0;
}

void gs_ts_merge_dev_free(gs_backend *be, gs_ts_merge_dev *R)
{
    gs_ts_work_free(be, R->td_rowptr);
    gs_ts_work_free(be, R->td_colind);
    gs_ts_work_free(be, R->td_val);
    gs_ts_work_free(be, R->m_rowptr);
    gs_ts_work_free(be, R->m_colind);
    gs_ts_work_free(be, R->m_val);
    gs_ts_work_free(be, R->td_level); /* m_level shares its block */
    memset(R, 0, sizeof *R);
}

/* td_level[i] = lev[i] mod m (the level inside its group), m_level[i] = lev[i] / m (the group): T_D's rows
 * read rows of the same group at smaller T levels, M's rows rows of earlier groups. */
static __global__ void mg_stage_levels_kernel(gs_int n, gs_int m, const gs_int *__restrict__ lev, gs_int *td_level,
                                              gs_int *m_level)
{
    const gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    const gs_int l = lev[i];
    td_level[i] = l % m;
    m_level[i] = l / m;
}

gs_status gs_ts_merge_row_levels(gs_backend *be, const gs_ls_dplan *D, gs_int *lev)
{
    if (D->n == 0) return GS_OK;
    mg_row_levels_kernel<<<mg_blocks((size_t)D->n), MG_THREADS, 0, gs_ts_stream(be)>>>(D->n, D->nlevels, D->perm,
                                                                                        D->level_ptr, lev);
    GS_CALL(GS_CUDA_LAUNCHED("mg_row_levels_kernel"));
    return GS_OK;
}

/* *p holds at least count elements of T; grown by doubling (later passes are larger: fewer allocations),
 * keeping its first `keep` elements (0: the contents are dropped). Stream-ordered work space
 * (gs_ts_work_alloc): the copy and the free are queued on s, the backend's stream, behind the work that
 * used the old block. */
template <typename T>
static gs_status mg_reserve(gs_backend *be, T **p, size_t *cap, size_t count, size_t keep = 0, cudaStream_t s = 0)
{
    if (*p && *cap >= count) return GS_OK;
    const size_t ncap = *cap * 2 > count ? *cap * 2 : count;
    void *q = NULL;
    if (keep == 0) { /* nothing to copy: the old block goes first (lower peak) */
        gs_ts_work_free(be, *p);
        *p = NULL;
        *cap = 0;
    }
    GS_CALL(gs_ts_work_alloc(be, &q, (ncap > 0 ? ncap : 1) * sizeof(T)));
    if (keep > 0) {
        cudaError_t e = cudaMemcpyAsync(q, *p, keep * sizeof(T), cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess) {
            gs_ts_work_free(be, q);
            GS_CALL(GS_CUDA(e));
        }
    }
    gs_ts_work_free(be, *p);
    *p = (T *)q;
    *cap = ncap;
    return GS_OK;
}

/* One build in progress: what its steps share (the device work arrays: rows' counts, offsets and lengths, the
 * passes' row order and starts, the pool of R's entries, CUB's workspace). */
struct mg_build {
    gs_backend *be;
    cudaStream_t s;
    const gs_csr_dev *T;
    const gs_int *lev;
    gs_int n, m;
    size_t nn;
    bool unit_diag;
    long long max_fill;
    gs_ts_merge_dev *R;
    gs_ts_merge_stats *stats;
    gs_int *cnt, *rlen, *pool_col, *order, *dstart;
    gs_int start[GS_SF_MERGE_MAX + 1];
    long long *pcnt, *poff, *rstart;
    double *pool_val;
    char *cub_tmp;
    void *arena;
    mg_stats *dstats;
    mg_ctl *dctl;
    size_t cub_cap, p_cap, p_cap2;
    unsigned nb;
    int long_rows;  /* some row takes the warp path: cur holds a cursor per entry of T */
    long long *cur;
};

/* One allocation for the per-row arrays: 3 of long long, 3 of gs_int, the statistics, the passes' starts. */
static gs_status mg_alloc_rows(mg_build &B)
{
    const size_t L = (B.nn + 1) * sizeof(long long), I = ((B.nn + 1) * sizeof(gs_int) + 7) / 8 * 8;
    static_assert(sizeof(mg_stats) % 8 == 0 && sizeof(mg_ctl) % 8 == 0, "8-byte aligned carving");
    GS_CALL(gs_ts_work_alloc(B.be, &B.arena, 3 * L + 3 * I + sizeof(mg_stats) + sizeof(mg_ctl) +
                                                 (GS_SF_MERGE_MAX + 1) * sizeof(gs_int)));
    char *a = (char *)B.arena;
    B.pcnt = (long long *)a;
    B.rstart = (long long *)(a + L);
    B.poff = (long long *)(a + 2 * L);
    B.cnt = (gs_int *)(a + 3 * L);
    B.rlen = (gs_int *)(a + 3 * L + I);
    B.order = (gs_int *)(a + 3 * L + 2 * I);
    B.dstats = (mg_stats *)(a + 3 * L + 3 * I);
    B.dctl = (mg_ctl *)(a + 3 * L + 3 * I + sizeof(mg_stats));
    B.dstart = (gs_int *)(a + 3 * L + 3 * I + sizeof(mg_stats) + sizeof(mg_ctl));
    GS_CALL(GS_CUDA(cudaMemsetAsync(B.dstats, 0, sizeof(mg_stats) + sizeof(mg_ctl), B.s)));
    GS_CALL(GS_CUDA(cudaMemsetAsync(B.rlen, 0, (B.nn + 1) * sizeof(gs_int), B.s)));
    GS_CALL(GS_CUDA(cudaMemsetAsync(B.rstart, 0, (B.nn + 1) * sizeof(long long), B.s)));
    return GS_OK;
}

/* 1. T_D by a count, a scan and a copy; the rows by pass (level mod m, increasing inside a pass) and the
 * passes' starts. */
static gs_status mg_build_td(mg_build &B)
{
    const gs_csr_dev *T = B.T;
    gs_ts_merge_dev *R = B.R;
    const gs_int n = B.n, m = B.m;
    cudaStream_t s = B.s;
    size_t bytes = 0;
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s)));
    GS_CALL(mg_reserve(B.be, &B.cub_tmp, &B.cub_cap, bytes));
    void *p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, (B.nn + 1) * sizeof(gs_int)));
    R->td_rowptr = (gs_int *)p;
    mg_td_count_kernel<<<B.nb, MG_THREADS, 0, s>>>(n, m, T->rowptr, T->colind, B.lev, B.cnt, &B.dstats->long_rows);
    GS_CALL(GS_CUDA_LAUNCHED("mg_td_count_kernel"));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(B.cub_tmp, bytes, (const gs_int *)B.cnt, R->td_rowptr, (int)n + 1,
                                                  s)));
    gs_int td_nnz = 0;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&td_nnz, R->td_rowptr + n, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&B.long_rows, &B.dstats->long_rows, sizeof(int), cudaMemcpyDeviceToHost, s)));
    /* the rows by pass (level mod m), increasing inside a pass: a stable sort of the keys (in pcnt's block,
     * which holds 2n of them), the row numbers from poff's block into `order` */
    if (n > 0) {
        int end_bit = 1;
        while ((1 << end_bit) < m) end_bit++;
        unsigned *key = (unsigned *)B.pcnt, *skey = key + B.nn;
        size_t sort_bytes = 0;
        GS_CALL(GS_CUDA(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const unsigned *)NULL, (unsigned *)NULL,
                                                        (const gs_int *)NULL, (gs_int *)NULL, (int)n, 0, end_bit, s)));
        GS_CALL(mg_reserve(B.be, &B.cub_tmp, &B.cub_cap, sort_bytes));
        mg_pass_key_kernel<<<mg_blocks(B.nn), MG_THREADS, 0, s>>>(n, m, B.lev, key, (gs_int *)B.poff);
        GS_CALL(GS_CUDA_LAUNCHED("mg_pass_key_kernel"));
        GS_CALL(GS_CUDA(cub::DeviceRadixSort::SortPairs(B.cub_tmp, sort_bytes, (const unsigned *)key, skey,
                                                        (const gs_int *)B.poff, B.order, (int)n, 0, end_bit, s)));
        mg_pass_start_kernel<<<1, GS_SF_MERGE_MAX + 1, 0, s>>>(n, m, skey, B.dstart);
        GS_CALL(GS_CUDA_LAUNCHED("mg_pass_start_kernel"));
        GS_CALL(GS_CUDA(cudaMemcpyAsync(B.start, B.dstart, ((size_t)m + 1) * sizeof(gs_int), cudaMemcpyDeviceToHost,
                                        s)));
    }
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, ((size_t)td_nnz + 1) * sizeof(gs_int)));
    R->td_colind = (gs_int *)p;
    p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, ((size_t)td_nnz + 1) * sizeof(double)));
    R->td_val = (double *)p;
    mg_td_copy_kernel<<<mg_blocks(B.nn), MG_THREADS, 0, s>>>(n, m, T->rowptr, T->colind, T->val, B.lev, R->td_rowptr,
                                                             R->td_colind, R->td_val);
    GS_CALL(GS_CUDA_LAUNCHED("mg_td_copy_kernel"));
    R->TD.nrows = R->TD.ncols = n;
    R->TD.nnz = td_nnz;
    R->TD.rowptr = R->td_rowptr;
    R->TD.colind = R->td_colind;
    R->TD.val = R->td_val;
    B.stats->nnz_td_off = (long long)td_nnz - (B.unit_diag ? 0 : n);
    return GS_OK;
}

/* 2. R, pass by pass: the rows' entry counts, their scan, the check of the pass's size (the fill limit, the
 *    pool), the entries -- queued without a round trip to the host: mg_ctl carries the pool index from pass
 *    to pass and stops the passes when the fill limit refuses R (exactly where the host twin does:
 *    stats->too_much_fill) or the pool is too small. One download at the end; a full pool grows (by
 *    doubling, keeping R's entries so far) and the passes go on from the one that stopped. */
static gs_status mg_build_r(mg_build &B, long long pool_start)
{
    const gs_int n = B.n, m = B.m;
    cudaStream_t s = B.s;
    if (n == 0) return GS_OK;
    /* R's size grows with m; this first guess holds R of the benchmark's PDE factors without a growth
     * (poisson3d 100^3, m = 2: 4.43e6 entries, T->nnz + n = 4e6 for the unit L; poisson2d 1024^2, m = 16:
     * 9.86e6 against 3e6), the growth covers the rest */
    long long want = ((long long)B.T->nnz + n) * (m + 6) / 6;
    if (pool_start > 0) want = pool_start; /* tests: a small first pool that must grow */
    const long long guess = want < B.max_fill ? want : B.max_fill;
    GS_CALL(mg_reserve(B.be, &B.pool_col, &B.p_cap, (size_t)(guess > 0 ? guess : 1)));
    GS_CALL(mg_reserve(B.be, &B.pool_val, &B.p_cap2, (size_t)(guess > 0 ? guess : 1)));
    mg_pass_args A; /* what every pass shares; each sets its rows and the current pool */
    A.n = n;
    A.m = m;
    A.unit = B.unit_diag;
    A.rowptr = B.T->rowptr;
    A.col = B.T->colind;
    A.lev = B.lev;
    A.val = B.T->val;
    A.cnt = B.pcnt;
    A.poff = B.poff;
    A.ctl = B.dctl;
    A.rstart = B.rstart;
    A.rlen = B.rlen;
    A.stats = B.dstats;
    if (B.long_rows) {
        void *p = NULL;
        GS_CALL(gs_ts_work_alloc(B.be, &p, ((size_t)B.T->nnz + 1) * sizeof(long long)));
        B.cur = (long long *)p;
    }
    for (gs_int from = 0; from < m;) {
        for (gs_int t = from; t < m; t++) {
            size_t bytes = 0;
            A.nrows = B.start[t + 1] - B.start[t];
            A.rows = B.order + B.start[t];
            A.pool_col = B.pool_col; /* a grown pool is a new block */
            A.pool_val = B.pool_val;
            if (A.nrows == 0) continue; /* no row at this local level (fewer levels than m) */
            const size_t nr = (size_t)A.nrows;
            mg_count_kernel<<<mg_blocks(nr + 1), MG_THREADS, 0, s>>>(A);
            GS_CALL(GS_CUDA_LAUNCHED("mg_count_kernel"));
            if (B.long_rows) {
                mg_long_kernel<false><<<mg_blocks(nr * 32), MG_THREADS, 0, s>>>(A, B.cur);
                GS_CALL(GS_CUDA_LAUNCHED("mg_long_kernel<count>"));
            }
            GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, bytes, (const long long *)NULL, (long long *)NULL,
                                                          (int)nr + 1, s)));
            GS_CALL(mg_reserve(B.be, &B.cub_tmp, &B.cub_cap, bytes));
            GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(B.cub_tmp, bytes, (const long long *)B.pcnt, B.poff,
                                                          (int)nr + 1, s)));
            mg_pass_check_kernel<<<1, 1, 0, s>>>(B.dctl, B.poff + nr, t, B.max_fill, (long long)B.p_cap);
            GS_CALL(GS_CUDA_LAUNCHED("mg_pass_check_kernel"));
            mg_combine_kernel<<<mg_blocks(nr), MG_THREADS, 0, s>>>(A);
            GS_CALL(GS_CUDA_LAUNCHED("mg_combine_kernel"));
            if (B.long_rows) {
                mg_long_kernel<true><<<mg_blocks(nr * 32), MG_THREADS, 0, s>>>(A, B.cur);
                GS_CALL(GS_CUDA_LAUNCHED("mg_long_kernel<write>"));
            }
        }
        mg_ctl hc;
        GS_CALL(GS_CUDA(cudaMemcpyAsync(&hc, B.dctl, sizeof hc, cudaMemcpyDeviceToHost, s)));
        GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
        if (hc.state == MG_REFUSED) {
            B.stats->too_much_fill = true;
            return GS_OK;
        }
        if (hc.state == MG_RUN) break;
        /* MG_FULL: a larger pool with R's entries so far, then the passes again from the one that stopped */
        B.stats->pool_grown++;
        GS_CALL(mg_reserve(B.be, &B.pool_col, &B.p_cap, (size_t)hc.need, (size_t)hc.used, s));
        GS_CALL(mg_reserve(B.be, &B.pool_val, &B.p_cap2, (size_t)hc.need, (size_t)hc.used, s));
        GS_CALL(GS_CUDA(cudaMemsetAsync(&B.dctl->state, 0, sizeof B.dctl->state, s)));
        from = hc.stopped;
    }
    return GS_OK;
}

/* 3. M = I + R in CSR (too much fill after all: stats->too_much_fill, nothing built). */
static gs_status mg_build_m(mg_build &B)
{
    gs_ts_merge_dev *R = B.R;
    gs_ts_merge_stats *stats = B.stats;
    const gs_int n = B.n;
    cudaStream_t s = B.s;
    size_t bytes = 0;
    void *p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, (B.nn + 1) * sizeof(gs_int)));
    R->m_rowptr = (gs_int *)p;
    mg_len_kernel<<<B.nb, MG_THREADS, 0, s>>>(n, B.rlen, B.cnt);
    GS_CALL(GS_CUDA_LAUNCHED("mg_len_kernel"));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(NULL, bytes, (const gs_int *)NULL, (gs_int *)NULL, (int)n + 1, s)));
    GS_CALL(mg_reserve(B.be, &B.cub_tmp, &B.cub_cap, bytes));
    GS_CALL(GS_CUDA(cub::DeviceScan::ExclusiveSum(B.cub_tmp, bytes, (const gs_int *)B.cnt, R->m_rowptr, (int)n + 1,
                                                  s)));
    gs_int nnz_r = 0;
    mg_stats hs;
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&nnz_r, R->m_rowptr + n, sizeof(gs_int), cudaMemcpyDeviceToHost, s)));
    GS_CALL(GS_CUDA(cudaMemcpyAsync(&hs, B.dstats, sizeof hs, cudaMemcpyDeviceToHost, s)));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    stats->nnz_r = nnz_r;
    stats->max_row_r = hs.max_row;
    {
        long long bits = (long long)hs.growth_bits;
        double g;
        memcpy(&g, &bits, sizeof g);
        stats->growth = g;
    }
    if (stats->nnz_r > B.max_fill) {
        stats->too_much_fill = true;
        return GS_OK;
    }
    p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, ((size_t)nnz_r + 1) * sizeof(gs_int)));
    R->m_colind = (gs_int *)p;
    p = NULL;
    GS_CALL(gs_ts_work_alloc(B.be, &p, ((size_t)nnz_r + 1) * sizeof(double)));
    R->m_val = (double *)p;
    mg_m_copy_kernel<<<mg_blocks(B.nn * MG_COPY_LANES), MG_THREADS, 0, s>>>(n, B.rstart, B.rlen, B.pool_col,
                                                                            B.pool_val, R->m_rowptr, R->m_colind,
                                                                            R->m_val);
    GS_CALL(GS_CUDA_LAUNCHED("mg_m_copy_kernel"));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s)));
    R->M.nrows = R->M.ncols = n;
    R->M.nnz = nnz_r;
    R->M.rowptr = R->m_rowptr;
    R->M.colind = R->m_colind;
    R->M.val = R->m_val;
    return GS_OK;
}

gs_status gs_ts_merge_build_cuda(gs_backend *be, const gs_csr_dev *T, const gs_int *lev, gs_int nlevels, bool unit_diag,
                                 gs_int m, long long max_fill, long long pool_start, gs_ts_merge_dev *R,
                                 gs_ts_merge_stats *stats)
{
    gs_status st = GS_OK;
    mg_build B;
    memset(&B, 0, sizeof B);
    B.be = be;
    B.s = gs_ts_stream(be);
    B.T = T;
    B.lev = lev;
    B.n = T->nrows;
    B.nn = (size_t)B.n;
    B.m = m;
    B.unit_diag = unit_diag;
    B.max_fill = max_fill;
    B.R = R;
    B.stats = stats;
    B.nb = mg_blocks(B.nn + 1);

    memset(R, 0, sizeof *R);
    memset(stats, 0, sizeof *stats);
    if (m < 1 || m > GS_SF_MERGE_MAX)
        return GS_ERROR(GS_ERR_ARG, "merged schedule: %d levels per group; expected 1..%d", (int)m, GS_SF_MERGE_MAX);
    stats->m = m;
    stats->levels = nlevels;
    stats->groups = (nlevels + m - 1) / m;
    GS_TRY(mg_alloc_rows(B));
    GS_TRY(mg_build_td(B));
    GS_TRY(mg_build_r(B, pool_start));
    if (!stats->too_much_fill) GS_TRY(mg_build_m(B));
cleanup:
    if (cudaStreamSynchronize(B.s) != cudaSuccess) (void)cudaGetLastError();
    if (st != GS_OK || stats->too_much_fill) gs_ts_merge_dev_free(be, R);
    gs_ts_work_free(be, B.arena);
    gs_ts_work_free(be, B.pool_col);
    gs_ts_work_free(be, B.pool_val);
    gs_ts_work_free(be, B.cub_tmp);
    gs_ts_work_free(be, B.cur);
    return st;
}

gs_status gs_ts_merge_prepare(gs_backend *be, const gs_csr *T, const gs_csr_dev *dT, bool unit_diag, gs_int m,
                              long long max_fill, long long pool_start, const gs_ts_analysis *AT, gs_ts_merge_dev *R,
                              gs_ts_merge_stats *stats)
{
    gs_status st = GS_OK;
    gs_int *lev = NULL, *up_rowptr = NULL, *up_col = NULL;
    double *up_val = NULL;
    gs_csr_dev tdev;
    const gs_int n = AT->D.n;
    void *p = NULL;
    memset(R, 0, sizeof *R);
    memset(stats, 0, sizeof *stats);
    const gs_int *row_level = AT->row_level; /* a levels-only analysis: the levels by row already */
    if (!row_level) {
        GS_TRY(gs_ts_work_alloc(be, &p, ((size_t)n + 1) * sizeof(gs_int)));
        lev = (gs_int *)p;
        GS_TRY(gs_ts_merge_row_levels(be, &AT->D, lev));
        row_level = lev;
    }
    if (T && AT->tdev.nrows == n && AT->tdev.rowptr) { /* uploaded by T's levels-only analysis */
        dT = &AT->tdev;
    } else if (T) {
        GS_TRY(gs_ts_upload_array(be, &up_rowptr, T->rowptr, (size_t)n + 1));
        GS_TRY(gs_ts_upload_array(be, &up_col, T->colind, (size_t)T->nnz));
        GS_TRY(gs_ts_upload_array(be, &up_val, T->val, (size_t)T->nnz));
        tdev.nrows = tdev.ncols = n;
        tdev.nnz = T->nnz;
        tdev.rowptr = up_rowptr;
        tdev.colind = up_col;
        tdev.val = up_val;
        dT = &tdev;
    }
    {
        const double t0 = gs_wtime();
        GS_TRY(gs_ts_merge_build_cuda(be, dT, row_level, AT->D.nlevels, unit_diag, m, max_fill, pool_start, R,
                                      stats));
        stats->build_time = gs_wtime() - t0;
    }
    if (!stats->too_much_fill && n > 0) { /* the two stages' levels, from T's */
        p = NULL;
        GS_TRY(gs_ts_work_alloc(be, &p, 2 * (size_t)n * sizeof(gs_int)));
        R->td_level = (gs_int *)p;
        R->m_level = R->td_level + n;
        mg_stage_levels_kernel<<<mg_blocks((size_t)n), MG_THREADS, 0, gs_ts_stream(be)>>>(n, m, row_level,
                                                                                          R->td_level, R->m_level);
        GS_TRY(GS_CUDA_LAUNCHED("mg_stage_levels_kernel"));
        R->td_max_level = (AT->D.nlevels < m ? AT->D.nlevels : m) - 1;
        R->m_max_level = (AT->D.nlevels - 1) / m;
    }
cleanup:
    if (st != GS_OK) gs_ts_merge_dev_free(be, R);
    gs_ts_work_free(be, lev);
    gs_ts_free_array(be, &up_rowptr);
    gs_ts_free_array(be, &up_col);
    gs_ts_free_array(be, &up_val);
    return st;
}

gs_status gs_ts_merge_build_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int m,
                                long long max_fill, long long pool_start, gs_csr *TD, gs_csr *M,
                                gs_ts_merge_stats *stats, gs_int *stage_level)
{
    gs_status st = GS_OK;
    gs_ts_analysis AT;
    gs_ts_merge_dev R;
    gs_ts_plan_opts po = {16, true, 1, GS_SF_RUN_ELL, false};
    memset(TD, 0, sizeof *TD);
    memset(M, 0, sizeof *M);
    memset(&AT, 0, sizeof AT);
    memset(&R, 0, sizeof R);
    GS_TRY(gs_ts_check_rows(T, uplo, unit_diag, T->nrows));
    GS_TRY(gs_ts_analysis_run(be, T, uplo, unit_diag, &po, &AT));
    GS_TRY(gs_ts_merge_prepare(be, T, NULL, unit_diag, m, max_fill, pool_start, &AT, &R, stats));
    if (!stats->too_much_fill) {
        GS_TRY(gs_ts_csr_download(be, &R.TD, TD));
        GS_TRY(gs_ts_csr_download(be, &R.M, M));
        if (stage_level && T->nrows > 0)
            GS_TRY(gs_backend_download(be, stage_level, R.td_level, 2 * (size_t)T->nrows * sizeof(gs_int)));
    }
cleanup:
    gs_ts_analysis_free(be, &AT);
    gs_ts_merge_dev_free(be, &R);
    if (st != GS_OK) {
        gs_csr_free(TD);
        gs_csr_free(M);
    }
    return st;
}
