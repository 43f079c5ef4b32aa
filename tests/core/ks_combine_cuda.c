/* The cuda fused CG across processes (gs_backend_cuda_ks_combine) in one process, with gathers that
 * stand in for other processes: (a) three "processes" where the others contribute zeros, so every total
 * is this process's exactly: records and vectors bitwise those of the plain fused state; (b) two
 * identical "processes", so every total doubles exactly: with r'z started doubled, alpha and beta are
 * bitwise the plain ones, the vectors too, and ||r|| is sqrt(2) times; two gathers per iteration (r'r
 * travels with r'z), and r'r sent alone when no r'z follows; (c) a stop (p'Ap <= 0) taken on the gathered
 * total leaves x and r untouched, and a convergence found by r'r skips the r'z step that came with it;
 * (d) argument errors. Sizes 31, 33, 1000, 100003 (not
 * multiples of 32, larger than a warp); outputs are the plain run's own, compared after the same steps. */
#include <math.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/mem.h"
#include "testutil.h"

#include "backend_twin.h"

/* A gather standing in for nranks processes: this process is rank `me`; the others send zeros (zeros:
 * a device vector of them) or, with twice, the same part as this one. Enqueued on the backend's stream
 * (gs_vec_copy is stream-ordered there). */
typedef struct fake_ranks {
    int nranks, me;
    bool twice;
    gs_vector *zeros; /* 2 zeros */
    int calls, values;
} fake_ranks;

static gs_status fake_gather(void *ctx, const double *send, double *recv, size_t count, void *stream)
{
    fake_ranks *f = ctx;
    assert_ptr_equal(stream, gs_backend_cuda_stream(C));
    assert_true(count == 1 || count == 2);
    f->calls++;
    f->values += (int)count;
    gs_vector src = {(gs_int)count, (double *)send, C, false};
    gs_vector zeros = {(gs_int)count, f->zeros->data, C, false};
    for (int r = 0; r < f->nranks; r++) {
        gs_vector dst = {(gs_int)count, recv + (size_t)r * count, C, false};
        GS_CALL(gs_vec_copy(r == f->me || f->twice ? &src : &zeros, &dst));
    }
    return GS_OK;
}

/* A fused CG state on the cuda backend (combined across the fake processes f unless NULL). */
static void side_make(ks_side *S, gs_int n, double *const data[5], fake_ranks *f)
{
    ks_side_make(S, C, n, data);
    if (f) GS_ASSERT_OK(gs_backend_cuda_ks_combine(S->ks, f->nranks, fake_gather, f));
}

/* Iterations it and it + 1 of fused CG (with or without z), q = p + small: p'q > 0. */
static void two_iterations(ks_side *S, int it, bool with_pc, const gs_ks_start *start, gs_krec rec[2])
{
    GS_ASSERT_OK(gs_ks_begin(S->ks, it, start));
    for (int k = 0; k < 2; k++) {
        GS_ASSERT_OK(gs_ks_cg_pq(S->ks, it + k, S->p, S->q));
        GS_ASSERT_OK(gs_ks_cg_update(S->ks, it + k, S->x, S->r, S->p, S->q, !with_pc));
        if (with_pc) GS_ASSERT_OK(gs_ks_cg_rz(S->ks, it + k, S->r, S->z));
        GS_ASSERT_OK(gs_ks_cg_direction(S->ks, it + k, with_pc ? S->z : S->r, S->p));
        GS_ASSERT_OK(gs_ks_mark(S->ks, it + k));
    }
    GS_ASSERT_OK(gs_ks_record(S->ks, it, &rec[0]));
    GS_ASSERT_OK(gs_ks_record(S->ks, it + 1, &rec[1]));
}

static void expect_same_vec(const gs_vector *a, const gs_vector *b, const char *what)
{
    double *x = download(a), *y = download(b);
    if (memcmp(x, y, (size_t)a->n * sizeof(double)) != 0) fail_msg("%s differs from the plain fused CG", what);
    gs_free(&x);
    gs_free(&y);
}

