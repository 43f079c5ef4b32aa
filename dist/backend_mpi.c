/* The distributed backend (dist/backend_mpi.h): the local backend's (host or cuda) memory and kernels on
 * the owned rows; reductions as local partial sums gathered from every rank and added in rank order, so
 * that every rank holds bitwise the same scalar and a run repeats exactly; SpMV as the owned columns'
 * product, started while the halo's messages travel, plus the halo columns' product once they are in. The
 * local kernels get views of the distributed vectors with the local backend as theirs (the same memory).
 * The fused CG scalar steps are core/kstate_logic.h's, as for the other backends. */
#include "dist/backend_mpi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/backend_cuda.h"
#include "core/kstate_logic.h"
#include "core/mem.h"
#include "dist/nccl.h"

typedef struct mpi_impl {
    MPI_Comm comm;
    int rank, size;
    gs_backend *local;          /* the local backend (host or cuda): memory, kernels, local preconditioners */
    const gs_backend_ops *lops; /* its ops */
    double *gbuf;               /* size * gcap doubles: the gathered partial sums */
    size_t gcap;
    gs_mpi_stats stats;
    gs_nccl *nccl;              /* the NCCL transport (gs_backend_mpi_set_transport), or NULL: MPI */
    char transport_why[160];    /* why this transport */
} mpi_impl;

static mpi_impl *IMPL(const gs_backend *be) { return (mpi_impl *)be->impl; }

/* Views of distributed objects as the local backend's (the same memory), for its kernels. */
static gs_vector LV(const gs_vector *v)
{
    gs_vector w = {v->n, v->data, IMPL(v->be)->local, false};
    return w;
}
static gs_mvec LM(const gs_mvec *V)
{
    gs_mvec w = *V;
    w.be = IMPL(V->be)->local;
    return w;
}
static gs_ivec LI(const gs_ivec *iv)
{
    gs_ivec w = {iv->n, iv->data, IMPL(iv->be)->local};
    return w;
}

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
    gs_vector lx = LV(x), ly = LV(y);
    GS_CALL(IMPL(x->be)->lops->dot(&lx, &ly, &s));
    return reduce_sum(x->be, &s, 1, result);
}

static gs_status mpi_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                          double result[2])
{
    double s[2];
    gs_vector lx = LV(x), ly = LV(y), lu = LV(u), lv = LV(v);
    GS_CALL(IMPL(x->be)->lops->dot2(&lx, &ly, &lu, &lv, s));
    return reduce_sum(x->be, s, 2, result);
}

/* ||x||_2 = M sqrt(sum_r (n_r / M)^2) with n_r the norm of rank r's entries (the local backend's, without
 * overflow or underflow) and M = max_r n_r; NaN when any rank's is (an entry not finite). */
static gs_status mpi_nrm2(const gs_vector *x, double *result)
{
    mpi_impl *m = IMPL(x->be);
    gs_vector lx = LV(x);
    double mine = 0.0, ignored = 0.0;
    GS_CALL(m->lops->nrm2(&lx, &mine));
    GS_CALL(reduce_sum(x->be, &mine, 1, &ignored)); /* every rank's norm is in gbuf after the call */
    double M = 0.0;
    for (int r = 0; r < m->size; r++) {
        const double nr = m->gbuf[r];
        if (isnan(nr)) {
            *result = NAN;
            return GS_OK;
        }
        if (nr > M) M = nr;
    }
    if (M == 0.0 || isinf(M)) {
        *result = M;
        return GS_OK;
    }
    double s = 0.0;
    for (int r = 0; r < m->size; r++) {
        const double q = m->gbuf[r] / M;
        s += q * q;
    }
    *result = M * sqrt(s);
    return GS_OK;
}

static gs_status mpi_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    gs_mvec lV = LM(V);
    gs_vector lw = LV(w);
    GS_CALL(IMPL(w->be)->lops->mdot(&lV, k, &lw, h));
    return reduce_sum(w->be, h, (int)k, h);
}

static gs_status mpi_mdot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h)
{
    gs_mvec lV = LM(V);
    gs_vector lx = LV(x), ly = LV(y);
    GS_CALL(IMPL(x->be)->lops->mdot2(&lV, k, &lx, &ly, h));
    return reduce_sum(x->be, h, (int)(2 * k), h);
}

