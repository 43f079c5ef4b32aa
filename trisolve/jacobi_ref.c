/* Approximate triangular solves x ~ T^{-1} b by Jacobi sweeps, the host twin of jacobi_cuda.cu:
 *   jacobi        x_0 = D^{-1} b,  x_{s+1} = D^{-1} (b - (T - D) x_s),  s = 0 .. sweeps-1
 *                 (D = diag(T); a unit diagonal gives x_{s+1} = b - (T - I) x_s). The iteration
 *                 matrix D^{-1}(T - D) is strictly triangular, hence nilpotent: after as many sweeps as T
 *                 has levels (core/csr.h gs_csr_levels) x is the exact solution, each sweep fixing one
 *                 more level. Double buffered: a sweep reads only the previous iterate.
 *   async-jacobi  block-asynchronous Jacobi (papers/iterative-jacobi-triangular-solves-for-ilu-gpu,
 *                 section 3): rows in blocks of GS_JACOBI_ROWS_PER_BLOCK; every block updates its
 *                 rows IN PLACE from whatever values x holds, with JACOBI_ASYNC_LOCAL_SWEEPS Jacobi
 *                 sweeps over its own rows per global sweep; blocks in dependency order (ascending
 *                 for L, descending for U) or fixed forward / backward (trisolve.<side>.block_order).
 *                 With deterministic = true it is exactly `jacobi`.
 *
 * On the host, async-jacobi is the SEQUENTIAL MODEL of the asynchronous method: the blocks run one
 * after another in their scheduling order, so a block sees the values of every block scheduled before
 * it (a block Gauss-Seidel sweep whose diagonal blocks are relaxed by local Jacobi sweeps). The GPU
 * runs many blocks at once and sees only some of those values, so the two agree only within the
 * convergence bounds, not to rounding. Both keep the guarantees of `jacobi`, because every global
 * sweep updates every row at least once from values no older than the previous global sweep: after s
 * sweeps every row of level <= s is exact (all of x after levels - 1 sweeps), and in the max norm the
 * error contracts at least by the factor ||D^{-1}(T - D)||_inf per global sweep.
 *
 * `jacobi` here reproduces the GPU arithmetic: rows with at most GS_JACOBI_LONG_ROW off-diagonal
 * entries are summed sequentially (a thread per row on the GPU) or, on factors of long-ish rows
 * (gs_jacobi_sweep_shape), in G lane-strided partial sums combined by a shuffle tree (G lanes per row);
 * longer rows in 32 such sums (a warp per row), so host and GPU differ only by rounding (fused
 * multiply-adds on the GPU). The twin stores double values only (the front, trisolve.c, refuses
 * preconditioner.precision = "single" on the host backend); the GPU's single mode is this twin run on
 * the factor with its values rounded as the GPU stores them (t_ij -> float, 1/t_ii -> float).
 *
 * The host creation function of both registry types lives here (jacobi_cuda.cu has the GPU one). */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/jacobi_kernels.h"
#include "trisolve/trisolve_impl.h"

/* The layout both implementations share (the GPU takes it from gs_jacobi_layout, so the host model
 * and the kernels cannot drift apart):
 *  - rows with more than GS_JACOBI_LONG_ROW off-diagonal entries are handled by a warp (32 lanes);
 *  - async-jacobi: GS_JACOBI_ROWS_PER_BLOCK rows per thread block (a thread per row; a multiple of 32);
 *  - async-jacobi: JACOBI_ASYNC_LOCAL_SWEEPS local Jacobi sweeps over the block's own rows per global
 *    sweep. Two: the second pass re-reads the block's factor rows from the L1 cache (a 256-row block
 *    of an ILU factor is a few KB), so it costs little beyond the x reads, and it carries corrections
 *    twice as far along the dependencies inside the block (ILU factors are mostly banded, so most
 *    dependencies stay inside the block). Every global sweep still updates every row at least once
 *    from values no older than the previous global sweep, which is all the convergence bounds need. */
