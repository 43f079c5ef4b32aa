/* The effective configuration: one typed value per schema key, merged from libconfig text and
 * "-s group.key=value" overrides, each validated against the schema in a copy before it is committed. */
#include "cfg/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <libconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cfg/config_internal.h"
#include "core/mem.h"

/* ---------------------------------------------------------------------------------------------- */
/* schema lookups                                                                                 */

static int schema_rows(void)
{
    int n = 0;
    while (gs_cfg_schema[n].path) n++;
    return n;
}

int gs_cfg_key_index(const char *path)
{
    for (int k = 0; gs_cfg_schema[k].path; k++)
        if (strcmp(gs_cfg_schema[k].path, path) == 0) return k;
    return -1;
}

/* A group is any proper dotted prefix of a key path ("trisolve", "trisolve.lower"). */
bool gs_cfg_group_exists(const char *prefix)
{
    if (!prefix[0]) return true;
    for (int k = 0; gs_cfg_schema[k].path; k++)
        if (gs_cfg_below(prefix, gs_cfg_schema[k].path)) return true;
    return false;
}

const char *gs_cfg_leaf_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

const char *gs_cfg_type_word(gs_cfg_type t)
{
    switch (t) {
    case GS_CFG_INT: return "an integer";
    case GS_CFG_DOUBLE: return "a number";
    case GS_CFG_BOOL: return "a boolean (true or false)";
    case GS_CFG_STRING: return "a string";
    case GS_CFG_CHOICE: return "a string";
    }
    return "a value";
}

/* Appends text to a bounded message buffer (silently truncating: messages only). */
static void append(char *buf, size_t len, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < len) snprintf(buf + used, len - used, "%s", text);
}

/* "a|b|c" -> "a, b, c" */
static void choice_list(const char *choices, char *buf, size_t len)
{
    buf[0] = '\0';
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        char one[128];
        snprintf(one, sizeof one, "%s%.*s", buf[0] ? ", " : "", (int)n, c);
        append(buf, len, one);
        c += n;
        if (*c == '|') c++;
    }
}

static bool is_choice(const char *choices, const char *value)
{
    size_t vlen = strlen(value);
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        if (n == vlen && strncmp(c, value, n) == 0) return true;
        c += n;
        if (*c == '|') c++;
    }
    return false;
}

/* ---------------------------------------------------------------------------------------------- */
/* suggestions: the closest known name by edit distance                                           */

/* Levenshtein distance of a[0..na) and b[0..nb), ignoring case (GMRES is close to gmres); names
 * longer than 63 characters are cut there. */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    enum { MAXN = 64 };
    int row[MAXN + 1];
    if (na > MAXN - 1) na = MAXN - 1;
    if (nb > MAXN - 1) nb = MAXN - 1;
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0]; /* d(i-1, j-1) */
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j]; /* d(i-1, j) */
            int best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[nb];
}

/* How far candidate (a key path or group path) is from what was written (`path`): the smaller of
 * the distance of the whole paths and the distance of the last names plus a penalty for being in
 * another group (1 when the candidate is inside the written group, e.g. trisolve.type ->
 * trisolve.lower.type, or the name was written at the root; 2 otherwise). An abbreviation of the
 * candidate's last name (precond -> preconditioner) counts as distance 1. */
static int name_distance(const char *path, const char *candidate)
{
    const char *leaf = gs_cfg_leaf_of(path), *cleaf = gs_cfg_leaf_of(candidate);
    size_t glen = (size_t)(leaf - path), cglen = (size_t)(cleaf - candidate);
    size_t llen = strlen(leaf), cllen = strlen(cleaf);
    int d = edit_distance(path, strlen(path), candidate, strlen(candidate));
    int penalty;
    if (glen == cglen && strncmp(path, candidate, glen) == 0)
        penalty = 0;
    else if (glen == 0 || (cglen > glen && strncmp(path, candidate, glen) == 0))
        penalty = 1;
    else
        penalty = 2;
    int dl = edit_distance(leaf, llen, cleaf, cllen);
    if (llen >= 3 && llen < cllen && strncmp(leaf, cleaf, llen) == 0) dl = 1;
    if (dl + penalty < d) d = dl + penalty;
    return d;
}

/* The closest key (want_group false) or group (true) to `path`, or NULL when none is close:
 * allowed distance grows with the length of the last name (2 for short names, at most 3). */
