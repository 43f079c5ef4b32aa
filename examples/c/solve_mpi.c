/* Solves a 2D Laplacian over MPI ranks with libgpusolve (gpusolve_mpi.h): rank 0 builds the matrix and
 * two right-hand sides, every rank takes part in each call (GMRES with restricted additive Schwarz across
 * the ranks; the second solve reuses the setup), and every rank receives the solution. Rank 0 prints.
 *
 *     mpicc solve_mpi.c $(pkg-config --cflags --libs gpusolve) -o solve_mpi
 *     mpirun -np 4 ./solve_mpi [key=value ...]
 */
#include <gpusolve_mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* The 5-point Laplacian on an m x m grid (n = m*m rows) in CSR. */
static void laplacian(int m, int **rowptr, int **colind, double **val, int *n, int *nnz)
{
    *n = m * m;
    *rowptr = malloc(((size_t)*n + 1) * sizeof **rowptr);
    *colind = malloc((size_t)*n * 5 * sizeof **colind);
    *val = malloc((size_t)*n * 5 * sizeof **val);
    int k = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            int row = i * m + j;
            (*rowptr)[row] = k;
            if (i > 0) (*colind)[k] = row - m, (*val)[k++] = -1.0;
            if (j > 0) (*colind)[k] = row - 1, (*val)[k++] = -1.0;
            (*colind)[k] = row, (*val)[k++] = 4.0;
            if (j < m - 1) (*colind)[k] = row + 1, (*val)[k++] = -1.0;
            if (i < m - 1) (*colind)[k] = row + m, (*val)[k++] = -1.0;
        }
    (*rowptr)[*n] = k;
    *nnz = k;
}

int main(int argc, char **argv)
{
    int rank = 0, ranks = 1, n = 0, nnz = 0, failures = 0, *rowptr = NULL, *colind = NULL;
    double *val = NULL, *b = NULL;
    MPI_Init(&argc, &argv); /* the program owns MPI: the library never starts or ends it */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (rank == 0) { /* the matrix and the right-hand sides live on rank 0 alone */
        laplacian(60, &rowptr, &colind, &val, &n, &nnz);
        b = malloc((size_t)n * sizeof *b);
    }

    const char *ras[] = {"solver.type=gmres", "preconditioner.type=ras", "preconditioner.overlap=1", NULL};
    const char *const *settings = argc > 1 ? (const char *const *)(argv + 1) : ras;
    gpusolve_solver *s = NULL;
    int code = gpusolve_create_comm(&s, MPI_COMM_WORLD, NULL, NULL, settings); /* every rank */
    if (code == GPUSOLVE_EXIT_CONVERGED) code = gpusolve_set_matrix(s, n, nnz, rowptr, colind, val, 0);
    n = gpusolve_size(s); /* every rank knows the size */
    double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int k = 0; k < 2 && code == GPUSOLVE_EXIT_CONVERGED; k++) {
        for (int i = 0; b && i < n; i++) b[i] = k == 0 ? 1.0 : (double)(i % 7) - 3.0;
        code = gpusolve_solve(s, b, x, 0); /* every rank: the same exit class, reason, iterations */
        if (rank == 0)
            printf("laplacian 60x60 on %d ranks, %-10s exit %d, %s, %d iterations, true residual %.3e\n", ranks,
                   k == 0 ? "b = 1:" : "new b:", code, gpusolve_reason(s), gpusolve_iterations(s),
                   gpusolve_residual(s));
    }
    if (code > GPUSOLVE_EXIT_NOT_CONVERGED && rank == 0)
        fprintf(stderr, "%s: %s\n", gpusolve_error_status(s), gpusolve_error_message(s));
    failures = code != GPUSOLVE_EXIT_CONVERGED;
    gpusolve_destroy(&s); /* collective: before MPI_Finalize */
    free(rowptr);
    free(colind);
    free(val);
    free(b);
    free(x);
    MPI_Finalize();
    return failures;
}
