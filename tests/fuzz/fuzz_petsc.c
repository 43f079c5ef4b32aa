/* Fuzz target: the PETSc binary reader. Each input is written to a file named .petsc and read as a matrix
 * and as a vector, and read by rows in two parts as two MPI ranks would (gs_petsc_matrix_header,
 * gs_petsc_read_row_lengths, gs_petsc_read_rows). Oracles: no crash, leak or undefined behaviour; a failure
 * is GS_ERR_IO (or GS_ERR_MEM) with a message that starts with the file name; a success is a valid sorted
 * CSR (or vector) of finite values that writes and reads back unchanged; two parts read by rows are, put
 * together, the matrix the whole read gives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "fuzz_util.h"
#include "io/mmio.h"
#include "io/mmio_testing.h"
#include "io/petsc_bin.h"

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

/* The file read by rows in two parts, the second's entries after the first's: each part a valid CSR, or a
 * failure naming the file; when the whole read succeeded (whole: its matrix), the parts are its rows. */
static void by_rows(const char *path, const gs_csr *whole)
{
    gs_petsc_header h;
    gs_error_clear();
    gs_status st = gs_petsc_matrix_header(path, &h);
    if (st != GS_OK) {
        check_failure(st, path, "gs_petsc_matrix_header");
        FUZZ_CHECK(!whole, "the header is refused by rows, the file accepted whole");
        return;
    }
    if (!h.by_rows) return;
    FUZZ_CHECK(h.rows >= 1 && h.rows <= FUZZ_INDEX_LIMIT && h.rows == h.cols, "header of %lld x %lld", h.rows, h.cols);
    const gs_int n = (gs_int)h.rows, cut[3] = {0, n / 2, n};
    long long first = 0;
    for (int part = 0; part < 2; part++) {
        const gs_int lo = cut[part], hi = cut[part + 1];
        gs_int *len = NULL;
        long long nnz = 0;
        gs_csr R = {0};
        FUZZ_CHECK(GS_MALLOC(len, hi - lo + 1) == GS_OK, "out of memory");
        st = gs_petsc_read_row_lengths(path, &h, lo, hi, len, &nnz);
        if (st == GS_OK) st = gs_petsc_read_rows(path, &h, lo, hi, len, first, &R);
        gs_free(&len);
        if (st != GS_OK) {
            check_failure(st, path, "reading by rows");
            FUZZ_CHECK(!R.rowptr, "a failed read by rows left arrays behind");
            return;
        }
        FUZZ_CHECK(R.nrows == hi - lo && R.ncols == n && R.rowptr[0] == 0 && R.rowptr[R.nrows] == R.nnz, "bad part");
        for (gs_int i = 0; i < R.nrows; i++)
            for (gs_int k = R.rowptr[i]; k < R.rowptr[i + 1]; k++) {
                FUZZ_CHECK(R.colind[k] >= 0 && R.colind[k] < n && isfinite(R.val[k]), "part %d row %d", part, (int)i);
                FUZZ_CHECK(k == R.rowptr[i] || R.colind[k - 1] < R.colind[k], "part %d row %d unsorted", part, (int)i);
            }
        if (whole) {
            const gs_int w0 = whole->rowptr[lo];
            FUZZ_CHECK(R.nnz == whole->rowptr[hi] - w0 &&
                           (R.nnz == 0 || (!memcmp(R.colind, whole->colind + w0, (size_t)R.nnz * sizeof *R.colind) &&
                                           !memcmp(R.val, whole->val + w0, (size_t)R.nnz * sizeof *R.val))),
                       "part %d read by rows differs from the whole read", part);
        }
        first += nnz;
        gs_csr_free(&R);
    }
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
        by_rows(path, NULL);
    } else {
        by_rows(path, &A);
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
