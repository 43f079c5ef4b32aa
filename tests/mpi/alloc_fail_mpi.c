/* Run under mpirun on 2 ranks (tests/mpi/mpi_alloc_fail_test.py drives it): the library's distributed
 * solve (GMRES with block Jacobi BILU, or RAS with overlap 1) of a 20 x 20 Poisson problem, once for each
 * k = FROM .. TO with the k-th host allocation of rank VICTIM failing (k = 0: none). A fault the ranks
 * can agree on ends every call with the same code, and the next k follows in the same processes; one they
 * cannot agree on (inside a solve) ends the job through MPI_Abort. Rank 0 prints "k K codes A B" (each
 * rank's last return code) after each k; the victim prints "allocations N" (its allocations in one run)
 * after k = 0.
 *   alloc_fail_mpi FROM TO VICTIM bilu|ras */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/gpusolve_mpi.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"

static const char *const COMMON[] = {"device.backend=host", "solver.rtol=1e-10", "solver.fallback=none",
                                     "solver.type=gmres", NULL};

/* One run with the victim's k-th allocation failing: the last return code of this rank. */
static int one_run(const gs_csr *A, int rank, int victim, long k, bool ras)
{
    double b[400], x[400];
    for (int i = 0; i < 400; i++) b[i] = 1.0;
    gpusolve_solver *s = NULL;
    if (rank == victim) gs_alloc_fail_at(k);
    int code = gpusolve_create_comm(&s, MPI_COMM_WORLD, NULL, NULL, COMMON);
    if (code == 0) code = gpusolve_set(s, ras ? "preconditioner.type=ras" : "preconditioner.type=bilu");
    if (code == 0) code = gpusolve_set(s, "preconditioner.blocks=2");
    if (code == 0)
        code = rank == 0 ? gpusolve_set_matrix(s, A->nrows, A->nnz, A->rowptr, A->colind, A->val, 0)
                         : gpusolve_set_matrix(s, 0, 0, NULL, NULL, NULL, 0);
    if (code == 0) code = gpusolve_solve(s, rank == 0 ? b : NULL, rank == 0 ? x : NULL, 0);
    gpusolve_destroy(&s);
    return code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5 || size != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 alloc_fail_mpi FROM TO VICTIM bilu|ras\n");
        MPI_Finalize();
        return 2;
    }
    const long from = atol(argv[1]), to = atol(argv[2]);
    const int victim = atoi(argv[3]);
    const bool ras = strcmp(argv[4], "ras") == 0;
    gs_csr A = {0};
    if (rank == 0 && gs_gen_poisson2d(20, 20, &A) != GS_OK) MPI_Abort(MPI_COMM_WORLD, 70);
    for (long k = from; k <= to; k++) {
        const int code = one_run(&A, rank, victim, k, ras);
        const long made = gs_alloc_count();
        gs_alloc_fail_at(0);
        int codes[2] = {-1, -1};
        MPI_Gather(&code, 1, MPI_INT, codes, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("k %ld codes %d %d\n", k, codes[0], codes[1]);
        if (rank == victim && k == 0) printf("allocations %ld\n", made);
        fflush(stdout);
    }
    gs_csr_free(&A);
    MPI_Finalize();
    return 0;
}
