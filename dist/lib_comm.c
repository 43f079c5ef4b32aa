/* libgpusolve over the ranks of a communicator (api/gpusolve_mpi.h): the handle of api/handle.h whose
 * collective calls run the distributed solver of dist/job.h, rank 0 holding the matrix and the
 * right-hand sides. Every call ends with the ranks agreeing on its status (gs_dist_agree), so each returns
 * the same exit class and message on every rank. */
#include "api/gpusolve_mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/exit_codes.h"
#include "api/handle.h"
#include "api/run_report.h"
#include "core/mem.h"
#include "core/process.h"
#include "core/signal.h"
#include "dist/job.h"

typedef struct lib_comm {
    MPI_Comm comm; /* the caller's, duplicated */
    int rank, size;
    int n;         /* the matrix's rows, on every rank (0: none yet) */
    bool local;    /* the ranks gave their own rows (gpusolve_set_local_rows): rows, first_row */
    gs_csr rows;   /* this rank's rows, global columns, sorted */
    int first_row;
    gs_dist_job job;
    bool built;    /* job set up for the current matrix and configuration (ready, or its setup failed) */
    bool unsolved; /* built by gpusolve_setup, not solved yet */
    bool refactored; /* took new values of its pattern since its last solve */
    char par_text[400];
} lib_comm;

static lib_comm *COMM(const gpusolve_solver *s) { return (lib_comm *)s->comm; }

static void drop_job(lib_comm *c)
{
    gs_dist_job_free(&c->job);
    c->built = c->unsolved = c->refactored = false;
}

/* The call's outcome from its agreed status. */
static int finish(gpusolve_solver *s, gs_status st) { return st == GS_OK ? gs_lib_succeed(s) : gs_lib_fail(s, st); }

static int comm_set(gpusolve_solver *s, const char *setting)
{
    lib_comm *c = COMM(s);
    gs_lib_begin_call(s);
    gs_status st = gs_dist_agree(c->comm, gs_lib_set_setting(s, setting));
    drop_job(c); /* set anew with the setting (on every rank, whichever took it) */
    return finish(s, st);
}

/* A matrix taken by rank 0 (st: its status there, GS_OK elsewhere): agreed, its size known to every rank.
 * New values of the pattern the ready setup was built on keep its partition, halos and symbolic phase
 * (gs_dist_job_refactor); any other matrix, or a refactorization that fails, leaves the setup to be
 * made afresh by the next call. */
static int matrix_taken(gpusolve_solver *s, gs_status st)
{
    lib_comm *c = COMM(s);
    st = gs_dist_agree(c->comm, st);
    if (st == GS_OK && c->local) { /* rank 0's matrix replaces the ranks' own rows */
        drop_job(c);
        gs_csr_free(&c->rows);
        c->local = false;
    }
    if (st == GS_OK) {
        int n = c->rank == 0 ? (int)s->A.nrows : 0;
        if (MPI_Bcast(&n, 1, MPI_INT, 0, c->comm) != MPI_SUCCESS)
            st = GS_ERROR(GS_ERR_INTERNAL, "MPI: broadcasting the matrix's size failed");
        const bool keep = st == GS_OK && c->built && c->job.ready && n == c->n; /* the same on every rank */
        c->n = n;
        if (keep && gs_dist_job_refactor(&c->job, c->rank == 0 ? &s->A : NULL) == GS_OK && c->job.ready) {
            c->refactored = true;
        } else {
            if (keep) gs_error_clear(); /* another pattern or a failed refactorization: set up afresh */
            drop_job(c);
        }
    }
    return finish(s, st);
}

static int comm_set_matrix(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind,
                           const double *val, unsigned flags)
{
    lib_comm *c = COMM(s);
    gs_status st = GS_OK;
    gs_lib_begin_call(s);
    if (c->rank == 0 && (flags & GPUSOLVE_DEVICE))
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_set_matrix: device pointers (GPUSOLVE_DEVICE) are not taken by a solver "
                                  "over %d MPI ranks (rank 0 scatters and gathers host arrays); pass host arrays",
                      c->size);
    else if (c->rank == 0)
        st = gs_lib_matrix_arrays(s, n, nnz, rowptr, colind, val, flags);
    return matrix_taken(s, st);
}

