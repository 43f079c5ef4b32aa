/* Model-problem matrices built row by row in sorted CSR: A(p, p + off) = w for each stencil point.
 *
 * Grid: nx x ny x nz unknowns, lexicographic order p = i + nx*(j + ny*k) (x fastest), Dirichlet
 * boundaries eliminated (a neighbour outside the grid is simply dropped). Every stencil is a list of
 * offsets (dx, dy, dz) with a constant weight, listed in increasing (dz, dy, dx) order. The column of
 * an in-grid neighbour is its own lexicographic index (i+dx) + nx*((j+dy) + ny*(k+dz)), which grows
 * with (dz, dy, dx), so rows come out sorted without any sort. Any range of rows can be made (what one MPI
 * rank holds): each row's entries are counted, the counts summed into rowptr, and the rows filled, both
 * passes by all host threads. The whole matrix's count also has a closed form, sum over offsets of
 * prod_d (n_d - |d|) (gs_gen_stencil_nnz), 64-bit because it may exceed gs_int.
 *
 * Stencils (all equations multiplied by h^2, one grid spacing h in every direction):
 *   poisson2d   -u_xx - u_yy           :  4 on the diagonal, -1 for the 4 edge neighbours
 *   poisson3d   -Δu                    :  6 on the diagonal, -1 for the 6 face neighbours
 *   laplace27   27-point Laplacian     : 26 on the diagonal, -1 for all 26 neighbours
 *   convdiff3d  -Δu + w·∇u, w = (Pe, Pe/2, Pe/4)/h, so the cell Péclet numbers w_d*h are
 *               P = (Pe, Pe/2, Pe/4). Central differences for -Δu, first-order upwind for w·∇u:
 *               for w_d > 0, w_d u_d ≈ w_d (u_p - u_{p-e_d})/h, for w_d < 0, w_d (u_{p+e_d} - u_p)/h.
 *               Per direction d, with P_d = w_d h:
 *                   west/south/below  (p - e_d): -1 - max(P_d, 0)
 *                   east/north/above  (p + e_d): -1 + min(P_d, 0)
 *                   diagonal contribution:        2 + |P_d|
 *               so the diagonal is 6 + |Pe|(1 + 1/2 + 1/4), interior rows sum to zero and every row
 *               is weakly diagonally dominant (strictly on the boundary); nonsymmetric for Pe != 0.
 *
 * The Laplacians' interior rows sum to zero; boundary rows have a positive sum (eliminated Dirichlet
 * neighbours), which makes the matrices nonsingular M-matrices. */
#include "core/generate.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"

#define GEN_PARALLEL_ROWS 100000 /* fewer rows are made by one thread */

/* Number of grid points p for which p + (dx,dy,dz) is still inside the grid: prod_d (n_d - |d|)+. */
static int64_t stencil_count(gs_int nx, gs_int ny, gs_int nz, const gs_gen_point *s)
{
    int64_t cx = (int64_t)nx - (s->dx < 0 ? -s->dx : s->dx);
    int64_t cy = (int64_t)ny - (s->dy < 0 ? -s->dy : s->dy);
    int64_t cz = (int64_t)nz - (s->dz < 0 ? -s->dz : s->dz);
    if (cx <= 0 || cy <= 0 || cz <= 0) return 0;
    return cx * cy * cz;
}

/* Size checks shared by every generator: positive extents, n within gs_int (*n_out). */
static gs_status check_sizes(const char *name, gs_int nx, gs_int ny, gs_int nz, gs_int *n_out)
{
    if (nx < 1 || ny < 1 || nz < 1)
        return GS_ERROR(GS_ERR_ARG, "%s: grid %d x %d x %d: every extent must be at least 1", name, nx, ny,
                        nz);
    /* nx*ny <= 2^62 cannot overflow int64; test it before multiplying by nz */
    int64_t n2 = (int64_t)nx * (int64_t)ny;
    if (n2 > GS_INT_MAX || n2 * (int64_t)nz > GS_INT_MAX)
        return GS_ERROR(GS_ERR_ARG,
                        "%s: grid %d x %d x %d has %.0f unknowns, more than the 32-bit index limit "
                        "GS_INT_MAX = %d",
                        name, nx, ny, nz, (double)nx * (double)ny * (double)nz, GS_INT_MAX);
    *n_out = (gs_int)(n2 * (int64_t)nz);
    return GS_OK;
}

int64_t gs_gen_stencil_nnz(const gs_gen_stencil *s, gs_int nx, gs_int ny, gs_int nz)
{
    int64_t nnz = 0;
    for (int k = 0; k < s->npoints; k++) nnz += stencil_count(nx, ny, nz, &s->pt[k]);
    return nnz;
}

