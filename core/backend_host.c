/* The host backend: plain C loops (OpenMP where the build has it); the correctness oracle and the
 * fallback when no GPU is present. Reductions use a fixed static schedule so results are reproducible
 * for a given thread count. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/backend.h"
#include "core/kstate_logic.h"
#include "core/mem.h"

#define PAR_MIN 20000 /* below this many elements, stay sequential */

static gs_status host_alloc(gs_backend *be, void **p, size_t bytes)
{
    GS_CALL(gs_malloc(p, bytes, 1));
    if (!gs_mem_track_add(&be->mem, *p, bytes)) {
        gs_free(p);
        return GS_ERROR(GS_ERR_MEM, "out of host memory recording an allocation of %zu bytes", bytes);
    }
    return GS_OK;
}
static void host_free(gs_backend *be, void *p)
{
    gs_mem_track_remove(&be->mem, p);
    gs_free(&p);
}
static gs_status host_memcpy(gs_backend *be, void *dst, const void *src, size_t bytes)
{
    if (bytes) memmove(dst, src, bytes);
    return GS_OK;
}
static gs_status host_sync(gs_backend *be) { return GS_OK; }
static gs_status host_mem_info(gs_backend *be, size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = *total_bytes = 0; /* not tracked */
    return GS_OK;
}

static gs_status host_set(gs_vector *x, double alpha)
{
    double *a = x->data;
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) a[i] = alpha;
    return GS_OK;
}

static gs_status host_scale(gs_vector *x, double alpha)
{
    double *a = x->data;
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) a[i] *= alpha;
    return GS_OK;
}

static gs_status host_axpy(double alpha, const gs_vector *x, gs_vector *y)
{
    const double *a = x->data;
    double *b = y->data;
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) b[i] += alpha * a[i];
    return GS_OK;
}

static gs_status host_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y)
{
    const double *a = x->data;
    double *b = y->data;
    if (beta == 0.0) {
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
        for (gs_int i = 0; i < x->n; i++) b[i] = alpha * a[i];
    } else {
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
        for (gs_int i = 0; i < x->n; i++) b[i] = alpha * a[i] + beta * b[i];
    }
    return GS_OK;
}

static gs_status host_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double c, gs_vector *z)
{
    const double *xa = x->data, *ya = y->data;
    double *za = z->data;
    if (c == 0.0) {
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
        for (gs_int i = 0; i < x->n; i++) za[i] = a * xa[i] + b * ya[i];
    } else {
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
        for (gs_int i = 0; i < x->n; i++) za[i] = a * xa[i] + b * ya[i] + c * za[i];
    }
    return GS_OK;
}

static gs_status host_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z)
{
    const double *xa = x->data, *ya = y->data;
    double *za = z->data;
#pragma omp parallel for schedule(static) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) za[i] = xa[i] * ya[i];
    return GS_OK;
}

static gs_status host_dot(const gs_vector *x, const gs_vector *y, double *result)
{
    const double *a = x->data, *b = y->data;
    double s = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) s += a[i] * b[i];
    *result = s;
    return GS_OK;
}

static gs_status host_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                           double result[2])
{
    const double *xa = x->data, *ya = y->data, *ua = u->data, *va = v->data;
    double s = 0.0, t = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s, t) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) {
        s += xa[i] * ya[i];
        t += ua[i] * va[i];
    }
    result[0] = s;
    result[1] = t;
    return GS_OK;
}

/* ||x||_2 with scaling by max|x_i| so that neither overflow nor underflow loses the result. */
static gs_status host_nrm2(const gs_vector *x, double *result)
{
    const double *a = x->data;
    double m = 0.0;
    bool bad = false;
#pragma omp parallel for schedule(static) reduction(max : m) reduction(|| : bad) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) {
        double v = fabs(a[i]);
        if (!isfinite(v)) bad = true;
        else if (v > m) m = v;
    }
    if (bad) {
        *result = NAN;
        return GS_OK;
    }
    if (m == 0.0) {
        *result = 0.0;
        return GS_OK;
    }
    double s = 0.0, inv = 1.0 / m;
#pragma omp parallel for schedule(static) reduction(+ : s) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) {
        double v = a[i] * inv;
        s += v * v;
    }
    *result = m * sqrt(s);
    return GS_OK;
}

