/* Triangular solvers x = T^{-1} b: the registry, the factor check, creation by name or config, and the
 * public analyse/solve/view/destroy that check sizes and state once and dispatch to the implementation.
 *
 * Registered types (names as in the config schema "trisolve.<side>.type"):
 *   reference  sequential substitution; on the cuda backend it downloads b, solves on the host and
 *              uploads x (the oracle, slow by design).
 *   levelset   rows renumbered level by level, HEC storage, chains of thin levels (levelset_ref.c on
 *              the host backend, levelset_cuda.cu on cuda: plan built on the GPU, one persistent
 *              kernel with grid barriers between wide levels).
 *   cusparse   cuSPARSE SpSV (cuda backend only).
 *   syncfree   one kernel without barriers, each row waiting on the values it reads (cuda,
 *              syncfree_cuda.cu), in one of the schedules chosen in its analysis by the rule below
 *              ("the sync-free schedule rule"): rows in level order, a thread per row; merged levels;
 *              or warp runs of up to GS_SF_WRUN_ROWS linked rows in run-level order, a warp per run
 *              (syncfree_ref.c host twin); on the host backend the sequential row order is already a valid sync-free schedule,
 *              so it runs the reference substitution there.
 *   auto       the rule below, decided in analyse() from the factor's levels.
 *   jacobi     approximate: trisolve.<side>.sweeps Jacobi sweeps x <- D^{-1}(b - (T - D)x) from
 *              x = D^{-1} b, one fused kernel per sweep (jacobi_ref.c host twin, jacobi_cuda.cu).
 *   async-jacobi  approximate: block-asynchronous Jacobi, rows updated in place in blocks ordered along
 *              the dependency or per block_order; variable (FGMRES) unless deterministic = true,
 *              which runs `jacobi` (jacobi_ref.c: the sequential model on the host; jacobi_cuda.cu).
 *   tiled      TileSpTRSV: rows renumbered by level, 16x16 tiles (COO/CSR/dense, 8-bit local indices),
 *              a warp per tile row, level-set or sync-free over tile rows (tiled_ref.c host twin,
 *              tiled_cuda.cu; the plan and the variant rule in tiled_kernels.h).
 * A type the schema lists but this build does not implement fails with GS_ERR_UNSUPPORTED
 * "trisolve type X is not available yet".
 *
 * auto rule (bench/trisolve_set.sh on an H100 and an H200; docs/notes-trisolve.md section 5):
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
 *                    merged or warp runs) from the row statistics and levels it computes on the GPU:
 *                    gs_ts_syncfree_rule and gs_ts_syncfree_merge_rule below.
 *                    bench/trisolve_set.sh checks "auto never slower than cusparse" on the benchmark
 *                    set (the four PDE factors and the real matrices with more than 10,000 rows).
 *
 * Factor check: gs_trisolve_analyse checks the header (O(1)) and, for solvers that do not check the
 * rows themselves, the rows on the host (gs_ts_check_rows: OpenMP over row ranges). syncfree and
 * levelset on cuda check the rows on the device inside their analysis (analysis_cuda.cu), with the
 * same messages; auto's inner solver checks. */
#include "trisolve/trisolve.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/jacobi_kernels.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/tiled_kernels.h"
#include "trisolve/trisolve_impl.h"

/* ---------------------------------------------------------------- report helpers (shared) */

void gs_ts_report_int(gs_report *rep, const char *prefix, const char *name, long long v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) (void)gs_report_int(rep, key, v);
}

void gs_ts_report_double(gs_report *rep, const char *prefix, const char *name, double v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK)
        (void)gs_report_double(rep, key, v);
}

void gs_ts_report_string(gs_report *rep, const char *prefix, const char *name, const char *v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK)
        (void)gs_report_string(rep, key, v);
}

static const char *side_name(gs_uplo uplo) { return uplo == GS_LOWER ? "lower" : "upper"; }

