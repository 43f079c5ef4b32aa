/* libgpusolve (api/gpusolve.h) in one process: a handle (api/handle.h) holding the configuration, the
 * matrix, the backend and the setup kept between solves, over the strategy (api/strategy.h) that the
 * gpusolve command runs. A handle made over several MPI ranks hands its collective calls to its comm_ops. */
#include "api/gpusolve.h"
#include "api/exit_codes.h"
#include "api/handle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/run_report.h"
#include "api/strategy.h"
#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/mem.h"
#include "core/report.h"
#include "core/signal.h"
#include "core/json.h"
#include "core/process.h"
#include "io/mmio.h"

/* ---------------------------------------------------------------------------------------------- */
/* outcomes: exit classes, the error of a call, the report                                        */

/* The exit classes are the command's exit codes (api/exit_codes.h): one mapping for both. */
_Static_assert(GPUSOLVE_EXIT_CONVERGED == GS_EXIT_CONVERGED && GPUSOLVE_EXIT_NOT_CONVERGED == GS_EXIT_NOT_CONVERGED &&
                   GPUSOLVE_EXIT_USAGE == GS_EXIT_USAGE && GPUSOLVE_EXIT_INPUT == GS_EXIT_INPUT &&
                   GPUSOLVE_EXIT_NUMERICAL == GS_EXIT_NUMERICAL && GPUSOLVE_EXIT_DEVICE == GS_EXIT_DEVICE &&
                   GPUSOLVE_EXIT_INTERRUPTED == GS_EXIT_INTERRUPTED && GPUSOLVE_EXIT_INTERNAL == GS_EXIT_INTERNAL,
               "the library's exit classes are the command's exit codes");

/* The report as JSON text into s->json (kept as it was when no memory is left for the new one). */
gs_status gs_lib_set_json(gpusolve_solver *s, const gs_report *rep)
{
    json_t *obj = NULL;
    GS_CALL(gs_report_to_json(rep, &obj));
    char *text = gs_json_text(obj);
    json_decref(obj);
    if (!text) return GS_ERROR(GS_ERR_MEM, "out of host memory writing the report as JSON");
    free(s->json);
    s->json = text;
    return GS_OK;
}

void gs_lib_begin_call(gpusolve_solver *s)
{
    gs_error_clear();
    s->exit_code = GPUSOLVE_EXIT_CONVERGED;
    s->err_status[0] = s->err_message[0] = '\0';
    s->started = time(NULL);
    if (s->be) gs_backend_mem_peak_reset(s->be); /* the report's memory peak is the call's */
}

/* The last call failed with st (the pending error's message): the error fields, the error report, the
 * exit class. */
int gs_lib_fail(gpusolve_solver *s, gs_status st)
{
    gs_report *rep = NULL;
    s->exit_code = gs_exit_code_for_status(st);
    snprintf(s->err_status, sizeof s->err_status, "%s", gs_status_name(st));
    snprintf(s->err_message, sizeof s->err_message, "%s", gs_error_message()[0] ? gs_error_message() : gs_status_name(st));
    snprintf(s->reason, sizeof s->reason, "none");
    gs_free(&s->detail);
    s->iterations = -1;
    s->residual = NAN;
    gs_error_clear();
    if (gs_report_create(&rep) == GS_OK) {
        gs_run_report_provenance(rep, s->started, 0, NULL);
        gs_report_string(rep, "status", "error");
        gs_report_string(rep, "error.status", s->err_status);
        gs_report_string(rep, "error.message", s->err_message);
        gs_report_string(rep, "error.class", gs_exit_class_name(s->exit_code));
        gs_report_int(rep, "exit_code", s->exit_code);
        if (s->cfg) gs_config_to_report(s->cfg, rep);
        (void)gs_lib_set_json(s, rep); /* out of memory: the last report stays */
        gs_report_destroy(&rep);
    }
    gs_error_clear();
    return s->exit_code;
}