#define GS_JACOBI_LONG_ROW 32
#define GS_JACOBI_ROWS_PER_BLOCK 256
#define JACOBI_ASYNC_LOCAL_SWEEPS 2

/* Lanes per row of the synchronous sweep for its rows of at most GS_JACOBI_LONG_ROW entries: a thread
 * per row reads its row's entries at a stride of the row length across the warp, so each load
 * instruction of rows of ~13 entries (27-point stencils) touches ~13 times the sectors it uses (one
 * sweep measured 52-70% of the copy bandwidth on laplace27 64^3, against 84-92% on the 5/7-point
 * factors). With G lanes per row a warp reads 32/G rows' entries more contiguously. Measured on the
 * H100, laplace27 64^3 L / U (us): G = 1 24.5 / 35.4, 2 22.6 / 26.1, 4 26.3 / 30.5, 8 30.7 / 33.1,
 * 16 41.9 / 49.2; on the 7-point factor G = 4 doubles the time. So G = JACOBI_SUB_LANES = 2 when the
 * factor averages at least JACOBI_SUB_MIN_AVG off-diagonal entries per row, else a thread per row;
 * the parameters (jacobi.lanes: 1, 2, 4, 8 or 16) force G for tests and measurements. The asynchronous sweeps keep
 * a thread per row. */
#define JACOBI_SUB_LANES 2
#define JACOBI_SUB_MIN_AVG 8
/* Better still, for any factor whose rows all have at most JACOBI_ELL_MAX_WIDTH entries with little
 * padding (n x max_row <= JACOBI_ELL_MAX_FILL x nnz): the GPU sweeps an ELL copy (column-major, the k-th
 * entries of a warp's rows adjacent: every load coalesced), a thread per row summing in row order -- the
 * arithmetic of a thread per row, so lanes = 1 for the twin. Measured on the H100 (GB/s over 12 nnz +
 * 28 n bytes, L / U; copy 2987): laplace27 64^3 CSR 1919 / 1416, 2 lanes 2141 / 1968, ELL 2586 / 2454;
 * poisson3d 100^3 CSR 2680 / 2689, ELL 2706 / 2890; poisson2d 1024^2 CSR 2765 / 2755, ELL 2957 / 3052.
 * jacobi.ell = on forces the ELL copy wherever the rows fit, off refuses it. */
#define JACOBI_ELL_MAX_WIDTH 16
#define JACOBI_ELL_MAX_FILL 1.3

/* host twin: a sweep is an OpenMP loop when it touches at least this many entries (rows + nnz);
 * below it the fork/join would cost more than the sweep */
#define JACOBI_HOST_PARALLEL_WORK 50000

void gs_jacobi_layout(gs_int *long_row, gs_int *rows_per_block, gs_int *local_sweeps)
{
    *long_row = GS_JACOBI_LONG_ROW;
    *rows_per_block = GS_JACOBI_ROWS_PER_BLOCK;
    *local_sweeps = JACOBI_ASYNC_LOCAL_SWEEPS;
}

void gs_jacobi_sweep_shape(gs_int n, long long nnz_off, gs_int max_row, bool in_place, const gs_jacobi_params *p,
                           int *lanes, int *ell)
{
    const int forced_lanes = p->lanes > 0 ? p->lanes : -1;
    const int forced_ell = p->ell == GS_TS_ON ? 1 : p->ell == GS_TS_OFF ? 0 : -1;
    *lanes = 1;
    *ell = 0;
    if (in_place || n <= 0) return; /* the asynchronous sweeps: a thread per row, CSR */
    bool long_ish = nnz_off >= (long long)JACOBI_SUB_MIN_AVG * n;
    bool fits = max_row <= JACOBI_ELL_MAX_WIDTH && (double)n * (double)(max_row > 0 ? max_row : 1) <=
                                                       JACOBI_ELL_MAX_FILL * (double)(nnz_off > 0 ? nnz_off : 1);
    if (forced_ell == 1 ? max_row <= JACOBI_ELL_MAX_WIDTH : forced_ell == -1 && forced_lanes == -1 && fits) {
        *ell = max_row > 0 ? (int)max_row : 1;
        return;
    }
    if (forced_lanes > 0) *lanes = forced_lanes;
    else if (long_ish) *lanes = JACOBI_SUB_LANES;
}

