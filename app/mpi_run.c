/* gpusolve over MPI ranks (app/mpi_run.h): rank 0 reads the problem, dist/ partitions and scatters it,
 * the Krylov method of solver/ runs unchanged on the distributed backend with block Jacobi or RAS across
 * ranks, and rank 0 reports. Every phase ends with the ranks agreeing on their status (gs_dist_agree), so an
 * error anywhere ends every rank with the same exit code and rank 0 prints its one message. */
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
#include "app/monitor.h"
#include "app/report_text.h"
#include "app/run.h"
#include "app/system.h"
#include "core/csr_stats.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/threads.h"
#include "dist/dist.h"
#include "dist/pc_dist.h"
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

/* Everything one distributed run holds. */
typedef struct mpi_job {
    int rank, size;
    const gs_app_opts *o;
    const gs_config *user;
    gs_config *cfg;        /* the effective configuration (auto keys resolved) */
    bool automatic, spd;
    gs_app_problem prob;   /* rank 0 */
    gs_system sys;         /* rank 0 */
    gs_dist dist;
    gs_backend *be;
    gs_matrix *M;
    gs_vector *vb, *vx;
    gs_pc *pc;
    gs_ksp *ksp;
    double *x;             /* rank 0: the gathered solution */
    gs_attempt att;
    double time_distribute;
    char par_text[400];    /* rank 0: the text report's parallel line */
    gs_app_monitor mon;    /* rank 0: --monitor lines (every rank holds the same residual norms) */
    gs_app_history hist;   /* rank 0: the residual history (--history) */
    const char *hist_path; /* "" for none */
} mpi_job;

/* Rank 0's watch of the solve: output.monitor's lines (stdout, stderr with JSON) or, on a terminal, the
 * progress line, and the history's rows; attached to the Krylov method when either is wanted. bnorm:
 * ||b|| for the history's relative column. */
static gs_status job_watch(mpi_job *j, double bnorm)
{
    gs_monitor_spec spec;
    if (j->rank != 0) return GS_OK;
    GS_CALL(gs_monitor_parse(gs_config_string(j->user, "output.monitor"), "output.monitor", &spec));
    const bool json = strcmp(gs_config_string(j->user, "output.format"), "json") == 0;
    gs_app_monitor_begin(&j->mon, &spec, json ? stderr : stdout, false, "");
    j->hist.mon = gs_app_monitor_active(&j->mon) ? &j->mon : NULL;
    j->hist.keep = j->hist_path[0] != '\0';
    j->hist.bnorm = bnorm;
    if (j->hist.keep) GS_CALL(gs_app_history_open(&j->hist, j->hist_path));
    if (j->hist.keep || j->hist.mon) {
        gs_app_history_attempt_begin(&j->hist, 0);
        gs_ksp_set_monitor(j->ksp, gs_app_history_monitor, &j->hist);
    }
    return GS_OK;
}

/* What a configuration may ask of a distributed run; the rest is refused by name. */
static gs_status job_config(mpi_job *j)
{
    const gs_config *u = j->user;
    for (int k = 0; gs_cfg_schema[k].path; k++)
        if (gs_config_count(u, gs_cfg_schema[k].path) > 1)
            return GS_ERROR(GS_ERR_CONFIG, "%s holds several values (a sweep): sweeps run on one process, without mpirun",
                            gs_cfg_schema[k].path);
    GS_CALL(gs_config_copy(u, &j->cfg));
    static const char *pre[] = {"system.matching", "system.scaling", "system.reorder"};
    for (int k = 0; k < 3; k++) {
        const char *v = gs_config_string(j->cfg, pre[k]);
        if (strcmp(v, "auto") == 0) {
            char a[64];
            snprintf(a, sizeof a, "%s=none", pre[k]);
            GS_CALL(gs_config_set(j->cfg, a));
        } else if (strcmp(v, "none") != 0) {
            return GS_ERROR(GS_ERR_UNSUPPORTED,
                            "%s = \"%s\" is not available on several MPI ranks (the ranks solve the matrix as given); "
                            "use \"none\"",
                            pre[k], v);
        }
    }
    if (strcmp(gs_config_string(j->cfg, "preconditioner.type"), "auto") != 0)
        GS_CALL(gs_dist_pc_check(j->cfg, j->size));
    if (strcmp(gs_config_string(j->cfg, "preconditioner.type"), "ras") == 0) { /* one subdomain per rank */
        char set[64];
        snprintf(set, sizeof set, "preconditioner.blocks=%d", j->size);
        GS_CALL(gs_config_set(j->cfg, set));
    }
    return GS_OK;
}

