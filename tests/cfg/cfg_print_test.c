/* Tests of the renderings: print -> load round trip, default marks, the report, the schema tables,
 * copies, and the getters' abort on a programming error. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg/config.h"
#include "cfg_testutil.h"
#include "core/report.h"
#include "testutil.h"

static gs_config *fresh(void)
{
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    return cfg;
}

/* A config with a non-default value in every group, awkward doubles and strings included. */
static gs_config *busy_config(void)
{
    gs_config *cfg = fresh();
    static const char *const sets[] = {
        "solver.type=fgmres",
        "solver.restart=57",
        "solver.rtol=0.1",
        "solver.atol=1e-300",
        "solver.allow_variable_preconditioner=yes",
        "preconditioner.drop_tolerance=0.33333333333333331",
        "preconditioner.shift=123456789.123",
        "preconditioner.seed=2147483647",
        "trisolve.lower.type=async-jacobi",
        "trisolve.upper.deterministic=on",
        "trisolve.upper.sweeps=0",
        "system.rhs=dir with \"quotes\" and \\backslash\\.mtx",
        "output.history=tab\there\nnewline.csv",
        "output.solution=x.mtx",
        "device.id=2",
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) GS_ASSERT_OK(gs_config_set(cfg, sets[i]));
    GS_ASSERT_OK(gs_config_load_string(cfg, "solver = { max_iterations = 30; }; output = { quiet = true; };", "x"));
    return cfg;
}

static void print_then_load_round_trips(void **state)
{
    for (int mark = 0; mark < 2; mark++) {
        gs_config *cfg = busy_config(), *back = fresh();
        char *text = cfg_test_print(cfg, mark);
        GS_ASSERT_OK(gs_config_load_string(back, text, "printed"));
        cfg_test_assert_same_values(cfg, back);
        /* and through a file */
        gs_config *back2 = fresh();
        GS_ASSERT_OK(gs_config_load_file(back2, cfg_test_file("printed.cfg", text)));
        cfg_test_assert_same_values(cfg, back2);
        /* printing what was read back gives the same text */
        char *again = cfg_test_print(back, false);
        char *plain = cfg_test_print(cfg, false);
        assert_string_equal(again, plain);
        free(text);
        free(again);
        free(plain);
        gs_config_destroy(&cfg);
        gs_config_destroy(&back);
        gs_config_destroy(&back2);
    }
    /* the defaults round-trip as well */
    gs_config *def = fresh(), *back = fresh();
    GS_ASSERT_OK(gs_config_set(back, "solver.rtol=0.5"));
    char *text = cfg_test_print(def, true);
    GS_ASSERT_OK(gs_config_load_string(back, text, "defaults"));
    cfg_test_assert_same_values(def, back);
    free(text);
    gs_config_destroy(&def);
    gs_config_destroy(&back);
}

static void print_is_grouped_libconfig(void **state)
{
    gs_config *cfg = busy_config();
    char *text = cfg_test_print(cfg, true);
    assert_non_null(strstr(text, "solver = {\n  type = \"fgmres\";\n  restart = 57;\n"));
    assert_non_null(strstr(text, "  rtol = 0.1;\n"));
    assert_non_null(strstr(text, "  atol = 1e-300;\n"));
    assert_non_null(strstr(text, "  baseline = \"rhs\";  # default\n"));
    assert_non_null(strstr(text, "trisolve = {\n  lower = {\n    type = \"async-jacobi\";\n"));
    assert_non_null(strstr(text, "    deterministic = true;\n  };\n};\n"));
    assert_non_null(strstr(text, "  rhs = \"dir with \\\"quotes\\\" and \\\\backslash\\\\.mtx\";\n"));
    assert_non_null(strstr(text, "  history = \"tab\\there\\nnewline.csv\";\n"));
    assert_non_null(strstr(text, "  shift = 123456789.123;\n"));
    assert_non_null(strstr(text, "  drop_tolerance = 0.3333333333333333;\n"));
    assert_non_null(strstr(text, "  seed = 2147483647;\n"));
    gs_config_destroy(&cfg);
    free(text);
    cfg = fresh();
    /* a double with an integral value stays a float literal */
    GS_ASSERT_OK(gs_config_set(cfg, "preconditioner.drop_tolerance=30"));
    text = cfg_test_print(cfg, false);
    assert_non_null(strstr(text, "  drop_tolerance = 30.0;\n"));
    assert_null(strstr(text, "# default"));
    /* each group appears once */
    const char *groups[] = {"solver = {", "preconditioner = {", "trisolve = {", "lower = {", "upper = {",
                            "system = {", "device = {", "output = {"};
    for (int g = 0; g < 8; g++) {
        const char *first = strstr(text, groups[g]);
        assert_non_null(first);
        assert_null(strstr(first + 1, groups[g]));
    }
    free(text);
    gs_config_destroy(&cfg);
}

