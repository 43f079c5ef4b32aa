/* The identity preconditioner: z = r. */
#include "precond/precond.h"

static gs_status none_numeric(gs_pc *pc, const gs_csr *A) { return GS_OK; }
static gs_status none_apply(gs_pc *pc, const gs_vector *r, gs_vector *z) { return gs_vec_copy(r, z); }

static const gs_pc_ops none_ops = {
    .setup_symbolic = NULL,
    .setup_numeric = none_numeric,
    .apply = none_apply,
    .destroy = NULL,
    .view = NULL,
};

gs_status gs_pc_create_none(gs_pc *pc)
{
    pc->ops = &none_ops;
    pc->identity = true;
    return GS_OK;
}
