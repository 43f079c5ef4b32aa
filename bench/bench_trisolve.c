/* Triangular-solve benchmark on the cuda backend: for the L and U of one or more generated or Matrix
 * Market matrices (ILU(0) factors by default, zero pivots shifted, or A's triangles with their
 * diagonal), every GPU solver (cusparse, levelset, syncfree, tiled, auto; reference on request) is
 * analysed and timed in the same run:
 *   analysis  wall time of gs_trisolve_analyse (host work + uploads, device synchronized), and the
 *             solver's own analysis_time / upload_time from its view
 *   solve     W warm-up solves, then R single solves each between two CUDA events (median, min) and
 *             one batch of R back-to-back solves between two events (mean: includes launch overlap)
 * Each result is checked against the host reference (max relative difference is printed), and the
 * level structure reported by the solvers (levels, chains, rows per level) is printed; for tiled,
 * "selected" is its variant and "levels" its tile levels (--param tiled.variant=... forces a variant); for
 * syncfree, "selected" is its schedule, levels or runs, and "levels" the levels of its rows or runs
 * (--param syncfree.schedule=levels|runs|... forces one); for auto, the solver it picked (and its schedule).
 *
 * Before the first timed case every type is analysed and run once on a small factor, so that one-time
 * costs of the process (lazy loading of kernel modules, library initialisation) are not charged to the
 * first matrix. The pinned staging buffer of our uploads is NOT warmed up: the first large analysis
 * pays for it and reports it as staging_alloc_time.
 *
 * usage: bench_trisolve [--gen NAME --n N [--ny N --nz N --peclet P]] [--set] [--matrix FILE]...
 *                       [--factors ilu0|triangles] [--types t1,t2,...] [--reps R] [--warmup W]
 *                       [--device ID] [--json FILE] [--csv] [--no-jacobi] [--merge-stages m1,m2,...]
 *                       [--device-factors] [--param NAME=VALUE]... [--analysis-pool]
 *   --set      the standard set of generated factors: poisson3d 100, laplace27 64, poisson2d 1024,
 *              convdiff3d 100 (--matrix files are added after them; bench/trisolve_set.sh adds every
 *              real matrix with more than 10,000 rows)
 *   --device-factors  analyse each factor from device memory (uploaded before the timer starts) through
 *              gs_trisolve_analyse_dev, the path the preconditioners take after a GPU factorization
 *   --json     appends one JSON object per (matrix, type, side) and one per matrix comparing auto with
 *              cusparse to FILE
 *   --param    a solver parameter for every solver of the run (trisolve/trisolve_params.h names them:
 *              syncfree.schedule=levels, syncfree.warps_per_sm=8, tiled.variant=syncfree, ...)
 *   --analysis-pool  the analyses' work space from cudaMallocAsync's pool (gs_backend_cuda_set_analysis_pool)
 * With several matrices a summary table follows the per-matrix tables, and the last line says whether
 * auto was never slower than cusparse (L+U median per matrix; where auto ran SpSV itself on both factors the
 * two runs are the same solver and are listed as such, not compared). Also times one `jacobi` sweep per factor
 * ("# jacobi_sweep" lines): median/min and the effective bandwidth over nnz*12 + n*(8*3 + 4) bytes.
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "io/mmio.h"
#include "precond/factor.h"
#include "trisolve/trisolve.h"
#include "trisolve/merge_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

#include "bench_util.h"

#define MAX_TYPES 8
#define MAX_CASES 32

/* One matrix of the run: a file, or a generator with its sizes. */
typedef struct {
    const char *matrix, *gen;
    gs_int nx, ny, nz;
} bench_case;

typedef struct {
    const char *factors, *json;
    double peclet;
    int reps, warmup, device, csv, jacobi, devfac;
    int merge_m[8], nmerge; /* --merge-stages: levels per group to time stage by stage */
    gs_trisolve_params prm; /* --param: the solvers' parameters */
    int analysis_pool;      /* --analysis-pool */
    const char *types[MAX_TYPES];
    int ntypes;
    char types_buf[256];
    bench_case cases[MAX_CASES];
    int ncases;
} bench_opts;

typedef struct {
    double analyse, internal_analyse, upload, median, min, batch_mean, rel_err;
    long long levels, chains, max_rows;
    double avg_rows;
    char selected[32];
} bench_result;

