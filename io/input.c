/* The input of a reader: a file or standard input ("-"), its first bytes (which say the format), raw
 * reads that honour signals, and its text: a plain regular file is mapped (no copy), any other input (gzip,
 * pipe, terminal) is read into one buffer region by region. Lines for the header, regions of whole lines
 * for the entries. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/signal.h"
#include "io/mm_internal.h"
#include "io/petsc_bin.h"

#define IO_BLOCK_DEFAULT ((size_t)32 << 20) /* text per region of a stream */
#define IO_BLOCK_MIN     ((size_t)64)

gs_status io_interrupted(const io_input *in, long long line, const char *file, int srcline)
{
    return gs_error_set(GS_ERR_INTERRUPTED, file, srcline,
                        "%s: interrupted by %s while reading (line %lld); nothing was solved or written", in->path,
                        gs_interrupt_name(gs_interrupt_signal()), line);
}

/* read(2) of up to `want` bytes, retried after EINTR unless SIGINT/SIGTERM arrived. */
static gs_status fd_read(io_input *in, void *dst, size_t want, size_t *got)
{
    if (want > (size_t)INT_MAX) want = (size_t)INT_MAX;
    for (;;) {
        if (gs_interrupt_requested()) return io_interrupted(in, in->line + 1, __FILE__, __LINE__);
        ssize_t n = read(in->fd, dst, want);
        if (n >= 0) {
            *got = (size_t)n;
            if (n == 0) in->raw_eof = true;
            return GS_OK;
        }
        if (errno == EINTR) continue; /* the loop looks at the flag first */
        return MM_FAIL(in->path, in->line + 1, "read error: %s; expected a complete, readable file", strerror(errno));
    }
}

gs_status io_raw_read(io_input *in, void *dst, size_t want, size_t *got)
{
    *got = 0;
    if (want == 0) return GS_OK;
    if (in->headpos < in->nhead) {
        size_t n = in->nhead - in->headpos;
        if (n > want) n = want;
        memcpy(dst, in->head + in->headpos, n);
        in->headpos += n;
        *got = n;
    } else if (!in->raw_eof) {
        GS_CALL(fd_read(in, dst, want, got));
    }
    in->raw_bytes += (long long)*got;
    return GS_OK;
}

gs_status io_raw_read_full(io_input *in, void *dst, size_t want, size_t *got)
{
    size_t have = 0;
    while (have < want) {
        size_t n = 0;
        GS_CALL(io_raw_read(in, (char *)dst + have, want - have, &n));
        if (n == 0) break;
        have += n;
    }
    *got = have;
    return GS_OK;
}

gs_status io_open(io_input *in, const char *path, const char *expected)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    if (strcmp(path, "-") == 0) {
        in->path = MM_STDIN_NAME;
        in->fd = STDIN_FILENO;
    } else {
        in->path = path;
        int fd;
        do {
            if (gs_interrupt_requested()) return io_interrupted(in, 1, __FILE__, __LINE__);
            fd = open(path, O_RDONLY | O_CLOEXEC); /* a FIFO waits for its writer: a signal ends the wait */
        } while (fd < 0 && errno == EINTR);
        if (fd < 0)
            return GS_ERROR(GS_ERR_IO, "%s: cannot open for reading: %s; expected an existing, readable %s", path,
                            strerror(errno), expected);
        in->fd = fd;
        in->close_fd = true;
    }
    struct stat sb;
    if (fstat(in->fd, &sb) != 0)
        return GS_ERROR(GS_ERR_IO, "%s: cannot examine the file: %s; expected a readable file", in->path,
                        strerror(errno));
    if (S_ISDIR(sb.st_mode)) return GS_ERROR(GS_ERR_IO, "%s: is a folder; expected %s", in->path, expected);
    in->regular = in->close_fd && S_ISREG(sb.st_mode);
    in->size = (long long)sb.st_size;
    /* the first bytes say the format; read again through io_raw_read */
    size_t got = 0;
    while (in->nhead < sizeof in->head && !in->raw_eof) {
        GS_CALL(fd_read(in, in->head + in->nhead, sizeof in->head - in->nhead, &got));
        in->nhead += got;
    }
    return GS_OK;
}

