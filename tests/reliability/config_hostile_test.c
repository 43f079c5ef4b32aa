/* Hostile configuration text through the C API: @include of a folder (libconfig 1.5 would end the
 * process), of a missing file or a FIFO, includes nested past libconfig's limit, very deep group
 * nesting, very long names and values, unclosed comments, settings given twice, files over the size
 * limit, NUL bytes and byte-order marks. Each must fail with a message naming the file and line (and
 * the key), leave the configuration unchanged, and return promptly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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


/* A file in a fresh temporary folder (the folder's path is in dir, which the caller removes). */
static const char *temp_file(char *dir, const char *name, const char *text)
{
    static char path[4][400];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    if (text) {
        FILE *f = fopen(path[k], "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    }
    return path[k];
}

static void remove_folder(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_unclosed_comment(void **state)
{
    (void)state;
    /* libconfig ignores everything after an unclosed comment: here, the rtol line */
    expect_refused("solver = { restart = 5; };\n\n/* old:\nsolver = { rtol = 1e-3; };\n",
                   "hostile:3: a comment opened with /* here is never closed");
    /* closed ones, and comment markers inside strings, are fine */
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_load_string(cfg, "/* a */ solver = { restart = 5; /* b\n c */ }; # /* not a comment\n"
                                            "output = { history = \"/* not a comment\"; };\n", "ok"));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 5);
    assert_string_equal(gs_config_string(cfg, "output.history"), "/* not a comment");
    gs_config_destroy(&cfg);
}

static void test_setting_given_twice(void **state)
{
    (void)state;
    expect_refused("solver = {\n  restart = 5;\n  restart = 6;\n};\n",
                   "hostile:3: solver.restart is set twice in the same group (first on line 2)");
    expect_refused("trisolve = { lower = { type = \"jacobi\"; sweeps = 2; };\n upper = { }; };\n"
                   "trisolve = { };\n",
                   "hostile:3: trisolve is set twice");
    expect_refused("trisolve = { lower = { type = \"jacobi\";\n type : \"levelset\"; }; };\n",
                   "hostile:2: trisolve.lower.type is set twice");
    /* inside groups of a list: each group is its own scope */
    expect_refused("x = ( { a = 1; }, { a = 1;\n a = 2; } );\n", "hostile:2: x[1].a is set twice");
    /* names are case-sensitive, as in libconfig: these are two settings (and solver.Restart is unknown) */
    expect_refused("solver = { restart = 5; Restart = 6; };\n", "unknown key");
    /* across an @include: both files named */
    char dir[] = "/tmp/gs_cfg_twice_XXXXXX";
    assert_non_null(mkdtemp(dir));
    temp_file(dir, "part.cfg", "# part\nsolver = { restart = 9; };\n");
    const char *main_cfg = temp_file(dir, "main.cfg", "solver = { rtol = 1e-6; };\n@include \"part.cfg\"\n");
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    char needle[600];
    snprintf(needle, sizeof needle, "%s/part.cfg:2: solver is set twice in the same group (first on %s:1)", dir,
             main_cfg);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, main_cfg), GS_ERR_CONFIG, needle);
    gs_config_destroy(&cfg);
    remove_folder(dir);
}

static void test_include_missing_or_special(void **state)
{
    (void)state;
    char dir[] = "/tmp/gs_cfg_incl_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *main_cfg = temp_file(dir, "main.cfg", "solver = { restart = 5; };\n@include \"nothere.cfg\"\n");
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    char needle[600];
    snprintf(needle, sizeof needle, "%s:2: @include \"nothere.cfg\": cannot open %s/nothere.cfg: No such file", main_cfg,
             dir);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, main_cfg), GS_ERR_IO, needle);
    /* a FIFO: refused at once (libconfig would wait for a writer, then read without a limit) */
    assert_int_equal(mkfifo(temp_file(dir, "pipe.cfg", NULL), 0600), 0);
    main_cfg = temp_file(dir, "fifo.cfg", "@include \"pipe.cfg\"\n");
    double t0 = gs_wtime();
    GS_ASSERT_FAILS(gs_config_load_file(cfg, main_cfg), GS_ERR_CONFIG, "names a FIFO (named pipe)");
    assert_true(gs_wtime() - t0 < 5.0);
    /* an @include inside a comment or a string is not one */
    main_cfg = temp_file(dir, "commented.cfg",
                         "/*\n@include \"nothere.cfg\"\n*/\noutput = { history = \"x\n@include \\\"nothere.cfg\\\"\"; };\n");
    GS_ASSERT_OK(gs_config_load_file(cfg, main_cfg));
    gs_config_destroy(&cfg);
    remove_folder(dir);
}