/* ---- memory: the local backend's, accounted on this backend too ---- */

static gs_status mpi_alloc(gs_backend *be, void **p, size_t bytes)
{
    mpi_impl *m = IMPL(be);
    GS_CALL(m->lops->alloc(m->local, p, bytes));
    if (!gs_mem_track_add(&be->mem, *p, bytes)) {
        m->lops->free(m->local, *p);
        *p = NULL;
        return GS_ERROR(GS_ERR_MEM, "out of host memory recording an allocation of %zu bytes", bytes);
    }
    return GS_OK;
}
static void mpi_free(gs_backend *be, void *p)
{
    gs_mem_track_remove(&be->mem, p);
    IMPL(be)->lops->free(IMPL(be)->local, p);
}
static gs_status mpi_upload(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    return IMPL(be)->lops->upload(IMPL(be)->local, dst, src, bytes);
}
static gs_status mpi_download(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    return IMPL(be)->lops->download(IMPL(be)->local, dst, src, bytes);
}
static gs_status mpi_copy(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    return IMPL(be)->lops->copy(IMPL(be)->local, dst, src, bytes);
}
static gs_status mpi_sync(gs_backend *be) { return IMPL(be)->lops->synchronize(IMPL(be)->local); }
static gs_status mpi_mem_info(gs_backend *be, size_t *free_bytes, size_t *total_bytes)
{
    return IMPL(be)->lops->mem_info(IMPL(be)->local, free_bytes, total_bytes);
}

/* ---- elementwise and the basis products: the local kernels on the owned rows ---- */

static gs_status mpi_set(gs_vector *x, double a)
{
    gs_vector lx = LV(x);
    return IMPL(x->be)->lops->set(&lx, a);
}
static gs_status mpi_scale(gs_vector *x, double a)
{
    gs_vector lx = LV(x);
    return IMPL(x->be)->lops->scale(&lx, a);
}
static gs_status mpi_axpy(double a, const gs_vector *x, gs_vector *y)
{
    gs_vector lx = LV(x), ly = LV(y);
    return IMPL(x->be)->lops->axpy(a, &lx, &ly);
}
static gs_status mpi_axpby(double a, const gs_vector *x, double b, gs_vector *y)
{
    gs_vector lx = LV(x), ly = LV(y);
    return IMPL(x->be)->lops->axpby(a, &lx, b, &ly);
}
static gs_status mpi_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double c, gs_vector *z)
{
    gs_vector lx = LV(x), ly = LV(y), lz = LV(z);
    return IMPL(x->be)->lops->axpbypcz(a, &lx, b, &ly, c, &lz);
}
static gs_status mpi_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    gs_vector lx = LV(x), ly = LV(y), lz = LV(z);
    return IMPL(x->be)->lops->pointwise_mult(&lx, &ly, &lz);
}
static gs_status mpi_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    gs_mvec lV = LM(V);
    gs_vector ly = LV(y);
    return IMPL(y->be)->lops->mgemv(alpha, &lV, k, h, beta, &ly);
}
static gs_status mpi_mgemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                            double b, double d, gs_vector *y)
{
    gs_mvec lV = LM(V);
    gs_vector lx = LV(x), ly = LV(y);
    return IMPL(y->be)->lops->mgemv2(&lV, k, p, a, &lx, q, b, d, &ly);
}
static gs_status mpi_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    gs_vector lx = LV(x), ly = LV(y);
    gs_ivec li = LI(idx);
    return IMPL(x->be)->lops->gather(&lx, &li, &ly);
}
static gs_status mpi_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    gs_vector lx = LV(x), ly = LV(y);
    gs_ivec li = LI(idx);
    return IMPL(x->be)->lops->scatter(&lx, &li, &ly);
}

/* ---- distributed operators ---- */

/* A rank's part: A = [A_own A_halo] on the local backend, the halo plan, and the exchange's buffers: the
 * owned entries to send gathered on the local backend (sendv, by send_ix) and brought to sendbuf; the halo
 * received into recvbuf and taken to xh. */
