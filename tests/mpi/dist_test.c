/* Run under mpirun (2 or 3 ranks): the distributed SpMV, dot, dot2, nrm2 and mdot equal the
 * single-process ones computed by rank 0 on the whole matrix, for a PDE matrix, a nonsymmetric one, a
 * matrix with no couplings between parts (no halo) and one smaller than the number of ranks (a rank
 * with no rows); the distribution's rows are BILU's blocks (the same METIS parts, in order). Each
 * rank's RAS subdomain with 0..3 overlap layers is the set one process grows from the same part
 * (gs_grow_overlap on the whole graph), its matrix is A(S, S) in the order of the original rows, and
 * its exchange brings the overlap rows' entries of a vector. CG (GMRES on the nonsymmetric case) on the
 * distributed backend takes the iterations (+-1) and reaches the solution of one process; its fused CG
 * state is used. With --cuda the distributed backend's local backend is a GPU's (rank modulo the devices;
 * exit 77 without one): the same checks on device vectors; --cuda --nccl: over the NCCL transport (a GPU
 * per rank; exit 77 with fewer GPUs than ranks), and the subdomains' exchange between the devices too.
 * Without --cuda: asking for NCCL is refused on every rank, and "auto" stays on MPI. Exit 0 on success,
 * 1 on a failed check. */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/config.h"
#include "core/generate.h"
#include "core/mem.h"
#include "dist/dist.h"
#include "dist/nccl.h"
#include "dist/subdomain.h"
#include "precond/ordering.h"
#include "solver/solver.h"

#include "mpi_check.h"

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

static bool use_cuda; /* --cuda: the local backend is a GPU's */
static bool use_nccl; /* --nccl: and the ranks exchange through NCCL */

static gs_status make_backend(gs_backend **be)
{
    if (!use_cuda) return gs_backend_mpi_create(MPI_COMM_WORLD, be);
    gs_backend *local = NULL;
    GS_CALL(gs_backend_cuda_create(rank % gs_backend_cuda_device_count(), &local));
    GS_CALL(gs_backend_mpi_create_on(MPI_COMM_WORLD, local, be));
    if (use_nccl) GS_CALL(gs_backend_mpi_set_transport(*be, "nccl"));
    return GS_OK;
}

/* CG (case 1: GMRES) without a preconditioner, b = A 1, x0 = 0, rtol 1e-10: distributed (d, M on be)
 * against rank 0's solve on the whole matrix A on the host. */