/* A call that succeeded without a solve: its report is the status alone. */
int gs_lib_succeed(gpusolve_solver *s)
{
    gs_report *rep = NULL;
    if (gs_report_create(&rep) == GS_OK) {
        gs_run_report_provenance(rep, s->started, 0, NULL);
        gs_report_string(rep, "status", "ok");
        gs_report_int(rep, "exit_code", 0);
        (void)gs_lib_set_json(s, rep); /* out of memory: the last report stays */
        gs_report_destroy(&rep);
    }
    gs_error_clear();
    s->exit_code = GPUSOLVE_EXIT_CONVERGED;
    return s->exit_code;
}

/* ---------------------------------------------------------------------------------------------- */
/* the kept setup                                                                                 */

static void drop_setup(gpusolve_solver *s)
{
    gs_strategy_kept_free(&s->kept);
    gs_attempt_free(&s->kept_att);
    memset(&s->kept_att, 0, sizeof s->kept_att);
    s->kept_unsolved = s->kept_refactored = false;
}

static bool is_auto(const gs_config *cfg, const char *key) { return strcmp(gs_config_string(cfg, key), "auto") == 0; }
static bool fallback_on(const gs_config *cfg) { return strcmp(gs_config_string(cfg, "solver.fallback"), "auto") == 0; }

/* The backend device.backend / device.id / device.spmv name, kept while they stay the same. */
static gs_status ensure_backend(gpusolve_solver *s)
{
    char key[sizeof s->be_key];
    snprintf(key, sizeof key, "%s:%d:%s", gs_config_string(s->cfg, "device.backend"),
             (int)gs_config_int(s->cfg, "device.id"), gs_config_string(s->cfg, "device.spmv"));
    if (s->be && strcmp(key, s->be_key) == 0) return GS_OK;
    drop_setup(s);
    gs_backend_destroy(&s->be);
    s->be_key[0] = '\0';
    const double t0 = gs_wtime();
    GS_CALL(gs_backend_create(gs_config_string(s->cfg, "device.backend"), (int)gs_config_int(s->cfg, "device.id"),
                              &s->be));
    GS_CALL(gs_backend_select_spmv(s->be, gs_config_string(s->cfg, "device.spmv")));
    s->time_init = gs_wtime() - t0;
    snprintf(s->be_key, sizeof s->be_key, "%s", key);
    return GS_OK;
}

/* The setup: the matrix checked, the backend, new values taken by the kept setup (or the setup dropped),
 * and for an explicit configuration its setup built when none is kept. *failed: that setup ended with a
 * numerical failure (its outcome in s->kept_att, nothing kept). */
