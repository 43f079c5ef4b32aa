/* The Jacobi triangular solvers' shared interface, declared once: jacobi_ref.c (the host twin, the shared
 * layout and the sweep-shape rule) and jacobi_cuda.cu (the GPU solver) both implement and use it, so the
 * host model and the kernels cannot drift apart. Private to trisolve/. */
#ifndef GS_JACOBI_KERNELS_H
#define GS_JACOBI_KERNELS_H

#include <stdbool.h>

#include "core/report.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout both implementations share: rows of more than *long_row off-diagonal entries get a warp,
 * async-jacobi's blocks hold *rows_per_block rows and run *local_sweeps local sweeps per global sweep. */
void gs_jacobi_layout(gs_int *long_row, gs_int *rows_per_block, gs_int *local_sweeps);
/* async-jacobi with asynchronous (in-place) sweeps; its blocks in descending order. */
bool gs_jacobi_in_place(const gs_trisolve *ts);
bool gs_jacobi_descending(const gs_trisolve *ts);
/* The view keys both implementations report. */
void gs_jacobi_view_common(const gs_trisolve *ts, gs_report *rep, const char *prefix, gs_int nlong,
                           gs_int max_row);
/* The rule of the synchronous sweep's shape for a factor of n rows, nnz_off off-diagonal entries and rows of
 * at most max_row of them: *ell = the width of the ELL copy the GPU sweeps (0: CSR), *lanes = lanes per
 * short row of the CSR sweep; the asynchronous (in_place) sweeps keep a thread per row, CSR. The
 * parameters p force either (jacobi.lanes, jacobi.ell). */
void gs_jacobi_sweep_shape(gs_int n, long long nnz_off, gs_int max_row, bool in_place, const gs_jacobi_params *p,
                           int *lanes, int *ell);

#ifdef __cplusplus
}
#endif
#endif
