/* The plan of a parameter sweep (app/sweep.h): the varied keys and their dimensions, the value indices of
 * a run, the configuration of a run; the ordering of exit codes. */
#include "app/sweep.h"

#include <string.h>

#include "core/mem.h"

/* ---------------------------------------------------------------------------------------------- */
/* the plan                                                                                       */

const gs_cfg_key *gs_sweep_key(const char *path)
{
    for (const gs_cfg_key *k = gs_cfg_schema; k->path; k++)
        if (strcmp(k->path, path) == 0) return k;
    return NULL;
}

void gs_sweep_free(gs_sweep *sw)
{
    gs_free(&sw->keys);
    gs_free(&sw->count);
    gs_free(&sw->dim);
    gs_free(&sw->dim_count);
    sw->nkeys = sw->ndims = 0;
    sw->nruns = 0;
}

gs_status gs_sweep_plan(const gs_config *cfg, const int *link, gs_sweep *sw)
{
    gs_status st = GS_OK;
    int rows = 0;
    int *row_of = NULL; /* schema row of each varied key */
    memset(sw, 0, sizeof *sw);
    while (gs_cfg_schema[rows].path) rows++;
    GS_TRY(GS_CALLOC(sw->keys, rows));
    GS_TRY(GS_CALLOC(sw->count, rows));
    GS_TRY(GS_CALLOC(sw->dim, rows));
    GS_TRY(GS_CALLOC(sw->dim_count, rows));
    GS_TRY(GS_CALLOC(row_of, rows));
    sw->nruns = 1;
    for (int k = 0; k < rows; k++) {
        const char *path = gs_cfg_schema[k].path;
        int c = gs_config_count(cfg, path);
        if (c <= 1) continue;
        /* every run prints in one format: a sweep over the format itself has no meaning */
        if (strcmp(path, "output.format") == 0)
            GS_FAIL(GS_ERR_CONFIG, "output.format holds %d values; a sweep prints all its runs in one format "
                                   "(give one value, or --json)", c);
        /* a key linked to an earlier varied key joins that key's dimension */
        int d = -1;
        for (int j = 0; j < sw->nkeys && d < 0 && link && link[k]; j++) {
            if (link[row_of[j]] != link[k]) continue;
            d = sw->dim[j];
            if (sw->count[j] != c)
                GS_FAIL(GS_ERR_CONFIG,
                        "%s and %s were set together (a wildcard -s) and are swept together, but hold %d and %d "
                        "values; give them lists of the same length",
                        sw->keys[j], path, sw->count[j], c);
        }
        if (d < 0) {
            if (sw->nruns > GS_SWEEP_MAX_RUNS / c)
                GS_FAIL(GS_ERR_CONFIG,
                        "the sweep has more than %ld runs (at %s, with %d values); split it into several commands",
                        GS_SWEEP_MAX_RUNS, path, c);
            d = sw->ndims++;
            sw->dim_count[d] = c;
            sw->nruns *= c;
        }
        row_of[sw->nkeys] = k;
        sw->keys[sw->nkeys] = path;
        sw->count[sw->nkeys] = c;
        sw->dim[sw->nkeys] = d;
        sw->nkeys++;
    }
    gs_free(&row_of);
    return GS_OK;
cleanup:
    gs_free(&row_of);
    gs_sweep_free(sw);
    return st;
}

void gs_sweep_indices(const gs_sweep *sw, long run, int *idx)
{
    /* mixed radix: the last dimension is the fastest digit */
    for (int d = sw->ndims - 1; d >= 0; d--) {
        int v = (int)(run % sw->dim_count[d]);
        run /= sw->dim_count[d];
        for (int k = 0; k < sw->nkeys; k++)
            if (sw->dim[k] == d) idx[k] = v;
    }
}

gs_status gs_sweep_config(const gs_config *cfg, const gs_sweep *sw, long run, gs_config **out)
{
    gs_status st = GS_OK;
    gs_config *c = NULL;
    int *idx = NULL;
    *out = NULL;
    GS_TRY(gs_config_copy(cfg, &c));
    if (sw->nkeys > 0) {
        GS_TRY(GS_MALLOC(idx, sw->nkeys));
        gs_sweep_indices(sw, run, idx);
        for (int k = 0; k < sw->nkeys; k++) GS_TRY(gs_config_pick(c, sw->keys[k], idx[k]));
    }
    *out = c;
    c = NULL;
cleanup:
    gs_free(&idx);
    gs_config_destroy(&c);
    return st;
}

int gs_exit_code_worse(int a, int b)
{
    /* rank by seriousness: what stopped the work or needs fixing outranks what the method did */
    static const int order[] = {GS_EXIT_CONVERGED, GS_EXIT_NOT_CONVERGED, GS_EXIT_NUMERICAL, GS_EXIT_USAGE,
                                GS_EXIT_INPUT,     GS_EXIT_DEVICE,        GS_EXIT_INTERNAL,  GS_EXIT_INTERRUPTED};
    int ra = -1, rb = -1;
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++) {
        if (order[i] == a) ra = i;
        if (order[i] == b) rb = i;
    }
    /* an undocumented code is a bug: rank it as internal */
    if (ra < 0) ra = 6;
    if (rb < 0) rb = 6;
    return ra >= rb ? a : b;
}
