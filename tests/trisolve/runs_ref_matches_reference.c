/* The run schedule of the sync-free solver on the host (syncfree_ref.c, the twin of the GPU analysis and
 * run kernel) on the whole case suite: the plan's invariants checked from their definitions (runs are
 * cut chains of linked rows, run levels, order, positions and holes, the HEC layout holds every entry
 * in CSR order), its solve bit-identical to the level-set plan's solve (the same arithmetic) and equal
 * to the reference within TRI_TOL; one row per run gives the level-set plan's levels; on PDE factors
 * in natural order the run levels are fewer than the row levels. Warp runs (32 rows, the scan): the
 * stricter link, run-major positions, no row reading its own run but its predecessor, the scan's solve
 * within TRI_TOL of the reference. Also the schedule rule (what the parameters force: syncfree_rules_test.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

static gs_backend *host;

static int setup(void **state) { return gs_backend_create("host", 0, &host) == GS_OK ? 0 : -1; }

static int teardown(void **state)
{
    gs_backend_destroy(&host);
    return 0;
}

static gs_int row_of(gs_int n, gs_uplo uplo, gs_int t) { return uplo == GS_LOWER ? t : n - 1 - t; }

static bool reads(const gs_csr *T, gs_int i, gs_int j)
{
    for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
        if (T->colind[q] == j) return true;
    return false;
}

/* Whether the row at dependency index t continues a run of K rows: it reads the row before it, and for warp
 * runs (K = GS_SF_WRUN_ROWS) every other entry lies at least K rows back. */
static bool continues(const gs_csr *T, gs_uplo uplo, gs_int t, gs_int K)
{
    gs_int n = T->nrows, i = row_of(n, uplo, t), pred = uplo == GS_LOWER ? i - 1 : i + 1;
    if (t == 0 || !reads(T, i, pred)) return false;
    if (K != GS_SF_WRUN_ROWS) return true;
    for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
        gs_int j = T->colind[q], tj = uplo == GS_LOWER ? j : n - 1 - j;
        if (j != i && j != pred && t - tj < K) return false;
    }
    return true;
}