/* Rank 0 reads the matrix and builds b and x0; then "auto" types resolved from the matrix's class (the
 * same on every rank): an SPD-looking matrix gets CG with IC(0) blocks, any other GMRES with ILU(0) blocks. */
static gs_status job_read(mpi_job *j)
{
    gs_status st = GS_OK;
    int spd = 0;
    if (j->rank == 0) {
        st = gs_app_problem_read(&j->prob, j->o->matrix);
        if (st == GS_OK) st = gs_system_build(&j->prob.A, j->cfg, j->o->rhs_path, j->o->x0_path, &j->sys);
        if (st == GS_OK) {
            gs_csr_stats s;
            gs_auto_choice c;
            st = gs_csr_stats_compute(&j->prob.A, &s);
            if (st == GS_OK) {
                gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
                spd = c.cls == GS_CLASS_SPD;
            }
        }
    }
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, st));
    if (MPI_Bcast(&spd, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: broadcasting the matrix class failed");
    j->spd = spd;
    const bool ks_auto = strcmp(gs_config_string(j->cfg, "solver.type"), "auto") == 0;
    const bool pc_auto = strcmp(gs_config_string(j->cfg, "preconditioner.type"), "auto") == 0;
    j->automatic = ks_auto || pc_auto;
    if (ks_auto) GS_CALL(gs_config_set(j->cfg, spd ? "solver.type=cg" : "solver.type=gmres"));
    if (pc_auto) GS_CALL(gs_config_set(j->cfg, spd ? "preconditioner.type=ic0" : "preconditioner.type=ilu0"));
    return GS_OK;
}

/* Partition and scatter; the operator, b and x0 on the distributed backend. */
static gs_status job_distribute(mpi_job *j)
{
    gs_status st = GS_OK;
    double t = gs_wtime();
    GS_CALL(gs_dist_create(MPI_COMM_WORLD, &j->prob.A, (int)gs_config_int(j->cfg, "preconditioner.seed"), &j->dist));
    const gs_int n = j->dist.halo.n_own;
    double *buf = NULL;
    st = gs_backend_mpi_create(MPI_COMM_WORLD, &j->be);
    if (st == GS_OK) st = gs_mpi_mat_create(j->be, &j->dist.local, &j->dist.halo, &j->M);
    if (st == GS_OK) st = gs_vec_create(j->be, n, &j->vb);
    if (st == GS_OK) st = gs_vec_create(j->be, n, &j->vx);
    if (st == GS_OK) st = GS_MALLOC(buf, n + 1);
    GS_TRY(gs_dist_agree(MPI_COMM_WORLD, st));
    GS_TRY(gs_dist_scatter(&j->dist, j->sys.b, buf));
    GS_TRY(gs_vec_upload(j->vb, buf));
    GS_TRY(gs_dist_scatter(&j->dist, j->sys.x0, buf));
    GS_TRY(gs_vec_upload(j->vx, buf));
    j->time_distribute = gs_wtime() - t;
cleanup:
    gs_free(&buf);
    return st;
}

/* The error of a failed setup as the attempt's detail (an outcome: exit code of a numerical failure). */
static gs_status setup_failed(mpi_job *j)
{
    j->att.res.reason = GS_DIVERGED_PC_FAILED;
    GS_CALL(gs_strprintf(&j->att.detail, "preconditioner setup failed: %s", gs_error_message()));
    j->att.res.detail = j->att.detail;
    gs_error_clear();
    return GS_OK;
}

/* Each rank's block or subdomain factored; a numerical failure on any rank is the outcome of all. */
static gs_status job_setup(mpi_job *j)
{
    GS_CALL(gs_report_create(&j->att.rep));
    gs_status st = gs_dist_agree(MPI_COMM_WORLD, gs_dist_pc_create(j->be, j->cfg, &j->pc));
    if (st == GS_OK) st = gs_dist_agree(MPI_COMM_WORLD, gs_dist_pc_setup(j->pc, &j->dist)); /* collective */
    if (st == GS_ERR_NUMERIC) return setup_failed(j);
    GS_CALL(st);
    int var = j->pc->variable, any = 0; /* one verdict for every rank: the Krylov method checks it */
    if (MPI_Allreduce(&var, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on the preconditioner's kind failed");
    j->pc->variable = any;
    GS_CALL(gs_dist_pc_summarize(j->pc, &j->dist));
    double ts[2] = {j->pc->time_symbolic, j->pc->time_numeric}, tm[2];
    if (MPI_Allreduce(ts, tm, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: reducing the setup times failed");
    j->att.time_setup_symbolic = tm[0]; /* the slowest rank's: the others wait for it */
    j->att.time_setup_numeric = tm[1];
    if (j->rank == 0) gs_pc_view(j->pc, j->att.rep);
    if (gs_error_status() == GS_ERR_MEM) st = GS_ERR_MEM;
    return gs_dist_agree(MPI_COMM_WORLD, st);
}

/* The Krylov solve, the true residual ||b - A x|| and the solution gathered on rank 0. */
static gs_status job_solve(mpi_job *j)
{
    gs_status st = GS_OK;
    gs_ksp_params prm;
    gs_attempt *a = &j->att;
    double t = 0.0, r0 = 0.0;
    double *buf = NULL;
    st = gs_ksp_params_from_config(j->cfg, &prm);
    if (st == GS_OK) st = gs_ksp_create(gs_config_string(j->cfg, "solver.type"), j->be, &prm, &j->ksp);
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, st));
    GS_CALL(gs_vec_nrm2(j->vb, &a->bnorm));
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, job_watch(j, a->bnorm)));
    GS_CALL(gs_true_residual(j->M, j->vb, j->vx, &r0));
    a->r0norm_original = r0;
    gs_backend_mpi_stats_reset(j->be);
    t = gs_wtime();
    st = gs_ksp_solve(j->ksp, j->M, j->pc, j->vb, j->vx, &a->res);
    a->time_solve = gs_wtime() - t;
    if (j->rank == 0) gs_app_monitor_end(&j->mon);
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, st));
    a->solved = true;
    if (a->res.detail && a->res.detail[0]) {
        GS_CALL(gs_strprintf(&a->detail, "%s", a->res.detail));
        a->res.detail = a->detail;
    }
    GS_CALL(gs_true_residual(j->M, j->vb, j->vx, &a->residual_true_abs));
    a->residual_true = a->bnorm > 0 ? a->residual_true_abs / a->bnorm : a->residual_true_abs;
    double base = prm.baseline == GS_BASELINE_R0 ? a->res.r0norm : a->res.bnorm;
    a->residual_monitored = base > 0 ? a->res.resnorm / base : a->res.resnorm;
    double target = fmax(prm.rtol * (prm.baseline == GS_BASELINE_R0 ? r0 : a->bnorm), prm.atol);
    a->true_missed = gs_reason_converged(a->res.reason) && !(a->residual_true_abs <= 10.0 * target);
    const gs_int n = j->dist.halo.n_own;
    st = GS_MALLOC(buf, n + 1);
    if (st == GS_OK && j->rank == 0) st = GS_MALLOC(j->x, j->dist.n_global + 1);
    if (st == GS_OK) st = gs_vec_download(j->vx, buf);
    st = gs_dist_agree(MPI_COMM_WORLD, st); /* the application may exchange: every rank makes it or none */
    if (st == GS_OK && a->res.iterations > 0) { /* one application (into x, kept in buf), rank 0's time */
        t = gs_wtime();
        st = gs_pc_apply(j->pc, j->vb, j->vx);
        a->time_pc_apply = gs_wtime() - t;
    }
    st = gs_dist_agree(MPI_COMM_WORLD, st);
    if (st == GS_OK) st = gs_dist_gather(&j->dist, buf, j->x);
    gs_free(&buf);
    return st;
}