static gs_status setup(gpusolve_solver *s, bool *failed)
{
    *failed = false;
    if (!s->have_matrix)
        return GS_ERROR(GS_ERR_ARG, "no matrix: call gpusolve_set_matrix or gpusolve_read_matrix first");
    if (s->A.nrows != s->A.ncols)
        return GS_ERROR(GS_ERR_ARG, "the matrix is %d x %d: a linear system needs a square matrix", s->A.nrows,
                        s->A.ncols);
    GS_CALL(ensure_backend(s));
    if (s->values_changed) {
        s->values_changed = false;
        if (s->kept && gs_attempt_can_refactor(&s->kept->setup)) {
            GS_CALL(gs_attempt_refactor(&s->kept->setup, &s->kept_att));
            if (!s->kept->setup.ready) drop_setup(s); /* the next solve chooses again */
            else s->kept_refactored = true;
        } else {
            drop_setup(s);
        }
    }
    if (s->kept || is_auto(s->cfg, "solver.type") || is_auto(s->cfg, "preconditioner.type")) return GS_OK;
    /* an explicit configuration: the strategy's first attempt, set up now */
    gs_preprocess pre;
    GS_CALL(gs_calloc(&s->kept, 1, sizeof *s->kept));
    gs_status st = gs_strategy_explicit_config(s->cfg, fallback_on(s->cfg), &s->kept->cfg, &pre);
    if (st == GS_OK) {
        snprintf(s->kept->rung, sizeof s->kept->rung, "configuration");
        st = gs_attempt_setup_run(s->be, &s->A, s->kept->cfg, &pre, &s->kept->cache, &s->kept->setup, &s->kept_att);
    }
    if (st != GS_OK) {
        drop_setup(s);
        GS_CALL(st);
    }
    s->kept_automatic = false;
    memset(&s->kept_choice, 0, sizeof s->kept_choice);
    s->kept_unsolved = true;
    *failed = !s->kept->setup.ready; /* its outcome is in kept_att, for setup_failed's report */
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* the report of a solve                                                                          */

static const char *base_name(const char *p)
{
    const char *q = strrchr(p, '/');
    return q ? q + 1 : p;
}

gs_status gs_lib_report_input(const gpusolve_solver *s, gs_report *rep, bool guess, const char *where_read)
{
    GS_CALL(gs_run_report_provenance(rep, s->started, 0, NULL));
    GS_CALL(gs_report_string(rep, "matrix.source", s->source));
    GS_CALL(gs_report_double(rep, "time.read", s->time_read));
    GS_CALL(gs_report_string(rep, "where.read", where_read));
    GS_CALL(gs_report_string(rep, "matrix.name", base_name(s->source)));
    GS_CALL(gs_report_int(rep, "matrix.rows", s->A.nrows));
    GS_CALL(gs_report_int(rep, "matrix.nnz", s->A.nnz));
    GS_CALL(gs_report_string(rep, "system.rhs", "given"));
    GS_CALL(gs_report_string(rep, "system.x0", guess ? "given" : "zero"));
    return GS_OK;
}

/* The report of a solve (or of a failed setup) from the strategy's result: the members of the gpusolve
 * command's JSON object that apply. */
static gs_status solve_report(gpusolve_solver *s, const gs_strategy_result *sr, bool guess, bool reused, double t0,
                              int code)
{
    gs_status st = GS_OK;
    gs_report *rep = NULL;
    GS_CALL(gs_report_create(&rep));
    GS_TRY(gs_lib_report_input(s, rep, guess, "host"));
    GS_TRY(gs_report_double(rep, "time.init", s->time_init));
    s->time_init = 0.0;
    GS_TRY(gs_report_string(rep, "backend.name", s->be->name));
    GS_TRY(gs_report_string(rep, "backend.device", s->be->device_name));
    GS_TRY(gs_report_bool(rep, "backend.init_overlapped", false)); /* made when setup needed it */
    GS_TRY(gs_report_string(rep, "where.setup",
                            s->be->kind == GS_BACKEND_CUDA ? "host factorization, GPU analysis" : "host"));
    GS_TRY(gs_report_string(rep, "where.solve", s->be->kind == GS_BACKEND_CUDA ? s->be->device_name : "host"));
    GS_TRY(gs_run_report_strategy(rep, sr));
    GS_TRY(gs_run_report_outcome(rep, sr, NULL, NULL, 0));
    GS_TRY(gs_run_report_warnings(rep, s->cfg, sr));
    GS_TRY(gs_run_report_memory(rep, s->be));
    GS_TRY(gs_report_bool(rep, "setup.reused", reused));
    GS_TRY(gs_report_bool(rep, "setup.refactored", s->kept_refactored));
    GS_TRY(gs_report_string(rep, "status", "ok"));
    GS_TRY(gs_report_int(rep, "exit_code", code));
    GS_TRY(gs_report_double(rep, "time.total", gs_wtime() - t0));
    GS_TRY(gs_report_double(rep, "time.wall", gs_process_age()));
    GS_TRY(gs_config_to_report(s->cfg, rep));
    GS_TRY(gs_lib_set_json(s, rep));
cleanup:
    gs_report_destroy(&rep);
    return st;
}

/* The last solve's fields from the reported attempt. */
void gs_lib_set_outcome(gpusolve_solver *s, const gs_attempt *a, int code)
{
    s->exit_code = code;
    snprintf(s->reason, sizeof s->reason, "%s", gs_reason_name(a->res.reason));
    gs_free(&s->detail);
    if (a->detail && gs_strprintf(&s->detail, "%s", a->detail) != GS_OK) gs_error_clear(); /* none, out of memory */
    s->iterations = a->solved ? a->res.iterations : -1;
    s->residual = a->solved ? a->residual_true : NAN;
}

/* A strategy result of one attempt made with the kept setup (it borrows the kept configuration and
 * outcome: only its record's detail is its own, freed by gs_attempt_record_free). */
static gs_status kept_result(const gpusolve_solver *s, gs_strategy_result *sr)
{
    memset(sr, 0, sizeof *sr);
    sr->automatic = s->kept_automatic;
    sr->choice = s->kept_choice;
    sr->nattempts = 1;
    GS_CALL(gs_strategy_record(s->kept ? s->kept->cfg : s->cfg, s->kept ? s->kept->rung : "configuration",
                               &s->kept_att, &sr->rec[0]));
    sr->chosen = 0;
    sr->final = s->kept_att;
    sr->cfg = s->kept ? s->kept->cfg : s->cfg;
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* the entry points                                                                               */

const char *gpusolve_version(void) { return GS_VERSION; }

gpusolve_solver *gs_lib_alloc(void)
{
    gpusolve_solver *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->iterations = -1;
    s->residual = NAN;
    snprintf(s->reason, sizeof s->reason, "none");
    return s;
}

gs_status gs_lib_configure(gpusolve_solver *s, const char *config_file, const char *config_text,
                           const char *const *settings)
{
    GS_CALL(gs_config_create(&s->cfg));
    if (config_file) GS_CALL(gs_config_load_file(s->cfg, config_file));
    if (config_text) GS_CALL(gs_config_load_string(s->cfg, config_text, "config_text"));
    for (const char *const *p = settings; p && *p; p++) GS_CALL(gs_config_set(s->cfg, *p));
    return GS_OK;
}

void gs_lib_free(gpusolve_solver *s)
{
    drop_setup(s);
    gs_csr_free(&s->A);
    gs_backend_destroy(&s->be);
    gs_config_destroy(&s->cfg);
    free(s->json);
    gs_free(&s->detail);
    free(s);
}

int gpusolve_create(gpusolve_solver **out, const char *config_file, const char *config_text,
                    const char *const *settings)
{
    if (!out) return GPUSOLVE_EXIT_USAGE;
    gpusolve_solver *s = *out = gs_lib_alloc();
    if (!s) return GPUSOLVE_EXIT_DEVICE;
    gs_lib_begin_call(s);
    gs_status st = gs_lib_configure(s, config_file, config_text, settings);
    return st == GS_OK ? gs_lib_succeed(s) : gs_lib_fail(s, st);
}

gs_status gs_lib_set_setting(gpusolve_solver *s, const char *setting)
{
    if (!setting) return GS_ERROR(GS_ERR_ARG, "gpusolve_set: the setting is NULL (expected \"key=value\")");
    GS_CALL(gs_config_set(s->cfg, setting));
    drop_setup(s);
    return GS_OK;
}

int gpusolve_set(gpusolve_solver *s, const char *setting)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (s->comm_ops) return s->comm_ops->set(s, setting);
    gs_lib_begin_call(s);
    gs_status st = gs_lib_set_setting(s, setting);
    return st == GS_OK ? gs_lib_succeed(s) : gs_lib_fail(s, st);
}

void gpusolve_destroy(gpusolve_solver **s)
{
    if (!s || !*s) return;
    if ((*s)->comm_ops) (*s)->comm_ops->destroy(*s);
    gs_lib_free(*s);
    *s = NULL;
}

/* A takes the matrix B (moved): new values of the same pattern keep the setup, anything else drops it. */
static void take_matrix(gpusolve_solver *s, gs_csr *B)
{
    const gs_csr *A = &s->A;
    bool same = s->have_matrix && A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz &&
                memcmp(A->rowptr, B->rowptr, (size_t)(A->nrows + 1) * sizeof *A->rowptr) == 0 &&
                (A->nnz == 0 || memcmp(A->colind, B->colind, (size_t)A->nnz * sizeof *A->colind) == 0);
    if (same && s->kept) {
        /* in place: the kept setup points at A */
        if (A->nnz > 0) memcpy(A->val, B->val, (size_t)A->nnz * sizeof *A->val);
        gs_csr_free(B);
        s->values_changed = true;
        return;
    }
    drop_setup(s);
    gs_csr_free(&s->A);
    s->A = *B;
    memset(B, 0, sizeof *B);
    s->have_matrix = true;
    s->values_changed = false;
}

/* Host copies of n entries of size `size` at p (device memory with GPUSOLVE_DEVICE). */
static gs_status stage_in(gpusolve_solver *s, const void *p, size_t n, size_t size, unsigned flags, void *host)
{
    if (n == 0) return GS_OK;
    if (!(flags & GPUSOLVE_DEVICE)) {
        memcpy(host, p, n * size);
        return GS_OK;
    }
    return gs_backend_download(s->be, host, p, n * size);
}

/* Device pointers need the cuda backend. */
static gs_status check_device_flags(gpusolve_solver *s, unsigned flags)
{
    if (!(flags & GPUSOLVE_DEVICE)) return GS_OK;
    GS_CALL(ensure_backend(s));
    if (s->be->kind != GS_BACKEND_CUDA)
        return GS_ERROR(GS_ERR_ARG,
                        "device pointers (GPUSOLVE_DEVICE) need the cuda backend, but this solver runs on the %s "
                        "backend (device.backend = \"%s\")",
                        s->be->name, gs_config_string(s->cfg, "device.backend"));
    return GS_OK;
}

gs_status gs_lib_csr_arrays(gpusolve_solver *s, const char *fn, int nrows, int ncols, int first_row, int nnz,
                            const int *rowptr, const int *colind, const double *val, unsigned flags, gs_csr *B)
{
    gs_status st = GS_OK;
    memset(B, 0, sizeof *B);
    if (nrows < 0 || ncols <= 0 || nnz < 0 || (nrows > 0 && !rowptr) || (nnz > 0 && (!colind || !val)))
        GS_FAIL(GS_ERR_ARG,
                "%s: expected %d > 0 columns, nnz >= 0, rowptr of %d + 1 entries and colind, val of nnz "
                "(got nnz = %d%s%s%s)",
                fn, ncols, nrows, nnz, nrows > 0 && !rowptr ? ", rowptr NULL" : "",
                nnz > 0 && !colind ? ", colind NULL" : "", nnz > 0 && !val ? ", val NULL" : "");
    GS_TRY(check_device_flags(s, flags));
    GS_TRY(gs_csr_alloc(B, nrows, ncols, nnz, true));
    if (nrows > 0) GS_TRY(stage_in(s, rowptr, (size_t)nrows + 1, sizeof *rowptr, flags, B->rowptr));
    GS_TRY(stage_in(s, colind, (size_t)nnz, sizeof *colind, flags, B->colind));
    GS_TRY(stage_in(s, val, (size_t)nnz, sizeof *val, flags, B->val));
    if (B->rowptr[0] != 0 || B->rowptr[nrows] != nnz)
        GS_FAIL(GS_ERR_ARG, "%s: rowptr[0] = %d and rowptr[%d] = %d; expected 0 and nnz = %d", fn, B->rowptr[0], nrows,
                B->rowptr[nrows], nnz);
    for (gs_int i = 0; i < nrows; i++) {
        if (B->rowptr[i + 1] < B->rowptr[i])
            GS_FAIL(GS_ERR_ARG, "%s: rowptr decreases at row %d (%d > %d)", fn, first_row + i, B->rowptr[i],
                    B->rowptr[i + 1]);
        for (gs_int k = B->rowptr[i]; k < B->rowptr[i + 1]; k++)
            if (B->colind[k] < 0 || B->colind[k] >= ncols)
                GS_FAIL(GS_ERR_ARG, "%s: row %d has column index %d, outside 0..%d", fn, first_row + i, B->colind[k],
                        ncols - 1);
    }
    if (!gs_csr_is_sorted(B)) GS_TRY(gs_csr_sort_dedupe(B));
    return GS_OK;
cleanup:
    gs_csr_free(B);
    return st;
}

gs_status gs_lib_matrix_arrays(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind,
                               const double *val, unsigned flags)
{
    gs_csr B = {0};
    const double t0 = gs_wtime();
    if (n <= 0)
        return GS_ERROR(GS_ERR_ARG, "gpusolve_set_matrix: expected n > 0, nnz >= 0, rowptr of n + 1 entries and "
                                    "colind, val of nnz (got n = %d, nnz = %d)",
                        n, nnz);
    GS_CALL(gs_lib_csr_arrays(s, "gpusolve_set_matrix", n, n, 0, nnz, rowptr, colind, val, flags, &B));
    take_matrix(s, &B);
    snprintf(s->source, sizeof s->source, "arrays");
    s->time_read = gs_wtime() - t0;
    return GS_OK;
}

int gpusolve_set_matrix(gpusolve_solver *s, int n, int nnz, const int *rowptr, const int *colind, const double *val,
                        unsigned flags)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (s->comm_ops) return s->comm_ops->set_matrix(s, n, nnz, rowptr, colind, val, flags);
    gs_lib_begin_call(s);
    gs_status st = gs_lib_matrix_arrays(s, n, nnz, rowptr, colind, val, flags);
    return st == GS_OK ? gs_lib_succeed(s) : gs_lib_fail(s, st);
}