/* async-jacobi with asynchronous (in-place) sweeps; deterministic async-jacobi and jacobi are
 * double-buffered synchronous sweeps */
bool gs_jacobi_in_place(const gs_trisolve *ts)
{
    return strcmp(ts->type, "async-jacobi") == 0 && !ts->prm.deterministic;
}

/* Blocks in descending row order: "backward", or "dependency" for an upper factor (its rows depend on
 * later rows, so the block that starts first should own the last rows). */
bool gs_jacobi_descending(const gs_trisolve *ts)
{
    const char *o = ts->prm.block_order ? ts->prm.block_order : "dependency";
    if (strcmp(o, "backward") == 0) return true;
    if (strcmp(o, "forward") == 0) return false;
    return ts->uplo == GS_UPPER;
}

/* N = T - D (T's off-diagonal entries in their order) and dinv[i] = 1 / t_ii (NULL for a unit diagonal)
 * of a checked factor. The GPU builds the same arrays on the device (jacobi_cuda.cu, jac_fill_kernel). */
static gs_status jac_split(const gs_csr *T, bool unit_diag, gs_csr *N, double **dinv)
{
    gs_status st = GS_OK;
    gs_int n = T->nrows, k = 0;
    *dinv = NULL;
    memset(N, 0, sizeof *N);
    /* a checked factor stores exactly one diagonal per row (non-unit) or none (unit) */
    gs_int nnz_off = unit_diag ? T->nnz : T->nnz - n;
    if (nnz_off < 0) return GS_ERROR(GS_ERR_INTERNAL, "Jacobi split: factor with n = %d has only %d entries",
                                     (int)n, (int)T->nnz);
    GS_TRY(gs_csr_alloc(N, n, n, nnz_off, true));
    if (!unit_diag) GS_TRY(GS_MALLOC(*dinv, n));
    for (gs_int i = 0; i < n; i++) {
        N->rowptr[i] = k;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            gs_int j = T->colind[q];
            if (j == i) {
                if (!unit_diag) (*dinv)[i] = 1.0 / T->val[q];
                continue;
            }
            if (k == nnz_off)
                GS_FAIL(GS_ERR_INTERNAL, "Jacobi split: row %d (1-based) holds more off-diagonal entries than "
                                         "nnz - n = %d allows; was the factor checked?", (int)i + 1, (int)nnz_off);
            N->colind[k] = j;
            N->val[k++] = T->val[q];
        }
    }
    N->rowptr[n] = k;
    if (k != nnz_off)
        GS_FAIL(GS_ERR_INTERNAL, "Jacobi split: %d off-diagonal entries found, %d expected", (int)k, (int)nnz_off);
cleanup:
    if (st != GS_OK) {
        gs_csr_free(N);
        gs_free(dinv);
    }
    return st;
}

void gs_jacobi_view_common(const gs_trisolve *ts, gs_report *rep, const char *prefix, gs_int nlong,
                           gs_int max_row)
{
    char key[256];
    bool in_place = gs_jacobi_in_place(ts);
    gs_ts_report_int(rep, prefix, "sweeps", ts->prm.sweeps);
    gs_ts_report_string(rep, prefix, "mode", in_place ? "asynchronous (in place, blocks of rows)"
                                                      : "synchronous (double buffered)");
    if (in_place) {
        gs_ts_report_string(rep, prefix, "block_order", ts->prm.block_order ? ts->prm.block_order : "dependency");
        gs_ts_report_string(rep, prefix, "blocks", gs_jacobi_descending(ts) ? "descending" : "ascending");
        gs_ts_report_int(rep, prefix, "rows_per_block", GS_JACOBI_ROWS_PER_BLOCK);
        gs_ts_report_int(rep, prefix, "local_sweeps", JACOBI_ASYNC_LOCAL_SWEEPS);
    } else {
        gs_ts_report_string(rep, prefix, "block_order", "none (synchronous sweeps)");
        gs_ts_report_int(rep, prefix, "rows_per_block", GS_JACOBI_ROWS_PER_BLOCK); /* thread-per-row blocks */
    }
    if (gs_report_keyf(key, sizeof key, "%s.deterministic", prefix) == GS_OK)
        (void)gs_report_bool(rep, key, !in_place);
    if (gs_report_keyf(key, sizeof key, "%s.exact", prefix) == GS_OK) (void)gs_report_bool(rep, key, false);
    gs_ts_report_int(rep, prefix, "warp_rows", nlong);
    gs_ts_report_int(rep, prefix, "warp_row_threshold", GS_JACOBI_LONG_ROW);
    gs_ts_report_int(rep, prefix, "max_row_offdiag", max_row);
}

