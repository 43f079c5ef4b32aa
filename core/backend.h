/* The backend interface: vectors, multivectors (Krylov bases), sparse operators, BLAS-1, gathers and
 * timers, implemented by `host` (the reference, always present) and `cuda`. solver/ and precond/ call
 * only these functions; they never touch CUDA. */
#ifndef GS_BACKEND_H
#define GS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/csr.h"
#include "core/mem_track.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_backend_kind { GS_BACKEND_HOST = 0, GS_BACKEND_CUDA = 1 } gs_backend_kind;

typedef struct gs_backend gs_backend;
typedef struct gs_backend_ops gs_backend_ops;

/* A vector of n doubles resident on its backend (data is a device pointer under cuda). */
typedef struct gs_vector {
    gs_int n;
    double *data;
    gs_backend *be;
    bool owner; /* false for a view (a column of a gs_mvec) */
} gs_vector;

/* k vectors of length n, contiguous: column j starts at data + j*n; cols[j] is a view of it. */
typedef struct gs_mvec {
    gs_int n, k;
    double *data;
    gs_vector *cols;
    gs_backend *be;
} gs_mvec;

/* An integer array resident on the backend (gather/scatter maps, permutations). */
typedef struct gs_ivec {
    gs_int n;
    gs_int *data;
    gs_backend *be;
} gs_ivec;

/* A sparse operator (CSR) resident on the backend. */
typedef struct gs_matrix {
    gs_int nrows, ncols, nnz;
    gs_int rows_global; /* the whole operator's rows when this is one rank's part (distributed), else 0 */
    void *impl; /* backend-private: arrays, vendor descriptors */
    gs_backend *be;
} gs_matrix;

/* Timer: CUDA events on the device, a monotonic clock on the host. Zero-initialise before first use
 * (gs_timer t = {0}); gs_timer_destroy releases the events. */
typedef struct gs_timer {
    gs_backend *be;
    void *start, *stop; /* backend events */
    double t0;          /* host clock at start (seconds) */
} gs_timer;

/* Device-resident CG scalars (fused CG, solver/cg.c). A gs_kstate keeps r'z, p'Ap, alpha and the
 * convergence bound on the backend together with a ring of per-iteration records that the host reads
 * some iterations later, so that an iteration needs no host round trip: the host enqueues iteration
 * it + lag before it reads iteration it's record. Every fused kernel reads the stop code first and does
 * nothing once it is set, so iterations queued past a stop leave x, r and p as they were. */
typedef enum gs_kcode {
    GS_KC_RUNNING = 0,
    GS_KC_CONVERGED,       /* ||r|| <= bound */
    GS_KC_RNORM_NONFINITE, /* r'r is NaN or Inf */
    GS_KC_PQ_NONFINITE,    /* p'Ap is NaN or Inf */
    GS_KC_PQ_NONPOS,       /* p'Ap <= 0: A is not SPD */
    GS_KC_ALPHA_NONFINITE, /* r'z / p'Ap overflowed */
    GS_KC_RZ_NONFINITE,    /* r'M^{-1}r is NaN or Inf */
    GS_KC_RZ_NONPOS,       /* r'M^{-1}r <= 0: M is not SPD */
    GS_KC_STAGNATED,       /* ||r|| above its best for `window` iterations (gs_ksp_step's rule) */
    GS_KC_DIVERGED         /* ||r|| above the divergence bound (gs_ksp_step's rule) */
} gs_kcode;

/* What the host learns of iteration `it`: the monitored ||r|| (NaN when the iteration stopped before
 * updating r), the stop code, and the value that caused it (p'Ap, alpha, r'r or r'z). */
typedef struct gs_krec {
    int it;
    int code;
    double rnorm;
    double value;
} gs_krec;

#define GS_KS_RING 16 /* records kept: the host may run at most GS_KS_RING - 1 iterations ahead */

/* A (re)start before iteration it: r'z, the convergence bound on ||r||, and the stagnation state (best
 * ||r|| so far and its iteration; window 0: no stagnation test). */
typedef struct gs_ks_start {
    double rz, bound, best;
    int best_it, window;
    double dtol_bound; /* diverged when ||r|| exceeds it (INFINITY: off) */
} gs_ks_start;

typedef struct gs_kstate {
    gs_backend *be;
    void *impl;
} gs_kstate;

struct gs_backend_ops {
    gs_status (*alloc)(gs_backend *be, void **p, size_t bytes);
    void (*free)(gs_backend *be, void *p);
    /* dst/src: one host and one backend pointer, direction given by the function */
    gs_status (*upload)(gs_backend *be, void *dst, const void *src, size_t bytes);
    gs_status (*download)(gs_backend *be, void *dst, const void *src, size_t bytes);
    gs_status (*copy)(gs_backend *be, void *dst, const void *src, size_t bytes); /* backend->backend */
    gs_status (*synchronize)(gs_backend *be);
    gs_status (*mem_info)(gs_backend *be, size_t *free_bytes, size_t *total_bytes);