typedef struct dist_mat {
    gs_matrix *own;        /* n_own x n_own */
    gs_matrix *halo;       /* the halo columns of the rows that have any: nhr x n_halo (NULL: none) */
    gs_ivec *hrows;        /* those rows (nhr) */
    gs_vector *yh;         /* nhr: y's entries of those rows while the halo's product is added */
    gs_halo h;
    gs_ivec *send_ix;      /* send_off[nsend] owned indices (NULL when none) */
    gs_vector *sendv, *xh; /* on the local backend */
    double *sendbuf, *recvbuf;
    MPI_Request *req; /* nrecv + nsend */
} dist_mat;

static void dist_mat_free(dist_mat *d)
{
    if (!d) return;
    gs_mat_destroy(&d->own);
    gs_mat_destroy(&d->halo);
    gs_ivec_destroy(&d->hrows);
    gs_vec_destroy(&d->yh);
    gs_halo_free(&d->h);
    gs_ivec_destroy(&d->send_ix);
    gs_vec_destroy(&d->sendv);
    gs_vec_destroy(&d->xh);
    gs_free(&d->sendbuf);
    gs_free(&d->recvbuf);
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

const gs_matrix *gs_mpi_mat_own(const gs_matrix *M)
{
    if (!M || !gs_backend_is_mpi(M->be) || !M->impl) return NULL;
    return ((const dist_mat *)M->impl)->own;
}

/* The columns [c0, c1) of A (sorted rows), renumbered from 0: all rows (rows NULL), an nrows x (c1 - c0)
 * matrix; or only the rows that have such an entry, their numbers in *rows (*nr of them). */
static gs_status column_range(const gs_csr *A, gs_int c0, gs_int c1, gs_csr *B, gs_int **rows, gs_int *nr)
{
    gs_int nnz = 0, r = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int k = 0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) k += A->colind[p] >= c0 && A->colind[p] < c1;
        nnz += k;
        r += k > 0;
    }
    if (!rows) r = A->nrows;
    GS_CALL(gs_csr_alloc(B, r, c1 - c0, nnz, true));
    if (rows) {
        *nr = r;
        const gs_status st = GS_MALLOC(*rows, (size_t)r + 1);
        if (st != GS_OK) {
            gs_csr_free(B);
            return st;
        }
    }
    gs_int q = 0, b = 0;
    B->rowptr[0] = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        const gs_int q0 = q;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] >= c0 && A->colind[p] < c1) {
                B->colind[q] = A->colind[p] - c0;
                B->val[q++] = A->val[p];
            }
        if (rows && q == q0) continue;
        if (rows) (*rows)[b] = i;
        B->rowptr[++b] = q;
    }
    return GS_OK;
}

