/* Tests of the block preconditioners BILU(k), BILUT and RAS(delta) on the host backend, against
 * factorizations and triangular solves computed directly in the test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "pc_fixture.h"

#include "cfg/config.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/block.h"
#include "precond/factor.h"
#include "precond/ordering.h"
#include "precond/precond.h"
#include "solver/solver.h"

/* A gs_pc filled the way gs_pc_create does, with one of the create functions under test. */
static gs_pc *make_pc(pc_fixture *f, gs_pc_create_fn create, const char *type)
{
    gs_pc *pc = NULL;
    GS_ASSERT_OK(gs_calloc(&pc, 1, sizeof *pc));
    pc->type = type;
    pc->be = f->be;
    pc->cfg = f->cfg;
    GS_ASSERT_OK(create(pc));
    return pc;
}

static void random_vector(gs_int n, uint64_t seed, double *x)
{
    uint64_t s = seed;
    for (gs_int i = 0; i < n; i++) x[i] = gs_test_rand(&s) - 0.5;
}

/* z = M^{-1} r through the public entry points (setup done by the caller). */
static void pc_apply_host(gs_pc *pc, gs_int n, const double *r, double *z)
{
    gs_vector *vr = NULL, *vz = NULL;
    GS_ASSERT_OK(gs_vec_create(pc->be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(pc->be, n, &vz));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    double *poison = NULL;
    GS_ASSERT_OK(GS_MALLOC(poison, n));
    gs_test_poison(n, poison);
    GS_ASSERT_OK(gs_vec_upload(vz, poison));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    gs_free(&poison);
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
}

static gs_pc *setup_pc(pc_fixture *f, gs_pc_create_fn create, const char *type, const gs_csr *A)
{
    gs_pc *pc = make_pc(f, create, type);
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, A));
    return pc;
}

/* x = U^{-1} L^{-1} b with L unit lower (strict part stored) and U upper with diagonal first. */
static void lu_solve(const gs_csr *L, const gs_csr *U, const double *b, double *x)
{
    gs_int n = L->nrows;
    for (gs_int i = 0; i < n; i++) {
        double s = b[i];
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) s -= L->val[p] * x[L->colind[p]];
        x[i] = s;
    }
    for (gs_int i = n - 1; i >= 0; i--) {
        double s = x[i], d = 0.0;
        for (gs_int p = U->rowptr[i]; p < U->rowptr[i + 1]; p++) {
            if (U->colind[p] == i) d = U->val[p];
            else s -= U->val[p] * x[U->colind[p]];
        }
        x[i] = s / d;
    }
}

/* Factor B by ILU(k) (local = 0) or ILUT (local = 1) directly with precond/factor.h. */
static void factor_direct(const gs_csr *B, int local, int k, double tau, int p, gs_csr *L, gs_csr *U)
{
    gs_factor_opts o = {0};
    o.fill_level = k;
    o.drop_tol = tau;
    o.max_fill = p;
    gs_factor_info info;
    if (local == 0) {
        GS_ASSERT_OK(gs_iluk_symbolic(B, k, L, U));
        GS_ASSERT_OK(gs_ilu_numeric(B, &o, L, U, &info));
    } else {
        GS_ASSERT_OK(gs_ilut(B, &o, L, U, &info));
    }
}

/* The members of subdomain p grown by `overlap` layers, computed here without gs_grow_overlap: a
 * layer adds every i with an entry (i, j) or (j, i) of A whose j is already in the set. */
static gs_int subdomain_direct(const gs_csr *A, const gs_int *part, gs_int p, int overlap, gs_int *S)
{
    gs_int n = A->nrows;
    unsigned char *in = NULL, *nxt = NULL;
    GS_ASSERT_OK(GS_CALLOC(in, n));
    GS_ASSERT_OK(GS_CALLOC(nxt, n));
    for (gs_int i = 0; i < n; i++) in[i] = part[i] == p;
    for (int l = 0; l < overlap; l++) {
        memcpy(nxt, in, (size_t)n);
        for (gs_int i = 0; i < n; i++)
            for (gs_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
                gs_int j = A->colind[q];
                if (in[j]) nxt[i] = 1;
                if (in[i]) nxt[j] = 1;
            }
        memcpy(in, nxt, (size_t)n);
    }
    gs_int k = 0;
    for (gs_int i = 0; i < n; i++)
        if (in[i]) S[k++] = i;
    gs_free(&in);
    gs_free(&nxt);
    return k;
}

