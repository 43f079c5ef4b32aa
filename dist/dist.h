/* A matrix distributed over the ranks of a communicator. Rank 0 holds the whole matrix; its rows are
 * split into P = size parts by the partition that preconditioner.blocks = P uses on one process
 * (gs_partition with the same kind and seed: METIS k-way, or contiguous ranges), part r going to rank r. Rows are numbered part by part
 * ("new" numbering: rank r owns new rows displs[r] .. displs[r+1]-1, in their original order), and each
 * rank numbers its own rows first, then the off-rank columns its rows reference (the halo). Every call
 * here is collective: all ranks make it, and a failure on any rank is a failure on all (gs_dist_agree). */
#ifndef GS_DIST_DIST_H
#define GS_DIST_DIST_H

#include <mpi.h>
#include <stdint.h>

#include "core/csr.h"
#include "precond/ordering.h"
#include "dist/backend_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_dist {
    MPI_Comm comm;      /* borrowed */
    int rank, size;
    gs_int n_global;
    int64_t nnz_global; /* may exceed gs_int when the ranks made their own rows */
    gs_int *displs;     /* size + 1, on every rank */
    gs_int *perm;       /* rank 0: new -> original row (n_global); NULL elsewhere, and NULL on every rank
                         * when the ranks made their own rows (new = original numbering) */
    gs_int *rows;       /* n_own: the original index of each owned row (increasing) */
    gs_csr local;       /* owned rows, n_own x (n_own + n_halo), local columns, sorted */
    gs_csr diag;        /* the diagonal block: owned rows and owned columns, n_own x n_own */
    gs_halo halo;
    gs_int *halo_cols;  /* n_halo: the new index of each halo column (increasing) */
} gs_dist;

/* Every rank's status agreed: GS_OK when all are, else every rank (that one included) returns the status
 * of the lowest failing rank with its message, prefixed "rank R: " when R is not 0, so that every rank
 * holds the same message and rank 0 can print it. A rank that fails must still call it. */
gs_status gs_dist_agree(MPI_Comm comm, gs_status st);

/* Distribute A (rank 0's; square with sorted rows; ignored elsewhere) over comm's ranks, split by kind
 * (preconditioner.partition); seed is METIS's (preconditioner.seed). */
gs_status gs_dist_create(MPI_Comm comm, const gs_csr *A, gs_partition_kind kind, int seed, gs_dist *d);
/* Distribute a matrix whose rows each rank holds itself (generated, read by rows, or given by a program):
 * rank r's `mine` holds rows first_row .. first_row + mine->nrows - 1 of the n_global x n_global matrix
 * (sorted, global columns) and is taken over (left empty). The ranks' rows must follow one another in rank
 * order and cover the matrix (GS_ERR_ARG on every rank otherwise); they are the partition, in the original
 * numbering: no rank ever holds the whole matrix, and its nonzeros may exceed gs_int (each rank's may
 * not). */
gs_status gs_dist_create_rows(MPI_Comm comm, gs_int n_global, gs_int first_row, gs_csr *mine, gs_dist *d);
void gs_dist_free(gs_dist *d);
/* The rank that owns new index c (0 <= c < n_global). */
int gs_dist_owner(const gs_dist *d, gs_int c);
/* A halo plan H over d's ranks for the off-rank new indices cols[0..nh) (increasing): this rank receives
 * them from their owners, and sends the owned entries the other ranks list. st: the caller's status so
 * far, agreed here before any message (a failing rank still calls). */
gs_status gs_dist_halo_create(const gs_dist *d, gs_int nh, const gs_int *cols, gs_status st, gs_halo *H);
/* New values of the matrix d was made from: rank 0's A (ignored elsewhere) with the same pattern; each
 * rank's local rows and diagonal block take them (the partition, numbering and halo stay). GS_ERR_ARG on
 * every rank when A's pattern differs. */
gs_status gs_dist_update_values(gs_dist *d, const gs_csr *A);
/* local = the owned rows of global (rank 0's array of n_global, original numbering). */
gs_status gs_dist_scatter(const gs_dist *d, const double *global, double *local);
/* global (rank 0, original numbering) = every rank's owned rows. */
gs_status gs_dist_gather(const gs_dist *d, const double *local, double *global);

#ifdef __cplusplus
}
#endif
#endif
