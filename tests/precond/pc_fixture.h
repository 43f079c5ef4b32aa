/* Per-test fixture of the host preconditioner tests: a host backend and an empty configuration that
 * each test fills with "key = value" assignments before creating the preconditioner under test. */
#ifndef PC_FIXTURE_H
#define PC_FIXTURE_H

#include "cfg/config.h"
#include "core/backend.h"

typedef struct pc_fixture {
    gs_backend *be;
    gs_config *cfg;
} pc_fixture;

/* cmocka setup / teardown: *state = a new fixture (host backend, empty config) / destroys it. */
int pc_fixture_setup(void **state);
int pc_fixture_teardown(void **state);

/* A cmocka test entry run with a fresh fixture. */
#define PC_FIXTURE_TEST(t) cmocka_unit_test_setup_teardown(t, pc_fixture_setup, pc_fixture_teardown)

/* Applies one configuration assignment ("key = value"); asserts that it is accepted. */
void pc_fixture_set(pc_fixture *f, const char *assignment);

#endif
