/* PETSc binary matrices and vectors (io/petsc_bin.h): read in large blocks straight into the CSR arrays,
 * byte-swapped and checked in place by all threads; written through core/atomic_file. Every malformed
 * file is GS_ERR_IO naming the section (header, row lengths, column indices, values), the bytes it needs
 * and the bytes present, or the row and value at fault. */
#include "io/petsc_bin.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/mem.h"
#include "core/threads.h"
#include "io/mm_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1
#else
#define HOST_BIG_ENDIAN 0
#endif

#define CONVERT_BLOCK ((size_t)1 << 20) /* 64-bit indices converted this many at a time */

bool gs_petsc_path(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return (n > 6 && strcmp(path + n - 6, ".petsc") == 0) || (n > 4 && strcmp(path + n - 4, ".bin") == 0);
}

static inline uint32_t to_be32(uint32_t v) { return HOST_BIG_ENDIAN ? v : __builtin_bswap32(v); }
static inline uint64_t to_be64(uint64_t v) { return HOST_BIG_ENDIAN ? v : __builtin_bswap64(v); }

static void swap32(void *p, size_t n, int threads)
{
    if (HOST_BIG_ENDIAN) return;
    uint32_t *u = p;
#pragma omp parallel for schedule(static) num_threads(threads) if (n > ((size_t)1 << 16))
    for (size_t k = 0; k < n; k++) u[k] = __builtin_bswap32(u[k]);
}

static void swap64(void *p, size_t n, int threads)
{
    if (HOST_BIG_ENDIAN) return;
    uint64_t *u = p;
#pragma omp parallel for schedule(static) num_threads(threads) if (n > ((size_t)1 << 16))
    for (size_t k = 0; k < n; k++) u[k] = __builtin_bswap64(u[k]);
}

/* ------------------------------------------------------------------------------------------------ */
/* Reading. */

typedef struct pb_reader {
    io_input *in;
    const char *what; /* "matrix" or "vector" */
    int w;            /* bytes per integer: 4, or 8 for a PETSc with 64-bit indices */
    int threads;
    gs_int row0;      /* reading by rows: the first row's number in the file (messages) */
    long long entry0; /* and its first entry's */
} pb_reader;

/* want bytes of the section `section` into dst; a short file is an error naming it. */
static gs_status section_read(pb_reader *r, void *dst, size_t want, const char *section)
{
    long long at = r->in->raw_bytes;
    size_t got = 0;
    GS_CALL(io_raw_read_full(r->in, dst, want, &got));
    if (got < want)
        return GS_ERROR(GS_ERR_IO,
                        "%s: truncated PETSc binary %s: %s needs %zu bytes from byte %lld on, the file holds only %zu; "
                        "expected a complete file",
                        r->in->path, r->what, section, want, at, got);
    return GS_OK;
}

/* The m 64-bit integers of buf (the block that starts at integer k) into dst + k as int32; the first value
 * beyond int32 (none before it: *bad < 0) sets *bad to its index and *badv to it. */
static void narrow64(const int64_t *buf, size_t m, size_t k, gs_int *dst, long long *bad, long long *badv)
{
    for (size_t i = 0; i < m; i++) {
        if ((buf[i] > GS_INT_MAX || buf[i] < -(int64_t)GS_INT_MAX) && *bad < 0) {
            *bad = (long long)(k + i);
            *badv = (long long)buf[i];
        }
        dst[k + i] = (gs_int)buf[i];
    }
}

