/* The cuda backend's fused CG (the gs_kstate ops): the scalars stay on the device, each step is one
 * kernel that also reduces its inner product (the last block to finish adds the blocks' partial sums in
 * block order, so the total does not depend on scheduling), and the iteration records go to host-mapped
 * memory read after an event. The scalar steps are kstate_logic.h's, shared with the host backend.
 * Across processes (gs_backend_cuda_ks_combine), the reducing kernel leaves this process's part in device
 * memory, the caller's gather brings every process's part (enqueued on the stream: no host round trip),
 * and a one-thread kernel adds them in process order and takes the scalar step. With a preconditioner,
 * r'r waits for r'z of the same iteration and both travel in one gather (two per iteration, not three):
 * the steps taken are the same, since nothing between them reads what the r'r step decides (the
 * preconditioner and r'z kernel run either way, and a stop found by r'r skips the r'z step). */
#include <cuda_runtime.h>

#include <stddef.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/backend_cuda_impl.h"
#include "core/cuda_check.h"
#include "core/kstate_logic.h"
#include "core/mem.h"
#include "core/spmv_cuda.h"

typedef struct {
    gs_kscalars k;
    unsigned count; /* blocks finished in the current reduction kernel (the last one resets it) */
} ks_dev;

typedef struct {
    ks_dev *d;             /* device */
    /* across processes (gs_backend_cuda_ks_combine): gather, its context and the processes; mine
     * (device, 2 doubles): this process's parts of the pending inner products; all (device, 2 nranks);
     * deferred: the iteration whose r'r waits in mine[0] for r'z (-1: none) */
    gs_cuda_gather_fn gather;
    void *gctx;
    int nranks, deferred;
    double *mine, *all;
    double *partials;      /* device, one per block of the largest grid */
    size_t partials_cap;   /* doubles in partials */
    gs_krec *ring_host;    /* pinned, mapped: written by the kernels, read by the host after the event */
    gs_krec *ring_dev;     /* the device address of ring_host */
    cudaEvent_t ev[GS_KS_RING];
} cuda_ks;

/* Blocks per SM of the fused kernels: one full wave (8 x 256 threads = 2048 resident per SM), so that
 * the last block's pass over the partial sums stays short (about 4 loads per thread on an H100). */
#define KS_BLOCKS_PER_SM 8

static unsigned ks_grid(const cuda_ctx *c, gs_int n)
{
    long long b = ((long long)n + THREADS - 1) / THREADS;
    long long cap = (long long)c->sm_count * KS_BLOCKS_PER_SM;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

/* Every block contributes s; the last block to finish (all others have published their partial sums)
 * adds the partials in block order, so the total does not depend on scheduling, and returns true in its
 * thread 0 with *total. Grids come from ks_grid (partials has room for its largest). */
static __device__ bool ks_last_block_total(double s, double *partials, unsigned *count, double *total)
{
    __shared__ bool last;
    double unused = 0.0;
    block_reduce<RED_DOT>(s, unused);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s;
        __threadfence(); /* the partial is visible before the count says so */
        last = atomicAdd(count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    double t = 0.0;
#pragma unroll 4
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) t += __ldcg(&partials[b]);
    __syncthreads(); /* block_reduce's shared arrays are reused */
    block_reduce<RED_DOT>(t, unused);
    if (threadIdx.x == 0) {
        *total = t;
        *count = 0;
    }
    return threadIdx.x == 0;
}

static __global__ void k_ks_begin(ks_dev *d, int it, gs_ks_start start) { ksl_begin(&d->k, it, &start); }

/* The stop code is read once per block at entry: it is only written by the last block of a kernel,
 * after every block has read it, so all blocks agree. */
/* part: NULL, or where the total goes instead of the scalar step (across processes: k_ks_after takes it). */
static __global__ void k_cg_pq(gs_int n, ks_dev *d, double *partials, int it, const double *__restrict__ p,
                               const double *__restrict__ q, gs_krec *ring, double *part)
{
    if (d->k.stop) return;
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n) s += p[i] * q[i];
    if (ks_last_block_total(s, partials, &d->count, &tot)) {
        if (part)
            *part = tot;
        else
            ksl_after_pq(&d->k, it, tot, &ring[it % GS_KS_RING]);
    }
}

