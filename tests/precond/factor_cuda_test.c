/* GPU numeric ILU(k) and IC(0) (precond/factor_cuda.cu) against the host factorizations of
 * precond/ilu_factor.c, and the ilu0 / ic0 plug-ins factoring on the device.
 *
 * Tolerance: the device performs the host's roundings in the host's order (no fused multiply-add), so
 * the factors are expected to be identical; the test accepts |d_ij - h_ij| <= FACTOR_TOL * max_j |h_ij|
 * (the row's largest entry of that factor; FACTOR_TOL = 1e-12, far below any growth-induced error of a
 * reordered computation on these well-conditioned cases) and prints how many entries are not
 * bit-identical. Patterns, the number of levels, pivot decisions, shifted rows and their values, error
 * statuses and messages must match exactly. Outputs are poisoned with NaN before every device call.
 * GS_TEST_QUICK=1 skips the largest cases (n = 100003 and poisson3d 48^3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cfg/config.h"
#include "core/generate.h"
#include "core/backend_cuda.h"
#include "core/mem.h"
#include "core/report.h"
#include "factor_dense.h"
#include "precond/factor.h"
#include "precond/factor_cuda.h"
#include "precond/precond.h"

#define FACTOR_TOL 1e-12

static gs_backend *dev;

static const gs_factor_opts opts_error = {GS_ZERO_PIVOT_ERROR, 1e-8, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};
static const gs_factor_opts opts_shift = {GS_ZERO_PIVOT_SHIFT, 1e-4, 0, 0.0, 0, 0, NULL, 0.0, false, 0.0};

/* Device values dv of factor H (host pattern and values): within the tolerance, row by row. */
static void compare_values(const char *what, const gs_csr *H, const double *dv)
{
    long long differ = 0;
    for (gs_int i = 0; i < H->nrows; i++) {
        double scale = 0.0;
        for (gs_int p = H->rowptr[i]; p < H->rowptr[i + 1]; p++) scale = fmax(scale, fabs(H->val[p]));
        for (gs_int p = H->rowptr[i]; p < H->rowptr[i + 1]; p++) {
            double h = H->val[p], d = dv[p];
            if (!(fabs(d - h) <= FACTOR_TOL * scale))
                fail_msg("%s: row %d (1-based), column %d: device %.17g, host %.17g", what, (int)i + 1,
                         (int)H->colind[p] + 1, d, h);
            differ += memcmp(&d, &h, sizeof d) != 0;
        }
    }
    if (differ)
        fprintf(stderr, "  %s: %lld of %d entries within tolerance but not bit-identical\n", what, differ,
                (int)H->nnz);
}

static void compare_info(const char *what, const gs_factor_info *h, const gs_factor_info *d)
{
    if (h->nshifted != d->nshifted || h->first_shifted != d->first_shifted)
        fail_msg("%s: host shifted %d pivots (first %d), device %d (first %d)", what, (int)h->nshifted,
                 (int)h->first_shifted, (int)d->nshifted, (int)d->first_shifted);
    for (int k = 0; k < 16; k++)
        if (h->shifted_rows[k] != d->shifted_rows[k])
            fail_msg("%s: shifted_rows[%d]: host %d, device %d", what, k, (int)h->shifted_rows[k],
                     (int)d->shifted_rows[k]);
    assert_int_equal(h->nnz_L, d->nnz_L);
    assert_int_equal(h->nnz_U, d->nnz_U);
}

static const char *policy(const gs_factor_opts *o) { return o->zero_pivot == GS_ZERO_PIVOT_SHIFT ? "shift" : "error"; }

static void poison_values(gs_csr *M)
{
    if (!M->val) GS_ASSERT_OK(GS_MALLOC(M->val, M->nnz));
    gs_test_poison(M->nnz, M->val);
}

/* The host's status and message (copied), the error cleared. */
static gs_status host_outcome(gs_status st, char *msg, size_t size)
{
    snprintf(msg, size, "%s", st == GS_OK ? "" : gs_error_message());
    gs_error_clear();
    return st;
}

static void same_failure(const char *what, gs_status hs, const char *hmsg, gs_status ds)
{
    const char *dmsg = gs_error_message();
    if (ds != hs || strcmp(dmsg, hmsg) != 0)
        fail_msg("%s: host failed with %s \"%s\"\n  device: %s \"%s\"", what, gs_status_name(hs), hmsg,
                 gs_status_name(ds), dmsg);
    gs_error_clear();
}

/* ILU on the pattern of level k: host and device factors, info and outcome equal; the device twice
 * (values preallocated and poisoned, then allocated by the call) gives the same bits; the levels the
 * device walked are the levels of L. */
/* A factor kept on the device (keep argument) equals the downloaded one H bit for bit: sizes, pattern and
 * values read back. */