static void report_has_every_key_typed(void **state)
{
    gs_config *cfg = busy_config();
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_report_create(&rep));
    GS_ASSERT_OK(gs_config_to_report(cfg, rep));
    int n = 0;
    for (int k = 0; gs_cfg_schema[k].path; k++, n++) {
        const char *p = gs_cfg_schema[k].path;
        char key[256];
        snprintf(key, sizeof key, "config.%s", p);
        const gs_report_entry *e = gs_report_find(rep, key);
        assert_non_null(e);
        switch (gs_cfg_schema[k].type) {
        case GS_CFG_INT:
            assert_int_equal(e->type, GS_REPORT_INT);
            assert_int_equal(e->i, gs_config_int(cfg, p));
            break;
        case GS_CFG_DOUBLE:
            assert_int_equal(e->type, GS_REPORT_DOUBLE);
            assert_true(e->d == gs_config_double(cfg, p));
            break;
        case GS_CFG_BOOL:
            assert_int_equal(e->type, GS_REPORT_BOOL);
            assert_int_equal(e->i, gs_config_bool(cfg, p));
            break;
        case GS_CFG_STRING:
        case GS_CFG_CHOICE:
            assert_int_equal(e->type, GS_REPORT_STRING);
            assert_string_equal(e->s, gs_config_string(cfg, p));
            break;
        }
    }
    assert_int_equal(rep->n, n);
    GS_ASSERT_FAILS(gs_config_to_report(cfg, NULL), GS_ERR_ARG, "NULL");
    gs_report_destroy(&rep);
    gs_config_destroy(&cfg);
}

static char *schema_text(bool markdown)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (markdown)
        gs_config_print_schema_markdown(f);
    else
        gs_config_print_schema(f);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void schema_table_is_aligned(void **state)
{
    char *text = schema_text(false);
    /* one header line and one line per key, the type column starting at the same offset */
    int lines = 0;
    long type_col = -1;
    for (char *line = text; *line; lines++) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        char *gap = strstr(line, "  "); /* the path column is padded with at least two blanks */
        assert_true(gap && gap < end);
        while (*gap == ' ') gap++;
        if (type_col < 0) type_col = gap - line;
        assert_int_equal(gap - line, type_col);
        if (lines > 0) assert_true(!strncmp(gap, "int", 3) || !strncmp(gap, "double", 6) || !strncmp(gap, "bool", 4) ||
                                   !strncmp(gap, "string", 6) || !strncmp(gap, "choice", 6));
        line = end + 1;
    }
    int n = 0;
    while (gs_cfg_schema[n].path) n++;
    assert_int_equal(lines, n + 1);
    assert_non_null(strstr(text, "solver.restart"));
    assert_non_null(strstr(text, "[1, 10000]"));
    assert_non_null(strstr(text, "cg|bicgstab|gmres|fgmres"));
    assert_non_null(strstr(text, "\"auto\""));
    assert_non_null(strstr(text, "[0, inf]"));
    assert_non_null(strstr(text, "GMRES/FGMRES restart length m"));
    free(text);
}

