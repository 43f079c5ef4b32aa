/* Numeric ILU(0) and IC(0) factorization time: the host reference (precond/ilu_factor.c), our GPU
 * factorization (precond/factor_cuda.cu) and cuSPARSE csrilu02 / csric02, on the same matrix in the same
 * run. For each matrix:
 *   host      gs_ilu_numeric / gs_ic0, wall clock (the ILU(0) pattern from gs_iluk_symbolic is built once,
 *             outside the timing, as the preconditioner does in its symbolic phase);
 *   device    gs_ilu_numeric_cuda / gs_ic0_numeric_cuda: the whole call (wall clock: device allocation,
 *             upload of A and the patterns, the device work, download of the factors, free) and its parts
 *             as the call reports them (upload, kernel = every device step between upload and download:
 *             input checks, levels, sort, factorization, IC(0) pattern and transpose; download);
 *   cusparse  csrilu02 / csric02 analysis and factorization (A already on the device, in place), each
 *             between two CUDA events on the backend's stream, a fresh info per repetition.
 * W warm-up calls, then R timed ones (median and min). Every result is checked against the host factors
 * (max |x - x_host| / max |x_host|; the GPU factorization is expected to give 0). IC(0) runs only on
 * symmetric matrices. One JSON object per measurement on stdout (lines starting with '{'), then a table.
 *
 * usage: bench_factor [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx] [--reps R]
 *                     [--warmup W] [--device ID] [--no-host] [--no-ic]
 *   without --gen / --matrix: poisson3d 100, laplace27 64, poisson2d 1024, convdiff3d 100 in turn.
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU (or a build without CUDA). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/mem.h"
#include "precond/factor.h"
#include "precond/factor_cuda.h"

#include "bench_util.h"


#define MAX_REPS 1000
#define MAX_MATRICES 4

typedef struct bench_opts {
    const char *gen, *matrix;
    gs_int nx, ny, nz;
    double peclet;
    int reps, warmup, device, host, ic;
} bench_opts;

/* One method on one factorization. */
typedef struct bench_result {
    bool done;
    double median, min;               /* the whole call / analysis + factorization (s) */
    double upload, kernel, download;  /* device: medians of the parts */
    double analysis, factor;          /* cusparse: medians */
    double diff;                      /* max relative difference to the host factors */
    long long levels;
    int lanes;
} bench_result;

enum { M_HOST, M_DEVICE, M_CUSPARSE, M_COUNT };
static const char *method_names[M_COUNT] = {"host", "device", "cusparse"};

typedef struct bench_row {
    char label[128];
    gs_int n, nnz;
    bench_result r[2][M_COUNT]; /* [ILU(0), IC(0)][method] */
} bench_row;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_factor [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx] [--reps R]\n"
               "                    [--warmup W] [--device ID] [--no-host] [--no-ic]\n"
               "  NAME: poisson2d poisson3d laplace27 convdiff3d; without --gen/--matrix: poisson3d 100,\n"
               "        laplace27 64, poisson2d 1024, convdiff3d 100\n"
               "  R: timed repetitions (default 10, at most %d); W: warm-up calls (default 2)\n"
               "  --no-host: skip the host factorizations (their check too); --no-ic: skip IC(0)\n",
            MAX_REPS);
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->peclet = 1.0;
    o->reps = 10;
    o->warmup = 2;
    o->host = 1;
    o->ic = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v = 0;
        int bad = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--no-host") == 0) {
            o->host = 0;
            continue;
        }
        if (strcmp(a, "--no-ic") == 0) {
            o->ic = 0;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_factor: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--gen") == 0) {
            o->gen = val;
            o->matrix = NULL;
        } else if (strcmp(a, "--matrix") == 0) {
            o->matrix = val;
        } else if (strcmp(a, "--n") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 1, GS_INT_MAX, &v);
            o->nx = (gs_int)v;
        } else if (strcmp(a, "--ny") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 1, GS_INT_MAX, &v);
            o->ny = (gs_int)v;
        } else if (strcmp(a, "--nz") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 1, GS_INT_MAX, &v);
            o->nz = (gs_int)v;
        } else if (strcmp(a, "--peclet") == 0) {
            bad = bench_parse_double("bench_factor", val, a, &o->peclet);
        } else if (strcmp(a, "--reps") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 1, MAX_REPS, &v);
            o->reps = (int)v;
        } else if (strcmp(a, "--warmup") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 0, 1000, &v);
            o->warmup = (int)v;
        } else if (strcmp(a, "--device") == 0) {
            bad = bench_parse_int("bench_factor", val, a, 0, 1024, &v);
            o->device = (int)v;
        } else {
            fprintf(stderr, "bench_factor: unknown option %s\n", a);
            bad = -1;
        }
        if (bad) return -1;
    }
    if (o->gen && !o->nx) {
        fprintf(stderr, "bench_factor: --gen needs --n\n");
        return -1;
    }
    return 0;
}

