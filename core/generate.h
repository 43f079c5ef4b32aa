/* Model problems of any size (never committed): 2D 5-point and 3D 7-point Poisson, 3D 27-point
 * Laplacian (diagonal 26, off-diagonals -1), 3D convection-diffusion (nonsymmetric, upwind).
 * Natural (lexicographic, x fastest) ordering, Dirichlet boundaries eliminated, sorted CSR. */
#ifndef GS_GENERATE_H
#define GS_GENERATE_H

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

gs_status gs_gen_poisson2d(gs_int nx, gs_int ny, gs_csr *A);              /* diag 4, -1 */
gs_status gs_gen_poisson3d(gs_int nx, gs_int ny, gs_int nz, gs_csr *A);   /* diag 6, -1 */
gs_status gs_gen_laplace27(gs_int nx, gs_int ny, gs_int nz, gs_csr *A);   /* diag 26, -1 */
/* -Δu + w·∇u on the unit cube, h = 1/(n+1), wind w = (peclet, peclet/2, peclet/4)*(n+1)... scaled so
 * that `peclet` is the cell Péclet number of the x direction; first-order upwind. */
gs_status gs_gen_convdiff3d(gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A);
/* By name: "poisson2d" "poisson3d" "laplace27" "convdiff3d"; ny/nz default to nx when 0. */
gs_status gs_gen_by_name(const char *name, gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A);

#ifdef __cplusplus
}
#endif
#endif