static void same_as_kept(const char *what, const gs_csr *H, const gs_csr_dev *K)
{
    assert_int_equal(K->nrows, H->nrows);
    assert_int_equal(K->ncols, H->ncols);
    assert_int_equal(K->nnz, H->nnz);
    gs_csr C = {0};
    GS_ASSERT_OK(gs_csr_alloc(&C, H->nrows, H->ncols, H->nnz, true));
    GS_ASSERT_OK(gs_backend_download(dev, C.rowptr, K->rowptr, ((size_t)H->nrows + 1) * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_download(dev, C.colind, K->colind, (size_t)H->nnz * sizeof(gs_int)));
    GS_ASSERT_OK(gs_backend_download(dev, C.val, K->val, (size_t)H->nnz * sizeof(double)));
    assert_memory_equal(C.rowptr, H->rowptr, ((size_t)H->nrows + 1) * sizeof(gs_int));
    assert_memory_equal(C.colind, H->colind, (size_t)H->nnz * sizeof(gs_int));
    if (memcmp(C.val, H->val, (size_t)H->nnz * sizeof(double)) != 0) fail_msg("%s: kept values differ", what);
    gs_csr_free(&C);
}

/* The host's ILU(0) as the preconditioner runs it: gs_iluk_symbolic(A, 0), then gs_ilu_numeric. */
static gs_status host_ilu0(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info)
{
    GS_CALL(gs_iluk_symbolic(A, 0, L, U));
    GS_CALL(gs_ilu_numeric(A, o, L, U, info));
    return GS_OK;
}

/* Device factor D (pattern built on the device, downloaded) equals host factor H bit for bit. */
static void same_factor(const char *what, const gs_csr *H, const gs_csr *D)
{
    assert_int_equal(D->nrows, H->nrows);
    assert_int_equal(D->ncols, H->ncols);
    assert_int_equal(D->nnz, H->nnz);
    assert_memory_equal(D->rowptr, H->rowptr, ((size_t)H->nrows + 1) * sizeof(gs_int));
    assert_memory_equal(D->colind, H->colind, (size_t)H->nnz * sizeof(gs_int));
    compare_values(what, H, D->val); /* names the first entry off by more than the tolerance */
    if (H->nnz && memcmp(D->val, H->val, (size_t)H->nnz * sizeof(double)) != 0)
        fail_msg("%s: values within tolerance but not bit-identical", what);
}

/* ILU(0) with the pattern built on the device from A (gs_ilu0_numeric_cuda) against the host pair
 * gs_iluk_symbolic(A, 0) + gs_ilu_numeric: the same outcome and message; on success the same patterns
 * and values bit for bit, downloaded and kept on the device (then the host gets only the sizes). */
static void ilu0_dev_case(const char *name, const gs_csr *A, const gs_factor_opts *o)
{
    gs_csr L = {0}, U = {0}, Ld = {0}, Ud = {0};
    gs_factor_info ih, id;
    gs_factor_cuda_times t;
    char what[160], hmsg[1024];
    snprintf(what, sizeof what, "%s, ILU(0) pattern on the device, zero_pivot %s", name, policy(o));
    gs_status hs = host_outcome(host_ilu0(A, o, &L, &U, &ih), hmsg, sizeof hmsg);
    /* outputs holding garbage: the call overwrites them without freeing */
    memset(&Ld, 0x5A, sizeof Ld);
    memset(&Ud, 0x5A, sizeof Ud);
    gs_status ds = gs_ilu0_numeric_cuda(dev, A, NULL, o, &Ld, &Ud, &id, &t, NULL);
    if (hs != GS_OK) {
        same_failure(what, hs, hmsg, ds);
        assert_null(Ld.rowptr);
        assert_null(Ud.rowptr);
        assert_int_equal(Ld.nnz, 0);
        /* kept: the same failure, nothing kept */
        gs_factor_dev keep = {0};
        ds = gs_ilu0_numeric_cuda(dev, A, NULL, o, &Ld, &Ud, &id, NULL, &keep);
        same_failure(what, hs, hmsg, ds);
        assert_null(keep.arena[0]);
        gs_csr_free(&L);
        gs_csr_free(&U);
        return;
    }
    if (ds != GS_OK) {
        gs_error_print(stderr);
        fail_msg("%s: the device failed", what);
    }
    same_factor(what, &L, &Ld);
    same_factor(what, &U, &Ud);
    compare_info(what, &ih, &id);
    assert_int_equal(t.levels, gs_csr_levels(&L, true, NULL));
    assert_true(t.lanes_per_row == 8 || t.lanes_per_row == 32);
    assert_true(t.kernel > 0.0 && t.upload >= 0.0 && t.download >= 0.0);
    {
        gs_factor_dev keep = {0};
        gs_csr K = {0}, KU = {0};
        GS_ASSERT_OK(gs_ilu0_numeric_cuda(dev, A, NULL, o, &K, &KU, &id, NULL, &keep));
        assert_int_equal(K.nrows, A->nrows);
        assert_int_equal(KU.ncols, A->nrows);
        assert_int_equal(K.nnz, L.nnz);
        assert_int_equal(KU.nnz, U.nnz);
        assert_null(K.rowptr);
        assert_null(K.colind);
        assert_null(K.val);
        assert_null(KU.rowptr);
        assert_null(KU.val);
        compare_info(what, &ih, &id);
        same_as_kept(what, &L, &keep.L);
        same_as_kept(what, &U, &keep.U);
        gs_factor_dev_free(&keep);
        assert_null(keep.arena[0]);

        /* A read from the solver's device copy (gs_mat_cuda_csr) instead of uploaded: the same factors,
         * no upload; a copy of other sizes is refused */
        gs_matrix *M = NULL;
        gs_csr_dev Av;
        gs_factor_cuda_times ta;
        GS_ASSERT_OK(gs_mat_create(dev, A, &M));
        assert_true(gs_mat_cuda_csr(M, &Av));
        GS_ASSERT_OK(gs_ilu0_numeric_cuda(dev, A, &Av, o, &K, &KU, &id, &ta, &keep));
        assert_true(ta.upload == 0.0);
        compare_info(what, &ih, &id);
        same_as_kept(what, &L, &keep.L);
        same_as_kept(what, &U, &keep.U);
        gs_factor_dev_free(&keep);
        Av.nrows--;
        GS_ASSERT_FAILS(gs_ilu0_numeric_cuda(dev, A, &Av, o, &K, &KU, &id, NULL, &keep), GS_ERR_ARG,
                        "the device copy of A is");
        gs_mat_destroy(&M);
    }
    fprintf(stderr, "  %s: n = %d, nnz(L+U) = %d, %d levels; upload %.2f ms, kernel %.2f ms, download %.2f ms\n",
            what, (int)A->nrows, (int)(L.nnz + U.nnz), (int)t.levels, 1e3 * t.upload, 1e3 * t.kernel,
            1e3 * t.download);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&Ld);
    gs_csr_free(&Ud);
}

