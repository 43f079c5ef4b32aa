/* Preconditioned conjugate gradients for SPD A and SPD M: x_{k+1} = x_k + alpha_k p_k minimizing the
 * A-norm of the error over x0 + K_k(M^{-1}A, M^{-1}r0); monitors the recursive residual ||r_k||_2.
 * The iteration is fused (core/backend.h, gs_kstate): its scalars stay on the backend and the host reads
 * each iteration's ||r|| and stop code CG_LAG - 1 iterations later, so a GPU never waits for the host. */
#include <math.h>

#include "solver/ksp_impl.h"

/* Iterations enqueued ahead of the one whose record the host reads (fused CG). The device never waits
 * for the host; after a stop at most CG_LAG - 1 queued iterations find the stop code set and do nothing
 * but their preconditioner application. */
#define CG_LAG 3

/* The stop of iteration it named by a device code: the same reasons and messages on every backend. */
static void stop_from_code(gs_solve_result *res, const gs_krec *rec, int it)
{
    switch (rec->code) {
    case GS_KC_PQ_NONFINITE: gs_ksp_nonfinite(res, "p'Ap", rec->value, it); break;
    case GS_KC_PQ_NONPOS:
        gs_ksp_stop(res, GS_DIVERGED_INDEFINITE,
                    "p'Ap = %.3e <= 0 at iteration %d: the matrix is not positive definite (CG needs SPD A; "
                    "use gmres or bicgstab)",
                    rec->value, it);
        break;
    case GS_KC_ALPHA_NONFINITE: gs_ksp_nonfinite(res, "alpha = r'z/p'Ap", rec->value, it); break;
    case GS_KC_RZ_NONFINITE: gs_ksp_nonfinite(res, "r'M^{-1}r", rec->value, it); break;
    case GS_KC_RZ_NONPOS:
        gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                    "r'M^{-1}r = %.3e <= 0 at iteration %d: the preconditioner is not positive definite "
                    "(CG needs an SPD preconditioner)",
                    rec->value, it);
        break;
    default: break;
    }
}

/* One iteration on the backend, no host round trip: q = A p; alpha = r'z / p'q; x += alpha p;
 * r -= alpha q; ||r||; z = M^{-1} r; r'z; p = z + beta p. */
static gs_status cg_enqueue(gs_kstate *ks, const gs_matrix *A, gs_pc *pc, int it, gs_vector *x, gs_vector *r,
                            gs_vector *p, gs_vector *q, gs_vector *z)
{
    GS_CALL(gs_ks_cg_spmv_pq(ks, it, A, p, q));
    GS_CALL(gs_ks_cg_update(ks, it, x, r, p, q, pc == NULL));
    if (pc) {
        GS_CALL(gs_pc_apply(pc, r, z));
        GS_CALL(gs_ks_cg_rz(ks, it, r, z));
    }
    GS_CALL(gs_ks_cg_direction(ks, it, z, p));
    GS_CALL(gs_ks_mark(ks, it));
    return GS_OK;
}

/* After a stop decided on the host alone (an interrupt) the queued iterations up to `last` still ran:
 * they are reported (monitor, iteration count, ||r||) so that the result describes x. */
static gs_status cg_drain(gs_ksp *ksp, gs_kstate *ks, int from, int last, gs_solve_result *res)
{
    for (int j = from; j <= last; j++) {
        gs_krec rec;
        GS_CALL(ksp->be->ops->ks_record(ks, j, &rec));
        if (rec.it != j || !isfinite(rec.rnorm)) break; /* the device had stopped before j */
        res->iterations = j;
        res->resnorm = rec.rnorm;
        if (ksp->monitor) ksp->monitor(ksp->monitor_ctx, j, rec.rnorm);
        if (rec.code != GS_KC_RUNNING) break;
    }
    return GS_OK;
}

static gs_status cg_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                          gs_solve_result *res)
{
    gs_status st = GS_OK;
    gs_vector *r = NULL, *p = NULL, *q = NULL, *zbuf = NULL;
    gs_vector *z = NULL; /* M^{-1} r: its own vector with a preconditioner, r itself without */
    gs_kstate *ks = NULL;
    gs_ksp_track t = {0};
    bool done = false;
    const gs_int n = A->nrows;
    const int max_it = ksp->prm.max_iterations;

    GS_TRY(gs_ksp_work(ksp, 0, n, &r));
    GS_TRY(gs_ksp_work(ksp, 1, n, &p));
    GS_TRY(gs_ksp_work(ksp, 2, n, &q));
    if (pc) GS_TRY(gs_ksp_work(ksp, 3, n, &zbuf));
    z = pc ? zbuf : r;

    GS_TRY(gs_ksp_start(ksp, A, b, x, r, &t, res, &done));
    if (done) goto cleanup;
    GS_TRY(gs_ksp_work_kstate(ksp, &ks));

    /* it: the iteration whose record is read next; next: the next one to enqueue. (Re)start from the
     * residual r = b - Ax: z = M^{-1} r, rz = r'z, p = z -- once, and again when the recursive
     * residual met the tolerance but the true one did not. */
    bool restart = true;
    int next = 1;
    for (int it = 1;; it++) {
        if (restart) {
            double rz = 0.0;
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
            const gs_ks_start start = {rz, t.bound, t.best, t.best_it, ksp->prm.stagnation_window, t.dtol_bound};
            GS_TRY(gs_ks_begin(ks, it, &start));
            next = it;
            restart = false;
        }
        for (; next <= max_it && next < it + CG_LAG; next++) GS_TRY(cg_enqueue(ks, A, pc, next, x, r, p, q, z));

        gs_krec rec;
        GS_TRY(gs_ks_record(ks, it, &rec));
        if (rec.code == GS_KC_PQ_NONFINITE || rec.code == GS_KC_PQ_NONPOS || rec.code == GS_KC_ALPHA_NONFINITE) {
            stop_from_code(res, &rec, it); /* inside iteration it: iterations stays at it - 1 */
            break;
        }
        if (gs_ksp_step(ksp, &t, it, rec.rnorm, res)) {
            if (rec.code == GS_KC_CONVERGED) { /* the device stopped here too: x is iteration it's */
                double tnorm = 0.0;
                GS_TRY(gs_ksp_confirm(ksp, &t, A, b, x, r, it, res, &tnorm));
                if (res->reason != GS_REASON_NONE) break;
                restart = true; /* r now holds b - Ax */
                continue;
            }
            if (rec.code == GS_KC_RUNNING) GS_TRY(cg_drain(ksp, ks, it + 1, next - 1, res)); /* interrupt */
            break;
        }
        if (rec.code != GS_KC_RUNNING) { /* r'M^{-1}r not finite or not positive (stagnation: stopped above) */
            stop_from_code(res, &rec, it);
            break;
        }
    }

cleanup: /* the vectors and the scalars' state stay with the solver */
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
