/* The host level-set solver (levelset_ref.c) against the reference on the whole case suite, and the
 * level-set plan's invariants: levels respect every dependency, rows of a level ascend, the HEC
 * arrays hold exactly the factor's off-diagonal entries, chains partition the levels as specified.
 * Also: allocation failures at every point of the plan build are reported and leak nothing. */
#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/trisolve_impl.h"

static void check_plan(const tri_case *c, const gs_ls_plan *P, gs_int chain_rows)
{
    const gs_csr *T = &c->T;
    gs_int n = T->nrows;
    gs_int *pos = NULL, *lev = NULL;
    GS_ASSERT_OK(GS_MALLOC(pos, n));
    GS_ASSERT_OK(GS_MALLOC(lev, n));
    assert_int_equal(P->n, n);
    assert_int_equal(P->nlevels, gs_csr_levels(T, c->uplo == GS_LOWER, NULL));

    /* levels and permutation */
    assert_int_equal(P->level_ptr[0], 0);
    assert_int_equal(P->level_ptr[P->nlevels], n);
    for (gs_int i = 0; i < n; i++) pos[i] = -1;
    for (gs_int l = 0; l < P->nlevels; l++) {
        assert_true(P->level_ptr[l + 1] > P->level_ptr[l]); /* no empty level */
        for (gs_int p = P->level_ptr[l]; p < P->level_ptr[l + 1]; p++) {
            gs_int i = P->perm[p];
            assert_true(i >= 0 && i < n);
            assert_int_equal(pos[i], -1);
            pos[i] = p;
            lev[i] = l;
            if (p > P->level_ptr[l]) assert_true(P->perm[p - 1] < i);
        }
    }
    /* every dependency in an earlier level, and the level is the earliest possible */
    for (gs_int i = 0; i < n; i++) {
        gs_int need = 0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            gs_int j = T->colind[q];
            if (j == i) continue;
            assert_true(lev[j] < lev[i]);
            if (lev[j] + 1 > need) need = lev[j] + 1;
        }
        assert_int_equal(lev[i], need);
    }

    /* HEC: ELL slots then remainder give the row's off-diagonal entries in order; padding only after */
    gs_int nnz_off = 0;
    for (gs_int p = 0; p < n; p++) {
        gs_int i = P->perm[p], k = 0;
        double diag = 1.0;
        bool padded = false;
        gs_int r = P->rem_ptr[p];
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            if (T->colind[q] == i) {
                diag = T->val[q];
                continue;
            }
            nnz_off++;
            if (k < P->ell_width) {
                size_t s = (size_t)k * (size_t)n + (size_t)p;
                assert_int_equal(P->ell_col[s], T->colind[q]);
                assert_true(P->ell_val[s] == T->val[q]);
            } else {
                assert_true(r < P->rem_ptr[p + 1]);
                assert_int_equal(P->rem_col[r], T->colind[q]);
                assert_true(P->rem_val[r] == T->val[q]);
                r++;
            }
            k++;
        }
        assert_int_equal(r, P->rem_ptr[p + 1]);
        for (gs_int kk = k; kk < P->ell_width; kk++) {
            size_t s = (size_t)kk * (size_t)n + (size_t)p;
            assert_int_equal(P->ell_col[s], -1);
            padded = true;
        }
        (void)padded;
        assert_true(P->dinv[p] == (c->unit ? 1.0 : 1.0 / diag));
    }
    assert_int_equal(P->nnz_offdiag, nnz_off);
    assert_int_equal(P->rem_nnz, P->rem_ptr[n]);
    /* ELL width bounded: at most 2 * nnz_off + n padded slots */
    assert_true((double)P->ell_width * n <= 2.0 * nnz_off + n);

    /* chains: consecutive, covering all levels; single = only thin levels and maximal; multi = one wide */
    assert_int_equal(P->chain_ptr[0], 0);
    assert_int_equal(P->chain_ptr[P->nchains], P->nlevels);
    gs_int singles = 0, multis = 0;
    for (gs_int ch = 0; ch < P->nchains; ch++) {
        gs_int l0 = P->chain_ptr[ch], l1 = P->chain_ptr[ch + 1], widest = 0;
        assert_true(l1 > l0);
        for (gs_int l = l0; l < l1; l++) {
            gs_int rows = P->level_ptr[l + 1] - P->level_ptr[l];
            if (rows > widest) widest = rows;
        }
        assert_int_equal(P->chain_max_rows[ch], widest);
        if (P->chain_single[ch]) {
            singles++;
            assert_true(widest <= chain_rows);
            if (ch > 0) assert_false(P->chain_single[ch - 1]); /* maximal */
        } else {
            multis++;
            assert_int_equal(l1 - l0, 1);
            assert_true(widest > chain_rows);
        }
    }
    assert_int_equal(P->single_chains, singles);
    assert_int_equal(P->multi_chains, multis);
    gs_free(&pos);
    gs_free(&lev);
}

