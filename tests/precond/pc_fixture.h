/* Per-test fixture of the host preconditioner tests: a host backend and an empty configuration that
 * each test fills with "key = value" assignments before creating the preconditioner under test. */
#ifndef PC_FIXTURE_H
#define PC_FIXTURE_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/report.h"
#include "precond/precond.h"

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

/* z = pc(r) through the fixture's backend (z poisoned first). */
void pc_fixture_apply(pc_fixture *f, gs_pc *pc, const double *r, double *z);
/* x = T^{-1} b by substitution on the host; T lower (unit: its diagonal 1 and not stored) or upper
 * (diagonal stored). */
void pc_fixture_trisolve(const gs_csr *T, bool lower, bool unit, const double *b, double *x);
/* The report entry of key (the test fails when it is missing). */
const gs_report_entry *pc_fixture_find(const gs_report *rep, const char *key);

#endif
