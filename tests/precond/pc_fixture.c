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

void pc_fixture_apply(pc_fixture *f, gs_pc *pc, const double *r, double *z)
{
    gs_int n = pc->n;
    gs_vector *vr = NULL, *vz = NULL;
    GS_ASSERT_OK(gs_vec_create(f->be, n, &vr));
    GS_ASSERT_OK(gs_vec_create(f->be, n, &vz));
    GS_ASSERT_OK(gs_vec_upload(vr, r));
    gs_test_poison(n, z);
    GS_ASSERT_OK(gs_vec_upload(vz, z));
    GS_ASSERT_OK(gs_pc_apply(pc, vr, vz));
    GS_ASSERT_OK(gs_vec_download(vz, z));
    gs_vec_destroy(&vr);
    gs_vec_destroy(&vz);
}

void pc_fixture_trisolve(const gs_csr *T, bool lower, bool unit, const double *b, double *x)
{
    gs_int n = T->nrows;
    for (gs_int t = 0; t < n; t++) {
        gs_int i = lower ? t : n - 1 - t;
        double s = b[i], d = unit ? 1.0 : 0.0;
        for (gs_int p = T->rowptr[i]; p < T->rowptr[i + 1]; p++) {
            gs_int j = T->colind[p];
            if (j == i) d = T->val[p];
            else s -= T->val[p] * x[j];
        }
        x[i] = s / d;
    }
}

const gs_report_entry *pc_fixture_find(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    if (!e) fail_msg("report key %s missing", key);
    return e;
}