/* ---------------------------------------------------------------- host twin */

typedef struct jac_host_data {
    gs_csr N;      /* T without its diagonal */
    double *dinv;  /* 1 / t_ii; NULL for a unit diagonal */
    double *w;     /* n: the second Jacobi buffer, or the block staging of the asynchronous model */
    gs_int nlong, max_row;
    int lanes; /* of the synchronous sweep's short rows (gs_jacobi_sweep_shape) */
    double time_analyse;
} jac_host_data;

/* D^{-1} (b_i - sum_{j != i} t_ij xin_j) in the GPU's summation order (see the file comment). */
static double jac_row(const gs_csr *N, const double *dinv, const double *b, const double *xin, gs_int i,
                      int lanes)
{
    gs_int a = N->rowptr[i], e = N->rowptr[i + 1];
    const gs_int *ci = N->colind;
    const double *v = N->val;
    double r;
    if (e - a <= GS_JACOBI_LONG_ROW && lanes == 1) {
        double s = b[i];
        for (gs_int q = a; q < e; q++) s -= v[q] * xin[ci[q]];
        r = s;
    } else {
        int g = e - a > GS_JACOBI_LONG_ROW ? 32 : lanes; /* a warp, or the row's lanes */
        double p[32] = {0}; /* lane l sums entries a + l, a + l + g, ... */
        for (gs_int q = a; q < e; q++) p[(q - a) & (g - 1)] += v[q] * xin[ci[q]];
        for (int off = g / 2; off > 0; off >>= 1) /* __shfl_down_sync tree: lane l += lane l + off */
            for (int l = 0; l < off; l++) p[l] += p[l + off];
        r = b[i] - p[0];
    }
    return dinv ? r * dinv[i] : r;
}

/* x_0 = D^{-1} b */
static void jac_start(gs_int n, const double *dinv, const double *b, double *x)
{
    if (dinv) {
#pragma omp parallel for schedule(static) if (n >= JACOBI_HOST_PARALLEL_WORK)
        for (gs_int i = 0; i < n; i++) x[i] = b[i] * dinv[i];
    } else {
        memcpy(x, b, (size_t)n * sizeof *x);
    }
}

static gs_status jac_host_analyse(gs_trisolve *ts, const gs_csr *T)
{
    jac_host_data *d = (jac_host_data *)ts->data;
    gs_status st = GS_OK;
    double t0 = gs_wtime();
    gs_csr_free(&d->N);
    gs_free(&d->dinv);
    gs_free(&d->w);
    GS_TRY(jac_split(T, ts->unit_diag, &d->N, &d->dinv));
    GS_TRY(GS_MALLOC(d->w, T->nrows));
    d->nlong = 0;
    d->max_row = 0;
    for (gs_int i = 0; i < T->nrows; i++) {
        gs_int len = d->N.rowptr[i + 1] - d->N.rowptr[i];
        if (len > GS_JACOBI_LONG_ROW) d->nlong++;
        if (len > d->max_row) d->max_row = len;
    }
    int ell = 0; /* the GPU's ELL copy sums in row order: a thread per row here */
    gs_jacobi_sweep_shape(T->nrows, (long long)d->N.nnz, d->max_row, gs_jacobi_in_place(ts), &ts->prm.jacobi, &d->lanes,
                          &ell);
    d->time_analyse = gs_wtime() - t0;
cleanup:
    if (st != GS_OK) {
        gs_csr_free(&d->N);
        gs_free(&d->dinv);
        gs_free(&d->w);
    }
    return st;
}

