/* Public backend entry points: check sizes and backends once, then dispatch to the ops table. */
#include "core/backend.h"
#include "core/backend_cuda.h"

#include <string.h>
#include <time.h>

#include "core/mem.h"

gs_status gs_backend_create(const char *which, int device_id, gs_backend **be)
{
    *be = NULL;
    if (!which || strcmp(which, "auto") == 0) {
        if (gs_backend_cuda_available(NULL)) GS_CALL(gs_backend_cuda_create(device_id, be));
        else GS_CALL(gs_backend_host_create(be));
        return GS_OK;
    }
    if (strcmp(which, "cuda") == 0) {
        const char *why = NULL;
        if (!gs_backend_cuda_available(&why))
            return GS_ERROR(GS_ERR_NO_DEVICE,
                            "device.backend = \"cuda\" but no usable GPU: %s (use \"auto\" or \"host\")",
                            why ? why : "unknown reason");
        GS_CALL(gs_backend_cuda_create(device_id, be));
        return GS_OK;
    }
    if (strcmp(which, "host") == 0) {
        GS_CALL(gs_backend_host_create(be));
        return GS_OK;
    }
    return GS_ERROR(GS_ERR_ARG, "unknown backend \"%s\" (expected auto, cuda or host)", which);
}

gs_status gs_backend_select_spmv(gs_backend *be, const char *mode)
{
    if (!mode || !mode[0] || !be || be->kind != GS_BACKEND_CUDA) return GS_OK; /* the host has one SpMV */
    return gs_backend_cuda_spmv_select(be, mode);
}

gs_status gs_backend_make_current(gs_backend *be)
{
    if (!be || be->kind != GS_BACKEND_CUDA) return GS_OK;
    return gs_backend_cuda_make_current(be);
}

void gs_backend_destroy(gs_backend **be)
{
    if (!be || !*be) return;
    (*be)->ops->destroy(*be);
    *be = NULL;
}

gs_status gs_backend_alloc(gs_backend *be, void **p, size_t bytes) { return be->ops->alloc(be, p, bytes); }
void gs_backend_free(gs_backend *be, void *p)
{
    if (p) be->ops->free(be, p);
}
gs_status gs_backend_upload(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    return bytes ? be->ops->upload(be, dst, src, bytes) : GS_OK;
}
gs_status gs_backend_download(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    return bytes ? be->ops->download(be, dst, src, bytes) : GS_OK;
}
gs_status gs_backend_synchronize(gs_backend *be) { return be->ops->synchronize(be); }

bool gs_backend_mem_usage(const gs_backend *be, size_t *live, size_t *peak)
{
    *live = be ? be->mem.live : 0;
    *peak = be ? be->mem.peak : 0;
    return be != NULL;
}

void gs_backend_mem_peak_reset(gs_backend *be)
{
    if (be) gs_mem_track_reset_peak(&be->mem);
}

/* ---- vectors ---- */

gs_status gs_vec_create(gs_backend *be, gs_int n, gs_vector **v)
{
    gs_status st = GS_OK;
    gs_vector *x = NULL;
    if (n < 0) return GS_ERROR(GS_ERR_ARG, "vector length %d is negative", n);
    GS_CALL(gs_calloc(&x, 1, sizeof *x));
    x->n = n;
    x->be = be;
    x->owner = true;
    GS_TRY(be->ops->alloc(be, (void **)&x->data, (size_t)n * sizeof(double)));
    *v = x;
    return GS_OK;
cleanup:
    gs_free(&x);
    return st;
}

void gs_vec_destroy(gs_vector **v)
{
    if (!v || !*v) return;
    if ((*v)->owner && (*v)->data) (*v)->be->ops->free((*v)->be, (*v)->data);
    gs_free(v);
}

#define SAME2(x, y)                                                                           \
    do {                                                                                      \
        if ((x)->n != (y)->n || (x)->be != (y)->be)                                           \
            return GS_ERROR(GS_ERR_ARG, "vector mismatch: lengths %d and %d%s", (x)->n, (y)->n, \
                            (x)->be != (y)->be ? " on different backends" : "");             \
    } while (0)

