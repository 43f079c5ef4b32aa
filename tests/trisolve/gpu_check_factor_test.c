/* The row check of the GPU analyses (syncfree, levelset and auto on cuda check T's rows on the device,
 * analysis_cuda.cu): for every fault class, at the first row, in the middle and at the last row, and for
 * two faults of different classes, gs_trisolve_analyse fails with the status and EXACTLY the message
 * of the host gs_trisolve_check_factor; the solver is left unanalysed, and the same solver object then
 * analyses the repaired factor and solves like the reference. Faults that would send a level kernel
 * into a cycle (an entry on the wrong side of a bidiagonal factor) or out of its arrays (row pointers
 * outside 0 .. nnz, negative columns) must end with the error, not hang or fault. Factors above 1 MB go
 * through the pinned staging buffer and the overlapped value upload (GS_TEST_QUICK: smaller ones). Host
 * allocation failures inside the GPU analyses end with GS_ERR_MEM and leave the staging buffer free. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tri_cases.h"
#include "trisolve/trisolve.h"

static gs_backend *gpu, *host;
static const char *const types[] = {"syncfree", "levelset", "auto"};
#define NTYPES (int)(sizeof types / sizeof types[0])

static int setup(void **state) { return tri_backends_create(&gpu, &host); }

static int teardown(void **state)
{
    tri_backends_destroy(&gpu, &host);
    return 0;
}

/* A fault to put into a factor: kind, row, and what was there before (to repair it). */
typedef enum fault_kind {
    F_ROWPTR, F_RANGE_HIGH, F_RANGE_NEG, F_UNSORTED, F_DUPLICATE, F_SIDE, F_UNIT_DIAG, F_NO_DIAG, F_ZERO_DIAG,
    F_NAN_DIAG, F_INF_DIAG, F_COUNT
} fault_kind;

static const char *const fault_names[] = {"rowptr", "range-high", "range-negative", "unsorted", "duplicate", "side",
                                          "unit-diag", "no-diag", "zero-diag", "nan-diag", "inf-diag"};

typedef struct fault {
    fault_kind kind;
    gs_int row, pos, old_int;
    double old_val;
    bool applied;
} fault;

static gs_int diag_pos(const gs_csr *T, gs_int i)
{
    for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
        if (T->colind[q] == i) return q;
    return -1;
}

/* Puts fault kind k into row i of T when that row allows it (false: it does not, nothing changed). */
static bool apply_fault(gs_csr *T, gs_uplo uplo, bool unit, fault_kind k, gs_int i, fault *f)
{
    gs_int n = T->nrows, a = T->rowptr[i], e = T->rowptr[i + 1], d = diag_pos(T, i);
    memset(f, 0, sizeof *f);
    f->kind = k;
    f->row = i;
    switch (k) {
    case F_ROWPTR: /* row i runs backwards: rowptr[i+1] = rowptr[i] - 1 */
        if (a < 1) return false;
        f->pos = i + 1;
        f->old_int = T->rowptr[i + 1];
        T->rowptr[i + 1] = a - 1;
        break;
    case F_RANGE_HIGH:
    case F_RANGE_NEG:
        if (e == a) return false;
        f->pos = a;
        f->old_int = T->colind[a];
        T->colind[a] = k == F_RANGE_HIGH ? n + 3 : -2;
        break;
    case F_UNSORTED:
    case F_DUPLICATE:
        if (e - a < 2) return false;
        f->pos = a + 1;
        f->old_int = T->colind[a + 1];
        if (k == F_DUPLICATE) {
            T->colind[a + 1] = T->colind[a];
        } else { /* swap the first two entries (their values stay: the check does not look at them) */
            T->colind[a + 1] = T->colind[a];
            T->colind[a] = f->old_int;
            f->pos = -(a + 1); /* marks the swap */
        }
        break;
    case F_SIDE: /* the entry nearest the diagonal moves just past it */
        if (e == a) return false;
        if (uplo == GS_LOWER) {
            if (i + 1 >= n) return false;
            f->pos = e - 1;
            f->old_int = T->colind[e - 1];
            T->colind[e - 1] = i + 1;
        } else {
            if (i < 1) return false;
            f->pos = a;
            f->old_int = T->colind[a];
            T->colind[a] = i - 1;
        }
        break;
    case F_UNIT_DIAG: /* a unit factor: the entry nearest the diagonal becomes the diagonal */
        if (!unit || e == a) return false;
        f->pos = uplo == GS_LOWER ? e - 1 : a;
        f->old_int = T->colind[f->pos];
        T->colind[f->pos] = i;
        break;
    case F_NO_DIAG: /* the diagonal entry moves to a free column on its side */
    {
        if (unit || d < 0) return false;
        gs_int c = uplo == GS_LOWER ? i - 1 : i + 1;
        gs_int neighbour = uplo == GS_LOWER ? (d > a ? T->colind[d - 1] : -1) : (d + 1 < e ? T->colind[d + 1] : n);
        if (c < 0 || c >= n || c == neighbour) return false;
        f->pos = d;
        f->old_int = i;
        T->colind[d] = c;
        break;
    }
    case F_ZERO_DIAG:
    case F_NAN_DIAG:
    case F_INF_DIAG:
        if (unit || d < 0) return false;
        f->pos = d;
        f->old_val = T->val[d];
        T->val[d] = k == F_ZERO_DIAG ? 0.0 : k == F_NAN_DIAG ? NAN : INFINITY;
        break;
    case F_COUNT:
        return false;
    }
    f->applied = true;
    return true;
}

