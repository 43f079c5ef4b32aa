/* Block preconditioners over METIS parts: BILU(k), BILUT (non-overlapping blocks) and RAS(delta)
 * (overlapping subdomains, restricted prolongation), and the block-diagonal ILU engine they share:
 * blocks laid out consecutively in one "extended" index space, each factored by ILU(k) or ILUT in
 * parallel, assembled into ONE block-diagonal L and ONE U that are solved as one system (equation (4)
 * of the HEC paper). */
#ifndef GS_BLOCK_H
#define GS_BLOCK_H

#include "precond/factor.h"
#include "precond/precond.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plug-ins "bilu", "bilut" and "ras" (keys preconditioner.blocks, seed, fill_level, drop_tolerance,
 * max_fill, zero_pivot, shift; RAS also overlap and local). */
gs_status gs_pc_create_bilu(gs_pc *pc);
gs_status gs_pc_create_bilut(gs_pc *pc);
gs_status gs_pc_create_ras(gs_pc *pc);

/* ---- the engine shared by bilu.c and ras.c (internal to precond/) ---- */

typedef enum gs_block_local { GS_BLOCK_ILUK = 0, GS_BLOCK_ILUT = 1 } gs_block_local;

/* Block b covers extended unknowns off[b] .. off[b+1]-1, whose global rows rows[off[b]..] are
 * strictly increasing; its matrix is A(S_b, S_b). z = R_s^T U^{-1} L^{-1} R_g r, with R_g the gather
 * by rows and R_s the scatter by `owner` (owner[e] = rows[e] when extended unknown e writes its
 * global row back, -1 when it is an overlap copy that is discarded). */
typedef struct gs_blockdiag {
    gs_block_local local;
    gs_factor_opts opts; /* from the config; row_names set per block */
    const char *name;    /* "BILU", "BILUT", "RAS": used in messages */
    gs_int n;            /* global size */
    gs_int nnz_A;        /* nnz of A at symbolic setup (the pattern the blocks index into) */
    gs_int nblocks;      /* nonempty blocks */
    gs_int next;         /* extended size = sum of the block sizes */
    gs_int *off;         /* nblocks + 1 */
    gs_int *rows;        /* next: global row of each extended unknown */
    gs_int *names;       /* next: its row as messages name it (pc->row_names[rows[e]]); NULL: rows */
    gs_csr *blk;         /* nblocks local matrices A(S_b, S_b), values refreshed by setup_numeric */
    gs_int **src;        /* src[b][e]: index into A->val of entry e of blk[b] */
    gs_csr *Lb, *Ub;     /* per-block factors (ILU(k): patterns from the symbolic phase) */
    gs_int nnz_blocks;   /* sum of nnz(blk[b]) */
    gs_csr L, U;         /* assembled block-diagonal factors over the extended space */
    gs_factor_info info; /* totals over the blocks */
    gs_trisolve *tl, *tu;
    gs_ivec *gather, *scatter; /* scatter == NULL: the gather map is used (no overlap) */
    gs_vector *xe, *ye;  /* extended work vectors */
    double time_extract, time_symbolic, time_factor, time_analyse;
} gs_blockdiag;

/* Read the factor options (fill_level, drop_tolerance, max_fill, zero_pivot, shift) from cfg. */
gs_status gs_blockdiag_init(gs_blockdiag *bd, const gs_config *cfg, gs_block_local local, const char *name);
/* Build the blocks from (nblocks, off, rows, owner) - copied - and, for ILU(k), their symbolic
 * factorizations; create the triangular solvers and work vectors. owner == NULL: no overlap. */
gs_status gs_blockdiag_setup_symbolic(gs_blockdiag *bd, gs_pc *pc, const gs_csr *A, gs_int nblocks,
                                      const gs_int *off, const gs_int *rows, const gs_int *owner);
/* Refresh the block values from A, factor every block in parallel, assemble L and U, analyse. */
gs_status gs_blockdiag_setup_numeric(gs_blockdiag *bd, gs_pc *pc, const gs_csr *A);
gs_status gs_blockdiag_apply(gs_blockdiag *bd, const gs_vector *r, gs_vector *z);
/* Factor sizes, times and the triangular solvers' views; keys "<prefix>.<name>". */
void gs_blockdiag_view(const gs_blockdiag *bd, gs_report *rep, const char *prefix);
/* Free everything but the options (the struct can be set up again). */
void gs_blockdiag_free(gs_blockdiag *bd);

#ifdef __cplusplus
}
#endif
#endif
