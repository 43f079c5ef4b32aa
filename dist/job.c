/* The distributed solver of a configuration (dist/job.h): rank 0's matrix partitioned and scattered
 * (dist.c), the Krylov method of solver/ run unchanged on the distributed backend with block Jacobi or
 * RAS across ranks (pc_dist.c), the solution gathered on rank 0. Every phase ends with the ranks agreeing
 * on their status, so an error anywhere is every rank's. */
#include "dist/job.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/exit_codes.h"
#include "api/run_report.h"
#include "core/csr_stats.h"
#include "core/json.h"
#include "core/mem.h"
#include "core/signal.h"
#include "dist/pc_dist.h"

/* 64-bit FNV-1a of the values of every key outside device.* (each rank may drive its own device) and
 * output.* (the library ignores them; the command's rank 0 writes them): the ranks run one method only
 * when these agree. */
static gs_status config_fingerprint(const gs_config *cfg, uint64_t *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return GS_ERROR(GS_ERR_MEM, "out of host memory comparing the ranks' configurations");
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const char *p = gs_cfg_schema[k].path;
        if (strncmp(p, "device.", 7) == 0 || strncmp(p, "output.", 7) == 0) continue;
        fprintf(f, "%s=", p);
        gs_config_print_value(cfg, p, f);
        fputc('\n', f);
    }
    if (fclose(f) != 0 || !text) {
        free(text);
        return GS_ERROR(GS_ERR_MEM, "out of host memory comparing the ranks' configurations");
    }
    uint64_t v = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) v = (v ^ (unsigned char)text[i]) * 1099511628211ull;
    free(text);
    *h = v;
    return GS_OK;
}