/* auto's exception for small shallow factors on cuda (see the rule above) */
#define AUTO_CUSPARSE_LEVELS 10
#define AUTO_CUSPARSE_ROWS 200000

/* ---------------------------------------------------------------- registered create functions */

static gs_status create_reference(gs_trisolve *ts) { return gs_trisolve_create_reference(ts); }

static gs_status create_levelset(gs_trisolve *ts)
{
    if (ts->be->kind == GS_BACKEND_CUDA) return gs_trisolve_create_levelset_cuda(ts);
    return gs_trisolve_create_levelset_host(ts);
}

static gs_status create_cusparse(gs_trisolve *ts)
{
    if (ts->be->kind != GS_BACKEND_CUDA)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "trisolve type cusparse needs device.backend = cuda (the "
                                            "backend in use is '%s')", ts->be->name ? ts->be->name : "host");
    return gs_trisolve_create_cusparse_cuda(ts);
}

static gs_status create_syncfree(gs_trisolve *ts)
{
    if (ts->be->kind == GS_BACKEND_CUDA) return gs_trisolve_create_syncfree_cuda(ts);
    return gs_trisolve_create_reference(ts); /* the sequential order is a sync-free schedule */
}

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

/* The rule (see the top of the file): cuda -> syncfree, and cusparse where syncfree's analysis finds
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

static gs_status create_auto(gs_trisolve *ts)
{
    auto_data *d = NULL;
    GS_CALL(GS_CALLOC(d, 1));
    ts->data = d;
    ts->ops = &auto_ops;
    return GS_OK;
}

const gs_trisolve_entry gs_trisolve_registry[] = {
    {"auto", create_auto, "levelset on the host; syncfree on cuda (cusparse for small factors of few levels)"},
    {"reference", create_reference, "sequential substitution (the oracle; on cuda via the host)"},
    {"cusparse", create_cusparse, "cuSPARSE SpSV (cuda backend only)"},
    {"levelset", create_levelset, "level scheduling, HEC storage, chains of thin levels in one block, grid barriers"},
    {"syncfree", create_syncfree, "one kernel, no barriers: rows in level order wait on the values they read"},
    {"jacobi", gs_trisolve_create_jacobi, "approximate: `sweeps` fused Jacobi sweeps (deterministic)"},
    {"async-jacobi", gs_trisolve_create_async_jacobi,
     "approximate: block-asynchronous Jacobi in place (variable: FGMRES) unless deterministic"},
    {"tiled", gs_trisolve_create_tiled, "16x16 tiles (TileSpTRSV), level-set or sync-free over tile rows"},
    {NULL, NULL, NULL},
};

/* ---------------------------------------------------------------- factor check
 *
 * Two parts: the O(1) header (shape, arrays, rowptr[0], rowptr[n]) and the rows. A row's first fault is
 * found by row_fault (no message, no allocation), so the rows can be scanned in parallel: each OpenMP
 * thread takes a contiguous range, the smallest faulty row wins (a min reduction: deterministic, the
 * same row as a sequential scan), and only that row is described by fault_error. The rows before the
 * first faulty row are valid, so its rowptr[i] >= 0 and every message is the one a sequential scan
 * would give. The GPU analyses (analysis_cuda.cu) evaluate the same predicate in their level kernel and
 * call gs_ts_check_rows on the rows up to the first one they flag, so their messages are these. */

/* What went wrong in a row, in the order a sequential scan meets it. */
typedef enum row_fault_kind {
    RF_NONE = 0,
    RF_ROWPTR,    /* rowptr[i] .. rowptr[i+1] not inside 0 .. nnz, or decreasing */
    RF_RANGE,     /* column outside 0 .. n-1 */
    RF_UNSORTED,  /* column not greater than the previous one */
    RF_SIDE,      /* column on the wrong side of the diagonal */
    RF_UNIT_DIAG, /* unit factor storing a diagonal entry */
    RF_NO_DIAG,   /* non-unit factor without a diagonal entry */
    RF_ZERO_DIAG,
    RF_NONFINITE_DIAG
} row_fault_kind;

