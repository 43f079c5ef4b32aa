/* gpusolve over MPI ranks: a libgpusolve solver (gpusolve.h) whose calls are collective over a
 * communicator, one rank per process. Installed with a libgpusolve built with MPI; compile with the MPI
 * compiler wrapper: mpicc prog.c $(pkg-config --cflags --libs gpusolve).
 *
 *     MPI_Init(&argc, &argv);                               (the caller owns MPI)
 *     gpusolve_solver *s = NULL;
 *     const char *settings[] = {"solver.type=gmres", "preconditioner.type=ras", NULL};
 *     gpusolve_create_comm(&s, MPI_COMM_WORLD, NULL, NULL, settings);        (every rank)
 *     gpusolve_set_matrix(s, n, nnz, rowptr, colind, val, 0);    (rank 0's arrays; NULL elsewhere)
 *     int code = gpusolve_solve(s, b, x, 0);                     (rank 0's b; x written on rank 0)
 *     gpusolve_destroy(&s);                                      (every rank, before MPI_Finalize)
 *     MPI_Finalize();
 *
 * The method is that of `mpirun -np P gpusolve`: rank 0's matrix is split into P parts by the METIS
 * partition of preconditioner.blocks = P, each rank holds its rows, and the Krylov method of solver.type
 * runs with block Jacobi or restricted additive Schwarz (preconditioner.type = "ras") across the ranks;
 * "auto" types take CG with IC(0) blocks for an SPD-looking matrix, GMRES with ILU(0) blocks otherwise;
 * no fallback ladder; system.matching, system.scaling and system.reorder must be "none" or "auto" (none).
 *
 * Every function of gpusolve.h that takes such a solver keeps its signature. These are collective (all
 * ranks call them, in the same order): gpusolve_set, gpusolve_set_matrix, gpusolve_read_matrix,
 * gpusolve_setup, gpusolve_solve, gpusolve_destroy. Per rank:
 *   - configuration: each rank applies its own config_file, config_text, settings and gpusolve_set; the
 *     ranks must agree on every key outside device.* and output.* (the setup refuses them otherwise);
 *   - the matrix is rank 0's (arrays or file); the other ranks' arguments are not read (NULL is fine);
 *     gpusolve_size is its size on every rank; new values of the pattern set up keep the partition, the
 *     halos and the symbolic phase (the factors are recomputed numerically: setup.refactored); another
 *     pattern, or a new setting, sets up afresh;
 *   - gpusolve_solve takes b (and the guess in x with GPUSOLVE_GUESS) from rank 0, and writes the solution
 *     into x on rank 0 and on every other rank whose x is not NULL (all n entries); b and x may be NULL on
 *     ranks other than 0. The setup stays for later right-hand sides. GPUSOLVE_DEVICE is refused;
 *   - return values, gpusolve_exit_code, gpusolve_reason, gpusolve_reason_detail, gpusolve_iterations,
 *     gpusolve_residual, gpusolve_error_status and gpusolve_error_message are the same on every rank: an
 *     error on any rank is every rank's, its message prefixed "rank R: " when it arose on rank R > 0;
 *   - gpusolve_report_json: rank 0 holds the report of gpusolve.h with the `parallel` object of
 *     `gpusolve --json` under mpirun; the other ranks hold status, exit_code, solve.reason,
 *     solve.converged, solve.iterations, solve.residual_true and parallel.rank, parallel.ranks (after an
 *     error, every rank holds the same error report);
 *   - the monitor is called on every rank that set one, with the same residual norms;
 *   - gpusolve_interrupt on any rank stops the running (or next) gpusolve_solve on every rank within a
 *     few iterations, each with GPUSOLVE_EXIT_INTERRUPTED;
 *   - an error on one rank in the middle of a solve (out of memory, a CUDA error, in the Krylov iteration
 *     or a reduction of the solve) cannot be agreed on: the other ranks may be waiting for that rank in a
 *     reduction or on their GPUs. That rank prints "gpusolve: rank R: ..." on stderr and calls MPI_Abort
 *     on the solver's communicator with the error's exit code, which ends every rank of the job.
 *
 * A matrix no rank holds whole -- too large for one process, or assembled in parts by the program -- is
 * given by rows instead: each rank passes its own consecutive rows (gpusolve_set_local_rows) and solves
 * with its own rows of b and x (gpusolve_solve_local); the ranks' rows are then the parts (no METIS), in the
 * caller's numbering, and the matrix's nonzeros may exceed 2^31 - 1 (each rank's may not). New values of
 * such a matrix set it up afresh.
 *
 * A communicator of one rank gives a solver of one process, exactly gpusolve_create's. The library calls
 * MPI from the thread that calls it: two threads using solvers over communicators at once need
 * MPI_THREAD_MULTIPLE. */
#ifndef GPUSOLVE_MPI_H
#define GPUSOLVE_MPI_H

#include <mpi.h>

#include "gpusolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A solver over the ranks of comm (collective over comm), configured as gpusolve_create configures one.
 * comm is duplicated (the library's messages never meet the caller's), and the duplicate is freed by
 * gpusolve_destroy. MPI must be initialized and not finalized (the library never calls MPI_Init or
 * MPI_Finalize); otherwise, or with comm MPI_COMM_NULL, GPUSOLVE_EXIT_USAGE and a handle holding the
 * error. *s is set as by gpusolve_create. */
GPUSOLVE_API int gpusolve_create_comm(gpusolve_solver **s, MPI_Comm comm, const char *config_file,
                                      const char *config_text, const char *const *settings);

/* This rank's rows of an n x n matrix (collective): rows first_row .. first_row + nrows - 1, in CSR with
 * 0-based global column indices (rowptr: nrows + 1 entries from 0; colind and val: rowptr[nrows]), host
 * arrays, copied (unsorted rows are sorted, repeated columns summed). The ranks' rows must follow one
 * another in rank order and cover 0..n-1 (rank 0 first; a rank may hold none), every rank giving the same n;
 * the setup refuses other layouts on every rank. Replaces any matrix set before. On a solver of one process
 * it is gpusolve_set_matrix (first_row 0, nrows n). */
GPUSOLVE_API int gpusolve_set_local_rows(gpusolve_solver *s, int n, int first_row, int nrows, const int *rowptr,
                                         const int *colind, const double *val);
/* gpusolve_solve over a matrix given by rows (collective): b and x are this rank's rows (nrows entries,
 * those of gpusolve_set_local_rows; NULL on a rank without rows); x receives them of the solution
 * (GPUSOLVE_GUESS: x holds them of the initial guess). Return values and the report as gpusolve_solve's;
 * the report's solution norms and residuals are the whole system's. */
GPUSOLVE_API int gpusolve_solve_local(gpusolve_solver *s, const double *b, double *x, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
