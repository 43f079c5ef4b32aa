/* Private to trisolve/: the create functions of each implementation and the level-set plan (levels,
 * chains, HEC layout) shared by the host twin (levelset_ref.c) and the GPU solver (levelset_cuda.cu). */
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

/* Each sets ts->ops and ts->data; on failure it frees what it allocated and leaves ts->ops NULL. */
gs_status gs_trisolve_create_reference(gs_trisolve *ts);     /* reference.c (host or cuda backend) */
gs_status gs_trisolve_create_levelset_host(gs_trisolve *ts); /* levelset_ref.c (host backend) */
gs_status gs_trisolve_create_levelset_cuda(gs_trisolve *ts); /* levelset_cuda.cu */
gs_status gs_trisolve_create_cusparse_cuda(gs_trisolve *ts); /* cusparse_cuda.cu */
gs_status gs_trisolve_create_syncfree_cuda(gs_trisolve *ts); /* syncfree_cuda.cu */

/* gs_trisolve_check_factor in two parts (trisolve.c). gs_ts_check_header: the O(1) checks (NULL, uplo,
 * square, arrays present, rowptr[0] = 0, rowptr[n] = nnz). gs_ts_check_rows: rows 0 .. end-1 (header
 * checked; end <= n), scanned in parallel; the first faulty row is reported with exactly the message a
 * sequential scan gives. */
gs_status gs_ts_check_header(const gs_csr *T, gs_uplo uplo, bool unit_diag);
gs_status gs_ts_check_rows(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int end);

/* true when ts's analyse() checks T's rows itself, so that gs_trisolve_analyse checks only the header:
 * syncfree and levelset on the cuda backend validate the rows on the device after the upload (their
 * level kernel evaluates the row predicate of gs_ts_check_rows and, for the first flagged row, calls
 * gs_ts_check_rows for the message); auto analyses an inner solver through gs_trisolve_analyse. */
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
