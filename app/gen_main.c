/* gpusolve-gen: writes a generated model problem (Poisson 2D/3D, 27-point Laplacian, 3D
 * convection-diffusion) as a Matrix Market file (.mtx, .mtx.gz) or a PETSc binary file (.petsc, .bin),
 * for benchmarks and labs (never committed); "-o -" writes it to standard output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "core/signal.h"
#include "io/mmio.h"

static int usage(FILE *f, int code)
{
    fputs("usage: gpusolve-gen NAME NX [NY [NZ]] [--peclet P] -o OUT\n"
          "  OUT: .mtx (Matrix Market), .mtx.gz (compressed), .petsc or .bin (PETSc binary), - (standard\n"
          "       output, Matrix Market)\n"
          "  NAME: poisson2d (5-point), poisson3d (7-point), laplace27 (27-point, diag 26),\n"
          "        convdiff3d (7-point convection-diffusion, nonsymmetric; --peclet = cell Peclet number)\n"
          "  NY, NZ default to NX. The same matrices are available to gpusolve as gen:NAME:NXxNYxNZ.\n",
          f);
    return code;
}

int main(int argc, char **argv)
{
    const char *name = NULL, *out = NULL;
    long dims[3] = {0, 0, 0};
    int nd = 0;
    double peclet = 1.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(stdout, 0);
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--peclet") && i + 1 < argc) peclet = atof(argv[++i]);
        else if (!name) name = argv[i];
        else if (nd < 3) {
            char *end;
            dims[nd] = strtol(argv[i], &end, 10);
            if (*end || dims[nd] <= 0 || dims[nd] > GS_INT_MAX) {
                fprintf(stderr, "gpusolve-gen: size '%s' is not a positive integer\n", argv[i]);
                return 2;
            }
            nd++;
        } else {
            fprintf(stderr, "gpusolve-gen: unexpected argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    if (!name || nd == 0 || !out) return usage(stderr, 2);
    gs_csr A = {0};
    gs_interrupt_install(); /* a signal ends the writing with exit 6, the output left as it was */
    if (gs_gen_by_name(name, (gs_int)dims[0], (gs_int)dims[1], (gs_int)dims[2], peclet, &A) != GS_OK ||
        gs_mm_write_matrix(out, &A) != GS_OK) {
        gs_status st = gs_error_status();
        fputs("gpusolve-gen: error: ", stderr);
        gs_error_print_user(stderr, false);
        gs_csr_free(&A);
        return st == GS_ERR_IO ? 3 : st == GS_ERR_INTERRUPTED ? 6 : st == GS_ERR_MEM ? 5 : 2;
    }
    /* the summary on standard error when the matrix itself went to standard output */
    fprintf(strcmp(out, "-") == 0 ? stderr : stdout, "%s: %d x %d, %d nonzeros\n", out, A.nrows, A.ncols, A.nnz);
    gs_csr_free(&A);
    return 0;
}
