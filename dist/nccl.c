/* The NCCL transport (dist/nccl.h): one NCCL communicator over the ranks of the distributed backend's
 * MPI communicator (rank r of one is rank r of the other), made when every rank runs on a GPU of its own.
 * The halo's messages run on a stream of the transport's, ordered after the local backend's work by an
 * event and waited for by the local stream through another, so the owned columns' product overlaps them;
 * the fused CG's gathers run on the local backend's stream. Every operation is timed by a pair of events,
 * read back lazily (when its slot comes round again, or when the time is asked for). */
#include "dist/nccl.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_cuda.h"
#include "core/mem.h"
#include "dist/dist.h"

#define TIMING_SLOTS 64 /* operations timed in flight: a slot is read back when it comes round again */

struct gs_nccl {
    ncclComm_t comm;
    int rank, size;
    cudaStream_t hstream;    /* the halo's messages */
    cudaEvent_t ready, done; /* local stream -> hstream, hstream -> local stream */
    cudaEvent_t t0[TIMING_SLOTS], t1[TIMING_SLOTS];
    bool pending[TIMING_SLOTS];
    int next;       /* the slot the next operation takes */
    double seconds; /* read back so far */
};

bool gs_nccl_built(void) { return true; }

static gs_status nccl_status(ncclResult_t rc, const char *what)
{
    if (rc == ncclSuccess) return GS_OK;
    return GS_ERROR(GS_ERR_INTERNAL, "NCCL: %s failed: %s", what, ncclGetErrorString(rc));
}
static gs_status cuda_status(cudaError_t rc, const char *what)
{
    if (rc == cudaSuccess) return GS_OK;
    return GS_ERROR(GS_ERR_CUDA, "CUDA: %s failed in the NCCL transport: %s", what, cudaGetErrorString(rc));
}
#define NCCL_CALL(expr) GS_CALL(nccl_status((expr), #expr))
#define CU_CALL(expr) GS_CALL(cuda_status((expr), #expr))

/* The slot's time added to the total once its end has happened (waiting for it). */
static gs_status harvest(gs_nccl *n, int slot)
{
    if (!n->pending[slot]) return GS_OK;
    float ms = 0.0f;
    CU_CALL(cudaEventSynchronize(n->t1[slot]));
    CU_CALL(cudaEventElapsedTime(&ms, n->t0[slot], n->t1[slot]));
    n->seconds += 1e-3 * ms;
    n->pending[slot] = false;
    return GS_OK;
}

static gs_status timed_begin(gs_nccl *n, cudaStream_t s, int *slot)
{
    *slot = n->next;
    n->next = (n->next + 1) % TIMING_SLOTS;
    GS_CALL(harvest(n, *slot));
    CU_CALL(cudaEventRecord(n->t0[*slot], s));
    return GS_OK;
}
static gs_status timed_end(gs_nccl *n, cudaStream_t s, int slot)
{
    CU_CALL(cudaEventRecord(n->t1[slot], s));
    n->pending[slot] = true;
    return GS_OK;
}

gs_status gs_nccl_allgather(void *ctx, const double *send, double *recv, size_t count, void *stream)
{
    gs_nccl *n = ctx;
    cudaStream_t s = (cudaStream_t)stream;
    int slot = 0;
    GS_CALL(timed_begin(n, s, &slot));
    NCCL_CALL(ncclAllGather(send, recv, count, ncclDouble, n->comm, s));
    return timed_end(n, s, slot);
}

gs_status gs_nccl_halo_begin(gs_nccl *n, const gs_halo *h, const double *sendv, double *xh, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    int slot = 0;
    CU_CALL(cudaEventRecord(n->ready, s));
    CU_CALL(cudaStreamWaitEvent(n->hstream, n->ready, 0));
    GS_CALL(timed_begin(n, n->hstream, &slot));
    NCCL_CALL(ncclGroupStart());
    ncclResult_t rc = ncclSuccess;
    for (int k = 0; k < h->nrecv && rc == ncclSuccess; k++)
        rc = ncclRecv(xh + h->recv_off[k], (size_t)(h->recv_off[k + 1] - h->recv_off[k]), ncclDouble,
                      h->recv_rank[k], n->comm, n->hstream);
    for (int k = 0; k < h->nsend && rc == ncclSuccess; k++)
        rc = ncclSend(sendv + h->send_off[k], (size_t)(h->send_off[k + 1] - h->send_off[k]), ncclDouble,
                      h->send_rank[k], n->comm, n->hstream);
    ncclResult_t end = ncclGroupEnd(); /* always closes the group, also after a failed call inside it */
    NCCL_CALL(rc);
    NCCL_CALL(end);
    GS_CALL(timed_end(n, n->hstream, slot));
    CU_CALL(cudaEventRecord(n->done, n->hstream));
    return GS_OK;
}

