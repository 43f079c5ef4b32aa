/* Text helpers of the configuration: group paths, shortest round-trip doubles, range bounds; reading a
 * configuration file with limits, and the checks of its text that run before libconfig reads it. */
#include "cfg/config_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "core/signal.h"

const char *gs_cfg_below(const char *prefix, const char *path)
{
    if (!prefix[0]) return path;
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) == 0 && path[n] == '.') return path + n + 1;
    return NULL;
}

void gs_cfg_format_double(double x, char *buf, size_t len)
{
    /* the fewest significant digits (at most 17, always enough for a double) that round-trip */
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    /* %g writes 30 with one digit as "3e+01": moderate magnitudes read better in positional form,
     * with the same significant digits (so the same value) */
    const char *e = strchr(buf, 'e');
    if (e && isfinite(x)) {
        int ex = atoi(e + 1);
        if (ex >= -5 && ex < 16) snprintf(buf, len, "%.*f", prec - 1 - ex > 0 ? prec - 1 - ex : 0, x);
    }
    if (!strpbrk(buf, ".eEni")) { /* "30" would read back as a libconfig integer: make it "30.0" */
        size_t n = strlen(buf);
        if (n + 2 < len) memcpy(buf + n, ".0", 3);
    }
}

void gs_cfg_format_bound(double x, char *buf, size_t len)
{
    if (isinf(x))
        snprintf(buf, len, "%s", x > 0 ? "inf" : "-inf");
    else if (x == floor(x) && fabs(x) < 1e16)
        snprintf(buf, len, "%.0f", x);
    else
        gs_cfg_format_double(x, buf, len);
}

/* ---------------------------------------------------------------------------------------------- */
/* reading a configuration file                                                                   */

static gs_status read_interrupted(const char *path)
{
    return GS_ERROR(GS_ERR_INTERRUPTED, "%s: interrupted by %s while reading the configuration; nothing was solved or "
                    "written", path, gs_interrupt_name(gs_interrupt_signal()));
}

/* The line of text[at] (1-based). */
static long line_of(const char *text, size_t at)
{
    long line = 1;
    for (size_t i = 0; i < at; i++) line += text[i] == '\n';
    return line;
}

