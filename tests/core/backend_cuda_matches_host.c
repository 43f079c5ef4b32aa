/* Every op of the cuda backend against the host backend (the oracle): vector ops, reductions,
 * gathers/scatters, SpMV on random/PDE/real matrices, timers, memory errors.
 * Sizes 1, 31, 33, 1000, 100003; outputs poisoned with NaN wherever the op must not read them. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"

#include "backend_twin.h"

/* ---- backend basics ---- */

static void test_backend_fields(void **state)
{
    assert_int_equal(C->kind, GS_BACKEND_CUDA);
    assert_string_equal(C->name, "cuda");
    assert_true(strlen(C->device_name) > 0);
    assert_non_null(gs_backend_cuda_stream(C));
    assert_null(gs_backend_cuda_stream(H));
    size_t fr = 0, tot = 0;
    GS_ASSERT_OK(C->ops->mem_info(C, &fr, &tot));
    assert_true(tot > 0 && fr <= tot);
    print_message("device: %s, %.1f of %.1f GiB free\n", C->device_name, fr / 1073741824.0, tot / 1073741824.0);
}

static void test_absurd_allocation(void **state)
{
    void *p = NULL;
    /* compute-sanitizer (run with GS_TEST_QUICK=1) reports this deliberate failure as an API error */
    if (gs_test_quick()) skip();
    /* 1e15 bytes exceeds any GPU: GS_ERR_DEVICE_MEM naming the size and the device's free memory */
    GS_ASSERT_FAILS(gs_backend_alloc(C, &p, (size_t)1000000000000000ull), GS_ERR_DEVICE_MEM, "1000000000000000 bytes");
    assert_null(p);
    GS_ASSERT_FAILS(gs_backend_alloc(C, &p, (size_t)1000000000000000ull), GS_ERR_DEVICE_MEM, "free of");
    /* the failure left no pending CUDA error behind: ordinary work still runs */
    gs_vector *v = vec_from(C, 1000, NULL);
    GS_ASSERT_OK(gs_vec_set(v, 2.0));
    double d = 0.0;
    GS_ASSERT_OK(gs_vec_dot(v, v, &d));
    assert_true(d == 4000.0);
    gs_vec_destroy(&v);
}

/* The work space (gs_backend_cuda_work_alloc): a block given back is handed out again to a request it
 * fits (at most twice the request, sizes rounded to 512 B or 2 MiB), in stream order; bigger requests
 * get new blocks; beyond 64 idle blocks the oldest are returned; an impossible one fails cleanly; trim and
 * the host backend. */
static void test_work_space(void **state)
{
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    const size_t MiB = (size_t)1 << 20;
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &a, 1000, "test space"));
    assert_non_null(a);
    gs_backend_cuda_work_free(C, a);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &b, 900, "test space"));
    assert_ptr_equal(a, b); /* 900 and 1000 bytes are the same 1024-byte block */
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &c, 5000, "test space"));
    assert_ptr_not_equal(b, c); /* b is in use, and too small */
    gs_backend_cuda_work_free(C, c);
    gs_backend_cuda_work_free(C, b);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &a, 300, "test space"));
    assert_ptr_equal(a, b); /* the 1024-byte block: 5120 is more than twice 512 */
    gs_backend_cuda_work_free(C, a);

    /* 3 MiB -> a 4 MiB block; 5 MiB does not fit it; 1.5 MiB (2 MiB) takes the 4 MiB one, 0.6 MiB does not */
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &a, 3 * MiB, "test space"));
    gs_backend_cuda_work_free(C, a);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &b, 5 * MiB, "test space"));
    assert_ptr_not_equal(a, b);
    gs_backend_cuda_work_free(C, b);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &c, 3 * MiB / 2, "test space"));
    assert_ptr_equal(a, c);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &d, 6 * MiB / 10, "test space"));
    assert_ptr_not_equal(d, b);

    /* stream order: work queued before the block was given back, then after it was handed out again */
    const gs_int n = 100003;
    void *w = NULL;
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &w, (size_t)n * sizeof(double), "test space"));
    gs_vector v1 = {n, (double *)w, C, false};
    GS_ASSERT_OK(gs_vec_set(&v1, 3.0));
    gs_backend_cuda_work_free(C, w);
    void *w2 = NULL;
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &w2, (size_t)n * sizeof(double), "test space"));
    assert_ptr_equal(w, w2);
    gs_vector v2 = {n, (double *)w2, C, false};
    GS_ASSERT_OK(gs_vec_scale(&v2, 2.0));
    double *h = download(&v2);
    for (gs_int i = 0; i < n; i++) assert_true(h[i] == 6.0);
    gs_free(&h);
    gs_backend_cuda_work_free(C, w2);

    /* an impossible request fails with the size and the space's name; the idle blocks were returned
     * first, and later requests still work */
    if (!gs_test_quick()) {
        void *z = NULL;
        GS_ASSERT_FAILS(gs_backend_cuda_work_alloc(C, &z, (size_t)1000000000000000ull, "test space"), GS_ERR_DEVICE_MEM,
                        "1000000000000000 bytes (953674316.4 MiB) of test space");
        assert_null(z);
    }
    gs_backend_cuda_work_free(C, c);
    gs_backend_cuda_work_trim(C);
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &a, 3 * MiB, "test space"));
    gs_backend_cuda_work_free(C, a);
    gs_backend_cuda_work_free(C, d);
    gs_backend_cuda_work_free(C, NULL);

    /* more blocks given back than are kept idle (64): the oldest go back to CUDA; the rest still serve */
    void *many[70];
    for (int k = 0; k < 70; k++) {
        many[k] = NULL;
        GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &many[k], 4096, "test space"));
        assert_non_null(many[k]);
    }
    for (int k = 0; k < 70; k++) gs_backend_cuda_work_free(C, many[k]);
    for (int k = 0; k < 70; k++) GS_ASSERT_OK(gs_backend_cuda_work_alloc(C, &many[k], 4096, "test space"));
    for (int k = 0; k < 70; k++) /* blocks in use never alias */
        for (int j = k + 1; j < 70; j++) assert_ptr_not_equal(many[k], many[j]);
    gs_vector vm = {512, (double *)many[69], C, false};
    GS_ASSERT_OK(gs_vec_set(&vm, 1.5));
    double *hm = download(&vm);
    for (gs_int i = 0; i < 512; i++) assert_true(hm[i] == 1.5);
    gs_free(&hm);
    for (int k = 0; k < 70; k++) gs_backend_cuda_work_free(C, many[k]);

    /* a block of gs_backend_alloc given back here is freed as such */
    GS_ASSERT_OK(gs_backend_alloc(C, &a, 4096));
    gs_backend_cuda_work_free(C, a);

    /* the host backend: plain allocations */
    GS_ASSERT_OK(gs_backend_cuda_work_alloc(H, &a, 1000, "test space"));
    memset(a, 0, 1000);
    gs_backend_cuda_work_free(H, a);
}

