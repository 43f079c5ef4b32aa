/* BiCGStab (van der Vorst), right preconditioned: solves A M^{-1} y = b with x = M^{-1} y, so the
 * recursive residual it monitors is the residual b - Ax of the original system. */
#include <float.h>
#include <math.h>

#include "solver/ksp_impl.h"

/* A scalar made of two vectors "vanished" when it is below rounding level:
 * |u'w| <= eps ||u|| ||w||, i.e. the angle between them is 90 degrees to working precision. */
static bool vanished(double dot, double unorm, double wnorm) { return fabs(dot) <= DBL_EPSILON * unorm * wnorm; }

/* The checks that close a full step (the tolerance not met): omega = t's/t't vanished is a breakdown (the
 * minimal-residual step made no progress and the next beta divides by omega); rho = r0'r vanished asks
 * for a new shadow residual (*restart) when ||r|| decreased since r0 was chosen, else is a breakdown.
 * true: the solve stops (res says why). */
static bool bicgstab_step_end(gs_solve_result *res, int it, double ts, double tnorm, double snorm, double rho,
                              double r0norm, double rnorm, bool *restart)
{
    if (vanished(ts, tnorm, snorm)) {
        gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                    "omega vanished (t's = %.3e with ||t|| ||s|| = %.3e) at iteration %d: the minimal-residual "
                    "step made no progress",
                    ts, tnorm * snorm, it);
        return true;
    }
    if (gs_ksp_nonfinite(res, "rho = r0'r", rho, it)) return true;
    if (vanished(rho, r0norm, rnorm)) {
        if (rnorm < r0norm) {
            *restart = true; /* progress since r0 was chosen: take r0 = r */
            return false;
        }
        gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                    "rho = r0'r vanished (|rho| = %.3e with ||r0|| ||r|| = %.3e) at iteration %d: the residual "
                    "is orthogonal to the shadow residual and has not decreased since it was chosen",
                    fabs(rho), r0norm * rnorm, it);
        return true;
    }
    return false;
}

