/* Triangular solvers x = T^{-1} b, the front: creation by name (the registry, registry.c, and its
 * capabilities) or from the configuration, and the public analyse/solve/view/destroy that check sizes and
 * state once and dispatch to the implementation.
 *
 * Factor check: gs_trisolve_analyse checks the header (O(1)) and, for solvers whose registry entry does not
 * say they check the rows themselves on this backend, the rows on the host (gs_ts_check_rows, common.c:
 * OpenMP over row ranges). */
#include "trisolve/trisolve.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "trisolve/trisolve_impl.h"

static const char *side_name(gs_uplo uplo) { return uplo == GS_LOWER ? "lower" : "upper"; }

/* ---------------------------------------------------------------- creation */

static const gs_trisolve_entry *find_entry(const char *type)
{
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++)
        if (strcmp(e->name, type) == 0) return e;
    return NULL;
}

static gs_status unknown_type(const char *type)
{
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

/* The backends (as "backend" words) and the types on them with float factors, for the messages. */
static void single_types(char *out, size_t size)
{
    int count = 0, k = 0;
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++) count += (e->single & GS_TS_CUDA) != 0;
    out[0] = '\0';
    for (const gs_trisolve_entry *e = gs_trisolve_registry; e->name; e++) {
        if (!(e->single & GS_TS_CUDA)) continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", k == 0 ? "" : k == count - 1 ? " and " : ", ", e->name);
        k++;
    }
}

static unsigned backend_bit(const gs_backend *be) { return be->kind == GS_BACKEND_CUDA ? GS_TS_CUDA : GS_TS_HOST; }

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
    t->entry = e;
    GS_TRY(normalise_params(prm, &t->prm));
    if (t->prm.single && !(e->single & backend_bit(be))) {
        char types[256];
        single_types(types, sizeof types);
        GS_FAIL(GS_ERR_UNSUPPORTED,
                "preconditioner.precision = \"single\": the %s triangular solver (trisolve.%s.type = %s) on the %s "
                "backend stores its factor in double only; single-precision factors are available with "
                "device.backend = \"cuda\" and trisolve types %s; or set preconditioner.precision = \"double\"",
                side_name(uplo), side_name(uplo), e->name, be->name ? be->name : "host", types);
    }
    if (!(e->sides & (1u << uplo)))
        GS_FAIL(GS_ERR_UNSUPPORTED, "trisolve type %s does not solve %s triangular factors", e->name,
                side_name(uplo));
    gs_trisolve_create_fn create = be->kind == GS_BACKEND_CUDA ? e->create_cuda : e->create_host;
    if (!create && be->kind == GS_BACKEND_CUDA)
        GS_FAIL(GS_ERR_UNSUPPORTED, "trisolve type %s runs on the host backend only (the backend in use is '%s')",
                e->name, be->name ? be->name : "cuda");
    if (!create)
        GS_FAIL(GS_ERR_UNSUPPORTED, "trisolve type %s needs device.backend = cuda (the backend in use is '%s')",
                e->name, be->name ? be->name : "host");
    GS_TRY(create(t));
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
                                         bool single, gs_trisolve **ts)
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
    prm.single = single;
    GS_CALL(gs_trisolve_create(type, be, uplo, unit_diag, &prm, ts));
    return GS_OK;
}

/* ---------------------------------------------------------------- checked dispatch */

bool gs_ts_rows_checked_in_analyse(const gs_trisolve *ts) { return (ts->entry->checks_rows & backend_bit(ts->be)) != 0; }

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
