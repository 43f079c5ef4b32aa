/* Block Jacobi across ranks: M^{-1} = diag(M_0^{-1}, ..., M_{P-1}^{-1}) with M_r a preconditioner of rank
 * r's diagonal block A(S_r, S_r), built and applied by the single-process code on the rank's host backend
 * with no communication. */
#ifndef GS_DIST_PC_DIST_H
#define GS_DIST_PC_DIST_H

#include "cfg/config.h"
#include "core/csr.h"
#include "precond/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether preconditioner `type` distributes as block Jacobi over ranks; *why (static) when it does not. */
bool gs_dist_pc_supported(const char *type, const char **why);
/* The local method for the configuration's preconditioner.type on P ranks: the same plug-in on every
 * rank's block; bilu/bilut with preconditioner.blocks = B split each rank's block into B / P parts (B a
 * multiple of P). GS_ERR_CONFIG / GS_ERR_UNSUPPORTED for what does not distribute. */
gs_status gs_dist_pc_check(const gs_config *cfg, int P);
/* The preconditioner on the distributed backend be (cfg must outlive it). */
gs_status gs_dist_pc_create(gs_backend *be, const gs_config *cfg, gs_pc **pc);
/* Both setup phases of the rank's local preconditioner on its diagonal block D (n_own x n_own; empty:
 * nothing to build). The status is this rank's alone: the caller agrees on it over the ranks. */
gs_status gs_dist_pc_setup(gs_pc *pc, const gs_csr *D);

#ifdef __cplusplus
}
#endif
#endif
