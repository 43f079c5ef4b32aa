/* SpMV and BLAS-1 throughput on the cuda backend: median of single-op CUDA-event timings and the mean
 * over one timed batch, with the effective bandwidth of each op.
 *
 * Bytes counted (8-byte values, 4-byte indices), for an nrows x ncols matrix with nnz entries:
 *   spmv y = A x : nnz*(8+4) + (nrows+1)*4 + ncols*8 (x read) + 2*nrows*8 (y read and written),
 *                  i.e. nnz*12 + (n+1)*4 + 3*n*8 for a square matrix
 *   dot  x'y     : 2*n*8          dot2 {x'y, u'v} : 4*n*8
 *   axpy y += ax : 3*n*8          nrm2 ||x||      : n*8
 * Effective GB/s = bytes / time / 1e9. The reductions include their one small device->host copy and
 * the wait for it, as a solver sees them.
 *
 * usage: bench_spmv [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx] [--reps R]
 *                   [--device ID]
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"
#include "io/mmio.h"

typedef struct {
    const char *gen, *matrix;
    gs_int nx, ny, nz;
    double peclet;
    int reps, device;
} bench_opts;

typedef enum { OP_SPMV, OP_DOT, OP_DOT2, OP_AXPY, OP_NRM2, OP_COUNT } bench_op;
static const char *op_names[OP_COUNT] = {"spmv", "dot", "dot2", "axpy", "nrm2"};

typedef struct {
    gs_matrix *A;
    gs_vector *x, *y, *u, *v; /* x: ncols; y (spmv output), u, v: nrows (BLAS-1 operands) */
    double sink; /* keeps reduction results "used" */
} bench_data;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_spmv [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx]\n"
               "                  [--reps R] [--device ID]\n"
               "  NAME: poisson2d poisson3d laplace27 convdiff3d (default poisson3d, n 100)\n"
               "  R: timed repetitions (default 200), after 10 warm-up runs\n");
}

static int parse_int(const char *s, const char *opt, long lo, long hi, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < lo || v > hi) {
        fprintf(stderr, "bench_spmv: %s expects an integer in [%ld, %ld], got \"%s\"\n", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gen = "poisson3d";
    o->nx = 100;
    o->peclet = 1.0;
    o->reps = 200;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_spmv: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        int bad = 0;
        if (strcmp(a, "--gen") == 0) {
            o->gen = val;
            o->matrix = NULL;
        } else if (strcmp(a, "--matrix") == 0) {
            o->matrix = val;
        } else if (strcmp(a, "--n") == 0) {
            bad = parse_int(val, a, 1, GS_INT_MAX, &v);
            o->nx = (gs_int)v;
        } else if (strcmp(a, "--ny") == 0) {
            bad = parse_int(val, a, 1, GS_INT_MAX, &v);
            o->ny = (gs_int)v;
        } else if (strcmp(a, "--nz") == 0) {
            bad = parse_int(val, a, 1, GS_INT_MAX, &v);
            o->nz = (gs_int)v;
        } else if (strcmp(a, "--reps") == 0) {
            bad = parse_int(val, a, 1, 100000000, &v);
            o->reps = (int)v;
        } else if (strcmp(a, "--device") == 0) {
            bad = parse_int(val, a, 0, 1024, &v);
            o->device = (int)v;
        } else if (strcmp(a, "--peclet") == 0) {
            char *end = NULL;
            o->peclet = strtod(val, &end);
            if (!val[0] || *end) {
                fprintf(stderr, "bench_spmv: --peclet expects a number, got \"%s\"\n", val);
                bad = -1;
            }
        } else {
            fprintf(stderr, "bench_spmv: unknown option %s\n", a);
            bad = -1;
        }
        if (bad) return -1;
    }
    return 0;
}

/* One application of op. */
static gs_status run_op(bench_op op, bench_data *d)
{
    double r = 0.0, r2[2] = {0.0, 0.0};
    switch (op) {
    case OP_SPMV: GS_CALL(gs_mat_spmv(1.0, d->A, d->x, 0.0, d->y)); break;
    case OP_DOT: GS_CALL(gs_vec_dot(d->u, d->v, &r)); break;
    case OP_DOT2: GS_CALL(gs_vec_dot2(d->u, d->v, d->v, d->y, r2)); break;
    case OP_AXPY: GS_CALL(gs_vec_axpy(1e-3, d->u, d->v)); break;
    case OP_NRM2: GS_CALL(gs_vec_nrm2(d->u, &r)); break;
    case OP_COUNT: break;
    }
    d->sink += r + r2[0] + r2[1];
    return GS_OK;
}