static __global__ void k_cg_update(gs_int n, ks_dev *d, double *partials, int it, double *__restrict__ x,
                                   double *__restrict__ r, const double *__restrict__ p,
                                   const double *__restrict__ q, int rz_is_rr, gs_krec *ring, double *part)
{
    if (d->k.stop) return;
    const double alpha = d->k.s[KS_ALPHA];
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n)
    {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        s += ri * ri;
    }
    if (ks_last_block_total(s, partials, &d->count, &tot)) {
        if (part)
            *part = tot;
        else
            ksl_after_rr(&d->k, it, tot, rz_is_rr, &ring[it % GS_KS_RING]);
    }
}

static __global__ void k_cg_rz(gs_int n, ks_dev *d, double *partials, int it, const double *__restrict__ r,
                               const double *__restrict__ z, gs_krec *ring, double *part)
{
    if (d->k.stop) return;
    double s = 0.0, tot = 0.0;
    GRID_STRIDE(i, n) s += r[i] * z[i];
    if (ks_last_block_total(s, partials, &d->count, &tot)) {
        if (part)
            *part = tot;
        else
            ksl_after_rz(&d->k, it, tot, &ring[it % GS_KS_RING]);
    }
}

enum { AFTER_PQ, AFTER_RR, AFTER_RZ, AFTER_RR_RZ };

/* Across processes: the count (1, or 2 for AFTER_RR_RZ) parts of every process (all[r * count + j])
 * added in process order (the same doubles on each), then the scalar step(s) `which` of iteration it.
 * One thread. */
static __global__ void k_ks_after(ks_dev *d, int which, int it, const double *all, int nranks, int rz_is_rr,
                                  gs_krec *ring)
{
    if (d->k.stop) return;
    const int count = which == AFTER_RR_RZ ? 2 : 1;
    double tot[2] = {0.0, 0.0};
    for (int r = 0; r < nranks; r++)
        for (int j = 0; j < count; j++) tot[j] += all[r * count + j];
    gs_krec *rec = &ring[it % GS_KS_RING];
    if (which == AFTER_PQ) {
        ksl_after_pq(&d->k, it, tot[0], rec);
    } else if (which == AFTER_RZ) {
        ksl_after_rz(&d->k, it, tot[0], rec);
    } else {
        ksl_after_rr(&d->k, it, tot[0], rz_is_rr, rec);
        if (which == AFTER_RR_RZ && !d->k.stop) ksl_after_rz(&d->k, it, tot[1], rec);
    }
}

static __global__ void k_cg_direction(gs_int n, const ks_dev *d, int it, const double *__restrict__ z,
                                      double *__restrict__ p)
{
    if (d->k.stop) return;
    const double beta = ksl_beta(&d->k, it);
    GRID_STRIDE(i, n) p[i] = z[i] + beta * p[i];
}

static cuda_ks *cks(gs_kstate *ks) { return (cuda_ks *)ks->impl; }

void gs_cuda_be_ks_destroy(gs_kstate *ks)
{
    cuda_ks *k = cks(ks);
    if (!k) return;
    cuda_ctx *c = ctx_of(ks->be);
    if (cudaStreamSynchronize(c->stream) != cudaSuccess) (void)cudaGetLastError();
    for (int j = 0; j < GS_KS_RING; j++)
        if (k->ev[j]) cudaEventDestroy(k->ev[j]);
    if (k->ring_host) cudaFreeHost(k->ring_host);
    gs_cuda_be_free(ks->be, k->partials);
    gs_cuda_be_free(ks->be, k->mine);
    gs_cuda_be_free(ks->be, k->all);
    gs_cuda_be_free(ks->be, k->d);
    (void)cudaGetLastError();
    gs_free(&ks->impl);
}