/* max |x - y| / max |y| over the entries of two arrays of length m (0 when both are empty). */
static double rel_diff(gs_int m, const double *x, const double *y) { return m > 0 ? bench_rel_diff(m, x, y) : 0.0; }

/* ---------------------------------------------------------------- host and our GPU factorization */

static gs_status time_host(const gs_csr *A, bool ic, const gs_csr *Lp, const gs_csr *Up, const bench_opts *o,
                           double *t, bench_result *res, gs_csr *Lh, gs_csr *Uh)
{
    for (int r = 0; r < 1 + o->reps; r++) { /* one warm-up: the factorization is long */
        gs_csr L = {0}, U = {0};
        double t0 = gs_wtime();
        if (ic) {
            GS_CALL(gs_ic0(A, NULL, &L, &U, NULL));
        } else {
            GS_CALL(gs_csr_copy(Lp, &L));
            GS_CALL(gs_csr_copy(Up, &U));
            t0 = gs_wtime();
            GS_CALL(gs_ilu_numeric(A, NULL, &L, &U, NULL));
        }
        if (r > 0) t[r - 1] = gs_wtime() - t0;
        gs_csr_free(Lh);
        gs_csr_free(Uh);
        *Lh = L;
        *Uh = U;
    }
    res->median = bench_median(t, o->reps);
    res->min = t[0];
    res->done = true;
    return GS_OK;
}

static gs_status time_device(gs_backend *be, const gs_csr *A, bool ic, const gs_csr *Lp, const gs_csr *Up,
                             const bench_opts *o, double *t, bench_result *res, const gs_csr *Lh, const gs_csr *Uh)
{
    gs_status st = GS_OK;
    gs_csr L = {0}, U = {0};
    double *tu = NULL, *tk = NULL, *td = NULL;
    gs_factor_cuda_times ft;
    memset(&ft, 0, sizeof ft);
    GS_TRY(GS_MALLOC(tu, o->reps));
    GS_TRY(GS_MALLOC(tk, o->reps));
    GS_TRY(GS_MALLOC(td, o->reps));
    if (!ic) {
        GS_TRY(gs_csr_copy(Lp, &L));
        GS_TRY(gs_csr_copy(Up, &U));
    }
    for (int r = -o->warmup; r < o->reps; r++) {
        double t0 = gs_wtime();
        if (ic) {
            gs_csr_free(&L);
            gs_csr_free(&U);
            GS_TRY(gs_ic0_numeric_cuda(be, A, NULL, NULL, &L, &U, NULL, &ft, NULL));
        } else {
            GS_TRY(gs_ilu_numeric_cuda(be, A, NULL, &L, &U, NULL, &ft, NULL));
        }
        if (r < 0) continue;
        t[r] = gs_wtime() - t0;
        tu[r] = ft.upload;
        tk[r] = ft.kernel;
        td[r] = ft.download;
    }
    res->median = bench_median(t, o->reps);
    res->min = t[0];
    res->upload = bench_median(tu, o->reps);
    res->kernel = bench_median(tk, o->reps);
    res->download = bench_median(td, o->reps);
    res->levels = ft.levels;
    res->lanes = ft.lanes_per_row;
    res->diff = NAN;
    if (Lh && Lh->val && Lh->nnz == L.nnz && Uh->nnz == U.nnz)
        res->diff = fmax(rel_diff(L.nnz, L.val, Lh->val), rel_diff(U.nnz, U.val, Uh->val));
    res->done = true;
cleanup:
    gs_csr_free(&L);
    gs_csr_free(&U);
    gs_free(&tu);
    gs_free(&tk);
    gs_free(&td);
    return st;
}