/* Every invariant of P, from the definitions in trisolve_impl.h. */
static void check_plan(const tri_case *c, const gs_sf_runs_plan *P, gs_int K, gs_int max_width)
{
    const bool warp = K == GS_SF_WRUN_ROWS;
    const gs_csr *T = &c->T;
    gs_int n = T->nrows;
    gs_int *run_of = NULL, *pos_of = NULL, *seen = NULL;
    GS_ASSERT_OK(GS_MALLOC(run_of, n > 0 ? n : 1));
    GS_ASSERT_OK(GS_MALLOC(pos_of, n > 0 ? n : 1));
    GS_ASSERT_OK(GS_CALLOC(seen, n > 0 ? n : 1));
    assert_int_equal(P->n, n);
    assert_int_equal(P->npos, K * P->nruns);
    assert_true(P->ell_width <= max_width);

    /* runs: contiguous dependency indices from 0 to n, at most K rows, each row after the first linked */
    assert_int_equal(P->run_first[0], 0);
    assert_int_equal(P->run_first[P->nruns], n);
    long long linked = 0;
    for (gs_int t = 1; t < n; t++) /* warp runs: the strict link */
        if (continues(T, c->uplo, t, K)) linked++;
    assert_int_equal(P->linked_rows, linked);
    for (gs_int r = 0; r < P->nruns; r++) {
        gs_int t0 = P->run_first[r], t1 = P->run_first[r + 1];
        assert_true(t1 > t0 && t1 - t0 <= K);
        for (gs_int t = t0; t < t1; t++) {
            gs_int i = row_of(n, c->uplo, t);
            run_of[i] = r;
            if (t > t0) assert_true(continues(T, c->uplo, t, K));
        }
        /* a run ends where the next row does not continue it or the run is full */
        if (t1 < n && t1 - t0 < K) assert_false(continues(T, c->uplo, t1, K));
    }
    /* run levels: 1 + max level of the runs read outside the run */
    gs_int nlevels = 0;
    for (gs_int r = 0; r < P->nruns; r++) {
        gs_int lv = 0;
        for (gs_int t = P->run_first[r]; t < P->run_first[r + 1]; t++) {
            gs_int i = row_of(n, c->uplo, t);
            for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
                gs_int j = T->colind[q];
                if (j == i) continue;
                if (run_of[j] == r) { /* warp runs: only the predecessor inside the run */
                    if (warp) assert_true(t > P->run_first[r] && j == (c->uplo == GS_LOWER ? i - 1 : i + 1));
                    continue;
                }
                assert_true(run_of[j] < r); /* runs in index order are in dependency order */
                if (P->run_level[run_of[j]] + 1 > lv) lv = P->run_level[run_of[j]] + 1;
            }
        }
        assert_int_equal(P->run_level[r], lv);
        if (lv + 1 > nlevels) nlevels = lv + 1;
    }
    assert_int_equal(P->nlevels, nlevels);
    /* order: by level, then run index; level_ptr marks the level boundaries */
    for (gs_int rp = 0; rp < P->nruns; rp++) {
        gs_int r = P->order[rp], lv = P->run_level[r];
        assert_true(P->level_ptr[lv] <= rp && rp < P->level_ptr[lv + 1]);
        if (rp > 0) {
            gs_int r0 = P->order[rp - 1];
            assert_true(P->run_level[r0] < lv || (P->run_level[r0] == lv && r0 < r));
        }
    }
    /* positions: the k-th row of the run at rp at k * nruns + rp (warp runs: rp * K + k), holes past the
     * run's end */
    for (gs_int rp = 0; rp < P->nruns; rp++) {
        gs_int r = P->order[rp], len = P->run_first[r + 1] - P->run_first[r];
        for (gs_int k = 0; k < K; k++) {
            gs_int p = warp ? rp * K + k : k * P->nruns + rp, i = P->perm[p];
            if (k >= len) {
                assert_int_equal(i, -1);
                continue;
            }
            assert_int_equal(i, row_of(n, c->uplo, P->run_first[r] + k));
            assert_int_equal(seen[i], 0);
            seen[i] = 1;
            pos_of[i] = p;
        }
    }
    /* HEC layout: each row's off-diagonal entries in CSR order, as positions; dinv */
    size_t np = (size_t)P->npos;
    for (gs_int p = 0; p < P->npos; p++) {
        gs_int i = P->perm[p], k = 0, rq = P->rem_ptr[p];
        if (i < 0) {
            for (gs_int e = 0; e < P->ell_width; e++) assert_int_equal(P->ell_col[(size_t)e * np + (size_t)p], -1);
            assert_int_equal(P->rem_ptr[p + 1], P->rem_ptr[p]);
            continue;
        }
        double diag = 1.0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            if (T->colind[q] == i) {
                diag = T->val[q];
                continue;
            }
            gs_int col;
            double val;
            if (k < P->ell_width) {
                col = P->ell_col[(size_t)k * np + (size_t)p];
                val = P->ell_val[(size_t)k * np + (size_t)p];
            } else {
                assert_true(rq < P->rem_ptr[p + 1]);
                col = P->rem_col[rq];
                val = P->rem_val[rq++];
            }
            assert_int_equal(col, pos_of[T->colind[q]]);
            assert_true(val == T->val[q]);
            k++;
        }
        for (; k < P->ell_width; k++) assert_int_equal(P->ell_col[(size_t)k * np + (size_t)p], -1);
        assert_int_equal(rq, P->rem_ptr[p + 1]);
        assert_true(P->dinv[p] == (c->unit ? 1.0 : 1.0 / diag));
    }
    gs_free(&run_of);
    gs_free(&pos_of);
    gs_free(&seen);
}

