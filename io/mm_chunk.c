/* The entry lines of one chunk of a Matrix Market file: "row column [value]" (coordinate) or "value"
 * (array), comments and blank lines skipped. One loop serves two passes: the parallel pass (any thread,
 * from a blank state: stores triplets, stops at the first questionable line) and the exact pass (the
 * serial reader's checks given the state the lines before the chunk left, with its messages). Numbers:
 * indices as decimal integers; values correctly rounded (decimal forms a double holds exactly are
 * converted directly, everything else by strtod on the token), so the result is strtod's bit for bit. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"
#include "io/mm_internal.h"

/* ------------------------------------------------------------------------------------------------ */
/* Numbers. */

typedef enum { V_OK, V_NOTNUM, V_OVERFLOW, V_NONFINITE, V_INTRANGE, V_NOMEM } val_res;
typedef enum { I_OK, I_NOTINT, I_BEYOND, I_ZERO, I_NEG } idx_res;

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Whether a number's digits before any exponent are all zero ("0", "-0.000e5"): such a value is zero
 * exactly, while a nonzero one that strtod returns as 0 has underflowed. */
static bool zero_mantissa(mm_tok t)
{
    for (size_t k = 0; k < t.n && t.s[k] != 'e' && t.s[k] != 'E'; k++)
        if (t.s[k] >= '1' && t.s[k] <= '9') return false;
    return true;
}

/* [+-]digits[.digits][(e|E)[+-]digits] at s (before e) with at most 19 significant digits forming m <= 2^53
 * and a decimal exponent within +-22: m and 10^|e| are exact doubles, so one multiplication or division
 * rounds once and gives the correctly rounded value, which is what strtod returns (Clinger's fast path).
 * Returns where the number ends (the caller checks what follows), or NULL for anything else. */
static inline const char *scan_decimal(const char *s, const char *e, double *v)
{
#if FLT_EVAL_METHOD != 0
    (void)s, (void)e, (void)v;
    return NULL;
#else
    bool neg = false, any = false;
    if (s < e && (*s == '+' || *s == '-')) neg = *s++ == '-';
    uint64_t m = 0;
    int digits = 0, exp10 = 0;
    for (; s < e && (unsigned)(*s - '0') <= 9; s++, any = true) {
        if (m == 0 && *s == '0') continue;
        if (digits++ == 19) return NULL;
        m = 10 * m + (uint64_t)(*s - '0');
    }
    if (s < e && *s == '.') {
        for (s++; s < e && (unsigned)(*s - '0') <= 9; s++, any = true) {
            exp10--;
            if (m == 0 && *s == '0') continue;
            if (digits++ == 19) return NULL;
            m = 10 * m + (uint64_t)(*s - '0');
        }
    }
    if (!any) return NULL;
    if (s < e && (*s == 'e' || *s == 'E')) {
        s++;
        bool eneg = false;
        if (s < e && (*s == '+' || *s == '-')) eneg = *s++ == '-';
        if (s == e || (unsigned)(*s - '0') > 9) return NULL;
        int ev = 0;
        for (; s < e && (unsigned)(*s - '0') <= 9; s++)
            if (ev < 100000) ev = 10 * ev + (*s - '0');
        exp10 += eneg ? -ev : ev;
    }
    if (m == 0) {
        *v = neg ? -0.0 : 0.0;
        return s;
    }
    if (m > ((uint64_t)1 << 53) || exp10 < -22 || exp10 > 22) return NULL;
    double d = (double)m;
    d = exp10 < 0 ? d / pow10_exact[-exp10] : d * pow10_exact[exp10];
    *v = neg ? -d : d;
    return s;
#endif
}

/* A whole token in scan_decimal's form. */
static bool fast_real(mm_tok t, double *v) { return scan_decimal(t.s, t.s + t.n, v) == t.s + t.n; }

