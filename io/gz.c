/* gzip input: the compressed bytes of an io_input inflated by zlib as the text is taken, one region at a
 * time (never the whole text at once). Members of a multi-member file follow one another; bytes after the
 * last member that do not start another are ignored (as gzip and zlib's gzread do). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "io/mm_internal.h"

#define GZ_BUFFER (1u << 18) /* compressed input buffer */

/* At least n compressed bytes at zs.next_in, unless the input ends first. */
static gs_status gz_want(io_input *in, unsigned n)
{
    while (in->zs.avail_in < n && !(in->raw_eof && in->headpos >= in->nhead)) {
        if (in->zs.avail_in > 0) memmove(in->zin, in->zs.next_in, in->zs.avail_in);
        size_t got = 0;
        GS_CALL(io_raw_read(in, in->zin + in->zs.avail_in, GZ_BUFFER - in->zs.avail_in, &got));
        in->zs.next_in = in->zin;
        in->zs.avail_in += (uInt)got;
        if (got == 0) break;
    }
    return GS_OK;
}

gs_status io_gz_start(io_input *in)
{
    GS_CALL(gs_malloc(&in->zin, GZ_BUFFER, 1));
    in->zs.next_in = in->zin;
    in->zs.avail_in = 0;
    int zst = inflateInit2(&in->zs, 16 + MAX_WBITS); /* gzip wrapper only */
    if (zst != Z_OK)
        return zst == Z_MEM_ERROR ? GS_ERROR(GS_ERR_MEM, "%s: out of host memory while opening zlib", in->path)
                                  : GS_ERROR(GS_ERR_IO, "%s: zlib could not start: %s", in->path,
                                             in->zs.msg ? in->zs.msg : "error");
    in->zs_ready = true;
    in->gz = true;
    return GS_OK;
}

void io_gz_end(io_input *in)
{
    if (in->zs_ready) inflateEnd(&in->zs);
    in->zs_ready = false;
    gs_free(&in->zin);
}

/* The read errors of the compressed stream, as text for the line where the text stops. */
enum { GZ_NEXT_MEMBER = 1, GZ_TRUNCATED, GZ_CORRUPT };

static gs_status gz_report(io_input *in, int kind)
{
    if (kind == GZ_NEXT_MEMBER)
        return MM_FAIL(in->path, in->line + 1, "read error: zlib could not start the next gzip member");
    if (kind == GZ_TRUNCATED)
        return MM_FAIL(in->path, in->line + 1,
                       "read error: the compressed data is truncated (unexpected end of file); expected a "
                       "complete, readable file");
    return MM_FAIL(in->path, in->line + 1,
                   "read error: the compressed data is corrupt (zlib: %s); expected a complete, readable gzip file",
                   in->gz_zmsg);
}

/* A read error: at once when this call produced no text, else after that text (the next call reports
 * it), so that the text before a damaged spot is read the same whatever the buffer sizes. */
static gs_status gz_fail(io_input *in, int kind, size_t want, size_t *got)
{
    snprintf(in->gz_zmsg, sizeof in->gz_zmsg, "%s", in->zs.msg ? in->zs.msg : "invalid data");
    *got = want - in->zs.avail_out;
    if (*got == 0) return gz_report(in, kind);
    in->gz_error = kind;
    return GS_OK;
}

gs_status io_gz_read(io_input *in, char *dst, size_t want, size_t *got)
{
    *got = 0;
    if (in->gz_error) return gz_report(in, in->gz_error);
    if (in->gz_eof) return GS_OK;
    if (want > (size_t)UINT_MAX) want = (size_t)UINT_MAX;
    in->zs.next_out = (Bytef *)dst;
    in->zs.avail_out = (uInt)want;
    while (in->zs.avail_out == want) {
        if (in->zs.avail_in == 0) GS_CALL(gz_want(in, 1));
        int zst = inflate(&in->zs, Z_NO_FLUSH);
        if (zst == Z_STREAM_END) {
            GS_CALL(gz_want(in, 2));
            if (in->zs.avail_in >= 2 && in->zs.next_in[0] == 0x1f && in->zs.next_in[1] == 0x8b) {
                if (inflateReset(&in->zs) != Z_OK) return gz_fail(in, GZ_NEXT_MEMBER, want, got);
                continue;
            }
            in->gz_eof = true;
            break;
        }
        if (zst == Z_OK) continue;
        if (zst == Z_BUF_ERROR) {
            if (in->raw_eof && in->zs.avail_in == 0) return gz_fail(in, GZ_TRUNCATED, want, got);
            continue;
        }
        if (zst == Z_MEM_ERROR) return GS_ERROR(GS_ERR_MEM, "%s: out of host memory while decompressing", in->path);
        return gz_fail(in, GZ_CORRUPT, want, got);
    }
    *got = want - in->zs.avail_out;
    return GS_OK;
}