static void schema_markdown_is_a_table(void **state)
{
    char *text = schema_text(true);
    int lines = 0;
    for (char *line = text; *line; lines++) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        assert_int_equal(line[0], '|');
        assert_int_equal(end[-1], '|');
        int cells = 0; /* unescaped bars: 6 per row for 5 columns */
        for (char *c = line; c < end; c++)
            if (*c == '|' && (c == line || c[-1] != '\\')) cells++;
        assert_int_equal(cells, 6);
        line = end + 1;
    }
    int n = 0;
    while (gs_cfg_schema[n].path) n++;
    assert_int_equal(lines, n + 2);
    assert_non_null(strstr(text, "| `solver.type` | choice | `\"auto\"` | `auto`, `cg`, `bicgstab`, `gmres`, `fgmres` | Krylov method"));
    assert_non_null(strstr(text, "| `solver.restart` | int | `30` | `[1, 10000]` |"));
    assert_non_null(strstr(text, "ones \\| random \\| Ax")); /* a '|' in help is escaped */
    free(text);
}

static void copy_is_deep(void **state)
{
    gs_config *cfg = busy_config(), *c = NULL;
    GS_ASSERT_OK(gs_config_copy(cfg, &c));
    cfg_test_assert_same_values(cfg, c);
    cfg_test_assert_same_origins(cfg, c);
    assert_ptr_not_equal(gs_config_string(cfg, "system.rhs"), gs_config_string(c, "system.rhs"));
    GS_ASSERT_OK(gs_config_set(c, "system.rhs=other"));
    GS_ASSERT_OK(gs_config_set(c, "solver.restart=3"));
    assert_string_equal(gs_config_string(c, "system.rhs"), "other");
    assert_string_not_equal(gs_config_string(cfg, "system.rhs"), "other");
    assert_int_equal(gs_config_int(cfg, "solver.restart"), 57);
    gs_config_destroy(&cfg);
    assert_int_equal(gs_config_int(c, "solver.max_iterations"), 30); /* c outlives its source */
    assert_string_equal(gs_config_origin(c, "solver.max_iterations"), "x:1");
    gs_config_destroy(&c);
    GS_ASSERT_FAILS(gs_config_copy(NULL, &c), GS_ERR_ARG, "NULL");
}

/* Runs fn in a child process and asserts it dies of SIGABRT. */
static void assert_aborts(void (*fn)(const gs_config *), const gs_config *cfg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        fn(cfg);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void get_unknown(const gs_config *cfg) { (void)gs_config_int(cfg, "solver.restrat"); }
static void get_wrong_type(const gs_config *cfg) { (void)gs_config_double(cfg, "solver.restart"); }
static void get_string_of_bool(const gs_config *cfg) { (void)gs_config_string(cfg, "output.quiet"); }
static void get_group(const gs_config *cfg) { (void)gs_config_origin(cfg, "solver"); }

static void getters_abort_on_misuse(void **state)
{
    gs_config *cfg = fresh();
    assert_aborts(get_unknown, cfg);
    assert_aborts(get_wrong_type, cfg);
    assert_aborts(get_string_of_bool, cfg);
    assert_aborts(get_group, cfg);
    /* STRING and CHOICE both read through gs_config_string */
    assert_string_equal(gs_config_string(cfg, "system.rhs"), "ones");
    assert_string_equal(gs_config_string(cfg, "system.xstar"), "ones");
    gs_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(print_then_load_round_trips),
        cmocka_unit_test(print_is_grouped_libconfig),
        cmocka_unit_test(report_has_every_key_typed),
        cmocka_unit_test(schema_table_is_aligned),
        cmocka_unit_test(schema_markdown_is_a_table),
        cmocka_unit_test(copy_is_deep),
        cmocka_unit_test(getters_abort_on_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
