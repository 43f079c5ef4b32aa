/* A rank's subdomain for restricted additive Schwarz across ranks: S = the rank's rows grown by delta
 * layers of neighbours in the graph of A + A^T (diagonal left out), the rows beyond the rank's own (the
 * overlap) fetched from the ranks that own them. This is the set precond/ras.c grows from the same METIS
 * part on one process, and its rows are ordered the same way (by their original index), so the local
 * matrix A(S, S) is entry for entry the block that one process factors. */
#ifndef GS_DIST_SUBDOMAIN_H
#define GS_DIST_SUBDOMAIN_H

#include "dist/dist.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_dist_subdomain {
    int delta;                  /* layers grown */
    gs_int n_own, n_overlap, m; /* m = n_own + n_overlap rows in S */
    gs_int *names;              /* m: the original (0-based) row of each row of S, increasing */
    gs_int *own_pos;            /* n_own: the position in S of owned row i */
    gs_int *ovl_new;            /* n_overlap: the new index of overlap row k, increasing */
    gs_int *ovl_pos;            /* n_overlap: the position in S of overlap row k */
    gs_csr A;                   /* m x m: A(S, S) in S's order, rows sorted */
    gs_halo xchg;               /* overlap row k's entry of a vector = halo entry k, from its owner */
    double time_build;          /* seconds this rank spent building it */
} gs_dist_subdomain;

/* Build this rank's subdomain with delta layers (collective: every rank calls it with the same delta; a
 * failure on any rank is every rank's, as gs_dist_agree makes it). */
gs_status gs_dist_subdomain_create(const gs_dist *d, int delta, gs_dist_subdomain *s);
void gs_dist_subdomain_free(gs_dist_subdomain *s);

#ifdef __cplusplus
}
#endif
#endif