gs_status gs_lib_matrix_file(gpusolve_solver *s, const char *path)
{
    gs_status st = GS_OK;
    gs_csr B = {0};
    const double t0 = gs_wtime();
    if (!path) GS_FAIL(GS_ERR_ARG, "gpusolve_read_matrix: the path is NULL");
    GS_TRY(gs_mm_read_matrix(path, &B, NULL));
    if (!B.val) { /* a pattern matrix reads as ones */
        GS_TRY(GS_MALLOC(B.val, B.nnz > 0 ? B.nnz : 1));
        for (gs_int k = 0; k < B.nnz; k++) B.val[k] = 1.0;
    }
    take_matrix(s, &B);
    snprintf(s->source, sizeof s->source, "%s", path);
    s->time_read = gs_wtime() - t0;
    return GS_OK;
cleanup:
    gs_csr_free(&B);
    return st;
}

int gpusolve_read_matrix(gpusolve_solver *s, const char *path)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (s->comm_ops) return s->comm_ops->read_matrix(s, path);
    gs_lib_begin_call(s);
    gs_status st = gs_lib_matrix_file(s, path);
    return st == GS_OK ? gs_lib_succeed(s) : gs_lib_fail(s, st);
}

int gpusolve_size(const gpusolve_solver *s)
{
    if (s && s->comm_ops) return s->comm_ops->size(s);
    return s && s->have_matrix ? (int)s->A.nrows : 0;
}

