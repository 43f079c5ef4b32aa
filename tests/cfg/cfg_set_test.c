/* Tests of -s group.key=value overrides: every type, every error, and their order with files. */
#include <stdio.h>
#include <string.h>

#include "cfg/config.h"
#include "cfg_testutil.h"
#include "testutil.h"

static gs_config *fresh(void)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    return cfg;
}

static void set_int(void **state)
{
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=80"));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 80);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), "-s");
    assert_false(gs_config_is_default(cfg, "solver.restart"));
    GS_ASSERT_OK(gs_config_set(cfg, " solver.max_iterations = 1000000000 "));
    assert_int_equal(gs_config_int(cfg, "solver.max_iterations"), 1000000000);
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.seed=+2147483647"));
    assert_int_equal(gs_config_int(cfg, "preconditioner.seed"), 2147483647);
    gs_config_destroy(&cfg);
}

static void set_double(void **state)
{
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_set(cfg, "solver.rtol=1e-6"));
    assert_true(gs_config_double(cfg, "solver.rtol") == 1e-6);
    GS_ASSERT_OK(gs_config_set(cfg, "solver.rtol=1"));
    assert_true(gs_config_double(cfg, "solver.rtol") == 1.0);
    GS_ASSERT_OK(gs_config_set(cfg, "solver.atol=0.1"));
    assert_true(gs_config_double(cfg, "solver.atol") == 0.1);
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.shift=3.5e+300"));
    assert_true(gs_config_double(cfg, "preconditioner.shift") == 3.5e300);
    assert_string_equal(gs_config_origin(cfg, "preconditioner.shift"), "-s");
    gs_config_destroy(&cfg);
}

static void set_bool_spellings(void **state)
{
    static const char *const yes[] = {"true", "TRUE", "1", "yes", "On", "\"true\""};
    static const char *const no[] = {"false", "False", "0", "no", "OFF", "'off'"};
    gs_config *cfg = fresh();
    char a[64];
    for (int i = 0; i < 6; i++) {
        snprintf(a, sizeof a, "output.quiet=%s", yes[i]);
        GS_ASSERT_OK(gs_config_set(cfg, a));
        assert_true(gs_config_bool(cfg, "output.quiet"));
        snprintf(a, sizeof a, "output.quiet=%s", no[i]);
        GS_ASSERT_OK(gs_config_set(cfg, a));
        assert_false(gs_config_bool(cfg, "output.quiet"));
    }
    gs_config_destroy(&cfg);
}

static void set_string_and_choice(void **state)
{
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_set(cfg, "system.rhs=data/rhs b.mtx"));
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "data/rhs b.mtx");
    GS_ASSERT_OK(gs_config_set(cfg, "system.rhs=\"quoted.mtx\""));
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "quoted.mtx");
    GS_ASSERT_OK(gs_config_set(cfg, "system.rhs='single'"));
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "single");
    GS_ASSERT_OK(gs_config_set(cfg, "output.history=a=b.csv")); /* only the first '=' splits */
    assert_string_equal(gs_config_string(cfg, "output.history"), "a=b.csv");
    GS_ASSERT_OK(gs_config_set(cfg, "output.history="));
    assert_string_equal(gs_config_string(cfg, "output.history"), "");
    GS_ASSERT_OK(gs_config_set(cfg, "solver.type=cg"));
    assert_string_equal(gs_config_string(cfg, "solver.type"), "cg");
    GS_ASSERT_OK(gs_config_set(cfg, "trisolve.lower.type=\"async-jacobi\""));
    assert_string_equal(gs_config_string(cfg, "trisolve.lower.type"), "async-jacobi");
    gs_config_destroy(&cfg);
}

/* a failing -s leaves the key as it was */
static void set_fails(gs_config *cfg, const char *assignment, const char *needle)
{
    gs_config *before = NULL;
    GS_ASSERT_OK(gs_config_copy(cfg, &before));
    char where[256];
    snprintf(where, sizeof where, "-s %s: ", assignment);
    GS_ASSERT_FAILS(gs_config_set(cfg, assignment), GS_ERR_CONFIG, where);
    GS_ASSERT_FAILS(gs_config_set(cfg, assignment), GS_ERR_CONFIG, needle);
    cfg_test_assert_same_values(cfg, before);
    cfg_test_assert_same_origins(cfg, before);
    gs_config_destroy(&before);
}