gs_status gs_nccl_halo_end(gs_nccl *n, void *stream)
{
    CU_CALL(cudaStreamWaitEvent((cudaStream_t)stream, n->done, 0));
    return GS_OK;
}

gs_status gs_nccl_time(gs_nccl *n, double *seconds)
{
    for (int j = 0; j < TIMING_SLOTS; j++) GS_CALL(harvest(n, j));
    *seconds = n->seconds;
    return GS_OK;
}

void gs_nccl_time_reset(gs_nccl *n)
{
    for (int j = 0; j < TIMING_SLOTS; j++)
        if (harvest(n, j) != GS_OK) gs_error_clear();
    n->seconds = 0.0;
}

void gs_nccl_destroy(gs_nccl **np)
{
    gs_nccl *n = *np;
    if (!n) return;
    if (n->hstream) cudaStreamSynchronize(n->hstream);
    if (n->comm) ncclCommDestroy(n->comm);
    for (int j = 0; j < TIMING_SLOTS; j++) {
        if (n->t0[j]) cudaEventDestroy(n->t0[j]);
        if (n->t1[j]) cudaEventDestroy(n->t1[j]);
    }
    if (n->ready) cudaEventDestroy(n->ready);
    if (n->done) cudaEventDestroy(n->done);
    if (n->hstream) cudaStreamDestroy(n->hstream);
    (void)cudaGetLastError();
    gs_free(np);
}

/* Why the ranks cannot use NCCL (into why; false), from every rank's (is a GPU, the GPU's UUID). */
enum { ID_BYTES = 17 }; /* [0]: 1 when the rank runs on a GPU; [1..16]: its UUID */
static bool eligible(const unsigned char *all, int size, char *why, size_t why_len)
{
    for (int r = 0; r < size; r++)
        if (!all[(size_t)r * ID_BYTES]) {
            snprintf(why, why_len, "rank %d runs on the host", r);
            return false;
        }
    for (int r = 0; r < size; r++)
        for (int q = r + 1; q < size; q++)
            if (memcmp(all + (size_t)r * ID_BYTES + 1, all + (size_t)q * ID_BYTES + 1, ID_BYTES - 1) == 0) {
                snprintf(why, why_len, "ranks %d and %d share a GPU (NCCL needs a GPU per rank)", r, q);
                return false;
            }
    return true;
}