/* The report and fields of an explicit configuration's setup that ended with a numerical failure (the
 * setup is dropped: the next call tries again). */
static int setup_failed(gpusolve_solver *s, double t0)
{
    gs_strategy_result sr;
    const int code = gs_exit_code_for_reason(s->kept_att.res.reason);
    gs_status st = kept_result(s, &sr);
    if (st == GS_OK) st = solve_report(s, &sr, false, false, t0, code);
    gs_attempt_record_free(&sr.rec[0]);
    gs_lib_set_outcome(s, &s->kept_att, code);
    drop_setup(s);
    if (st != GS_OK) return gs_lib_fail(s, st);
    gs_error_clear();
    return code;
}

/* gpusolve_interrupt's request, polled by the calling thread's solve (gs_interrupt_requested). */
static bool interrupt_requested(const void *ctx)
{
    gpusolve_solver *s = (gpusolve_solver *)ctx;
    return atomic_load_explicit(&s->interrupt, memory_order_relaxed) != 0;
}

/* A call that may be interrupted: the request is polled while it runs, and taken when it stopped it. */
static void watch_begin(gpusolve_solver *s) { gs_interrupt_watch(interrupt_requested, s, "gpusolve_interrupt"); }
static int watch_end(gpusolve_solver *s, int code)
{
    gs_interrupt_watch(NULL, NULL, NULL);
    if (code == GPUSOLVE_EXIT_INTERRUPTED) atomic_store(&s->interrupt, 0);
    return code;
}

