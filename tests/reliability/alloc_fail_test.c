/* Allocation fault injection over whole gpusolve runs: for representative runs (GMRES+ILU(0) on
 * sherman1, CG+IC(0) on a generated Poisson problem, BiCGStab+BILU with 4 METIS blocks, FGMRES+RAS
 * with overlap 1 after RCM, ILUT with a JSON report) the k-th host allocation fails, for every k from 1
 * until the run no longer reaches a k-th allocation. Every such run must stop with exit code 5 and an
 * "out of host memory" message, leave no temporary or partial output file, and release everything it
 * allocated (checked after every run through the allocation wrappers of alloc_track.c; under the
 * ASan build LeakSanitizer checks again at exit). The run that reaches no injected failure must
 * succeed. The environment variable GS_ALLOC_FAIL_SCENARIOS (comma-separated test names, e.g.
 * gmres_ilu0_sherman1) restricts the scenarios, for slow checkers such as valgrind.
 * The runs' stderr is captured in alloc_fail_test.stderr.txt (working folder): if the test dies in a
 * run, that file holds the last run's messages; sanitizer reports go to the real stderr. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "core/mem.h"
#include "alloc_track.h"
#include "io/mmio.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define GS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GS_TEST_ASAN 1
#endif
#endif
#ifdef GS_TEST_ASAN
#include <stdint.h>
void __sanitizer_set_report_fd(void *fd); /* sanitizer interface: where reports are written */
#endif

static char tmpdir[256];
static const char *const errpath = "alloc_fail_test.stderr.txt";

/* One in-process run with stdout discarded and stderr captured into `err`; returns the exit code. */
static int run_silenced(const gs_app_opts *o, const gs_config *cfg, char *err, size_t errlen)
{
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int devnull = open("/dev/null", O_WRONLY);
    int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved_out >= 0 && saved_err >= 0 && devnull >= 0 && errfd >= 0);
    dup2(devnull, 1);
    dup2(errfd, 2);
    int code = gs_app_run(o, cfg);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(devnull);
    close(errfd);

    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    size_t got = fread(err, 1, errlen - 1, f);
    err[got] = '\0';
    fclose(f);
    return code;
}

/* No "*.tmp.*" file is left; a solution file present is complete (reads back with n values). */
static void check_outputs(const char *solution, gs_int n, int k)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, ".tmp.")) {
            fprintf(stderr, "allocation %d: temporary file %s left behind\n", k, e->d_name);
            fail();
        }
    }
    closedir(d);
    if (solution && access(solution, F_OK) == 0) {
        double *x = NULL;
        gs_int len = 0;
        gs_status st = gs_mm_read_vector(solution, n, &x, &len);
        if (st != GS_OK) {
            fprintf(stderr, "allocation %d: the solution file is incomplete: %s\n", k, gs_error_message());
            gs_error_clear();
            fail();
        }
        gs_free(&x);
        unlink(solution);
    }
}

typedef struct {
    const char *name;
    const char *matrix; /* relative to GS_DATA_DIR/matrices, or gen:... */
    gs_int n;           /* its size (to read back the solution) */
    const char *sets[10];
    bool outputs; /* also write -o solution and --history */
} scenario;