gs_status gs_vec_upload(gs_vector *v, const double *host)
{
    return gs_backend_upload(v->be, v->data, host, (size_t)v->n * sizeof(double));
}
gs_status gs_vec_download(const gs_vector *v, double *host)
{
    return gs_backend_download(v->be, host, v->data, (size_t)v->n * sizeof(double));
}
gs_status gs_vec_copy(const gs_vector *x, gs_vector *y)
{
    SAME2(x, y);
    if (x == y || x->n == 0) return GS_OK;
    return x->be->ops->copy(x->be, y->data, x->data, (size_t)x->n * sizeof(double));
}
gs_status gs_vec_set(gs_vector *x, double alpha) { return x->be->ops->set(x, alpha); }
gs_status gs_vec_scale(gs_vector *x, double alpha) { return x->be->ops->scale(x, alpha); }
gs_status gs_vec_axpy(double alpha, const gs_vector *x, gs_vector *y)
{
    SAME2(x, y);
    return x->be->ops->axpy(alpha, x, y);
}
gs_status gs_vec_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y)
{
    SAME2(x, y);
    return x->be->ops->axpby(alpha, x, beta, y);
}
gs_status gs_vec_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double c, gs_vector *z)
{
    SAME2(x, y);
    SAME2(x, z);
    return x->be->ops->axpbypcz(a, x, b, y, c, z);
}
gs_status gs_vec_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    SAME2(x, y);
    SAME2(x, z);
    return x->be->ops->pointwise_mult(x, y, z);
}
gs_status gs_vec_dot(const gs_vector *x, const gs_vector *y, double *result)
{
    SAME2(x, y);
    return x->be->ops->dot(x, y, result);
}
gs_status gs_vec_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                      double result[2])
{
    SAME2(x, y);
    SAME2(x, u);
    SAME2(x, v);
    return x->be->ops->dot2(x, y, u, v, result);
}
gs_status gs_vec_nrm2(const gs_vector *x, double *result) { return x->be->ops->nrm2(x, result); }

gs_status gs_vec_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    if (idx->n != y->n || x->be != y->be || idx->be != x->be)
        return GS_ERROR(GS_ERR_ARG, "gather: index map of length %d for an output of length %d", idx->n, y->n);
    return x->be->ops->gather(x, idx, y);
}
gs_status gs_vec_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    if (idx->n != x->n || x->be != y->be || idx->be != x->be)
        return GS_ERROR(GS_ERR_ARG, "scatter: index map of length %d for an input of length %d", idx->n, x->n);
    return x->be->ops->scatter(x, idx, y);
}

/* ---- multivectors ---- */

gs_status gs_mvec_create(gs_backend *be, gs_int n, gs_int k, gs_mvec **V)
{
    gs_status st = GS_OK;
    gs_mvec *m = NULL;
    if (n < 0 || k < 1) return GS_ERROR(GS_ERR_ARG, "multivector of %d x %d", n, k);
    GS_CALL(gs_calloc(&m, 1, sizeof *m));
    m->n = n;
    m->k = k;
    m->be = be;
    if ((size_t)n > SIZE_MAX / sizeof(double) / (size_t)k)
        GS_FAIL(GS_ERR_MEM, "multivector of %d x %d doubles overflows size_t", n, k);
    GS_TRY(be->ops->alloc(be, (void **)&m->data, (size_t)n * (size_t)k * sizeof(double)));
    GS_TRY(gs_calloc(&m->cols, (size_t)k, sizeof *m->cols));
    for (gs_int j = 0; j < k; j++) {
        m->cols[j].n = n;
        m->cols[j].data = m->data + (size_t)j * (size_t)n;
        m->cols[j].be = be;
        m->cols[j].owner = false;
    }
    *V = m;
    return GS_OK;
cleanup:
    gs_mvec_destroy(&m);
    return st;
}

void gs_mvec_destroy(gs_mvec **V)
{
    if (!V || !*V) return;
    if ((*V)->data) (*V)->be->ops->free((*V)->be, (*V)->data);
    gs_free(&(*V)->cols);
    gs_free(V);
}