/* bytes at offset of path's descriptor fd, all of them (the header's sizes were checked against the file). */
static gs_status pread_full(int fd, const char *path, void *dst, size_t bytes, long long offset, const char *section)
{
    char *p = dst;
    size_t done = 0;
    while (done < bytes) {
        size_t want = bytes - done < ((size_t)1 << 30) ? bytes - done : ((size_t)1 << 30);
        ssize_t got = pread(fd, p + done, want, (off_t)(offset + (long long)done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            return GS_ERROR(GS_ERR_IO, "%s: reading %s (%zu bytes from byte %lld on) failed: %s", path, section, bytes,
                            offset, got < 0 ? strerror(errno) : "the file ended early");
        done += (size_t)got;
    }
    return GS_OK;
}

/* Where integers come from: the reader's stream (r), or a descriptor at an offset (pread, reading by rows). */
typedef struct int_source {
    pb_reader *r;
    int fd;
    const char *path;
    long long offset;
    int w, threads;
} int_source;

static gs_status source_read(const int_source *src, void *dst, size_t bytes, size_t done, const char *section)
{
    if (src->r) return section_read(src->r, dst, bytes, section);
    return pread_full(src->fd, src->path, dst, bytes, src->offset + (long long)done, section);
}

/* n integers of the source's width, as int32 into dst (64-bit values must fit: else *bad = their index). */
static gs_status read_ints_from(const int_source *src, gs_int *dst, size_t n, const char *section, long long *bad,
                                long long *badv)
{
    *bad = -1;
    if (src->w == 4) {
        GS_CALL(source_read(src, dst, n * 4, 0, section));
        swap32(dst, n, src->threads);
        return GS_OK;
    }
    gs_status st = GS_OK;
    int64_t *buf = NULL;
    GS_TRY(GS_MALLOC(buf, n < CONVERT_BLOCK ? n : CONVERT_BLOCK));
    for (size_t k = 0; k < n;) {
        size_t m = n - k < CONVERT_BLOCK ? n - k : CONVERT_BLOCK;
        GS_TRY(source_read(src, buf, m * 8, k * 8, section));
        swap64(buf, m, src->threads);
        narrow64(buf, m, k, dst, bad, badv);
        k += m;
    }
cleanup:
    gs_free(&buf);
    return st;
}

static gs_status read_ints(pb_reader *r, gs_int *dst, size_t n, const char *section, long long *bad, long long *badv)
{
    const int_source src = {r, -1, NULL, 0, r->w, r->threads};
    return read_ints_from(&src, dst, n, section, bad, badv);
}

/* The header: class id, then `count` sizes (matrix: rows, columns, nonzeros; vector: length). */
static gs_status read_header(pb_reader *r, long long *v, int count)
{
    unsigned char b[32];
    char section[64];
    snprintf(section, sizeof section, "the header (%d %d-bit integers)", count + 1, 8 * r->w);
    GS_CALL(section_read(r, b, (size_t)(count + 1) * (size_t)r->w, section));
    for (int k = 0; k <= count; k++) {
        const unsigned char *p = b + k * r->w;
        uint64_t u = 0;
        for (int i = 0; i < r->w; i++) u = u << 8 | p[i];
        v[k] = r->w == 4 ? (long long)(int32_t)(uint32_t)u : (long long)(int64_t)u;
    }
    return GS_OK;
}

static gs_status check_size(const pb_reader *r, const char *name, long long v)
{
    if (v < 0)
        return GS_ERROR(GS_ERR_IO, "%s: the PETSc binary %s header gives a negative number of %s (%lld); expected %s >= 0",
                        r->in->path, r->what, name, v, name);
    if (v > mm_index_limit())
        return GS_ERROR(GS_ERR_IO,
                        "%s: the PETSc binary %s header gives %lld %s, beyond the 32-bit index limit %lld; expected at "
                        "most %lld",
                        r->in->path, r->what, v, name, mm_index_limit(), mm_index_limit());
    return GS_OK;
}

/* A regular file's size against what the header announces: the first section cut short is named. */
static gs_status check_file_size(const pb_reader *r, long long rows, long long nnz)
{
    const io_input *in = r->in;
    if (!in->regular) return GS_OK;
    long long w = r->w, at = 4 * w, len = in->size, total = 4 * w + rows * w + nnz * w + nnz * 8;
    struct {
        const char *name;
        long long bytes;
    } sec[3] = {{"the row lengths", rows * w}, {"the column indices", nnz * w}, {"the values", nnz * 8}};
    for (int k = 0; k < 3; k++) {
        if (len < at + sec[k].bytes)
            return GS_ERROR(GS_ERR_IO,
                            "%s: truncated PETSc binary matrix: %s need %lld bytes from byte %lld on, the file holds "
                            "only %lld (the header announces %lld rows and %lld nonzeros: %lld bytes in all, the file "
                            "has %lld); expected a complete file",
                            in->path, sec[k].name, sec[k].bytes, at, len - at < 0 ? 0 : len - at, rows, nnz, total, len);
        at += sec[k].bytes;
    }
    if (nnz > 0 && len == at + nnz * 8)
        return GS_ERROR(GS_ERR_IO,
                        "%s: the PETSc binary matrix holds 16 bytes per value (complex scalars); expected real "
                        "(8-byte) values: gpusolve solves real systems",
                        in->path);
    return GS_OK;
}

/* Row lengths (in rowptr + 1) to offsets, checked: non-negative, at most the columns, summing to nnz. */
static gs_status lengths_to_rowptr(const pb_reader *r, gs_csr *A, long long nnz)
{
    long long sum = 0;
    A->rowptr[0] = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[i + 1];
        if (len < 0 || len > A->ncols)
            return GS_ERROR(GS_ERR_IO,
                            "%s: PETSc binary matrix: row %d has length %d; expected 0..%d (the number of columns)",
                            r->in->path, (int)i + 1, (int)len, (int)A->ncols);
        sum += len;
        if (sum > nnz)
            return GS_ERROR(GS_ERR_IO,
                            "%s: PETSc binary matrix: the row lengths of rows 1..%d already add up to %lld, more than "
                            "the %lld nonzeros of the header; expected row lengths summing to the nonzeros",
                            r->in->path, (int)i + 1, sum, nnz);
        A->rowptr[i + 1] = (gs_int)sum;
    }
    if (sum != nnz)
        return GS_ERROR(GS_ERR_IO,
                        "%s: PETSc binary matrix: the row lengths add up to %lld; expected %lld, the nonzeros of the "
                        "header",
                        r->in->path, sum, nnz);
    return GS_OK;
}

/* Columns in range and values finite, in parallel; the first bad row reported. Sets *sorted. */
static gs_status check_entries(const pb_reader *r, const gs_csr *A, bool *sorted)
{
    gs_int n = A->nrows, first_bad = n;
    bool unsorted = false;
#pragma omp parallel for schedule(dynamic, 4096) num_threads(r->threads) reduction(min : first_bad) \
    reduction(|| : unsorted)
    for (gs_int i = 0; i < n; i++)
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (A->colind[k] < 0 || A->colind[k] >= A->ncols || !isfinite(A->val[k])) {
                if (i < first_bad) first_bad = i;
                break;
            }
            if (k > A->rowptr[i] && A->colind[k] <= A->colind[k - 1]) unsorted = true;
        }
    *sorted = !unsorted;
    if (first_bad == n) return GS_OK;
    for (gs_int k = A->rowptr[first_bad]; k < A->rowptr[first_bad + 1]; k++) {
        if (A->colind[k] < 0 || A->colind[k] >= A->ncols)
            return GS_ERROR(GS_ERR_IO,
                            "%s: PETSc binary matrix: row %lld (entry %lld of the file) has column index %d; expected "
                            "0..%d (0-based)",
                            r->in->path, (long long)r->row0 + first_bad + 1, r->entry0 + k + 1, (int)A->colind[k],
                            (int)A->ncols - 1);
        if (!isfinite(A->val[k]))
            return GS_ERROR(GS_ERR_IO,
                            "%s: PETSc binary matrix: the value at row %lld, column %d is %s; expected a finite number",
                            r->in->path, (long long)r->row0 + first_bad + 1, (int)A->colind[k] + 1,
                            isnan(A->val[k]) ? "NaN" : "Inf");
    }
    return GS_ERROR(GS_ERR_INTERNAL, "row %d: the parallel check found an error the serial one does not",
                    (int)first_bad + 1);
}

