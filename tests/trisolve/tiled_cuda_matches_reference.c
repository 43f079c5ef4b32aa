/* The GPU tiled solver (tiled_cuda.cu) against the host reference, with each variant forced through
 * the parameter tiled.variant (levelset: chains + wide-level launches in a CUDA graph; syncfree: one kernel,
 * ticket-ordered warps polling ready values) on the whole case suite (random with empty rows and a dense row,
 * n = 1000 and 4099; a 5000-row chain; diagonal and identity; mixed wide/thin levels; 3D Poisson and
 * real-matrix triangles; lower and upper, unit and non-unit), the factor that uses every tile format
 * (n = 103), and two 3D Poisson triangles of 216000 rows (more tile rows than warps resident at once,
 * wide levels). For every case and variant: x poisoned with NaN before each solve, solved twice
 * (graph replay / next generation) and bit-identical, within TRI_TOL of the reference, and bit-identical
 * to the host twin tiled_ref.c and between the two variants (the same roundings in another schedule);
 * other b/x vectors, the solution as the next right-hand side. Also 200 back-to-back solves, a
 * re-analysis with new values, and the view. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tiled_cases.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"

static gs_backend *gpu, *host;
static const char *const variants[2] = {"levelset", "syncfree"};

/* The parameters that force variant v. */
static gs_trisolve_params forced(int v)
{
    gs_trisolve_params p = gs_trisolve_params_default();
    p.tiled.variant = v == 0 ? GS_TILED_LEVELSET : GS_TILED_SYNCFREE;
    return p;
}

static int setup(void **state) { return tri_backends_create(&gpu, &host); }

static int teardown(void **state)
{
    tri_backends_destroy(&gpu, &host);
    return 0;
}


static void build_cases(tri_suite *S)
{
    gs_csr T = {0}, A = {0};
    GS_ASSERT_OK(tri_suite_build(S, true));
    for (int side = 0; side < 2; side++)
        for (int unit = 0; unit < 2; unit++) {
            GS_ASSERT_OK(tiled_format_case((gs_uplo)side, unit != 0, &T));
            GS_ASSERT_OK(tri_suite_add(S, "formats103", (gs_uplo)side, unit != 0, &T));
        }
    GS_ASSERT_OK(gs_gen_poisson3d(60, 60, 60, &A));
    GS_ASSERT_OK(tri_from_matrix(&A, GS_LOWER, true, &T));
    GS_ASSERT_OK(tri_suite_add(S, "poisson3d_60", GS_LOWER, true, &T));
    GS_ASSERT_OK(tri_from_matrix(&A, GS_UPPER, false, &T));
    GS_ASSERT_OK(tri_suite_add(S, "poisson3d_60", GS_UPPER, false, &T));
    gs_csr_free(&A);
}



static void check(const char *what, const char *variant, const tri_case *c, gs_int n, const double *x,
                  const double *xr)
{
    double e = gs_test_rel_diff(n, x, xr);
    if (!(e <= TRI_TOL))
        fprintf(stderr, "tiled/%s %s (%s): relative error %.3e > %.1e\n", variant, c->name, what, e, TRI_TOL);
    assert_true(e <= TRI_TOL);
}

static void expect_variant(gs_trisolve *ts, const char *variant)
{
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "t");
    const gs_report_entry *e = gs_report_find(rep, "t.variant");
    assert_non_null(e);
    assert_string_equal(e->s, variant);
    e = gs_report_find(rep, "t.variant_forced");
    assert_non_null(e);
    assert_true(e->i != 0);
    gs_report_destroy(&rep);
}

