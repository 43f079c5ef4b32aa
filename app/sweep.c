/* Parameter sweeps: runs = the Cartesian product of the value lists of the varied keys (last key
 * fastest); the matrix is read once; one JSON object or summary line per run, then a summary table;
 * the sweep's exit code is the most serious of its runs'. */
#include "app/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "core/signal.h"

#define CELL_LEN 80   /* one value in the summary table */
#define PATH_LEN 4096 /* an output path with the run index inserted */

/* ---------------------------------------------------------------------------------------------- */
/* the plan                                                                                       */

static const gs_cfg_key *schema_key(const char *path)
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

/* ---------------------------------------------------------------------------------------------- */
/* writing the varied values                                                                      */

/* The value of key path in cfg, as JSON (json true) or as plain text. */
static void write_config_value(FILE *f, const gs_config *cfg, const char *path, bool json)
{
    const gs_cfg_key *key = schema_key(path);
    if (!key) return;
    switch (key->type) {
    case GS_CFG_INT: fprintf(f, "%lld", gs_config_int(cfg, path)); break;
    case GS_CFG_DOUBLE: fprintf(f, json ? "%.17g" : "%g", gs_config_double(cfg, path)); break;
    case GS_CFG_BOOL: fputs(gs_config_bool(cfg, path) ? "true" : "false", f); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE:
        if (json)
            gs_json_write_string(f, gs_config_string(cfg, path));
        else
            fputs(gs_config_string(cfg, path), f);
        break;
    }
}

static void value_text(const gs_config *cfg, const char *path, char *buf, size_t len)
{
    const gs_cfg_key *key = schema_key(path);
    buf[0] = '\0';
    if (!key) return;
    switch (key->type) {
    case GS_CFG_INT: snprintf(buf, len, "%lld", gs_config_int(cfg, path)); break;
    case GS_CFG_DOUBLE: snprintf(buf, len, "%g", gs_config_double(cfg, path)); break;
    case GS_CFG_BOOL: snprintf(buf, len, "%s", gs_config_bool(cfg, path) ? "true" : "false"); break;
    case GS_CFG_STRING:
    case GS_CFG_CHOICE: snprintf(buf, len, "%s", gs_config_string(cfg, path)); break;
    }
}

void gs_app_varied_text(const gs_app_run_ctx *ctx, const gs_config *cfg, char *buf, size_t len)
{
    buf[0] = '\0';
    if (len == 0) return;
    size_t used = 0;
    int w = snprintf(buf, len, "index=%ld", ctx->index);
    if (w < 0 || (size_t)w >= len) return;
    used = (size_t)w;
    for (int k = 0; ctx->plan && k < ctx->plan->nkeys; k++) {
        char v[CELL_LEN * 4];
        value_text(cfg, ctx->plan->keys[k], v, sizeof v);
        w = snprintf(buf + used, len - used, " %s=%s", ctx->plan->keys[k], v);
        if (w < 0 || (size_t)w >= len - used) return;
        used += (size_t)w;
    }
}

static void write_sweep_member(FILE *f, const gs_app_run_ctx *ctx, const gs_config *cfg)
{
    fprintf(f, "\"sweep\":{\"index\":%ld,\"count\":%ld,\"varied\":{", ctx->index, ctx->count);
    for (int k = 0; ctx->plan && k < ctx->plan->nkeys; k++) {
        if (k) fputc(',', f);
        gs_json_write_string(f, ctx->plan->keys[k]);
        fputc(':', f);
        write_config_value(f, cfg, ctx->plan->keys[k], true);
    }
    fputs("}}", f);
}

