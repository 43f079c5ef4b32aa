/* The triangular solvers' parameters (trisolve_params.h): the defaults, their check, and setting one
 * field by name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trisolve/trisolve.h"

gs_trisolve_params gs_trisolve_params_default(void)
{
    gs_trisolve_params p;
    memset(&p, 0, sizeof p);
    p.sweeps = 3;
    p.block_order = "dependency";
    return p;
}

/* Limits of the integer fields (the kernels' and rules' ranges). */
#define MERGE_LEVELS_MAX 64 /* GS_SF_MERGE_MAX */
#define WARPS_PER_SM_MAX 64
#define BLOCKS_PER_SM_MAX 32

gs_status gs_trisolve_params_check(const gs_trisolve_params *p)
{
    const gs_syncfree_params *s = &p->syncfree;
    if (p->sweeps < 0) return GS_ERROR(GS_ERR_ARG, "trisolve sweeps is %d; expected >= 0", p->sweeps);
    if ((unsigned)s->schedule > GS_SF_SCHEDULE_RUNS)
        return GS_ERROR(GS_ERR_ARG, "syncfree.schedule is %d; expected auto, levels, merged, wruns or runs",
                        (int)s->schedule);
    if (s->merge_levels < 0 || s->merge_levels > MERGE_LEVELS_MAX)
        return GS_ERROR(GS_ERR_ARG, "syncfree.merge_levels is %d; expected levels per group, an integer in 1..%d "
                                    "(0: the default)", s->merge_levels, MERGE_LEVELS_MAX);
    if (s->warps_per_sm != 0 && (s->warps_per_sm < 4 || s->warps_per_sm > WARPS_PER_SM_MAX))
        return GS_ERROR(GS_ERR_ARG, "syncfree.warps_per_sm is %d; expected 4..%d (0: the rule)", s->warps_per_sm,
                        WARPS_PER_SM_MAX);
    if (s->lanes_per_row != 0 && s->lanes_per_row != 1 && s->lanes_per_row != 2 && s->lanes_per_row != 4)
        return GS_ERROR(GS_ERR_ARG, "syncfree.lanes_per_row is %d; expected 1, 2 or 4 (0: the rule)",
                        s->lanes_per_row);
    if (s->merge_pool_start < 0)
        return GS_ERROR(GS_ERR_ARG, "syncfree.merge_pool_start is %lld; expected >= 0 (0: the builder's guess)",
                        s->merge_pool_start);
    const gs_ts_switch sw[] = {s->ell6, s->rem_prefetch, s->once, s->td_sync, s->td_one_pass, s->td_fold,
                               p->jacobi.ell};
    for (size_t k = 0; k < sizeof sw / sizeof sw[0]; k++)
        if ((unsigned)sw[k] > GS_TS_OFF)
            return GS_ERROR(GS_ERR_ARG, "a trisolve switch is %d; expected auto, on or off", (int)sw[k]);
    if (p->analysis.level_blocks_per_sm < 0 || p->analysis.level_blocks_per_sm > BLOCKS_PER_SM_MAX)
        return GS_ERROR(GS_ERR_ARG, "analysis.level_blocks_per_sm is %d; expected 1..%d (0: the default)",
                        p->analysis.level_blocks_per_sm, BLOCKS_PER_SM_MAX);
    if ((unsigned)p->tiled.variant > GS_TILED_SYNCFREE)
        return GS_ERROR(GS_ERR_ARG, "tiled.variant is %d; expected auto, levelset or syncfree", (int)p->tiled.variant);
    const int l = p->jacobi.lanes;
    if (l != 0 && l != 1 && l != 2 && l != 4 && l != 8 && l != 16)
        return GS_ERROR(GS_ERR_ARG, "jacobi.lanes is %d; expected 1, 2, 4, 8 or 16 (0: the rule)", l);
    return GS_OK;
}

/* value as an integer in lo .. hi */
static gs_status parse_int(const char *key, const char *value, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (!value[0] || *end != '\0' || errno != 0 || v < lo || v > hi)
        return GS_ERROR(GS_ERR_ARG, "trisolve parameter %s = '%s'; expected an integer in %lld..%lld", key, value, lo,
                        hi);
    *out = v;
    return GS_OK;
}

