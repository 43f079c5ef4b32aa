/* GPU Jacobi triangular solves (jacobi_cuda.cu) against their host twin and the exact reference:
 *   jacobi_cuda_test [--shapes]: `jacobi` on the GPU equals the host twin
 *     (jacobi_ref.c) within 1e-13 relative after 0, 1, 3 and `levels` sweeps (then also the exact
 *     substitution within TRI_TOL) on random factors with n = 1000, 4099, 100003 (empty rows, a dense
 *     row: the warp-per-row path), the whole tri_cases suite and ILU(0) factors of a 2D Laplacian; x is
 *     poisoned with NaN before every solve; repeated solves are bit-identical; other b / x vectors,
 *     x as the next right-hand side, re-analysis with new values, graph and direct-launch paths, view.
 *     With --shapes, all of that for each sweep shape the parameters can force (jacobi.lanes = 2: lanes
 *     sharing every short row; jacobi.ell = on: the ELL copy wherever the rows fit), the host twin with the
 *     same parameters.
 *   jacobi_cuda_test --async: block-asynchronous Jacobi in every block order
 *     meets the loose bound ||x_s - x*||_inf <= rho^s ||x_0 - x*||_inf (rho = ||D^{-1}(T - D)||_inf)
 *     after 1 and 2 sweeps, and the tight bound (TRI_TOL) after `levels` sweeps, in every one of
 *     several repeated solves; deterministic = true is bit-identical to GPU `jacobi`; variability flags. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/factor.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"


#define TWIN_TOL 1e-13 /* GPU jacobi vs host twin: the same sums, up to fused multiply-adds */
/* beyond this much work (levels * nnz) the host twin at `levels` sweeps is replaced by the exact
 * reference, which it equals within TRI_TOL (jacobi_host proves it on the host) */
#define TWIN_MAX_WORK 2e9

static gs_backend *gpu, *host;

static int setup(void **state) { return tri_backends_create(&gpu, &host); }

static int teardown(void **state)
{
    tri_backends_destroy(&gpu, &host);
    return 0;
}

/* ---------------------------------------------------------------- cases */

typedef struct jcase {
    char name[128];
    gs_csr T;
    gs_uplo uplo;
    bool unit;
} jcase;

typedef struct jcases {
    jcase c[128];
    int n;
} jcases;

static void add_case(jcases *C, const char *name, gs_uplo uplo, bool unit, gs_csr *T)
{
    assert_true(C->n < (int)(sizeof C->c / sizeof C->c[0]));
    jcase *c = &C->c[C->n++];
    snprintf(c->name, sizeof c->name, "%s/%s/%s", name, uplo == GS_LOWER ? "lower" : "upper",
             unit ? "unit" : "nonunit");
    c->T = *T;
    c->uplo = uplo;
    c->unit = unit;
    memset(T, 0, sizeof *T);
}

/* L (unit, strict) and U of ILU(0) of the 5-point Laplacian on nx x ny */
static void add_ilu0_laplace(jcases *C, gs_int nx, gs_int ny)
{
    gs_csr A = {0}, L = {0}, U = {0};
    gs_factor_opts o;
    gs_factor_info info;
    memset(&o, 0, sizeof o);
    memset(&info, 0, sizeof info);
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    GS_ASSERT_OK(gs_ilu_numeric(&A, &o, &L, &U, &info));
    add_case(C, "ilu0_laplace2d", GS_LOWER, true, &L);
    add_case(C, "ilu0_laplace2d", GS_UPPER, false, &U);
    gs_csr_free(&A);
}

/* random n = 1000, 4099 and `big` (both sides, unit and not; big = 0: none), ILU(0) of a 211 x 97 (quick: 61 x 37)
 * Laplacian and, when with_suite, the tri_cases suite */
static void build_cases(jcases *C, bool with_suite, gs_int big)
{
    const gs_int sizes[] = {1000, gs_test_quick() ? 0 : 4099, big}; /* sanitizers: 1000 only */
    C->n = 0;
    for (int r = 0; r < 3 && sizes[r] > 0; r++)
        for (int side = 0; side < 2; side++)
            for (int unit = 0; unit < 2; unit++) {
                gs_csr T = {0};
                char name[32];
                snprintf(name, sizeof name, "random%d", (int)sizes[r]);
                GS_ASSERT_OK(tri_random(sizes[r], 5, (gs_uplo)side, unit != 0, 500 + (uint64_t)(4 * r + 2 * side + unit),
                                        &T));
                add_case(C, name, (gs_uplo)side, unit != 0, &T);
            }
    add_ilu0_laplace(C, gs_test_quick() ? 61 : 211, gs_test_quick() ? 37 : 97); /* sanitizers: fewer levels */
    if (with_suite) {
        tri_suite S;
        GS_ASSERT_OK(tri_suite_build(&S, true));
        for (int k = 0; k < S.n; k++) {
            gs_csr T = S.c[k].T;
            add_case(C, "suite", S.c[k].uplo, S.c[k].unit, &T);
            snprintf(C->c[C->n - 1].name, sizeof C->c[0].name, "suite:%s", S.c[k].name);
            memset(&S.c[k].T, 0, sizeof S.c[k].T); /* now owned by C */
        }
        tri_suite_free(&S);
    }
}