gs_status gs_cfg_read_text(const char *path, size_t limit, char **text, size_t *len)
{
    gs_status st = GS_OK;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int fd;
    *text = NULL;
    *len = 0;
    do {
        if (gs_interrupt_requested()) return read_interrupted(path);
        fd = open(path, O_RDONLY | O_CLOEXEC); /* a FIFO (-c <(...)) waits for its writer */
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return GS_ERROR(GS_ERR_IO, "%s: cannot open configuration file: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) GS_FAIL(GS_ERR_IO, "%s: cannot open configuration file: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) GS_FAIL(GS_ERR_IO, "%s: cannot open configuration file: %s", path, strerror(EISDIR));
    if (S_ISREG(sb.st_mode) && sb.st_size > 0 && (size_t)sb.st_size > limit) {
        used = limit + 1; /* known from its size: not read */
        goto over;
    }
    /* a regular file's size is known: one buffer (a stream grows its buffer up to the limit) */
    cap = S_ISREG(sb.st_mode) && sb.st_size >= 0 && (size_t)sb.st_size < limit ? (size_t)sb.st_size + 1 : 4096;
    GS_TRY(gs_malloc(&buf, cap + 1, 1));
    for (;;) {
        if (used == cap) {
            if (cap > limit) break; /* limit + 1 bytes read: over the limit */
            size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            GS_TRY(gs_realloc(&buf, ncap + 1, 1));
            cap = ncap;
        }
        if (gs_interrupt_requested()) {
            st = read_interrupted(path);
            goto cleanup;
        }
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0) {
            if (errno == EINTR) continue; /* the loop looks at the flag first */
            GS_FAIL(GS_ERR_IO, "%s: cannot read configuration file: %s", path, strerror(errno));
        }
        if (n == 0) break;
        /* binary data (a NUL would also end libconfig's reading of the text silently) */
        const char *nul = memchr(buf + used, '\0', (size_t)n);
        if (nul)
            GS_FAIL(GS_ERR_CONFIG, "%s:%ld: found a NUL byte (binary data); expected a configuration text file", path,
                    line_of(buf, (size_t)(nul - buf)));
        used += (size_t)n;
    }
over:
    if (used > limit)
        GS_FAIL(GS_ERR_CONFIG,
                "%s: the configuration text is larger than %zu MiB (%zu bytes%s); a configuration holds a few "
                "settings: is this the right file?",
                path, GS_CFG_TEXT_MAX >> 20, GS_CFG_TEXT_MAX,
                limit < GS_CFG_TEXT_MAX ? ", counting the files that @include it" : "");
    if (used >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB && (unsigned char)buf[2] == 0xBF)
        GS_FAIL(GS_ERR_CONFIG,
                "%s:1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF, written by some editors); "
                "expected plain text (save the file without a byte-order mark)",
                path);
    buf[used] = '\0';
    *text = buf;
    *len = used;
    buf = NULL;
cleanup:
    gs_free(&buf);
    close(fd);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* checks before libconfig                                                                        */

enum { SCOPE_GROUP, SCOPE_LIST };

typedef struct scan_scope {
    int parent;       /* -1 for the root */
    int kind;         /* SCOPE_GROUP or SCOPE_LIST */
    const char *name; /* the setting that holds it (NULL: an element of a list, or the root) */
    size_t nlen;
    long index;       /* its element number in the parent list */
    long elements;    /* SCOPE_LIST: elements seen so far (commas) */
} scan_scope;

typedef struct scan_member {
    int scope;
    unsigned nlen;
    const char *name; /* in one of the texts (kept until the end) */
    int file;         /* index into src->name, or -1: the caller's text */
    long line;
    long seq;         /* order of appearance */
} scan_member;

typedef struct scan_state {
    const char *top_name; /* the caller's text's name */
    const char *dir;
    gs_cfg_sources *src;
    size_t budget;        /* bytes of include text still allowed */
    scan_scope *scopes;
    long nscopes, cap_scopes;
    int *stack; /* open scopes, innermost last */
    int depth;
    scan_member *members;
    long nmembers, cap_members;
    const char *pending; /* the name before '=' or ':' whose value comes next */
    size_t pending_len;
    bool stop; /* the text no longer parses as we expect, or includes nest too deep: libconfig reports */
} scan_state;

static const char *scan_file_name(const scan_state *s, int file)
{
    return file < 0 ? s->top_name : s->src->name[file];
}

static gs_status grow(void *p, long *cap, long need, size_t size)
{
    if (need <= *cap) return GS_OK;
    long c = *cap < 64 ? 64 : *cap;
    while (c < need) c *= 2;
    GS_CALL(gs_realloc(p, (size_t)c, size));
    *cap = c;
    return GS_OK;
}

static gs_status push_scope(scan_state *s, int kind, const char *file, long line)
{
    if (s->depth >= GS_CFG_NEST_MAX)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%ld: groups and lists are nested more than %d deep here; a gpusolve configuration needs at "
                        "most 4 levels (e.g. trisolve = { lower = { type = \"jacobi\"; }; };)",
                        file, line, GS_CFG_NEST_MAX);
    GS_CALL(grow(&s->scopes, &s->cap_scopes, s->nscopes + 1, sizeof *s->scopes));
    int parent = s->stack[s->depth - 1];
    scan_scope *sc = &s->scopes[s->nscopes];
    memset(sc, 0, sizeof *sc);
    sc->parent = parent;
    sc->kind = kind;
    if (s->scopes[parent].kind == SCOPE_GROUP) {
        sc->name = s->pending;
        sc->nlen = s->pending_len;
    } else {
        sc->index = s->scopes[parent].elements;
    }
    s->pending = NULL;
    s->stack[s->depth++] = (int)s->nscopes++;
    return GS_OK;
}

