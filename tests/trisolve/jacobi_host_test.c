/* Host tests of the approximate triangular solvers `jacobi` and `async-jacobi` (jacobi_ref.c):
 *  - Jacobi's iteration matrix D^{-1}(T - D) is strictly triangular (nilpotent): after as many sweeps as
 *    the factor has levels (even levels - 1) the result equals the exact substitution to 1e-12, on the
 *    whole tri_cases suite (random with empty rows and a dense row, n = 1000 and 4099; chains; diagonal;
 *    mixed levels; 3D Poisson and real-matrix triangles; L unit and U non-unit among them);
 *  - sweeps = 0 gives x = D^{-1} b; on ILU(0) factors of a 2D Laplacian the max-norm error decreases
 *    strictly with every sweep and stays below rho^s e_0, rho = ||D^{-1}(T - D)||_inf;
 *  - async-jacobi (the sequential model of block-asynchronous Jacobi): a loose bound after 2 sweeps
 *    (rho^2 e_0), exact after `levels` sweeps; block order: a factor whose rows depend only on earlier
 *    row blocks is solved exactly by ONE sweep in dependency order, not against it;
 *  - async-jacobi with deterministic = true is bit-identical to jacobi; variability flags; view keys;
 *  - an ILU(0) preconditioner (and BILU, RAS) with trisolve.lower.type = "async-jacobi" is variable:
 *    GMRES refuses it, FGMRES accepts and converges; with deterministic = true GMRES accepts it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/factor.h"
#include "precond/precond.h"
#include "solver/solver.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/jacobi_kernels.h"
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

/* x = solve of T with `type` and the given parameters (x poisoned first); returns the solver's
 * variability flag */
static int forced_lanes; /* jacobi.lanes of solve_with's solvers (0: the rule) */

static bool solve_with(const char *type, const gs_csr *T, gs_uplo uplo, bool unit, int sweeps, const char *order,
                       bool deterministic, const double *b, double *x)
{
    gs_int n = T->nrows;
    gs_trisolve_params prm = tri_params(sweeps, order, deterministic, false);
    prm.jacobi.lanes = forced_lanes;
    gs_trisolve *ts = NULL;
    gs_vector *vb = NULL, *vx = NULL;
    GS_ASSERT_OK(gs_trisolve_create(type, host, uplo, unit, &prm, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, T));
    GS_ASSERT_OK(gs_vec_create(host, n, &vb));
    GS_ASSERT_OK(gs_vec_create(host, n, &vx));
    memcpy(vb->data, b, (size_t)n * sizeof(double));
    gs_test_poison(n, vx->data);
    GS_ASSERT_OK(gs_trisolve_solve(ts, vb, vx));
    memcpy(x, vx->data, (size_t)n * sizeof(double));
    bool variable = ts->variable;
    gs_vec_destroy(&vb);
    gs_vec_destroy(&vx);
    gs_trisolve_destroy(&ts);
    return variable;
}

static void exact_solve(const gs_csr *T, gs_uplo uplo, bool unit, const double *b, double *x)
{
    (void)solve_with("reference", T, uplo, unit, 0, NULL, false, b, x);
}

/* L (unit, strict) and U of ILU(0) of the 5-point Laplacian on nx x ny */
static void ilu0_laplace(gs_int nx, gs_int ny, gs_csr *L, gs_csr *U)
{
    gs_csr A = {0};
    gs_factor_opts o;
    gs_factor_info info;
    memset(&o, 0, sizeof o);
    memset(&info, 0, sizeof info);
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, L, U));
    GS_ASSERT_OK(gs_ilu_numeric(&A, &o, L, U, &info));
    assert_int_equal(info.nshifted, 0);
    gs_csr_free(&A);
}

/* ------------------------------------------------------------------------------------------------ */

