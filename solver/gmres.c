/* Restarted GMRES(m) and flexible FGMRES(m), right preconditioned: each cycle builds an orthonormal
 * basis V of K_m(A M^{-1}, r0) by Arnoldi (CGS2, DCGS2 or MGS), reduces the Hessenberg matrix H to upper
 * triangular form with Givens rotations so that |g_{j+1}| is the residual norm of the least-squares
 * minimizer, and updates x = x0 + M^{-1} V y (GMRES) or x = x0 + Z y with Z_j = M^{-1} v_j (FGMRES,
 * which allows M to change from one application to the next). */
#include <float.h>
#include <math.h>

#include "core/mem.h"
#include "solver/ksp_impl.h"

/* Host-side small dense state of one cycle: H is (m+1) x m, column-major; after the rotations its
 * upper triangle is R. H0 keeps H's columns as they were before the rotations (DCGS2 needs them); h2 is
 * scratch of 6 (m + 1) values. */
typedef struct gmres_host {
    gs_int m;
    double *H, *H0, *cs, *sn, *g, *y, *h2;
} gmres_host;

#define HCOL(hs, j) ((hs)->H + (size_t)(j) * (size_t)((hs)->m + 1))
#define H0COL(hs, j) ((hs)->H0 + (size_t)(j) * (size_t)((hs)->m + 1))

static void host_free(gmres_host *hs)
{
    gs_free(&hs->H);
    gs_free(&hs->H0);
    gs_free(&hs->cs);
    gs_free(&hs->sn);
    gs_free(&hs->g);
    gs_free(&hs->y);
    gs_free(&hs->h2);
    hs->m = 0;
}

/* The solver's host state for cycles of m columns (ksp->data), kept between solves like its vectors. */
static gs_status host_state(gs_ksp *ksp, gs_int m, gmres_host **out)
{
    gs_status st = GS_OK;
    gmres_host *hs = ksp->data;
    if (!hs) {
        GS_CALL(gs_calloc(&hs, 1, sizeof *hs));
        ksp->data = hs;
    }
    if (hs->m != m) {
        host_free(hs);
        GS_TRY(GS_MALLOC(hs->H, (size_t)(m + 1) * (size_t)m));
        GS_TRY(GS_MALLOC(hs->H0, (size_t)(m + 1) * (size_t)m));
        GS_TRY(GS_MALLOC(hs->cs, m));
        GS_TRY(GS_MALLOC(hs->sn, m));
        GS_TRY(GS_MALLOC(hs->g, m + 1));
        GS_TRY(GS_MALLOC(hs->y, m));
        GS_TRY(GS_MALLOC(hs->h2, 6 * ((size_t)m + 1)));
        hs->m = m;
    }
    *out = hs;
    return GS_OK;
cleanup:
    host_free(hs);
    return st;
}

static void gmres_destroy(gs_ksp *ksp)
{
    gmres_host *hs = ksp->data;
    if (hs) host_free(hs);
    gs_free(&ksp->data);
}

/* One cycle's operands and progress. */
typedef struct arnoldi {
    gs_ksp *ksp;
    const gs_matrix *A;
    gs_pc *pc;
    gs_mvec *V, *Z;    /* Z: FGMRES's preconditioned basis (NULL: none kept) */
    gs_vector *zt;     /* GMRES's M^{-1} v scratch (with a preconditioner) */
    gmres_host *hs;
    gs_ksp_track *trk;
    gs_solve_result *res;
    int it;            /* iterations so far in the solve */
} arnoldi;

/* w = A M^{-1} V(:,j): M^{-1} v_j goes to Z(:,j) (FGMRES) or to zt. */
static gs_status apply_op(arnoldi *ar, gs_int j, gs_vector *w)
{
    gs_vector *vj = &ar->V->cols[j];
    gs_vector *zj = ar->Z ? &ar->Z->cols[j] : (ar->pc ? ar->zt : vj);
    if (ar->pc) GS_CALL(gs_pc_apply(ar->pc, vj, zj));
    return gs_mat_spmv(1.0, ar->A, zj, 0.0, w);
}

typedef enum col_state { COL_NEXT, COL_LAST, COL_FAILED } col_state;

/* Column j of H is complete (rows 0..j+1, before rotation) at iteration ar->it: stops the solve on a
 * NaN or Inf entry, applies the earlier rotations and the one that zeroes h(j+1,j), and tests
 * convergence. COL_NEXT: go on; COL_LAST: the cycle ends with this column (converged, a stop of
 * gs_ksp_step, or a happy breakdown); COL_FAILED: the cycle ends without it (NaN, singular H). */
