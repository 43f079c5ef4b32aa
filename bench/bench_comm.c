/* What the distributed solve's synchronization costs on its own: the NCCL transport's operations
 * (dist/nccl.c) and the host's MPI reduction, each without the solve's arithmetic around it, so that the
 * time an iteration of a distributed solve spends beyond its rank's local work can be put down to them.
 * Run by every rank: mpirun -np P bench_comm (each rank on a GPU of its own; P = 1 gives one GPU's floor).
 *
 * Operations (each rank the same; tiny vectors, so that only latency is measured):
 *   kernel        one small kernel of the local backend (gs_vec_scale of 1 entry)
 *   gather K      gs_nccl_allgather of K doubles, the fused CG's reduction (on the local stream)
 *   halo M        gs_nccl_halo_begin + _end with the ranks r - 1 and r + 1, M doubles each way (M = 40000:
 *                 one plane of poisson3d 200^3 cut in slabs)
 *   cg-kernels    10 kernels in the places of a fused CG iteration's with a preconditioner (the entries to
 *                 send gathered, SpMV in its owned and halo parts, p'q, the combine step, update,
 *                 preconditioner, r'z, the combine step, direction), nothing else
 *   cg-iteration  the same with the iteration's transport operations in their places: the halo around
 *                 the owned SpMV, a gather of 1 after p'q and a gather of 2 after r'z
 *   round-trip 2  gather 2, then the host waits for it (cudaStreamSynchronize): a host-driven reduction
 *   MPI 2         MPI_Allgather of 2 doubles between host buffers (the host backend's reduction)
 * For each, `trials` times (after a barrier and a warm-up) a batch of `reps` back-to-back operations
 * between two CUDA events, twice (the median over the trials, the slowest rank's):
 *   as enqueued   the batch starts at once: time per operation when the host enqueues as fast as it can
 *                 (equal to the host's time when the host is the slower side); and the host's time to
 *                 enqueue it
 *   on the device the batch waits behind long kernels (a 5e7-entry scale, repeated for longer than the
 *                 host needs to enqueue the batch), so that it runs from a full queue: the device's time
 *                 per operation, launch gaps and NCCL's own latency included, the host's excluded
 *
 * usage: mpirun -np P bench_comm [--reps N] [--trials T] [--halo M]
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU or a build without NCCL. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/mem.h"
#include "dist/backend_mpi.h"
#include "dist/nccl.h"

#include "bench_util.h"

#define BUSY_N 50000000

typedef struct {
    gs_backend *be;
    gs_nccl *nccl;
    void *stream;
    gs_vector *v;      /* 1 entry: the kernels' operand */
    gs_vector *parts;  /* 2 entries: the gathered parts */
    gs_vector *all;    /* 2 P entries */
    gs_vector *sendv;  /* 2 M: the halo's outgoing entries */
    gs_vector *xh;     /* 2 M: the halo's incoming entries */
    gs_vector *busy;   /* BUSY_N entries: the long kernels a batch waits behind */
    double busy_us;    /* one scale of busy */
    gs_halo h;
    int k;             /* doubles per gather */
    double host[2], hostall[2 * 1024];
    MPI_Comm comm;
    int size;
} comm_ctx;

static gs_status op_kernel(void *p) { return gs_vec_scale(((comm_ctx *)p)->v, 1.0); }

static gs_status op_gather(void *p)
{
    comm_ctx *c = p;
    return gs_nccl_allgather(c->nccl, c->parts->data, c->all->data, (size_t)c->k, c->stream);
}

static gs_status op_halo(void *p)
{
    comm_ctx *c = p;
    if (c->h.nrecv + c->h.nsend == 0) return GS_OK;
    GS_CALL(gs_nccl_halo_begin(c->nccl, &c->h, c->sendv->data, c->xh->data, c->stream));
    return gs_nccl_halo_end(c->nccl, c->stream);
}

/* One fused CG iteration's launches; with_comm: its transport operations too. */
static gs_status cg_iteration(comm_ctx *c, bool with_comm)
{
    const bool halo = with_comm && c->h.nrecv + c->h.nsend > 0;
    GS_CALL(op_kernel(c)); /* the entries to send gathered */
    if (halo) GS_CALL(gs_nccl_halo_begin(c->nccl, &c->h, c->sendv->data, c->xh->data, c->stream));
    GS_CALL(op_kernel(c)); /* owned SpMV */
    if (halo) GS_CALL(gs_nccl_halo_end(c->nccl, c->stream));
    GS_CALL(op_kernel(c)); /* halo SpMV */
    GS_CALL(op_kernel(c)); /* p'q */
    if (with_comm) GS_CALL(gs_nccl_allgather(c->nccl, c->parts->data, c->all->data, 1, c->stream));
    GS_CALL(op_kernel(c)); /* combine: alpha */
    GS_CALL(op_kernel(c)); /* x, r update with r'r */
    GS_CALL(op_kernel(c)); /* preconditioner */
    GS_CALL(op_kernel(c)); /* r'z */
    if (with_comm) GS_CALL(gs_nccl_allgather(c->nccl, c->parts->data, c->all->data, 2, c->stream));
    GS_CALL(op_kernel(c)); /* combine: convergence test, beta */
    return op_kernel(c);   /* direction */
}
static gs_status op_cg_kernels(void *p) { return cg_iteration(p, false); }
static gs_status op_cg_iteration(void *p) { return cg_iteration(p, true); }

