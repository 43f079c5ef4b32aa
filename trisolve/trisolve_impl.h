/* Private to trisolve/: the create functions the registry (registry.c) lists, and what every solver
 * shares (common.c): the factor check in two parts, the sequential reference, the view's report
 * helpers, the host copy of a device factor. Each method's plans and kernels are declared in its own
 * *_kernels.h. */
#ifndef GS_TRISOLVE_IMPL_H
#define GS_TRISOLVE_IMPL_H

#include <stdbool.h>

#include "core/csr.h"
#include "core/report.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each sets ts->ops and ts->data; on failure it frees what it allocated and leaves ts->ops NULL. The
 * *_cuda ones have stand-ins in trisolve_nocuda.c for a build without CUDA (never reached: no cuda
 * backend exists there). */
gs_status gs_trisolve_create_auto(gs_trisolve *ts);          /* auto.c (both backends) */
gs_status gs_trisolve_create_reference(gs_trisolve *ts);     /* reference.c (both backends) */
gs_status gs_trisolve_create_levelset_host(gs_trisolve *ts); /* levelset_ref.c */
gs_status gs_trisolve_create_levelset_cuda(gs_trisolve *ts); /* levelset_cuda.cu */
gs_status gs_trisolve_create_cusparse_cuda(gs_trisolve *ts); /* cusparse_cuda.cu */
gs_status gs_trisolve_create_syncfree_cuda(gs_trisolve *ts); /* syncfree_cuda.cu */
gs_status gs_trisolve_create_jacobi_host(gs_trisolve *ts);   /* jacobi_ref.c (jacobi and async-jacobi) */
gs_status gs_trisolve_create_jacobi_cuda(gs_trisolve *ts);   /* jacobi_cuda.cu (jacobi and async-jacobi) */
gs_status gs_trisolve_create_tiled_host(gs_trisolve *ts);    /* tiled_ref.c */
gs_status gs_trisolve_create_tiled_cuda(gs_trisolve *ts);    /* tiled_cuda.cu */

/* gs_trisolve_check_factor in two parts (common.c). gs_ts_check_header: the O(1) checks (NULL, uplo,
 * square, arrays present, rowptr[0] = 0, rowptr[n] = nnz). gs_ts_check_rows: rows 0 .. end-1 (header
 * checked; end <= n), scanned in parallel; the first faulty row is reported with exactly the message a
 * sequential scan gives. */
gs_status gs_ts_check_header(const gs_csr *T, gs_uplo uplo, bool unit_diag);
gs_status gs_ts_check_rows(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int end);

/* true when ts's analyse() checks T's rows itself (its registry entry's checks_rows for ts's backend), so
 * that gs_trisolve_analyse checks only the header: syncfree and levelset on the cuda backend validate the
 * rows on the device after the upload (their level kernel evaluates the row predicate of gs_ts_check_rows
 * and, for the first flagged row, calls gs_ts_check_rows for the message); auto analyses an inner solver
 * through gs_trisolve_analyse. */
bool gs_ts_rows_checked_in_analyse(const gs_trisolve *ts);


/* Sequential substitution x = T^{-1} b on host arrays (T checked by gs_trisolve_check_factor):
 * lower rows in increasing, upper rows in decreasing order, division by the stored diagonal. */
void gs_trisolve_reference_host(const gs_csr *T, gs_uplo uplo, bool unit_diag, const double *b, double *x);

/* H = host copy of a factor in the device memory of the cuda backend be (H freed on failure). */
gs_status gs_ts_csr_download(gs_backend *be, const gs_csr_dev *T, gs_csr *H);

/* Report helpers that ignore the (memory-only) failure of a report insertion: view() returns void. */
void gs_ts_report_int(gs_report *rep, const char *prefix, const char *name, long long v);
void gs_ts_report_double(gs_report *rep, const char *prefix, const char *name, double v);
void gs_ts_report_string(gs_report *rep, const char *prefix, const char *name, const char *v);

#ifdef __cplusplus
}
#endif
#endif
