/* Sync-free triangular solve on the GPU, x = T^{-1} b, in ONE kernel without any global barrier:
 * a warp per row computes x_i = (b_i - sum_{j != i} t_ij x_j) * (1/t_ii), each lane waiting on the
 * ready flags of the rows j it reads.
 *
 * Scheduling (no deadlock): every warp takes a ticket t from a global atomic counter and solves the
 * t-th row in dependency order (row t for lower, row n-1-t for upper). A row depends only on rows
 * with smaller tickets, which were taken by warps that already run (a ticket is taken by a running
 * warp), so the warp holding the smallest unfinished ticket always has all its inputs and the
 * solve progresses whatever order the hardware starts blocks in.
 *
 * Memory ordering: the producer writes x_i, then stores flag_i = gen with release semantics at device
 * scope; a consumer spins on flag_j with acquire loads and then reads x_j through L2 (ld.cg).
 *
 * No memset between solves and no host-side state: the ticket counter is never reset. Each solve
 * launches the same W warps, each taking exactly one ticket, and a solve starts only after the
 * previous one ended (stream order), so solve k (from 0) holds tickets kW .. kW + W - 1. A warp with
 * ticket T therefore knows its solve k = T / W, its row rank t = T - kW and the generation
 * gen = k + 1 (mod 2^32): row i is ready in this solve when flag_i == gen. Every solve rewrites every
 * flag, so a stale flag always holds gen - 1 (or 0 before the first solve) and never equals gen.
 * Because nothing is passed from the host per solve, the launch can also be captured into a CUDA
 * graph and replayed. */
#include <cuda/atomic>
#include <cuda_runtime.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

#define SF_THREADS 256 /* 8 warps per block */
#define SF_WARPS (SF_THREADS / 32)

/* Off-diagonal part of T (CSR, original numbering), 1/diagonal, flags and the ticket counter. */
struct sf_dev {
    gs_int n;
    const gs_int *__restrict__ rowptr;
    const gs_int *__restrict__ col;
    const double *__restrict__ val;
    const double *__restrict__ dinv;
    unsigned *flags;
    unsigned long long *ticket;
    unsigned long long nwarps; /* W: warps per solve */
};

typedef struct sf_data {
    gs_int n, nnz_off, max_row_length, empty_rows;
    gs_int *rowptr, *col;
    double *val, *dinv;
    unsigned *flags;
    unsigned long long *ticket;
    double time_analyse;
} sf_data;

template <bool LOWER>
static __global__ void __launch_bounds__(SF_THREADS)
    sf_kernel(sf_dev S, const double *__restrict__ b, double *x)
{
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long T = 0;
    if (lane == 0) T = atomicAdd(S.ticket, 1ULL);
    T = __shfl_sync(0xffffffffu, T, 0);
    const unsigned long long k = T / S.nwarps, t = T - k * S.nwarps;
    const unsigned gen = (unsigned)(k + 1);
    if (t >= (unsigned long long)S.n) return; /* warp-uniform */
    const gs_int i = LOWER ? (gs_int)t : S.n - 1 - (gs_int)t;

    /* s = sum_{j != i} t_ij x_j, lanes striding over the row; wait for each x_j to be final */
    double s = 0.0;
    const gs_int q1 = S.rowptr[i + 1];
    for (gs_int q = S.rowptr[i] + (gs_int)lane; q < q1; q += 32) {
        const gs_int j = S.col[q];
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> ready(S.flags[j]);
        while (ready.load(cuda::memory_order_acquire) != gen) {
        }
        s += S.val[q] * __ldcg(x + j);
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);

    if (lane == 0) {
        x[i] = (b[i] - s) * S.dinv[i];
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> done(S.flags[i]);
        done.store(gen, cuda::memory_order_release); /* publishes x[i] */
    }
}

static void sf_release(gs_trisolve *ts, sf_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
    gs_ts_free_array(be, &d->rowptr);
    gs_ts_free_array(be, &d->col);
    gs_ts_free_array(be, &d->val);
    gs_ts_free_array(be, &d->dinv);
    gs_ts_free_array(be, &d->flags);
    gs_ts_free_array(be, &d->ticket);
}

