/* Run under mpirun (2 or 3 ranks): the distributed SpMV, dot, dot2, nrm2 and mdot equal the
 * single-process ones computed by rank 0 on the whole matrix, for a PDE matrix, a nonsymmetric one, a
 * matrix with no couplings between parts (no halo) and one smaller than the number of ranks (a rank
 * with no rows); the distribution's rows are BILU's blocks (the same METIS parts, in order). Exit 0 on
 * success, 1 on a failed check (rank 0 names it). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "dist/dist.h"
#include "precond/ordering.h"

static int rank, size, failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

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

static void run_case(int k)
{
    gs_csr A;
    gs_dist d;
    gs_backend *be = NULL;
    gs_matrix *M = NULL;
    gs_vector *vx = NULL, *vy = NULL;
    gs_mvec *V = NULL;
    if (make_matrix(k, &A) != GS_OK) abort();
    if (gs_dist_create(MPI_COMM_WORLD, &A, 1, &d) != GS_OK) {
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
    if (gs_backend_mpi_create(MPI_COMM_WORLD, &be) || gs_mpi_mat_create(be, &d.local, &d.halo, &M) ||
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
    double mine[2] = {dot, nrm}, all[6];
    MPI_Allgather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK(all[2 * r] == dot && all[2 * r + 1] == nrm, "case %d: rank %d's reduction differs", k, r);

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
    for (int k = 0; k < 4; k++) run_case(k);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("dist_test on %d ranks: %s (%d failed checks)\n", size, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
