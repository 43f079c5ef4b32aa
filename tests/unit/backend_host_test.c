/* Host backend ops against hand-computed results; backend selection errors. */
#include <math.h>
#include <string.h>

#include "core/backend.h"
#include "testutil.h"

static void test_vector_ops(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    const gs_int n = 1037;
    gs_vector *x = NULL, *y = NULL, *z = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n, &x));
    GS_ASSERT_OK(gs_vec_create(be, n, &y));
    GS_ASSERT_OK(gs_vec_create(be, n, &z));
    for (gs_int i = 0; i < n; i++) {
        x->data[i] = i + 1;
        y->data[i] = 2.0;
    }
    double d, d2[2];
    GS_ASSERT_OK(gs_vec_dot(x, y, &d));
    assert_true(d == (double)n * (n + 1));
    GS_ASSERT_OK(gs_vec_dot2(x, y, y, y, d2));
    assert_true(d2[0] == d && d2[1] == 4.0 * n);
    GS_ASSERT_OK(gs_vec_nrm2(y, &d));
    assert_true(fabs(d - 2.0 * sqrt(n)) < 1e-12);
    GS_ASSERT_OK(gs_vec_axpbypcz(1.0, x, -1.0, y, 0.0, z)); /* z = x - y */
    assert_true(z->data[9] == 8.0);
    GS_ASSERT_OK(gs_vec_axpby(2.0, x, 3.0, z)); /* z = 2x + 3(x - y) = 5x - 3y */
    assert_true(z->data[9] == 44.0);
    GS_ASSERT_OK(gs_vec_pointwise_mult(x, y, z));
    assert_true(z->data[n - 1] == 2.0 * n);
    /* overflow-safe norm */
    GS_ASSERT_OK(gs_vec_set(z, 1e300));
    GS_ASSERT_OK(gs_vec_nrm2(z, &d));
    assert_true(isfinite(d) && fabs(d / (1e300 * sqrt(n)) - 1) < 1e-12);
    z->data[5] = NAN;
    GS_ASSERT_OK(gs_vec_nrm2(z, &d));
    assert_true(isnan(d));
    gs_vector *w = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n + 1, &w));
    GS_ASSERT_FAILS(gs_vec_axpy(1.0, x, w), GS_ERR_ARG, "lengths 1037 and 1038");
    gs_vec_destroy(&w);
    gs_vec_destroy(&x);
    gs_vec_destroy(&y);
    gs_vec_destroy(&z);
    assert_null(x);
    gs_backend_destroy(&be);
}

static void test_mvec_gather_scatter(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    gs_mvec *V = NULL;
    gs_vector *w = NULL, *y = NULL;
    GS_ASSERT_OK(gs_mvec_create(be, 5, 3, &V));
    GS_ASSERT_OK(gs_vec_create(be, 5, &w));
    GS_ASSERT_OK(gs_vec_create(be, 5, &y));
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 5; i++) V->cols[j].data[i] = (j + 1) * (i + 1);
    for (int i = 0; i < 5; i++) w->data[i] = 1.0;
    double h[3];
    GS_ASSERT_OK(gs_mvec_dot(V, 3, w, h));
    assert_true(h[0] == 15 && h[1] == 30 && h[2] == 45);
    const double c[3] = {1, 0, -1};
    GS_ASSERT_OK(gs_vec_set(y, 1.0));
    GS_ASSERT_OK(gs_mvec_gemv(1.0, V, 3, c, 2.0, y)); /* y = V c + 2 = -2(i+1) + 2 */
    assert_true(y->data[4] == -8.0);
    /* mdot2: [V(:,0:2)' w, V(:,0:2)' y] with y = -2i (i = 0..4): V(:,j)' y = -2 (j+1) * 40 */
    for (int i = 0; i < 5; i++) y->data[i] = -2.0 * i;
    double h2[5] = {NAN, NAN, NAN, NAN, NAN};
    GS_ASSERT_OK(gs_mvec_dot2(V, 2, w, y, h2));
    assert_true(h2[0] == 15 && h2[1] == 30 && h2[2] == -80 && h2[3] == -160 && isnan(h2[4]));
    /* mgemv2 over column 0 (v_i = i+1): w = 2 w + 1 v = i + 3; y = -y + 0.5 w + 2 v = 2i + (i+3)/2 + 2(i+1) */
    const double p2[1] = {1.0}, q2[1] = {2.0};
    GS_ASSERT_OK(gs_mvec_gemv2(V, 1, p2, 2.0, w, q2, -1.0, 0.5, y));
    for (int i = 0; i < 5; i++) {
        assert_true(w->data[i] == i + 3.0);
        assert_true(y->data[i] == 2.0 * i + 0.5 * (i + 3.0) + 2.0 * (i + 1.0));
    }
    GS_ASSERT_FAILS(gs_mvec_gemv2(V, 1, p2, 2.0, &V->cols[0], q2, 1.0, 0.0, y), GS_ERR_ARG, "outside");
    GS_ASSERT_FAILS(gs_mvec_gemv2(V, 1, p2, 2.0, y, q2, 1.0, 0.0, y), GS_ERR_ARG, "distinct");
    gs_ivec *idx = NULL;
    const gs_int map[5] = {4, -1, 0, 2, -1};
    GS_ASSERT_OK(gs_ivec_create(be, 5, map, &idx));
    GS_ASSERT_OK(gs_vec_set(y, -7.0));
    GS_ASSERT_OK(gs_vec_scatter(&V->cols[0], idx, y)); /* y[4]=1, y[0]=3, y[2]=4 */
    assert_true(y->data[4] == 1 && y->data[0] == 3 && y->data[2] == 4 && y->data[1] == -7);
    GS_ASSERT_FAILS(gs_vec_gather(&V->cols[0], idx, y), GS_ERR_ARG, "gather index -1");
    gs_ivec_destroy(&idx);
    gs_mvec_destroy(&V);
    gs_vec_destroy(&w);
    gs_vec_destroy(&y);
    gs_backend_destroy(&be);
}

static void test_backend_selection(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_FAILS(gs_backend_create("opencl", 0, &be), GS_ERR_ARG, "opencl");
    GS_ASSERT_OK(gs_backend_create("auto", 0, &be));
    assert_non_null(be);
    gs_backend_destroy(&be);
    if (!gs_backend_cuda_available(NULL))
        GS_ASSERT_FAILS(gs_backend_create("cuda", 0, &be), GS_ERR_NO_DEVICE, "device.backend");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_ops),
        cmocka_unit_test(test_mvec_gather_scatter),
        cmocka_unit_test(test_backend_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
