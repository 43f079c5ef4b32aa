/* SpMV and BLAS-1 throughput on the cuda backend: our SpMV kernels and cuSPARSE CSR_ALG2 / CSR_ALG1 on
 * the same matrix in the same run, each as a fraction of the streaming bandwidth measured here by a
 * large device-to-device copy; median of single-op CUDA-event timings and the mean over one timed
 * batch.
 *
 * Bytes counted (8-byte values, 4-byte indices), for an nrows x ncols matrix with nnz entries:
 *   spmv y = alpha A x + beta y : nnz*(8+4) + (nrows+1)*4 + ncols*8 (x read once) + nrows*8 (y written)
 *                                 + nrows*8 more when beta != 0 (y read)
 *   copy (cudaMemcpyAsync D2D of B bytes): 2*B (read + written)
 *   dot  x'y     : 2*n*8          dot2 {x'y, u'v} : 4*n*8
 *   axpy y += ax : 3*n*8          nrm2 ||x||      : n*8
 * Effective GB/s = bytes / time / 1e9; "% copy" = effective bandwidth / copy bandwidth. The reductions
 * include their one small device->host copy and the wait for it, as a solver sees them.
 *
 * usage: bench_spmv [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx] [--reps R]
 *                   [--device ID] [--beta B] [--copy-mb M] [--spmv MODE]... [--sweep]
 *   MODE: own | own:vec=V,rows=R,long=L | cusparse-alg2 | cusparse-alg1 (repeatable; default: own,
 *   cusparse-alg2, cusparse-alg1); --sweep adds every own:vec=V,rows=R shape (for tuning).
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
#include "io/mmio.h"

#include "bench_util.h"
#ifdef GS_HAVE_CUDA
#include "core/spmv_cuda.h"
#endif

#define MAX_MODES 64

typedef struct {
    const char *gen, *matrix;
    gs_int nx, ny, nz;
    double peclet, beta;
    int reps, device;
    long copy_mb;
    const char *modes[MAX_MODES];
    int nmodes;
    int sweep;
} bench_opts;

typedef enum { OP_SPMV, OP_DOT, OP_DOT2, OP_AXPY, OP_NRM2, OP_COPY, OP_COUNT } bench_op;
static const char *op_names[OP_COUNT] = {"spmv", "dot", "dot2", "axpy", "nrm2", "copy"};

typedef struct {
    gs_matrix *A;
    gs_vector *x, *y, *u, *v; /* x: ncols; y (spmv output), u, v: nrows (BLAS-1 operands) */
    gs_vector *big_src, *big_dst; /* the copy that measures the streaming bandwidth */
    double beta;
    double sink; /* keeps reduction results "used" */
} bench_data;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_spmv [--gen NAME --n N [--ny N --nz N --peclet P] | --matrix FILE.mtx]\n"
               "                  [--reps R] [--device ID] [--beta B] [--copy-mb M] [--spmv MODE]... [--sweep]\n"
               "  NAME: poisson2d poisson3d laplace27 convdiff3d (default poisson3d, n 100)\n"
               "  R: timed repetitions (default 200), after 10 warm-up runs\n"
               "  B: beta of y = A x + beta y (default 0: y is only written)\n"
               "  M: MB (1e6 bytes) of the device-to-device copy that measures the bandwidth (default 1000)\n"
               "  MODE: own | own:vec=V,rows=R,long=L | cusparse-alg2 | cusparse-alg1 (repeatable;\n"
               "        default own, cusparse-alg2, cusparse-alg1); --sweep adds every own:vec=V,rows=R\n");
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gen = "poisson3d";
    o->nx = 100;
    o->peclet = 1.0;
    o->reps = 200;
    o->copy_mb = 1000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--sweep") == 0) {
            o->sweep = 1;
            continue;
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
            bad = bench_parse_int("bench_spmv", val, a, 1, GS_INT_MAX, &v);
            o->nx = (gs_int)v;
        } else if (strcmp(a, "--ny") == 0) {
            bad = bench_parse_int("bench_spmv", val, a, 1, GS_INT_MAX, &v);
            o->ny = (gs_int)v;
        } else if (strcmp(a, "--nz") == 0) {
            bad = bench_parse_int("bench_spmv", val, a, 1, GS_INT_MAX, &v);
            o->nz = (gs_int)v;
        } else if (strcmp(a, "--reps") == 0) {
            bad = bench_parse_int("bench_spmv", val, a, 1, 100000000, &v);
            o->reps = (int)v;
        } else if (strcmp(a, "--device") == 0) {
            bad = bench_parse_int("bench_spmv", val, a, 0, 1024, &v);
            o->device = (int)v;
        } else if (strcmp(a, "--copy-mb") == 0) {
            bad = bench_parse_int("bench_spmv", val, a, 1, 16000, &v); /* n = M*1e6/8 doubles must fit gs_int */
            o->copy_mb = v;
        } else if (strcmp(a, "--peclet") == 0) {
            bad = bench_parse_double("bench_spmv", val, a, &o->peclet);
        } else if (strcmp(a, "--beta") == 0) {
            bad = bench_parse_double("bench_spmv", val, a, &o->beta);
        } else if (strcmp(a, "--spmv") == 0) {
            if (o->nmodes >= MAX_MODES) {
                fprintf(stderr, "bench_spmv: at most %d --spmv modes\n", MAX_MODES);
                bad = -1;
            } else {
                o->modes[o->nmodes++] = val;
            }
        } else {
            fprintf(stderr, "bench_spmv: unknown option %s\n", a);
            bad = -1;
        }
        if (bad) return -1;
    }
    return 0;
}