static void test_upload_download_copy(void **state)
{
    for (int s = 0; s < NSIZES; s++) {
        gs_int n = twin_sizes[s];
        double *a = rand_array(n, 1 + s), *b = nan_array(n);
        gs_vector *x = vec_from(C, n, a), *y = vec_from(C, n, b);
        GS_ASSERT_OK(gs_vec_copy(x, y));
        double *c = download(y);
        assert_memory_equal(a, c, (size_t)n * sizeof(double));
        gs_free(&a);
        gs_free(&b);
        gs_free(&c);
        gs_vec_destroy(&x);
        gs_vec_destroy(&y);
    }
}

/* ---- elementwise ops ---- */

typedef enum { OP_SET, OP_SCALE, OP_AXPY, OP_AXPBY, OP_AXPBY0, OP_AXPBYPCZ, OP_AXPBYPCZ0, OP_PMULT } elem_op;
static const char *elem_name[] = {"set", "scale", "axpy", "axpby", "axpby(beta=0)", "axpbypcz", "axpbypcz(c=0)",
                                  "pointwise_mult"};

/* Runs op on backend be with inputs xs, ys and output initialised from zs (or NaN when the op must not
 * read its output); returns the output vector. */
static gs_vector *run_elem(gs_backend *be, elem_op op, gs_int n, const double *xs, const double *ys, const double *zs)
{
    bool reads_out = op == OP_SCALE || op == OP_AXPY || op == OP_AXPBY || op == OP_AXPBYPCZ;
    double *init = reads_out ? NULL : nan_array(n);
    gs_vector *x = vec_from(be, n, xs), *y = vec_from(be, n, ys), *z = vec_from(be, n, reads_out ? zs : init);
    switch (op) {
    case OP_SET: GS_ASSERT_OK(gs_vec_set(z, -0.375)); break;
    case OP_SCALE: GS_ASSERT_OK(gs_vec_scale(z, 1.7)); break;
    case OP_AXPY: GS_ASSERT_OK(gs_vec_axpy(-0.3, x, z)); break;
    case OP_AXPBY: GS_ASSERT_OK(gs_vec_axpby(0.6, x, -1.1, z)); break;
    case OP_AXPBY0: GS_ASSERT_OK(gs_vec_axpby(0.6, x, 0.0, z)); break;
    case OP_AXPBYPCZ: GS_ASSERT_OK(gs_vec_axpbypcz(0.25, x, -2.0, y, 0.9, z)); break;
    case OP_AXPBYPCZ0: GS_ASSERT_OK(gs_vec_axpbypcz(0.25, x, -2.0, y, 0.0, z)); break;
    case OP_PMULT: GS_ASSERT_OK(gs_vec_pointwise_mult(x, y, z)); break;
    }
    gs_vec_destroy(&x);
    gs_vec_destroy(&y);
    gs_free(&init);
    return z;
}