gs_status gs_cuda_be_ks_create(gs_backend *be, gs_kstate *ks)
{
    gs_status st = GS_OK;
    cuda_ctx *c = ctx_of(be);
    cuda_ks *k = NULL;
    GS_CALL(gs_calloc(&k, 1, sizeof *k));
    ks->impl = k;
    GS_TRY(gs_cuda_be_alloc(be, (void **)&k->d, sizeof(ks_dev)));
    k->partials_cap = (size_t)c->sm_count * KS_BLOCKS_PER_SM;
    GS_TRY(gs_cuda_be_alloc(be, (void **)&k->partials, k->partials_cap * sizeof(double)));
    GS_TRY(GS_CUDA(cudaMemsetAsync(k->d, 0, sizeof(ks_dev), c->stream)));
    GS_TRY(GS_CUDA(cudaHostAlloc((void **)&k->ring_host, GS_KS_RING * sizeof(gs_krec), cudaHostAllocMapped)));
    GS_TRY(GS_CUDA(cudaHostGetDevicePointer((void **)&k->ring_dev, k->ring_host, 0)));
    for (int j = 0; j < GS_KS_RING; j++) {
        k->ring_host[j].it = -1;
        GS_TRY(GS_CUDA(cudaEventCreateWithFlags(&k->ev[j], cudaEventDisableTiming)));
    }
    GS_TRY(GS_CUDA(cudaStreamSynchronize(c->stream)));
    return GS_OK;
cleanup:
    gs_cuda_be_ks_destroy(ks);
    return st;
}

/* Across processes, after a reducing kernel left this process's part in mine: every process's part
 * gathered (on the stream) and the scalar step taken on their sum. Nothing for a kstate of one process. */
static gs_status ks_combine(cuda_ks *k, cuda_ctx *c, int which, int it, int rz_is_rr)
{
    if (!k->gather) return GS_OK;
    const int count = which == AFTER_RR_RZ ? 2 : 1;
    GS_CALL(k->gather(k->gctx, k->mine, k->all, (size_t)count, c->stream));
    k_ks_after<<<1, 1, 0, c->stream>>>(k->d, which, it, k->all, k->nranks, rz_is_rr, k->ring_dev);
    GS_CALL(GS_CUDA_LAUNCHED("k_ks_after"));
    return GS_OK;
}

/* A r'r still waiting for its r'z (a step other than cg_rz came first): its step taken alone. */
static gs_status ks_flush(cuda_ks *k, cuda_ctx *c)
{
    if (k->deferred < 0) return GS_OK;
    const int it = k->deferred;
    k->deferred = -1;
    return ks_combine(k, c, AFTER_RR, it, 0);
}

gs_status gs_backend_cuda_ks_combine(gs_kstate *ks, int nranks, gs_cuda_gather_fn gather, void *ctx)
{
    if (!ks || ks->be->ops->ks_create != gs_cuda_be_ks_create)
        return GS_ERROR(GS_ERR_ARG, "gs_backend_cuda_ks_combine: not a cuda backend's CG state");
    if (nranks < 1 || !gather)
        return GS_ERROR(GS_ERR_ARG, "gs_backend_cuda_ks_combine: %d processes, gather %s", nranks,
                        gather ? "given" : "missing");
    cuda_ks *k = cks(ks);
    if (k->gather) return GS_ERROR(GS_ERR_ARG, "gs_backend_cuda_ks_combine: the CG state is combined already");
    GS_CALL(gs_cuda_be_alloc(ks->be, (void **)&k->mine, 2 * sizeof(double)));
    GS_CALL(gs_cuda_be_alloc(ks->be, (void **)&k->all, 2 * (size_t)nranks * sizeof(double)));
    k->deferred = -1;
    k->gather = gather;
    k->gctx = ctx;
    k->nranks = nranks;
    return GS_OK;
}

gs_status gs_cuda_be_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start)
{
    cuda_ctx *c = ctx_of(ks->be);
    GS_CALL(ks_flush(cks(ks), c));
    k_ks_begin<<<1, 1, 0, c->stream>>>(cks(ks)->d, it, *start);
    GS_CALL(GS_CUDA_LAUNCHED("k_ks_begin"));
    return GS_OK;
}

gs_status gs_cuda_be_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    GS_CALL(ks_flush(k, c));
    k_cg_pq<<<ks_grid(c, p->n), THREADS, 0, c->stream>>>(p->n, k->d, k->partials, it, p->data, q->data, k->ring_dev,
                                                          k->mine);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_pq"));
    return ks_combine(k, c, AFTER_PQ, it, 0);
}