static int comm_read_matrix(gpusolve_solver *s, const char *path)
{
    gs_lib_begin_call(s);
    return matrix_taken(s, COMM(s)->rank == 0 ? gs_lib_matrix_file(s, path) : GS_OK);
}

static int comm_size(const gpusolve_solver *s) { return COMM(s)->n; }

/* The distributed solver of the current matrix and configuration, set up when it is not. */
static gs_status ensure_job(gpusolve_solver *s, lib_comm *c)
{
    if (c->n == 0) /* the same on every rank */
        return GS_ERROR(GS_ERR_ARG, "no matrix: call gpusolve_set_matrix or gpusolve_read_matrix first");
    if (c->built) return GS_OK;
    GS_CALL(gs_dist_job_create(&c->job, c->comm, s->cfg));
    gs_status st = GS_OK;
    if (c->local) { /* the job takes a copy: the rows stay for later setups */
        gs_csr mine = {0};
        st = gs_dist_agree(c->comm, gs_csr_copy(&c->rows, &mine));
        if (st == GS_OK) st = gs_dist_job_setup_rows(&c->job, c->n, c->first_row, &mine);
        gs_csr_free(&mine);
    } else {
        st = gs_dist_job_setup(&c->job, c->rank == 0 ? &s->A : NULL);
    }
    if (st != GS_OK) {
        drop_job(c);
        return st;
    }
    c->built = c->unsolved = true;
    return GS_OK;
}

/* Rank 0's report of a solve or a failed setup: one process's entries (gpusolve.c's solve_report) from
 * the job's outcome; sr receives the job's result. */
static gs_status report_root(gpusolve_solver *s, lib_comm *c, gs_report *rep, gs_strategy_result *sr, bool guess,
                             bool reused)
{
    GS_CALL(gs_lib_report_input(s, rep, guess, c->local ? "every rank its rows" : "host (rank 0)"));
    if (c->local) { /* no rank holds the matrix: its size from the distribution */
        GS_CALL(gs_report_string(rep, "matrix.source", "rows per rank"));
        GS_CALL(gs_report_string(rep, "matrix.name", "rows per rank"));
        GS_CALL(gs_report_int(rep, "matrix.rows", c->job.dist.n_global));
        GS_CALL(gs_report_int(rep, "matrix.nnz", (long long)c->job.dist.nnz_global));
    }
    GS_CALL(gs_dist_job_result(&c->job, sr));
    GS_CALL(gs_dist_job_report(&c->job, s->cfg, sr, NULL, NULL, rep));
    GS_CALL(gs_report_bool(rep, "setup.reused", reused));
    GS_CALL(gs_report_bool(rep, "setup.refactored", c->refactored));
    return GS_OK;
}

/* The other ranks' report: the outcome they share, and where the full report is. */
static gs_status report_rank(const lib_comm *c, gs_report *rep)
{
    const gs_attempt *a = &c->job.att;
    GS_CALL(gs_report_string(rep, "solve.reason", gs_reason_name(a->res.reason)));
    GS_CALL(gs_report_bool(rep, "solve.converged", a->solved && gs_reason_converged(a->res.reason)));
    if (a->solved) {
        GS_CALL(gs_report_int(rep, "solve.iterations", a->res.iterations));
        GS_CALL(gs_report_double(rep, "solve.residual_true", a->residual_true));
    }
    GS_CALL(gs_report_int(rep, "parallel.rank", c->rank));
    GS_CALL(gs_report_int(rep, "parallel.ranks", c->size));
    return GS_OK;
}