gs_status gs_mpi_mat_create(gs_backend *be, const gs_csr *A, const gs_csr *own, const gs_halo *halo, gs_int n_global,
                            gs_matrix **M)
{
    gs_status st = GS_OK;
    dist_mat *d = NULL;
    gs_matrix *m = NULL;
    gs_csr part = {0};
    gs_int *hrows = NULL;
    if (!gs_backend_is_mpi(be)) return GS_ERROR(GS_ERR_ARG, "gs_mpi_mat_create: not a distributed backend");
    gs_backend *local = IMPL(be)->local;
    const gs_int n = halo->n_own, nh = halo->n_halo, nsend = halo->send_off[halo->nsend];
    if (A->nrows != n || A->ncols != n + nh || !A->val)
        return GS_ERROR(GS_ERR_ARG, "distributed operator: %d x %d local rows for %d owned and %d halo entries",
                        (int)A->nrows, (int)A->ncols, (int)n, (int)nh);
    GS_TRY(GS_CALLOC(d, 1));
    GS_TRY(gs_halo_copy(halo, &d->h));
    if (own && (own->nrows != n || own->ncols != n || own->nnz > A->nnz))
        GS_FAIL(GS_ERR_ARG, "distributed operator: a %d x %d owned block for %d owned rows", (int)own->nrows,
                (int)own->ncols, (int)n);
    if (own) { /* the caller's copy of the owned columns: no third copy of the rows on the host */
        GS_TRY(gs_mat_create(local, own, &d->own));
    } else {
        GS_TRY(column_range(A, 0, n, &part, NULL, NULL));
        GS_TRY(gs_mat_create(local, &part, &d->own));
        gs_csr_free(&part);
    }
    if (nh > 0) { /* the halo's product only over the rows it touches: a slab's face, not all its rows */
        gs_int nhr = 0;
        GS_TRY(column_range(A, n, n + nh, &part, &hrows, &nhr));
        GS_TRY(gs_mat_create(local, &part, &d->halo));
        gs_csr_free(&part);
        GS_TRY(gs_ivec_create(local, nhr, hrows, &d->hrows));
        GS_TRY(gs_vec_create(local, nhr, &d->yh));
        GS_TRY(gs_vec_create(local, nh, &d->xh));
    }
    if (nsend > 0) {
        GS_TRY(gs_ivec_create(local, nsend, halo->send_idx, &d->send_ix));
        GS_TRY(gs_vec_create(local, nsend, &d->sendv));
    }
    GS_TRY(GS_MALLOC(d->sendbuf, nsend + 1));
    GS_TRY(GS_MALLOC(d->recvbuf, nh + 1));
    GS_TRY(GS_MALLOC(d->req, halo->nrecv + halo->nsend + 1));
    GS_TRY(GS_CALLOC(m, 1));
    m->nrows = m->ncols = n;
    m->rows_global = n_global;
    m->nnz = A->nnz;
    m->be = be;
    m->impl = d;
    *M = m;
    gs_free(&hrows);
    return GS_OK;
cleanup:
    gs_csr_free(&part);
    gs_free(&hrows);
    dist_mat_free(d);
    gs_free(&d);
    return st;
}

/* The messages of one exchange of halo h posted: out[recv_off[k] ..] from rank recv_rank[k], and
 * sendbuf[send_off[k] ..] to rank send_rank[k] (x: when not NULL, the owned entries the sends take,
 * copied into sendbuf by send_idx; NULL: sendbuf is filled already); *nreq requests in req. */