gs_status gs_mvec_dot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    if (k < 0 || k > V->k || w->n != V->n || w->be != V->be)
        return GS_ERROR(GS_ERR_ARG, "mvec_dot: %d columns of a %d x %d multivector with a vector of %d", k,
                        V->n, V->k, w->n);
    if (k == 0) return GS_OK;
    return V->be->ops->mdot(V, k, w, h);
}

gs_status gs_mvec_gemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    if (k < 0 || k > V->k || y->n != V->n || y->be != V->be)
        return GS_ERROR(GS_ERR_ARG, "mvec_gemv: %d columns of a %d x %d multivector with a vector of %d", k,
                        V->n, V->k, y->n);
    if (k == 0) return beta == 1.0 ? GS_OK : gs_vec_scale(y, beta);
    return V->be->ops->mgemv(alpha, V, k, h, beta, y);
}

/* true when v's entries overlap V's first k columns */
static bool in_columns(const gs_mvec *V, gs_int k, const gs_vector *v)
{
    const double *lo = V->data, *hi = V->data + (size_t)k * (size_t)V->n;
    return V->n > 0 && v->data < hi && v->data + v->n > lo;
}

gs_status gs_mvec_dot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h)
{
    if (k < 0 || k > V->k || x->n != V->n || y->n != V->n || x->be != V->be || y->be != V->be)
        return GS_ERROR(GS_ERR_ARG, "mvec_dot2: %d columns of a %d x %d multivector with vectors of %d and %d", k,
                        V->n, V->k, x->n, y->n);
    if (k == 0) return GS_OK;
    return V->be->ops->mdot2(V, k, x, y, h);
}

gs_status gs_mvec_gemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                        double b, double d, gs_vector *y)
{
    if (k < 0 || k > V->k || x->n != V->n || y->n != V->n || x->be != V->be || y->be != V->be)
        return GS_ERROR(GS_ERR_ARG, "mvec_gemv2: %d columns of a %d x %d multivector with vectors of %d and %d",
                        k, V->n, V->k, x->n, y->n);
    if ((x->n > 0 && x->data == y->data) || in_columns(V, k, x) || in_columns(V, k, y)) /* n = 0: nothing read */
        return GS_ERROR(GS_ERR_ARG, "mvec_gemv2: x and y must be distinct and outside the %d columns read", k);
    if (k == 0) {
        GS_CALL(gs_vec_scale(x, a));
        return gs_vec_axpby(d, x, b, y);
    }
    return V->be->ops->mgemv2(V, k, p, a, x, q, b, d, y);
}

/* ---- integer arrays ---- */

gs_status gs_ivec_create(gs_backend *be, gs_int n, const gs_int *host, gs_ivec **iv)
{
    gs_status st = GS_OK;
    gs_ivec *v = NULL;
    GS_CALL(gs_calloc(&v, 1, sizeof *v));
    v->n = n;
    v->be = be;
    GS_TRY(be->ops->alloc(be, (void **)&v->data, (size_t)n * sizeof(gs_int)));
    if (host) GS_TRY(gs_backend_upload(be, v->data, host, (size_t)n * sizeof(gs_int)));
    *iv = v;
    return GS_OK;
cleanup:
    gs_ivec_destroy(&v);
    return st;
}

void gs_ivec_destroy(gs_ivec **iv)
{
    if (!iv || !*iv) return;
    if ((*iv)->data) (*iv)->be->ops->free((*iv)->be, (*iv)->data);
    gs_free(iv);
}

/* ---- sparse operators ---- */

gs_status gs_mat_create(gs_backend *be, const gs_csr *A, gs_matrix **M)
{
    gs_status st = GS_OK;
    gs_matrix *m = NULL;
    if (!A->val) return GS_ERROR(GS_ERR_ARG, "cannot upload a pattern-only matrix");
    GS_CALL(gs_calloc(&m, 1, sizeof *m));
    m->nrows = A->nrows;
    m->ncols = A->ncols;
    m->nnz = A->nnz;
    m->be = be;
    GS_TRY(be->ops->mat_create(be, A, m));
    *M = m;
    return GS_OK;
cleanup:
    gs_free(&m);
    return st;
}

