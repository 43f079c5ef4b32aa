/* ParIC / ParILU benchmark on the cuda backend, after Table 2 of the paper
 * (papers/asynchronous-iterative-ilu-factorization-gpu.txt): for each generated SPD matrix
 *   1. PCG iterations (b = ones, x0 = 0, rtol 1e-6 relative to ||b|| = ||r0||) with the exact IC(0)
 *      and with ParIC after 0, 1, ..., S sweeps (default S = 5; asynchronous, forward order);
 *   2. factorization time: S ParIC sweeps (asynchronous and synchronous; the sweep kernels only,
 *      between two CUDA events, median of R repetitions, each from the same initial guess) against
 *      cuSPARSE csric02 (analysis and factorization timed separately, median of R) in the same run,
 *      with the cuSPARSE factor checked against the host IC(0) (max relative difference printed);
 *   3. the preconditioner setup times (host IC(0) + triangular-solve analysis vs ParIC: scaling,
 *      upload, sweeps, download, analysis) as reported by the plug-ins;
 * and, on the nonsymmetric side, S ParILU sweeps against csrilu02 (+ analysis) on poisson3d 100.
 *
 * Default matrices: poisson2d 1024 (5-point, n = 1048576), laplace27 64 (27-point, n = 262144),
 * poisson3d 100 (7-point, n = 10^6). Run time on an H100: about a minute (the PCG solves dominate).
 *
 * usage: bench_parilu [--matrices NAME:N[,NAME:N...]] [--sweeps S] [--reps R] [--max-iterations K]
 *                     [--ilu NAME:N | --ilu none] [--device ID]
 * Exit status: 0 ok, 1 failure, 2 bad usage, 77 no usable GPU (or a build without CUDA). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/report.h"
#include "precond/factor.h"
#include "precond/parilu.h"
#include "precond/precond.h"
#include "solver/solver.h"

#include "bench_util.h"


#define MAX_MATRICES 8
#define MAX_SWEEPS 20
#define MAX_REPS 100

typedef struct bench_opts {
    char names[MAX_MATRICES][32];
    gs_int sizes[MAX_MATRICES];
    int nmat;
    char ilu_name[32];
    gs_int ilu_size;
    int sweeps, reps, max_it, device;
} bench_opts;

typedef struct ic_row {
    const char *name;
    gs_int size, n, nnz;
    int it_ic, it_par[MAX_SWEEPS + 1];
    double t_ana, t_fact, t_async, t_sync, err;
    double setup_ic, setup_par;
} ic_row;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_parilu [--matrices NAME:N[,NAME:N...]] [--sweeps S] [--reps R] [--max-iterations K]\n"
               "                    [--ilu NAME:N | --ilu none] [--device ID]\n"
               "  NAME: poisson2d poisson3d laplace27 (SPD generators; default\n"
               "        poisson2d:1024,laplace27:64,poisson3d:100)\n"
               "  S: sweeps (default 5, at most %d); R: timing repetitions (default 5);\n"
               "  K: PCG iteration limit (default 5000); --ilu: ParILU vs csrilu02 matrix (default poisson3d:100)\n",
            MAX_SWEEPS);
}

/* "name:N" */
static int parse_matrix(const char *s, char *name, gs_int *size)
{
    const char *c = strchr(s, ':');
    long v = 0;
    if (!c || c == s || (size_t)(c - s) >= 32) {
        fprintf(stderr, "bench_parilu: expected NAME:N, got \"%s\"\n", s);
        return -1;
    }
    memcpy(name, s, (size_t)(c - s));
    name[c - s] = '\0';
    if (bench_parse_int("bench_parilu", c + 1, "the grid size", 2, 100000, &v)) return -1;
    *size = (gs_int)v;
    return 0;
}

