/* The NCCL transport of the distributed backend (dist/backend_mpi.c) when every rank runs on a GPU of its
 * own: the halo of y = A x sent and received between the devices on a stream of its own (no host buffer,
 * no host wait), and gathers of the fused CG's partial sums on the local backend's stream. Built with
 * GS_WITH_NCCL (nccl.c); otherwise nccl_none.c stands in and the transport is always MPI. */
#ifndef GS_DIST_NCCL_H
#define GS_DIST_NCCL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/backend.h"
#include "dist/backend_mpi.h"

typedef struct gs_nccl gs_nccl;

/* Whether this build has the NCCL transport. */
bool gs_nccl_built(void);

/* Collective over comm (every rank calls it, with the same want): want "mpi" -> *out = NULL; "auto" -> an
 * NCCL communicator over the ranks when this build has NCCL and every rank's local backend is a GPU not
 * shared with another rank, else NULL with the reason in why; "nccl" -> the same, but GS_ERR_UNSUPPORTED
 * on every rank where it cannot be had. NCCL failing to start is an error for "nccl" and the reason for
 * staying on MPI for "auto". */
gs_status gs_nccl_create(MPI_Comm comm, gs_backend *local, const char *want, gs_nccl **out, char *why,
                         size_t why_len);
void gs_nccl_destroy(gs_nccl **n);

/* recv[r * count ..] = rank r's count doubles of send (device memory), enqueued on stream (the local
 * backend's). Every rank calls it in the same order. Matches gs_cuda_gather_fn (ctx: the gs_nccl). */
gs_status gs_nccl_allgather(void *ctx, const double *send, double *recv, size_t count, void *stream);

/* The halo exchange of h between device vectors: begin, once the owned entries to send are in sendv
 * (enqueued on stream): the messages on the transport's own stream after stream's work so far, xh
 * receiving; end: stream waits for them (no host wait in either). */
gs_status gs_nccl_halo_begin(gs_nccl *n, const gs_halo *h, const double *sendv, double *xh, void *stream);
gs_status gs_nccl_halo_end(gs_nccl *n, void *stream);

/* Seconds the transport's operations took on the devices since the last reset (waits for the ones in
 * flight). */
gs_status gs_nccl_time(gs_nccl *n, double *seconds);
void gs_nccl_time_reset(gs_nccl *n);

#endif
