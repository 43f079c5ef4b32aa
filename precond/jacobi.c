/* Jacobi (diagonal) preconditioner: z = D^{-1} r, with D = diag(A); a zero diagonal names its row. */
#include <math.h>

#include "core/mem.h"
#include "precond/precond.h"

typedef struct {
    gs_vector *dinv; /* 1 / a_ii on the backend */
} jacobi_data;

static gs_status jacobi_numeric(gs_pc *pc, const gs_csr *A)
{
    gs_status st = GS_OK;
    jacobi_data *d = pc->data;
    double *h = NULL;
    GS_CALL(GS_MALLOC(h, A->nrows));
    gs_csr_diagonal(A, h, NULL, NULL);
    for (gs_int i = 0; i < A->nrows; i++) {
        if (h[i] == 0.0 || !isfinite(h[i]))
            GS_FAIL(GS_ERR_NUMERIC,
                    "jacobi: diagonal entry of row %d is %s; Jacobi needs a nonzero diagonal "
                    "(try preconditioner.type = \"ilu0\" with zero_pivot = \"shift\", or none)",
                    (int)(pc->row_names ? pc->row_names[i] : i) + 1, h[i] == 0.0 ? "zero or missing" : "not finite");
        h[i] = 1.0 / h[i];
    }
    if (!d->dinv) GS_TRY(gs_vec_create(pc->be, A->nrows, &d->dinv));
    GS_TRY(gs_vec_upload(d->dinv, h));
cleanup:
    gs_free(&h);
    return st;
}

static gs_status jacobi_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    jacobi_data *d = pc->data;
    return gs_vec_pointwise_mult(d->dinv, r, z);
}

static void jacobi_destroy(gs_pc *pc)
{
    jacobi_data *d = pc->data;
    if (d) gs_vec_destroy(&d->dinv);
    gs_free(&pc->data);
}

static const gs_pc_ops jacobi_ops = {
    .setup_symbolic = NULL,
    .setup_numeric = jacobi_numeric,
    .apply = jacobi_apply,
    .destroy = jacobi_destroy,
    .view = NULL,
};

gs_status gs_pc_create_jacobi(gs_pc *pc)
{
    jacobi_data *d = NULL;
    GS_CALL(gs_calloc(&d, 1, sizeof *d));
    pc->data = d;
    pc->ops = &jacobi_ops;
    return GS_OK;
}