/* What the summary keeps of a matrix: L+U medians and analyses per type, auto's picks. */
typedef struct {
    char label[512];
    gs_int n;
    long long levels[2];
    double lu_median[MAX_TYPES], lu_analyse[MAX_TYPES];
    char auto_pick[2][32];
} case_summary;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_trisolve [--gen NAME --n N [--ny N --nz N --peclet P]] [--set] [--matrix FILE]...\n"
            "                      [--factors ilu0|triangles] [--types t1,t2,...] [--reps R] [--warmup W]\n"
            "                      [--device ID] [--json FILE] [--csv] [--no-jacobi] [--merge-stages m1,m2,...]\n"
            "                      [--device-factors] [--param NAME=VALUE]... [--analysis-pool]\n"
            "  NAME: poisson2d poisson3d laplace27 convdiff3d (default poisson3d, n 100)\n"
            "  --set: poisson3d 100, laplace27 64, poisson2d 1024, convdiff3d 100, then the --matrix files\n"
            "  factors: ilu0 = L (unit, strict) and U of ILU(0), zero pivots shifted (default);\n"
            "           triangles = tril(A), triu(A)\n"
            "  types: default cusparse,levelset,syncfree,tiled,auto (reference also allowed: slow)\n"
            "  R: timed solves (default 100, at least 50), W: warm-up solves (default 5)\n"
            "  --json FILE: append JSON lines (one per matrix, type and side; one per matrix: auto vs cusparse)\n"
            "  --merge-stages: for each m, the two solves of syncfree's merged schedule (T_D, then M = I + R)\n"
            "                  built on the host and timed one by one (\"# merged_stages\" lines)\n"
            "  --device-factors: each factor is uploaded first (not timed) and analysed from device memory\n"
            "                    (gs_trisolve_analyse_dev, the path of a GPU factorization)\n"
            "  --param NAME=VALUE: a solver parameter for every solver (trisolve/trisolve_params.h), e.g.\n"
            "                    syncfree.schedule=levels, syncfree.lanes_per_row=1, tiled.variant=syncfree\n"
            "  --analysis-pool: the analyses' work space from cudaMallocAsync's pool\n");
}

static int split_types(bench_opts *o, const char *list)
{
    snprintf(o->types_buf, sizeof o->types_buf, "%s", list);
    o->ntypes = 0;
    for (char *tok = strtok(o->types_buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->ntypes == MAX_TYPES) {
            fprintf(stderr, "bench_trisolve: at most %d types\n", MAX_TYPES);
            return -1;
        }
        o->types[o->ntypes++] = tok;
    }
    return o->ntypes > 0 ? 0 : -1;
}

static int add_case(bench_opts *o, const char *matrix, const char *gen, gs_int nx, gs_int ny, gs_int nz)
{
    if (o->ncases == MAX_CASES) {
        fprintf(stderr, "bench_trisolve: at most %d matrices\n", MAX_CASES);
        return -1;
    }
    bench_case *c = &o->cases[o->ncases++];
    c->matrix = matrix;
    c->gen = gen;
    c->nx = nx;
    c->ny = ny;
    c->nz = nz;
    return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    const char *gen = NULL;
    gs_int nx = 100, ny = 0, nz = 0;
    int set = 0, files = 0;
    memset(o, 0, sizeof *o);
    o->factors = "ilu0";
    o->peclet = 1.0;
    o->reps = 100;
    o->warmup = 5;
    o->jacobi = 1;
    o->prm = gs_trisolve_params_default();
    if (split_types(o, "cusparse,levelset,syncfree,tiled,auto")) return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v = 0;
        int bad = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--csv") == 0) {
            o->csv = 1;
            continue;
        }
        if (strcmp(a, "--set") == 0) {
            set = 1;
            continue;
        }
        if (strcmp(a, "--merge-stages") == 0 && i + 1 < argc) {
            char buf[128], *save = NULL;
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                long mv = 0;
                if (o->nmerge >= 8 || bench_parse_int("bench_trisolve", tok, "--merge-stages", 1, GS_SF_MERGE_MAX, &mv))
                    return -1;
                o->merge_m[o->nmerge++] = (int)mv;
            }
            continue;
        }
        if (strcmp(a, "--no-jacobi") == 0) {
            o->jacobi = 0;
            continue;
        }
        if (strcmp(a, "--device-factors") == 0) {
            o->devfac = 1;
            continue;
        }
        if (strcmp(a, "--analysis-pool") == 0) {
            o->analysis_pool = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_trisolve: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--gen") == 0) {
            gen = val;
        } else if (strcmp(a, "--matrix") == 0) {
            files++;
        } else if (strcmp(a, "--factors") == 0) {
            if (strcmp(val, "ilu0") != 0 && strcmp(val, "triangles") != 0) {
                fprintf(stderr, "bench_trisolve: --factors expects ilu0 or triangles, got \"%s\"\n", val);
                bad = -1;
            }
            o->factors = val;
        } else if (strcmp(a, "--types") == 0) {
            bad = split_types(o, val);
        } else if (strcmp(a, "--json") == 0) {
            o->json = val;
        } else if (strcmp(a, "--n") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            nx = (gs_int)v;
        } else if (strcmp(a, "--ny") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            ny = (gs_int)v;
        } else if (strcmp(a, "--nz") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            nz = (gs_int)v;
        } else if (strcmp(a, "--reps") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 50, 100000000, &v);
            o->reps = (int)v;
        } else if (strcmp(a, "--warmup") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 0, 1000000, &v);
            o->warmup = (int)v;
        } else if (strcmp(a, "--device") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 0, 1024, &v);
            o->device = (int)v;
        } else if (strcmp(a, "--peclet") == 0) {
            bad = bench_parse_double("bench_trisolve", val, a, &o->peclet);
        } else if (strcmp(a, "--param") == 0) {
            if (gs_trisolve_params_set(&o->prm, val, NULL) != GS_OK) {
                fprintf(stderr, "bench_trisolve: --param %s: %s\n", val, gs_error_message());
                gs_error_clear();
                bad = -1;
            }
        } else {
            fprintf(stderr, "bench_trisolve: unknown option %s\n", a);
            bad = -1;
        }
        if (bad) return -1;
    }
    /* the cases in order: the standard set, the --gen case, the files in command-line order */
    if (set) {
        if (add_case(o, NULL, "poisson3d", 100, 0, 0) || add_case(o, NULL, "laplace27", 64, 0, 0) ||
            add_case(o, NULL, "poisson2d", 1024, 0, 0) || add_case(o, NULL, "convdiff3d", 100, 0, 0))
            return -1;
    }
    if (gen || (!set && !files))
        if (add_case(o, NULL, gen ? gen : "poisson3d", nx, ny, nz)) return -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--matrix") == 0 && i + 1 < argc && add_case(o, argv[i + 1], NULL, 0, 0, 0)) return -1;
    return 0;
}