static void free_cases(jcases *C)
{
    for (int k = 0; k < C->n; k++) gs_csr_free(&C->c[k].T);
    C->n = 0;
}

/* ---------------------------------------------------------------- helpers */

/* The sweep shape the parameters force (--shapes), for the GPU solvers and their host twins alike. */
static gs_jacobi_params shape;

static gs_trisolve_params jparams(int sweeps, const char *order, bool deterministic, bool single)
{
    gs_trisolve_params p = tri_params(sweeps, order, deterministic, single);
    p.jacobi = shape;
    return p;
}

/* x = solve of T with type / params on the host backend (twin or reference) */
static void host_solve(const char *type, const jcase *c, int sweeps, const double *b, double *x)
{
    gs_trisolve_params prm = jparams(sweeps, NULL, false, false);
    tri_host_solve(host, type, &c->T, c->uplo, c->unit, &prm, b, x);
}


static void check_close(const char *what, const jcase *c, int sweeps, const double *x, const double *xr, double tol)
{
    double e = gs_test_rel_diff(c->T.nrows, x, xr);
    if (!(e <= tol))
        fprintf(stderr, "%s %s, %d sweeps: relative difference %.3e > %.1e\n", what, c->name, sweeps, e, tol);
    assert_true(e <= tol);
}

static int levels_of(const jcase *c) { return (int)gs_csr_levels(&c->T, c->uplo == GS_LOWER, NULL); }

/* host scratch of one case */
typedef struct bufs {
    double *b, *b2, *xr, *xt, *x1, *x2, *poison;
} bufs;

static void bufs_alloc(bufs *B, gs_int n)
{
    GS_ASSERT_OK(GS_MALLOC(B->b, n));
    GS_ASSERT_OK(GS_MALLOC(B->b2, n));
    GS_ASSERT_OK(GS_MALLOC(B->xr, n));
    GS_ASSERT_OK(GS_MALLOC(B->xt, n));
    GS_ASSERT_OK(GS_MALLOC(B->x1, n));
    GS_ASSERT_OK(GS_MALLOC(B->x2, n));
    GS_ASSERT_OK(GS_MALLOC(B->poison, n));
    gs_test_poison(n, B->poison);
}

static void bufs_free(bufs *B)
{
    gs_free(&B->b);
    gs_free(&B->b2);
    gs_free(&B->xr);
    gs_free(&B->xt);
    gs_free(&B->x1);
    gs_free(&B->x2);
    gs_free(&B->poison);
}


/* ---------------------------------------------------------------- device factors, precision model */

/* T copied into device memory of the cuda backend (the way a GPU factorization hands it over) */
typedef struct dev_factor {
    gs_csr_dev D;
    void *rowptr, *colind, *val;
} dev_factor;

static void dev_factor_upload(const gs_csr *T, dev_factor *F)
{
    size_t n = (size_t)T->nrows, nnz = (size_t)T->nnz;
    memset(F, 0, sizeof *F);
    GS_ASSERT_OK(gs_backend_alloc(gpu, &F->rowptr, (n + 1) * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_alloc(gpu, &F->colind, nnz * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_alloc(gpu, &F->val, nnz * sizeof(double)));
    GS_ASSERT_OK(gs_backend_upload(gpu, F->rowptr, T->rowptr, (n + 1) * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_upload(gpu, F->colind, T->colind, nnz * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_upload(gpu, F->val, T->val, nnz * sizeof(double)));
    F->D.nrows = F->D.ncols = T->nrows;
    F->D.nnz = T->nnz;
    F->D.rowptr = (const gs_int *)F->rowptr;
    F->D.colind = (const gs_int *)F->colind;
    F->D.val = (const double *)F->val;
}

static void dev_factor_free(dev_factor *F)
{
    gs_backend_free(gpu, F->rowptr);
    gs_backend_free(gpu, F->colind);
    gs_backend_free(gpu, F->val);
    memset(F, 0, sizeof *F);
}

/* The factor a single-precision solver applies, in double: off-diagonal t_ij -> (double)(float)t_ij and
 * t_ii -> 1 / (double)(float)(1 / t_ii), so that the double solvers' 1 / t_ii is the GPU's float dinv
 * (up to one rounding of the double division). */
static void single_model(const gs_csr *T, gs_csr *M)
{
    GS_ASSERT_OK(gs_csr_copy(T, M));
    for (gs_int i = 0; i < M->nrows; i++)
        for (gs_int q = M->rowptr[i]; q < M->rowptr[i + 1]; q++)
            M->val[q] = M->colind[q] == i ? 1.0 / (double)(float)(1.0 / M->val[q]) : (double)(float)M->val[q];
}

/* an integer / string of ts's view under the prefix "ts" (asserted present) */
static long long view_int(const gs_trisolve *ts, const char *name)
{
    gs_report *rep = NULL;
    char key[128];
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "ts");
    snprintf(key, sizeof key, "ts.%s", name);
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "view key %s missing\n", key);
    assert_non_null(e);
    long long v = e->i;
    gs_report_destroy(&rep);
    return v;
}

static void assert_view_string(const gs_trisolve *ts, const char *name, const char *want)
{
    gs_report *rep = NULL;
    char key[128];
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "ts");
    snprintf(key, sizeof key, "ts.%s", name);
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "view key %s missing\n", key);
    assert_non_null(e);
    assert_string_equal(e->s, want);
    gs_report_destroy(&rep);
}

