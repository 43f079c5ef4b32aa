/* Parameter sweeps: runs = the Cartesian product of the value lists of the varied keys (last key
 * fastest); the matrix is read once; one JSON object or summary line per run, then a summary table;
 * the sweep's exit code is the most serious of its runs'. */
#include "app/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/monitor.h"
#include "app/report_text.h"
#include "app/startup.h"
#include "core/atomic_file.h"
#include "core/mem.h"
#include "core/signal.h"

#define PATH_LEN 4096 /* an output path with the run index inserted */

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
/* inputs and outputs, checked before anything is read or solved                                  */

/* The output paths of run r, as the run computes them: -o / --history or the keys output.solution /
 * output.history of the run's configuration, given one path per run (index_*) where the sweep would
 * otherwise write one file many times. "" when there is none. */
typedef struct run_paths {
    bool index_hist, index_sol; /* insert the run's index into the path */
    const char *hist, *sol;     /* the sweep-wide path (from the options or the configuration) */
} run_paths;

static void outputs_of_run(const gs_app_opts *o, const gs_config *rcfg, const run_paths *rp, long r, char *hbuf,
                           char *sbuf, const char **hist, const char **sol)
{
    if (rp->index_hist) {
        indexed_path(rp->hist, r, hbuf, PATH_LEN);
        *hist = hbuf;
    } else {
        *hist = o->history ? o->history : gs_config_string(rcfg, "output.history");
    }
    if (rp->index_sol) {
        indexed_path(rp->sol, r, sbuf, PATH_LEN);
        *sol = sbuf;
    } else {
        *sol = o->solution ? o->solution : gs_config_string(rcfg, "output.solution");
    }
}

/* One file a run reads or writes. */
typedef struct io_file {
    char *path;       /* owned */
    const char *what; /* "-o", "the matrix", ... (static) */
    long run;         /* the run that writes it (-1: an input, or a single run) */
    bool input;
    gs_output_target t; /* outputs: what the path resolves to */
    bool exists;        /* inputs: stat succeeded (dev, ino, mode valid) */
    dev_t dev;
    ino_t ino;
    mode_t mode;
} io_file;

typedef struct io_list {
    io_file *f;
    long n, cap;
} io_list;

static void io_list_free(io_list *l)
{
    for (long i = 0; i < l->n; i++) gs_free(&l->f[i].path);
    gs_free(&l->f);
    l->n = l->cap = 0;
}

static gs_status io_add(io_list *l, const char *path, const char *what, long run, bool input)
{
    if (l->n == l->cap) {
        long cap = l->cap ? 2 * l->cap : 16;
        GS_CALL(gs_realloc(&l->f, (size_t)cap, sizeof *l->f));
        l->cap = cap;
    }
    io_file *f = &l->f[l->n];
    memset(f, 0, sizeof *f);
    size_t len = strlen(path);
    GS_CALL(gs_malloc(&f->path, len + 1, 1));
    memcpy(f->path, path, len + 1);
    f->what = what;
    f->run = run;
    f->input = input;
    l->n++;
    return GS_OK;
}

/* "-o x.mtx", "the history x-3.csv of run 3", "the matrix A.mtx", for messages. */
static void describe(const io_file *f, bool sweep, char *buf, size_t len)
{
    if (sweep && f->run >= 0)
        snprintf(buf, len, "%s %s (run %ld)", f->what, f->path, f->run);
    else
        snprintf(buf, len, "%s %s", f->what, f->path);
}

/* Outputs that can destroy each other's contents: the files replaced through a temporary file. Streams
 * (FIFOs, sockets, character devices, open descriptors) are written in place, one output after the
 * other, so several outputs may share one. */
static bool replaced(const io_file *f) { return f->t.kind == GS_OUTPUT_FILE; }

/* Order of outputs by identity: an existing file by device and inode, a new one by its resolved path. */
static int identity_cmp(const void *pa, const void *pb)
{
    const io_file *a = *(io_file *const *)pa, *b = *(io_file *const *)pb;
    if (a->t.exists != b->t.exists) return a->t.exists ? -1 : 1;
    if (a->t.exists) {
        if (a->t.dev != b->t.dev) return a->t.dev < b->t.dev ? -1 : 1;
        if (a->t.ino != b->t.ino) return a->t.ino < b->t.ino ? -1 : 1;
    } else {
        int c = strcmp(a->t.target, b->t.target);
        if (c) return c;
    }
    return a < b ? -1 : a > b; /* the earlier listed first */
}

