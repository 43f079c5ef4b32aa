/* Restarted GMRES(m) and flexible FGMRES(m), right preconditioned: each cycle builds an orthonormal
 * basis V of K_m(A M^{-1}, r0) by Arnoldi (CGS2 or MGS), reduces the Hessenberg matrix H to upper
 * triangular form with Givens rotations so that |g_{j+1}| is the residual norm of the least-squares
 * minimizer, and updates x = x0 + M^{-1} V y (GMRES) or x = x0 + Z y with Z_j = M^{-1} v_j (FGMRES,
 * which allows M to change from one application to the next). */
#include <float.h>
#include <math.h>

#include "core/mem.h"
#include "solver/ksp_impl.h"

/* Host-side small dense state of one cycle: H is (m+1) x m, column-major; after the rotations its
 * upper triangle is R. */
typedef struct gmres_host {
    gs_int m;
    double *H, *cs, *sn, *g, *y, *h2;
} gmres_host;

#define HCOL(hs, j) ((hs)->H + (size_t)(j) * (size_t)((hs)->m + 1))

static void host_free(gmres_host *hs)
{
    gs_free(&hs->H);
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
        GS_TRY(GS_MALLOC(hs->cs, m));
        GS_TRY(GS_MALLOC(hs->sn, m));
        GS_TRY(GS_MALLOC(hs->g, m + 1));
        GS_TRY(GS_MALLOC(hs->y, m));
        GS_TRY(GS_MALLOC(hs->h2, m + 1));
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
    const gs_int n = A->nrows;
    /* The Krylov space of an n x n matrix has dimension <= n: a longer cycle would only hold noise. */
    const gs_int m = ksp->prm.restart < n ? ksp->prm.restart : (n > 0 ? n : 1);
    const bool use_z = flexible && pc; /* FGMRES keeps Z = M^{-1} V; without a pc Z = V */
    gs_mvec *V = NULL, *Z = NULL;
    gs_vector *zt = NULL, *u = NULL;
    gmres_host *hp = NULL;
    gs_ksp_track trk = {0};
    bool done = false;

    GS_TRY(gs_ksp_work_mvec(ksp, 0, n, m + 1, &V));
    if (use_z) GS_TRY(gs_ksp_work_mvec(ksp, 1, n, m, &Z));
    if (pc && !use_z) {
        GS_TRY(gs_ksp_work(ksp, 0, n, &zt));
        GS_TRY(gs_ksp_work(ksp, 1, n, &u));
    }
    GS_TRY(host_state(ksp, m, &hp));
    gmres_host hs = *hp; /* the arrays (and m) of the kept state */

    gs_vector *r = &V->cols[0]; /* the residual of each restart becomes v_0 = r / ||r|| */
    GS_TRY(gs_ksp_start(ksp, A, b, x, r, &trk, res, &done));
    if (done) goto cleanup;

    double beta = res->r0norm;
    int it = 0;
    for (;;) {
        /* v_0 = r / beta, g = beta e_1 */
        GS_TRY(gs_vec_scale(r, 1.0 / beta));
        hs.g[0] = beta;
        for (gs_int i = 1; i <= m; i++) hs.g[i] = 0.0;

        gs_int k = 0; /* columns of R used by the update */
        for (gs_int j = 0; j < m; j++) {
            it++;
            gs_vector *vj = &V->cols[j], *w = &V->cols[j + 1];
            gs_vector *zj = use_z ? &Z->cols[j] : (pc ? zt : vj);
            double *h = HCOL(&hs, j);

            /* w = A M^{-1} v_j, orthogonalized against v_0..v_j: h(0:j+1, j) */
            if (pc) GS_TRY(gs_pc_apply(pc, vj, zj));
            GS_TRY(gs_mat_spmv(1.0, A, zj, 0.0, w));
            double hnext = 0.0, colnorm2 = 0.0;
            GS_TRY(orthogonalize(ksp->prm.ortho, V, j + 1, w, h, hs.h2, &hnext));
            bool bad = false;
            for (gs_int i = 0; i <= j && !bad; i++) {
                bad = !isfinite(h[i]);
                if (bad) gs_ksp_stop(res, GS_DIVERGED_NAN, "Arnoldi coefficient h(%d,%d) = %s at iteration %d",
                                     i, j, isnan(h[i]) ? "NaN" : "Inf", it);
                colnorm2 += h[i] * h[i];
            }
            if (bad || gs_ksp_nonfinite(res, "Arnoldi norm h(j+1,j) = ||w||", hnext, it)) break;
            h[j + 1] = hnext;
            colnorm2 += hnext * hnext;

            /* Happy breakdown: A M^{-1} v_j lies in span(V) to rounding, the Krylov space is invariant
             * and the least-squares solution below is exact; the cycle ends after this column. */
            const bool happy = hnext <= DBL_EPSILON * sqrt(colnorm2);
            if (!happy) GS_TRY(gs_vec_scale(w, 1.0 / hnext));

            /* Apply the earlier rotations to column j, then the one that zeroes h(j+1,j). */
            for (gs_int i = 0; i < j; i++) {
                const double a = h[i], c = h[i + 1];
                h[i] = hs.cs[i] * a + hs.sn[i] * c;
                h[i + 1] = -hs.sn[i] * a + hs.cs[i] * c;
            }
            const double d = hypot(h[j], h[j + 1]);
            if (d == 0.0) {
                /* R(j,j) = 0: A M^{-1} v_j = 0, so A M^{-1} is singular on the Krylov space. The update
                 * below uses the j columns before it. */
                gs_ksp_stop(res, GS_DIVERGED_BREAKDOWN,
                            "the Hessenberg matrix is singular (A M^{-1} v_%d = 0) at iteration %d: the "
                            "(preconditioned) matrix is singular",
                            j, it);
                break;
            }
            hs.cs[j] = h[j] / d;
            hs.sn[j] = h[j + 1] / d;
            h[j] = d;
            h[j + 1] = 0.0;
            hs.g[j + 1] = -hs.sn[j] * hs.g[j];
            hs.g[j] = hs.cs[j] * hs.g[j];
            k = j + 1;

            /* |g_{j+1}| = min ||b - A x|| over x0 + M^{-1} K_{j+1} */
            if (gs_ksp_step(ksp, &trk, it, fabs(hs.g[j + 1]), res) || happy) break;
        }

        /* x += M^{-1} V y (GMRES) or Z y (FGMRES), R y = g; not after a NaN (y would be NaN too). */
        if (k > 0 && res->reason != GS_DIVERGED_NAN) {
            solve_triangular(&hs, k);
            if (use_z) {
                GS_TRY(gs_mvec_gemv(1.0, Z, k, hs.y, 1.0, x));
            } else if (pc) {
                GS_TRY(gs_mvec_gemv(1.0, V, k, hs.y, 0.0, u));
                GS_TRY(gs_pc_apply(pc, u, zt));
                GS_TRY(gs_vec_axpy(1.0, zt, x));
            } else {
                GS_TRY(gs_mvec_gemv(1.0, V, k, hs.y, 1.0, x));
            }
        }
        if (res->reason == GS_DIVERGED_NAN) break;

        /* The true residual r = b - Ax restarts the next cycle and decides convergence. */
        GS_TRY(gs_ksp_confirm(ksp, &trk, A, b, x, r, it, res, &beta));
        if (res->reason != GS_REASON_NONE) break;
        if (gs_ksp_nonfinite(res, "true residual ||b - Ax||", beta, it)) break;
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