typedef struct row_fault {
    row_fault_kind kind;
    gs_int a, e, j, prev; /* the row's entry range; the offending column and the one before it */
    double diag;
} row_fault;

/* The first fault of row i (RF_NONE when the row is valid): range, order and side of each entry in
 * turn, then the diagonal. */
static inline row_fault_kind row_fault_of(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int i, row_fault *f)
{
    gs_int n = T->nrows, a = T->rowptr[i], e = T->rowptr[i + 1];
    const gs_int *ci = T->colind;
    f->a = a;
    f->e = e;
    if (a < 0 || e < a || e > T->nnz) return f->kind = RF_ROWPTR;
    bool has_diag = false;
    double diag = 0.0;
    for (gs_int q = a; q < e; q++) {
        gs_int j = ci[q];
        f->j = j;
        if (j < 0 || j >= n) return f->kind = RF_RANGE;
        if (q > a && j <= ci[q - 1]) {
            f->prev = ci[q - 1];
            return f->kind = RF_UNSORTED;
        }
        if (uplo == GS_LOWER ? j > i : j < i) return f->kind = RF_SIDE;
        if (j == i) {
            has_diag = true;
            diag = T->val[q];
        }
    }
    f->diag = diag;
    if (unit_diag) return f->kind = has_diag ? RF_UNIT_DIAG : RF_NONE;
    if (!has_diag) return f->kind = RF_NO_DIAG;
    if (diag == 0.0) return f->kind = RF_ZERO_DIAG;
    if (!isfinite(diag)) return f->kind = RF_NONFINITE_DIAG;
    return f->kind = RF_NONE;
}

/* The message of fault f at row i. */
static gs_status fault_error(const gs_csr *T, gs_uplo uplo, gs_int i, const row_fault *f)
{
    const char *side = side_name(uplo);
    switch (f->kind) {
    case RF_ROWPTR:
        return GS_ERROR(GS_ERR_ARG, "the %s factor's row pointer is invalid at row %d (1-based): %d .. %d "
                                    "with nnz = %d", side, (int)i + 1, (int)f->a, (int)f->e, (int)T->nnz);
    case RF_RANGE:
        return GS_ERROR(GS_ERR_ARG, "row %d (1-based) of the %s factor has column %d outside 1..%d", (int)i + 1,
                        side, (int)f->j + 1, (int)T->nrows);
    case RF_UNSORTED:
        return GS_ERROR(GS_ERR_ARG, "row %d (1-based) of the %s factor is not sorted: column %d comes "
                                    "after column %d; expected strictly increasing columns (sorted CSR)",
                        (int)i + 1, side, (int)f->j + 1, (int)f->prev + 1);
    case RF_SIDE:
        return GS_ERROR(GS_ERR_ARG, "the %s factor has an entry at row %d, column %d (1-based) %s the "
                                    "diagonal; a %s factor holds only columns j %s i", side, (int)i + 1,
                        (int)f->j + 1, uplo == GS_LOWER ? "above" : "below", side, uplo == GS_LOWER ? "<=" : ">=");
    case RF_UNIT_DIAG:
        return GS_ERROR(GS_ERR_ARG, "the unit-diagonal %s factor stores a diagonal entry at row %d (1-based); "
                                    "with unit_diag the diagonal is implied and must not be stored",
                        side, (int)i + 1);
    case RF_NO_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "the %s factor has no diagonal entry at row %d (1-based); every row "
                                        "of a non-unit factor must store its diagonal", side, (int)i + 1);
    case RF_ZERO_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "zero diagonal at row %d (1-based) of the %s factor", (int)i + 1, side);
    case RF_NONFINITE_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "the diagonal at row %d (1-based) of the %s factor is %g (not finite)",
                        (int)i + 1, side, f->diag);
    case RF_NONE:
        break;
    }
    return GS_ERROR(GS_ERR_INTERNAL, "factor check: row %d (1-based) of the %s factor has no fault to describe",
                    (int)i + 1, side);
}