static void test_elementwise(void **state)
{
    for (int s = 0; s < NSIZES; s++) {
        gs_int n = twin_sizes[s];
        double *xs = rand_array(n, 10 + s), *ys = rand_array(n, 20 + s), *zs = rand_array(n, 30 + s);
        for (int op = OP_SET; op <= OP_PMULT; op++) {
            gs_vector *zc = run_elem(C, (elem_op)op, n, xs, ys, zs);
            gs_vector *zh = run_elem(H, (elem_op)op, n, xs, ys, zs);
            expect_vec_close(zc, zh, elem_name[op]);
            gs_vec_destroy(&zc);
            gs_vec_destroy(&zh);
        }
        gs_free(&xs);
        gs_free(&ys);
        gs_free(&zs);
    }
}

/* Aliased arguments (z = x .* x, y = a y + b y) are legal elementwise. */
static void test_elementwise_aliasing(void **state)
{
    gs_int n = 1000;
    double *xs = rand_array(n, 5);
    gs_vector *xc = vec_from(C, n, xs), *xh = vec_from(H, n, xs);
    GS_ASSERT_OK(gs_vec_axpby(2.0, xc, -0.5, xc));
    GS_ASSERT_OK(gs_vec_axpby(2.0, xh, -0.5, xh));
    GS_ASSERT_OK(gs_vec_pointwise_mult(xc, xc, xc));
    GS_ASSERT_OK(gs_vec_pointwise_mult(xh, xh, xh));
    expect_vec_close(xc, xh, "aliased axpby + pointwise_mult");
    gs_vec_destroy(&xc);
    gs_vec_destroy(&xh);
    gs_free(&xs);
}

/* ---- reductions ---- */

static void test_dot_dot2_nrm2(void **state)
{
    for (int s = 0; s < NSIZES; s++) {
        gs_int n = twin_sizes[s];
        double *xs = rand_array(n, 40 + s), *ys = rand_array(n, 50 + s), *us = rand_array(n, 60 + s),
               *vs = rand_array(n, 70 + s);
        gs_vector *xc = vec_from(C, n, xs), *yc = vec_from(C, n, ys), *uc = vec_from(C, n, us),
                  *vc = vec_from(C, n, vs);
        gs_vector *xh = vec_from(H, n, xs), *yh = vec_from(H, n, ys), *uh = vec_from(H, n, us),
                  *vh = vec_from(H, n, vs);
        double dc, dh, d2c[2] = {NAN, NAN}, d2h[2], nc, nh;
        GS_ASSERT_OK(gs_vec_dot(xc, yc, &dc));
        GS_ASSERT_OK(gs_vec_dot(xh, yh, &dh));
        expect_sum_close(dc, dh, n, abs_dot(n, xs, ys), "dot");
        /* deterministic: the same call gives the same bits */
        double dc2 = NAN;
        GS_ASSERT_OK(gs_vec_dot(xc, yc, &dc2));
        assert_memory_equal(&dc, &dc2, sizeof dc);

        GS_ASSERT_OK(gs_vec_dot2(xc, yc, uc, vc, d2c));
        GS_ASSERT_OK(gs_vec_dot2(xh, yh, uh, vh, d2h));
        expect_sum_close(d2c[0], d2h[0], n, abs_dot(n, xs, ys), "dot2[0]");
        expect_sum_close(d2c[1], d2h[1], n, abs_dot(n, us, vs), "dot2[1]");
        /* dot2 sums in the same order as dot */
        assert_memory_equal(&d2c[0], &dc, sizeof dc);

        GS_ASSERT_OK(gs_vec_nrm2(uc, &nc));
        GS_ASSERT_OK(gs_vec_nrm2(uh, &nh));
        expect_sum_close(nc, nh, n, nh, "nrm2");

        gs_vector *vv[] = {xc, yc, uc, vc, xh, yh, uh, vh};
        for (int k = 0; k < 8; k++) gs_vec_destroy(&vv[k]);
        gs_free(&xs);
        gs_free(&ys);
        gs_free(&us);
        gs_free(&vs);
    }
}

/* Norms whose squares overflow or underflow, zero vectors, and non-finite entries. */
static void test_nrm2_extremes(void **state)
{
    const double scales[] = {1e200, 1e-200, 1e-160, 0.0};
    for (int s = 0; s < NSIZES; s++) {
        gs_int n = twin_sizes[s];
        double *xs = rand_array(n, 80 + s);
        for (int k = 0; k < 4; k++) {
            double *a = NULL;
            GS_ASSERT_OK(GS_MALLOC(a, n));
            for (gs_int i = 0; i < n; i++) a[i] = xs[i] * scales[k];
            gs_vector *xc = vec_from(C, n, a), *xh = vec_from(H, n, a);
            double nc = NAN, nh = NAN;
            GS_ASSERT_OK(gs_vec_nrm2(xc, &nc));
            GS_ASSERT_OK(gs_vec_nrm2(xh, &nh));
            assert_true(isfinite(nc));
            if (scales[k] == 0.0) assert_true(nc == 0.0 && nh == 0.0);
            else assert_true(nc > 0.0);
            expect_sum_close(nc, nh, n, nh, "nrm2 (scaled)");
            /* one Inf or NaN entry makes the norm NaN, as on the host */
            a[n / 2] = (k % 2) ? INFINITY : NAN;
            GS_ASSERT_OK(gs_vec_upload(xc, a));
            GS_ASSERT_OK(gs_vec_nrm2(xc, &nc));
            assert_true(isnan(nc));
            gs_vec_destroy(&xc);
            gs_vec_destroy(&xh);
            gs_free(&a);
        }
        gs_free(&xs);
    }
}
/* ---- gather / scatter ---- */

