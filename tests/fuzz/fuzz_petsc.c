/* Fuzz target: the PETSc binary reader. Each input is written to a file named .petsc and read as a matrix
 * and as a vector. Oracles: no crash, leak or undefined behaviour; a failure is GS_ERR_IO (or GS_ERR_MEM)
 * with a message that starts with the file name; a success is a valid sorted CSR (or vector) of finite
 * values that writes and reads back unchanged. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "fuzz_util.h"
#include "io/mmio.h"
#include "io/mmio_testing.h"

#define FUZZ_INDEX_LIMIT (1 << 16) /* a tiny input cannot declare gigabytes */

static void check_failure(gs_status st, const char *path, const char *what)
{
    fuzz_check_error(st, what);
    FUZZ_CHECK(st == GS_ERR_IO || st == GS_ERR_MEM, "%s failed with %s, expected GS_ERR_IO (or GS_ERR_MEM)", what,
               gs_status_name(st));
    if (st == GS_ERR_IO)
        FUZZ_CHECK(strncmp(gs_error_message(), path, strlen(path)) == 0, "%s: the message does not name the file: %s",
                   what, gs_error_message());
    gs_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[600], back[600];
    if (!path[0]) {
        gs_mm_testing_set_index_limit(FUZZ_INDEX_LIMIT);
        fuzz_temp_path("input.petsc", path, sizeof path);
        fuzz_temp_path("back.petsc", back, sizeof back);
    }
    fuzz_write_file(path, data, size);
    gs_csr A = {0}, B = {0};
    gs_error_clear();
    gs_status st = gs_mm_read_matrix(path, &A, NULL);
    if (st != GS_OK) {
        check_failure(st, path, "gs_mm_read_matrix");
        FUZZ_CHECK(!A.rowptr && !A.colind && !A.val, "a failed read left arrays behind");
    } else {
        FUZZ_CHECK(A.nrows >= 1 && A.nrows == A.ncols && A.rowptr[0] == 0 && A.rowptr[A.nrows] == A.nnz, "bad CSR");
        for (gs_int i = 0; i < A.nrows; i++)
            for (gs_int k = A.rowptr[i]; k < A.rowptr[i + 1]; k++) {
                FUZZ_CHECK(A.colind[k] >= 0 && A.colind[k] < A.ncols, "row %d: column out of range", (int)i);
                FUZZ_CHECK(k == A.rowptr[i] || A.colind[k - 1] < A.colind[k], "row %d: columns unsorted", (int)i);
                FUZZ_CHECK(isfinite(A.val[k]), "row %d: value not finite", (int)i);
            }
        FUZZ_CHECK(gs_mm_write_matrix(back, &A) == GS_OK, "writing back failed");
        /* the file's entries with repeated columns summed: fewer entries than rows (a row left empty) is
         * refused by the size check of any reader, as the first read would have been with these entries */
        gs_error_clear();
        gs_status bst = gs_mm_read_matrix(back, &B, NULL);
        if (A.nnz < A.nrows) {
            FUZZ_CHECK(bst == GS_ERR_IO && strstr(gs_error_message(), "hold no entry"),
                       "reading back a matrix with fewer entries than rows: %s", gs_error_message());
            gs_error_clear();
            gs_csr_free(&A);
            gs_csr_free(&B);
            goto vector;
        }
        FUZZ_CHECK(bst == GS_OK, "reading back failed");
        FUZZ_CHECK(B.nnz == A.nnz && !memcmp(B.rowptr, A.rowptr, ((size_t)A.nrows + 1) * sizeof *A.rowptr) &&
                       !memcmp(B.colind, A.colind, (size_t)A.nnz * sizeof *A.colind) &&
                       !memcmp(B.val, A.val, (size_t)A.nnz * sizeof *A.val),
                   "the matrix written and read back differs");
    }
    gs_csr_free(&A);
    gs_csr_free(&B);
vector:;
    double *x = NULL;
    gs_int n = 0;
    st = gs_mm_read_vector(path, 0, &x, &n);
    if (st != GS_OK) {
        check_failure(st, path, "gs_mm_read_vector");
        FUZZ_CHECK(!x, "a failed vector read left an array behind");
    } else {
        FUZZ_CHECK(x && n >= 1 && n <= FUZZ_INDEX_LIMIT, "vector of length %d", (int)n);
        for (gs_int i = 0; i < n; i++) FUZZ_CHECK(isfinite(x[i]), "x[%d] not finite", (int)i);
    }
    gs_free(&x);
    return 0;
}