static void repair_fault(gs_csr *T, const fault *f)
{
    if (!f->applied) return;
    switch (f->kind) {
    case F_ROWPTR: T->rowptr[f->pos] = f->old_int; break;
    case F_ZERO_DIAG:
    case F_NAN_DIAG:
    case F_INF_DIAG: T->val[f->pos] = f->old_val; break;
    case F_UNSORTED:
        if (f->pos < 0) {
            gs_int p = -f->pos;
            T->colind[p - 1] = T->colind[p];
            T->colind[p] = f->old_int;
        }
        break;
    default: T->colind[f->pos] = f->old_int; break;
    }
}

/* The first row at or after `from` (wrapping around) that takes fault k; -1 when none does. */
static gs_int apply_near(gs_csr *T, gs_uplo uplo, bool unit, fault_kind k, gs_int from, fault *f)
{
    gs_int n = T->nrows;
    for (gs_int t = 0; t < n; t++) {
        gs_int i = (from + t) % n;
        if (apply_fault(T, uplo, unit, k, i, f)) return i;
    }
    return -1;
}

/* The solver `type` on the GPU refuses T with the host check's status and message. */
static void expect_host_error(gs_trisolve *ts, const gs_csr *T, const char *what)
{
    char want[1024];
    gs_error_clear();
    gs_status want_st = gs_trisolve_check_factor(T, ts->uplo, ts->unit_diag);
    assert_int_not_equal(want_st, GS_OK);
    snprintf(want, sizeof want, "%s", gs_error_message());
    gs_error_clear();
    gs_status st = gs_trisolve_analyse(ts, T);
    if (st != want_st || strcmp(gs_error_message(), want) != 0)
        fprintf(stderr, "%s (%s): got %s \"%s\"\n  want %s \"%s\"\n", ts->type, what, gs_status_name(st),
                gs_error_message(), gs_status_name(want_st), want);
    assert_int_equal(st, want_st);
    assert_string_equal(gs_error_message(), want);
    assert_false(ts->analysed);
    gs_error_clear();
}

/* The solver analyses T and solves it like the host reference (x poisoned first). */
static void expect_solves(gs_trisolve *ts, const gs_csr *T, const char *what)
{
    gs_int n = T->nrows;
    double *hb = NULL, *xr = NULL, *hx = NULL, *poison = NULL;
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(GS_MALLOC(hb, n));
    GS_ASSERT_OK(GS_MALLOC(xr, n));
    GS_ASSERT_OK(GS_MALLOC(hx, n));
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    tri_rhs(n, 7, hb);
    tri_host_solve(host, "reference", T, ts->uplo, ts->unit_diag, NULL, hb, xr);
    GS_ASSERT_OK(gs_trisolve_analyse(ts, T));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &b));
    GS_ASSERT_OK(gs_vec_create(gpu, n, &x));
    GS_ASSERT_OK(gs_vec_upload(b, hb));
    tri_gpu_solve(ts, b, x, hx, poison);
    double e = gs_test_rel_diff(n, hx, xr);
    if (!(e <= TRI_TOL)) fprintf(stderr, "%s (%s): relative error %.3e after the faults\n", ts->type, what, e);
    assert_true(e <= TRI_TOL);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_free(&hb);
    gs_free(&xr);
    gs_free(&hx);
    gs_free(&poison);
}

