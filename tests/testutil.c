/* Shared test helpers: model matrices, random numbers, comparisons, GPU skip. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/mmio.h"

void gs_test_require_gpu(void)
{
    const char *why = NULL;
    if (!gs_backend_cuda_available(&why)) {
        fprintf(stderr, "skipped: no usable GPU (%s)\n", why ? why : "unknown");
        exit(77);
    }
}

int gs_test_quick(void)
{
    const char *q = getenv("GS_TEST_QUICK");
    if (!q || !q[0] || strcmp(q, "0") == 0) return 0;
    return atoi(q) >= 2 ? 2 : 1;
}

double gs_test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 88172645463325252ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* Grid matrices built through COO: w(dx, dy) gives the coupling to the (dx, dy) neighbour. */
static gs_status grid2d(gs_int nx, gs_int ny, const double w[5], gs_csr *A)
{
    gs_status st = GS_OK;
    gs_int n = nx * ny, nnz = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_TRY(GS_MALLOC(ri, 5 * (size_t)n));
    GS_TRY(GS_MALLOC(ci, 5 * (size_t)n));
    GS_TRY(GS_MALLOC(v, 5 * (size_t)n));
    static const int dx[5] = {0, 0, -1, 1, 0}, dy[5] = {-1, 0, 0, 0, 1};
    for (gs_int y = 0; y < ny; y++)
        for (gs_int x = 0; x < nx; x++)
            for (int s = 0; s < 5; s++) {
                gs_int xx = x + dx[s], yy = y + dy[s];
                if (xx < 0 || yy < 0 || xx >= nx || yy >= ny) continue;
                ri[nnz] = y * nx + x;
                ci[nnz] = yy * nx + xx;
                v[nnz] = w[s];
                nnz++;
            }
    GS_TRY(gs_csr_from_coo(n, n, nnz, ri, ci, v, A));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    return st;
}

gs_status gs_test_laplace2d(gs_int nx, gs_int ny, gs_csr *A)
{
    const double w[5] = {-1, 4, -1, -1, -1};
    return grid2d(nx, ny, w, A);
}

gs_status gs_test_convdiff2d(gs_int nx, gs_int ny, double beta, gs_csr *A)
{
    /* -Δu + beta (u_x + u_y), first-order upwind: west/south neighbours get -1 - beta */
    const double w[5] = {-1 - beta, 4 + 2 * beta, -1 - beta, -1, -1};
    return grid2d(nx, ny, w, A);
}

gs_status gs_test_random_sparse(gs_int n, int per_row, double dominance, uint64_t seed, gs_csr *A)
{
    gs_status st = GS_OK;
    size_t cap = (size_t)n * (size_t)(per_row + 1);
    gs_int *ri = NULL, *ci = NULL, nnz = 0;
    double *v = NULL, *rowsum = NULL;
    uint64_t s = seed * 2654435761u + 1;
    GS_TRY(GS_MALLOC(ri, cap));
    GS_TRY(GS_MALLOC(ci, cap));
    GS_TRY(GS_MALLOC(v, cap));
    GS_TRY(GS_CALLOC(rowsum, n));
    for (gs_int i = 0; i < n; i++) {
        for (int k = 0; k < per_row; k++) {
            gs_int j = (gs_int)(gs_test_rand(&s) * n);
            if (j >= n) j = n - 1;
            if (j == i) continue;
            double a = gs_test_rand(&s) - 0.5;
            ri[nnz] = i;
            ci[nnz] = j;
            v[nnz] = a;
            rowsum[i] += fabs(a);
            nnz++;
        }
    }
    for (gs_int i = 0; i < n; i++) {
        ri[nnz] = i;
        ci[nnz] = i;
        v[nnz] = dominance * rowsum[i] + (rowsum[i] == 0.0 ? 1.0 : 0.0);
        nnz++;
    }
    GS_TRY(gs_csr_from_coo(n, n, nnz, ri, ci, v, A));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_free(&rowsum);
    return st;
}

gs_status gs_test_load(const char *name, gs_csr *A)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/matrices/%s", GS_DATA_DIR, name);
    return gs_mm_read_matrix(path, A, NULL);
}

double gs_test_rel_diff(gs_int n, const double *x, const double *y)
{
    double num = 0.0, den = 0.0;
    for (gs_int i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]);
        if (isnan(d)) return INFINITY;
        if (d > num) num = d;
        if (fabs(y[i]) > den) den = fabs(y[i]);
    }
    return num / (den > 1e-300 ? den : 1e-300);
}

void gs_test_poison(gs_int n, double *x)
{
    for (gs_int i = 0; i < n; i++) x[i] = NAN;
}