static const char *closest(const char *path, bool want_group, char *buf, size_t len)
{
    size_t llen = strlen(gs_cfg_leaf_of(path));
    int limit = llen < 6 ? 2 : 3;
    int best = limit + 1;
    buf[0] = '\0';
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const char *p = gs_cfg_schema[k].path;
        if (!want_group) {
            int d = name_distance(path, p);
            if (d < best) {
                best = d;
                snprintf(buf, len, "%s", p);
            }
            continue;
        }
        /* every group prefix of p */
        for (const char *dot = strchr(p, '.'); dot; dot = strchr(dot + 1, '.')) {
            char g[PATH_MAX_LEN];
            size_t n = (size_t)(dot - p);
            if (n >= sizeof g) break;
            memcpy(g, p, n);
            g[n] = '\0';
            int d = name_distance(path, g);
            if (d < best) {
                best = d;
                snprintf(buf, len, "%s", g);
            }
        }
    }
    return buf[0] ? buf : NULL;
}

/* The closest of a key's choices to a written value, or NULL. */
static const char *closest_choice(const char *choices, const char *value, char *buf, size_t len)
{
    size_t vlen = strlen(value);
    int best = (vlen < 6 ? 2 : 3) + 1;
    buf[0] = '\0';
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        int d = edit_distance(value, vlen, c, n);
        if (d < best && n < len) {
            best = d;
            memcpy(buf, c, n);
            buf[n] = '\0';
        }
        c += n;
        if (*c == '|') c++;
    }
    return buf[0] ? buf : NULL;
}

/* The names directly inside group `prefix` ("" = root), as "a, b, c" (groups get a trailing " {}"
 * so a reader sees they are groups). */
void gs_cfg_group_members(const char *prefix, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const char *rest = gs_cfg_below(prefix, gs_cfg_schema[k].path);
        if (!rest) continue;
        size_t n = strcspn(rest, ".");
        bool seen = false; /* listed already by an earlier row? */
        for (int j = 0; j < k && !seen; j++) {
            const char *r = gs_cfg_below(prefix, gs_cfg_schema[j].path);
            seen = r && strncmp(r, rest, n) == 0 && (r[n] == '.' || r[n] == '\0');
        }
        if (seen) continue;
        char name[PATH_MAX_LEN];
        snprintf(name, sizeof name, "%s%.*s%s", buf[0] ? ", " : "", (int)n, rest,
                 rest[n] == '.' ? " {}" : "");
        append(buf, len, name);
    }
}

/* GS_ERR_CONFIG for a name that is neither a key nor a group. */
gs_status gs_cfg_unknown_name(const char *where, const char *path, bool written_as_group)
{
    char hint[PATH_MAX_LEN];
    const char *near = closest(path, written_as_group, hint, sizeof hint);
    if (!near && written_as_group) near = closest(path, false, hint, sizeof hint);
    if (!near && !written_as_group) near = closest(path, true, hint, sizeof hint);
    const char *what = written_as_group ? "group" : "key";
    if (near)
        return GS_ERROR(GS_ERR_CONFIG, "%s: unknown %s %s; did you mean %s?", where, what, path, near);

    /* nothing close: list what the enclosing known group contains */
    char parent[PATH_MAX_LEN];
    snprintf(parent, sizeof parent, "%s", path);
    char *dot = strrchr(parent, '.');
    while (dot) { /* climb until a group that exists */
        *dot = '\0';
        if (gs_cfg_group_exists(parent)) break;
        dot = strrchr(parent, '.');
    }
    if (!dot) parent[0] = '\0';
    char members[LIST_MAX_LEN];
    gs_cfg_group_members(parent, members, sizeof members);
    if (parent[0])
        return GS_ERROR(GS_ERR_CONFIG, "%s: unknown %s %s; group %s contains: %s", where, what, path,
                        parent, members);
    return GS_ERROR(GS_ERR_CONFIG, "%s: unknown %s %s; the known groups are: %s", where, what, path,
                    members);
}

/* ---------------------------------------------------------------------------------------------- */
/* checking a value against its key                                                               */