static gs_status op_round_trip(void *p)
{
    comm_ctx *c = p;
    c->k = 2;
    GS_CALL(op_gather(c));
    return gs_backend_synchronize(c->be);
}

static gs_status op_mpi(void *p)
{
    comm_ctx *c = p;
    if (MPI_Allgather(c->host, 2, MPI_DOUBLE, c->hostall, 2, MPI_DOUBLE, c->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI_Allgather failed");
    return GS_OK;
}

/* trials batches of reps operations (queued: behind busy kernels for longer than the host needs to
 * enqueue them): the medians of device and host microseconds per operation, the slowest rank's. host_us
 * in: the host's time per operation (queued) or unused. */
static gs_status measure(comm_ctx *c, bench_op_fn op, int reps, int trials, bool queued, double *dev_us,
                         double *host_us)
{
    gs_status st = GS_OK;
    gs_timer tm;
    memset(&tm, 0, sizeof tm);
    double *td = NULL, *th = NULL;
    int nbusy = 0;
    if (queued) nbusy = 1 + (int)(1.5 * reps * *host_us / c->busy_us);
    GS_TRY(GS_MALLOC(td, (size_t)trials));
    GS_TRY(GS_MALLOC(th, (size_t)trials));
    for (int w = 0; w < 3; w++) GS_TRY(op(c));
    GS_TRY(gs_backend_synchronize(c->be));
    for (int t = 0; t < trials; t++) {
        if (MPI_Barrier(c->comm) != MPI_SUCCESS) GS_FAIL(GS_ERR_INTERNAL, "MPI_Barrier failed");
        double secs = 0.0;
        for (int b = 0; b < nbusy; b++) GS_TRY(gs_vec_scale(c->busy, 1.0));
        GS_TRY(gs_timer_start(c->be, &tm));
        const double h0 = gs_wtime();
        for (int r = 0; r < reps; r++) GS_TRY(op(c));
        th[t] = 1e6 * (gs_wtime() - h0) / reps;
        GS_TRY(gs_timer_stop(&tm, &secs));
        td[t] = 1e6 * secs / reps;
    }
    double mine[2] = {bench_median(td, trials), bench_median(th, trials)}, worst[2] = {0.0, 0.0};
    if (MPI_Allreduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, c->comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI_Allreduce failed");
    *dev_us = worst[0];
    if (!queued) *host_us = worst[1];
cleanup:
    gs_timer_destroy(&tm);
    gs_free(&td);
    gs_free(&th);
    return st;
}

/* The halo of a slab: M doubles to and from each of the ranks r - 1 and r + 1 that exist. */
static gs_status make_halo(comm_ctx *c, int rank, gs_int m)
{
    gs_halo *h = &c->h;
    memset(h, 0, sizeof *h);
    int nb[2], k = 0;
    if (rank > 0) nb[k++] = rank - 1;
    if (rank + 1 < c->size) nb[k++] = rank + 1;
    h->n_own = m;
    h->n_halo = (gs_int)k * m;
    h->nrecv = h->nsend = k;
    GS_CALL(GS_MALLOC(h->recv_rank, 3));
    GS_CALL(GS_MALLOC(h->send_rank, 3));
    GS_CALL(GS_MALLOC(h->recv_off, 3));
    GS_CALL(GS_MALLOC(h->send_off, 3));
    GS_CALL(GS_MALLOC(h->send_idx, (size_t)k * (size_t)m + 1));
    h->recv_off[0] = h->send_off[0] = 0;
    for (int j = 0; j < k; j++) {
        h->recv_rank[j] = h->send_rank[j] = nb[j];
        h->recv_off[j + 1] = h->send_off[j + 1] = (gs_int)(j + 1) * m;
    }
    for (gs_int i = 0; i < (gs_int)k * m; i++) h->send_idx[i] = i % m;
    return GS_OK;
}

static int run(int rank, int reps, int trials, gs_int m)
{
    gs_status st = GS_OK;
    comm_ctx c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD;
    MPI_Comm_size(c.comm, &c.size);
    char why[160] = "";
    int count = gs_backend_cuda_device_count();
    GS_TRY(gs_backend_create("cuda", count > 0 ? rank % count : 0, &c.be));
    GS_TRY(gs_nccl_create(c.comm, c.be, "nccl", &c.nccl, why, sizeof why));
    c.stream = gs_backend_cuda_stream(c.be);
    GS_TRY(gs_vec_create(c.be, 1, &c.v));
    GS_TRY(gs_vec_create(c.be, 2, &c.parts));
    GS_TRY(gs_vec_create(c.be, 2 * (gs_int)c.size, &c.all));
    GS_TRY(gs_vec_create(c.be, 2 * m, &c.sendv));
    GS_TRY(gs_vec_create(c.be, 2 * m, &c.xh));
    GS_TRY(gs_vec_set(c.v, 1.0));
    GS_TRY(gs_vec_set(c.parts, 1.0));
    GS_TRY(gs_vec_set(c.sendv, 1.0));
    GS_TRY(gs_vec_create(c.be, BUSY_N, &c.busy));
    GS_TRY(gs_vec_set(c.busy, 1.0));
    GS_TRY(make_halo(&c, rank, m));
    { /* one busy kernel's time: the median of 5 */
        gs_timer tm;
        memset(&tm, 0, sizeof tm);
        double t[5];
        for (int j = 0; j < 5 && st == GS_OK; j++) {
            st = gs_timer_start(c.be, &tm);
            if (st == GS_OK) st = gs_vec_scale(c.busy, 1.0);
            if (st == GS_OK) st = gs_timer_stop(&tm, &t[j]);
        }
        gs_timer_destroy(&tm);
        GS_TRY(st);
        c.busy_us = 1e6 * bench_median(t, 5);
    }
    if (rank == 0)
        printf("# bench_comm: %d ranks, %s (rank 0), %d operations per batch, median of %d batches, the slowest "
               "rank\n# %-16s %14s %14s %14s\n",
               c.size, c.be->device_name, reps, trials, "operation", "as enqueued", "host enqueue", "on the device");
    struct {
        const char *name;
        bench_op_fn op;
        int k;
    } ops[] = {{"kernel", op_kernel, 0},
               {"gather 1", op_gather, 1},
               {"gather 2", op_gather, 2},
               {"halo", op_halo, 0},
               {"cg-kernels", op_cg_kernels, 0},
               {"cg-iteration", op_cg_iteration, 0},
               {"round-trip 2", op_round_trip, 2},
               {"MPI 2", op_mpi, 0}};
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++) {
        double enq = 0.0, host = 0.0, dev = 0.0;
        c.k = ops[j].k;
        GS_TRY(measure(&c, ops[j].op, reps, trials, false, &enq, &host));
        GS_TRY(measure(&c, ops[j].op, reps, trials, ops[j].op != op_round_trip && ops[j].op != op_mpi, &dev, &host));
        char name[64];
        if (ops[j].op == op_halo)
            snprintf(name, sizeof name, "halo %lld", (long long)m);
        else
            snprintf(name, sizeof name, "%s", ops[j].name);
        if (rank == 0) printf("  %-16s %14.2f %14.2f %14.2f\n", name, enq, host, dev);
    }
cleanup:
    if (st != GS_OK) fprintf(stderr, "bench_comm: rank %d: %s\n", rank, gs_error_message());
    gs_halo_free(&c.h);
    gs_vec_destroy(&c.v);
    gs_vec_destroy(&c.parts);
    gs_vec_destroy(&c.all);
    gs_vec_destroy(&c.sendv);
    gs_vec_destroy(&c.xh);
    gs_vec_destroy(&c.busy);
    gs_nccl_destroy(&c.nccl);
    gs_backend_destroy(&c.be);
    return st == GS_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    long reps = 200, trials = 11, m = 40000;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1, rc = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc && rc == 0; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            rc = bench_parse_int("bench_comm", argv[++i], "--reps", 1, 1000000, &reps) ? 2 : 0;
        else if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc)
            rc = bench_parse_int("bench_comm", argv[++i], "--trials", 1, 1000, &trials) ? 2 : 0;
        else if (strcmp(argv[i], "--halo") == 0 && i + 1 < argc)
            rc = bench_parse_int("bench_comm", argv[++i], "--halo", 1, 100000000, &m) ? 2 : 0;
        else {
            if (rank == 0) fprintf(stderr, "usage: mpirun -np P bench_comm [--reps N] [--trials T] [--halo M]\n");
            rc = 2;
        }
    }
    if (rc == 0 && size > 1024) rc = 2;
    if (rc == 0 && (!gs_nccl_built() || bench_require_gpu("bench_comm") != 0)) {
        if (rank == 0 && !gs_nccl_built()) fprintf(stderr, "bench_comm: this build has no NCCL transport\n");
        rc = 77;
    }
    if (rc == 0) rc = run(rank, (int)reps, (int)trials, (gs_int)m);
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
