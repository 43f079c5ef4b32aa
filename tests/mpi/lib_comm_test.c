/* Run under mpirun (2 or 3 ranks): libgpusolve's solvers over a communicator (api/gpusolve_mpi.h) against
 * the library in one process. Block Jacobi (bilu with blocks = P) and RAS give the iterations (+-1) and
 * the solution (relative 1e-8) of one process with preconditioner.blocks = P, for two right-hand sides on
 * one setup (the second reuses it), and for new values of the matrix's pattern (the setup refactored, as
 * a fresh setup of them; another pattern sets up afresh); every rank returns the same outcome, a rank
 * that passes x receives the solution, ranks may pass NULL arrays; the monitor runs on every rank. An
 * invalid setting on one rank, ranks configured differently, bad arrays on rank 0, a file rank 0 cannot
 * read, a setup without a matrix, a zero pivot in one rank's block and an interrupt requested on one rank
 * end the call on every rank with the same exit class and message. A matrix given by rows per rank
 * (gpusolve_set_local_rows) solves as one process with its contiguous blocks, or with uneven rows to the
 * tolerance. A communicator of one rank gives gpusolve_create's solver. Exit 0 on success, 1 on a failed check. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/gpusolve_mpi.h"
#include "core/csr.h"
#include "core/generate.h"

#include "mpi_check.h"

static const char *const COMMON[] = {"device.backend=host", "solver.rtol=1e-10", "solver.fallback=none",
                                     "system.matching=none", "system.scaling=none", "system.reorder=none", NULL};

/* Rank 0's problem (the other ranks hold none): A, two right-hand sides. */
typedef struct problem {
    gs_csr A;
    double *b1, *b2;
    int n;
} problem;

static double rel_diff(const double *x, const double *y, int n)
{
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) {
        num += (x[i] - y[i]) * (x[i] - y[i]);
        den += y[i] * y[i];
    }
    return sqrt(num / (den > 0 ? den : 1.0));
}

/* A solver configured by COMMON and then extra (on every rank of comm). */
static gpusolve_solver *make(MPI_Comm comm, const char *const *extra)
{
    gpusolve_solver *s = NULL;
    int code = comm == MPI_COMM_NULL ? gpusolve_create(&s, NULL, NULL, COMMON)
                                     : gpusolve_create_comm(&s, comm, NULL, NULL, COMMON);
    CHECK(code == 0, "create: %d %s", code, gpusolve_error_message(s));
    for (const char *const *p = extra; p && *p; p++) CHECK(gpusolve_set(s, *p) == 0, "set %s", *p);
    return s;
}

static int set_matrix(gpusolve_solver *s, const gs_csr *A)
{
    if (rank != 0) return gpusolve_set_matrix(s, 0, 0, NULL, NULL, NULL, 0); /* not read */
    return gpusolve_set_matrix(s, A->nrows, A->nnz, A->rowptr, A->colind, A->val, 0);
}

/* Whether every rank holds the same value and the same text. */
static bool same_everywhere(int v, const char *text)
{
    int lo = 0, hi = 0;
    char root[1024];
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    snprintf(root, sizeof root, "%s", text);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    int mine = lo == hi && strncmp(root, text, sizeof root - 1) == 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
}

static void count_monitor(void *ctx, int iteration, double residual)
{
    (void)iteration;
    (void)residual;
    ++*(int *)ctx;
}