/* Chooses the SpMV of the matrices created next (only the cuda backend has a choice). */
static gs_status select_spmv(gs_backend *be, const char *mode)
{
#ifdef GS_HAVE_CUDA
    GS_CALL(gs_backend_cuda_spmv_select(be, mode));
    return GS_OK;
#else
    return GS_ERROR(GS_ERR_UNSUPPORTED, "SpMV mode %s: this build has no CUDA backend (%p)", mode, (void *)be);
#endif
}

static const char *spmv_describe(const gs_matrix *M)
{
#ifdef GS_HAVE_CUDA
    return gs_mat_cuda_spmv_describe(M);
#else
    return M ? "host" : "none";
#endif
}

/* One application of op. */
static gs_status run_op(bench_op op, bench_data *d)
{
    double r = 0.0, r2[2] = {0.0, 0.0};
    switch (op) {
    case OP_SPMV: GS_CALL(gs_mat_spmv(1.0, d->A, d->x, d->beta, d->y)); break;
    case OP_DOT: GS_CALL(gs_vec_dot(d->u, d->v, &r)); break;
    case OP_DOT2: GS_CALL(gs_vec_dot2(d->u, d->v, d->v, d->y, r2)); break;
    case OP_AXPY: GS_CALL(gs_vec_axpy(1e-3, d->u, d->v)); break;
    case OP_NRM2: GS_CALL(gs_vec_nrm2(d->u, &r)); break;
    case OP_COPY: GS_CALL(gs_vec_copy(d->big_src, d->big_dst)); break; /* cudaMemcpyAsync, device to device */
    case OP_COUNT: break;
    }
    d->sink += r + r2[0] + r2[1];
    return GS_OK;
}

static double op_bytes(bench_op op, const bench_data *d)
{
    const double n = d->u ? (double)d->u->n : 0.0;
    switch (op) {
    case OP_SPMV: {
        const gs_matrix *A = d->A;
        const double m = (double)A->nrows;
        return (double)A->nnz * 12.0 + (m + 1.0) * 4.0 + (double)A->ncols * 8.0 + m * 8.0 +
               (d->beta != 0.0 ? m * 8.0 : 0.0);
    }
    case OP_DOT: return 2.0 * n * 8.0;
    case OP_DOT2: return 4.0 * n * 8.0;
    case OP_AXPY: return 3.0 * n * 8.0;
    case OP_NRM2: return n * 8.0;
    case OP_COPY: return 2.0 * (double)d->big_src->n * 8.0;
    case OP_COUNT: break;
    }
    return 0.0;
}

typedef struct {
    bench_op op;
    bench_data *d;
} op_ctx;

