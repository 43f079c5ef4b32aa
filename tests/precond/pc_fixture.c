/* The host backend + configuration fixture shared by the preconditioner tests (pc_fixture.h). */
#include "pc_fixture.h"

#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

int pc_fixture_setup(void **state)
{
    pc_fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    if (gs_backend_create("host", 0, &f->be) != GS_OK || gs_config_create(&f->cfg) != GS_OK) {
        gs_error_print(stderr);
        if (f->be) gs_backend_destroy(&f->be);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

int pc_fixture_teardown(void **state)
{
    pc_fixture *f = *state;
    gs_config_destroy(&f->cfg);
    gs_backend_destroy(&f->be);
    free(f);
    return 0;
}

void pc_fixture_set(pc_fixture *f, const char *assignment) { GS_ASSERT_OK(gs_config_set(f->cfg, assignment)); }
