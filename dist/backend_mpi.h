/* The distributed backend: a local backend's (host or cuda: one GPU per rank) vectors and kernels on the
 * rows a rank owns, with every reduction (dot, dot2, nrm2, mdot, mdot2, the fused CG scalars) summed over
 * the ranks of a communicator in rank order, and SpMV on operators that carry a halo plan (the off-rank
 * entries of x they read, exchanged while the owned columns are multiplied: by point-to-point messages
 * through host buffers, or between the devices by NCCL). solver/ runs on it unchanged. */
#ifndef GS_DIST_BACKEND_MPI_H
#define GS_DIST_BACKEND_MPI_H

#include <mpi.h>

#include "core/backend.h"
#include "core/csr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which entries of x a rank exchanges in y = A x. Local numbering: the rank's owned rows are 0..n_own-1,
 * the off-rank columns its rows reference (the halo) n_own..n_own+n_halo-1, grouped by owner rank in
 * increasing order. Halo entries [recv_off[k], recv_off[k+1]) come from rank recv_rank[k]; the owned
 * entries send_idx[send_off[k] .. send_off[k+1]) go to rank send_rank[k]. */
typedef struct gs_halo {
    gs_int n_own, n_halo;
    int nrecv, nsend;
    int *recv_rank, *send_rank;
    gs_int *recv_off, *send_off; /* nrecv + 1, nsend + 1 */
    gs_int *send_idx;            /* send_off[nsend] owned indices */
} gs_halo;

void gs_halo_free(gs_halo *h);
gs_status gs_halo_copy(const gs_halo *src, gs_halo *dst);

/* Communication facts of a backend since its creation (or the last reset). */
typedef struct gs_mpi_stats {
    double time_comm;       /* seconds inside MPI calls (reductions, the halo wait) and, over NCCL, of the
                               transport's operations on the device */
    long long reductions;   /* collective reductions made */
    long long exchanges;    /* halo exchanges made (one per SpMV with a halo) */
    long long pc_exchanges; /* exchanges made for preconditioners (gs_backend_mpi_exchange) */
} gs_mpi_stats;

/* A backend over comm (duplicated: the backend's messages never meet the caller's) on the local backend
 * `local` (host or cuda), which it takes (destroyed with it, or at once when the creation fails). */
gs_status gs_backend_mpi_create_on(MPI_Comm comm, gs_backend *local, gs_backend **be);
/* The same on a new host backend. */
gs_status gs_backend_mpi_create(MPI_Comm comm, gs_backend **be);
bool gs_backend_is_mpi(const gs_backend *be);
/* How the ranks exchange, collective (every rank with the same want): "mpi" (the default of a new backend:
 * point-to-point messages and reductions through host buffers), "nccl" (the halo between the devices and the
 * fused CG's reductions gathered on them, NCCL; GS_ERR_UNSUPPORTED on every rank unless each runs on a GPU of
 * its own in a build with NCCL), or "auto" (nccl where it can be had, else mpi). Reductions whose value the
 * host takes (dot, nrm2, GMRES's products) stay on MPI either way: the host waits for them regardless, and a
 * gather of a few doubles through shared memory costs less than NCCL's. Set it before operators and CG
 * states are made. */
gs_status gs_backend_mpi_set_transport(gs_backend *be, const char *want);
/* "nccl" or "mpi", and why (a short phrase). */
const char *gs_backend_mpi_transport(const gs_backend *be, const char **why);
/* The rank and size of the backend's communicator. */
void gs_backend_mpi_rank(const gs_backend *be, int *rank, int *size);
/* The local backend the kernels run on: a preconditioner built for one rank's rows lives there and
 * applies to views of the distributed vectors (same memory). */
gs_backend *gs_backend_mpi_local(gs_backend *be);
void gs_backend_mpi_stats(const gs_backend *be, gs_mpi_stats *s);
void gs_backend_mpi_stats_reset(gs_backend *be);

/* The rank's part of a distributed operator: A holds the owned rows, n_own x (n_own + n_halo), with
 * columns in the halo's local numbering (sorted in every row); own, when not NULL, is A's owned columns
 * already split off (the diagonal block, n_own x n_own: what the operator would copy out of A); halo is
 * copied. M->nrows = M->ncols = n_own, so vectors of owned rows fit it; M->rows_global = n_global, the
 * whole operator's order (what a method sized by the order, GMRES's cycle, takes on every rank alike). */
gs_status gs_mpi_mat_create(gs_backend *be, const gs_csr *A, const gs_csr *own, const gs_halo *halo, gs_int n_global,
                            gs_matrix **M);
/* A_own of a distributed operator made by gs_mpi_mat_create (the owned columns of the owned rows: the
 * diagonal block, on the local backend), or NULL when M is not one. */
const gs_matrix *gs_mpi_mat_own(const gs_matrix *M);

/* out[0..n_halo) = the halo entries of h, from the owners' x (x: this rank's owned entries, in host
 * memory, sent where h says). Every rank that h's plans link must call it, in the same order as its other
 * exchanges. sendbuf (send_off[nsend] doubles) and req (nrecv + nsend requests) are the caller's work
 * space. Counted in the stats as a preconditioner exchange. */
gs_status gs_backend_mpi_exchange(gs_backend *be, const gs_halo *h, const double *x, double *out, double *sendbuf,
                                  MPI_Request *req);

/* Over NCCL (gs_backend_mpi_transport "nccl"): the exchange of h between device vectors of the local
 * backend, out (h->n_halo entries) from the owners' sendv (h->send_off[nsend] entries each rank gathered
 * for its partners); enqueued on the local backend's stream, no host wait. Same calling rules as
 * gs_backend_mpi_exchange. GS_ERR_ARG over MPI. */
gs_status gs_backend_mpi_exchange_device(gs_backend *be, const gs_halo *h, const gs_vector *sendv, gs_vector *out);

/* v as a vector of the local backend (no copy: the same memory), for the local kernels. */
gs_vector gs_backend_mpi_local_view(const gs_vector *v);

#ifdef __cplusplus
}
#endif
#endif