static void test_gather_scatter(void **state)
{
    for (int s = 0; s < NSIZES; s++) {
        gs_int n = twin_sizes[s];
        uint64_t seed = 900 + (uint64_t)s;
        double *xs = rand_array(n, 91 + s), *ys = rand_array(n, 92 + s), *poison = nan_array(n);
        gs_int *perm = NULL, *any = NULL, *skip = NULL;
        GS_ASSERT_OK(GS_MALLOC(perm, n));
        GS_ASSERT_OK(GS_MALLOC(any, n));
        GS_ASSERT_OK(GS_MALLOC(skip, n));
        for (gs_int i = 0; i < n; i++) perm[i] = i;
        for (gs_int i = n - 1; i > 0; i--) { /* Fisher-Yates */
            gs_int j = (gs_int)(gs_test_rand(&seed) * (i + 1));
            if (j > i) j = i;
            gs_int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (gs_int i = 0; i < n; i++) {
            any[i] = (gs_int)(gs_test_rand(&seed) * n); /* repeats allowed in a gather */
            if (any[i] >= n) any[i] = n - 1;
            skip[i] = (i % 7 == 3) ? -1 - (i % 3) : perm[i]; /* negative: skipped by scatter */
        }
        gs_ivec *ic_any = NULL, *ih_any = NULL, *ic_skip = NULL, *ih_skip = NULL;
        GS_ASSERT_OK(gs_ivec_create(C, n, any, &ic_any));
        GS_ASSERT_OK(gs_ivec_create(H, n, any, &ih_any));
        GS_ASSERT_OK(gs_ivec_create(C, n, skip, &ic_skip));
        GS_ASSERT_OK(gs_ivec_create(H, n, skip, &ih_skip));
        gs_vector *xc = vec_from(C, n, xs), *xh = vec_from(H, n, xs);

        /* y[i] = x[any[i]] into a NaN-poisoned y */
        gs_vector *yc = vec_from(C, n, poison), *yh = vec_from(H, n, poison);
        GS_ASSERT_OK(gs_vec_gather(xc, ic_any, yc));
        GS_ASSERT_OK(gs_vec_gather(xh, ih_any, yh));
        expect_vec_close(yc, yh, "gather");
        gs_vec_destroy(&yc);
        gs_vec_destroy(&yh);

        /* y[skip[i]] = x[i] for skip[i] >= 0: untouched entries keep ys */
        yc = vec_from(C, n, ys);
        yh = vec_from(H, n, ys);
        GS_ASSERT_OK(gs_vec_scatter(xc, ic_skip, yc));
        GS_ASSERT_OK(gs_vec_scatter(xh, ih_skip, yh));
        expect_vec_close(yc, yh, "scatter with negative indices");
        GS_ASSERT_OK(gs_backend_synchronize(C)); /* no index was out of range */
        gs_vec_destroy(&yc);
        gs_vec_destroy(&yh);

        gs_vec_destroy(&xc);
        gs_vec_destroy(&xh);
        gs_ivec_destroy(&ic_any);
        gs_ivec_destroy(&ih_any);
        gs_ivec_destroy(&ic_skip);
        gs_ivec_destroy(&ih_skip);
        gs_free(&perm);
        gs_free(&any);
        gs_free(&skip);
        gs_free(&xs);
        gs_free(&ys);
        gs_free(&poison);
    }
}

/* An index outside the vector is reported at the next synchronization (the host backend reports it
 * at once); the gathered entry is NaN, nothing is written out of bounds, and the report is cleared. */
static void test_gather_scatter_bad_index(void **state)
{
    const gs_int n = 1000;
    double *xs = rand_array(n, 3);
    gs_int *idx = NULL;
    GS_ASSERT_OK(GS_MALLOC(idx, n));
    for (gs_int i = 0; i < n; i++) idx[i] = n - 1 - i;
    idx[517] = -2; /* a gather has no "skip" entries */
    gs_ivec *ic = NULL;
    GS_ASSERT_OK(gs_ivec_create(C, n, idx, &ic));
    gs_vector *xc = vec_from(C, n, xs), *yc = vec_from(C, n, xs);
    GS_ASSERT_OK(gs_vec_gather(xc, ic, yc));
    GS_ASSERT_FAILS(gs_backend_synchronize(C), GS_ERR_ARG, "gather: index -2 at position 517");
    GS_ASSERT_OK(gs_backend_synchronize(C)); /* reported once */
    double *y = download(yc);
    assert_true(isnan(y[517]));
    assert_true(y[0] == xs[n - 1]);
    gs_free(&y);

    idx[517] = n + 5; /* scatter: beyond the destination */
    gs_ivec_destroy(&ic);
    GS_ASSERT_OK(gs_ivec_create(C, n, idx, &ic));
    GS_ASSERT_OK(gs_vec_scatter(xc, ic, yc));
    double d = 0.0;
    GS_ASSERT_FAILS(gs_vec_dot(xc, xc, &d), GS_ERR_ARG, "scatter: index 1005 at position 517");
    GS_ASSERT_OK(gs_vec_dot(xc, xc, &d));
    assert_true(d > 0.0);

    gs_ivec_destroy(&ic);
    gs_vec_destroy(&xc);
    gs_vec_destroy(&yc);
    gs_free(&idx);
    gs_free(&xs);
}

/* ---- SpMV ---- */

/* Per-row bound: |y_cuda - y_host| <= (len + 2) eps (|alpha| sum |a_ij x_j| + |beta y_i|) * 2. */
static void check_spmv(const gs_csr *A, const char *what)
{
    gs_matrix *Mc = NULL, *Mh = NULL;
    GS_ASSERT_OK(gs_mat_create(C, A, &Mc));
    GS_ASSERT_OK(gs_mat_create(H, A, &Mh));
    assert_int_equal(Mc->nrows, A->nrows);
    assert_int_equal(Mc->nnz, A->nnz);
    double *xs = rand_array(A->ncols, 11), *ys = rand_array(A->nrows, 12), *poison = nan_array(A->nrows);
    gs_vector *xc = vec_from(C, A->ncols, xs), *xh = vec_from(H, A->ncols, xs);
    const double alphas[] = {1.0, -0.5, 2.0}, betas[] = {0.0, 2.0, 1.0};
    for (int t = 0; t < 3; t++) {
        double alpha = alphas[t], beta = betas[t];
        const double *y0 = beta == 0.0 ? poison : ys;
        gs_vector *yc = vec_from(C, A->nrows, y0), *yh = vec_from(H, A->nrows, y0);
        GS_ASSERT_OK(gs_mat_spmv(alpha, Mc, xc, beta, yc));
        GS_ASSERT_OK(gs_mat_spmv(alpha, Mh, xh, beta, yh));
        double *c = download(yc), *h = download(yh);
        for (gs_int i = 0; i < A->nrows; i++) {
            double mag = 0.0;
            for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) mag += fabs(A->val[p] * xs[A->colind[p]]);
            double scale = 2.0 * (fabs(alpha) * mag + (beta == 0.0 ? 0.0 : fabs(beta * ys[i])));
            gs_int len = A->rowptr[i + 1] - A->rowptr[i];
            if (!(fabs(c[i] - h[i]) <= (len + 2) * DBL_EPSILON * scale))
                fprintf(stderr, "%s: spmv(alpha %g, beta %g) row %d (%d entries): cuda %.17g host %.17g\n", what,
                        alpha, beta, i, len, c[i], h[i]);
            assert_true(fabs(c[i] - h[i]) <= (len + 2) * DBL_EPSILON * scale);
        }
        /* reproducible: the same product again gives the same bits */
        if (t == 0) {
            GS_ASSERT_OK(gs_mat_spmv(alpha, Mc, xc, beta, yc));
            double *c2 = download(yc);
            assert_memory_equal(c, c2, (size_t)A->nrows * sizeof(double));
            gs_free(&c2);
        }
        gs_free(&c);
        gs_free(&h);
        gs_vec_destroy(&yc);
        gs_vec_destroy(&yh);
    }
    gs_vec_destroy(&xc);
    gs_vec_destroy(&xh);
    gs_mat_destroy(&Mc);
    gs_mat_destroy(&Mh);
    assert_null(Mc);
    gs_free(&xs);
    gs_free(&ys);
    gs_free(&poison);
}