gs_status petsc_read_matrix(io_input *in, int threads, gs_csr *A, gs_mm_info *info)
{
    gs_status st = GS_OK;
    io_kind kind = io_detect(in);
    pb_reader r = {in, "matrix", kind == IO_PETSC_MAT64 ? 8 : 4, threads, 0, 0};
    long long h[4], bad = -1, badv = 0;
    GS_TRY(read_header(&r, h, 3));
    long long rows = h[1], cols = h[2], nnz = h[3];
    if (nnz == -1)
        GS_FAIL(GS_ERR_IO, "%s: the PETSc binary matrix is stored dense (nonzeros -1 in the header); expected a sparse "
                "(AIJ) matrix", in->path);
    GS_TRY(check_size(&r, "rows", rows));
    GS_TRY(check_size(&r, "columns", cols));
    GS_TRY(check_size(&r, "nonzeros", nnz));
    if (rows != cols)
        GS_FAIL(GS_ERR_IO, "%s: found a %lld x %lld PETSc binary matrix; expected a square matrix (rows = columns)",
                in->path, rows, cols);
    if (rows == 0) GS_FAIL(GS_ERR_IO, "%s: found a 0 x 0 PETSc binary matrix; expected at least one row", in->path);
    GS_TRY(check_file_size(&r, rows, nnz));
    if (rows > nnz)
        GS_FAIL(GS_ERR_IO,
                "%s: the PETSc binary matrix has %lld rows but only %lld nonzeros: at least %lld rows hold no entry, "
                "so the matrix is singular (a row of zeros); expected at least one entry in every row",
                in->path, rows, nnz, rows - nnz);
    GS_TRY(gs_csr_alloc(A, (gs_int)rows, (gs_int)cols, (gs_int)nnz, true));
    char section[96];
    snprintf(section, sizeof section, "the row lengths (%lld integers)", rows);
    GS_TRY(read_ints(&r, A->rowptr + 1, (size_t)rows, section, &bad, &badv));
    if (bad >= 0)
        GS_FAIL(GS_ERR_IO, "%s: PETSc binary matrix: row %lld has length %lld; expected 0..%lld", in->path, bad + 1,
                badv, cols);
    GS_TRY(lengths_to_rowptr(&r, A, nnz));
    snprintf(section, sizeof section, "the column indices (%lld integers)", nnz);
    GS_TRY(read_ints(&r, A->colind, (size_t)nnz, section, &bad, &badv));
    if (bad >= 0)
        GS_FAIL(GS_ERR_IO, "%s: PETSc binary matrix: entry %lld has column index %lld; expected 0..%lld (0-based)",
                in->path, bad + 1, badv, cols - 1);
    snprintf(section, sizeof section, "the values (%lld doubles)", nnz);
    GS_TRY(section_read(&r, A->val, (size_t)nnz * 8, section));
    swap64(A->val, (size_t)nnz, threads);
    bool sorted = true;
    GS_TRY(check_entries(&r, A, &sorted));
    if (!sorted) GS_TRY(gs_csr_sort_dedupe(A)); /* PETSc writes sorted rows; repeated columns are summed */
    if (info) {
        snprintf(info->field, sizeof info->field, "real");
        snprintf(info->symmetry, sizeof info->symmetry, "general");
        snprintf(info->format, sizeof info->format, "petsc");
        info->nrows = A->nrows;
        info->ncols = A->ncols;
        info->entries_in_file = nnz;
    }
cleanup:
    if (st != GS_OK) gs_csr_free(A);
    return st;
}