static int setup_call(gpusolve_solver *s)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    bool failed = false;
    gs_status st = setup(s, &failed);
    if (st != GS_OK) return gs_lib_fail(s, st);
    if (failed) return setup_failed(s, t0);
    return gs_lib_succeed(s);
}

int gpusolve_setup(gpusolve_solver *s)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (s->comm_ops) return s->comm_ops->setup(s);
    watch_begin(s);
    return watch_end(s, setup_call(s));
}

typedef struct monitor_ctx {
    gpusolve_monitor_fn fn;
    void *ctx;
} monitor_ctx;

static void monitor_adapter(void *ctx, int iteration, double resnorm)
{
    monitor_ctx *m = ctx;
    m->fn(m->ctx, iteration, resnorm);
}

static int solve_call(gpusolve_solver *s, const double *b, double *x, unsigned flags)
{
    gs_status st = GS_OK;
    double *bh = NULL, *x0 = NULL, *xh = NULL;
    gs_strategy_result sr;
    bool have_sr = false, failed = false, reused = false;
    int code = GPUSOLVE_EXIT_INTERNAL;
    memset(&sr, 0, sizeof sr);
    if (!s) return GPUSOLVE_EXIT_USAGE;
    gs_lib_begin_call(s);
    const double t0 = gs_wtime();
    if (!b || !x) GS_FAIL(GS_ERR_ARG, "gpusolve_solve: b and x must not be NULL");
    GS_TRY(setup(s, &failed));
    const bool guess = (flags & GPUSOLVE_GUESS) != 0, fallback = fallback_on(s->cfg);
    if (failed && !fallback) return setup_failed(s, t0);
    if (failed) drop_setup(s); /* the strategy's ladder follows its first attempt's failure */
    GS_TRY(check_device_flags(s, flags));
    const gs_int n = s->A.nrows;
    GS_TRY(GS_MALLOC(bh, n));
    GS_TRY(GS_CALLOC(x0, n));
    GS_TRY(GS_CALLOC(xh, n));
    GS_TRY(stage_in(s, b, (size_t)n, sizeof *b, flags, bh));
    if (guess) GS_TRY(stage_in(s, x, (size_t)n, sizeof *x, flags, x0));
    monitor_ctx mc = {s->monitor, s->monitor_ctx};
    gs_attempt_monitor mon = {s->monitor ? monitor_adapter : NULL, &mc};

    if (s->kept) { /* the kept setup: one attempt */
        reused = !s->kept_unsolved;
        GS_TRY(gs_attempt_solve(&s->kept->setup, bh, x0, &mon, xh, &s->kept_att));
        s->kept_unsolved = false;
        const bool converged = s->kept_att.solved && gs_reason_converged(s->kept_att.res.reason) &&
                               !s->kept_att.true_missed;
        /* an interrupt ends the call: no new choice */
        if (converged || !fallback || s->kept_att.res.reason == GS_DIVERGED_INTERRUPTED) {
            code = gs_exit_code_for_reason(s->kept_att.res.reason);
            st = kept_result(s, &sr);
            if (st == GS_OK) st = solve_report(s, &sr, guess, reused, t0, code);
            gs_attempt_record_free(&sr.rec[0]); /* the rest of sr is borrowed */
            GS_TRY(st);
            gs_lib_set_outcome(s, &s->kept_att, code);
            s->kept_refactored = false;
            goto cleanup;
        }
        drop_setup(s); /* not converged: the strategy chooses again, with its fallback */
        reused = false;
    }
    gs_strategy_hooks hooks = {NULL, mon, NULL};
    GS_TRY(gs_strategy_solve_keep(s->be, &s->A, bh, x0, s->cfg, fallback, &hooks, xh, &sr));
    have_sr = true;
    code = gs_exit_code_for_reason(sr.final.res.reason);
    GS_TRY(solve_report(s, &sr, guess, false, t0, code));
    gs_lib_set_outcome(s, &sr.final, code);
    if (sr.kept) { /* converged: its setup serves the next right-hand sides */
        s->kept = sr.kept;
        sr.kept = NULL;
        s->kept_att = sr.final;
        sr.final.rep = NULL;
        sr.final.detail = NULL;
        s->kept_automatic = sr.automatic;
        s->kept_choice = sr.choice;
        s->kept_unsolved = s->kept_refactored = false;
    }

cleanup:
    if (st == GS_OK && (sr.final.solved || (s->kept && s->kept_att.solved))) {
        /* the reported attempt's solution into x (also when it did not converge) */
        gs_status ust = (flags & GPUSOLVE_DEVICE) ? gs_backend_upload(s->be, x, xh, (size_t)s->A.nrows * sizeof *x)
                                                   : (memcpy(x, xh, (size_t)s->A.nrows * sizeof *x), GS_OK);
        if (ust != GS_OK) st = ust;
    }
    if (have_sr) gs_strategy_result_free(&sr);
    gs_free(&bh);
    gs_free(&x0);
    gs_free(&xh);
    if (st != GS_OK) {
        /* a failed device may be left in an error state: the next call starts a fresh backend */
        if (gs_exit_code_for_status(st) == GPUSOLVE_EXIT_DEVICE) {
            drop_setup(s);
            gs_backend_destroy(&s->be);
            s->be_key[0] = '\0';
        }
        return gs_lib_fail(s, st);
    }
    gs_error_clear();
    return code;
}

