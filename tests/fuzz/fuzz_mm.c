/* Fuzz target: the Matrix Market reader. Each input is written to a file and read as a matrix and as a
 * vector, then written gzip-compressed and read again. Oracles: no crash, leak or undefined behaviour;
 * a failure is GS_ERR_IO (or GS_ERR_MEM) with a message that starts with the file name; a success is a
 * valid sorted CSR (or vector) of finite values; the plain and the .gz reading agree exactly, and so do
 * the serial reading and the parallel one with chunks of a few bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "fuzz_util.h"
#include "io/mmio.h"
#include "io/mmio_testing.h"

/* The reader's 32-bit limits are lowered so that a tiny input declaring a huge (but legal) size
 * cannot make a harness run allocate gigabytes; the checks against the limit are the same code. */
#define FUZZ_INDEX_LIMIT (1 << 16)

typedef struct {
    gs_status st;
    char msg[1024]; /* the message without the leading file name */
} outcome;

static void take_error(gs_status st, const char *path, const char *what, outcome *o)
{
    o->st = st;
    o->msg[0] = '\0';
    if (st == GS_OK) return;
    fuzz_check_error(st, what);
    FUZZ_CHECK(st == GS_ERR_IO || st == GS_ERR_MEM, "%s failed with %s, expected GS_ERR_IO (or GS_ERR_MEM)", what,
               gs_status_name(st));
    const char *m = gs_error_message();
    size_t plen = strlen(path);
    if (st == GS_ERR_IO)
        FUZZ_CHECK(strncmp(m, path, plen) == 0, "%s: the message does not start with the file name: %s", what, m);
    if (strncmp(m, path, plen) == 0) m += plen;
    snprintf(o->msg, sizeof o->msg, "%s", m);
    gs_error_clear();
}

static void check_csr(const gs_csr *A)
{
    FUZZ_CHECK(A->nrows >= 1 && A->nrows == A->ncols && A->nrows <= FUZZ_INDEX_LIMIT, "size %d x %d",
               (int)A->nrows, (int)A->ncols);
    FUZZ_CHECK(A->nnz >= 0 && A->nnz <= FUZZ_INDEX_LIMIT, "nnz %d", (int)A->nnz);
    FUZZ_CHECK(A->rowptr && A->rowptr[0] == 0 && A->rowptr[A->nrows] == A->nnz, "row pointers do not span 0..nnz");
    FUZZ_CHECK(A->nnz == 0 || (A->colind && A->val), "entries without arrays");
    for (gs_int i = 0; i < A->nrows; i++) {
        FUZZ_CHECK(A->rowptr[i] <= A->rowptr[i + 1], "rowptr decreases at row %d", (int)i);
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            FUZZ_CHECK(A->colind[k] >= 0 && A->colind[k] < A->ncols, "row %d: column %d out of range", (int)i,
                       (int)A->colind[k]);
            FUZZ_CHECK(k == A->rowptr[i] || A->colind[k - 1] < A->colind[k],
                       "row %d: columns not strictly increasing", (int)i);
            FUZZ_CHECK(isfinite(A->val[k]), "entry (%d,%d) = %g is not finite", (int)i + 1, (int)A->colind[k] + 1,
                       A->val[k]);
        }
    }
}

static bool same_csr(const gs_csr *A, const gs_csr *B)
{
    if (A->nrows != B->nrows || A->ncols != B->ncols || A->nnz != B->nnz) return false;
    if (memcmp(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof *A->rowptr) != 0) return false;
    return A->nnz == 0 || (memcmp(A->colind, B->colind, (size_t)A->nnz * sizeof *A->colind) == 0 &&
                           memcmp(A->val, B->val, (size_t)A->nnz * sizeof *A->val) == 0);
}

