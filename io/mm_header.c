/* Matrix Market header: the banner line and the size line (after comments and blank lines), plus the
 * messages, tokens and integers the reader's parts share. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "io/mm_internal.h"
#include "io/mmio_testing.h"

const char *const mm_field_names[] = {"real", "integer", "pattern"};
const char *const mm_symmetry_names[] = {"general", "symmetric", "skew-symmetric"};

/* Every size and entry count must fit the 32-bit gs_int; tests lower this to reach the checks. */
static long long index_limit = GS_INT_MAX;

void gs_mm_testing_set_index_limit(long long limit) { index_limit = limit > 0 ? limit : GS_INT_MAX; }
long long mm_index_limit(void) { return index_limit; }

int mm_threads(const gs_mm_read_options *opt)
{
    if (opt && opt->threads > 0) return opt->threads;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

gs_status mm_error(const char *path, long long line, const char *file, int srcline, const char *fmt, ...)
{
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gs_error_set(GS_ERR_IO, file, srcline, "%s:%lld: %s", path, line, what);
}

mm_quote mm_quote_text(const char *s, size_t n)
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

int mm_split(const char *p, const char *end, mm_tok *tok, int max)
{
    int count = 0;
    for (;;) {
        while (p < end && mm_is_blank(*p)) p++;
        if (p == end) return count;
        const char *s = p;
        while (p < end && !mm_is_blank(*p)) p++;
        if (count < max) tok[count] = (mm_tok){s, (size_t)(p - s)};
        count++;
    }
}

bool mm_tok_is(mm_tok t, const char *word)
{
    return strlen(word) == t.n && strncasecmp(t.s, word, t.n) == 0;
}

mm_num mm_parse_ll(mm_tok t, long long *v)
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

/* ------------------------------------------------------------------------------------------------ */

gs_status mm_read_banner(io_input *in, mm_header *h)
{
    const char *line, *path = in->path;
    size_t len;
    h->path = path;
    GS_CALL(io_text_line(in, &line, &len));
    if (!line) return MM_FAIL(path, 1, "the file is empty; expected the banner line '%s' first", MM_BANNER_EXAMPLE);
    mm_tok t[5];
    int nt = mm_split(line, line + len, t, 5);
    long long ln = in->line;
    if (nt == 0 || !mm_tok_is(t[0], "%%MatrixMarket"))
        return MM_FAIL(path, ln, "found %s; expected the banner line '%s' first (is this a Matrix Market file?)",
                       mm_quote_text(line, len).s, MM_BANNER_EXAMPLE);
    if (nt != 5)
        return MM_FAIL(path, ln,
                       "banner %s has %d words; expected 5: '%%%%MatrixMarket matrix <coordinate|array> "
                       "<real|integer|pattern> <general|symmetric|skew-symmetric>'",
                       mm_quote_text(line, len).s, nt);
    if (!mm_tok_is(t[1], "matrix"))
        return MM_FAIL(path, ln, "found object %s in the banner; expected 'matrix'", mm_quote_text(t[1].s, t[1].n).s);

    if (mm_tok_is(t[2], "coordinate"))
        h->coordinate = true;
    else if (mm_tok_is(t[2], "array"))
        h->coordinate = false;
    else
        return MM_FAIL(path, ln, "found format %s in the banner; expected 'coordinate' or 'array'",
                       mm_quote_text(t[2].s, t[2].n).s);

    if (mm_tok_is(t[3], "real"))
        h->field = FIELD_REAL;
    else if (mm_tok_is(t[3], "integer"))
        h->field = FIELD_INTEGER;
    else if (mm_tok_is(t[3], "pattern"))
        h->field = FIELD_PATTERN;
    else if (mm_tok_is(t[3], "complex"))
        return MM_FAIL(path, ln,
                       "field 'complex' is not supported (gpusolve solves real systems); expected "
                       "'real', 'integer' or 'pattern'");
    else
        return MM_FAIL(path, ln, "found field %s in the banner; expected 'real', 'integer' or 'pattern'",
                       mm_quote_text(t[3].s, t[3].n).s);

    if (mm_tok_is(t[4], "general"))
        h->symmetry = SYM_GENERAL;
    else if (mm_tok_is(t[4], "symmetric"))
        h->symmetry = SYM_SYMMETRIC;
    else if (mm_tok_is(t[4], "skew-symmetric"))
        h->symmetry = SYM_SKEW;
    else if (mm_tok_is(t[4], "hermitian"))
        return MM_FAIL(path, ln,
                       "symmetry 'hermitian' is not supported (it needs complex values); expected "
                       "'general', 'symmetric' or 'skew-symmetric'");
    else
        return MM_FAIL(path, ln, "found symmetry %s in the banner; expected 'general', 'symmetric' or 'skew-symmetric'",
                       mm_quote_text(t[4].s, t[4].n).s);

    if (!h->coordinate && h->field == FIELD_PATTERN)
        return MM_FAIL(path, ln,
                       "found 'array pattern' in the banner; expected field 'real' or 'integer' for the "
                       "array format (pattern needs the coordinate format)");
    return GS_OK;
}

gs_status mm_read_size_line(io_input *in, mm_header *h)
{
    static const char *const names[] = {"rows", "columns", "entries"};
    const char *shape = h->coordinate ? "rows columns entries" : "rows columns";
    const char *path = in->path;
    int want = h->coordinate ? 3 : 2;
    const char *line;
    size_t len;
    for (;;) {
        GS_CALL(io_text_line(in, &line, &len));
        if (!line) return MM_FAIL(path, in->line, "end of file after the header; expected the size line '%s'", shape);
        const char *p = line;
        while (p < line + len && mm_is_blank(*p)) p++;
        if (p < line + len && *p != '%') break;
    }
    h->size_line = in->line;
    long long ln = in->line;
    mm_tok t[3];
    int nt = mm_split(line, line + len, t, 3);
    if (nt != want)
        return MM_FAIL(path, ln, "found size line %s with %d numbers; expected %d: '%s'", mm_quote_text(line, len).s,
                       nt, want, shape);
    long long v[3] = {0, 0, 0};
    for (int k = 0; k < want; k++) {
        mm_num res = mm_parse_ll(t[k], &v[k]);
        if (res == NUM_BAD)
            return MM_FAIL(path, ln,
                           "found %s for the number of %s on the size line; expected non-negative integers '%s'",
                           mm_quote_text(t[k].s, t[k].n).s, names[k], shape);
        if (res == NUM_OK && v[k] < 0)
            return MM_FAIL(path, ln, "found a negative number of %s (%lld); expected non-negative integers '%s'",
                           names[k], v[k], shape);
        if (res == NUM_RANGE || v[k] > index_limit)
            return MM_FAIL(path, ln,
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
            return MM_FAIL(path, ln,
                           "a %lld x %lld array has more values than the 32-bit index limit %lld; "
                           "expected at most %lld values",
                           h->nrows, h->ncols, index_limit, index_limit);
        h->entries = h->nrows * h->ncols;
    }
    return GS_OK;
}
