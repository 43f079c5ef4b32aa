/* Host incomplete factorizations shared by the ILU-family preconditioners (ILU(k), ILUT, ILUTP, IC(0))
 * and by the block/Schwarz ones that factor each block with them. All inputs/outputs sorted CSR.
 * Factors: L unit lower triangular stored WITHOUT its diagonal (strict lower part), U upper triangular
 * WITH its diagonal; IC(0): A ~ L L^T with L lower WITH its diagonal (U = L^T returned too); ILUTP:
 * A Q ~ L U with Q a column permutation.
 *
 * Pivot policies (zero_pivot): error, shift (precond/ilu_factor.c), and grow: factor A; when a pivot
 * fails |u_ii| >= max(DBL_MIN, min_pivot * s_i) (s_i = ||a_i||_inf, 1 for a zero row; IC(0): the pivot
 * a_ii - sum l_ik^2 > 0 and >= min_pivot * s_i) or a factor value is not finite, factor
 * A + alpha diag(s) again with alpha = shift, 10 shift, ... (GS_FACTOR_GROW_MAX refactorizations at
 * most), the drop thresholds staying those of A; info reports the alpha accepted and the count. */
#ifndef GS_FACTOR_H
#define GS_FACTOR_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_zero_pivot { GS_ZERO_PIVOT_ERROR = 0, GS_ZERO_PIVOT_SHIFT = 1, GS_ZERO_PIVOT_GROW = 2 } gs_zero_pivot;

/* zero_pivot = grow: refactorizations tried at most (alpha = shift ... shift * 10^(GROW_MAX - 1)). */
#define GS_FACTOR_GROW_MAX 10

typedef struct gs_factor_opts {
    gs_zero_pivot zero_pivot;
    double shift;        /* shift policy: |pivot| < tiny -> sign * shift * ||row of A||_inf;
                          * grow policy: the first alpha */
    int fill_level;      /* ILU(k) */
    double drop_tol;     /* ILUT tau */
    int max_fill;        /* ILUT p */
    gs_int row_offset;   /* added to row numbers in messages (block factorizations) */
    const gs_int *row_names; /* if non-NULL, message row i is reported as row_names[i] (0-based) */
    double perm_tol;     /* ILUTP: exchange columns i and j when perm_tol * |w_j| > |w_i| (0: ILUT) */
    bool milu;           /* modified ILU (ILU numeric, ILUT, ILUTP): each row's dropped part is summed
                          * into its pivot, so that (L U) 1 = A 1 (docs/algorithms.md, "MILU") */
    double min_pivot;    /* grow policy: smallest accepted |u_ii| / s_i */
} gs_factor_opts;

/* The options every factorization reads from preconditioner.{zero_pivot, shift, min_pivot,
 * pivot_tolerance, milu, fill_level, drop_tolerance, max_fill} (row_offset 0, row_names NULL); a caller
 * keeps only what its method uses. */
gs_status gs_factor_opts_from_config(const gs_config *cfg, gs_factor_opts *o);

typedef struct gs_factor_info {
    gs_int nshifted;       /* pivots shifted (shift policy) */
    gs_int first_shifted;  /* first such row (as reported), -1 when none */
    gs_int shifted_rows[16]; /* up to 16 shifted rows, for the report */
    gs_int nnz_L, nnz_U;
    gs_int columns_exchanged; /* ILUTP: column exchanges made */
    double shift_used;        /* grow policy: alpha of the accepted factorization (0 when none) */
    int refactorizations;     /* grow policy: factorizations after the first */
} gs_factor_info;

/* Symbolic ILU(k): the pattern of L (strict lower) and U (upper with diagonal), values NULL.
 * Missing diagonal entries of A are part of the pattern (structurally inserted). */
/* The input check every factorization starts with: A square, arrays present, columns of each row
 * sorted, without duplicates and in range; the first faulty row named (1-based), `who` first. */
gs_status gs_factor_check_input(const gs_csr *A, const char *who);

gs_status gs_iluk_symbolic(const gs_csr *A, int k, gs_csr *L, gs_csr *U);
/* Numeric ILU on the given patterns (from gs_iluk_symbolic): fills L->val and U->val.
 * Zero pivot: GS_ERR_NUMERIC "zero pivot at row i (1-based)" or shifted per opts. */
gs_status gs_ilu_numeric(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info);
/* ILUT(p, tau): dual threshold (see docs/algorithms.md for the exact rule). */
gs_status gs_ilut(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info);
/* ILUTP(p, tau, perm_tol): ILUT with column threshold pivoting (the rule in precond/ilutp.c and
 * docs/algorithms.md). A Q ~ L U: colperm[k] is the column of A that is column k of A Q (caller
 * allocates n entries), so A x = b is solved by y = U^{-1} L^{-1} b, x[colperm[k]] = y[k]; L and U
 * are in the permuted column numbering (U's diagonal first in each row, sorted). perm_tol = 0 gives
 * gs_ilut's factors exactly and the identity permutation. */
gs_status gs_ilutp(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_int *colperm,
                   gs_factor_info *info);
/* IC(0) of a symmetric matrix (lower triangle of A used): L lower with diagonal, LT = L^T.
 * Non-positive pivot: GS_ERR_NUMERIC naming the row, or shifted per opts. */
gs_status gs_ic0(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *LT, gs_factor_info *info);

#ifdef __cplusplus
}
#endif
#endif
