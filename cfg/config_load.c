/* Loading libconfig text into a configuration (cfg/config.h: gs_config_load_string, gs_config_load_file):
 * the text checked first (gs_cfg_prescan), parsed by libconfig, every setting checked against the schema
 * in a copy that is committed only when all of them are valid. */
#include "cfg/config.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfg/config_internal.h"
#include "core/mem.h"

/* libconfig text                                                                                 */

/* libconfig 1.5 reads an integer literal without the L suffix into 32 bits and silently wraps it
 * (4294967297 becomes 1). Before its tree is used, scan the text for such literals and refuse
 * them, naming the line. The text has already parsed, so the tokens are well formed. */
static gs_status check_int_literals(const char *text, const char *name)
{
    int line = 1;
    const char *p = text;
    while (*p) {
        char c = *p;
        if (c == '\n') {
            line++;
            p++;
        } else if (c == '#' || (c == '/' && p[1] == '/') || c == '@') { /* comment, @include */
            while (*p && *p != '\n') p++;
        } else if (c == '/' && p[1] == '*') {
            for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
                if (*p == '\n') line++;
            if (*p) p += 2;
        } else if (c == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1]) p++;
                if (*p == '\n') line++;
            }
            if (*p) p++;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*' || c == '_') {
            while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                   *p == '-' || *p == '_' || *p == '*')
                p++; /* a setting name or true/false: digits in it are no number */
        } else if ((c >= '0' && c <= '9') || ((c == '-' || c == '+') && p[1] >= '0' && p[1] <= '9')) {
            const char *start = p;
            if (c == '-' || c == '+') p++;
            bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
            if (hex) p += 2;
            while ((*p >= '0' && *p <= '9') || (hex && ((*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))))
                p++;
            if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) { /* a float: skip it */
                if (*p == '.') p++;
                while (*p >= '0' && *p <= '9') p++;
                if (*p == 'e' || *p == 'E') {
                    p++;
                    if (*p == '-' || *p == '+') p++;
                    while (*p >= '0' && *p <= '9') p++;
                }
                continue;
            }
            if (*p == 'L') { /* 64-bit literal: libconfig reads it whole */
                p++;
                continue;
            }
            char lit[64];
            size_t n = (size_t)(p - start);
            snprintf(lit, sizeof lit, "%.*s", (int)(n < 63 ? n : 63), start);
            bool wraps;
            errno = 0;
            if (hex) { /* libconfig reads 0x80000000..0xffffffff as negative and cuts longer ones */
                unsigned long long mag = strtoull(lit + (lit[0] == '+' || lit[0] == '-'), NULL, 16);
                wraps = errno == ERANGE || n >= 63 || mag > (unsigned long long)INT_MAX;
            } else {
                long long v = strtoll(lit, NULL, 10);
                wraps = errno == ERANGE || n >= 63 || v < INT_MIN || v > INT_MAX;
            }
            if (wraps)
                return GS_ERROR(GS_ERR_CONFIG,
                                "%s:%d: the integer %s does not fit in 32 bits, and libconfig reads "
                                "integers without the L suffix as 32-bit; write %sL (64-bit) or a "
                                "floating-point number",
                                name, line, lit, lit);
        } else if (c == '.' && p[1] >= '0' && p[1] <= '9') { /* float like .5 */
            p++;
            while ((*p >= '0' && *p <= '9') || *p == 'e' || *p == 'E' ||
                   ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E')))
                p++;
        } else {
            p++;
        }
    }
    return GS_OK;
}

static const char *setting_kind(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP: return "a group";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a floating-point number";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_STRING: return "a string";
    }
    return "a setting";
}

/* A libconfig scalar as a raw value (strings borrowed from the setting). */
static gs_status setting_to_raw(const config_setting_t *s, const char *path, const char *where, raw_value *raw)
{
    memset(raw, 0, sizeof *raw);
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        raw->kind = RAW_INT;
        raw->i = config_setting_get_int64(s);
        return GS_OK;
    case CONFIG_TYPE_FLOAT:
        raw->kind = RAW_FLOAT;
        raw->d = config_setting_get_float(s);
        return GS_OK;
    case CONFIG_TYPE_BOOL:
        raw->kind = RAW_BOOL;
        raw->b = config_setting_get_bool(s) != 0;
        return GS_OK;
    case CONFIG_TYPE_STRING:
        raw->kind = RAW_STRING;
        raw->s = config_setting_get_string(s);
        return GS_OK;
    }
    return GS_ERROR(GS_ERR_CONFIG, "%s: %s: expected a single value, found %s", where, path, setting_kind(s));
}

/* A list or array value for key k: the values of a parameter sweep. Every element is checked like
 * a scalar (type, range, choices); the key then holds the whole list and its first value. Lists are
 * refused unless the configuration allows them (the gpusolve CLI does; a single solve does not). */
