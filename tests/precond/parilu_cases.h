/* Test matrices shared by the ParILU host and GPU tests. */
#ifndef GS_TEST_PARILU_CASES_H
#define GS_TEST_PARILU_CASES_H

#include <stdbool.h>

#include "core/csr.h"

/* A 2D convection-diffusion matrix (31 x 29 grid, n = 899) with an empty row (0-based 200, its
 * column removed too), a dense row (517: coupled to every column, diagonal 2n) and two rows without
 * their diagonal entry (333, 640): zero diagonals, so ParILU needs zero_pivot = shift on it. */
void parilu_awkward_matrix(gs_csr *A);
/* A 2D Laplacian on nx x ny followed by the singular 2x2 block [[1,1],[1,1]] (rows n-2, n-1): the
 * last pivot is 1 - 1*1 = 0 in any elimination order. */
void parilu_singular_tail(gs_int nx, gs_int ny, gs_csr *A);
/* A 7 x 5 2D Laplacian (rows 1..35, 1-based) followed by a 3x3 block whose ParILU values overflow
 * while every pivot stays usable (unit diagonal: the scaling is the identity there):
 *   in_u = false: [1 1 0; b 1 0; 0 1e300 1], b = 1 - 2^-50: u_37,37 = 1 - b = 2^-50 after sweep 1, so
 *                 l_38,37 = 1e300 / 2^-50 = inf after sweep 2 (L, row 38, column 37);
 *   in_u = true:  [1 0 1e300; 1e10 1 1; 0 0 1]: u_37,38 = 1 - 1e10 * 1e300 = -inf after sweep 1 while L
 *                 stays finite (U, row 37, column 38). */
void parilu_overflow_tail(bool in_u, gs_csr *A);

#endif