/* Rows + entries from which the row scan is split among OpenMP threads (below: thread start-up costs
 * more than the scan). */
#define CHECK_PARALLEL_WORK 65536

gs_status gs_ts_check_header(const gs_csr *T, gs_uplo uplo, bool unit_diag)
{
    const char *side = (uplo == GS_LOWER) ? "lower" : "upper";
    (void)unit_diag;
    if (!T) return GS_ERROR(GS_ERR_ARG, "the %s triangular factor is NULL", side);
    if (uplo != GS_LOWER && uplo != GS_UPPER)
        return GS_ERROR(GS_ERR_ARG, "uplo is %d; expected GS_LOWER or GS_UPPER", (int)uplo);
    gs_int n = T->nrows;
    if (n < 0 || T->ncols != n)
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor is %d x %d; expected a square matrix", side,
                        (int)T->nrows, (int)T->ncols);
    if (T->nnz < 0 || !T->rowptr || (T->nnz > 0 && !T->colind))
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor (n = %d, nnz = %d) has missing arrays", side,
                        (int)n, (int)T->nnz);
    if (T->nnz > 0 && !T->val)
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor has no values (pattern only)", side);
    if (T->rowptr[0] != 0)
        return GS_ERROR(GS_ERR_ARG, "the %s factor's rowptr[0] is %d; expected 0", side, (int)T->rowptr[0]);
    if (T->rowptr[n] != T->nnz)
        return GS_ERROR(GS_ERR_ARG, "the %s factor's rowptr[n] is %d; expected nnz = %d", side,
                        (int)T->rowptr[n], (int)T->nnz);
    return GS_OK;
}

gs_status gs_ts_check_rows(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int end)
{
    gs_int first = end;
    long long work = (long long)end + (long long)T->nnz;
    (void)work; /* unused without OpenMP */
#pragma omp parallel for schedule(static) reduction(min : first) if (work >= CHECK_PARALLEL_WORK)
    for (gs_int i = 0; i < end; i++) {
        row_fault g;
        /* a thread's rows come in increasing order: past its first faulty row it only skips */
        if (i < first && row_fault_of(T, uplo, unit_diag, i, &g) != RF_NONE) first = i;
    }
    if (first >= end) return GS_OK;
    row_fault f;
    (void)row_fault_of(T, uplo, unit_diag, first, &f);
    return fault_error(T, uplo, first, &f);
}

gs_status gs_trisolve_check_factor(const gs_csr *T, gs_uplo uplo, bool unit_diag)
{
    GS_CALL(gs_ts_check_header(T, uplo, unit_diag));
    GS_CALL(gs_ts_check_rows(T, uplo, unit_diag, T->nrows));
    return GS_OK;
}

/* ---------------------------------------------------------------- creation */

static const gs_trisolve_entry *find_entry(const char *type)
{
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++)
        if (strcmp(e->name, type) == 0) return e;
    return NULL;
}

/* true when the config schema lists `type` among the choices of trisolve.lower.type */
static bool schema_knows_type(const char *type)
{
    size_t len = strlen(type);
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++) {
        if (strcmp(k->path, "trisolve.lower.type") != 0 || !k->choices) continue;
        const char *s = k->choices;
        while (*s) {
            const char *bar = strchr(s, '|');
            size_t l = bar ? (size_t)(bar - s) : strlen(s);
            if (l == len && strncmp(s, type, len) == 0) return true;
            s += l;
            if (*s == '|') s++;
        }
    }
    return false;
}

