/* Host-backend tests of the trisolve front end: registry and names, creation by name and from the
 * config, state and size checks, the reference on hand-checked 5x5 systems and on the whole case
 * suite (residual), auto and syncfree on the host, view keys. */
#include <math.h>
#include <string.h>

#include "cfg/config.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"

static gs_backend *host;

static int setup(void **state)
{
    return gs_backend_create("host", 0, &host) == GS_OK ? 0 : -1;
}

static int teardown(void **state)
{
    gs_backend_destroy(&host);
    return 0;
}

/* Build a dense-described n x n CSR from row-major entries (0 = absent). */
static void csr_from_dense(gs_int n, const double *D, gs_csr *T)
{
    gs_int nnz = 0;
    for (gs_int k = 0; k < n * n; k++) nnz += D[k] != 0.0;
    GS_ASSERT_OK(gs_csr_alloc(T, n, n, nnz, true));
    gs_int q = 0;
    for (gs_int i = 0; i < n; i++) {
        T->rowptr[i] = q;
        for (gs_int j = 0; j < n; j++)
            if (D[i * n + j] != 0.0) {
                T->colind[q] = j;
                T->val[q++] = D[i * n + j];
            }
    }
    T->rowptr[n] = q;
}

static void test_registry_names(void **state)
{
    static const char *const expected[] = {"auto",   "reference",    "cusparse", "levelset",
                                           "syncfree", "jacobi", "async-jacobi", "tiled"};
    int k = 0;
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++, k++) {
        assert_true(k < 8);
        assert_string_equal(e->name, expected[k]);
        assert_true(e->create_host || e->create_cuda);
        assert_non_null(e->help);
        assert_int_equal(e->sides, GS_TS_LOWER | GS_TS_UPPER);
        assert_true((e->checks_rows & ~(GS_TS_HOST | GS_TS_CUDA)) == 0);
        assert_true((e->single & GS_TS_HOST) == 0); /* the host solvers store double factors only */
        assert_true(e->approximate == (strcmp(e->name, "jacobi") == 0 || strcmp(e->name, "async-jacobi") == 0));
    }
    assert_int_equal(k, 8);
    /* the capabilities the front decides from: cusparse needs the GPU; levelset and syncfree check the rows
     * on the device; auto checks them through its inner solver */
    assert_null(gs_trisolve_registry[2].create_host);
    assert_int_equal(gs_trisolve_registry[3].checks_rows, GS_TS_CUDA);
    assert_int_equal(gs_trisolve_registry[4].checks_rows, GS_TS_CUDA);
    assert_int_equal(gs_trisolve_registry[0].checks_rows, GS_TS_HOST | GS_TS_CUDA);
    /* every registered name is a choice of the schema */
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++) {
        char a[64];
        snprintf(a, sizeof a, "trisolve.lower.type=%s", e->name);
        GS_ASSERT_OK(gs_config_set(cfg, a));
    }
    gs_config_destroy(&cfg);
}