/* Reads path as a matrix and as a vector; the results stay in A, x, n. */
static void read_both(const char *path, gs_csr *A, outcome *om, double **x, gs_int *n, outcome *ov)
{
    gs_mm_info info;
    gs_error_clear();
    gs_status st = gs_mm_read_matrix(path, A, &info);
    take_error(st, path, "gs_mm_read_matrix", om);
    if (st == GS_OK) {
        check_csr(A);
        FUZZ_CHECK(info.nrows == A->nrows && info.ncols == A->ncols, "info disagrees with the matrix");
        FUZZ_CHECK(info.entries_in_file >= 0 && info.entries_in_file <= FUZZ_INDEX_LIMIT, "declared entries %lld",
                   info.entries_in_file);
    } else {
        FUZZ_CHECK(A->rowptr == NULL && A->colind == NULL && A->val == NULL, "a failed read left arrays behind");
    }
    *x = NULL;
    *n = 0;
    st = gs_mm_read_vector(path, 0, x, n);
    take_error(st, path, "gs_mm_read_vector", ov);
    if (st == GS_OK) {
        FUZZ_CHECK(*x != NULL && *n >= 1 && *n <= FUZZ_INDEX_LIMIT, "vector of length %d", (int)*n);
        for (gs_int i = 0; i < *n; i++) FUZZ_CHECK(isfinite((*x)[i]), "x[%d] = %g is not finite", (int)i, (*x)[i]);
    } else {
        FUZZ_CHECK(*x == NULL, "a failed vector read left an array behind");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char plain[600], gz[600];
    if (!plain[0]) {
        gs_mm_testing_set_index_limit(FUZZ_INDEX_LIMIT);
        fuzz_temp_path("input.mtx", plain, sizeof plain);
        fuzz_temp_path("input.mtx.gz", gz, sizeof gz);
    }
    gs_csr A = {0}, Az = {0};
    double *x = NULL, *xz = NULL;
    gs_int n = 0, nz = 0;
    outcome om, ov, omz, ovz;

    fuzz_write_file(plain, data, size);
    read_both(plain, &A, &om, &x, &n, &ov);

    /* several threads, a chunk every few bytes: the same matrix, or the same message */
    static const gs_mm_read_options par = {3, 5, 64};
    gs_csr Ap = {0};
    gs_error_clear();
    gs_status pst = gs_mm_read_matrix_with(plain, &par, &Ap, NULL);
    outcome omp;
    take_error(pst, plain, "gs_mm_read_matrix_with", &omp);
    FUZZ_CHECK(om.st == omp.st && strcmp(om.msg, omp.msg) == 0,
               "matrix: serial and parallel readings differ:\n  serial:   %s %s\n  parallel: %s %s",
               gs_status_name(om.st), om.msg, gs_status_name(omp.st), omp.msg);
    FUZZ_CHECK(om.st != GS_OK || same_csr(&A, &Ap), "matrix: serial and parallel readings give different matrices");
    gs_csr_free(&Ap);

    /* the same text through zlib must read the same (raw gzip input was already decompressed above; a
     * PETSc binary class id makes the plain file binary, its compressed copy text) */
    bool petsc = size >= 4 && data[0] == 0 && data[1] == 0x12 && data[2] == 0x7b && (data[3] == 0x50 || data[3] == 0x4e);
    bool petsc64 = size >= 8 && !data[0] && !data[1] && !data[2] && !data[3] && data[4] == 0 && data[5] == 0x12 &&
                   data[6] == 0x7b && (data[7] == 0x50 || data[7] == 0x4e);
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b) && !petsc && !petsc64) {
        fuzz_write_gz(gz, data, size);
        read_both(gz, &Az, &omz, &xz, &nz, &ovz);
        FUZZ_CHECK(om.st == omz.st && strcmp(om.msg, omz.msg) == 0,
                   "matrix: plain and .gz readings differ:\n  plain: %s %s\n  gz:    %s %s", gs_status_name(om.st),
                   om.msg, gs_status_name(omz.st), omz.msg);
        FUZZ_CHECK(om.st != GS_OK || same_csr(&A, &Az), "matrix: plain and .gz readings give different matrices");
        FUZZ_CHECK(ov.st == ovz.st && strcmp(ov.msg, ovz.msg) == 0,
                   "vector: plain and .gz readings differ:\n  plain: %s %s\n  gz:    %s %s", gs_status_name(ov.st),
                   ov.msg, gs_status_name(ovz.st), ovz.msg);
        FUZZ_CHECK(ov.st != GS_OK || (n == nz && memcmp(x, xz, (size_t)n * sizeof *x) == 0),
                   "vector: plain and .gz readings give different vectors");
    }
    gs_csr_free(&A);
    gs_csr_free(&Az);
    gs_free(&x);
    gs_free(&xz);
    return 0;
}
