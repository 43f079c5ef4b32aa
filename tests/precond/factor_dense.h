/* Dense reference factorizations the ILU-family tests compare with (written independently of
 * precond/ilu_factor.c): LU without pivoting, masked ILU on a pattern, ILU(k) levels, ILUT, Cholesky. */
#ifndef GS_TEST_FACTOR_DENSE_H
#define GS_TEST_FACTOR_DENSE_H

#include <stdbool.h>

#include "core/csr.h"

/* a[i*n + j] = A(i,j) (zeros elsewhere); returned array allocated with malloc. */
double *dense_from_csr(const gs_csr *A);
/* In place LU without pivoting: strict lower part = L (unit diagonal), upper = U. */
void dense_lu(int n, double *a);
/* In place Cholesky (lower triangle = L, upper part zeroed); false on a non-positive pivot. */
bool dense_cholesky(int n, double *a);
/* ILU(k) pattern from dense levels (KIJ order): mask[i*n+j] = level <= k (diagonal always). */
void dense_iluk_mask(const gs_csr *A, int k, bool *mask);
/* In place ILU on a mask (KIJ): a_ik /= a_kk, a_ij -= a_ik a_kj only where (i,j) is in the mask;
 * entries outside the mask are zeroed first. */
void dense_ilu_masked(int n, double *a, const bool *mask);
/* Dense ILUT(p, tau) with the rule of precond/ilu_factor.c; a holds A on entry, L\U on exit (zeros
 * where dropped). Returns false on a zero pivot. */
bool dense_ilut(int n, double *a, double tau, int p);
/* 1 when (i,j) is stored in A (sorted). */
bool csr_has(const gs_csr *A, gs_int i, gs_int j);
/* Value of A(i,j) (0 when not stored). */
double csr_get(const gs_csr *A, gs_int i, gs_int j);
/* Max |x| over a dense n x n array. */
double dense_max_abs(int n, const double *a);
/* Tridiagonal matrix with sub/diag/super constants (nonsymmetric when sub != super). */
void make_tridiag(gs_int n, double sub, double diag, double super, gs_csr *A);
/* Symmetric random sparse, strictly diagonally dominant with positive diagonal (SPD). */
void make_random_spd(gs_int n, int per_row, unsigned long long seed, gs_csr *A);

#endif