static void describe_raw(const raw_value *raw, char *buf, size_t len)
{
    switch (raw->kind) {
    case RAW_INT: snprintf(buf, len, "the integer %lld", raw->i); break;
    case RAW_FLOAT: {
        char num[64];
        gs_cfg_format_double(raw->d, num, sizeof num);
        snprintf(buf, len, "the floating-point number %s", num);
        break;
    }
    case RAW_BOOL: snprintf(buf, len, "the boolean %s", raw->b ? "true" : "false"); break;
    case RAW_STRING: snprintf(buf, len, "the string \"%.200s\"", raw->s); break;
    }
}

/* Checks raw against key k (type, finiteness, range, choices) and fills *out (out->s borrowed). */
gs_status gs_cfg_check_value(int k, const raw_value *raw, const char *where, gs_cfg_value *out)
{
    const gs_cfg_key *key = &gs_cfg_schema[k];
    char found[300], lo[64], hi[64];
    memset(out, 0, sizeof *out);
    bool type_ok;
    switch (key->type) {
    case GS_CFG_INT: type_ok = raw->kind == RAW_INT; break;
    case GS_CFG_DOUBLE: type_ok = raw->kind == RAW_INT || raw->kind == RAW_FLOAT; break;
    case GS_CFG_BOOL: type_ok = raw->kind == RAW_BOOL; break;
    default: type_ok = raw->kind == RAW_STRING; break;
    }
    if (!type_ok) {
        describe_raw(raw, found, sizeof found);
        const char *hint = "";
        if (key->type == GS_CFG_INT && raw->kind == RAW_FLOAT) hint = " (write it without a decimal point)";
        if ((key->type == GS_CFG_STRING || key->type == GS_CFG_CHOICE))
            hint = " (put it in double quotes)";
        if (key->type == GS_CFG_BOOL && raw->kind == RAW_STRING) hint = " (write true or false without quotes)";
        if ((key->type == GS_CFG_INT || key->type == GS_CFG_DOUBLE) && raw->kind == RAW_STRING)
            hint = " (write the number without quotes)";
        if (key->type == GS_CFG_CHOICE) {
            char list[LIST_MAX_LEN];
            choice_list(key->choices, list, sizeof list);
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s expects one of %s as a string, found %s%s", where,
                            key->path, list, found, hint);
        }
        return GS_ERROR(GS_ERR_CONFIG, "%s: %s expects %s, found %s%s", where, key->path,
                        gs_cfg_type_word(key->type), found, hint);
    }

    switch (key->type) {
    case GS_CFG_INT:
        gs_cfg_format_bound(key->min, lo, sizeof lo);
        gs_cfg_format_bound(key->max, hi, sizeof hi);
        if ((double)raw->i < key->min || (double)raw->i > key->max)
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s = %lld is out of range; allowed [%s, %s]", where,
                            key->path, raw->i, lo, hi);
        out->i = raw->i;
        break;
    case GS_CFG_DOUBLE: {
        double d = raw->kind == RAW_INT ? (double)raw->i : raw->d;
        gs_cfg_format_bound(key->min, lo, sizeof lo);
        gs_cfg_format_bound(key->max, hi, sizeof hi);
        if (!isfinite(d))
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s = %g is not a finite number; allowed [%s, %s]",
                            where, key->path, d, lo, hi);
        if (d < key->min || d > key->max) {
            char num[64];
            gs_cfg_format_double(d, num, sizeof num);
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s = %s is out of range; allowed [%s, %s]", where,
                            key->path, num, lo, hi);
        }
        out->d = d;
        break;
    }
    case GS_CFG_BOOL: out->b = raw->b; break;
    case GS_CFG_STRING: out->s = (char *)raw->s; break;
    case GS_CFG_CHOICE:
        if (!is_choice(key->choices, raw->s)) {
            char list[LIST_MAX_LEN], near[64], hint[96] = "";
            choice_list(key->choices, list, sizeof list);
            if (closest_choice(key->choices, raw->s, near, sizeof near))
                snprintf(hint, sizeof hint, "; did you mean \"%s\"?", near);
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s = \"%.200s\" is not an allowed choice: %s%s", where,
                            key->path, raw->s, list, hint);
        }
        out->s = (char *)raw->s;
        break;
    }
    return GS_OK;
}

static gs_status dup_string(const char *s, char **out)
{
    size_t len = strlen(s);
    GS_CALL(gs_malloc(out, len + 1, 1));
    memcpy(*out, s, len + 1);
    return GS_OK;
}

static void value_free(gs_cfg_value *v)
{
    gs_free(&v->s);
    gs_free(&v->origin);
}