/* ================================================================ jacobi (synchronous sweeps) */

static void test_matches_twin(void **state)
{
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    build_cases(C, gs_test_quick() < 2, gs_test_quick() ? 0 : 100003);
    bool saw_graph = false, saw_direct = false, saw_long = false;
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        int levels = levels_of(c);
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 900, B.b);
        tri_rhs(n, (uint64_t)k + 1900, B.b2);
        host_solve("reference", c, 0, B.b, B.xr);

        gs_vector *b = NULL, *b2 = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b2));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &y));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        GS_ASSERT_OK(gs_vec_upload(b2, B.b2));

        const int sweeps_list[4] = {0, 1, 3, levels};
        for (int si = 0; si < 4; si++) {
            int sweeps = sweeps_list[si];
            bool big = (double)levels * (double)c->T.nnz > TWIN_MAX_WORK;
            gs_trisolve_params prm = jparams(sweeps, NULL, false, false);
            gs_trisolve *ts = NULL;
            GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, c->uplo, c->unit, &prm, &ts));
            assert_false(ts->variable);
            GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));

            if (si == 0) { /* the device-built split has the host twin's shape */
                gs_trisolve *th = NULL;
                GS_ASSERT_OK(gs_trisolve_create("jacobi", host, c->uplo, c->unit, &prm, &th));
                GS_ASSERT_OK(gs_trisolve_analyse(th, &c->T));
                assert_int_equal(view_int(ts, "nnz_offdiag"), view_int(th, "nnz_offdiag"));
                assert_int_equal(view_int(ts, "warp_rows"), view_int(th, "warp_rows"));
                assert_int_equal(view_int(ts, "max_row_offdiag"), view_int(th, "max_row_offdiag"));
                if (view_int(ts, "warp_rows") > 0) saw_long = true;
                assert_view_string(ts, "precision", "double");
                assert_view_string(ts, "factor_source", "host (uploaded)");
                gs_trisolve_destroy(&th);
            }
            tri_gpu_solve(ts, b, x, B.x1, B.poison);
            if (si < 3 || !big) {
                host_solve("jacobi", c, sweeps, B.b, B.xt);
                check_close("GPU jacobi vs host twin", c, sweeps, B.x1, B.xt, TWIN_TOL);
            }
            if (si == 3) check_close("GPU jacobi vs exact", c, sweeps, B.x1, B.xr, TRI_TOL);
            /* deterministic: the same bits again, into another output vector */
            tri_gpu_solve(ts, b, y, B.x2, B.poison);
            assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
            if (si == 2) { /* other vectors, then x as the next right-hand side */
                tri_gpu_solve(ts, b2, x, B.x2, B.poison);
                host_solve("jacobi", c, sweeps, B.b2, B.xt);
                check_close("GPU jacobi (other b) vs host twin", c, sweeps, B.x2, B.xt, TWIN_TOL);
                GS_ASSERT_OK(gs_vec_upload(y, B.poison));
                GS_ASSERT_OK(gs_trisolve_solve(ts, x, y)); /* y = J(J(b2)) */
                GS_ASSERT_OK(gs_vec_download(y, B.x1));
                host_solve("jacobi", c, sweeps, B.xt, B.x2);
                check_close("GPU jacobi (x as rhs) vs host twin", c, sweeps, B.x1, B.x2, TWIN_TOL);
            }

            gs_report *rep = NULL;
            GS_ASSERT_OK(gs_report_create(&rep));
            gs_trisolve_view(ts, rep, "ts");
            const gs_report_entry *e = gs_report_find(rep, "ts.graph");
            assert_non_null(e);
            if (strcmp(e->s, "yes") == 0) saw_graph = true;
            else saw_direct = true;
            e = gs_report_find(rep, "ts.kernels_per_solve");
            assert_non_null(e);
            assert_int_equal(e->i, sweeps > 0 ? sweeps : 1);
            e = gs_report_find(rep, "ts.exact");
            assert_non_null(e);
            assert_int_equal(e->i, 0);
            gs_report_destroy(&rep);
            gs_trisolve_destroy(&ts);
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&b2);
        gs_vec_destroy(&x);
        gs_vec_destroy(&y);
        bufs_free(&B);
    }
    assert_true(saw_graph && saw_direct && saw_long);
    free_cases(C);
    gs_free(&C);
}

