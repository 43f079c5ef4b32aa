/* The cuda backend's multivector products against the host backend's: mdot, mgemv and their
 * two-vector forms mdot2, mgemv2 (GMRES's Arnoldi step), over column counts around mdot's tile (8) and
 * mgemv's launch (64), with many row blocks (mdot's second stage), sizes 1 to 100003, outputs poisoned
 * with NaN where the op must not read them. */
#include <math.h>
#include <stdio.h>

#include "backend_twin.h"
#include "core/mem.h"

static void mvec_fill(gs_mvec *V, gs_int k, uint64_t seed)
{
    for (gs_int j = 0; j < k; j++) {
        double *a = rand_array(V->n, seed + (uint64_t)j);
        GS_ASSERT_OK(gs_vec_upload(&V->cols[j], a));
        gs_free(&a);
    }
}

static void check_mdot_mgemv(gs_int n, gs_int kmax, const gs_int *ks, int nk)
{
    gs_mvec *Vc = NULL, *Vh = NULL;
    GS_ASSERT_OK(gs_mvec_create(C, n, kmax, &Vc));
    GS_ASSERT_OK(gs_mvec_create(H, n, kmax, &Vh));
    mvec_fill(Vc, kmax, 1000);
    mvec_fill(Vh, kmax, 1000);
    double *ws = rand_array(n, 7), *ys = rand_array(n, 8), *hs = rand_array(kmax, 9);
    double *hc = nan_array(kmax), *hh = nan_array(kmax), *poison = nan_array(n);
    gs_vector *wc = vec_from(C, n, ws), *wh = vec_from(H, n, ws);
    for (int t = 0; t < nk; t++) {
        gs_int k = ks[t];
        /* h = V(:,0:k)' w */
        gs_test_poison(kmax, hc);
        GS_ASSERT_OK(gs_mvec_dot(Vc, k, wc, hc));
        GS_ASSERT_OK(gs_mvec_dot(Vh, k, wh, hh));
        for (gs_int j = 0; j < k; j++) {
            double *vj = rand_array(n, 1000 + (uint64_t)j);
            expect_sum_close(hc[j], hh[j], n, abs_dot(n, vj, ws), "mdot");
            gs_free(&vj);
        }
        assert_true(isnan(hc[k < kmax ? k : kmax - 1]) || k == kmax); /* nothing past h[k-1] written */

        /* y = alpha V h + beta y, with beta != 0 and with beta = 0 on a NaN y */
        for (int b = 0; b < 2; b++) {
            double beta = b == 0 ? -1.3 : 0.0;
            gs_vector *yc = vec_from(C, n, b == 0 ? ys : poison), *yh = vec_from(H, n, b == 0 ? ys : poison);
            GS_ASSERT_OK(gs_mvec_gemv(0.7, Vc, k, hs, beta, yc));
            GS_ASSERT_OK(gs_mvec_gemv(0.7, Vh, k, hs, beta, yh));
            double *c = download(yc), *h = download(yh);
            /* each entry is a k-term sum: tolerance k eps times the sum of the magnitudes (|V| <= 1) */
            double habs = 0.0;
            for (gs_int j = 0; j < k; j++) habs += fabs(hs[j]);
            for (gs_int i = 0; i < n; i++) {
                double scale = 0.7 * habs + (b == 0 ? 1.3 * fabs(ys[i]) : 0.0);
                expect_sum_close(c[i], h[i], k + 2, scale, "mgemv");
            }
            gs_free(&c);
            gs_free(&h);
            gs_vec_destroy(&yc);
            gs_vec_destroy(&yh);
        }
    }
    gs_vec_destroy(&wc);
    gs_vec_destroy(&wh);
    gs_mvec_destroy(&Vc);
    gs_mvec_destroy(&Vh);
    gs_free(&ws);
    gs_free(&ys);
    gs_free(&hs);
    gs_free(&hc);
    gs_free(&hh);
    gs_free(&poison);
}

static void test_mdot_mgemv(void **state)
{
    const gs_int ks[] = {1, 5, 31};
    for (int s = 0; s < NSIZES; s++) check_mdot_mgemv(twin_sizes[s], 31, ks, 3);
}

/* More columns than the backend's preallocated result buffer (it must grow), than mgemv takes per launch
 * and than mdot's partial sums allow more than a few row blocks for. */