/* Values in key k's list (0: none, the key holds its single value). */
static int list_len(const gs_config *cfg, int k) { return cfg->lists[k] ? cfg->lists[k]->n : 0; }

static void list_free(gs_cfg_list **l)
{
    if (!*l) return;
    if ((*l)->vals)
        for (int i = 0; i < (*l)->n; i++) value_free(&(*l)->vals[i]);
    gs_free(&(*l)->vals);
    gs_free(l);
}

/* This holder lets go of the list (freed with its last holder). */
static void list_clear(gs_cfg_list **l)
{
    if (*l && __atomic_sub_fetch(&(*l)->refs, 1, __ATOMIC_ACQ_REL) == 0) list_free(l);
    *l = NULL;
}

/* A new list holding copies of vals[0..n) (strings and origins duplicated; origin, when not NULL,
 * replaces every value's), with room for `cap` values. */
static gs_status list_new(const gs_cfg_value *vals, int n, int cap, const char *origin, gs_cfg_list **out)
{
    gs_status st = GS_OK;
    gs_cfg_list *nl = NULL;
    GS_TRY(gs_calloc(&nl, 1, sizeof *nl));
    nl->refs = 1;
    GS_TRY(gs_calloc(&nl->vals, (size_t)(cap > n ? cap : n), sizeof *nl->vals));
    nl->cap = cap > n ? cap : n;
    nl->n = n; /* zeroed entries: list_free may free them all at any point */
    for (int i = 0; i < n; i++) {
        const char *o = origin ? origin : vals[i].origin;
        nl->vals[i] = vals[i];
        nl->vals[i].s = nl->vals[i].origin = NULL;
        if (vals[i].s) GS_TRY(dup_string(vals[i].s, &nl->vals[i].s));
        if (o) GS_TRY(dup_string(o, &nl->vals[i].origin));
    }
    *out = nl;
    nl = NULL;
cleanup:
    list_free(&nl);
    return st;
}

/* cfg->v[k] = val with origin (NULL: default); everything is allocated before the old value is
 * released, so a failure leaves cfg->v[k] as it was. */
gs_status gs_cfg_store(gs_config *cfg, int k, const gs_cfg_value *val, const char *origin)
{
    gs_status st = GS_OK;
    char *s = NULL, *o = NULL;
    if (val->s) GS_TRY(dup_string(val->s, &s));
    if (origin) GS_TRY(dup_string(origin, &o));
    gs_cfg_value *v = &cfg->v[k];
    gs_free(&v->s);
    gs_free(&v->origin);
    *v = *val;
    v->s = s;
    v->origin = o;
    s = o = NULL;
    list_clear(&cfg->lists[k]); /* a single value replaces a sweep list */
cleanup:
    gs_free(&s);
    gs_free(&o);
    return st;
}

/* cfg->lists[k] = vals[0..n) with origin, and cfg->v[k] = vals[0]; n == 1 stores a single value.
 * vals' strings are borrowed (they may belong to cfg's current list: everything is copied before
 * the old list is released), so a failure leaves the key as it was. */
gs_status gs_cfg_store_list(gs_config *cfg, int k, const gs_cfg_value *vals, int n, const char *origin)
{
    gs_status st = GS_OK;
    gs_cfg_list *nl = NULL;
    if (n == 1) return gs_cfg_store(cfg, k, &vals[0], origin ? origin : vals[0].origin);
    GS_TRY(list_new(vals, n, n, origin, &nl));
    GS_TRY(gs_cfg_store(cfg, k, &nl->vals[0], nl->vals[0].origin)); /* clears the old list */
    cfg->lists[k] = nl;
    nl = NULL;
cleanup:
    list_free(&nl);
    return st;
}

/* Key k's values followed by vals[0..m) (strings borrowed: copied here), each with origin. Amortised
 * O(m): the list grows in place (by doubling) unless another configuration shares it. A failure leaves
 * the key as it was. */