static gs_status unknown_type(const char *type)
{
    if (schema_knows_type(type))
        return GS_ERROR(GS_ERR_UNSUPPORTED, "trisolve type %s is not available yet", type);
    char names[256] = "";
    size_t used = 0;
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s", used ? "|" : "", e->name);
        if (w < 0 || (size_t)w >= sizeof names - used) break;
        used += (size_t)w;
    }
    return GS_ERROR(GS_ERR_ARG, "unknown trisolve type '%s'; expected one of %s", type, names);
}

/* The caller's parameters checked, block_order normalised to a static string (the caller's string may not
 * outlive the solver); NULL: the defaults. */
static gs_status normalise_params(const gs_trisolve_params *in, gs_trisolve_params *out)
{
    static const char *const orders[] = {"dependency", "forward", "backward"};
    *out = gs_trisolve_params_default();
    out->block_order = orders[0];
    if (!in) return GS_OK;
    GS_CALL(gs_trisolve_params_check(in));
    const char *order = in->block_order;
    *out = *in;
    out->block_order = orders[0];
    if (order) {
        size_t k;
        for (k = 0; k < sizeof orders / sizeof orders[0]; k++)
            if (strcmp(order, orders[k]) == 0) break;
        if (k == sizeof orders / sizeof orders[0])
            return GS_ERROR(GS_ERR_ARG, "trisolve block_order '%s'; expected dependency|forward|backward", order);
        out->block_order = orders[k];
    }
    return GS_OK;
}

/* The solvers that store float factors (gs_trisolve_params.single): on the cuda backend only. */
#define SINGLE_TYPES "syncfree, levelset, cusparse, jacobi, async-jacobi and auto"
static bool supports_single(const char *type, const gs_backend *be)
{
    static const char *const types[] = {"syncfree", "levelset", "cusparse", "jacobi", "async-jacobi", "auto"};
    if (be->kind != GS_BACKEND_CUDA) return false;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++)
        if (strcmp(type, types[k]) == 0) return true;
    return false;
}

gs_status gs_trisolve_create(const char *type, gs_backend *be, gs_uplo uplo, bool unit_diag,
                             const gs_trisolve_params *prm, gs_trisolve **ts)
{
    gs_status st = GS_OK;
    gs_trisolve *t = NULL;
    if (!ts) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_create: output pointer is NULL");
    *ts = NULL;
    if (!type) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_create: type is NULL");
    if (!be) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_create: backend is NULL");
    if (uplo != GS_LOWER && uplo != GS_UPPER)
        return GS_ERROR(GS_ERR_ARG, "gs_trisolve_create: uplo is %d; expected GS_LOWER or GS_UPPER", (int)uplo);
    const gs_trisolve_entry *e = find_entry(type);
    if (!e) return unknown_type(type);

    GS_TRY(GS_CALLOC(t, 1));
    t->type = e->name;
    t->be = be;
    t->uplo = uplo;
    t->unit_diag = unit_diag;
    GS_TRY(normalise_params(prm, &t->prm));
    if (t->prm.single && !supports_single(e->name, be))
        GS_FAIL(GS_ERR_UNSUPPORTED,
                "preconditioner.precision = \"single\": the %s triangular solver (trisolve.%s.type = %s) on the %s "
                "backend stores its factor in double only; single-precision factors are available with "
                "device.backend = \"cuda\" and trisolve types %s; or set preconditioner.precision = \"double\"",
                side_name(uplo), side_name(uplo), e->name, be->name ? be->name : "host", SINGLE_TYPES);
    GS_TRY(e->create(t));
    if (!t->ops) GS_FAIL(GS_ERR_INTERNAL, "trisolve type %s created no operations table", e->name);
    *ts = t;
    t = NULL;
cleanup:
    if (t) {
        if (t->ops && t->ops->destroy) t->ops->destroy(t);
        gs_free(&t);
    }
    return st;
}