/* As many sweeps as levels (and levels - 1) give the exact solution on every suite case. */
static void test_jacobi_exact_after_levels(void **state)
{
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    int lower_unit = 0, upper_nonunit = 0;
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        int levels = (int)gs_csr_levels(&c->T, c->uplo == GS_LOWER, NULL);
        double *b = NULL, *xr = NULL, *x = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        tri_rhs(n, (uint64_t)k + 11, b);
        exact_solve(&c->T, c->uplo, c->unit, b, xr);
        lower_unit += c->uplo == GS_LOWER && c->unit;
        upper_nonunit += c->uplo == GS_UPPER && !c->unit;

        for (int extra = 0; extra >= -1; extra--) {
            int sweeps = levels + extra > 0 ? levels + extra : 0;
            assert_false(solve_with("jacobi", &c->T, c->uplo, c->unit, sweeps, NULL, false, b, x));
            double e = gs_test_rel_diff(n, x, xr);
            if (!(e <= TRI_TOL))
                fprintf(stderr, "jacobi %s, %d sweeps (%d levels): relative error %.3e\n", c->name, sweeps, levels, e);
            assert_true(e <= TRI_TOL);
        }
        if (levels >= 3) { /* one sweep is not enough: the test above is not vacuous */
            (void)solve_with("jacobi", &c->T, c->uplo, c->unit, 1, NULL, false, b, x);
            double e = gs_test_rel_diff(n, x, xr);
            if (!(e > 1e-10)) fprintf(stderr, "jacobi %s: 1 sweep of %d levels already exact (%.3e)\n", c->name, levels, e);
            assert_true(e > 1e-10);
        }
        gs_free(&b);
        gs_free(&xr);
        gs_free(&x);
    }
    assert_true(lower_unit > 0 && upper_nonunit > 0);
    tri_suite_free(&S);
}

/* sweeps = 0: x = D^{-1} b, bit for bit (b_i * (1 / t_ii)); unit: x = b. */
static void test_jacobi_zero_sweeps(void **state)
{
    const gs_int n = 1111;
    for (int unit = 0; unit < 2; unit++) {
        gs_csr T = {0};
        GS_ASSERT_OK(tri_random(n, 4, GS_UPPER, unit != 0, 3, &T));
        double *b = NULL, *x = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        tri_rhs(n, 9, b);
        (void)solve_with("jacobi", &T, GS_UPPER, unit != 0, 0, NULL, false, b, x);
        for (gs_int i = 0; i < n; i++) {
            double expect = b[i];
            if (!unit) expect = b[i] * (1.0 / T.val[T.rowptr[i]]); /* upper: the diagonal comes first */
            assert_memory_equal(&x[i], &expect, sizeof(double));
        }
        gs_free(&b);
        gs_free(&x);
        gs_csr_free(&T);
    }
}

/* ILU(0) of a 2D Laplacian (n = 37 * 29 = 1073): the max-norm error falls strictly with every sweep,
 * within rho^s e_0, and is exact at the number of levels (nx + ny - 1). */