static gs_status append_list(gs_config *cfg, int k, const gs_cfg_value *vals, int m, const char *origin)
{
    gs_status st = GS_OK;
    gs_cfg_list *l = cfg->lists[k];
    if (!l || __atomic_load_n(&l->refs, __ATOMIC_ACQUIRE) > 1) { /* a list of its own first */
        gs_cfg_list *nl = NULL;
        int have = l ? l->n : 1;
        GS_CALL(list_new(l ? l->vals : &cfg->v[k], have, 2 * (have + m), NULL, &nl));
        if (l) list_clear(&cfg->lists[k]);
        cfg->lists[k] = l = nl;
    }
    if (l->n + m > l->cap) {
        int cap = l->cap;
        while (cap < l->n + m) cap = cap > INT_MAX / 2 ? INT_MAX : 2 * cap;
        GS_CALL(gs_realloc(&l->vals, (size_t)cap, sizeof *l->vals));
        memset(l->vals + l->cap, 0, (size_t)(cap - l->cap) * sizeof *l->vals);
        l->cap = cap;
    }
    int i = 0;
    for (; i < m; i++) {
        gs_cfg_value *d = &l->vals[l->n + i];
        *d = vals[i];
        d->s = d->origin = NULL;
        if (vals[i].s) GS_TRY(dup_string(vals[i].s, &d->s));
        if (origin) GS_TRY(dup_string(origin, &d->origin));
    }
    l->n += m;
    return GS_OK;
cleanup:
    for (int j = 0; j <= i && j < m; j++) value_free(&l->vals[l->n + j]);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* text values (-s and schema defaults)                                                           */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Trims blanks in place; returns the new start. */
static char *trim(char *s)
{
    while (is_space(*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1])) s[--n] = '\0';
    return s;
}

/* Removes one pair of matching surrounding quotes ("..." or '...') in place. */
static char *unquote(char *s)
{
    size_t n = strlen(s);
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
        s[n - 1] = '\0';
        return s + 1;
    }
    return s;
}

static bool parse_bool_text(const char *s, bool *b)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *b = true, true;
        if (strcasecmp(s, no[i]) == 0) return *b = false, true;
    }
    return false;
}

/* Converts text to key k's type. text is modified (trimmed/unquoted); raw->s points into it. */
static gs_status parse_text(int k, char *text, const char *where, raw_value *raw)
{
    const gs_cfg_key *key = &gs_cfg_schema[k];
    memset(raw, 0, sizeof *raw);
    switch (key->type) {
    case GS_CFG_INT: {
        char *s = trim(text), *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || *end)
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s expects an integer, got \"%s\"", where, key->path, s);
        if (errno == ERANGE)
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s: \"%s\" does not fit in a 64-bit integer", where,
                            key->path, s);
        raw->kind = RAW_INT;
        raw->i = v;
        return GS_OK;
    }
    case GS_CFG_DOUBLE: {
        char *s = trim(text), *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || *end)
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s expects a number, got \"%s\"", where, key->path, s);
        if (!isfinite(v))
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s expects a finite number, got \"%s\"", where,
                            key->path, s);
        raw->kind = RAW_FLOAT; /* underflow (ERANGE with a finite result) is accepted as is */
        raw->d = v;
        return GS_OK;
    }
    case GS_CFG_BOOL: {
        char *s = unquote(trim(text));
        if (!parse_bool_text(s, &raw->b))
            return GS_ERROR(GS_ERR_CONFIG,
                            "%s: %s expects a boolean (true/false, 1/0, yes/no, on/off), got \"%s\"",
                            where, key->path, s);
        raw->kind = RAW_BOOL;
        return GS_OK;
    }
    case GS_CFG_CHOICE:
        raw->kind = RAW_STRING;
        raw->s = unquote(trim(text));
        return GS_OK;
    case GS_CFG_STRING:
        raw->kind = RAW_STRING;
        raw->s = unquote(text); /* verbatim: blanks may matter in a path */
        return GS_OK;
    }
    return GS_ERROR(GS_ERR_INTERNAL, "%s: %s has an unknown schema type", where, key->path);
}

/* ---------------------------------------------------------------------------------------------- */
/* create, destroy, copy                                                                          */

void gs_config_destroy(gs_config **cfg)
{
    if (!cfg || !*cfg) return;
    if ((*cfg)->v)
        for (int k = 0; k < (*cfg)->n; k++) value_free(&(*cfg)->v[k]);
    if ((*cfg)->lists)
        for (int k = 0; k < (*cfg)->n; k++) list_clear(&(*cfg)->lists[k]);
    gs_free(&(*cfg)->v);
    gs_free(&(*cfg)->lists);
    gs_free(cfg);
}

