/* Triangular test factors shared by the trisolve tests: random (empty rows, one dense row), bidiagonal
 * chain, diagonal, identity, mixed wide/thin levels, 3D Poisson triangles and real-matrix triangles,
 * lower and upper, unit and non-unit; all diagonally dominant so substitution is well conditioned. */
#ifndef TRI_CASES_H
#define TRI_CASES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/csr.h"
#include "trisolve/trisolve.h"

typedef struct tri_case {
    char name[80];
    gs_csr T;
    gs_uplo uplo;
    bool unit;
} tri_case;

typedef struct tri_suite {
    tri_case *c;
    int n, cap;
} tri_suite;

/* Relative error bound for the comparisons with the reference: the factors are diagonally dominant
 * (non-unit: |t_ii| >= sum_j |t_ij| + 1; unit: sum_j |t_ij| <= 1/2), so forward and backward
 * substitution are forward stable and results agree to a small multiple of (row length) * eps. */
#define TRI_TOL 1e-12

/* All cases; real matrices from data/matrices when with_real. */
gs_status tri_suite_build(tri_suite *S, bool with_real);
void tri_suite_free(tri_suite *S);

/* Triangle of a square sorted A (side uplo) with a dominant diagonal (non-unit: sum of the row's
 * off-diagonal magnitudes + max(|a_ii|, 1), sign of a_ii) or, for unit, no diagonal and the
 * off-diagonal entries scaled so that each row's magnitudes sum to at most 1/2. */
gs_status tri_from_matrix(const gs_csr *A, gs_uplo uplo, bool unit, gs_csr *T);

/* Random triangle of order n, about per_row off-diagonal entries per row, every 17th row without
 * off-diagonal entries, row n/2 dense (every column on its side). */
gs_status tri_random(gs_int n, int per_row, gs_uplo uplo, bool unit, uint64_t seed, gs_csr *T);

/* b[i] in [-1, 1) from seed */
void tri_rhs(gs_int n, uint64_t seed, double *b);

/* r = ||T x - b||_inf / (||T||_inf ||x||_inf + ||b||_inf) (unit: the implied diagonal included) */
double tri_residual(const gs_csr *T, bool unit, const double *x, const double *b);

#endif
