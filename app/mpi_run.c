/* gpusolve over MPI ranks (app/mpi_run.h): rank 0 reads the problem, the distributed solver of dist/job.h
 * partitions it, sets up block Jacobi or RAS across ranks and runs the Krylov method of solver/ unchanged,
 * and rank 0 reports. Every phase ends with the ranks agreeing on their status (gs_dist_agree), so an error
 * anywhere ends every rank with the same exit code and rank 0 prints its one message. */
#include "app/mpi_run.h"

#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/run_report.h"
#include "api/strategy.h"
#include "app/history.h"
#include "app/mpi_rows.h"
#include "app/monitor.h"
#include "app/report_text.h"
#include "app/run.h"
#include "app/system.h"
#include "core/mem.h"
#include "core/signal.h"
#include "core/threads.h"
#include "dist/job.h"
#include "io/mmio.h"

static void finalize_at_exit(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Finalize();
}

int gs_app_mpi_start(int *argc, char ***argv)
{
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE")) return 1;
    int rank = 0, size = 1;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fputs("gpusolve: error: MPI_Init failed\n", stderr);
        exit(GS_EXIT_DEVICE);
    }
    atexit(finalize_at_exit);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != 0) { /* rank 0 prints the job's report and its one error message */
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
    }
    return size;
}

/* Everything one distributed run of the command holds beside the solver. */
typedef struct mpi_run {
    int rank, size;
    const gs_app_opts *o;
    const gs_config *user;
    gs_dist_job job;
    gs_app_problem prob;   /* rank 0 (every rank with rows.used: spec, is_gen and time_read only) */
    gs_app_rows rows;      /* every rank: its own rows, when the ranks make them (app/mpi_rows.h) */
    gs_system sys;         /* rank 0; with rows.used, every rank's own rows */
    const char *sol_path;  /* "" for none */
    double *x;             /* rank 0: the gathered solution (with rows.used, only when it is written) */
    double error_vs_xstar; /* with rows.used and rhs "Ax": reduced over the ranks (NAN: none) */
    char par_text[400];    /* rank 0: the text report's parallel line */
    gs_app_monitor mon;    /* rank 0: --monitor lines (every rank holds the same residual norms) */
    gs_app_history hist;   /* rank 0: the residual history (--history) */
    const char *hist_path; /* "" for none */
} mpi_run;

/* Rank 0's watch of the solve: output.monitor's lines (stdout, stderr with JSON) or, on a terminal, the
 * progress line, and the history's rows; *fn set when either is wanted. bnorm: ||b|| for the history's
 * relative column. */
static gs_status run_watch(mpi_run *r, double bnorm, gs_ksp_monitor_fn *fn)
{
    gs_monitor_spec spec;
    *fn = NULL;
    if (r->rank != 0) return GS_OK;
    GS_CALL(gs_monitor_parse(gs_config_string(r->user, "output.monitor"), "output.monitor", &spec));
    const bool json = strcmp(gs_config_string(r->user, "output.format"), "json") == 0;
    gs_app_monitor_begin(&r->mon, &spec, json ? stderr : stdout, false, "");
    r->hist.mon = gs_app_monitor_active(&r->mon) ? &r->mon : NULL;
    r->hist.keep = r->hist_path[0] != '\0';
    r->hist.bnorm = bnorm;
    if (r->hist.keep) GS_CALL(gs_app_history_open(&r->hist, r->hist_path));
    if (r->hist.keep || r->hist.mon) {
        gs_app_history_attempt_begin(&r->hist, 0);
        *fn = gs_app_history_monitor;
    }
    return GS_OK;
}

/* Every rank makes its own rows when it can (app/mpi_rows.h); otherwise rank 0 reads the matrix and builds
 * b and x0 (and x*), with room for the solution. */
