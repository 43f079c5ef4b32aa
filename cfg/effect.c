/* The keys that matter only for some methods (cfg/effect.h): one row per condition; a key without a row
 * matters for every method. Read the rows as "KEY applies when WHEN is one of VALUES". */
#include "cfg/effect.h"

#include <stdio.h>
#include <string.h>

/* the preconditioners with triangular factors (their factorization and triangular solves) */
#define FACTORED "ilu0|iluk|ilut|ilutp|ic0|bilu|bilut|ras|parilu"
#define TRISOLVE_EFFECTS(side)                                                 \
    {"trisolve." side ".type", "preconditioner.type", FACTORED},               \
    {"trisolve." side ".sweeps", "preconditioner.type", FACTORED},             \
    {"trisolve." side ".sweeps", "trisolve." side ".type", "jacobi|async-jacobi"}, \
    {"trisolve." side ".block_order", "preconditioner.type", FACTORED},        \
    {"trisolve." side ".block_order", "trisolve." side ".type", "async-jacobi"}, \
    {"trisolve." side ".deterministic", "preconditioner.type", FACTORED},      \
    {"trisolve." side ".deterministic", "trisolve." side ".type", "async-jacobi"}

const gs_cfg_effect gs_cfg_effects[] = {
    /* Krylov methods */
    {"solver.restart", "solver.type", "gmres|fgmres"},
    {"solver.orthogonalization", "solver.type", "gmres|fgmres"},
    {"solver.allow_variable_preconditioner", "solver.type", "cg|bicgstab|gmres"},

    /* preconditioners */
    {"preconditioner.fill_level", "preconditioner.type", "iluk|bilu|ras|parilu"},
    {"preconditioner.drop_tolerance", "preconditioner.type", "ilut|ilutp|bilut|ras"},
    {"preconditioner.max_fill", "preconditioner.type", "ilut|ilutp|bilut|ras"},
    {"preconditioner.pivot_tolerance", "preconditioner.type", "ilutp"},
    {"preconditioner.milu", "preconditioner.type", "ilu0|iluk|ilut|ilutp"},
    {"preconditioner.blocks", "preconditioner.type", "bilu|bilut|ras"},
    {"preconditioner.overlap", "preconditioner.type", "ras"},
    {"preconditioner.local", "preconditioner.type", "ras"},
    {"preconditioner.zero_pivot", "preconditioner.type", FACTORED},
    {"preconditioner.min_pivot", "preconditioner.type", "ilu0|iluk|ilut|ilutp|ic0|bilu|bilut|ras"},
    {"preconditioner.min_pivot", "preconditioner.zero_pivot", "grow"},
    {"preconditioner.shift", "preconditioner.type", FACTORED},
    {"preconditioner.shift", "preconditioner.zero_pivot", "shift|grow"},
    {"preconditioner.stability_limit", "preconditioner.type", FACTORED},
    {"preconditioner.factor_on", "preconditioner.type", "ilu0|iluk|ic0"},
    {"preconditioner.seed", "preconditioner.type", "bilu|bilut|ras|parilu"},
    {"preconditioner.sweeps", "preconditioner.type", "parilu"},
    {"preconditioner.symmetric", "preconditioner.type", "parilu"},
    {"preconditioner.sweep_type", "preconditioner.type", "parilu"},
    {"preconditioner.order", "preconditioner.type", "parilu"},
    {"preconditioner.diagnostics", "preconditioner.type", "parilu"},
    {"preconditioner.precision", "preconditioner.type", FACTORED},

    /* triangular solvers: only for factored preconditioners, their parameters only for their types */
    TRISOLVE_EFFECTS("lower"),
    TRISOLVE_EFFECTS("upper"),
    {NULL, NULL, NULL},
};

/* Whether word is one of the '|'-separated values. */
static bool one_of(const char *word, const char *values)
{
    const size_t n = strlen(word);
    for (const char *p = values; *p;) {
        const char *bar = strchr(p, '|');
        const size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        if (!bar) break;
        p = bar + 1;
    }
    return false;
}

/* The value of a condition key: the user's, or the resolved one where the user's is "auto". */
static const char *condition_value(const gs_config *user, const gs_config *resolved, const char *key)
{
    const char *v = gs_config_string(user, key);
    if (resolved && strcmp(v, "auto") == 0) v = gs_config_string(resolved, key);
    return v;
}

/* The key's value as text for the message. */
static void value_text(const gs_config *cfg, const char *key, char *buf, size_t len)
{
    const gs_cfg_key *k = NULL;
    for (const gs_cfg_key *s = gs_cfg_schema; s->path && !k; s++)
        if (strcmp(s->path, key) == 0) k = s;
    if (!k) {
        snprintf(buf, len, "?");
        return;
    }
    switch (k->type) {
    case GS_CFG_INT: snprintf(buf, len, "%lld", gs_config_int(cfg, key)); break;
    case GS_CFG_DOUBLE: snprintf(buf, len, "%g", gs_config_double(cfg, key)); break;
    case GS_CFG_BOOL: snprintf(buf, len, "%s", gs_config_bool(cfg, key) ? "true" : "false"); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE: snprintf(buf, len, "\"%s\"", gs_config_string(cfg, key)); break;
    }
}

void gs_cfg_effect_check(const gs_config *user, const gs_config *resolved, void (*warn)(void *ctx, const char *msg),
                         void *ctx)
{
    for (int i = 0; gs_cfg_effects[i].key; i++) {
        const gs_cfg_effect *r = &gs_cfg_effects[i];
        bool first = true; /* a key's rows are consecutive: each key is judged (and warned about) once */
        for (int j = 0; j < i && first; j++) first = strcmp(gs_cfg_effects[j].key, r->key) != 0;
        if (!first || gs_config_is_default(user, r->key)) continue;
        for (int j = i; gs_cfg_effects[j].key; j++) {
            const gs_cfg_effect *c = &gs_cfg_effects[j];
            if (strcmp(c->key, r->key) != 0) continue;
            const char *v = condition_value(user, resolved, c->when);
            /* a type still "auto" (nothing resolved it, or the type's own choice, trisolve auto) is not
             * known: no warning on its account */
            if (strcmp(v, "auto") == 0 || one_of(v, c->values)) continue;
            char val[128], msg[512];
            value_text(user, r->key, val, sizeof val);
            snprintf(msg, sizeof msg, "%s = %s has no effect with %s = \"%s\" (it applies to %s %s)", r->key, val,
                     c->when, v, c->when, c->values);
            warn(ctx, msg);
            break;
        }
    }
}
