/* libgpusolve's C interface (api/gpusolve.h) on the host backend: configuration from file, text and
 * settings and its errors, a solve and its report, repeated solves on one setup, new values of the same
 * pattern (numeric setup only), a new pattern, the monitor, an initial guess, a zero-diagonal matrix by
 * the automatic choice, a setup failure, bad arrays, and the exit classes against the command's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "api/gpusolve.h"
#include "api/exit_codes.h"
#include "core/mem.h"
#include "solver/solver.h"
#include "lib_system.h"

/* ||b - A x|| / ||b|| */
static double true_residual(const gs_csr *A, const double *b, const double *x)
{
    double r2 = 0.0, b2 = 0.0;
    for (gs_int i = 0; i < A->nrows; i++) {
        double r = b[i];
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) r -= A->val[k] * x[A->colind[k]];
        r2 += r * r;
        b2 += b[i] * b[i];
    }
    return sqrt(r2 / b2);
}

static int set_matrix(gpusolve_solver *s, const gs_csr *A)
{
    return gpusolve_set_matrix(s, A->nrows, A->nnz, A->rowptr, A->colind, A->val, 0);
}

static bool has(gpusolve_solver *s, const char *needle)
{
    const char *j = gpusolve_report_json(s);
    if (strstr(j, needle)) return true;
    fprintf(stderr, "report lacks %s:\n%s\n", needle, j);
    return false;
}

static const char *const HOST[] = {"device.backend=host", NULL};

static void test_configuration(void **state)
{
    (void)state;
    gpusolve_solver *s = NULL;
    /* text, then settings (applied last) */
    assert_int_equal(gpusolve_create(&s, NULL, "solver = { type = \"gmres\"; restart = 7; };", HOST), 0);
    assert_true(has(s, "\"status\":\"ok\""));
    assert_int_equal(gpusolve_set(s, "solver.restart=9"), 0);
    gpusolve_destroy(&s);
    assert_null(s);
    gpusolve_destroy(&s); /* NULL is fine */

    /* an unknown key: usage class, the key named, the error report */
    const char *const bad[] = {"solver.restrat=9", NULL};
    assert_int_equal(gpusolve_create(&s, NULL, NULL, bad), GPUSOLVE_EXIT_USAGE);
    assert_non_null(s);
    assert_int_equal(gpusolve_exit_code(s), GPUSOLVE_EXIT_USAGE);
    assert_string_equal(gpusolve_error_status(s), "GS_ERR_CONFIG");
    assert_non_null(strstr(gpusolve_error_message(s), "solver.restrat"));
    assert_true(has(s, "\"status\":\"error\""));
    assert_true(has(s, "solver.restrat"));
    gpusolve_destroy(&s);

    /* a value out of range through gpusolve_set: the handle stays usable */
    assert_int_equal(gpusolve_create(&s, NULL, NULL, HOST), 0);
    assert_int_equal(gpusolve_set(s, "solver.rtol=-1"), GPUSOLVE_EXIT_USAGE);
    assert_non_null(strstr(gpusolve_error_message(s), "solver.rtol"));
    assert_int_equal(gpusolve_set(s, "solver.rtol=1e-9"), 0);
    assert_string_equal(gpusolve_error_message(s), "");
    gpusolve_destroy(&s);

    /* a missing configuration file: input class */
    assert_int_equal(gpusolve_create(&s, "/nonexistent/run.cfg", NULL, NULL), GPUSOLVE_EXIT_INPUT);
    gpusolve_destroy(&s);
    /* a file */
    char path[] = "/tmp/gs_lib_cfgXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("solver = { type = \"bicgstab\"; };\npreconditioner = { type = \"ilu0\"; };\n", f);
    fclose(f);
    system_t sys;
    make_system(&sys, 20);
    assert_int_equal(gpusolve_create(&s, path, NULL, HOST), 0);
    assert_int_equal(set_matrix(s, &sys.A), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), GPUSOLVE_EXIT_CONVERGED);
    assert_true(has(s, "\"method\":\"bicgstab + ilu0;"));
    remove(path);
    gpusolve_destroy(&s);
    free_system(&sys);
}

static void test_solve_and_report(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 30);
    gpusolve_solver *s = NULL;
    assert_int_equal(gpusolve_create(&s, NULL, NULL, HOST), 0);
    assert_string_equal(gpusolve_reason(s), "none");
    assert_int_equal(gpusolve_iterations(s), -1);
    assert_int_equal(set_matrix(s, &sys.A), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), GPUSOLVE_EXIT_CONVERGED);
    assert_string_equal(gpusolve_reason(s), "converged_rtol");
    assert_true(gpusolve_iterations(s) > 0);
    const double r = true_residual(&sys.A, sys.b, sys.x);
    assert_true(r <= 1e-7);
    assert_true(fabs(gpusolve_residual(s) - r) <= 1e-3 * r + 1e-15);
    /* the members of the command's --json object */
    const char *members[] = {"\"gpusolve\":{\"version\"", "\"matrix\":{\"source\":\"arrays\"", "\"time\":{",
                             "\"setup_symbolic\"", "\"where\":{", "\"system\":{\"rhs\":\"given\"", "\"backend\":{",
                             "\"strategy\":{\"automatic\":true,\"class\":\"spd\"", "\"attempts\":[",
                             "\"preconditioner\":{", "\"trisolve\":{", "\"solve\":{\"reason\":\"converged_rtol\"",
                             "\"residual_true\"", "\"setup\":{\"reused\":false", "\"status\":\"ok\"",
                             "\"exit_code\":0", "\"config\":{"};
    for (size_t k = 0; k < sizeof members / sizeof *members; k++) assert_true(has(s, members[k]));
    gpusolve_destroy(&s);
    free_system(&sys);
}