static void test_suite(void **state)
{
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        double *b = NULL, *xr = NULL, *xl = NULL, *xs = NULL;
        GS_ASSERT_OK(GS_MALLOC(b, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(xr, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(xl, n > 0 ? n : 1));
        GS_ASSERT_OK(GS_MALLOC(xs, n > 0 ? n : 1));
        tri_rhs(n, (uint64_t)k + 11, b);
        gs_trisolve_reference_host(&c->T, c->uplo, c->unit, b, xr);
        gs_ls_plan L;
        GS_ASSERT_OK(gs_ls_plan_build(&c->T, c->uplo, c->unit, GS_LS_CHAIN_ROWS, &L));
        gs_ls_plan_solve_host(&L, b, xl);
        const gs_int widths[2] = {GS_SF_RUN_ELL, 1};
        for (int w = 0; w < 2; w++) {
            gs_sf_runs_plan P;
            GS_ASSERT_OK(gs_sf_runs_plan_build(&c->T, c->uplo, c->unit, GS_SF_RUN_ROWS, widths[w], &P));
            check_plan(c, &P, GS_SF_RUN_ROWS, widths[w]);
            gs_test_poison(n, xs);
            GS_ASSERT_OK(gs_sf_runs_solve_host(&P, b, xs));
            /* the same arithmetic as the level-set plan: bit-identical */
            if (n > 0) assert_memory_equal(xs, xl, (size_t)n * sizeof(double));
            double e = gs_test_rel_diff(n, xs, xr);
            if (!(e <= TRI_TOL)) fprintf(stderr, "runs %s: relative error %.3e\n", c->name, e);
            assert_true(e <= TRI_TOL);
            gs_sf_runs_plan_free(&P);
        }
        /* warp runs: the scan's arithmetic, within TRI_TOL of the reference (ELL widths 16 and 1) */
        for (int w = 0; w < 2; w++) {
            const gs_int width = w == 0 ? 16 : 1;
            gs_sf_runs_plan P;
            GS_ASSERT_OK(gs_sf_runs_plan_build(&c->T, c->uplo, c->unit, GS_SF_WRUN_ROWS, width, &P));
            check_plan(c, &P, GS_SF_WRUN_ROWS, width);
            gs_test_poison(n, xs);
            GS_ASSERT_OK(gs_sf_runs_solve_host(&P, b, xs));
            double e = gs_test_rel_diff(n, xs, xr);
            if (!(e <= TRI_TOL)) fprintf(stderr, "warp runs %s: relative error %.3e\n", c->name, e);
            assert_true(e <= TRI_TOL);
            gs_sf_runs_plan_free(&P);
        }
        /* one row per run: the level-set plan's levels and level sizes */
        gs_sf_runs_plan P1;
        GS_ASSERT_OK(gs_sf_runs_plan_build(&c->T, c->uplo, c->unit, 1, GS_SF_RUN_ELL, &P1));
        check_plan(c, &P1, 1, GS_SF_RUN_ELL);
        assert_int_equal(P1.nlevels, L.nlevels);
        assert_int_equal(P1.nruns, n);
        for (gs_int l = 0; l <= L.nlevels; l++) assert_int_equal(P1.level_ptr[l], L.level_ptr[l]);
        gs_sf_runs_plan_free(&P1);
        gs_ls_plan_free(&L);
        gs_free(&b);
        gs_free(&xr);
        gs_free(&xl);
        gs_free(&xs);
    }
    tri_suite_free(&S);
}

/* Natural-order PDE triangles: every row but the first of each grid line is linked, so runs of 4 cut the
 * levels; the rule's branches (warp runs or not) on these statistics and on a random factor's. */
static void test_pde_runs_and_rule(void **state)
{
    gs_csr A = {0}, T = {0};
    const gs_int m = 40; /* two warp runs per grid line */
    GS_ASSERT_OK(gs_gen_poisson3d(m, m, m, &A));
    for (int side = 0; side < 2; side++) {
        GS_ASSERT_OK(tri_from_matrix(&A, (gs_uplo)side, side == 0, &T));
        gs_ls_plan L;
        gs_sf_runs_plan P;
        GS_ASSERT_OK(gs_ls_plan_build(&T, (gs_uplo)side, side == 0, GS_LS_CHAIN_ROWS, &L));
        GS_ASSERT_OK(gs_sf_runs_plan_build(&T, (gs_uplo)side, side == 0, GS_SF_RUN_ROWS, GS_SF_RUN_ELL, &P));
        assert_int_equal(L.nlevels, 3 * (m - 1) + 1);
        /* chains are the grid lines (m rows, m - 1 links each): runs of 4 cut a line into ceil(m/4) */
        assert_int_equal(P.linked_rows, (long long)m * m * (m - 1));
        assert_int_equal(P.nruns, m * m * ((m + GS_SF_RUN_ROWS - 1) / GS_SF_RUN_ROWS));
        assert_true(P.nlevels < L.nlevels);
        assert_int_equal(P.max_row_length, 3);
        /* warp runs: a grid line of m rows in ceil(m/32) runs; run levels (s, j, k) -> s + j + k */
        gs_sf_runs_plan PW;
        GS_ASSERT_OK(gs_sf_runs_plan_build(&T, (gs_uplo)side, side == 0, GS_SF_WRUN_ROWS, 16, &PW));
        const gs_int per_line = (m + GS_SF_WRUN_ROWS - 1) / GS_SF_WRUN_ROWS;
        assert_int_equal(PW.nruns, m * m * per_line);
        assert_int_equal(PW.nlevels, per_line - 1 + 2 * (m - 1) + 1);
        {
            double *bb = NULL, *xw = NULL, *xr = NULL;
            GS_ASSERT_OK(GS_MALLOC(bb, T.nrows));
            GS_ASSERT_OK(GS_MALLOC(xw, T.nrows));
            GS_ASSERT_OK(GS_MALLOC(xr, T.nrows));
            tri_rhs(T.nrows, 5, bb);
            gs_trisolve_reference_host(&T, (gs_uplo)side, side == 0, bb, xr);
            gs_test_poison(T.nrows, xw);
            GS_ASSERT_OK(gs_sf_runs_solve_host(&PW, bb, xw));
            assert_true(gs_test_rel_diff(T.nrows, xw, xr) <= TRI_TOL);
            gs_free(&bb);
            gs_free(&xw);
            gs_free(&xr);
        }
        /* the rule from the strict links: every row of a grid line but its first when the line's other
         * neighbours lie at least 32 rows back (m >= 32), none otherwise */
        assert_int_equal(PW.linked_rows, m >= GS_SF_WRUN_ROWS ? (long long)m * m * (m - 1) : 0);
        gs_ts_row_stats rs = {T.nrows, PW.max_row_length, (long long)(T.nnz - (side == 0 ? 0 : T.nrows)), PW.linked_rows};
        const gs_int mm = gs_ts_syncfree_merge_rule(T.nrows, L.nlevels, rs.max_row_length);
        /* this grid's levels are thin (m = 40: n / levels ~ 540, merged at m = 16; m = 20: < 64 levels) */
        assert_int_equal(gs_ts_syncfree_rule(&rs, L.nlevels, mm), 1);
        /* wide levels (merging by 2 at most, as 100^3): warp runs where the lines are linked */
        assert_int_equal(gs_ts_syncfree_rule(&rs, 298, 2), m >= GS_SF_WRUN_ROWS ? GS_SF_WRUN_ROWS : 1);
        gs_sf_runs_plan_free(&PW);
        gs_sf_runs_plan_free(&P);
        gs_ls_plan_free(&L);
        gs_csr_free(&T);
    }
    gs_csr_free(&A);

    GS_ASSERT_OK(tri_random(1000, 5, GS_LOWER, false, 3, &T));
    gs_sf_runs_plan P;
    GS_ASSERT_OK(gs_sf_runs_plan_build(&T, GS_LOWER, false, GS_SF_RUN_ROWS, GS_SF_RUN_ELL, &P));
    gs_ts_row_stats rs = {T.nrows, P.max_row_length, (long long)(T.nnz - T.nrows), T.nrows - 1};
    assert_true(P.max_row_length > GS_SF_WRUN_MAX_ROW);
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 1), 1); /* a dense row: not warp runs */
    rs.max_row_length = GS_SF_WRUN_MAX_ROW;
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 1), GS_SF_WRUN_ROWS);
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 2), GS_SF_WRUN_ROWS);
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 4), 1);  /* merging pays more */
    assert_int_equal(gs_ts_syncfree_rule(&rs, 63, 1), 1);   /* a short critical path */
    rs.linked_rows = (long long)(GS_SF_WRUN_MIN_LINKED * T.nrows) - 1;
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 1), 1); /* too few linked rows: short runs, many holes */
    rs.linked_rows = (long long)(GS_SF_WRUN_MIN_LINKED * T.nrows) + 1;
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 1), GS_SF_WRUN_ROWS);
    rs.n = 0;
    assert_int_equal(gs_ts_syncfree_rule(&rs, 100, 1), 1);
    gs_sf_runs_plan_free(&P);
    gs_csr_free(&T);
}

