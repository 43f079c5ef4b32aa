/* Preconditioners across ranks, built from the single-process plug-ins on each rank's local backend:
 *   block Jacobi  M^{-1} = diag(M_0^{-1}, ..., M_{P-1}^{-1}), M_r the plug-in of preconditioner.type on
 *                 rank r's diagonal block A(S_r, S_r); applied without communication;
 *   RAS (delta)   z = sum_r R_r,own^T M_r^{-1} R_r r, S_r = rank r's rows grown by delta layers of graph
 *                 neighbours (dist/subdomain.h), M_r ~ A(S_r, S_r) factored by preconditioner.local;
 *                 the overlap entries of r come from the ranks that own them at every application,
 *                 and only the owned rows of the local solution are kept (no sum over the overlap).
 * With P ranks, RAS is precond/ras.c's with preconditioner.blocks = P: the same parts, subdomains, row
 * order within them and local factors. Messages that name a row name it as the input matrix numbers it. */
#ifndef GS_DIST_PC_DIST_H
#define GS_DIST_PC_DIST_H

#include "cfg/config.h"
#include "core/csr.h"
#include "dist/dist.h"
#include "precond/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether preconditioner `type` runs across ranks; *why (static) when it does not. */
bool gs_dist_pc_supported(const char *type, const char **why);
/* The configuration's preconditioner on P ranks: the same plug-in on every rank's block; bilu/bilut with
 * preconditioner.blocks = B split each rank's block into B / P parts (B a multiple of P); ras has one
 * subdomain per rank (blocks unset or P). GS_ERR_CONFIG / GS_ERR_UNSUPPORTED for what does not
 * distribute. */
gs_status gs_dist_pc_check(const gs_config *cfg, int P);
/* The preconditioner on the distributed backend be (cfg must outlive it). */
gs_status gs_dist_pc_create(gs_backend *be, const gs_config *cfg, gs_pc **pc);
/* Both setup phases on the distribution d (which must outlive the preconditioner). Collective: every
 * rank calls it (RAS fetches its overlap rows here, and a failure there is every rank's); the status of
 * the rank's local factorization is this rank's alone, and the caller agrees on it over the ranks. M: the
 * distributed operator of d (or NULL), whose diagonal block a GPU factorization of block Jacobi reads in
 * place instead of uploading its own copy (which would stay beside the factors while the triangular
 * solvers are analysed). */
gs_status gs_dist_pc_setup(gs_pc *pc, const gs_dist *d, const gs_matrix *M);
/* New values of the matrix of the last setup (dist updated by gs_dist_update_values, the same pattern):
 * each rank's factorization redone numerically on its block, or on its RAS subdomain whose overlap rows
 * are fetched again (collective). The status of the local factorization is this rank's alone, as in
 * gs_dist_pc_setup; M: the operator rebuilt from the new values (or NULL). */
gs_status gs_dist_pc_refactor(gs_pc *pc, const gs_dist *dist, const gs_matrix *M);
/* After a setup that succeeded on every rank (collective): the local factors' entries and shifted pivots
 * summed over the ranks, so that the view (rank 0's) reports nnz_L, nnz_U, fill_ratio (per entry of the
 * whole A), pivots_shifted and shifted_rows for the whole preconditioner, as one process does. */
gs_status gs_dist_pc_summarize(gs_pc *pc, const gs_dist *d);
/* RAS: this rank's overlap rows and the entries of its subdomain matrix A(S, S); false (zeros) for
 * block Jacobi. */
bool gs_dist_pc_overlap(const gs_pc *pc, gs_int *rows, gs_int *nnz);

#ifdef __cplusplus
}
#endif
#endif