static void test_create_errors(void **state)
{
    gs_trisolve *ts = NULL;
    GS_ASSERT_FAILS(gs_trisolve_create("levelsets", host, GS_LOWER, false, NULL, &ts), GS_ERR_ARG,
                    "unknown trisolve type 'levelsets'; expected one of auto|reference|cusparse|levelset|syncfree|jacobi|async-jacobi|tiled");
    GS_ASSERT_FAILS(gs_trisolve_create("cusparse", host, GS_LOWER, false, NULL, &ts), GS_ERR_UNSUPPORTED,
                    "cusparse needs device.backend = cuda");
    assert_null(ts);
    GS_ASSERT_FAILS(gs_trisolve_create("reference", NULL, GS_LOWER, false, NULL, &ts), GS_ERR_ARG, "backend is NULL");
    GS_ASSERT_FAILS(gs_trisolve_create("reference", host, (gs_uplo)7, false, NULL, &ts), GS_ERR_ARG, "uplo is 7");
    gs_trisolve_params prm = tri_params(3, "sideways", false, false);
    GS_ASSERT_FAILS(gs_trisolve_create("reference", host, GS_LOWER, false, &prm, &ts), GS_ERR_ARG,
                    "block_order 'sideways'");
    prm.block_order = "backward";
    prm.sweeps = -1;
    GS_ASSERT_FAILS(gs_trisolve_create("reference", host, GS_LOWER, false, &prm, &ts), GS_ERR_ARG, "sweeps is -1");
    assert_null(ts);

    /* parameters are copied: the caller's string need not outlive the solver */
    char order[16];
    strcpy(order, "forward");
    prm.block_order = order;
    prm.sweeps = 7;
    prm.deterministic = true;
    GS_ASSERT_OK(gs_trisolve_create("reference", host, GS_UPPER, true, &prm, &ts));
    strcpy(order, "xxxxxxx");
    assert_string_equal(ts->prm.block_order, "forward");
    assert_int_equal(ts->prm.sweeps, 7);
    assert_true(ts->prm.deterministic);
    assert_string_equal(ts->type, "reference");
    assert_int_equal(ts->uplo, GS_UPPER);
    assert_true(ts->unit_diag);
    assert_false(ts->analysed);
    gs_trisolve_destroy(&ts);
    gs_trisolve_destroy(&ts); /* NULL-safe */
    gs_trisolve_destroy(NULL);
}

static void test_create_from_config(void **state)
{
    gs_config *cfg = NULL;
    gs_trisolve *lo = NULL, *up = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &lo));
    assert_string_equal(lo->type, "auto"); /* the schema default */
    assert_int_equal(lo->prm.sweeps, 3);
    assert_string_equal(lo->prm.block_order, "dependency");
    gs_trisolve_destroy(&lo);

    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=levelset"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.sweeps=9"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.block_order=backward"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=reference"));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_UPPER, false, false, &up));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &lo));
    assert_string_equal(up->type, "levelset");
    assert_int_equal(up->prm.sweeps, 9);
    assert_string_equal(up->prm.block_order, "backward");
    assert_string_equal(lo->type, "reference");
    gs_trisolve_destroy(&lo);
    gs_trisolve_destroy(&up);

    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=tiled"));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &lo));
    assert_string_equal(lo->type, "tiled");
    gs_trisolve_destroy(&lo);
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=cusparse"));
    GS_ASSERT_FAILS(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &lo), GS_ERR_UNSUPPORTED,
                    "cusparse needs device.backend = cuda");
    GS_ASSERT_FAILS(gs_trisolve_create_from_config(NULL, host, GS_LOWER, true, false, &lo), GS_ERR_ARG, "config is NULL");
    gs_config_destroy(&cfg);
}