static gs_status exchange_begin(mpi_impl *m, const gs_halo *h, const double *x, double *out, double *sendbuf,
                                MPI_Request *req, int tag, int *nreq)
{
    int rc = MPI_SUCCESS;
    double t = gs_wtime();
    *nreq = 0;
    for (int k = 0; k < h->nrecv && rc == MPI_SUCCESS; k++)
        rc = MPI_Irecv(out + h->recv_off[k], (int)(h->recv_off[k + 1] - h->recv_off[k]), MPI_DOUBLE, h->recv_rank[k],
                       tag, m->comm, &req[(*nreq)++]);
    if (x)
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

/* y += alpha A_halo x_halo on the rows with halo columns: their entries of y gathered, the product added,
 * and put back (the same arithmetic, row by row, as over all rows; a slab's face costs a face, not the
 * whole slab's y and row pointers). */
static gs_status halo_product(mpi_impl *m, dist_mat *d, double alpha, gs_vector *ly)
{
    if (!d->halo) return GS_OK;
    GS_CALL(m->lops->gather(ly, d->hrows, d->yh));
    GS_CALL(m->lops->spmv(alpha, d->halo, d->xh, 1.0, d->yh));
    return m->lops->scatter(d->yh, d->hrows, ly);
}

/* y = alpha A x + beta y over NCCL: the owned entries to send gathered on the device, the messages on the
 * transport's stream while y = alpha A_own x + beta y runs, then y += alpha A_halo x_halo once they are in;
 * the host waits for none of it. */
static gs_status spmv_nccl(mpi_impl *m, dist_mat *d, double alpha, gs_vector *lx, double beta, gs_vector *ly)
{
    void *stream = gs_backend_cuda_stream(m->local);
    const bool messages = d->h.nrecv + d->h.nsend > 0;
    if (d->send_ix) GS_CALL(m->lops->gather(lx, d->send_ix, d->sendv));
    if (messages) {
        GS_CALL(gs_nccl_halo_begin(m->nccl, &d->h, d->sendv ? d->sendv->data : NULL, d->xh ? d->xh->data : NULL,
                                   stream));
        m->stats.exchanges++;
    }
    GS_CALL(m->lops->spmv(alpha, d->own, lx, beta, ly));
    if (messages) GS_CALL(gs_nccl_halo_end(m->nccl, stream));
    return halo_product(m, d, alpha, ly);
}

/* y = alpha A x + beta y: the owned entries to send gathered and brought to the host, the messages
 * posted, y = alpha A_own x + beta y started (on a GPU it runs while the messages travel), then, once the
 * halo is in, y += alpha A_halo x_halo. */
static gs_status mpi_spmv(double alpha, const gs_matrix *Am, const gs_vector *x, double beta, gs_vector *y)
{
    mpi_impl *m = IMPL(Am->be);
    dist_mat *d = Am->impl;
    gs_vector lx = LV(x), ly = LV(y);
    int nreq = 0;
    if (m->nccl) return spmv_nccl(m, d, alpha, &lx, beta, &ly);
    if (d->send_ix) {
        GS_CALL(m->lops->gather(&lx, d->send_ix, d->sendv));
        GS_CALL(gs_vec_download(d->sendv, d->sendbuf));
    }
    GS_CALL(exchange_begin(m, &d->h, NULL, d->recvbuf, d->sendbuf, d->req, 0, &nreq));
    GS_CALL(m->lops->spmv(alpha, d->own, &lx, beta, &ly));
    if (nreq) m->stats.exchanges++;
    GS_CALL(exchange_end(m, nreq, d->req));
    if (d->halo) GS_CALL(gs_vec_upload(d->xh, d->recvbuf));
    return halo_product(m, d, alpha, &ly);
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

gs_status gs_backend_mpi_exchange_device(gs_backend *be, const gs_halo *h, const gs_vector *sendv, gs_vector *out)
{
    if (!gs_backend_is_mpi(be) || !IMPL(be)->nccl)
        return GS_ERROR(GS_ERR_ARG, "gs_backend_mpi_exchange_device: not a distributed backend over NCCL");
    mpi_impl *m = IMPL(be);
    if (h->nrecv + h->nsend == 0) return GS_OK;
    void *stream = gs_backend_cuda_stream(m->local);
    GS_CALL(gs_nccl_halo_begin(m->nccl, h, sendv ? sendv->data : NULL, out ? out->data : NULL, stream));
    m->stats.pc_exchanges++;
    return gs_nccl_halo_end(m->nccl, stream);
}

/* ---- fused CG: the scalar steps of kstate_logic.h on globally reduced values ----
 * Over MPI, each inner product is reduced on the host (mpi_dot) and the step taken there. Over NCCL, the
 * local backend's own fused state runs with its inner products gathered on the devices
 * (gs_backend_cuda_ks_combine), so the host never waits for a reduction. */

typedef struct mpi_ks {
    gs_kscalars k;
    gs_krec ring[GS_KS_RING];
    bool on_device; /* NCCL: lks does the work */
    gs_kstate lks;  /* the local backend's state (be: the local backend) */
} mpi_ks;

static mpi_ks *KS(gs_kstate *ks) { return (mpi_ks *)ks->impl; }
static gs_krec *ks_rec(gs_kstate *ks, int it) { return &KS(ks)->ring[it % GS_KS_RING]; }
static const gs_backend_ops *KOPS(gs_kstate *ks) { return IMPL(ks->be)->lops; }

static gs_status mpi_ks_create(gs_backend *be, gs_kstate *ks)
{
    mpi_impl *m = IMPL(be);
    mpi_ks *h = NULL;
    GS_CALL(gs_calloc(&h, 1, sizeof *h));
    for (int j = 0; j < GS_KS_RING; j++) h->ring[j].it = -1;
    ks->impl = h;
    if (m->nccl) {
        h->lks.be = m->local;
        gs_status st = m->lops->ks_create(m->local, &h->lks);
        if (st == GS_OK) {
            h->on_device = true;
            st = gs_backend_cuda_ks_combine(&h->lks, m->size, gs_nccl_allgather, m->nccl);
        }
        if (st != GS_OK) {
            if (h->on_device) m->lops->ks_destroy(&h->lks);
            gs_free(&ks->impl);
            return st;
        }
    }
    return GS_OK;
}
static void mpi_ks_destroy(gs_kstate *ks)
{
    if (ks->impl && KS(ks)->on_device) KOPS(ks)->ks_destroy(&KS(ks)->lks);
    gs_free(&ks->impl);
}
static gs_status mpi_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start)
{
    if (KS(ks)->on_device) return KOPS(ks)->ks_begin(&KS(ks)->lks, it, start);
    ksl_begin(&KS(ks)->k, it, start);
    return GS_OK;
}
static gs_status mpi_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    double pq = 0.0;
    if (KS(ks)->on_device) {
        gs_vector lp = LV(p), lq = LV(q);
        IMPL(ks->be)->stats.reductions++;
        return KOPS(ks)->cg_pq(&KS(ks)->lks, it, &lp, &lq);
    }
    if (KS(ks)->k.stop) return GS_OK;
    GS_CALL(mpi_dot(p, q, &pq));
    ksl_after_pq(&KS(ks)->k, it, pq, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                               const gs_vector *q, bool rz_is_rr)
{
    gs_kscalars *k = &KS(ks)->k;
    if (KS(ks)->on_device) {
        gs_vector lx = LV(x), lr = LV(r), lp = LV(p), lq = LV(q);
        if (rz_is_rr) IMPL(ks->be)->stats.reductions++; /* else r'r goes with the r'z that follows */
        return KOPS(ks)->cg_update(&KS(ks)->lks, it, &lx, &lr, &lp, &lq, rz_is_rr);
    }
    if (k->stop) return GS_OK;
    const double alpha = k->s[KS_ALPHA];
    double rr = 0.0;
    GS_CALL(mpi_axpy(alpha, p, x));
    GS_CALL(mpi_axpy(-alpha, q, r));
    GS_CALL(mpi_dot(r, r, &rr));
    ksl_after_rr(k, it, rr, rz_is_rr, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    double rz = 0.0;
    if (KS(ks)->on_device) {
        gs_vector lr = LV(r), lz = LV(z);
        IMPL(ks->be)->stats.reductions++;
        return KOPS(ks)->cg_rz(&KS(ks)->lks, it, &lr, &lz);
    }
    if (KS(ks)->k.stop) return GS_OK;
    GS_CALL(mpi_dot(r, z, &rz));
    ksl_after_rz(&KS(ks)->k, it, rz, ks_rec(ks, it));
    return GS_OK;
}
static gs_status mpi_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    if (KS(ks)->on_device) {
        gs_vector lz = LV(z), lp = LV(p);
        return KOPS(ks)->cg_direction(&KS(ks)->lks, it, &lz, &lp);
    }
    if (KS(ks)->k.stop) return GS_OK;
    return mpi_axpby(1.0, z, ksl_beta(&KS(ks)->k, it), p);
}
static gs_status mpi_ks_mark(gs_kstate *ks, int it)
{
    return KS(ks)->on_device ? KOPS(ks)->ks_mark(&KS(ks)->lks, it) : GS_OK;
}
static gs_status mpi_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    if (KS(ks)->on_device) return KOPS(ks)->ks_record(&KS(ks)->lks, it, rec);
    *rec = *ks_rec(ks, it);
    return GS_OK;
}

