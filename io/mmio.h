/* Matrix Market input/output: coordinate real|integer|pattern x general|symmetric|skew-symmetric
 * matrices, array or coordinate vectors, plain or .gz. Every malformed input is GS_ERR_IO with a
 * message "FILE:LINE: what was found; what was expected". */
#ifndef GS_MMIO_H
#define GS_MMIO_H

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_mm_info {
    char field[16];    /* "real", "integer", "pattern" */
    char symmetry[24]; /* "general", "symmetric", "skew-symmetric" */
    gs_int nrows, ncols;
    long long entries_in_file; /* entries declared on the size line */
} gs_mm_info;

/* Read a square sparse matrix into sorted CSR (symmetric/skew halves expanded, duplicates summed,
 * explicit zeros kept). info may be NULL. */
gs_status gs_mm_read_matrix(const char *path, gs_csr *A, gs_mm_info *info);
/* Read a dense vector (array n x 1, or coordinate n x 1 with missing entries 0). expected_n > 0:
 * a different length is an error naming both. *x is allocated with gs_malloc; *n receives its length. */
gs_status gs_mm_read_vector(const char *path, gs_int expected_n, double **x, gs_int *n);
/* Write atomically (temporary name in the same folder, then rename); full double precision. */
gs_status gs_mm_write_vector(const char *path, gs_int n, const double *x);
gs_status gs_mm_write_matrix(const char *path, const gs_csr *A);

#ifdef __cplusplus
}
#endif
#endif
