/* Matching, scaling and symmetric reordering of a system before setup, and their undoing afterwards
 * (the maps and formulas are stated in api/preprocess.h). */
#include "api/preprocess.h"

#include <string.h>

#include "core/backend.h"
#include "core/mem.h"
#include "precond/ordering.h"
#include "precond/scaling.h"

/* Ruiz equilibration: at most this many sweeps, stopping when every row and column inf-norm is
 * within the tolerance of 1 (precond/scaling.h). */
#define RUIZ_MAX_ITER 20
#define RUIZ_TOL 0.1

const char *gs_matching_name(gs_matching_kind k) { return k == GS_MATCHING_MWM ? "mwm" : "none"; }

const char *gs_scaling_name(gs_scaling_kind k)
{
    switch (k) {
    case GS_SCALING_RUIZ: return "ruiz";
    case GS_SCALING_ROWCOL: return "rowcol";
    case GS_SCALING_MATCHING: return "matching";
    case GS_SCALING_NONE: break;
    }
    return "none";
}

const char *gs_reorder_name(gs_reorder_kind k)
{
    switch (k) {
    case GS_REORDER_RCM: return "rcm";
    case GS_REORDER_ND: return "nd";
    case GS_REORDER_NONE: break;
    }
    return "none";
}

bool gs_preprocess_is_identity(const gs_preprocess *p)
{
    return p->matching == GS_MATCHING_NONE && p->scaling == GS_SCALING_NONE && p->reorder == GS_REORDER_NONE;
}

bool gs_preprocess_equal(const gs_preprocess *a, const gs_preprocess *b)
{
    return a->matching == b->matching && a->scaling == b->scaling && a->reorder == b->reorder;
}

void gs_transform_free(gs_transform *T)
{
    gs_free(&T->rowmap);
    gs_free(&T->colmap);
    gs_free(&T->dr);
    gs_free(&T->dc);
    memset(T, 0, sizeof *T);
}

/* The symmetric ordering q (new -> old) of the matrix B. */
static gs_status order(const gs_csr *B, gs_reorder_kind k, gs_int *q)
{
    if (k == GS_REORDER_RCM) GS_CALL(gs_rcm(B, q));
    else if (k == GS_REORDER_ND) GS_CALL(gs_nd(B, q));
    return GS_OK;
}

/* Row permutation and (optionally) its scaling from the matching; the scaling of the other kinds. */
static gs_status match_and_scale(const gs_csr *A, gs_transform *T)
{
    const gs_int n = A->nrows;
    const gs_preprocess *w = &T->what;
    if (w->scaling != GS_SCALING_NONE) {
        GS_CALL(GS_MALLOC(T->dr, n));
        GS_CALL(GS_MALLOC(T->dc, n));
    }
    if (w->matching == GS_MATCHING_MWM) {
        double t = gs_wtime();
        gs_int rank = n;
        GS_CALL(GS_MALLOC(T->rowmap, n));
        bool own = w->scaling == GS_SCALING_MATCHING;
        GS_CALL(gs_mwm(A, T->rowmap, own ? T->dr : NULL, own ? T->dc : NULL, &rank));
        for (gs_int i = 0; i < n; i++) T->matched_off_diagonal += T->rowmap[i] != i;
        T->time_matching = gs_wtime() - t;
    }
    double t = gs_wtime();
    if (w->scaling == GS_SCALING_RUIZ) {
        int iters = 0;
        GS_CALL(gs_scale_ruiz(A, RUIZ_MAX_ITER, RUIZ_TOL, T->dr, T->dc, &iters));
    } else if (w->scaling == GS_SCALING_ROWCOL) {
        GS_CALL(gs_scale_rowcol(A, T->dr, T->dc));
    } else if (w->scaling == GS_SCALING_MATCHING && w->matching != GS_MATCHING_MWM) {
        return GS_ERROR(GS_ERR_CONFIG, "system.scaling = \"matching\" needs system.matching = \"mwm\"");
    }
    T->time_scaling = gs_wtime() - t;
    return GS_OK;
}