gs_status gs_trisolve_create_from_config(const gs_config *cfg, gs_backend *be, gs_uplo uplo, bool unit_diag,
                                         gs_trisolve **ts)
{
    if (!cfg) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_create_from_config: config is NULL");
    const char *side = side_name(uplo);
    char key[64];
    gs_trisolve_params prm = gs_trisolve_params_default();
    snprintf(key, sizeof key, "trisolve.%s.type", side);
    const char *type = gs_config_string(cfg, key);
    snprintf(key, sizeof key, "trisolve.%s.sweeps", side);
    prm.sweeps = (int)gs_config_int(cfg, key);
    snprintf(key, sizeof key, "trisolve.%s.block_order", side);
    prm.block_order = gs_config_string(cfg, key);
    snprintf(key, sizeof key, "trisolve.%s.deterministic", side);
    prm.deterministic = gs_config_bool(cfg, key);
    const char *precision = gs_config_string(cfg, "preconditioner.precision");
    prm.single = precision && strcmp(precision, "single") == 0;
    GS_CALL(gs_trisolve_create(type, be, uplo, unit_diag, &prm, ts));
    return GS_OK;
}

gs_status gs_ts_csr_download(gs_backend *be, const gs_csr_dev *T, gs_csr *H)
{
    gs_status st = GS_OK;
    GS_TRY(gs_csr_alloc(H, T->nrows, T->ncols, T->nnz, true));
    GS_TRY(gs_backend_download(be, H->rowptr, T->rowptr, ((size_t)T->nrows + 1) * sizeof(gs_int)));
    if (T->nnz > 0) {
        GS_TRY(gs_backend_download(be, H->colind, T->colind, (size_t)T->nnz * sizeof(gs_int)));
        GS_TRY(gs_backend_download(be, H->val, T->val, (size_t)T->nnz * sizeof(double)));
    }
cleanup:
    if (st != GS_OK) gs_csr_free(H);
    return st;
}

/* ---------------------------------------------------------------- checked dispatch */

bool gs_ts_rows_checked_in_analyse(const gs_trisolve *ts)
{
    if (strcmp(ts->type, "auto") == 0) return true; /* its inner solver's gs_trisolve_analyse checks */
    return ts->be->kind == GS_BACKEND_CUDA && (strcmp(ts->type, "syncfree") == 0 || strcmp(ts->type, "levelset") == 0);
}

gs_status gs_trisolve_analyse(gs_trisolve *ts, const gs_csr *T)
{
    if (!ts) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_analyse: trisolve is NULL");
    ts->analysed = false;
    GS_CALL(gs_ts_check_header(T, ts->uplo, ts->unit_diag));
    if (!gs_ts_rows_checked_in_analyse(ts)) GS_CALL(gs_ts_check_rows(T, ts->uplo, ts->unit_diag, T->nrows));
    ts->n = T->nrows;
    GS_CALL(ts->ops->analyse(ts, T));
    ts->analysed = true;
    return GS_OK;
}

/* The header checks of gs_ts_check_header on a device CSR (rowptr[0] and rowptr[n] read back). */
static gs_status check_header_dev(const gs_trisolve *ts, const gs_csr_dev *T)
{
    const char *side = side_name(ts->uplo);
    if (!T) return GS_ERROR(GS_ERR_ARG, "%s triangular factor: the matrix is NULL", side);
    if (T->nrows != T->ncols || T->nrows < 0)
        return GS_ERROR(GS_ERR_ARG, "%s triangular factor is %d x %d; expected a square matrix", side, (int)T->nrows,
                        (int)T->ncols);
    if (T->nnz < 0 || !T->rowptr || (T->nnz > 0 && (!T->colind || !T->val)))
        return GS_ERROR(GS_ERR_ARG, "%s triangular factor (device): arrays missing for %d entries", side,
                        (int)T->nnz);
    gs_int ends[2] = {0, 0};
    GS_CALL(gs_backend_download(ts->be, &ends[0], T->rowptr, sizeof(gs_int)));
    GS_CALL(gs_backend_download(ts->be, &ends[1], T->rowptr + T->nrows, sizeof(gs_int)));
    if (ends[0] != 0 || ends[1] != T->nnz)
        return GS_ERROR(GS_ERR_ARG, "%s triangular factor: row pointers run from %d to %d; expected 0 to nnz = %d",
                        side, (int)ends[0], (int)ends[1], (int)T->nnz);
    return GS_OK;
}