/* Many solves without host syncs, alternating outputs, then a re-analysis with scaled values. */
static void test_repeat_reanalyse(void **state)
{
    const gs_int n = 4099;
    jcase c = {"random4099-repeat", {0}, GS_UPPER, false};
    GS_ASSERT_OK(tri_random(n, 6, GS_UPPER, false, 77, &c.T));
    bufs B;
    bufs_alloc(&B, n);
    tri_rhs(n, 5, B.b);
    const int sweeps = 5;
    host_solve("jacobi", &c, sweeps, B.b, B.xt);

    gs_trisolve_params prm = jparams(sweeps, NULL, false, false);
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL, *z = NULL;
    GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &z));
    GS_ASSERT_OK(gs_vec_upload(b, B.b));
    GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, GS_UPPER, false, &prm, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &c.T));
    GS_ASSERT_OK(gs_vec_upload(x, B.poison));
    for (int r = 0; r < 200; r++) {
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, (r % 2) ? z : x));
        if (r == 0) GS_ASSERT_OK(gs_vec_upload(z, B.poison));
    }
    GS_ASSERT_OK(gs_vec_download(z, B.x1));
    check_close("200th solve", &c, sweeps, B.x1, B.xt, TWIN_TOL);
    GS_ASSERT_OK(gs_vec_download(x, B.x1));
    check_close("199th solve", &c, sweeps, B.x1, B.xt, TWIN_TOL);

    /* T * 4: every Jacobi iterate scales by 1/4 exactly in exact arithmetic */
    for (gs_int q = 0; q < c.T.nnz; q++) c.T.val[q] *= 4.0;
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &c.T));
    tri_gpu_solve(ts, b, x, B.x1, B.poison);
    for (gs_int i = 0; i < n; i++) B.x2[i] = 0.25 * B.xt[i];
    check_close("after re-analysis", &c, sweeps, B.x1, B.x2, TWIN_TOL);

    /* a host vector is refused before any kernel runs */
    gs_vector *hb = NULL;
    GS_ASSERT_OK(gs_vec_create(host, n, &hb));
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, hb, x), GS_ERR_ARG, "must live on the solver's backend");
    gs_vec_destroy(&hb);

    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&z);
    bufs_free(&B);
    gs_csr_free(&c.T);
}

/* analyse_dev (the factor already in device memory) builds the same solver as analyse: bit-identical
 * solves for jacobi and deterministic async-jacobi, double and single, 0, 1 and 3 sweeps, and the same
 * shape; the same object then re-analysed from the host gives the same bits again. */
static void test_analyse_dev(void **state)
{
    static const char *const types[] = {"jacobi", "async-jacobi"};
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    build_cases(C, false, gs_test_quick() ? 0 : 20011);
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        gs_csr M = {0};
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 70, B.b);
        single_model(&c->T, &M);
        dev_factor F;
        dev_factor_upload(&c->T, &F);
        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        for (int t = 0; t < 2; t++)
            for (int single = 0; single < 2; single++)
                for (int sweeps = 0; sweeps <= 3; sweeps += (sweeps == 0 ? 1 : 2)) {
                    gs_trisolve_params prm = jparams(sweeps, "dependency", true, single != 0);
                    gs_trisolve *th = NULL, *td = NULL;
                    GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, c->uplo, c->unit, &prm, &th));
                    GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, c->uplo, c->unit, &prm, &td));
                    GS_ASSERT_OK(gs_trisolve_analyse(th, &c->T));
                    GS_ASSERT_OK(gs_trisolve_analyse_dev(td, &F.D));
                    assert_true(td->analysed);
                    assert_false(td->variable);
                    assert_view_string(td, "factor_source", "device (analyse_dev)");
                    assert_view_string(td, "precision", single ? "single" : "double");
                    assert_int_equal(view_int(td, "nnz_offdiag"), view_int(th, "nnz_offdiag"));
                    assert_int_equal(view_int(td, "warp_rows"), view_int(th, "warp_rows"));
                    assert_int_equal(view_int(td, "max_row_offdiag"), view_int(th, "max_row_offdiag"));
                    assert_int_equal(view_int(td, "factor_bytes"), view_int(th, "factor_bytes"));

                    tri_gpu_solve(th, b, x, B.x1, B.poison);
                    tri_gpu_solve(td, b, x, B.x2, B.poison);
                    assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
                    /* and both are the right answer: the host twin of the factor the solver applies */
                    gs_trisolve_params pt = jparams(sweeps, NULL, false, false);
                    tri_host_solve(host, "jacobi", single ? &M : &c->T, c->uplo, c->unit, &pt, B.b, B.xt);
                    check_close("GPU jacobi (analyse_dev) vs host twin", c, sweeps, B.x2, B.xt,
                                single ? 1e-12 : TWIN_TOL);

                    GS_ASSERT_OK(gs_trisolve_analyse(td, &c->T)); /* device -> host factor, same object */
                    assert_view_string(td, "factor_source", "host (uploaded)");
                    tri_gpu_solve(td, b, x, B.x2, B.poison);
                    assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
                    gs_trisolve_destroy(&th);
                    gs_trisolve_destroy(&td);
                }
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        dev_factor_free(&F);
        gs_csr_free(&M);
        bufs_free(&B);
    }
    free_cases(C);
    gs_free(&C);
}