/* z = sum_p R_p,own^T (L_p U_p)^{-1} A(S_p, S_p)-factors R_p r, every piece computed directly. With
 * overlap 0 this is the block Jacobi / BILU operator. */
static void schwarz_direct(const gs_csr *A, gs_int nparts, int seed, int overlap, int local, int k, double tau,
                           int pmax, const double *r, double *z)
{
    gs_int n = A->nrows;
    gs_int *part = NULL, *S = NULL;
    double *rl = NULL, *zl = NULL;
    GS_ASSERT_OK(GS_MALLOC(part, n));
    GS_ASSERT_OK(GS_MALLOC(S, n));
    GS_ASSERT_OK(GS_MALLOC(rl, n));
    GS_ASSERT_OK(GS_MALLOC(zl, n));
    GS_ASSERT_OK(gs_partition_kway(A, nparts, seed, part));
    gs_test_poison(n, z);
    for (gs_int p = 0; p < nparts; p++) {
        gs_int m = subdomain_direct(A, part, p, overlap, S);
        if (m == 0) continue;
        gs_csr B = {0}, L = {0}, U = {0};
        GS_ASSERT_OK(gs_csr_submatrix(A, m, S, &B));
        factor_direct(&B, local, k, tau, pmax, &L, &U);
        for (gs_int i = 0; i < m; i++) rl[i] = r[S[i]];
        lu_solve(&L, &U, rl, zl);
        for (gs_int i = 0; i < m; i++)
            if (part[S[i]] == p) z[S[i]] = zl[i];
        gs_csr_free(&B);
        gs_csr_free(&L);
        gs_csr_free(&U);
    }
    gs_free(&part);
    gs_free(&S);
    gs_free(&rl);
    gs_free(&zl);
}

static long long report_int(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "report key %s missing\n", key);
    assert_non_null(e);
    assert_int_equal(e->type, GS_REPORT_INT);
    return e->i;
}

static double report_double(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fprintf(stderr, "report key %s missing\n", key);
    assert_non_null(e);
    assert_int_equal(e->type, GS_REPORT_DOUBLE);
    return e->d;
}

/* One block: BILU(k) is ILU(k) of A itself. */
static void test_bilu_one_block_is_iluk(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, L = {0}, U = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(13, 11, 0.7, &A)); /* n = 143 */
    gs_int n = A.nrows;
    pc_fixture_set(f, "preconditioner.blocks=1");
    pc_fixture_set(f, "preconditioner.fill_level=2");
    gs_pc *pc = setup_pc(f, gs_pc_create_bilu, "bilu", &A);
    double *r = NULL, *z = NULL, *zr = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z, n));
    GS_ASSERT_OK(GS_MALLOC(zr, n));
    random_vector(n, 5, r);
    pc_apply_host(pc, n, r, z);

    factor_direct(&A, 0, 2, 0, 0, &L, &U);
    lu_solve(&L, &U, r, zr);
    assert_true(gs_test_rel_diff(n, z, zr) < 1e-13);

    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_int_equal(report_int(rep, "preconditioner.blocks_nonempty"), 1);
    assert_int_equal(report_int(rep, "preconditioner.dropped_couplings"), 0);
    assert_int_equal(report_int(rep, "preconditioner.block_size_min"), n);
    assert_int_equal(report_int(rep, "preconditioner.nnz_L"), L.nnz);
    assert_int_equal(report_int(rep, "preconditioner.nnz_U"), U.nnz);
    assert_true(fabs(report_double(rep, "preconditioner.fill_ratio") - (double)(L.nnz + U.nnz) / A.nnz) < 1e-12);
    assert_true(report_double(rep, "preconditioner.fill_ratio") > 1.0); /* k = 2 adds fill */
    gs_report_destroy(&rep);

    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_free(&r);
    gs_free(&z);
    gs_free(&zr);
}