static void test_nesting_limit(void **state)
{
    (void)state;
    char text[2048] = "solver = ";
    for (int i = 0; i < 70; i++) strcat(text, "{ a = ");
    strcat(text, "1;");
    for (int i = 0; i < 70; i++) strcat(text, " };");
    expect_refused(text, "hostile:1: groups and lists are nested more than 64 deep");
    strcpy(text, "solver = { restart = ");
    for (int i = 0; i < 70; i++) strcat(text, "(");
    expect_refused(text, "nested more than 64 deep");
}

static void test_size_and_binary_limits(void **state)
{
    (void)state;
    char dir[] = "/tmp/gs_cfg_size_XXXXXX";
    assert_non_null(mkdtemp(dir));
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    /* over 16 MiB: refused from its size */
    const char *big = temp_file(dir, "big.cfg", "# big\n");
    assert_int_equal(truncate(big, (16 << 20) + 1), 0);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, big), GS_ERR_CONFIG, "larger than 16 MiB");
    /* exactly 16 MiB of comment is read */
    const char *edge = temp_file(dir, "edge.cfg", NULL);
    FILE *f = fopen(edge, "w");
    assert_non_null(f);
    fputc('#', f);
    for (long i = 1; i < (16L << 20) - 1; i++) fputc(' ', f);
    fputc('\n', f);
    fclose(f);
    GS_ASSERT_OK(gs_config_load_file(cfg, edge));
    /* an included file counts with its includer */
    const char *inc = temp_file(dir, "inc_big.cfg", "@include \"edge.cfg\"\n");
    GS_ASSERT_FAILS(gs_config_load_file(cfg, inc), GS_ERR_CONFIG, "larger than 16 MiB");
    /* NUL bytes: binary data, named with the line */
    const char *bin = temp_file(dir, "bin.cfg", "solver = {\n restart = 5;\n");
    f = fopen(bin, "ab");
    assert_non_null(f);
    fputc(0, f);
    fclose(f);
    char needle[400];
    snprintf(needle, sizeof needle, "%s:3: found a NUL byte", bin);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, bin), GS_ERR_CONFIG, needle);
    /* a byte-order mark */
    const char *bom = temp_file(dir, "bom.cfg", "\xEF\xBB\xBFsolver = { restart = 5; };\n");
    GS_ASSERT_FAILS(gs_config_load_file(cfg, bom), GS_ERR_CONFIG, "byte-order mark");
    /* a FIFO is read once (as -c <(...) gives): its text is what libconfig parses */
    const char *fifo = temp_file(dir, "cfg.fifo", NULL);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *w = fopen(fifo, "w");
        if (w) {
            fputs("solver = { restart = 42; };\n", w);
            fclose(w);
        }
        _exit(0);
    }
    GS_ASSERT_OK(gs_config_load_file(cfg, fifo));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 42);
    int wst = 0;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    gs_config_destroy(&cfg);
    remove_folder(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_include_folder),          cmocka_unit_test(test_include_nested_folder),
        cmocka_unit_test(test_include_self_many_times), cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_long_names_and_values),   cmocka_unit_test(test_unclosed_comment),
        cmocka_unit_test(test_setting_given_twice),     cmocka_unit_test(test_include_missing_or_special),
        cmocka_unit_test(test_nesting_limit),           cmocka_unit_test(test_size_and_binary_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