/* ---------------------------------------------------------------- cuSPARSE */

#ifdef GS_HAVE_CUDA
/* csrilu02 (ic false) or csric02 (bench_cusparse_factor): medians of analysis, factorization and their
 * sum, and the agreement with the host factors Lh / Uh. */
static gs_status time_cusparse(gs_backend *be, const gs_csr *A, bool ic, const bench_opts *o, double *t,
                               bench_result *res, const gs_csr *Lh, const gs_csr *Uh)
{
    gs_status st = GS_OK;
    double *tf = NULL, *tt = NULL, diff = NAN;
    GS_TRY(GS_MALLOC(tf, o->reps));
    GS_TRY(GS_MALLOC(tt, o->reps));
    GS_TRY(bench_cusparse_factor(be, A, ic, o->warmup, o->reps, t, tf, Lh, Uh, Lh && Lh->val ? &diff : NULL));
    for (int r = 0; r < o->reps; r++) tt[r] = t[r] + tf[r];
    res->analysis = bench_median(t, o->reps);
    res->factor = bench_median(tf, o->reps);
    res->median = bench_median(tt, o->reps);
    res->min = tt[0];
    res->diff = diff;
    res->done = true;
cleanup:
    gs_free(&tf);
    gs_free(&tt);
    return st;
}
#endif

/* ---------------------------------------------------------------- output */

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void json_number(const char *key, double v)
{
    printf(", \"%s\": ", key);
    if (isfinite(v)) printf("%.9g", v);
    else printf("null");
}

static void print_json(const bench_row *row, int f, int m, const bench_opts *o, const char *device)
{
    const bench_result *r = &row->r[f][m];
    printf("{\"program\": \"bench_factor\", \"matrix\": ");
    json_string(row->label);
    printf(", \"n\": %d, \"nnz\": %d, \"factorization\": \"%s\", \"method\": \"%s\", \"reps\": %d", (int)row->n,
           (int)row->nnz, f ? "IC(0)" : "ILU(0)", method_names[m], o->reps);
    json_number("median_s", r->median);
    json_number("min_s", r->min);
    if (m == M_DEVICE) {
        json_number("upload_s", r->upload);
        json_number("kernel_s", r->kernel);
        json_number("download_s", r->download);
        printf(", \"levels\": %lld, \"lanes_per_row\": %d", r->levels, r->lanes);
    }
    if (m == M_CUSPARSE) {
        json_number("analysis_s", r->analysis);
        json_number("factor_s", r->factor);
    }
    if (m != M_HOST) json_number("max_rel_diff_vs_host", r->diff);
    printf(", \"device\": ");
    json_string(device);
    printf("}\n");
    fflush(stdout);
}

static void print_table(const bench_row *rows, int nrow)
{
    printf("\n# times in ms (median); device = our GPU factorization: whole call (total) and its parts;\n"
           "# cusparse = analysis + factorization with A already on the device (no transfers)\n");
    printf("%-24s %-6s %9s %10s %9s %9s %9s %10s %10s %10s %7s %9s %9s %9s\n", "matrix", "fact", "host", "dev_total",
           "dev_up", "dev_kern", "dev_down", "csp_ana", "csp_fact", "csp_total", "levels", "csp/kern", "diff_dev",
           "diff_csp");
    for (int k = 0; k < nrow; k++)
        for (int f = 0; f < 2; f++) {
            const bench_result *h = &rows[k].r[f][M_HOST], *d = &rows[k].r[f][M_DEVICE];
            const bench_result *c = &rows[k].r[f][M_CUSPARSE];
            if (!d->done && !c->done) continue;
            printf("%-24s %-6s %9.2f %10.2f %9.2f %9.3f %9.2f %10.3f %10.3f %10.3f %7lld %9.1f %9.1e %9.1e\n",
                   rows[k].label, f ? "IC(0)" : "ILU(0)", h->done ? 1e3 * h->median : NAN, 1e3 * d->median,
                   1e3 * d->upload, 1e3 * d->kernel, 1e3 * d->download, 1e3 * c->analysis, 1e3 * c->factor,
                   1e3 * c->median, d->levels, d->kernel > 0.0 ? c->median / d->kernel : NAN, d->diff, c->diff);
        }
    fflush(stdout);
}