static void ilu_case(const char *name, const gs_csr *A, int k, const gs_factor_opts *o)
{
    if (k == 0) ilu0_dev_case(name, A, o); /* every ILU(0) case also with the pattern built on the device */

    gs_csr L = {0}, U = {0}, Ld = {0}, Ud = {0};
    gs_factor_info ih, id;
    gs_factor_cuda_times t;
    char what[160], hmsg[1024];
    snprintf(what, sizeof what, "%s, ILU(%d), zero_pivot %s", name, k, policy(o));
    GS_ASSERT_OK(gs_iluk_symbolic(A, k, &L, &U));
    GS_ASSERT_OK(gs_csr_copy(&L, &Ld));
    GS_ASSERT_OK(gs_csr_copy(&U, &Ud));
    gs_status hs = host_outcome(gs_ilu_numeric(A, o, &L, &U, &ih), hmsg, sizeof hmsg);
    poison_values(&Ld);
    poison_values(&Ud);
    gs_error_clear();
    gs_status ds = gs_ilu_numeric_cuda(dev, A, o, &Ld, &Ud, &id, &t, NULL);
    if (hs != GS_OK) {
        same_failure(what, hs, hmsg, ds);
    } else {
        if (ds != GS_OK) {
            gs_error_print(stderr);
            fail_msg("%s: the device failed", what);
        }
        compare_values(what, &L, Ld.val);
        compare_values(what, &U, Ud.val);
        compare_info(what, &ih, &id);
        assert_int_equal(t.levels, gs_csr_levels(&L, true, NULL));
        assert_true(t.lanes_per_row == 8 || t.lanes_per_row == 32);
        assert_true(t.kernel > 0.0 && t.upload >= 0.0 && t.download >= 0.0);
        /* again, the values allocated by the call: bit for bit the same */
        double *first_l = Ld.val, *first_u = Ud.val;
        Ld.val = Ud.val = NULL;
        GS_ASSERT_OK(gs_ilu_numeric_cuda(dev, A, o, &Ld, &Ud, &id, NULL, NULL));
        assert_memory_equal(Ld.val, first_l, (size_t)Ld.nnz * sizeof(double));
        assert_memory_equal(Ud.val, first_u, (size_t)Ud.nnz * sizeof(double));
        /* and kept on the device: the same factors there, the host values untouched */
        gs_factor_dev keep = {0};
        double *hl = Ld.val, *hu = Ud.val;
        Ld.val = Ud.val = NULL;
        GS_ASSERT_OK(gs_ilu_numeric_cuda(dev, A, o, &Ld, &Ud, &id, NULL, &keep));
        assert_null(Ld.val);
        assert_null(Ud.val);
        Ld.val = hl;
        Ud.val = hu;
        compare_info(what, &ih, &id);
        same_as_kept(what, &Ld, &keep.L);
        same_as_kept(what, &Ud, &keep.U);
        gs_factor_dev_free(&keep);
        assert_null(keep.arena[0]);
        gs_free(&first_l);
        gs_free(&first_u);
        fprintf(stderr, "  %s: n = %d, nnz(L+U) = %d, %d levels, %d lanes/row; upload %.2f ms, kernel %.2f ms, "
                        "download %.2f ms\n",
                what, (int)A->nrows, (int)(L.nnz + U.nnz), (int)t.levels, t.lanes_per_row, 1e3 * t.upload,
                1e3 * t.kernel, 1e3 * t.download);
    }
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&Ld);
    gs_csr_free(&Ud);
}