/* preconditioner.precision = "single": the values in float, applied in double. The result equals the
 * host twin run on the rounded factor (single_model) within 1e-12, differs from the double solver by
 * more than 1e-12 (the rounding is real) and by at most 1e-5 relative (it is only the rounding); the
 * factor takes fewer bytes. */
static void test_single(void **state)
{
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    build_cases(C, false, gs_test_quick() ? 0 : 100003);
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        gs_csr M = {0};
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 4242, B.b);
        single_model(&c->T, &M);
        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        for (int sweeps = 1; sweeps <= 3; sweeps += 2) {
            gs_trisolve_params ps = jparams(sweeps, NULL, false, true);
            gs_trisolve_params pd = jparams(sweeps, NULL, false, false);
            gs_trisolve *tsf = NULL, *tsd = NULL;
            GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, c->uplo, c->unit, &ps, &tsf));
            GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, c->uplo, c->unit, &pd, &tsd));
            GS_ASSERT_OK(gs_trisolve_analyse(tsf, &c->T));
            GS_ASSERT_OK(gs_trisolve_analyse(tsd, &c->T));
            assert_view_string(tsf, "precision", "single");
            assert_view_string(tsd, "precision", "double");
            assert_true(view_int(tsf, "factor_bytes") < view_int(tsd, "factor_bytes"));

            tri_gpu_solve(tsf, b, x, B.x1, B.poison);
            tri_gpu_solve(tsd, b, x, B.x2, B.poison);
            gs_trisolve_params pt = jparams(sweeps, NULL, false, false);
            tri_host_solve(host, "jacobi", &M, c->uplo, c->unit, &pt, B.b, B.xt);
            check_close("GPU single jacobi vs host twin of the rounded factor", c, sweeps, B.x1, B.xt, 1e-12);
            double e = gs_test_rel_diff(n, B.x1, B.x2);
            if (!(e > 1e-12 && e <= 1e-5))
                fprintf(stderr, "single vs double %s, %d sweeps: relative difference %.3e, expected in (1e-12, 1e-5]\n",
                        c->name, sweeps, e);
            assert_true(e > 1e-12 && e <= 1e-5);
            /* repeated solves of the single solver: the same bits */
            tri_gpu_solve(tsf, b, x, B.x2, B.poison);
            assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
            gs_trisolve_destroy(&tsf);
            gs_trisolve_destroy(&tsd);
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        gs_csr_free(&M);
        bufs_free(&B);
    }
    free_cases(C);
    gs_free(&C);
}

/* analyse_dev of a faulty factor fails with exactly the status and message of the host
 * gs_trisolve_check_factor, for both types and precisions, and leaves the solver unanalysed. */
static void expect_dev_failure(const char *what, const gs_csr *T, gs_uplo uplo, bool unit)
{
    static const char *const types[] = {"jacobi", "async-jacobi"};
    char want[1024];
    gs_error_clear();
    gs_status want_st = gs_trisolve_check_factor(T, uplo, unit);
    assert_int_not_equal(want_st, GS_OK);
    snprintf(want, sizeof want, "%s", gs_error_message());
    gs_error_clear();
    dev_factor F;
    dev_factor_upload(T, &F);
    for (int t = 0; t < 2; t++)
        for (int single = 0; single < 2; single++) {
            gs_trisolve_params prm = jparams(2, NULL, false, single != 0);
            gs_trisolve *ts = NULL;
            GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, uplo, unit, &prm, &ts));
            gs_status st = gs_trisolve_analyse_dev(ts, &F.D);
            if (st != want_st || strcmp(gs_error_message(), want) != 0)
                fprintf(stderr, "%s (%s): got %s \"%s\", expected %s \"%s\"\n", what, types[t], gs_status_name(st),
                        gs_error_message(), gs_status_name(want_st), want);
            assert_int_equal(st, want_st);
            assert_string_equal(gs_error_message(), want);
            gs_error_clear();
            assert_false(ts->analysed);
            gs_trisolve_destroy(&ts);
        }
    dev_factor_free(&F);
}