static long long report_int(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    return e && e->type == GS_REPORT_INT ? e->i : -1;
}

static double report_double(const gs_report *rep, const char *key)
{
    const gs_report_entry *e = gs_report_find(rep, key);
    return e && e->type == GS_REPORT_DOUBLE ? e->d : -1.0;
}

/* one solve x = T^{-1} b, the operation timed by bench_time_events */
typedef struct {
    gs_trisolve *ts;
    const gs_vector *b;
    gs_vector *x;
} solve_ctx;

static gs_status solve_once(void *ctx)
{
    solve_ctx *c = ctx;
    return gs_trisolve_solve(c->ts, c->b, c->x);
}

/* The JSON line of one (matrix, type, side): the measurements and the solver's whole view. */
static gs_status write_json_line(FILE *f, const char *label, const gs_csr *T, const char *factors, const char *type,
                                 int side, const bench_result *r, const gs_report *view)
{
    gs_status st = GS_OK;
    gs_report *rep = NULL;
    GS_TRY(gs_report_create(&rep));
    GS_TRY(gs_report_string(rep, "bench", "trisolve"));
    GS_TRY(gs_report_string(rep, "matrix", label));
    GS_TRY(gs_report_int(rep, "n", T->nrows));
    GS_TRY(gs_report_int(rep, "nnz_factor", T->nnz));
    GS_TRY(gs_report_string(rep, "factors", factors));
    GS_TRY(gs_report_string(rep, "type", type));
    GS_TRY(gs_report_string(rep, "side", side ? "U" : "L"));
    GS_TRY(gs_report_string(rep, "selected", r->selected));
    GS_TRY(gs_report_double(rep, "analyse_ms", 1e3 * r->analyse));
    GS_TRY(gs_report_double(rep, "median_us", 1e6 * r->median));
    GS_TRY(gs_report_double(rep, "min_us", 1e6 * r->min));
    GS_TRY(gs_report_double(rep, "batch_us", 1e6 * r->batch_mean));
    GS_TRY(gs_report_double(rep, "rel_err", r->rel_err));
    for (int k = 0; k < view->n; k++) { /* "ts.<key>" -> "trisolve.<key>" */
        const gs_report_entry *e = &view->e[k];
        char key[256];
        GS_TRY(gs_report_keyf(key, sizeof key, "trisolve.%s", e->key + 3));
        switch (e->type) {
        case GS_REPORT_INT: GS_TRY(gs_report_int(rep, key, e->i)); break;
        case GS_REPORT_DOUBLE: GS_TRY(gs_report_double(rep, key, e->d)); break;
        case GS_REPORT_STRING: GS_TRY(gs_report_string(rep, key, e->s)); break;
        case GS_REPORT_BOOL: GS_TRY(gs_report_bool(rep, key, e->i != 0)); break;
        case GS_REPORT_JSON: GS_TRY(gs_report_json(rep, key, e->s)); break;
        }
    }
    gs_report_write_json(rep, f);
cleanup:
    gs_report_destroy(&rep);
    return st;
}

/* Analyse T with `type`, time warm-up + reps solves, compare with the host solution xref; the view
 * ("ts.*") is left in *view_out when not NULL (caller destroys). */
