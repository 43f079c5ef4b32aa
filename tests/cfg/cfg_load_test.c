/* Tests of the schema defaults and of loading libconfig files and text: values, origins, and every
 * class of error with its file, line and key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/config.h"
#include "cfg_testutil.h"
#include "core/mem.h"
#include "testutil.h"

/* every row well formed: unique paths, no key that is also a group, ranges ordered, defaults
 * among the choices (checked again by create), help present */
static void schema_is_consistent(void **state)
{
    int n = 0;
    for (int k = 0; gs_cfg_schema[k].path; k++, n++) {
        const gs_cfg_key *key = &gs_cfg_schema[k];
        assert_non_null(key->def);
        assert_non_null(key->help);
        assert_true(strlen(key->help) > 0);
        assert_non_null(strchr(key->path, '.')); /* every key lives in a group */
        size_t len = strlen(key->path);
        for (int j = 0; gs_cfg_schema[j].path; j++) {
            if (j == k) continue;
            assert_string_not_equal(key->path, gs_cfg_schema[j].path);
            /* key->path must not be a group prefix of another key */
            assert_false(strncmp(gs_cfg_schema[j].path, key->path, len) == 0 &&
                         gs_cfg_schema[j].path[len] == '.');
        }
        if (key->type == GS_CFG_INT || key->type == GS_CFG_DOUBLE) assert_true(key->min <= key->max);
        if (key->type == GS_CFG_CHOICE) assert_non_null(key->choices);
    }
    assert_true(n > 30);
}

static void defaults_match_schema(void **state)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 30);
    assert_true(gs_config_double(cfg, "solver.rtol") == 1e-8);
    assert_true(gs_config_double(cfg, "solver.atol") == 0.0);
    assert_string_equal(gs_config_string(cfg, "solver.type"), "auto");
    assert_false(gs_config_bool(cfg, "trisolve.lower.deterministic"));
    assert_string_equal(gs_config_string(cfg, "trisolve.upper.type"), "auto");
    assert_string_equal(gs_config_string(cfg, "output.history"), "");
    assert_int_equal(gs_config_int(cfg, "preconditioner.seed"), 1);
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const gs_cfg_key *key = &gs_cfg_schema[k];
        assert_true(gs_config_is_default(cfg, key->path));
        assert_string_equal(gs_config_origin(cfg, key->path), "default");
        switch (key->type) {
        case GS_CFG_INT: assert_int_equal(gs_config_int(cfg, key->path), strtoll(key->def, NULL, 10)); break;
        case GS_CFG_DOUBLE: assert_true(gs_config_double(cfg, key->path) == strtod(key->def, NULL)); break;
        case GS_CFG_BOOL:
            assert_int_equal(gs_config_bool(cfg, key->path), strcmp(key->def, "true") == 0);
            break;
        case GS_CFG_STRING:
        case GS_CFG_CHOICE: assert_string_equal(gs_config_string(cfg, key->path), key->def); break;
        }
    }
    gs_config_destroy(&cfg);
    assert_null(cfg);
    gs_config_destroy(&cfg); /* destroying NULL is harmless */
}

static const char full_text[] =
    "# a complete run\n"                                                         /* 1 */
    "solver = {\n"                                                               /* 2 */
    "  type = \"fgmres\";\n"                                                     /* 3 */
    "  restart = 50;\n"                                                          /* 4 */
    "  rtol = 1e-10;\n"                                                          /* 5 */
    "  atol = 0;  // an integer literal is a fine double\n"                      /* 6 */
    "  max_iterations = 2000;\n"                                                 /* 7 */
    "  allow_variable_preconditioner = true;\n"                                  /* 8 */
    "};\n"                                                                       /* 9 */
    "preconditioner = { type = \"bilu\"; blocks = 128; fill_level = 1;\n"        /* 10 */
    "                   drop_tolerance = 2.5e-4; zero_pivot = \"shift\"; };\n"   /* 11 */
    "trisolve = {\n"                                                             /* 12 */
    "  lower = { type = \"async-jacobi\"; sweeps = 3; block_order = \"forward\"; };\n" /* 13 */
    "  upper = {\n"                                                              /* 14 */
    "    type = \"levelset\";\n"                                                 /* 15 */
    "    deterministic = true;\n"                                                /* 16 */
    "  };\n"                                                                     /* 17 */
    "};\n"                                                                       /* 18 */
    "system = { rhs = \"data/b.mtx\"; x0 = \"zero\"; reorder = \"rcm\"; seed = 7; };\n" /* 19 */
    "device = { backend = \"host\"; id = 0; };\n"                                /* 20 */
    "output = { format = \"json\"; history = \"hist.csv\"; quiet = false; };\n"; /* 21 */