/* The report of the call that ended with the job's outcome (code), on every rank. Collective. */
static gs_status comm_report(gpusolve_solver *s, lib_comm *c, int code, bool guess, bool reused, double t0)
{
    gs_report *rep = NULL;
    gs_strategy_result sr;
    memset(&sr, 0, sizeof sr);
    gs_status st = gs_report_create(&rep);
    if (st == GS_OK) st = c->rank == 0 ? report_root(s, c, rep, &sr, guess, reused) : report_rank(c, rep);
    st = gs_dist_agree(c->comm, st);
    if (st == GS_OK) st = gs_dist_job_report_parallel(&c->job, rep, c->par_text, sizeof c->par_text);
    if (st == GS_OK) st = gs_report_string(rep, "status", "ok");
    if (st == GS_OK) st = gs_report_int(rep, "exit_code", code);
    if (st == GS_OK && c->rank == 0) {
        st = gs_report_double(rep, "time.total", gs_wtime() - t0);
        if (st == GS_OK) st = gs_report_double(rep, "time.wall", gs_process_age());
        if (st == GS_OK) st = gs_config_to_report(s->cfg, rep);
    }
    if (st == GS_OK) st = gs_lib_set_json(s, rep);
    gs_attempt_record_free(&sr.rec[0]); /* the rest of sr is the job's */
    gs_report_destroy(&rep);
    return gs_dist_agree(c->comm, st);
}

/* The outcome of a setup that failed numerically on some rank (every rank: exit 4, the failing rank's
 * message as the detail); the job is dropped, so the next call sets up again. */
static int setup_failed(gpusolve_solver *s, lib_comm *c, double t0)
{
    const int code = gs_dist_job_exit_code(&c->job);
    gs_status st = comm_report(s, c, code, false, false, t0);
    gs_lib_set_outcome(s, &c->job.att, code);
    drop_job(c);
    if (st != GS_OK) return gs_lib_fail(s, st);
    gs_error_clear();
    return code;
}

static int comm_setup(gpusolve_solver *s)
{
    lib_comm *c = COMM(s);
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    gs_status st = ensure_job(s, c);
    if (st != GS_OK) return gs_lib_fail(s, st);
    if (!c->job.ready) return setup_failed(s, c, t0);
    return gs_lib_succeed(s);
}

