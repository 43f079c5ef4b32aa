/* Host CSR matrices (0-based, 32-bit indices) and the utilities every layer shares. */
#ifndef GS_CSR_H
#define GS_CSR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index type of rows, columns and nonzeros on host and device (cuSPARSE 32-bit indices). */
typedef int32_t gs_int;
#define GS_INT_MAX INT32_MAX

/* CSR: row i holds colind/val[rowptr[i] .. rowptr[i+1]-1]. "sorted" means columns strictly increasing
 * in every row (no duplicates); most routines require it and say so. */
typedef struct gs_csr {
    gs_int nrows, ncols, nnz;
    gs_int *rowptr; /* nrows + 1 */
    gs_int *colind; /* nnz */
    double *val;    /* nnz (may be NULL for a pattern-only matrix) */
} gs_csr;

/* The same layout in the memory of a cuda backend (device pointers): a factor computed on the GPU and
 * handed to a consumer there (precond/factor_cuda.h -> gs_trisolve_analyse_dev) without a round trip
 * through the host. The arrays belong to whoever made them. */
typedef struct gs_csr_dev {
    gs_int nrows, ncols, nnz;
    const gs_int *rowptr; /* nrows + 1 */
    const gs_int *colind; /* nnz */
    const double *val;    /* nnz */
} gs_csr_dev;

/* Allocate an nrows x ncols matrix with room for nnz entries (rowptr zeroed; values allocated when
 * with_values). */
gs_status gs_csr_alloc(gs_csr *A, gs_int nrows, gs_int ncols, gs_int nnz, bool with_values);
/* Free the arrays and zero the struct. Safe on a zeroed struct. */
void gs_csr_free(gs_csr *A);
/* B = A (deep copy). */
gs_status gs_csr_copy(const gs_csr *A, gs_csr *B);

/* Build a sorted CSR from COO triplets (0-based); duplicate entries are summed, explicit zeros kept.
 * val may be NULL (pattern: every entry 1.0). Indices must be in range (checked: GS_ERR_ARG). */
gs_status gs_csr_from_coo(gs_int nrows, gs_int ncols, gs_int nnz, const gs_int *ri, const gs_int *ci,
                          const double *val, gs_csr *A);
/* Sort each row by column and sum duplicates, in place. */
gs_status gs_csr_sort_dedupe(gs_csr *A);
/* true when every row's columns are strictly increasing. */
bool gs_csr_is_sorted(const gs_csr *A);
/* AT = A^T (sorted output). */
gs_status gs_csr_transpose(const gs_csr *A, gs_csr *AT);

/* Split a sorted square matrix into its lower triangle L (j <= i when with_diag, else j < i) and upper
 * triangle U (j >= i when with_diag, else j > i). Either output may be NULL. */
gs_status gs_csr_lower(const gs_csr *A, bool with_diag, gs_csr *L);
gs_status gs_csr_upper(const gs_csr *A, bool with_diag, gs_csr *U);

/* Symmetric permutation B = P A P^T with B(i,j) = A(perm[i], perm[j]), i.e. perm maps new -> old.
 * Output sorted. A's rows must not repeat a column (as after gs_csr_sort_dedupe): rows longer than 64 are
 * sorted by qsort, which keeps no order among equal columns. Rows are filled in parallel (OpenMP). */
gs_status gs_csr_permute(const gs_csr *A, const gs_int *perm, gs_csr *B);
/* Sort every row by column in place (values follow), as gs_csr_permute sorts its output; rows must not
 * repeat a column (no order is kept among equal columns). Rows filled in parallel (OpenMP). */
gs_status gs_csr_sort_rows(gs_csr *A);
/* iperm[perm[i]] = i. */
void gs_perm_invert(gs_int n, const gs_int *perm, gs_int *iperm);
/* Check that perm is a permutation of 0..n-1. */
bool gs_perm_is_valid(gs_int n, const gs_int *perm);

/* Pattern of A + A^T without the diagonal (the graph METIS, RCM and overlap need); values NULL. */
gs_status gs_csr_symmetric_graph(const gs_csr *A, gs_csr *G);
/* Principal submatrix B = A(rows, rows) for a sorted list of distinct rows (0-based); columns outside
 * the list are dropped. Output sorted. */
gs_status gs_csr_submatrix(const gs_csr *A, gs_int k, const gs_int *rows, gs_csr *B);

/* diag[i] = A(i,i) (0 where absent); returns in *missing the number of rows without a stored
 * diagonal entry and in *first_missing the first such row (-1 when none). Either may be NULL. */
void gs_csr_diagonal(const gs_csr *A, double *diag, gs_int *missing, gs_int *first_missing);

/* y = alpha*A*x + beta*y, sequential reference. beta == 0 does not read y. */
void gs_csr_spmv(double alpha, const gs_csr *A, const double *x, double beta, double *y);

/* Level of each row of a triangular matrix: level(i) = 1 + max level of the rows it depends on
 * (lower: j < i; upper: j > i; entries on the wrong side are ignored). Returns the number of levels.
 * level may be NULL. */
gs_int gs_csr_levels(const gs_csr *T, bool lower, gs_int *level);

/* Structural and numerical symmetry (numerical within rel_tol on |a_ij - a_ji| / max(|a_ij|,|a_ji|)). */
gs_status gs_csr_symmetry(const gs_csr *A, double rel_tol, bool *structural, bool *numerical);

/* The pair a symmetry check names in its error message. */
typedef struct gs_csr_asymmetry {
    bool found;      /* some pair fails (below) */
    gs_int i, j;     /* the first failing (i, j) in row order (0-based; i < j for sorted rows); -1 if none */
    double aij, aji; /* its two values, 0 for a missing entry */
} gs_csr_asymmetry;

/* The symmetry check of IC(0) and ParIC for a square matrix: *numerical as gs_csr_symmetry's, and in
 * *first the first (i, j) in row order with |a_ij - a_ji| > rel_tol * max(|a_ij|, |a_ji|) or exactly one
 * of them NaN, a missing entry being 0 (so an explicit zero facing a missing entry passes). Sorted rows:
 * one parallel pass, no transpose; unsorted: through the transpose. Refusing A when !*numerical and
 * first->found (a NaN facing a number in a symmetric pattern passes gs_csr_symmetry, hence the check) is
 * the verdict of the check it replaces. A pattern-only matrix reads as 1.0. A non-square matrix gives
 * *numerical false and nothing found. */
gs_status gs_csr_find_asymmetry(const gs_csr *A, double rel_tol, bool *numerical, gs_csr_asymmetry *first);

#ifdef __cplusplus
}
#endif
#endif