static void test_jacobi_monotone_on_ilu0(void **state)
{
    const gs_int nx = 37, ny = 29, n = nx * ny;
    gs_csr F[2] = {{0}, {0}};
    ilu0_laplace(nx, ny, &F[0], &F[1]);
    double *b = NULL, *xr = NULL, *x = NULL;
    GS_ASSERT_OK(GS_MALLOC(b, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(x, n));
    tri_rhs(n, 4, b);
    for (int s = 0; s < 2; s++) {
        gs_uplo uplo = (gs_uplo)s;
        bool unit = uplo == GS_LOWER;
        int levels = (int)gs_csr_levels(&F[s], uplo == GS_LOWER, NULL);
        assert_int_equal(levels, nx + ny - 1);
        double rho = tri_iteration_norm(&F[s], unit);
        assert_true(rho > 0.1 && rho < 1.0);
        exact_solve(&F[s], uplo, unit, b, xr);
        double scale = tri_max_abs(n, xr), e0 = 0.0, prev = INFINITY;
        for (int k = 0; k <= levels; k++) {
            (void)solve_with("jacobi", &F[s], uplo, unit, k, NULL, false, b, x);
            double e = tri_max_diff(n, x, xr);
            if (k == 0) e0 = e;
            assert_true(e <= pow(rho, k) * e0 * (1 + 1e-12) + 1e-14 * scale);
            if (prev > 1e-13 * scale) {
                if (!(e < prev)) fprintf(stderr, "side %d sweep %d: error %.3e after %.3e\n", s, k, e, prev);
                assert_true(e < prev);
            }
            prev = e;
        }
        assert_true(prev <= 1e-13 * scale);
        assert_true(e0 > 1e-3 * scale);
    }
    gs_free(&b);
    gs_free(&xr);
    gs_free(&x);
    gs_csr_free(&F[0]);
    gs_csr_free(&F[1]);
}

typedef struct async_case {
    const char *name;
    const gs_csr *T;
    gs_uplo uplo;
    bool unit;
    gs_csr own; /* owned factor (random cases) */
} async_case;

/* Block-asynchronous model: within rho^2 e_0 after 2 sweeps, exact after `levels` sweeps, in every
 * block order; deterministic = true is exactly jacobi. */
static void test_async_converges(void **state)
{
    const char *orders[] = {"dependency", "forward", "backward"};
    gs_csr F[2] = {{0}, {0}};
    ilu0_laplace(41, 23, &F[0], &F[1]);
    async_case cases[6];
    memset(cases, 0, sizeof cases);
    int nc = 0;
    cases[nc++] = (async_case){"ilu0 L", &F[0], GS_LOWER, true, {0}};
    cases[nc++] = (async_case){"ilu0 U", &F[1], GS_UPPER, false, {0}};
    static const gs_int sizes[] = {1000, 4099};
    for (int r = 0; r < 2; r++)
        for (int side = 0; side < 2; side++) {
            cases[nc].name = side ? "random U" : "random L";
            cases[nc].uplo = (gs_uplo)side;
            cases[nc].unit = side == 0;
            GS_ASSERT_OK(tri_random(sizes[r], 5, cases[nc].uplo, cases[nc].unit, 40 + (uint64_t)(2 * r + side),
                                    &cases[nc].own));
            cases[nc].T = &cases[nc].own;
            nc++;
        }
    for (int c = 0; c < nc; c++) {
        const gs_csr *T = cases[c].T;
        gs_int n = T->nrows;
        int levels = (int)gs_csr_levels(T, cases[c].uplo == GS_LOWER, NULL);
        double rho = tri_iteration_norm(T, cases[c].unit);
        assert_true(rho < 1.0);
        double *b = NULL, *xr = NULL, *x = NULL, *xj = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        GS_ASSERT_OK(GS_MALLOC(xj, n));
        tri_rhs(n, (uint64_t)c + 70, b);
        exact_solve(T, cases[c].uplo, cases[c].unit, b, xr);
        double scale = tri_max_abs(n, xr);
        (void)solve_with("jacobi", T, cases[c].uplo, cases[c].unit, 0, NULL, false, b, x);
        double e0 = tri_max_diff(n, x, xr);
        for (int o = 0; o < 3; o++) {
            /* 0 sweeps: the start vector D^{-1} b */
            assert_true(solve_with("async-jacobi", T, cases[c].uplo, cases[c].unit, 0, orders[o], false, b, x));
            assert_true(tri_max_diff(n, x, xr) == e0);
            /* loose: two sweeps */
            (void)solve_with("async-jacobi", T, cases[c].uplo, cases[c].unit, 2, orders[o], false, b, x);
            double e2 = tri_max_diff(n, x, xr);
            if (!(e2 <= rho * rho * e0 * (1 + 1e-12) + 1e-14 * scale))
                fprintf(stderr, "async %s %s: error %.3e after 2 sweeps, bound %.3e\n", cases[c].name, orders[o], e2,
                        rho * rho * e0);
            assert_true(e2 <= rho * rho * e0 * (1 + 1e-12) + 1e-14 * scale);
            assert_true(e2 < e0);
            /* tight: as many sweeps as levels */
            (void)solve_with("async-jacobi", T, cases[c].uplo, cases[c].unit, levels, orders[o], false, b, x);
            assert_true(gs_test_rel_diff(n, x, xr) <= TRI_TOL);
            /* deterministic = synchronous sweeps: bit-identical to jacobi */
            for (int sweeps = 1; sweeps <= 4; sweeps += 3) {
                assert_false(solve_with("async-jacobi", T, cases[c].uplo, cases[c].unit, sweeps, orders[o], true, b, x));
                (void)solve_with("jacobi", T, cases[c].uplo, cases[c].unit, sweeps, NULL, false, b, xj);
                assert_memory_equal(x, xj, (size_t)n * sizeof(double));
            }
        }
        /* in dependency order the sequential model uses this sweep's values: it beats Jacobi on the
         * Laplacian factors (nonnegative iteration matrices) */
        if (c < 2) {
            (void)solve_with("async-jacobi", T, cases[c].uplo, cases[c].unit, 3, "dependency", false, b, x);
            (void)solve_with("jacobi", T, cases[c].uplo, cases[c].unit, 3, NULL, false, b, xj);
            double ea = tri_max_diff(n, x, xr), ej = tri_max_diff(n, xj, xr);
            if (!(ea < 0.5 * ej)) fprintf(stderr, "%s: async %.3e vs jacobi %.3e after 3 sweeps\n", cases[c].name, ea, ej);
            assert_true(ea < 0.5 * ej);
        }
        gs_free(&b);
        gs_free(&xr);
        gs_free(&x);
        gs_free(&xj);
    }
    for (int c = 0; c < nc; c++) gs_csr_free(&cases[c].own);
    gs_csr_free(&F[0]);
    gs_csr_free(&F[1]);
}

/* A factor whose rows depend only on rows of EARLIER blocks of 256 (later blocks for U), n = 1000 (four
 * blocks, the last one partial): the sequential model in dependency order is block Gauss-Seidel with
 * exact diagonal blocks, hence exact after one sweep; against the dependency it is not. */
static void block_dependent(gs_int n, gs_uplo uplo, gs_csr *T)
{
    const gs_int R = 256;
    gs_int nnz = 0, cap = n * 4;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    uint64_t s = 12345;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        ri[nnz] = i;
        ci[nnz] = i;
        v[nnz++] = 2.0 + gs_test_rand(&s);
        gs_int blk = i / R, lo, hi; /* dependencies in columns [lo, hi) */
        if (uplo == GS_LOWER) {
            lo = 0;
            hi = blk * R;
        } else {
            lo = (blk + 1) * R < n ? (blk + 1) * R : n;
            hi = n;
        }
        if (hi <= lo) continue;
        for (int t = 0; t < 3; t++) {
            ri[nnz] = i;
            ci[nnz] = lo + (gs_int)(gs_test_rand(&s) * (double)(hi - lo));
            if (ci[nnz] >= hi) ci[nnz] = hi - 1;
            v[nnz++] = 0.5 * (gs_test_rand(&s) - 0.5);
        }
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, T));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static void test_async_block_order(void **state)
{
    const gs_int n = 1000;
    for (int side = 0; side < 2; side++) {
        gs_uplo uplo = (gs_uplo)side;
        gs_csr T = {0};
        block_dependent(n, uplo, &T);
        GS_ASSERT_OK(gs_trisolve_check_factor(&T, uplo, false));
        assert_true(gs_csr_levels(&T, uplo == GS_LOWER, NULL) >= 3);
        double *b = NULL, *xr = NULL, *x = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n));
        GS_ASSERT_OK(GS_MALLOC(xr, n));
        GS_ASSERT_OK(GS_MALLOC(x, n));
        tri_rhs(n, 31, b);
        exact_solve(&T, uplo, false, b, xr);
        /* along the dependency: "dependency" and the fixed order that matches the side */
        const char *along = uplo == GS_LOWER ? "forward" : "backward";
        const char *against = uplo == GS_LOWER ? "backward" : "forward";
        (void)solve_with("async-jacobi", &T, uplo, false, 1, "dependency", false, b, x);
        assert_true(gs_test_rel_diff(n, x, xr) <= TRI_TOL);
        (void)solve_with("async-jacobi", &T, uplo, false, 1, along, false, b, x);
        assert_true(gs_test_rel_diff(n, x, xr) <= TRI_TOL);
        (void)solve_with("async-jacobi", &T, uplo, false, 1, against, false, b, x);
        assert_true(gs_test_rel_diff(n, x, xr) > 1e-6);
        (void)solve_with("jacobi", &T, uplo, false, 1, NULL, false, b, x);
        assert_true(gs_test_rel_diff(n, x, xr) > 1e-6);
        gs_free(&b);
        gs_free(&xr);
        gs_free(&x);
        gs_csr_free(&T);
    }
}