/* This rank's part of the eligibility facts. */
static void identify(gs_backend *local, unsigned char id[ID_BYTES])
{
    struct cudaDeviceProp prop;
    memset(id, 0, ID_BYTES);
    if (local->kind != GS_BACKEND_CUDA) return;
    if (cudaGetDeviceProperties(&prop, local->device_id) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    id[0] = 1;
    memcpy(id + 1, prop.uuid.bytes, ID_BYTES - 1);
}

/* NCCL connects ranks lazily, on the first operation of each kind between them: about 0.12 s on two
 * H200, which would land in the first solve. One gather and one message between every pair of ranks, of
 * the sizes the solves use, make every connection now, in the setup. buf: 1 + 2 size doubles. */
static gs_status warm_up(gs_nccl *n, double *buf)
{
    NCCL_CALL(ncclAllGather(buf, buf + 1, 1, ncclDouble, n->comm, n->hstream));
    NCCL_CALL(ncclGroupStart());
    ncclResult_t rc = ncclSuccess;
    for (int r = 0; r < n->size && rc == ncclSuccess; r++)
        if (r != n->rank) {
            rc = ncclRecv(buf + 1 + n->size + r, 1, ncclDouble, r, n->comm, n->hstream);
            if (rc == ncclSuccess) rc = ncclSend(buf, 1, ncclDouble, r, n->comm, n->hstream);
        }
    ncclResult_t end = ncclGroupEnd();
    NCCL_CALL(rc);
    NCCL_CALL(end);
    CU_CALL(cudaStreamSynchronize(n->hstream));
    return GS_OK;
}

/* This rank's streams and events, and the warm-up's buffer (zeroed): nothing collective, so that a rank
 * that fails here fails before any rank enters NCCL. */
static gs_status prepare(gs_nccl *n, gs_backend *local, double **buf)
{
    GS_CALL(gs_backend_cuda_make_current(local));
    CU_CALL(cudaStreamCreateWithFlags(&n->hstream, cudaStreamNonBlocking));
    CU_CALL(cudaEventCreateWithFlags(&n->ready, cudaEventDisableTiming));
    CU_CALL(cudaEventCreateWithFlags(&n->done, cudaEventDisableTiming));
    for (int j = 0; j < TIMING_SLOTS; j++) {
        CU_CALL(cudaEventCreate(&n->t0[j]));
        CU_CALL(cudaEventCreate(&n->t1[j]));
    }
    const size_t count = 1 + 2 * (size_t)n->size;
    CU_CALL(cudaMalloc((void **)buf, count * sizeof(double)));
    CU_CALL(cudaMemsetAsync(*buf, 0, count * sizeof(double), n->hstream));
    return GS_OK;
}

/* Whether every rank's ok is set (false also when the reduction fails). */
static bool all_ranks(MPI_Comm comm, bool ok)
{
    int mine = ok, all = 0;
    return MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all;
}

/* A step of the start on this rank: its status into why when it failed (ok false), cleared. */
static bool step_ok(gs_status st, const char *what, char *why, size_t why_len)
{
    if (st == GS_OK) return true;
    snprintf(why, why_len, "NCCL did not start (%s): %s", what, gs_error_message());
    gs_error_clear();
    return false;
}

gs_status gs_nccl_create(MPI_Comm comm, gs_backend *local, const char *want, gs_nccl **out, char *why,
                         size_t why_len)
{
    gs_status st = GS_OK;
    gs_nccl *n = NULL;
    unsigned char id[ID_BYTES], *all = NULL;
    const bool required = strcmp(want, "nccl") == 0;
    int rank = 0, size = 1;
    *out = NULL;
    if (strcmp(want, "mpi") == 0) {
        snprintf(why, why_len, "device.transport = \"mpi\"");
        return GS_OK;
    }
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: the communicator of the NCCL transport is not valid");
    identify(local, id);
    GS_CALL(gs_dist_agree(comm, GS_MALLOC(all, (size_t)size * ID_BYTES))); /* no rank left in the gather */
    if (MPI_Allgather(id, ID_BYTES, MPI_BYTE, all, ID_BYTES, MPI_BYTE, comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: gathering the ranks' GPUs failed");
    if (!eligible(all, size, why, why_len)) { /* the same answer on every rank */
        if (required)
            GS_FAIL(GS_ERR_UNSUPPORTED, "device.transport = \"nccl\" on %d MPI ranks: %s; use \"auto\" or \"mpi\"",
                    size, why);
        goto cleanup;
    }
    /* NVLink SHARP (multicast objects made when the communicator starts) serves large collectives, which
     * this transport never makes, and can take a shared host's GPUs out of service: always off. */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    /* Three steps, agreed after each, so that no rank enters a collective another one skipped: this
     * rank's resources (and rank 0's identity of the communicator); the communicator; the warm-up. */
    ncclUniqueId uid;
    memset(&uid, 0, sizeof uid);
    double *buf = NULL;
    bool ok = step_ok(GS_CALLOC(n, 1), "memory", why, why_len);
    if (ok) {
        n->rank = rank;
        n->size = size;
        ok = step_ok(prepare(n, local, &buf), "streams and events", why, why_len);
    }
    if (ok && rank == 0)
        ok = step_ok(nccl_status(ncclGetUniqueId(&uid), "ncclGetUniqueId"), "identity", why, why_len);
    if (MPI_Bcast(&uid, (int)sizeof uid, MPI_BYTE, 0, comm) != MPI_SUCCESS)
        ok = step_ok(GS_ERROR(GS_ERR_INTERNAL, "MPI_Bcast failed"), "identity", why, why_len);
    bool all_ok = all_ranks(comm, ok);
    if (all_ok) {
        ok = step_ok(nccl_status(ncclCommInitRank(&n->comm, size, uid, rank), "ncclCommInitRank"), "communicator",
                     why, why_len);
        all_ok = all_ranks(comm, ok);
    }
    if (all_ok) {
        ok = step_ok(warm_up(n, buf), "connections", why, why_len);
        all_ok = all_ranks(comm, ok);
    }
    if (buf) cudaFree(buf);
    if (!all_ok) {
        if (ok) snprintf(why, why_len, "NCCL did not start on another rank");
        gs_nccl_destroy(&n);
        if (required) GS_FAIL(GS_ERR_UNSUPPORTED, "device.transport = \"nccl\" on %d MPI ranks: %s", size, why);
        goto cleanup;
    }
    snprintf(why, why_len, "every rank on a GPU of its own");
    *out = n;
    n = NULL;
cleanup:
    gs_nccl_destroy(&n);
    gs_free(&all);
    return st;
}