gs_status petsc_read_vector(io_input *in, int threads, gs_int expected_n, double **x, gs_int *n)
{
    gs_status st = GS_OK;
    io_kind kind = io_detect(in);
    pb_reader r = {in, "vector", kind == IO_PETSC_VEC64 ? 8 : 4, threads, 0, 0};
    double *xv = NULL;
    long long h[2];
    GS_TRY(read_header(&r, h, 1));
    long long len = h[1];
    GS_TRY(check_size(&r, "values", len));
    if (len == 0) GS_FAIL(GS_ERR_IO, "%s: found a PETSc binary vector of length 0; expected at least one value", in->path);
    if (expected_n > 0 && len != expected_n)
        GS_FAIL(GS_ERR_IO, "%s: found a PETSc binary vector of length %lld; expected length %d", in->path, len,
                (int)expected_n);
    if (in->regular && in->size < 2 * r.w + len * 8)
        GS_FAIL(GS_ERR_IO,
                "%s: truncated PETSc binary vector: the values need %lld bytes from byte %d on, the file holds only "
                "%lld; expected a complete file",
                in->path, len * 8, 2 * r.w, in->size - 2 * r.w);
    GS_TRY(GS_MALLOC(xv, len));
    char section[64];
    snprintf(section, sizeof section, "the values (%lld doubles)", len);
    GS_TRY(section_read(&r, xv, (size_t)len * 8, section));
    swap64(xv, (size_t)len, threads);
    for (long long k = 0; k < len; k++)
        if (!isfinite(xv[k]))
            GS_FAIL(GS_ERR_IO, "%s: PETSc binary vector: value %lld is %s; expected a finite number", in->path, k + 1,
                    isnan(xv[k]) ? "NaN" : "Inf");
    *x = xv;
    *n = (gs_int)len;
    xv = NULL;
cleanup:
    gs_free(&xv);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reading by rows: each MPI rank its own part, at its offsets in the file (pread). */

gs_status gs_petsc_matrix_header(const char *path, gs_petsc_header *h)
{
    gs_status st = GS_OK;
    io_input in;
    memset(h, 0, sizeof *h);
    GS_CALL(io_open(&in, path, "a PETSc binary matrix"));
    io_kind kind = io_detect(&in);
    if ((kind != IO_PETSC_MAT && kind != IO_PETSC_MAT64) || !in.regular) goto cleanup; /* h->by_rows false */
    pb_reader r = {&in, "matrix", kind == IO_PETSC_MAT64 ? 8 : 4, 1, 0, 0};
    long long v[4];
    GS_TRY(read_header(&r, v, 3));
    h->w = r.w;
    h->rows = v[1];
    h->cols = v[2];
    h->nnz = v[3];
    if (h->nnz == -1)
        GS_FAIL(GS_ERR_IO, "%s: the PETSc binary matrix is stored dense (nonzeros -1 in the header); expected a sparse "
                "(AIJ) matrix", path);
    GS_TRY(check_size(&r, "rows", h->rows));
    GS_TRY(check_size(&r, "columns", h->cols));
    if (h->nnz < 0)
        GS_FAIL(GS_ERR_IO, "%s: the PETSc binary matrix header gives a negative number of nonzeros (%lld); expected "
                "nonzeros >= 0", path, h->nnz);
    if (h->rows != h->cols)
        GS_FAIL(GS_ERR_IO, "%s: found a %lld x %lld PETSc binary matrix; expected a square matrix (rows = columns)",
                path, h->rows, h->cols);
    if (h->rows == 0) GS_FAIL(GS_ERR_IO, "%s: found a 0 x 0 PETSc binary matrix; expected at least one row", path);
    if (h->nnz > in.size) /* more entries than bytes: before check_file_size's products could overflow */
        GS_FAIL(GS_ERR_IO,
                "%s: truncated PETSc binary matrix: the header announces %lld nonzeros, %d bytes each, and the file "
                "holds only %lld bytes; expected a complete file",
                path, h->nnz, h->w + 8, in.size);
    GS_TRY(check_file_size(&r, h->rows, h->nnz));
    h->by_rows = true;
cleanup:
    io_close(&in);
    return st;
}

/* n integers of the file's width at offset, as gs_int (64-bit values beyond it: *bad their index). */
static gs_status pread_ints(int fd, const gs_petsc_header *h, const char *path, gs_int *dst, size_t n,
                            long long offset, const char *section, long long *bad, long long *badv)
{
    const int_source src = {NULL, fd, path, offset, h->w, gs_threads_max()};
    return read_ints_from(&src, dst, n, section, bad, badv);
}

static gs_status open_rows(const char *path, int *fd)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) return GS_ERROR(GS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    return GS_OK;
}