static gs_status run_op_ctx(void *ctx)
{
    op_ctx *c = ctx;
    return run_op(c->op, c->d);
}

/* `warm` warm-up runs; then reps single runs each between two events (median) and one batch of reps
 * runs between two events (mean). */
static gs_status time_op(gs_backend *be, bench_op op, bench_data *d, int warm, int reps, double *t, double *median,
                         double *mean)
{
    op_ctx c = {op, d};
    return bench_time_events(be, run_op_ctx, &c, warm, reps, t, median, NULL, mean);
}

/* The streaming bandwidth: a copy of copy_mb MB, device to device, bytes read + written. */
static gs_status measure_copy(gs_backend *be, const bench_opts *o, bench_data *d, double *t, double *gbs)
{
    gs_status st = GS_OK;
    const gs_int n = (gs_int)(o->copy_mb * 1000000L / 8L);
    const int reps = o->reps < 20 ? o->reps : 20;
    double med = 0.0, mean = 0.0, bytes = 0.0;
    GS_TRY(gs_vec_create(be, n, &d->big_src));
    GS_TRY(gs_vec_create(be, n, &d->big_dst));
    GS_TRY(gs_vec_set(d->big_src, 1.0));
    GS_TRY(time_op(be, OP_COPY, d, 3, reps, t, &med, &mean));
    bytes = op_bytes(OP_COPY, d);
    *gbs = bytes / med / 1e9;
    printf("copy     %.0f MB device to device (cudaMemcpyAsync): median %.4f ms, batch %.4f ms;\n"
           "         streaming bandwidth %.1f GB/s (median), %.1f GB/s (batch), counting %.0f MB read + written\n",
           bytes / 2e6, 1e3 * med, 1e3 * mean, *gbs, bytes / mean / 1e9, bytes / 1e6);
cleanup:
    gs_vec_destroy(&d->big_src);
    gs_vec_destroy(&d->big_dst);
    return st;
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL;
    gs_csr A = {0};
    bench_data d;
    double *t = NULL, *xs = NULL, *yref = NULL, *ycur = NULL;
    double copy_gbs = 0.0;
    char label[512];
    const char *modes[MAX_MODES + 15];
    char sweep_modes[15][32];
    int nmodes = 0;
    memset(&d, 0, sizeof d);
    d.beta = o->beta;

    if (o->nmodes == 0) {
        modes[nmodes++] = "own";
        modes[nmodes++] = "cusparse-alg2";
        modes[nmodes++] = "cusparse-alg1";
    }
    for (int k = 0; k < o->nmodes; k++) modes[nmodes++] = o->modes[k];
    if (o->sweep) {
        const int vecs[5] = {2, 4, 8, 16, 32}, rows[3] = {1, 2, 4};
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 3; b++) {
                snprintf(sweep_modes[3 * a + b], sizeof sweep_modes[0], "own:vec=%d,rows=%d", vecs[a], rows[b]);
                modes[nmodes++] = sweep_modes[3 * a + b];
            }
    }

    GS_TRY(bench_load_matrix(o->matrix, o->gen, o->nx, o->ny, o->nz, o->peclet, &A, label, sizeof label));
    GS_TRY(gs_backend_create("cuda", o->device, &be));
    GS_TRY(GS_MALLOC(t, o->reps > 20 ? o->reps : 20));
    {
        uint64_t s = 12345;
        GS_TRY(GS_MALLOC(xs, A.ncols > 0 ? A.ncols : 1));
        for (gs_int j = 0; j < A.ncols; j++) { /* x in [0.5, 1.5): no cancellation in the cross-check */
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs[j] = 0.5 + (double)(s >> 11) * (1.0 / 9007199254740992.0);
        }
    }
    GS_TRY(GS_MALLOC(yref, A.nrows > 0 ? A.nrows : 1));
    GS_TRY(GS_MALLOC(ycur, A.nrows > 0 ? A.nrows : 1));
    GS_TRY(gs_vec_create(be, A.ncols, &d.x));
    GS_TRY(gs_vec_create(be, A.nrows, &d.y));
    GS_TRY(gs_vec_create(be, A.nrows, &d.u));
    GS_TRY(gs_vec_create(be, A.nrows, &d.v));
    GS_TRY(gs_vec_upload(d.x, xs));
    GS_TRY(gs_vec_set(d.y, 0.0));
    GS_TRY(gs_vec_set(d.u, 0.5));
    GS_TRY(gs_vec_set(d.v, 0.25));

    printf("matrix   %s\n", label);
    printf("size     %d x %d, nnz %d (%.2f per row)\n", (int)A.nrows, (int)A.ncols, (int)A.nnz,
           A.nrows ? (double)A.nnz / A.nrows : 0.0);
    printf("device   %s, %d reps after 10 warm-up, y = A x + %g y\n", be->device_name, o->reps, o->beta);
    GS_TRY(measure_copy(be, o, &d, t, &copy_gbs));

    printf("%-28s %10s %10s %9s %7s %9s %7s %9s %9s  %s\n", "spmv", "median ms", "batch ms", "GB/s med", "% copy",
           "GB/s bat", "% copy", "MB moved", "vs first", "kernel");
    for (int k = 0; k < nmodes; k++) {
        double med = 0.0, mean = 0.0, bytes = 0.0, diff = 0.0;
        GS_TRY(select_spmv(be, modes[k]));
        GS_TRY(gs_mat_create(be, &A, &d.A));
        /* the same product in every mode, compared with the first mode's (beta = 0 for the check) */
        GS_TRY(gs_mat_spmv(1.0, d.A, d.x, 0.0, d.y));
        GS_TRY(gs_vec_download(d.y, k == 0 ? yref : ycur));
        diff = k == 0 ? 0.0 : bench_rel_diff(A.nrows, ycur, yref);
        GS_TRY(time_op(be, OP_SPMV, &d, 10, o->reps, t, &med, &mean));
        bytes = op_bytes(OP_SPMV, &d);
        printf("%-28s %10.5f %10.5f %9.1f %6.1f%% %9.1f %6.1f%% %9.2f %9.1e  %s\n", modes[k], 1e3 * med, 1e3 * mean,
               bytes / med / 1e9, 100.0 * bytes / med / 1e9 / copy_gbs, bytes / mean / 1e9,
               100.0 * bytes / mean / 1e9 / copy_gbs, bytes / 1e6, diff, spmv_describe(d.A));
        fflush(stdout);
        gs_mat_destroy(&d.A);
    }
    GS_TRY(select_spmv(be, modes[0]));
    GS_TRY(gs_mat_create(be, &A, &d.A));

    printf("%-28s %10s %10s %9s %7s %9s %7s %9s\n", "blas-1", "median ms", "batch ms", "GB/s med", "% copy",
           "GB/s bat", "% copy", "MB moved");
    for (int op = OP_DOT; op <= OP_NRM2; op++) {
        double med = 0.0, mean = 0.0, bytes = op_bytes((bench_op)op, &d);
        GS_TRY(time_op(be, (bench_op)op, &d, 10, o->reps, t, &med, &mean));
        printf("%-28s %10.5f %10.5f %9.1f %6.1f%% %9.1f %6.1f%% %9.2f\n", op_names[op], 1e3 * med, 1e3 * mean,
               bytes / med / 1e9, 100.0 * bytes / med / 1e9 / copy_gbs, bytes / mean / 1e9,
               100.0 * bytes / mean / 1e9 / copy_gbs, bytes / 1e6);
    }
    fflush(stdout);
cleanup:
    gs_vec_destroy(&d.x);
    gs_vec_destroy(&d.y);
    gs_vec_destroy(&d.u);
    gs_vec_destroy(&d.v);
    gs_vec_destroy(&d.big_src);
    gs_vec_destroy(&d.big_dst);
    gs_mat_destroy(&d.A);
    gs_backend_destroy(&be);
    gs_csr_free(&A);
    gs_free(&t);
    gs_free(&xs);
    gs_free(&yref);
    gs_free(&ycur);
    return st;
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (bench_require_gpu("bench_spmv")) return 77;
    if (bench(&o) != GS_OK) {
        fprintf(stderr, "bench_spmv: ");
        gs_error_print(stderr);
        return 1;
    }
    return 0;
}