static col_state close_column(arnoldi *ar, gs_int j)
{
    gmres_host *hs = ar->hs;
    double *h = HCOL(hs, j);
    double colnorm2 = 0.0;
    for (gs_int i = 0; i <= j; i++) {
        if (!isfinite(h[i])) {
            gs_ksp_stop(ar->res, GS_DIVERGED_NAN, "Arnoldi coefficient h(%d,%d) = %s at iteration %d", i, j,
                        isnan(h[i]) ? "NaN" : "Inf", ar->it);
            return COL_FAILED;
        }
        colnorm2 += h[i] * h[i];
    }
    const double hnext = h[j + 1];
    if (gs_ksp_nonfinite(ar->res, "Arnoldi norm h(j+1,j) = ||w||", hnext, ar->it)) return COL_FAILED;
    colnorm2 += hnext * hnext;
    /* Happy breakdown: A M^{-1} v_j lies in span(V) to rounding, the Krylov space is invariant and the
     * least-squares solution is exact; the cycle ends after this column. */
    const bool happy = hnext <= DBL_EPSILON * sqrt(colnorm2);

    for (gs_int i = 0; i < j; i++) {
        const double a = h[i], c = h[i + 1];
        h[i] = hs->cs[i] * a + hs->sn[i] * c;
        h[i + 1] = -hs->sn[i] * a + hs->cs[i] * c;
    }
    const double d = hypot(h[j], h[j + 1]);
    if (d == 0.0) {
        /* R(j,j) = 0: A M^{-1} v_j = 0, so A M^{-1} is singular on the Krylov space. The update uses
         * the j columns before it. */
        gs_ksp_stop(ar->res, GS_DIVERGED_BREAKDOWN,
                    "the Hessenberg matrix is singular (A M^{-1} v_%d = 0) at iteration %d: the "
                    "(preconditioned) matrix is singular",
                    j, ar->it);
        return COL_FAILED;
    }
    hs->cs[j] = h[j] / d;
    hs->sn[j] = h[j + 1] / d;
    h[j] = d;
    h[j + 1] = 0.0;
    hs->g[j + 1] = -hs->sn[j] * hs->g[j];
    hs->g[j] = hs->cs[j] * hs->g[j];
    /* |g_{j+1}| = min ||b - A x|| over x0 + M^{-1} K_{j+1} */
    if (gs_ksp_step(ar->ksp, ar->trk, ar->it, fabs(hs->g[j + 1]), ar->res) || happy) return COL_LAST;
    return COL_NEXT;
}

/* w -= V(:,0:k) h with h = V(:,0:k)' w, so that w is orthogonal to the first k basis vectors, and *wnorm =
 * ||w|| after it. CGS2: two classical passes (batched reductions; the second repairs the loss of
 * orthogonality of the first) -- the second pass's reduction also gives ||w||^2 (w is column k of V), and
 * ||w - V h2||^2 = ||w||^2 - ||h2||^2 for orthonormal V, so the norm costs no reduction of its own unless
 * the second pass removed a large part of w (near a breakdown: then it is computed). MGS: one vector at a
 * time (k reductions), then the norm. h receives the projection coefficients; h2 holds k + 1 values. */
static gs_status orthogonalize(gs_ortho ortho, const gs_mvec *V, gs_int k, gs_vector *w, double *h, double *h2,
                               double *wnorm)
{
    if (ortho == GS_ORTHO_CGS2) {
        GS_CALL(gs_mvec_dot(V, k, w, h));
        GS_CALL(gs_mvec_gemv(-1.0, V, k, h, 1.0, w));
        GS_CALL(gs_mvec_dot(V, k + 1, w, h2));
        GS_CALL(gs_mvec_gemv(-1.0, V, k, h2, 1.0, w));
        double proj2 = 0.0;
        for (gs_int i = 0; i < k; i++) {
            h[i] += h2[i];
            proj2 += h2[i] * h2[i];
        }
        const double ww = h2[k];
        if (isfinite(ww) && isfinite(proj2) && proj2 <= 0.25 * ww) {
            *wnorm = sqrt(ww - proj2);
            return GS_OK;
        }
    } else {
        for (gs_int i = 0; i < k; i++) {
            GS_CALL(gs_vec_dot(&V->cols[i], w, &h[i]));
            GS_CALL(gs_vec_axpy(-h[i], &V->cols[i], w));
        }
    }
    return gs_vec_nrm2(w, wnorm);
}

