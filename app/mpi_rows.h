/* gpusolve under mpirun with rows made where they live: for a generated matrix (gen:...) or a PETSc binary
 * file, with preconditioner.partition = "contiguous", every rank generates or reads only its own rows and
 * its own entries of b, x0 and x*. No rank ever holds the whole matrix, so its nonzeros may exceed the
 * 32-bit limit of one process (each rank's may not), and rank 0 spends no time or memory on the other
 * ranks' parts. */
#ifndef GS_APP_MPI_ROWS_H
#define GS_APP_MPI_ROWS_H

#include <mpi.h>
#include <stdbool.h>

#include "app/system.h"
#include "cfg/config.h"
#include "core/csr.h"
#include "dist/dist.h"

typedef struct gs_app_rows {
    bool used;           /* the ranks made their own rows (else rank 0 reads the whole matrix) */
    gs_int n_global, first_row;
    gs_csr mine;         /* this rank's rows, global columns (taken by gs_dist_job_setup_rows) */
    double time_read;    /* the slowest rank's */
} gs_app_rows;

/* Every rank's rows of spec when it can make them (see above; a PETSc file that cannot be read by rows --
 * compressed, a pipe -- leaves used false, as does any other source). Errors of any rank are every
 * rank's. Collective. */
gs_status gs_app_mpi_rows_read(MPI_Comm comm, const char *spec, const gs_config *cfg, gs_app_rows *rows);
/* This rank's rows of b, x0 and (rhs "Ax") x* over d (made by gs_dist_create_rows): the values one process
 * gives those rows (system.rhs ones | random | Ax, system.x0 zero); a vector file (rhs_path, x0_path or the
 * keys) is read by rank 0 and scattered. Collective. */
gs_status gs_app_mpi_rows_system(const gs_dist *d, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                                 gs_system *sys);
void gs_app_rows_free(gs_app_rows *rows);

#endif
