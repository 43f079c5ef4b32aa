/* Helpers of the cuda-versus-host backend tests (tests/core/backend_twin.h). */
#include "backend_twin.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "core/backend_cuda.h"
#include "core/mem.h"

gs_backend *H, *C;

const gs_int twin_sizes[5] = {1, 31, 33, 1000, 100003};

/* ---- helpers ---- */

double *rand_array(gs_int n, uint64_t seed)
{
    double *a = NULL;
    GS_ASSERT_OK(GS_MALLOC(a, n));
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (gs_int i = 0; i < n; i++) a[i] = 2.0 * gs_test_rand(&s) - 1.0;
    return a;
}

double *nan_array(gs_int n)
{
    double *a = NULL;
    GS_ASSERT_OK(GS_MALLOC(a, n));
    gs_test_poison(n, a);
    return a;
}

gs_vector *vec_from(gs_backend *be, gs_int n, const double *data)
{
    gs_vector *v = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n, &v));
    if (data) GS_ASSERT_OK(gs_vec_upload(v, data));
    return v;
}

double *download(const gs_vector *v)
{
    double *a = nan_array(v->n);
    GS_ASSERT_OK(gs_vec_download(v, a));
    return a;
}

void expect_vec_close(const gs_vector *cv, const gs_vector *hv, const char *what)
{
    double *c = download(cv), *h = download(hv);
    double d = gs_test_rel_diff(cv->n, c, h);
    if (!(d <= ELEM_TOL)) fprintf(stderr, "%s (n = %d): relative difference %g\n", what, cv->n, d);
    assert_true(d <= ELEM_TOL);
    gs_free(&c);
    gs_free(&h);
}

void expect_sum_close(double a, double b, gs_int n, double scale, const char *what)
{
    double tol = 2.0 * (double)(n + 1) * DBL_EPSILON * scale + 1e-300;
    if (!(fabs(a - b) <= tol))
        fprintf(stderr, "%s (n = %d): cuda %.17g host %.17g (tolerance %g)\n", what, n, a, b, tol);
    assert_true(fabs(a - b) <= tol);
}

double abs_dot(gs_int n, const double *x, const double *y)
{
    double s = 0.0;
    for (gs_int i = 0; i < n; i++) s += fabs(x[i] * y[i]);
    return s;
}

void ks_side_make(ks_side *S, gs_backend *be, gs_int n, double *const data[5])
{
    GS_ASSERT_OK(gs_ks_create(be, &S->ks));
    S->x = vec_from(be, n, data[0]);
    S->r = vec_from(be, n, data[1]);
    S->p = vec_from(be, n, data[2]);
    S->q = vec_from(be, n, data[3]);
    S->z = vec_from(be, n, data[4]);
}

void ks_side_free(ks_side *S)
{
    gs_ks_destroy(&S->ks);
    gs_vec_destroy(&S->x);
    gs_vec_destroy(&S->r);
    gs_vec_destroy(&S->p);
    gs_vec_destroy(&S->q);
    gs_vec_destroy(&S->z);
}

int twin_setup(void **state)
{
    if (gs_backend_create("host", 0, &H) != GS_OK) return -1;
    if (gs_backend_cuda_create(0, &C) != GS_OK) {
        gs_error_print(stderr);
        return -1;
    }
    return 0;
}

int twin_teardown(void **state)
{
    gs_backend_destroy(&C);
    gs_backend_destroy(&H);
    return 0;
}
