/* Plug-ins "ilu0", "iluk", "ilut", "ilutp" and "ic0": an incomplete factorization (precond/factor.h)
 * solved with the configured triangular solvers, z = U^{-1} (L^{-1} r) (ilutp: z = Q U^{-1} L^{-1} r).
 * Keys: preconditioner.fill_level (iluk), drop_tolerance and max_fill (ilut, ilutp), pivot_tolerance
 * (ilutp), milu (all but ic0), zero_pivot, shift and min_pivot (all), factor_on (ilu0, iluk, ic0),
 * trisolve.lower.* / trisolve.upper.*. */
#ifndef GS_ILU_H
#define GS_ILU_H

#include "precond/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ILU(0): the pattern of A (diagonal inserted where A lacks one). */
gs_status gs_pc_create_ilu0(gs_pc *pc);
/* ILU(k): level-of-fill pattern, k = preconditioner.fill_level. */
gs_status gs_pc_create_iluk(gs_pc *pc);
/* ILUT(p, tau): dual threshold, p = preconditioner.max_fill, tau = preconditioner.drop_tolerance. */
gs_status gs_pc_create_ilut(gs_pc *pc);
/* ILUTP(p, tau, perm_tol): ILUT with column threshold pivoting, A Q ~ L U,
 * perm_tol = preconditioner.pivot_tolerance (0: ILUT). */
gs_status gs_pc_create_ilutp(gs_pc *pc);
/* IC(0) of a symmetric matrix, A ~ L L^T (for CG); a nonsymmetric A is GS_ERR_ARG. */
gs_status gs_pc_create_ic0(gs_pc *pc);

#ifdef __cplusplus
}
#endif
#endif