/* The dotted path of member m ("solver.restart", "x[2].key"), at most len - 1 characters. */
static void member_path(const scan_state *s, const scan_member *m, char *buf, size_t len)
{
    int chain[GS_CFG_NEST_MAX + 2], nc = 0; /* the scopes from m's up to the root's child */
    for (int sc = m->scope; sc > 0 && nc < GS_CFG_NEST_MAX + 1; sc = s->scopes[sc].parent) chain[nc++] = sc;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = nc - 1; i >= -1 && used + 1 < len; i--) {
        int w;
        if (i < 0) /* the member itself */
            w = snprintf(buf + used, len - used, "%s%.*s", used ? "." : "", (int)(m->nlen < 200 ? m->nlen : 200),
                         m->name);
        else if (s->scopes[chain[i]].name)
            w = snprintf(buf + used, len - used, "%s%.*s", used ? "." : "",
                         (int)(s->scopes[chain[i]].nlen < 200 ? s->scopes[chain[i]].nlen : 200),
                         s->scopes[chain[i]].name);
        else /* an element of a list */
            w = snprintf(buf + used, len - used, "[%ld]", s->scopes[chain[i]].index);
        if (w < 0) break;
        used += (size_t)w < len - used ? (size_t)w : len - used - 1;
    }
}

static bool name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*'; }
static bool name_char(char c)
{
    return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Past blanks, newlines and comments (for looking ahead: lines are not counted). */
static const char *skip_space(const char *p)
{
    for (;;) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\f' || *p == '\v') {
            p++;
        } else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
            while (*p && *p != '\n') p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            if (!e) return p;
            p = e + 2;
        } else {
            return p;
        }
    }
}

static gs_status scan_text(scan_state *s, const char *text, int file, int inc_depth);

/* An @include line: the file named is checked and scanned in place (its settings belong to the group
 * the line is in, as in libconfig). */
static gs_status scan_include(scan_state *s, const char *fname, int file, long line, int inc_depth)
{
    const char *from = scan_file_name(s, file);
    char full[4096 + 1024];
    if (inc_depth + 1 >= GS_CFG_INCLUDE_DEPTH_MAX) { /* libconfig stops here ("include file nesting too deep") */
        s->stop = true;
        return GS_OK;
    }
    if (s->dir)
        snprintf(full, sizeof full, "%s/%s", s->dir, fname[0] == '/' ? fname + 1 : fname);
    else
        snprintf(full, sizeof full, "%s", fname);
    struct stat sb;
    if (stat(full, &sb) != 0)
        return GS_ERROR(GS_ERR_IO, "%s:%ld: @include \"%s\": cannot open %s: %s; expected an existing configuration file",
                        from, line, fname, full, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return GS_ERROR(GS_ERR_CONFIG, "%s:%ld: @include \"%s\" names a folder (%s); expected a configuration file", from,
                        line, fname, full);
    if (!S_ISREG(sb.st_mode))
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%ld: @include \"%s\" names %s (%s); expected a regular configuration file (libconfig reads "
                        "an included file itself, without a size limit)",
                        from, line, fname,
                        S_ISFIFO(sb.st_mode)   ? "a FIFO (named pipe)"
                        : S_ISCHR(sb.st_mode)  ? "a character device"
                        : S_ISBLK(sb.st_mode)  ? "a block device"
                        : S_ISSOCK(sb.st_mode) ? "a socket"
                                               : "a special file",
                        full);
    if ((size_t)sb.st_size > s->budget)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%ld: @include \"%s\": the configuration text is larger than %zu MiB (%zu bytes, counting "
                        "the files it @includes); a configuration holds a few settings: is this the right file?",
                        from, line, fname, GS_CFG_TEXT_MAX >> 20, GS_CFG_TEXT_MAX);
    gs_cfg_sources *src = s->src;
    if (src->n == src->cap) {
        int c = src->cap ? 2 * src->cap : 8;
        GS_CALL(gs_realloc(&src->text, (size_t)c, sizeof *src->text));
        GS_CALL(gs_realloc(&src->name, (size_t)c, sizeof *src->name));
        src->cap = c;
    }
    size_t nlen = strlen(full);
    src->text[src->n] = NULL;
    GS_CALL(gs_malloc(&src->name[src->n], nlen + 1, 1));
    memcpy(src->name[src->n], full, nlen + 1);
    int idx = src->n++;
    size_t len = 0;
    GS_CALL(gs_cfg_read_text(src->name[idx], s->budget, &src->text[idx], &len));
    s->budget -= len;
    GS_CALL(scan_text(s, src->text[idx], idx, inc_depth + 1));
    return GS_OK;
}