static gs_status bench_one(const bench_opts *o, gs_backend *be, const char *type, const gs_csr *T, gs_uplo uplo,
                           bool unit, const gs_vector *b, gs_vector *x, const double *xref, double *t,
                           double *hx, bench_result *r, gs_report **view_out)
{
    gs_status st = GS_OK;
    gs_trisolve *ts = NULL;
    gs_report *rep = NULL;
    void *dfac = NULL;
    gs_csr_dev dT;
    memset(r, 0, sizeof *r);
    memset(&dT, 0, sizeof dT);
    gs_int n = T->nrows;

    GS_TRY(gs_trisolve_create(type, be, uplo, unit, &o->prm, &ts));
    if (o->devfac) { /* the factor in device memory first (not timed), as a GPU factorization leaves it */
        const size_t nz = (size_t)T->nnz;
        const size_t voff = (((size_t)n + 1 + nz) * sizeof(gs_int) + 255) / 256 * 256; /* values 256-aligned */
        GS_TRY(gs_backend_alloc(be, &dfac, voff + nz * sizeof(double)));
        gs_int *drow = (gs_int *)dfac, *dcol = drow + n + 1;
        double *dval = (double *)((char *)dfac + voff);
        GS_TRY(gs_backend_upload(be, drow, T->rowptr, ((size_t)n + 1) * sizeof(gs_int)));
        GS_TRY(gs_backend_upload(be, dcol, T->colind, nz * sizeof(gs_int)));
        GS_TRY(gs_backend_upload(be, dval, T->val, nz * sizeof(double)));
        dT.nrows = dT.ncols = n;
        dT.nnz = T->nnz;
        dT.rowptr = drow;
        dT.colind = dcol;
        dT.val = dval;
    }
    GS_TRY(gs_backend_synchronize(be));
    double t0 = gs_wtime();
    if (o->devfac) GS_TRY(gs_trisolve_analyse_dev(ts, &dT));
    else GS_TRY(gs_trisolve_analyse(ts, T));
    GS_TRY(gs_backend_synchronize(be));
    r->analyse = gs_wtime() - t0;

    solve_ctx sc = {ts, b, x};
    GS_TRY(bench_time_events(be, solve_once, &sc, o->warmup, o->reps, t, &r->median, &r->min, &r->batch_mean));

    GS_TRY(gs_vec_download(x, hx));
    r->rel_err = bench_rel_diff(n, hx, xref);

    GS_TRY(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "ts");
    r->levels = report_int(rep, "ts.levels");
    r->chains = report_int(rep, "ts.chains");
    r->max_rows = report_int(rep, "ts.max_rows_per_level");
    r->avg_rows = report_double(rep, "ts.avg_rows_per_level");
    r->internal_analyse = report_double(rep, "ts.analysis_time");
    r->upload = report_double(rep, "ts.upload_time");
    if (r->levels < 0) r->levels = report_int(rep, "ts.tile_levels"); /* tiled */
    /* auto: the solver it picked; tiled: its variant; syncfree (also under auto): its schedule */
    const gs_report_entry *e = gs_report_find(rep, "ts.selected");
    if (!e) e = gs_report_find(rep, "ts.variant");
    const gs_report_entry *sch = gs_report_find(rep, "ts.schedule");
    const char *sel = e && e->type == GS_REPORT_STRING ? e->s : "";
    const char *sched = sch && sch->type == GS_REPORT_STRING ? sch->s : "";
    snprintf(r->selected, sizeof r->selected, "%s%s%s", sel, sel[0] && sched[0] ? "/" : "", sched);
    if (view_out) {
        *view_out = rep;
        rep = NULL;
    }
cleanup:
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts);
    gs_backend_free(be, dfac);
    return st;
}

/* The two solves of syncfree's merged schedule, one by one: T_D and M built on the host
 * (gs_ts_merge_build_host), each analysed by syncfree with the level order forced (the run's other
 * parameters kept), each timed like a
 * solver; prints one "# merged_stages" line per m with the levels, rows per level and entries of each
 * stage and the relative error of x = M^{-1} T_D^{-1} b. */
