/* gpusolve under mpirun (GS_WITH_MPI): MPI started when a launcher started the process, one distributed
 * run of the configuration over the ranks (dist/), its report printed by rank 0 alone. */
#ifndef GS_APP_MPI_RUN_H
#define GS_APP_MPI_RUN_H

#include "app/app.h"
#include "cfg/config.h"

/* MPI_Init when the process was started by an MPI launcher (its environment names the job's size:
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE), with MPI_Finalize at exit; a plain `gpusolve` never starts
 * MPI. On ranks other than 0, standard output and error are closed to what they print (rank 0 prints the
 * one report or message of the job). Returns the number of ranks (1 without a launcher). */
int gs_app_mpi_start(int *argc, char ***argv);
/* One run of cfg over the ranks: the matrix read by rank 0, distributed, solved by the Krylov method on the
 * distributed backend with block Jacobi or RAS across ranks; the report (text or JSON) and -o by rank 0. Every
 * rank returns the same exit code. */
int gs_app_mpi_run(const gs_app_opts *o, const gs_config *cfg);

#endif