static void set_errors(void **state)
{
    gs_config *cfg = fresh();
    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=70"));
    /* ints */
    set_fails(cfg, "solver.restart=abc", "solver.restart expects an integer, got \"abc\"");
    set_fails(cfg, "solver.restart=12x", "expects an integer, got \"12x\"");
    set_fails(cfg, "solver.restart=", "expects an integer, got \"\"");
    set_fails(cfg, "solver.restart=50.0", "expects an integer");
    set_fails(cfg, "solver.restart=99999999999999999999", "does not fit in a 64-bit integer");
    set_fails(cfg, "solver.restart=0", "solver.restart = 0 is out of range; allowed [1, 10000]");
    set_fails(cfg, "solver.restart=10001", "solver.restart = 10001 is out of range; allowed [1, 10000]");
    /* doubles */
    set_fails(cfg, "solver.rtol=small", "solver.rtol expects a number, got \"small\"");
    set_fails(cfg, "solver.rtol=1e-8x", "expects a number");
    set_fails(cfg, "solver.rtol=inf", "expects a finite number");
    set_fails(cfg, "solver.rtol=nan", "expects a finite number");
    set_fails(cfg, "solver.atol=1e400", "expects a finite number");
    set_fails(cfg, "solver.rtol=1.5", "solver.rtol = 1.5 is out of range; allowed [0, 1]");
    set_fails(cfg, "solver.rtol=-0.5", "solver.rtol = -0.5 is out of range; allowed [0, 1]");
    /* bools */
    set_fails(cfg, "output.quiet=maybe", "output.quiet expects a boolean (true/false, 1/0, yes/no, on/off)");
    set_fails(cfg, "output.quiet=2", "got \"2\"");
    /* choices */
    set_fails(cfg, "solver.type=gmress", "solver.type = \"gmress\" is not an allowed choice: auto, cg, bicgstab, gmres, fgmres");
    set_fails(cfg, "solver.type=GMRES", "did you mean \"gmres\"?");
    set_fails(cfg, "device.backend=", "is not an allowed choice: auto, cuda, host");
    /* keys */
    set_fails(cfg, "solver.restrat=50", "unknown key solver.restrat; did you mean solver.restart?");
    set_fails(cfg, "blocks=4", "did you mean preconditioner.blocks?");
    set_fails(cfg, "solver=gmres", "solver is a group, not a key");
    set_fails(cfg, "trisolve.lower=levelset", "e.g. -s trisolve.lower.type=auto");
    set_fails(cfg, "solver.restart", "expected group.key=value");
    set_fails(cfg, "=5", "the key before '=' is empty");
    set_fails(cfg, "  =5", "the key before '=' is empty");
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 70);
    gs_config_destroy(&cfg);
}

/* every key of the schema can be set from text that names its default */
static void every_key_settable(void **state)
{
    gs_config *cfg = fresh(), *def = fresh();
    char a[512];
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        snprintf(a, sizeof a, "%s=%s", gs_cfg_schema[k].path, gs_cfg_schema[k].def);
        GS_ASSERT_OK(gs_config_set(cfg, a));
        assert_string_equal(gs_config_origin(cfg, gs_cfg_schema[k].path), "-s");
    }
    cfg_test_assert_same_values(cfg, def);
    gs_config_destroy(&cfg);
    gs_config_destroy(&def);
}

/* order is what counts: -s after a file wins over it, a file after -s wins over that */
static void overrides_follow_order(void **state)
{
    gs_config *cfg = fresh();
    const char *path = cfg_test_file("run.cfg", "solver = {\n  restart = 50;\n  rtol = 1e-6;\n};\n");
    char origin[400];
    GS_ASSERT_OK(gs_config_load_file(cfg, path));
    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=80"));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 80);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), "-s");
    assert_true(gs_config_double(cfg, "solver.rtol") == 1e-6);
    snprintf(origin, sizeof origin, "%s:3", path);
    assert_string_equal(gs_config_origin(cfg, "solver.rtol"), origin);
    assert_string_equal(gs_config_origin(cfg, "solver.type"), "default");
    GS_ASSERT_OK(gs_config_set(cfg, "solver.restart=90")); /* the later -s wins */
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 90);
    GS_ASSERT_OK(gs_config_load_file(cfg, path));
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 50);
    snprintf(origin, sizeof origin, "%s:2", path);
    assert_string_equal(gs_config_origin(cfg, "solver.restart"), origin);
    gs_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_int),
        cmocka_unit_test(set_double),
        cmocka_unit_test(set_bool_spellings),
        cmocka_unit_test(set_string_and_choice),
        cmocka_unit_test(set_errors),
        cmocka_unit_test(every_key_settable),
        cmocka_unit_test(overrides_follow_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
