/* The distributed backend (dist/backend_mpi.h): elementwise work by the host backend's kernels on the
 * owned rows; reductions as local partial sums gathered from every rank and added in rank order, so that
 * every rank holds bitwise the same scalar and a run repeats exactly; SpMV with a halo exchange overlapped
 * with the rows that read no halo entry. The fused CG scalar steps are core/kstate_logic.h's, as for the
 * other backends. */
#include "dist/backend_mpi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/kstate_logic.h"
#include "core/mem.h"

typedef struct mpi_impl {
    MPI_Comm comm;
    int rank, size;
    gs_backend *local;          /* the host backend: kernels and local preconditioners */
    const gs_backend_ops *hops; /* its ops */
    double *gbuf;               /* size * gcap doubles: the gathered partial sums */
    size_t gcap;
    gs_mpi_stats stats;
} mpi_impl;

static mpi_impl *IMPL(const gs_backend *be) { return (mpi_impl *)be->impl; }

static gs_status mpi_status(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return GS_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
    return GS_ERROR(GS_ERR_INTERNAL, "MPI: %s failed: %s", what, msg);
}
#define MPI_CALL(expr) GS_CALL(mpi_status((expr), #expr))

void gs_halo_free(gs_halo *h)
{
    if (!h) return;
    gs_free(&h->recv_rank);
    gs_free(&h->send_rank);
    gs_free(&h->recv_off);
    gs_free(&h->send_off);
    gs_free(&h->send_idx);
    memset(h, 0, sizeof *h);
}

gs_status gs_halo_copy(const gs_halo *s, gs_halo *d)
{
    gs_status st = GS_OK;
    memset(d, 0, sizeof *d);
    *d = (gs_halo){s->n_own, s->n_halo, s->nrecv, s->nsend, NULL, NULL, NULL, NULL, NULL};
    GS_TRY(GS_MALLOC(d->recv_rank, s->nrecv + 1));
    GS_TRY(GS_MALLOC(d->send_rank, s->nsend + 1));
    GS_TRY(GS_MALLOC(d->recv_off, s->nrecv + 1));
    GS_TRY(GS_MALLOC(d->send_off, s->nsend + 1));
    GS_TRY(GS_MALLOC(d->send_idx, s->send_off[s->nsend] + 1));
    memcpy(d->recv_rank, s->recv_rank, (size_t)s->nrecv * sizeof *s->recv_rank);
    memcpy(d->send_rank, s->send_rank, (size_t)s->nsend * sizeof *s->send_rank);
    memcpy(d->recv_off, s->recv_off, ((size_t)s->nrecv + 1) * sizeof *s->recv_off);
    memcpy(d->send_off, s->send_off, ((size_t)s->nsend + 1) * sizeof *s->send_off);
    memcpy(d->send_idx, s->send_idx, (size_t)s->send_off[s->nsend] * sizeof *s->send_idx);
    return GS_OK;
cleanup:
    gs_halo_free(d);
    return st;
}

/* ---- reductions: out[j] = sum over ranks r (in order 0, 1, ...) of part[j] of rank r ---- */

static gs_status reduce_sum(gs_backend *be, const double *part, int k, double *out)
{
    mpi_impl *m = IMPL(be);
    size_t need = (size_t)m->size * (size_t)k;
    if (need > m->gcap) {
        GS_CALL(gs_realloc(&m->gbuf, need, sizeof *m->gbuf));
        m->gcap = need;
    }
    double t = gs_wtime();
    int rc = MPI_Allgather(part, k, MPI_DOUBLE, m->gbuf, k, MPI_DOUBLE, m->comm);
    m->stats.time_comm += gs_wtime() - t;
    m->stats.reductions++;
    MPI_CALL(rc);
    for (int j = 0; j < k; j++) {
        double s = 0.0;
        for (int r = 0; r < m->size; r++) s += m->gbuf[(size_t)r * (size_t)k + (size_t)j];
        out[j] = s;
    }
    return GS_OK;
}

static gs_status mpi_dot(const gs_vector *x, const gs_vector *y, double *result)
{
    double s = 0.0;
    GS_CALL(IMPL(x->be)->hops->dot(x, y, &s));
    return reduce_sum(x->be, &s, 1, result);
}

static gs_status mpi_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                          double result[2])
{
    double s[2];
    GS_CALL(IMPL(x->be)->hops->dot2(x, y, u, v, s));
    return reduce_sum(x->be, s, 2, result);
}

/* ||x||_2 = M sqrt(sum_r (m_r / M)^2 s_r) with m_r = max_i |x_i| on rank r, s_r = sum_i (x_i / m_r)^2 and
 * M = max_r m_r: no overflow or underflow, as the host backend's; NaN when any entry is not finite. */