/* n = 1003: every 10th row empty (not even a diagonal), row 500 dense, others ~6 random entries. */
static void test_spmv_random_awkward(void **state)
{
    const gs_int n = 1003;
    gs_int cap = n * 8 + n, nnz = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    uint64_t seed = 4242;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        if (i % 10 == 4) continue;
        if (i == 500) {
            for (gs_int j = 0; j < n; j++) {
                ri[nnz] = i;
                ci[nnz] = j;
                v[nnz++] = gs_test_rand(&seed) - 0.5;
            }
            continue;
        }
        for (int k = 0; k < 6; k++) {
            gs_int j = (gs_int)(gs_test_rand(&seed) * n);
            ri[nnz] = i;
            ci[nnz] = j < n ? j : n - 1;
            v[nnz++] = gs_test_rand(&seed) - 0.5;
        }
    }
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, &A));
    assert_int_equal(A.rowptr[5] - A.rowptr[4], 0);
    assert_int_equal(A.rowptr[501] - A.rowptr[500], n);
    check_spmv(&A, "random 1003 with empty rows and a dense row");
    gs_csr_free(&A);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static void test_spmv_poisson3d(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson3d(17, 13, 11, &A));
    check_spmv(&A, "poisson3d 17x13x11");
    gs_csr_free(&A);
}

static void test_spmv_real_matrices(void **state)
{
    const char *names[] = {"sherman1.mtx", "west0497.mtx", "bcsstk01.mtx"};
    for (int k = 0; k < 3; k++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_load(names[k], &A));
        check_spmv(&A, names[k]);
        gs_csr_free(&A);
    }
}