/* q = A p with p'q and alpha computed by the SpMV kernel itself (core/spmv_cuda.h) when the matrix uses
 * our SpMV without long rows; otherwise the SpMV and k_cg_pq. The partial sums grow to the SpMV grid
 * once (the stream is drained first: queued kernels may still use the old array). */
gs_status gs_cuda_be_cg_spmv_pq(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    const cuda_mat *m = (const cuda_mat *)A->impl;
    size_t need = 0;
    if (k->gather || !m->own || !gs_spmv_plan_fuses_cg(m->own, &need)) {
        GS_CALL(gs_cuda_be_spmv(1.0, A, p, 0.0, q));
        return gs_cuda_be_cg_pq(ks, it, p, q);
    }
    if (need > k->partials_cap) {
        double *grown = NULL;
        GS_CALL(GS_CUDA(cudaStreamSynchronize(c->stream)));
        GS_CALL(gs_cuda_be_alloc(ks->be, (void **)&grown, need * sizeof(double)));
        gs_cuda_be_free(ks->be, k->partials);
        k->partials = grown;
        k->partials_cap = need;
    }
    gs_kscalars *scal = (gs_kscalars *)((char *)k->d + offsetof(ks_dev, k));
    unsigned *count = (unsigned *)((char *)k->d + offsetof(ks_dev, count));
    GS_CALL(gs_spmv_plan_apply_cg_pq(m->own, p->data, q->data, scal, count, k->partials, it, k->ring_dev, c->stream));
    return GS_OK;
}

gs_status gs_cuda_be_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                                const gs_vector *q, bool rz_is_rr)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    GS_CALL(ks_flush(k, c));
    k_cg_update<<<ks_grid(c, x->n), THREADS, 0, c->stream>>>(x->n, k->d, k->partials, it, x->data, r->data, p->data,
                                                              q->data, rz_is_rr ? 1 : 0, k->ring_dev, k->mine);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_update"));
    if (k->gather && !rz_is_rr) { /* r'z follows: r'r travels with it */
        k->deferred = it;
        return GS_OK;
    }
    return ks_combine(k, c, AFTER_RR, it, rz_is_rr ? 1 : 0);
}

gs_status gs_cuda_be_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    cuda_ctx *c = ctx_of(ks->be);
    cuda_ks *k = cks(ks);
    const bool with_rr = k->deferred == it; /* r'z beside this iteration's r'r, one gather for both */
    if (!with_rr) GS_CALL(ks_flush(k, c));
    k->deferred = -1;
    k_cg_rz<<<ks_grid(c, r->n), THREADS, 0, c->stream>>>(r->n, k->d, k->partials, it, r->data, z->data, k->ring_dev,
                                                          k->mine ? k->mine + (with_rr ? 1 : 0) : NULL);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_rz"));
    return ks_combine(k, c, with_rr ? AFTER_RR_RZ : AFTER_RZ, it, 0);
}

gs_status gs_cuda_be_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    cuda_ctx *c = ctx_of(ks->be);
    GS_CALL(ks_flush(cks(ks), c));
    k_cg_direction<<<ks_grid(c, p->n), THREADS, 0, c->stream>>>(p->n, cks(ks)->d, it, z->data, p->data);
    GS_CALL(GS_CUDA_LAUNCHED("k_cg_direction"));
    return GS_OK;
}

gs_status gs_cuda_be_ks_mark(gs_kstate *ks, int it)
{
    cuda_ctx *c = ctx_of(ks->be);
    GS_CALL(ks_flush(cks(ks), c));
    GS_CALL(GS_CUDA(cudaEventRecord(cks(ks)->ev[it % GS_KS_RING], c->stream)));
    return GS_OK;
}

gs_status gs_cuda_be_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    cuda_ks *k = cks(ks);
    GS_CALL(GS_CUDA(cudaEventSynchronize(k->ev[it % GS_KS_RING])));
    const volatile gs_krec *src = &k->ring_host[it % GS_KS_RING];
    rec->it = src->it;
    rec->code = src->code;
    rec->rnorm = src->rnorm;
    rec->value = src->value;
    return GS_OK;
}