static gs_status scan_text(scan_state *s, const char *text, int file, int inc_depth)
{
    const char *name = scan_file_name(s, file);
    const char *p = text;
    long line = 1;
    bool bol = true; /* only blanks since the start of the line */
    while (*p && !s->stop) {
        char c = *p;
        if (c == '\n') {
            line++;
            p++;
            bol = true;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            p++;
            continue;
        }
        if (bol && c == '@') {
            if (strncmp(p, "@include", 8) != 0 || (p[8] != ' ' && p[8] != '\t')) {
                s->stop = true; /* libconfig's syntax error */
                break;
            }
            const char *q = p + 8;
            while (*q == ' ' || *q == '\t') q++;
            if (*q != '"') {
                s->stop = true;
                break;
            }
            char fname[4096];
            size_t n = 0;
            long at = line;
            for (q++; *q && *q != '"'; q++) { /* escapes \\ and \" as libconfig */
                if (*q == '\\' && (q[1] == '\\' || q[1] == '"')) q++;
                if (*q == '\n') line++;
                if (n + 1 < sizeof fname) fname[n++] = *q;
            }
            fname[n] = '\0';
            if (!*q) {
                s->stop = true;
                break;
            }
            GS_CALL(scan_include(s, fname, file, at, inc_depth));
            p = q + 1;
            bol = false;
            continue;
        }
        bol = false;
        if (c == '#' || (c == '/' && p[1] == '/')) {
            while (*p && *p != '\n') p++;
            continue;
        }
        if (c == '/' && p[1] == '*') {
            long at = line;
            const char *e = p + 2;
            while (*e && !(e[0] == '*' && e[1] == '/')) line += *e++ == '\n';
            if (!*e)
                return GS_ERROR(GS_ERR_CONFIG,
                                "%s:%ld: a comment opened with /* here is never closed with */; everything after it "
                                "would be ignored (close the comment)",
                                name, at);
            p = e + 2;
            continue;
        }
        if (c == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1]) p++;
                if (*p == '\n') line++;
            }
            if (!*p) {
                s->stop = true; /* an unterminated string: libconfig's error */
                break;
            }
            p++;
            continue;
        }
        scan_scope *top = &s->scopes[s->stack[s->depth - 1]];
        if (name_start(c)) {
            const char *start = p;
            while (name_char(*p)) p++;
            const char *after = skip_space(p);
            if ((*after == '=' || *after == ':') && top->kind == SCOPE_GROUP) {
                GS_CALL(grow(&s->members, &s->cap_members, s->nmembers + 1, sizeof *s->members));
                size_t nl = (size_t)(p - start);
                s->members[s->nmembers] = (scan_member){s->stack[s->depth - 1], nl > UINT_MAX ? UINT_MAX : (unsigned)nl,
                                                        start, file, line, s->nmembers};
                s->nmembers++;
                s->pending = start;
                s->pending_len = nl;
            }
            continue;
        }
        if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+') {
            while (name_char(*p) || *p == '.' || *p == '+') p++;
            continue;
        }
        if (c == '{' || c == '(' || c == '[') {
            GS_CALL(push_scope(s, c == '{' ? SCOPE_GROUP : SCOPE_LIST, name, line));
        } else if (c == '}' || c == ')' || c == ']') {
            if (s->depth <= 1 || (c == '}') != (top->kind == SCOPE_GROUP)) {
                s->stop = true; /* unbalanced: libconfig's error */
                break;
            }
            s->depth--;
        } else if (c == ',') {
            if (top->kind == SCOPE_LIST) top->elements++;
        } else if (c != ';' && c != '=' && c != ':') {
            s->stop = true; /* a character libconfig will not accept */
            break;
        }
        p++;
    }
    return GS_OK;
}

