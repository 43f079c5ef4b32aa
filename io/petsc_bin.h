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

#ifdef __cplusplus
}
#endif
#endif
