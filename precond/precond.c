/* Preconditioner registry and public entry points: check state and sizes once, time, dispatch. */
#include "precond/precond.h"

#include <math.h>
#include <string.h>

#include "core/mem.h"
#include "precond/block.h"
#include "precond/ilu.h"
#include "precond/parilu.h"

/* The registry: precond/registry.def (a new method: its file and one line there). */
#define GS_PC_ENTRY(...) {__VA_ARGS__},
const gs_pc_entry gs_pc_registry[] = {
#include "precond/registry.def"
    {NULL, NULL, NULL},
};
#undef GS_PC_ENTRY

gs_status gs_pc_create(const char *type, gs_backend *be, const gs_config *cfg, gs_pc **pc)
{
    gs_status st = GS_OK;
    gs_pc *p = NULL;
    const gs_pc_entry *e = gs_pc_registry;
    while (e->name && strcmp(e->name, type) != 0) e++;
    if (!e->name) {
        char names[512] = "";
        for (const gs_pc_entry *q = gs_pc_registry; q->name; q++) {
            strncat(names, q->name, sizeof names - strlen(names) - 1);
            if (q[1].name) strncat(names, ", ", sizeof names - strlen(names) - 1);
        }
        return GS_ERROR(GS_ERR_UNSUPPORTED, "preconditioner \"%s\" is not available in this build (available: %s)",
                        type, names);
    }
    GS_CALL(gs_calloc(&p, 1, sizeof *p));
    p->type = e->name;
    p->stability_estimate = NAN;
    p->be = be;
    p->cfg = cfg;
    GS_TRY(e->create(p));
    *pc = p;
    return GS_OK;
cleanup:
    gs_free(&p);
    return st;
}

static gs_status check_matrix(const gs_pc *pc, const gs_csr *A)
{
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s: matrix is %d x %d, not square", pc->type, A->nrows, A->ncols);
    if (!A->val) return GS_ERROR(GS_ERR_ARG, "preconditioner %s: matrix has no values", pc->type);
    return GS_OK;
}

gs_status gs_pc_setup_symbolic(gs_pc *pc, const gs_csr *A)
{
    GS_CALL(check_matrix(pc, A));
    double t0 = gs_wtime();
    pc->n = A->nrows;
    if (pc->ops->setup_symbolic) GS_CALL(pc->ops->setup_symbolic(pc, A));
    pc->state = GS_PC_SYMBOLIC;
    pc->time_symbolic = gs_wtime() - t0;
    return GS_OK;
}

/* ||A||_inf = max_i sum_j |a_ij| of the host CSR (NaN propagates). */
static double csr_norm_inf(const gs_csr *A)
{
    double m = 0.0;
    for (gs_int i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) s += fabs(A->val[p]);
        if (isnan(s)) return s;
        if (s > m) m = s;
    }
    return m;
}

/* est = ||M^{-1} 1||_inf * ||A||_inf (a NaN entry of M^{-1} 1 makes it NaN); the work vectors are made
 * once and kept, so that later setups allocate nothing for it. */
static gs_status stability_estimate(gs_pc *pc, const gs_csr *A, double *est)
{
    const gs_int n = pc->n;
    if (!pc->est_in) GS_CALL(gs_vec_create(pc->be, n, &pc->est_in));
    if (!pc->est_out) GS_CALL(gs_vec_create(pc->be, n, &pc->est_out));
    if (!pc->est_host) GS_CALL(GS_MALLOC(pc->est_host, n > 0 ? (size_t)n : 1));
    GS_CALL(gs_vec_set(pc->est_in, 1.0));
    GS_CALL(pc->ops->apply(pc, pc->est_in, pc->est_out));
    GS_CALL(gs_vec_download(pc->est_out, pc->est_host));
    double m = 0.0;
    for (gs_int i = 0; i < n; i++) {
        double a = fabs(pc->est_host[i]);
        if (isnan(a)) {
            m = a;
            break;
        }
        if (a > m) m = a;
    }
    *est = m * csr_norm_inf(A);
    return GS_OK;
}

