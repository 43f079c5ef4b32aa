/* Single-precision factors (preconditioner.precision = "single") in the GPU triangular solvers syncfree,
 * levelset, cusparse and auto, and the analysis of factors already in device memory (analyse_dev).
 *
 * Factors: ILU(0) of 3D Poisson and 3D convection-diffusion (L unit lower, U upper), ILU(0) of a random
 * diagonally dominant matrix of order 1237 (not a multiple of 32) with a dense row and rows holding only
 * their diagonal, and random triangles of order 1237 (a dense row, rows without off-diagonal entries)
 * lower/upper x unit/non-unit.
 *
 * The model of single (host twin, single_twin below): each off-diagonal value rounded to float,
 * t_f = (double)(float)t_ij, and the reciprocal diagonal dinv_f = (double)(float)(1 / t_ii), applied
 * with double accumulation x_i = (b_i - sum_j t_f x_j) * dinv_f, rows in dependency order and entries in
 * column order (the order of the GPU kernels' ELL slots and remainder). Bounds:
 *   - the model against the double reference: SINGLE_TOL = 1e-6. Rounding each value is a relative
 *     perturbation of at most u = 2^-24 = 6.0e-8; on these well-conditioned factors it hardly grows:
 *     test_model_bound prints the measured error, 0.2 .. 1.04 u (largest 6.2e-8, ILU(0) L of the random
 *     matrix with the dense row), so the bound leaves a margin of 16;
 *   - syncfree / levelset / auto in single against the model: TRI_TOL (1e-12). The arithmetic is the
 *     same up to the contraction of multiply-add into FMA (one rounding less per entry), which the
 *     well-conditioned substitution keeps at the 1e-15 level;
 *   - cusparse in single rounds b to float and accumulates in float (cuSPARSE SpSV computes in the
 *     matrix's type), so it does not follow the model: against the double reference CUSPARSE_SINGLE_TOL
 *     = 1e-5. A host model that does everything in float (b, sums, x; division or reciprocal) measured
 *     0.8 .. 2.9 u (largest 1.7e-7) on these cases, so the bound leaves a margin of about 60 for
 *     cuSPARSE's own summation order;
 *   - single must differ from double somewhere by more than 1e-12 relative (float values are used).
 * analyse_dev: the factor's arrays are uploaded here (cudaMalloc/cudaMemcpy), analysed in place, then
 * overwritten with 0xFF bytes and freed before the solve (the solver must keep its own copy); the result
 * must equal the host-CSR analysis bit for bit (syncfree, levelset, auto; cusparse, whose SpSV is not
 * promised to be deterministic, within TRI_TOL / 1e-6 in single). A zero diagonal given through
 * analyse_dev fails with GS_ERR_NUMERIC and the message of gs_trisolve_analyse on the host copy, and
 * the same solver then analyses the repaired factor. Outputs are poisoned with NaN before every solve.
 * Without a GPU: a host-backend trisolve with single is refused, and the model bound is measured. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "precond/factor.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

#define SINGLE_TOL 1e-6          /* float values with double accumulation vs the double reference */
#define CUSPARSE_SINGLE_TOL 1e-5 /* cuSPARSE in float (b, x, sums) vs the double reference */
#define CUSPARSE_DEV_SINGLE_TOL 1e-6 /* cusparse: analyse_dev vs analyse in single (not bitwise) */
#define UNIT_ROUNDOFF_F 5.9604644775390625e-08 /* 2^-24 */

static const char *const types[] = {"syncfree", "levelset", "cusparse", "auto"};
#define NTYPES (int)(sizeof types / sizeof types[0])

static gs_backend *gpu, *host;
static tri_suite S;

/* ---------------------------------------------------------------- cases */

/* L (unit lower, strict) and U (upper with diagonal) of ILU(0) of A. */
static gs_status add_ilu0(tri_suite *s, const char *name, const gs_csr *A)
{
    gs_status st = GS_OK;
    gs_csr L = {0}, U = {0};
    GS_TRY(gs_iluk_symbolic(A, 0, &L, &U));
    GS_TRY(gs_ilu_numeric(A, NULL, &L, &U, NULL));
    GS_TRY(tri_suite_add(s, name, GS_LOWER, true, &L));
    GS_TRY(tri_suite_add(s, name, GS_UPPER, false, &U));
cleanup:
    gs_csr_free(&L);
    gs_csr_free(&U);
    return st;
}

