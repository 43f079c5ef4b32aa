/* The library's solver handle (api/gpusolve.h's gpusolve_solver) as its two fronts see it: api/gpusolve.c
 * runs its calls in one process; in a build with MPI, dist/lib_comm.c runs them collectively over the
 * ranks of a communicator (api/gpusolve_mpi.h), reached through the hooks of gs_lib_comm_ops. */
#ifndef GS_API_HANDLE_H
#define GS_API_HANDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "api/gpusolve.h"
#include "api/strategy.h"
#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The calls a solver over several ranks makes collectively: gpusolve.c hands them over, after checking
 * s, when s->comm_ops is set. destroy releases s->comm. */
typedef struct gs_lib_comm_ops {
    int (*set)(gpusolve_solver *s, const char *setting);
    int (*set_matrix)(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind, const double *val,
                      unsigned flags);
    int (*read_matrix)(gpusolve_solver *s, const char *path);
    int (*size)(const gpusolve_solver *s);
    int (*setup)(gpusolve_solver *s);
    int (*solve)(gpusolve_solver *s, const double *b, double *x, unsigned flags);
    void (*destroy)(gpusolve_solver *s);
} gs_lib_comm_ops;

struct gpusolve_solver {
    gs_config *cfg; /* the user's configuration */
    gs_csr A;       /* sorted, duplicates summed (over a communicator: rank 0's) */
    bool have_matrix;
    bool values_changed; /* new values of the kept setup's pattern, not yet taken by it */
    char source[512];    /* the file read, or "arrays" */
    double time_read;
    gs_backend *be;
    char be_key[96];
    double time_init; /* the backend's creation, reported by the next solve (then 0) */
    /* the setup kept for more right-hand sides, with the facts its reports repeat */
    gs_strategy_kept *kept;
    gs_attempt kept_att;   /* its outcome: setup part (report of the views, times), last solve part */
    bool kept_unsolved;    /* built by gpusolve_setup, not solved yet */
    bool kept_refactored;  /* took new values since its last solve */
    bool kept_automatic;
    gs_auto_choice kept_choice;
    gpusolve_monitor_fn monitor;
    void *monitor_ctx;
    atomic_int interrupt; /* gpusolve_interrupt's request, not yet taken by a call */
    /* a solver over several ranks (gpusolve_create_comm): its calls and state (NULL: one process) */
    const gs_lib_comm_ops *comm_ops;
    void *comm;
    /* the last call */
    int exit_code;
    int iterations;
    double residual;
    char reason[48];
    char *detail;          /* the reason's detail, as long as it is (owned; NULL: none) */
    char err_status[32];
    char err_message[1024];
    char *json;
    time_t started; /* when the last call began (the report's started_at) */
};

/* A handle with no configuration yet (NULL: no memory left). */
gpusolve_solver *gs_lib_alloc(void);
/* Its configuration from a file, libconfig text and settings (each may be NULL), in that order. */
gs_status gs_lib_configure(gpusolve_solver *s, const char *config_file, const char *config_text,
                           const char *const *settings);
/* Frees what the handle holds and the handle (not s->comm: the comm front's destroy does). */
void gs_lib_free(gpusolve_solver *s);

/* A call begins: the last call's error and exit class cleared, its start time. */
void gs_lib_begin_call(gpusolve_solver *s);
/* The call failed with st (the pending error's message): the error fields, the error report, the exit
 * class (returned). */
int gs_lib_fail(gpusolve_solver *s, gs_status st);
/* The call succeeded without a solve: the report is the status alone. Returns 0. */
int gs_lib_succeed(gpusolve_solver *s);
/* The report as JSON text (the last one kept when no memory is left for the new one). */
gs_status gs_lib_set_json(gpusolve_solver *s, const gs_report *rep);
/* The report's members about the input, common to both fronts: provenance, matrix source, name and size,
 * time.read, where it was read (`where_read`), the right-hand side and the initial guess (`guess`). */
gs_status gs_lib_report_input(const gpusolve_solver *s, gs_report *rep, bool guess, const char *where_read);
/* The last solve's fields (reason, detail, iterations, residual, exit class) from its attempt. */
void gs_lib_set_outcome(gpusolve_solver *s, const gs_attempt *a, int code);

/* The work of gpusolve_set, gpusolve_set_matrix and gpusolve_read_matrix in this process (without the
 * call's outcome fields): the error pending on failure. */
gs_status gs_lib_set_setting(gpusolve_solver *s, const char *setting);
gs_status gs_lib_matrix_arrays(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind,
                               const double *val, unsigned flags);
/* nrows rows of a matrix of ncols columns from the caller's CSR arrays (flags: GPUSOLVE_DEVICE as
 * gpusolve_set_matrix takes it) into B, checked (rowptr from 0 to nnz, never decreasing; columns in range),
 * sorted with repeated columns summed; messages start with fn and name rows from first_row on. */
gs_status gs_lib_csr_arrays(gpusolve_solver *s, const char *fn, int nrows, int ncols, int first_row, int nnz,
                            const int *rowptr, const int *colind, const double *val, unsigned flags, gs_csr *B);
gs_status gs_lib_matrix_file(gpusolve_solver *s, const char *path);

#ifdef __cplusplus
}
#endif
#endif