static void full_file_loads(void **state)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    const char *path = cfg_test_file("full.cfg", full_text);
    char origin[400];
    GS_ASSERT_OK(gs_config_load_file(cfg, path));

    assert_string_equal(gs_config_string(cfg, "solver.type"), "fgmres");
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 50);
    assert_true(gs_config_double(cfg, "solver.rtol") == 1e-10);
    assert_true(gs_config_double(cfg, "solver.atol") == 0.0);
    assert_int_equal(gs_config_int(cfg, "solver.max_iterations"), 2000);
    assert_true(gs_config_bool(cfg, "solver.allow_variable_preconditioner"));
    assert_string_equal(gs_config_string(cfg, "preconditioner.type"), "bilu");
    assert_int_equal(gs_config_int(cfg, "preconditioner.blocks"), 128);
    assert_int_equal(gs_config_int(cfg, "preconditioner.fill_level"), 1);
    assert_true(gs_config_double(cfg, "preconditioner.drop_tolerance") == 2.5e-4);
    assert_string_equal(gs_config_string(cfg, "preconditioner.zero_pivot"), "shift");
    assert_string_equal(gs_config_string(cfg, "trisolve.lower.type"), "async-jacobi");
    assert_int_equal(gs_config_int(cfg, "trisolve.lower.sweeps"), 3);
    assert_string_equal(gs_config_string(cfg, "trisolve.lower.block_order"), "forward");
    assert_string_equal(gs_config_string(cfg, "trisolve.upper.type"), "levelset");
    assert_true(gs_config_bool(cfg, "trisolve.upper.deterministic"));
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "data/b.mtx");
    assert_string_equal(gs_config_string(cfg, "system.reorder"), "rcm");
    assert_int_equal(gs_config_int(cfg, "system.seed"), 7);
    assert_string_equal(gs_config_string(cfg, "device.backend"), "host");
    assert_string_equal(gs_config_string(cfg, "output.format"), "json");
    assert_string_equal(gs_config_string(cfg, "output.history"), "hist.csv");

    /* origins: FILE:LINE of each setting; untouched keys stay default */
    snprintf(origin, sizeof origin, "%s:4", path);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), origin);
    assert_false(gs_config_is_default(cfg, "solver.restart"));
    snprintf(origin, sizeof origin, "%s:11", path);
    assert_string_equal(gs_config_origin(cfg, "preconditioner.zero_pivot"), origin);
    snprintf(origin, sizeof origin, "%s:16", path);
    assert_string_equal(gs_config_origin(cfg, "trisolve.upper.deterministic"), origin);
    /* set in the file to its default value: still from the file */
    snprintf(origin, sizeof origin, "%s:21", path);
    assert_string_equal(gs_config_origin(cfg, "output.quiet"), origin);
    assert_false(gs_config_is_default(cfg, "output.quiet"));
    assert_string_equal(gs_config_origin(cfg, "solver.baseline"), "default");
    assert_true(gs_config_is_default(cfg, "trisolve.upper.sweeps"));
    assert_int_equal(gs_config_int(cfg, "trisolve.upper.sweeps"), 3);
    gs_config_destroy(&cfg);
}

static void empty_file_is_all_defaults(void **state)
{
    gs_config *cfg = NULL, *def = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_create(&def));
    GS_ASSERT_OK(gs_config_load_file(cfg, cfg_test_file("empty.cfg", "")));
    GS_ASSERT_OK(gs_config_load_file(cfg, cfg_test_file("comments.cfg", "# nothing\n/* here */\n// at all\n")));
    GS_ASSERT_OK(gs_config_load_string(cfg, "", "empty"));
    cfg_test_assert_same_values(cfg, def);
    cfg_test_assert_same_origins(cfg, def);
    gs_config_destroy(&cfg);
    gs_config_destroy(&def);
}