void io_close(io_input *in)
{
    io_gz_end(in);
    if (in->map) munmap(in->map, in->map_len);
    in->map = NULL;
    if (in->close_fd && in->fd >= 0) close(in->fd);
    in->fd = -1;
    in->close_fd = false;
    gs_free(&in->buf);
}

static uint32_t be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

io_kind io_detect(const io_input *in)
{
    if (in->nhead >= 2 && in->head[0] == 0x1f && in->head[1] == 0x8b) return IO_GZIP;
    if (in->nhead >= 4) {
        uint32_t id = be32(in->head);
        if (id == GS_PETSC_MAT_CLASSID) return IO_PETSC_MAT;
        if (id == GS_PETSC_VEC_CLASSID) return IO_PETSC_VEC;
    }
    if (in->nhead >= 8 && be32(in->head) == 0) { /* a PETSc built with 64-bit indices: int64 class id */
        uint32_t id = be32(in->head + 4);
        if (id == GS_PETSC_MAT_CLASSID) return IO_PETSC_MAT64;
        if (id == GS_PETSC_VEC_CLASSID) return IO_PETSC_VEC64;
    }
    return IO_TEXT;
}

/* ------------------------------------------------------------------------------------------------ */
/* Text. */

/* Up to `want` bytes of text (inflated when gzip); *got = 0 at its end. */
static gs_status text_read(io_input *in, char *dst, size_t want, size_t *got)
{
    return in->gz ? io_gz_read(in, dst, want, got) : io_raw_read(in, dst, want, got);
}

gs_status io_text_start(io_input *in, size_t block_bytes)
{
    if (io_detect(in) == IO_GZIP) {
        GS_CALL(io_gz_start(in));
    } else if (in->regular && in->size > 0 && (unsigned long long)in->size <= (unsigned long long)SIZE_MAX) {
        void *m = mmap(NULL, (size_t)in->size, PROT_READ, MAP_PRIVATE, in->fd, 0);
        if (m != MAP_FAILED) {
            in->map = m;
            in->map_len = (size_t)in->size;
            (void)posix_madvise(m, in->map_len, POSIX_MADV_SEQUENTIAL);
            in->buf = NULL;
            in->pos = 0;
            in->end = in->map_len;
            in->eof = true;
            return GS_OK;
        }
        /* not mappable (a special file system): read it as a stream */
    }
    in->block = block_bytes ? block_bytes : IO_BLOCK_DEFAULT;
    if (in->block < IO_BLOCK_MIN) in->block = IO_BLOCK_MIN;
    in->cap = in->block;
    GS_CALL(gs_malloc(&in->buf, in->cap + 1, 1));
    return GS_OK;
}

static char *text_base(const io_input *in) { return in->map ? in->map : in->buf; }

/* Moves the unread bytes to the front and reads until the buffer holds `want` bytes or the text ends;
 * grows the buffer when want exceeds it. */
static gs_status text_fill(io_input *in, size_t want)
{
    if (in->map || in->eof) return GS_OK;
    if (in->pos > 0) {
        memmove(in->buf, in->buf + in->pos, in->end - in->pos);
        in->end -= in->pos;
        in->pos = 0;
    }
    if (want > in->cap) {
        GS_CALL(gs_realloc(&in->buf, want + 1, 1));
        in->cap = want;
    }
    while (in->end < want && !in->eof) {
        size_t got = 0;
        gs_status st = text_read(in, in->buf + in->end, in->cap - in->end, &got);
        if (st == GS_ERR_IO) { /* "PATH:LINE: what": kept without its place, reported where the text stops */
            const char *m = gs_error_message() + strlen(in->path);
            m += strspn(m, ":0123456789");
            m += strspn(m, " ");
            snprintf(in->deferred_what, sizeof in->deferred_what, "%s", m);
            gs_error_clear();
            in->deferred = true;
            in->eof = true;
            break;
        }
        GS_CALL(st);
        if (got == 0) in->eof = true;
        in->end += got;
    }
    return GS_OK;
}