static gs_status host_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h)
{
    for (gs_int j = 0; j < k; j++) GS_CALL(host_dot(&V->cols[j], w, &h[j]));
    return GS_OK;
}

static gs_status host_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y)
{
    double *ya = y->data;
    const gs_int n = V->n;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
    for (gs_int i = 0; i < n; i++) {
        double s = 0.0;
        for (gs_int j = 0; j < k; j++) s += V->data[(size_t)j * (size_t)n + (size_t)i] * h[j];
        ya[i] = beta == 0.0 ? alpha * s : alpha * s + beta * ya[i];
    }
    return GS_OK;
}

static gs_status host_mdot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h)
{
    for (gs_int j = 0; j < k; j++) {
        GS_CALL(host_dot(&V->cols[j], x, &h[j]));
        GS_CALL(host_dot(&V->cols[j], y, &h[k + j]));
    }
    return GS_OK;
}

static gs_status host_mgemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                             double b, double d, gs_vector *y)
{
    double *xa = x->data, *ya = y->data;
    const gs_int n = V->n;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
    for (gs_int i = 0; i < n; i++) {
        double sp = 0.0, sq = 0.0;
        for (gs_int j = 0; j < k; j++) {
            const double v = V->data[(size_t)j * (size_t)n + (size_t)i];
            sp += v * p[j];
            sq += v * q[j];
        }
        const double xn = a * xa[i] + sp;
        xa[i] = xn;
        ya[i] = b * ya[i] + d * xn + sq;
    }
    return GS_OK;
}

static gs_status host_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    const double *xa = x->data;
    double *ya = y->data;
    const gs_int *p = idx->data;
    for (gs_int i = 0; i < idx->n; i++) {
        if (p[i] < 0 || p[i] >= x->n)
            return GS_ERROR(GS_ERR_ARG, "gather index %d at position %d outside a vector of %d", p[i], i, x->n);
        ya[i] = xa[p[i]];
    }
    return GS_OK;
}

static gs_status host_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y)
{
    const double *xa = x->data;
    double *ya = y->data;
    const gs_int *p = idx->data;
    for (gs_int i = 0; i < idx->n; i++) {
        if (p[i] >= y->n)
            return GS_ERROR(GS_ERR_ARG, "scatter index %d at position %d outside a vector of %d", p[i], i, y->n);
        if (p[i] >= 0) ya[p[i]] = xa[i];
    }
    return GS_OK;
}

static gs_status host_mat_create(gs_backend *be, const gs_csr *A, gs_matrix *M)
{
    gs_csr *C = NULL;
    GS_CALL(gs_calloc(&C, 1, sizeof *C));
    gs_status st = gs_csr_copy(A, C);
    if (st != GS_OK) {
        gs_free(&C);
        GS_CALL(st);
    }
    M->impl = C;
    return GS_OK;
}

static void host_mat_destroy(gs_matrix *M)
{
    gs_csr *C = M->impl;
    gs_csr_free(C);
    gs_free(&C);
    M->impl = NULL;
}

static gs_status host_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y)
{
    gs_csr_spmv(alpha, (const gs_csr *)A->impl, x->data, beta, y->data);
    return GS_OK;
}

/* ---- fused CG (core/kstate_logic.h holds the scalar steps shared with the cuda backend) ---- */

typedef struct host_ks {
    gs_kscalars k;
    gs_krec ring[GS_KS_RING];
} host_ks;

static gs_status host_ks_create(gs_backend *be, gs_kstate *ks)
{
    host_ks *h = NULL;
    GS_CALL(gs_calloc(&h, 1, sizeof *h));
    for (int j = 0; j < GS_KS_RING; j++) h->ring[j].it = -1;
    ks->impl = h;
    return GS_OK;
}

static void host_ks_destroy(gs_kstate *ks) { gs_free(&ks->impl); }

static host_ks *hks(gs_kstate *ks) { return (host_ks *)ks->impl; }
static gs_krec *host_rec(gs_kstate *ks, int it) { return &hks(ks)->ring[it % GS_KS_RING]; }