/* Several blocks: BILU(k) apply = independent ILU(k) solves of each A(part, part). */
static void check_bilu_against_direct(pc_fixture *f, gs_pc_create_fn create, const char *type, int local)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(17, 19, 1.3, &A)); /* n = 323 */
    gs_int n = A.nrows, nparts = 7;
    int k = 1, pmax = 4;
    double tau = 1e-2;
    pc_fixture_set(f, "preconditioner.blocks=7");
    pc_fixture_set(f, "preconditioner.fill_level=1");
    pc_fixture_set(f, "preconditioner.drop_tolerance=1e-2");
    pc_fixture_set(f, "preconditioner.max_fill=4");
    pc_fixture_set(f, "preconditioner.seed=11");
    gs_pc *pc = setup_pc(f, create, type, &A);
    double *r = NULL, *z = NULL, *zr = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z, n));
    GS_ASSERT_OK(GS_MALLOC(zr, n));
    random_vector(n, 9, r);
    pc_apply_host(pc, n, r, z);
    schwarz_direct(&A, nparts, 11, 0, local, k, tau, pmax, r, zr);
    double diff = gs_test_rel_diff(n, z, zr);
    if (!(diff < 1e-13)) fprintf(stderr, "%s: rel diff %g\n", type, diff);
    assert_true(diff < 1e-13);

    /* the couplings between parts are what BILU drops */
    gs_int *part = NULL;
    GS_ASSERT_OK(GS_MALLOC(part, n));
    GS_ASSERT_OK(gs_partition_kway(&A, nparts, 11, part));
    gs_int dropped = 0;
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = A.rowptr[i]; p < A.rowptr[i + 1]; p++) dropped += part[A.colind[p]] != part[i];
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_int_equal(report_int(rep, "preconditioner.blocks"), nparts);
    assert_int_equal(report_int(rep, "preconditioner.blocks_nonempty"), nparts);
    assert_int_equal(report_int(rep, "preconditioner.dropped_couplings"), dropped);
    assert_true(dropped > 0);
    assert_true(report_int(rep, "preconditioner.block_size_min") <= report_int(rep, "preconditioner.block_size_max"));
    assert_true(report_int(rep, "preconditioner.block_size_max") < n);
    gs_report_destroy(&rep);

    /* a new numeric setup picks up new values on the same pattern: M(2A)^{-1} r = M(A)^{-1} r / 2 */
    for (gs_int p = 0; p < A.nnz; p++) A.val[p] *= 2.0;
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
    pc_apply_host(pc, n, r, zr);
    for (gs_int i = 0; i < n; i++) zr[i] *= 2.0;
    assert_true(gs_test_rel_diff(n, zr, z) < 1e-13);

    gs_pc_destroy(&pc);
    gs_csr_free(&A);
    gs_free(&part);
    gs_free(&r);
    gs_free(&z);
    gs_free(&zr);
}

static void test_bilu_equals_independent_block_solves(void **state)
{
    check_bilu_against_direct(*state, gs_pc_create_bilu, "bilu", 0);
}

static void test_bilut_equals_independent_block_solves(void **state)
{
    check_bilu_against_direct(*state, gs_pc_create_bilut, "bilut", 1);
}

/* More parts than rows: every block is one row, so BILU(0) is Jacobi: z_i = r_i / a_ii. */
static void test_bilu_more_blocks_than_rows_is_jacobi(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_random_sparse(45, 4, 2.0, 3, &A));
    gs_int n = A.nrows;
    pc_fixture_set(f, "preconditioner.blocks=64");
    gs_pc *pc = setup_pc(f, gs_pc_create_bilu, "bilu", &A);
    double r[45], z[45], d[45];
    random_vector(n, 4, r);
    pc_apply_host(pc, n, r, z);
    gs_csr_diagonal(&A, d, NULL, NULL);
    for (gs_int i = 0; i < n; i++) assert_true(fabs(z[i] - r[i] / d[i]) <= 1e-15 * fabs(r[i] / d[i]));
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_int_equal(report_int(rep, "preconditioner.blocks_nonempty"), n);
    assert_int_equal(report_int(rep, "preconditioner.block_size_max"), 1);
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

