/* Solves two systems with libgpusolve: a 2D Laplacian built here (and a second right-hand side on the
 * same setup), then west0067, a chemical-engineering matrix with zero diagonal entries read from a
 * Matrix Market file, with the automatic choice. Prints the iterations and the true residual of each.
 *
 *     cc solve.c $(pkg-config --cflags --libs gpusolve) -o solve
 *     ./solve [west0067.mtx] [key=value ...]
 */
#include <gpusolve.h>
#include <stdio.h>
#include <stdlib.h>

/* The 5-point Laplacian on an m x m grid (n = m*m rows) in CSR. */
static void laplacian(int m, int **rowptr, int **colind, double **val, int *n, int *nnz)
{
    *n = m * m;
    *rowptr = malloc(((size_t)*n + 1) * sizeof **rowptr);
    *colind = malloc((size_t)*n * 5 * sizeof **colind);
    *val = malloc((size_t)*n * 5 * sizeof **val);
    int k = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            int row = i * m + j;
            (*rowptr)[row] = k;
            if (i > 0) (*colind)[k] = row - m, (*val)[k++] = -1.0;
            if (j > 0) (*colind)[k] = row - 1, (*val)[k++] = -1.0;
            (*colind)[k] = row, (*val)[k++] = 4.0;
            if (j < m - 1) (*colind)[k] = row + 1, (*val)[k++] = -1.0;
            if (i < m - 1) (*colind)[k] = row + m, (*val)[k++] = -1.0;
        }
    (*rowptr)[*n] = k;
    *nnz = k;
}

/* sqrt(v) by Newton's iteration (no libm needed). */
static double root(double v)
{
    if (!(v > 0.0)) return 0.0;
    double r = v > 1.0 ? v : 1.0;
    for (int k = 0; k < 200; k++) r = 0.5 * (r + v / r);
    return r;
}

/* ||b - A x|| / ||b||, computed here from the CSR arrays. */
static double residual(int n, const int *rowptr, const int *colind, const double *val, const double *b,
                       const double *x)
{
    double r2 = 0.0, b2 = 0.0;
    for (int i = 0; i < n; i++) {
        double ri = b[i];
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) ri -= val[k] * x[colind[k]];
        r2 += ri * ri;
        b2 += b[i] * b[i];
    }
    return root(r2 / b2);
}

static void print_solve(const char *what, gpusolve_solver *s, int code)
{
    printf("%-28s exit %d, %s, %d iterations, true residual %.3e\n", what, code, gpusolve_reason(s),
           gpusolve_iterations(s), gpusolve_residual(s));
    if (code > 1) fprintf(stderr, "  %s %s\n", gpusolve_error_status(s), gpusolve_error_message(s));
}

int main(int argc, char **argv)
{
    const char *west = argc > 1 ? argv[1] : "data/matrices/west0067.mtx";
    const char *const *settings = argc > 2 ? (const char *const *)(argv + 2) : NULL;
    int *rowptr, *colind, n, nnz, failures = 0;
    double *val;
    laplacian(40, &rowptr, &colind, &val, &n, &nnz);
    double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1.0;

    printf("gpusolve %s\n", gpusolve_version());
    gpusolve_solver *s = NULL;
    int code = gpusolve_create(&s, NULL, NULL, settings);
    if (code != GPUSOLVE_EXIT_CONVERGED) {
        fprintf(stderr, "configuration: %s\n", s ? gpusolve_error_message(s) : "out of memory");
        gpusolve_destroy(&s);
        return code;
    }

    /* the Laplacian: the first solve chooses and sets up the method, the second reuses the setup */
    code = gpusolve_set_matrix(s, n, nnz, rowptr, colind, val, 0);
    if (code == GPUSOLVE_EXIT_CONVERGED) code = gpusolve_solve(s, b, x, 0);
    print_solve("laplacian 40x40, b = 1", s, code);
    printf("  residual recomputed here  %.3e\n", residual(n, rowptr, colind, val, b, x));
    failures += code != GPUSOLVE_EXIT_CONVERGED;
    for (int i = 0; i < n; i++) b[i] = (double)(i % 7) - 3.0;
    code = gpusolve_solve(s, b, x, 0);
    print_solve("laplacian, new b (reuse)", s, code);
    failures += code != GPUSOLVE_EXIT_CONVERGED || residual(n, rowptr, colind, val, b, x) > 1e-6;

    /* west0067: zero diagonal entries; the automatic choice matches and scales it first */
    code = gpusolve_read_matrix(s, west);
    if (code == GPUSOLVE_EXIT_CONVERGED) {
        double *bw = malloc(67 * sizeof *bw), *xw = malloc(67 * sizeof *xw);
        for (int i = 0; i < 67; i++) bw[i] = 1.0;
        code = gpusolve_solve(s, bw, xw, 0);
        free(bw);
        free(xw);
    }
    print_solve("west0067 (zero diagonal)", s, code);
    failures += code != GPUSOLVE_EXIT_CONVERGED;

    gpusolve_destroy(&s);
    free(rowptr);
    free(colind);
    free(val);
    free(b);
    free(x);
    return failures ? 1 : 0;
}