static gs_status apply_list(gs_config *cfg, int k, const config_setting_t *s, const char *where)
{
    gs_status st = GS_OK;
    gs_cfg_value *vals = NULL;
    const char *path = gs_cfg_schema[k].path;
    if (!cfg->allow_lists)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s: %s: lists are for sweeps and are not supported here; give a single value "
                        "(%s), or run once per value with -s %s=VALUE",
                        where, path, gs_cfg_type_word(gs_cfg_schema[k].type), path);
    int n = config_setting_length(s);
    if (n <= 0)
        return GS_ERROR(GS_ERR_CONFIG, "%s: %s = [] is an empty list; a sweep needs at least one value", where,
                        path);
    GS_TRY(gs_calloc(&vals, (size_t)n, sizeof *vals));
    for (int e = 0; e < n; e++) {
        const config_setting_t *el = config_setting_get_elem(s, (unsigned int)e);
        char ewhere[WHERE_MAX_LEN + 40];
        snprintf(ewhere, sizeof ewhere, "%s: value %d of the list", where, e + 1);
        raw_value raw;
        GS_TRY(setting_to_raw(el, path, ewhere, &raw));
        GS_TRY(gs_cfg_check_value(k, &raw, ewhere, &vals[e])); /* strings borrowed from the setting */
    }
    GS_TRY(gs_cfg_store_list(cfg, k, vals, n, where));
cleanup:
    gs_free(&vals);
    return st;
}

static gs_status apply_group(gs_config *cfg, const config_setting_t *group, const char *prefix,
                             const char *name);

/* One member of a group: recurse into known groups, check and store known keys. */
static gs_status apply_setting(gs_config *cfg, const config_setting_t *s, const char *prefix,
                               const char *name)
{
    const char *file = config_setting_source_file(s) ? config_setting_source_file(s) : name;
    char where[WHERE_MAX_LEN], path[PATH_MAX_LEN];
    snprintf(where, sizeof where, "%s:%u", file, config_setting_source_line(s));
    int plen = snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "",
                        config_setting_name(s) ? config_setting_name(s) : "");
    if (plen < 0 || (size_t)plen >= sizeof path)
        return GS_ERROR(GS_ERR_CONFIG, "%s: unknown key %.80s... (name too long)", where, path);
    int k = gs_cfg_key_index(path);
    bool group = gs_cfg_group_exists(path);
    int type = config_setting_type(s);

    if (type == CONFIG_TYPE_GROUP) {
        if (k >= 0) {
            const gs_cfg_key *key = &gs_cfg_schema[k];
            const char *q = key->type == GS_CFG_STRING || key->type == GS_CFG_CHOICE ? "\"" : "";
            return GS_ERROR(GS_ERR_CONFIG, "%s: %s is a key, not a group: it expects %s, e.g. %s = %s%s%s;",
                            where, path, gs_cfg_type_word(key->type), gs_cfg_leaf_of(path), q, key->def, q);
        }
        if (!group) return gs_cfg_unknown_name(where, path, true);
        GS_CALL(apply_group(cfg, s, path, name));
        return GS_OK;
    }
    if (k < 0) {
        if (group) {
            char members[LIST_MAX_LEN];
            gs_cfg_group_members(path, members, sizeof members);
            return GS_ERROR(GS_ERR_CONFIG,
                            "%s: %s is a group, not a key, but was given %s; write %s = { ... }; with "
                            "some of: %s",
                            where, path, setting_kind(s), gs_cfg_leaf_of(path), members);
        }
        return gs_cfg_unknown_name(where, path, false);
    }
    if (type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST) {
        GS_CALL(apply_list(cfg, k, s, where));
        return GS_OK;
    }

    raw_value raw;
    GS_CALL(setting_to_raw(s, path, where, &raw));
    gs_cfg_value val;
    GS_CALL(gs_cfg_check_value(k, &raw, where, &val));
    GS_CALL(gs_cfg_store(cfg, k, &val, where));
    return GS_OK;
}

static gs_status apply_group(gs_config *cfg, const config_setting_t *group, const char *prefix,
                             const char *name)
{
    unsigned int n = (unsigned int)config_setting_length(group);
    for (unsigned int e = 0; e < n; e++)
        GS_CALL(apply_setting(cfg, config_setting_get_elem(group, e), prefix, name));
    return GS_OK;
}

/* Applies a parsed tree to a copy of cfg and commits the copy when every setting was valid. */
static gs_status apply_tree(gs_config *cfg, const config_t *lc, const char *name)
{
    gs_status st = GS_OK;
    gs_config *tmp = NULL;
    GS_TRY(gs_config_copy(cfg, &tmp));
    GS_TRY(apply_group(tmp, config_root_setting(lc), "", name));
    gs_cfg_swap_values(cfg, tmp);
cleanup:
    gs_config_destroy(&tmp);
    return st;
}

/* libconfig's message, made precise where it is vague. Most of these cases are caught before libconfig
 * reads the text (gs_cfg_prescan), with the key or file named; these words remain for what slips past. */
