/* Triangular-solve benchmark on the cuda backend: for the L and U of a generated or Matrix Market
 * matrix (ILU(0) factors by default, or A's triangles with their diagonal), every GPU solver
 * (cusparse, levelset, syncfree, tiled, auto; reference on request) is analysed and timed in the same run:
 *   analysis  wall time of gs_trisolve_analyse (host work + uploads + captures, device synchronized)
 *   solve     W warm-up solves, then R single solves each between two CUDA events (median, min) and
 *             one batch of R back-to-back solves between two events (mean: includes launch overlap)
 * Each result is checked against the host reference (max relative difference is printed), and the
 * level structure reported by the level-set solver (levels, chains, rows per level) is printed; for
 * tiled, "selected" is its variant and "levels" its tile levels (GS_TILED_VARIANT forces a variant).
 *
 * usage: bench_trisolve [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx]
 *                       [--factors ilu0|triangles] [--types t1,t2,...] [--reps R] [--warmup W]
 *                       [--device ID] [--csv]
 * Also times one `jacobi` sweep per factor ("# jacobi_sweep" lines): median/min and the effective
 * bandwidth over nnz*12 + n*(8*3 + 4) bytes.
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "io/mmio.h"
#include "precond/factor.h"
#include "trisolve/trisolve.h"

#include "bench_util.h"

#define MAX_TYPES 8

typedef struct {
    const char *gen, *matrix, *factors;
    gs_int nx, ny, nz;
    double peclet;
    int reps, warmup, device, csv;
    const char *types[MAX_TYPES];
    int ntypes;
    char types_buf[256];
} bench_opts;

typedef struct {
    double analyse, median, min, batch_mean, rel_err;
    long long levels, chains, max_rows;
    double avg_rows;
    char selected[32];
} bench_result;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_trisolve [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx]\n"
            "                      [--factors ilu0|triangles] [--types t1,t2,...] [--reps R] [--warmup W]\n"
            "                      [--device ID] [--csv]\n"
            "  NAME: poisson2d poisson3d laplace27 convdiff3d (default poisson3d, n 100)\n"
            "  factors: ilu0 = L (unit, strict) and U of ILU(0) (default); triangles = tril(A), triu(A)\n"
            "  types: default cusparse,levelset,syncfree,tiled,auto (reference also allowed: slow)\n"
            "  R: timed solves (default 100, at least 50), W: warm-up solves (default 5)\n");
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

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gen = "poisson3d";
    o->factors = "ilu0";
    o->nx = 100;
    o->peclet = 1.0;
    o->reps = 100;
    o->warmup = 5;
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
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_trisolve: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--gen") == 0) {
            o->gen = val;
            o->matrix = NULL;
        } else if (strcmp(a, "--matrix") == 0) {
            o->matrix = val;
        } else if (strcmp(a, "--factors") == 0) {
            if (strcmp(val, "ilu0") != 0 && strcmp(val, "triangles") != 0) {
                fprintf(stderr, "bench_trisolve: --factors expects ilu0 or triangles, got \"%s\"\n", val);
                bad = -1;
            }
            o->factors = val;
        } else if (strcmp(a, "--types") == 0) {
            bad = split_types(o, val);
        } else if (strcmp(a, "--n") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            o->nx = (gs_int)v;
        } else if (strcmp(a, "--ny") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            o->ny = (gs_int)v;
        } else if (strcmp(a, "--nz") == 0) {
            bad = bench_parse_int("bench_trisolve", val, a, 1, GS_INT_MAX, &v);
            o->nz = (gs_int)v;
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
            char *end = NULL;
            o->peclet = strtod(val, &end);
            if (!val[0] || *end) {
                fprintf(stderr, "bench_trisolve: --peclet expects a number, got \"%s\"\n", val);
                bad = -1;
            }
        } else {
            fprintf(stderr, "bench_trisolve: unknown option %s\n", a);
            bad = -1;
        }
        if (bad) return -1;
    }
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

/* Analyse T with `type`, time warm-up + reps solves, compare with the host solution xref. */
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

static gs_status bench_one(const bench_opts *o, gs_backend *be, const char *type, const gs_csr *T, gs_uplo uplo,
                           bool unit, const gs_vector *b, gs_vector *x, const double *xref, double *t,
                           double *hx, bench_result *r)
{
    gs_status st = GS_OK;
    gs_trisolve *ts = NULL;
    gs_report *rep = NULL;
    memset(r, 0, sizeof *r);
    gs_int n = T->nrows;

    GS_TRY(gs_trisolve_create(type, be, uplo, unit, NULL, &ts));
    GS_TRY(gs_backend_synchronize(be));
    double t0 = gs_wtime();
    GS_TRY(gs_trisolve_analyse(ts, T));
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
    if (r->levels < 0) r->levels = report_int(rep, "ts.tile_levels"); /* tiled */
    const gs_report_entry *e = gs_report_find(rep, "ts.selected");
    if (!e) e = gs_report_find(rep, "ts.variant"); /* tiled */
    snprintf(r->selected, sizeof r->selected, "%s", e && e->type == GS_REPORT_STRING ? e->s : "");
cleanup:
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts);
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
    gs_trisolve_params prm = {1, NULL, false};
    GS_TRY(gs_trisolve_create("jacobi", be, uplo, unit, &prm, &ts));
    GS_TRY(gs_trisolve_analyse(ts, T));
    solve_ctx sc = {ts, b, x};
    GS_TRY(bench_time_events(be, solve_once, &sc, o->warmup + 1, o->reps, t, median, min, NULL)); /* + 1: sets b, x */
