/* PETSc binary files, the format PETSc's MatView and VecView write to a binary viewer, all big-endian:
 *   matrix: int32 class id 1211216 (MAT_FILE_CLASSID), int32 rows, int32 columns, int32 nonzeros,
 *           int32 row lengths[rows], int32 column indices[nonzeros] (0-based), float64 values[nonzeros];
 *   vector: int32 class id 1211214 (VEC_FILE_CLASSID), int32 length, float64 values[length].
 * Files written by a PETSc built with 64-bit indices (every integer int64) are read too. The readers are
 * reached through gs_mm_read_matrix / gs_mm_read_vector (io/mmio.h), which recognise the class id. */
#ifndef GS_PETSC_BIN_H
#define GS_PETSC_BIN_H

#include <stdbool.h>

#include "core/csr.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_PETSC_MAT_CLASSID 1211216
#define GS_PETSC_VEC_CLASSID 1211214

/* Whether path names a PETSc binary file by its extension (.petsc or .bin). */
bool gs_petsc_path(const char *path);
/* Write atomically through core/atomic_file ("-": standard output), 32-bit indices. */
gs_status gs_petsc_write_matrix(const char *path, const gs_csr *A);
gs_status gs_petsc_write_vector(const char *path, gs_int n, const double *x);

/* Reading by rows, as each MPI rank reads its own part (pread at the part's offsets; a plain regular file
 * only). The header: by_rows false when path is not such a file (compressed, a pipe, not a PETSc matrix),
 * for a reader of the whole file; a malformed header or a file size that disagrees with it: GS_ERR_IO. The
 * whole matrix's nonzeros may exceed GS_INT_MAX, a part's may not. */
typedef struct gs_petsc_header {
    bool by_rows;
    int w;                     /* bytes per integer: 4, or 8 */
    long long rows, cols, nnz;
} gs_petsc_header;
gs_status gs_petsc_matrix_header(const char *path, gs_petsc_header *h);
/* The lengths of rows lo..hi-1 (len: hi - lo entries), checked (0..columns), and their sum. */
gs_status gs_petsc_read_row_lengths(const char *path, const gs_petsc_header *h, gs_int lo, gs_int hi, gs_int *len,
                                    long long *nnz);
/* Rows lo..hi-1 (lengths len) into A (hi - lo rows, all the columns, global column numbers), their entries
 * starting at entry `first` of the file (the lengths of the rows before lo summed); columns checked,
 * values finite, rows sorted (repeated columns summed). */
gs_status gs_petsc_read_rows(const char *path, const gs_petsc_header *h, gs_int lo, gs_int hi, const gs_int *len,
                             long long first, gs_csr *A);

#ifdef __cplusplus
}
#endif
#endif