/* a second file merges: the keys it sets change, the others keep the first file's values */
static void later_file_merges(void **state)
{
    gs_config *cfg = NULL;
    char origin[400];
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_load_file(cfg, cfg_test_file("a.cfg", "solver = { restart = 40; rtol = 1e-6; };\n")));
    const char *b = cfg_test_file("b.cfg", "\nsolver = {\n  restart = 60;\n};\n");
    GS_ASSERT_OK(gs_config_load_file(cfg, b));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 60);
    assert_true(gs_config_double(cfg, "solver.rtol") == 1e-6);
    snprintf(origin, sizeof origin, "%s:3", b);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), origin);
    snprintf(origin, sizeof origin, "%s/a.cfg:1", cfg_test_dir());
    assert_string_equal(gs_config_origin(cfg, "solver.rtol"), origin);
    gs_config_destroy(&cfg);
}

static void string_origin_uses_name(void **state)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_load_string(cfg, "device = {\n id = 3;\n};\n", "inline"));
    assert_int_equal(gs_config_int(cfg, "device.id"), 3);
    assert_string_equal(gs_config_origin(cfg, "device.id"), "inline:2");
    gs_config_destroy(&cfg);
}

/* @include is resolved beside the including file, whatever the working directory */
static void include_is_relative_to_file(void **state)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    cfg_test_file("part.cfg", "solver = { restart = 77; };\n");
    const char *main_path = cfg_test_file("main.cfg", "@include \"part.cfg\"\noutput = { quiet = true; };\n");
    GS_ASSERT_OK(gs_config_load_file(cfg, main_path));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 77);
    assert_true(gs_config_bool(cfg, "output.quiet"));
    gs_config_destroy(&cfg);
}

/* ---- errors: each names the file, the line and the key ---------------------------------------- */

static gs_config *fresh(void)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    return cfg;
}

/* Loads text from a file named name and asserts the failure message contains "<path>:<line>" and
 * each needle. */
static void assert_load_fails(const char *name, const char *text, int line, const char *n1, const char *n2)
{
    gs_config *cfg = fresh(), *before = NULL;
    GS_ASSERT_OK(gs_config_copy(cfg, &before));
    const char *path = cfg_test_file(name, text);
    char where[400];
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, path), GS_ERR_CONFIG, where);
    gs_error_clear();
    assert_int_equal(gs_config_load_file(cfg, path), GS_ERR_CONFIG);
    if (n1 && !strstr(gs_error_message(), n1)) fprintf(stderr, "missing \"%s\" in: %s\n", n1, gs_error_message());
    if (n1) assert_non_null(strstr(gs_error_message(), n1));
    if (n2 && !strstr(gs_error_message(), n2)) fprintf(stderr, "missing \"%s\" in: %s\n", n2, gs_error_message());
    if (n2) assert_non_null(strstr(gs_error_message(), n2));
    gs_error_clear();
    cfg_test_assert_same_values(cfg, before);
    cfg_test_assert_same_origins(cfg, before);
    gs_config_destroy(&cfg);
    gs_config_destroy(&before);
}

static void unknown_key_suggests(void **state)
{
    assert_load_fails("typo.cfg", "solver = {\n  type = \"cg\";\n  restrat = 50;\n};\n", 3,
                      "unknown key solver.restrat", "did you mean solver.restart?");
    /* a key of another group */
    assert_load_fails("wronggroup.cfg", "solver = { blocks = 4; };\n", 1, "unknown key solver.blocks",
                      "did you mean preconditioner.blocks?");
    /* nested: trisolve.type belongs to lower/upper */
    assert_load_fails("nested.cfg", "trisolve = {\n  type = \"levelset\";\n};\n", 2, "unknown key trisolve.type",
                      "did you mean trisolve.lower.type?");
    assert_load_fails("deep.cfg", "trisolve = { lower = {\n sweps = 2; }; };\n", 2,
                      "unknown key trisolve.lower.sweps", "did you mean trisolve.lower.sweeps?");
    /* nothing close: the group's members are listed */
    assert_load_fails("far.cfg", "\n\nsolver = { frobnicate = 1; };\n", 3, "unknown key solver.frobnicate",
                      "restart");
    /* a key at the root */
    assert_load_fails("root.cfg", "restart = 50;\n", 1, "unknown key restart", "did you mean solver.restart?");
}