/* Every fault kind at the first row that takes it, in the middle and near the end; then two faults
 * (the earlier one reported whichever kind it is); then the repaired factor solves. */
static void run_faults(const char *type, const gs_trisolve_params *prm, gs_csr *T, gs_uplo uplo, bool unit,
                       const char *name, bool all_rows)
{
    gs_trisolve *ts = NULL;
    char what[160];
    gs_int n = T->nrows;
    GS_ASSERT_OK(gs_trisolve_create(type, gpu, uplo, unit, prm, &ts));
    int tried = 0;
    for (int k = 0; k < F_COUNT; k++) {
        const gs_int starts[3] = {0, n / 2 + 3, n - 1};
        for (int s = 0; s < 3; s++) {
            if (!all_rows && s != 1) continue;
            fault f;
            gs_int row = apply_near(T, uplo, unit, (fault_kind)k, starts[s], &f);
            if (row < 0) continue;
            snprintf(what, sizeof what, "%s %s at row %d", name, fault_names[k], (int)row + 1);
            expect_host_error(ts, T, what);
            repair_fault(T, &f);
            tried++;
        }
    }
    assert_true(tried >= 6); /* every base factor takes most kinds */
    /* two faults: a value fault early and a structural one late, and the other way round */
    if (!unit) {
        fault f1, f2;
        gs_int r1 = apply_near(T, uplo, unit, F_ZERO_DIAG, n / 5, &f1);
        gs_int r2 = apply_near(T, uplo, unit, F_DUPLICATE, (4 * n) / 5, &f2);
        assert_true(r1 >= 0 && r2 > r1);
        snprintf(what, sizeof what, "%s zero diagonal at %d and duplicate at %d", name, (int)r1 + 1, (int)r2 + 1);
        expect_host_error(ts, T, what);
        repair_fault(T, &f2);
        repair_fault(T, &f1);
        r1 = apply_near(T, uplo, unit, F_SIDE, n / 5, &f1);
        r2 = apply_near(T, uplo, unit, F_NAN_DIAG, (4 * n) / 5, &f2);
        assert_true(r1 >= 0 && r2 > r1);
        snprintf(what, sizeof what, "%s side at %d and nan diagonal at %d", name, (int)r1 + 1, (int)r2 + 1);
        expect_host_error(ts, T, what);
        repair_fault(T, &f2);
        repair_fault(T, &f1);
    }
    GS_ASSERT_OK(gs_trisolve_check_factor(T, uplo, unit)); /* every fault repaired */
    snprintf(what, sizeof what, "%s repaired", name);
    expect_solves(ts, T, what);
    gs_trisolve_destroy(&ts);
}

static void test_fault_classes(void **state)
{
    for (int t = 0; t < NTYPES; t++)
        for (int side = 0; side < 2; side++)
            for (int unit = 0; unit < 2; unit++) {
                gs_csr T = {0};
                char name[64];
                GS_ASSERT_OK(tri_random(1000, 5, (gs_uplo)side, unit != 0, 40 + 2 * side + unit, &T));
                snprintf(name, sizeof name, "random1000/%s/%s", side ? "upper" : "lower", unit ? "unit" : "nonunit");
                run_faults(types[t], NULL, &T, (gs_uplo)side, unit != 0, name, !gs_test_quick()); /* quick: middle rows */
                gs_csr_free(&T);
                if (gs_test_quick()) continue;
                GS_ASSERT_OK(tri_random(4099, 3, (gs_uplo)side, unit != 0, 50 + 2 * side + unit, &T));
                snprintf(name, sizeof name, "random4099/%s/%s", side ? "upper" : "lower", unit ? "unit" : "nonunit");
                run_faults(types[t], NULL, &T, (gs_uplo)side, unit != 0, name, false);
                gs_csr_free(&T);
            }
}

/* A chain (row i reads i-1) that also reads rows i-100 and i-200: merging 64 levels per group gives each
 * row of a group the far columns of all the rows before it in the group, ~65 entries per row against
 * the limit of GS_SF_MERGE_FILL x (4 + 1) -- the merge is refused. */