static gs_status run_read(mpi_run *r)
{
    GS_CALL(gs_app_mpi_rows_read(MPI_COMM_WORLD, r->o->matrix, r->job.cfg, &r->rows));
    if (r->rows.used) {
        r->prob.spec = r->o->matrix;
        r->prob.is_gen = strncmp(r->o->matrix, "gen:", 4) == 0;
        r->prob.time_read = r->rows.time_read;
        gs_status st = GS_OK;
        if (r->rank == 0 && r->sol_path[0]) st = GS_CALLOC(r->x, r->rows.n_global + 1);
        return gs_dist_agree(MPI_COMM_WORLD, st);
    }
    gs_status st = GS_OK;
    if (r->rank == 0) {
        st = gs_app_problem_read(&r->prob, r->o->matrix);
        if (st == GS_OK) st = gs_system_build(&r->prob.A, r->job.cfg, r->o->rhs_path, r->o->x0_path, &r->sys);
        if (st == GS_OK) st = GS_CALLOC(r->x, r->prob.A.nrows + 1);
    }
    return gs_dist_agree(MPI_COMM_WORLD, st);
}

/* The system loaded (with rows.used: every rank's own rows of it, made here), watched by rank 0, solved;
 * with own rows, the solution gathered only when it is written and its error against x* reduced. */