static gs_status mpi_nrm2(const gs_vector *x, double *result)
{
    mpi_impl *m = IMPL(x->be);
    const double *a = x->data;
    double mx = 0.0, part[2] = {0.0, 0.0};
    bool bad = false;
    for (gs_int i = 0; i < x->n; i++) {
        double v = fabs(a[i]);
        if (!isfinite(v)) bad = true;
        else if (v > mx) mx = v;
    }
    if (bad) mx = NAN;
    else if (mx > 0.0) {
        double s = 0.0, inv = 1.0 / mx;
        for (gs_int i = 0; i < x->n; i++) s += (a[i] * inv) * (a[i] * inv);
        part[1] = s;
    }
    part[0] = mx;
    /* gather (m_r, s_r) from every rank: reduce_sum's buffer holds them after the call */
    double ignored[2];
    GS_CALL(reduce_sum(x->be, part, 2, ignored));
    double M = 0.0;
    for (int r = 0; r < m->size; r++) {
        double mr = m->gbuf[2 * r];
        if (isnan(mr)) {
            *result = NAN;
            return GS_OK;
        }
        if (mr > M) M = mr;
    }
    if (M == 0.0) {
        *result = 0.0;
        return GS_OK;
    }
    double s = 0.0;
    for (int r = 0; r < m->size; r++) {
        double q = m->gbuf[2 * r] / M;
        s += q * q * m->gbuf[2 * r + 1];
    }
    *result = M * sqrt(s);
    return GS_OK;
}

static gs_status mpi_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    GS_CALL(IMPL(w->be)->hops->mdot(V, k, w, h));
    return reduce_sum(w->be, h, (int)k, h);
}

static gs_status mpi_mdot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h)
{
    GS_CALL(IMPL(x->be)->hops->mdot2(V, k, x, y, h));
    return reduce_sum(x->be, h, (int)(2 * k), h);
}

/* ---- memory: host memory, accounted on this backend ---- */

static gs_status mpi_alloc(gs_backend *be, void **p, size_t bytes)
{
    GS_CALL(gs_malloc(p, bytes, 1));
    if (!gs_mem_track_add(&be->mem, *p, bytes)) {
        gs_free(p);
        return GS_ERROR(GS_ERR_MEM, "out of host memory recording an allocation of %zu bytes", bytes);
    }
    return GS_OK;
}
static void mpi_free(gs_backend *be, void *p)
{
    gs_mem_track_remove(&be->mem, p);
    gs_free(&p);
}
static gs_status mpi_memcpy(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    if (bytes) memmove(dst, src, bytes);
    return GS_OK;
}
static gs_status mpi_sync(gs_backend *be) { return GS_OK; }
static gs_status mpi_mem_info(gs_backend *be, size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = *total_bytes = 0;
    return GS_OK;
}

/* ---- elementwise: the host kernels on the owned rows ---- */

static gs_status mpi_set(gs_vector *x, double a) { return IMPL(x->be)->hops->set(x, a); }
static gs_status mpi_scale(gs_vector *x, double a) { return IMPL(x->be)->hops->scale(x, a); }
static gs_status mpi_axpy(double a, const gs_vector *x, gs_vector *y) { return IMPL(x->be)->hops->axpy(a, x, y); }
static gs_status mpi_axpby(double a, const gs_vector *x, double b, gs_vector *y)
{
    return IMPL(x->be)->hops->axpby(a, x, b, y);
}
static gs_status mpi_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double c, gs_vector *z)
{
    return IMPL(x->be)->hops->axpbypcz(a, x, b, y, c, z);
}
static gs_status mpi_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    return IMPL(x->be)->hops->pointwise_mult(x, y, z);
}
static gs_status mpi_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    return IMPL(y->be)->hops->mgemv(alpha, V, k, h, beta, y);
}

static gs_status mpi_mgemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                            double b, double d, gs_vector *y)
{
    return IMPL(y->be)->hops->mgemv2(V, k, p, a, x, q, b, d, y);
}
static gs_status mpi_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    return IMPL(x->be)->hops->gather(x, idx, y);
}
static gs_status mpi_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    return IMPL(x->be)->hops->scatter(x, idx, y);
}

/* ---- distributed operators ---- */

typedef struct dist_mat {
    gs_csr A;          /* owned rows, local columns (owned, then halo) */
    gs_halo h;
    gs_int *interior;  /* rows that read owned entries only */
    gs_int *boundary;  /* rows that read a halo entry */
    gs_int ninterior, nboundary;
    double *xext;      /* n_own + n_halo: x's owned entries, then the halo */
    double *sendbuf;   /* send_off[nsend] */
    MPI_Request *req;  /* nrecv + nsend */
} dist_mat;