typedef struct monitor_log {
    int calls, last_it;
    double first, last;
} monitor_log;

static void monitor(void *ctx, int iteration, double residual)
{
    monitor_log *m = ctx;
    if (m->calls == 0) m->first = residual;
    m->calls++;
    m->last_it = iteration;
    m->last = residual;
}

static void test_repeated_solves(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 30);
    gpusolve_solver *s = NULL;
    assert_int_equal(gpusolve_create(&s, NULL, NULL, HOST), 0);
    assert_int_equal(set_matrix(s, &sys.A), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    monitor_log m = {0, 0, 0.0, 0.0};
    assert_int_equal(gpusolve_set_monitor(s, monitor, &m), 0);
    for (int rhs = 0; rhs < 3; rhs++) {
        for (gs_int i = 0; i < sys.A.nrows; i++) sys.b[i] = sin(0.1 * (rhs + 1) * i) + 0.5;
        memset(&m, 0, sizeof m);
        assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
        assert_true(true_residual(&sys.A, sys.b, sys.x) <= 1e-7);
        assert_true(has(s, "\"setup\":{\"reused\":true"));
        /* one monitor call per iteration and at iteration 0 */
        assert_int_equal(m.calls, gpusolve_iterations(s) + 1);
        assert_int_equal(m.last_it, gpusolve_iterations(s));
        assert_true(m.last < m.first);
    }
    /* an initial guess: the solution itself needs no iteration */
    assert_int_equal(gpusolve_set_monitor(s, NULL, NULL), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, GPUSOLVE_GUESS), 0);
    assert_int_equal(gpusolve_iterations(s), 0);
    assert_true(has(s, "\"x0\":\"given\""));
    /* a setting drops the setup */
    assert_int_equal(gpusolve_set(s, "solver.rtol=1e-10"), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    assert_true(has(s, "\"setup\":{\"reused\":false"));
    assert_true(true_residual(&sys.A, sys.b, sys.x) <= 1e-9);
    gpusolve_destroy(&s);
    free_system(&sys);
}