static gs_status bench_merge_stages(const bench_opts *o, gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit,
                                    const gs_vector *b, gs_vector *x, const double *xref, double *t, double *hx)
{
    gs_status st = GS_OK;
    gs_csr TD = {0}, M = {0};
    gs_trisolve *ts[2] = {NULL, NULL};
    gs_vector *y = NULL;
    gs_report *rep = NULL;
    gs_trisolve_params prm = o->prm;
    prm.syncfree.schedule = GS_SF_SCHEDULE_LEVELS;
    GS_TRY(gs_vec_create(be, T->nrows, &y));
    for (int k = 0; k < o->nmerge; k++) {
        gs_ts_merge_stats ms;
        double med[2], mn[2], batch[2];
        long long lv[2], warps[2];
        GS_TRY(gs_ts_merge_build_host(T, uplo, unit, o->merge_m[k], (long long)1 << 40, &TD, &M, &ms));
        GS_TRY(gs_trisolve_create("syncfree", be, uplo, unit, &prm, &ts[0]));
        GS_TRY(gs_trisolve_create("syncfree", be, uplo, true, &prm, &ts[1]));
        GS_TRY(gs_trisolve_analyse(ts[0], &TD));
        GS_TRY(gs_trisolve_analyse(ts[1], &M));
        for (int s = 0; s < 2; s++) {
            solve_ctx sc = {ts[s], s == 0 ? b : y, s == 0 ? y : x};
            GS_TRY(bench_time_events(be, solve_once, &sc, o->warmup, o->reps, t, &med[s], &mn[s], &batch[s]));
            GS_TRY(gs_report_create(&rep));
            gs_trisolve_view(ts[s], rep, "ts");
            lv[s] = report_int(rep, "ts.levels");
            warps[s] = report_int(rep, "ts.warps");
            gs_report_destroy(&rep);
        }
        GS_TRY(gs_vec_download(x, hx));
        printf("# merged_stages side=%s m=%d levels=%d td_levels=%lld td_offdiag=%lld td_warps=%lld td_us=%.2f "
               "m_levels=%lld m_nnz=%lld m_max_row=%d m_rows_per_level=%.0f m_warps=%lld m_us=%.2f total_us=%.2f "
               "growth=%.3g rel_err=%.2e\n",
               uplo == GS_LOWER ? "L" : "U", (int)ms.m, (int)ms.levels, lv[0], ms.nnz_td_off, warps[0], 1e6 * med[0],
               lv[1], ms.nnz_r, (int)ms.max_row_r, lv[1] > 0 ? (double)T->nrows / (double)lv[1] : 0.0, warps[1],
               1e6 * med[1], 1e6 * (med[0] + med[1]), ms.growth, bench_rel_diff(T->nrows, hx, xref));
        gs_trisolve_destroy(&ts[0]);
        gs_trisolve_destroy(&ts[1]);
        gs_csr_free(&TD);
        gs_csr_free(&M);
    }
cleanup:
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts[0]);
    gs_trisolve_destroy(&ts[1]);
    gs_csr_free(&TD);
    gs_csr_free(&M);
    gs_vec_destroy(&y);
    return st;
}

/* One `jacobi` sweep (sweeps = 1: a single fused kernel x = D^{-1}(b - (T - D) D^{-1} b), replayed from
 * its graph): median and min of R single solves between CUDA events, and the effective bandwidth over
 * the factor's bytes nnz*12 (column index + value) + n*(8*3 + 4) (b, the iterate read, x written, row
 * pointer), the traffic a sweep cannot avoid. */
static gs_status bench_jacobi_sweep(const bench_opts *o, gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit,
                                    const gs_vector *b, gs_vector *x, double *t, double *median, double *min)
{
    gs_status st = GS_OK;
    gs_trisolve *ts = NULL;
    gs_trisolve_params prm = o->prm;
    prm.sweeps = 1;
    GS_TRY(gs_trisolve_create("jacobi", be, uplo, unit, &prm, &ts));
    GS_TRY(gs_trisolve_analyse(ts, T));
    solve_ctx sc = {ts, b, x};
    GS_TRY(bench_time_events(be, solve_once, &sc, o->warmup + 1, o->reps, t, median, min, NULL)); /* + 1: sets b, x */
cleanup:
    gs_trisolve_destroy(&ts);
    return st;
}

/* L and U: ILU(0) with zero pivots shifted (real matrices may have structurally zero diagonals), or A's
 * triangles with their diagonal. */
static gs_status make_factors(const char *factors, const gs_csr *A, gs_csr *L, gs_csr *U, bool *unit_L)
{
    if (strcmp(factors, "ilu0") == 0) {
        gs_factor_opts fo;
        gs_factor_info info;
        memset(&fo, 0, sizeof fo);
        memset(&info, 0, sizeof info);
        fo.zero_pivot = GS_ZERO_PIVOT_SHIFT;
        fo.shift = 1e-8;
        GS_CALL(gs_iluk_symbolic(A, 0, L, U));
        GS_CALL(gs_ilu_numeric(A, &fo, L, U, &info));
        if (info.nshifted > 0)
            printf("# ILU(0): %d pivots shifted (first at row %d)\n", (int)info.nshifted, (int)info.first_shifted + 1);
        *unit_L = true;
    } else {
        GS_CALL(gs_csr_lower(A, true, L));
        GS_CALL(gs_csr_upper(A, true, U));
        *unit_L = false;
    }
    return GS_OK;
}

/* Every type analysed and run once on the ILU(0) factors of a 40 x 40 Poisson matrix (module loading,
 * library initialisation). Failures are reported here, at the start. */
static gs_status warm_up_types(const bench_opts *o, gs_backend *be)
{
    gs_status st = GS_OK;
    gs_csr A = {0}, F[2] = {{0}, {0}};
    gs_vector *b = NULL, *x = NULL;
    gs_trisolve *ts = NULL;
    bool unit_L = false;
    GS_TRY(gs_gen_by_name("poisson2d", 40, 40, 1, 1.0, &A));
    GS_TRY(make_factors("ilu0", &A, &F[0], &F[1], &unit_L));
    GS_TRY(gs_vec_create(be, A.nrows, &b));
    GS_TRY(gs_vec_create(be, A.nrows, &x));
    GS_TRY(gs_vec_set(b, 1.0));
    for (int k = 0; k < o->ntypes; k++)
        for (int s = 0; s < 2; s++) {
            GS_TRY(gs_trisolve_create(o->types[k], be, (gs_uplo)s, s == 0 && unit_L, &o->prm, &ts));
            GS_TRY(gs_trisolve_analyse(ts, &F[s]));
            GS_TRY(gs_trisolve_solve(ts, b, x));
            GS_TRY(gs_backend_synchronize(be));
            gs_trisolve_destroy(&ts);
        }
cleanup:
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_csr_free(&A);
    gs_csr_free(&F[0]);
    gs_csr_free(&F[1]);
    return st;
}