/* ---- timers (the local backend's work finished at both ends), lifetime ---- */

static gs_status mpi_timer_start(gs_timer *t)
{
    GS_CALL(mpi_sync(t->be));
    t->t0 = gs_wtime();
    return GS_OK;
}
static gs_status mpi_timer_stop(gs_timer *t, double *seconds)
{
    GS_CALL(mpi_sync(t->be));
    *seconds = gs_wtime() - t->t0;
    return GS_OK;
}
static void mpi_timer_destroy(gs_timer *t) {}

static void mpi_destroy(gs_backend *be)
{
    mpi_impl *m = IMPL(be);
    if (m) {
        gs_nccl_destroy(&m->nccl); /* before the local backend: its device and streams */
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
    .upload = mpi_upload,
    .download = mpi_download,
    .copy = mpi_copy,
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

gs_status gs_backend_mpi_create_on(MPI_Comm comm, gs_backend *local, gs_backend **be)
{
    gs_status st = GS_OK;
    gs_backend *b = NULL;
    mpi_impl *m = NULL;
    MPI_Comm dup = MPI_COMM_NULL;
    *be = NULL;
    /* the collective first: a rank that fails to allocate below must not leave the others in it */
    st = mpi_status(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
    if (st == GS_OK) st = gs_calloc(&b, 1, sizeof *b);
    if (st == GS_OK) st = gs_calloc(&m, 1, sizeof *m);
    if (st != GS_OK) {
        if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
        gs_free(&b);
        gs_backend_destroy(&local);
        return st;
    }
    m->comm = dup;
    b->impl = m;
    m->local = local; /* the backend's now: mpi_destroy releases it */
    m->lops = local->ops;
    GS_TRY(mpi_status(MPI_Comm_rank(m->comm, &m->rank), "MPI_Comm_rank"));
    GS_TRY(mpi_status(MPI_Comm_size(m->comm, &m->size), "MPI_Comm_size"));
    /* The kind stays host whatever the local backend: the entry points that are cuda's alone (streams,
     * SpMV selection, making a device current) take the local backend, never this one. */
    b->kind = GS_BACKEND_HOST;
    b->name = m->local->kind == GS_BACKEND_CUDA ? "cuda+mpi" : "host+mpi";
    b->device_id = m->local->device_id;
    b->ops = &mpi_ops;
    snprintf(b->device_name, sizeof b->device_name, "%d MPI ranks, each %.90s", m->size, m->local->device_name);
    *be = b;
    return GS_OK;
cleanup:
    mpi_destroy(b);
    return st;
}

gs_status gs_backend_mpi_create(MPI_Comm comm, gs_backend **be)
{
    gs_backend *local = NULL;
    *be = NULL;
    GS_CALL(gs_backend_host_create(&local));
    return gs_backend_mpi_create_on(comm, local, be);
}

bool gs_backend_is_mpi(const gs_backend *be) { return be && be->ops == &mpi_ops; }

void gs_backend_mpi_rank(const gs_backend *be, int *rank, int *size)
{
    *rank = IMPL(be)->rank;
    *size = IMPL(be)->size;
}

gs_backend *gs_backend_mpi_local(gs_backend *be) { return IMPL(be)->local; }

void gs_backend_mpi_stats(const gs_backend *be, gs_mpi_stats *s)
{
    mpi_impl *m = IMPL(be);
    *s = m->stats;
    double t = 0.0;
    if (m->nccl) { /* the devices' time in the transport's operations */
        if (gs_nccl_time(m->nccl, &t) != GS_OK) gs_error_clear(); /* a fact of the report, not worth failing */
        s->time_comm += t;
    }
}
void gs_backend_mpi_stats_reset(gs_backend *be)
{
    memset(&IMPL(be)->stats, 0, sizeof IMPL(be)->stats);
    if (IMPL(be)->nccl) gs_nccl_time_reset(IMPL(be)->nccl);
}

gs_status gs_backend_mpi_set_transport(gs_backend *be, const char *want)
{
    if (!gs_backend_is_mpi(be)) return GS_ERROR(GS_ERR_ARG, "gs_backend_mpi_set_transport: not a distributed backend");
    if (strcmp(want, "auto") != 0 && strcmp(want, "nccl") != 0 && strcmp(want, "mpi") != 0)
        return GS_ERROR(GS_ERR_ARG, "device.transport = \"%s\": expected auto, nccl or mpi", want);
    mpi_impl *m = IMPL(be);
    gs_nccl_destroy(&m->nccl);
    return gs_nccl_create(m->comm, m->local, want, &m->nccl, m->transport_why, sizeof m->transport_why);
}

const char *gs_backend_mpi_transport(const gs_backend *be, const char **why)
{
    const mpi_impl *m = IMPL(be);
    if (why) *why = m->transport_why[0] ? m->transport_why : "the default";
    return m->nccl ? "nccl" : "mpi";
}

gs_vector gs_backend_mpi_local_view(const gs_vector *v) { return LV(v); }