static int parse_matrices(bench_opts *o, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    o->nmat = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->nmat == MAX_MATRICES) {
            fprintf(stderr, "bench_parilu: at most %d matrices\n", MAX_MATRICES);
            return -1;
        }
        if (parse_matrix(tok, o->names[o->nmat], &o->sizes[o->nmat])) return -1;
        o->nmat++;
    }
    return o->nmat > 0 ? 0 : -1;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sweeps = 5;
    o->reps = 5;
    o->max_it = 5000;
    if (parse_matrices(o, "poisson2d:1024,laplace27:64,poisson3d:100")) return -1;
    snprintf(o->ilu_name, sizeof o->ilu_name, "poisson3d");
    o->ilu_size = 100;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_parilu: %s needs a value\n", a);
            return -1;
        }
        const char *val = argv[++i];
        if (strcmp(a, "--matrices") == 0) {
            if (parse_matrices(o, val)) return -1;
        } else if (strcmp(a, "--ilu") == 0) {
            if (strcmp(val, "none") == 0) o->ilu_name[0] = '\0';
            else if (parse_matrix(val, o->ilu_name, &o->ilu_size)) return -1;
        } else if (strcmp(a, "--sweeps") == 0) {
            if (bench_parse_int("bench_parilu", val, a, 0, MAX_SWEEPS, &v)) return -1;
            o->sweeps = (int)v;
        } else if (strcmp(a, "--reps") == 0) {
            if (bench_parse_int("bench_parilu", val, a, 1, MAX_REPS, &v)) return -1;
            o->reps = (int)v;
        } else if (strcmp(a, "--max-iterations") == 0) {
            if (bench_parse_int("bench_parilu", val, a, 1, 1000000, &v)) return -1;
            o->max_it = (int)v;
        } else if (strcmp(a, "--device") == 0) {
            if (bench_parse_int("bench_parilu", val, a, 0, 1024, &v)) return -1;
            o->device = (int)v;
        } else {
            fprintf(stderr, "bench_parilu: unknown option %s\n", a);
            return -1;
        }
    }
    return 0;
}

/* PCG (or the solver `type`) iterations with the preconditioner `pc_type` configured by cfg; the
 * numeric setup time of the preconditioner in *setup. */
static gs_status pcg_iterations(gs_backend *be, const gs_config *cfg, const char *pc_type, const gs_csr *A,
                                const gs_matrix *M, int max_it, int *iterations, double *setup)
{
    gs_status st = GS_OK;
    gs_pc *pc = NULL;
    gs_ksp *ksp = NULL;
    gs_vector *b = NULL, *x = NULL;
    gs_ksp_params prm;
    gs_solve_result res;
    GS_TRY(gs_ksp_params_from_config(cfg, &prm));
    prm.rtol = 1e-6;
    prm.atol = 0.0;
    prm.max_iterations = max_it;
    GS_TRY(gs_pc_create(pc_type, be, cfg, &pc));
    GS_TRY(gs_pc_setup_symbolic(pc, A));
    GS_TRY(gs_pc_setup_numeric(pc, A));
    if (setup) *setup = pc->time_numeric;
    GS_TRY(gs_ksp_create("cg", be, &prm, &ksp));
    GS_TRY(gs_vec_create(be, A->nrows, &b));
    GS_TRY(gs_vec_create(be, A->nrows, &x));
    GS_TRY(gs_vec_set(b, 1.0));
    GS_TRY(gs_vec_set(x, 0.0));
    GS_TRY(gs_ksp_solve(ksp, M, pc, b, x, &res));
    *iterations = gs_reason_converged(res.reason) ? res.iterations : -res.iterations;
cleanup:
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_ksp_destroy(&ksp);
    gs_pc_destroy(&pc);
    return st;
}

/* Median time of `sweeps` sweeps (kernels only), each repetition from the initial guess. */
static gs_status time_sweeps(gs_backend *be, const gs_csr *A, bool symmetric, bool asynchronous, int sweeps,
                             int reps, double *seconds)
{
    gs_status st = GS_OK;
    gs_parilu_plan P = {0};
    gs_parilu_kernel K = {0};
    bool have_k = false;
    gs_parilu_opts o = {0};
    double *sd = NULL, *ta = NULL, *x0 = NULL, *ps = NULL, *xa = NULL, *xb = NULL;
    double t[MAX_REPS];
    gs_timer tm = {0};
    o.symmetric = symmetric;
    o.zero_pivot = GS_ZERO_PIVOT_ERROR;
    GS_TRY(gs_parilu_plan_build(A, symmetric, 0, GS_PARILU_FORWARD, 0, &P));
    GS_TRY(GS_MALLOC(sd, P.n));
    GS_TRY(GS_MALLOC(ps, P.n));
    GS_TRY(GS_MALLOC(ta, P.ntasks));
    GS_TRY(GS_MALLOC(x0, P.ntasks));
    GS_TRY(gs_parilu_initial_guess(&P, A, &o, NULL, sd, ta, x0, ps, NULL));
    GS_TRY(gs_parilu_kernel_create(be, &P, false, &K));
    have_k = true;
    GS_TRY(gs_parilu_kernel_set(be, &K, ta, ps));
    size_t bytes = (size_t)P.ntasks * sizeof(double);
    GS_TRY(gs_backend_alloc(be, (void **)&xa, bytes));
    GS_TRY(gs_backend_alloc(be, (void **)&xb, bytes));
    for (int r = 0; r < reps; r++) {
        GS_TRY(gs_backend_upload(be, xa, x0, bytes));
        double *in = xa, *out = asynchronous ? xa : xb;
        GS_TRY(gs_timer_start(be, &tm));
        for (int s = 1; s <= sweeps; s++) {
            GS_TRY(gs_parilu_sweep(be, &K, in, out, s));
            if (!asynchronous) {
                double *tmp = in;
                in = out;
                out = tmp;
            }
        }
        GS_TRY(gs_timer_stop(&tm, &t[r]));
    }
    gs_parilu_flags fl;
    GS_TRY(gs_backend_download(be, &fl, K.flags, sizeof fl));
    if (fl.first_bad != GS_PARILU_NO_ERROR)
        GS_FAIL(GS_ERR_NUMERIC, "bench_parilu: a zero pivot in the timed sweeps (key %llu)", fl.first_bad);
    *seconds = bench_median(t, reps);
cleanup:
    gs_timer_destroy(&tm);
    if (xa) gs_backend_free(be, xa);
    if (xb) gs_backend_free(be, xb);
    if (have_k) gs_parilu_kernel_free(be, &K);
    gs_free(&sd);
    gs_free(&ps);
    gs_free(&ta);
    gs_free(&x0);
    gs_parilu_plan_free(&P);
    return st;
}