/* The JSON line comparing auto with cusparse on one matrix (L+U medians). */
static void write_json_summary(FILE *f, const bench_opts *o, const case_summary *cs, int k_auto, int k_csp)
{
    fprintf(f, "{\"bench\": \"trisolve_auto_vs_cusparse\", \"matrix\": ");
    gs_json_write_string(f, cs->label);
    fprintf(f, ", \"n\": %d, \"factors\": ", (int)cs->n);
    gs_json_write_string(f, o->factors);
    fprintf(f, ", \"auto_picked_L\": ");
    gs_json_write_string(f, cs->auto_pick[0]);
    fprintf(f, ", \"auto_picked_U\": ");
    gs_json_write_string(f, cs->auto_pick[1]);
    fprintf(f, ", \"auto_lu_median_us\": %.3f, \"cusparse_lu_median_us\": %.3f, \"auto_lu_analyse_ms\": %.4f, "
               "\"cusparse_lu_analyse_ms\": %.4f, \"auto_not_slower\": %s}\n",
            1e6 * cs->lu_median[k_auto], 1e6 * cs->lu_median[k_csp], 1e3 * cs->lu_analyse[k_auto],
            1e3 * cs->lu_analyse[k_csp], cs->lu_median[k_auto] <= cs->lu_median[k_csp] ? "true" : "false");
}