static gs_int diag_at(const gs_csr *T, gs_int i)
{
    for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
        if (T->colind[q] == i) return q;
    return -1;
}

static void test_analyse_dev_faults(void **state)
{
    const gs_int n = 1000;
    gs_csr L = {0}, U = {0}, Ls = {0};
    GS_ASSERT_OK(tri_random(n, 5, GS_LOWER, false, 11, &L));
    GS_ASSERT_OK(tri_random(n, 5, GS_UPPER, false, 12, &U));
    GS_ASSERT_OK(tri_random(n, 5, GS_LOWER, true, 13, &Ls)); /* strictly lower: no stored diagonal */

    /* zero diagonal in the middle of L: GS_ERR_NUMERIC naming the row */
    gs_int q = diag_at(&L, 537);
    double old = L.val[q];
    L.val[q] = 0.0;
    expect_dev_failure("zero diagonal", &L, GS_LOWER, false);
    {
        dev_factor F;
        dev_factor_upload(&L, &F);
        gs_trisolve_params prm = jparams(1, NULL, false, false);
        gs_trisolve *ts = NULL;
        GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, GS_LOWER, false, &prm, &ts));
        GS_ASSERT_FAILS(gs_trisolve_analyse_dev(ts, &F.D), GS_ERR_NUMERIC, "zero diagonal at row 538 (1-based)");
        gs_trisolve_destroy(&ts);
        dev_factor_free(&F);
    }
    L.val[q] = old;
    /* a NaN diagonal in the last row, then also a zero one in row 4: the first faulty row is named */
    q = diag_at(&U, n - 1);
    old = U.val[q];
    U.val[q] = NAN;
    expect_dev_failure("NaN diagonal, last row", &U, GS_UPPER, false);
    U.val[diag_at(&U, 3)] = 0.0;
    expect_dev_failure("zero diagonal before a NaN one", &U, GS_UPPER, false);
    /* infinite diagonal in the first row */
    gs_csr U2 = {0};
    GS_ASSERT_OK(gs_csr_copy(&U, &U2));
    U2.val[diag_at(&U2, 0)] = INFINITY;
    expect_dev_failure("infinite diagonal, first row", &U2, GS_UPPER, false);
    gs_csr_free(&U2);
    /* a column outside 1..n (the kernels must not read through it) */
    for (gs_int i = 300; i < n; i++)
        if (L.rowptr[i + 1] - L.rowptr[i] > 1) {
            L.colind[L.rowptr[i]] = n + 7;
            break;
        }
    expect_dev_failure("column out of range", &L, GS_LOWER, false);
    /* no diagonal at all (a strict factor analysed as non-unit), and a stored diagonal with unit_diag */
    expect_dev_failure("missing diagonal", &Ls, GS_LOWER, false);
    expect_dev_failure("stored diagonal of a unit factor", &U, GS_UPPER, true);

    /* after the failures the same solver analyses a valid device factor and solves like analyse */
    {
        gs_csr T = {0};
        GS_ASSERT_OK(tri_random(n, 5, GS_LOWER, false, 14, &T));
        dev_factor F;
        dev_factor_upload(&T, &F);
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, 8, B.b);
        gs_trisolve_params prm = jparams(3, NULL, false, false);
        gs_trisolve *ts = NULL, *th = NULL;
        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        dev_factor Fbad;
        dev_factor_upload(&Ls, &Fbad);
        GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, GS_LOWER, false, &prm, &ts));
        GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, GS_LOWER, false, &prm, &th));
        GS_ASSERT_FAILS(gs_trisolve_analyse_dev(ts, &Fbad.D), GS_ERR_NUMERIC, "no diagonal entry at row 1 (1-based)");
        GS_ASSERT_OK(gs_trisolve_analyse_dev(ts, &F.D));
        GS_ASSERT_OK(gs_trisolve_analyse(th, &T));
        tri_gpu_solve(ts, b, x, B.x1, B.poison);
        tri_gpu_solve(th, b, x, B.x2, B.poison);
        assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
        gs_trisolve_destroy(&ts);
        gs_trisolve_destroy(&th);
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        dev_factor_free(&F);
        dev_factor_free(&Fbad);
        bufs_free(&B);
        gs_csr_free(&T);
    }
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&Ls);
}

