/* gpusolve: sparse linear systems A x = b with ILU-family preconditioned Krylov methods, on an NVIDIA GPU
 * or on the host. The public C interface of libgpusolve; the gpusolve command and the Python module run
 * through the same pipeline (automatic choice of method, fallback ladder, true residual, JSON report).
 *
 *     gpusolve_solver *s = NULL;
 *     const char *settings[] = {"solver.rtol=1e-10", NULL};
 *     gpusolve_create(&s, NULL, NULL, settings);
 *     gpusolve_set_matrix(s, n, nnz, rowptr, colind, val, 0);
 *     int code = gpusolve_solve(s, b, x, 0);      (0: converged; see the exit classes below)
 *     printf("%d iterations, residual %.3e\n", gpusolve_iterations(s), gpusolve_residual(s));
 *     gpusolve_destroy(&s);
 *
 * Conventions. Every function that can fail returns an exit class (GPUSOLVE_EXIT_*, the codes of the
 * gpusolve command); the solver handle then holds the error: gpusolve_error_message(), the status name
 * (gpusolve_error_status()) and the report {"status": "error", ...}. Matrices are CSR with 0-based 32-bit
 * indices (square, n rows, nnz entries; rows need not be sorted; duplicates are summed). Every array
 * the library is given is copied: the caller may free or reuse it at once. A handle may be used by one
 * thread at a time; different handles may be used from different threads. Strings returned are owned
 * by the handle and stay valid until its next call that changes them. A library built with MPI also makes
 * solvers whose calls are collective over the ranks of a communicator (gpusolve_mpi.h). */
#ifndef GPUSOLVE_H
#define GPUSOLVE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GPUSOLVE_API __attribute__((visibility("default")))
#else
#define GPUSOLVE_API
#endif

#define GPUSOLVE_VERSION_MAJOR 0
#define GPUSOLVE_VERSION_MINOR 1
#define GPUSOLVE_VERSION_PATCH 0

/* Exit classes: the return value of the functions below and of the gpusolve command. */
#define GPUSOLVE_EXIT_CONVERGED 0     /* success (a solve: converged, or b = 0) */
#define GPUSOLVE_EXIT_NOT_CONVERGED 1 /* iteration limit or stagnation */
#define GPUSOLVE_EXIT_USAGE 2         /* bad argument or configuration: unknown key, wrong type, out of range */
#define GPUSOLVE_EXIT_INPUT 3         /* a file missing, unreadable or malformed */
#define GPUSOLVE_EXIT_NUMERICAL 4     /* zero pivot, unstable factors, structurally singular, breakdown, NaN */
#define GPUSOLVE_EXIT_DEVICE 5        /* no usable GPU for device.backend = "cuda", CUDA error, out of memory */
#define GPUSOLVE_EXIT_INTERRUPTED 6   /* gpusolve_interrupt; SIGINT/SIGTERM in the gpusolve command (the library
                                       * installs no signal handler) */
#define GPUSOLVE_EXIT_INTERNAL 70     /* a bug: please report it */

/* Flags of gpusolve_set_matrix and gpusolve_solve. */
#define GPUSOLVE_DEVICE 1u /* the arrays are CUDA device pointers (cuda backend only) */
#define GPUSOLVE_GUESS 2u  /* gpusolve_solve: x holds the initial guess on entry (else the guess is 0) */

typedef struct gpusolve_solver gpusolve_solver;

/* Called once per Krylov iteration (and at iteration 0 of every attempt, whose numbering starts again)
 * with the monitored residual norm ||r||: the residual of the preprocessed (scaled) system when the
 * method scales it, otherwise ||b - A x||. Runs on the calling thread, during gpusolve_solve. */
typedef void (*gpusolve_monitor_fn)(void *ctx, int iteration, double residual);

/* "0.1.0". */
GPUSOLVE_API const char *gpusolve_version(void);

/* A solver configured from a libconfig file (config_file), libconfig text (config_text) and "key=value"
 * settings (a NULL-terminated array, e.g. "solver.type=gmres"), applied in that order; each may be NULL.
 * The keys are those of `gpusolve --help-config`; output.*, system.rhs and system.x0 have no effect here.
 * Without any, the method is chosen from the matrix (solver.type = preconditioner.type = "auto") with
 * the fallback ladder on. *s is set even when the configuration fails (then holding the error, to read
 * and to destroy), except when no memory is left for it (*s NULL, GPUSOLVE_EXIT_DEVICE). */
GPUSOLVE_API int gpusolve_create(gpusolve_solver **s, const char *config_file, const char *config_text,
                                 const char *const *settings);
/* One more "key=value" setting; the next solve sets up again with it. */
GPUSOLVE_API int gpusolve_set(gpusolve_solver *s, const char *setting);
/* Frees everything and sets *s to NULL (NULL and *s == NULL are fine). */
GPUSOLVE_API void gpusolve_destroy(gpusolve_solver **s);