#ifdef GS_HAVE_CUDA
/* cuSPARSE csric02 (symmetric) or csrilu02 on A: median analysis and factorization times, and the max
 * relative difference of the result to the host IC(0) / ILU(0) in *err. */
static gs_status time_cusparse(gs_backend *be, const gs_csr *A, bool symmetric, int reps, double *t_ana,
                               double *t_fact, double *err)
{
    double ta[MAX_REPS], tf[MAX_REPS];
    GS_CALL(bench_cusparse_factor(be, A, symmetric, 0, reps, ta, tf, NULL, NULL, err));
    *t_ana = bench_median(ta, reps);
    *t_fact = bench_median(tf, reps);
    return GS_OK;
}
#endif

static gs_status set_int(gs_config *cfg, const char *key, long long v)
{
    char a[128];
    snprintf(a, sizeof a, "%s=%lld", key, v);
    return gs_config_set(cfg, a);
}

/* One SPD matrix: iterations, factorization times, setup times. */
static gs_status bench_ic(gs_backend *be, const bench_opts *o, int k, ic_row *row)
{
    gs_status st = GS_OK;
    gs_csr A = {0};
    gs_matrix *M = NULL;
    gs_config *cfg = NULL;
    memset(row, 0, sizeof *row);
    row->name = o->names[k];
    row->size = o->sizes[k];
    GS_TRY(gs_gen_by_name(o->names[k], o->sizes[k], 0, 0, 0.0, &A));
    row->n = A.nrows;
    row->nnz = A.nnz;
    fprintf(stderr, "bench_parilu: %s %d (n = %d, nnz = %d)\n", row->name, (int)row->size, (int)A.nrows, (int)A.nnz);
    GS_TRY(gs_mat_create(be, &A, &M));
    GS_TRY(gs_config_create(&cfg));

    GS_TRY(pcg_iterations(be, cfg, "ic0", &A, M, o->max_it, &row->it_ic, &row->setup_ic));
    GS_TRY(gs_config_set(cfg, "preconditioner.symmetric=true"));
    GS_TRY(gs_config_set(cfg, "preconditioner.sweep_type=asynchronous"));
    for (int s = 0; s <= o->sweeps; s++) {
        double setup = 0.0;
        GS_TRY(set_int(cfg, "preconditioner.sweeps", s));
        GS_TRY(pcg_iterations(be, cfg, "parilu", &A, M, o->max_it, &row->it_par[s], &setup));
        if (s == o->sweeps) row->setup_par = setup;
    }
    GS_TRY(time_sweeps(be, &A, true, true, o->sweeps, o->reps, &row->t_async));
    GS_TRY(time_sweeps(be, &A, true, false, o->sweeps, o->reps, &row->t_sync));
#ifdef GS_HAVE_CUDA
    GS_TRY(time_cusparse(be, &A, true, o->reps, &row->t_ana, &row->t_fact, &row->err));
#endif
cleanup:
    gs_config_destroy(&cfg);
    gs_mat_destroy(&M);
    gs_csr_free(&A);
    return st;
}