static void dist_mat_free(dist_mat *d)
{
    if (!d) return;
    gs_csr_free(&d->A);
    gs_halo_free(&d->h);
    gs_free(&d->interior);
    gs_free(&d->boundary);
    gs_free(&d->xext);
    gs_free(&d->sendbuf);
    gs_free(&d->req);
}

static gs_status mpi_mat_create_plain(gs_backend *be, const gs_csr *A, gs_matrix *M)
{
    return GS_ERROR(GS_ERR_UNSUPPORTED, "the distributed backend's operators carry a halo: make them with "
                                        "gs_mpi_mat_create");
}

static void mpi_mat_destroy(gs_matrix *M)
{
    dist_mat *d = M->impl;
    dist_mat_free(d);
    gs_free(&d);
    M->impl = NULL;
}

gs_status gs_mpi_mat_create(gs_backend *be, const gs_csr *A, const gs_halo *halo, gs_matrix **M)
{
    gs_status st = GS_OK;
    dist_mat *d = NULL;
    gs_matrix *m = NULL;
    if (!gs_backend_is_mpi(be)) return GS_ERROR(GS_ERR_ARG, "gs_mpi_mat_create: not a distributed backend");
    const gs_int n = halo->n_own, next = halo->n_own + halo->n_halo;
    if (A->nrows != n || A->ncols != next || !A->val)
        return GS_ERROR(GS_ERR_ARG, "distributed operator: %d x %d local rows for %d owned and %d halo entries",
                        (int)A->nrows, (int)A->ncols, (int)n, (int)halo->n_halo);
    GS_TRY(GS_CALLOC(d, 1));
    GS_TRY(gs_csr_copy(A, &d->A));
    GS_TRY(gs_halo_copy(halo, &d->h));
    GS_TRY(GS_MALLOC(d->interior, n + 1));
    GS_TRY(GS_MALLOC(d->boundary, n + 1));
    for (gs_int i = 0; i < n; i++) {
        bool halo_row = A->rowptr[i + 1] > A->rowptr[i] && A->colind[A->rowptr[i + 1] - 1] >= n; /* sorted */
        if (halo_row) d->boundary[d->nboundary++] = i;
        else d->interior[d->ninterior++] = i;
    }
    GS_TRY(GS_MALLOC(d->xext, next + 1));
    GS_TRY(GS_MALLOC(d->sendbuf, halo->send_off[halo->nsend] + 1));
    GS_TRY(GS_MALLOC(d->req, halo->nrecv + halo->nsend + 1));
    GS_TRY(GS_CALLOC(m, 1));
    m->nrows = m->ncols = n;
    m->nnz = A->nnz;
    m->be = be;
    m->impl = d;
    *M = m;
    return GS_OK;
cleanup:
    dist_mat_free(d);
    gs_free(&d);
    return st;
}

