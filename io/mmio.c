/* Matrix and vector reading (io/mmio.h): the input opened (a file, or standard input for "-"), its format
 * recognised by its first bytes (Matrix Market text, gzip-compressed text, a PETSc binary class id), then
 * the Matrix Market header read serially and the entries in parallel (io/mm_body.c), assembled into
 * sorted CSR (io/mm_assemble.c); PETSc binary files go to io/petsc_bin.c. Writing: mmio_write.c. */
#include "io/mmio.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "io/mm_internal.h"
#include "io/petsc_bin.h"

#define EXPECT_MATRIX "Matrix Market file (or PETSc binary matrix)"
#define EXPECT_VECTOR "Matrix Market file (or PETSc binary vector)"

/* A name ending in .petsc or .bin promises a PETSc binary object; a PETSc object of the other kind is
 * refused by name whatever the file is called. */
static gs_status check_kind(const io_input *in, const char *path, io_kind kind, bool vector)
{
    const char *want = vector ? "vector" : "matrix";
    int want_id = vector ? GS_PETSC_VEC_CLASSID : GS_PETSC_MAT_CLASSID;
    if ((kind == IO_PETSC_MAT || kind == IO_PETSC_MAT64) && vector)
        return GS_ERROR(GS_ERR_IO, "%s: found a PETSc binary matrix (class id %d); expected a vector", in->path,
                        GS_PETSC_MAT_CLASSID);
    if ((kind == IO_PETSC_VEC || kind == IO_PETSC_VEC64) && !vector)
        return GS_ERROR(GS_ERR_IO, "%s: found a PETSc binary vector (class id %d); expected a matrix", in->path,
                        GS_PETSC_VEC_CLASSID);
    if ((kind == IO_TEXT || kind == IO_GZIP) && strcmp(path, "-") != 0 && gs_petsc_path(path)) {
        char found[64] = "an empty file";
        if (in->nhead >= 4)
            snprintf(found, sizeof found, "first bytes %02X %02X %02X %02X", in->head[0], in->head[1], in->head[2],
                     in->head[3]);
        else if (in->nhead > 0)
            snprintf(found, sizeof found, "a file of %zu byte%s", in->nhead, in->nhead == 1 ? "" : "s");
        return GS_ERROR(GS_ERR_IO,
                        "%s: found %s%s; expected a PETSc binary %s (big-endian class id %d, bytes %02X %02X %02X "
                        "%02X), as the extension says",
                        in->path, found, kind == IO_GZIP ? " (gzip data)" : "", want, want_id, (want_id >> 24) & 255,
                        (want_id >> 16) & 255, (want_id >> 8) & 255, want_id & 255);
    }
    return GS_OK;
}

/* Banner and size line of a Matrix Market file: the matrix checks (coordinate, square, not empty). */
static gs_status matrix_header(io_input *in, const gs_mm_read_options *opt, mm_header *h)
{
    GS_CALL(io_text_start(in, opt ? opt->block_bytes : 0));
    GS_CALL(mm_read_banner(in, h));
    if (!h->coordinate)
        return MM_FAIL(in->path, 1,
                       "found format 'array' (a dense matrix or a vector); expected 'coordinate' for a sparse matrix");
    GS_CALL(mm_read_size_line(in, h));
    if (h->nrows != h->ncols)
        return MM_FAIL(in->path, h->size_line, "found a %lld x %lld matrix%s; expected a square matrix (rows = columns)",
                       h->nrows, h->ncols, h->ncols == 1 ? " (a vector?)" : "");
    if (h->nrows == 0) return MM_FAIL(in->path, h->size_line, "found a 0 x 0 matrix; expected at least one row");
    return GS_OK;
}

static gs_status read_mm_matrix(io_input *in, const gs_mm_read_options *opt, gs_csr *A, gs_mm_info *info)
{
    gs_status st = GS_OK;
    mm_header h = {0};
    mm_body b = {0};
    GS_TRY(matrix_header(in, opt, &h));
    GS_TRY(mm_body_read(in, &h, opt, &b));
    /* a square matrix with more rows than stored entries has a row without any entry: it is singular,
     * and no solver can use it. Refused before anything of the declared size is allocated, so a tiny file
     * declaring a huge size costs no more memory than its entries. */
    long long stored = b.state.pushes;
    if (h.nrows > stored)
        GS_FAIL(GS_ERR_IO,
                "%s:%lld: the size line declares %lld rows but the file stores only %lld entr%s%s: at least %lld "
                "rows hold no entry, so the matrix is singular (a row of zeros); expected at least one entry in "
                "every row (is the size line right?)",
                in->path, h.size_line, h.nrows, stored, stored == 1 ? "y" : "ies",
                h.symmetry != SYM_GENERAL && stored > h.entries ? " (counting both mirrored halves)" : "",
                h.nrows - stored);
    GS_TRY(mm_assemble_csr(&h, &b, mm_threads(opt), A));
    if (info) {
        snprintf(info->field, sizeof info->field, "%s", mm_field_names[h.field]);
        snprintf(info->symmetry, sizeof info->symmetry, "%s", mm_symmetry_names[h.symmetry]);
        snprintf(info->format, sizeof info->format, "matrix-market");
        info->nrows = (gs_int)h.nrows;
        info->ncols = (gs_int)h.ncols;
        info->entries_in_file = h.entries;
    }
    mm_body_warn_underflow(&h, &b);
cleanup:
    mm_body_free(&b);
    return st;
}

