/* The scalar steps of the fused CG recurrence (alpha, the convergence and breakdown tests, beta), written
 * once for both backends: compiled as host code in backend_host.c and as device code (run by one
 * thread, the last block of a fused reduction kernel) in backend_cuda.cu. Private to core/. */
#ifndef GS_KSTATE_LOGIC_H
#define GS_KSTATE_LOGIC_H

#include <math.h>

#include "core/backend.h"

#ifdef __CUDACC__
#define GS_HD __host__ __device__
#else
#define GS_HD
#endif

/* Scalar slots. r'z alternates between two slots by iteration parity: iteration `it` divides by
 * RZ(it) and produces RZ(it + 1), so no kernel overwrites a value another block may still read. */
enum { KS_PQ = 0, KS_ALPHA = 1, KS_BOUND = 2, KS_BEST = 3, KS_RZ0 = 4, KS_DTOL = 6, KS_NSLOTS = 7 };
#define KS_RZ(it) (KS_RZ0 + ((it) & 1))

typedef struct gs_kscalars {
    double s[KS_NSLOTS];
    int stop;      /* gs_kcode of the first stop; fused kernels do nothing while it is set */
    int best_it;   /* iteration of the best ||r|| (KS_BEST) */
    int window;    /* stagnation window, 0: off */
    int pad;
} gs_kscalars;

/* After pq = p'Ap of iteration it: alpha = rz/pq, or a stop (p'Ap not finite, not positive, alpha not
 * finite). Starts the iteration's record. */
static GS_HD inline void ksl_after_pq(gs_kscalars *k, int it, double pq, gs_krec *rec)
{
    int code = GS_KC_RUNNING;
    double value = pq;
    k->s[KS_PQ] = pq;
    if (!isfinite(pq)) {
        code = GS_KC_PQ_NONFINITE;
    } else if (pq <= 0.0) {
        code = GS_KC_PQ_NONPOS;
    } else {
        double alpha = k->s[KS_RZ(it)] / pq;
        k->s[KS_ALPHA] = alpha;
        value = alpha;
        if (!isfinite(alpha)) code = GS_KC_ALPHA_NONFINITE;
    }
    rec->it = it;
    rec->code = code;
    rec->rnorm = NAN;
    rec->value = value;
    if (code != GS_KC_RUNNING) k->stop = code;
}

/* After rr = r'r of iteration it (r updated): ||r|| into the record; a stop when it is not finite, meets
 * the bound, exceeds the divergence bound, or has stagnated -- the tests of gs_ksp_step, in its order, on the same double, so host
 * and device stop at the same iteration. Without a preconditioner z = r: r'z of the next iteration is rr. */
static GS_HD inline void ksl_after_rr(gs_kscalars *k, int it, double rr, int rz_is_rr, gs_krec *rec)
{
    double rnorm = sqrt(rr);
    rec->rnorm = rnorm;
    if (rz_is_rr) k->s[KS_RZ(it + 1)] = rr;
    if (!isfinite(rnorm)) {
        rec->code = k->stop = GS_KC_RNORM_NONFINITE;
        rec->value = rr;
    } else if (rnorm <= k->s[KS_BOUND]) {
        rec->code = k->stop = GS_KC_CONVERGED;
    } else if (rnorm > k->s[KS_DTOL]) {
        rec->code = k->stop = GS_KC_DIVERGED;
    } else if (rnorm < k->s[KS_BEST]) {
        k->s[KS_BEST] = rnorm;
        k->best_it = it;
    } else if (k->window > 0 && it - k->best_it >= k->window) {
        rec->code = k->stop = GS_KC_STAGNATED;
    }
}

/* After rz = r'z (z = M^{-1} r) of iteration it: a stop when not finite or not positive (the
 * preconditioner is not SPD). */
static GS_HD inline void ksl_after_rz(gs_kscalars *k, int it, double rz, gs_krec *rec)
{
    int code = !isfinite(rz) ? GS_KC_RZ_NONFINITE : rz <= 0.0 ? GS_KC_RZ_NONPOS : GS_KC_RUNNING;
    k->s[KS_RZ(it + 1)] = rz;
    if (code != GS_KC_RUNNING) { /* the record is only written, never read: it may be host-mapped memory */
        rec->code = k->stop = code;
        rec->value = rz;
    }
}

/* beta of iteration it: r'z (new) / r'z (old). */
static GS_HD inline double ksl_beta(const gs_kscalars *k, int it)
{
    return k->s[KS_RZ(it + 1)] / k->s[KS_RZ(it)];
}

/* ks_begin: a (re)start before iteration it. */
static GS_HD inline void ksl_begin(gs_kscalars *k, int it, const gs_ks_start *start)
{
    k->s[KS_BOUND] = start->bound;
    k->s[KS_DTOL] = start->dtol_bound;
    k->s[KS_BEST] = start->best;
    k->best_it = start->best_it;
    k->window = start->window;
    k->s[KS_RZ(it)] = start->rz;
    k->stop = GS_KC_RUNNING;
}

#endif