/* One cycle of at most m columns with CGS2 or MGS: column j is finished in step j. *k receives the
 * columns the update uses. */
static gs_status cycle_classic(arnoldi *ar, gs_int m, gs_int *k)
{
    gmres_host *hs = ar->hs;
    for (gs_int j = 0; j < m; j++) {
        ar->it++;
        gs_vector *w = &ar->V->cols[j + 1];
        double *h = HCOL(hs, j);
        /* w = A M^{-1} v_j, orthogonalized against v_0..v_j: h(0:j+1, j) */
        GS_CALL(apply_op(ar, j, w));
        GS_CALL(orthogonalize(ar->ksp->prm.ortho, ar->V, j + 1, w, h, hs->h2, &h[j + 1]));
        const double hnext = h[j + 1];
        const col_state cs = close_column(ar, j);
        if (cs == COL_FAILED) return GS_OK;
        *k = j + 1;
        if (cs == COL_LAST) return GS_OK;
        GS_CALL(gs_vec_scale(w, 1.0 / hnext));
    }
    return GS_OK;
}

/* The factor that brings a vector to norm about 1, from its squared norm n2 estimated as ww - cc (a
 * squared norm before a projection, less the squared norm of the part removed): kept above 1e-16 ww
 * where the difference cancels; 1 where there is nothing to scale. */
static double unit_scale(double ww, double cc)
{
    double n2 = ww - cc;
    if (!(n2 >= 1e-16 * ww)) n2 = 1e-16 * ww;
    return isfinite(n2) && n2 > 0.0 ? 1.0 / sqrt(n2) : 1.0;
}

/* One cycle with DCGS2, classical Gram-Schmidt twice with the second pass delayed by one step so that
 * each step makes one reduction (Swirydowicz et al. 2020, Bielich et al. 2022). Entering step j >= 1,
 * v_0..v_{j-1} are final, column j of V holds u = sigma u_j, u_j the first-pass residual of
 * w_{j-1} = A M^{-1} v_{j-1}, scaled by sigma to norm about 1 (so that A M^{-1} u has the magnitude of
 * A M^{-1} v, as in CGS2), and H(0:j-1, j-1) holds w_{j-1}'s first-pass coefficients. Step j:
 *   w~ = A M^{-1} u (column j+1) -- M applied to u before it is final, exact for a fixed M; FGMRES keeps
 *        Z(:,j) = M^{-1} u;
 *   one reduction (mdot2 over columns 0..j+1): s = V(:,0:j)' u, beta = u'u, z = V(:,0:j)' w~,
 *        omega = u'w~, and w~'w~ (for the next sigma);
 *   the second pass of column j-1: H(0:j-1, j-1) += s / sigma, H(j, j-1) = alpha / sigma with
 *        alpha = ||u - V s|| = sqrt(beta - s's) (computed where that cancels); column j-1 is rotated and
 *        tested;
 *   v_j = (u - V s) / alpha (FGMRES: Z(:,j) = (Z(:,j) - Z s) / alpha, which keeps A Z = V H);
 *   the first pass of column j without a reduction: A M^{-1} v_j = (w~ - V H0 s) / alpha by the Arnoldi
 *        relation (H0: H before the rotations), so with c = V(:,0:j+1)' w~ = [z; (omega - s'z) / alpha]
 *        its coefficients are (c - H0 s) / alpha and its residual u_{j+1} = (w~ - V c) / alpha, of squared
 *        norm (w~'w~ - c'c) / alpha^2.
 * v_j and sigma' u_{j+1} are made in one pass over V (mgemv2). The convergence test of column j-1 comes
 * one operator application after that column's, and the cycle's last column costs one more reduction. */