/* Every rank's configuration against rank 0's (st: this rank's status so far, agreed first). */
static gs_status config_agree(gs_dist_job *j, const gs_config *user, gs_status st)
{
    uint64_t mine = 0, root = 0;
    if (st == GS_OK) st = config_fingerprint(user, &mine);
    GS_CALL(gs_dist_agree(j->comm, st));
    root = mine;
    if (MPI_Bcast(&root, 1, MPI_UINT64_T, 0, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: broadcasting rank 0's configuration failed");
    if (mine != root)
        st = GS_ERROR(GS_ERR_CONFIG, "this rank's configuration differs from rank 0's: every rank must be given "
                                     "the same configuration (device.* and output.* may differ)");
    return gs_dist_agree(j->comm, st);
}

/* What a configuration may ask of a distributed run; the rest is refused by name. */
static gs_status check_config(gs_dist_job *j, const gs_config *u)
{
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

gs_status gs_dist_job_create(gs_dist_job *j, MPI_Comm comm, const gs_config *user)
{
    memset(j, 0, sizeof *j);
    j->comm = comm;
    j->time_pc_apply = -1.0;
    MPI_Comm_rank(comm, &j->rank);
    MPI_Comm_size(comm, &j->size);
    gs_status st = check_config(j, user);
    st = config_agree(j, user, st);
    if (st != GS_OK) gs_dist_job_free(j);
    return st;
}

/* "auto" types resolved from the matrix class spd (the same on every rank). */
static gs_status resolve_types(gs_dist_job *j, int spd)
{
    gs_status st = GS_OK;
    j->spd = spd;
    const bool ks_auto = strcmp(gs_config_string(j->cfg, "solver.type"), "auto") == 0;
    const bool pc_auto = strcmp(gs_config_string(j->cfg, "preconditioner.type"), "auto") == 0;
    j->automatic = ks_auto || pc_auto;
    if (ks_auto) st = gs_config_set(j->cfg, spd ? "solver.type=cg" : "solver.type=gmres");
    if (pc_auto && st == GS_OK)
        st = gs_config_set(j->cfg, spd ? "preconditioner.type=ic0" : "preconditioner.type=ilu0");
    return gs_dist_agree(j->comm, st);
}

/* Whether a type is "auto": the matrix class is needed (every rank's configuration is the same). */
static bool wants_class(const gs_dist_job *j)
{
    return strcmp(gs_config_string(j->cfg, "solver.type"), "auto") == 0 ||
           strcmp(gs_config_string(j->cfg, "preconditioner.type"), "auto") == 0;
}

/* "auto" types resolved from the class of rank 0's matrix (the same on every rank). */
static gs_status resolve(gs_dist_job *j, const gs_csr *A)
{
    gs_status st = GS_OK;
    int spd = 0;
    if (!wants_class(j)) return resolve_types(j, 0);
    if (j->rank == 0) {
        gs_csr_stats s;
        gs_auto_choice c;
        st = gs_csr_stats_compute(A, &s);
        if (st == GS_OK) {
            gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
            spd = c.cls == GS_CLASS_SPD;
        }
    }
    GS_CALL(gs_dist_agree(j->comm, st));
    if (MPI_Bcast(&spd, 1, MPI_INT, 0, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: broadcasting the matrix class failed");
    return resolve_types(j, spd);
}

/* A hash of the unordered index pair {i, j} with the value v: an entry and its transpose hash alike. */
static uint64_t pair_hash(gs_int i, gs_int j, double v)
{
    uint64_t lo = (uint64_t)(i < j ? i : j), hi = (uint64_t)(i < j ? j : i), bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t z = lo * 0x9E3779B97F4A7C15ull ^ (hi + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^ bits;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Whether the couplings between ranks are symmetric in pattern and value: the entries rank r's rows hold
 * in rank s's columns, counted and hashed (XOR of pair_hash, independent of order), equal those of s's rows
 * in r's columns, for every pair. Collective; the same answer on every rank. */
static gs_status couplings_symmetric(const gs_dist *d, int *sym)
{
    gs_status st = GS_OK;
    const int P = d->size;
    const gs_int n = d->halo.n_own, lo = d->displs[d->rank];
    uint64_t *mine = NULL, *theirs = NULL; /* per rank: count, hash */
    st = GS_CALLOC(mine, 2 * (size_t)P);
    if (st == GS_OK) st = GS_CALLOC(theirs, 2 * (size_t)P);
    GS_TRY(gs_dist_agree(d->comm, st));
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = d->local.rowptr[i]; p < d->local.rowptr[i + 1]; p++) {
            if (d->local.colind[p] < n) continue;
            const gs_int c = d->halo_cols[d->local.colind[p] - n];
            const int s = gs_dist_owner(d, c);
            mine[2 * s]++;
            mine[2 * s + 1] ^= pair_hash(lo + i, c, d->local.val[p]);
        }
    if (MPI_Alltoall(mine, 2, MPI_UINT64_T, theirs, 2, MPI_UINT64_T, d->comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: comparing the couplings between ranks failed");
    int ok = memcmp(mine, theirs, 2 * (size_t)P * sizeof *mine) == 0;
    if (MPI_Allreduce(&ok, sym, 1, MPI_INT, MPI_LAND, d->comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: agreeing on the couplings' symmetry failed");
cleanup:
    gs_free(&mine);
    gs_free(&theirs);
    return st;
}

/* "auto" types resolved from the distributed matrix itself (no rank holds it whole): SPD-looking when
 * every rank's diagonal block is by the one-process rule and the couplings between ranks are symmetric. */
static gs_status resolve_rows(gs_dist_job *j)
{
    gs_csr_stats s;
    gs_auto_choice c;
    int spd = 0, all = 0;
    if (!wants_class(j)) return resolve_types(j, 0);
    gs_status st = gs_csr_stats_compute(&j->dist.diag, &s);
    if (st == GS_OK) {
        gs_strategy_rule(&s, GS_BACKEND_HOST, &c);
        spd = c.cls == GS_CLASS_SPD || j->dist.halo.n_own == 0;
    }
    GS_CALL(gs_dist_agree(j->comm, st));
    if (MPI_Allreduce(&spd, &all, 1, MPI_INT, MPI_LAND, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on the matrix class failed");
    int sym = 0;
    GS_CALL(couplings_symmetric(&j->dist, &sym));
    return resolve_types(j, all && sym);
}

/* This rank's local backend: device.backend as one process takes it, a GPU per rank; unless device.id is
 * set, the ranks of a node take its GPUs in turn (node rank modulo the devices). Collective. */
static gs_status local_backend(const gs_dist_job *j, gs_backend **local)
{
    const char *which = gs_config_string(j->cfg, "device.backend");
    int id = (int)gs_config_int(j->cfg, "device.id");
    const int count = gs_backend_cuda_device_count();
    MPI_Comm node = MPI_COMM_NULL;
    int node_rank = 0;
    if (MPI_Comm_split_type(j->comm, MPI_COMM_TYPE_SHARED, j->rank, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
        MPI_Comm_rank(node, &node_rank) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: grouping the ranks by node failed");
    MPI_Comm_free(&node);
    if (count > 0 && gs_config_is_default(j->cfg, "device.id")) id = node_rank % count;
    return gs_backend_create(which, id, local);
}

/* Partition and scatter rank 0's A, or take every rank's own rows (mine: n_global columns); the operator
 * and the vectors on the distributed backend. */
static gs_status distribute(gs_dist_job *j, const gs_csr *A, gs_int n_global, gs_int first_row, gs_csr *mine)
{
    gs_status st = GS_OK;
    gs_backend *local = NULL;
    const double t = gs_wtime();
    if (mine)
        GS_CALL(gs_dist_create_rows(j->comm, n_global, first_row, mine, &j->dist));
    else
        GS_CALL(gs_dist_create(j->comm, A,
                               gs_partition_kind_of(gs_config_string(j->cfg, "preconditioner.partition")),
                               (int)gs_config_int(j->cfg, "preconditioner.seed"), &j->dist));
    const gs_int n = j->dist.halo.n_own;
    /* each step collective: every rank makes it or none goes on */
    st = gs_dist_agree(j->comm, local_backend(j, &local));
    if (st != GS_OK) {
        gs_backend_destroy(&local);
        return st;
    }
    GS_CALL(gs_dist_agree(j->comm, gs_backend_mpi_create_on(j->comm, local, &j->be)));
    st = gs_backend_mpi_set_transport(j->be, gs_config_string(j->cfg, "device.transport"));
    if (st == GS_OK) st = gs_mpi_mat_create(j->be, &j->dist.local, &j->dist.diag, &j->dist.halo, j->dist.n_global, &j->M);
    if (st == GS_OK) st = gs_vec_create(j->be, n, &j->vb);
    if (st == GS_OK) st = gs_vec_create(j->be, n, &j->vx);
    GS_CALL(gs_dist_agree(j->comm, st));
    j->time_distribute = gs_wtime() - t;
    return GS_OK;
}

/* The error of a failed setup as the attempt's detail (an outcome: exit code of a numerical failure). */
static gs_status setup_failed(gs_dist_job *j)
{
    j->att.res.reason = GS_DIVERGED_PC_FAILED;
    GS_CALL(gs_strprintf(&j->att.detail, "preconditioner setup failed: %s", gs_error_message()));
    j->att.res.detail = j->att.detail;
    gs_error_clear();
    return GS_OK;
}

/* Each rank's block or subdomain factored; a numerical failure on any rank is the outcome of all. */
static gs_status setup_pc(gs_dist_job *j)
{
    gs_status st = gs_report_create(&j->att.rep);
    st = gs_dist_agree(j->comm, st == GS_OK ? gs_dist_pc_create(j->be, j->cfg, &j->pc) : st);
    if (st == GS_OK) st = gs_dist_agree(j->comm, gs_dist_pc_setup(j->pc, &j->dist, j->M)); /* collective */
    if (st == GS_ERR_NUMERIC) return gs_dist_agree(j->comm, setup_failed(j));
    GS_CALL(st);
    int var = j->pc->variable, any = 0; /* one verdict for every rank: the Krylov method checks it */
    if (MPI_Allreduce(&var, &any, 1, MPI_INT, MPI_LOR, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on the preconditioner's kind failed");
    j->pc->variable = any;
    GS_CALL(gs_dist_pc_summarize(j->pc, &j->dist));
    double ts[2] = {j->pc->time_symbolic, j->pc->time_numeric}, tm[2];
    if (MPI_Allreduce(ts, tm, 2, MPI_DOUBLE, MPI_MAX, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: reducing the setup times failed");
    j->att.time_setup_symbolic = tm[0]; /* the slowest rank's: the others wait for it */
    j->att.time_setup_numeric = tm[1];
    if (j->rank == 0) gs_pc_view(j->pc, j->att.rep);
    if (gs_error_status() == GS_ERR_MEM) st = GS_ERR_MEM;
    return gs_dist_agree(j->comm, st);
}

/* The preconditioner and the Krylov method over the distributed matrix. */
static gs_status setup_solver(gs_dist_job *j)
{
    GS_CALL(setup_pc(j));
    if (j->att.res.reason != GS_REASON_NONE) return GS_OK; /* the setup failed: its outcome */
    gs_status st = gs_ksp_params_from_config(j->cfg, &j->prm);
    if (st == GS_OK) st = gs_ksp_create(gs_config_string(j->cfg, "solver.type"), j->be, &j->prm, &j->ksp);
    GS_CALL(gs_dist_agree(j->comm, st));
    j->ready = true;
    return GS_OK;
}

gs_status gs_dist_job_setup(gs_dist_job *j, const gs_csr *A)
{
    j->ready = false;
    GS_CALL(resolve(j, A));
    GS_CALL(distribute(j, A, 0, 0, NULL));
    return setup_solver(j);
}

gs_status gs_dist_job_setup_rows(gs_dist_job *j, gs_int n_global, gs_int first_row, gs_csr *mine)
{
    j->ready = false;
    GS_CALL(distribute(j, NULL, n_global, first_row, mine));
    GS_CALL(resolve_rows(j));
    return setup_solver(j);
}

gs_status gs_dist_job_refactor(gs_dist_job *j, const gs_csr *A)
{
    if (!j->ready) return GS_ERROR(GS_ERR_INTERNAL, "new values for a distributed setup that is not complete");
    j->ready = false;
    gs_attempt_free(&j->att); /* the setup's part anew; its report is made again below */
    memset(&j->att, 0, sizeof j->att);
    j->att.res.detail = "";
    j->time_pc_apply = -1.0;
    const double t = gs_wtime();
    GS_CALL(gs_dist_update_values(&j->dist, A));
    gs_mat_destroy(&j->M);
    gs_status st = gs_mpi_mat_create(j->be, &j->dist.local, &j->dist.diag, &j->dist.halo, j->dist.n_global, &j->M);
    if (st == GS_OK) st = gs_report_create(&j->att.rep);
    GS_CALL(gs_dist_agree(j->comm, st));
    j->time_distribute = gs_wtime() - t;
    st = gs_dist_agree(j->comm, gs_dist_pc_refactor(j->pc, &j->dist, j->M)); /* collective */
    if (st == GS_ERR_NUMERIC) return gs_dist_agree(j->comm, setup_failed(j));
    GS_CALL(st);
    GS_CALL(gs_dist_pc_summarize(j->pc, &j->dist));
    double tn = j->pc->time_numeric;
    if (MPI_Allreduce(MPI_IN_PLACE, &tn, 1, MPI_DOUBLE, MPI_MAX, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: reducing the refactorization times failed");
    j->att.time_setup_numeric = tn; /* the symbolic phase is kept: no time of its own */
    if (j->rank == 0) gs_pc_view(j->pc, j->att.rep);
    j->ready = true;
    return gs_dist_agree(j->comm, gs_error_status() == GS_ERR_MEM ? GS_ERR_MEM : GS_OK);
}

/* A failure inside a phase whose ranks exchange as they go (the Krylov solve, a true residual, the timed
 * preconditioner applications): the other ranks may be waiting for this one in a reduction or, over NCCL,
 * on their GPUs, where no agreement can reach them. The rank prints its message and ends every rank
 * with the failure's exit code. */
static void abort_ranks(const gs_dist_job *j, gs_status st)
{
    const int code = gs_exit_code_for_status(st);
    fprintf(stderr, "gpusolve: rank %d: %s (every rank ends: MPI_Abort with exit code %d)\n", j->rank,
            gs_error_message(), code);
    fflush(stderr);
    MPI_Abort(j->comm, code);
    exit(code); /* MPI_Abort does not return */
}

/* The solve's part of the attempt afresh (the setup's part stays). */
static gs_status load_begin(gs_dist_job *j)
{
    gs_attempt *a = &j->att;
    if (!j->ready) return GS_ERROR(GS_ERR_INTERNAL, "a distributed solve without a complete setup");
    memset(&a->res, 0, sizeof a->res);
    a->res.detail = "";
    gs_free(&a->detail);
    a->time_solve = a->time_pc_apply = 0.0;
    a->residual_true = a->residual_true_abs = a->bnorm = a->r0norm_original = a->residual_monitored = NAN;
    a->solved = a->true_missed = false;
    return GS_OK;
}

gs_status gs_dist_job_load_own(gs_dist_job *j, const double *b, const double *x0)
{
    gs_status st = load_begin(j);
    double *zero = NULL;
    if (st == GS_OK) st = gs_vec_upload(j->vb, b);
    if (st == GS_OK && !x0) st = GS_CALLOC(zero, j->dist.halo.n_own + 1);
    if (st == GS_OK) st = gs_vec_upload(j->vx, x0 ? x0 : zero);
    gs_free(&zero);
    GS_CALL(gs_dist_agree(j->comm, st));
    st = gs_vec_nrm2(j->vb, &j->att.bnorm); /* a reduction: a rank that fails in it cannot agree */
    if (st != GS_OK) abort_ranks(j, st);
    return GS_OK;
}

gs_status gs_dist_job_load(gs_dist_job *j, const double *b, const double *x0)
{
    gs_status st = GS_OK;
    double *buf = NULL, *zero = NULL;
    gs_attempt *a = &j->att;
    GS_CALL(load_begin(j));
    st = GS_MALLOC(buf, j->dist.halo.n_own + 1);
    if (st == GS_OK && j->rank == 0 && !x0) st = GS_CALLOC(zero, j->dist.n_global + 1);
    GS_TRY(gs_dist_agree(j->comm, st));
    GS_TRY(gs_dist_scatter(&j->dist, b, buf)); /* agreed */
    st = gs_vec_upload(j->vb, buf);
    GS_TRY(gs_dist_scatter(&j->dist, x0 ? x0 : zero, buf));
    if (st == GS_OK) st = gs_vec_upload(j->vx, buf);
    GS_TRY(gs_dist_agree(j->comm, st));
    st = gs_vec_nrm2(j->vb, &a->bnorm); /* a reduction: a rank that fails in it cannot agree */
    if (st != GS_OK) abort_ranks(j, st);
cleanup:
    gs_free(&buf);
    gs_free(&zero);
    return st;
}

/* The solved attempt's residuals: true ||b - A x||, the monitored one relative to its baseline, and
 * whether a converged solve missed the target in the true residual. */
static gs_status residuals(gs_dist_job *j, double r0)
{
    gs_attempt *a = &j->att;
    const gs_ksp_params *prm = &j->prm;
    GS_CALL(gs_true_residual(j->M, j->vb, j->vx, &a->residual_true_abs));
    a->residual_true = a->bnorm > 0 ? a->residual_true_abs / a->bnorm : a->residual_true_abs;
    double base = prm->baseline == GS_BASELINE_R0 ? a->res.r0norm : a->res.bnorm;
    a->residual_monitored = base > 0 ? a->res.resnorm / base : a->res.resnorm;
    double target = fmax(prm->rtol * (prm->baseline == GS_BASELINE_R0 ? r0 : a->bnorm), prm->atol);
    a->true_missed = gs_reason_converged(a->res.reason) && !(a->residual_true_abs <= 10.0 * target);
    return GS_OK;
}

/* The solve's interrupt, agreed over the ranks (see gs_dist_job_solve): polled once per iteration, at
 * the same iterations on every rank (their norms are the same), so the reduction is collective. */
typedef struct agreed_stop {
    MPI_Comm comm;
    long polls;
    bool stop;
    const atomic_int *request;
} agreed_stop;

static bool agreed_interrupt(const void *ctx)
{
    agreed_stop *a = (agreed_stop *)ctx;
    if (a->stop) return true;
    if (a->polls++ % GS_DIST_INTERRUPT_EVERY != 0) return false;
    int mine = gs_interrupt_signal() != 0 ||
               (a->request && atomic_load_explicit(a->request, memory_order_relaxed) != 0),
        any = 0;
    if (MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, a->comm) != MPI_SUCCESS) return false;
    a->stop = any != 0;
    return a->stop;
}

gs_status gs_dist_job_solve(gs_dist_job *j, gs_ksp_monitor_fn fn, void *ctx, double *x)
{
    gs_status st = GS_OK;
    gs_attempt *a = &j->att;
    double r0 = 0.0, t = 0.0;
    st = gs_true_residual(j->M, j->vb, j->vx, &r0);
    if (st != GS_OK) abort_ranks(j, st);
    a->r0norm_original = r0;
    gs_ksp_set_monitor(j->ksp, fn, ctx);
    gs_backend_mpi_stats_reset(j->be);
    agreed_stop ag = {j->comm, 0, false, j->interrupt_request};
    gs_interrupt_watch_agreed(agreed_interrupt, &ag,
                              j->interrupt_request ? "gpusolve_interrupt" : "a signal to another rank");
    t = gs_wtime();
    st = gs_ksp_solve(j->ksp, j->M, j->pc, j->vb, j->vx, &a->res);
    a->time_solve = gs_wtime() - t;
    gs_interrupt_watch(NULL, NULL, NULL);
    j->interrupted = ag.stop;
    gs_ksp_set_monitor(j->ksp, NULL, NULL);
    if (st != GS_OK) abort_ranks(j, st);
    gs_backend_mpi_stats(j->be, &j->solve_stats); /* the solve's: before the timed applications below */
    a->solved = true;
    if (a->res.detail && a->res.detail[0]) { /* the solver's text copied: the attempt keeps it */
        st = gs_strprintf(&a->detail, "%s", a->res.detail);
        a->res.detail = a->detail ? a->detail : "";
    }
    gs_status rst = residuals(j, r0); /* collective: every rank computes it */
    if (rst != GS_OK) abort_ranks(j, rst);
    if (st == GS_OK && !j->x_own) st = GS_MALLOC(j->x_own, j->dist.halo.n_own + 1);
    if (st == GS_OK) st = gs_vec_download(j->vx, j->x_own);
    st = gs_dist_agree(j->comm, st); /* the application may exchange: every rank makes it or none */
    if (st == GS_OK && a->res.iterations > 0 && j->time_pc_apply < 0) {
        /* into x (kept in buf): rank 0's time, every rank applying */
        st = gs_pc_apply_time(j->pc, j->vb, j->vx, &j->time_pc_apply);
        if (st != GS_OK) abort_ranks(j, st);
    }
    if (a->res.iterations > 0) a->time_pc_apply = j->time_pc_apply;
    int want = x != NULL; /* rank 0's call says whether the solution is gathered */
    if (st == GS_OK && MPI_Bcast(&want, 1, MPI_INT, 0, j->comm) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: broadcasting whether to gather the solution failed");
    if (st == GS_OK && want) st = gs_dist_gather(&j->dist, j->x_own, x);
    return st;
}

gs_status gs_dist_job_error_vs(const gs_dist_job *j, const double *xstar, double *err)
{
    double s[2] = {0.0, 0.0}, t[2];
    const gs_int n = j->dist.halo.n_own;
    if (!j->x_own) return gs_dist_agree(j->comm, GS_ERROR(GS_ERR_INTERNAL, "an error against x* before a solve"));
    for (gs_int i = 0; i < n; i++) {
        const double e = j->x_own[i] - xstar[i];
        s[0] += e * e;
        s[1] += xstar[i] * xstar[i];
    }
    if (MPI_Allreduce(s, t, 2, MPI_DOUBLE, MPI_SUM, j->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: summing the error against x* failed");
    *err = t[1] > 0 ? sqrt(t[0] / t[1]) : sqrt(t[0]);
    return GS_OK;
}

int gs_dist_job_exit_code(const gs_dist_job *j) { return gs_exit_code_for_reason(j->att.res.reason); }

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

enum { PAR_FIELDS = 7, PAR_TIME = 4 };

/* Rank 0: the parallel object from every rank's facts (all: PAR_FIELDS per rank); NULL out of memory. */
static json_t *parallel_json(const gs_dist_job *j, const double *all, bool ras, const gs_mpi_stats *ms)
{
    static const char *names[PAR_FIELDS] = {"rows", "nnz", "halo", "neighbours", "time_comm", "overlap",
                                            "subdomain_nnz"};
    const int nf = ras ? PAR_FIELDS : PAR_FIELDS - 2;
    json_t *obj = json_object();
    for (int f = 0; obj && f < nf; f++) {
        json_t *arr = json_array();
        for (int r = 0; arr && r < j->size; r++) {
            double v = all[(size_t)r * PAR_FIELDS + (size_t)f];
            if (!gs_json_append(arr, f == PAR_TIME ? json_real(v) : json_integer((json_int_t)v))) {
                json_decref(arr);
                arr = NULL;
            }
        }
        if (!arr || json_object_set_new(obj, names[f], arr) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    if (obj) {
        json_object_set_new(obj, "ranks", json_integer(j->size));
        json_object_set_new(obj, "partition", json_string(gs_config_string(j->cfg, "preconditioner.partition")));
        const char *why = NULL;
        json_object_set_new(obj, "transport", json_string(gs_backend_mpi_transport(j->be, &why)));
        json_object_set_new(obj, "transport_note", json_string(why));
        json_object_set_new(obj, "time_distribute", json_real(j->time_distribute));
        json_object_set_new(obj, "reductions", json_integer(ms->reductions));
        json_object_set_new(obj, "halo_exchanges", json_integer(ms->exchanges));
        if (ras) json_object_set_new(obj, "overlap_exchanges", json_integer(ms->pc_exchanges));
    }
    return obj;
}

gs_status gs_dist_job_report_parallel(gs_dist_job *j, gs_report *rep, char *text, size_t len)
{
    gs_status st = GS_OK;
    gs_mpi_stats ms;
    double mine[PAR_FIELDS], *all = NULL;
    json_t *obj = NULL;
    char *js = NULL;
    gs_int ovl = 0, snnz = 0;
    const bool ras = gs_dist_pc_overlap(j->pc, &ovl, &snnz);
    ms = j->solve_stats;
    mine[0] = j->dist.halo.n_own;
    mine[1] = j->dist.local.nnz;
    mine[2] = j->dist.halo.n_halo;
    mine[3] = j->dist.halo.nrecv;
    mine[PAR_TIME] = ms.time_comm;
    mine[5] = ovl;
    mine[6] = snnz;
    if (j->rank == 0) st = GS_MALLOC(all, (size_t)PAR_FIELDS * (size_t)j->size);
    GS_CALL(gs_dist_agree(j->comm, st));
    if (MPI_Gather(mine, PAR_FIELDS, MPI_DOUBLE, all, PAR_FIELDS, MPI_DOUBLE, 0, j->comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: gathering the ranks' facts failed");
    if (j->rank != 0) goto cleanup;
    size_t n = (size_t)snprintf(text, len, "%d MPI ranks", j->size);
    n = append_field(text, len, n, "; rows ", all, j->size, PAR_FIELDS, 0, false);
    n = append_field(text, len, n, ", halo ", all, j->size, PAR_FIELDS, 2, false);
    if (ras) n = append_field(text, len, n, ", overlap ", all, j->size, PAR_FIELDS, 5, false);
    append_field(text, len, n, ", communication [s] ", all, j->size, PAR_FIELDS, PAR_TIME, true);
    obj = parallel_json(j, all, ras, &ms);
    js = obj ? gs_json_text(obj) : NULL;
    if (!js) GS_FAIL(GS_ERR_MEM, "out of host memory writing the parallel facts");
    GS_TRY(gs_report_json(rep, "parallel", js));
cleanup:
    json_decref(obj);
    free(js);
    gs_free(&all);
    return st;
}

gs_status gs_dist_job_result(const gs_dist_job *j, gs_strategy_result *sr)
{
    memset(sr, 0, sizeof *sr);
    sr->automatic = false; /* the MPI rule is not the single-process strategy's */
    sr->nattempts = 1;
    sr->chosen = 0;
    sr->final = j->att;
    sr->cfg = j->cfg;
    return gs_strategy_record(j->cfg, "configuration", &j->att, &sr->rec[0]);
}

gs_status gs_dist_job_report(const gs_dist_job *j, const gs_config *user, const gs_strategy_result *sr,
                             const double *xstar, const double *x, gs_report *rep)
{
    GS_CALL(gs_report_string(rep, "backend.name", j->be->name));
    GS_CALL(gs_report_string(rep, "backend.device", j->be->device_name));
    const bool gpu = gs_backend_mpi_local(j->be)->kind == GS_BACKEND_CUDA;
    GS_CALL(gs_report_string(rep, "where.setup", gs_dist_pc_overlap(j->pc, NULL, NULL)
                                                      ? (gpu ? "every rank its subdomain, on its GPU"
                                                             : "host (every rank its subdomain)")
                                                      : (gpu ? "every rank its block, on its GPU"
                                                             : "host (every rank its block)")));
    GS_CALL(gs_report_string(rep, "where.solve", gpu ? "MPI ranks, a GPU each" : "host (MPI ranks)"));
    if (j->automatic)
        GS_CALL(gs_report_string(rep, "strategy.mpi_rule",
                                 j->spd ? "SPD-looking matrix: cg with ic0 blocks" : "gmres with ilu0 blocks"));
    GS_CALL(gs_run_report_strategy(rep, sr));
    GS_CALL(gs_run_report_outcome(rep, sr, xstar, x, j->dist.n_global));
    GS_CALL(gs_run_report_warnings(rep, user, sr));
    GS_CALL(gs_run_report_memory(rep, j->be));
    return GS_OK;
}

void gs_dist_job_free(gs_dist_job *j)
{
    gs_ksp_destroy(&j->ksp);
    gs_pc_destroy(&j->pc);
    gs_vec_destroy(&j->vb);
    gs_vec_destroy(&j->vx);
    gs_mat_destroy(&j->M);
    gs_backend_destroy(&j->be);
    gs_dist_free(&j->dist);
    gs_free(&j->x_own);
    gs_attempt_free(&j->att);
    gs_config_destroy(&j->cfg);
    memset(j, 0, sizeof *j);
}