/* A random n x n matrix, strictly diagonally dominant by rows (a_ii = 1.5 sum_j |a_ij| + 1, so ILU(0)
 * exists and stays well conditioned), with row n/2 dense and every 23rd row holding only its diagonal:
 * its ILU(0) factors have a dense row and rows without off-diagonal entries. */
static gs_status random_dense_row(gs_int n, uint64_t seed, gs_csr *A)
{
    gs_status st = GS_OK;
    gs_int *ri = NULL, *ci = NULL, cnt = 0;
    double *v = NULL, *rowsum = NULL;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
    size_t cap = (size_t)n * 8 + (size_t)n + (size_t)n;
    GS_TRY(GS_MALLOC(ri, cap));
    GS_TRY(GS_MALLOC(ci, cap));
    GS_TRY(GS_MALLOC(v, cap));
    GS_TRY(GS_CALLOC(rowsum, n));
    for (gs_int i = 0; i < n; i++) {
        if (i % 23 == 4) continue;
        gs_int len = i == n / 2 ? n : 6;
        for (gs_int t = 0; t < len; t++) {
            gs_int j;
            if (i == n / 2) j = t;
            else if (gs_test_rand(&s) < 0.6) j = i + (gs_int)(gs_test_rand(&s) * 61) - 30; /* banded */
            else j = (gs_int)(gs_test_rand(&s) * n);                                      /* far */
            if (j < 0 || j >= n || j == i) continue;
            double a = gs_test_rand(&s) - 0.5;
            ri[cnt] = i;
            ci[cnt] = j;
            v[cnt++] = a;
            rowsum[i] += fabs(a); /* duplicates are summed: |a + b| <= |a| + |b| keeps the dominance */
        }
    }
    for (gs_int i = 0; i < n; i++) {
        ri[cnt] = i;
        ci[cnt] = i;
        v[cnt++] = (i % 2 ? -1.0 : 1.0) * (1.5 * rowsum[i] + 1.0);
    }
    GS_TRY(gs_csr_from_coo(n, n, cnt, ri, ci, v, A));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_free(&rowsum);
    return st;
}

static gs_status build_cases(tri_suite *s)
{
    gs_status st = GS_OK;
    gs_csr A = {0}, T = {0};
    const int q = gs_test_quick(); /* sanitizers: smaller factors */
    const gs_int rn = q >= 2 ? 333 : 1237;
    memset(s, 0, sizeof *s);
    if (q == 0) GS_TRY(gs_gen_poisson3d(23, 19, 17, &A));
    else if (q == 1) GS_TRY(gs_gen_poisson3d(11, 9, 7, &A));
    else GS_TRY(gs_gen_poisson3d(7, 6, 5, &A));
    GS_TRY(add_ilu0(s, "ilu0-poisson3d", &A));
    gs_csr_free(&A);
    if (q == 0) GS_TRY(gs_gen_convdiff3d(19, 17, 13, 2.0, &A));
    else GS_TRY(gs_gen_convdiff3d(9, 8, 7, 2.0, &A));
    GS_TRY(add_ilu0(s, "ilu0-convdiff3d", &A));
    gs_csr_free(&A);
    GS_TRY(random_dense_row(rn, 5, &A));
    GS_TRY(add_ilu0(s, "ilu0-random-dense-row", &A));
    for (int side = 0; side < 2; side++)
        for (int unit = 0; unit < 2; unit++) {
            GS_TRY(tri_random(rn, 5, (gs_uplo)side, unit != 0, 71 + 2 * side + unit, &T));
            GS_TRY(tri_suite_add(s, "random", (gs_uplo)side, unit != 0, &T));
        }
cleanup:
    gs_csr_free(&A);
    gs_csr_free(&T);
    if (st != GS_OK) tri_suite_free(s);
    return st;
}

/* ---------------------------------------------------------------- the model of single */

/* x = T_f^{-1} b in double with t_f = (double)(float)t_ij off the diagonal and dinv_f =
 * (double)(float)(1 / t_ii) (1 for a unit factor): rows in dependency order, entries in column order,
 * x_i = (b_i - sum_j t_f x_j) * dinv_f. */