static gs_status parse_switch(const char *key, const char *value, gs_ts_switch *out)
{
    if (strcmp(value, "auto") == 0) *out = GS_TS_AUTO;
    else if (strcmp(value, "on") == 0 || strcmp(value, "1") == 0) *out = GS_TS_ON;
    else if (strcmp(value, "off") == 0 || strcmp(value, "0") == 0) *out = GS_TS_OFF;
    else return GS_ERROR(GS_ERR_ARG, "trisolve parameter %s = '%s'; expected auto, on or off (1, 0)", key, value);
    return GS_OK;
}

/* value as one of names[0 .. count-1] (the enum's values in order) */
static gs_status parse_choice(const char *key, const char *value, const char *const *names, int count,
                              const char *expected, int *out)
{
    for (int k = 0; k < count; k++)
        if (strcmp(value, names[k]) == 0) {
            *out = k;
            return GS_OK;
        }
    return GS_ERROR(GS_ERR_ARG, "trisolve parameter %s = '%s'; expected %s", key, value, expected);
}

static gs_status set_field(gs_trisolve_params *p, const char *key, const char *value)
{
    static const char *const schedules[] = {"auto", "levels", "merged", "wruns", "runs"};
    static const char *const variants[] = {"auto", "levelset", "syncfree"};
    gs_syncfree_params *s = &p->syncfree;
    long long v = 0;
    int c = 0;
    struct {
        const char *name;
        gs_ts_switch *field;
    } switches[] = {{"syncfree.ell6", &s->ell6},         {"syncfree.rem_prefetch", &s->rem_prefetch},
                    {"syncfree.once", &s->once},         {"syncfree.td_sync", &s->td_sync},
                    {"syncfree.td_one_pass", &s->td_one_pass}, {"syncfree.td_fold", &s->td_fold},
                    {"jacobi.ell", &p->jacobi.ell}};
    for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
        if (strcmp(key, switches[k].name) == 0) return parse_switch(key, value, switches[k].field);
    if (strcmp(key, "syncfree.schedule") == 0) {
        GS_CALL(parse_choice(key, value, schedules, 5, "auto, levels, merged, wruns or runs", &c));
        s->schedule = (gs_sf_schedule)c;
    } else if (strcmp(key, "syncfree.merge_levels") == 0) {
        GS_CALL(parse_int(key, value, 0, MERGE_LEVELS_MAX, &v));
        s->merge_levels = (int)v;
    } else if (strcmp(key, "syncfree.warps_per_sm") == 0) {
        GS_CALL(parse_int(key, value, 0, WARPS_PER_SM_MAX, &v));
        s->warps_per_sm = (int)v;
    } else if (strcmp(key, "syncfree.lanes_per_row") == 0) {
        GS_CALL(parse_int(key, value, 0, 4, &v));
        s->lanes_per_row = (int)v;
    } else if (strcmp(key, "syncfree.merge_pool_start") == 0) {
        GS_CALL(parse_int(key, value, 0, (long long)1 << 40, &v));
        s->merge_pool_start = v;
    } else if (strcmp(key, "analysis.level_blocks_per_sm") == 0) {
        GS_CALL(parse_int(key, value, 0, BLOCKS_PER_SM_MAX, &v));
        p->analysis.level_blocks_per_sm = (int)v;
    } else if (strcmp(key, "tiled.variant") == 0) {
        GS_CALL(parse_choice(key, value, variants, 3, "auto, levelset or syncfree", &c));
        p->tiled.variant = (gs_tiled_force)c;
    } else if (strcmp(key, "jacobi.lanes") == 0) {
        GS_CALL(parse_int(key, value, 0, 16, &v));
        p->jacobi.lanes = (int)v;
    } else {
        return GS_ERROR(GS_ERR_ARG, "unknown trisolve parameter '%s' (trisolve/trisolve_params.h lists them)", key);
    }
    return GS_OK;
}

gs_status gs_trisolve_params_set(gs_trisolve_params *p, const char *key, const char *value)
{
    char name[64];
    if (!p || !key) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_params_set: params or key is NULL");
    if (!value) { /* "name=value" */
        const char *eq = strchr(key, '=');
        if (!eq || (size_t)(eq - key) >= sizeof name)
            return GS_ERROR(GS_ERR_ARG, "trisolve parameter '%s': expected name=value", key);
        memcpy(name, key, (size_t)(eq - key));
        name[eq - key] = '\0';
        key = name;
        value = eq + 1;
    }
    gs_trisolve_params t = *p;
    GS_CALL(set_field(&t, key, value));
    GS_CALL(gs_trisolve_params_check(&t));
    *p = t;
    return GS_OK;
}