cleanup:
    gs_trisolve_destroy(&ts);
    return st;
}

static gs_status make_factors(const bench_opts *o, const gs_csr *A, gs_csr *L, gs_csr *U, bool *unit_L)
{
    if (strcmp(o->factors, "ilu0") == 0) {
        gs_factor_opts fo;
        gs_factor_info info;
        memset(&fo, 0, sizeof fo);
        memset(&info, 0, sizeof info);
        fo.zero_pivot = GS_ZERO_PIVOT_SHIFT;
        fo.shift = 1e-8;
        GS_CALL(gs_iluk_symbolic(A, 0, L, U));
        GS_CALL(gs_ilu_numeric(A, &fo, L, U, &info));
        if (info.nshifted > 0)
            fprintf(stderr, "ILU(0): %d pivots shifted (first at row %d)\n", (int)info.nshifted,
                    (int)info.first_shifted + 1);
        *unit_L = true;
    } else {
        GS_CALL(gs_csr_lower(A, true, L));
        GS_CALL(gs_csr_upper(A, true, U));
        *unit_L = false;
    }
    return GS_OK;
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL, *host = NULL;
    gs_csr A = {0}, F[2] = {{0}, {0}};
    bool unit[2] = {false, false};
    gs_vector *b = NULL, *x = NULL, *hb = NULL, *hxr = NULL;
    gs_trisolve *ref = NULL;
    double *t = NULL, *hx = NULL, *xref[2] = {NULL, NULL}, *bh = NULL;
    bench_result res[MAX_TYPES][2];
    char label[512];

    GS_TRY(bench_load_matrix(o->matrix, o->gen, o->nx, o->ny, o->nz, o->peclet, &A, label, sizeof label));
    if (A.nrows != A.ncols) GS_FAIL(GS_ERR_ARG, "%s is %d x %d; expected a square matrix", label, (int)A.nrows, (int)A.ncols);
    double tf = gs_wtime();
    GS_TRY(make_factors(o, &A, &F[0], &F[1], &unit[0]));
    tf = gs_wtime() - tf;
    gs_int n = A.nrows;

    GS_TRY(gs_backend_create("cuda", o->device, &be));
    GS_TRY(gs_backend_create("host", 0, &host));
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
            GS_TRY(bench_one(o, be, o->types[k], &F[s], (gs_uplo)s, unit[s], b, x, xref[s], t, hx, &res[k][s]));
            fflush(stdout);
        }

    if (o->csv) {
        printf("matrix,n,factors,type,side,selected,analyse_ms,solve_median_us,solve_min_us,solve_batch_us,"
               "rel_err,levels,chains,max_rows_per_level,avg_rows_per_level\n");
        for (int k = 0; k < o->ntypes; k++)
            for (int s = 0; s < 2; s++) {
                const bench_result *r = &res[k][s];
                printf("\"%s\",%d,%s,%s,%s,%s,%.4f,%.2f,%.2f,%.2f,%.2e,%lld,%lld,%lld,%.1f\n", label, (int)n,
                       o->factors, o->types[k], s ? "U" : "L", r->selected, 1e3 * r->analyse, 1e6 * r->median,
                       1e6 * r->min, 1e6 * r->batch_mean, r->rel_err, r->levels, r->chains, r->max_rows,
                       r->avg_rows);
            }
    } else {
        printf("%-10s %-4s %-9s %12s %12s %12s %12s %10s %8s %7s %9s %9s\n", "type", "side", "selected",
               "analyse_ms", "median_us", "min_us", "batch_us", "rel_err", "levels", "chains", "max_rows",
               "avg_rows");
        for (int k = 0; k < o->ntypes; k++)
            for (int s = 0; s < 2; s++) {
                const bench_result *r = &res[k][s];
                printf("%-10s %-4s %-9s %12.3f %12.2f %12.2f %12.2f %10.2e %8lld %7lld %9lld %9.1f\n",
                       o->types[k], s ? "U" : "L", r->selected[0] ? r->selected : "-", 1e3 * r->analyse,
                       1e6 * r->median, 1e6 * r->min, 1e6 * r->batch_mean, r->rel_err, r->levels, r->chains,
                       r->max_rows, r->avg_rows);
            }
        printf("\n%-10s %16s %16s   (one preconditioner application: L then U solve)\n", "type",
               "L+U median_us", "L+U analyse_ms");
        for (int k = 0; k < o->ntypes; k++)
            printf("%-10s %16.2f %16.3f\n", o->types[k], 1e6 * (res[k][0].median + res[k][1].median),
                   1e3 * (res[k][0].analyse + res[k][1].analyse));
    }
    /* one jacobi sweep per factor and its effective bandwidth ('#' lines: the CSV stays parseable) */
    for (int s = 0; s < 2; s++) {
        double med = 0.0, mn = 0.0;
        GS_TRY(bench_jacobi_sweep(o, be, &F[s], (gs_uplo)s, unit[s], b, x, t, &med, &mn));
        double bytes = 12.0 * (double)F[s].nnz + (8.0 * 3 + 4) * (double)n;
        printf("# jacobi_sweep side=%s nnz=%d bytes=%.0f median_us=%.2f min_us=%.2f GB/s(median)=%.1f "
               "GB/s(min)=%.1f\n", s ? "U" : "L", (int)F[s].nnz, bytes, 1e6 * med, 1e6 * mn,
               med > 0 ? 1e-9 * bytes / med : 0.0, mn > 0 ? 1e-9 * bytes / mn : 0.0);
    }
cleanup:
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