static void test_ras_overlap0_equals_bilu(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(21, 16, 0.9, &A)); /* n = 336 */
    gs_int n = A.nrows;
    pc_fixture_set(f, "preconditioner.blocks=6");
    pc_fixture_set(f, "preconditioner.fill_level=1");
    pc_fixture_set(f, "preconditioner.overlap=0");
    pc_fixture_set(f, "preconditioner.local=iluk");
    double *r = NULL, *z1 = NULL, *z2 = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z1, n));
    GS_ASSERT_OK(GS_MALLOC(z2, n));
    random_vector(n, 21, r);
    gs_pc *bilu = setup_pc(f, gs_pc_create_bilu, "bilu", &A);
    gs_pc *ras = setup_pc(f, gs_pc_create_ras, "ras", &A);
    pc_apply_host(bilu, n, r, z1);
    pc_apply_host(ras, n, r, z2);
    assert_true(gs_test_rel_diff(n, z2, z1) <= 1e-14);
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(ras, rep);
    assert_int_equal(report_int(rep, "preconditioner.extended_size"), n);
    assert_int_equal(report_int(rep, "preconditioner.overlap"), 0);
    gs_report_destroy(&rep);
    gs_pc_destroy(&bilu);
    gs_pc_destroy(&ras);

    /* same with ILUT blocks: RAS(local = ilut, overlap 0) = BILUT */
    pc_fixture_set(f, "preconditioner.local=ilut");
    bilu = setup_pc(f, gs_pc_create_bilut, "bilut", &A);
    ras = setup_pc(f, gs_pc_create_ras, "ras", &A);
    pc_apply_host(bilu, n, r, z1);
    pc_apply_host(ras, n, r, z2);
    assert_true(gs_test_rel_diff(n, z2, z1) <= 1e-14);
    gs_pc_destroy(&bilu);
    gs_pc_destroy(&ras);

    gs_csr_free(&A);
    gs_free(&r);
    gs_free(&z1);
    gs_free(&z2);
}

/* RAS(1) = sum_p R_p,own^T (ILU of A(S_p, S_p))^{-1} R_p r computed directly; it differs from BILU. */
static void check_ras_overlap(pc_fixture *f, int overlap, int local)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(19, 18, 2.0, &A)); /* n = 342 */
    gs_int n = A.nrows;
    char buf[64];
    snprintf(buf, sizeof buf, "preconditioner.overlap=%d", overlap);
    pc_fixture_set(f, buf);
    pc_fixture_set(f, "preconditioner.blocks=5");
    pc_fixture_set(f, "preconditioner.seed=3");
    pc_fixture_set(f, "preconditioner.fill_level=0");
    pc_fixture_set(f, "preconditioner.drop_tolerance=1e-3");
    pc_fixture_set(f, "preconditioner.max_fill=6");
    pc_fixture_set(f, local == 0 ? "preconditioner.local=iluk" : "preconditioner.local=ilut");
    double *r = NULL, *z = NULL, *zr = NULL, *zb = NULL;
    GS_ASSERT_OK(GS_MALLOC(r, n));
    GS_ASSERT_OK(GS_MALLOC(z, n));
    GS_ASSERT_OK(GS_MALLOC(zr, n));
    GS_ASSERT_OK(GS_MALLOC(zb, n));
    random_vector(n, 33, r);
    gs_pc *ras = setup_pc(f, gs_pc_create_ras, "ras", &A);
    pc_apply_host(ras, n, r, z);
    schwarz_direct(&A, 5, 3, overlap, local, 0, 1e-3, 6, r, zr);
    double diff = gs_test_rel_diff(n, z, zr);
    if (!(diff < 1e-13)) fprintf(stderr, "RAS(%d) local %d: rel diff %g\n", overlap, local, diff);
    assert_true(diff < 1e-13);

    schwarz_direct(&A, 5, 3, 0, local, 0, 1e-3, 6, r, zb);
    assert_true(gs_test_rel_diff(n, z, zb) > 1e-6); /* the overlap changes the operator */

    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(ras, rep);
    assert_true(report_int(rep, "preconditioner.extended_size") > n);
    assert_true(report_int(rep, "preconditioner.subdomain_size_max") > n / 5);
    assert_true(report_double(rep, "preconditioner.subdomain_size_avg") > (double)n / 5);
    gs_report_destroy(&rep);

    gs_pc_destroy(&ras);
    gs_csr_free(&A);
    gs_free(&r);
    gs_free(&z);
    gs_free(&zr);
    gs_free(&zb);
}