static void single_twin(const gs_csr *T, gs_uplo uplo, bool unit, const double *b, double *x)
{
    gs_int n = T->nrows;
    for (gs_int k = 0; k < n; k++) {
        gs_int i = uplo == GS_LOWER ? k : n - 1 - k;
        double s = b[i], dinv = 1.0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            gs_int j = T->colind[q];
            if (j == i) dinv = (double)(float)(1.0 / T->val[q]);
            else s -= (double)(float)T->val[q] * x[j];
        }
        x[i] = unit ? s : s * dinv;
    }
}

/* Solver parameters forced for the whole run (--param name=value, e.g. syncfree.schedule=wruns: warp runs
 * on every factor, whose kernel reads float values too). */
static const char *forced_params[8];
static int nforced;

static gs_trisolve_params params(bool single)
{
    gs_trisolve_params p = gs_trisolve_params_default();
    for (int k = 0; k < nforced; k++) GS_ASSERT_OK(gs_trisolve_params_set(&p, forced_params[k], NULL));
    p.single = single;
    return p;
}

static int group_setup(void **state)
{
    (void)state;
    if (build_cases(&S) != GS_OK) {
        gs_error_print(stderr);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    tri_suite_free(&S);
    return 0;
}

static int gpu_setup(void **state)
{
    if (tri_backends_create(&gpu, &host) != 0) return -1;
    return group_setup(state);
}

static int gpu_teardown(void **state)
{
    group_teardown(state);
    tri_backends_destroy(&gpu, &host);
    return 0;
}

/* ---------------------------------------------------------------- host-only tests */

/* A host-backend trisolve stores double factors only: single is refused naming the config key. */
static void test_host_refuses_single(void **state)
{
    (void)state;
    static const char *const host_types[] = {"syncfree", "levelset", "auto", "reference"};
    gs_backend *hb = NULL;
    gs_trisolve *ts = NULL;
    gs_trisolve_params p = params(true);
    GS_ASSERT_OK(gs_backend_create("host", 0, &hb));
    for (size_t k = 0; k < sizeof host_types / sizeof host_types[0]; k++) {
        GS_ASSERT_FAILS(gs_trisolve_create(host_types[k], hb, GS_LOWER, true, &p, &ts), GS_ERR_UNSUPPORTED,
                        "preconditioner.precision");
        assert_null(ts);
    }
    p.single = false; /* and double is accepted */
    GS_ASSERT_OK(gs_trisolve_create("levelset", hb, GS_LOWER, true, &p, &ts));
    gs_trisolve_destroy(&ts);
    gs_backend_destroy(&hb);
}

/* The model of single against the double reference on every case: within SINGLE_TOL, different from
 * it (values really rounded), and the measured growth over u printed for the record. */
static void test_model_bound(void **state)
{
    (void)state;
    double worst = 0.0;
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *b = NULL, *xr = NULL, *xm = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(xm, n));
        tri_rhs(n, (uint64_t)k + 31, b);
        gs_trisolve_reference_host(&c->T, c->uplo, c->unit, b, xr);
        single_twin(&c->T, c->uplo, c->unit, b, xm);
        double e = gs_test_rel_diff(n, xm, xr);
        fprintf(stderr, "model of single, %-36s n = %5d: relative error %.2e = %.2f u\n", c->name, (int)n, e,
                e / UNIT_ROUNDOFF_F);
        assert_true(e <= SINGLE_TOL);
        assert_true(e > 1e-12);
        if (e > worst) worst = e;
        gs_free(&b);
        gs_free(&xr);
        gs_free(&xm);
    }
    fprintf(stderr, "model of single: largest relative error %.2e = %.2f u (bound %.0e)\n", worst,
            worst / UNIT_ROUNDOFF_F, SINGLE_TOL);
}

/* ---------------------------------------------------------------- GPU tests */

/* A factor's arrays in device memory, made with the CUDA runtime (not through the backend). */
typedef struct dev_factor {
    gs_csr_dev T;
    gs_int *rowptr, *colind;
    double *val;
} dev_factor;

static void *dev_copy(const void *src, size_t bytes)
{
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess);
    if (bytes) assert_int_equal(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
    return p;
}