static gs_status config_alloc(gs_config **out)
{
    gs_status st = GS_OK;
    gs_config *c = NULL;
    GS_TRY(gs_calloc(&c, 1, sizeof *c));
    c->n = schema_rows();
    GS_TRY(gs_calloc(&c->v, (size_t)c->n, sizeof *c->v));
    GS_TRY(gs_calloc(&c->lists, (size_t)c->n, sizeof *c->lists));
    *out = c;
    c = NULL;
cleanup:
    gs_config_destroy(&c);
    return st;
}

gs_status gs_config_create(gs_config **cfg)
{
    gs_status st = GS_OK;
    gs_config *c = NULL;
    char *text = NULL;
    if (!cfg) return GS_ERROR(GS_ERR_ARG, "gs_config_create: cfg is NULL");
    *cfg = NULL;
    GS_TRY(config_alloc(&c));
    for (int k = 0; k < c->n; k++) {
        /* the defaults go through the -s parser and the same checks: a bad default is a schema bug
         * that the first config created reports */
        char where[WHERE_MAX_LEN];
        raw_value raw;
        gs_cfg_value val;
        snprintf(where, sizeof where, "schema default of %s", gs_cfg_schema[k].path);
        GS_TRY(dup_string(gs_cfg_schema[k].def, &text));
        GS_TRY(parse_text(k, text, where, &raw));
        GS_TRY(gs_cfg_check_value(k, &raw, where, &val));
        GS_TRY(gs_cfg_store(c, k, &val, NULL));
        gs_free(&text);
    }
    *cfg = c;
    c = NULL;
cleanup:
    gs_free(&text);
    gs_config_destroy(&c);
    return st;
}

gs_status gs_config_copy(const gs_config *src, gs_config **dst)
{
    gs_status st = GS_OK;
    gs_config *c = NULL;
    if (!src || !dst) return GS_ERROR(GS_ERR_ARG, "gs_config_copy: src or dst is NULL");
    *dst = NULL;
    GS_TRY(config_alloc(&c));
    c->allow_lists = src->allow_lists;
    for (int k = 0; k < c->n; k++) {
        GS_TRY(gs_cfg_store(c, k, &src->v[k], src->v[k].origin));
        if (src->lists[k]) { /* shared, not copied */
            __atomic_add_fetch(&src->lists[k]->refs, 1, __ATOMIC_RELAXED);
            c->lists[k] = src->lists[k];
        }
    }
    *dst = c;
    c = NULL;
cleanup:
    gs_config_destroy(&c);
    return st;
}

/* Exchanges the values of a and b (commit of a validated copy). */
void gs_cfg_swap_values(gs_config *a, gs_config *b)
{
    gs_cfg_value *v = a->v;
    gs_cfg_list **l = a->lists;
    a->v = b->v;
    b->v = v;
    a->lists = b->lists;
    b->lists = l;
}

/* ---------------------------------------------------------------------------------------------- */
/* -s group.key=value                                                                             */

/* Splits "group.key=value" (a copy in *copy, owned by the caller) into the key's schema row *k and
 * the value text *text (inside *copy); errors name the assignment as it was written (`where`). */
static gs_status split_assignment(const char *assignment, const char *where, char **copy, int *k, char **text)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return GS_ERROR(GS_ERR_CONFIG, "%s: expected group.key=value (e.g. -s solver.restart=50)", where);
    GS_CALL(dup_string(assignment, copy));
    (*copy)[eq - assignment] = '\0';
    char *path = trim(*copy);
    *text = *copy + (eq - assignment) + 1;
    if (!path[0])
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s: the key before '=' is empty; expected group.key=value (e.g. -s solver.restart=50)", where);
    *k = gs_cfg_key_index(path);
    if (*k >= 0) return GS_OK;
    if (gs_cfg_group_exists(path)) {
        char members[LIST_MAX_LEN];
        const char *example = NULL; /* the group's first key, e.g. solver.type */
        for (int j = 0; gs_cfg_schema[j].path && !example; j++)
            if (gs_cfg_below(path, gs_cfg_schema[j].path)) example = gs_cfg_schema[j].path;
        gs_cfg_group_members(path, members, sizeof members);
        return GS_ERROR(GS_ERR_CONFIG, "%s: %s is a group, not a key; set one of its members (%s), e.g. -s %s=%s",
                        where, path, members, example, gs_cfg_schema[gs_cfg_key_index(example)].def);
    }
    return gs_cfg_unknown_name(where, path, false);
}