static gs_status bicgstab_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                                gs_solve_result *res)
{
    gs_status st = GS_OK;
    gs_vector *r = NULL, *r0 = NULL, *p = NULL, *v = NULL, *t = NULL, *phat_buf = NULL, *shat_buf = NULL;
    gs_vector *phat = NULL, *shat = NULL; /* M^{-1} p and M^{-1} s; p and s themselves without a pc */
    gs_ksp_track trk = {0};
    bool done = false;
    const gs_int n = A->nrows;
    double rho = 0.0, rho_old = 0.0, alpha = 0.0, omega = 0.0;
    double r0norm = 0.0; /* ||r0||: the shadow residual, = ||r|| when it was chosen */
    int start_it = 0;    /* first iteration with the current shadow residual */

    GS_TRY(gs_ksp_work(ksp, 0, n, &r)); /* r_k, and s = r_k - alpha v in place */
    GS_TRY(gs_ksp_work(ksp, 1, n, &r0));
    GS_TRY(gs_ksp_work(ksp, 2, n, &p));
    GS_TRY(gs_ksp_work(ksp, 3, n, &v));
    GS_TRY(gs_ksp_work(ksp, 4, n, &t));
    if (pc) {
        GS_TRY(gs_ksp_work(ksp, 5, n, &phat_buf));
        GS_TRY(gs_ksp_work(ksp, 6, n, &shat_buf));
    }
    phat = pc ? phat_buf : p;
    shat = pc ? shat_buf : r;

    GS_TRY(gs_ksp_start(ksp, A, b, x, r, &trk, res, &done));
    if (done) goto cleanup;

    /* (Re)start with the shadow residual r0 = r: at the start; when the recursive residual met the
     * tolerance but the true one did not (r = b - Ax then); and when rho = r0'r or r0'v vanished to
     * rounding level after ||r|| decreased below ||r0|| -- a new shadow residual repairs that
     * near-breakdown, while one right after a restart is a true breakdown. */
    bool restart = true;
    for (int it = 1;; it++) {
        if (restart) {
            GS_TRY(gs_vec_copy(r, r0));
            GS_TRY(gs_vec_copy(r, p));
            GS_TRY(gs_vec_dot(r0, r, &rho));
            if (gs_ksp_nonfinite(res, "rho = r0'r", rho, it)) break;
            r0norm = sqrt(rho);
            start_it = it;
            restart = false;
        } else {
            /* p = r + beta (p - omega v), beta = (rho_k / rho_{k-1}) (alpha / omega) */
            const double beta = (rho / rho_old) * (alpha / omega);
            if (gs_ksp_nonfinite(res, "beta", beta, it)) break;
            GS_TRY(gs_vec_axpbypcz(1.0, r, -beta * omega, v, beta, p));
        }

        /* v = A M^{-1} p, alpha = rho / r0'v */
        double r0v_vv[2];
        if (pc) GS_TRY(gs_pc_apply(pc, p, phat));
        GS_TRY(gs_mat_spmv(1.0, A, phat, 0.0, v));
        GS_TRY(gs_vec_dot2(r0, v, v, v, r0v_vv));
        if (gs_ksp_nonfinite(res, "r0'v", r0v_vv[0], it)) break;
        const double vnorm = sqrt(r0v_vv[1]);
        if (vanished(r0v_vv[0], r0norm, vnorm)) {
            if (it > start_it && res->resnorm < r0norm) {
                restart = true; /* redo this iteration with r0 = r */
                it--;
                continue;
            }
            gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                        "r0'v vanished (|r0'v| = %.3e with ||r0|| ||v|| = %.3e) at iteration %d: the shadow "
                        "residual r0 is orthogonal to v = A M^{-1} p",
                        fabs(r0v_vv[0]), r0norm * vnorm, it);
            break;
        }
        alpha = rho / r0v_vv[0];
        if (gs_ksp_nonfinite(res, "alpha = rho/r0'v", alpha, it)) break;

        /* s = r - alpha v (in r) */
        double snorm = 0.0;
        GS_TRY(gs_vec_axpy(-alpha, v, r));
        GS_TRY(gs_vec_nrm2(r, &snorm));
        if (gs_ksp_nonfinite(res, "||s||", snorm, it)) break;
        if (gs_ksp_met(&trk, snorm)) {
            /* Converged half way: x += alpha M^{-1} p, and the residual is s. gs_ksp_step stops (the
             * tolerance is met); the true residual confirms it, or r = b - Ax restarts. */
            double tnorm = 0.0;
            GS_TRY(gs_vec_axpy(alpha, phat, x));
            (void)gs_ksp_step(ksp, &trk, it, snorm, res);
            GS_TRY(gs_ksp_confirm(ksp, &trk, A, b, x, r, it, res, &tnorm));
            if (res->reason != GS_REASON_NONE) break;
            restart = true;
            continue;
        }

        /* t = A M^{-1} s, omega = t's / t't, in one pass */
        double ts_tt[2];
        if (pc) GS_TRY(gs_pc_apply(pc, r, shat));
        GS_TRY(gs_mat_spmv(1.0, A, shat, 0.0, t));
        GS_TRY(gs_vec_dot2(t, r, t, t, ts_tt));
        if (gs_ksp_nonfinite(res, "t's", ts_tt[0], it) || gs_ksp_nonfinite(res, "t't", ts_tt[1], it)) break;
        const double tnorm_t = sqrt(ts_tt[1]);
        if (ts_tt[1] == 0.0) {
            gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                        "omega undefined: t't = 0 (t = A M^{-1} s = 0 with ||s|| = %.3e) at iteration %d", snorm, it);
            break;
        }
        omega = ts_tt[0] / ts_tt[1];

        /* x += alpha M^{-1} p + omega M^{-1} s ; r = s - omega t */
        GS_TRY(gs_vec_axpbypcz(alpha, phat, omega, shat, 1.0, x));
        GS_TRY(gs_vec_axpy(-omega, t, r));

        /* rho_{k+1} = r0'r and ||r|| in one pass */
        double rho_rr[2];
        GS_TRY(gs_vec_dot2(r0, r, r, r, rho_rr));
        rho_old = rho;
        rho = rho_rr[0];
        const double rnorm = sqrt(rho_rr[1]);
        if (gs_ksp_step(ksp, &trk, it, rnorm, res)) {
            double tnorm = 0.0;
            GS_TRY(gs_ksp_confirm(ksp, &trk, A, b, x, r, it, res, &tnorm));
            if (res->reason != GS_REASON_NONE) break;
            restart = true;
            continue;
        }
        if (bicgstab_step_end(res, it, ts_tt[0], tnorm_t, snorm, rho, r0norm, rnorm, &restart)) break;
    }

cleanup: /* the vectors stay with the solver */
    return st;
}

static const gs_ksp_ops bicgstab_ops = {.solve = bicgstab_solve, .destroy = NULL};

gs_status gs_ksp_create_bicgstab(gs_ksp *ksp)
{
    ksp->ops = &bicgstab_ops;
    ksp->data = NULL;
    ksp->accepts_variable_pc = false;
    return GS_OK;
}