/* A finite real number: strtod's value of the whole token. *underflow: a nonzero value read as 0. */
static val_res parse_real(mm_tok t, double *v, bool *underflow)
{
    *underflow = false;
    if (fast_real(t, v)) return V_OK;
    char small[128], *copy = small;
    if (t.n >= sizeof small && gs_malloc(&copy, t.n + 1, 1) != GS_OK) return V_NOMEM;
    memcpy(copy, t.s, t.n);
    copy[t.n] = '\0';
    char *end = NULL;
    errno = 0;
    double x = strtod(copy, &end);
    bool whole = t.n > 0 && end == copy + t.n;
    int err = errno;
    if (copy != small) gs_free(&copy);
    if (!whole) return V_NOTNUM;
    if (!isfinite(x)) return err == ERANGE ? V_OVERFLOW : V_NONFINITE;
    if (x == 0.0 && !zero_mantissa(t)) *underflow = true;
    *v = x;
    return V_OK;
}

static val_res parse_value(const mm_header *h, mm_tok t, double *v, bool *underflow)
{
    if (h->field != FIELD_INTEGER) return parse_real(t, v, underflow);
    *underflow = false;
    long long x = 0;
    mm_num res = mm_parse_ll(t, &x);
    if (res == NUM_BAD) return V_NOTNUM;
    if (res == NUM_RANGE) return V_INTRANGE;
    *v = (double)x;
    return V_OK;
}