/* IC(0): host and device L and L^T (patterns exactly, values within the tolerance), info, outcome. */
static void ic_case(const char *name, const gs_csr *A, const gs_factor_opts *o)
{
    gs_csr L = {0}, LT = {0}, Ld = {0}, LTd = {0};
    gs_factor_info ih, id;
    gs_factor_cuda_times t;
    char what[160], hmsg[1024];
    snprintf(what, sizeof what, "%s, IC(0), zero_pivot %s", name, policy(o));
    gs_status hs = host_outcome(gs_ic0(A, o, &L, &LT, &ih), hmsg, sizeof hmsg);
    gs_error_clear();
    gs_status ds = gs_ic0_numeric_cuda(dev, A, NULL, o, &Ld, &LTd, &id, &t, NULL);
    if (hs != GS_OK) {
        same_failure(what, hs, hmsg, ds);
        assert_null(Ld.rowptr);
        assert_null(LTd.rowptr);
        return;
    }
    if (ds != GS_OK) {
        gs_error_print(stderr);
        fail_msg("%s: the device failed", what);
    }
    const gs_csr *H[2] = {&L, &LT}, *D[2] = {&Ld, &LTd};
    for (int f = 0; f < 2; f++) {
        assert_int_equal(D[f]->nrows, H[f]->nrows);
        assert_int_equal(D[f]->ncols, H[f]->ncols);
        assert_int_equal(D[f]->nnz, H[f]->nnz);
        assert_memory_equal(D[f]->rowptr, H[f]->rowptr, ((size_t)H[f]->nrows + 1) * sizeof(gs_int));
        assert_memory_equal(D[f]->colind, H[f]->colind, (size_t)H[f]->nnz * sizeof(gs_int));
        compare_values(what, H[f], D[f]->val);
    }
    compare_info(what, &ih, &id);
    assert_int_equal(t.levels, gs_csr_levels(&L, true, NULL));
    {
        /* kept on the device: L and L^T there equal the downloaded ones; the host gets the sizes only */
        gs_factor_dev keep = {0};
        gs_csr K = {0}, KT = {0};
        GS_ASSERT_OK(gs_ic0_numeric_cuda(dev, A, NULL, o, &K, &KT, &id, NULL, &keep));
        assert_int_equal(K.nnz, L.nnz);
        assert_int_equal(KT.nnz, LT.nnz);
        assert_null(K.rowptr);
        assert_null(KT.val);
        compare_info(what, &ih, &id);
        same_as_kept(what, &Ld, &keep.L);
        same_as_kept(what, &LTd, &keep.U);
        gs_factor_dev_free(&keep);

        /* A read from the solver's device copy (gs_mat_cuda_csr) instead of uploaded: the same factors,
         * no upload; a copy of other sizes is refused */
        gs_matrix *M = NULL;
        gs_csr_dev Av;
        gs_factor_cuda_times ta;
        GS_ASSERT_OK(gs_mat_create(dev, A, &M));
        assert_true(gs_mat_cuda_csr(M, &Av));
        GS_ASSERT_OK(gs_ic0_numeric_cuda(dev, A, &Av, o, &K, &KT, &id, &ta, &keep));
        assert_true(ta.upload == 0.0);
        compare_info(what, &ih, &id);
        same_as_kept(what, &Ld, &keep.L);
        same_as_kept(what, &LTd, &keep.U);
        gs_factor_dev_free(&keep);
        Av.nnz--;
        GS_ASSERT_FAILS(gs_ic0_numeric_cuda(dev, A, &Av, o, &K, &KT, &id, NULL, &keep), GS_ERR_ARG,
                        "the device copy of A is");
        gs_mat_destroy(&M);
    }
    fprintf(stderr, "  %s: n = %d, nnz(L) = %d, %d levels, %d lanes/row; upload %.2f ms, kernel %.2f ms, "
                    "download %.2f ms\n",
            what, (int)A->nrows, (int)L.nnz, (int)t.levels, t.lanes_per_row, 1e3 * t.upload, 1e3 * t.kernel,
            1e3 * t.download);
    gs_csr_free(&L);
    gs_csr_free(&LT);
    gs_csr_free(&Ld);
    gs_csr_free(&LTd);
}

/* Random nonsymmetric, diagonally dominant: sizes not a multiple of 32, ILU(0) and ILU(2). */
static void test_random(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_random_sparse(4099, 5, 1.5, 11, &A));
    ilu_case("random n=4099", &A, 0, &opts_error);
    ilu_case("random n=4099", &A, 2, &opts_error);
    gs_csr_free(&A);
    if (!gs_test_quick()) {
        GS_ASSERT_OK(gs_test_random_sparse(100003, 6, 1.3, 12, &A));
        ilu_case("random n=100003", &A, 0, &opts_error);
        ilu_case("random n=100003", &A, 1, &opts_error);
        gs_csr_free(&A);
    }
}

/* Rows with only a diagonal (every 7th), one dense row and column (an arrow: a row far longer than the
 * shared buffer, and a U/L row every later row eliminates with). */
static void make_arrow_with_diag_rows(gs_int n, gs_int dense, bool sym, gs_csr *A)
{
    size_t cap = 6 * (size_t)n;
    gs_int *ri = NULL, *ci = NULL, k = 0;
    double *v = NULL;
    uint64_t s = 99;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        ri[k] = i;
        ci[k] = i;
        v[k++] = i == dense ? 4.0 * n : 8.0;
        if (i % 7 == 3 || i == dense) continue; /* diagonal only (the dense row comes from the loop below) */
        if (i > 0 && (i - 1) % 7 != 3 && i - 1 != dense) {
            double x = gs_test_rand(&s) - 0.5;
            ri[k] = i;
            ci[k] = i - 1;
            v[k++] = x;
            ri[k] = i - 1;
            ci[k] = i;
            v[k++] = sym ? x : 0.7 * x;
        }
        double y = gs_test_rand(&s) - 0.5;
        ri[k] = dense;
        ci[k] = i;
        v[k++] = y;
        ri[k] = i;
        ci[k] = dense;
        v[k++] = sym ? y : -0.4 * y;
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, A));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

static void test_diagonal_rows_and_dense_row(void **state)
{
    gs_csr A = {0};
    make_arrow_with_diag_rows(4099, 2049, false, &A);
    ilu_case("diagonal rows + dense row 2050, n=4099", &A, 0, &opts_error);
    gs_csr_free(&A);
    make_arrow_with_diag_rows(4099, 2049, true, &A);
    ic_case("diagonal rows + dense row 2050, n=4099", &A, &opts_error);
    ilu_case("symmetric arrow, n=4099", &A, 0, &opts_error);
    gs_csr_free(&A);
    make_arrow_with_diag_rows(1001, 1000, true, &A); /* the dense row last: it depends on every row */
    ic_case("dense last row, n=1001", &A, &opts_error);
    ilu_case("dense last row, n=1001", &A, 0, &opts_error);
    gs_csr_free(&A);
}

/* A tridiagonal matrix: one chain, n levels (every row waits for the previous one). */
static void test_chain(void **state)
{
    gs_int n = gs_test_quick() >= 2 ? 1003 : gs_test_quick() ? 5003 : 20011; /* 2: racecheck */
    gs_csr A = {0};
    make_tridiag(n, -1.0, 2.5, -0.6, &A);
    ilu_case("tridiagonal chain", &A, 0, &opts_error);
    ilu_case("tridiagonal chain", &A, 3, &opts_error); /* no fill: same pattern */
    gs_csr_free(&A);
    make_tridiag(n, -1.0, 2.5, -1.0, &A);
    ic_case("symmetric tridiagonal chain", &A, &opts_error);
    gs_csr_free(&A);
}