static void check_solve(int k, const gs_csr *A, const gs_dist *d, gs_matrix *M, gs_backend *be)
{
    const char *type = k == 1 ? "gmres" : "cg";
    const gs_int n = d->n_global, nl = d->halo.n_own;
    gs_config *cfg = NULL;
    gs_ksp_params prm;
    gs_ksp *ksp = NULL;
    gs_vector *vb = NULL, *vx = NULL;
    gs_solve_result res, ref;
    double *b = NULL, *bl = NULL, *xl = NULL, *xg = NULL;
    if (gs_config_create(&cfg) || gs_ksp_params_from_config(cfg, &prm)) abort();
    prm.rtol = 1e-10;
    prm.max_iterations = 500;
    if (GS_MALLOC(b, n + 1) || GS_MALLOC(bl, nl + 1) || GS_MALLOC(xl, nl + 1) || GS_MALLOC(xg, n + 1)) abort();
    int ref_it = -1;
    if (rank == 0) { /* b = A 1 and the one-process solve */
        gs_backend *host = NULL;
        gs_matrix *Mh = NULL;
        gs_vector *hb = NULL, *hx = NULL;
        gs_ksp *kh = NULL;
        for (gs_int i = 0; i < n; i++) xg[i] = 1.0;
        gs_csr_spmv(1.0, A, xg, 0.0, b);
        if (gs_backend_host_create(&host) || gs_mat_create(host, A, &Mh) || gs_vec_create(host, n, &hb) ||
            gs_vec_create(host, n, &hx) || gs_vec_upload(hb, b) || gs_vec_set(hx, 0.0) ||
            gs_ksp_create(type, host, &prm, &kh) || gs_ksp_solve(kh, Mh, NULL, hb, hx, &ref))
            abort();
        ref_it = ref.iterations;
        if (gs_vec_download(hx, xg)) abort();
        gs_ksp_destroy(&kh);
        gs_vec_destroy(&hb);
        gs_vec_destroy(&hx);
        gs_mat_destroy(&Mh);
        gs_backend_destroy(&host);
    }
    MPI_Bcast(&ref_it, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(b, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(xg, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* the reference solution */
    if (gs_dist_scatter(d, b, bl) || gs_vec_create(be, nl, &vb) || gs_vec_create(be, nl, &vx) ||
        gs_vec_upload(vb, bl) || gs_vec_set(vx, 0.0) || gs_ksp_create(type, be, &prm, &ksp))
        abort();
    gs_status st = gs_ksp_solve(ksp, M, NULL, vb, vx, &res);
    CHECK(st == GS_OK, "case %d: distributed %s failed: %s", k, type, gs_error_message());
    CHECK(gs_reason_converged(res.reason), "case %d: distributed %s did not converge (%d)", k, type, (int)res.reason);
    CHECK(abs(res.iterations - ref_it) <= 1, "case %d: %s took %d iterations, one process %d", k, type,
          res.iterations, ref_it);
    double *x = NULL;
    if (GS_MALLOC(x, n + 1) || gs_vec_download(vx, xl) || gs_dist_gather(d, xl, x)) abort();
    if (rank == 0) {
        double num = 0.0, den = 0.0;
        for (gs_int i = 0; i < n; i++) {
            num += (x[i] - xg[i]) * (x[i] - xg[i]);
            den += xg[i] * xg[i];
        }
        CHECK(sqrt(num) <= 1e-8 * sqrt(den), "case %d: %s solutions differ by %.3g", k, type, sqrt(num / den));
    }
    free(x);
    gs_ksp_destroy(&ksp);
    gs_vec_destroy(&vb);
    gs_vec_destroy(&vx);
    gs_config_destroy(&cfg);
    free(b);
    free(bl);
    free(xl);
    free(xg);
}

/* Without GPUs: "nccl" is refused on every rank (the same status), "auto" and "mpi" stay on MPI. */
static void check_transport_choice(void)
{
    gs_backend *be = NULL;
    const char *why = NULL;
    if (gs_backend_mpi_create(MPI_COMM_WORLD, &be)) abort();
    gs_status st = gs_backend_mpi_set_transport(be, "nccl");
    CHECK(st == GS_ERR_UNSUPPORTED, "nccl on the host: status %d (%s)", (int)st, gs_error_message());
    CHECK(strstr(gs_error_message(), gs_nccl_built() ? "runs on the host" : "without NCCL") != NULL,
          "nccl on the host: message %s", gs_error_message());
    gs_error_clear();
    CHECK(gs_backend_mpi_set_transport(be, "auto") == GS_OK, "auto on the host: %s", gs_error_message());
    CHECK(strcmp(gs_backend_mpi_transport(be, &why), "mpi") == 0 && why && why[0], "auto on the host: not mpi");
    CHECK(gs_backend_mpi_set_transport(be, "fast") == GS_ERR_ARG, "an unknown transport is accepted");
    gs_error_clear();
    gs_backend_destroy(&be);
}

/* Rank 0's matrix for case k (others get an empty struct). */
static gs_status make_matrix(int k, gs_csr *A)
{
    memset(A, 0, sizeof *A);
    if (rank != 0) return GS_OK;
    if (k == 0) return gs_gen_poisson2d(23, 17, A);
    if (k == 1) return gs_gen_convdiff3d(7, 6, 5, 50.0, A);
    if (k == 2) { /* diagonal: no couplings at all, every part's rows stay home */
        GS_CALL(gs_csr_alloc(A, 40, 40, 40, true));
        for (gs_int i = 0; i < 40; i++) {
            A->rowptr[i + 1] = i + 1;
            A->colind[i] = i;
            A->val[i] = 1.0 + i;
        }
        return GS_OK;
    }
    return gs_gen_poisson2d(1, size - 1, A); /* fewer rows than ranks: the last rank owns none */
}

/* The whole matrix on every rank (rank 0's, broadcast). */
static void share_matrix(gs_csr *A)
{
    gs_int dim[3] = {A->nrows, A->ncols, A->nnz};
    MPI_Bcast(dim, 3, MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (rank != 0 && gs_csr_alloc(A, dim[0], dim[1], dim[2], true) != GS_OK) abort();
    MPI_Bcast(A->rowptr, dim[0] + 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(A->colind, dim[2], MPI_INT32_T, 0, MPI_COMM_WORLD);
    MPI_Bcast(A->val, dim[2], MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* RAS subdomains with delta layers against one process's construction from the whole matrix W. */
static void check_subdomain(int k, const gs_dist *d, const gs_csr *W, const gs_csr *G, int delta, gs_backend *be)
{
    gs_dist_subdomain s;
    gs_int *part = NULL, *core = NULL, *S = NULL, nc = 0, ns = 0;
    gs_csr B = {0};
    const gs_int n = W->nrows;
    if (gs_dist_subdomain_create(d, delta, &s) != GS_OK) {
        CHECK(0, "case %d delta %d: subdomain failed: %s", k, delta, gs_error_message());
        return;
    }
    if (GS_MALLOC(part, n + 1) || GS_MALLOC(core, n + 1) || gs_partition_kway(W, size, 1, part)) abort();
    for (gs_int i = 0; i < n; i++)
        if (part[i] == rank) core[nc++] = i;
    if (gs_grow_overlap(G, nc, core, delta, &S, &ns) || gs_csr_submatrix(W, ns, S, &B)) abort();
    CHECK(s.m == ns && s.n_own == nc && s.n_overlap == ns - nc, "case %d delta %d: %d rows (%d overlap), expected %d",
          k, delta, (int)s.m, (int)s.n_overlap, (int)ns);
    for (gs_int p = 0; p < s.m && p < ns; p++)
        CHECK(s.names[p] == S[p], "case %d delta %d: row %d of S is %d, expected %d", k, delta, (int)p,
              (int)s.names[p], (int)S[p]);
    if (s.m == ns) {
        CHECK(s.A.nnz == B.nnz, "case %d delta %d: A(S,S) has %d entries, expected %d", k, delta, (int)s.A.nnz,
              (int)B.nnz);
        for (gs_int p = 0; p <= ns && s.A.nnz == B.nnz; p++)
            CHECK(s.A.rowptr[p] == B.rowptr[p], "case %d delta %d: rowptr[%d]", k, delta, (int)p);
        for (gs_int q = 0; q < B.nnz && s.A.nnz == B.nnz; q++)
            CHECK(s.A.colind[q] == B.colind[q] && s.A.val[q] == B.val[q], "case %d delta %d: entry %d", k, delta,
                  (int)q);
    }
    for (gs_int i = 0; i < s.n_own; i++)
        CHECK(s.names[s.own_pos[i]] == d->rows[i], "case %d delta %d: owned row %d misplaced", k, delta, (int)i);
    /* the exchange: overlap row k's entry of x (x_g = 1 + g in the original numbering) */
    double *x = NULL, *ovl = NULL, *buf = NULL;
    MPI_Request *req = NULL;
    if (GS_MALLOC(x, s.n_own + 1) || GS_MALLOC(ovl, s.n_overlap + 1) ||
        GS_MALLOC(buf, s.xchg.send_off[s.xchg.nsend] + 1) || GS_MALLOC(req, s.xchg.nrecv + s.xchg.nsend + 1))
        abort();
    for (gs_int i = 0; i < s.n_own; i++) x[i] = 1.0 + d->rows[i];
    CHECK(gs_backend_mpi_exchange(be, &s.xchg, x, ovl, buf, req) == GS_OK, "case %d: exchange failed", k);
    for (gs_int q = 0; q < s.n_overlap; q++)
        CHECK(ovl[q] == 1.0 + s.names[s.ovl_pos[q]], "case %d delta %d: overlap entry %d is %g, expected %g", k, delta,
              (int)q, ovl[q], 1.0 + s.names[s.ovl_pos[q]]);
    if (use_nccl) { /* the same between the devices: the entries to send gathered there first */
        const gs_int nsend = s.xchg.send_off[s.xchg.nsend];
        gs_backend *local = gs_backend_mpi_local(be);
        gs_ivec *ix = NULL;
        gs_vector *vx = NULL, *vs = NULL, *vo = NULL;
        double *got = NULL;
        if (gs_vec_create(local, s.n_own, &vx) || gs_vec_upload(vx, x) || gs_vec_create(local, nsend, &vs) ||
            gs_ivec_create(local, nsend, s.xchg.send_idx, &ix) || gs_vec_create(local, s.n_overlap, &vo) ||
            gs_vec_set(vo, NAN) || (nsend > 0 && gs_vec_gather(vx, ix, vs)) || GS_MALLOC(got, s.n_overlap + 1))
            abort();
        CHECK(gs_backend_mpi_exchange_device(be, &s.xchg, vs, vo) == GS_OK, "case %d: device exchange failed: %s", k,
              gs_error_message());
        if (gs_vec_download(vo, got)) abort();
        for (gs_int q = 0; q < s.n_overlap; q++)
            CHECK(got[q] == ovl[q], "case %d delta %d: device overlap entry %d is %g, expected %g", k, delta, (int)q,
                  got[q], ovl[q]);
        gs_free(&got);
        gs_ivec_destroy(&ix);
        gs_vec_destroy(&vx);
        gs_vec_destroy(&vs);
        gs_vec_destroy(&vo);
    }
    gs_free(&x);
    gs_free(&ovl);
    gs_free(&buf);
    gs_free(&req);
    gs_free(&part);
    gs_free(&core);
    gs_free(&S);
    gs_csr_free(&B);
    gs_dist_subdomain_free(&s);
}

static void run_case(int k)
{
    gs_csr A;
    gs_dist d;
    gs_backend *be = NULL;
    gs_matrix *M = NULL;
    gs_vector *vx = NULL, *vy = NULL;
    gs_mvec *V = NULL;
    if (make_matrix(k, &A) != GS_OK) abort();
    if (gs_dist_create(MPI_COMM_WORLD, &A, GS_PARTITION_METIS, 1, &d) != GS_OK) {
        CHECK(0, "case %d: distribution failed: %s", k, gs_error_message());
        return;
    }
    const gs_int n = d.n_global, nl = d.halo.n_own;
    double *x = NULL, *y = NULL, *xl = NULL, *yl = NULL, *yg = NULL;
    if (GS_MALLOC(x, n + 1) || GS_MALLOC(y, n + 1) || GS_MALLOC(yg, n + 1) || GS_MALLOC(xl, nl + 1) ||
        GS_MALLOC(yl, nl + 1))
        abort();
    for (gs_int i = 0; i < n; i++) {
        x[i] = sin(1.0 + i) + 0.25;
        y[i] = cos(0.5 * i);
    }
    if (make_backend(&be) || gs_mpi_mat_create(be, &d.local, NULL, &d.halo, d.n_global, &M) ||
        gs_vec_create(be, nl, &vx) || gs_vec_create(be, nl, &vy) || gs_mvec_create(be, nl, 3, &V))
        abort();
    if (gs_dist_scatter(&d, x, xl) || gs_vec_upload(vx, xl) || gs_dist_scatter(&d, y, yl) || gs_vec_upload(vy, yl))
        abort();

    /* rows: each rank's are one METIS part in original order, as BILU's blocks */
    if (rank == 0) {
        gs_int *part = malloc(((size_t)n + 1) * sizeof *part);
        if (!part || gs_partition_kway(&A, size, 1, part)) abort();
        for (gs_int q = 0, r = 0; r < size; r++)
            for (gs_int i = 0; i < n; i++)
                if (part[i] == r) CHECK(d.perm[q++] == i, "case %d: row %d of rank %d is not part %d's", k, i, r, r);
        free(part);
    }
    if (k == 2) CHECK(d.halo.n_halo == 0 && d.halo.nsend == 0, "case %d: a diagonal matrix has a halo", k);
    if (k == 3 && rank == size - 1) CHECK(nl == 0, "case %d: the last rank owns %d rows of %d", k, nl, n);

    /* y = 2 A x - y, distributed vs. whole */
    if (gs_mat_spmv(2.0, M, vx, -1.0, vy) || gs_vec_download(vy, yl) || gs_dist_gather(&d, yl, yg)) abort();
    if (rank == 0) {
        gs_csr_spmv(2.0, &A, x, -1.0, y);
        for (gs_int i = 0; i < n; i++)
            CHECK(fabs(yg[i] - y[i]) <= 1e-13 * (1.0 + fabs(y[i])), "case %d: spmv row %d: %.17g vs %.17g", k, i, yg[i],
                  y[i]);
    }
    MPI_Bcast(y, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    /* reductions: identical on every rank, equal to the sums over the whole vectors */
    double dot = 0, nrm = 0, d2[2], h[3], ref_dot = 0, ref_nrm = 0, ref_xx = 0;
    for (gs_int i = 0; i < n; i++) {
        ref_dot += x[i] * y[i];
        ref_xx += x[i] * x[i];
        ref_nrm += y[i] * y[i];
    }
    ref_nrm = sqrt(ref_nrm);
    for (int c = 0; c < 3; c++)
        if (gs_vec_axpby(1.0 + c, vx, 0.0, &V->cols[c])) abort();
    if (gs_vec_dot(vx, vy, &dot) || gs_vec_nrm2(vy, &nrm) || gs_vec_dot2(vx, vy, vx, vx, d2) ||
        gs_mvec_dot(V, 3, vy, h))
        abort();
    CHECK(rel(dot, ref_dot) < 1e-12, "case %d: dot %.17g vs %.17g", k, dot, ref_dot);
    CHECK(rel(nrm, ref_nrm) < 1e-12, "case %d: nrm2 %.17g vs %.17g", k, nrm, ref_nrm);
    CHECK(rel(d2[0], ref_dot) < 1e-12 && rel(d2[1], ref_xx) < 1e-12, "case %d: dot2", k);
    for (int c = 0; c < 3; c++) CHECK(rel(h[c], (1.0 + c) * ref_dot) < 1e-12, "case %d: mdot column %d", k, c);
    double h2[6];
    if (gs_mvec_dot2(V, 3, vx, vy, h2)) abort();
    for (int c = 0; c < 3; c++)
        CHECK(rel(h2[c], (1.0 + c) * ref_xx) < 1e-12 && rel(h2[3 + c], (1.0 + c) * ref_dot) < 1e-12,
              "case %d: mdot2 column %d", k, c);
    double mine[2] = {dot, nrm}, all[6];
    MPI_Allgather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(all[2 * r] == dot && all[2 * r + 1] == nrm, "case %d: rank %d's reduction differs", k, r);

    /* RAS subdomains, 0..3 layers */
    gs_csr W = {0}, G = {0};
    if (rank == 0 && gs_csr_copy(&A, &W)) abort();
    share_matrix(&W);
    if (gs_csr_symmetric_graph(&W, &G)) abort();
    for (int delta = 0; delta <= 3; delta++) check_subdomain(k, &d, &W, &G, delta, be);
    gs_csr_free(&W);
    gs_csr_free(&G);

    check_solve(k, &A, &d, M, be);

    gs_mvec_destroy(&V);
    gs_vec_destroy(&vx);
    gs_vec_destroy(&vy);
    gs_mat_destroy(&M);
    gs_backend_destroy(&be);
    gs_dist_free(&d);
    gs_csr_free(&A);
    free(x);
    free(y);
    free(yg);
    free(xl);
    free(yl);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 3) {
        if (rank == 0) fprintf(stderr, "dist_test: run it on 2 or 3 ranks\n");
        MPI_Finalize();
        return 1;
    }
    use_cuda = argc > 1 && strcmp(argv[1], "--cuda") == 0;
    use_nccl = use_cuda && argc > 2 && strcmp(argv[2], "--nccl") == 0;
    const int gpus = gs_backend_cuda_device_count();
    if ((use_cuda && gpus < 1) || (use_nccl && (gpus < size || !gs_nccl_built()))) {
        if (rank == 0)
            printf("dist_test %s: %d GPUs for %d ranks%s: skipped\n", use_nccl ? "--cuda --nccl" : "--cuda", gpus,
                   size, gs_nccl_built() ? "" : ", built without NCCL");
        MPI_Finalize();
        return 77;
    }
    if (!use_cuda) check_transport_choice();
    for (int k = 0; k < 4; k++) run_case(k);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dist_test on %d ranks%s: %s (%d failed checks)\n", size,
               use_nccl ? " (cuda, nccl)" : use_cuda ? " (cuda)" : "",
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
