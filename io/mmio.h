/* Matrix and vector files: Matrix Market (coordinate real|integer|pattern x general|symmetric|
 * skew-symmetric matrices, array or coordinate vectors, plain or .gz) and PETSc binary (io/petsc_bin.h).
 * Readers recognise the format by the file's first bytes (the Matrix Market banner, the gzip magic, a
 * PETSc class id), whatever its name; a name ending in .petsc or .bin must hold a PETSc binary object.
 * The path "-" is standard input for the readers and standard output for the writers. Every malformed
 * input is GS_ERR_IO with a message "FILE:LINE: what was found; what was expected" (PETSc binary:
 * "FILE: ...", naming the section and byte counts). */
#ifndef GS_MMIO_H
#define GS_MMIO_H

#include <stddef.h>

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_mm_info {
    char field[16];    /* "real", "integer", "pattern" */
    char symmetry[24]; /* "general", "symmetric", "skew-symmetric" */
    gs_int nrows, ncols;
    long long entries_in_file; /* entries declared on the size line (PETSc: nonzeros in the header) */
    char format[16];           /* "matrix-market" or "petsc" */
} gs_mm_info;

/* How a reader works. A zeroed struct (or NULL) is the default. The result never depends on it. */
typedef struct gs_mm_read_options {
    int threads;        /* parsing threads; 0: the OpenMP default (OMP_NUM_THREADS or every core) */
    size_t chunk_bytes; /* text per parsing task, cut at line ends; 0: from the text's size and threads */
    size_t block_bytes; /* text taken at once from a stream (gzip, pipe); 0: 32 MiB */
} gs_mm_read_options;

/* Read a square sparse matrix into sorted CSR (symmetric/skew halves expanded, duplicates summed in file
 * order, explicit zeros kept, pattern entries 1). info may be NULL. */
gs_status gs_mm_read_matrix(const char *path, gs_csr *A, gs_mm_info *info);
gs_status gs_mm_read_matrix_with(const char *path, const gs_mm_read_options *opt, gs_csr *A, gs_mm_info *info);
/* Read a dense vector (array n x 1, or coordinate n x 1 with missing entries 0; PETSc binary vector).
 * expected_n > 0: a different length is an error naming both. *x is allocated with gs_malloc; *n receives
 * its length. */
gs_status gs_mm_read_vector(const char *path, gs_int expected_n, double **x, gs_int *n);
gs_status gs_mm_read_vector_with(const char *path, const gs_mm_read_options *opt, gs_int expected_n, double **x,
                                 gs_int *n);
/* Write atomically (temporary name in the same folder, then rename; "-" writes to standard output); full
 * double precision. A name ending in .petsc or .bin is written in PETSc binary format, .gz compressed. */
gs_status gs_mm_write_vector(const char *path, gs_int n, const double *x);
gs_status gs_mm_write_matrix(const char *path, const gs_csr *A);

#ifdef __cplusplus
}
#endif
#endif