gs_status gs_transform_build(const gs_csr *A, const gs_preprocess *what, gs_transform *T, gs_csr *C)
{
    gs_status st = GS_OK;
    gs_csr B = {0};
    gs_int *q = NULL;
    memset(T, 0, sizeof *T);
    memset(C, 0, sizeof *C);
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "preprocessing: the matrix is %d x %d, expected a square matrix", A->nrows,
                        A->ncols);
    const gs_int n = A->nrows;
    T->n = n;
    T->what = *what;
    GS_TRY(match_and_scale(A, T));
    if (what->reorder != GS_REORDER_NONE) {
        /* the ordering of the matched matrix P_m A (the pattern is what counts) */
        double t = gs_wtime();
        GS_TRY(GS_MALLOC(q, n));
        if (T->rowmap) {
            GS_TRY(gs_csr_transform(A, T->rowmap, NULL, NULL, NULL, &B));
            GS_TRY(order(&B, what->reorder, q));
            gs_csr_free(&B);
            /* rows: first the matching's permutation, then the ordering (r_i = pm[q_i]) */
            gs_int *r = NULL;
            GS_TRY(GS_MALLOC(r, n));
            for (gs_int i = 0; i < n; i++) r[i] = T->rowmap[q[i]];
            gs_free(&T->rowmap);
            T->rowmap = r;
        } else {
            GS_TRY(order(A, what->reorder, q));
            GS_TRY(GS_MALLOC(T->rowmap, n));
            memcpy(T->rowmap, q, (size_t)n * sizeof *q);
        }
        T->colmap = q;
        q = NULL;
        T->time_reorder = gs_wtime() - t;
    }
    double t = gs_wtime();
    GS_TRY(gs_csr_transform(A, T->rowmap, T->colmap, T->dr, T->dc, C));
    T->time_apply = gs_wtime() - t;
    return GS_OK;
cleanup:
    gs_csr_free(&B);
    gs_free(&q);
    gs_csr_free(C);
    gs_transform_free(T);
    return st;
}

void gs_transform_rhs(const gs_transform *T, const double *b, double *bt)
{
    for (gs_int i = 0; i < T->n; i++) {
        gs_int r = T->rowmap ? T->rowmap[i] : i;
        bt[i] = T->dr ? T->dr[r] * b[r] : b[r];
    }
}

void gs_transform_guess(const gs_transform *T, const double *x0, double *y0)
{
    for (gs_int j = 0; j < T->n; j++) {
        gs_int c = T->colmap ? T->colmap[j] : j;
        y0[j] = T->dc ? x0[c] / T->dc[c] : x0[c];
    }
}

void gs_transform_solution(const gs_transform *T, const double *y, double *x)
{
    for (gs_int j = 0; j < T->n; j++) {
        gs_int c = T->colmap ? T->colmap[j] : j;
        x[c] = T->dc ? T->dc[c] * y[j] : y[j];
    }
}

gs_status gs_transform_view(const gs_transform *T, gs_report *rep)
{
    GS_CALL(gs_report_string(rep, "system.matching", gs_matching_name(T->what.matching)));
    GS_CALL(gs_report_string(rep, "system.scaling", gs_scaling_name(T->what.scaling)));
    GS_CALL(gs_report_string(rep, "system.reorder", gs_reorder_name(T->what.reorder)));
    if (T->what.matching != GS_MATCHING_NONE) {
        GS_CALL(gs_report_int(rep, "system.matched_rows_moved", T->matched_off_diagonal));
        GS_CALL(gs_report_double(rep, "time.matching", T->time_matching));
    }
    if (T->what.scaling != GS_SCALING_NONE && T->what.scaling != GS_SCALING_MATCHING)
        GS_CALL(gs_report_double(rep, "time.scaling", T->time_scaling));
    if (T->what.reorder != GS_REORDER_NONE) GS_CALL(gs_report_double(rep, "time.reorder", T->time_reorder));
    return GS_OK;
}