    gs_status (*set)(gs_vector *x, double alpha);                                          /* x = alpha */
    gs_status (*scale)(gs_vector *x, double alpha);                                        /* x *= alpha */
    gs_status (*axpy)(double alpha, const gs_vector *x, gs_vector *y);                     /* y += a x */
    gs_status (*axpby)(double alpha, const gs_vector *x, double beta, gs_vector *y);       /* y = a x + b y */
    gs_status (*axpbypcz)(double a, const gs_vector *x, double b, const gs_vector *y, double c,
                          gs_vector *z);                                                   /* z = a x + b y + c z */
    gs_status (*pointwise_mult)(const gs_vector *x, const gs_vector *y, gs_vector *z);     /* z = x .* y */
    gs_status (*dot)(const gs_vector *x, const gs_vector *y, double *result);              /* x'y */
    gs_status (*dot2)(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                      double result[2]);                         /* {x'y, u'v} in one pass */
    gs_status (*nrm2)(const gs_vector *x, double *result);                                 /* ||x||_2 */
    /* h[0..k) = V(:,0:k)' w   and   y = alpha V(:,0:k) h + beta y   (h on the host) */
    gs_status (*mdot)(const gs_mvec *V, gs_int k, const gs_vector *w, double *h);
    gs_status (*mgemv)(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y);
    /* The pair of GMRES's one-reduction Arnoldi step (DCGS2), each one pass over V(:,0:k):
     * mdot2: h[0..k) = V(:,0:k)' x and h[k..2k) = V(:,0:k)' y;
     * mgemv2: x = a x + V(:,0:k) p, then y = b y + d x + V(:,0:k) q with the new x (p, q on the host).
     * mgemv2's x and y are distinct and are not among the k columns (they may be later columns of V). */
    gs_status (*mdot2)(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h);
    gs_status (*mgemv2)(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                        double b, double d, gs_vector *y);
    /* gather: y[i] = x[idx[i]] (every index must be valid: host reports a bad one at once, cuda at the
     * next reduction or synchronize);  scatter: y[idx[i]] = x[i] for idx[i] >= 0 (negatives skipped) */
    gs_status (*gather)(const gs_vector *x, const gs_ivec *idx, gs_vector *y);
    gs_status (*scatter)(const gs_vector *x, const gs_ivec *idx, gs_vector *y);

    gs_status (*mat_create)(gs_backend *be, const gs_csr *A, gs_matrix *M); /* fills M->impl */
    void (*mat_destroy)(gs_matrix *M);
    gs_status (*spmv)(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y);

    /* Fused CG (see gs_kstate above). Iteration it: cg_pq: p'Ap, alpha = r'z / p'Ap;
     * cg_update: x += alpha p, r -= alpha q, ||r|| and the convergence test (rz_is_rr: no preconditioner,
     * r'z of the next iteration is r'r); cg_rz: r'z with z = M^{-1} r; cg_direction: p = z + beta p;
     * ks_mark: the record of `it` is complete once the work enqueued so far is; ks_record waits for it. */
    gs_status (*ks_create)(gs_backend *be, gs_kstate *ks);
    void (*ks_destroy)(gs_kstate *ks);
    gs_status (*ks_begin)(gs_kstate *ks, int it, const gs_ks_start *start);
    gs_status (*cg_pq)(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q);
    /* Optional: q = A p and cg_pq in one pass (NULL: spmv, then cg_pq). */
    gs_status (*cg_spmv_pq)(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q);
    gs_status (*cg_update)(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                           const gs_vector *q, bool rz_is_rr);
    gs_status (*cg_rz)(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z);
    gs_status (*cg_direction)(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p);
    gs_status (*ks_mark)(gs_kstate *ks, int it);
    gs_status (*ks_record)(gs_kstate *ks, int it, gs_krec *rec);

    gs_status (*timer_start)(gs_timer *t);
    gs_status (*timer_stop)(gs_timer *t, double *seconds);
    void (*timer_destroy)(gs_timer *t);
    void (*destroy)(gs_backend *be);
};

struct gs_backend {
    gs_backend_kind kind;
    const char *name;       /* "host" or "cuda" */
    char device_name[128];  /* GPU name, or "host (N threads)" */
    int device_id;
    const gs_backend_ops *ops;
    void *impl;             /* cuda: handles and stream */
    gs_mem_track mem;       /* the backend's allocations (its alloc/free and work space): live and peak bytes */
};

/* Backend selection: which = "auto" (cuda when a usable GPU is present, else host), "cuda" (error
 * GS_ERR_NO_DEVICE when none), or "host". */
gs_status gs_backend_create(const char *which, int device_id, gs_backend **be);
/* The configuration's device.spmv for the matrices created on be from now on: on a cuda backend
 * gs_backend_cuda_spmv_select(be, mode); the host backend has one SpMV and ignores it. NULL or "":
 * nothing changes. */