static void test_new_values_same_pattern(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 25);
    gpusolve_solver *s = NULL;
    const char *const ilu[] = {"device.backend=host", "solver.type=gmres", "preconditioner.type=iluk",
                               "preconditioner.fill_level=1", "system.reorder=rcm", NULL};
    assert_int_equal(gpusolve_create(&s, NULL, NULL, ilu), 0);
    assert_int_equal(set_matrix(s, &sys.A), 0);
    /* an explicit configuration is set up by gpusolve_setup */
    assert_int_equal(gpusolve_setup(s), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    assert_true(has(s, "\"setup\":{\"reused\":false,\"refactored\":false"));
    assert_true(has(s, "\"reorder\":\"rcm\""));
    /* the same pattern, other values (a shifted, nonsymmetric matrix) */
    for (gs_int i = 0; i < sys.A.nrows; i++)
        for (gs_int k = sys.A.rowptr[i]; k < sys.A.rowptr[i + 1]; k++)
            sys.A.val[k] = sys.A.colind[k] == i ? 5.0 + 0.01 * i : (sys.A.colind[k] > i ? -1.3 : -0.7);
    assert_int_equal(set_matrix(s, &sys.A), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    assert_true(has(s, "\"setup\":{\"reused\":true,\"refactored\":true"));
    assert_true(has(s, "\"setup_symbolic\":0.0,")); /* the symbolic setup kept: no time spent on it */
    assert_true(true_residual(&sys.A, sys.b, sys.x) <= 1e-7);
    /* another pattern: set up afresh */
    gs_csr B;
    GS_ASSERT_OK(gs_test_laplace2d(20, 30, &B));
    assert_int_equal(set_matrix(s, &B), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    assert_true(has(s, "\"setup\":{\"reused\":false,\"refactored\":false"));
    assert_true(true_residual(&B, sys.b, sys.x) <= 1e-7);
    gs_csr_free(&B);
    gpusolve_destroy(&s);
    free_system(&sys);
}

static void test_zero_diagonal_and_failures(void **state)
{
    (void)state;
    gpusolve_solver *s = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/matrices/west0067.mtx", GS_DATA_DIR);
    double b[67], x[67];
    for (int i = 0; i < 67; i++) b[i] = 1.0;
    /* the automatic choice: the matching and its scaling */
    assert_int_equal(gpusolve_create(&s, NULL, NULL, HOST), 0);
    assert_int_equal(gpusolve_size(s), 0);
    assert_int_equal(gpusolve_read_matrix(s, path), 0);
    assert_int_equal(gpusolve_size(s), 67);
    assert_int_equal(gpusolve_solve(s, b, x, 0), 0);
    assert_true(gpusolve_residual(s) <= 1e-7);
    assert_true(has(s, "\"class\":\"weak-diagonal\""));
    assert_true(has(s, "\"matching\":\"mwm\""));
    assert_true(has(s, "\"name\":\"west0067.mtx\""));
    gpusolve_destroy(&s);

    /* ILU(0) on the zero diagonal, no fallback: the setup fails with a numerical class */
    const char *const ilu0[] = {"device.backend=host", "solver.type=gmres", "preconditioner.type=ilu0",
                                "preconditioner.zero_pivot=error", "solver.fallback=none", NULL};
    assert_int_equal(gpusolve_create(&s, NULL, NULL, ilu0), 0);
    assert_int_equal(gpusolve_read_matrix(s, path), 0);
    assert_int_equal(gpusolve_setup(s), GPUSOLVE_EXIT_NUMERICAL);
    assert_string_equal(gpusolve_reason(s), "diverged_pc_failed");
    assert_non_null(strstr(gpusolve_reason_detail(s), "pivot"));
    assert_int_equal(gpusolve_solve(s, b, x, 0), GPUSOLVE_EXIT_NUMERICAL);
    assert_true(has(s, "\"converged\":false"));
    /* with the fallback, the ladder takes over */
    assert_int_equal(gpusolve_set(s, "solver.fallback=auto"), 0);
    assert_int_equal(gpusolve_solve(s, b, x, 0), 0);
    assert_true(has(s, "\"attempts\":2"));
    gpusolve_destroy(&s);

    /* bad arrays, device pointers on the host backend, no matrix, a missing file */
    assert_int_equal(gpusolve_create(&s, NULL, NULL, HOST), 0);
    assert_int_equal(gpusolve_solve(s, b, x, 0), GPUSOLVE_EXIT_USAGE);
    assert_non_null(strstr(gpusolve_error_message(s), "no matrix"));
    int rowptr[3] = {0, 1, 2}, colind[2] = {0, 2};
    double val[2] = {1.0, 1.0};
    assert_int_equal(gpusolve_set_matrix(s, 2, 2, rowptr, colind, val, 0), GPUSOLVE_EXIT_USAGE);
    assert_non_null(strstr(gpusolve_error_message(s), "column index 2"));
    colind[1] = 1;
    assert_int_equal(gpusolve_set_matrix(s, 2, 2, rowptr, colind, val, GPUSOLVE_DEVICE), GPUSOLVE_EXIT_USAGE);
    assert_non_null(strstr(gpusolve_error_message(s), "cuda backend"));
    assert_int_equal(gpusolve_set_matrix(s, 2, 2, rowptr, colind, val, 0), 0);
    assert_int_equal(gpusolve_solve(s, b, x, 0), 0);
    assert_true(fabs(x[0] - 1.0) < 1e-12 && fabs(x[1] - 1.0) < 1e-12);
    assert_int_equal(gpusolve_read_matrix(s, "/nonexistent.mtx"), GPUSOLVE_EXIT_INPUT);
    assert_string_equal(gpusolve_error_status(s), "GS_ERR_IO");
    gpusolve_destroy(&s);
}

/* The library's exit classes are the command's exit codes. */
static void test_exit_classes(void **state)
{
    (void)state;
    assert_int_equal(GPUSOLVE_EXIT_CONVERGED, GS_EXIT_CONVERGED);
    assert_int_equal(GPUSOLVE_EXIT_NOT_CONVERGED, GS_EXIT_NOT_CONVERGED);
    assert_int_equal(GPUSOLVE_EXIT_USAGE, GS_EXIT_USAGE);
    assert_int_equal(GPUSOLVE_EXIT_INPUT, GS_EXIT_INPUT);
    assert_int_equal(GPUSOLVE_EXIT_NUMERICAL, GS_EXIT_NUMERICAL);
    assert_int_equal(GPUSOLVE_EXIT_DEVICE, GS_EXIT_DEVICE);
    assert_int_equal(GPUSOLVE_EXIT_INTERRUPTED, GS_EXIT_INTERRUPTED);
    assert_int_equal(GPUSOLVE_EXIT_INTERNAL, GS_EXIT_INTERNAL);
    assert_string_equal(gpusolve_version(), GS_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configuration),       cmocka_unit_test(test_solve_and_report),
        cmocka_unit_test(test_repeated_solves),     cmocka_unit_test(test_new_values_same_pattern),
        cmocka_unit_test(test_zero_diagonal_and_failures), cmocka_unit_test(test_exit_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