static double op_bytes(bench_op op, const gs_matrix *A)
{
    const double n = (double)A->nrows;
    switch (op) {
    case OP_SPMV:
        return (double)A->nnz * 12.0 + (n + 1.0) * 4.0 + (double)A->ncols * 8.0 + 2.0 * n * 8.0;
    case OP_DOT: return 2.0 * n * 8.0;
    case OP_DOT2: return 4.0 * n * 8.0;
    case OP_AXPY: return 3.0 * n * 8.0;
    case OP_NRM2: return n * 8.0;
    case OP_COUNT: break;
    }
    return 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* 10 warm-up runs; then reps single runs each between two events (median) and one batch of reps runs
 * between two events (mean). */
static gs_status time_op(gs_backend *be, bench_op op, bench_data *d, int reps, double *t, double *median,
                         double *mean)
{
    gs_timer tm;
    double total = 0.0;
    memset(&tm, 0, sizeof tm);
    for (int r = 0; r < 10; r++) GS_CALL(run_op(op, d));
    GS_CALL(gs_backend_synchronize(be));
    for (int r = 0; r < reps; r++) {
        GS_CALL(gs_timer_start(be, &tm));
        GS_CALL(run_op(op, d));
        GS_CALL(gs_timer_stop(&tm, &t[r]));
    }
    GS_CALL(gs_timer_start(be, &tm));
    for (int r = 0; r < reps; r++) GS_CALL(run_op(op, d));
    GS_CALL(gs_timer_stop(&tm, &total));
    gs_timer_destroy(&tm);
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    *mean = total / reps;
    return GS_OK;
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL;
    gs_csr A = {0};
    bench_data d;
    double *t = NULL, *ones = NULL;
    char label[512];
    memset(&d, 0, sizeof d);

    if (o->matrix) {
        GS_TRY(gs_mm_read_matrix(o->matrix, &A, NULL));
        snprintf(label, sizeof label, "%s", o->matrix);
    } else {
        gs_int ny = o->ny ? o->ny : o->nx, nz = o->nz ? o->nz : o->nx;
        double t0 = gs_wtime();
        GS_TRY(gs_gen_by_name(o->gen, o->nx, ny, nz, o->peclet, &A));
        if (strcmp(o->gen, "poisson2d") == 0)
            snprintf(label, sizeof label, "%s %dx%d", o->gen, (int)o->nx, (int)ny);
        else snprintf(label, sizeof label, "%s %dx%dx%d", o->gen, (int)o->nx, (int)ny, (int)nz);
        fprintf(stderr, "generated %s in %.3f s\n", label, gs_wtime() - t0);
    }
    GS_TRY(gs_backend_create("cuda", o->device, &be));
    GS_TRY(gs_mat_create(be, &A, &d.A));
    {
        gs_int n = A.nrows > A.ncols ? A.nrows : A.ncols;
        GS_TRY(GS_MALLOC(ones, n));
        for (gs_int i = 0; i < n; i++) ones[i] = 1.0;
    }
    GS_TRY(gs_vec_create(be, A.ncols, &d.x));
    GS_TRY(gs_vec_create(be, A.nrows, &d.y));
    GS_TRY(gs_vec_create(be, A.nrows, &d.u));
    GS_TRY(gs_vec_create(be, A.nrows, &d.v));
    GS_TRY(gs_vec_upload(d.x, ones));
    GS_TRY(gs_vec_set(d.y, 0.0));
    GS_TRY(gs_vec_set(d.u, 0.5));
    GS_TRY(gs_vec_set(d.v, 0.25));
    GS_TRY(GS_MALLOC(t, o->reps));

    const char *alg = getenv("GS_CUDA_SPMV_ALG");
    printf("matrix   %s\n", label);
    printf("size     %d x %d, nnz %d (%.2f per row)\n", (int)A.nrows, (int)A.ncols, (int)A.nnz,
           A.nrows ? (double)A.nnz / A.nrows : 0.0);
    printf("device   %s, cuSPARSE SpMV %s, %d reps after 10 warm-up\n", be->device_name,
           alg && strcmp(alg, "1") == 0 ? "CSR_ALG1" : "CSR_ALG2", o->reps);
    printf("%-6s %12s %12s %10s %10s %12s\n", "op", "median ms", "batch ms", "GB/s med", "GB/s batch", "MB moved");
    for (int op = 0; op < OP_COUNT; op++) {
        double med = 0.0, mean = 0.0, bytes = op_bytes((bench_op)op, d.A);
        GS_TRY(time_op(be, (bench_op)op, &d, o->reps, t, &med, &mean));
        printf("%-6s %12.5f %12.5f %10.1f %10.1f %12.2f\n", op_names[op], 1e3 * med, 1e3 * mean,
               med > 0 ? bytes / med / 1e9 : 0.0, mean > 0 ? bytes / mean / 1e9 : 0.0, bytes / 1e6);
    }
    fflush(stdout);
cleanup:
    gs_vec_destroy(&d.x);
    gs_vec_destroy(&d.y);
    gs_vec_destroy(&d.u);
    gs_vec_destroy(&d.v);
    gs_mat_destroy(&d.A);
    gs_backend_destroy(&be);
    gs_csr_free(&A);
    gs_free(&t);
    gs_free(&ones);
    return st;
}

int main(int argc, char **argv)
{
    bench_opts o;
    const char *why = NULL;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (!gs_backend_cuda_available(&why)) {
        fprintf(stderr, "bench_spmv: skipped, no usable GPU: %s\n", why ? why : "unknown reason");
        return 77;
    }
    if (bench(&o) != GS_OK) {
        fprintf(stderr, "bench_spmv: ");
        gs_error_print(stderr);
        return 1;
    }
    return 0;
}
