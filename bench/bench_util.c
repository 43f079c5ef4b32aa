/* Helpers shared by the benchmark drivers (bench_util.h): option parsing, medians, event timing loops. */
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generate.h"
#include "io/mmio.h"

int bench_parse_int(const char *prog, const char *s, const char *opt, long lo, long hi, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s expects an integer in [%ld, %ld], got \"%s\"\n", prog, opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int bench_parse_double(const char *prog, const char *s, const char *opt, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (!s[0] || *end || !isfinite(v)) {
        fprintf(stderr, "%s: %s expects a finite number, got \"%s\"\n", prog, opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

gs_status bench_load_matrix(const char *matrix, const char *gen, gs_int nx, gs_int ny, gs_int nz, double peclet,
                            gs_csr *A, char *label, size_t label_size)
{
    if (matrix) {
        GS_CALL(gs_mm_read_matrix(matrix, A, NULL));
        snprintf(label, label_size, "%s", matrix);
        return GS_OK;
    }
    if (!ny) ny = nx;
    if (!nz) nz = nx;
    double t0 = gs_wtime();
    GS_CALL(gs_gen_by_name(gen, nx, ny, nz, peclet, A));
    if (strcmp(gen, "poisson2d") == 0) snprintf(label, label_size, "%s %dx%d", gen, (int)nx, (int)ny);
    else snprintf(label, label_size, "%s %dx%dx%d", gen, (int)nx, (int)ny, (int)nz);
    fprintf(stderr, "generated %s in %.3f s\n", label, gs_wtime() - t0);
    return GS_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int m)
{
    qsort(t, (size_t)m, sizeof *t, cmp_double);
    return m % 2 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
}

double bench_rel_diff(gs_int n, const double *x, const double *y)
{
    double num = 0.0, den = 0.0;
    for (gs_int i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]);
        if (isnan(d)) return INFINITY;
        if (d > num) num = d;
        if (fabs(y[i]) > den) den = fabs(y[i]);
    }
    return den > 0.0 ? num / den : num;
}

gs_status bench_time_events(gs_backend *be, bench_op_fn op, void *ctx, int warm, int reps, double *t,
                            double *median, double *min, double *mean)
{
    gs_status st = GS_OK;
    gs_timer tm;
    double total = 0.0;
    memset(&tm, 0, sizeof tm);
    for (int r = 0; r < warm; r++) GS_TRY(op(ctx));
    GS_TRY(gs_backend_synchronize(be));
    for (int r = 0; r < reps; r++) {
        GS_TRY(gs_timer_start(be, &tm));
        GS_TRY(op(ctx));
        GS_TRY(gs_timer_stop(&tm, &t[r]));
    }
    if (mean) {
        GS_TRY(gs_timer_start(be, &tm));
        for (int r = 0; r < reps; r++) GS_TRY(op(ctx));
        GS_TRY(gs_timer_stop(&tm, &total));
        *mean = total / reps;
    }
    double med = bench_median(t, reps);
    if (median) *median = med;
    if (min) *min = t[0];
cleanup:
    gs_timer_destroy(&tm);
    return st;
}

int bench_require_gpu(const char *prog)
{
    const char *why = NULL;
    if (gs_backend_cuda_available(&why)) return 0;
    fprintf(stderr, "%s: no usable GPU (%s)\n", prog, why ? why : "unknown");
    return 77;
}