/* The solution (n entries, rank 0's x) also into the x of every other rank that passed one. */
static gs_status share_solution(lib_comm *c, double *x)
{
    int want = c->rank != 0 && x != NULL, *wants = NULL;
    gs_status st = c->rank == 0 ? GS_CALLOC(wants, c->size) : GS_OK;
    GS_CALL(gs_dist_agree(c->comm, st));
    if (MPI_Gather(&want, 1, MPI_INT, wants, 1, MPI_INT, 0, c->comm) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: asking which ranks want the solution failed");
    for (int r = 1; st == GS_OK && c->rank == 0 && r < c->size; r++)
        if (wants[r] && MPI_Send(x, c->n, MPI_DOUBLE, r, 0, c->comm) != MPI_SUCCESS)
            st = GS_ERROR(GS_ERR_INTERNAL, "MPI: sending the solution to rank %d failed", r);
    if (st == GS_OK && want && MPI_Recv(x, c->n, MPI_DOUBLE, 0, 0, c->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: receiving the solution from rank 0 failed");
    gs_free(&wants);
    return gs_dist_agree(c->comm, st);
}

/* The loaded system solved with the monitor and the agreed interrupt, the solution shared. */
static gs_status solve_loaded(gpusolve_solver *s, lib_comm *c, double *x)
{
    c->job.interrupt_request = &s->interrupt; /* agreed over the ranks with their signals */
    gs_status st = gs_dist_job_solve(&c->job, s->monitor, s->monitor_ctx, c->rank == 0 ? x : NULL);
    c->unsolved = false;
    if (st == GS_OK) st = share_solution(c, x);
    if (c->job.interrupted) atomic_store(&s->interrupt, 0); /* the request was taken */
    return st;
}

static int comm_solve(gpusolve_solver *s, const double *b, double *x, unsigned flags)
{
    lib_comm *c = COMM(s);
    gs_status st = GS_OK;
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    const bool guess = (flags & GPUSOLVE_GUESS) != 0, existed = c->built;
    if (c->local)
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve: the ranks gave their own rows (gpusolve_set_local_rows): solve "
                                  "with gpusolve_solve_local, each rank its rows of b and x");
    else if (c->rank == 0 && (!b || !x))
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve: b and x must not be NULL on rank 0");
    else if (c->rank == 0 && (flags & GPUSOLVE_DEVICE))
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve: device pointers (GPUSOLVE_DEVICE) are not taken by a solver over "
                                  "%d MPI ranks (rank 0 scatters and gathers host arrays); pass host arrays",
                      c->size);
    st = gs_dist_agree(c->comm, st);
    if (st == GS_OK) st = ensure_job(s, c);
    if (st != GS_OK) return gs_lib_fail(s, st);
    if (!c->job.ready) return setup_failed(s, c, t0);
    const bool reused = existed && !c->unsolved;
    st = gs_dist_job_load(&c->job, b, guess ? x : NULL);
    if (st == GS_OK) st = solve_loaded(s, c, x);
    const int code = gs_dist_job_exit_code(&c->job);
    if (st == GS_OK) st = comm_report(s, c, code, guess, reused, t0);
    if (st != GS_OK) {
        drop_job(c); /* agreed: every rank sets up again at the next call */
        return gs_lib_fail(s, st);
    }
    c->refactored = false;
    gs_lib_set_outcome(s, &c->job.att, code);
    gs_error_clear();
    return code;
}

static void comm_destroy(gpusolve_solver *s)
{
    lib_comm *c = COMM(s);
    if (!c) return;
    drop_job(c);
    gs_csr_free(&c->rows);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Comm_free(&c->comm);
    free(c);
    s->comm = NULL;
    s->comm_ops = NULL;
}

/* ------------------------------------------------------------------------------------------------ */
/* Rows per rank (gpusolve_set_local_rows, gpusolve_solve_local). */

/* The rows given, checked and copied (sorted, repeated columns summed) into R. */
static gs_status local_rows(gpusolve_solver *s, int n, int first_row, int nrows, const int *rowptr, const int *colind,
                            const double *val, gs_csr *R)
{
    if (n <= 0 || first_row < 0 || nrows < 0 || nrows > n - first_row)
        return GS_ERROR(GS_ERR_ARG,
                        "gpusolve_set_local_rows: expected n > 0 and 0 <= first_row <= first_row + nrows <= n (got n "
                        "= %d, first_row = %d, nrows = %d)",
                        n, first_row, nrows);
    return gs_lib_csr_arrays(s, "gpusolve_set_local_rows", nrows, n, first_row, nrows > 0 && rowptr ? rowptr[nrows] : 0,
                             rowptr, colind, val, 0, R);
}

int gpusolve_set_local_rows(gpusolve_solver *s, int n, int first_row, int nrows, const int *rowptr, const int *colind,
                            const double *val)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (!s->comm_ops) { /* a solver of one process: its rows are the matrix */
        if (first_row != 0 || nrows != n) {
            gs_lib_begin_call(s);
            return gs_lib_fail(s, GS_ERROR(GS_ERR_ARG,
                                           "gpusolve_set_local_rows: a solver of one process holds every row: expected "
                                           "first_row = 0 and nrows = n = %d (got %d and %d)",
                                           n, first_row, nrows));
        }
        return gpusolve_set_matrix(s, n, rowptr ? rowptr[n] : 0, rowptr, colind, val, 0);
    }
    lib_comm *c = COMM(s);
    gs_csr R = {0};
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    gs_status st = gs_dist_agree(c->comm, local_rows(s, n, first_row, nrows, rowptr, colind, val, &R));
    int mine[2] = {n, -n}, agreed[2] = {0, 0}; /* every rank's n the same */
    if (st == GS_OK && MPI_Allreduce(mine, agreed, 2, MPI_INT, MPI_MAX, c->comm) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: comparing the ranks' matrix sizes failed");
    if (st == GS_OK && agreed[0] != -agreed[1])
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_set_local_rows: the ranks give different matrix sizes (%d to %d)",
                      -agreed[1], agreed[0]);
    if (st != GS_OK) {
        gs_csr_free(&R);
        return finish(s, st);
    }
    drop_job(c); /* a new matrix: set up afresh (its rows' layout is checked there) */
    gs_csr_free(&c->rows);
    c->rows = R;
    c->local = true;
    c->first_row = first_row;
    c->n = n;
    s->time_read = gs_wtime() - t0;
    return finish(s, GS_OK);
}