static gs_status host_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start)
{
    ksl_begin(&hks(ks)->k, it, start);
    return GS_OK;
}

static gs_status host_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q)
{
    double pq = 0.0;
    if (hks(ks)->k.stop) return GS_OK;
    GS_CALL(host_dot(p, q, &pq));
    ksl_after_pq(&hks(ks)->k, it, pq, host_rec(ks, it));
    return GS_OK;
}

static gs_status host_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                                const gs_vector *q, bool rz_is_rr)
{
    gs_kscalars *k = &hks(ks)->k;
    if (k->stop) return GS_OK;
    const double alpha = k->s[KS_ALPHA], *pa = p->data, *qa = q->data;
    double *xa = x->data, *ra = r->data, rr = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : rr) if (x->n > PAR_MIN)
    for (gs_int i = 0; i < x->n; i++) {
        xa[i] += alpha * pa[i];
        double ri = ra[i] - alpha * qa[i];
        ra[i] = ri;
        rr += ri * ri;
    }
    ksl_after_rr(k, it, rr, rz_is_rr, host_rec(ks, it));
    return GS_OK;
}

static gs_status host_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z)
{
    double rz = 0.0;
    if (hks(ks)->k.stop) return GS_OK;
    GS_CALL(host_dot(r, z, &rz));
    ksl_after_rz(&hks(ks)->k, it, rz, host_rec(ks, it));
    return GS_OK;
}

static gs_status host_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p)
{
    if (hks(ks)->k.stop) return GS_OK;
    return host_axpby(1.0, z, ksl_beta(&hks(ks)->k, it), p);
}

static gs_status host_ks_mark(gs_kstate *ks, int it) { return GS_OK; }

static gs_status host_ks_record(gs_kstate *ks, int it, gs_krec *rec)
{
    *rec = *host_rec(ks, it);
    return GS_OK;
}

static gs_status host_timer_start(gs_timer *t)
{
    t->t0 = gs_wtime();
    return GS_OK;
}
static gs_status host_timer_stop(gs_timer *t, double *seconds)
{
    *seconds = gs_wtime() - t->t0;
    return GS_OK;
}
static void host_timer_destroy(gs_timer *t) {}

static void host_destroy(gs_backend *be)
{
    gs_mem_track_free(&be->mem);
    gs_free(&be);
}

static const gs_backend_ops host_ops = {
    .alloc = host_alloc,
    .free = host_free,
    .upload = host_memcpy,
    .download = host_memcpy,
    .copy = host_memcpy,
    .synchronize = host_sync,
    .mem_info = host_mem_info,
    .set = host_set,
    .scale = host_scale,
    .axpy = host_axpy,
    .axpby = host_axpby,
    .axpbypcz = host_axpbypcz,
    .pointwise_mult = host_pointwise_mult,
    .dot = host_dot,
    .dot2 = host_dot2,
    .nrm2 = host_nrm2,
    .mdot = host_mdot,
    .mgemv = host_mgemv,
    .mdot2 = host_mdot2,
    .mgemv2 = host_mgemv2,
    .gather = host_gather,
    .scatter = host_scatter,
    .mat_create = host_mat_create,
    .mat_destroy = host_mat_destroy,
    .spmv = host_spmv,
    .ks_create = host_ks_create,
    .ks_destroy = host_ks_destroy,
    .ks_begin = host_ks_begin,
    .cg_pq = host_cg_pq,
    .cg_update = host_cg_update,
    .cg_rz = host_cg_rz,
    .cg_direction = host_cg_direction,
    .ks_mark = host_ks_mark,
    .ks_record = host_ks_record,
    .timer_start = host_timer_start,
    .timer_stop = host_timer_stop,
    .timer_destroy = host_timer_destroy,
    .destroy = host_destroy,
};

gs_status gs_backend_host_create(gs_backend **be)
{
    gs_backend *b = NULL;
    GS_CALL(gs_calloc(&b, 1, sizeof *b));
    b->kind = GS_BACKEND_HOST;
    b->name = "host";
    b->ops = &host_ops;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    snprintf(b->device_name, sizeof b->device_name, "host (%d thread%s)", threads, threads == 1 ? "" : "s");
    *be = b;
    return GS_OK;
}
