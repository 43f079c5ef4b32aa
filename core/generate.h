/* Model problems of any size (never committed): 2D 5-point and 3D 7-point Poisson, 3D 27-point
 * Laplacian (diagonal 26, off-diagonals -1), 3D convection-diffusion (nonsymmetric, upwind).
 * Natural (lexicographic, x fastest) ordering, Dirichlet boundaries eliminated, sorted CSR. */
#ifndef GS_GENERATE_H
#define GS_GENERATE_H

#include <stdint.h>

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
/* By name: "poisson2d" "poisson3d" "laplace27" "convdiff3d"; ny/nz default to nx when 0 (poisson2d: nz 1). */
gs_status gs_gen_by_name(const char *name, gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A);

/* A constant-coefficient stencil: weight w at offset (dx, dy, dz), points in increasing (dz, dy, dx). */
typedef struct gs_gen_point {
    int dx, dy, dz;
    double w;
} gs_gen_point;
typedef struct gs_gen_stencil {
    char name[16];
    int npoints;
    gs_gen_point pt[27];
} gs_gen_stencil;
/* The stencil of a generator by name (peclet: convdiff3d's). */
gs_status gs_gen_stencil_of(const char *name, double peclet, gs_gen_stencil *s);
/* The nonzeros of the whole matrix of s on an nx x ny x nz grid (64-bit: it may exceed gs_int). */
int64_t gs_gen_stencil_nnz(const gs_gen_stencil *s, gs_int nx, gs_int ny, gs_int nz);
/* Rows lo..hi-1 of the matrix of s on the grid (nx ny nz <= GS_INT_MAX rows): hi - lo rows of n = nx ny nz
 * columns, in the global numbering, exactly those rows of the whole matrix. Their nonzeros must be within
 * GS_INT_MAX; the whole matrix's need not be -- what one MPI rank of a contiguous split makes. */
gs_status gs_gen_stencil_rows(const gs_gen_stencil *s, gs_int nx, gs_int ny, gs_int nz, gs_int lo, gs_int hi,
                              gs_csr *A);

#ifdef __cplusplus
}
#endif
#endif