static void run_scenario(const scenario *sc)
{
    char matrix[512], solution[300], history[300], err[8192];
    if (strncmp(sc->matrix, "gen:", 4) == 0)
        snprintf(matrix, sizeof matrix, "%s", sc->matrix);
    else
        snprintf(matrix, sizeof matrix, "%s/matrices/%s", GS_DATA_DIR, sc->matrix);
    snprintf(solution, sizeof solution, "%s/x.mtx", tmpdir);
    snprintf(history, sizeof history, "%s/h.csv", tmpdir);

    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_config_set(cfg, "device.backend=host"));
    for (int i = 0; sc->sets[i]; i++) GS_ASSERT_OK(gs_config_set(cfg, sc->sets[i]));
    gs_app_opts o = {0};
    o.matrix = matrix;
    if (sc->outputs) {
        o.solution = solution;
        o.history = history;
    }

    /* a clean run first: it must converge, and it warms up lazily created state (thread pools) */
    gs_alloc_fail_at(0);
    int code = run_silenced(&o, cfg, err, sizeof err);
    if (code != GS_EXIT_CONVERGED) fprintf(stderr, "%s: the clean run exited %d:\n%s", sc->name, code, err);
    assert_int_equal(code, GS_EXIT_CONVERGED);
    check_outputs(sc->outputs ? solution : NULL, sc->n, 0);
    unlink(history);
    long base_blocks = gs_track_live_blocks();
    size_t base_bytes = gs_track_live_bytes();
    assert_true(base_blocks > 0); /* the configuration is live: the wrappers do see allocations */

    long k;
    for (k = 1;; k++) {
        gs_alloc_fail_at(k);
        code = run_silenced(&o, cfg, err, sizeof err);
        long attempted = gs_alloc_count();
        gs_alloc_fail_at(0);
        if (attempted < k) { /* the run made fewer than k allocations: nothing failed */
            if (code != GS_EXIT_CONVERGED) fprintf(stderr, "%s: final run exited %d:\n%s", sc->name, code, err);
            assert_int_equal(code, GS_EXIT_CONVERGED);
            if (sc->outputs) assert_int_equal(access(solution, F_OK), 0);
            check_outputs(sc->outputs ? solution : NULL, sc->n, (int)k);
            unlink(history);
            break;
        }
        if (code != GS_EXIT_DEVICE || !strstr(err, "out of host memory")) {
            fprintf(stderr, "%s: allocation %ld of %ld failed: exit %d (expected %d), stderr:\n%s\n", sc->name, k,
                    attempted, code, GS_EXIT_DEVICE, err);
            fail();
        }
        check_outputs(sc->outputs ? solution : NULL, sc->n, (int)k);
        unlink(history);
        if (gs_track_live_blocks() != base_blocks || gs_track_live_bytes() != base_bytes) {
            fprintf(stderr, "%s: allocation %ld failed and the run leaked: %ld blocks (%zu bytes) live, %ld (%zu) before\n",
                    sc->name, k, gs_track_live_blocks(), gs_track_live_bytes(), base_blocks, base_bytes);
            fail();
        }
    }
    printf("%s: each of %ld host allocations failed in turn: exit 5 with a message every time\n", sc->name, k - 1);
    assert_true(k > 20); /* a run of this size allocates: a count this low means injection did not work */
    gs_config_destroy(&cfg);
}

/* Whether GS_ALLOC_FAIL_SCENARIOS (unset: all) names this scenario. */
static bool selected(const char *id)
{
    const char *list = getenv("GS_ALLOC_FAIL_SCENARIOS");
    if (!list || !list[0]) return true;
    size_t n = strlen(id);
    for (const char *p = strstr(list, id); p; p = strstr(p + 1, id))
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) return true;
    return false;
}

static void test_gmres_ilu0_sherman1(void **state)
{
    (void)state;
    if (!selected("gmres_ilu0_sherman1")) skip();
    scenario sc = {"gmres+ilu0 sherman1", "sherman1.mtx", 1000,
                   {"solver.type=gmres", "preconditioner.type=ilu0", "system.rhs=Ax", NULL}, true};
    run_scenario(&sc);
}

static void test_cg_ic0_poisson(void **state)
{
    (void)state;
    if (!selected("cg_ic0_poisson")) skip();
    scenario sc = {"cg+ic0 poisson2d", "gen:poisson2d:12", 144,
                   {"solver.type=cg", "preconditioner.type=ic0", NULL}, true};
    run_scenario(&sc);
}

static void test_bicgstab_bilu4(void **state)
{
    (void)state;
    if (!selected("bicgstab_bilu4")) skip();
    scenario sc = {"bicgstab+bilu(4 blocks) pde225", "pde225.mtx", 225,
                   {"solver.type=bicgstab", "preconditioner.type=bilu", "preconditioner.blocks=4", NULL}, false};
    run_scenario(&sc);
}

static void test_fgmres_ras_overlap1(void **state)
{
    (void)state;
    if (!selected("fgmres_ras_overlap1")) skip();
    scenario sc = {"fgmres+ras(overlap 1, rcm) convdiff3d",
                   "gen:convdiff3d:6",
                   216,
                   {"solver.type=fgmres", "preconditioner.type=ras", "preconditioner.blocks=4",
                    "preconditioner.overlap=1", "system.reorder=rcm", "system.rhs=random", NULL},
                   true};
    run_scenario(&sc);
}

static void test_ilut_json(void **state)
{
    (void)state;
    if (!selected("ilut_json")) skip();
    scenario sc = {"gmres+ilut json orsirr_1", "orsirr_1.mtx", 1030,
                   {"preconditioner.type=ilut", "output.format=json", "solver.restart=20", NULL}, false};
    run_scenario(&sc);
}

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/gs_allocfail_XXXXXX", base && base[0] ? base : "/tmp");
#ifdef GS_TEST_ASAN
    /* the runs' stderr is redirected: keep sanitizer reports on the real one */
    __sanitizer_set_report_fd((void *)(intptr_t)dup(2));
#endif
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(errpath);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gmres_ilu0_sherman1), cmocka_unit_test(test_cg_ic0_poisson),
        cmocka_unit_test(test_bicgstab_bilu4),      cmocka_unit_test(test_fgmres_ras_overlap1),
        cmocka_unit_test(test_ilut_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