static void far_chain(gs_int n, gs_csr *T)
{
    gs_int k = 0;
    GS_ASSERT_OK(gs_csr_alloc(T, n, n, 4 * n, true));
    for (gs_int i = 0; i < n; i++) {
        T->rowptr[i] = k;
        const gs_int cols[4] = {i - 200, i - 100, i - 1, i};
        for (int c = 0; c < 4; c++)
            if (cols[c] >= 0) {
                T->colind[k] = cols[c];
                T->val[k++] = cols[c] == i ? 4.0 + (double)(i % 7) : -0.3 - 0.01 * (double)(i % 5);
            }
    }
    T->rowptr[n] = k;
    T->nnz = k;
}

/* The merged schedule forced: T's analysis stops at its levels (no plan of T), so T's diagonal values
 * are checked by T_D's plan -- or, where the fill refuses the merge, by T's plan built afterwards from
 * the levels. Either way every fault gives the host check's message, and the repaired factor solves. */
static void test_merged_faults(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        gs_csr A = {0}, T = {0};
        gs_uplo uplo = c == 1 ? GS_UPPER : GS_LOWER;
        bool unit = c == 1;
        const char *m = c == 2 ? "64" : "4";
        if (c < 2) {
            GS_ASSERT_OK(gs_gen_poisson2d(37, 29, &A)); /* 65 levels */
            GS_ASSERT_OK(tri_from_matrix(&A, uplo, unit, &T));
        } else {
            far_chain(1003, &T);
        }
        gs_trisolve_params prm = gs_trisolve_params_default();
        GS_ASSERT_OK(gs_trisolve_params_set(&prm, "syncfree.schedule", "merged"));
        GS_ASSERT_OK(gs_trisolve_params_set(&prm, "syncfree.merge_levels", m));
        /* the path taken: merged (c < 2), refused (c = 2) */
        gs_trisolve *ts = NULL;
        gs_report *rep = NULL;
        GS_ASSERT_OK(gs_trisolve_create("syncfree", gpu, uplo, unit, &prm, &ts));
        GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_trisolve_view(ts, rep, "t");
        const gs_report_entry *e = gs_report_find(rep, "t.schedule");
        assert_non_null(e);
        assert_string_equal(e->s, c < 2 ? "merged" : "levels");
        assert_true((gs_report_find(rep, "t.merge_refused_fill") != NULL) == (c == 2));
        gs_report_destroy(&rep);
        gs_trisolve_destroy(&ts);
        char name[64];
        snprintf(name, sizeof name, "%s m=%s", c < 2 ? "poisson2d 37x29" : "far chain 1003", m);
        run_faults("syncfree", &prm, &T, uplo, unit, name, true);
        gs_csr_free(&T);
        gs_csr_free(&A);
    }
}

/* A bidiagonal factor whose row i also reads row i+1 (lower) or i-1 (upper): a dependency cycle the
 * level kernel would wait on forever if it followed entries on the wrong side. */
static void test_cycle_does_not_hang(void **state)
{
    const gs_int n = gs_test_quick() >= 2 ? 301 : 5003; /* racecheck: fewer levels (a launch per level) */
    for (int t = 0; t < NTYPES; t++)
        for (int side = 0; side < 2; side++) {
            gs_csr T = {0};
            gs_int nnz = 2 * n - 1, k = 0;
            GS_ASSERT_OK(gs_csr_alloc(&T, n, n, nnz, true));
            for (gs_int i = 0; i < n; i++) { /* lower: (i, i-1), (i, i); upper: (i, i), (i, i+1) */
                T.rowptr[i] = k;
                if (side == 0 && i > 0) {
                    T.colind[k] = i - 1;
                    T.val[k++] = -1.0;
                }
                T.colind[k] = i;
                T.val[k++] = 3.0;
                if (side == 1 && i < n - 1) {
                    T.colind[k] = i + 1;
                    T.val[k++] = -1.0;
                }
            }
            T.rowptr[n] = k;
            gs_trisolve *ts = NULL;
            GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, (gs_uplo)side, false, NULL, &ts));
            gs_int i = n / 3;
            gs_int d = diag_pos(&T, i);
            /* lower: the diagonal of row i becomes column i+1 (row i+1 reads row i: a cycle); upper: i-1 */
            T.colind[d] = side == 0 ? i + 1 : i - 1;
            expect_host_error(ts, &T, "cycle through a wrong-side entry");
            T.colind[d] = i;
            expect_solves(ts, &T, "bidiagonal repaired");
            gs_trisolve_destroy(&ts);
            gs_csr_free(&T);
        }
}