gs_status gs_pc_setup_numeric(gs_pc *pc, const gs_csr *A)
{
    if (pc->state < GS_PC_SYMBOLIC) GS_CALL(gs_pc_setup_symbolic(pc, A));
    if (A->nrows != pc->n)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s: numeric setup with %d rows after a symbolic setup with %d",
                        pc->type, A->nrows, pc->n);
    double t0 = gs_wtime();
    pc->state = GS_PC_SYMBOLIC; /* until this setup succeeds */
    pc->stability_estimate = NAN;
    pc->stability_estimated = false;
    GS_CALL(pc->ops->setup_numeric(pc, A));
    if (!pc->identity) {
        if ((pc->est_in && pc->est_in->n != pc->n) || (pc->est_out && pc->est_out->n != pc->n)) {
            gs_vec_destroy(&pc->est_in);
            gs_vec_destroy(&pc->est_out);
            gs_free(&pc->est_host);
        }
        GS_CALL(stability_estimate(pc, A, &pc->stability_estimate));
        pc->stability_estimated = true;
        const double limit = pc->cfg ? gs_config_double(pc->cfg, "preconditioner.stability_limit") : 0.0;
        const double est = pc->stability_estimate;
        if (limit > 0.0 && !(est <= limit))
            return GS_ERROR(GS_ERR_NUMERIC,
                            "preconditioner %s: unstable factors: ||M^-1 1||_inf * ||A||_inf = %.3g %s "
                            "preconditioner.stability_limit = %g; try ilutp, system.matching, a smaller drop "
                            "tolerance or another preconditioner",
                            pc->type, est, isfinite(est) ? "exceeds" : "is not finite; limit:", limit);
    }
    GS_CALL(gs_backend_synchronize(pc->be));
    pc->state = GS_PC_READY;
    pc->time_numeric = gs_wtime() - t0;
    return GS_OK;
}

gs_status gs_pc_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    if (pc->state != GS_PC_READY)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s applied before its numeric setup", pc->type);
    if (r->n != pc->n || z->n != pc->n || r == z)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s of size %d applied to vectors of %d and %d%s", pc->type,
                        pc->n, r->n, z->n, r == z ? " (in place is not allowed)" : "");
    return pc->ops->apply(pc, r, z);
}

gs_status gs_pc_apply_time(gs_pc *pc, const gs_vector *r, gs_vector *z, double *seconds)
{
    enum { REPS = 9 };
    gs_status st = GS_OK;
    gs_timer t = {0};
    double ts[REPS];
    for (int k = 0; k < REPS; k++) {
        GS_TRY(gs_timer_start(pc->be, &t));
        GS_TRY(gs_pc_apply(pc, r, z));
        GS_TRY(gs_timer_stop(&t, &ts[k]));
    }
    for (int a = 1; a < REPS; a++) /* insertion sort of 9 values */
        for (int k = a; k > 0 && ts[k] < ts[k - 1]; k--) {
            double tmp = ts[k];
            ts[k] = ts[k - 1];
            ts[k - 1] = tmp;
        }
    *seconds = ts[REPS / 2];
cleanup:
    gs_timer_destroy(&t);
    return st;
}

void gs_pc_view(const gs_pc *pc, gs_report *rep)
{
    gs_report_string(rep, "preconditioner.type", pc->type);
    gs_report_double(rep, "preconditioner.time_setup_symbolic", pc->time_symbolic);
    gs_report_double(rep, "preconditioner.time_setup_numeric", pc->time_numeric);
    if (pc->stability_estimated) gs_report_double(rep, "preconditioner.stability_estimate", pc->stability_estimate);
    if (pc->ops->view) pc->ops->view(pc, rep);
}

void gs_pc_set_row_names(gs_pc *pc, const gs_int *names) { pc->row_names = names; }

gs_status gs_pc_set_operator(gs_pc *pc, const gs_matrix *M)
{
    if (!pc || !M) return GS_ERROR(GS_ERR_ARG, "gs_pc_set_operator: preconditioner or matrix is NULL");
    if (M->be != pc->be)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s: the operator lives on another backend", pc->type);
    if (pc->state >= GS_PC_SYMBOLIC && M->nrows != pc->n)
        return GS_ERROR(GS_ERR_ARG, "preconditioner %s: operator with %d rows after a setup with %d", pc->type,
                        (int)M->nrows, (int)pc->n);
    pc->op = M;
    return GS_OK;
}

void gs_pc_destroy(gs_pc **pc)
{
    if (!pc || !*pc) return;
    if ((*pc)->ops && (*pc)->ops->destroy) (*pc)->ops->destroy(*pc);
    gs_vec_destroy(&(*pc)->est_in);
    gs_vec_destroy(&(*pc)->est_out);
    gs_free(&(*pc)->est_host);
    gs_free(pc);
}

bool gs_pc_single_precision(const gs_config *cfg)
{
    const char *precision = cfg ? gs_config_string(cfg, "preconditioner.precision") : NULL;
    return precision && strcmp(precision, "single") == 0;
}