/* Bad arguments of the plan builder; allocation failures leave nothing behind (k-th allocation fails). */
static void test_errors_and_alloc_failures(void **state)
{
    gs_csr T = {0};
    gs_sf_runs_plan P;
    GS_ASSERT_OK(tri_random(300, 4, GS_UPPER, true, 9, &T));
    GS_ASSERT_FAILS(gs_sf_runs_plan_build(&T, GS_UPPER, true, 0, 4, &P), GS_ERR_ARG, "run_rows is 0");
    GS_ASSERT_FAILS(gs_sf_runs_plan_build(&T, GS_UPPER, true, 4, 33, &P), GS_ERR_ARG, "ELL width limit 33");
    int failures = 0;
    for (long k = 1; k < 100; k++) {
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_sf_runs_plan_build(&T, GS_UPPER, true, GS_SF_RUN_ROWS, GS_SF_RUN_ELL, &P);
        gs_alloc_fail_at(0);
        if (st == GS_OK) break;
        assert_int_equal(st, GS_ERR_MEM);
        assert_null(P.perm);
        assert_null(P.run_first);
        failures++;
    }
    gs_error_clear();
    assert_true(failures >= 5);
    double b[300], x[300], xr[300];
    tri_rhs(300, 1, b);
    gs_trisolve_reference_host(&T, GS_UPPER, true, b, xr);
    GS_ASSERT_OK(gs_sf_runs_solve_host(&P, b, x));
    assert_true(gs_test_rel_diff(300, x, xr) <= TRI_TOL);
    gs_sf_runs_plan_free(&P);
    gs_csr_free(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_pde_runs_and_rule),
        cmocka_unit_test(test_errors_and_alloc_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