gs_status gs_backend_select_spmv(gs_backend *be, const char *mode);
/* Makes be's device the calling thread's current one (a cuda backend created on another thread);
 * nothing for the host backend. */
gs_status gs_backend_make_current(gs_backend *be);
void gs_backend_destroy(gs_backend **be);
/* Implementations (backend_host.c, backend_cuda.cu). gs_backend_cuda_available() is false in a
 * build without CUDA and when no device can be used; *why says why (static string). */
gs_status gs_backend_host_create(gs_backend **be);
gs_status gs_backend_cuda_create(int device_id, gs_backend **be);
bool gs_backend_cuda_available(const char **why);
int gs_backend_cuda_device_count(void); /* the devices the CUDA runtime sees (0: none, or no CUDA) */

/* Vectors. */
gs_status gs_vec_create(gs_backend *be, gs_int n, gs_vector **v);
void gs_vec_destroy(gs_vector **v);
gs_status gs_vec_upload(gs_vector *v, const double *host);   /* v = host[0..n) */
gs_status gs_vec_download(const gs_vector *v, double *host); /* host[0..n) = v */
gs_status gs_vec_copy(const gs_vector *x, gs_vector *y);     /* y = x */
gs_status gs_vec_set(gs_vector *x, double alpha);
gs_status gs_vec_scale(gs_vector *x, double alpha);
gs_status gs_vec_axpy(double alpha, const gs_vector *x, gs_vector *y);
gs_status gs_vec_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y);
gs_status gs_vec_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double c, gs_vector *z);
gs_status gs_vec_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z);
gs_status gs_vec_dot(const gs_vector *x, const gs_vector *y, double *result);
gs_status gs_vec_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                      double result[2]);
gs_status gs_vec_nrm2(const gs_vector *x, double *result);
gs_status gs_vec_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y);
gs_status gs_vec_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y);

/* Multivectors. */
gs_status gs_mvec_create(gs_backend *be, gs_int n, gs_int k, gs_mvec **V);
void gs_mvec_destroy(gs_mvec **V);
gs_status gs_mvec_dot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h);
gs_status gs_mvec_gemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y);
gs_status gs_mvec_dot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h);
gs_status gs_mvec_gemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                        double b, double d, gs_vector *y);

/* Integer arrays. */
gs_status gs_ivec_create(gs_backend *be, gs_int n, const gs_int *host, gs_ivec **iv);
void gs_ivec_destroy(gs_ivec **iv);

/* Raw backend memory (for plug-ins that keep their own arrays, e.g. factors). */
gs_status gs_backend_alloc(gs_backend *be, void **p, size_t bytes);
void gs_backend_free(gs_backend *be, void *p);
gs_status gs_backend_upload(gs_backend *be, void *dst, const void *src, size_t bytes);
gs_status gs_backend_download(gs_backend *be, void *dst, const void *src, size_t bytes);
gs_status gs_backend_synchronize(gs_backend *be);
/* Bytes of backend memory (device memory on cuda) its allocations hold now and at most since the last
 * gs_backend_mem_peak_reset: vectors, matrices, factors and work space, not the buffers CUDA libraries
 * keep for themselves. false when there is no backend. */
bool gs_backend_mem_usage(const gs_backend *be, size_t *live, size_t *peak);
void gs_backend_mem_peak_reset(gs_backend *be);

/* Sparse operators: M is an upload of A (A may be freed afterwards). */
gs_status gs_mat_create(gs_backend *be, const gs_csr *A, gs_matrix **M);
void gs_mat_destroy(gs_matrix **M);
gs_status gs_mat_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y);

/* Fused CG scalars (see gs_kstate). gs_ks_record fails (GS_ERR_INTERNAL) when iteration it's record
 * was not written, i.e. the iteration ran after a stop. */
gs_status gs_ks_create(gs_backend *be, gs_kstate **ks);
void gs_ks_destroy(gs_kstate **ks);
gs_status gs_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start);
gs_status gs_ks_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q);
/* q = A p, then gs_ks_cg_pq: fused into the SpMV kernel where the backend can (cuda, our SpMV, no long
 * rows); the same result up to the summation order of p'Ap. */
gs_status gs_ks_cg_spmv_pq(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q);
gs_status gs_ks_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p, const gs_vector *q,
                          bool rz_is_rr);
gs_status gs_ks_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z);
gs_status gs_ks_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p);
gs_status gs_ks_mark(gs_kstate *ks, int it);
gs_status gs_ks_record(gs_kstate *ks, int it, gs_krec *rec);

/* Timers. */
gs_status gs_timer_start(gs_backend *be, gs_timer *t);
gs_status gs_timer_stop(gs_timer *t, double *seconds);
void gs_timer_destroy(gs_timer *t);
/* Host monotonic clock in seconds. */
double gs_wtime(void);

#ifdef __cplusplus
}
#endif
#endif