static void test_suite_both_variants(void **state)
{
    tri_suite S;
    build_cases(&S);
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *hb = NULL, *hb2 = NULL, *xr = NULL, *xr2 = NULL, *xh = NULL, *x1 = NULL, *x2 = NULL,
               *first = NULL, *poison = NULL;
        GS_ASSERT_OK(GS_MALLOC(hb, n));
        GS_ASSERT_OK(GS_MALLOC(hb2, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(xr2, n));
        GS_ASSERT_OK(GS_MALLOC(xh, n));
        GS_ASSERT_OK(GS_MALLOC(x1, n));
        GS_ASSERT_OK(GS_MALLOC(x2, n));
        GS_ASSERT_OK(GS_MALLOC(first, n));
        GS_ASSERT_OK(GS_MALLOC(poison, n));
        gs_test_poison(n, poison);
        tri_rhs(n, (uint64_t)k + 101, hb);
        tri_rhs(n, (uint64_t)k + 202, hb2);
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, hb, xr);
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, hb2, xr2);
        tri_host_solve(host, "tiled", &c->T, c->uplo, c->unit, NULL, hb, xh); /* the host twin */

        gs_vector *b = NULL, *b2 = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b2));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &y));
        GS_ASSERT_OK(gs_vec_upload(b, hb));
        GS_ASSERT_OK(gs_vec_upload(b2, hb2));
        for (int v = 0; v < 2; v++) {
            gs_trisolve *ts = NULL;
            const gs_trisolve_params prm = forced(v);
            GS_ASSERT_OK(gs_trisolve_create("tiled", gpu, c->uplo, c->unit, &prm, &ts));
            GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));
            expect_variant(ts, variants[v]);

            tri_gpu_solve(ts, b, x, x1, poison);
            check("first solve", variants[v], c, n, x1, xr);
            if (memcmp(x1, xh, (size_t)n * sizeof(double)) != 0)
                fprintf(stderr, "tiled/%s %s: differs from the host twin (expected bit for bit; max rel "
                                "%.3e)\n", variants[v], c->name, gs_test_rel_diff(n, x1, xh));
            assert_memory_equal(x1, xh, (size_t)n * sizeof(double)); /* the same roundings, in any schedule */
            tri_gpu_solve(ts, b, x, x2, poison);
            check("second solve", variants[v], c, n, x2, xr);
            assert_memory_equal(x1, x2, (size_t)n * sizeof(double));
            if (v == 0) memcpy(first, x1, (size_t)n * sizeof(double));
            else assert_memory_equal(first, x1, (size_t)n * sizeof(double)); /* same arithmetic */
            /* other vectors, then back: the solver must follow the pointers of each call */
            tri_gpu_solve(ts, b2, y, x2, poison);
            check("other b and x", variants[v], c, n, x2, xr2);
            tri_gpu_solve(ts, b, y, x2, poison);
            check("b with the other x", variants[v], c, n, x2, xr);
            tri_gpu_solve(ts, b2, x, x2, poison);
            check("other b with x", variants[v], c, n, x2, xr2);
            /* the solution as the next right-hand side */
            GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
            GS_ASSERT_OK(gs_vec_upload(y, poison));
            GS_ASSERT_OK(gs_trisolve_solve(ts, x, y));
            GS_ASSERT_OK(gs_vec_download(y, x2));
            tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, xr, x1);
            check("x as rhs", variants[v], c, n, x2, x1);
            gs_trisolve_destroy(&ts);
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&b2);
        gs_vec_destroy(&x);
        gs_vec_destroy(&y);
        gs_free(&hb);
        gs_free(&hb2);
        gs_free(&xr);
        gs_free(&xr2);
        gs_free(&xh);
        gs_free(&x1);
        gs_free(&x2);
        gs_free(&first);
        gs_free(&poison);
    }
    tri_suite_free(&S);
}

/* Per variant: 200 solves in a row without host syncs (ready-value generations, graph replays), alternating
 * the output so each must write all of it; then a re-analysis with values scaled by 4 (x scales by
 * 1/4 exactly) and the view. */