/* ---------------------------------------------------------------- driver */

static gs_status bench_matrix(gs_backend *be, const bench_opts *o, const char *matrix, const char *gen, gs_int nx,
                              bench_row *row)
{
    gs_status st = GS_OK;
    gs_csr A = {0}, Lp = {0}, Up = {0}, Lh = {0}, Uh = {0};
    double *t = NULL;
    bool structural = false, symmetric = false;
    memset(row, 0, sizeof *row);
    GS_TRY(bench_load_matrix(matrix, gen, nx, o->ny, o->nz, o->peclet, &A, row->label, sizeof row->label));
    row->n = A.nrows;
    row->nnz = A.nnz;
    GS_TRY(GS_MALLOC(t, o->reps));
    GS_TRY(gs_csr_symmetry(&A, 0.0, &structural, &symmetric));
    GS_TRY(gs_iluk_symbolic(&A, 0, &Lp, &Up));
    fprintf(stderr, "bench_factor: %s (n = %d, nnz = %d, %s)\n", row->label, (int)A.nrows, (int)A.nnz,
            symmetric ? "symmetric" : "nonsymmetric");
    for (int f = 0; f < 2; f++) {
        const bool ic = f == 1;
        if (ic && (!symmetric || !o->ic)) continue;
        gs_csr_free(&Lh);
        gs_csr_free(&Uh);
        if (o->host) {
            GS_TRY(time_host(&A, ic, &Lp, &Up, o, t, &row->r[f][M_HOST], &Lh, &Uh));
            print_json(row, f, M_HOST, o, be->device_name);
        }
        GS_TRY(time_device(be, &A, ic, &Lp, &Up, o, t, &row->r[f][M_DEVICE], &Lh, &Uh));
        print_json(row, f, M_DEVICE, o, be->device_name);
#ifdef GS_HAVE_CUDA
        GS_TRY(time_cusparse(be, &A, ic, o, t, &row->r[f][M_CUSPARSE], &Lh, &Uh));
        print_json(row, f, M_CUSPARSE, o, be->device_name);
#endif
    }
cleanup:
    gs_csr_free(&A);
    gs_csr_free(&Lp);
    gs_csr_free(&Up);
    gs_csr_free(&Lh);
    gs_csr_free(&Uh);
    gs_free(&t);
    return st;
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL;
    bench_row rows[MAX_MATRICES];
    const char *gens[MAX_MATRICES] = {"poisson3d", "laplace27", "poisson2d", "convdiff3d"};
    const gs_int sizes[MAX_MATRICES] = {100, 64, 1024, 100};
    int nrow = 0;
    GS_TRY(gs_backend_create("cuda", o->device, &be));
    fprintf(stderr, "bench_factor on %s: %d warm-up, %d timed repetitions\n", be->device_name, o->warmup, o->reps);
    if (o->matrix || o->gen) {
        GS_TRY(bench_matrix(be, o, o->matrix, o->gen, o->nx, &rows[0]));
        nrow = 1;
    } else {
        for (int k = 0; k < MAX_MATRICES; k++) {
            GS_TRY(bench_matrix(be, o, NULL, gens[k], sizes[k], &rows[k]));
            nrow++;
        }
    }
cleanup:
    if (nrow > 0) print_table(rows, nrow);
    gs_backend_destroy(&be);
    return st;
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (bench_require_gpu("bench_factor")) return 77;
    if (bench(&o) != GS_OK) {
        fprintf(stderr, "bench_factor: ");
        gs_error_print(stderr);
        return 1;
    }
    return 0;
}