/* Re-analysis with new values, vectors swapped between solves, view keys. */
static void test_reanalyse_and_view(void **state)
{
    const gs_int n = 2021;
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 5, GS_LOWER, false, 8, &T));
    int levels = (int)gs_csr_levels(&T, true, NULL);
    double *hb = NULL, *xr = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    tri_rhs(n, 2, hb);
    exact_solve(&T, GS_LOWER, false, hb, xr);

    const char *types[] = {"jacobi", "async-jacobi"};
    for (int t = 0; t < 2; t++) {
        gs_trisolve_params prm = tri_params(levels, "backward", false, false);
        gs_trisolve *ts = NULL;
        gs_vector *b = NULL, *x = NULL, *y = NULL;
        GS_ASSERT_OK(gs_vec_create(host, n, &b));
        GS_ASSERT_OK(gs_vec_create(host, n, &x));
        GS_ASSERT_OK(gs_vec_create(host, n, &y));
        memcpy(b->data, hb, (size_t)n * sizeof(double));
        GS_ASSERT_OK(gs_trisolve_create(types[t], host, GS_LOWER, false, &prm, &ts));
        assert_int_equal(ts->variable, t == 1);
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
        gs_test_poison(n, x->data);
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
        assert_true(gs_test_rel_diff(n, x->data, xr) <= TRI_TOL);
        gs_test_poison(n, y->data);
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, y));
        assert_true(gs_test_rel_diff(n, y->data, xr) <= TRI_TOL);
        GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, b), GS_ERR_ARG, "overlap");

        gs_csr T4 = {0};
        GS_ASSERT_OK(gs_csr_copy(&T, &T4));
        for (gs_int q = 0; q < T4.nnz; q++) T4.val[q] *= 4.0;
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &T4));
        gs_test_poison(n, x->data);
        GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
        for (gs_int i = 0; i < n; i++) y->data[i] = 0.25 * xr[i];
        assert_true(gs_test_rel_diff(n, x->data, y->data) <= TRI_TOL);
        gs_csr_free(&T4);

        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_trisolve_view(ts, rep, "trisolve.lower");
        const gs_report_entry *e = gs_report_find(rep, "trisolve.lower.type");
        assert_non_null(e);
        assert_string_equal(e->s, types[t]);
        e = gs_report_find(rep, "trisolve.lower.sweeps");
        assert_non_null(e);
        assert_int_equal(e->i, levels);
        e = gs_report_find(rep, "trisolve.lower.exact");
        assert_non_null(e);
        assert_int_equal(e->type, GS_REPORT_BOOL);
        assert_int_equal(e->i, 0);
        e = gs_report_find(rep, "trisolve.lower.deterministic");
        assert_non_null(e);
        assert_int_equal(e->type, GS_REPORT_BOOL);
        assert_int_equal(e->i, t == 0);
        e = gs_report_find(rep, "trisolve.lower.block_order");
        assert_non_null(e);
        if (t == 1) assert_string_equal(e->s, "backward");
        e = gs_report_find(rep, "trisolve.lower.rows_per_block");
        assert_non_null(e);
        assert_true(e->i >= 32 && e->i % 32 == 0);
        assert_non_null(gs_report_find(rep, "trisolve.lower.implementation"));
        assert_non_null(gs_report_find(rep, "trisolve.lower.analysis_time"));
        e = gs_report_find(rep, "trisolve.lower.warp_rows");
        assert_non_null(e);
        assert_true(e->i >= 1); /* the dense row n/2 */
        gs_report_destroy(&rep);

        gs_trisolve_destroy(&ts);
        gs_vec_destroy(&b);
        gs_vec_destroy(&x);
        gs_vec_destroy(&y);
    }
    gs_free(&hb);
    gs_free(&xr);
    gs_csr_free(&T);
}