/* One method on P ranks against one process with preconditioner.blocks = P, two right-hand sides. */
static void equivalence(const problem *p, const char *label, const char *const *mpi_sets, const char *const *one_sets)
{
    double *x = calloc((size_t)(p->n > 0 ? p->n : 1), sizeof *x), *x1 = NULL;
    int its1[2] = {0, 0}, calls = 0;
    if (rank == 0) { /* one process */
        gpusolve_solver *one = make(MPI_COMM_NULL, one_sets);
        x1 = calloc((size_t)p->n * 2, sizeof *x1);
        CHECK(set_matrix(one, &p->A) == 0, "%s: one process set_matrix", label);
        CHECK(gpusolve_solve(one, p->b1, x1, 0) == 0, "%s: one process solve 1", label);
        its1[0] = gpusolve_iterations(one);
        CHECK(gpusolve_solve(one, p->b2, x1 + p->n, 0) == 0, "%s: one process solve 2", label);
        its1[1] = gpusolve_iterations(one);
        gpusolve_destroy(&one);
    }
    gpusolve_solver *s = make(MPI_COMM_WORLD, mpi_sets);
    gpusolve_set_monitor(s, count_monitor, &calls);
    CHECK(set_matrix(s, &p->A) == 0, "%s: set_matrix %s", label, gpusolve_error_message(s));
    int n = gpusolve_size(s);
    CHECK(same_everywhere(n, "") && n > 0, "%s: gpusolve_size %d", label, n);
    double *xr = rank == size - 1 && rank != 0 ? NULL : calloc((size_t)n, sizeof *xr); /* the last rank: none */
    for (int k = 0; k < 2; k++) {
        const double *b = rank == 0 ? (k == 0 ? p->b1 : p->b2) : NULL;
        calls = 0;
        int code = gpusolve_solve(s, b, rank == 0 ? x : xr, 0);
        const int its = gpusolve_iterations(s);
        CHECK(code == 0, "%s: solve %d: exit %d: %s", label, k + 1, code, gpusolve_error_message(s));
        CHECK(same_everywhere(code, gpusolve_reason(s)) && same_everywhere(its, gpusolve_reason_detail(s)),
              "%s: solve %d: the ranks' outcomes differ", label, k + 1);
        CHECK(calls == its + 1, "%s: solve %d: the monitor ran %d times for %d iterations", label, k + 1, calls, its);
        const char *json = gpusolve_report_json(s);
        if (rank == 0) {
            double d = rel_diff(x, x1 + (size_t)k * p->n, p->n);
            CHECK(abs(its - its1[k]) <= 1, "%s: solve %d: %d iterations on %d ranks, %d on one process", label, k + 1,
                  its, size, its1[k]);
            CHECK(d < 1e-8, "%s: solve %d: the solutions differ by %.3g", label, k + 1, d);
            CHECK(strstr(json, "\"parallel\":{") && strstr(json, "\"halo\":["), "%s: report %s", label, json);
            CHECK(strstr(json, k == 0 ? "\"reused\":false" : "\"reused\":true"), "%s: solve %d: setup.reused: %s",
                  label, k + 1, json);
            printf("%s on %d ranks, b%d: %d iterations (one process: %d), solutions differ by %.2g\n", label, size,
                   k + 1, its, its1[k], d);
        } else {
            CHECK(strstr(json, "\"rank\":") && strstr(json, "\"status\":\"ok\""), "%s: rank report %s", label, json);
        }
        /* the solution on the other ranks that passed x: rank 0's, entry for entry */
        double *root = calloc((size_t)n, sizeof *root);
        if (rank == 0) memcpy(root, x, (size_t)n * sizeof *x);
        MPI_Bcast(root, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (xr && rank != 0) CHECK(memcmp(xr, root, (size_t)n * sizeof *xr) == 0, "%s: x on rank %d", label, rank);
        free(root);
    }
    gpusolve_destroy(&s);
    free(x);
    free(x1);
    free(xr);
}

/* Rank 0: one solve of B b = x on one process (iterations, solution in x). */
static int one_process(const char *const *sets, const gs_csr *B, const double *b, double *x)
{
    gpusolve_solver *one = make(MPI_COMM_NULL, sets);
    CHECK(set_matrix(one, B) == 0 && gpusolve_solve(one, b, x, 0) == 0, "one process: %s", gpusolve_error_message(one));
    const int its = gpusolve_iterations(one);
    gpusolve_destroy(&one);
    return its;
}

/* New values of the pattern set up keep the distributed setup (setup.refactored, the numeric phase only)
 * and solve as a fresh setup of the new matrix does, on one process too; a matrix of another pattern
 * sets up afresh. */
static void refactor(const problem *p, const char *label, const char *const *mpi_sets, const char *const *one_sets)
{
    gs_csr B = {0}, C = {0};
    double *x = calloc((size_t)(p->n > 0 ? p->n : 1), sizeof *x), *x1 = calloc((size_t)(p->n > 0 ? p->n : 1), 8);
    if (rank == 0) { /* B: A's pattern, other values; C: the 27-point Laplacian, another pattern of n rows */
        if (gs_csr_copy(&p->A, &B) != GS_OK || gs_gen_laplace27(10, 9, 8, &C) != GS_OK) abort();
        for (gs_int i = 0; i < B.nrows; i++)
            for (gs_int q = B.rowptr[i]; q < B.rowptr[i + 1]; q++)
                B.val[q] *= B.colind[q] == i ? 1.0 + 0.3 * (double)(i % 3) : 1.1;
    }
    gpusolve_solver *s = make(MPI_COMM_WORLD, mpi_sets);
    CHECK(set_matrix(s, &p->A) == 0 && gpusolve_solve(s, p->b1, rank == 0 ? x : NULL, 0) == 0, "%s: the first solve",
          label);
    CHECK(set_matrix(s, &B) == 0, "%s: new values: %s", label, gpusolve_error_message(s));
    int code = gpusolve_solve(s, p->b1, rank == 0 ? x : NULL, 0), its = gpusolve_iterations(s);
    CHECK(code == 0 && same_everywhere(its, ""), "%s: refactored solve: exit %d", label, code);
    if (rank == 0) {
        const char *json = gpusolve_report_json(s);
        CHECK(strstr(json, "\"refactored\":true") && strstr(json, "\"reused\":true"), "%s: report %s", label, json);
        const int its1 = one_process(one_sets, &B, p->b1, x1);
        const double d = rel_diff(x, x1, p->n);
        CHECK(abs(its - its1) <= 1 && d < 1e-8,
              "%s: refactored: %d iterations (one process %d), solutions differ by %.3g", label, its, its1, d);
        printf("%s on %d ranks, new values: %d iterations (one process: %d), solutions differ by %.2g\n", label, size,
               its, its1, d);
    }
    /* the same new values set up afresh: the same iterations and solution */
    gpusolve_solver *f = make(MPI_COMM_WORLD, mpi_sets);
    double *xf = calloc((size_t)(p->n > 0 ? p->n : 1), sizeof *xf);
    CHECK(set_matrix(f, &B) == 0 && gpusolve_solve(f, p->b1, rank == 0 ? xf : NULL, 0) == 0,
          "%s: fresh setup of the new values", label);
    CHECK(gpusolve_iterations(f) == its, "%s: %d iterations refactored, %d set up afresh", label, its,
          gpusolve_iterations(f));
    if (rank == 0) CHECK(rel_diff(x, xf, p->n) < 1e-12, "%s: refactored and fresh solutions differ", label);
    gpusolve_destroy(&f);
    /* another pattern: a setup afresh */
    CHECK(set_matrix(s, &C) == 0, "%s: another pattern: %s", label, gpusolve_error_message(s));
    code = gpusolve_solve(s, p->b1, rank == 0 ? x : NULL, 0);
    CHECK(code == 0, "%s: another pattern: exit %d: %s", label, code, gpusolve_error_message(s));
    if (rank == 0) {
        const char *json = gpusolve_report_json(s);
        CHECK(strstr(json, "\"refactored\":false") && strstr(json, "\"reused\":false"), "%s: report %s", label, json);
        const int its1 = one_process(one_sets, &C, p->b1, x1);
        CHECK(abs(gpusolve_iterations(s) - its1) <= 1 && rel_diff(x, x1, p->n) < 1e-8,
              "%s: another pattern: %d iterations (one process %d)", label, gpusolve_iterations(s), its1);
    }
    gpusolve_destroy(&s);
    gs_csr_free(&B);
    gs_csr_free(&C);
    free(x);
    free(x1);
    free(xf);
}

/* The 5-point Laplacian on nx x ny with row z's diagonal zero and its entries left of it dropped: ILU meets
 * a zero pivot there, whatever rows precede it in its block. */
static void zero_pivot_matrix(int nx, int ny, int z, gs_csr *A)
{
    const int n = nx * ny;
    memset(A, 0, sizeof *A);
    if (gs_csr_alloc(A, n, n, 5 * n, true) != GS_OK) abort();
    int q = 0;
    for (int i = 0; i < n; i++) {
        const int x = i % nx, y = i / nx;
        const int nb[5] = {y > 0 ? i - nx : -1, x > 0 ? i - 1 : -1, i, x < nx - 1 ? i + 1 : -1,
                           y < ny - 1 ? i + nx : -1};
        for (int k = 0; k < 5; k++) {
            if (nb[k] < 0 || (i == z && nb[k] < i)) continue;
            A->colind[q] = nb[k];
            A->val[q++] = nb[k] == i ? (i == z ? 0.0 : 4.0) : -1.0;
        }
        A->rowptr[i + 1] = q;
    }
    A->nnz = q;
}

/* Errors: every rank ends the call with the same exit class and message. */
static void errors(const problem *p)
{
    gpusolve_solver *s = make(MPI_COMM_WORLD, NULL);
    /* an invalid setting on the last rank alone */
    int code = gpusolve_set(s, rank == size - 1 ? "solver.restrat=3" : "solver.restart=30");
    CHECK(code == GPUSOLVE_EXIT_USAGE, "invalid setting: exit %d", code);
    CHECK(same_everywhere(code, gpusolve_error_message(s)), "invalid setting: messages differ: %s",
          gpusolve_error_message(s));
    CHECK(strstr(gpusolve_error_message(s), "solver.restrat") && strstr(gpusolve_error_message(s), "rank "),
          "invalid setting: message %s", gpusolve_error_message(s));
    /* a setup without a matrix */
    code = gpusolve_setup(s);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)), "no matrix: exit %d",
          code);
    /* bad arrays on rank 0: rowptr decreases */
    int rowptr[4] = {0, 2, 1, 3}, colind[3] = {0, 1, 2};
    double val[3] = {1, 1, 1};
    code = gpusolve_set_matrix(s, 3, 3, rank == 0 ? rowptr : NULL, colind, val, 0);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)), "bad arrays: exit %d: %s",
          code, gpusolve_error_message(s));
    CHECK(gpusolve_size(s) == 0, "bad arrays: size %d", gpusolve_size(s));
    /* a file rank 0 cannot read */
    code = gpusolve_read_matrix(s, rank == 0 ? "/nonexistent/A.mtx" : NULL);
    CHECK(code == GPUSOLVE_EXIT_INPUT && same_everywhere(code, gpusolve_error_message(s)), "missing file: exit %d: %s",
          code, gpusolve_error_message(s));
    /* ranks configured differently: refused at the setup */
    CHECK(set_matrix(s, &p->A) == 0, "set_matrix: %s", gpusolve_error_message(s));
    gpusolve_set(s, rank == 1 ? "solver.restart=20" : "solver.restart=30");
    code = gpusolve_setup(s);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)) &&
              strstr(gpusolve_error_message(s), "rank 1: "),
          "different configurations: exit %d: %s", code, gpusolve_error_message(s));
    gpusolve_destroy(&s);

    /* a zero pivot in one rank's block (zero_pivot = error): a numerical failure of every rank */
    gs_csr Z = {0};
    if (rank == 0) zero_pivot_matrix(10, 10, 22, &Z);
    const char *const zp[] = {"solver.type=gmres", "preconditioner.type=ilu0", "preconditioner.zero_pivot=error", NULL};
    s = make(MPI_COMM_WORLD, zp);
    CHECK(set_matrix(s, &Z) == 0, "zero pivot: set_matrix");
    double *b = rank == 0 ? calloc(100, sizeof *b) : NULL, *x = rank == 0 ? calloc(100, sizeof *x) : NULL;
    for (int i = 0; b && i < 100; i++) b[i] = 1.0;
    code = gpusolve_setup(s);
    CHECK(code == GPUSOLVE_EXIT_NUMERICAL && same_everywhere(code, gpusolve_reason_detail(s)) &&
              strcmp(gpusolve_reason(s), "diverged_pc_failed") == 0 && strstr(gpusolve_reason_detail(s), "23"),
          "zero pivot: setup exit %d, %s: %s", code, gpusolve_reason(s), gpusolve_reason_detail(s));
    code = gpusolve_solve(s, b, x, 0); /* the setup is made again, and fails again */
    CHECK(code == GPUSOLVE_EXIT_NUMERICAL && same_everywhere(code, gpusolve_reason_detail(s)),
          "zero pivot: solve exit %d: %s", code, gpusolve_reason_detail(s));
    if (rank == 0) printf("zero pivot on %d ranks: %s\n", size, gpusolve_reason_detail(s));
    gpusolve_destroy(&s);
    gs_csr_free(&Z);
    free(b);
    free(x);
}

