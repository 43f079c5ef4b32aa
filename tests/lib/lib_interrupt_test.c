/* gpusolve_interrupt (api/gpusolve.h) on the host backend (with --cuda: on the cuda backend, a GPU test):
 * from the monitor in CG, BiCGStab and GMRES (the solve stops at that
 * iteration with reason diverged_interrupted and exit class 6, its iterate in x, no fallback attempt),
 * from another thread during a long solve, before a solve (the next call stops at once, the one after
 * runs), before an explicit setup; the request is taken by the call it stops; other handles are not
 * affected; a NULL handle. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

#include "api/gpusolve.h"
#include "core/backend.h"
#include "core/mem.h"
#include "lib_system.h"

static const char *backend_setting = "device.backend=host"; /* --cuda: device.backend=cuda */

/* CG without a preconditioner and no fallback ladder: many iterations, one attempt. */
static gpusolve_solver *make_solver(const system_t *sys, const char *rtol)
{
    const char *settings[] = {backend_setting, "solver.type=cg", "preconditioner.type=none",
                              "solver.max_iterations=1000000", "solver.fallback=none", rtol, NULL};
    gpusolve_solver *s = NULL;
    assert_int_equal(gpusolve_create(&s, NULL, NULL, settings), 0);
    assert_int_equal(gpusolve_set_matrix(s, sys->A.nrows, sys->A.nnz, sys->A.rowptr, sys->A.colind, sys->A.val, 0),
                     0);
    return s;
}

typedef struct stopper {
    gpusolve_solver *s;
    int at;   /* interrupt when this iteration is reached */
    int last; /* the last iteration seen */
} stopper;

static void stop_at(void *ctx, int iteration, double residual)
{
    (void)residual;
    stopper *st = ctx;
    st->last = iteration;
    if (iteration == st->at) assert_int_equal(gpusolve_interrupt(st->s), 0);
}

static void test_from_the_monitor(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 60);
    const char *types[] = {"solver.type=cg", "solver.type=bicgstab", "solver.type=gmres"};
    for (int t = 0; t < 3; t++) {
        gpusolve_solver *s = make_solver(&sys, "solver.rtol=1e-10");
        assert_int_equal(gpusolve_set(s, types[t]), 0);
        /* with the fallback on too: an interrupted attempt ends the ladder */
        assert_int_equal(gpusolve_set(s, "solver.fallback=auto"), 0);
        stopper st = {s, 7, -1};
        assert_int_equal(gpusolve_set_monitor(s, stop_at, &st), 0);
        for (gs_int i = 0; i < sys.A.nrows; i++) sys.x[i] = 0.0;
        assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), GPUSOLVE_EXIT_INTERRUPTED);
        assert_string_equal(gpusolve_reason(s), "diverged_interrupted"); /* no further attempt converged */
        /* CG keeps a few iterations in flight: those already queued are reported too */
        assert_true(gpusolve_iterations(s) >= 7 && gpusolve_iterations(s) <= 7 + 8);
        assert_int_equal(st.last, gpusolve_iterations(s));
        assert_non_null(strstr(gpusolve_reason_detail(s), "gpusolve_interrupt"));
        assert_non_null(strstr(gpusolve_report_json(s), "diverged_interrupted"));
        /* x holds the iterate reached (not x0 = 0), which has not converged */
        double r = gpusolve_residual(s), xmax = 0.0;
        for (gs_int i = 0; i < sys.A.nrows; i++) xmax = fmax(xmax, fabs(sys.x[i]));
        assert_true(isfinite(r) && r > 1e-10 && xmax > 0.0);
        /* the request was taken: the next solve runs to convergence */
        assert_int_equal(gpusolve_set_monitor(s, NULL, NULL), 0);
        assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
        assert_string_equal(gpusolve_reason(s), "converged_rtol");
        gpusolve_destroy(&s);
    }
    free_system(&sys);
}

/* The monitor's calls, counted where another thread reads them. */
typedef struct counter {
    _Atomic int calls;
} counter;