/* Whether grid point (i, j, k) + the offset of q is inside the grid. */
static inline bool inside(const gs_gen_point *q, gs_int nx, gs_int ny, gs_int nz, int64_t i, int64_t j, int64_t k)
{
    const int64_t ii = i + q->dx, jj = j + q->dy, kk = k + q->dz;
    return ii >= 0 && ii < nx && jj >= 0 && jj < ny && kk >= 0 && kk < nz;
}

/* A grid point (i, j, k) followed in lexicographic order (x fastest). */
typedef struct grid_pos {
    int64_t i, j, k;
} grid_pos;

static inline void grid_start(grid_pos *g, int64_t p, gs_int nx, gs_int ny)
{
    const int64_t sz = (int64_t)nx * ny;
    g->k = p / sz;
    g->j = (p % sz) / nx;
    g->i = p % nx;
}

static inline void grid_next(grid_pos *g, gs_int nx, gs_int ny)
{
    if (++g->i < nx) return;
    g->i = 0;
    if (++g->j < ny) return;
    g->j = 0;
    g->k++;
}

/* This thread's consecutive share [r0, r1) of m rows (all of them outside a parallel region). */
static void thread_rows(gs_int m, gs_int *r0, gs_int *r1)
{
#ifdef _OPENMP
    const int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
#else
    const int64_t t = 0, T = 1;
#endif
    *r0 = (gs_int)(m * t / T);
    *r1 = (gs_int)(m * (t + 1) / T);
}

gs_status gs_gen_stencil_rows(const gs_gen_stencil *s, gs_int nx, gs_int ny, gs_int nz, gs_int lo, gs_int hi,
                              gs_csr *A)
{
    gs_int n = 0;
    memset(A, 0, sizeof *A);
    GS_CALL(check_sizes(s->name, nx, ny, nz, &n));
    if (lo < 0 || hi > n || lo > hi)
        return GS_ERROR(GS_ERR_ARG, "%s: rows %d..%d asked of a matrix of %d rows", s->name, (int)lo, (int)hi - 1,
                        (int)n);
    const gs_int m = hi - lo;
    gs_int *len = NULL;
    int64_t nnz = 0;
    GS_CALL(GS_MALLOC(len, (size_t)m + 1));
    const int64_t sy = nx, sz = (int64_t)nx * ny; /* index strides */
    /* rows are independent: counted, then filled, by all host threads (the same matrix whatever their number) */
#pragma omp parallel reduction(+ : nnz) if (m > GEN_PARALLEL_ROWS)
    {
        gs_int r0, r1;
        grid_pos g;
        thread_rows(m, &r0, &r1);
        grid_start(&g, (int64_t)lo + r0, nx, ny);
        for (gs_int r = r0; r < r1; r++, grid_next(&g, nx, ny)) {
            gs_int c = 0;
            for (int q = 0; q < s->npoints; q++) c += inside(&s->pt[q], nx, ny, nz, g.i, g.j, g.k);
            len[r] = c;
            nnz += c;
        }
    }
    if (nnz > GS_INT_MAX) {
        gs_free(&len);
        return GS_ERROR(GS_ERR_ARG,
                        "%s: grid %d x %d x %d: %s %lld rows hold %lld nonzeros, more than the 32-bit index limit "
                        "GS_INT_MAX = %d (on several MPI ranks with preconditioner.partition = contiguous, every "
                        "rank makes only its own rows, and the limit holds per rank)",
                        s->name, nx, ny, nz, lo == 0 && hi == n ? "its" : "these", (long long)m, (long long)nnz,
                        GS_INT_MAX);
    }
    gs_status st = gs_csr_alloc(A, m, n, (gs_int)nnz, true);
    if (st != GS_OK) {
        gs_free(&len);
        return st;
    }
    A->rowptr[0] = 0;
    for (gs_int r = 0; r < m; r++) A->rowptr[r + 1] = A->rowptr[r] + len[r];
    gs_free(&len);
    gs_int *ci = A->colind;
    double *v = A->val;
    const gs_int *rp = A->rowptr;
#pragma omp parallel if (m > GEN_PARALLEL_ROWS)
    {
        gs_int r0, r1;
        grid_pos g;
        thread_rows(m, &r0, &r1);
        grid_start(&g, (int64_t)lo + r0, nx, ny);
        for (gs_int r = r0; r < r1; r++, grid_next(&g, nx, ny)) {
            const int64_t p = (int64_t)lo + r;
            gs_int pos = rp[r];
            for (int q = 0; q < s->npoints; q++) {
                const gs_gen_point *t = &s->pt[q];
                if (!inside(t, nx, ny, nz, g.i, g.j, g.k)) continue;
                ci[pos] = (gs_int)(p + t->dx + t->dy * sy + t->dz * sz);
                v[pos] = t->w;
                pos++;
            }
        }
    }
    return GS_OK;
}