gs_status gs_mm_read_matrix_with(const char *path, const gs_mm_read_options *opt, gs_csr *A, gs_mm_info *info)
{
    gs_status st = GS_OK;
    io_input in;
    if (!path || !A) return GS_ERROR(GS_ERR_ARG, "gs_mm_read_matrix: path and A must not be NULL");
    memset(A, 0, sizeof *A);
    if (info) memset(info, 0, sizeof *info);
    if (opt && opt->threads < 0)
        return GS_ERROR(GS_ERR_ARG, "gs_mm_read_matrix: threads = %d; expected 0 (default) or more", opt->threads);
    GS_TRY(io_open(&in, path, EXPECT_MATRIX));
    io_kind kind = io_detect(&in);
    GS_TRY(check_kind(&in, path, kind, false));
    if (kind == IO_PETSC_MAT || kind == IO_PETSC_MAT64)
        st = petsc_read_matrix(&in, mm_threads(opt), A, info);
    else
        st = read_mm_matrix(&in, opt, A, info);
cleanup:
    if (st != GS_OK) gs_csr_free(A);
    io_close(&in);
    return st;
}

gs_status gs_mm_read_matrix(const char *path, gs_csr *A, gs_mm_info *info)
{
    return gs_mm_read_matrix_with(path, NULL, A, info);
}

/* ------------------------------------------------------------------------------------------------ */

static gs_status read_mm_vector(io_input *in, const gs_mm_read_options *opt, gs_int expected_n, double **x,
                                gs_int *n)
{
    gs_status st = GS_OK;
    mm_header h = {0};
    mm_body b = {0};
    double *xv = NULL;
    GS_TRY(io_text_start(in, opt ? opt->block_bytes : 0));
    GS_TRY(mm_read_banner(in, &h));
    if (h.symmetry != SYM_GENERAL)
        GS_FAIL(GS_ERR_IO, "%s:1: found symmetry '%s' for a vector; expected 'general'", in->path,
                mm_symmetry_names[h.symmetry]);
    GS_TRY(mm_read_size_line(in, &h));
    if (h.ncols != 1)
        GS_FAIL(GS_ERR_IO, "%s:%lld: found a %lld x %lld %s; expected a vector (n x 1: one column)", in->path,
                h.size_line, h.nrows, h.ncols, h.coordinate ? "matrix" : "array");
    if (h.nrows == 0) GS_FAIL(GS_ERR_IO, "%s:%lld: found a vector of length 0; expected at least one value", in->path, h.size_line);
    if (expected_n > 0 && h.nrows != expected_n)
        GS_FAIL(GS_ERR_IO, "%s:%lld: found a vector of length %lld; expected length %d", in->path, h.size_line, h.nrows,
                (int)expected_n);
    GS_TRY(mm_body_read(in, &h, opt, &b));
    if (h.coordinate) {
        /* missing entries are 0, repeated ones summed in file order (as for matrices) */
        GS_TRY(GS_CALLOC(xv, h.nrows));
        for (long k = 0; k < b.nchunks; k++)
            for (long long e = 0; e < b.chunks[k].pushes; e++) xv[b.chunks[k].ri[e]] += b.chunks[k].v[e];
        for (long long k = 0; k < h.nrows; k++)
            if (!isfinite(xv[k]))
                GS_FAIL(GS_ERR_IO,
                        "%s: the repeated entries at (%d,%d) add up to %g, beyond the range of a double; expected "
                        "the entries given for one position to sum to a finite number",
                        in->path, (int)k + 1, 1, xv[k]);
    } else {
        GS_TRY(GS_MALLOC(xv, h.entries));
        long long at = 0;
        for (long k = 0; k < b.nchunks; k++) {
            memcpy(xv + at, b.chunks[k].v, (size_t)b.chunks[k].pushes * sizeof *xv);
            at += b.chunks[k].pushes;
        }
    }
    mm_body_warn_underflow(&h, &b);
    *x = xv;
    *n = (gs_int)h.nrows;
    xv = NULL;
cleanup:
    mm_body_free(&b);
    gs_free(&xv);
    return st;
}

gs_status gs_mm_read_vector_with(const char *path, const gs_mm_read_options *opt, gs_int expected_n, double **x,
                                 gs_int *n)
{
    gs_status st = GS_OK;
    io_input in;
    if (!path || !x || !n || expected_n < 0)
        return GS_ERROR(GS_ERR_ARG,
                        "gs_mm_read_vector: path, x and n must not be NULL and expected_n must be >= 0 (got %d)",
                        (int)expected_n);
    *x = NULL;
    *n = 0;
    if (opt && opt->threads < 0)
        return GS_ERROR(GS_ERR_ARG, "gs_mm_read_vector: threads = %d; expected 0 (default) or more", opt->threads);
    GS_TRY(io_open(&in, path, EXPECT_VECTOR));
    io_kind kind = io_detect(&in);
    GS_TRY(check_kind(&in, path, kind, true));
    gs_int len = 0;
    if (kind == IO_PETSC_VEC || kind == IO_PETSC_VEC64) {
        GS_TRY(petsc_read_vector(&in, mm_threads(opt), expected_n, x, &len));
    } else {
        GS_TRY(read_mm_vector(&in, opt, expected_n, x, &len));
    }
    *n = len;
cleanup:
    io_close(&in);
    return st;
}

gs_status gs_mm_read_vector(const char *path, gs_int expected_n, double **x, gs_int *n)
{
    return gs_mm_read_vector_with(path, NULL, expected_n, x, n);
}
