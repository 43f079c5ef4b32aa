/* Matrix Market reading: banner, size line and entries parsed line by line (plain or gzip, through zlib)
 * into COO triplets, symmetric/skew halves mirrored, then sorted CSR (writing: mmio_write.c). */
#include "io/mmio.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/mem.h"
#include "core/signal.h"
#include "io/mmio_testing.h"

#define MM_BANNER_EXAMPLE "%%MatrixMarket matrix coordinate real general"
#define MM_BUF_INITIAL    ((size_t)1 << 20) /* read buffer; grows only for longer lines */
#define MM_LINE_MAX       ((size_t)1 << 26) /* a 64 MiB line is not Matrix Market */
#define MM_GZ_BUFFER      (1u << 18)        /* compressed input buffer */
#define MM_COO_INITIAL    4096              /* first capacity of the triplet arrays */

enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN };
enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW };
static const char *const field_names[] = {"real", "integer", "pattern"};
static const char *const symmetry_names[] = {"general", "symmetric", "skew-symmetric"};

/* Every size and entry count must fit the 32-bit gs_int; tests lower this to reach the checks. */
static long long index_limit = GS_INT_MAX;

void gs_mm_testing_set_index_limit(long long limit) { index_limit = limit > 0 ? limit : GS_INT_MAX; }

/* ------------------------------------------------------------------------------------------------ */
/* Error messages: "PATH:LINE: what was found; what was expected". */