static void dev_factor_upload(const gs_csr *H, dev_factor *D)
{
    memset(D, 0, sizeof *D);
    D->rowptr = (gs_int *)dev_copy(H->rowptr, ((size_t)H->nrows + 1) * sizeof(gs_int));
    D->colind = (gs_int *)dev_copy(H->colind, (size_t)H->nnz * sizeof(gs_int));
    D->val = (double *)dev_copy(H->val, (size_t)H->nnz * sizeof(double));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess); /* pageable copies may still be in flight */
    D->T.nrows = D->T.ncols = H->nrows;
    D->T.nnz = H->nnz;
    D->T.rowptr = D->rowptr;
    D->T.colind = D->colind;
    D->T.val = D->val;
}

/* The owner overwrites its arrays (0xFF bytes: NaN values, negative indices) and frees them. */
static void dev_factor_free(dev_factor *D)
{
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemset(D->rowptr, 0xFF, ((size_t)D->T.nrows + 1) * sizeof(gs_int)), cudaSuccess);
    if (D->T.nnz) {
        assert_int_equal(cudaMemset(D->colind, 0xFF, (size_t)D->T.nnz * sizeof(gs_int)), cudaSuccess);
        assert_int_equal(cudaMemset(D->val, 0xFF, (size_t)D->T.nnz * sizeof(double)), cudaSuccess);
    }
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaFree(D->rowptr), cudaSuccess);
    assert_int_equal(cudaFree(D->colind), cudaSuccess);
    assert_int_equal(cudaFree(D->val), cudaSuccess);
    memset(D, 0, sizeof *D);
}

static bool deterministic(const char *type) { return strcmp(type, "cusparse") != 0; }

/* The view reports the precision the factor is stored in. */
static void check_view(const gs_trisolve *ts, bool single)
{
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "trisolve.t");
    const gs_report_entry *e = gs_report_find(rep, "trisolve.t.precision");
    assert_non_null(e);
    assert_int_equal(e->type, GS_REPORT_STRING);
    assert_string_equal(e->s, single ? "single" : "double");
    gs_report_destroy(&rep);
}

/* x = T^{-1} b by solver `type` on the GPU, values in float (single) or double; T given as a host CSR
 * or (dev) as device arrays that are overwritten and freed right after the analysis. x is poisoned
 * with NaN before each of two solves; a deterministic solver repeats its result bit for bit. */
static void gpu_solve(const char *type, const tri_case *c, bool single, bool dev, const double *b, double *x)
{
    gs_int n = c->T.nrows;
    gs_trisolve *ts = NULL;
    gs_vector *vb = NULL, *vx = NULL;
    double *poison = NULL, *x2 = NULL;
    gs_trisolve_params p = params(single);
    GS_ASSERT_OK(gs_trisolve_create(type, gpu, c->uplo, c->unit, &p, &ts));
    if (dev) {
        dev_factor D;
        dev_factor_upload(&c->T, &D);
        GS_ASSERT_OK(gs_trisolve_analyse_dev(ts, &D.T));
        dev_factor_free(&D);
    } else {
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &c->T));
    }
    check_view(ts, single);
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    GS_ASSERT_OK(GS_MALLOC(x2, n));
    gs_test_poison(n, poison);
    GS_ASSERT_OK(gs_vec_create(gpu, n, &vb));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &vx));
    GS_ASSERT_OK(gs_vec_upload(vb, b));
    tri_gpu_solve(ts, vb, vx, x, poison);
    tri_gpu_solve(ts, vb, vx, x2, poison);
    if (deterministic(type)) assert_memory_equal(x, x2, (size_t)n * sizeof(double));
    else assert_true(gs_test_rel_diff(n, x2, x) <= (single ? CUSPARSE_DEV_SINGLE_TOL : TRI_TOL));
    gs_vec_destroy(&vb);
    gs_vec_destroy(&vx);
    gs_free(&poison);
    gs_free(&x2);
    gs_trisolve_destroy(&ts);
}

static void expect_below(const char *type, const tri_case *c, const char *what, double e, double tol)
{
    if (!(e <= tol)) fprintf(stderr, "%s %s: %s %.3e > %.1e\n", type, c->name, what, e, tol);
    assert_true(e <= tol);
}

/* Every case, every solver: double and single, host and device analysis, against the reference, the
 * model of single and each other. */
