/* Matrix Market writing (io/mmio.h): through core/atomic_file (a regular file or a link's target replaced
 * atomically: temporary file, fsync, rename, removed on any error; a device, FIFO or socket written in
 * place), gzip compressed (deflate, gzip wrapper) when the name ends in .gz. Values as %.17g, which reads
 * back to the same double; a name ending in .petsc or .bin is written in PETSc binary format instead
 * (io/petsc_bin.c), and "-" is standard output. Non-finite values (a diverged solve's iterate) are
 * written as nan/inf so the output still says what happened; the reader refuses them as input. */
#include "io/mmio.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "core/atomic_file.h"
#include "core/mem.h"
#include "io/petsc_bin.h"

typedef struct mm_writer {
    gs_atomic_file af;
    bool opened;
    bool gz;       /* compress through zs */
    bool zs_ready; /* deflateEnd due */
    z_stream zs;
    size_t len;
    char buf[1 << 16];
    unsigned char zbuf[1 << 16];
} mm_writer;

static bool has_gz_suffix(const char *path)
{
    size_t n = strlen(path);
    return n >= 3 && strcmp(path + n - 3, ".gz") == 0;
}

static gs_status writer_open(mm_writer *w, const char *path)
{
    GS_CALL(gs_atomic_open(&w->af, strcmp(path, "-") == 0 ? "/dev/stdout" : path));
    w->opened = true;
    if (has_gz_suffix(path)) {
        w->gz = true;
        int zst = deflateInit2(&w->zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
        if (zst != Z_OK)
            return zst == Z_MEM_ERROR ? GS_ERROR(GS_ERR_MEM, "%s: out of host memory while opening zlib for writing", path)
                                      : GS_ERROR(GS_ERR_INTERNAL, "%s: zlib could not start compressing", path);
        w->zs_ready = true;
    }
    return GS_OK;
}

/* Compresses what is in zs.next_in (flush: Z_NO_FLUSH, or Z_FINISH at the end) into the file. */
static gs_status writer_deflate(mm_writer *w, int flush)
{
    for (;;) {
        w->zs.next_out = w->zbuf;
        w->zs.avail_out = sizeof w->zbuf;
        int zst = deflate(&w->zs, flush);
        if (zst == Z_STREAM_ERROR) return GS_ERROR(GS_ERR_INTERNAL, "%s: zlib failed while compressing", w->af.path);
        size_t have = sizeof w->zbuf - w->zs.avail_out;
        if (have > 0 && fwrite(w->zbuf, 1, have, w->af.f) != have)
            return gs_atomic_write_error(&w->af, __FILE__, __LINE__);
        if (flush == Z_FINISH ? zst == Z_STREAM_END : w->zs.avail_out != 0) return GS_OK;
    }
}

static gs_status writer_flush(mm_writer *w)
{
    if (w->len == 0) return GS_OK;
    if (w->gz) {
        w->zs.next_in = (Bytef *)w->buf;
        w->zs.avail_in = (uInt)w->len;
        GS_CALL(writer_deflate(w, Z_NO_FLUSH));
    } else if (fwrite(w->buf, 1, w->len, w->af.f) != w->len) {
        return gs_atomic_write_error(&w->af, __FILE__, __LINE__);
    }
    w->len = 0;
    return GS_OK;
}

/* Room for one formatted line (all lines we write are shorter than 128 bytes). */
static gs_status writer_reserve(mm_writer *w)
{
    if (sizeof w->buf - w->len < 128) GS_CALL(writer_flush(w));
    return GS_OK;
}

static gs_status writer_text(mm_writer *w, const char *text)
{
    GS_CALL(writer_reserve(w));
    w->len += (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len, "%s", text);
    return GS_OK;
}

/* Finishes the file (st == GS_OK: flush, end the gzip stream, commit) or removes it (any error). */
static gs_status writer_close(mm_writer *w, gs_status st)
{
    if (!w->opened) return st;
    if (st == GS_OK) st = writer_flush(w);
    if (st == GS_OK && w->gz) {
        w->zs.next_in = NULL;
        w->zs.avail_in = 0;
        st = writer_deflate(w, Z_FINISH);
    }
    if (w->zs_ready) deflateEnd(&w->zs);
    w->zs_ready = false;
    if (st == GS_OK) st = gs_atomic_commit(&w->af);
    if (st != GS_OK) gs_atomic_abort(&w->af);
    w->opened = false;
    return st;
}

gs_status gs_mm_write_vector(const char *path, gs_int n, const double *x)
{
    gs_status st = GS_OK;
    mm_writer *w = NULL;
    if (!path || n < 0 || (n > 0 && !x))
        return GS_ERROR(GS_ERR_ARG, "gs_mm_write_vector: path and x must not be NULL and n >= 0 (got %d)",
                        (int)n);
    if (gs_petsc_path(path)) return gs_petsc_write_vector(path, n, x);
    GS_CALL(GS_CALLOC(w, 1));
    GS_TRY(writer_open(w, path));
    GS_TRY(
        writer_text(w, "%%MatrixMarket matrix array real general\n% written by gpusolve " GS_VERSION "\n"));
    GS_TRY(writer_reserve(w));
    w->len += (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len, "%" PRId32 " 1\n", n);
    for (gs_int i = 0; i < n; i++) {
        GS_TRY(writer_reserve(w));
        /* %.17g: 17 significant digits read back to the same double */
        w->len += (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len, "%.17g\n", x[i]);
    }
cleanup:
    if (w) {
        gs_status cst = writer_close(w, st);
        if (st == GS_OK) st = cst;
    }
    gs_free(&w);
    return st;
}

gs_status gs_mm_write_matrix(const char *path, const gs_csr *A)
{
    gs_status st = GS_OK;
    mm_writer *w = NULL;
    if (!path || !A || A->nrows < 0 || A->ncols < 0 || A->nnz < 0 || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG,
                        "gs_mm_write_matrix: path or matrix invalid (NULL arrays or negative sizes)");
    if (gs_petsc_path(path)) return gs_petsc_write_matrix(path, A);
    if (A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz)
        return GS_ERROR(GS_ERR_ARG,
                        "gs_mm_write_matrix: rowptr[0] = %d and rowptr[%d] = %d; expected 0 and nnz = %d",
                        (int)A->rowptr[0], (int)A->nrows, (int)A->rowptr[A->nrows], (int)A->nnz);
    for (gs_int i = 0; i < A->nrows; i++) {
        if (A->rowptr[i + 1] < A->rowptr[i])
            return GS_ERROR(GS_ERR_ARG, "gs_mm_write_matrix: rowptr decreases at row %d", (int)i);
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            if (A->colind[k] < 0 || A->colind[k] >= A->ncols)
                return GS_ERROR(GS_ERR_ARG, "gs_mm_write_matrix: column %d of row %d is outside 0..%d",
                                (int)A->colind[k], (int)i, (int)A->ncols - 1);
        }
    }
    GS_CALL(GS_CALLOC(w, 1));
    GS_TRY(writer_open(w, path));
    GS_TRY(writer_text(w, A->val ? "%%MatrixMarket matrix coordinate real general\n"
                                 : "%%MatrixMarket matrix coordinate pattern general\n"));
    GS_TRY(writer_text(w, "% written by gpusolve " GS_VERSION "\n"));
    GS_TRY(writer_reserve(w));
    w->len += (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len,
                               "%" PRId32 " %" PRId32 " %" PRId32 "\n", A->nrows, A->ncols, A->nnz);
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            GS_TRY(writer_reserve(w));
            if (A->val)
                w->len +=
                    (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len,
                                     "%" PRId32 " %" PRId32 " %.17g\n", i + 1, A->colind[k] + 1, A->val[k]);
            else
                w->len += (size_t)snprintf(w->buf + w->len, sizeof w->buf - w->len,
                                           "%" PRId32 " %" PRId32 "\n", i + 1, A->colind[k] + 1);
        }
cleanup:
    if (w) {
        gs_status cst = writer_close(w, st);
        if (st == GS_OK) st = cst;
    }
    gs_free(&w);
    return st;
}