static gs_status cycle_dcgs2(arnoldi *ar, gs_int m, gs_int *k)
{
    gmres_host *hs = ar->hs;
    gs_mvec *V = ar->V;
    double *s = hs->h2, *t = s + 2 * (m + 1), *c = t + (m + 1), *pq = c + (m + 1); /* 2(m+1), m+1, m+1, 2m */

    /* step 0: v_0 is final; w_0's first pass, [v_0 w_0]' w_0 in one reduction */
    GS_CALL(apply_op(ar, 0, &V->cols[1]));
    GS_CALL(gs_mvec_dot(V, 2, &V->cols[1], s));
    HCOL(hs, 0)[0] = s[0];
    double sigma = unit_scale(s[1], s[0] * s[0]);
    GS_CALL(gs_mvec_gemv(-sigma, V, 1, s, sigma, &V->cols[1]));
    for (gs_int j = 1; j <= m; j++) {
        gs_vector *u = &V->cols[j];
        gs_vector *w = j < m ? &V->cols[j + 1] : NULL;
        const double *z = s + j + 2; /* V(:,0:j+1)' w~ */
        if (w) {
            GS_CALL(apply_op(ar, j, w));
            GS_CALL(gs_mvec_dot2(V, j + 2, u, w, s));
        } else {
            GS_CALL(gs_mvec_dot(V, j + 1, u, s)); /* the cycle's last column: only its second pass */
        }
        const double beta = s[j];
        double ss = 0.0;
        for (gs_int i = 0; i < j; i++) ss += s[i] * s[i];
        /* alpha by Pythagoras unless the second pass removed over half of u (then computed) */
        const bool exact = !(isfinite(beta) && isfinite(ss) && ss <= 0.25 * beta);
        double alpha = 0.0;
        if (exact) {
            GS_CALL(gs_mvec_gemv(-1.0, V, j, s, 1.0, u));
            GS_CALL(gs_vec_nrm2(u, &alpha));
        } else {
            alpha = sqrt(beta - ss);
        }
        double *h = HCOL(hs, j - 1), *h0 = H0COL(hs, j - 1);
        for (gs_int i = 0; i < j; i++) h[i] += s[i] / sigma;
        h[j] = alpha / sigma;
        for (gs_int i = 0; i <= j; i++) h0[i] = h[i];

        ar->it++;
        const col_state cs = close_column(ar, j - 1);
        if (cs == COL_FAILED) return GS_OK;
        *k = j;
        if (cs == COL_LAST || !w) return GS_OK;

        /* c = V(:,0:j+1)' w~ with v_j final; t = H0(0:j, 0:j-1) s */
        const double inv = 1.0 / alpha, omega = z[j], ww = z[j + 1];
        for (gs_int i = 0; i < j; i++) c[i] = z[i];
        if (exact) {
            GS_CALL(gs_vec_scale(u, inv));
            GS_CALL(gs_vec_dot(u, w, &c[j]));
        } else {
            double sz = 0.0;
            for (gs_int i = 0; i < j; i++) sz += s[i] * z[i];
            c[j] = (omega - sz) * inv;
        }
        double cc = 0.0;
        for (gs_int i = 0; i <= j; i++) {
            double ti = 0.0;
            for (gs_int l = i > 0 ? i - 1 : 0; l < j; l++) ti += H0COL(hs, l)[i] * s[l];
            t[i] = ti;
            cc += c[i] * c[i];
        }
        double next = unit_scale(ww, cc) * alpha; /* sigma of u_{j+1} */
        if (!isfinite(ww)) { /* w~'w~ overflowed: the norm of w~, computed with scaling, bounds it */
            double nw = 0.0;
            GS_CALL(gs_vec_nrm2(w, &nw));
            next = nw > 0.0 && isfinite(nw) ? alpha / nw : 1.0;
        }
        if (ar->Z) GS_CALL(gs_mvec_gemv(-inv, ar->Z, j, s, inv, &ar->Z->cols[j]));
        if (exact) {
            GS_CALL(gs_mvec_gemv(-next * inv, V, j + 1, c, next * inv, w));
        } else {
            /* v_j = (u - V s) / alpha, then sigma' u_{j+1} = sigma' (w~ - V(:,0:j) c(0:j) - c_j v_j) / alpha */
            double *p = pq, *q = pq + j;
            for (gs_int i = 0; i < j; i++) {
                p[i] = -s[i] * inv;
                q[i] = -c[i] * next * inv;
            }
            GS_CALL(gs_mvec_gemv2(V, j, p, inv, u, q, next * inv, -c[j] * next * inv, w));
        }
        double *hj = HCOL(hs, j);
        for (gs_int i = 0; i <= j; i++) hj[i] = (c[i] - t[i]) * inv;
        sigma = next;
    }
    return GS_OK;
}

/* Back substitution R(0:k,0:k) y = g(0:k). */
static void solve_triangular(const gmres_host *hs, gs_int k)
{
    for (gs_int i = k - 1; i >= 0; i--) {
        double s = hs->g[i];
        for (gs_int l = i + 1; l < k; l++) s -= HCOL(hs, l)[i] * hs->y[l];
        hs->y[i] = s / HCOL(hs, i)[i];
    }
}