/* The config path: trisolve.lower.* keys reach the solver, async-jacobi is variable. */
static void test_from_config(void **state)
{
    gs_config *cfg = NULL;
    gs_trisolve *ts = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=async-jacobi"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.sweeps=7"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.block_order=backward"));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &ts));
    assert_string_equal(ts->type, "async-jacobi");
    assert_int_equal(ts->prm.sweeps, 7);
    assert_string_equal(ts->prm.block_order, "backward");
    assert_true(ts->variable);
    gs_trisolve_destroy(&ts);
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.deterministic=true"));
    GS_ASSERT_OK(gs_trisolve_create_from_config(cfg, host, GS_LOWER, true, false, &ts));
    assert_false(ts->variable);
    gs_trisolve_destroy(&ts);
    gs_config_destroy(&cfg);
}

/* GMRES(30) / FGMRES(30) to rtol 1e-8 on A with pc; returns the status of gs_ksp_solve */
static gs_status krylov(const char *type, const gs_csr *A, gs_pc *pc, gs_solve_result *res)
{
    gs_int n = A->nrows;
    gs_matrix *M = NULL;
    gs_vector *b = NULL, *x = NULL;
    gs_ksp *ksp = NULL;
    gs_ksp_params prm;
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_ksp_params_from_config(cfg, &prm));
    gs_config_destroy(&cfg);
    prm.rtol = 1e-8;
    prm.restart = 30;
    prm.max_iterations = 1000;
    GS_ASSERT_OK(gs_ksp_create(type, host, &prm, &ksp));
    GS_ASSERT_OK(gs_mat_create(host, A, &M));
    GS_ASSERT_OK(gs_vec_create(host, n, &b));
    GS_ASSERT_OK(gs_vec_create(host, n, &x));
    GS_ASSERT_OK(gs_vec_set(b, 1.0));
    GS_ASSERT_OK(gs_vec_set(x, 0.0));
    memset(res, 0, sizeof *res);
    gs_status st = gs_ksp_solve(ksp, M, pc, b, x, res);
    if (st == GS_OK) {
        double rn = 0.0, bn = 0.0;
        GS_ASSERT_OK(gs_true_residual(M, b, x, &rn));
        GS_ASSERT_OK(gs_vec_nrm2(b, &bn));
        assert_true(rn <= 1e-7 * bn);
    }
    static char detail[4096]; /* the detail belongs to the solver: a copy that outlives it */
    snprintf(detail, sizeof detail, "%s", res->detail ? res->detail : "");
    res->detail = detail;
    gs_ksp_destroy(&ksp);
    gs_mat_destroy(&M);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    return st;
}