static void test_ras_overlap1_iluk_equals_direct(void **state) { check_ras_overlap(*state, 1, 0); }
static void test_ras_overlap2_ilut_equals_direct(void **state) { check_ras_overlap(*state, 2, 1); }

/* GMRES iterations to rtol 1e-8 with a block preconditioner (right preconditioning). */
static int gmres_iterations(pc_fixture *f, const gs_csr *A, gs_pc *pc)
{
    gs_int n = A->nrows;
    gs_matrix *M = NULL;
    gs_vector *b = NULL, *x = NULL;
    gs_ksp *ksp = NULL;
    gs_ksp_params prm;
    GS_ASSERT_OK(gs_ksp_params_from_config(f->cfg, &prm));
    prm.rtol = 1e-8;
    prm.restart = 30;
    prm.max_iterations = 2000;
    GS_ASSERT_OK(gs_ksp_create("gmres", f->be, &prm, &ksp));
    GS_ASSERT_OK(gs_mat_create(f->be, A, &M));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &b));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &x));
    GS_ASSERT_OK(gs_vec_set(b, 1.0));
    GS_ASSERT_OK(gs_vec_set(x, 0.0));
    gs_solve_result res;
    GS_ASSERT_OK(gs_ksp_solve(ksp, M, pc, b, x, &res));
    if (!gs_reason_converged(res.reason)) fprintf(stderr, "GMRES: %s %s\n", gs_reason_name(res.reason), res.detail);
    assert_true(gs_reason_converged(res.reason));
    double rn;
    GS_ASSERT_OK(gs_true_residual(M, b, x, &rn));
    assert_true(rn <= 1e-7 * sqrt((double)n));
    gs_ksp_destroy(&ksp);
    gs_mat_destroy(&M);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    return res.iterations;
}

/* Overlap makes the Schwarz preconditioner stronger: RAS(1) needs fewer GMRES iterations than
 * BILU(0) with the same 16 parts on a 2D convection-diffusion problem. */
static void test_ras_overlap_fewer_gmres_iterations(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(45, 41, 1.0, &A)); /* n = 1845 */
    pc_fixture_set(f, "preconditioner.blocks=16");
    pc_fixture_set(f, "preconditioner.fill_level=0");
    pc_fixture_set(f, "preconditioner.overlap=1");
    pc_fixture_set(f, "preconditioner.local=iluk");
    gs_pc *bilu = setup_pc(f, gs_pc_create_bilu, "bilu", &A);
    gs_pc *ras = setup_pc(f, gs_pc_create_ras, "ras", &A);
    int it_bilu = gmres_iterations(f, &A, bilu);
    int it_ras = gmres_iterations(f, &A, ras);
    fprintf(stderr, "GMRES(30) iterations: BILU(0) %d, RAS(1) %d\n", it_bilu, it_ras);
    assert_true(it_ras < it_bilu);
    gs_pc_destroy(&bilu);
    gs_pc_destroy(&ras);
    gs_csr_free(&A);
}

/* The 12 x 12 Laplacian whose row g (0-based) keeps only its diagonal, an explicit 0, and its upper
 * entries: its pivot is 0 in any block that holds it, whatever rows come before it. */