static void test_repeat_reanalyse_view(void **state)
{
    const gs_int n = 4099;
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 6, GS_LOWER, false, 77, &T));
    tri_case c = {"random4099-repeat", T, GS_LOWER, false};
    double *hb = NULL, *xr = NULL, *hx = NULL, *poison = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(hx, n));
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    tri_rhs(n, 5, hb);
    tri_host_solve(host, "reference", &c.T, c.uplo, c.unit, NULL, hb, xr);

    for (int v = 0; v < 2; v++) {
        gs_trisolve *ts = NULL;
        gs_vector *b = NULL, *x = NULL, *z = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &z));
        GS_ASSERT_OK(gs_vec_upload(b, hb));
        const gs_trisolve_params prm = forced(v);
        GS_ASSERT_OK(gs_trisolve_create("tiled", gpu, GS_LOWER, false, &prm, &ts));
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
        GS_ASSERT_OK(gs_vec_upload(x, poison));
        for (int r = 0; r < 200; r++) {
            GS_ASSERT_OK(gs_trisolve_solve(ts, b, (r % 2) ? z : x));
            if (r == 0) GS_ASSERT_OK(gs_vec_upload(z, poison));
        }
        GS_ASSERT_OK(gs_vec_download(z, hx));
        check("200th solve", variants[v], &c, n, hx, xr);
        GS_ASSERT_OK(gs_vec_download(x, hx));
        check("199th solve", variants[v], &c, n, hx, xr);

        for (gs_int q = 0; q < T.nnz; q++) T.val[q] *= 4.0;
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
        GS_ASSERT_OK(gs_vec_upload(x, poison));
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
        GS_ASSERT_OK(gs_vec_download(x, hx));
        double *xq = NULL;
        GS_ASSERT_OK(GS_MALLOC(xq, n));
        for (gs_int i = 0; i < n; i++) xq[i] = 0.25 * xr[i];
        check("after re-analysis", variants[v], &c, n, hx, xq);
        gs_free(&xq);
        for (gs_int q = 0; q < T.nnz; q++) T.val[q] *= 0.25; /* back for the next variant */

        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_trisolve_view(ts, rep, "trisolve.lower");
        assert_string_equal(gs_report_find(rep, "trisolve.lower.type")->s, "tiled");
        assert_string_equal(gs_report_find(rep, "trisolve.lower.variant")->s, variants[v]);
        static const char *const keys[] = {"implementation", "analysis_time", "tile_rows", "tiles",
                                           "nonempty_tiles", "tiles_coo", "tiles_csr", "tiles_dense",
                                           "diag_tiles_dia", "diag_tiles_csr", "diag_tiles_dense",
                                           "tile_levels", "kernels_per_solve"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            char key[128];
            snprintf(key, sizeof key, "trisolve.lower.%s", keys[k]);
            assert_non_null(gs_report_find(rep, key));
        }
        assert_int_equal(gs_report_find(rep, "trisolve.lower.tile_rows")->i, (n + 15) / 16);
        /* the dense row spreads one tile row over ~128 tiles: batches of 16 tiles per half-warp, several per row */
        assert_int_equal(gs_report_find(rep, "trisolve.lower.tile_batch")->i, 16);
        gs_report_destroy(&rep);
        gs_trisolve_destroy(&ts);
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        gs_vec_destroy(&z);
    }
    gs_free(&hb);
    gs_free(&xr);
    gs_free(&hx);
    gs_free(&poison);
    gs_csr_free(&T);
}

/* A host vector given to the GPU solver is refused before any kernel runs. */
static void test_backend_mismatch(void **state)
{
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(100, 3, GS_LOWER, true, 1, &T));
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(gs_vec_create(host, 100, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, 100, &x));
    GS_ASSERT_OK(gs_trisolve_create("tiled", gpu, GS_LOWER, true, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "must live on the solver's backend");
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_csr_free(&T);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_both_variants),
        cmocka_unit_test(test_repeat_reanalyse_view),
        cmocka_unit_test(test_backend_mismatch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