static void check_pc_variability(const char *pctype, const char *extra)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(33, 31, 1.0, &A)); /* n = 1023 */
    for (int det = 0; det < 2; det++) {
        gs_config *cfg = NULL;
        gs_pc *pc = NULL;
        GS_ASSERT_OK(gs_config_create(&cfg));
        GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=async-jacobi"));
        GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.sweeps=4"));
        GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=reference"));
        if (det) GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.deterministic=true"));
        if (extra) GS_ASSERT_OK(gs_config_set(cfg, extra));
        GS_ASSERT_OK(gs_pc_create(pctype, host, cfg, &pc));
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        assert_int_equal(pc->variable, det == 0);

        gs_solve_result res;
        if (!det) {
            GS_ASSERT_FAILS(krylov("gmres", &A, pc, &res), GS_ERR_CONFIG, "fgmres");
        } else {
            GS_ASSERT_OK(krylov("gmres", &A, pc, &res));
            assert_true(gs_reason_converged(res.reason));
        }
        GS_ASSERT_OK(krylov("fgmres", &A, pc, &res));
        if (!gs_reason_converged(res.reason))
            fprintf(stderr, "%s FGMRES: %s %s\n", pctype, gs_reason_name(res.reason), res.detail);
        assert_true(gs_reason_converged(res.reason));
        gs_pc_destroy(&pc);
        gs_config_destroy(&cfg);
    }
    gs_csr_free(&A);
}

static void test_pc_variable_ilu0(void **state) { check_pc_variability("ilu0", NULL); }
static void test_pc_variable_bilu(void **state) { check_pc_variability("bilu", "preconditioner.blocks=4"); }
static void test_pc_variable_ras(void **state) { check_pc_variability("ras", "preconditioner.blocks=4"); }

/* The lanes rule of the synchronous sweep (jacobi_ref.c), shared by the twin and the GPU: 2 lanes from
 * JACOBI_SUB_MIN_AVG = 8 off-diagonal entries per row on average, a thread per row below it and for the
 * asynchronous sweeps; the parameters force it (jacobi.lanes: 1, 2, 4, 8, 16; other values are refused at
 * creation) and the ELL copy (jacobi.ell). The twin with forced lanes still converges to the exact solve
 * after `levels` sweeps. */