void gs_app_write_json(const gs_report *rep, const gs_app_run_ctx *ctx, const gs_config *cfg, FILE *f)
{
    gs_app_run_ctx single = {0, 1, NULL, NULL, NULL};
    if (!ctx) ctx = &single;
    /* The report nests dotted keys; the varied keys are written flat ("preconditioner.blocks": 16,
     * the names -s takes). So the object is {"sweep": {...}, followed by the report's members: the
     * report is written to a temporary file and copied after its opening brace. (A stream, not a
     * buffer: nothing here allocates, so no allocation can fail half-way through an object.) */
    FILE *t = tmpfile();
    if (!t) { /* no temporary file: the report alone is still one valid object */
        gs_report_write_json(rep, f);
        return;
    }
    gs_report_write_json(rep, t);
    long len = ftell(t);
    rewind(t);
    fputc('{', f);
    write_sweep_member(f, ctx, cfg);
    int c = fgetc(t); /* the report's opening brace */
    if (c != '{' || len <= 3) {   /* an empty report "{}\n" adds no member */
        fputs("}\n", f);
        fclose(t);
        return;
    }
    fputc(',', f);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, t)) > 0) fwrite(chunk, 1, got, f);
    fclose(t);
}

void gs_app_report_read_error(const gs_app_opts *o, const gs_config *cfg, const gs_app_run_ctx *ctx, gs_status st,
                              const char *message)
{
    gs_report *rep = NULL;
    if (gs_report_create(&rep) != GS_OK) return;
    gs_report_string(rep, "gpusolve.version", GS_VERSION);
    gs_report_string(rep, "matrix.source", o->matrix ? o->matrix : "");
    gs_report_string(rep, "status", "error");
    gs_report_string(rep, "error.status", gs_status_name(st));
    gs_report_string(rep, "error.message", message);
    gs_report_int(rep, "exit_code", gs_exit_code_for_status(st));
    gs_config_to_report(cfg, rep);
    gs_app_write_json(rep, ctx, cfg, stdout);
    gs_report_destroy(&rep);
}

/* ---------------------------------------------------------------------------------------------- */
/* output paths of the runs                                                                       */

/* path for run `index`: every "{index}" replaced by the index; without one, "-INDEX" inserted before
 * the extension of the file name (h.csv -> h-3.csv, out/x -> out/x-3). */
static void indexed_path(const char *path, long index, char *buf, size_t len)
{
    char num[32];
    snprintf(num, sizeof num, "%ld", index);
    const char *mark = strstr(path, "{index}");
    if (mark) {
        size_t used = 0;
        buf[0] = '\0';
        for (const char *p = path; *p && used + 1 < len;) {
            if (strncmp(p, "{index}", 7) == 0) {
                int w = snprintf(buf + used, len - used, "%s", num);
                used += w > 0 ? (size_t)w : 0;
                p += 7;
            } else {
                buf[used++] = *p++;
                buf[used] = '\0';
            }
        }
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name) dot = name + strlen(name); /* no extension, or a dot file */
    snprintf(buf, len, "%.*s-%s%s", (int)(dot - path), path, num, dot);
}

/* ---------------------------------------------------------------------------------------------- */
/* the sweep                                                                                      */

static int usage_or_config_error(void)
{
    gs_status st = gs_error_status();
    fputs("gpusolve: error: ", stderr);
    gs_error_print(stderr);
    gs_error_clear();
    return gs_exit_code_for_status(st);
}

/* One row of the summary table (or of the dry-run list): numbers right-aligned, text left-aligned
 * (w[c] < 0 marks a text column). */
static void print_row(FILE *f, const int *w, int ncols, char cells[][CELL_LEN])
{
    fputs(" ", f);
    for (int c = 0; c < ncols; c++) {
        if (c + 1 == ncols && w[c] < 0)
            fprintf(f, "  %s", cells[c]); /* no trailing blanks */
        else
            fprintf(f, "  %*s", w[c], cells[c]);
    }
    fputc('\n', f);
}

/* A cell that reads as a number (or "-": no value), for the alignment of its column. */
static bool numeric_cell(const char *s)
{
    char *end;
    if (strcmp(s, "-") == 0) return true;
    strtod(s, &end);
    return end != s && *end == '\0';
}

/* The table: a column per varied key, then the outcome columns; vals[r*nkeys + k] is the text of
 * key k in run r. Only rows [0, nrows) are printed (an interrupted sweep stops early). */
