/* Reference triangular solve x = T^{-1} b by sequential forward (lower) or backward (upper)
 * substitution: x_i = (b_i - sum_{j != i} t_ij x_j) / t_ii, rows in dependency order.
 * The test oracle. On the host backend it works on the vector data directly; on the cuda backend it
 * downloads b, solves on the host and uploads x (slow by design: two transfers per solve). */
#include <string.h>

#include "core/mem.h"
#include "trisolve/trisolve_impl.h"

typedef struct ref_data {
    gs_csr T;      /* private copy of the factor */
    double *hb, *hx; /* host staging for the cuda backend (allocated in analyse: solve allocates nothing) */
    double time_analyse;
} ref_data;

void gs_trisolve_reference_host(const gs_csr *T, gs_uplo uplo, bool unit_diag, const double *b, double *x)
{
    gs_int n = T->nrows;
    const gs_int *rp = T->rowptr, *ci = T->colind;
    const double *v = T->val;
    if (uplo == GS_LOWER) {
        for (gs_int i = 0; i < n; i++) {
            double s = b[i], d = 1.0;
            for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
                if (ci[q] < i) s -= v[q] * x[ci[q]];
                else d = v[q]; /* the diagonal (last entry of a sorted lower row) */
            }
            x[i] = unit_diag ? s : s / d;
        }
    } else {
        for (gs_int i = n - 1; i >= 0; i--) {
            double s = b[i], d = 1.0;
            for (gs_int q = rp[i]; q < rp[i + 1]; q++) {
                if (ci[q] > i) s -= v[q] * x[ci[q]];
                else d = v[q]; /* the diagonal (first entry of a sorted upper row) */
            }
            x[i] = unit_diag ? s : s / d;
        }
    }
}

static gs_status ref_analyse(gs_trisolve *ts, const gs_csr *T)
{
    ref_data *d = (ref_data *)ts->data;
    gs_status st = GS_OK;
    double t0 = gs_wtime();
    gs_csr_free(&d->T);
    gs_free(&d->hb);
    gs_free(&d->hx);
    GS_TRY(gs_csr_copy(T, &d->T));
    if (ts->be->kind != GS_BACKEND_HOST) {
        GS_TRY(GS_MALLOC(d->hb, T->nrows));
        GS_TRY(GS_MALLOC(d->hx, T->nrows));
    }
    d->time_analyse = gs_wtime() - t0;
cleanup:
    return st;
}

static gs_status ref_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    ref_data *d = (ref_data *)ts->data;
    if (ts->be->kind == GS_BACKEND_HOST) {
        gs_trisolve_reference_host(&d->T, ts->uplo, ts->unit_diag, b->data, x->data);
        return GS_OK;
    }
    GS_CALL(gs_vec_download(b, d->hb));
    gs_trisolve_reference_host(&d->T, ts->uplo, ts->unit_diag, d->hb, d->hx);
    GS_CALL(gs_vec_upload(x, d->hx));
    return GS_OK;
}

static void ref_destroy(gs_trisolve *ts)
{
    ref_data *d = (ref_data *)ts->data;
    if (!d) return;
    gs_csr_free(&d->T);
    gs_free(&d->hb);
    gs_free(&d->hx);
    gs_free(&ts->data);
}

static void ref_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const ref_data *d = (const ref_data *)ts->data;
    const char *impl = ts->be->kind != GS_BACKEND_HOST ? "host sequential substitution (download b, upload x)"
                       : strcmp(ts->type, "syncfree") == 0 ? "host sequential substitution (the sync-free order)"
                                                           : "host sequential substitution";
    gs_ts_report_string(rep, prefix, "implementation", impl);
    gs_ts_report_int(rep, prefix, "nnz", d->T.nnz);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops ref_ops = {ref_analyse, ref_solve, ref_destroy, ref_view, NULL};

gs_status gs_trisolve_create_reference(gs_trisolve *ts)
{
    ref_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &ref_ops;
    return GS_OK;
}