/* Generated PDE matrices: Poisson 3D (7-point) and the 27-point Laplacian (IC(0) and ILU(k)), the 3D
 * convection-diffusion (nonsymmetric). */
static void test_generated(void **state)
{
    gs_csr A = {0};
    if (gs_test_quick() >= 2) { /* racecheck: one ILU and one IC case of a small PDE matrix */
        GS_ASSERT_OK(gs_gen_poisson3d(9, 10, 11, &A));
        ilu_case("poisson3d 9x10x11", &A, 0, &opts_error);
        ic_case("poisson3d 9x10x11", &A, &opts_error);
        gs_csr_free(&A);
        return;
    }
    GS_ASSERT_OK(gs_gen_poisson3d(17, 19, 21, &A));
    ilu_case("poisson3d 17x19x21", &A, 0, &opts_error);
    ic_case("poisson3d 17x19x21", &A, &opts_error);
    ilu_case("poisson3d 17x19x21", &A, 1, &opts_error);
    ilu_case("poisson3d 17x19x21", &A, 2, &opts_error);
    gs_csr_free(&A);
    if (!gs_test_quick()) {
        GS_ASSERT_OK(gs_gen_poisson3d(48, 48, 48, &A));
        ilu_case("poisson3d 48^3", &A, 0, &opts_error);
        ic_case("poisson3d 48^3", &A, &opts_error);
        gs_csr_free(&A);
    }
    GS_ASSERT_OK(gs_gen_laplace27(13, 11, 9, &A));
    ilu_case("laplace27 13x11x9", &A, 0, &opts_error);
    ilu_case("laplace27 13x11x9", &A, 1, &opts_error);
    ic_case("laplace27 13x11x9", &A, &opts_error);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_convdiff3d(15, 14, 13, 2.0, &A));
    ilu_case("convdiff3d 15x14x13", &A, 0, &opts_error);
    ilu_case("convdiff3d 15x14x13", &A, 2, &opts_error);
    gs_csr_free(&A);
    GS_ASSERT_OK(gs_gen_poisson2d(129, 67, &A));
    ilu_case("poisson2d 129x67", &A, 0, &opts_error);
    ic_case("poisson2d 129x67", &A, &opts_error);
    gs_csr_free(&A);
}

/* The real matrices of the host precond tests (data/matrices). */
static void test_real_matrices(void **state)
{
    /* racecheck (GS_TEST_QUICK=2): one matrix of each kind -- the same kernels, a factorization taking
     * seconds under the tool */
    const size_t per_kind = gs_test_quick() >= 2 ? 1 : 4;
    const char *nonsym[] = {"sherman1.mtx", "pde900.mtx", "orsirr_1.mtx", "cage5.mtx"};
    for (size_t m = 0; m < per_kind; m++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_load(nonsym[m], &A));
        ilu_case(nonsym[m], &A, 0, &opts_error);
        ilu_case(nonsym[m], &A, 1, &opts_error);
        gs_csr_free(&A);
    }
    const char *spd[] = {"nos4.mtx", "gr_30_30.mtx", "bcsstk01.mtx", "494_bus.mtx"};
    for (size_t m = 0; m < per_kind; m++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_load(spd[m], &A));
        ic_case(spd[m], &A, &opts_error);
        ilu_case(spd[m], &A, 0, &opts_error);
        gs_csr_free(&A);
    }
}

/* Zero pivots: under "error" the same row and message as the host; under "shift" the same shifted rows
 * and values (compared bit for bit at the shifted pivots). */
