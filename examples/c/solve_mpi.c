/* Solves a 2D Laplacian over MPI ranks with libgpusolve (gpusolve_mpi.h): rank 0 builds the matrix and
 * two right-hand sides, every rank takes part in each call (GMRES with restricted additive Schwarz across
 * the ranks; the second solve reuses the setup), and every rank receives the solution. Then the same
 * Laplacian as a program too large for one process would give it: every rank builds only its own rows and
 * its rows of b, and receives its rows of the solution. Rank 0 prints.
 *
 *     mpicc solve_mpi.c $(pkg-config --cflags --libs gpusolve) -o solve_mpi
 *     mpirun -np 4 ./solve_mpi [key=value ...]
 */
#include <gpusolve_mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Rows first .. first + count - 1 of the 5-point Laplacian on an m x m grid in CSR (global columns). */
static void laplacian_rows(int m, int first, int count, int **rowptr, int **colind, double **val)
{
    *rowptr = malloc(((size_t)count + 1) * sizeof **rowptr);
    *colind = malloc((size_t)count * 5 * sizeof **colind + 1);
    *val = malloc((size_t)count * 5 * sizeof **val + 1);
    int k = 0;
    for (int row = first; row < first + count; row++) {
        const int i = row / m, j = row % m;
        (*rowptr)[row - first] = k;
        if (i > 0) (*colind)[k] = row - m, (*val)[k++] = -1.0;
        if (j > 0) (*colind)[k] = row - 1, (*val)[k++] = -1.0;
        (*colind)[k] = row, (*val)[k++] = 4.0;
        if (j < m - 1) (*colind)[k] = row + 1, (*val)[k++] = -1.0;
        if (i < m - 1) (*colind)[k] = row + m, (*val)[k++] = -1.0;
    }
    (*rowptr)[count] = k;
}

/* The whole m x m Laplacian (n = m*m rows). */
static void laplacian(int m, int **rowptr, int **colind, double **val, int *n, int *nnz)
{
    *n = m * m;
    laplacian_rows(m, 0, *n, rowptr, colind, val);
    *nnz = (*rowptr)[*n];
}

/* Every rank's own rows (a consecutive range, rank 0 first): b = 1 there, solved with
 * gpusolve_solve_local; x holds the rank's rows of the solution. Returns the exit code. */
static int solve_by_rows(int m, int rank, int ranks, const char *const *settings)
{
    const int n = m * m, first = (int)((long long)n * rank / ranks),
              count = (int)((long long)n * (rank + 1) / ranks) - first;
    int *rowptr = NULL, *colind = NULL;
    double *val = NULL, *b = malloc((size_t)count * sizeof *b + 1), *x = malloc((size_t)count * sizeof *x + 1);
    laplacian_rows(m, first, count, &rowptr, &colind, &val);
    for (int i = 0; i < count; i++) b[i] = 1.0;
    gpusolve_solver *s = NULL;
    int code = gpusolve_create_comm(&s, MPI_COMM_WORLD, NULL, NULL, settings);
    if (code == GPUSOLVE_EXIT_CONVERGED) code = gpusolve_set_local_rows(s, n, first, count, rowptr, colind, val);
    if (code == GPUSOLVE_EXIT_CONVERGED) code = gpusolve_solve_local(s, b, x, 0);
    if (rank == 0)
        printf("laplacian %dx%d on %d ranks, rows per rank: exit %d, %s, %d iterations, true residual %.3e\n", m, m, ranks,
               code, gpusolve_reason(s), gpusolve_iterations(s), gpusolve_residual(s));
    if (code > GPUSOLVE_EXIT_NOT_CONVERGED && rank == 0)
        fprintf(stderr, "%s: %s\n", gpusolve_error_status(s), gpusolve_error_message(s));
    gpusolve_destroy(&s);
    free(rowptr);
    free(colind);
    free(val);
    free(b);
    free(x);
    return code;
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
    failures += solve_by_rows(60, rank, ranks, settings) != GPUSOLVE_EXIT_CONVERGED;
    free(rowptr);
    free(colind);
    free(val);
    free(b);
    free(x);
    MPI_Finalize();
    return failures;
}