/* A rectangular operator and one with no entries at all. */
static void test_spmv_rectangular_and_empty(void **state)
{
    const gs_int ri[] = {0, 0, 1, 2, 2, 2, 4}, ci[] = {0, 40, 3, 1, 2, 39, 7};
    const double v[] = {1, 2, 3, 4, 5, 6, 7};
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_from_coo(5, 41, 7, ri, ci, v, &A));
    check_spmv(&A, "rectangular 5 x 41");
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_csr_alloc(&A, 37, 37, 0, true));
    check_spmv(&A, "37 x 37 without entries");
    gs_csr_free(&A);
}

/* ---- timers ---- */

/* ---- fused CG steps (gs_kstate): one step of each kind on both backends ---- */

/* begin, p'q, update (with and without z = r), r'z, direction, mark, record: cuda vs host. */
static void ks_one_iteration(ks_side *S, int it, bool with_pc, const gs_ks_start *start, gs_krec *rec)
{
    GS_ASSERT_OK(gs_ks_begin(S->ks, it, start));
    GS_ASSERT_OK(gs_ks_cg_pq(S->ks, it, S->p, S->q));
    GS_ASSERT_OK(gs_ks_cg_update(S->ks, it, S->x, S->r, S->p, S->q, !with_pc));
    if (with_pc) GS_ASSERT_OK(gs_ks_cg_rz(S->ks, it, S->r, S->z));
    GS_ASSERT_OK(gs_ks_cg_direction(S->ks, it, with_pc ? S->z : S->r, S->p));
    GS_ASSERT_OK(gs_ks_mark(S->ks, it));
    GS_ASSERT_OK(gs_ks_record(S->ks, it, rec));
}

static void test_fused_cg_steps(void **state)
{
    for (int si = 0; si < NSIZES; si++) {
        const gs_int n = twin_sizes[si];
        for (int with_pc = 0; with_pc < 2; with_pc++) {
            double *d[5];
            for (int k = 0; k < 5; k++) d[k] = rand_array(n, 700 + 10 * (uint64_t)si + (uint64_t)k);
            for (gs_int i = 0; i < n; i++) { /* p'q > 0 and r'z > 0: a regular step */
                d[3][i] = 2.0 * d[2][i] + 0.1 * d[3][i];
                d[4][i] = 1.5 * d[1][i] + 0.1 * d[4][i];
            }
            ks_side Hs = {0}, Cs = {0};
            ks_side_make(&Hs, H, n, d);
            ks_side_make(&Cs, C, n, d);
            /* a small r'z keeps alpha small, so that r'z stays positive after the update */
            const gs_ks_start start = {1e-3, 1e-300, INFINITY, 0, 0, INFINITY};
            gs_krec hr, cr;
            ks_one_iteration(&Hs, 7, with_pc != 0, &start, &hr);
            ks_one_iteration(&Cs, 7, with_pc != 0, &start, &cr);
            assert_int_equal(hr.it, 7);
            assert_int_equal(cr.it, 7);
            assert_int_equal(cr.code, hr.code);
            if (n > 32) assert_int_equal(hr.code, GS_KC_RUNNING);
            assert_true(fabs(cr.rnorm - hr.rnorm) <= 1e-12 * hr.rnorm);
            assert_true(fabs(cr.value - hr.value) <= 1e-12 * fabs(hr.value)); /* alpha */
            expect_vec_close(Cs.x, Hs.x, "fused cg x");
            expect_vec_close(Cs.r, Hs.r, "fused cg r");
            expect_vec_close(Cs.p, Hs.p, "fused cg p");

            /* a second iteration uses the r'z the first one produced (the other parity slot) */
            GS_ASSERT_OK(gs_ks_cg_pq(Hs.ks, 8, Hs.p, Hs.q));
            GS_ASSERT_OK(gs_ks_cg_pq(Cs.ks, 8, Cs.p, Cs.q));
            GS_ASSERT_OK(gs_ks_mark(Cs.ks, 8));
            GS_ASSERT_OK(gs_ks_record(Hs.ks, 8, &hr));
            GS_ASSERT_OK(gs_ks_record(Cs.ks, 8, &cr));
            assert_int_equal(hr.code, cr.code);
            if (hr.code == GS_KC_RUNNING) assert_true(fabs(cr.value - hr.value) <= 1e-11 * fabs(hr.value));

            /* p'q <= 0 stops the iteration: the update that follows leaves x and r untouched */
            GS_ASSERT_OK(gs_vec_scale(Hs.q, 0.0));
            GS_ASSERT_OK(gs_vec_scale(Cs.q, 0.0));
            GS_ASSERT_OK(gs_ks_begin(Cs.ks, 9, &start));
            GS_ASSERT_OK(gs_ks_cg_pq(Cs.ks, 9, Cs.p, Cs.q));
            double *x_before = download(Cs.x);
            GS_ASSERT_OK(gs_ks_cg_update(Cs.ks, 9, Cs.x, Cs.r, Cs.p, Cs.q, true));
            GS_ASSERT_OK(gs_ks_cg_direction(Cs.ks, 9, Cs.r, Cs.p));
            GS_ASSERT_OK(gs_ks_mark(Cs.ks, 9));
            GS_ASSERT_OK(gs_ks_record(Cs.ks, 9, &cr));
            assert_int_equal(cr.code, GS_KC_PQ_NONPOS);
            assert_true(cr.value == 0.0);
            assert_true(isnan(cr.rnorm));
            double *x_after = download(Cs.x);
            assert_memory_equal(x_before, x_after, (size_t)n * sizeof(double));
            /* iteration 10 ran after the stop: its record was never written */
            GS_ASSERT_OK(gs_ks_cg_pq(Cs.ks, 10, Cs.p, Cs.q));
            GS_ASSERT_OK(gs_ks_mark(Cs.ks, 10));
            GS_ASSERT_FAILS(gs_ks_record(Cs.ks, 10, &cr), GS_ERR_INTERNAL, "was not written");

            /* convergence: a bound above ||r|| stops after the update with code CONVERGED */
            const gs_ks_start loose = {0.75, 1e300, INFINITY, 0, 0, INFINITY};
            for (int k = 0; k < 2; k++) {
                ks_side *S = k ? &Cs : &Hs;
                GS_ASSERT_OK(gs_vec_copy(S->p, S->q)); /* p'q = ||p||^2 > 0 */
                GS_ASSERT_OK(gs_ks_begin(S->ks, 11, &loose));
                GS_ASSERT_OK(gs_ks_cg_pq(S->ks, 11, S->p, S->q));
                GS_ASSERT_OK(gs_ks_cg_update(S->ks, 11, S->x, S->r, S->p, S->q, true));
                GS_ASSERT_OK(gs_ks_mark(S->ks, 11));
                GS_ASSERT_OK(gs_ks_record(S->ks, 11, k ? &cr : &hr));
            }
            assert_int_equal(hr.code, GS_KC_CONVERGED);
            assert_int_equal(cr.code, GS_KC_CONVERGED);
            gs_free(&x_before);
            gs_free(&x_after);
            ks_side_free(&Hs);
            ks_side_free(&Cs);
            for (int k = 0; k < 5; k++) gs_free(&d[k]);
        }
    }
}

