/* One distributed solver over the ranks of a communicator, as `mpirun gpusolve` (app/mpi_run.c) and
 * libgpusolve's solvers over a communicator (dist/lib_comm.c) both run it: the configuration checked for
 * what distributes, "auto" types resolved from rank 0's matrix, the matrix partitioned and scattered
 * (dist.h), block Jacobi or RAS across ranks set up once (pc_dist.h), then any number of solves of
 * right-hand sides given on rank 0, each with the report entries of one process's run and the
 * `parallel` object. Every call marked collective is made by all ranks, and a failure on any rank is
 * every rank's (gs_dist_agree). */
#ifndef GS_DIST_JOB_H
#define GS_DIST_JOB_H

#include <mpi.h>
#include <stdatomic.h>

#include "api/strategy.h"
#include "cfg/config.h"
#include "core/csr.h"
#include "core/report.h"
#include "dist/dist.h"
#include "precond/precond.h"
#include "solver/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_dist_job {
    MPI_Comm comm; /* borrowed */
    int rank, size;
    gs_config *cfg;      /* the effective configuration: "auto" types resolved, no preprocessing */
    bool automatic, spd; /* a type was "auto" (the MPI rule chose); the matrix looked SPD */
    gs_dist dist;
    gs_backend *be;
    gs_matrix *M;
    gs_vector *vb, *vx;
    gs_pc *pc;
    gs_ksp *ksp;
    gs_ksp_params prm;
    gs_attempt att;        /* the setup's part (view, times, a failed setup's reason) and the last solve's */
    bool ready;            /* set up on every rank: solves may run */
    double *x_own;         /* this rank's rows of the last solution */
    gs_mpi_stats solve_stats; /* communication during the last solve */
    double time_distribute; /* partition, scatter of the rows, operator and vectors */
    double time_pc_apply;  /* one application, measured by the first solve (< 0 before) */
    const atomic_int *interrupt_request; /* besides signals, a request that interrupts solves (NULL: none) */
    bool interrupted;                    /* the ranks agreed to stop the last solve */
} gs_dist_job;

/* The job of the configuration `user` (copied) on comm's ranks, checked for what distributes: no sweep
 * (a key with several values), system.matching/scaling/reorder "none" ("auto" means none), a
 * preconditioner that distributes (gs_dist_pc_check); with "ras" one subdomain per rank. The ranks'
 * configurations must agree in every key outside device.* and output.* (GS_ERR_CONFIG naming the first
 * rank that differs from rank 0). Collective. */
gs_status gs_dist_job_create(gs_dist_job *j, MPI_Comm comm, const gs_config *user);
/* Resolves "auto" types from A's class (rank 0's matrix, square and sorted; NULL elsewhere): an
 * SPD-looking matrix gets CG with IC(0) blocks, any other GMRES with ILU(0) blocks; distributes A; builds
 * the preconditioner across ranks and the Krylov method. A numerical failure of the setup on any rank is
 * an outcome: GS_OK with att.res.reason = GS_DIVERGED_PC_FAILED (the failing rank's message in att.detail)
 * and ready false. Collective. */
gs_status gs_dist_job_setup(gs_dist_job *j, const gs_csr *A);
/* gs_dist_job_setup for a matrix no rank holds whole: every rank gives its own rows, mine (rows first_row ..
 * first_row + mine->nrows - 1 of the n_global x n_global matrix, sorted, global columns; taken over), as
 * gs_dist_create_rows takes them; those rows are the ranks' parts (preconditioner.partition splits a rank's
 * rows further into blocks, where blocks > ranks). "auto" types are resolved from the distributed matrix:
 * SPD-looking when every rank's diagonal block is and the couplings between ranks are symmetric. New values
 * (gs_dist_job_refactor) are not available: GS_ERR_UNSUPPORTED. Collective. */
gs_status gs_dist_job_setup_rows(gs_dist_job *j, gs_int n_global, gs_int first_row, gs_csr *mine);
/* New values of the set-up matrix: rank 0's A (ignored elsewhere), the same pattern as the one set up.
 * The partition, the halo plans and the preconditioner's symbolic phase stay; the rows' values are
 * scattered again, the operator rebuilt and each rank's factorization redone numerically (RAS: its
 * overlap rows fetched again). Its outcome as gs_dist_job_setup's: a numerical failure on any rank is
 * att.res.reason = GS_DIVERGED_PC_FAILED with ready false; another pattern is GS_ERR_ARG. Collective;
 * needs ready. */
gs_status gs_dist_job_refactor(gs_dist_job *j, const gs_csr *A);
/* b and x0 (rank 0's, of n_global entries in A's numbering; ignored elsewhere; x0 NULL: zero) scattered
 * for the next solve, whose part of att starts afresh (att.bnorm = ||b||). Collective; needs ready. */
gs_status gs_dist_job_load(gs_dist_job *j, const double *b, const double *x0);
/* gs_dist_job_load from every rank's own rows of b and x0 (n_own entries each, in the distributed
 * numbering; x0 NULL: zero). Collective; needs ready. */
gs_status gs_dist_job_load_own(gs_dist_job *j, const double *b, const double *x0);
/* The Krylov solve of the loaded system, fn(ctx, iteration, ||r||) called on this rank at every iteration
 * (fn NULL: none; every rank sees the same norms); the true residual ||b - A x||; every rank's rows of the
 * solution kept in x_own and, when rank 0's x is not NULL, gathered into it (n_global entries; ignored
 * elsewhere). Fills att's solve part. Collective.
 * Interrupts are agreed: every GS_DIST_INTERRUPT_EVERY iterations the ranks reduce "a SIGINT/SIGTERM
 * arrived here, or *interrupt_request is set", and all stop at the same iteration once any rank says so
 * (reason GS_DIVERGED_INTERRUPTED, interrupted set); a rank never stops on its own signal alone, which
 * would leave the others waiting in a reduction. */
#define GS_DIST_INTERRUPT_EVERY 4
gs_status gs_dist_job_solve(gs_dist_job *j, gs_ksp_monitor_fn fn, void *ctx, double *x);
/* ||x - x*|| / ||x*|| (||x - x*|| when x* = 0) of the last solution, xstar every rank's own rows of x*.
 * Collective. */
gs_status gs_dist_job_error_vs(const gs_dist_job *j, const double *xstar, double *err);
/* The exit code of the outcome in att (the same on every rank). */
int gs_dist_job_exit_code(const gs_dist_job *j);

/* The `parallel` object of the last solve into rep (rank 0; ignored elsewhere): ranks, per rank its rows,
 * nonzeros, halo entries, neighbours and seconds in communication, with RAS its overlap rows and
 * subdomain entries; and its one-line summary into text (rank 0; len bytes). Collective. */
gs_status gs_dist_job_report_parallel(gs_dist_job *j, gs_report *rep, char *text, size_t len);
/* Rank 0: the job's outcome as a strategy result of one attempt (it borrows the job's configuration and
 * attempt: release it with gs_attempt_record_free(&sr->rec[0]) alone). */
gs_status gs_dist_job_result(const gs_dist_job *j, gs_strategy_result *sr);
/* Rank 0: the report entries one process's run writes for sr (gs_dist_job_result): backend.*,
 * where.setup and where.solve, strategy.* and the attempts, the outcome (with the error against xstar
 * when given; x the gathered solution), warnings (user: the configuration as given), memory. */
gs_status gs_dist_job_report(const gs_dist_job *j, const gs_config *user, const gs_strategy_result *sr,
                             const double *xstar, const double *x, gs_report *rep);
void gs_dist_job_free(gs_dist_job *j);

#ifdef __cplusplus
}
#endif
#endif
