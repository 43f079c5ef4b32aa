/* Which configuration keys matter for which method: a declarative table beside the schema, read once the
 * method is known (the solver, preconditioner and triangular solver types, "auto" resolved), to warn about
 * keys the user set that the chosen method never reads (solver.restart with CG, fill_level with ILU(0)). */
#ifndef GS_CFG_EFFECT_H
#define GS_CFG_EFFECT_H

#include <stddef.h>

#include "cfg/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One condition: `key` has an effect only when the key `when` holds one of `values` ("a|b|c"). A key with
 * several rows needs every one of them to hold. */
typedef struct gs_cfg_effect {
    const char *key;
    const char *when;
    const char *values;
} gs_cfg_effect;

/* The table, terminated by a row with key == NULL. */
extern const gs_cfg_effect gs_cfg_effects[];

/* Calls warn(ctx, message) for every key set explicitly in `user` (a file or -s: gs_config_is_default
 * false) that has no effect with the method: each condition key's value is the user's, or the resolved
 * configuration's where the user's is "auto" (resolved NULL: the user's alone); a condition whose value
 * is still "auto" is not known and warns of nothing. Message: "solver.restart =
 * 80 has no effect with solver.type = \"cg\" (it applies to solver.type gmres|fgmres)". */
void gs_cfg_effect_check(const gs_config *user, const gs_config *resolved, void (*warn)(void *ctx, const char *msg),
                         void *ctx);

#ifdef __cplusplus
}
#endif
#endif
