/* Test matrices shared by the ParILU host and GPU tests. */
#ifndef GS_TEST_PARILU_CASES_H
#define GS_TEST_PARILU_CASES_H

#include "core/csr.h"

/* A 2D convection-diffusion matrix (31 x 29 grid, n = 899) with an empty row (0-based 200, its
 * column removed too), a dense row (517: coupled to every column, diagonal 2n) and two rows without
 * their diagonal entry (333, 640): zero diagonals, so ParILU needs zero_pivot = shift on it. */
void parilu_awkward_matrix(gs_csr *A);
/* A 2D Laplacian on nx x ny followed by the singular 2x2 block [[1,1],[1,1]] (rows n-2, n-1): the
 * last pivot is 1 - 1*1 = 0 in any elimination order. */
void parilu_singular_tail(gs_int nx, gs_int ny, gs_csr *A);

#endif