static void test_state_and_size_checks(void **state)
{
    /* L = [2 0 0; 1 4 0; 0 -1 5] */
    const double D[9] = {2, 0, 0, 1, 4, 0, 0, -1, 5};
    gs_csr L = {0};
    csr_from_dense(3, D, &L);
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL, *x4 = NULL;
    GS_ASSERT_OK(gs_vec_create(host, 3, &b));
    GS_ASSERT_OK(gs_vec_create(host, 3, &x));
    GS_ASSERT_OK(gs_vec_create(host, 4, &x4));
    GS_ASSERT_OK(gs_vec_set(b, 1.0));
    GS_ASSERT_OK(gs_trisolve_create("levelset", host, GS_LOWER, false, NULL, &ts));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "solve called before a successful analyse");
    GS_ASSERT_FAILS(gs_trisolve_analyse(ts, NULL), GS_ERR_ARG, "lower triangular factor is NULL");
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &L));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x4), GS_ERR_ARG, "b has 3 and x has 4 entries; the factor has 3 rows");
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, b), GS_ERR_ARG, "overlap");
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, NULL, x), GS_ERR_ARG, "b or x is NULL");
    GS_ASSERT_FAILS(gs_trisolve_solve(NULL, b, x), GS_ERR_ARG, "trisolve is NULL");
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    /* x = [1/2, (1 - 1/2)/4, (1 + 1/8)/5] */
    assert_true(fabs(x->data[0] - 0.5) < 1e-15);
    assert_true(fabs(x->data[1] - 0.125) < 1e-15);
    assert_true(fabs(x->data[2] - 0.225) < 1e-15);

    /* a failed analyse leaves the solver unusable until the next successful one */
    L.val[4] = 0.0; /* the diagonal of row 3 */
    GS_ASSERT_FAILS(gs_trisolve_analyse(ts, &L), GS_ERR_NUMERIC, "zero diagonal at row 3 (1-based)");
    assert_false(ts->analysed);
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "before a successful analyse");
    L.val[4] = 5.0;
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &L));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    /* wrong side for this solver */
    gs_trisolve *tu = NULL;
    GS_ASSERT_OK(gs_trisolve_create("reference", host, GS_UPPER, false, NULL, &tu));
    GS_ASSERT_FAILS(gs_trisolve_analyse(tu, &L), GS_ERR_ARG, "below the diagonal");
    gs_trisolve_destroy(&tu);

    /* a vector of another backend instance is refused */
    gs_backend *other = NULL;
    gs_vector *xo = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &other));
    GS_ASSERT_OK(gs_vec_create(other, 3, &xo));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, xo), GS_ERR_ARG, "must live on the solver's backend");
    gs_vec_destroy(&xo);
    gs_backend_destroy(&other);

    /* n = 0: analyse and solve are no-ops */
    gs_csr E = {0};
    GS_ASSERT_OK(gs_csr_alloc(&E, 0, 0, 0, true));
    gs_vector *e0 = NULL, *e1 = NULL;
    GS_ASSERT_OK(gs_vec_create(host, 0, &e0));
    GS_ASSERT_OK(gs_vec_create(host, 0, &e1));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &E));
    GS_ASSERT_OK(gs_trisolve_solve(ts, e0, e1));
    gs_vec_destroy(&e0);
    gs_vec_destroy(&e1);
    gs_csr_free(&E);

    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&x4);
    gs_csr_free(&L);
}

/* 5x5 systems checked by hand: T x = b with x = (1, 2, 3, 4, 5) chosen first, b = T x computed here in
 * exact integer arithmetic. */
static void test_reference_hand_checked(void **state)
{
    const double xs[5] = {1, 2, 3, 4, 5};
    /* lower, non-unit: b = (2, 1*1+3*2, 4*2 + 1*3... ) */
    const double Ld[25] = {2, 0, 0, 0, 0,  /* b0 = 2                      */
                           1, 3, 0, 0, 0,  /* b1 = 1 + 6 = 7              */
                           0, 4, 1, 0, 0,  /* b2 = 8 + 3 = 11             */
                           -1, 0, 0, 2, 0, /* b3 = -1 + 8 = 7             */
                           1, 1, 1, 1, 4}; /* b4 = 1+2+3+4 + 20 = 30      */
    const double bl[5] = {2, 7, 11, 7, 30};
    const double Ud[25] = {1, 0, 2, 0, 1,   /* b0 = 1 + 6 + 5 = 12         */
                           0, -2, 0, 0, 0,  /* b1 = -4                     */
                           0, 0, 1, 1, 0,   /* b2 = 3 + 4 = 7              */
                           0, 0, 0, 4, -1,  /* b3 = 16 - 5 = 11            */
                           0, 0, 0, 0, 5};  /* b4 = 25                     */
    const double bu[5] = {12, -4, 7, 11, 25};
    /* unit lower (strict part stored): rows x_i + sum = b_i */
    const double Sd[25] = {0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, -1, 0, 0, 2, 0, 0, 1, 0};
    const double bs[5] = {1, 3 + 2, 3, 2 - 3 + 4, 2 + 4 + 5};
    /* unit upper (strict part stored) */
    const double Vd[25] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const double bv[5] = {1 + 2, 2 + 10, 3, 4, 5};
    struct {
        const double *D, *b;
        gs_uplo uplo;
        bool unit;
    } cases[4] = {{Ld, bl, GS_LOWER, false}, {Ud, bu, GS_UPPER, false}, {Sd, bs, GS_LOWER, true},
                  {Vd, bv, GS_UPPER, true}};
    static const char *const types[] = {"reference", "levelset", "syncfree", "auto"};
    for (int c = 0; c < 4; c++) {
        gs_csr T = {0};
        csr_from_dense(5, cases[c].D, &T);
        for (int t = 0; t < 4; t++) {
            double x[5];
            tri_host_solve(host, types[t], &T, cases[c].uplo, cases[c].unit, NULL, cases[c].b, x);
            for (int i = 0; i < 5; i++) assert_true(fabs(x[i] - xs[i]) < 1e-14);
        }
        gs_csr_free(&T);
    }
}

