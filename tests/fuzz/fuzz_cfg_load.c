/* Fuzz target: the configuration loader (gs_config_load_string, libconfig text validated against the
 * schema). Oracles: no crash, leak or undefined behaviour; a failure is GS_ERR_CONFIG with a message
 * and leaves the configuration exactly as it was; a success gives a configuration whose printed text
 * loads back to the same values. */
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "fuzz_util.h"

/* A starting point with some keys already set, so "unchanged on error" is not just "all defaults". */
static gs_config *base_config(void)
{
    static gs_config *base;
    static const char *const sets[] = {"solver.restart=77", "solver.rtol=2.5e-7", "system.rhs=some/file.mtx",
                                       "preconditioner.type=bilu", "trisolve.lower.deterministic=true"};
    if (base) return base;
    FUZZ_CHECK(gs_config_create(&base) == GS_OK, "gs_config_create failed");
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        FUZZ_CHECK(gs_config_set(base, sets[i]) == GS_OK, "setting %s", sets[i]);
    return base;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    /* @include reads the named file: what it reads is not the input, so the harness leaves it out */
    if (strstr(text, "@include")) {
        gs_free(&text);
        return 0;
    }
    gs_config *cfg = NULL;
    gs_error_clear();
    FUZZ_CHECK(gs_config_copy(base_config(), &cfg) == GS_OK, "gs_config_copy failed");
    gs_status st = gs_config_load_string(cfg, text, "fuzz.cfg");
    if (st != GS_OK) {
        fuzz_check_error(st, "gs_config_load_string");
        FUZZ_CHECK(st == GS_ERR_CONFIG, "failed with %s, expected GS_ERR_CONFIG", gs_status_name(st));
        const char *key = fuzz_config_diff(cfg, base_config());
        FUZZ_CHECK(key == NULL, "a failed load changed %s", key);
        gs_error_clear();
    } else {
        FUZZ_CHECK(gs_error_status() == GS_OK, "success with a pending error");
        fuzz_check_config_roundtrip(cfg, false);
    }
    gs_config_destroy(&cfg);
    gs_free(&text);
    return 0;
}
