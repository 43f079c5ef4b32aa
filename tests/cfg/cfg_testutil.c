/* Helpers of the cfg tests: temporary config files and printed configs. */
#include "cfg_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char dir[256];
static char files[64][320];
static int nfiles;

static void remove_dir(void)
{
    for (int i = 0; i < nfiles; i++) unlink(files[i]);
    if (dir[0]) rmdir(dir);
}

const char *cfg_test_dir(void)
{
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/gs-cfg-test-XXXXXX", base && base[0] ? base : "/tmp");
        assert_non_null(mkdtemp(dir));
        atexit(remove_dir);
    }
    return dir;
}

const char *cfg_test_file(const char *name, const char *text)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", cfg_test_dir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    bool known = false;
    for (int i = 0; i < nfiles; i++) known = known || strcmp(files[i], path) == 0;
    if (!known && nfiles < 64) snprintf(files[nfiles++], sizeof files[0], "%s", path);
    return path;
}

char *cfg_test_print(const gs_config *cfg, bool mark_defaults)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    gs_config_print(cfg, f, mark_defaults);
    assert_int_equal(fclose(f), 0);
    return buf;
}

void cfg_test_assert_same_values(const gs_config *a, const gs_config *b)
{
    for (int k = 0; gs_cfg_schema[k].path; k++) {
        const char *p = gs_cfg_schema[k].path;
        switch (gs_cfg_schema[k].type) {
        case GS_CFG_INT: assert_int_equal(gs_config_int(a, p), gs_config_int(b, p)); break;
        case GS_CFG_DOUBLE: {
            double x = gs_config_double(a, p), y = gs_config_double(b, p);
            if (memcmp(&x, &y, sizeof x) != 0) fprintf(stderr, "%s: %.17g != %.17g\n", p, x, y);
            assert_memory_equal(&x, &y, sizeof x);
            break;
        }
        case GS_CFG_BOOL: assert_int_equal(gs_config_bool(a, p), gs_config_bool(b, p)); break;
        case GS_CFG_STRING:
        case GS_CFG_CHOICE: assert_string_equal(gs_config_string(a, p), gs_config_string(b, p)); break;
        }
    }
}

void cfg_test_assert_same_origins(const gs_config *a, const gs_config *b)
{
    for (int k = 0; gs_cfg_schema[k].path; k++)
        assert_string_equal(gs_config_origin(a, gs_cfg_schema[k].path),
                            gs_config_origin(b, gs_cfg_schema[k].path));
}