static void count(void *ctx, int iteration, double residual)
{
    (void)iteration;
    (void)residual;
    atomic_fetch_add(&((counter *)ctx)->calls, 1);
}

typedef struct later {
    gpusolve_solver *s;
    counter *c;
} later;

/* Waits until the solve has completed an iteration (its monitor called twice: iterations 0 and 1), then
 * 0.1 s more, and interrupts it: the solve is running whatever the speed of the machine or of a tool
 * around it. */
static void *interrupt_later(void *arg)
{
    later *l = arg;
    const struct timespec poll = {0, 1000000}, delay = {0, 100000000};
    while (atomic_load(&l->c->calls) < 2) nanosleep(&poll, NULL);
    nanosleep(&delay, NULL);
    gpusolve_interrupt(l->s);
    return NULL;
}

static void test_from_another_thread(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 400); /* 160000 rows; to rtol 1e-15 CG needs far longer than the delay */
    gpusolve_solver *s = make_solver(&sys, "solver.rtol=1e-15");
    counter c = {0};
    assert_int_equal(gpusolve_set_monitor(s, count, &c), 0);
    later l = {s, &c};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interrupt_later, &l), 0);
    double t0 = gs_wtime();
    int code = gpusolve_solve(s, sys.b, sys.x, 0);
    double t = gs_wtime() - t0;
    pthread_join(th, NULL);
    assert_int_equal(code, GPUSOLVE_EXIT_INTERRUPTED);
    assert_string_equal(gpusolve_reason(s), "diverged_interrupted");
    assert_true(gpusolve_iterations(s) > 0);
    assert_int_equal(atomic_load(&c.calls), gpusolve_iterations(s) + 1);
    assert_true(t < 60.0);
    gpusolve_destroy(&s);
    free_system(&sys);
}

static void test_before_a_call(void **state)
{
    (void)state;
    system_t sys;
    make_system(&sys, 30);
    gpusolve_solver *s = make_solver(&sys, "solver.rtol=1e-8");
    gpusolve_solver *other = make_solver(&sys, "solver.rtol=1e-8");
    /* no call runs: the next solve stops at once; the other handle is not touched */
    assert_int_equal(gpusolve_interrupt(s), 0);
    assert_int_equal(gpusolve_interrupt(s), 0); /* twice: still one request */
    assert_int_equal(gpusolve_solve(other, sys.b, sys.x, 0), 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), GPUSOLVE_EXIT_INTERRUPTED);
    assert_string_equal(gpusolve_reason(s), "diverged_interrupted");
    assert_true(gpusolve_iterations(s) <= 0);
    assert_int_equal(gpusolve_solve(s, sys.b, sys.x, 0), 0);
    /* an explicit setup stops too, and the solve after it sets up again */
    gpusolve_solver *e = NULL;
    const char *settings[] = {backend_setting, "solver.type=gmres", "preconditioner.type=ilu0",
                              "solver.fallback=none", NULL};
    assert_int_equal(gpusolve_create(&e, NULL, NULL, settings), 0);
    assert_int_equal(gpusolve_set_matrix(e, sys.A.nrows, sys.A.nnz, sys.A.rowptr, sys.A.colind, sys.A.val, 0), 0);
    assert_int_equal(gpusolve_interrupt(e), 0);
    assert_int_equal(gpusolve_setup(e), GPUSOLVE_EXIT_INTERRUPTED);
    assert_string_equal(gpusolve_reason(e), "diverged_interrupted");
    assert_non_null(strstr(gpusolve_reason_detail(e), "gpusolve_interrupt"));
    assert_int_equal(gpusolve_solve(e, sys.b, sys.x, 0), 0);
    assert_int_equal(gpusolve_interrupt(NULL), GPUSOLVE_EXIT_USAGE);
    gpusolve_destroy(&e);
    gpusolve_destroy(&other);
    gpusolve_destroy(&s);
    free_system(&sys);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cuda") == 0) {
        gs_test_require_gpu();
        backend_setting = "device.backend=cuda";
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_the_monitor),
        cmocka_unit_test(test_from_another_thread),
        cmocka_unit_test(test_before_a_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