static void test_single_matches_model(void **state)
{
    (void)state;
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *b = NULL, *xr = NULL, *xm = NULL, *xd = NULL, *xdd = NULL, *xs = NULL, *xsd = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(xm, n));
        GS_ASSERT_OK(GS_MALLOC(xd, n));
        GS_ASSERT_OK(GS_MALLOC(xdd, n));
        GS_ASSERT_OK(GS_MALLOC(xs, n));
        GS_ASSERT_OK(GS_MALLOC(xsd, n));
        tri_rhs(n, (uint64_t)k + 31, b);
        gs_trisolve_reference_host(&c->T, c->uplo, c->unit, b, xr);
        single_twin(&c->T, c->uplo, c->unit, b, xm);
        for (int t = 0; t < NTYPES; t++) {
            const char *type = types[t];
            const bool csp = strcmp(type, "cusparse") == 0;
            gpu_solve(type, c, false, false, b, xd);
            gpu_solve(type, c, false, true, b, xdd);
            gpu_solve(type, c, true, false, b, xs);
            gpu_solve(type, c, true, true, b, xsd);

            expect_below(type, c, "double vs reference", gs_test_rel_diff(n, xd, xr), TRI_TOL);
            if (csp) {
                expect_below(type, c, "single vs reference", gs_test_rel_diff(n, xs, xr), CUSPARSE_SINGLE_TOL);
            } else {
                expect_below(type, c, "single vs model", gs_test_rel_diff(n, xs, xm), TRI_TOL);
                expect_below(type, c, "single vs reference", gs_test_rel_diff(n, xs, xr), SINGLE_TOL);
            }
            double sd = gs_test_rel_diff(n, xs, xd);
            if (!(sd > 1e-12))
                fprintf(stderr, "%s %s: single equals double (%.3e): float values unused?\n", type, c->name, sd);
            assert_true(sd > 1e-12);

            if (deterministic(type)) { /* device analysis = host analysis, bit for bit */
                assert_memory_equal(xdd, xd, (size_t)n * sizeof(double));
                assert_memory_equal(xsd, xs, (size_t)n * sizeof(double));
            } else {
                expect_below(type, c, "analyse_dev vs analyse (double)", gs_test_rel_diff(n, xdd, xd), TRI_TOL);
                expect_below(type, c, "analyse_dev vs analyse (single)", gs_test_rel_diff(n, xsd, xs),
                             CUSPARSE_DEV_SINGLE_TOL);
            }
        }
        gs_free(&b);
        gs_free(&xr);
        gs_free(&xm);
        gs_free(&xd);
        gs_free(&xdd);
        gs_free(&xs);
        gs_free(&xsd);
    }
}

/* The error of gs_trisolve_analyse on a host copy (status and message, copied). */
static gs_status host_analyse_error(gs_trisolve *ts, const gs_csr *T, char *msg, size_t len)
{
    gs_error_clear();
    gs_status st = gs_trisolve_analyse(ts, T);
    snprintf(msg, len, "%s", gs_error_message());
    gs_error_clear();
    return st;
}

/* A zero diagonal (in the middle and, later, a second one) given through analyse_dev: GS_ERR_NUMERIC
 * with exactly the host analysis' message, the solver left unanalysed; then the repaired factor is
 * analysed by the same solver from device memory and solved like the reference. */