/* y_i = alpha sum_j a_ij x_j + beta y_i over the rows listed (beta = 0: y is not read). */
static void rows_spmv(const gs_csr *A, const gs_int *rows, gs_int k, double alpha, const double *x, double beta,
                      double *y)
{
#pragma omp parallel for schedule(static) if (k > 20000)
    for (gs_int t = 0; t < k; t++) {
        gs_int i = rows[t];
        double s = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += A->val[p] * x[A->colind[p]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

/* The messages of one exchange of halo h posted: out[recv_off[k] ..] from rank recv_rank[k], x's owned
 * entries send_idx[send_off[k] ..] (copied into sendbuf) to rank send_rank[k]; *nreq requests in req. */
static gs_status exchange_begin(mpi_impl *m, const gs_halo *h, const double *x, double *out, double *sendbuf,
                                MPI_Request *req, int tag, int *nreq)
{
    int rc = MPI_SUCCESS;
    double t = gs_wtime();
    *nreq = 0;
    for (int k = 0; k < h->nrecv && rc == MPI_SUCCESS; k++)
        rc = MPI_Irecv(out + h->recv_off[k], (int)(h->recv_off[k + 1] - h->recv_off[k]), MPI_DOUBLE, h->recv_rank[k],
                       tag, m->comm, &req[(*nreq)++]);
    for (gs_int j = 0; j < h->send_off[h->nsend]; j++) sendbuf[j] = x[h->send_idx[j]];
    for (int k = 0; k < h->nsend && rc == MPI_SUCCESS; k++)
        rc = MPI_Isend(sendbuf + h->send_off[k], (int)(h->send_off[k + 1] - h->send_off[k]), MPI_DOUBLE,
                       h->send_rank[k], tag, m->comm, &req[(*nreq)++]);
    m->stats.time_comm += gs_wtime() - t;
    MPI_CALL(rc);
    return GS_OK;
}

static gs_status exchange_end(mpi_impl *m, int nreq, MPI_Request *req)
{
    double t = gs_wtime();
    int rc = nreq ? MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    m->stats.time_comm += gs_wtime() - t;
    MPI_CALL(rc);
    return GS_OK;
}

/* y = alpha A x + beta y: the halo's receives and sends posted, the interior rows multiplied while the
 * messages travel, then the boundary rows once the halo is in. */
static gs_status mpi_spmv(double alpha, const gs_matrix *Am, const gs_vector *x, double beta, gs_vector *y)
{
    mpi_impl *m = IMPL(Am->be);
    dist_mat *d = Am->impl;
    const gs_int n = d->h.n_own;
    int nreq = 0;
    GS_CALL(exchange_begin(m, &d->h, x->data, d->xext + n, d->sendbuf, d->req, 0, &nreq));
    rows_spmv(&d->A, d->interior, d->ninterior, alpha, x->data, beta, y->data);
    if (n > 0) memcpy(d->xext, x->data, (size_t)n * sizeof *x->data);
    if (nreq) m->stats.exchanges++;
    GS_CALL(exchange_end(m, nreq, d->req));
    rows_spmv(&d->A, d->boundary, d->nboundary, alpha, d->xext, beta, y->data);
    return GS_OK;
}

gs_status gs_backend_mpi_exchange(gs_backend *be, const gs_halo *h, const double *x, double *out, double *sendbuf,
                                  MPI_Request *req)
{
    if (!gs_backend_is_mpi(be)) return GS_ERROR(GS_ERR_ARG, "gs_backend_mpi_exchange: not a distributed backend");
    mpi_impl *m = IMPL(be);
    int nreq = 0;
    GS_CALL(exchange_begin(m, h, x, out, sendbuf, req, 1, &nreq));
    if (nreq) m->stats.pc_exchanges++;
    GS_CALL(exchange_end(m, nreq, req));
    return GS_OK;
}

/* ---- fused CG: the scalar steps of kstate_logic.h on globally reduced values ---- */

typedef struct mpi_ks {
    gs_kscalars k;
    gs_krec ring[GS_KS_RING];
} mpi_ks;

static mpi_ks *KS(gs_kstate *ks) { return (mpi_ks *)ks->impl; }
static gs_krec *ks_rec(gs_kstate *ks, int it) { return &KS(ks)->ring[it % GS_KS_RING]; }

static gs_status mpi_ks_create(gs_backend *be, gs_kstate *ks)
{
    mpi_ks *h = NULL;
    GS_CALL(gs_calloc(&h, 1, sizeof *h));
    for (int j = 0; j < GS_KS_RING; j++) h->ring[j].it = -1;
    ks->impl = h;
    return GS_OK;
}
static void mpi_ks_destroy(gs_kstate *ks) { gs_free(&ks->impl); }
static gs_status mpi_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start)
{
    ksl_begin(&KS(ks)->k, it, start);
    return GS_OK;
}
static gs_status mpi_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    double pq = 0.0;
    if (KS(ks)->k.stop) return GS_OK;
    GS_CALL(mpi_dot(p, q, &pq));
    ksl_after_pq(&KS(ks)->k, it, pq, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                               const gs_vector *q, bool rz_is_rr)
{
    gs_kscalars *k = &KS(ks)->k;
    if (k->stop) return GS_OK;
    const double alpha = k->s[KS_ALPHA], *pa = p->data, *qa = q->data;
    double *xa = x->data, *ra = r->data, rr = 0.0;
    for (gs_int i = 0; i < x->n; i++) {
        xa[i] += alpha * pa[i];
        double ri = ra[i] - alpha * qa[i];
        ra[i] = ri;
        rr += ri * ri;
    }
    GS_CALL(reduce_sum(x->be, &rr, 1, &rr));
    ksl_after_rr(k, it, rr, rz_is_rr, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    double rz = 0.0;
    if (KS(ks)->k.stop) return GS_OK;
    GS_CALL(mpi_dot(r, z, &rz));
    ksl_after_rz(&KS(ks)->k, it, rz, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    if (KS(ks)->k.stop) return GS_OK;
    return mpi_axpby(1.0, z, ksl_beta(&KS(ks)->k, it), p);
}
static gs_status mpi_ks_mark(gs_kstate *ks, int it) { return GS_OK; }
static gs_status mpi_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    *rec = *ks_rec(ks, it);
    return GS_OK;
}

/* ---- timers, lifetime ---- */

static gs_status mpi_timer_start(gs_timer *t)
{
    t->t0 = gs_wtime();
    return GS_OK;
}
static gs_status mpi_timer_stop(gs_timer *t, double *seconds)
{
    *seconds = gs_wtime() - t->t0;
    return GS_OK;
}
static void mpi_timer_destroy(gs_timer *t) {}

static void mpi_destroy(gs_backend *be)
{
    mpi_impl *m = IMPL(be);
    if (m) {
        gs_backend_destroy(&m->local);
        gs_free(&m->gbuf);
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin && m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
        gs_free(&m);
    }
    gs_mem_track_free(&be->mem);
    gs_free(&be);
}

static const gs_backend_ops mpi_ops = {
    .alloc = mpi_alloc,
    .free = mpi_free,
    .upload = mpi_memcpy,
    .download = mpi_memcpy,
    .copy = mpi_memcpy,
    .synchronize = mpi_sync,
    .mem_info = mpi_mem_info,
    .set = mpi_set,
    .scale = mpi_scale,
    .axpy = mpi_axpy,
    .axpby = mpi_axpby,
    .axpbypcz = mpi_axpbypcz,
    .pointwise_mult = mpi_pointwise_mult,
    .dot = mpi_dot,
    .dot2 = mpi_dot2,
    .nrm2 = mpi_nrm2,
    .mdot = mpi_mdot,
    .mgemv = mpi_mgemv,
    .mdot2 = mpi_mdot2,
    .mgemv2 = mpi_mgemv2,
    .gather = mpi_gather,
    .scatter = mpi_scatter,
    .mat_create = mpi_mat_create_plain,
    .mat_destroy = mpi_mat_destroy,
    .spmv = mpi_spmv,
    .ks_create = mpi_ks_create,
    .ks_destroy = mpi_ks_destroy,
    .ks_begin = mpi_ks_begin,
    .cg_pq = mpi_cg_pq,
    .cg_update = mpi_cg_update,
    .cg_rz = mpi_cg_rz,
    .cg_direction = mpi_cg_direction,
    .ks_mark = mpi_ks_mark,
    .ks_record = mpi_ks_record,
    .timer_start = mpi_timer_start,
    .timer_stop = mpi_timer_stop,
    .timer_destroy = mpi_timer_destroy,
    .destroy = mpi_destroy,
};

gs_status gs_backend_mpi_create(MPI_Comm comm, gs_backend **be)
{
    gs_status st = GS_OK;
    gs_backend *b = NULL;
    mpi_impl *m = NULL;
    GS_TRY(gs_calloc(&b, 1, sizeof *b));
    GS_TRY(gs_calloc(&m, 1, sizeof *m));
    m->comm = MPI_COMM_NULL;
    b->impl = m;
    GS_TRY(gs_backend_host_create(&m->local));
    m->hops = m->local->ops;
    GS_TRY(mpi_status(MPI_Comm_dup(comm, &m->comm), "MPI_Comm_dup"));
    GS_TRY(mpi_status(MPI_Comm_rank(m->comm, &m->rank), "MPI_Comm_rank"));
    GS_TRY(mpi_status(MPI_Comm_size(m->comm, &m->size), "MPI_Comm_size"));
    b->kind = GS_BACKEND_HOST; /* vectors are host memory: code that branches on the kind treats them so */
    b->name = "host+mpi";
    b->ops = &mpi_ops;
    snprintf(b->device_name, sizeof b->device_name, "%d MPI ranks, each %.90s", m->size, m->local->device_name);
    *be = b;
    return GS_OK;
cleanup:
    if (b) mpi_destroy(b);
    return st;
}

bool gs_backend_is_mpi(const gs_backend *be) { return be && be->ops == &mpi_ops; }

void gs_backend_mpi_rank(const gs_backend *be, int *rank, int *size)
{
    *rank = IMPL(be)->rank;
    *size = IMPL(be)->size;
}

gs_backend *gs_backend_mpi_local(gs_backend *be) { return IMPL(be)->local; }

void gs_backend_mpi_stats(const gs_backend *be, gs_mpi_stats *s) { *s = IMPL(be)->stats; }
void gs_backend_mpi_stats_reset(gs_backend *be) { memset(&IMPL(be)->stats, 0, sizeof IMPL(be)->stats); }

gs_vector gs_backend_mpi_local_view(const gs_vector *v)
{
    gs_vector w = {v->n, v->data, IMPL(v->be)->local, false};
    return w;
}