static gs_status print_table(FILE *f, const gs_sweep *sw, const char *vals, const gs_app_outcome *outc, long nrows)
{
    gs_status st = GS_OK;
    enum { NOUT = 6 };
    static const char *const out_head[NOUT] = {"iterations", "reason", "setup_s", "solve_s", "true_residual",
                                               "exit"};
    int ncols = 1 + sw->nkeys + (outc ? NOUT : 0);
    int *w = NULL;
    bool *text = NULL;
    char(*cells)[CELL_LEN] = NULL;
    GS_TRY(GS_CALLOC(w, ncols));
    GS_TRY(GS_CALLOC(text, ncols));
    GS_TRY(GS_CALLOC(cells, ncols));
    for (int pass = 0; pass < 2; pass++) { /* pass 0: widths; pass 1: print */
        for (long r = -1; r < nrows; r++) {
            int c = 0;
            if (r < 0) {
                snprintf(cells[c++], CELL_LEN, "index");
                for (int k = 0; k < sw->nkeys; k++) snprintf(cells[c++], CELL_LEN, "%s", sw->keys[k]);
                for (int j = 0; outc && j < NOUT; j++) snprintf(cells[c++], CELL_LEN, "%s", out_head[j]);
            } else {
                snprintf(cells[c++], CELL_LEN, "%ld", r);
                for (int k = 0; k < sw->nkeys; k++)
                    snprintf(cells[c++], CELL_LEN, "%s", vals + ((size_t)r * (size_t)sw->nkeys + (size_t)k) * CELL_LEN);
                if (outc) {
                    const gs_app_outcome *o = &outc[r];
                    if (!o->error && o->iterations >= 0)
                        snprintf(cells[c++], CELL_LEN, "%lld", o->iterations);
                    else
                        snprintf(cells[c++], CELL_LEN, "-");
                    snprintf(cells[c++], CELL_LEN, "%s%s", o->error ? "error:" : "", o->reason);
                    if (o->error)
                        snprintf(cells[c++], CELL_LEN, "-");
                    else
                        snprintf(cells[c++], CELL_LEN, "%.4f", o->setup_s);
                    if (o->solved)
                        snprintf(cells[c++], CELL_LEN, "%.4f", o->solve_s);
                    else
                        snprintf(cells[c++], CELL_LEN, "-");
                    if (o->solved && isfinite(o->residual_true))
                        snprintf(cells[c++], CELL_LEN, "%.3e", o->residual_true);
                    else
                        snprintf(cells[c++], CELL_LEN, "-");
                    snprintf(cells[c++], CELL_LEN, "%d", o->exit_code);
                }
            }
            if (pass == 0) {
                for (int j = 0; j < ncols; j++) {
                    if ((int)strlen(cells[j]) > w[j]) w[j] = (int)strlen(cells[j]);
                    if (r >= 0 && !numeric_cell(cells[j])) text[j] = true;
                }
                if (r + 1 == nrows)
                    for (int j = 0; j < ncols; j++)
                        if (text[j]) w[j] = -w[j];
            } else {
                print_row(f, w, ncols, cells);
            }
        }
    }
cleanup:
    gs_free(&w);
    gs_free(&text);
    gs_free(&cells);
    return st;
}

