/* Host incomplete factorizations shared by the ILU-family preconditioners (ILU(k), ILUT, IC(0)) and
 * by the block/Schwarz ones that factor each block with them. All inputs/outputs sorted CSR.
 * Factors: L unit lower triangular stored WITHOUT its diagonal (strict lower part), U upper triangular
 * WITH its diagonal; IC(0): A ~ L L^T with L lower WITH its diagonal (U = L^T returned too). */
#ifndef GS_FACTOR_H
#define GS_FACTOR_H

#include <stdbool.h>

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_zero_pivot { GS_ZERO_PIVOT_ERROR = 0, GS_ZERO_PIVOT_SHIFT = 1 } gs_zero_pivot;

typedef struct gs_factor_opts {
    gs_zero_pivot zero_pivot;
    double shift;        /* shift policy: |pivot| < tiny -> sign * shift * ||row of A||_inf */
    int fill_level;      /* ILU(k) */
    double drop_tol;     /* ILUT tau */
    int max_fill;        /* ILUT p */
    gs_int row_offset;   /* added to row numbers in messages (block factorizations) */
    const gs_int *row_names; /* if non-NULL, message row i is reported as row_names[i] (0-based) */
} gs_factor_opts;

typedef struct gs_factor_info {
    gs_int nshifted;       /* pivots shifted (shift policy) */
    gs_int first_shifted;  /* first such row (as reported), -1 when none */
    gs_int shifted_rows[16]; /* up to 16 shifted rows, for the report */
    gs_int nnz_L, nnz_U;
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
/* IC(0) of a symmetric matrix (lower triangle of A used): L lower with diagonal, LT = L^T.
 * Non-positive pivot: GS_ERR_NUMERIC naming the row, or shifted per opts. */
gs_status gs_ic0(const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *LT, gs_factor_info *info);

#ifdef __cplusplus
}
#endif
#endif