static gs_status deferred_error(const io_input *in, long long line)
{
    return MM_FAIL(in->path, line, "%s", in->deferred_what);
}

static gs_status line_too_long(const io_input *in, long long line)
{
    return MM_FAIL(in->path, line,
                   "found a line longer than %zu bytes; expected the short lines of a Matrix Market text file",
                   MM_LINE_MAX);
}

gs_status io_text_line(io_input *in, const char **line, size_t *len)
{
    for (;;) {
        char *base = text_base(in);
        char *start = base + in->pos;
        size_t avail = in->end - in->pos;
        char *nl = memchr(start, '\n', avail);
        size_t n = nl ? (size_t)(nl - start) : avail;
        if (n >= MM_LINE_MAX) return line_too_long(in, in->line + 1);
        if (!nl && in->eof && in->deferred) return deferred_error(in, in->line + 1); /* a line cut short */
        if (nl || (in->eof && avail > 0)) {
            in->pos += nl ? n + 1 : n;
            in->unterminated = !nl;
            in->line++;
            const unsigned char *u = (const unsigned char *)start;
            if (in->line == 1 && n >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
                return MM_FAIL(in->path, 1,
                               "the file starts with a UTF-8 byte-order mark (bytes EF BB BF, written by some "
                               "editors) before the banner; expected '%%%%MatrixMarket' as the very first bytes "
                               "(save the file without a byte-order mark)");
            if (in->line == 1 && n >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
                return MM_FAIL(in->path, 1,
                               "the file starts with a UTF-16 byte-order mark (bytes %02X %02X): it is UTF-16 "
                               "text; expected ASCII text (save it as ASCII or UTF-8)",
                               u[0], u[1]);
            if (memchr(start, '\0', n))
                return MM_FAIL(in->path, in->line, "found a NUL byte (binary data); expected a text file");
            while (n > 0 && mm_is_blank(start[n - 1])) n--;
            *line = start;
            *len = n;
            return GS_OK;
        }
        if (in->eof) {
            *line = NULL;
            *len = 0;
            return GS_OK;
        }
        /* no whole line buffered: read more (a line longer than the buffer grows it, up to the limit) */
        size_t want = avail < in->cap ? in->cap : 2 * in->cap;
        if (want > MM_LINE_MAX + 1) want = MM_LINE_MAX + 1;
        GS_CALL(text_fill(in, want));
    }
}

gs_status io_text_region(io_input *in, long long lines_before, const char **begin, const char **end, bool *final)
{
    in->line = lines_before; /* read errors name the next line */
    if (!in->map) {
        size_t want = in->block;
        for (;;) {
            GS_CALL(text_fill(in, want));
            size_t avail = in->end - in->pos;
            if (in->eof) break;
            /* the region ends after the last newline; a line longer than the buffer grows it */
            const char *b = in->buf + in->pos, *p = b + avail;
            while (p > b && p[-1] != '\n') p--;
            if (p > b) break;
            if (avail >= MM_LINE_MAX) return line_too_long(in, lines_before + 1);
            want = 2 * avail > MM_LINE_MAX + 1 ? MM_LINE_MAX + 1 : 2 * avail;
        }
    }
    char *b = text_base(in) + in->pos, *e = text_base(in) + in->end;
    if (in->eof && in->deferred) { /* the whole lines before the error, then the error */
        while (e > b && e[-1] != '\n') e--;
        if (e == b) return deferred_error(in, lines_before + 1);
        *final = false;
    } else if (in->eof) {
        *final = true;
    } else {
        *final = false;
        while (e > b && e[-1] != '\n') e--;
    }
    in->pos += (size_t)(e - b);
    *begin = b;
    *end = e;
    return GS_OK;
}