int gpusolve_solve(gpusolve_solver *s, const double *b, double *x, unsigned flags)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    if (s->comm_ops) return s->comm_ops->solve(s, b, x, flags);
    watch_begin(s);
    return watch_end(s, solve_call(s, b, x, flags));
}

const char *gpusolve_report_json(gpusolve_solver *s)
{
    if (!s) return "{\"status\": \"error\"}";
    return s->json ? s->json : "{}";
}

int gpusolve_exit_code(const gpusolve_solver *s) { return s ? s->exit_code : GPUSOLVE_EXIT_USAGE; }
const char *gpusolve_reason(const gpusolve_solver *s) { return s ? s->reason : "none"; }
const char *gpusolve_reason_detail(const gpusolve_solver *s) { return s && s->detail ? s->detail : ""; }
int gpusolve_iterations(const gpusolve_solver *s) { return s ? s->iterations : -1; }
double gpusolve_residual(const gpusolve_solver *s) { return s ? s->residual : NAN; }
const char *gpusolve_error_status(const gpusolve_solver *s) { return s ? s->err_status : "GS_ERR_ARG"; }
const char *gpusolve_error_message(const gpusolve_solver *s) { return s ? s->err_message : "no solver (NULL)"; }

int gpusolve_set_monitor(gpusolve_solver *s, gpusolve_monitor_fn fn, void *ctx)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    s->monitor = fn;
    s->monitor_ctx = ctx;
    return GPUSOLVE_EXIT_CONVERGED;
}

int gpusolve_interrupt(gpusolve_solver *s)
{
    if (!s) return GPUSOLVE_EXIT_USAGE;
    atomic_store(&s->interrupt, 1); /* lock-free: safe from another thread and from a signal handler */
    return GPUSOLVE_EXIT_CONVERGED;
}