/* "<label>v_0/v_1/..." of field f (of F per rank) into buf at len; the new length. */
static size_t append_field(char *buf, size_t cap, size_t len, const char *label, const double *all, int P, int F,
                           int f, bool real)
{
    for (int r = 0; r < P && len + 40 < cap; r++) {
        int w = snprintf(buf + len, cap - len, real ? "%s%.2g" : "%s%.0f", r ? "/" : label, all[(size_t)r * F + f]);
        if (w > 0) len += (size_t)w;
    }
    return len < cap ? len : cap - 1;
}

/* The "parallel" object: ranks, and per rank its rows, nonzeros, halo entries, neighbours and seconds spent
 * in communication during the solve, and with RAS its overlap rows and subdomain entries (arrays indexed by
 * rank). Collective; rank 0 writes. */
static gs_status report_parallel(mpi_job *j, gs_report *rep)
{
    enum { F = 7, TIME = 4 };
    static const char *names[F] = {"rows", "nnz", "halo", "neighbours", "time_comm", "overlap", "subdomain_nnz"};
    gs_status st = GS_OK;
    gs_mpi_stats ms;
    double mine[F], *all = NULL;
    json_t *obj = NULL;
    char *text = NULL;
    gs_int ovl = 0, snnz = 0;
    const bool ras = gs_dist_pc_overlap(j->pc, &ovl, &snnz);
    const int nf = ras ? F : F - 2;
    gs_backend_mpi_stats(j->be, &ms);
    mine[0] = j->dist.halo.n_own;
    mine[1] = j->dist.local.nnz;
    mine[2] = j->dist.halo.n_halo;
    mine[3] = j->dist.halo.nrecv;
    mine[TIME] = ms.time_comm;
    mine[5] = ovl;
    mine[6] = snnz;
    if (j->rank == 0) st = GS_MALLOC(all, (size_t)F * (size_t)j->size);
    GS_CALL(gs_dist_agree(MPI_COMM_WORLD, st));
    if (MPI_Gather(mine, F, MPI_DOUBLE, all, F, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: gathering the ranks' facts failed");
    if (j->rank != 0) goto cleanup;
    const size_t cap = sizeof j->par_text;
    size_t len = (size_t)snprintf(j->par_text, cap, "%d MPI ranks", j->size);
    len = append_field(j->par_text, cap, len, "; rows ", all, j->size, F, 0, false);
    len = append_field(j->par_text, cap, len, ", halo ", all, j->size, F, 2, false);
    if (ras) len = append_field(j->par_text, cap, len, ", overlap ", all, j->size, F, 5, false);
    append_field(j->par_text, cap, len, ", communication [s] ", all, j->size, F, TIME, true);
    obj = json_object();
    for (int f = 0; obj && f < nf; f++) {
        json_t *arr = json_array();
        for (int r = 0; arr && r < j->size; r++) {
            double v = all[(size_t)r * F + (size_t)f];
            if (!gs_json_append(arr, f == TIME ? json_real(v) : json_integer((json_int_t)v))) {
                arr = NULL;
                break;
            }
        }
        if (!arr || json_object_set_new(obj, names[f], arr) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    if (obj) {
        json_object_set_new(obj, "ranks", json_integer(j->size));
        json_object_set_new(obj, "partition", json_string("metis"));
        json_object_set_new(obj, "time_distribute", json_real(j->time_distribute));
        json_object_set_new(obj, "reductions", json_integer(ms.reductions));
        json_object_set_new(obj, "halo_exchanges", json_integer(ms.exchanges));
        if (ras) json_object_set_new(obj, "overlap_exchanges", json_integer(ms.pc_exchanges));
    }
    text = obj ? gs_json_text(obj) : NULL;
    if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory writing the parallel facts");
    GS_TRY(gs_report_json(rep, "parallel", text));
cleanup:
    json_decref(obj);
    free(text);
    gs_free(&all);
    return st;
}

/* Rank 0: the report's entries (as a single-process run's, one attempt) into rep, into sr. */
static gs_status report_run(mpi_job *j, gs_report *rep, gs_strategy_result *sr)
{
    const gs_csr *A = &j->prob.A;
    GS_CALL(gs_report_string(rep, "matrix.source", j->prob.spec));
    GS_CALL(gs_report_double(rep, "time.read", j->prob.time_read));
    GS_CALL(gs_report_string(rep, "where.read", "host (rank 0)"));
    const char *slash = strrchr(j->prob.spec, '/');
    GS_CALL(gs_report_string(rep, "matrix.name", j->prob.is_gen || !slash ? j->prob.spec : slash + 1));
    GS_CALL(gs_report_int(rep, "matrix.rows", A->nrows));
    GS_CALL(gs_report_int(rep, "matrix.nnz", A->nnz));
    GS_CALL(gs_report_string(rep, "system.rhs", j->sys.rhs_desc));
    GS_CALL(gs_report_string(rep, "system.x0", j->sys.x0_desc));
    GS_CALL(gs_report_string(rep, "backend.name", j->be->name));
    GS_CALL(gs_report_string(rep, "backend.device", j->be->device_name));
    GS_CALL(gs_report_string(rep, "where.setup", gs_dist_pc_overlap(j->pc, NULL, NULL)
                                                      ? "host (every rank its subdomain)"
                                                      : "host (every rank its block)"));
    GS_CALL(gs_report_string(rep, "where.solve", "host (MPI ranks)"));
    sr->automatic = false; /* the MPI rule below is not the single-process strategy's */
    sr->nattempts = 1;
    sr->chosen = 0;
    GS_CALL(gs_config_copy(j->cfg, &sr->cfg));
    sr->final = j->att;
    memset(&j->att, 0, sizeof j->att); /* sr owns it now */
    GS_CALL(gs_strategy_record(sr->cfg, "configuration", &sr->final, &sr->rec[0]));
    if (j->automatic)
        GS_CALL(gs_report_string(rep, "strategy.mpi_rule",
                                 j->spd ? "SPD-looking matrix: cg with ic0 blocks" : "gmres with ilu0 blocks"));
    GS_CALL(gs_run_report_strategy(rep, sr));
    GS_CALL(gs_run_report_outcome(rep, sr, j->sys.xstar, j->x, A->nrows));
    GS_CALL(gs_run_report_warnings(rep, j->user, sr));
    GS_CALL(gs_run_report_memory(rep, j->be));
    return GS_OK;
}

/* Rank 0: the solution and history files when the solve ran. */
static gs_status write_outputs(mpi_job *j, gs_report *rep, const char *path)
{
    if (!j->att.solved || j->rank != 0) return GS_OK;
    if (path[0]) {
        GS_CALL(gs_mm_write_vector(path, j->dist.n_global, j->x));
        GS_CALL(gs_report_string(rep, "output.solution", path));
    }
    if (j->hist.keep) {
        GS_CALL(gs_app_history_write(&j->hist, j->hist_path, 0));
        GS_CALL(gs_report_string(rep, "output.history", j->hist_path));
    }
    return GS_OK;
}

static void job_free(mpi_job *j)
{
    gs_ksp_destroy(&j->ksp);
    gs_pc_destroy(&j->pc);
    gs_vec_destroy(&j->vb);
    gs_vec_destroy(&j->vx);
    gs_mat_destroy(&j->M);
    gs_backend_destroy(&j->be);
    gs_dist_free(&j->dist);
    gs_free(&j->x);
    gs_attempt_free(&j->att);
    gs_system_free(&j->sys);
    if (j->rank == 0) gs_app_problem_free(&j->prob);
    gs_config_destroy(&j->cfg);
    gs_app_history_free(&j->hist); /* a history not written: its temporary file goes */
}

/* Rank 0's closing: status, exit code, total time, the report printed (text or JSON). */
static int print_report(mpi_job *j, gs_report *rep, const gs_strategy_result *sr, int code, double t_start)
{
    const bool json = strcmp(gs_config_string(j->user, "output.format"), "json") == 0;
    gs_app_run_ctx ctx = {0, 1, NULL, NULL, NULL};
    gs_status st = gs_report_string(rep, "status", "ok");
    if (st == GS_OK) st = gs_report_int(rep, "exit_code", code);
    if (st == GS_OK) st = gs_report_double(rep, "time.total", gs_wtime() - t_start);
    if (st == GS_OK && json) st = gs_config_to_report(j->user, rep);
    if (st == GS_OK && json) st = gs_app_write_json(rep, &ctx, j->user, stdout);
    if (st != GS_OK) return gs_app_fail(j->user);
    gs_app_print_warnings(rep, stderr);
    if (json) return code;
    const int level = gs_app_verbosity(j->user);
    gs_app_print_text(rep, j->user, sr, level, "");
    if (level >= GS_VERBOSITY_DEFAULT) printf("parallel        %s\n", j->par_text);
    return code;
}

int gs_app_mpi_run(const gs_app_opts *o, const gs_config *cfg)
{
    mpi_job j;
    gs_report *rep = NULL;
    gs_strategy_result sr;
    int code = GS_EXIT_INTERNAL;
    const double t_start = gs_wtime();
    const time_t started = time(NULL);
    memset(&j, 0, sizeof j);
    memset(&sr, 0, sizeof sr);
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.size);
    j.o = o;
    j.user = cfg;
    gs_threads_set((int)gs_config_int(cfg, "device.threads"));
    gs_error_clear();
    const char *sol_path = o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    j.hist_path = o->history ? o->history : gs_config_string(cfg, "output.history");

    gs_status st = job_config(&j);
    st = gs_dist_agree(MPI_COMM_WORLD, st);
    if (st == GS_OK) st = job_read(&j);
    if (st == GS_OK) st = job_distribute(&j);
    if (st == GS_OK) st = job_setup(&j);
    if (st == GS_OK && j.att.res.reason == GS_REASON_NONE) st = job_solve(&j);
    const bool together = st == GS_OK; /* every rank got this far: the next agreement is everyone's */
    if (st == GS_OK && j.rank == 0) {
        st = gs_report_create(&rep);
        if (st == GS_OK) st = gs_app_report_provenance(rep, started);
        if (st == GS_OK) st = write_outputs(&j, rep, sol_path);
        if (st == GS_OK) st = report_run(&j, rep, &sr);
    }
    if (together) st = gs_dist_agree(MPI_COMM_WORLD, st);
    if (st == GS_OK) st = report_parallel(&j, rep);
    if (st != GS_OK) {
        code = j.rank == 0 ? gs_app_fail(cfg) : gs_exit_code_for_status(st);
        gs_error_clear();
    } else {
        code = gs_exit_code_for_reason(sr.final.res.reason);
        if (j.rank == 0) code = print_report(&j, rep, &sr, code, t_start);
        int c = code; /* rank 0's printing may fail: its code is the job's */
        MPI_Bcast(&c, 1, MPI_INT, 0, MPI_COMM_WORLD);
        code = c;
    }
    fflush(stdout);
    gs_strategy_result_free(&sr);
    gs_report_destroy(&rep);
    job_free(&j);
    return code;
}