static void test_plan_invariants(void **state)
{
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        static const gs_int chain_rows[3] = {GS_LS_CHAIN_ROWS, 1, 1000000}; /* 1000000: wider than every case */
        for (int r = 0; r < 3; r++) {
            gs_ls_plan P;
            GS_ASSERT_OK(gs_ls_plan_build(&c->T, c->uplo, c->unit, chain_rows[r], &P));
            check_plan(c, &P, chain_rows[r]);
            if (chain_rows[r] == 1000000) assert_int_equal(P.nchains, P.nlevels > 0 ? 1 : 0);
            /* expected structure of the special cases */
            if (chain_rows[r] == GS_LS_CHAIN_ROWS) {
                if (strncmp(c->name, "bidiagonal5000/", 15) == 0) {
                    assert_int_equal(P.nlevels, 5000);
                    assert_int_equal(P.nchains, 1);
                    assert_int_equal(P.single_chains, 1);
                    assert_int_equal(P.max_level_rows, 1);
                }
                if (strncmp(c->name, "diagonal1000/", 13) == 0 || strncmp(c->name, "identity777/", 12) == 0) {
                    assert_int_equal(P.nlevels, 1);
                    assert_int_equal(P.multi_chains, 1);
                    assert_int_equal(P.ell_width, 0);
                }
                if (strncmp(c->name, "identity33/", 11) == 0) {
                    assert_int_equal(P.nlevels, 1);
                    assert_int_equal(P.single_chains, 1);
                }
                if (strncmp(c->name, "mixed7001/", 10) == 0) {
                    assert_true(P.single_chains >= 1);
                    assert_true(P.multi_chains >= 2);
                    assert_true(P.nlevels > 1000);
                }
            }
            gs_ls_plan_free(&P);
            assert_null(P.perm);
        }
    }
    tri_suite_free(&S);
}

/* levelset (host backend) vs reference, through the public API; x poisoned, solved twice. */
static void test_matches_reference(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_int n = c->T.nrows;
        gs_trisolve *ref = NULL, *ls = NULL;
        gs_vector *b = NULL, *xr = NULL, *x = NULL;
        GS_ASSERT_OK(gs_vec_create(be, n, &b));
        GS_ASSERT_OK(gs_vec_create(be, n, &xr));
        GS_ASSERT_OK(gs_vec_create(be, n, &x));
        tri_rhs(n, (uint64_t)k + 11, b->data);
        GS_ASSERT_OK(gs_trisolve_create("reference", be, c->uplo, c->unit, NULL, &ref));
        GS_ASSERT_OK(gs_trisolve_create("levelset", be, c->uplo, c->unit, NULL, &ls));
        GS_ASSERT_OK(gs_trisolve_analyse(ref, &c->T));
        GS_ASSERT_OK(gs_trisolve_analyse(ls, &c->T));
        gs_test_poison(n, xr->data);
        GS_ASSERT_OK(gs_trisolve_solve(ref, b, xr));
        for (int rep = 0; rep < 2; rep++) {
            gs_test_poison(n, x->data);
            GS_ASSERT_OK(gs_trisolve_solve(ls, b, x));
            double e = gs_test_rel_diff(n, x->data, xr->data);
            if (!(e <= TRI_TOL)) fprintf(stderr, "%s: levelset vs reference %.3e\n", c->name, e);
            assert_true(e <= TRI_TOL);
        }
        gs_trisolve_destroy(&ref);
        gs_trisolve_destroy(&ls);
        gs_vec_destroy(&b);
        gs_vec_destroy(&xr);
        gs_vec_destroy(&x);
    }
    tri_suite_free(&S);
    gs_backend_destroy(&be);
}

/* Re-analysis with new values (same pattern) and with a new pattern replaces the old plan. */
static void test_reanalyse(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    tri_check_reanalyse(be, "levelset", GS_LOWER, 1e-14);
    gs_backend_destroy(&be);
}

/* The k-th allocation of analyse fails, for every k: GS_ERR_MEM, no crash; the solver still works
 * after a successful analyse. (Leaks show up in the sanitizer build.) */
static void test_allocation_failures(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(300, 4, GS_UPPER, false, 9, &T));
    static const char *const types[] = {"levelset", "reference", "auto"};
    for (int t = 0; t < 3; t++) tri_check_alloc_failures(be, types[t], &T, GS_UPPER, false, 1);
    gs_csr_free(&T);
    gs_backend_destroy(&be);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_invariants),
        cmocka_unit_test(test_matches_reference),
        cmocka_unit_test(test_reanalyse),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