/* An interrupt requested on the last rank before a solve stops it on every rank. */
static void interrupt(const problem *p)
{
    const char *const sets[] = {"solver.type=gmres", "preconditioner.type=ilu0", NULL};
    gpusolve_solver *s = make(MPI_COMM_WORLD, sets);
    double *x = rank == 0 ? calloc((size_t)p->n, sizeof *x) : NULL;
    CHECK(set_matrix(s, &p->A) == 0 && gpusolve_setup(s) == 0, "interrupt: setup %s", gpusolve_error_message(s));
    if (rank == size - 1) gpusolve_interrupt(s);
    int code = gpusolve_solve(s, rank == 0 ? p->b1 : NULL, x, 0);
    CHECK(code == GPUSOLVE_EXIT_INTERRUPTED && same_everywhere(code, gpusolve_reason(s)) &&
              strcmp(gpusolve_reason(s), "diverged_interrupted") == 0,
          "interrupt: exit %d, %s", code, gpusolve_reason(s));
    code = gpusolve_solve(s, rank == 0 ? p->b1 : NULL, x, 0); /* the request was taken */
    CHECK(code == 0 && same_everywhere(code, ""), "after the interrupt: exit %d", code);
    gpusolve_destroy(&s);
    free(x);
}

/* A communicator of one rank: gpusolve_create's solver, to the bit. */
static void one_rank(const problem *p)
{
    const char *const sets[] = {"solver.type=bicgstab", "preconditioner.type=ilu0", NULL};
    gpusolve_solver *a = make(MPI_COMM_NULL, sets), *b = make(MPI_COMM_SELF, sets);
    double *xa = calloc((size_t)p->n, sizeof *xa), *xb = calloc((size_t)p->n, sizeof *xb);
    CHECK(set_matrix(a, &p->A) == 0 && set_matrix(b, &p->A) == 0, "one rank: set_matrix");
    CHECK(gpusolve_solve(a, p->b1, xa, 0) == 0 && gpusolve_solve(b, p->b1, xb, 0) == 0, "one rank: solves");
    CHECK(gpusolve_iterations(a) == gpusolve_iterations(b) && memcmp(xa, xb, (size_t)p->n * sizeof *xa) == 0,
          "one rank: %d and %d iterations, other solutions", gpusolve_iterations(a), gpusolve_iterations(b));
    CHECK(!strstr(gpusolve_report_json(b), "\"parallel\""), "one rank: a parallel object");
    gpusolve_destroy(&a);
    gpusolve_destroy(&b);
    free(xa);
    free(xb);
}