/* A = the whole stencil matrix on an nx x ny x nz grid. */
static gs_status gen_stencil(const gs_gen_stencil *s, gs_int nx, gs_int ny, gs_int nz, gs_csr *A)
{
    gs_int n = 0;
    memset(A, 0, sizeof *A);
    GS_CALL(check_sizes(s->name, nx, ny, nz, &n));
    return gs_gen_stencil_rows(s, nx, ny, nz, 0, n, A);
}

/* The stencil of the named problem (gs_gen_by_name's names; peclet for convdiff3d). */
gs_status gs_gen_stencil_of(const char *name, double peclet, gs_gen_stencil *s)
{
    memset(s, 0, sizeof *s);
    if (!name) return GS_ERROR(GS_ERR_ARG, "matrix generator: no name given");
    snprintf(s->name, sizeof s->name, "%s", name);
    gs_gen_point *q = s->pt;
    if (strcmp(name, "poisson2d") == 0) {
        static const gs_gen_point p2[] = {
            {0, -1, 0, -1.0}, {-1, 0, 0, -1.0}, {0, 0, 0, 4.0}, {1, 0, 0, -1.0}, {0, 1, 0, -1.0},
        };
        memcpy(q, p2, sizeof p2);
        s->npoints = 5;
    } else if (strcmp(name, "poisson3d") == 0) {
        static const gs_gen_point p3[] = {
            {0, 0, -1, -1.0}, {0, -1, 0, -1.0}, {-1, 0, 0, -1.0}, {0, 0, 0, 6.0},
            {1, 0, 0, -1.0},  {0, 1, 0, -1.0},  {0, 0, 1, -1.0},
        };
        memcpy(q, p3, sizeof p3);
        s->npoints = 7;
    } else if (strcmp(name, "laplace27") == 0) {
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    q[s->npoints++] = (gs_gen_point){dx, dy, dz, (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0};
    } else if (strcmp(name, "convdiff3d") == 0) {
        if (!isfinite(peclet))
            return GS_ERROR(GS_ERR_ARG, "convdiff3d: Péclet number %g is not a finite number", peclet);
        /* cell Péclet numbers of the three directions */
        const double P[3] = {peclet, 0.5 * peclet, 0.25 * peclet};
        double lo[3], hi[3], diag = 0.0;
        for (int d = 0; d < 3; d++) {
            lo[d] = -1.0 - fmax(P[d], 0.0); /* neighbour p - e_d (upwind when the wind is positive) */
            hi[d] = -1.0 + fmin(P[d], 0.0); /* neighbour p + e_d (upwind when the wind is negative) */
            diag += 2.0 + fabs(P[d]);
        }
        const gs_gen_point cd[] = {
            {0, 0, -1, lo[2]}, {0, -1, 0, lo[1]}, {-1, 0, 0, lo[0]}, {0, 0, 0, diag},
            {1, 0, 0, hi[0]},  {0, 1, 0, hi[1]},  {0, 0, 1, hi[2]},
        };
        memcpy(q, cd, sizeof cd);
        s->npoints = 7;
    } else {
        return GS_ERROR(GS_ERR_ARG,
                        "unknown matrix generator \"%s\" (expected poisson2d, poisson3d, laplace27 or "
                        "convdiff3d)",
                        name);
    }
    return GS_OK;
}

static gs_status gen_named(const char *name, gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A)
{
    gs_gen_stencil s;
    memset(A, 0, sizeof *A);
    GS_CALL(gs_gen_stencil_of(name, peclet, &s));
    return gen_stencil(&s, nx, ny, nz, A);
}

gs_status gs_gen_poisson2d(gs_int nx, gs_int ny, gs_csr *A) { return gen_named("poisson2d", nx, ny, 1, 0.0, A); }

gs_status gs_gen_poisson3d(gs_int nx, gs_int ny, gs_int nz, gs_csr *A)
{
    return gen_named("poisson3d", nx, ny, nz, 0.0, A);
}

gs_status gs_gen_laplace27(gs_int nx, gs_int ny, gs_int nz, gs_csr *A)
{
    return gen_named("laplace27", nx, ny, nz, 0.0, A);
}

gs_status gs_gen_convdiff3d(gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A)
{
    return gen_named("convdiff3d", nx, ny, nz, peclet, A);
}

gs_status gs_gen_by_name(const char *name, gs_int nx, gs_int ny, gs_int nz, double peclet, gs_csr *A)
{
    if (ny == 0) ny = nx;
    if (nz == 0) nz = nx;
    if (name && strcmp(name, "poisson2d") == 0) nz = 1;
    return gen_named(name, nx, ny, nz, peclet, A);
}