static gs_status run_solve(mpi_run *r)
{
    gs_ksp_monitor_fn fn = NULL;
    if (r->rows.used) {
        GS_CALL(gs_app_mpi_rows_system(&r->job.dist, r->job.cfg, r->o->rhs_path, r->o->x0_path, &r->sys));
        GS_CALL(gs_dist_job_load_own(&r->job, r->sys.b, r->sys.x0));
    } else {
        GS_CALL(gs_dist_job_load(&r->job, r->sys.b, r->sys.x0));
    }
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, run_watch(r, r->job.att.bnorm, &fn)));
    gs_status st = gs_dist_job_solve(&r->job, fn, &r->hist, r->x);
    if (r->rank == 0) gs_app_monitor_end(&r->mon);
    int xs = r->sys.xstar != NULL;
    if (st == GS_OK && r->rows.used && MPI_Allreduce(MPI_IN_PLACE, &xs, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on x* failed");
    if (st == GS_OK && r->rows.used && xs && r->job.att.solved)
        st = gs_dist_job_error_vs(&r->job, r->sys.xstar, &r->error_vs_xstar);
    return st;
}

/* Rank 0: the report's entries (as a single-process run's, one attempt) into rep; sr the job's result. */
static gs_status report_run(mpi_run *r, gs_report *rep, gs_strategy_result *sr)
{
    GS_CALL(gs_report_string(rep, "matrix.source", r->prob.spec));
    GS_CALL(gs_report_double(rep, "time.read", r->prob.time_read));
    GS_CALL(gs_report_string(rep, "where.read", r->rows.used ? (r->prob.is_gen ? "every rank generates its rows"
                                                                                : "every rank reads its rows")
                                                             : "host (rank 0)"));
    const char *slash = strrchr(r->prob.spec, '/');
    GS_CALL(gs_report_string(rep, "matrix.name", r->prob.is_gen || !slash ? r->prob.spec : slash + 1));
    GS_CALL(gs_report_int(rep, "matrix.rows", r->job.dist.n_global));
    GS_CALL(gs_report_int(rep, "matrix.nnz", (long long)r->job.dist.nnz_global));
    GS_CALL(gs_report_string(rep, "system.rhs", r->sys.rhs_desc));
    GS_CALL(gs_report_string(rep, "system.x0", r->sys.x0_desc));
    GS_CALL(gs_dist_job_result(&r->job, sr));
    GS_CALL(gs_dist_job_report(&r->job, r->user, sr, r->rows.used ? NULL : r->sys.xstar, r->x, rep));
    if (r->rows.used && !isnan(r->error_vs_xstar))
        GS_CALL(gs_report_double(rep, "solve.error_vs_xstar", r->error_vs_xstar));
    return GS_OK;
}

/* Rank 0: the solution and history files when the solve ran. */
static gs_status write_outputs(mpi_run *r, gs_report *rep, const char *path)
{
    if (!r->job.att.solved || r->rank != 0 || r->job.interrupted) return GS_OK; /* interrupted: nothing */
    if (path[0]) {
        GS_CALL(gs_mm_write_vector(path, r->job.dist.n_global, r->x));
        GS_CALL(gs_report_string(rep, "output.solution", path));
    }
    if (r->hist.keep) {
        GS_CALL(gs_app_history_write(&r->hist, r->hist_path, 0));
        GS_CALL(gs_report_string(rep, "output.history", r->hist_path));
    }
    return GS_OK;
}

static void run_free(mpi_run *r)
{
    gs_dist_job_free(&r->job);
    gs_free(&r->x);
    gs_system_free(&r->sys);
    if (r->rank == 0 && !r->rows.used) gs_app_problem_free(&r->prob);
    gs_app_rows_free(&r->rows);
    gs_app_history_free(&r->hist); /* a history not written: its temporary file goes */
}

/* Rank 0's closing: status, exit code, total time, the report printed (text or JSON). */
static int print_report(mpi_run *r, gs_report *rep, const gs_strategy_result *sr, int code, double t_start)
{
    const bool json = strcmp(gs_config_string(r->user, "output.format"), "json") == 0;
    gs_app_run_ctx ctx = {0, 1, NULL, NULL, NULL};
    gs_status st = gs_report_string(rep, "status", "ok");
    if (st == GS_OK) st = gs_report_int(rep, "exit_code", code);
    if (st == GS_OK) st = gs_report_double(rep, "time.total", gs_wtime() - t_start);
    if (st == GS_OK && json) st = gs_config_to_report(r->user, rep);
    if (st == GS_OK && json) st = gs_app_write_json(rep, &ctx, r->user, stdout);
    if (st != GS_OK) return gs_app_fail(r->user);
    gs_app_print_warnings(rep, stderr);
    if (json) return code;
    const int level = gs_app_verbosity(r->user);
    gs_app_print_text(rep, r->user, sr, level, "");
    if (level >= GS_VERBOSITY_DEFAULT) printf("parallel        %s\n", r->par_text);
    return code;
}

int gs_app_mpi_run(const gs_app_opts *o, const gs_config *cfg)
{
    mpi_run r;
    gs_report *rep = NULL;
    gs_strategy_result sr;
    int code = GS_EXIT_INTERNAL;
    const double t_start = gs_wtime();
    const time_t started = time(NULL);
    memset(&r, 0, sizeof r);
    memset(&sr, 0, sizeof sr);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.size);
    r.o = o;
    r.user = cfg;
    gs_threads_set((int)gs_config_int(cfg, "device.threads"));
    gs_error_clear();
    const char *sol_path = o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    r.sol_path = sol_path;
    r.hist_path = o->history ? o->history : gs_config_string(cfg, "output.history");
    r.error_vs_xstar = NAN;

    gs_status st = gs_dist_job_create(&r.job, MPI_COMM_WORLD, cfg);
    if (st == GS_OK) st = run_read(&r);
    if (st == GS_OK && r.rows.used) st = gs_dist_job_setup_rows(&r.job, r.rows.n_global, r.rows.first_row, &r.rows.mine);
    else if (st == GS_OK) st = gs_dist_job_setup(&r.job, r.rank == 0 ? &r.prob.A : NULL);
    if (st == GS_OK && r.job.ready) st = run_solve(&r);
    const bool together = st == GS_OK; /* every rank got this far: the next agreement is everyone's */
    if (st == GS_OK && r.rank == 0) {
        st = gs_report_create(&rep);
        if (st == GS_OK) st = gs_app_report_provenance(rep, started);
        if (st == GS_OK) st = write_outputs(&r, rep, sol_path);
        if (st == GS_OK) st = report_run(&r, rep, &sr);
    }
    if (together) st = gs_dist_agree(MPI_COMM_WORLD, st);
    if (st == GS_OK) st = gs_dist_job_report_parallel(&r.job, rep, r.par_text, sizeof r.par_text);
    if (st != GS_OK) {
        code = r.rank == 0 ? gs_app_fail(cfg) : gs_exit_code_for_status(st);
        gs_error_clear();
    } else {
        code = gs_dist_job_exit_code(&r.job);
        if (r.rank == 0) code = print_report(&r, rep, &sr, code, t_start);
        if (r.rank == 0 && r.job.interrupted)
            fprintf(stderr, "gpusolve: interrupted by %s after %d iterations; nothing written\n",
                    gs_interrupt_signal() ? gs_interrupt_name(gs_interrupt_signal()) : "a signal to another rank",
                    r.job.att.res.iterations);
        int c = code; /* rank 0's printing may fail: its code is the job's */
        MPI_Bcast(&c, 1, MPI_INT, 0, MPI_COMM_WORLD);
        code = c;
    }
    fflush(stdout);
    gs_attempt_record_free(&sr.rec[0]); /* the rest of sr is the job's */
    gs_report_destroy(&rep);
    run_free(&r);
    return code;
}