static void unknown_group_suggests(void **state)
{
    assert_load_fails("group.cfg", "# x\nsolvr = { restart = 5; };\n", 2, "unknown group solvr",
                      "did you mean solver?");
    assert_load_fails("abbrev.cfg", "precond = { type = \"ilu0\"; };\n", 1, "unknown group precond",
                      "did you mean preconditioner?");
    assert_load_fails("nogroup.cfg", "\nquux = { a = 1; };\n", 2, "unknown group quux", "solver {}");
    assert_load_fails("subgroup.cfg", "trisolve = {\n  middle = { type = \"auto\"; };\n};\n", 2,
                      "unknown group trisolve.middle", "lower {}");
}

static void wrong_type_is_named(void **state)
{
    assert_load_fails("t1.cfg", "solver = {\n  restart = \"fifty\";\n};\n", 2, "solver.restart expects an integer",
                      "the string \"fifty\"");
    assert_load_fails("t2.cfg", "solver = { restart = 50.5; };\n", 1, "solver.restart expects an integer",
                      "floating-point number 50.5");
    assert_load_fails("t3.cfg", "output = { quiet = 1; };\n", 1, "output.quiet expects a boolean",
                      "the integer 1");
    assert_load_fails("t4.cfg", "system = { rhs = 5; };\n", 1, "system.rhs expects a string", "the integer 5");
    assert_load_fails("t5.cfg", "solver = { rtol = \"1e-8\"; };\n", 1, "solver.rtol expects a number",
                      "without quotes");
    assert_load_fails("t6.cfg", "solver = { type = true; };\n", 1, "solver.type expects one of auto, cg, bicgstab",
                      "the boolean true");
    assert_load_fails("t7.cfg", "output = { quiet = \"yes\"; };\n", 1, "output.quiet expects a boolean",
                      "the string \"yes\"");
}

static void out_of_range_names_range(void **state)
{
    assert_load_fails("r1.cfg", "solver = {\n  restart = 0;\n};\n", 2, "solver.restart = 0 is out of range",
                      "[1, 10000]");
    assert_load_fails("r2.cfg", "solver = { restart = 10001; };\n", 1, "solver.restart = 10001 is out of range",
                      "[1, 10000]");
    assert_load_fails("r3.cfg", "solver = { rtol = 2.0; };\n", 1, "solver.rtol = 2.0 is out of range", "[0, 1]");
    assert_load_fails("r4.cfg", "solver = { rtol = -1e-3; };\n", 1, "solver.rtol = -0.001 is out of range",
                      "[0, 1]");
    assert_load_fails("r5.cfg", "solver = { atol = -1; };\n", 1, "solver.atol = -1.0 is out of range", "[0, inf]");
    assert_load_fails("r6.cfg", "solver = { rtol = 1e400; };\n", 1, "solver.rtol = inf is not a finite number", NULL);
    /* the bounds themselves are allowed */
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_load_string(cfg, "solver = { restart = 1; rtol = 1; };", "bounds"));
    GS_ASSERT_OK(gs_config_load_string(cfg, "solver = { restart = 10000; rtol = 0; };", "bounds"));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 10000);
    gs_config_destroy(&cfg);
}

/* libconfig 1.5 would read these integers wrapped to 32 bits (4294967297 as 1) */
static void integer_beyond_32_bits_is_refused(void **state)
{
    assert_load_fails("big1.cfg", "solver = {\n  max_iterations = 4294967297;\n};\n", 2, "4294967297",
                      "4294967297L");
    assert_load_fails("big2.cfg", "preconditioner = { drop_tolerance = 3000000000; };\n", 1, "3000000000", NULL);
    assert_load_fails("big3.cfg", "system = { seed = 0xffffffff; };\n", 1, "0xffffffff", NULL);
    /* with the L suffix libconfig reads 64 bits: then the range check speaks */
    assert_load_fails("big4.cfg", "solver = { max_iterations = 4294967297L; };\n", 1,
                      "solver.max_iterations = 4294967297 is out of range", "[0, 1000000000]");
    /* names with digits, strings and comments with big numbers are no integers */
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_load_string(cfg,
                                       "# 99999999999\n/* 88888888888 */ output = { history = \"h99999999999.csv\"; };\n"
                                       "preconditioner = { drop_tolerance = 12345678901.5; seed = 2147483647; };\n",
                                       "ok"));
    assert_string_equal(gs_config_string(cfg, "output.history"), "h99999999999.csv");
    assert_int_equal(gs_config_int(cfg, "preconditioner.seed"), 2147483647);
    assert_true(gs_config_double(cfg, "preconditioner.drop_tolerance") == 12345678901.5);
    gs_config_destroy(&cfg);
}

