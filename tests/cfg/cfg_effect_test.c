/* The table of keys that matter only for some methods (cfg/effect.c): every key and condition it names
 * is in the schema with values the schema allows; a key set by the user that the method does not read is
 * warned about once, a key left at its default or one the method reads is not; "auto" is judged by the
 * resolved configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/effect.h"
#include "testutil.h"

static const gs_cfg_key *schema_key(const char *path)
{
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++)
        if (strcmp(k->path, path) == 0) return k;
    return NULL;
}

/* Whether word is one of the '|'-separated choices. */
static bool in_list(const char *word, const char *list)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        p = bar ? bar + 1 : NULL;
    }
    return false;
}

static void table_names_schema_keys_and_choices(void **state)
{
    int rows = 0;
    for (const gs_cfg_effect *e = gs_cfg_effects; e->key; e++, rows++) {
        const gs_cfg_key *k = schema_key(e->key), *w = schema_key(e->when);
        if (!k || !w) fail_msg("row %d: %s / %s not in the schema", rows, e->key, e->when);
        assert_int_equal(w->type, GS_CFG_CHOICE);
        char *values = strdup(e->values);
        for (char *save = NULL, *v = strtok_r(values, "|", &save); v; v = strtok_r(NULL, "|", &save))
            if (!in_list(v, w->choices)) fail_msg("row %d: %s = %s is not a choice of %s", rows, e->when, v, e->when);
        free(values);
    }
    assert_true(rows > 20);
}

typedef struct {
    int n;
    char last[512];
} warnings;

static void collect(void *ctx, const char *msg)
{
    warnings *w = ctx;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static warnings check(const char *const *set, const char *const *resolved_set)
{
    gs_config *user = NULL, *resolved = NULL;
    warnings w = {0, ""};
    GS_ASSERT_OK(gs_config_create(&user));
    for (int i = 0; set[i]; i++) GS_ASSERT_OK(gs_config_set(user, set[i]));
    if (resolved_set) {
        GS_ASSERT_OK(gs_config_copy(user, &resolved));
        for (int i = 0; resolved_set[i]; i++) GS_ASSERT_OK(gs_config_set(resolved, resolved_set[i]));
    }
    gs_cfg_effect_check(user, resolved, collect, &w);
    gs_config_destroy(&user);
    gs_config_destroy(&resolved);
    return w;
}

static void restart_with_cg_is_warned(void **state)
{
    warnings w = check((const char *const[]){"solver.type=cg", "solver.restart=80", NULL}, NULL);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.last, "solver.restart = 80 has no effect with solver.type = \"cg\""));
    assert_non_null(strstr(w.last, "gmres|fgmres"));
    w = check((const char *const[]){"solver.type=gmres", "solver.restart=80", NULL}, NULL);
    assert_int_equal(w.n, 0);
    /* the default restart is never warned about, whatever the method */
    w = check((const char *const[]){"solver.type=cg", NULL}, NULL);
    assert_int_equal(w.n, 0);
}

static void preconditioner_keys(void **state)
{
    warnings w = check((const char *const[]){"preconditioner.type=ilu0", "preconditioner.fill_level=2",
                                             "preconditioner.drop_tolerance=1e-4", NULL},
                       NULL);
    assert_int_equal(w.n, 2);
    assert_non_null(strstr(w.last, "preconditioner.drop_tolerance"));
    w = check((const char *const[]){"preconditioner.type=iluk", "preconditioner.fill_level=2", NULL}, NULL);
    assert_int_equal(w.n, 0);
    w = check((const char *const[]){"preconditioner.type=ilut", "preconditioner.drop_tolerance=1e-4",
                                    "preconditioner.max_fill=20", NULL},
              NULL);
    assert_int_equal(w.n, 0);
    /* two conditions: min_pivot needs an ILU-family preconditioner and zero_pivot = grow */
    w = check((const char *const[]){"preconditioner.type=ilu0", "preconditioner.min_pivot=1e-6", NULL}, NULL);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.last, "preconditioner.zero_pivot = \"error\""));
    w = check((const char *const[]){"preconditioner.type=ilu0", "preconditioner.zero_pivot=grow",
                                    "preconditioner.min_pivot=1e-6", NULL},
              NULL);
    assert_int_equal(w.n, 0);
    /* the triangular solvers' keys: none without factors, sweeps only for the Jacobi types */
    w = check((const char *const[]){"preconditioner.type=jacobi", "trisolve.lower.type=levelset", NULL}, NULL);
    assert_int_equal(w.n, 1);
    w = check((const char *const[]){"preconditioner.type=ilu0", "trisolve.upper.type=levelset",
                                    "trisolve.upper.sweeps=5", NULL},
              NULL);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.last, "trisolve.upper.type = \"levelset\""));
    w = check((const char *const[]){"preconditioner.type=ilu0", "trisolve.upper.type=jacobi",
                                    "trisolve.upper.sweeps=5", NULL},
              NULL);
    assert_int_equal(w.n, 0);
}

static void automatic_choice_is_resolved(void **state)
{
    /* solver.type = auto: judged by the method the strategy chose */
    warnings w = check((const char *const[]){"solver.restart=40", NULL}, (const char *const[]){"solver.type=bicgstab", NULL});
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.last, "solver.type = \"bicgstab\""));
    w = check((const char *const[]){"solver.restart=40", NULL}, (const char *const[]){"solver.type=gmres", NULL});
    assert_int_equal(w.n, 0);
    /* an explicit type is the user's, whatever the resolved configuration says (a fallback's rung) */
    w = check((const char *const[]){"preconditioner.type=iluk", "preconditioner.fill_level=1", NULL},
              (const char *const[]){"preconditioner.type=ilut", NULL});
    assert_int_equal(w.n, 0);
    /* without a resolved configuration "auto" is not known: no warning */
    w = check((const char *const[]){"solver.restart=40", NULL}, NULL);
    assert_int_equal(w.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_names_schema_keys_and_choices),
        cmocka_unit_test(restart_with_cg_is_warned),
        cmocka_unit_test(preconditioner_keys),
        cmocka_unit_test(automatic_choice_is_resolved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
