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

/* Append a case named "<name>/<lower|upper>/<unit|nonunit>"; T's ownership moves to the suite (T is
 * left empty). */
gs_status tri_suite_add(tri_suite *S, const char *name, gs_uplo uplo, bool unit, gs_csr *T);

/* rho = max_i sum_{j != i} |t_ij| / |t_ii| (|t_ii| = 1 for a unit diagonal): the infinity norm of the
 * Jacobi iteration matrix D^{-1}(T - D), the contraction factor of the Jacobi sweeps. */
double tri_iteration_norm(const gs_csr *T, bool unit);

/* ||x - y||_inf (INFINITY when a difference is NaN) and ||x||_inf */
double tri_max_diff(gs_int n, const double *x, const double *y);
double tri_max_abs(gs_int n, const double *x);

/* Test drivers shared by the trisolve tests; they assert (cmocka) instead of returning a status. */

/* Solver parameters: the defaults with these approximate-solver fields (order NULL: dependency). */
gs_trisolve_params tri_params(int sweeps, const char *order, bool deterministic, bool single);
/* Set the fields of a comma-separated list "name=value,name=value" (gs_trisolve_params_set; NULL or "":
 * nothing); asserts that every one is accepted. */
void tri_params_apply(gs_trisolve_params *p, const char *list);

/* The GPU tests' backends: *gpu = cuda device 0 and *host; 0, or -1 after printing the error (a cmocka
 * group setup's return value). tri_backends_destroy destroys both. */
int tri_backends_create(gs_backend **gpu, gs_backend **host);
void tri_backends_destroy(gs_backend **gpu, gs_backend **host);

/* x = T^{-1} b with solver `type` (params prm, may be NULL) on a host backend; x poisoned before. */
void tri_host_solve(gs_backend *host, const char *type, const gs_csr *T, gs_uplo uplo, bool unit,
                    const gs_trisolve_params *prm, const double *b, double *x);

/* x = NaN (uploaded from poison), solve on the device, download into hx. */
void tri_gpu_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x, double *hx, const double *poison);

/* Re-analysis of solver `type` on backend be (host data): random order-1000 factor, solve; values
 * doubled (same pattern) -> |y - x/2| <= tol (1 + |x|) per entry (tol = 0: exactly x/2); then an
 * order-777 pattern replaces the plan and a solve with order-1000 vectors fails naming 777 rows. */
void tri_check_reanalyse(gs_backend *be, const char *type, gs_uplo uplo, double tol);

/* The k-th allocation of analyse fails for k = 1, 2, ...: GS_ERR_MEM and not analysed each time, at
 * least min_failures times, until analyse succeeds; then b = 1 is solved with residual < 1e-14. */
void tri_check_alloc_failures(gs_backend *be, const char *type, const gs_csr *T, gs_uplo uplo, bool unit,
                              int min_failures);

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
