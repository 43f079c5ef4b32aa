/* Allocation fault injection over libgpusolve's calls: a sequence of calls (create, a matrix from arrays,
 * an automatic solve, a solve on the kept setup, an explicit configuration set up and refactored for new
 * values of the pattern, west0067 read and solved after a matching) runs with the k-th host allocation
 * failing, for every k until the sequence no longer reaches a k-th allocation. Each call returns 0 or
 * GPUSOLVE_EXIT_DEVICE with GS_ERR_MEM (the sequence stops there), the handle is destroyed, and every
 * block the library allocated is released (alloc_track.c; LeakSanitizer again in the ASan build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "alloc_track.h"
#include "api/gpusolve.h"
#include "core/mem.h"

static gs_csr A;
static double b[256], x[256];
static char west[1024];

/* One call's code checked: 0 goes on, an injected failure stops the sequence. */
#define STEP(call)                                                                                  \
    do {                                                                                            \
        int code_ = (call);                                                                         \
        if (code_ != 0) {                                                                           \
            if (code_ != GPUSOLVE_EXIT_DEVICE || strcmp(gpusolve_error_status(s), "GS_ERR_MEM") != 0) \
                fprintf(stderr, "k = %ld: %s returned %d (%s: %s)\n", k, #call, code_,              \
                        gpusolve_error_status(s), gpusolve_error_message(s));                       \
            assert_int_equal(code_, GPUSOLVE_EXIT_DEVICE);                                          \
            assert_string_equal(gpusolve_error_status(s), "GS_ERR_MEM");                            \
            goto done;                                                                              \
        }                                                                                           \
    } while (0)

/* The sequence of calls; returns true when it completed. */
static bool sequence(long k)
{
    static const char *const host[] = {"device.backend=host", NULL};
    gpusolve_solver *s = NULL;
    bool complete = false;
    int code = gpusolve_create(&s, NULL, NULL, host);
    if (!s) return false; /* no memory for the handle itself */
    STEP(code);
    STEP(gpusolve_set_matrix(s, A.nrows, A.nnz, A.rowptr, A.colind, A.val, 0));
    STEP(gpusolve_solve(s, b, x, 0));
    STEP(gpusolve_solve(s, b, x, GPUSOLVE_GUESS));
    STEP(gpusolve_set(s, "solver.type=gmres"));
    STEP(gpusolve_set(s, "preconditioner.type=iluk"));
    STEP(gpusolve_set(s, "system.reorder=rcm"));
    STEP(gpusolve_setup(s));
    STEP(gpusolve_solve(s, b, x, 0));
    A.val[0] *= 2.0; /* new values of the pattern: a numeric setup */
    STEP(gpusolve_set_matrix(s, A.nrows, A.nnz, A.rowptr, A.colind, A.val, 0));
    A.val[0] /= 2.0;
    STEP(gpusolve_solve(s, b, x, 0));
    STEP(gpusolve_set(s, "preconditioner.type=auto"));
    STEP(gpusolve_set(s, "solver.type=auto"));
    STEP(gpusolve_read_matrix(s, west));
    STEP(gpusolve_solve(s, b, x, 0));
    complete = true;
done:
    gpusolve_destroy(&s);
    return complete;
}

static void test_every_allocation_fails_once(void **state)
{
    (void)state;
    GS_ASSERT_OK(gs_test_laplace2d(9, 9, &A));
    for (int i = 0; i < 256; i++) b[i] = 1.0 + (i % 3);
    snprintf(west, sizeof west, "%s/matrices/west0067.mtx", GS_DATA_DIR);
    const long live0 = gs_track_live_blocks();
    /* the whole sequence without a failure, and the number of allocations it makes */
    gs_alloc_fail_at(0);
    assert_true(sequence(0));
    assert_int_equal(gs_track_live_blocks(), live0);
    long k = 1;
    for (;; k++) {
        gs_alloc_fail_at(k);
        bool complete = sequence(k);
        const long reached = gs_alloc_count();
        gs_alloc_fail_at(0);
        if (gs_track_live_blocks() != live0)
            fprintf(stderr, "k = %ld: %ld blocks (%zu bytes) left allocated\n", k, gs_track_live_blocks() - live0,
                    gs_track_live_bytes());
        assert_int_equal(gs_track_live_blocks(), live0);
        if (reached < k) { /* no k-th allocation: the sequence ran without a failure */
            assert_true(complete);
            break;
        }
    }
    printf("%ld allocations, each failed once\n", k - 1);
    assert_true(k > 100);
    gs_csr_free(&A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_allocation_fails_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
