/* auto: the triangular solver that picks another in analyse(), from the factor (docs/notes-trisolve.md
 * section 5; bench/trisolve_set.sh on an H100 and an H200):
 *   host backend  -> levelset (the host twin; each level is an OpenMP loop where OpenMP is present).
 *   cuda backend  -> syncfree: it is faster than levelset, tiled and cuSPARSE SpSV on every PDE factor of
 *                    the benchmark set (3D/2D Poisson, 27-point Laplace, convection-diffusion); its levels
 *                    are computed in its analysis, on the GPU. Exception, from those levels: cusparse for
 *                    a factor with fewer than AUTO_CUSPARSE_LEVELS levels and at most AUTO_CUSPARSE_ROWS
 *                    rows, where syncfree's fixed cost per solve (one persistent launch over a one-wave
 *                    grid, the ticket hand-out) weighs most against SpSV's launch; on the benchmark set
 *                    the two are close to even there (bayer10, 8 + 5 levels: syncfree 32.7, SpSV 34.6 us
 *                    L+U on the H100; 31.9 and 31.6 on the H200). The extra SpSV analysis is paid only on
 *                    such small, shallow factors. No host level pass is made here: it would cost more than
 *                    the whole GPU analysis. syncfree's analysis then picks its schedule (levels,
 *                    merged or warp runs) from the row statistics and levels it computes on the GPU
 *                    (syncfree_rules.c). bench/trisolve_set.sh checks "auto never slower than cusparse"
 *                    on the benchmark set (the four PDE factors and the real matrices with more than
 *                    10,000 rows).
 * The inner solver is created through the public interface with auto's own parameters, and its
 * gs_trisolve_analyse checks the factor's rows (the registry says auto checks them itself). */
#include <string.h>

#include "core/mem.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

/* auto's exception for small shallow factors on cuda (see above) */
#define AUTO_CUSPARSE_LEVELS 10
#define AUTO_CUSPARSE_ROWS 200000

/* auto: a wrapper whose analyse() picks and (re)creates the inner solver. */
typedef struct auto_data {
    gs_trisolve *inner;
    gs_int levels;
    double rows_per_level;
} auto_data;

/* (Re)create the inner solver of auto as `type` and analyse T (host) or dT (device) with it. */
static gs_status auto_inner(gs_trisolve *ts, const char *type, const gs_csr *T, const gs_csr_dev *dT)
{
    auto_data *d = (auto_data *)ts->data;
    if (d->inner && strcmp(d->inner->type, type) != 0) gs_trisolve_destroy(&d->inner);
    if (!d->inner) GS_CALL(gs_trisolve_create(type, ts->be, ts->uplo, ts->unit_diag, &ts->prm, &d->inner));
    /* the inner analyse checks T's rows (gs_trisolve_analyse checked only its header for auto) */
    if (T) GS_CALL(gs_trisolve_analyse(d->inner, T));
    else GS_CALL(gs_trisolve_analyse_dev(d->inner, dT));
    ts->variable = d->inner->variable;
    return GS_OK;
}

/* The rule (see above): cuda -> syncfree, and cusparse where syncfree's analysis finds
 * fewer than AUTO_CUSPARSE_LEVELS levels on a factor of at most AUTO_CUSPARSE_ROWS rows; host -> levelset. */
static gs_status auto_pick(gs_trisolve *ts, const gs_csr *T, const gs_csr_dev *dT)
{
    auto_data *d = (auto_data *)ts->data;
    gs_status st = GS_OK;
    gs_int *level = NULL;
    gs_int n = T ? T->nrows : dT->nrows;
    const bool cuda = ts->be->kind == GS_BACKEND_CUDA;

    d->levels = -1;
    d->rows_per_level = 0.0;
    GS_TRY(auto_inner(ts, cuda ? "syncfree" : "levelset", T, dT));
    if (cuda) {
        d->levels = gs_ts_syncfree_levels(d->inner);
        if (d->levels >= 0 && d->levels < AUTO_CUSPARSE_LEVELS && n <= AUTO_CUSPARSE_ROWS)
            GS_TRY(auto_inner(ts, "cusparse", T, dT));
    } else { /* levels for view(), from the checked factor */
        GS_TRY(GS_MALLOC(level, n));
        d->levels = gs_ls_levels(T, ts->uplo, level);
    }
    d->rows_per_level = d->levels > 0 ? (double)n / d->levels : 0.0;
cleanup:
    gs_free(&level);
    return st;
}

static gs_status auto_analyse(gs_trisolve *ts, const gs_csr *T) { return auto_pick(ts, T, NULL); }

/* a factor in device memory: cuda only (gs_trisolve_analyse_dev checked the backend) */
static gs_status auto_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T) { return auto_pick(ts, NULL, T); }

static gs_status auto_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    auto_data *d = (auto_data *)ts->data;
    GS_CALL(gs_trisolve_solve(d->inner, b, x));
    return GS_OK;
}

static void auto_destroy(gs_trisolve *ts)
{
    auto_data *d = (auto_data *)ts->data;
    if (d) gs_trisolve_destroy(&d->inner);
    gs_free(&ts->data);
}

static void auto_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const auto_data *d = (const auto_data *)ts->data;
    if (!d->inner) return;
    gs_ts_report_string(rep, prefix, "selected", d->inner->type);
    if (d->levels >= 0) {
        gs_ts_report_int(rep, prefix, "auto_levels", d->levels);
        gs_ts_report_double(rep, prefix, "auto_rows_per_level", d->rows_per_level);
    }
    if (d->inner->analysed && d->inner->ops->view) d->inner->ops->view(d->inner, rep, prefix);
}

static const gs_trisolve_ops auto_ops = {auto_analyse, auto_solve, auto_destroy, auto_view, auto_analyse_dev};

gs_status gs_trisolve_create_auto(gs_trisolve *ts)
{
    auto_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &auto_ops;
    return GS_OK;
}