static void test_combined_equals_plain(void **state)
{
    gs_vector *zeros = vec_from(C, 2, NULL);
    GS_ASSERT_OK(gs_vec_set(zeros, 0.0));
    for (int si = 1; si < NSIZES; si++) {
        const gs_int n = twin_sizes[si];
        for (int with_pc = 0; with_pc < 2; with_pc++)
            for (int mode = 0; mode < 2; mode++) { /* 0: others send zeros; 1: two identical processes */
                double *d[5];
                for (int k = 0; k < 5; k++) d[k] = rand_array(n, 900 + 10 * (uint64_t)si + (uint64_t)k);
                for (gs_int i = 0; i < n; i++) {
                    d[3][i] = 2.0 * d[2][i] + 0.1 * d[3][i];
                    d[4][i] = 1.5 * d[1][i] + 0.1 * d[4][i];
                }
                fake_ranks f = {mode ? 2 : 3, mode ? 0 : 1, mode == 1, zeros, 0, 0};
                ks_side P = {0}, X = {0};
                side_make(&P, n, d, NULL);
                side_make(&X, n, d, &f);
                const gs_ks_start start = {1e-3, 1e-300, INFINITY, 0, 0, INFINITY};
                gs_ks_start startx = start;
                if (mode) startx.rz = 2.0 * start.rz; /* every total doubles: alpha and beta do not change */
                gs_krec pr[2], xr[2];
                two_iterations(&P, 7, with_pc != 0, &start, pr);
                two_iterations(&X, 7, with_pc != 0, &startx, xr);
                assert_int_equal(f.calls, 4);                 /* p'q, r'r (with r'z) per iteration */
                assert_int_equal(f.values, with_pc ? 6 : 4); /* r'r and r'z in one gather */
                for (int k = 0; k < 2; k++) {
                    assert_int_equal(xr[k].it, 7 + k);
                    assert_int_equal(xr[k].code, pr[k].code);
                    assert_true(xr[k].value == pr[k].value); /* alpha, bitwise */
                    const double want = mode ? sqrt(2.0) * pr[k].rnorm : pr[k].rnorm;
                    if (mode)
                        assert_true(fabs(xr[k].rnorm - want) <= 8e-16 * want);
                    else
                        assert_true(xr[k].rnorm == want);
                }
                expect_same_vec(X.x, P.x, "x");
                expect_same_vec(X.r, P.r, "r");
                expect_same_vec(X.p, P.p, "p");
                ks_side_free(&P);
                ks_side_free(&X);
                for (int k = 0; k < 5; k++) gs_free(&d[k]);
            }
    }
    gs_vec_destroy(&zeros);
}

/* p'Ap = 0 summed over the processes stops iteration 3; the update after it does nothing. */
static void test_combined_stop(void **state)
{
    const gs_int n = 1000;
    gs_vector *zeros = vec_from(C, 2, NULL);
    GS_ASSERT_OK(gs_vec_set(zeros, 0.0));
    double *d[5];
    for (int k = 0; k < 5; k++) d[k] = rand_array(n, 40 + (uint64_t)k);
    fake_ranks f = {3, 2, false, zeros, 0, 0};
    ks_side X = {0};
    side_make(&X, n, d, &f);
    GS_ASSERT_OK(gs_vec_scale(X.q, 0.0));
    const gs_ks_start start = {1.0, 1e-300, INFINITY, 0, 0, INFINITY};
    gs_krec rec;
    GS_ASSERT_OK(gs_ks_begin(X.ks, 3, &start));
    GS_ASSERT_OK(gs_ks_cg_pq(X.ks, 3, X.p, X.q));
    GS_ASSERT_OK(gs_ks_cg_update(X.ks, 3, X.x, X.r, X.p, X.q, true));
    GS_ASSERT_OK(gs_ks_mark(X.ks, 3));
    GS_ASSERT_OK(gs_ks_record(X.ks, 3, &rec));
    assert_int_equal(rec.code, GS_KC_PQ_NONPOS);
    assert_true(rec.value == 0.0);
    double *x = download(X.x), *r = download(X.r);
    assert_memory_equal(x, d[0], (size_t)n * sizeof(double));
    assert_memory_equal(r, d[1], (size_t)n * sizeof(double));
    gs_free(&x);
    gs_free(&r);
    ks_side_free(&X);
    for (int k = 0; k < 5; k++) gs_free(&d[k]);
    gs_vec_destroy(&zeros);
}

