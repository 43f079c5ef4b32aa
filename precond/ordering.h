/* Orderings and partitions: RCM, METIS nested dissection and k-way parts of the symmetrized graph,
 * overlap growth. */
#ifndef GS_ORDERING_H
#define GS_ORDERING_H

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reverse Cuthill-McKee of the graph of A + A^T; perm maps new -> old (B = A(perm, perm)).
 * Deterministic (pseudo-peripheral start node per component, ties by degree then index). */
gs_status gs_rcm(const gs_csr *A, gs_int *perm);
/* Nested dissection (METIS_NodeND) of the graph of A + A^T without the diagonal; perm maps new -> old
 * (B = A(perm, perm)), as gs_rcm's. Deterministic (fixed METIS seed). n <= 1 and graphs without edges
 * give the identity. */
gs_status gs_nd(const gs_csr *A, gs_int *perm);
/* METIS k-way partition of the symmetrized graph of A: part[i] in [0, nparts). nparts == 1 or
 * nparts >= n handled without METIS. Deterministic for a given seed. */
gs_status gs_partition_kway(const gs_csr *A, gs_int nparts, int seed, gs_int *part);
/* How BILU/BILUT/RAS blocks and MPI ranks split the rows (preconditioner.partition). */
typedef enum gs_partition_kind { GS_PARTITION_METIS = 0, GS_PARTITION_CONTIGUOUS = 1 } gs_partition_kind;
/* "metis" or "contiguous" (anything else: METIS). */
gs_partition_kind gs_partition_kind_of(const char *name);
const char *gs_partition_kind_name(gs_partition_kind k);
/* part[i] in [0, nparts): METIS k-way (gs_partition_kway, with seed), or contiguous: row i in part
 * floor(i nparts / n), so consecutive ranges whose sizes differ by at most one (no partitioning work; parts
 * past n rows stay empty when nparts > n). */
gs_status gs_partition(const gs_csr *A, gs_int nparts, gs_partition_kind kind, int seed, gs_int *part);
/* The first row of part r of n rows split contiguously into nparts (0 <= r <= nparts; r = nparts: n):
 * part r holds rows gs_partition_contiguous_start(n, nparts, r) .. (.., r + 1) - 1, as gs_partition. */
gs_int gs_partition_contiguous_start(gs_int n, gs_int nparts, gs_int r);
/* Grow a vertex set by `layers` layers of neighbours in graph G (symmetric pattern). in: k sorted
 * vertices; out: sorted extended set, *out allocated with gs_malloc, *kout its size. */
gs_status gs_grow_overlap(const gs_csr *G, gs_int k, const gs_int *in, int layers, gs_int **out, gs_int *kout);

#ifdef __cplusplus
}
#endif
#endif
