/* Block Jacobi across ranks (dist/pc_dist.h): z_r = M_r^{-1} r_r on every rank, M_r the single-process
 * plug-in of preconditioner.type on the rank's diagonal block, applied to views of the distributed
 * vectors on the rank's host backend. */
#include "dist/pc_dist.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "dist/backend_mpi.h"

typedef struct dist_pc {
    gs_pc *inner;     /* NULL on a rank that owns no rows */
    gs_config *lcfg;  /* the local plug-in's configuration */
    gs_backend *local;
} dist_pc;

bool gs_dist_pc_supported(const char *type, const char **why)
{
    if (strcmp(type, "ras") == 0) {
        if (why) *why = "RAS across ranks (overlap rows fetched from neighbours) is not available; use bilu "
                        "(block Jacobi) or a local method (ilu0, iluk, ilut, ic0, ...) on each rank's block";
        return false;
    }
    if (strcmp(type, "auto") == 0) {
        if (why) *why = "\"auto\" is resolved before the preconditioner is made";
        return false;
    }
    return true;
}

gs_status gs_dist_pc_check(const gs_config *cfg, int P)
{
    const char *type = gs_config_string(cfg, "preconditioner.type"), *why = NULL;
    if (!gs_dist_pc_supported(type, &why))
        return GS_ERROR(GS_ERR_UNSUPPORTED, "preconditioner.type = \"%s\" on %d MPI ranks: %s", type, P, why);
    if (strcmp(type, "bilu") == 0 || strcmp(type, "bilut") == 0) {
        long long B = gs_config_int(cfg, "preconditioner.blocks");
        if (B % P != 0)
            return GS_ERROR(GS_ERR_CONFIG,
                            "preconditioner.blocks = %lld on %d MPI ranks: the blocks must be a multiple of the ranks "
                            "(each rank's part is split into blocks / ranks local blocks)",
                            B, P);
    }
    return GS_OK;
}

static gs_status dist_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    dist_pc *d = pc->data;
    if (!d->inner) return GS_OK;
    gs_vector rl = gs_backend_mpi_local_view(r), zl = gs_backend_mpi_local_view(z);
    return gs_pc_apply(d->inner, &rl, &zl);
}

static void dist_destroy(gs_pc *pc)
{
    dist_pc *d = pc->data;
    if (!d) return;
    gs_pc_destroy(&d->inner);
    gs_config_destroy(&d->lcfg);
    gs_free(&pc->data);
}

static void dist_view(const gs_pc *pc, gs_report *rep)
{
    const dist_pc *d = pc->data;
    gs_report_string(rep, "preconditioner.distributed", "block Jacobi over the ranks' diagonal blocks");
    if (d->inner && d->inner->ops->view) d->inner->ops->view(d->inner, rep);
    if (d->inner && d->inner->stability_estimated)
        gs_report_double(rep, "preconditioner.stability_estimate", d->inner->stability_estimate);
}

static const gs_pc_ops dist_pc_ops = {
    .apply = dist_apply,
    .destroy = dist_destroy,
    .view = dist_view,
};

gs_status gs_dist_pc_create(gs_backend *be, const gs_config *cfg, gs_pc **pc)
{
    gs_status st = GS_OK;
    gs_pc *p = NULL;
    dist_pc *d = NULL;
    int rank = 0, P = 1;
    if (!gs_backend_is_mpi(be)) return GS_ERROR(GS_ERR_ARG, "block Jacobi across ranks needs the distributed backend");
    gs_backend_mpi_rank(be, &rank, &P);
    GS_CALL(gs_dist_pc_check(cfg, P));
    const char *type = gs_config_string(cfg, "preconditioner.type");
    GS_TRY(gs_calloc(&p, 1, sizeof *p));
    GS_TRY(gs_calloc(&d, 1, sizeof *d));
    p->data = d;
    p->ops = &dist_pc_ops;
    p->type = "bjacobi";
    p->be = be;
    p->cfg = cfg;
    p->identity = strcmp(type, "none") == 0;
    d->local = gs_backend_mpi_local(be);
    GS_TRY(gs_config_copy(cfg, &d->lcfg));
    if (strcmp(type, "bilu") == 0 || strcmp(type, "bilut") == 0) {
        char set[64];
        snprintf(set, sizeof set, "preconditioner.blocks=%lld", gs_config_int(cfg, "preconditioner.blocks") / P);
        GS_TRY(gs_config_set(d->lcfg, set));
    }
    *pc = p;
    return GS_OK;
cleanup:
    if (p) dist_destroy(p);
    gs_free(&p);
    return st;
}

gs_status gs_dist_pc_setup(gs_pc *pc, const gs_csr *D)
{
    dist_pc *d = pc->data;
    gs_pc_destroy(&d->inner);
    pc->state = GS_PC_CREATED;
    pc->n = D->nrows;
    pc->time_symbolic = pc->time_numeric = 0.0;
    if (D->nrows > 0) {
        GS_CALL(gs_pc_create(gs_config_string(d->lcfg, "preconditioner.type"), d->local, d->lcfg, &d->inner));
        GS_CALL(gs_pc_setup_symbolic(d->inner, D));
        GS_CALL(gs_pc_setup_numeric(d->inner, D));
        pc->time_symbolic = d->inner->time_symbolic;
        pc->time_numeric = d->inner->time_numeric;
        pc->variable = d->inner->variable;
    }
    pc->state = GS_PC_READY;
    return GS_OK;
}