static int run_sync(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_twin),
        cmocka_unit_test(test_repeat_reanalyse),
        cmocka_unit_test(test_analyse_dev),
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_analyse_dev_faults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* ================================================================ async-jacobi (asynchronous sweeps) */

static void test_async_bounds(void **state)
{
    static const char *const orders[] = {"dependency", "forward", "backward"};
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    /* levels sweeps x 3 orders x 3 repeats: the large case is kept moderate (20011 rows, ~2,600 levels) */
    build_cases(C, false, gs_test_quick() ? 0 : 20011);
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        int levels = levels_of(c);
        double rho = tri_iteration_norm(&c->T, c->unit);
        assert_true(rho < 1.0);
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 300, B.b);
        host_solve("reference", c, 0, B.b, B.xr);
        host_solve("jacobi", c, 0, B.b, B.xt); /* x_0 = D^{-1} b */
        double scale = tri_max_abs(n, B.xr), e0 = tri_max_diff(n, B.xt, B.xr);

        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        for (int o = 0; o < 3; o++) {
            const int sweeps_list[4] = {0, 1, 2, levels};
            for (int si = 0; si < 4; si++) {
                int sweeps = sweeps_list[si];
                gs_trisolve_params prm = jparams(sweeps, orders[o], false, false);
                gs_trisolve *ts = NULL;
                GS_ASSERT_OK(gs_trisolve_create("async-jacobi", gpu, c->uplo, c->unit, &prm, &ts));
                assert_true(ts->variable);
                GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));
                for (int rep = 0; rep < 3; rep++) { /* the result may vary: every one must meet the bound */
                    tri_gpu_solve(ts, b, x, B.x1, B.poison);
                    double e = tri_max_diff(n, B.x1, B.xr);
                    if (si == 0) {
                        assert_memory_equal(B.x1, B.xt, (size_t)n * sizeof(double)); /* D^{-1} b, one product */
                    } else if (si < 3) {
                        double bound = pow(rho, sweeps) * e0 * (1 + 1e-12) + 1e-13 * scale;
                        if (!(e <= bound))
                            fprintf(stderr, "async %s %s, %d sweeps: error %.3e > bound %.3e\n", c->name, orders[o],
                                    sweeps, e, bound);
                        assert_true(e <= bound);
                    } else {
                        check_close("async-jacobi after `levels` sweeps vs exact", c, sweeps, B.x1, B.xr, TRI_TOL);
                    }
                }
                gs_trisolve_destroy(&ts);
            }
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        bufs_free(&B);
    }
    free_cases(C);
    gs_free(&C);
}

/* deterministic = true: synchronous sweeps, bit-identical to GPU jacobi (and not variable). */
static void test_deterministic_is_jacobi(void **state)
{
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    build_cases(C, false, gs_test_quick() ? 0 : 20011);
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 40, B.b);
        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        for (int sweeps = 1; sweeps <= 4; sweeps += 3) {
            gs_trisolve_params pa = jparams(sweeps, "backward", true, false);
            gs_trisolve_params pj = jparams(sweeps, NULL, false, false);
            gs_trisolve *ta = NULL, *tj = NULL;
            GS_ASSERT_OK(gs_trisolve_create("async-jacobi", gpu, c->uplo, c->unit, &pa, &ta));
            GS_ASSERT_OK(gs_trisolve_create("jacobi", gpu, c->uplo, c->unit, &pj, &tj));
            assert_false(ta->variable);
            GS_ASSERT_OK(gs_trisolve_analyse(ta, &c->T));
            GS_ASSERT_OK(gs_trisolve_analyse(tj, &c->T));
            tri_gpu_solve(ta, b, x, B.x1, B.poison);
            tri_gpu_solve(tj, b, x, B.x2, B.poison);
            assert_memory_equal(B.x1, B.x2, (size_t)n * sizeof(double));
            gs_trisolve_destroy(&ta);
            gs_trisolve_destroy(&tj);
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        bufs_free(&B);
    }
    free_cases(C);
    gs_free(&C);
}

/* view keys of the asynchronous solver on the GPU */
static void test_view(void **state)
{
    const gs_int n = 1000;
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 5, GS_UPPER, false, 3, &T));
    gs_trisolve_params prm = jparams(4, "dependency", false, false);
    gs_trisolve *ts = NULL;
    GS_ASSERT_OK(gs_trisolve_create("async-jacobi", gpu, GS_UPPER, false, &prm, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "trisolve.upper");
    const gs_report_entry *e = gs_report_find(rep, "trisolve.upper.sweeps");
    assert_non_null(e);
    assert_int_equal(e->i, 4);
    e = gs_report_find(rep, "trisolve.upper.blocks");
    assert_non_null(e);
    assert_string_equal(e->s, "descending"); /* U along its dependencies */
    e = gs_report_find(rep, "trisolve.upper.deterministic");
    assert_non_null(e);
    assert_int_equal(e->i, 0);
    e = gs_report_find(rep, "trisolve.upper.exact");
    assert_non_null(e);
    assert_int_equal(e->i, 0);
    e = gs_report_find(rep, "trisolve.upper.kernels_per_solve");
    assert_non_null(e);
    assert_int_equal(e->i, 5); /* x = D^{-1} b, then 4 sweeps */
    assert_non_null(gs_report_find(rep, "trisolve.upper.rows_per_block"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.local_sweeps"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.analysis_time"));
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts);
    gs_csr_free(&T);
}

