/* Preconditioned conjugate gradients for SPD A and SPD M: x_{k+1} = x_k + alpha_k p_k minimizing the
 * A-norm of the error over x0 + K_k(M^{-1}A, M^{-1}r0); monitors the recursive residual ||r_k||_2. */
#include <math.h>

#include "solver/ksp_impl.h"

static gs_status cg_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                          gs_solve_result *res)
{
    gs_status st = GS_OK;
    gs_vector *r = NULL, *p = NULL, *q = NULL, *zbuf = NULL;
    gs_vector *z = NULL; /* M^{-1} r: its own vector with a preconditioner, r itself without */
    gs_ksp_track t = {0};
    bool done = false;
    const gs_int n = A->nrows;
    double rz = 0.0, rnorm = 0.0;

    GS_TRY(gs_vec_create(ksp->be, n, &r));
    GS_TRY(gs_vec_create(ksp->be, n, &p));
    GS_TRY(gs_vec_create(ksp->be, n, &q));
    if (pc) GS_TRY(gs_vec_create(ksp->be, n, &zbuf));
    z = pc ? zbuf : r;

    GS_TRY(gs_ksp_start(ksp, A, b, x, r, &t, res, &done));
    if (done) goto cleanup;

    /* (Re)start from the residual r = b - Ax: z = M^{-1} r, rz = r'z, p = z. Entered once, and again
     * when the recursive residual met the tolerance but the true one did not. */
    bool restart = true;
    for (int it = 1;; it++) {
        if (restart) {
            if (pc) GS_TRY(gs_pc_apply(pc, r, z));
            GS_TRY(gs_vec_dot(r, z, &rz));
            if (gs_ksp_nonfinite(res, "r'M^{-1}r", rz, it - 1)) break;
            if (pc && rz <= 0.0) {
                gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                            "r'M^{-1}r = %.3e <= 0 at iteration %d: the preconditioner is not positive definite "
                            "(CG needs an SPD preconditioner)",
                            rz, it - 1);
                break;
            }
            GS_TRY(gs_vec_copy(z, p));
            restart = false;
        }

        /* q = A p, alpha = r'z / p'Ap */
        double pq = 0.0;
        GS_TRY(gs_mat_spmv(1.0, A, p, 0.0, q));
        GS_TRY(gs_vec_dot(p, q, &pq));
        if (gs_ksp_nonfinite(res, "p'Ap", pq, it)) break;
        if (pq <= 0.0) {
            gs_ksp_stop(res, GS_DIVERGED_INDEFINITE,
                        "p'Ap = %.3e <= 0 at iteration %d: the matrix is not positive definite (CG needs SPD A; "
                        "use gmres or bicgstab)",
                        pq, it);
            break;
        }
        const double alpha = rz / pq;
        if (gs_ksp_nonfinite(res, "alpha = r'z/p'Ap", alpha, it)) break;

        /* x += alpha p, r -= alpha q */
        GS_TRY(gs_vec_axpy(alpha, p, x));
        GS_TRY(gs_vec_axpy(-alpha, q, r));

        /* ||r|| and the next r'z in one pass: {r'r, r'z} */
        double rz_new = 0.0;
        if (pc) {
            double rr_rz[2];
            GS_TRY(gs_pc_apply(pc, r, z));
            GS_TRY(gs_vec_dot2(r, r, r, z, rr_rz));
            rnorm = sqrt(rr_rz[0]);
            rz_new = rr_rz[1];
        } else {
            GS_TRY(gs_vec_dot(r, r, &rz_new));
            rnorm = sqrt(rz_new);
        }

        if (gs_ksp_step(ksp, &t, it, rnorm, res)) {
            double tnorm = 0.0;
            GS_TRY(gs_ksp_confirm(ksp, &t, A, b, x, r, it, res, &tnorm));
            if (res->reason != GS_REASON_NONE) break;
            restart = true; /* r now holds b - Ax */
            continue;
        }
        if (gs_ksp_nonfinite(res, "r'M^{-1}r", rz_new, it)) break;
        if (pc && rz_new <= 0.0) {
            gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                        "r'M^{-1}r = %.3e <= 0 at iteration %d: the preconditioner is not positive definite "
                        "(CG needs an SPD preconditioner)",
                        rz_new, it);
            break;
        }

        /* p = z + beta p, beta = r'z (new) / r'z (old) */
        const double beta = rz_new / rz;
        rz = rz_new;
        GS_TRY(gs_vec_axpby(1.0, z, beta, p));
    }

cleanup:
    gs_vec_destroy(&r);
    gs_vec_destroy(&p);
    gs_vec_destroy(&q);
    gs_vec_destroy(&zbuf);
    return st;
}

static const gs_ksp_ops cg_ops = {.solve = cg_solve, .destroy = NULL};

gs_status gs_ksp_create_cg(gs_ksp *ksp)
{
    ksp->ops = &cg_ops;
    ksp->data = NULL;
    ksp->accepts_variable_pc = false;
    return GS_OK;
}