static gs_status parse_error(const config_t *lc, const char *name)
{
    const char *file = config_error_file(lc) ? config_error_file(lc) : name;
    const char *text = config_error_text(lc) ? config_error_text(lc) : "unreadable";
    int line = config_error_line(lc);
    if (config_error_type(lc) == CONFIG_ERR_FILE_IO)
        return GS_ERROR(GS_ERR_IO, "%s: cannot read configuration file (libconfig: %s)", file, text);
    /* a sweep list of numbers like [0, 1e-3] mixes an integer and a float, which arrays refuse */
    if (strstr(text, "mismatched element type in array"))
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%d: %s; the values of [ ... ] must all have one type: write floating-point values "
                        "with a decimal point or exponent ([0.0, 1e-3], not [0, 1e-3]), or use a list ( ... )",
                        file, line, text);
    if (strcmp(text, "memory exhausted") == 0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%d: groups and lists are nested too deeply for libconfig's parser (libconfig: memory "
                        "exhausted); a gpusolve configuration needs at most 4 levels",
                        file, line);
    if (strcmp(text, "duplicate setting name") == 0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%d: a setting is given twice in the same group (libconfig: duplicate setting name); give "
                        "each setting once",
                        file, line);
    if (strcmp(text, "cannot open include file") == 0)
        return GS_ERROR(GS_ERR_IO, "%s:%d: the file named by @include cannot be opened (libconfig: %s)", file, line,
                        text);
    if (strcmp(text, "include file nesting too deep") == 0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%d: include file nesting too deep: @include files nested more than %d deep (libconfig's "
                        "limit); does a file include itself?",
                        file, line, GS_CFG_INCLUDE_DEPTH_MAX);
    if (strcmp(text, "syntax error") == 0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "%s:%d: syntax error; expected settings written name = value; (strings in double quotes, "
                        "groups in { }, lists in [ ] or ( ))",
                        file, line);
    return GS_ERROR(GS_ERR_CONFIG, "%s:%d: %s", file, line, text);
}

/* Parses text (named `name`, with its @include files resolved in dir) and applies it to cfg: checked
 * first (gs_cfg_prescan), then parsed by libconfig, then its integer literals checked in every file it
 * read, then every setting checked against the schema in a copy that is committed only when all pass. */
static gs_status load_text(gs_config *cfg, const char *text, const char *name, const char *dir)
{
    gs_status st = GS_OK;
    config_t lc;
    bool lc_init = false;
    gs_cfg_sources src = {0, 0, NULL, NULL};
    GS_TRY(gs_cfg_prescan(text, name, dir, &src));
    config_init(&lc);
    lc_init = true;
    if (dir) config_set_include_dir(&lc, dir); /* libconfig keeps its own copy */
    if (!config_read_string(&lc, text)) {
        st = parse_error(&lc, name);
        goto cleanup;
    }
    GS_TRY(check_int_literals(text, name));
    for (int i = 0; i < src.n; i++) GS_TRY(check_int_literals(src.text[i], src.name[i]));
    GS_TRY(apply_tree(cfg, &lc, name));
cleanup:
    if (lc_init) config_destroy(&lc);
    gs_cfg_sources_free(&src);
    return st;
}

gs_status gs_config_load_string(gs_config *cfg, const char *text, const char *name)
{
    if (!cfg || !text) return GS_ERROR(GS_ERR_ARG, "gs_config_load_string: cfg or text is NULL");
    if (!name) name = "<string>";
    if (strlen(text) > GS_CFG_TEXT_MAX)
        return GS_ERROR(GS_ERR_CONFIG, "%s: the configuration text is larger than %zu MiB (%zu bytes); a configuration "
                        "holds a few settings", name, GS_CFG_TEXT_MAX >> 20, GS_CFG_TEXT_MAX);
    GS_CALL(load_text(cfg, text, name, NULL));
    return GS_OK;
}

/* The file is read once, whatever it is (a FIFO like -c <(...) can be read only once), with a size
 * limit (-c /dev/zero fails at once); libconfig then parses the text read, resolving @include beside
 * the file, not in the current directory. */
gs_status gs_config_load_file(gs_config *cfg, const char *path)
{
    gs_status st = GS_OK;
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    if (!cfg || !path) return GS_ERROR(GS_ERR_ARG, "gs_config_load_file: cfg or path is NULL");
    GS_TRY(gs_cfg_read_text(path, GS_CFG_TEXT_MAX, &text, &len));
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t n = (size_t)(slash - path);
        GS_TRY(gs_malloc(&dir, n + 2, 1));
        memcpy(dir, path, n ? n : 1); /* "/x.cfg" -> "/" */
        dir[n ? n : 1] = '\0';
    }
    GS_TRY(load_text(cfg, text, path, dir));
cleanup:
    gs_free(&text);
    gs_free(&dir);
    return st;
}