/* One matrix: factors, host reference solutions, every type on L and U, the tables. */
static gs_status bench_case_run(const bench_opts *o, const bench_case *bc, gs_backend *be, gs_backend *host, FILE *jf,
                                case_summary *cs)
{
    gs_status st = GS_OK;
    gs_csr A = {0}, F[2] = {{0}, {0}};
    bool unit[2] = {false, false};
    gs_vector *b = NULL, *x = NULL, *hb = NULL, *hxr = NULL;
    gs_trisolve *ref = NULL;
    gs_report *view = NULL;
    double *t = NULL, *hx = NULL, *xref[2] = {NULL, NULL}, *bh = NULL;
    bench_result res[MAX_TYPES][2];
    char label[512];

    memset(cs, 0, sizeof *cs);
    GS_TRY(bench_load_matrix(bc->matrix, bc->gen, bc->nx, bc->ny, bc->nz, o->peclet, &A, label, sizeof label));
    if (A.nrows != A.ncols) GS_FAIL(GS_ERR_ARG, "%s is %d x %d; expected a square matrix", label, (int)A.nrows, (int)A.ncols);
    {
        const char *slash = strrchr(label, '/');
        snprintf(cs->label, sizeof cs->label, "%s", slash ? slash + 1 : label);
    }
    double tf = gs_wtime();
    GS_TRY(make_factors(o->factors, &A, &F[0], &F[1], &unit[0]));
    tf = gs_wtime() - tf;
    gs_int n = A.nrows;
    cs->n = n;

    printf("# %s: n = %d, nnz(A) = %d; factors %s: nnz(L) = %d%s, nnz(U) = %d (%.3f s on the host)\n", label,
           (int)n, (int)A.nnz, o->factors, (int)F[0].nnz, unit[0] ? " (unit, strict)" : "", (int)F[1].nnz, tf);
    printf("# device: %s; %d warm-up solves, %d timed solves (median/min of single CUDA-event timings, "
           "batch = mean of %d back-to-back)\n", be->device_name, o->warmup, o->reps, o->reps);

    GS_TRY(GS_MALLOC(t, o->reps));
    GS_TRY(GS_MALLOC(hx, n));
    GS_TRY(GS_MALLOC(bh, n));
    for (gs_int i = 0; i < n; i++) bh[i] = 1.0 + (double)(i % 7) / 7.0;
    GS_TRY(gs_vec_create(be, n, &b));
    GS_TRY(gs_vec_create(be, n, &x));
    GS_TRY(gs_vec_upload(b, bh));
    GS_TRY(gs_vec_create(host, n, &hb));
    GS_TRY(gs_vec_create(host, n, &hxr));
    GS_TRY(gs_vec_upload(hb, bh));
    for (int s = 0; s < 2; s++) { /* host reference solutions */
        GS_TRY(GS_MALLOC(xref[s], n));
        GS_TRY(gs_trisolve_create("reference", host, (gs_uplo)s, unit[s], NULL, &ref));
        GS_TRY(gs_trisolve_analyse(ref, &F[s]));
        GS_TRY(gs_trisolve_solve(ref, hb, hxr));
        GS_TRY(gs_vec_download(hxr, xref[s]));
        gs_trisolve_destroy(&ref);
    }

    for (int k = 0; k < o->ntypes; k++)
        for (int s = 0; s < 2; s++) {
            GS_TRY(bench_one(o, be, o->types[k], &F[s], (gs_uplo)s, unit[s], b, x, xref[s], t, hx, &res[k][s], &view));
            if (jf) GS_TRY(write_json_line(jf, cs->label, &F[s], o->factors, o->types[k], s, &res[k][s], view));
            gs_report_destroy(&view);
            if (strcmp(o->types[k], "auto") == 0)
                snprintf(cs->auto_pick[s], sizeof cs->auto_pick[s], "%s", res[k][s].selected);
            if (res[k][s].levels > 0 && cs->levels[s] == 0 &&
                (strcmp(o->types[k], "levelset") == 0 || strcmp(o->types[k], "syncfree") == 0))
                cs->levels[s] = res[k][s].levels;
            fflush(stdout);
        }
    for (int k = 0; k < o->ntypes; k++) {
        cs->lu_median[k] = res[k][0].median + res[k][1].median;
        cs->lu_analyse[k] = res[k][0].analyse + res[k][1].analyse;
    }

    if (o->csv) {
        printf("matrix,n,factors,type,side,selected,analyse_ms,internal_analysis_ms,upload_ms,solve_median_us,"
               "solve_min_us,solve_batch_us,rel_err,levels,chains,max_rows_per_level,avg_rows_per_level\n");
        for (int k = 0; k < o->ntypes; k++)
            for (int s = 0; s < 2; s++) {
                const bench_result *r = &res[k][s];
                printf("\"%s\",%d,%s,%s,%s,%s,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.2e,%lld,%lld,%lld,%.1f\n", label, (int)n,
                       o->factors, o->types[k], s ? "U" : "L", r->selected, 1e3 * r->analyse, 1e3 * r->internal_analyse,
                       1e3 * r->upload, 1e6 * r->median, 1e6 * r->min, 1e6 * r->batch_mean, r->rel_err, r->levels,
                       r->chains, r->max_rows, r->avg_rows);
            }
    } else {
        printf("%-10s %-4s %-16s %11s %11s %10s %11s %11s %11s %10s %8s %7s %9s %9s\n", "type", "side", "selected",
               "analyse_ms", "internal_ms", "upload_ms", "median_us", "min_us", "batch_us", "rel_err", "levels",
               "chains", "max_rows", "avg_rows");
        for (int k = 0; k < o->ntypes; k++)
            for (int s = 0; s < 2; s++) {
                const bench_result *r = &res[k][s];
                char internal[32] = "-", upload[32] = "-"; /* "-": the solver does not report it */
                if (r->internal_analyse >= 0) snprintf(internal, sizeof internal, "%.3f", 1e3 * r->internal_analyse);
                if (r->upload >= 0) snprintf(upload, sizeof upload, "%.3f", 1e3 * r->upload);
                printf("%-10s %-4s %-16s %11.3f %11s %10s %11.2f %11.2f %11.2f %10.2e %8lld %7lld %9lld %9.1f\n",
                       o->types[k], s ? "U" : "L", r->selected[0] ? r->selected : "-", 1e3 * r->analyse, internal,
                       upload, 1e6 * r->median, 1e6 * r->min, 1e6 * r->batch_mean, r->rel_err, r->levels, r->chains,
                       r->max_rows, r->avg_rows);
            }
        printf("\n%-10s %16s %16s   (one preconditioner application: L then U solve)\n", "type",
               "L+U median_us", "L+U analyse_ms");
        for (int k = 0; k < o->ntypes; k++)
            printf("%-10s %16.2f %16.3f\n", o->types[k], 1e6 * cs->lu_median[k], 1e3 * cs->lu_analyse[k]);
    }
    for (int s = 0; o->nmerge > 0 && s < 2; s++)
        GS_TRY(bench_merge_stages(o, be, &F[s], (gs_uplo)s, unit[s], b, x, xref[s], t, hx));
    /* one jacobi sweep per factor and its effective bandwidth ('#' lines: the CSV stays parseable) */
    for (int s = 0; o->jacobi && s < 2; s++) {
        double med = 0.0, mn = 0.0;
        GS_TRY(bench_jacobi_sweep(o, be, &F[s], (gs_uplo)s, unit[s], b, x, t, &med, &mn));
        double bytes = 12.0 * (double)F[s].nnz + (8.0 * 3 + 4) * (double)n;
        printf("# jacobi_sweep side=%s nnz=%d bytes=%.0f median_us=%.2f min_us=%.2f GB/s(median)=%.1f "
               "GB/s(min)=%.1f\n", s ? "U" : "L", (int)F[s].nnz, bytes, 1e6 * med, 1e6 * mn,
               med > 0 ? 1e-9 * bytes / med : 0.0, mn > 0 ? 1e-9 * bytes / mn : 0.0);
    }
    printf("\n");
cleanup:
    gs_report_destroy(&view);
    gs_trisolve_destroy(&ref);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&hb);
    gs_vec_destroy(&hxr);
    gs_free(&t);
    gs_free(&hx);
    gs_free(&bh);
    gs_free(&xref[0]);
    gs_free(&xref[1]);
    gs_csr_free(&A);
    gs_csr_free(&F[0]);
    gs_csr_free(&F[1]);
    return st;
}