/* q = A p fused with p'Ap and alpha (gs_ks_cg_spmv_pq): cuda (fused into our SpMV kernel, or the SpMV and
 * k_cg_pq where the matrix has long rows) against the host (SpMV, then p'q): q, alpha and the record agree;
 * q is poisoned first. A Poisson matrix large enough that the SpMV grid outgrows the partial sums of the
 * other fused kernels; a random one (n not a multiple of 32); one with a dense row (long-row fallback). */
static void test_fused_cg_spmv_pq(void **state)
{
    gs_csr mats[3] = {{0}, {0}, {0}};
    GS_ASSERT_OK(gs_gen_poisson3d(gs_test_quick() ? 23 : 61, 59, 57, &mats[0]));
    GS_ASSERT_OK(gs_test_random_sparse(4099, 7, 1.3, 91, &mats[1]));
    GS_ASSERT_OK(gs_test_random_sparse(3001, 4, 1.5, 92, &mats[2]));
    { /* a dense row 17 in the third: far above any long-row threshold */
        gs_csr D = {0};
        const gs_int n = mats[2].nrows;
        GS_ASSERT_OK(gs_csr_alloc(&D, n, n, mats[2].nnz + n, true));
        gs_int q = 0;
        for (gs_int i = 0; i < n; i++) {
            if (i == 17) {
                for (gs_int j = 0; j < n; j++) {
                    D.colind[q] = j;
                    D.val[q++] = j == i ? 4.0 : 1e-3 * (double)(j % 13);
                }
            } else {
                for (gs_int t = mats[2].rowptr[i]; t < mats[2].rowptr[i + 1]; t++) {
                    D.colind[q] = mats[2].colind[t];
                    D.val[q++] = mats[2].val[t];
                }
            }
            D.rowptr[i + 1] = q;
        }
        D.nnz = q;
        gs_csr_free(&mats[2]);
        mats[2] = D;
    }
    for (int m = 0; m < 3; m++) {
        const gs_int n = mats[m].nrows;
        gs_matrix *MH = NULL, *MC = NULL;
        GS_ASSERT_OK(gs_mat_create(H, &mats[m], &MH));
        GS_ASSERT_OK(gs_mat_create(C, &mats[m], &MC));
        double *d[5];
        for (int k = 0; k < 5; k++) d[k] = rand_array(n, 900 + 10 * (uint64_t)m + (uint64_t)k);
        gs_test_poison(n, d[3]);
        ks_side Hs = {0}, Cs = {0};
        ks_side_make(&Hs, H, n, d);
        ks_side_make(&Cs, C, n, d);
        const gs_ks_start start = {1.25, 1e-300, INFINITY, 0, 0, INFINITY};
        gs_krec hr, cr;
        for (int k = 0; k < 2; k++) {
            ks_side *S = k ? &Cs : &Hs;
            GS_ASSERT_OK(gs_ks_begin(S->ks, 3, &start));
            GS_ASSERT_OK(gs_ks_cg_spmv_pq(S->ks, 3, k ? MC : MH, S->p, S->q));
            GS_ASSERT_OK(gs_ks_mark(S->ks, 3));
            GS_ASSERT_OK(gs_ks_record(S->ks, 3, k ? &cr : &hr));
        }
        expect_vec_close(Cs.q, Hs.q, "fused spmv q");
        assert_int_equal(cr.it, 3);
        assert_int_equal(cr.code, hr.code);
        if (hr.code == GS_KC_RUNNING)
            assert_true(fabs(cr.value - hr.value) <= 1e-12 * fabs(hr.value)); /* alpha = 1.25 / p'Ap */
        else
            assert_true(fabs(cr.value - hr.value) <= 1e-12 * fabs(hr.value) || cr.value == hr.value); /* p'Ap */
        /* after a stop the fused kernel does nothing: q is left as it was, no record is written */
        GS_ASSERT_OK(gs_vec_scale(Cs.p, 0.0)); /* p'Ap = 0 <= 0: a stop */
        GS_ASSERT_OK(gs_ks_begin(Cs.ks, 4, &start));
        GS_ASSERT_OK(gs_ks_cg_spmv_pq(Cs.ks, 4, MC, Cs.p, Cs.q));
        GS_ASSERT_OK(gs_ks_mark(Cs.ks, 4));
        GS_ASSERT_OK(gs_ks_record(Cs.ks, 4, &cr));
        assert_int_equal(cr.code, GS_KC_PQ_NONPOS);
        GS_ASSERT_OK(gs_vec_set(Cs.q, 7.0));
        GS_ASSERT_OK(gs_ks_cg_spmv_pq(Cs.ks, 5, MC, Cs.p, Cs.q));
        GS_ASSERT_OK(gs_ks_mark(Cs.ks, 5));
        GS_ASSERT_FAILS(gs_ks_record(Cs.ks, 5, &cr), GS_ERR_INTERNAL, "was not written");
        double *qa = download(Cs.q);
        if (m < 2) /* the fused kernel returns at once; the long-row fallback's SpMV still writes q */
            for (gs_int i = 0; i < n; i++) assert_true(qa[i] == 7.0);
        gs_free(&qa);
        ks_side_free(&Hs);
        ks_side_free(&Cs);
        gs_mat_destroy(&MH);
        gs_mat_destroy(&MC);
        for (int k = 0; k < 5; k++) gs_free(&d[k]);
        gs_csr_free(&mats[m]);
    }
}