static gs_status bench(const bench_opts *o)
{
    gs_status st = GS_OK;
    gs_backend *be = NULL;
    gs_csr A = {0};
    ic_row rows[MAX_MATRICES];
    int nrow = 0;
    GS_TRY(gs_backend_create("cuda", o->device, &be));
    printf("# bench_parilu on %s: %d sweeps, timings = median of %d (CUDA events)\n", be->device_name, o->sweeps,
           o->reps);
    for (int k = 0; k < o->nmat; k++) {
        GS_TRY(bench_ic(be, o, k, &rows[k]));
        nrow++;
    }

    printf("\nPCG iterations (b = ones, x0 = 0, rtol 1e-6): exact IC(0) and ParIC after s asynchronous sweeps\n");
    printf("%-10s %6s %9s %9s %7s", "matrix", "grid", "n", "nnz", "IC(0)");
    for (int s = 0; s <= o->sweeps; s++) printf("  s=%-3d", s);
    printf("\n");
    for (int k = 0; k < nrow; k++) {
        const ic_row *r = &rows[k];
        printf("%-10s %6d %9d %9d %7d", r->name, (int)r->size, (int)r->n, (int)r->nnz, r->it_ic);
        for (int s = 0; s <= o->sweeps; s++) printf("  %5d", r->it_par[s]);
        printf("\n");
    }
    printf("(a negative count: not converged within %d iterations)\n", o->max_it);

    printf("\nFactorization time [ms]: cuSPARSE csric02 (analysis + factorization) vs %d ParIC sweeps\n", o->sweeps);
    printf("%-10s %6s %10s %10s %10s %12s %12s %10s %10s %10s %12s\n", "matrix", "grid", "ic02_ana", "ic02_fact",
           "ic02_total", "async_swps", "sync_swps", "speedup", "spd_sync", "spd_fact", "ic02_vs_ic0");
    for (int k = 0; k < nrow; k++) {
        const ic_row *r = &rows[k];
        double tot = r->t_ana + r->t_fact;
        printf("%-10s %6d %10.3f %10.3f %10.3f %12.3f %12.3f %10.2f %10.2f %10.2f %12.2e\n", r->name, (int)r->size,
               1e3 * r->t_ana, 1e3 * r->t_fact, 1e3 * tot, 1e3 * r->t_async, 1e3 * r->t_sync,
               r->t_async > 0 ? tot / r->t_async : 0.0, r->t_sync > 0 ? tot / r->t_sync : 0.0,
               r->t_async > 0 ? r->t_fact / r->t_async : 0.0, r->err);
    }
    printf("(speedup = csric02 total / asynchronous sweeps; spd_sync = the same for synchronous sweeps, the\n"
           " default sweep_type; spd_fact = csric02 factorization alone / asynchronous sweeps;\n"
           " ic02_vs_ic0 = max |L_cusparse - L_host IC(0)| / max |L|)\n");

    printf("\nPreconditioner numeric setup [ms] (host IC(0) + trisolve analysis vs ParIC(%d): scaling, upload,\n"
           "sweeps, one download, trisolve analysis)\n",
           o->sweeps);
    printf("%-10s %6s %12s %12s\n", "matrix", "grid", "ic0", "parilu");
    for (int k = 0; k < nrow; k++)
        printf("%-10s %6d %12.1f %12.1f\n", rows[k].name, (int)rows[k].size, 1e3 * rows[k].setup_ic,
               1e3 * rows[k].setup_par);

    if (o->ilu_name[0]) {
        double ta = 0, tf = 0, err = 0, tas = 0, tsy = 0;
        GS_TRY(gs_gen_by_name(o->ilu_name, o->ilu_size, 0, 0, 0.0, &A));
        fprintf(stderr, "bench_parilu: ParILU on %s %d\n", o->ilu_name, (int)o->ilu_size);
        GS_TRY(time_sweeps(be, &A, false, true, o->sweeps, o->reps, &tas));
        GS_TRY(time_sweeps(be, &A, false, false, o->sweeps, o->reps, &tsy));
#ifdef GS_HAVE_CUDA
        GS_TRY(time_cusparse(be, &A, false, o->reps, &ta, &tf, &err));
#endif
        printf("\nParILU vs cuSPARSE csrilu02 [ms] on %s %d (n = %d, nnz = %d)\n", o->ilu_name, (int)o->ilu_size,
               (int)A.nrows, (int)A.nnz);
        printf("%10s %10s %10s %12s %12s %10s %10s %12s\n", "ilu02_ana", "ilu02_fact", "ilu02_total", "async_swps",
               "sync_swps", "speedup", "spd_sync", "ilu02_vs_ilu0");
        printf("%10.3f %10.3f %10.3f %12.3f %12.3f %10.2f %10.2f %12.2e\n", 1e3 * ta, 1e3 * tf, 1e3 * (ta + tf),
               1e3 * tas, 1e3 * tsy, tas > 0 ? (ta + tf) / tas : 0.0, tsy > 0 ? (ta + tf) / tsy : 0.0, err);
    }

cleanup:
    gs_csr_free(&A);
    gs_backend_destroy(&be);
    return st;
}

int main(int argc, char **argv)
{
    bench_opts o;
    if (parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (bench_require_gpu("bench_parilu")) return 77; /* also a build without CUDA */
    if (bench(&o) != GS_OK) {
        gs_error_print(stderr);
        return 1;
    }
    return 0;
}