static void test_analyse_dev_zero_diagonal(void **state)
{
    (void)state;
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        if (c->unit) continue;
        gs_int n = c->T.nrows, r1 = n / 3, r2 = (2 * n) / 3, d1 = -1, d2 = -1;
        for (gs_int q = c->T.rowptr[r1]; q < c->T.rowptr[r1 + 1]; q++)
            if (c->T.colind[q] == r1) d1 = q;
        for (gs_int q = c->T.rowptr[r2]; q < c->T.rowptr[r2 + 1]; q++)
            if (c->T.colind[q] == r2) d2 = q;
        assert_true(d1 >= 0 && d2 >= 0);
        gs_csr bad = {0};
        GS_ASSERT_OK(gs_csr_copy(&c->T, &bad));
        bad.val[d1] = 0.0;
        bad.val[d2] = 0.0;
        /* two faulty rows: every analysis must name the first one (r1), like the host check */
        double *b = NULL, *xr = NULL, *x = NULL, *poison = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        GS_ASSERT_OK(GS_MALLOC(poison, n));
        gs_test_poison(n, poison);
        tri_rhs(n, (uint64_t)k + 7, b);
        gs_trisolve_reference_host(&c->T, c->uplo, c->unit, b, xr);
        char expect[64];
        snprintf(expect, sizeof expect, "zero diagonal at row %d (1-based)", (int)r1 + 1);
        for (int t = 0; t < NTYPES; t++)
            for (int single = 0; single < 2; single++) {
                const char *type = types[t];
                gs_trisolve_params p = params(single != 0);
                gs_trisolve *th = NULL, *td = NULL;
                char host_msg[512], dev_msg[512];
                GS_ASSERT_OK(gs_trisolve_create(type, gpu, c->uplo, c->unit, &p, &th));
                GS_ASSERT_OK(gs_trisolve_create(type, gpu, c->uplo, c->unit, &p, &td));
                assert_int_equal(host_analyse_error(th, &bad, host_msg, sizeof host_msg), GS_ERR_NUMERIC);
                assert_non_null(strstr(host_msg, expect));

                dev_factor D;
                dev_factor_upload(&bad, &D);
                gs_error_clear();
                gs_status st = gs_trisolve_analyse_dev(td, &D.T);
                snprintf(dev_msg, sizeof dev_msg, "%s", gs_error_message());
                gs_error_clear();
                dev_factor_free(&D);
                if (st != GS_ERR_NUMERIC || strcmp(dev_msg, host_msg) != 0)
                    fprintf(stderr, "%s %s (%s): analyse_dev gave %s \"%s\"; analyse gave \"%s\"\n", type, c->name,
                            single ? "single" : "double", gs_status_name(st), dev_msg, host_msg);
                assert_int_equal(st, GS_ERR_NUMERIC);
                assert_string_equal(dev_msg, host_msg);
                assert_false(td->analysed);
                gs_vector *vb = NULL, *vx = NULL;
                GS_ASSERT_OK(gs_vec_create(gpu, n, &vb));
                GS_ASSERT_OK(gs_vec_create(gpu, n, &vx));
                GS_ASSERT_FAILS(gs_trisolve_solve(td, vb, vx), GS_ERR_ARG, "before a successful analyse");

                /* the repaired factor, again from device memory, by the same solver */
                dev_factor_upload(&c->T, &D);
                GS_ASSERT_OK(gs_trisolve_analyse_dev(td, &D.T));
                dev_factor_free(&D);
                GS_ASSERT_OK(gs_vec_upload(vb, b));
                tri_gpu_solve(td, vb, vx, x, poison);
                double tol = !single ? TRI_TOL : strcmp(type, "cusparse") == 0 ? CUSPARSE_SINGLE_TOL : SINGLE_TOL;
                expect_below(type, c, single ? "repaired (single) vs reference" : "repaired vs reference",
                             gs_test_rel_diff(n, x, xr), tol);
                gs_vec_destroy(&vb);
                gs_vec_destroy(&vx);
                gs_trisolve_destroy(&th);
                gs_trisolve_destroy(&td);
            }
        gs_free(&b);
        gs_free(&xr);
        gs_free(&x);
        gs_free(&poison);
        gs_csr_free(&bad);
    }
}

/* On the cuda backend too, the solvers without float factors refuse single. */
static void test_cuda_types_without_single(void **state)
{
    (void)state;
    static const char *const others[] = {"reference", "tiled"};
    gs_trisolve_params p = params(true);
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        gs_trisolve *ts = NULL;
        GS_ASSERT_FAILS(gs_trisolve_create(others[k], gpu, GS_UPPER, false, &p, &ts), GS_ERR_UNSUPPORTED,
                        "preconditioner.precision");
        assert_null(ts);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--param") != 0 || i + 1 >= argc || nforced == 8) {
            fprintf(stderr, "usage: %s [--param name=value]...\n", argv[0]);
            return 2;
        }
        forced_params[nforced++] = argv[++i];
    }
    /* host-only checks first: they run on machines without a GPU too */
    const struct CMUnitTest host_tests[] = {
        cmocka_unit_test(test_host_refuses_single),
        cmocka_unit_test(test_model_bound),
    };
    int failed = cmocka_run_group_tests_name("single_host", host_tests, group_setup, group_teardown);
    if (failed) return failed;
    gs_test_require_gpu();
    const struct CMUnitTest gpu_tests[] = {
        cmocka_unit_test(test_single_matches_model),
        cmocka_unit_test(test_analyse_dev_zero_diagonal),
        cmocka_unit_test(test_cuda_types_without_single),
    };
    return cmocka_run_group_tests_name("single_cuda", gpu_tests, gpu_setup, gpu_teardown);
}