/* The matrix, n x n with nnz entries in CSR (copied). With GPUSOLVE_DEVICE the three arrays are device
 * pointers: they are copied to the host, where the preprocessing and the factorizations are computed
 * (the operator and the factors are then uploaded again), so host and device pointers cost the same.
 * A matrix with the pattern of the current one (same n, rowptr and colind) keeps the setup's symbolic
 * phase (patterns, levels, partitions) when its preprocessing depends on the pattern alone (no matching,
 * no scaling): the next solve refactors the preconditioner numerically. Otherwise the next solve sets up
 * afresh. */
GPUSOLVE_API int gpusolve_set_matrix(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind,
                                     const double *val, unsigned flags);
/* The matrix from a Matrix Market file (.mtx or .mtx.gz; real, integer or pattern; general, symmetric or
 * skew-symmetric). */
GPUSOLVE_API int gpusolve_read_matrix(gpusolve_solver *s, const char *path);

/* The number of rows of the matrix (0 before one is set). */
GPUSOLVE_API int gpusolve_size(const gpusolve_solver *s);

/* Checks the matrix, creates the backend (device.backend) and, when the configuration names the method
 * (solver.type and preconditioner.type not "auto"), builds its setup: preprocessing, operator and
 * preconditioner, so that its time and failures show here (a numerical failure returns
 * GPUSOLVE_EXIT_NUMERICAL with reason "diverged_pc_failed"). With an automatic choice the method is
 * chosen, tried and set up by the first solve (the rule and the fallback judge attempts by their
 * convergence). Optional: gpusolve_solve calls it when needed. */
GPUSOLVE_API int gpusolve_setup(gpusolve_solver *s);
/* Solves A x = b (b and x of length n; device pointers with GPUSOLVE_DEVICE, copied through the host,
 * where the preprocessing maps them; the Krylov vectors stay on the backend). The first solve uses the
 * setup gpusolve_setup built, or runs the strategy: the automatic choice and, while attempts fail (with
 * solver.fallback = "auto"), the fallback ladder. When the reported attempt converged, its setup is kept
 * and later solves use it directly; a solve on a kept setup that does not converge runs the strategy
 * again (with solver.fallback = "auto"). Returns the exit class: 0 converged, 1 not converged, 4
 * numerical failure, or an error's class. x holds the reported attempt's solution whenever it ran (also
 * when it did not converge). */
GPUSOLVE_API int gpusolve_solve(gpusolve_solver *s, const double *b, double *x, unsigned flags);

/* The report of the last call as one JSON object: the members of `gpusolve --json` that apply to a
 * library solve (status, exit_code, solve.*, time.*, strategy, attempts, system.*, preconditioner.*,
 * trisolve.*, backend.*, matrix.*, config) plus setup.reused (this solve used an earlier setup) and
 * setup.refactored (its symbolic phase was kept for new values). On an error: {"status": "error",
 * "error": {"status", "message"}, "exit_code", "config"}. Never NULL. */
GPUSOLVE_API const char *gpusolve_report_json(gpusolve_solver *s);
/* The last call's exit class (GPUSOLVE_EXIT_*), as it returned. */
GPUSOLVE_API int gpusolve_exit_code(const gpusolve_solver *s);
/* The last solve's reason ("converged_rtol", "diverged_max_it", ...; "none" before a solve or
 * after an error) and its detail (what stopped it, in words; "" when none). */
GPUSOLVE_API const char *gpusolve_reason(const gpusolve_solver *s);
GPUSOLVE_API const char *gpusolve_reason_detail(const gpusolve_solver *s);
/* The last solve's iterations (-1 when none ran) and true relative residual ||b - A x|| / ||b||
 * recomputed after the solve (NaN when none ran). */
GPUSOLVE_API int gpusolve_iterations(const gpusolve_solver *s);
GPUSOLVE_API double gpusolve_residual(const gpusolve_solver *s);
/* The last call's error: the status name ("GS_ERR_CONFIG", ...; "" when the call succeeded) and the
 * message ("" when none). A solve that did not converge is no error: see gpusolve_reason. */
GPUSOLVE_API const char *gpusolve_error_status(const gpusolve_solver *s);
GPUSOLVE_API const char *gpusolve_error_message(const gpusolve_solver *s);

/* The monitor of later solves (fn NULL: none). */
GPUSOLVE_API int gpusolve_set_monitor(gpusolve_solver *s, gpusolve_monitor_fn fn, void *ctx);

/* Asks the gpusolve_solve or gpusolve_setup running on s to stop at its next check (once per Krylov
 * iteration, and after the preprocessing and the setup of each attempt), and returns at once. Safe to
 * call from any thread and from a signal handler (it only sets a flag), and from the monitor. The call
 * it stops ends with the reason "diverged_interrupted" and returns GPUSOLVE_EXIT_INTERRUPTED; a solve
 * leaves in x the iterate reached, and no further attempt of the fallback ladder is made. A request that
 * no call took (made while none ran, or after the running one's last check) stops the next
 * gpusolve_setup or gpusolve_solve of s; each request stops one call. Returns 0 (GPUSOLVE_EXIT_USAGE
 * for s NULL). */
GPUSOLVE_API int gpusolve_interrupt(gpusolve_solver *s);

#ifdef __cplusplus
}
#endif
#endif