static void test_row_lanes(void **state)
{
    int lanes = 0, ell = 0;
    gs_jacobi_params p = {0, GS_TS_AUTO};
    /* rows of at most 16 entries with little padding: the ELL copy (lanes 1) */
    gs_jacobi_sweep_shape(100, 1300, 13, false, &p, &lanes, &ell);
    assert_int_equal(ell, 13);
    assert_int_equal(lanes, 1);
    gs_jacobi_sweep_shape(100, 300, 3, false, &p, &lanes, &ell);
    assert_true(lanes == 1 && ell == 3);
    /* long-ish rows that do not fit the ELL copy (too wide, or too much padding): 2 lanes */
    gs_jacobi_sweep_shape(100, 1300, 40, false, &p, &lanes, &ell);
    assert_int_equal(ell, 0);
    assert_int_equal(lanes, 2);
    gs_jacobi_sweep_shape(100, 800, 16, false, &p, &lanes, &ell);
    assert_int_equal(ell, 0);
    assert_int_equal(lanes, 2);
    /* short rows that do not fit, asynchronous sweeps, empty factor: a thread per row, CSR */
    gs_jacobi_sweep_shape(100, 799, 20, false, &p, &lanes, &ell);
    assert_true(lanes == 1 && ell == 0);
    gs_jacobi_sweep_shape(100, 300, 5, false, &p, &lanes, &ell); /* too much padding */
    assert_true(lanes == 1 && ell == 0);
    gs_jacobi_sweep_shape(100, 5000, 50, true, &p, &lanes, &ell);
    assert_true(lanes == 1 && ell == 0);
    gs_jacobi_sweep_shape(0, 0, 0, false, &p, &lanes, &ell);
    assert_true(lanes == 1 && ell == 0);
    /* forced */
    p.lanes = 16;
    gs_jacobi_sweep_shape(100, 1300, 13, false, &p, &lanes, &ell);
    assert_true(lanes == 16 && ell == 0);
    gs_jacobi_sweep_shape(100, 10, 1, true, &p, &lanes, &ell);
    assert_int_equal(lanes, 1);
    p.lanes = 0;
    p.ell = GS_TS_ON;
    gs_jacobi_sweep_shape(100, 300, 5, false, &p, &lanes, &ell); /* forced despite the padding */
    assert_true(lanes == 1 && ell == 5);
    gs_jacobi_sweep_shape(100, 300, 17, false, &p, &lanes, &ell);
    assert_true(ell == 0);
    p.ell = GS_TS_OFF;
    gs_jacobi_sweep_shape(100, 1300, 13, false, &p, &lanes, &ell);
    assert_true(lanes == 2 && ell == 0);
    /* bad values are refused when the solver is created */
    const int bad[] = {3, 32, -1};
    for (int k = 0; k < 3; k++) {
        gs_trisolve_params prm = tri_params(1, NULL, false, false);
        gs_trisolve *ts = NULL;
        prm.jacobi.lanes = bad[k];
        GS_ASSERT_FAILS(gs_trisolve_create("jacobi", host, GS_LOWER, false, &prm, &ts), GS_ERR_ARG, "jacobi.lanes");
        assert_null(ts);
    }
    /* the twin with 4 and 8 lanes per row: exact after `levels` sweeps on a random factor (a dense row) */
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(1000, 12, GS_LOWER, false, 7, &T));
    gs_int levels = gs_csr_levels(&T, true, NULL);
    double *b = NULL, *x = NULL, *xr = NULL;
    GS_ASSERT_OK(GS_MALLOC(b, T.nrows));
    GS_ASSERT_OK(GS_MALLOC(x, T.nrows));
    GS_ASSERT_OK(GS_MALLOC(xr, T.nrows));
    tri_rhs(T.nrows, 11, b);
    exact_solve(&T, GS_LOWER, false, b, xr);
    const int forced[] = {4, 8};
    for (int k = 0; k < 2; k++) {
        forced_lanes = forced[k];
        (void)solve_with("jacobi", &T, GS_LOWER, false, (int)levels, NULL, false, b, x);
        assert_true(gs_test_rel_diff(T.nrows, x, xr) <= TRI_TOL);
    }
    forced_lanes = 0;
    gs_free(&b);
    gs_free(&x);
    gs_free(&xr);
    gs_csr_free(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_lanes),
        cmocka_unit_test(test_jacobi_exact_after_levels),
        cmocka_unit_test(test_jacobi_zero_sweeps),
        cmocka_unit_test(test_jacobi_monotone_on_ilu0),
        cmocka_unit_test(test_async_converges),
        cmocka_unit_test(test_async_block_order),
        cmocka_unit_test(test_reanalyse_and_view),
        cmocka_unit_test(test_from_config),
        cmocka_unit_test(test_pc_variable_ilu0),
        cmocka_unit_test(test_pc_variable_bilu),
        cmocka_unit_test(test_pc_variable_ras),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