/* Large factors (above the staging threshold of the upload): a value fault far into the matrix (found
 * by the layout kernel after the overlapped value upload), a structural fault, then a solve; the view
 * reports the upload. */
static void test_large_staged(void **state)
{
    const gs_int n = gs_test_quick() >= 2 ? 5003 : gs_test_quick() ? 30011 : 300007; /* 2: racecheck */
    for (int t = 0; t < NTYPES; t++)
        for (int side = 0; side < (gs_test_quick() ? 1 : 2); side++) {
            gs_csr T = {0};
            GS_ASSERT_OK(tri_random(n, 6, (gs_uplo)side, false, 60 + side, &T));
            gs_trisolve *ts = NULL;
            fault f;
            GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, (gs_uplo)side, false, NULL, &ts));
            assert_true(apply_near(&T, (gs_uplo)side, false, F_INF_DIAG, n - n / 10, &f) >= 0);
            expect_host_error(ts, &T, "large: inf diagonal");
            repair_fault(&T, &f);
            assert_true(apply_near(&T, (gs_uplo)side, false, F_RANGE_NEG, n / 2, &f) >= 0);
            expect_host_error(ts, &T, "large: negative column");
            repair_fault(&T, &f);
            expect_solves(ts, &T, "large repaired");

            gs_report *rep = NULL;
            GS_ASSERT_OK(gs_report_create(&rep));
            gs_trisolve_view(ts, rep, "ts");
            const gs_report_entry *e = gs_report_find(rep, "ts.upload_bytes");
            assert_non_null(e);
            assert_int_equal(e->i, (long long)(n + 1) * 4 + (long long)T.nnz * 12);
            e = gs_report_find(rep, "ts.upload_path");
            assert_non_null(e);
            /* the staging buffer is used unless pinned memory could not be had */
            assert_true(strcmp(e->s, "pinned staging") == 0 || strcmp(e->s, "pageable") == 0);
            if (strcmp(e->s, "pageable") == 0) fprintf(stderr, "note: pinned staging unavailable, pageable upload\n");
            assert_non_null(gs_report_find(rep, "ts.staging_alloc_time"));
            assert_non_null(gs_report_find(rep, "ts.check_time"));
            assert_non_null(gs_report_find(rep, "ts.level_time"));
            assert_non_null(gs_report_find(rep, "ts.layout_time"));
            assert_non_null(gs_report_find(rep, "ts.plan_time"));
            e = gs_report_find(rep, "ts.analysis_time");
            assert_non_null(e);
            assert_true(e->d > 0.0);
            gs_report_destroy(&rep);
            gs_trisolve_destroy(&ts);
            gs_csr_free(&T);
        }
}

/* The k-th host allocation of a GPU analysis fails, for k = 1, 2, ... until the analysis succeeds:
 * GS_ERR_MEM each time, nothing left analysed, and no lock held (the next analysis would hang on the
 * staging buffer otherwise: the factor is large enough to be staged); then the solve is right. */
static void test_allocation_failures(void **state)
{
    const gs_int n = gs_test_quick() ? 30011 : 100003;
    gs_csr T = {0};
    GS_ASSERT_OK(tri_random(n, 6, GS_LOWER, true, 71, &T));
    for (int t = 0; t < NTYPES; t++) {
        gs_trisolve *ts = NULL;
        GS_ASSERT_OK(gs_trisolve_create(types[t], gpu, GS_LOWER, true, NULL, &ts));
        int failures = 0;
        for (long k = 1; k < 200; k++) {
            gs_error_clear();
            gs_alloc_fail_at(k);
            gs_status st = gs_trisolve_analyse(ts, &T);
            gs_alloc_fail_at(0);
            if (st == GS_OK) break;
            if (st != GS_ERR_MEM) gs_error_print(stderr);
            assert_int_equal(st, GS_ERR_MEM);
            assert_false(ts->analysed);
            failures++;
        }
        gs_error_clear();
        assert_true(failures >= 2);
        assert_true(ts->analysed);
        expect_solves(ts, &T, "after allocation failures");
        gs_trisolve_destroy(&ts);
    }
    gs_csr_free(&T);
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_classes),
        cmocka_unit_test(test_cycle_does_not_hang),
        cmocka_unit_test(test_merged_faults),
        cmocka_unit_test(test_large_staged),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
