/* Hostile configuration text through the C API: @include of a folder (libconfig 1.5 would end the
 * process), includes nested past libconfig's limit, very deep group nesting, very long names and
 * values. Each must fail with GS_ERR_CONFIG and a message, leave the configuration unchanged, and
 * return promptly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg/config.h"
#include "core/mem.h"
#include "testutil.h"

/* Loads text into a configuration holding solver.restart = 77 and expects a GS_ERR_CONFIG failure
 * whose message contains needle, with the configuration unchanged. */
static void expect_refused(const char *text, const char *needle)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=77"));
    GS_ASSERT_FAILS(gs_config_load_string(cfg, text, "hostile"), GS_ERR_CONFIG, needle);
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 77);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), "-s");
    gs_config_destroy(&cfg);
}

static void test_include_folder(void **state)
{
    (void)state;
    expect_refused("@include \".\"\n", "names a folder");
    expect_refused("solver = { restart = 5; };\n  @include \"/\"\n", "hostile:2: @include \"/\" names a folder");
}

static void test_include_nested_folder(void **state)
{
    (void)state;
    char dir[] = "/tmp/gs_cfg_inc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char inner[300], outer[300], text[700], sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(inner, sizeof inner, "%s/inner.cfg", dir);
    snprintf(outer, sizeof outer, "%s/outer.cfg", dir);
    FILE *f = fopen(inner, "w");
    assert_non_null(f);
    fprintf(f, "# two lines\n@include \"%s\"\n", sub);
    fclose(f);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(text, sizeof text, "@include \"%s\"\n", inner);
    char needle[400];
    snprintf(needle, sizeof needle, "%s:2: @include", inner);
    expect_refused(text, needle);
    /* through a file too (includes resolved beside it, as libconfig does): the folder is named with
     * the including file's line */
    f = fopen(inner, "w");
    assert_non_null(f);
    fputs("# two lines\n@include \"sub\"\n", f);
    fclose(f);
    f = fopen(outer, "w");
    assert_non_null(f);
    fputs("@include \"inner.cfg\"\n", f);
    fclose(f);
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_FAILS(gs_config_load_file(cfg, outer), GS_ERR_CONFIG, "inner.cfg:2: @include \"sub\" names a folder");
    gs_config_destroy(&cfg);
    rmdir(sub);
    unlink(inner);
    unlink(outer);
    rmdir(dir);
}

static void test_include_self_many_times(void **state)
{
    (void)state;
    /* 50 includes of itself per level: libconfig stops at its depth limit, and so does the check of
     * includes that runs first (it follows libconfig's order and stops where libconfig stops) */
    char dir[] = "/tmp/gs_cfg_self_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/self.cfg", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 50; i++) fputs("@include \"self.cfg\"\n", f);
    fclose(f);
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    double t0 = gs_wtime();
    GS_ASSERT_FAILS(gs_config_load_file(cfg, path), GS_ERR_CONFIG, "nesting too deep");
    assert_true(gs_wtime() - t0 < 5.0);
    gs_config_destroy(&cfg);
    unlink(path);
    rmdir(dir);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    enum { DEPTH = 20000 };
    char *text = NULL;
    GS_ASSERT_OK(gs_malloc(&text, 8 * DEPTH + 16, 1));
    char *p = text;
    for (int i = 0; i < DEPTH; i++) p += sprintf(p, "a={");
    p += sprintf(p, "b=1;");
    for (int i = 0; i < DEPTH; i++) p += sprintf(p, "};");
    expect_refused(text, "hostile:1");
    gs_free(&text);
}

static void test_long_names_and_values(void **state)
{
    (void)state;
    enum { LEN = 100000 };
    char *text = NULL;
    GS_ASSERT_OK(gs_malloc(&text, LEN + 64, 1));
    /* a 100000-character key name */
    strcpy(text, "solver = { ");
    size_t n = strlen(text);
    memset(text + n, 'r', LEN);
    strcpy(text + n + LEN, " = 1; };");
    expect_refused(text, "unknown key");
    /* a 100000-character string for a choice key */
    strcpy(text, "solver = { type = \"");
    n = strlen(text);
    memset(text + n, 'g', LEN);
    strcpy(text + n + LEN, "\"; };");
    expect_refused(text, "not an allowed choice");
    /* and through -s */
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    memset(text, 'x', LEN);
    strcpy(text + LEN, "=1");
    GS_ASSERT_FAILS(gs_config_set(cfg, text), GS_ERR_CONFIG, "unknown key");
    gs_config_destroy(&cfg);
    gs_free(&text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_include_folder),          cmocka_unit_test(test_include_nested_folder),
        cmocka_unit_test(test_include_self_many_times), cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_long_names_and_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