/* cg_update without z = r, then no cg_rz: r'r goes alone at the next step, the same as the plain state;
 * a bound above ||r|| stops at r'r, and the r'z that travelled with it is not taken: the same record as
 * the plain state's. */
static void test_combined_rr_alone_and_converged(void **state)
{
    const gs_int n = 1000;
    gs_vector *zeros = vec_from(C, 2, NULL);
    GS_ASSERT_OK(gs_vec_set(zeros, 0.0));
    double *d[5];
    for (int k = 0; k < 5; k++) d[k] = rand_array(n, 60 + (uint64_t)k);
    for (gs_int i = 0; i < n; i++) {
        d[3][i] = 2.0 * d[2][i] + 0.1 * d[3][i];
        d[4][i] = 1.5 * d[1][i] + 0.1 * d[4][i];
    }
    for (int conv = 0; conv < 2; conv++) {
        fake_ranks f = {3, 0, false, zeros, 0, 0};
        ks_side P = {0}, X = {0};
        side_make(&P, n, d, NULL);
        side_make(&X, n, d, &f);
        const gs_ks_start start = {1e-3, conv ? 1e300 : 1e-300, INFINITY, 0, 0, INFINITY};
        gs_krec pr, xr;
        for (int k = 0; k < 2; k++) {
            ks_side *S = k ? &X : &P;
            GS_ASSERT_OK(gs_ks_begin(S->ks, 5, &start));
            GS_ASSERT_OK(gs_ks_cg_pq(S->ks, 5, S->p, S->q));
            GS_ASSERT_OK(gs_ks_cg_update(S->ks, 5, S->x, S->r, S->p, S->q, false));
            if (conv) GS_ASSERT_OK(gs_ks_cg_rz(S->ks, 5, S->r, S->z));
            GS_ASSERT_OK(gs_ks_cg_direction(S->ks, 5, S->z, S->p));
            GS_ASSERT_OK(gs_ks_mark(S->ks, 5));
            GS_ASSERT_OK(gs_ks_record(S->ks, 5, k ? &xr : &pr));
        }
        assert_int_equal(f.calls, 2);
        assert_int_equal(f.values, conv ? 3 : 2);
        assert_int_equal(xr.code, pr.code);
        assert_int_equal(pr.code, conv ? GS_KC_CONVERGED : GS_KC_RUNNING);
        assert_true(xr.rnorm == pr.rnorm && xr.value == pr.value);
        expect_same_vec(X.x, P.x, "x");
        expect_same_vec(X.p, P.p, "p");
        ks_side_free(&P);
        ks_side_free(&X);
    }
    for (int k = 0; k < 5; k++) gs_free(&d[k]);
    gs_vec_destroy(&zeros);
}

static void test_combine_arguments(void **state)
{
    fake_ranks f = {2, 0, false, NULL, 0, 0};
    gs_kstate *hk = NULL, *ck = NULL;
    GS_ASSERT_OK(gs_ks_create(H, &hk));
    GS_ASSERT_FAILS(gs_backend_cuda_ks_combine(hk, 2, fake_gather, &f), GS_ERR_ARG, "not a cuda");
    GS_ASSERT_OK(gs_ks_create(C, &ck));
    GS_ASSERT_FAILS(gs_backend_cuda_ks_combine(ck, 0, fake_gather, &f), GS_ERR_ARG, "0 processes");
    GS_ASSERT_FAILS(gs_backend_cuda_ks_combine(ck, 2, NULL, &f), GS_ERR_ARG, "gather missing");
    GS_ASSERT_OK(gs_backend_cuda_ks_combine(ck, 2, fake_gather, &f));
    GS_ASSERT_FAILS(gs_backend_cuda_ks_combine(ck, 2, fake_gather, &f), GS_ERR_ARG, "combined already");
    gs_ks_destroy(&hk);
    gs_ks_destroy(&ck);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_combined_equals_plain),
        cmocka_unit_test(test_combined_stop),
        cmocka_unit_test(test_combined_rr_alone_and_converged),
        cmocka_unit_test(test_combine_arguments),
    };
    return cmocka_run_group_tests(tests, twin_setup, twin_teardown);
}