static void test_zero_pivots(void **state)
{
    const char *names[] = {"west0067.mtx", "impcol_a.mtx"};
    for (int m = 0; m < 2; m++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_test_load(names[m], &A));
        ilu_case(names[m], &A, 0, &opts_error);
        ilu_case(names[m], &A, 0, &opts_shift);
        ilu_case(names[m], &A, 1, &opts_shift);
        /* the shifted pivots themselves */
        gs_csr L = {0}, U = {0}, Ld = {0}, Ud = {0};
        gs_factor_info ih, id;
        GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
        GS_ASSERT_OK(gs_csr_copy(&L, &Ld));
        GS_ASSERT_OK(gs_csr_copy(&U, &Ud));
        GS_ASSERT_OK(gs_ilu_numeric(&A, &opts_shift, &L, &U, &ih));
        poison_values(&Ld);
        poison_values(&Ud);
        GS_ASSERT_OK(gs_ilu_numeric_cuda(dev, &A, &opts_shift, &Ld, &Ud, &id, NULL, NULL));
        assert_true(ih.nshifted > 0);
        for (int k = 0; k < (ih.nshifted < 16 ? ih.nshifted : 16); k++) {
            gs_int r = ih.shifted_rows[k];
            assert_true(Ud.val[Ud.rowptr[r]] == U.val[U.rowptr[r]]);
            assert_true(fabs(U.val[U.rowptr[r]]) > 0.0);
        }
        gs_csr_free(&L);
        gs_csr_free(&U);
        gs_csr_free(&Ld);
        gs_csr_free(&Ud);
        gs_csr_free(&A);
    }
    /* rows without a stored diagonal and empty rows: zero pivots there ("A stores no diagonal") */
    gs_csr B = {0}, C = {0};
    GS_ASSERT_OK(gs_test_random_sparse(1000, 4, 1.5, 9, &B));
    gs_int *ri = NULL, *ci = NULL, k = 0;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, B.nnz));
    GS_ASSERT_OK(GS_MALLOC(ci, B.nnz));
    GS_ASSERT_OK(GS_MALLOC(v, B.nnz));
    for (gs_int i = 0; i < B.nrows; i++)
        for (gs_int p = B.rowptr[i]; p < B.rowptr[i + 1]; p++) {
            if ((i % 7 == 3 && B.colind[p] != i) || i % 11 == 5) continue; /* diagonal only / empty */
            if (i % 13 == 6 && B.colind[p] == i) continue;                   /* no diagonal */
            ri[k] = i;
            ci[k] = B.colind[p];
            v[k++] = B.val[p];
        }
    GS_ASSERT_OK(gs_csr_from_coo(B.nrows, B.ncols, k, ri, ci, v, &C));
    ilu_case("empty rows, rows without diagonal", &C, 0, &opts_error);
    ilu_case("empty rows, rows without diagonal", &C, 0, &opts_shift);
    ilu_case("empty rows, rows without diagonal", &C, 2, &opts_shift);
    gs_factor_opts no_shift = opts_shift;
    no_shift.shift = 0.0; /* shift policy with a shift that cannot be used */
    ilu_case("empty rows, shift 0", &C, 0, &no_shift);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&B);
    gs_csr_free(&C);

    /* IC(0) of a symmetric indefinite matrix breaks down: same row; shifted: same rows and values */
    gs_csr S = {0};
    make_random_spd(700, 4, 5, &S);
    for (gs_int i = 0; i < S.nrows; i++)
        for (gs_int p = S.rowptr[i]; p < S.rowptr[i + 1]; p++)
            if (S.colind[p] == i && i % 5 == 2) S.val[p] = 0.05 * S.val[p]; /* weak diagonals */
    ic_case("indefinite symmetric n=700", &S, &opts_error);
    ic_case("indefinite symmetric n=700", &S, &opts_shift);
    ic_case("indefinite symmetric n=700, shift 0", &S, &no_shift);
    gs_csr_free(&S);
}

/* Non-finite input, and row numbering in messages and info (row_offset, row_names). */
static void test_nonfinite_and_row_names(void **state)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_random_sparse(2000, 4, 1.5, 21, &A));
    A.val[A.rowptr[401] + 1] = NAN;
    ilu_case("NaN in row 402", &A, 0, &opts_shift);
    A.val[A.rowptr[401] + 1] = INFINITY;
    ilu_case("Inf in row 402", &A, 1, &opts_error);
    gs_csr_free(&A);

    make_random_spd(900, 4, 8, &A);
    A.val[A.rowptr[600]] = NAN;
    ic_case("NaN in row 601", &A, &opts_error);
    gs_csr_free(&A);

    /* a tiny pivot growth to overflow: non-finite values in the factor */
    make_tridiag(300, -1e200, 1e-200, -1e200, &A);
    ilu_case("overflowing tridiagonal", &A, 0, &opts_error);
    gs_csr_free(&A);

    GS_ASSERT_OK(gs_test_load("west0067.mtx", &A));
    gs_int *names = NULL;
    GS_ASSERT_OK(GS_MALLOC(names, A.nrows));
    for (gs_int i = 0; i < A.nrows; i++) names[i] = 3 * (A.nrows - 1 - i);
    gs_factor_opts o = opts_shift;
    o.row_names = names;
    o.row_offset = 1000;
    ilu_case("west0067 with row names", &A, 0, &o);
    o.zero_pivot = GS_ZERO_PIVOT_ERROR;
    ilu_case("west0067 with row names", &A, 0, &o);
    gs_free(&names);
    gs_csr_free(&A);
}