/* Every rank's rows of A (the whole matrix, held by every rank in this test) from first to first + m. */
static int set_rows(gpusolve_solver *s, const gs_csr *A, int first, int m)
{
    if (m == 0) return gpusolve_set_local_rows(s, A->nrows, first, 0, NULL, NULL, NULL); /* a rank without rows */
    int *rp = calloc((size_t)m + 1, sizeof *rp);
    for (int i = 0; i <= m; i++) rp[i] = A->rowptr[first + i] - A->rowptr[first];
    int code = gpusolve_set_local_rows(s, A->nrows, first, m, rp, A->colind + A->rowptr[first],
                                       A->val + A->rowptr[first]);
    free(rp);
    return code;
}

/* A matrix given by rows per rank (gpusolve_set_local_rows, gpusolve_solve_local): with the contiguous
 * parts, the iterations (+-1) and solution of one process with those blocks; with uneven rows of the
 * caller's choosing, the one-process solution to the tolerance; a second solve with the solution as the
 * guess takes no iteration; a gap between the ranks' rows, a size that differs, and solving through the
 * other call end the call on every rank with the same message. */
static void local_rows(const char *const *mpi_sets, const char *const *one_sets)
{
    gs_csr A = {0};
    if (gs_gen_convdiff3d(10, 9, 8, 20.0, &A) != GS_OK) abort(); /* every rank makes the whole matrix here */
    const int n = (int)A.nrows;
    double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x), *x1 = calloc((size_t)n, 8);
    int *cnt = calloc((size_t)size, sizeof *cnt), *dsp = calloc((size_t)size, sizeof *dsp);
    for (int i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 5);
    for (int layout = 0; layout < 3; layout++) {
        /* 0: the contiguous parts (preconditioner.partition); 1: uneven, rank 0 the fewest; 2: rank 0 none */
        for (int r = 0; r <= size; r++) {
            int f = layout == 0   ? (int)(((long long)r * n + size - 1) / size)
                    : layout == 1 ? (int)((long long)n * r * r / (size * size))
                                  : (r == 0 ? 0 : (int)((long long)n * (r - 1) / (size - 1)));
            if (r < size) dsp[r] = f;
            if (r > 0) cnt[r - 1] = f - dsp[r - 1];
        }
        const int first = dsp[rank], m = cnt[rank];
        gpusolve_solver *s = make(MPI_COMM_WORLD, mpi_sets);
        CHECK(set_rows(s, &A, first, m) == 0, "local rows %d: %s", layout, gpusolve_error_message(s));
        CHECK(gpusolve_size(s) == n, "local rows %d: size %d", layout, gpusolve_size(s));
        double *bl = m > 0 ? b + first : NULL, *xl = m > 0 ? x + first : NULL; /* NULL on a rank without rows */
        int code = gpusolve_solve_local(s, bl, xl, 0), its = gpusolve_iterations(s);
        CHECK(code == 0 && same_everywhere(its, gpusolve_reason(s)), "local rows %d: exit %d %s", layout, code,
              gpusolve_error_message(s));
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, x, cnt, dsp, MPI_DOUBLE, MPI_COMM_WORLD);
        if (rank == 0) {
            const char *json = gpusolve_report_json(s);
            CHECK(strstr(json, "every rank its rows") && strstr(json, "\"rows\":720"), "local rows: report %s", json);
            const int its1 = one_process(one_sets, &A, b, x1);
            const double d = rel_diff(x, x1, n);
            CHECK(layout > 0 ? d < 1e-7 : (abs(its - its1) <= 1 && d < 1e-8),
                  "local rows %d: %d iterations (one process %d), solutions differ by %.3g", layout, its, its1, d);
            printf("rows per rank (%s) on %d ranks: %d iterations (one process: %d), solutions differ by %.2g\n",
                   layout == 0 ? "contiguous" : layout == 1 ? "uneven" : "rank 0 without rows", size, its, its1, d);
        }
        code = gpusolve_solve_local(s, bl, xl, GPUSOLVE_GUESS);
        CHECK(code == 0 && gpusolve_iterations(s) <= 1, "local rows %d: a solve from the solution took %d iterations",
              layout, gpusolve_iterations(s));
        code = gpusolve_solve(s, b, x, 0);
        CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)) &&
                  strstr(gpusolve_error_message(s), "gpusolve_solve_local"),
              "local rows: gpusolve_solve accepted: %d %s", code, gpusolve_error_message(s));
        gpusolve_destroy(&s);
    }
    /* a gap: rank 1 starts one row late */
    gpusolve_solver *s = make(MPI_COMM_WORLD, mpi_sets);
    const int first = dsp[rank] + (rank == 1), m = cnt[rank] - (rank == 1);
    int code = set_rows(s, &A, first, m);
    if (code == 0) code = gpusolve_solve_local(s, b + first, x + first, 0);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)) &&
              strstr(gpusolve_error_message(s), "expected rows from"),
          "local rows with a gap: exit %d %s", code, gpusolve_error_message(s));
    /* a column beyond the matrix in the last rank's rows: every rank refuses, naming the global row */
    {
        const int f = dsp[size - 1], m2 = cnt[size - 1], last = size - 1;
        int rp[2] = {0, 1}, bad_col = n;
        double v = 1.0;
        code = rank == last ? gpusolve_set_local_rows(s, n, f, 1, rp, &bad_col, &v) : set_rows(s, &A, dsp[rank], cnt[rank]);
        char want[64];
        snprintf(want, sizeof want, "row %d has column index %d", f, n);
        CHECK(m2 > 0 && code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)) &&
                  strstr(gpusolve_error_message(s), want),
              "local rows with a bad column: exit %d %s", code, gpusolve_error_message(s));
    }
    /* sizes that differ; solve_local on rank 0's matrix */
    code = gpusolve_set_local_rows(s, rank == 0 ? n : n + 1, 0, 0, NULL, NULL, NULL);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)),
          "local rows of different sizes: exit %d %s", code, gpusolve_error_message(s));
    code = set_matrix(s, &A);
    if (code == 0) code = gpusolve_solve_local(s, b, x, 0);
    CHECK(code == GPUSOLVE_EXIT_USAGE && same_everywhere(code, gpusolve_error_message(s)) &&
              strstr(gpusolve_error_message(s), "solve with gpusolve_solve"),
          "solve_local on rank 0's matrix: exit %d %s", code, gpusolve_error_message(s));
    gpusolve_destroy(&s);
    gs_csr_free(&A);
    free(b);
    free(x);
    free(x1);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    problem p;
    memset(&p, 0, sizeof p);
    if (rank == 0) {
        if (gs_gen_convdiff3d(10, 9, 8, 20.0, &p.A) != GS_OK) abort();
        p.n = (int)p.A.nrows;
        p.b1 = calloc((size_t)p.n, sizeof *p.b1);
        p.b2 = calloc((size_t)p.n, sizeof *p.b2);
        for (int i = 0; i < p.n; i++) {
            p.b1[i] = 1.0 + (double)(i % 5);
            p.b2[i] = sin(0.1 * i);
        }
    }
    char blocks[64];
    snprintf(blocks, sizeof blocks, "preconditioner.blocks=%d", size);
    const char *const bilu[] = {"solver.type=gmres", "preconditioner.type=bilu", blocks, NULL};
    equivalence(&p, "gmres bilu", bilu, bilu);
    const char *const ras_p[] = {"solver.type=gmres", "preconditioner.type=ras", "preconditioner.overlap=1", NULL};
    const char *const ras_1[] = {"solver.type=gmres", "preconditioner.type=ras", "preconditioner.overlap=1", blocks,
                                 NULL};
    equivalence(&p, "gmres ras(1)", ras_p, ras_1);
    const char *const bicg_p[] = {"solver.type=bicgstab", "preconditioner.type=ilu0", NULL};
    const char *const bicg_1[] = {"solver.type=bicgstab", "preconditioner.type=bilu", blocks, NULL};
    equivalence(&p, "bicgstab ilu0 blocks", bicg_p, bicg_1);
    refactor(&p, "gmres bilu", bilu, bilu);
    refactor(&p, "gmres ras(1)", ras_p, ras_1);
    const char *const cont_p[] = {"solver.type=gmres", "preconditioner.type=ilu0", NULL};
    const char *const cont_1[] = {"solver.type=gmres", "preconditioner.type=bilu", "preconditioner.partition=contiguous",
                                  blocks, NULL};
    local_rows(cont_p, cont_1);
    errors(&p);
    interrupt(&p);
    if (rank == 0) one_rank(&p);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("lib_comm on %d ranks: %s (%d failed checks)\n", size, total ? "FAILED" : "ok", total);
    gs_csr_free(&p.A);
    free(p.b1);
    free(p.b2);
    MPI_Finalize();
    return total ? 1 : 0;
}