/* The summary over all matrices and the verdict "auto never slower than cusparse" (L+U medians). */
static void print_summary(const bench_opts *o, const case_summary *cs, int ncases, FILE *jf)
{
    int k_auto = -1, k_csp = -1;
    for (int k = 0; k < o->ntypes; k++) {
        if (strcmp(o->types[k], "auto") == 0) k_auto = k;
        if (strcmp(o->types[k], "cusparse") == 0) k_csp = k;
    }
    printf("# summary: L+U median us per type (L+U analyse ms in brackets)\n");
    printf("%-24s %9s %11s", "matrix", "n", "levels L/U");
    for (int k = 0; k < o->ntypes; k++) printf(" %22s", o->types[k]);
    if (k_auto >= 0) printf("  %-32s", "auto picked L/U");
    printf("\n");
    for (int c = 0; c < ncases; c++) {
        char lv[32];
        snprintf(lv, sizeof lv, "%lld/%lld", cs[c].levels[0], cs[c].levels[1]);
        printf("%-24s %9d %11s", cs[c].label, (int)cs[c].n, lv);
        for (int k = 0; k < o->ntypes; k++) {
            char cell[48];
            snprintf(cell, sizeof cell, "%.1f (%.2f)", 1e6 * cs[c].lu_median[k], 1e3 * cs[c].lu_analyse[k]);
            printf(" %22s", cell);
        }
        if (k_auto >= 0) printf("  %s/%s", cs[c].auto_pick[0], cs[c].auto_pick[1]);
        printf("\n");
    }
    if (k_auto < 0 || k_csp < 0) {
        printf("auto never slower than cusparse: not measured (--types needs auto and cusparse)\n");
        return;
    }
    /* Strict on the L+U medians, except where auto ran cuSPARSE SpSV itself on both factors: the same solver,
     * so a difference is the run-to-run noise of SpSV (listed as such, with the two timings). */
    char slower[1024] = "", same[1024] = "";
    size_t used = 0, sused = 0;
    for (int c = 0; c < ncases; c++) {
        if (jf) write_json_summary(jf, o, &cs[c], k_auto, k_csp);
        const bool is_cusparse = strcmp(cs[c].auto_pick[0], "cusparse") == 0 && strcmp(cs[c].auto_pick[1], "cusparse") == 0;
        if (is_cusparse) {
            int w = snprintf(same + sused, sizeof same - sused, "%s%s %.1f vs %.1f us", sused ? ", " : "", cs[c].label,
                             1e6 * cs[c].lu_median[k_auto], 1e6 * cs[c].lu_median[k_csp]);
            if (w > 0 && (size_t)w < sizeof same - sused) sused += (size_t)w;
            continue;
        }
        if (cs[c].lu_median[k_auto] <= cs[c].lu_median[k_csp]) continue;
        int w = snprintf(slower + used, sizeof slower - used, "%s%s %.1f vs %.1f us", used ? ", " : "", cs[c].label,
                         1e6 * cs[c].lu_median[k_auto], 1e6 * cs[c].lu_median[k_csp]);
        if (w > 0 && (size_t)w < sizeof slower - used) used += (size_t)w;
    }
    if (used == 0)
        printf("auto never slower than cusparse: yes (%d matrices, L+U median%s%s)\n", ncases,
               sused ? "; auto ran cuSPARSE SpSV itself on " : "", same);
    else printf("auto never slower than cusparse: no (%s)\n", slower);
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL, *host = NULL;
    case_summary *cs = NULL;
    FILE *jf = NULL;

    GS_TRY(gs_backend_create("cuda", o->device, &be));
    if (o->analysis_pool) gs_backend_cuda_set_analysis_pool(be, true);
    GS_TRY(gs_backend_create("host", 0, &host));
    if (o->json) {
        jf = fopen(o->json, "a");
        if (!jf) GS_FAIL(GS_ERR_IO, "cannot open %s for appending the JSON lines", o->json);
    }
    GS_TRY(GS_CALLOC(cs, o->ncases));
    GS_TRY(warm_up_types(o, be));
    for (int c = 0; c < o->ncases; c++) {
        GS_TRY(bench_case_run(o, &o->cases[c], be, host, jf, &cs[c]));
        if (jf) fflush(jf);
    }
    if (o->ncases > 1 || o->json) print_summary(o, cs, o->ncases, jf);
cleanup:
    if (jf && fclose(jf) != 0 && st == GS_OK) st = GS_ERROR(GS_ERR_IO, "writing %s failed", o->json);
    gs_free(&cs);
    gs_backend_destroy(&be);
    gs_backend_destroy(&host);
    return st;
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (bench_require_gpu("bench_trisolve")) return 77;
    if (bench(&o) != GS_OK) {
        gs_error_print(stderr);
        return 1;
    }
    return 0;
}