gs_status gs_petsc_read_row_lengths(const char *path, const gs_petsc_header *h, gs_int lo, gs_int hi, gs_int *len,
                                    long long *nnz)
{
    gs_status st = GS_OK;
    int fd = -1;
    long long bad = -1, badv = 0, sum = 0;
    if (lo < 0 || hi < lo || hi > h->rows)
        return GS_ERROR(GS_ERR_ARG, "%s: rows %d..%d asked of a matrix of %lld rows", path, (int)lo, (int)hi - 1,
                        h->rows);
    GS_TRY(open_rows(path, &fd));
    GS_TRY(pread_ints(fd, h, path, len, (size_t)(hi - lo), 4LL * h->w + (long long)lo * h->w, "the row lengths", &bad,
                      &badv));
    for (gs_int i = 0; i < hi - lo; i++) {
        const long long v = bad == i ? badv : len[i];
        if (v < 0 || v > h->cols)
            GS_FAIL(GS_ERR_IO, "%s: PETSc binary matrix: row %lld has length %lld; expected 0..%lld", path,
                    (long long)lo + i + 1, v, h->cols);
        sum += v;
    }
    *nnz = sum;
cleanup:
    if (fd >= 0) close(fd);
    return st;
}

gs_status gs_petsc_read_rows(const char *path, const gs_petsc_header *h, gs_int lo, gs_int hi, const gs_int *len,
                             long long first, gs_csr *A)
{
    gs_status st = GS_OK;
    int fd = -1;
    long long nnz = 0, bad = -1, badv = 0;
    memset(A, 0, sizeof *A);
    for (gs_int i = 0; i < hi - lo; i++) nnz += len[i];
    if (nnz > GS_INT_MAX)
        return GS_ERROR(GS_ERR_IO,
                        "%s: PETSc binary matrix: rows %d..%d hold %lld nonzeros, beyond the 32-bit index limit %d "
                        "of one process; expected at most that many per rank (run on more ranks)",
                        path, (int)lo + 1, (int)hi, nnz, (int)GS_INT_MAX);
    if (first < 0 || first + nnz > h->nnz)
        return GS_ERROR(GS_ERR_IO,
                        "%s: PETSc binary matrix: the row lengths of rows 1..%d add up to %lld, more than the %lld "
                        "nonzeros of the header; expected row lengths summing to the nonzeros",
                        path, (int)hi, first + nnz, h->nnz);
    GS_TRY(gs_csr_alloc(A, hi - lo, (gs_int)h->cols, (gs_int)nnz, true));
    A->rowptr[0] = 0;
    for (gs_int i = 0; i < hi - lo; i++) A->rowptr[i + 1] = A->rowptr[i] + len[i];
    GS_TRY(open_rows(path, &fd));
    const long long at_cols = 4LL * h->w + h->rows * h->w, at_vals = at_cols + h->nnz * h->w;
    GS_TRY(pread_ints(fd, h, path, A->colind, (size_t)nnz, at_cols + first * h->w, "the column indices", &bad, &badv));
    if (bad >= 0)
        GS_FAIL(GS_ERR_IO, "%s: PETSc binary matrix: entry %lld has column index %lld; expected 0..%lld (0-based)",
                path, first + bad + 1, badv, h->cols - 1);
    GS_TRY(pread_full(fd, path, A->val, (size_t)nnz * 8, at_vals + first * 8, "the values"));
    swap64(A->val, (size_t)nnz, gs_threads_max());
    io_input in = {.path = path};
    pb_reader r = {&in, "matrix", h->w, gs_threads_max(), lo, first};
    bool sorted = true;
    GS_TRY(check_entries(&r, A, &sorted));
    if (!sorted) GS_TRY(gs_csr_sort_dedupe(A));
cleanup:
    if (fd >= 0) close(fd);
    if (st != GS_OK) gs_csr_free(A);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Writing. */

typedef struct pb_writer {
    gs_atomic_file af;
    bool opened;
    unsigned char buf[1 << 16];
    size_t len;
} pb_writer;

static gs_status put(pb_writer *w, const void *p, size_t n)
{
    if (w->len + n > sizeof w->buf) {
        if (fwrite(w->buf, 1, w->len, w->af.f) != w->len) return gs_atomic_write_error(&w->af, __FILE__, __LINE__);
        w->len = 0;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    return GS_OK;
}

static gs_status put32(pb_writer *w, int32_t v)
{
    uint32_t u = to_be32((uint32_t)v);
    return put(w, &u, 4);
}

static gs_status put64(pb_writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    u = to_be64(u);
    return put(w, &u, 8);
}

static gs_status writer_open(pb_writer *w, const char *path)
{
    GS_CALL(gs_atomic_open(&w->af, strcmp(path, "-") == 0 ? "/dev/stdout" : path));
    w->opened = true;
    return GS_OK;
}

static gs_status writer_close(pb_writer *w, gs_status st)
{
    if (!w->opened) return st;
    if (st == GS_OK && w->len > 0 && fwrite(w->buf, 1, w->len, w->af.f) != w->len)
        st = gs_atomic_write_error(&w->af, __FILE__, __LINE__);
    if (st == GS_OK) st = gs_atomic_commit(&w->af);
    if (st != GS_OK) gs_atomic_abort(&w->af);
    w->opened = false;
    return st;
}

gs_status gs_petsc_write_matrix(const char *path, const gs_csr *A)
{
    gs_status st = GS_OK;
    pb_writer *w = NULL;
    if (!path || !A || A->nrows < 0 || A->ncols < 0 || A->nnz < 0 || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG, "gs_petsc_write_matrix: path or matrix invalid (NULL arrays or negative sizes)");
    if (A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz)
        return GS_ERROR(GS_ERR_ARG, "gs_petsc_write_matrix: rowptr[0] = %d and rowptr[%d] = %d; expected 0 and nnz = %d",
                        (int)A->rowptr[0], (int)A->nrows, (int)A->rowptr[A->nrows], (int)A->nnz);
    for (gs_int i = 0; i < A->nrows; i++) {
        if (A->rowptr[i + 1] < A->rowptr[i])
            return GS_ERROR(GS_ERR_ARG, "gs_petsc_write_matrix: rowptr decreases at row %d", (int)i);
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] < 0 || A->colind[k] >= A->ncols)
                return GS_ERROR(GS_ERR_ARG, "gs_petsc_write_matrix: column %d of row %d is outside 0..%d",
                                (int)A->colind[k], (int)i, (int)A->ncols - 1);
    }
    GS_CALL(GS_CALLOC(w, 1));
    GS_TRY(writer_open(w, path));
    GS_TRY(put32(w, GS_PETSC_MAT_CLASSID));
    GS_TRY(put32(w, A->nrows));
    GS_TRY(put32(w, A->ncols));
    GS_TRY(put32(w, A->nnz));
    for (gs_int i = 0; i < A->nrows; i++) GS_TRY(put32(w, A->rowptr[i + 1] - A->rowptr[i]));
    for (gs_int k = 0; k < A->nnz; k++) GS_TRY(put32(w, A->colind[k]));
    for (gs_int k = 0; k < A->nnz; k++) GS_TRY(put64(w, A->val ? A->val[k] : 1.0));
cleanup:
    if (w) {
        gs_status cst = writer_close(w, st);
        if (st == GS_OK) st = cst;
    }
    gs_free(&w);
    return st;
}

gs_status gs_petsc_write_vector(const char *path, gs_int n, const double *x)
{
    gs_status st = GS_OK;
    pb_writer *w = NULL;
    if (!path || n < 0 || (n > 0 && !x))
        return GS_ERROR(GS_ERR_ARG, "gs_petsc_write_vector: path and x must not be NULL and n >= 0 (got %d)", (int)n);
    GS_CALL(GS_CALLOC(w, 1));
    GS_TRY(writer_open(w, path));
    GS_TRY(put32(w, GS_PETSC_VEC_CLASSID));
    GS_TRY(put32(w, n));
    for (gs_int k = 0; k < n; k++) GS_TRY(put64(w, x[k]));
cleanup:
    if (w) {
        gs_status cst = writer_close(w, st);
        if (st == GS_OK) st = cst;
    }
    gs_free(&w);
    return st;
}