static void bad_choice_lists_choices(void **state)
{
    assert_load_fails("c1.cfg", "solver = {\n\n  type = \"gmress\";\n};\n", 3,
                      "solver.type = \"gmress\" is not an allowed choice: auto, cg, bicgstab, gmres, fgmres",
                      "did you mean \"gmres\"?");
    assert_load_fails("c2.cfg", "trisolve = { upper = { type = \"fast\"; }; };\n", 1,
                      "trisolve.upper.type = \"fast\"", "auto, reference, cusparse, levelset");
}

static void syntax_error_has_line(void **state)
{
    gs_config *cfg = fresh();
    const char *path = cfg_test_file("syntax.cfg", "solver = {\n  restart = 5;\n  rtol = ;\n};\n");
    char where[400];
    snprintf(where, sizeof where, "%s:3: syntax error", path);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, path), GS_ERR_CONFIG, where);
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 30);
    GS_ASSERT_FAILS(gs_config_load_string(cfg, "a = 1;\nb = 2;\nc = {\n", "text"), GS_ERR_CONFIG, "text:");
    GS_ASSERT_FAILS(gs_config_load_string(cfg, "solver = {};\nsolver = {};\n", "dup"), GS_ERR_CONFIG,
                    "dup:2: solver is set twice in the same group (first on line 1)");
    gs_config_destroy(&cfg);
}

static void missing_file_is_io_error(void **state)
{
    gs_config *cfg = fresh();
    char path[400];
    snprintf(path, sizeof path, "%s/does-not-exist.cfg", cfg_test_dir());
    char needle[500];
    snprintf(needle, sizeof needle, "%s: cannot open configuration file: No such file or directory", path);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, path), GS_ERR_IO, needle);
    GS_ASSERT_FAILS(gs_config_load_file(cfg, cfg_test_dir()), GS_ERR_IO, "Is a directory");
    gs_config_destroy(&cfg);
}

static void scalar_and_group_mismatch(void **state)
{
    assert_load_fails("m1.cfg", "\nsolver = 5;\n", 2, "solver is a group, not a key", "restart");
    assert_load_fails("m2.cfg", "solver = {\n  restart = { value = 50; };\n};\n", 2,
                      "solver.restart is a key, not a group", "restart = 30;");
    assert_load_fails("m3.cfg", "trisolve = { lower = \"levelset\"; };\n", 1, "trisolve.lower is a group, not a key",
                      "type");
    assert_load_fails("m4.cfg", "solver = { type = { a = 1; }; };\n", 1, "solver.type is a key, not a group",
                      "type = \"auto\";");
}

static void lists_are_rejected(void **state)
{
    assert_load_fails("l1.cfg", "preconditioner = {\n  blocks = [16, 128];\n};\n", 2, "preconditioner.blocks",
                      "lists are for sweeps and are not supported here");
    assert_load_fails("l2.cfg", "solver = { type = (\"cg\", \"gmres\"); };\n", 1, "solver.type",
                      "lists are for sweeps and are not supported here");
}