void gs_mat_destroy(gs_matrix **M)
{
    if (!M || !*M) return;
    if ((*M)->impl) (*M)->be->ops->mat_destroy(*M);
    gs_free(M);
}

gs_status gs_mat_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y)
{
    if (x->n != A->ncols || y->n != A->nrows || x->be != A->be || y->be != A->be)
        return GS_ERROR(GS_ERR_ARG, "spmv: %d x %d matrix with vectors of %d and %d", A->nrows, A->ncols,
                        x->n, y->n);
    return A->be->ops->spmv(alpha, A, x, beta, y);
}

/* ---- fused CG scalars ---- */

gs_status gs_ks_create(gs_backend *be, gs_kstate **ks)
{
    gs_status st = GS_OK;
    gs_kstate *k = NULL;
    GS_CALL(gs_calloc(&k, 1, sizeof *k));
    k->be = be;
    GS_TRY(be->ops->ks_create(be, k));
    *ks = k;
    return GS_OK;
cleanup:
    gs_free(&k);
    return st;
}

void gs_ks_destroy(gs_kstate **ks)
{
    if (!ks || !*ks) return;
    if ((*ks)->impl) (*ks)->be->ops->ks_destroy(*ks);
    gs_free(ks);
}

gs_status gs_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start) { return ks->be->ops->ks_begin(ks, it, start); }

gs_status gs_ks_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    SAME2(p, q);
    return ks->be->ops->cg_pq(ks, it, p, q);
}

gs_status gs_ks_cg_spmv_pq(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q)
{
    SAME2(p, q);
    if (A->be != ks->be || p->be != ks->be)
        return GS_ERROR(GS_ERR_ARG, "fused CG: the matrix and the vectors must live on the backend of the CG state");
    if (A->nrows != q->n || A->ncols != p->n)
        return GS_ERROR(GS_ERR_ARG, "fused CG: A is %d x %d but p has %d and q %d entries", (int)A->nrows,
                        (int)A->ncols, (int)p->n, (int)q->n);
    if (ks->be->ops->cg_spmv_pq) return ks->be->ops->cg_spmv_pq(ks, it, A, p, q);
    GS_CALL(gs_mat_spmv(1.0, A, p, 0.0, q));
    return ks->be->ops->cg_pq(ks, it, p, q);
}

gs_status gs_ks_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p, const gs_vector *q,
                          bool rz_is_rr)
{
    SAME2(x, r);
    SAME2(x, p);
    SAME2(x, q);
    return ks->be->ops->cg_update(ks, it, x, r, p, q, rz_is_rr);
}

gs_status gs_ks_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    SAME2(r, z);
    return ks->be->ops->cg_rz(ks, it, r, z);
}

gs_status gs_ks_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    SAME2(z, p);
    return ks->be->ops->cg_direction(ks, it, z, p);
}

gs_status gs_ks_mark(gs_kstate *ks, int it) { return ks->be->ops->ks_mark(ks, it); }

gs_status gs_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    GS_CALL(ks->be->ops->ks_record(ks, it, rec));
    if (rec->it != it)
        return GS_ERROR(GS_ERR_INTERNAL, "fused CG: the record of iteration %d was not written (slot holds "
                                         "iteration %d): the iteration ran after a stop",
                        it, rec->it);
    return GS_OK;
}

/* ---- timers ---- */

double gs_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

gs_status gs_timer_start(gs_backend *be, gs_timer *t)
{
    if (t->be != be) gs_timer_destroy(t); /* events belong to the backend that made them */
    t->be = be;
    return be->ops->timer_start(t);
}

gs_status gs_timer_stop(gs_timer *t, double *seconds) { return t->be->ops->timer_stop(t, seconds); }

void gs_timer_destroy(gs_timer *t)
{
    if (t && t->be) t->be->ops->timer_destroy(t);
    if (t) memset(t, 0, sizeof *t);
}