static gs_status gmres_run(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                           gs_solve_result *res, bool flexible)
{
    gs_status st = GS_OK;
    const gs_int n = A->nrows, N = A->rows_global > 0 ? A->rows_global : n;
    /* The Krylov space of an N x N matrix has dimension <= N: a longer cycle would only hold noise. N is the
     * whole operator's order (over MPI ranks every rank takes the same cycle, whatever its own rows). */
    const gs_int m = ksp->prm.restart < N ? ksp->prm.restart : (N > 0 ? N : 1);
    const bool use_z = flexible && pc; /* FGMRES keeps Z = M^{-1} V; without a pc Z = V */
    gs_mvec *V = NULL, *Z = NULL;
    gs_vector *zt = NULL, *u = NULL;
    gmres_host *hs = NULL;
    gs_ksp_track trk = {0};
    bool done = false;

    GS_TRY(gs_ksp_work_mvec(ksp, 0, n, m + 1, &V));
    if (use_z) GS_TRY(gs_ksp_work_mvec(ksp, 1, n, m, &Z));
    if (pc && !use_z) {
        GS_TRY(gs_ksp_work(ksp, 0, n, &zt));
        GS_TRY(gs_ksp_work(ksp, 1, n, &u));
    }
    GS_TRY(host_state(ksp, m, &hs));

    gs_vector *r = &V->cols[0]; /* the residual of each restart becomes v_0 = r / ||r|| */
    GS_TRY(gs_ksp_start(ksp, A, b, x, r, &trk, res, &done));
    if (done) goto cleanup;

    arnoldi ar = {.ksp = ksp, .A = A, .pc = pc, .V = V, .Z = Z, .zt = zt, .hs = hs, .trk = &trk, .res = res};
    double beta = res->r0norm;
    for (;;) {
        /* v_0 = r / beta, g = beta e_1 */
        GS_TRY(gs_vec_scale(r, 1.0 / beta));
        hs->g[0] = beta;
        for (gs_int i = 1; i <= m; i++) hs->g[i] = 0.0;

        gs_int k = 0; /* columns of R used by the update */
        if (ksp->prm.ortho == GS_ORTHO_DCGS2) GS_TRY(cycle_dcgs2(&ar, m, &k));
        else GS_TRY(cycle_classic(&ar, m, &k));

        /* x += M^{-1} V y (GMRES) or Z y (FGMRES), R y = g; not after a NaN (y would be NaN too). */
        if (k > 0 && res->reason != GS_DIVERGED_NAN) {
            solve_triangular(hs, k);
            if (use_z) {
                GS_TRY(gs_mvec_gemv(1.0, Z, k, hs->y, 1.0, x));
            } else if (pc) {
                GS_TRY(gs_mvec_gemv(1.0, V, k, hs->y, 0.0, u));
                GS_TRY(gs_pc_apply(pc, u, zt));
                GS_TRY(gs_vec_axpy(1.0, zt, x));
            } else {
                GS_TRY(gs_mvec_gemv(1.0, V, k, hs->y, 1.0, x));
            }
        }
        if (res->reason == GS_DIVERGED_NAN) break;

        /* The true residual r = b - Ax restarts the next cycle and decides convergence. */
        GS_TRY(gs_ksp_confirm(ksp, &trk, A, b, x, r, ar.it, res, &beta));
        if (res->reason != GS_REASON_NONE) break;
        if (gs_ksp_nonfinite(res, "true residual ||b - Ax||", beta, ar.it)) break;
        /* Not converged and below the iteration limit (gs_ksp_step stops at it): next cycle. */
    }

cleanup: /* the vectors and the host state stay with the solver */
    return st;
}

static gs_status gmres_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                             gs_solve_result *res)
{
    return gmres_run(ksp, A, pc, b, x, res, false);
}

static gs_status fgmres_solve(gs_ksp *ksp, const gs_matrix *A, gs_pc *pc, const gs_vector *b, gs_vector *x,
                              gs_solve_result *res)
{
    return gmres_run(ksp, A, pc, b, x, res, true);
}

static const gs_ksp_ops gmres_ops = {.solve = gmres_solve, .destroy = gmres_destroy};
static const gs_ksp_ops fgmres_ops = {.solve = fgmres_solve, .destroy = gmres_destroy};

gs_status gs_ksp_create_gmres(gs_ksp *ksp)
{
    ksp->ops = &gmres_ops;
    ksp->data = NULL;
    ksp->accepts_variable_pc = false;
    return GS_OK;
}

gs_status gs_ksp_create_fgmres(gs_ksp *ksp)
{
    ksp->ops = &fgmres_ops;
    ksp->data = NULL;
    ksp->accepts_variable_pc = true;
    return GS_OK;
}
