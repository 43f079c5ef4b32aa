/* Fuzz target: the -s override parsers. The input is up to 8 assignments, one per line, applied in
 * order twice: to a configuration without sweep lists through gs_config_set, and to one with lists
 * allowed through gs_config_set_list, the parser of gpusolve's -s ("key=v1,v2" is a sweep; a line
 * starting with '+' appends, as a repeated -s does). Oracles: no crash, leak or undefined behaviour; a
 * failure is GS_ERR_CONFIG with a message and changes nothing (not even the printed text); a success
 * marks the key as set by -s (an append keeps the first value's origin); picking one value of each list works; both final configurations print
 * to text that loads back to the same values and the same text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "fuzz_util.h"

/* The key part of "key=value" as the parsers see it (blanks trimmed), when it is a schema key. */
static const char *schema_key(const char *assignment)
{
    const char *eq = strchr(assignment, '=');
    if (!eq) return NULL;
    const char *s = assignment, *e = eq;
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) e--;
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++)
        if (strlen(k->path) == (size_t)(e - s) && strncmp(k->path, s, (size_t)(e - s)) == 0) return k->path;
    return NULL;
}

/* Applies one assignment and checks the outcome; lists: through gs_config_set_list. */
static void apply(gs_config *cfg, const char *line, bool lists)
{
    bool append = lists && line[0] == '+';
    const char *assignment = append ? line + 1 : line;
    gs_config *before = NULL;
    FUZZ_CHECK(gs_config_copy(cfg, &before) == GS_OK, "gs_config_copy failed");
    char *text_before = fuzz_config_text(cfg);
    gs_error_clear();
    gs_status st = lists ? gs_config_set_list(cfg, assignment, append) : gs_config_set(cfg, assignment);
    const char *what = lists ? "gs_config_set_list" : "gs_config_set";
    if (st != GS_OK) {
        fuzz_check_error(st, what);
        FUZZ_CHECK(st == GS_ERR_CONFIG, "%s failed with %s, expected GS_ERR_CONFIG", what, gs_status_name(st));
        const char *key = fuzz_config_diff(cfg, before);
        FUZZ_CHECK(key == NULL, "a failed %s changed %s", what, key);
        char *text_after = fuzz_config_text(cfg);
        FUZZ_CHECK(strcmp(text_before, text_after) == 0, "a failed %s changed the printed configuration", what);
        free(text_after);
        gs_error_clear();
    } else {
        const char *key = schema_key(assignment);
        FUZZ_CHECK(key != NULL, "%s('%s') succeeded but names no schema key", what, assignment);
        /* (appending keeps the origin of the first value, which may be the default) */
        FUZZ_CHECK(append || strcmp(gs_config_origin(cfg, key), "-s") == 0, "%s: origin is %s, expected -s", key,
                   gs_config_origin(cfg, key));
        FUZZ_CHECK(gs_config_count(cfg, key) >= 1 && (lists || gs_config_count(cfg, key) == 1),
                   "%s holds %d values", key, gs_config_count(cfg, key));
    }
    free(text_before);
    gs_config_destroy(&before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    gs_config *single = NULL, *multi = NULL;
    gs_error_clear();
    FUZZ_CHECK(gs_config_create(&single) == GS_OK && gs_config_create(&multi) == GS_OK, "gs_config_create failed");
    gs_config_allow_lists(multi, true);
    char *line = text;
    for (int n = 0; line && n < 8; n++) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        apply(single, line, false);
        apply(multi, line, true);
        line = nl ? nl + 1 : NULL;
    }
    fuzz_check_config_roundtrip(single, false);
    fuzz_check_config_roundtrip(multi, true);
    /* a sweep reduces each list to one of its values */
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) {
        int count = gs_config_count(multi, k->path);
        if (count > 1) {
            FUZZ_CHECK(gs_config_pick(multi, k->path, count - 1) == GS_OK, "picking value %d of %s", count - 1,
                       k->path);
            FUZZ_CHECK(gs_config_count(multi, k->path) == 1, "%s still holds %d values after the pick", k->path,
                       gs_config_count(multi, k->path));
        }
    }
    fuzz_check_config_roundtrip(multi, false);
    gs_config_destroy(&single);
    gs_config_destroy(&multi);
    gs_free(&text);
    return 0;
}