static void test_timer(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson3d(40, 40, 40, &A));
    gs_matrix *M = NULL;
    GS_ASSERT_OK(gs_mat_create(C, &A, &M));
    gs_vector *x = vec_from(C, A.nrows, NULL), *y = vec_from(C, A.nrows, NULL);
    GS_ASSERT_OK(gs_vec_set(x, 1.0));
    gs_timer t;
    memset(&t, 0, sizeof t);
    double one = 0.0, ten = 0.0;
    GS_ASSERT_OK(gs_timer_start(C, &t));
    GS_ASSERT_OK(gs_mat_spmv(1.0, M, x, 0.0, y));
    GS_ASSERT_OK(gs_timer_stop(&t, &one));
    GS_ASSERT_OK(gs_timer_start(C, &t)); /* the same timer again */
    for (int r = 0; r < 10; r++) GS_ASSERT_OK(gs_mat_spmv(1.0, M, x, 0.0, y));
    GS_ASSERT_OK(gs_timer_stop(&t, &ten));
    print_message("spmv 64000 rows: %.3f us once, %.3f us for 10\n", 1e6 * one, 1e6 * ten);
    assert_true(one > 0.0 && one < 1.0);
    assert_true(ten > one);
    gs_timer_destroy(&t);
    assert_null(t.start);
    /* the row sums of the Poisson matrix: A * ones = row sums */
    double *yh = download(y);
    for (gs_int i = 0; i < A.nrows; i++) assert_true(yh[i] >= 0.0 && yh[i] <= 3.0);
    gs_free(&yh);
    gs_vec_destroy(&x);
    gs_vec_destroy(&y);
    gs_mat_destroy(&M);
    gs_csr_free(&A);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_fields),
        cmocka_unit_test(test_absurd_allocation),
        cmocka_unit_test(test_work_space),
        cmocka_unit_test(test_upload_download_copy),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_elementwise_aliasing),
        cmocka_unit_test(test_dot_dot2_nrm2),
        cmocka_unit_test(test_nrm2_extremes),
        cmocka_unit_test(test_gather_scatter),
        cmocka_unit_test(test_gather_scatter_bad_index),
        cmocka_unit_test(test_spmv_random_awkward),
        cmocka_unit_test(test_spmv_poisson3d),
        cmocka_unit_test(test_spmv_real_matrices),
        cmocka_unit_test(test_spmv_rectangular_and_empty),
        cmocka_unit_test(test_fused_cg_steps),
        cmocka_unit_test(test_fused_cg_spmv_pq),
        cmocka_unit_test(test_timer),
    };
    return cmocka_run_group_tests(tests, twin_setup, twin_teardown);
}