gs_status gs_config_set(gs_config *cfg, const char *assignment)
{
    gs_status st = GS_OK;
    char *copy = NULL, *text = NULL;
    int k = -1;
    if (!cfg || !assignment) return GS_ERROR(GS_ERR_ARG, "gs_config_set: cfg or assignment is NULL");
    char where[WHERE_MAX_LEN];
    /* echo at most 200 characters: a huge assignment must not crowd the explanation out of the
     * message (which holds about 1000) */
    snprintf(where, sizeof where, "-s %.200s%s", assignment, strlen(assignment) > 200 ? "..." : "");
    GS_TRY(split_assignment(assignment, where, &copy, &k, &text));
    raw_value raw;
    gs_cfg_value val;
    GS_TRY(parse_text(k, text, where, &raw));
    GS_TRY(gs_cfg_check_value(k, &raw, where, &val));
    GS_TRY(gs_cfg_store(cfg, k, &val, "-s"));
cleanup:
    gs_free(&copy);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* parameter sweeps: keys holding lists                                                           */

void gs_config_allow_lists(gs_config *cfg, bool allow)
{
    if (cfg) cfg->allow_lists = allow;
}

gs_status gs_config_set_list(gs_config *cfg, const char *assignment, bool append)
{
    gs_status st = GS_OK;
    char *copy = NULL, *text = NULL;
    gs_cfg_value *vals = NULL;
    int k = -1, n = 0;
    if (!cfg || !assignment) return GS_ERROR(GS_ERR_ARG, "gs_config_set_list: cfg or assignment is NULL");
    char where[WHERE_MAX_LEN];
    /* echo at most 200 characters: a huge assignment must not crowd the explanation out of the
     * message (which holds about 1000) */
    snprintf(where, sizeof where, "-s %.200s%s", assignment, strlen(assignment) > 200 ? "..." : "");
    GS_TRY(split_assignment(assignment, where, &copy, &k, &text));
    const gs_cfg_key *key = &gs_cfg_schema[k];
    /* string keys are paths, where a comma is an ordinary character: never split */
    bool split = key->type != GS_CFG_STRING;
    int pieces = 1;
    if (split)
        for (const char *c = text; *c; c++) pieces += *c == ',';
    int have = append ? (list_len(cfg, k) > 1 ? list_len(cfg, k) : 1) : 0;
    if (have + pieces > 1 && !cfg->allow_lists)
        GS_FAIL(GS_ERR_CONFIG,
                "%s: %s: lists are for sweeps and are not supported here; give a single value (%s)", where,
                key->path, gs_cfg_type_word(key->type));
    GS_TRY(gs_calloc(&vals, (size_t)pieces, sizeof *vals));
    char *piece = text;
    for (int p = 0; p < pieces; p++) {
        char *comma = split ? strchr(piece, ',') : NULL;
        if (comma) *comma = '\0';
        char pwhere[WHERE_MAX_LEN + 80];
        if (pieces > 1)
            snprintf(pwhere, sizeof pwhere, "%s: value %d of the comma-separated list", where, p + 1);
        else
            snprintf(pwhere, sizeof pwhere, "%s", where);
        if (pieces > 1 && !trim(piece)[0])
            GS_FAIL(GS_ERR_CONFIG, "%s: empty value (two commas in a row, or one at an end)", pwhere);
        raw_value raw;
        GS_TRY(parse_text(k, piece, pwhere, &raw));
        GS_TRY(gs_cfg_check_value(k, &raw, pwhere, &vals[n]));
        vals[n++].origin = (char *)"-s";
        piece = comma ? comma + 1 : piece + strlen(piece);
    }
    if (have > 0)
        GS_TRY(append_list(cfg, k, vals, n, "-s")); /* -s KEY given again: amortised O(values added) */
    else
        GS_TRY(gs_cfg_store_list(cfg, k, vals, n, NULL));
cleanup:
    gs_free(&vals);
    gs_free(&copy);
    return st;
}

int gs_config_count(const gs_config *cfg, const char *path)
{
    int k = path ? gs_cfg_key_index(path) : -1;
    if (!cfg || k < 0) return 0;
    return list_len(cfg, k) > 1 ? list_len(cfg, k) : 1;
}

gs_status gs_config_pick(gs_config *cfg, const char *path, int index)
{
    int k = path ? gs_cfg_key_index(path) : -1;
    if (!cfg || k < 0)
        return GS_ERROR(GS_ERR_ARG, "gs_config_pick: no configuration or no key \"%s\"", path ? path : "(null)");
    int n = gs_config_count(cfg, path);
    if (index < 0 || index >= n)
        return GS_ERROR(GS_ERR_ARG, "gs_config_pick: %s holds %d value(s); asked for value %d", path, n, index);
    if (n == 1) return GS_OK;
    const gs_cfg_value *v = &cfg->lists[k]->vals[index];
    GS_CALL(gs_cfg_store(cfg, k, v, v->origin)); /* copies before the list is released */
    return GS_OK;
}

/* One value of key k as libconfig text ("gmres" quoted and escaped, doubles that read back exactly). */
static void write_one(FILE *f, int k, const gs_cfg_value *v)
{
    char buf[64];
    switch (gs_cfg_schema[k].type) {
    case GS_CFG_INT: fprintf(f, "%lld", v->i); break;
    case GS_CFG_DOUBLE:
        gs_cfg_format_double(v->d, buf, sizeof buf);
        fputs(buf, f);
        break;
    case GS_CFG_BOOL: fputs(v->b ? "true" : "false", f); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE:
        fputc('"', f);
        for (const unsigned char *c = (const unsigned char *)v->s; *c; c++) {
            if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
            else if (*c == '\n') fputs("\\n", f);
            else if (*c == '\t') fputs("\\t", f);
            else if (*c == '\r') fputs("\\r", f);
            else if (*c < 0x20) fprintf(f, "\\x%02x", *c);
            else fputc(*c, f);
        }
        fputc('"', f);
        break;
    }
}

void gs_config_print_value(const gs_config *cfg, const char *path, FILE *f)
{
    int k = path ? gs_cfg_key_index(path) : -1;
    if (!cfg || k < 0) return;
    if (list_len(cfg, k) <= 1) {
        write_one(f, k, &cfg->v[k]);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < cfg->lists[k]->n; i++) {
        if (i) fputs(", ", f);
        write_one(f, k, &cfg->lists[k]->vals[i]);
    }
    fputc(']', f);
}

/* ---------------------------------------------------------------------------------------------- */
/* getters: an undeclared path or a type mismatch is a programming error                          */

static const gs_cfg_value *lookup(const gs_config *cfg, const char *path, const char *fn, int want1,
                                  int want2)
{
    int k = path ? gs_cfg_key_index(path) : -1;
    if (!cfg) {
        fprintf(stderr, "gpusolve: %s(\"%s\"): the configuration is NULL (programming error)\n", fn,
                path ? path : "(null)");
        abort();
    }
    if (k < 0) {
        fprintf(stderr, "gpusolve: %s(\"%s\"): not a key of the configuration schema (programming error)\n",
                fn, path ? path : "(null)");
        abort();
    }
    int t = (int)gs_cfg_schema[k].type;
    if (want1 >= 0 && t != want1 && t != want2) {
        fprintf(stderr, "gpusolve: %s(\"%s\"): the key's schema type is %s (programming error)\n", fn,
                path, gs_cfg_type_word(gs_cfg_schema[k].type));
        abort();
    }
    return &cfg->v[k];
}

long long gs_config_int(const gs_config *cfg, const char *path)
{
    return lookup(cfg, path, "gs_config_int", GS_CFG_INT, GS_CFG_INT)->i;
}

double gs_config_double(const gs_config *cfg, const char *path)
{
    return lookup(cfg, path, "gs_config_double", GS_CFG_DOUBLE, GS_CFG_DOUBLE)->d;
}

bool gs_config_bool(const gs_config *cfg, const char *path)
{
    return lookup(cfg, path, "gs_config_bool", GS_CFG_BOOL, GS_CFG_BOOL)->b;
}

const char *gs_config_string(const gs_config *cfg, const char *path)
{
    return lookup(cfg, path, "gs_config_string", GS_CFG_STRING, GS_CFG_CHOICE)->s;
}

bool gs_config_is_default(const gs_config *cfg, const char *path)
{
    return lookup(cfg, path, "gs_config_is_default", -1, -1)->origin == NULL;
}

const char *gs_config_origin(const gs_config *cfg, const char *path)
{
    const gs_cfg_value *v = lookup(cfg, path, "gs_config_origin", -1, -1);
    return v->origin ? v->origin : "default";
}