static gs_status mm_error(const char *path, long long line, const char *file, int srcline, const char *fmt,
                          ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static gs_status mm_error(const char *path, long long line, const char *file, int srcline, const char *fmt,
                          ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gs_error_set(GS_ERR_IO, file, srcline, "%s:%lld: %s", path, line, what);
}

#define MM_FAIL(r, line, ...) mm_error((r)->path, (line), __FILE__, __LINE__, __VA_ARGS__)

/* 'text' for a message: at most 48 characters (then "..."), control characters shown as '?'. */
typedef struct {
    char s[64];
} mm_quote;

static mm_quote quote(const char *s, size_t n)
{
    mm_quote q;
    size_t k = 0, show = n > 48 ? 45 : n;
    q.s[k++] = '\'';
    for (size_t i = 0; i < show; i++) q.s[k++] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (show < n) {
        memcpy(q.s + k, "...", 3);
        k += 3;
    }
    q.s[k++] = '\'';
    q.s[k] = '\0';
    return q;
}

/* ------------------------------------------------------------------------------------------------ */
/* Line reader. Bytes come from read(2) on the descriptor, inflated by zlib when the file starts with
 * the gzip magic bytes (whatever its name); the reading loop is ours so that a signal is honoured:
 * read() interrupted by a signal (EINTR) is retried unless SIGINT/SIGTERM arrived, and a pending
 * SIGINT/SIGTERM stops the reading at the next buffer (GS_ERR_INTERRUPTED). */

typedef struct mm_reader {
    const char *path;
    int fd;
    bool gz;            /* gzip input: inflated through zs */
    bool zs_ready;      /* zs initialised (inflateEnd due) */
    bool raw_eof;       /* the descriptor has no more bytes */
    bool gz_eof;        /* the last gzip member ended (what follows, if not another member, is ignored) */
    z_stream zs;
    unsigned char *zin; /* compressed bytes (MM_GZ_BUFFER) */
    char *buf;          /* cap + 1 bytes: room to terminate a last line that has no newline */
    size_t cap;         /* usable bytes of buf */
    size_t pos;         /* start of the next line */
    size_t scanned;     /* buf[pos..scanned) holds no newline */
    size_t end;         /* bytes of buf filled */
    bool eof;
    bool unterminated;  /* the line last returned ended the file without a newline */
    long long line;     /* number of the line last returned */
    long long underflows, underflow_line; /* values that underflowed to zero, and the first one's line */
    char underflow_text[64];
} mm_reader;

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static gs_status interrupted(const mm_reader *r, const char *file, int srcline)
{
    return gs_error_set(GS_ERR_INTERRUPTED, file, srcline,
                        "%s: interrupted by %s while reading (line %lld); nothing was solved or written", r->path,
                        gs_interrupt_name(gs_interrupt_signal()), r->line + 1);
}

/* Up to `want` bytes from the descriptor (*got = 0 at its end). */
static gs_status raw_read(mm_reader *r, void *dst, size_t want, size_t *got)
{
    if (want > (size_t)INT_MAX) want = (size_t)INT_MAX;
    for (;;) {
        if (gs_interrupt_requested()) return interrupted(r, __FILE__, __LINE__);
        ssize_t n = read(r->fd, dst, want);
        if (n >= 0) {
            *got = (size_t)n;
            return GS_OK;
        }
        if (errno == EINTR) continue; /* the loop looks at the flag first */
        return MM_FAIL(r, r->line + 1, "read error: %s; expected a complete, readable file", strerror(errno));
    }
}

/* At least n compressed bytes at zs.next_in, unless the input ends first. */
static gs_status gz_want(mm_reader *r, unsigned n)
{
    while (r->zs.avail_in < n && !r->raw_eof) {
        if (r->zs.avail_in > 0) memmove(r->zin, r->zs.next_in, r->zs.avail_in);
        size_t got = 0;
        GS_CALL(raw_read(r, r->zin + r->zs.avail_in, MM_GZ_BUFFER - r->zs.avail_in, &got));
        if (got == 0) r->raw_eof = true;
        r->zs.next_in = r->zin;
        r->zs.avail_in += (uInt)got;
    }
    return GS_OK;
}

/* Up to `want` bytes of the file's text (inflated when gzip); *got = 0 at its end. Members of a
 * multi-member gzip file follow one another; bytes after the last member that do not start another
 * are ignored (as gzip and zlib's gzread do). */
static gs_status source_read(mm_reader *r, char *dst, size_t want, size_t *got)
{
    *got = 0;
    if (!r->gz) return raw_read(r, dst, want, got);
    if (r->gz_eof) return GS_OK;
    if (want > (size_t)UINT_MAX) want = (size_t)UINT_MAX;
    r->zs.next_out = (Bytef *)dst;
    r->zs.avail_out = (uInt)want;
    while (r->zs.avail_out == want) {
        if (r->zs.avail_in == 0) GS_CALL(gz_want(r, 1));
        int zst = inflate(&r->zs, Z_NO_FLUSH);
        if (zst == Z_STREAM_END) {
            GS_CALL(gz_want(r, 2));
            if (r->zs.avail_in >= 2 && r->zs.next_in[0] == 0x1f && r->zs.next_in[1] == 0x8b) {
                if (inflateReset(&r->zs) != Z_OK)
                    return MM_FAIL(r, r->line + 1, "read error: zlib could not start the next gzip member");
                continue;
            }
            r->gz_eof = true;
            break;
        }
        if (zst == Z_OK) continue;
        if (zst == Z_BUF_ERROR) {
            if (r->raw_eof && r->zs.avail_in == 0)
                return MM_FAIL(r, r->line + 1,
                               "read error: the compressed data is truncated (unexpected end of file); expected a "
                               "complete, readable file");
            continue;
        }
        if (zst == Z_MEM_ERROR) return GS_ERROR(GS_ERR_MEM, "%s: out of host memory while decompressing", r->path);
        return MM_FAIL(r, r->line + 1, "read error: the compressed data is corrupt (zlib: %s); expected a complete, "
                       "readable gzip file", r->zs.msg ? r->zs.msg : "invalid data");
    }
    *got = want - r->zs.avail_out;
    return GS_OK;
}

static gs_status reader_open(mm_reader *r, const char *path)
{
    r->path = path;
    r->fd = -1;
    int fd;
    do {
        if (gs_interrupt_requested()) return interrupted(r, __FILE__, __LINE__);
        fd = open(path, O_RDONLY | O_CLOEXEC); /* a FIFO waits for its writer: a signal ends the wait */
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return GS_ERROR(GS_ERR_IO,
                        "%s: cannot open for reading: %s; expected an existing, readable Matrix Market file",
                        path, strerror(errno));
    r->fd = fd;
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return GS_ERROR(GS_ERR_IO, "%s: cannot examine the file: %s; expected a readable file", path,
                        strerror(errno));
    if (S_ISDIR(sb.st_mode)) return GS_ERROR(GS_ERR_IO, "%s: is a folder; expected a Matrix Market file", path);
    GS_CALL(gs_malloc(&r->buf, MM_BUF_INITIAL + 1, 1));
    r->cap = MM_BUF_INITIAL;
    GS_CALL(gs_malloc(&r->zin, MM_GZ_BUFFER, 1));
    /* the first two bytes say whether the file is gzip-compressed */
    r->zs.next_in = r->zin;
    r->zs.avail_in = 0;
    GS_CALL(gz_want(r, 2));
    if (r->zs.avail_in >= 2 && r->zin[0] == 0x1f && r->zin[1] == 0x8b) {
        r->gz = true;
        int zst = inflateInit2(&r->zs, 16 + MAX_WBITS); /* gzip wrapper only */
        if (zst != Z_OK)
            return zst == Z_MEM_ERROR ? GS_ERROR(GS_ERR_MEM, "%s: out of host memory while opening zlib", path)
                                      : GS_ERROR(GS_ERR_IO, "%s: zlib could not start: %s", path,
                                                 r->zs.msg ? r->zs.msg : "error");
        r->zs_ready = true;
    } else { /* plain text: the bytes already read are its start */
        memcpy(r->buf, r->zin, r->zs.avail_in);
        r->end = r->zs.avail_in;
        r->zs.avail_in = 0;
        if (r->raw_eof) r->eof = true;
    }
    return GS_OK;
}

static void reader_close(mm_reader *r)
{
    if (r->zs_ready) inflateEnd(&r->zs);
    r->zs_ready = false;
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    gs_free(&r->zin);
    gs_free(&r->buf);
}

/* Move the unread bytes to the front, grow the buffer when a line fills it, read more. */
static gs_status reader_fill(mm_reader *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->end -= r->pos;
        r->scanned -= r->pos;
        r->pos = 0;
    }
    if (r->end == r->cap) {
        if (r->cap >= MM_LINE_MAX)
            return MM_FAIL(r, r->line + 1,
                           "found a line longer than %zu bytes; expected the short lines of a Matrix "
                           "Market text file",
                           MM_LINE_MAX);
        GS_CALL(gs_realloc(&r->buf, 2 * r->cap + 1, 1));
        r->cap *= 2;
    }
    size_t got = 0;
    GS_CALL(source_read(r, r->buf + r->end, r->cap - r->end, &got));
    if (got == 0) r->eof = true;
    r->end += got;
    return GS_OK;
}

/* Next line, without its newline and trailing blanks (CRLF tolerated), NUL-terminated in place;
 * *line = NULL at the end of the file. */
static gs_status reader_next(mm_reader *r, char **line, size_t *len)
{
    for (;;) {
        char *nl = memchr(r->buf + r->scanned, '\n', r->end - r->scanned);
        if (nl || (r->eof && r->pos < r->end)) {
            char *start = r->buf + r->pos;
            char *stop = nl ? nl : r->buf + r->end;
            size_t n = (size_t)(stop - start);
            r->pos = r->scanned = nl ? (size_t)(nl - r->buf) + 1 : r->end;
            r->unterminated = !nl;
            r->line++;
            const unsigned char *u = (const unsigned char *)start;
            if (r->line == 1 && n >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
                return MM_FAIL(r, 1,
                               "the file starts with a UTF-8 byte-order mark (bytes EF BB BF, written by some "
                               "editors) before the banner; expected '%%%%MatrixMarket' as the very first bytes "
                               "(save the file without a byte-order mark)");
            if (r->line == 1 && n >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF)))
                return MM_FAIL(r, 1,
                               "the file starts with a UTF-16 byte-order mark (bytes %02X %02X): it is UTF-16 "
                               "text; expected ASCII text (save it as ASCII or UTF-8)",
                               u[0], u[1]);
            if (memchr(start, '\0', n))
                return MM_FAIL(r, r->line, "found a NUL byte (binary data); expected a text file");
            while (n > 0 && is_blank(start[n - 1])) n--;
            start[n] = '\0';
            *line = start;
            *len = n;
            return GS_OK;
        }
        r->scanned = r->end;
        if (r->eof) {
            *line = NULL;
            *len = 0;
            return GS_OK;
        }
        GS_CALL(reader_fill(r));
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Tokens and numbers. */

/* Appended to the message of a malformed last line that has no newline. */
static const char *truncation_hint(const mm_reader *r)
{
    return r->unterminated ? " (the last line has no newline: is the file truncated?)" : "";
}

typedef struct {
    const char *s;
    size_t n;
} mm_tok;

/* Splits at blanks; stores the first `max` tokens and returns how many there are in all. */
static int split_tokens(const char *p, mm_tok *tok, int max)
{
    int count = 0;
    for (;;) {
        while (is_blank(*p)) p++;
        if (*p == '\0') return count;
        const char *s = p;
        while (*p != '\0' && !is_blank(*p)) p++;
        if (count < max) tok[count] = (mm_tok){s, (size_t)(p - s)};
        count++;
    }
}

/* The rest of the line after token t, quoted (for "extra text" messages). */
static mm_quote quote_rest(mm_tok t)
{
    const char *p = t.s + t.n;
    while (is_blank(*p)) p++;
    return quote(p, strlen(p));
}

static bool tok_is(mm_tok t, const char *word)
{
    return strlen(word) == t.n && strncasecmp(t.s, word, t.n) == 0;
}

typedef enum { NUM_OK, NUM_BAD, NUM_RANGE } num_result;

/* Decimal integer with optional sign, digits only. */
static num_result parse_ll(mm_tok t, long long *v)
{
    size_t k = 0;
    bool neg = false;
    if (k < t.n && (t.s[k] == '+' || t.s[k] == '-')) neg = t.s[k++] == '-';
    if (k == t.n) return NUM_BAD;
    unsigned long long x = 0;
    bool range = false;
    for (; k < t.n; k++) {
        unsigned d = (unsigned)(t.s[k] - '0');
        if (d > 9) return NUM_BAD;
        if (x > (ULLONG_MAX - d) / 10)
            range = true;
        else
            x = 10 * x + d;
    }
    if (range || x > (unsigned long long)LLONG_MAX) return NUM_RANGE;
    *v = neg ? -(long long)x : (long long)x;
    return NUM_OK;
}

typedef struct mm_header {
    bool coordinate; /* else array */
    int field, symmetry;
    long long nrows, ncols, entries; /* entries: declared on the size line (array: rows * cols) */
    long long size_line;
} mm_header;

/* A 1-based row or column index in 1..n, returned 0-based. */
static gs_status parse_index(const mm_reader *r, mm_tok t, const char *what, long long n, gs_int *idx)
{
    long long v = 0;
    num_result res = parse_ll(t, &v);
    if (res == NUM_BAD)
        return MM_FAIL(r, r->line, "%s index %s is not an integer; expected an integer in 1..%lld%s", what,
                       quote(t.s, t.n).s, n, truncation_hint(r));
    if (res == NUM_RANGE || v > n)
        return MM_FAIL(r, r->line, "%s index %s is beyond the size %lld; expected 1..%lld", what,
                       quote(t.s, t.n).s, n, n);
    if (v == 0)
        return MM_FAIL(r, r->line, "%s index 0; expected 1..%lld (Matrix Market indices start at 1)", what,
                       n);
    if (v < 0)
        return MM_FAIL(r, r->line, "%s index %s is negative; expected 1..%lld", what, quote(t.s, t.n).s, n);
    *idx = (gs_int)(v - 1);
    return GS_OK;
}

/* Whether a number's digits before any exponent are all zero ("0", "-0.000e5"): such a value is zero
 * exactly, while a nonzero one that strtod returns as 0 has underflowed. */
static bool zero_mantissa(mm_tok t)
{
    for (size_t k = 0; k < t.n && t.s[k] != 'e' && t.s[k] != 'E'; k++)
        if (t.s[k] >= '1' && t.s[k] <= '9') return false;
    return true;
}

/* A finite real number (field real) or an integer (field integer). A nonzero value below the smallest
 * double (1e-400) becomes 0: counted, and reported once the file is read (gs_mm_read_*). */
static gs_status parse_value(mm_reader *r, const mm_header *h, mm_tok t, double *v)
{
    if (h->field == FIELD_INTEGER) {
        long long x = 0;
        num_result res = parse_ll(t, &x);
        if (res == NUM_BAD)
            return MM_FAIL(r, r->line,
                           "value %s is not an integer; expected an integer (the banner declares field "
                           "'integer')%s",
                           quote(t.s, t.n).s, truncation_hint(r));
        if (res == NUM_RANGE)
            return MM_FAIL(r, r->line, "integer value %s is out of range; expected at most %lld in magnitude",
                           quote(t.s, t.n).s, LLONG_MAX);
        *v = (double)x;
        return GS_OK;
    }
    char *end = NULL;
    errno = 0;
    double x = strtod(t.s, &end);
    if (end != t.s + t.n || t.n == 0)
        return MM_FAIL(r, r->line, "value %s is not a number; expected a real number such as 1.5e-3%s",
                       quote(t.s, t.n).s, truncation_hint(r));
    if (!isfinite(x)) {
        if (errno == ERANGE)
            return MM_FAIL(r, r->line,
                           "value %s overflows a double; expected a finite number below 1.8e308 in "
                           "magnitude",
                           quote(t.s, t.n).s);
        return MM_FAIL(r, r->line, "value %s is not finite (NaN or Inf); expected a finite real number",
                       quote(t.s, t.n).s);
    }
    if (x == 0.0 && !zero_mantissa(t)) {
        if (r->underflows++ == 0) {
            r->underflow_line = r->line;
            snprintf(r->underflow_text, sizeof r->underflow_text, "%s", quote(t.s, t.n).s);
        }
    }
    *v = x;
    return GS_OK;
}

/* The warning for values that underflowed to zero (stderr: reading goes on, the entries stay as
 * explicit zeros, which changes the matrix only below the precision of a double). */
static void warn_underflow(const mm_reader *r)
{
    if (r->underflows == 0) return;
    fprintf(stderr,
            "gpusolve: warning: %s:%lld: value %s is below the smallest double (about 4.9e-324) and was read as "
            "0 (kept as an explicit zero entry)",
            r->path, r->underflow_line, r->underflow_text);
    if (r->underflows > 1) fprintf(stderr, "; %lld values of this file underflowed to 0 in all", r->underflows);
    fputc('\n', stderr);
}

/* ------------------------------------------------------------------------------------------------ */
/* Banner and size line. */

static gs_status read_banner(mm_reader *r, mm_header *h)
{
    char *line;
    size_t len;
    GS_CALL(reader_next(r, &line, &len));
    if (!line)
        return MM_FAIL(r, 1, "the file is empty; expected the banner line '%s' first", MM_BANNER_EXAMPLE);
    mm_tok t[5];
    int nt = split_tokens(line, t, 5);
    if (nt == 0 || !tok_is(t[0], "%%MatrixMarket"))
        return MM_FAIL(r, r->line,
                       "found %s; expected the banner line '%s' first (is this a Matrix Market file?)",
                       quote(line, len).s, MM_BANNER_EXAMPLE);
    if (nt != 5)
        return MM_FAIL(r, r->line,
                       "banner %s has %d words; expected 5: '%%%%MatrixMarket matrix <coordinate|array> "
                       "<real|integer|pattern> <general|symmetric|skew-symmetric>'",
                       quote(line, len).s, nt);
    if (!tok_is(t[1], "matrix"))
        return MM_FAIL(r, r->line, "found object %s in the banner; expected 'matrix'",
                       quote(t[1].s, t[1].n).s);

    if (tok_is(t[2], "coordinate"))
        h->coordinate = true;
    else if (tok_is(t[2], "array"))
        h->coordinate = false;
    else
        return MM_FAIL(r, r->line, "found format %s in the banner; expected 'coordinate' or 'array'",
                       quote(t[2].s, t[2].n).s);

    if (tok_is(t[3], "real"))
        h->field = FIELD_REAL;
    else if (tok_is(t[3], "integer"))
        h->field = FIELD_INTEGER;
    else if (tok_is(t[3], "pattern"))
        h->field = FIELD_PATTERN;
    else if (tok_is(t[3], "complex"))
        return MM_FAIL(r, r->line,
                       "field 'complex' is not supported (gpusolve solves real systems); expected "
                       "'real', 'integer' or 'pattern'");
    else
        return MM_FAIL(r, r->line, "found field %s in the banner; expected 'real', 'integer' or 'pattern'",
                       quote(t[3].s, t[3].n).s);

    if (tok_is(t[4], "general"))
        h->symmetry = SYM_GENERAL;
    else if (tok_is(t[4], "symmetric"))
        h->symmetry = SYM_SYMMETRIC;
    else if (tok_is(t[4], "skew-symmetric"))
        h->symmetry = SYM_SKEW;
    else if (tok_is(t[4], "hermitian"))
        return MM_FAIL(r, r->line,
                       "symmetry 'hermitian' is not supported (it needs complex values); expected "
                       "'general', 'symmetric' or 'skew-symmetric'");
    else
        return MM_FAIL(r, r->line,
                       "found symmetry %s in the banner; expected 'general', 'symmetric' or "
                       "'skew-symmetric'",
                       quote(t[4].s, t[4].n).s);

    if (!h->coordinate && h->field == FIELD_PATTERN)
        return MM_FAIL(r, r->line,
                       "found 'array pattern' in the banner; expected field 'real' or 'integer' for the "
                       "array format (pattern needs the coordinate format)");
    return GS_OK;
}

/* Skips comment and blank lines after the banner, then reads "rows columns [entries]". */
static gs_status read_size_line(mm_reader *r, mm_header *h)
{
    static const char *const names[] = {"rows", "columns", "entries"};
    const char *shape = h->coordinate ? "rows columns entries" : "rows columns";
    int want = h->coordinate ? 3 : 2;
    char *line;
    size_t len;
    for (;;) {
        GS_CALL(reader_next(r, &line, &len));
        if (!line)
            return MM_FAIL(r, r->line, "end of file after the header; expected the size line '%s'", shape);
        const char *p = line;
        while (is_blank(*p)) p++;
        if (*p != '\0' && *p != '%') break;
    }
    h->size_line = r->line;
    mm_tok t[3];
    int nt = split_tokens(line, t, 3);
    if (nt != want)
        return MM_FAIL(r, r->line, "found size line %s with %d numbers; expected %d: '%s'",
                       quote(line, len).s, nt, want, shape);
    long long v[3] = {0, 0, 0};
    for (int k = 0; k < want; k++) {
        num_result res = parse_ll(t[k], &v[k]);
        if (res == NUM_BAD)
            return MM_FAIL(r, r->line,
                           "found %s for the number of %s on the size line; expected non-negative "
                           "integers '%s'",
                           quote(t[k].s, t[k].n).s, names[k], shape);
        if (res == NUM_OK && v[k] < 0)
            return MM_FAIL(r, r->line,
                           "found a negative number of %s (%lld); expected non-negative integers '%s'",
                           names[k], v[k], shape);
        if (res == NUM_RANGE || v[k] > index_limit)
            return MM_FAIL(r, r->line,
                           "found %.*s %s on the size line, beyond the 32-bit index limit %lld; expected at "
                           "most %lld %s",
                           (int)t[k].n, t[k].s, names[k], index_limit, index_limit, names[k]);
    }
    h->nrows = v[0];
    h->ncols = v[1];
    if (h->coordinate) {
        h->entries = v[2];
    } else {
        if (h->ncols != 0 && h->nrows > index_limit / h->ncols)
            return MM_FAIL(r, r->line,
                           "a %lld x %lld array has more values than the 32-bit index limit %lld; "
                           "expected at most %lld values",
                           h->nrows, h->ncols, index_limit, index_limit);
        h->entries = h->nrows * h->ncols;
    }
    return GS_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Entries. */

/* COO triplets, grown as entries arrive (a hostile size line cannot make us allocate up front). */
typedef struct mm_coo {
    gs_int *ri, *ci;
    double *v;
    long long n, cap, max;
} mm_coo;

static gs_status coo_grow(mm_coo *c)
{
    long long cap = c->cap < MM_COO_INITIAL ? MM_COO_INITIAL : 2 * c->cap;
    if (cap > c->max) cap = c->max;
    if (cap <= c->n)
        return GS_ERROR(GS_ERR_INTERNAL, "triplet capacity %lld reached its maximum %lld", c->cap, c->max);
    GS_CALL(gs_realloc(&c->ri, (size_t)cap, sizeof *c->ri));
    GS_CALL(gs_realloc(&c->ci, (size_t)cap, sizeof *c->ci));
    GS_CALL(gs_realloc(&c->v, (size_t)cap, sizeof *c->v));
    c->cap = cap;
    return GS_OK;
}

static inline gs_status coo_push(mm_coo *c, gs_int i, gs_int j, double v)
{
    if (c->n == c->cap) GS_CALL(coo_grow(c));
    c->ri[c->n] = i;
    c->ci[c->n] = j;
    c->v[c->n] = v;
    c->n++;
    return GS_OK;
}

static void coo_free(mm_coo *c)
{
    gs_free(&c->ri);
    gs_free(&c->ci);
    gs_free(&c->v);
    c->n = c->cap = 0;
}

/* Is this line a comment or blank (allowed anywhere after the banner)? */
static bool skippable(const char *line)
{
    while (is_blank(*line)) line++;
    return *line == '\0' || *line == '%';
}

/* After the last declared entry only comments and blank lines may follow. */
static gs_status expect_no_more(mm_reader *r, const mm_header *h, const char *what, const char *whats)
{
    char *line;
    size_t len;
    for (;;) {
        GS_CALL(reader_next(r, &line, &len));
        if (!line) return GS_OK;
        if (!skippable(line))
            return MM_FAIL(r, r->line,
                           "found another %s %s after the %lld declared on line %lld; expected the end "
                           "of the file (more %s than the size line declares)",
                           what, quote(line, len).s, h->entries, h->size_line, whats);
    }
}

/* Reads the coordinate entries "row column [value]" into c, mirroring the off-diagonal ones of a
 * symmetric (a_ji = a_ij) or skew-symmetric (a_ji = -a_ij) matrix. */
static gs_status read_coordinate(mm_reader *r, const mm_header *h, mm_coo *c)
{
    const bool pattern = h->field == FIELD_PATTERN;
    const char *shape = pattern ? "row column" : "row column value";
    const int want = pattern ? 2 : 3;
    long long max = h->symmetry == SYM_GENERAL ? h->entries : 2 * h->entries;
    c->max = max < index_limit ? max : index_limit;
    long long count = 0, first_lower = 0, first_upper = 0;
    char *line;
    size_t len;
    while (count < h->entries) {
        GS_CALL(reader_next(r, &line, &len));
        if (!line)
            return MM_FAIL(r, r->line,
                           "end of file after %lld of the %lld entries declared on line %lld; expected "
                           "%lld more %s (is the file truncated?)",
                           count, h->entries, h->size_line, h->entries - count,
                           h->entries - count == 1 ? "entry" : "entries");
        mm_tok t[3];
        int nt = split_tokens(line, t, 3);
        if (nt == 0 || t[0].s[0] == '%') continue;
        count++;
        if (nt < want)
            return MM_FAIL(r, r->line, "found entry %s with %d number%s; expected '%s'%s", quote(line, len).s,
                           nt, nt == 1 ? "" : "s", shape, truncation_hint(r));
        if (nt > want)
            return MM_FAIL(r, r->line, "found extra text %s after the entry; expected only '%s'",
                           quote_rest(t[want - 1]).s, shape);
        gs_int i, j;
        double v = 1.0;
        GS_CALL(parse_index(r, t[0], "row", h->nrows, &i));
        GS_CALL(parse_index(r, t[1], "column", h->ncols, &j));
        if (!pattern) GS_CALL(parse_value(r, h, t[2], &v));

        if (h->symmetry == SYM_GENERAL || i == j) {
            if (h->symmetry == SYM_SKEW && i == j && v != 0.0)
                return MM_FAIL(r, r->line,
                               "diagonal entry (%d,%d) %s%s in a skew-symmetric matrix; expected the "
                               "diagonal to be zero or absent (a_ii = -a_ii)",
                               i + 1, j + 1, pattern ? "(pattern entry, value 1)" : "= ",
                               pattern ? "" : quote(t[2].s, t[2].n).s);
            if (c->n + 1 > index_limit)
                return MM_FAIL(r, r->line,
                               "more than %lld entries; expected at most %lld (the 32-bit index limit)",
                               index_limit, index_limit);
            GS_CALL(coo_push(c, i, j, v));
            continue;
        }
        /* one triangle only, or mirrored pairs would be counted twice */
        if (i > j && first_upper)
            return MM_FAIL(r, r->line,
                           "entry (%d,%d) lies below the diagonal but line %lld holds one above it; "
                           "expected a %s file to store one triangle only (the lower: row >= column)",
                           i + 1, j + 1, first_upper, symmetry_names[h->symmetry]);
        if (i < j && first_lower)
            return MM_FAIL(r, r->line,
                           "entry (%d,%d) lies above the diagonal but line %lld holds one below it; "
                           "expected a %s file to store one triangle only (the lower: row >= column)",
                           i + 1, j + 1, first_lower, symmetry_names[h->symmetry]);
        if (i > j && !first_lower) first_lower = r->line;
        if (i < j && !first_upper) first_upper = r->line;
        if (c->n + 2 > index_limit)
            return MM_FAIL(r, r->line,
                           "the %s expansion (each off-diagonal entry stored twice) exceeds %lld "
                           "entries; expected at most %lld entries after mirroring (the 32-bit index "
                           "limit)",
                           symmetry_names[h->symmetry], index_limit, index_limit);
        GS_CALL(coo_push(c, i, j, v));
        GS_CALL(coo_push(c, j, i, h->symmetry == SYM_SKEW ? -v : v));
    }
    return expect_no_more(r, h, "entry", "entries");
}

/* Reads the h->entries values of an array file, one per line, column by column. */
static gs_status read_array(mm_reader *r, const mm_header *h, double **vals)
{
    gs_status st = GS_OK;
    double *x = NULL;
    long long count = 0, cap = 0;
    char *line;
    size_t len;
    while (count < h->entries) {
        GS_TRY(reader_next(r, &line, &len));
        if (!line)
            GS_FAIL(GS_ERR_IO,
                    "%s:%lld: end of file after %lld of the %lld values declared on line %lld; "
                    "expected %lld more %s (is the file truncated?)",
                    r->path, r->line, count, h->entries, h->size_line, h->entries - count,
                    h->entries - count == 1 ? "value" : "values");
        mm_tok t[1];
        int nt = split_tokens(line, t, 1);
        if (nt == 0 || t[0].s[0] == '%') continue;
        if (nt > 1)
            GS_FAIL(GS_ERR_IO, "%s:%lld: found extra text %s after the value; expected one value per line",
                    r->path, r->line, quote_rest(t[0]).s);
        if (count == cap) {
            cap = cap < MM_COO_INITIAL ? MM_COO_INITIAL : 2 * cap;
            if (cap > h->entries) cap = h->entries;
            GS_TRY(gs_realloc(&x, (size_t)cap, sizeof *x));
        }
        GS_TRY(parse_value(r, h, t[0], &x[count]));
        count++;
    }
    GS_TRY(expect_no_more(r, h, "value", "values"));
    *vals = x;
    x = NULL;
cleanup:
    gs_free(&x);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Public readers. */

/* Repeated entries of one position are summed (as Matrix Market readers do); finite values can add up
 * to +-inf, which would poison every later computation. */
static gs_status duplicate_overflow(const char *path, gs_int i, gs_int j, double sum)
{
    return GS_ERROR(GS_ERR_IO,
                    "%s: the repeated entries at (%d,%d) add up to %g, beyond the range of a double; "
                    "expected the entries given for one position to sum to a finite number",
                    path, (int)i + 1, (int)j + 1, sum);
}

gs_status gs_mm_read_matrix(const char *path, gs_csr *A, gs_mm_info *info)
{
    gs_status st = GS_OK;
    mm_reader r = {0};
    mm_coo coo = {0};
    mm_header h = {0};
    if (!path || !A) return GS_ERROR(GS_ERR_ARG, "gs_mm_read_matrix: path and A must not be NULL");
    memset(A, 0, sizeof *A);
    if (info) memset(info, 0, sizeof *info);

    GS_TRY(reader_open(&r, path));
    GS_TRY(read_banner(&r, &h));
    if (!h.coordinate) {
        st = MM_FAIL(&r, 1,
                     "found format 'array' (a dense matrix or a vector); expected 'coordinate' for a "
                     "sparse matrix");
        goto cleanup;
    }
    GS_TRY(read_size_line(&r, &h));
    if (h.nrows != h.ncols) {
        st = MM_FAIL(&r, h.size_line,
                     "found a %lld x %lld matrix%s; expected a square matrix (rows = columns)", h.nrows,
                     h.ncols, h.ncols == 1 ? " (a vector?)" : "");
        goto cleanup;
    }
    if (h.nrows == 0) {
        st = MM_FAIL(&r, h.size_line, "found a 0 x 0 matrix; expected at least one row");
        goto cleanup;
    }
    GS_TRY(read_coordinate(&r, &h, &coo));
    /* a square matrix with more rows than stored entries has a row without any entry: it is singular,
     * and no solver can use it. Refused here, before anything of the declared size is allocated, so a
     * tiny file declaring a huge size costs no more memory than its entries. */
    if (h.nrows > coo.n) {
        st = MM_FAIL(&r, h.size_line,
                     "the size line declares %lld rows but the file stores only %lld entr%s%s: at least %lld rows "
                     "hold no entry, so the matrix is singular (a row of zeros); expected at least one entry in "
                     "every row (is the size line right?)",
                     h.nrows, coo.n, coo.n == 1 ? "y" : "ies",
                     h.symmetry != SYM_GENERAL && coo.n > h.entries ? " (counting both mirrored halves)" : "",
                     h.nrows - coo.n);
        goto cleanup;
    }
    /* sizes and coo.n are at most index_limit <= GS_INT_MAX, checked above */
    GS_TRY(gs_csr_from_coo((gs_int)h.nrows, (gs_int)h.ncols, (gs_int)coo.n, coo.ri, coo.ci, coo.v, A));
    /* every value read is finite, but repeated entries are summed and the sum can overflow */
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (!isfinite(A->val[k])) {
                st = duplicate_overflow(path, i, A->colind[k], A->val[k]);
                gs_csr_free(A);
                goto cleanup;
            }
    if (info) {
        snprintf(info->field, sizeof info->field, "%s", field_names[h.field]);
        snprintf(info->symmetry, sizeof info->symmetry, "%s", symmetry_names[h.symmetry]);
        info->nrows = (gs_int)h.nrows;
        info->ncols = (gs_int)h.ncols;
        info->entries_in_file = h.entries;
    }
    warn_underflow(&r);
cleanup:
    reader_close(&r);
    coo_free(&coo);
    return st;
}

gs_status gs_mm_read_vector(const char *path, gs_int expected_n, double **x, gs_int *n)
{
    gs_status st = GS_OK;
    mm_reader r = {0};
    mm_coo coo = {0};
    mm_header h = {0};
    double *xv = NULL;
    if (!path || !x || !n || expected_n < 0)
        return GS_ERROR(GS_ERR_ARG,
                        "gs_mm_read_vector: path, x and n must not be NULL and expected_n "
                        "must be >= 0 (got %d)",
                        (int)expected_n);
    *x = NULL;
    *n = 0;

    GS_TRY(reader_open(&r, path));
    GS_TRY(read_banner(&r, &h));
    if (h.symmetry != SYM_GENERAL) {
        st = MM_FAIL(&r, 1, "found symmetry '%s' for a vector; expected 'general'",
                     symmetry_names[h.symmetry]);
        goto cleanup;
    }
    GS_TRY(read_size_line(&r, &h));
    if (h.ncols != 1) {
        st = MM_FAIL(&r, h.size_line, "found a %lld x %lld %s; expected a vector (n x 1: one column)",
                     h.nrows, h.ncols, h.coordinate ? "matrix" : "array");
        goto cleanup;
    }
    if (h.nrows == 0) {
        st = MM_FAIL(&r, h.size_line, "found a vector of length 0; expected at least one value");
        goto cleanup;
    }
    if (expected_n > 0 && h.nrows != expected_n) {
        st = MM_FAIL(&r, h.size_line, "found a vector of length %lld; expected length %d", h.nrows,
                     (int)expected_n);
        goto cleanup;
    }
    if (h.coordinate) {
        GS_TRY(read_coordinate(&r, &h, &coo));
        GS_TRY(GS_CALLOC(xv, h.nrows));
        /* missing entries are 0, repeated ones summed (as for matrices) */
        for (long long k = 0; k < coo.n; k++) xv[coo.ri[k]] += coo.v[k];
        for (long long k = 0; k < h.nrows; k++)
            if (!isfinite(xv[k])) {
                st = duplicate_overflow(path, (gs_int)k, 0, xv[k]);
                goto cleanup;
            }
    } else {
        GS_TRY(read_array(&r, &h, &xv));
    }
    *x = xv;
    *n = (gs_int)h.nrows;
    xv = NULL;
    warn_underflow(&r);
cleanup:
    reader_close(&r);
    coo_free(&coo);
    gs_free(&xv);
    return st;
}