static gs_status sf_analyse(gs_trisolve *ts, const gs_csr *T)
{
    sf_data *d = (sf_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    gs_int *rp = NULL, *ci = NULL;
    double *v = NULL, *dinv = NULL;
    gs_int n = T->nrows;
    double t0 = gs_wtime();
    cudaStream_t s = gs_ts_stream(be);

    sf_release(ts, d);
    /* host: split T into its off-diagonal CSR and 1/diagonal */
    gs_int nnz_off = T->nnz - (ts->unit_diag ? 0 : n);
    GS_TRY(GS_MALLOC(rp, (size_t)n + 1));
    GS_TRY(GS_MALLOC(ci, nnz_off));
    GS_TRY(GS_MALLOC(v, nnz_off));
    GS_TRY(GS_MALLOC(dinv, n));
    d->max_row_length = 0;
    d->empty_rows = 0;
    rp[0] = 0;
    for (gs_int i = 0, k = 0; i < n; i++) {
        dinv[i] = 1.0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            if (T->colind[q] == i) {
                dinv[i] = 1.0 / T->val[q];
                continue;
            }
            ci[k] = T->colind[q];
            v[k] = T->val[q];
            k++;
        }
        rp[i + 1] = k;
        gs_int len = rp[i + 1] - rp[i];
        if (len > d->max_row_length) d->max_row_length = len;
        if (len == 0) d->empty_rows++;
    }
    d->n = n;
    d->nnz_off = nnz_off;

    GS_TRY(gs_ts_upload_array(be, &d->rowptr, rp, (size_t)n + 1));
    GS_TRY(gs_ts_upload_array(be, &d->col, ci, (size_t)nnz_off));
    GS_TRY(gs_ts_upload_array(be, &d->val, v, (size_t)nnz_off));
    GS_TRY(gs_ts_upload_array(be, &d->dinv, dinv, (size_t)n));
    {
        void *p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, (size_t)n * sizeof(unsigned)));
        d->flags = (unsigned *)p;
        p = NULL;
        GS_TRY(gs_backend_alloc(be, &p, sizeof(unsigned long long)));
        d->ticket = (unsigned long long *)p;
    }
    GS_TRY(TS_CUDA(cudaMemsetAsync(d->flags, 0, (size_t)n * sizeof(unsigned), s)));
    GS_TRY(TS_CUDA(cudaMemsetAsync(d->ticket, 0, sizeof(unsigned long long), s)));
    GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    d->time_analyse = gs_wtime() - t0;
cleanup:
    gs_free(&rp);
    gs_free(&ci);
    gs_free(&v);
    gs_free(&dinv);
    if (st != GS_OK) sf_release(ts, d);
    return st;
}

static gs_status sf_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    sf_data *d = (sf_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    /* one warp per row: W = blocks * SF_WARPS >= n warps, each takes exactly one ticket */
    unsigned blocks = (unsigned)((d->n + SF_WARPS - 1) / SF_WARPS);
    sf_dev S;
    S.n = d->n;
    S.rowptr = d->rowptr;
    S.col = d->col;
    S.val = d->val;
    S.dinv = d->dinv;
    S.flags = d->flags;
    S.ticket = d->ticket;
    S.nwarps = (unsigned long long)blocks * SF_WARPS;
    if (ts->uplo == GS_LOWER) {
        sf_kernel<true><<<blocks, SF_THREADS, 0, s>>>(S, b->data, x->data);
        GS_CALL(TS_LAUNCHED("sf_kernel<lower>"));
    } else {
        sf_kernel<false><<<blocks, SF_THREADS, 0, s>>>(S, b->data, x->data);
        GS_CALL(TS_LAUNCHED("sf_kernel<upper>"));
    }
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
    gs_ts_report_string(rep, prefix, "implementation", "cuda sync-free (warp per row, ready flags)");
    gs_ts_report_int(rep, prefix, "nnz_offdiag", d->nnz_off);
    gs_ts_report_int(rep, prefix, "max_row_length", d->max_row_length);
    gs_ts_report_int(rep, prefix, "rows_without_dependencies", d->empty_rows);
    gs_ts_report_int(rep, prefix, "threads_per_block", SF_THREADS);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
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