/* a failure after several valid settings commits none of them */
static void failed_load_leaves_config_unchanged(void **state)
{
    gs_config *cfg = fresh(), *before = NULL;
    GS_ASSERT_OK(gs_config_load_string(cfg, "solver = { restart = 45; type = \"cg\"; };", "first"));
    GS_ASSERT_OK(gs_config_set(cfg, "system.rhs=random"));
    GS_ASSERT_OK(gs_config_copy(cfg, &before));
    const char *path = cfg_test_file("partial.cfg",
                                     "solver = { restart = 99; type = \"bicgstab\"; };\n"
                                     "system = { rhs = \"Ax\"; };\n"
                                     "preconditioner = { blocks = 0; };\n");
    GS_ASSERT_FAILS(gs_config_load_file(cfg, path), GS_ERR_CONFIG, "partial.cfg:3: preconditioner.blocks = 0");
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 45);
    assert_string_equal(gs_config_string(cfg, "solver.type"), "cg");
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "random");
    assert_string_equal(gs_config_origin(cfg, "system.rhs"), "-s");
    assert_string_equal(gs_config_origin(cfg, "solver.type"), "first:1");
    cfg_test_assert_same_values(cfg, before);
    cfg_test_assert_same_origins(cfg, before);
    gs_config_destroy(&cfg);
    gs_config_destroy(&before);
}

/* the k-th allocation failing, for every k: GS_ERR_MEM and an unchanged config, never a crash */
static void allocation_failures_are_clean(void **state)
{
    const char *text = "solver = { type = \"cg\"; restart = 12; };\nsystem = { rhs = \"b.mtx\"; };\n";
    int failures = 0;
    for (long k = 1;; k++) {
        gs_config *cfg = NULL, *before = NULL;
        GS_ASSERT_OK(gs_config_create(&before));
        gs_alloc_fail_at(k);
        gs_status st = gs_config_create(&cfg);
        if (st == GS_OK) st = gs_config_load_string(cfg, text, "fi");
        if (st == GS_OK) st = gs_config_set(cfg, "output.history=h.csv");
        gs_alloc_fail_at(0);
        gs_error_clear();
        if (st == GS_OK) {
            assert_int_equal(gs_config_int(cfg, "solver.restart"), 12);
            assert_string_equal(gs_config_string(cfg, "output.history"), "h.csv");
            gs_config_destroy(&cfg);
            gs_config_destroy(&before);
            break;
        }
        assert_int_equal(st, GS_ERR_MEM);
        failures++;
        if (cfg) { /* failed in load or set: cfg holds either defaults or the loaded text */
            assert_true(gs_config_int(cfg, "solver.restart") == 30 || gs_config_int(cfg, "solver.restart") == 12);
            assert_string_equal(gs_config_string(cfg, "output.history"), "");
            if (gs_config_int(cfg, "solver.restart") == 30) {
                cfg_test_assert_same_values(cfg, before);
                cfg_test_assert_same_origins(cfg, before);
            }
        }
        gs_config_destroy(&cfg);
        gs_config_destroy(&before);
        assert_true(k < 100000);
    }
    assert_true(failures > 10);
}

static void null_arguments_are_rejected(void **state)
{
    gs_config *cfg = fresh();
    GS_ASSERT_FAILS(gs_config_create(NULL), GS_ERR_ARG, "NULL");
    GS_ASSERT_FAILS(gs_config_load_file(cfg, NULL), GS_ERR_ARG, "NULL");
    GS_ASSERT_FAILS(gs_config_load_string(NULL, "", "x"), GS_ERR_ARG, "NULL");
    GS_ASSERT_FAILS(gs_config_set(cfg, NULL), GS_ERR_ARG, "NULL");
    gs_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schema_is_consistent),
        cmocka_unit_test(defaults_match_schema),
        cmocka_unit_test(full_file_loads),
        cmocka_unit_test(empty_file_is_all_defaults),
        cmocka_unit_test(later_file_merges),
        cmocka_unit_test(string_origin_uses_name),
        cmocka_unit_test(include_is_relative_to_file),
        cmocka_unit_test(unknown_key_suggests),
        cmocka_unit_test(unknown_group_suggests),
        cmocka_unit_test(wrong_type_is_named),
        cmocka_unit_test(out_of_range_names_range),
        cmocka_unit_test(integer_beyond_32_bits_is_refused),
        cmocka_unit_test(bad_choice_lists_choices),
        cmocka_unit_test(syntax_error_has_line),
        cmocka_unit_test(missing_file_is_io_error),
        cmocka_unit_test(scalar_and_group_mismatch),
        cmocka_unit_test(lists_are_rejected),
        cmocka_unit_test(failed_load_leaves_config_unchanged),
        cmocka_unit_test(allocation_failures_are_clean),
        cmocka_unit_test(null_arguments_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