static void zero_pivot_matrix(gs_int g, gs_csr *A)
{
    gs_csr L2 = {0};
    GS_ASSERT_OK(gs_test_laplace2d(12, 12, &L2));
    gs_int n = L2.nrows, nnz = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, L2.nnz));
    GS_ASSERT_OK(GS_MALLOC(ci, L2.nnz));
    GS_ASSERT_OK(GS_MALLOC(v, L2.nnz));
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = L2.rowptr[i]; p < L2.rowptr[i + 1]; p++) {
            gs_int j = L2.colind[p];
            if (i == g && j < g) continue;
            ri[nnz] = i;
            ci[nnz] = j;
            v[nnz] = (i == g && j == g) ? 0.0 : L2.val[p];
            nnz++;
        }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, A));
    gs_csr_free(&L2);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
}

/* The error must name the ORIGINAL row g + 1, not the row's number inside its block. */
static void test_zero_pivot_reports_global_row(void **state)
{
    pc_fixture *f = *state;
    const gs_int g = 77;
    gs_csr A = {0};
    zero_pivot_matrix(g, &A);

    /* the row's position inside its block differs from g, so the test tells the two apart */
    pc_fixture_set(f, "preconditioner.blocks=4");
    pc_fixture_set(f, "preconditioner.seed=1");
    pc_fixture_set(f, "preconditioner.zero_pivot=error");
    gs_int part[144];
    GS_ASSERT_OK(gs_partition_kway(&A, 4, 1, part));
    gs_int local = 0;
    for (gs_int i = 0; i < g; i++) local += part[i] == part[g];
    assert_true(local != g);

    gs_pc *pc = make_pc(f, gs_pc_create_bilu, "bilu");
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_NUMERIC, "zero pivot at row 78 ");
    gs_pc_destroy(&pc);

    /* RAS names the original row as well */
    pc_fixture_set(f, "preconditioner.overlap=1");
    pc_fixture_set(f, "preconditioner.local=iluk");
    pc = make_pc(f, gs_pc_create_ras, "ras");
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &A), GS_ERR_NUMERIC, "zero pivot at row 78 ");
    gs_pc_destroy(&pc);

    /* shift policy: the factorization completes and the report names the same row */
    pc_fixture_set(f, "preconditioner.zero_pivot=shift");
    pc = make_pc(f, gs_pc_create_bilu, "bilu");
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &A));
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_pc_view(pc, rep);
    assert_int_equal(report_int(rep, "preconditioner.pivots_shifted"), 1);
    const gs_report_entry *e = gs_report_find(rep, "preconditioner.shifted_rows");
    assert_non_null(e);
    assert_string_equal(e->s, "78");
    gs_report_destroy(&rep);
    gs_pc_destroy(&pc);
    gs_csr_free(&A);
}

/* A plug-in given a block B = A(S, S) and the names S of its rows (gs_pc_set_row_names, as a rank's
 * block or subdomain is given) names row g of A as g + 1 in its messages, not by its position in S. */