/* Block-asynchronous Jacobi in place with single-precision values and with a factor given on the device:
 * after `levels` sweeps x is the exact solution of the factor the solver applies (the rounded one for
 * single, single_model) within TRI_TOL, in repeated solves; analyse_dev gives the host analysis's
 * shape. */
static void test_async_single_and_dev(void **state)
{
    jcases *C = NULL;
    GS_ASSERT_OK(GS_CALLOC(C, 1));
    build_cases(C, false, 0);
    for (int k = 0; k < C->n; k++) {
        const jcase *c = &C->c[k];
        gs_int n = c->T.nrows;
        int levels = levels_of(c);
        gs_csr M = {0};
        bufs B;
        bufs_alloc(&B, n);
        tri_rhs(n, (uint64_t)k + 515, B.b);
        single_model(&c->T, &M);
        host_solve("reference", c, 0, B.b, B.xr);
        tri_host_solve(host, "reference", &M, c->uplo, c->unit, NULL, B.b, B.xt);
        dev_factor F;
        dev_factor_upload(&c->T, &F);
        gs_vector *b = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
        GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
        GS_ASSERT_OK(gs_vec_upload(b, B.b));
        for (int single = 0; single < 2; single++) {
            gs_trisolve_params prm = jparams(levels, "dependency", false, single != 0);
            gs_trisolve *th = NULL, *td = NULL;
            GS_ASSERT_OK(gs_trisolve_create("async-jacobi", gpu, c->uplo, c->unit, &prm, &th));
            GS_ASSERT_OK(gs_trisolve_create("async-jacobi", gpu, c->uplo, c->unit, &prm, &td));
            assert_true(td->variable);
            GS_ASSERT_OK(gs_trisolve_analyse(th, &c->T));
            GS_ASSERT_OK(gs_trisolve_analyse_dev(td, &F.D));
            assert_view_string(td, "precision", single ? "single" : "double");
            assert_view_string(td, "factor_source", "device (analyse_dev)");
            assert_int_equal(view_int(td, "warp_rows"), view_int(th, "warp_rows"));
            assert_int_equal(view_int(td, "factor_bytes"), view_int(th, "factor_bytes"));
            for (int rep = 0; rep < 2; rep++) {
                gs_trisolve *ts = rep ? td : th;
                tri_gpu_solve(ts, b, x, B.x1, B.poison);
                check_close(single ? "async-jacobi single after `levels` sweeps vs exact (rounded factor)"
                                   : "async-jacobi after `levels` sweeps vs exact", c, levels, B.x1,
                            single ? B.xt : B.xr, TRI_TOL);
                if (single) /* the rounded factor's solution is close to the double one */
                    assert_true(gs_test_rel_diff(n, B.x1, B.xr) <= 1e-5);
            }
            gs_trisolve_destroy(&th);
            gs_trisolve_destroy(&td);
        }
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        dev_factor_free(&F);
        gs_csr_free(&M);
        bufs_free(&B);
    }
    free_cases(C);
    gs_free(&C);
}

static int run_async(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_async_bounds),
        cmocka_unit_test(test_async_single_and_dev),
        cmocka_unit_test(test_deterministic_is_jacobi),
        cmocka_unit_test(test_view),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

int main(int argc, char **argv)
{
    bool async = false, shapes = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--async") == 0) async = true;
        else if (strcmp(argv[i], "--shapes") == 0) shapes = true;
        else {
            fprintf(stderr, "usage: %s [--async | --shapes]\n", argv[0]);
            return 2;
        }
    }
    gs_test_require_gpu();
    if (async) return run_async();
    if (!shapes) return run_sync();
    static const gs_jacobi_params forced[] = {{2, GS_TS_AUTO}, {0, GS_TS_ON}};
    int failed = 0;
    for (size_t k = 0; k < sizeof forced / sizeof forced[0]; k++) {
        shape = forced[k];
        fprintf(stderr, "jacobi.lanes = %d, jacobi.ell = %s\n", shape.lanes, shape.ell == GS_TS_ON ? "on" : "auto");
        failed += run_sync();
    }
    return failed;
}
