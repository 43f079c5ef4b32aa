/* Helpers of the cfg tests: config text written to files in a private temporary directory, and a
 * config rendered into a string. */
#ifndef GS_CFG_TESTUTIL_H
#define GS_CFG_TESTUTIL_H

#include <stdbool.h>

#include "cfg/config.h"

/* Writes text to <tmpdir>/<name> and returns the full path (static storage, valid until the next
 * call). The directory is made once with mkdtemp and removed with its files at exit. */
const char *cfg_test_file(const char *name, const char *text);
/* The private temporary directory. */
const char *cfg_test_dir(void);
/* gs_config_print into a malloc'ed string (free it). */
char *cfg_test_print(const gs_config *cfg, bool mark_defaults);
/* Asserts every key of a and b holds the same value (doubles bit for bit). */
void cfg_test_assert_same_values(const gs_config *a, const gs_config *b);
/* Asserts every key of a and b has the same origin. */
void cfg_test_assert_same_origins(const gs_config *a, const gs_config *b);

#endif