static void test_row_names_of_a_block(void **state)
{
    pc_fixture *f = *state;
    const gs_int g = 77;
    gs_csr A = {0}, B = {0};
    gs_int part[144], S[144], m = 0, at = -1;
    zero_pivot_matrix(g, &A);
    GS_ASSERT_OK(gs_partition_kway(&A, 4, 1, part));
    for (gs_int i = 0; i < A.nrows; i++)
        if (part[i] == part[g]) {
            if (i == g) at = m;
            S[m++] = i;
        }
    assert_true(at >= 0 && at != g);
    GS_ASSERT_OK(gs_csr_submatrix(&A, m, S, &B));
    pc_fixture_set(f, "preconditioner.zero_pivot=error");
    pc_fixture_set(f, "preconditioner.blocks=2");
    pc_fixture_set(f, "preconditioner.overlap=1");
    static const struct {
        const char *type, *needle;
    } cases[] = {{"ilu0", "row 78 (1-based)"}, {"iluk", "row 78 (1-based)"}, {"ilut", "row 78 (1-based)"},
                 {"bilu", "row 78 (1-based)"}, {"bilut", "row 78 (1-based)"}, {"ras", "row 78 (1-based)"},
                 {"jacobi", "row 78 is"},      {"parilu", "A(78,78)"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gs_pc *pc = NULL;
        GS_ASSERT_OK(gs_pc_create(cases[c].type, f->be, f->cfg, &pc));
        gs_pc_set_row_names(pc, S);
        gs_status st = gs_pc_setup_symbolic(pc, &B);
        if (st == GS_OK) st = gs_pc_setup_numeric(pc, &B);
        if (st != GS_ERR_NUMERIC || !strstr(gs_error_message(), cases[c].needle))
            fprintf(stderr, "%s: %s: %s\n", cases[c].type, gs_status_name(st), gs_error_message());
        assert_int_equal(st, GS_ERR_NUMERIC);
        assert_non_null(strstr(gs_error_message(), cases[c].needle));
        gs_error_clear();
        gs_pc_destroy(&pc);
    }
    gs_csr_free(&A);
    gs_csr_free(&B);
}

static void test_errors(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0}, D = {0};
    GS_ASSERT_OK(gs_test_laplace2d(9, 7, &A));
    pc_fixture_set(f, "preconditioner.blocks=3");

    /* numeric setup on a matrix whose pattern differs from the symbolic one (last entry dropped) */
    gs_pc *pc = make_pc(f, gs_pc_create_bilu, "bilu");
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &A));
    GS_ASSERT_OK(gs_csr_copy(&A, &D));
    D.nnz--;
    D.rowptr[D.nrows]--;
    GS_ASSERT_FAILS(gs_pc_setup_numeric(pc, &D), GS_ERR_ARG, "pattern must not change");
    D.nnz++;
    D.rowptr[D.nrows]++;
    gs_pc_destroy(&pc);

    gs_csr_free(&A);
    gs_csr_free(&D);
}

/* Host allocation failures at every point of setup are reported as GS_ERR_MEM and leak nothing
 * (run under valgrind / ASan to see the leaks). */
static void test_allocation_failures(void **state)
{
    pc_fixture *f = *state;
    gs_csr A = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(10, 9, 0.5, &A));
    pc_fixture_set(f, "preconditioner.blocks=3");
    pc_fixture_set(f, "preconditioner.overlap=1");
    pc_fixture_set(f, "preconditioner.local=ilut");
    gs_pc_create_fn fns[3] = {gs_pc_create_bilu, gs_pc_create_bilut, gs_pc_create_ras};
    for (int t = 0; t < 3; t++) {
        int failures = 0;
        for (long k = 1; k < 100000; k++) {
            gs_pc *pc = make_pc(f, fns[t], "block");
            gs_alloc_fail_at(k);
            gs_status st = gs_pc_setup_symbolic(pc, &A);
            if (st == GS_OK) st = gs_pc_setup_numeric(pc, &A);
            gs_alloc_fail_at(0);
            if (st != GS_OK) {
                if (st != GS_ERR_MEM) gs_error_print(stderr);
                assert_int_equal(st, GS_ERR_MEM);
                gs_error_clear();
                failures++;
            }
            gs_pc_destroy(&pc);
            if (st == GS_OK) break;
        }
        assert_true(failures > 10);
    }
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        PC_FIXTURE_TEST(test_bilu_one_block_is_iluk),
        PC_FIXTURE_TEST(test_bilu_equals_independent_block_solves),
        PC_FIXTURE_TEST(test_bilut_equals_independent_block_solves),
        PC_FIXTURE_TEST(test_bilu_more_blocks_than_rows_is_jacobi),
        PC_FIXTURE_TEST(test_ras_overlap0_equals_bilu),
        PC_FIXTURE_TEST(test_ras_overlap1_iluk_equals_direct),
        PC_FIXTURE_TEST(test_ras_overlap2_ilut_equals_direct),
        PC_FIXTURE_TEST(test_ras_overlap_fewer_gmres_iterations),
        PC_FIXTURE_TEST(test_zero_pivot_reports_global_row),
        PC_FIXTURE_TEST(test_row_names_of_a_block),
        PC_FIXTURE_TEST(test_errors),
        PC_FIXTURE_TEST(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