gs_status gs_trisolve_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T)
{
    gs_status st = GS_OK;
    gs_csr H = {0};
    if (!ts) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_analyse_dev: trisolve is NULL");
    if (ts->be->kind != GS_BACKEND_CUDA)
        return GS_ERROR(GS_ERR_ARG, "gs_trisolve_analyse_dev: the factor is in device memory but the %s solver runs "
                                    "on the %s backend", side_name(ts->uplo), ts->be->name ? ts->be->name : "host");
    ts->analysed = false;
    GS_CALL(check_header_dev(ts, T));
    if (ts->ops->analyse_dev) {
        ts->n = T->nrows;
        GS_CALL(ts->ops->analyse_dev(ts, T));
        ts->analysed = true;
        return GS_OK;
    }
    /* a solver that reads its factor on the host: a host copy */
    GS_TRY(gs_ts_csr_download(ts->be, T, &H));
    GS_TRY(gs_trisolve_analyse(ts, &H));
cleanup:
    gs_csr_free(&H);
    return st;
}

/* true when [p, p+n) and [q, q+n) share an element */
static bool overlaps(const double *p, const double *q, gs_int n)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)q, len = (uintptr_t)n * sizeof(double);
    return a < b + len && b < a + len;
}

gs_status gs_trisolve_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    if (!ts) return GS_ERROR(GS_ERR_ARG, "gs_trisolve_solve: trisolve is NULL");
    const char *side = side_name(ts->uplo);
    if (!ts->analysed)
        return GS_ERROR(GS_ERR_ARG, "%s trisolve (%s): solve called before a successful analyse", side, ts->type);
    if (!b || !x) return GS_ERROR(GS_ERR_ARG, "%s trisolve (%s): b or x is NULL", side, ts->type);
    if (b->n != ts->n || x->n != ts->n)
        return GS_ERROR(GS_ERR_ARG, "%s trisolve (%s): b has %d and x has %d entries; the factor has %d rows",
                        side, ts->type, (int)b->n, (int)x->n, (int)ts->n);
    if (b->be != ts->be || x->be != ts->be)
        return GS_ERROR(GS_ERR_ARG, "%s trisolve (%s): b and x must live on the solver's backend (%s)", side,
                        ts->type, ts->be->name ? ts->be->name : "?");
    if (ts->n == 0) return GS_OK;
    if (b == x || overlaps(b->data, x->data, ts->n))
        return GS_ERROR(GS_ERR_ARG, "%s trisolve (%s): b and x overlap; they must be distinct vectors", side,
                        ts->type);
    GS_CALL(ts->ops->solve(ts, b, x));
    return GS_OK;
}

void gs_trisolve_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    if (!ts || !rep || !prefix) return;
    gs_ts_report_string(rep, prefix, "type", ts->type);
    gs_ts_report_string(rep, prefix, "side", side_name(ts->uplo));
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.unit_diag", prefix) == GS_OK)
        (void)gs_report_bool(rep, key, ts->unit_diag);
    gs_ts_report_int(rep, prefix, "n", ts->n);
    if (ts->analysed && ts->ops->view) ts->ops->view(ts, rep, prefix);
}

void gs_trisolve_destroy(gs_trisolve **ts)
{
    if (!ts || !*ts) return;
    if ((*ts)->ops && (*ts)->ops->destroy) (*ts)->ops->destroy(*ts);
    gs_free(ts);
}