/* A 1-based index in 1..n, returned 0-based. */
static idx_res parse_index(mm_tok t, long long n, gs_int *idx)
{
    long long v = 0;
    size_t k = 0;
    /* the common case: a short run of digits */
    if (t.n > 0 && t.n < 10) {
        for (; k < t.n && (unsigned)(t.s[k] - '0') <= 9; k++) v = 10 * v + (t.s[k] - '0');
        if (k == t.n && v >= 1 && v <= n) {
            *idx = (gs_int)(v - 1);
            return I_OK;
        }
    }
    mm_num res = mm_parse_ll(t, &v);
    if (res == NUM_BAD) return I_NOTINT;
    if (res == NUM_RANGE || v > n) return I_BEYOND;
    if (v == 0) return I_ZERO;
    if (v < 0) return I_NEG;
    *idx = (gs_int)(v - 1);
    return I_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* The pass. */

static size_t stripped_len(const char *s, const char *stop)
{
    while (stop > s && mm_is_blank(stop[-1])) stop--;
    return (size_t)(stop - s);
}

/* The rest of the line after token t, blanks skipped, quoted (for "extra text" messages). */
static mm_quote quote_rest(mm_tok t, const char *stop)
{
    const char *p = t.s + t.n;
    while (p < stop && mm_is_blank(*p)) p++;
    return mm_quote_text(p, stripped_len(p, stop));
}

/* Room for two more triplets (or values) in c. */
static bool reserve(mm_chunk *c, long long n, bool array)
{
    if (n + 2 <= c->cap) return true;
    long long cap = c->cap ? c->cap + c->cap / 2 + 2 : (long long)((c->end - c->begin) / 12) + 16;
    if (gs_realloc(&c->v, (size_t)cap, sizeof *c->v) != GS_OK) return false;
    if (!array && (gs_realloc(&c->ri, (size_t)cap, sizeof *c->ri) != GS_OK ||
                   gs_realloc(&c->ci, (size_t)cap, sizeof *c->ci) != GS_OK))
        return false;
    c->cap = cap;
    return true;
}

/* Character classes of the tokenizer: 0 a token's byte, 1 a blank, 2 the newline. */
static const unsigned char cls[256] = {['\n'] = 2, [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

/* A 1-based index in 1..max at p, blanks skipped first, of at most 10 digits: where it ends (0-based value
 * in *idx), or NULL. end NULL: the text holds a newline ahead of p, which stops the scan (the bound checks
 * then fold away). */
static inline const char *scan_index(const char *p, const char *end, long long max, gs_int *idx)
{
    while ((!end || p < end) && cls[(unsigned char)*p] == 1) p++;
    const char *b = p;
    long long n = 0;
    while ((!end || p < end) && (unsigned)(*p - '0') <= 9 && p - b < 10) n = 10 * n + (*p++ - '0');
    if (p == b || n < 1 || n > max) return NULL;
    *idx = (gs_int)(n - 1);
    return p;
}

/* The common coordinate line "row column [value]" (digits, blanks, a plain decimal value) parsed in one
 * pass; false for anything else (comments, signs, long or inexact numbers, errors), which the general
 * path then reads. */
static bool fast_entry(const mm_header *h, const char *p, const char *end, gs_int ij[2], double *v, const char **stop)
{
    const char *s = p;
    const bool pattern = h->field == FIELD_PATTERN;
    for (int k = 0; k < 2; k++) {
        p = scan_index(p, end, k ? h->ncols : h->nrows, &ij[k]);
        if (!p || (p < end && cls[(unsigned char)*p] != 1 && !(k == 1 && pattern && *p == '\n'))) return false;
    }
    *v = 1.0;
    if (!pattern) {
        while (p < end && cls[(unsigned char)*p] == 1) p++;
        const char *b = p;
        while (p < end && cls[(unsigned char)*p] == 0) p++;
        mm_tok t = {b, (size_t)(p - b)};
        if (t.n == 0) return false;
        if (h->field == FIELD_INTEGER) {
            long long x = 0;
            if (mm_parse_ll(t, &x) != NUM_OK) return false;
            *v = (double)x;
        } else if (!fast_real(t, v)) {
            return false;
        }
    }
    while (p < end && cls[(unsigned char)*p] == 1) p++;
    if ((p < end && *p != '\n') || (size_t)(p - s) >= MM_LINE_MAX) return false;
    *stop = p;
    return true;
}

/* In the parallel pass a failing check stops the chunk (the exact pass judges it); in the exact pass
 * it is the error, at the line's number in the file. */
#define STOP(...)                                                                                             \
    do {                                                                                                      \
        if (!x) {                                                                                             \
            c->stopped = true;                                                                                \
            goto done;                                                                                        \
        }                                                                                                     \
        return MM_FAIL(h->path, abs_line, __VA_ARGS__);                                                       \
    } while (0)

#define LINE_TEXT  mm_quote_text(s, stripped_len(s, stop)).s
#define TRUNC_HINT (stop == end ? " (the last line has no newline: is the file truncated?)" : "")

static const char *value_kind(const mm_header *h) { return h->coordinate ? "entry" : "value"; }

enum { FLD_OK, FLD_STOP, FLD_NOMEM };

/* The indices (coordinate files) and the value (unless pattern) of a line's tokens t: FLD_OK, FLD_NOMEM, or
 * FLD_STOP with *st the line's error when report (the serial pass; the parallel one only stops). stop is
 * the line's end, end the chunk's end. */
static int entry_fields(const mm_header *h, const mm_tok *t, const char *stop, const char *end, long long abs_line,
                        bool report, gs_int ij[2], double *v, bool *underflow, gs_status *st)
{
    const bool pattern = h->field == FIELD_PATTERN, array = !h->coordinate;
    const int want = array ? 1 : pattern ? 2 : 3;
#define FIELD_STOP(...)                                                      \
    do {                                                                     \
        if (report) *st = MM_FAIL(h->path, abs_line, __VA_ARGS__);           \
        return FLD_STOP;                                                       \
    } while (0)
    for (int k = 0; !array && k < 2; k++) {
        const char *what = k ? "column" : "row";
        long long n = k ? h->ncols : h->nrows;
        switch (parse_index(t[k], n, &ij[k])) {
        case I_OK: break;
        case I_NOTINT:
            FIELD_STOP("%s index %s is not an integer; expected an integer in 1..%lld%s", what,
                       mm_quote_text(t[k].s, t[k].n).s, n, TRUNC_HINT);
        case I_BEYOND:
            FIELD_STOP("%s index %s is beyond the size %lld; expected 1..%lld", what, mm_quote_text(t[k].s, t[k].n).s,
                       n, n);
        case I_ZERO: FIELD_STOP("%s index 0; expected 1..%lld (Matrix Market indices start at 1)", what, n);
        case I_NEG:
            FIELD_STOP("%s index %s is negative; expected 1..%lld", what, mm_quote_text(t[k].s, t[k].n).s, n);
        }
    }
    if (pattern) return FLD_OK;
    mm_tok tv = t[want - 1];
    switch (parse_value(h, tv, v, underflow)) {
    case V_OK: break;
    case V_NOMEM: return FLD_NOMEM;
    case V_NOTNUM:
        if (h->field == FIELD_INTEGER)
            FIELD_STOP("value %s is not an integer; expected an integer (the banner declares field 'integer')%s",
                       mm_quote_text(tv.s, tv.n).s, TRUNC_HINT);
        FIELD_STOP("value %s is not a number; expected a real number such as 1.5e-3%s", mm_quote_text(tv.s, tv.n).s,
                   TRUNC_HINT);
    case V_INTRANGE:
        FIELD_STOP("integer value %s is out of range; expected at most %lld in magnitude", mm_quote_text(tv.s, tv.n).s,
                   LLONG_MAX);
    case V_OVERFLOW:
        FIELD_STOP("value %s overflows a double; expected a finite number below 1.8e308 in magnitude",
                   mm_quote_text(tv.s, tv.n).s);
    case V_NONFINITE:
        FIELD_STOP("value %s is not finite (NaN or Inf); expected a finite real number", mm_quote_text(tv.s, tv.n).s);
    }
#undef FIELD_STOP
    return FLD_OK;
}

/* What the lines of a chunk read so far established (the parallel pass's state). */
typedef struct fast_state {
    long long line, count, pushes, fl, fu;
} fast_state;

/* The common lines of a real coordinate file, many at a time: "row column value" with indices in range
 * and a plain decimal value (scan_decimal's form), in a general or symmetric file. Starts at a line's
 * beginning and returns where it stopped: at fast_end, or at the first line it does not take -- one of
 * another form, one the checks of run() must judge (more entries than declared, the index limit, the
 * other triangle of a symmetric file), or each 65536th line (run()'s interrupt check) -- which run() then
 * reads. Every line that starts before fast_end ends with a newline before it, so no scan can pass it.
 * Records whether the triplets are in row-major order with increasing columns (mm_chunk.unsorted). */
static const char *fast_lines(const mm_header *h, mm_chunk *c, const char *p, const char *fast_end, fast_state *f,
                              bool *nomem)
{
    const bool sym = h->symmetry == SYM_SYMMETRIC;
    const long long limit = mm_index_limit(), nr = h->nrows, nc = h->ncols, entries = h->entries;
    long long line = f->line, count = f->count, pushes = f->pushes;
    bool unsorted = c->unsorted;
    while (p < fast_end && ((line + 1) & 0xFFFF) != 0 && count < entries) {
        const char *q = p;
        gs_int ij[2];
        for (int k = 0; k < 2; k++) {
            q = scan_index(q, NULL, k ? nc : nr, &ij[k]);
            if (!q || cls[(unsigned char)*q] != 1) goto out;
        }
        while (cls[(unsigned char)*q] == 1) q++;
        double v;
        q = scan_decimal(q, fast_end, &v);
        if (!q || cls[(unsigned char)*q] == 0) goto out;
        while (cls[(unsigned char)*q] == 1) q++;
        if (*q != '\n' || (size_t)(q - p) >= MM_LINE_MAX) goto out;
        const gs_int i = ij[0], j = ij[1];
        const bool mirror = sym && i != j;
        if (pushes + (mirror ? 2 : 1) > limit) goto out;
        if (mirror && ((i > j && f->fu) || (i < j && f->fl))) goto out;
        if (!reserve(c, pushes, false)) {
            *nomem = true;
            goto out;
        }
        if (pushes > 0 && !(i > c->ri[pushes - 1] || (i == c->ri[pushes - 1] && j > c->ci[pushes - 1])))
            unsorted = true;
        c->ri[pushes] = i, c->ci[pushes] = j, c->v[pushes] = v;
        pushes++;
        line++;
        if (mirror) {
            if (i > j && !f->fl) f->fl = line;
            if (i < j && !f->fu) f->fu = line;
            c->ri[pushes] = j, c->ci[pushes] = i, c->v[pushes] = v;
            pushes++;
            unsorted = true;
        }
        count++;
        p = q + 1;
    }
out:
    f->line = line;
    f->count = count;
    f->pushes = pushes;
    c->unsorted = unsorted;
    return p;
}

/* A value of line `line` (of the chunk) read as 0 below the smallest double: counted, the first one kept. */
static void note_underflow(mm_chunk *c, long long line, mm_tok t)
{
    if (c->underflows++ == 0) {
        c->underflow_line = line;
        mm_quote q = mm_quote_text(t.s, t.n);
        memcpy(c->underflow_text, q.s, sizeof q.s);
    }
}

/* Where fast_lines may read in [p, end): the parallel pass over a real coordinate file (general or
 * symmetric) takes its common lines many at a time, up to the chunk's last newline; p: nowhere. */
static const char *fast_region_end(const mm_header *h, const mm_state *x, const char *p, const char *end)
{
    if (x || !h->coordinate || h->field != FIELD_REAL || (h->symmetry != SYM_GENERAL && h->symmetry != SYM_SYMMETRIC))
        return p;
    while (end > p && end[-1] != '\n') end--;
    return end;
}

/* Both passes: x == NULL for the parallel one (state blank, line numbers relative to the chunk). */
static gs_status run(const mm_header *h, mm_chunk *c, const mm_state *x)
{
    const bool pattern = h->field == FIELD_PATTERN, array = !h->coordinate;
    const int want = array ? 1 : pattern ? 2 : 3;
    const char *shape = pattern ? "row column" : "row column value";
    const char *symname = mm_symmetry_names[h->symmetry];
    const long long limit = mm_index_limit(), base = x ? x->line : 0;
    long long line = 0, abs_line = 0, count = x ? x->count : 0, pushes = x ? x->pushes : 0;
    long long fl = x ? x->first_lower : 0, fu = x ? x->first_upper : 0;
    const char *p = c->begin, *end = c->end;
    const char *fast_end = fast_region_end(h, x, p, end);
    while (p < end) {
        if (p < fast_end) {
            fast_state f = {line, count, pushes, fl, fu};
            bool nomem = false;
            p = fast_lines(h, c, p, fast_end, &f, &nomem);
            line = f.line, count = f.count, pushes = f.pushes, fl = f.fl, fu = f.fu;
            if (nomem) goto nomem;
            if (p >= end) break;
        }
        line++;
        abs_line = base + line;
        if (!x && (line & 0xFFFF) == 0 && gs_interrupt_requested()) {
            c->st = GS_ERR_INTERRUPTED;
            goto done;
        }
        gs_int ij[2] = {0, 0};
        double v = 1.0;
        const char *s = p, *stop = NULL;
        if (!x && h->coordinate && fast_entry(h, p, end, ij, &v, &stop)) {
            p = stop < end ? stop + 1 : end;
            if (count >= h->entries) {
                c->stopped = true;
                goto done;
            }
            count++;
            goto entry;
        }
        /* tokens (the first want + 1), then the line's end */
        mm_tok t[4];
        int nt = 0;
        for (;;) {
            while (p < end && cls[(unsigned char)*p] == 1) p++;
            if (p == end || *p == '\n') break;
            const char *b = p;
            while (p < end && cls[(unsigned char)*p] == 0) p++;
            t[nt++] = (mm_tok){b, (size_t)(p - b)};
            if (nt == want + 1) break;
        }
        if (p < end && *p != '\n') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl : end;
        }
        stop = p;
        if (p < end) p++;

        if ((size_t)(stop - s) >= MM_LINE_MAX)
            STOP("found a line longer than %zu bytes; expected the short lines of a Matrix Market text file",
                 MM_LINE_MAX);
        /* (the fast paths take no line with a NUL byte: it is neither a digit nor a blank) */
        if (memchr(s, '\0', (size_t)(stop - s))) STOP("found a NUL byte (binary data); expected a text file");
        if (nt == 0 || t[0].s[0] == '%') continue;
        if (count >= h->entries)
            STOP("found another %s %s after the %lld declared on line %lld; expected the end of the file (more %s "
                 "than the size line declares)",
                 value_kind(h), LINE_TEXT, h->entries, h->size_line, array ? "values" : "entries");
        count++;
        if (array && nt > 1) STOP("found extra text %s after the value; expected one value per line", quote_rest(t[0], stop).s);
        if (!array && nt < want)
            STOP("found entry %s with %d number%s; expected '%s'%s", LINE_TEXT, nt, nt == 1 ? "" : "s", shape,
                 TRUNC_HINT);
        if (!array && nt > want)
            STOP("found extra text %s after the entry; expected only '%s'", quote_rest(t[want - 1], stop).s, shape);
        bool underflow = false;
        gs_status fst = GS_OK;
        switch (entry_fields(h, t, stop, end, abs_line, x != NULL, ij, &v, &underflow, &fst)) {
        case FLD_OK: break;
        case FLD_NOMEM: c->st = GS_ERR_MEM; goto done;
        case FLD_STOP:
            if (!x) {
                c->stopped = true;
                goto done;
            }
            return fst;
        }
        if (underflow && !x) note_underflow(c, line, t[want - 1]);
        if (array) {
            if (!x) {
                if (!reserve(c, pushes, true)) goto nomem;
                c->v[pushes] = v;
            }
            pushes++;
            continue;
        }
    entry:;
        gs_int i = ij[0], j = ij[1];
        if (h->symmetry == SYM_GENERAL || i == j) {
            if (h->symmetry == SYM_SKEW && i == j && v != 0.0)
                STOP("diagonal entry (%d,%d) %s%s in a skew-symmetric matrix; expected the diagonal to be zero or "
                     "absent (a_ii = -a_ii)",
                     i + 1, j + 1, pattern ? "(pattern entry, value 1)" : "= ",
                     pattern ? "" : mm_quote_text(t[2].s, t[2].n).s);
            if (pushes + 1 > limit)
                STOP("more than %lld entries; expected at most %lld (the 32-bit index limit)", limit, limit);
            if (!x) {
                if (!reserve(c, pushes, false)) goto nomem;
                if (pushes > 0 && !(i > c->ri[pushes - 1] || (i == c->ri[pushes - 1] && j > c->ci[pushes - 1])))
                    c->unsorted = true;
                c->ri[pushes] = i, c->ci[pushes] = j, c->v[pushes] = v;
            }
            pushes++;
            continue;
        }
        /* one triangle only, or mirrored pairs would be counted twice */
        if (i > j && fu)
            STOP("entry (%d,%d) lies below the diagonal but line %lld holds one above it; expected a %s file to "
                 "store one triangle only (the lower: row >= column)",
                 i + 1, j + 1, fu, symname);
        if (i < j && fl)
            STOP("entry (%d,%d) lies above the diagonal but line %lld holds one below it; expected a %s file to "
                 "store one triangle only (the lower: row >= column)",
                 i + 1, j + 1, fl, symname);
        if (i > j && !fl) fl = abs_line;
        if (i < j && !fu) fu = abs_line;
        if (pushes + 2 > limit)
            STOP("the %s expansion (each off-diagonal entry stored twice) exceeds %lld entries; expected at most "
                 "%lld entries after mirroring (the 32-bit index limit)",
                 symname, limit, limit);
        if (!x) {
            if (!reserve(c, pushes, false)) goto nomem;
            c->ri[pushes] = i, c->ci[pushes] = j, c->v[pushes] = v;
            c->ri[pushes + 1] = j, c->ci[pushes + 1] = i, c->v[pushes + 1] = h->symmetry == SYM_SKEW ? -v : v;
            c->unsorted = true;
        }
        pushes += 2;
    }
done:
    if (!x) {
        c->nlines = line;
        c->count = count;
        c->pushes = pushes;
        c->first_lower = fl;
        c->first_upper = fu;
    }
    return GS_OK;
nomem:
    c->st = GS_ERR_MEM;
    goto done;
}

void mm_chunk_scan(const mm_header *h, mm_chunk *c) { (void)run(h, c, NULL); }

gs_status mm_chunk_check(const mm_header *h, const mm_chunk *c, const mm_state *s)
{
    mm_chunk scratch = *c; /* the exact pass stores nothing */
    return run(h, &scratch, s);
}

void mm_chunk_free(mm_chunk *c)
{
    gs_free(&c->ri);
    gs_free(&c->ci);
    gs_free(&c->v);
    c->cap = 0;
}