/* "3 of 8 converged; not converged: 1 (index 4); ..." and the sweep's exit code, after the table. */
static void print_tally(FILE *f, const gs_app_outcome *outc, long done, long nruns, int code)
{
    static const struct {
        int code;
        const char *what;
    } kinds[] = {{GS_EXIT_NOT_CONVERGED, "not converged"}, {GS_EXIT_NUMERICAL, "numerical failure"},
                 {GS_EXIT_USAGE, "unsupported configuration"}, {GS_EXIT_INPUT, "input file error"},
                 {GS_EXIT_DEVICE, "device/resource failure"}, {GS_EXIT_INTERRUPTED, "interrupted"},
                 {GS_EXIT_INTERNAL, "internal error"}};
    long conv = 0;
    for (long r = 0; r < done; r++) conv += outc[r].exit_code == GS_EXIT_CONVERGED;
    fprintf(f, "converged: %ld of %ld", conv, nruns);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        long n = 0;
        for (long r = 0; r < done; r++) n += outc[r].exit_code == kinds[k].code;
        if (!n) continue;
        fprintf(f, "; %s: %ld (index", kinds[k].what, n);
        long shown = 0;
        for (long r = 0; r < done && shown < 10; r++)
            if (outc[r].exit_code == kinds[k].code) fprintf(f, "%s%ld", shown++ ? ", " : " ", r);
        fprintf(f, "%s)", n > shown ? ", ..." : "");
    }
    if (done < nruns) fprintf(f, "; not run: %ld", nruns - done);
    fprintf(f, "\nexit code %d\n", code);
}

static gs_status dry_run(const gs_app_opts *o, const gs_config *cfg, const gs_sweep *sw, bool json)
{
    gs_status st = GS_OK;
    gs_config *rc = NULL;
    gs_report *rep = NULL;
    char *vals = NULL;
    if (!json) {
        GS_TRY(GS_CALLOC(vals, (size_t)sw->nruns * (size_t)(sw->nkeys ? sw->nkeys : 1) * CELL_LEN));
        printf("sweep: %ld run%s over %d varied key%s%s%s (dry run: nothing is read or solved)\n", sw->nruns,
               sw->nruns == 1 ? "" : "s", sw->nkeys, sw->nkeys == 1 ? "" : "s", o->matrix ? ", matrix " : "",
               o->matrix ? o->matrix : "");
        if (sw->ndims < sw->nkeys)
            printf("(keys set by one wildcard -s vary together: %d dimensions)\n", sw->ndims);
    }
    for (long r = 0; r < sw->nruns; r++) {
        gs_app_run_ctx ctx = {r, sw->nruns, sw, NULL, NULL};
        GS_TRY(gs_sweep_config(cfg, sw, r, &rc));
        if (json) {
            GS_TRY(gs_report_create(&rep));
            GS_TRY(gs_report_string(rep, "gpusolve.version", GS_VERSION));
            GS_TRY(gs_report_string(rep, "matrix.source", o->matrix ? o->matrix : ""));
            GS_TRY(gs_report_string(rep, "status", "dry_run"));
            GS_TRY(gs_config_to_report(rc, rep));
            gs_app_write_json(rep, &ctx, rc, stdout);
            gs_report_destroy(&rep);
        } else {
            for (int k = 0; k < sw->nkeys; k++)
                value_text(rc, sw->keys[k], vals + ((size_t)r * (size_t)sw->nkeys + (size_t)k) * CELL_LEN, CELL_LEN);
        }
        gs_config_destroy(&rc);
    }
    if (!json) GS_TRY(print_table(stdout, sw, vals, NULL, sw->nruns));
cleanup:
    fflush(stdout);
    gs_config_destroy(&rc);
    gs_report_destroy(&rep);
    gs_free(&vals);
    return st;
}