static void test_mdot_mgemv_many_columns(void **state)
{
    const gs_int ks[] = {1500, 7};
    check_mdot_mgemv(33, 1500, ks, 2);
    const gs_int kb[] = {1500, 1025};
    check_mdot_mgemv(5003, 1500, kb, 2);
}

/* Column counts around mdot's tile (8) and mgemv's launch (64) on a system with many row blocks (mdot's
 * second stage) -- and a partial last tile and launch. */
static void test_mdot_mgemv_tiles(void **state)
{
    const gs_int ks[] = {8, 9, 64, 65, 130};
    check_mdot_mgemv(100003, 130, ks, 5);
}

/* Back-to-back gemvs with different h and no sync in between: the staging of h must not be
 * overwritten before its copy has run. */
static void test_mgemv_back_to_back(void **state)
{
    const gs_int n = 100003, k = 8, reps = 50;
    gs_mvec *Vc = NULL, *Vh = NULL;
    GS_ASSERT_OK(gs_mvec_create(C, n, k, &Vc));
    GS_ASSERT_OK(gs_mvec_create(H, n, k, &Vh));
    mvec_fill(Vc, k, 77);
    mvec_fill(Vh, k, 77);
    double *zero = NULL;
    GS_ASSERT_OK(GS_CALLOC(zero, n));
    gs_vector *yc = vec_from(C, n, zero), *yh = vec_from(H, n, zero);
    double h[8];
    for (gs_int r = 0; r < reps; r++) {
        for (gs_int j = 0; j < k; j++) h[j] = (double)((r * 7 + j * 3) % 11) - 5.0;
        GS_ASSERT_OK(gs_mvec_gemv(1.0, Vc, k, h, 1.0, yc));
        GS_ASSERT_OK(gs_mvec_gemv(1.0, Vh, k, h, 1.0, yh));
    }
    expect_vec_close(yc, yh, "50 back-to-back mgemv");
    gs_vec_destroy(&yc);
    gs_vec_destroy(&yh);
    gs_mvec_destroy(&Vc);
    gs_mvec_destroy(&Vh);
    gs_free(&zero);
}

/* mdot2 = [V' x, V' y] and mgemv2 (x = a x + V p, y = b y + d x + V q), k columns of V with x, y the
 * two columns after them, as in the Arnoldi step; the host's results are the oracle. */
static void check_mdot2_mgemv2(gs_int n, const gs_int *ks, int nk)
{
    gs_int kmax = 0;
    for (int t = 0; t < nk; t++) kmax = ks[t] > kmax ? ks[t] : kmax;
    gs_mvec *Vc = NULL, *Vh = NULL;
    GS_ASSERT_OK(gs_mvec_create(C, n, kmax + 2, &Vc));
    GS_ASSERT_OK(gs_mvec_create(H, n, kmax + 2, &Vh));
    double *ps = rand_array(kmax, 21), *qs = rand_array(kmax, 22);
    double *hc = nan_array(2 * kmax + 2), *hh = nan_array(2 * kmax + 2);
    for (int t = 0; t < nk; t++) {
        const gs_int k = ks[t];
        mvec_fill(Vc, kmax + 2, 3000);
        mvec_fill(Vh, kmax + 2, 3000);
        double *xs = rand_array(n, 3000 + (uint64_t)k), *ys = rand_array(n, 3000 + (uint64_t)k + 1);
        GS_ASSERT_OK(gs_vec_upload(&Vc->cols[k], xs));
        GS_ASSERT_OK(gs_vec_upload(&Vh->cols[k], xs));
        GS_ASSERT_OK(gs_vec_upload(&Vc->cols[k + 1], ys));
        GS_ASSERT_OK(gs_vec_upload(&Vh->cols[k + 1], ys));

        /* h = V(:,0:k+1)' [x y]: the columns include x itself, as GMRES uses it (u'u, u'w) */
        gs_test_poison(2 * kmax + 2, hc);
        GS_ASSERT_OK(gs_mvec_dot2(Vc, k + 1, &Vc->cols[k], &Vc->cols[k + 1], hc));
        GS_ASSERT_OK(gs_mvec_dot2(Vh, k + 1, &Vh->cols[k], &Vh->cols[k + 1], hh));
        for (gs_int j = 0; j <= k; j++) {
            double *vj = j == k ? xs : rand_array(n, 3000 + (uint64_t)j);
            expect_sum_close(hc[j], hh[j], n, abs_dot(n, vj, xs), "mdot2 (x)");
            expect_sum_close(hc[k + 1 + j], hh[k + 1 + j], n, abs_dot(n, vj, ys), "mdot2 (y)");
            if (j < k) gs_free(&vj);
        }
        assert_true(isnan(hc[2 * k + 2]) || 2 * k + 2 == 2 * kmax + 2); /* nothing past h[2k+1] written */

        /* x = a x + V p, y = b y + d x + V q */
        const double a = 0.9, b = -1.1, d = 0.35;
        GS_ASSERT_OK(gs_mvec_gemv2(Vc, k, ps, a, &Vc->cols[k], qs, b, d, &Vc->cols[k + 1]));
        GS_ASSERT_OK(gs_mvec_gemv2(Vh, k, ps, a, &Vh->cols[k], qs, b, d, &Vh->cols[k + 1]));
        double *xc = download(&Vc->cols[k]), *xh = download(&Vh->cols[k]);
        double *yc = download(&Vc->cols[k + 1]), *yh = download(&Vh->cols[k + 1]);
        double pabs = 0.0, qabs = 0.0;
        for (gs_int j = 0; j < k; j++) {
            pabs += fabs(ps[j]);
            qabs += fabs(qs[j]);
        }
        for (gs_int i = 0; i < n; i++) {
            const double xscale = pabs + a * fabs(xs[i]);
            expect_sum_close(xc[i], xh[i], k + 2, xscale, "mgemv2 (x)");
            expect_sum_close(yc[i], yh[i], k + 3, qabs + fabs(b * ys[i]) + fabs(d) * xscale, "mgemv2 (y)");
        }
        /* the columns read are untouched */
        double *v0 = download(&Vc->cols[0]), *r0 = rand_array(n, 3000);
        for (gs_int i = 0; i < n; i++) assert_true(v0[i] == r0[i]);
        gs_free(&v0);
        gs_free(&r0);
        gs_free(&xc);
        gs_free(&xh);
        gs_free(&yc);
        gs_free(&yh);
        gs_free(&xs);
        gs_free(&ys);
    }
    gs_mvec_destroy(&Vc);
    gs_mvec_destroy(&Vh);
    gs_free(&ps);
    gs_free(&qs);
    gs_free(&hc);
    gs_free(&hh);
}