/* Synchronous sweeps, double buffered between x and w: iterate s lands in x when sweeps - s is even,
 * so the last one is in x without a copy. */
static void jac_host_sync(const jac_host_data *d, int sweeps, const double *b, double *x)
{
    gs_int n = d->N.nrows;
    bool par = (double)n + (double)d->N.nnz >= JACOBI_HOST_PARALLEL_WORK;
    (void)par; /* unused without OpenMP */
    double *cur = (sweeps % 2 == 0) ? x : d->w;
    jac_start(n, d->dinv, b, cur);
    for (int s = 1; s <= sweeps; s++) {
        double *out = (cur == x) ? d->w : x;
        const double *in = cur;
#pragma omp parallel for schedule(static) if (par)
        for (gs_int i = 0; i < n; i++) out[i] = jac_row(&d->N, d->dinv, b, in, i, d->lanes);
        cur = out;
    }
}

/* The sequential model of block-asynchronous Jacobi: blocks one after another in scheduling order,
 * each relaxing its rows in place (Jacobi inside the block: new values staged in w, then written). */
static void jac_host_async(const jac_host_data *d, int sweeps, bool descending, const double *b, double *x)
{
    gs_int n = d->N.nrows, rb = GS_JACOBI_ROWS_PER_BLOCK;
    gs_int nblocks = (n + rb - 1) / rb;
    jac_start(n, d->dinv, b, x);
    for (int s = 0; s < sweeps; s++)
        for (gs_int k = 0; k < nblocks; k++) {
            gs_int r = descending ? nblocks - 1 - k : k;
            gs_int i0 = r * rb, i1 = i0 + rb < n ? i0 + rb : n;
            for (int ls = 0; ls < JACOBI_ASYNC_LOCAL_SWEEPS; ls++) {
                for (gs_int i = i0; i < i1; i++) d->w[i] = jac_row(&d->N, d->dinv, b, x, i, 1);
                memcpy(x + i0, d->w + i0, (size_t)(i1 - i0) * sizeof *x);
            }
        }
}

static gs_status jac_host_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    const jac_host_data *d = (const jac_host_data *)ts->data;
    if (gs_jacobi_in_place(ts)) jac_host_async(d, ts->prm.sweeps, gs_jacobi_descending(ts), b->data, x->data);
    else jac_host_sync(d, ts->prm.sweeps, b->data, x->data);
    return GS_OK;
}

static void jac_host_destroy(gs_trisolve *ts)
{
    jac_host_data *d = (jac_host_data *)ts->data;
    if (!d) return;
    gs_csr_free(&d->N);
    gs_free(&d->dinv);
    gs_free(&d->w);
    gs_free(&ts->data);
}

static void jac_host_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const jac_host_data *d = (const jac_host_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation",
                        gs_jacobi_in_place(ts) ? "host sequential model of block-asynchronous Jacobi"
                                               : "host Jacobi sweeps (twin of the GPU kernel)");
    gs_jacobi_view_common(ts, rep, prefix, d->nlong, d->max_row);
    gs_ts_report_int(rep, prefix, "nnz_offdiag", d->N.nnz);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops jac_host_ops = {jac_host_analyse, jac_host_solve, jac_host_destroy, jac_host_view, NULL};

/* ---------------------------------------------------------------- creation (both types, host backend) */

gs_status gs_trisolve_create_jacobi_host(gs_trisolve *ts)
{
    /* the asynchronous result depends on the block timing: a preconditioner built on it changes
     * between applications (FGMRES); the host model is deterministic but stands for the GPU method */
    ts->variable = gs_jacobi_in_place(ts);
    jac_host_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &jac_host_ops;
    return GS_OK;
}