int gs_app_sweep(const gs_app_opts *o, const gs_config *cfg, const int *link, bool dry)
{
    gs_status st = GS_OK;
    gs_sweep sw;
    gs_app_problem prob;
    gs_app_outcome *outc = NULL;
    gs_config *rc = NULL;
    char *vals = NULL;
    bool have_problem = false;
    int code = GS_EXIT_CONVERGED;
    long done = 0;
    memset(&prob, 0, sizeof prob);

    if (gs_sweep_plan(cfg, link, &sw) != GS_OK) return usage_or_config_error();
    bool json = strcmp(gs_config_string(cfg, "output.format"), "json") == 0;
    bool table = !json && sw.nruns > 1 && !gs_config_bool(cfg, "output.quiet");
    if (dry) {
        st = dry_run(o, cfg, &sw, json);
        gs_sweep_free(&sw);
        return st == GS_OK ? GS_EXIT_CONVERGED : usage_or_config_error();
    }

    /* the matrix, once */
    if (gs_app_problem_read(&prob, o->matrix) != GS_OK) {
        gs_status rst = gs_error_status();
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", gs_error_message());
        code = gs_exit_code_for_status(rst);
        fputs("gpusolve: error: ", stderr);
        gs_error_print(stderr);
        gs_error_clear();
        /* no run can start; in JSON each run still gets its object, so a .jsonl has every configuration */
        for (long r = 0; json && r < sw.nruns; r++) {
            gs_app_run_ctx ctx = {r, sw.nruns, &sw, NULL, NULL};
            if (gs_sweep_config(cfg, &sw, r, &rc) != GS_OK) {
                code = gs_exit_code_worse(code, usage_or_config_error());
                break;
            }
            gs_app_report_read_error(o, rc, &ctx, rst, msg);
            gs_config_destroy(&rc);
        }
        fflush(stdout);
        gs_sweep_free(&sw);
        return code;
    }
    have_problem = true;
    if (table)
        printf("sweep: %ld runs over %d varied key%s; matrix %s (%d rows, %d nonzeros) read once in %.3f s\n",
               sw.nruns, sw.nkeys, sw.nkeys == 1 ? "" : "s", o->matrix, prob.A.nrows, prob.A.nnz, prob.time_read);
    GS_TRY(GS_CALLOC(outc, sw.nruns));
    if (table) GS_TRY(GS_CALLOC(vals, (size_t)sw.nruns * (size_t)(sw.nkeys ? sw.nkeys : 1) * CELL_LEN));

    /* one path per run for outputs a sweep would otherwise overwrite */
    const char *hist = o->history ? o->history : gs_config_string(cfg, "output.history");
    const char *sol = o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    bool index_hist = hist[0] && (o->history || gs_config_count(cfg, "output.history") == 1) &&
                      (sw.nruns > 1 || strstr(hist, "{index}"));
    bool index_sol = sol[0] && (o->solution || gs_config_count(cfg, "output.solution") == 1) &&
                     (sw.nruns > 1 || strstr(sol, "{index}"));

    for (long r = 0; r < sw.nruns; r++) {
        char hpath[PATH_LEN], spath[PATH_LEN];
        gs_app_run_ctx ctx = {r, sw.nruns, &sw, NULL, NULL};
        if (index_hist) {
            indexed_path(hist, r, hpath, sizeof hpath);
            ctx.history = hpath;
        }
        if (index_sol) {
            indexed_path(sol, r, spath, sizeof spath);
            ctx.solution = spath;
        }
        GS_TRY(gs_sweep_config(cfg, &sw, r, &rc));
        int rcode = gs_app_run_problem(o, &prob, rc, &ctx, &outc[r]);
        code = gs_exit_code_worse(code, rcode);
        if (vals)
            for (int k = 0; k < sw.nkeys; k++)
                value_text(rc, sw.keys[k], vals + ((size_t)r * (size_t)sw.nkeys + (size_t)k) * CELL_LEN, CELL_LEN);
        gs_config_destroy(&rc);
        done = r + 1;
        /* a signal stops the sweep, not only the solve it arrived in */
        if (rcode == GS_EXIT_INTERRUPTED || gs_interrupt_requested()) {
            code = gs_exit_code_worse(code, GS_EXIT_INTERRUPTED);
            if (done < sw.nruns)
                fprintf(stderr, "gpusolve: sweep interrupted after %ld of %ld runs\n", done, sw.nruns);
            break;
        }
    }
    if (table) {
        printf("summary\n");
        GS_TRY(print_table(stdout, &sw, vals, outc, done));
        print_tally(stdout, outc, done, sw.nruns, code);
    }
cleanup:
    if (st != GS_OK) code = gs_exit_code_worse(code, usage_or_config_error());
    fflush(stdout);
    gs_config_destroy(&rc);
    if (have_problem) gs_app_problem_free(&prob);
    gs_free(&outc);
    gs_free(&vals);
    gs_sweep_free(&sw);
    return code;
}