/* The reference on every case of the suite: small residual, and it never reads x before writing it
 * (x is poisoned with NaN by tri_host_solve). */
static void test_reference_residuals(void **state)
{
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    assert_true(S.n >= (gs_test_quick() >= 2 ? 16 : 30)); /* GS_TEST_QUICK=2 leaves out the real matrices */
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *b = NULL, *x = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        tri_rhs(n, (uint64_t)k + 1, b);
        tri_host_solve(host, "reference", &c->T, c->uplo, c->unit, NULL, b, x);
        double r = tri_residual(&c->T, c->unit, x, b);
        if (!(r < 1e-14)) fprintf(stderr, "%s: residual %.3e\n", c->name, r);
        assert_true(r < 1e-14);
        gs_free(&b);
        gs_free(&x);
    }
    tri_suite_free(&S);
}

static void test_auto_and_view(void **state)
{
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(1000, 4, GS_UPPER, false, 5, &T));
    gs_trisolve *ts = NULL;
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    GS_ASSERT_OK(gs_trisolve_create("auto", host, GS_UPPER, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    gs_trisolve_view(ts, rep, "trisolve.upper");
    const gs_report_entry *e = gs_report_find(rep, "trisolve.upper.type");
    assert_non_null(e);
    assert_string_equal(e->s, "auto");
    e = gs_report_find(rep, "trisolve.upper.selected");
    assert_non_null(e);
    assert_string_equal(e->s, "levelset"); /* the host rule */
    e = gs_report_find(rep, "trisolve.upper.levels");
    assert_non_null(e);
    assert_int_equal(e->i, gs_csr_levels(&T, false, NULL));
    e = gs_report_find(rep, "trisolve.upper.auto_levels");
    assert_non_null(e);
    assert_int_equal(e->i, gs_csr_levels(&T, false, NULL));
    assert_non_null(gs_report_find(rep, "trisolve.upper.analysis_time"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.chains"));
    e = gs_report_find(rep, "trisolve.upper.n");
    assert_non_null(e);
    assert_int_equal(e->i, 1000);
    gs_trisolve_destroy(&ts);

    /* syncfree on the host: the sequential schedule */
    GS_ASSERT_OK(gs_trisolve_create("syncfree", host, GS_UPPER, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    gs_trisolve_view(ts, rep, "trisolve.s");
    e = gs_report_find(rep, "trisolve.s.type");
    assert_non_null(e);
    assert_string_equal(e->s, "syncfree");
    gs_trisolve_destroy(&ts);
    gs_report_destroy(&rep);
    gs_csr_free(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_names),        cmocka_unit_test(test_create_errors),
        cmocka_unit_test(test_create_from_config),    cmocka_unit_test(test_state_and_size_checks),
        cmocka_unit_test(test_reference_hand_checked), cmocka_unit_test(test_reference_residuals),
        cmocka_unit_test(test_auto_and_view),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