static int member_cmp(const void *a, const void *b)
{
    const scan_member *x = a, *y = b;
    if (x->scope != y->scope) return x->scope < y->scope ? -1 : 1;
    if (x->nlen != y->nlen) return x->nlen < y->nlen ? -1 : 1;
    int c = memcmp(x->name, y->name, x->nlen);
    if (c) return c;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

gs_status gs_cfg_prescan(const char *text, const char *name, const char *dir, gs_cfg_sources *src)
{
    gs_status st = GS_OK;
    scan_state s;
    memset(&s, 0, sizeof s);
    s.top_name = name;
    s.dir = dir;
    s.src = src;
    size_t own = strlen(text);
    s.budget = own < GS_CFG_TEXT_MAX ? GS_CFG_TEXT_MAX - own : 0;
    GS_TRY(gs_malloc(&s.stack, GS_CFG_NEST_MAX + 1, sizeof *s.stack));
    GS_TRY(grow(&s.scopes, &s.cap_scopes, 1, sizeof *s.scopes));
    memset(&s.scopes[0], 0, sizeof s.scopes[0]);
    s.scopes[0].parent = -1;
    s.scopes[0].kind = SCOPE_GROUP;
    s.nscopes = 1;
    s.stack[s.depth++] = 0;
    GS_TRY(scan_text(&s, text, -1, 0));
    if (s.nmembers > 1) {
        /* a setting given twice in one group: report the repetition that comes first in the text */
        qsort(s.members, (size_t)s.nmembers, sizeof *s.members, member_cmp);
        long best = -1;
        for (long i = 1; i < s.nmembers; i++) {
            const scan_member *a = &s.members[i - 1], *b = &s.members[i];
            if (a->scope == b->scope && a->nlen == b->nlen && memcmp(a->name, b->name, a->nlen) == 0 &&
                (best < 0 || b->seq < s.members[best].seq))
                best = i;
        }
        if (best >= 0) {
            const scan_member *first = &s.members[best - 1], *again = &s.members[best];
            char path[1024];
            member_path(&s, again, path, sizeof path);
            const char *f1 = scan_file_name(&s, first->file), *f2 = scan_file_name(&s, again->file);
            char where[4200];
            if (strcmp(f1, f2) == 0)
                snprintf(where, sizeof where, "line %ld", first->line);
            else
                snprintf(where, sizeof where, "%s:%ld", f1, first->line);
            GS_FAIL(GS_ERR_CONFIG,
                    "%s:%ld: %s is set twice in the same group (first on %s); give each setting once (in a "
                    "configuration file a later value does not replace an earlier one)",
                    f2, again->line, path, where);
        }
    }
cleanup:
    gs_free(&s.stack);
    gs_free(&s.scopes);
    gs_free(&s.members);
    return st;
}

void gs_cfg_sources_free(gs_cfg_sources *src)
{
    for (int i = 0; i < src->n; i++) {
        gs_free(&src->text[i]);
        gs_free(&src->name[i]);
    }
    gs_free(&src->text);
    gs_free(&src->name);
    src->n = src->cap = 0;
}