/* Malformed input: the host's checks and messages. */
static void test_invalid_input(void **state)
{
    gs_csr A = {0}, L = {0}, U = {0}, L2 = {0}, U2 = {0}, F = {0}, FT = {0};
    char hmsg[1024];
    GS_ASSERT_OK(gs_gen_poisson2d(40, 37, &A));
    GS_ASSERT_OK(gs_iluk_symbolic(&A, 0, &L, &U));
    GS_ASSERT_OK(gs_csr_copy(&L, &L2));
    GS_ASSERT_OK(gs_csr_copy(&U, &U2));

    /* an unsorted row of A */
    gs_int r = 777, p = A.rowptr[r], tmp = A.colind[p];
    A.colind[p] = A.colind[p + 1];
    A.colind[p + 1] = tmp;
    gs_status hs = host_outcome(gs_ilu_numeric(&A, NULL, &L, &U, NULL), hmsg, sizeof hmsg);
    assert_int_equal(hs, GS_ERR_ARG);
    same_failure("unsorted row", hs, hmsg, gs_ilu_numeric_cuda(dev, &A, NULL, &L2, &U2, NULL, NULL, NULL));
    ilu0_dev_case("unsorted row 778", &A, &opts_error); /* the symbolic factorization's message */
    hs = host_outcome(gs_ic0(&A, NULL, &F, &FT, NULL), hmsg, sizeof hmsg);
    same_failure("unsorted row, IC(0)", hs, hmsg, gs_ic0_numeric_cuda(dev, &A, NULL, NULL, &F, &FT, NULL, NULL, NULL));
    A.colind[p + 1] = A.colind[p];
    A.colind[p] = tmp;

    /* a column out of range */
    tmp = A.colind[A.rowptr[1001 + 1] - 1];
    A.colind[A.rowptr[1001 + 1] - 1] = A.ncols + 4;
    hs = host_outcome(gs_ilu_numeric(&A, NULL, &L, &U, NULL), hmsg, sizeof hmsg);
    same_failure("column out of range", hs, hmsg, gs_ilu_numeric_cuda(dev, &A, NULL, &L2, &U2, NULL, NULL, NULL));
    ilu0_dev_case("column out of range in row 1002", &A, &opts_error);
    A.colind[A.rowptr[1001 + 1] - 1] = tmp;

    /* a matrix without values: the numeric factorization's message */
    double *vals = A.val;
    A.val = NULL;
    ilu0_dev_case("no values", &A, &opts_error);
    A.val = vals;

    /* U pattern row without its diagonal first, L pattern not strictly lower */
    U2.colind[U2.rowptr[500]] = 501;
    gs_int save = U.colind[U.rowptr[500]];
    U.colind[U.rowptr[500]] = 501;
    hs = host_outcome(gs_ilu_numeric(&A, NULL, &L, &U, NULL), hmsg, sizeof hmsg);
    same_failure("U pattern without diagonal", hs, hmsg, gs_ilu_numeric_cuda(dev, &A, NULL, &L2, &U2, NULL, NULL, NULL));
    U.colind[U.rowptr[500]] = save;
    U2.colind[U2.rowptr[500]] = save;
    save = L.colind[L.rowptr[300 + 1] - 1];
    L.colind[L.rowptr[300 + 1] - 1] = 300;
    L2.colind[L2.rowptr[300 + 1] - 1] = 300;
    hs = host_outcome(gs_ilu_numeric(&A, NULL, &L, &U, NULL), hmsg, sizeof hmsg);
    same_failure("L pattern with a diagonal", hs, hmsg, gs_ilu_numeric_cuda(dev, &A, NULL, &L2, &U2, NULL, NULL, NULL));
    L.colind[L.rowptr[300 + 1] - 1] = save;
    L2.colind[L2.rowptr[300 + 1] - 1] = save;

    /* patterns of another matrix */
    gs_csr B = {0}, LB = {0}, UB = {0};
    GS_ASSERT_OK(gs_gen_poisson2d(10, 10, &B));
    GS_ASSERT_OK(gs_iluk_symbolic(&B, 0, &LB, &UB));
    hs = host_outcome(gs_ilu_numeric(&A, NULL, &LB, &UB, NULL), hmsg, sizeof hmsg);
    same_failure("patterns of another matrix", hs, hmsg, gs_ilu_numeric_cuda(dev, &A, NULL, &LB, &UB, NULL, NULL, NULL));

    /* after all that, a valid call still works on the same device */
    ilu_case("poisson2d 40x37 after failures", &A, 0, &opts_error);

    gs_csr_free(&B);
    gs_csr_free(&LB);
    gs_csr_free(&UB);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_csr_free(&L2);
    gs_csr_free(&U2);
}

/* The plug-ins on the cuda backend: factor_on = auto factors on the device, = host on the host; both
 * applications agree, and the report says where. */
static void plugin_case(gs_config *cfg, const char *type, const gs_csr *A)
{
    gs_int n = A->nrows;
    double *r = NULL, *z[2] = {NULL, NULL};
    gs_vector *vr = NULL, *vz = NULL;
    uint64_t seed = 5;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z[0], n));
    GS_ASSERT_OK(GS_MALLOC(z[1], n));
    for (gs_int i = 0; i < n; i++) r[i] = gs_test_rand(&seed) - 0.4;
    GS_ASSERT_OK(gs_vec_create(dev, n, &vr));
    GS_ASSERT_OK(gs_vec_create(dev, n, &vz));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    const char *where[2] = {"auto", "host"}, *expect[2] = {"device", "host"};
    long long nnz_lu[2][2] = {{-1, -1}, {-1, -1}};
    for (int w = 0; w < 2; w++) {
        char set[64];
        snprintf(set, sizeof set, "preconditioner.factor_on=%s", where[w]);
        GS_ASSERT_OK(gs_config_set(cfg, set));
        gs_pc *pc = NULL;
        gs_report *rep = NULL;
        gs_matrix *M = NULL;
        GS_ASSERT_OK(gs_pc_create(type, dev, cfg, &pc));
        if (w == 0) { /* the solver's operator on the device: IC(0) reads A there */
            GS_ASSERT_OK(gs_mat_create(dev, A, &M));
            GS_ASSERT_OK(gs_pc_set_operator(pc, M));
        }
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
        if (w == 0) GS_ASSERT_OK(gs_pc_setup_numeric(pc, A)); /* a second numeric setup on the same pattern */
        gs_test_poison(n, z[w]);
        GS_ASSERT_OK(gs_vec_upload(vz, z[w]));
        GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
        GS_ASSERT_OK(gs_vec_download(vz, z[w]));
        GS_ASSERT_OK(gs_report_create(&rep));
        gs_pc_view(pc, rep);
        const gs_report_entry *e = gs_report_find(rep, "preconditioner.factor_on");
        assert_non_null(e);
        assert_string_equal(e->s, expect[w]);
        const gs_report_entry *el = gs_report_find(rep, "preconditioner.nnz_L"),
                              *eu = gs_report_find(rep, "preconditioner.nnz_U");
        assert_non_null(el);
        assert_non_null(eu);
        nnz_lu[w][0] = el->i;
        nnz_lu[w][1] = eu->i;
        const gs_report_entry *tk = gs_report_find(rep, "preconditioner.time_factor_kernel");
        if (w == 0) {
            assert_non_null(tk);
            assert_true(tk->d > 0.0);
            const gs_report_entry *tu = gs_report_find(rep, "preconditioner.time_factor_upload");
            assert_non_null(tu);
            if (strcmp(type, "ic0") == 0 || strcmp(type, "ilu0") == 0)
                assert_true(tu->d == 0.0); /* A read from the operator */
            assert_non_null(gs_report_find(rep, "preconditioner.time_factor_download"));
        } else {
            assert_null(tk);
        }
        gs_report_destroy(&rep);
        gs_pc_destroy(&pc);
        gs_mat_destroy(&M);
    }
    /* the factors' sizes are reported the same way whether they stayed on the device or not */
    assert_true(nnz_lu[0][0] == nnz_lu[1][0] && nnz_lu[0][1] == nnz_lu[1][1]);
    assert_true(nnz_lu[0][1] >= n);
    double d = gs_test_rel_diff(n, z[0], z[1]);
    if (d > 1e-12) fail_msg("%s: device-factored apply differs from host-factored by %g", type, d);
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
    gs_free(&r);
    gs_free(&z[0]);
    gs_free(&z[1]);
}