int gpusolve_solve_local(gpusolve_solver *s, const double *b, double *x, unsigned flags)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (!s->comm_ops) return gpusolve_solve(s, b, x, flags); /* one process: its rows are all the rows */
    lib_comm *c = COMM(s);
    gs_status st = GS_OK;
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    const bool guess = (flags & GPUSOLVE_GUESS) != 0, existed = c->built;
    if (!c->local)
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve_local: the matrix is rank 0's (gpusolve_set_matrix or "
                                  "gpusolve_read_matrix): solve with gpusolve_solve");
    else if (c->rows.nrows > 0 && (!b || !x))
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve_local: b and x must not be NULL on a rank with rows");
    else if (flags & GPUSOLVE_DEVICE)
        st = GS_ERROR(GS_ERR_ARG, "gpusolve_solve_local: device pointers (GPUSOLVE_DEVICE) are not taken over MPI "
                                  "ranks; pass host arrays");
    st = gs_dist_agree(c->comm, st);
    if (st == GS_OK) st = ensure_job(s, c);
    if (st != GS_OK) return gs_lib_fail(s, st);
    if (!c->job.ready) return setup_failed(s, c, t0);
    const bool reused = existed && !c->unsolved;
    st = gs_dist_job_load_own(&c->job, b, guess ? x : NULL);
    if (st == GS_OK) {
        c->job.interrupt_request = &s->interrupt;
        st = gs_dist_job_solve(&c->job, s->monitor, s->monitor_ctx, NULL);
        c->unsolved = false;
        if (c->job.interrupted) atomic_store(&s->interrupt, 0);
    }
    if (st == GS_OK && c->rows.nrows > 0) memcpy(x, c->job.x_own, (size_t)c->rows.nrows * sizeof *x);
    const int code = gs_dist_job_exit_code(&c->job);
    if (st == GS_OK) st = comm_report(s, c, code, guess, reused, t0);
    if (st != GS_OK) {
        drop_job(c);
        return gs_lib_fail(s, st);
    }
    gs_lib_set_outcome(s, &c->job.att, code);
    gs_error_clear();
    return code;
}

static const gs_lib_comm_ops comm_ops = {
    .set = comm_set,
    .set_matrix = comm_set_matrix,
    .read_matrix = comm_read_matrix,
    .size = comm_size,
    .setup = comm_setup,
    .solve = comm_solve,
    .destroy = comm_destroy,
};

/* A handle holding an error found before its ranks could agree on anything. */
static int refuse(gpusolve_solver **out, const char *message)
{
    gpusolve_solver *s = *out = gs_lib_alloc();
    if (!s) return GPUSOLVE_EXIT_DEVICE;
    gs_lib_begin_call(s);
    return gs_lib_fail(s, GS_ERROR(GS_ERR_ARG, "gpusolve_create_comm: %s", message));
}

int gpusolve_create_comm(gpusolve_solver **out, MPI_Comm comm, const char *config_file, const char *config_text,
                         const char *const *settings)
{
    int init = 0, fin = 0, size = 0, ok = 0, all = 0;
    if (!out) return GPUSOLVE_EXIT_USAGE;
    *out = NULL;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init) return refuse(out, "MPI is not initialized (the caller starts MPI: MPI_Init before this call)");
    if (fin) return refuse(out, "MPI is finalized");
    if (comm == MPI_COMM_NULL) return refuse(out, "the communicator is MPI_COMM_NULL");
    MPI_Comm_size(comm, &size);
    if (size == 1) return gpusolve_create(out, config_file, config_text, settings);

    gpusolve_solver *s = gs_lib_alloc();
    lib_comm *c = calloc(1, sizeof *c);
    ok = s && c;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm); /* before the duplicate, which every rank makes */
    if (!all) {
        free(c);
        *out = s;
        if (!s) return GPUSOLVE_EXIT_DEVICE;
        gs_lib_begin_call(s);
        return gs_lib_fail(s, GS_ERROR(GS_ERR_MEM, "gpusolve_create_comm: out of host memory for the solver on %s",
                                       ok ? "another rank" : "this rank"));
    }
    *out = s;
    gs_lib_begin_call(s);
    if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
        free(c);
        return gs_lib_fail(s, GS_ERROR(GS_ERR_INTERNAL, "gpusolve_create_comm: MPI_Comm_dup failed"));
    }
    MPI_Comm_rank(c->comm, &c->rank);
    c->size = size;
    s->comm = c;
    s->comm_ops = &comm_ops;
    return finish(s, gs_dist_agree(c->comm, gs_lib_configure(s, config_file, config_text, settings)));
}