/* A sweep's output path that gets each run's index inserted names files, not a folder: a folder (an
 * existing one, or a path ending in '/') would silently become "folder/-3". GS_ERR_IO (exit 3), as a
 * single run reports an output that is a folder. */
static gs_status check_indexed_base(const char *path, const char *what)
{
    struct stat sb;
    size_t len = strlen(path);
    if ((len > 0 && path[len - 1] == '/') || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return GS_ERROR(GS_ERR_IO,
                        "%s %s: is a folder; expected a file name for the output (a sweep writes one file per run, "
                        "the run's index inserted before the extension, h.csv -> h-3.csv, or where {index} stands)",
                        what, path);
    return GS_OK;
}

/* Every file the sweep reads or writes, checked before the matrix is read: an output that is the same
 * file as an input (links followed, compared by device and inode) or as another output is a usage
 * error naming both (GS_ERR_ARG, exit 2); an output that cannot be written (missing folder, a folder,
 * a block device, no permission) is GS_ERR_IO (exit 3). Sweeps index their outputs only when they are
 * files: *rp says so on return. */
static gs_status check_files(const gs_app_opts *o, const gs_config *cfg, const gs_sweep *sw, run_paths *rp)
{
    gs_status st = GS_OK;
    io_list l = {NULL, 0, 0};
    io_file **order = NULL;
    gs_config *rc = NULL;
    bool sweep = sw->nruns > 1;
    char hbuf[PATH_LEN], sbuf[PATH_LEN];

    /* a stream is not indexed: every run writes to it in place */
    gs_output_target t;
    if (rp->index_hist && gs_output_probe(rp->hist, &t) == GS_OK && t.kind != GS_OUTPUT_FILE) rp->index_hist = false;
    if (rp->index_sol && gs_output_probe(rp->sol, &t) == GS_OK && t.kind != GS_OUTPUT_FILE) rp->index_sol = false;
    gs_error_clear(); /* a path that cannot be written is reported below, with the run that writes it */
    if (rp->index_hist) GS_TRY(check_indexed_base(rp->hist, o->history ? "--history" : "output.history"));
    if (rp->index_sol) GS_TRY(check_indexed_base(rp->sol, o->solution ? "-o" : "output.solution"));

    /* inputs: the files read, whatever the run */
    if (o->matrix && strncmp(o->matrix, "gen:", 4) != 0) GS_TRY(io_add(&l, o->matrix, "the matrix", -1, true));
    if (o->config_path) GS_TRY(io_add(&l, o->config_path, "the configuration -c", -1, true));
    if (o->rhs_path) GS_TRY(io_add(&l, o->rhs_path, "the right-hand side -b", -1, true));
    if (o->x0_path) GS_TRY(io_add(&l, o->x0_path, "the initial guess -x", -1, true));
    bool per_run = false; /* a key naming a file varies from run to run */
    for (int k = 0; k < sw->nkeys; k++)
        if (!strcmp(sw->keys[k], "system.rhs") || !strcmp(sw->keys[k], "system.x0") ||
            !strcmp(sw->keys[k], "output.history") || !strcmp(sw->keys[k], "output.solution"))
            per_run = true;
    for (long r = 0; r < sw->nruns; r++) {
        const gs_config *rcfg = cfg;
        if (per_run) {
            GS_TRY(gs_sweep_config(cfg, sw, r, &rc));
            rcfg = rc;
        }
        if (r == 0 || per_run) { /* files named by system.rhs / system.x0 (the others are generated) */
            const char *rhs = gs_config_string(rcfg, "system.rhs"), *x0 = gs_config_string(rcfg, "system.x0");
            if (!o->rhs_path && strcmp(rhs, "ones") && strcmp(rhs, "random") && strcmp(rhs, "Ax"))
                GS_TRY(io_add(&l, rhs, "the right-hand side system.rhs", -1, true));
            if (!o->x0_path && strcmp(x0, "zero")) GS_TRY(io_add(&l, x0, "the initial guess system.x0", -1, true));
        }
        const char *hist, *sol;
        outputs_of_run(o, rcfg, rp, r, hbuf, sbuf, &hist, &sol);
        if (sol[0]) GS_TRY(io_add(&l, sol, o->solution ? "-o" : "output.solution", sweep ? r : -1, false));
        if (hist[0]) GS_TRY(io_add(&l, hist, o->history ? "--history" : "output.history", sweep ? r : -1, false));
        gs_config_destroy(&rc);
    }

    /* what each one is */
    long nout = 0;
    for (long i = 0; i < l.n; i++) {
        io_file *f = &l.f[i];
        if (f->input) {
            struct stat sb;
            if (stat(f->path, &sb) == 0) { /* one that cannot be read is reported when it is read */
                f->exists = true;
                f->dev = sb.st_dev;
                f->ino = sb.st_ino;
                f->mode = sb.st_mode;
            }
        } else {
            /* the same path as the previous output: the same answer */
            if (i > 0 && !l.f[i - 1].input && strcmp(l.f[i - 1].path, f->path) == 0)
                f->t = l.f[i - 1].t;
            else {
                gs_status pst = gs_output_probe(f->path, &f->t);
                if (pst != GS_OK && sweep && f->run >= 0) {
                    /* which run writes it: the message says so (the path may be that run's alone) */
                    char *msg = strdup(gs_error_message());
                    gs_error_clear();
                    st = GS_ERROR(pst, "%s (%s of run %ld; nothing was run)", msg ? msg : gs_status_name(pst),
                                  f->what, f->run);
                    free(msg);
                    goto cleanup;
                }
                GS_TRY(pst);
            }
            nout++;
        }
    }

    /* an output onto an input: refused whatever the output is, but a character device (a terminal, a
     * null device) holds no data to destroy */
    for (long i = 0; i < l.n; i++) {
        const io_file *in = &l.f[i];
        if (!in->input || !in->exists || S_ISCHR(in->mode)) continue;
        for (long j = 0; j < l.n; j++) {
            const io_file *out = &l.f[j];
            if (out->input || !out->t.exists || out->t.dev != in->dev || out->t.ino != in->ino) continue;
            char a[PATH_LEN + 128], b[PATH_LEN + 128];
            describe(out, sweep, a, sizeof a);
            describe(in, sweep, b, sizeof b);
            GS_FAIL(GS_ERR_ARG,
                    "%s is the same file as %s: writing the output would destroy the input; choose another name for "
                    "the output",
                    a, b);
        }
    }

    /* two outputs onto one file: the second would replace the first */
    if (nout > 1) {
        GS_TRY(GS_MALLOC(order, nout));
        long m = 0;
        for (long i = 0; i < l.n; i++)
            if (!l.f[i].input && replaced(&l.f[i])) order[m++] = &l.f[i];
        qsort(order, (size_t)m, sizeof *order, identity_cmp);
        const io_file *x = NULL, *y = NULL; /* the pair whose second member comes first */
        for (long i = 1; i < m; i++) {
            const io_file *a = order[i - 1], *b = order[i];
            bool same = a->t.exists == b->t.exists &&
                        (a->t.exists ? a->t.dev == b->t.dev && a->t.ino == b->t.ino : !strcmp(a->t.target, b->t.target));
            if (same && (!y || b < y)) {
                x = a;
                y = b;
            }
        }
        if (y) {
            char a[PATH_LEN + 128], b[PATH_LEN + 128];
            describe(x, sweep, a, sizeof a);
            describe(y, sweep, b, sizeof b);
            GS_FAIL(GS_ERR_ARG,
                    "%s and %s are the same file: one output would replace the other; give each output its own "
                    "name%s",
                    a, b, sweep ? " (in a sweep, a path with {index} gives each run its own file)" : "");
        }
    }
cleanup:
    gs_config_destroy(&rc);
    gs_free(&order);
    io_list_free(&l);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* the sweep                                                                                      */

static int usage_or_config_error(const gs_config *cfg)
{
    return gs_app_fail(cfg); /* with JSON output, the error's JSON object too */
}

/* One row of the summary table (or of the dry-run list): numbers right-aligned, text left-aligned
 * (w[c] < 0 marks a text column). */
static void print_row(FILE *f, const int *w, int ncols, char cells[][GS_APP_CELL_LEN])
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
    char(*cells)[GS_APP_CELL_LEN] = NULL;
    GS_TRY(GS_CALLOC(w, ncols));
    GS_TRY(GS_CALLOC(text, ncols));
    GS_TRY(GS_CALLOC(cells, ncols));
    for (int pass = 0; pass < 2; pass++) { /* pass 0: widths; pass 1: print */
        for (long r = -1; r < nrows; r++) {
            int c = 0;
            if (r < 0) {
                snprintf(cells[c++], GS_APP_CELL_LEN, "index");
                for (int k = 0; k < sw->nkeys; k++) snprintf(cells[c++], GS_APP_CELL_LEN, "%s", sw->keys[k]);
                for (int j = 0; outc && j < NOUT; j++) snprintf(cells[c++], GS_APP_CELL_LEN, "%s", out_head[j]);
            } else {
                snprintf(cells[c++], GS_APP_CELL_LEN, "%ld", r);
                for (int k = 0; k < sw->nkeys; k++)
                    snprintf(cells[c++], GS_APP_CELL_LEN, "%s", vals + ((size_t)r * (size_t)sw->nkeys + (size_t)k) * GS_APP_CELL_LEN);
                if (outc) {
                    const gs_app_outcome *o = &outc[r];
                    if (!o->error && o->iterations >= 0)
                        snprintf(cells[c++], GS_APP_CELL_LEN, "%lld", o->iterations);
                    else
                        snprintf(cells[c++], GS_APP_CELL_LEN, "-");
                    snprintf(cells[c++], GS_APP_CELL_LEN, "%s%s", o->error ? "error:" : "", o->reason);
                    if (o->error)
                        snprintf(cells[c++], GS_APP_CELL_LEN, "-");
                    else
                        snprintf(cells[c++], GS_APP_CELL_LEN, "%.4f", o->setup_s);
                    if (o->solved)
                        snprintf(cells[c++], GS_APP_CELL_LEN, "%.4f", o->solve_s);
                    else
                        snprintf(cells[c++], GS_APP_CELL_LEN, "-");
                    if (o->solved && isfinite(o->residual_true))
                        snprintf(cells[c++], GS_APP_CELL_LEN, "%.3e", o->residual_true);
                    else
                        snprintf(cells[c++], GS_APP_CELL_LEN, "-");
                    snprintf(cells[c++], GS_APP_CELL_LEN, "%d", o->exit_code);
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
        GS_TRY(GS_CALLOC(vals, (size_t)sw->nruns * (size_t)(sw->nkeys ? sw->nkeys : 1) * GS_APP_CELL_LEN));
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
            GS_TRY(gs_app_report_provenance(rep, 0));
            GS_TRY(gs_report_string(rep, "matrix.source", o->matrix ? o->matrix : ""));
            GS_TRY(gs_report_string(rep, "status", "dry_run"));
            GS_TRY(gs_config_to_report(rc, rep));
            GS_TRY(gs_app_write_json(rep, &ctx, rc, stdout));
            gs_report_destroy(&rep);
        } else {
            for (int k = 0; k < sw->nkeys; k++)
                gs_app_value_text(rc, sw->keys[k], vals + ((size_t)r * (size_t)sw->nkeys + (size_t)k) * GS_APP_CELL_LEN, GS_APP_CELL_LEN);
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

    if (gs_sweep_plan(cfg, link, &sw) != GS_OK) return usage_or_config_error(cfg);
    bool json = strcmp(gs_config_string(cfg, "output.format"), "json") == 0;
    bool table = !json && sw.nruns > 1 && gs_app_verbosity(cfg) >= GS_VERBOSITY_DEFAULT;
    /* where the outputs go (one path per run for outputs a sweep would otherwise overwrite); then every
     * file is checked before anything is read: a conflict or an unwritable output must not cost a read
     * and a solve, and a dry run says so too */
    run_paths rp;
    rp.hist = o->history ? o->history : gs_config_string(cfg, "output.history");
    rp.sol = o->solution ? o->solution : gs_config_string(cfg, "output.solution");
    rp.index_hist = rp.hist[0] && (o->history || gs_config_count(cfg, "output.history") == 1) &&
                    (sw.nruns > 1 || strstr(rp.hist, "{index}"));
    rp.index_sol = rp.sol[0] && (o->solution || gs_config_count(cfg, "output.solution") == 1) &&
                   (sw.nruns > 1 || strstr(rp.sol, "{index}"));
    bool checked = check_files(o, cfg, &sw, &rp) == GS_OK;
    if (dry && checked) {
        st = dry_run(o, cfg, &sw, json);
        gs_sweep_free(&sw);
        return st == GS_OK ? GS_EXIT_CONVERGED : usage_or_config_error(cfg);
    }

    /* the matrix, once, while the device starts */
    gs_app_prefetch pf;
    gs_app_prefetch_start(&pf, cfg);
    const bool read = checked && gs_app_problem_read(&prob, o->matrix) == GS_OK;
    gs_app_prefetch_finish(&pf, read ? &prob : NULL);
    if (!read) {
        gs_status rst = gs_error_status();
        char *msg = strdup(gs_error_message());
        code = gs_exit_code_for_status(rst);
        fputs("gpusolve: error: ", stderr);
        gs_app_error_print(stderr);
        gs_error_clear();
        /* no run can start; in JSON each run still gets its object, so a .jsonl has every configuration */
        for (long r = 0; json && r < sw.nruns; r++) {
            gs_app_run_ctx ctx = {r, sw.nruns, &sw, NULL, NULL};
            if (gs_sweep_config(cfg, &sw, r, &rc) != GS_OK) {
                code = gs_exit_code_worse(code, usage_or_config_error(cfg));
                break;
            }
            gs_app_report_read_error(o, rc, &ctx, rst, msg ? msg : gs_status_name(rst));
            gs_config_destroy(&rc);
        }
        fflush(stdout);
        free(msg);
        gs_sweep_free(&sw);
        return code;
    }
    have_problem = true;
    if (table)
        printf("sweep: %ld runs over %d varied key%s; matrix %s (%d rows, %d nonzeros) read once in %.3f s\n",
               sw.nruns, sw.nkeys, sw.nkeys == 1 ? "" : "s", o->matrix, prob.A.nrows, prob.A.nnz, prob.time_read);
    GS_TRY(GS_CALLOC(outc, sw.nruns));
    if (table) GS_TRY(GS_CALLOC(vals, (size_t)sw.nruns * (size_t)(sw.nkeys ? sw.nkeys : 1) * GS_APP_CELL_LEN));

    for (long r = 0; r < sw.nruns; r++) {
        char hpath[PATH_LEN], spath[PATH_LEN];
        gs_app_run_ctx ctx = {r, sw.nruns, &sw, NULL, NULL};
        if (rp.index_hist) {
            indexed_path(rp.hist, r, hpath, sizeof hpath);
            ctx.history = hpath;
        }
        if (rp.index_sol) {
            indexed_path(rp.sol, r, spath, sizeof spath);
            ctx.solution = spath;
        }
        GS_TRY(gs_sweep_config(cfg, &sw, r, &rc));
        /* a terminal's progress line names the run (not beside monitor lines) */
        gs_progress_sweep(r, sw.nruns, gs_config_string(rc, "output.monitor")[0] == '\0');
        int rcode = gs_app_run_problem(o, &prob, rc, &ctx, &outc[r]);
        code = gs_exit_code_worse(code, rcode);
        if (vals)
            for (int k = 0; k < sw.nkeys; k++)
                gs_app_value_text(rc, sw.keys[k], vals + ((size_t)r * (size_t)sw.nkeys + (size_t)k) * GS_APP_CELL_LEN, GS_APP_CELL_LEN);
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
    gs_progress_clear();
    if (table) {
        printf("summary\n");
        GS_TRY(print_table(stdout, &sw, vals, outc, done));
        print_tally(stdout, outc, done, sw.nruns, code);
    }
cleanup:
    if (st != GS_OK) code = gs_exit_code_worse(code, usage_or_config_error(cfg));
    fflush(stdout);
    gs_config_destroy(&rc);
    if (have_problem) gs_app_problem_free(&prob);
    gs_free(&outc);
    gs_free(&vals);
    gs_sweep_free(&sw);
    return code;
}