static void test_plugins(void **state)
{
    gs_config *cfg = NULL;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_config_create(&cfg));
    if (gs_test_quick() >= 2) GS_ASSERT_OK(gs_gen_poisson2d(21, 19, &A)); /* racecheck: 399 rows */
    else GS_ASSERT_OK(gs_gen_poisson2d(61, 53, &A));
    plugin_case(cfg, "ilu0", &A);
    plugin_case(cfg, "ic0", &A);
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.fill_level=0")); /* ILU(k), k = 0: the device pattern */
    plugin_case(cfg, "iluk", &A);
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.fill_level=2"));
    plugin_case(cfg, "iluk", &A);
    /* the device factors go to the triangular solvers without leaving the device (analyse_dev) or, for
     * solvers that read their factor on the host, through a download: the same application either way */
    const char *pairs[][2] = {{"levelset", "syncfree"}, {"tiled", "reference"}, {"cusparse", "jacobi"}};
    for (int k = 0; k < 3; k++) {
        char set[96];
        snprintf(set, sizeof set, "trisolve.lower.type=%s", pairs[k][0]);
        GS_ASSERT_OK(gs_config_set(cfg, set));
        snprintf(set, sizeof set, "trisolve.upper.type=%s", pairs[k][1]);
        GS_ASSERT_OK(gs_config_set(cfg, set));
        plugin_case(cfg, "ilu0", &A);
        plugin_case(cfg, "ic0", &A);
    }
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=auto"));
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.upper.type=auto"));
    /* ILUT has no device factorization: "device" is refused, naming the key */
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.factor_on=device"));
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_pc_create("ilut", dev, cfg, &pc));
    GS_ASSERT_FAILS(gs_pc_setup_symbolic(pc, &A), GS_ERR_CONFIG, "preconditioner.factor_on");
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_config_destroy(&cfg);
}

/* IC(0) on the device checks symmetry on a host thread while the GPU factorizes: an asymmetric A is
 * refused with the host check's message (the first pair in row order), with or without the operator, and
 * a symmetric one after it is accepted by the same preconditioner. */
static void test_ic0_device_asymmetric(void **state)
{
    gs_config *cfg = NULL;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.factor_on=device"));
    GS_ASSERT_OK(gs_gen_poisson2d(47, 39, &A));
    /* a_ij for the last upper entry of row 700 and the first upper entry of row 1200 (0-based) */
    gs_int r1 = 700, q1 = A.rowptr[r1 + 1] - 1, r2 = 1200, q2 = A.rowptr[r2] + 3;
    assert_true(A.colind[q1] > r1 && A.colind[q2] > r2);
    double keep1 = A.val[q1], keep2 = A.val[q2];
    A.val[q2] *= 1.5;
    A.val[q1] *= 1.25;
    char want[256];
    snprintf(want, sizeof want, "preconditioner ic0 needs a symmetric matrix, but A(%d,%d) = %.17g while A(%d,%d) = ",
             (int)r1 + 1, (int)A.colind[q1] + 1, A.val[q1], (int)A.colind[q1] + 1, (int)r1 + 1);
    for (int with_op = 0; with_op < 2; with_op++) {
        gs_pc *pc = NULL;
        gs_matrix *M = NULL;
        GS_ASSERT_OK(gs_pc_create("ic0", dev, cfg, &pc));
        if (with_op) {
            GS_ASSERT_OK(gs_mat_create(dev, &A, &M));
            GS_ASSERT_OK(gs_pc_set_operator(pc, M));
        }
        GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
        GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_ARG, want);
        gs_mat_destroy(&M);
        A.val[q1] = keep1; /* symmetric again: accepted */
        A.val[q2] = keep2;
        if (with_op) GS_ASSERT_OK(gs_mat_create(dev, &A, &M));
        if (with_op) GS_ASSERT_OK(gs_pc_set_operator(pc, M));
        GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
        gs_pc_destroy(&pc);
        gs_mat_destroy(&M);
        A.val[q2] *= 1.5;
        A.val[q1] *= 1.25;
    }
    gs_csr_free(&A);
    gs_config_destroy(&cfg);
}

static int setup(void **state)
{
    if (gs_backend_create("cuda", 0, &dev) != GS_OK) {
        gs_error_print(stderr);
        return -1;
    }
    assert_true(gs_factor_cuda_available());
    return 0;
}

static int teardown(void **state)
{
    gs_backend_destroy(&dev);
    return 0;
}

int main(void)
{
    gs_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_diagonal_rows_and_dense_row),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_real_matrices),
        cmocka_unit_test(test_zero_pivots),
        cmocka_unit_test(test_nonfinite_and_row_names),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_plugins),
        cmocka_unit_test(test_ic0_device_asymmetric),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