static void test_mdot2_mgemv2(void **state)
{
    const gs_int ks[] = {1, 5, 31};
    for (int s = 0; s < NSIZES; s++) check_mdot2_mgemv2(twin_sizes[s], ks, 3);
}

/* Around the tile (8) and the launch (64, where mgemv2 adds d x in the last launch only), many row blocks,
 * and a column count whose 2k partial sums fill the buffer (mdot2's grid halves its row blocks). */
static void test_mdot2_mgemv2_tiles(void **state)
{
    const gs_int ks[] = {7, 8, 9, 63, 64, 65, 130};
    check_mdot2_mgemv2(100003, ks, 7);
    const gs_int kb[] = {1100};
    check_mdot2_mgemv2(5003, kb, 1);
}

/* The argument checks: x or y among the columns read, x == y. */
static void test_mgemv2_bad_arguments(void **state)
{
    gs_mvec *V = NULL;
    GS_ASSERT_OK(gs_mvec_create(C, 40, 6, &V));
    double p[4] = {0}, q[4] = {0};
    assert_int_equal(gs_mvec_gemv2(V, 4, p, 1.0, &V->cols[2], q, 1.0, 0.0, &V->cols[5]), GS_ERR_ARG);
    assert_int_equal(gs_mvec_gemv2(V, 4, p, 1.0, &V->cols[4], q, 1.0, 0.0, &V->cols[3]), GS_ERR_ARG);
    assert_int_equal(gs_mvec_gemv2(V, 4, p, 1.0, &V->cols[4], q, 1.0, 0.0, &V->cols[4]), GS_ERR_ARG);
    GS_ASSERT_OK(gs_mvec_gemv2(V, 4, p, 1.0, &V->cols[4], q, 1.0, 0.0, &V->cols[5]));
    gs_error_clear();
    gs_mvec_destroy(&V);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mdot_mgemv),      cmocka_unit_test(test_mdot_mgemv_many_columns),
        cmocka_unit_test(test_mdot_mgemv_tiles), cmocka_unit_test(test_mgemv_back_to_back),
        cmocka_unit_test(test_mdot2_mgemv2),    cmocka_unit_test(test_mdot2_mgemv2_tiles),
        cmocka_unit_test(test_mgemv2_bad_arguments),
    };
    return cmocka_run_group_tests(tests, twin_setup, twin_teardown);
}
