/* Numeric ILU (on any pattern from gs_iluk_symbolic) and IC(0) computed on the GPU of a cuda backend,
 * with the contracts, pivot policies, row numbering and messages of the host gs_ilu_numeric / gs_ic0
 * (precond/factor.h): the factors equal the host ones entry by entry (same operations in the same order,
 * no fused multiply-add), the error names the same row, info records the same shifted rows.
 * The preconditioners reach these through precond/factor_kernels.h. Two exceptions, left to the caller
 * (precond/ilu.c): MILU is not implemented here (opts->milu must be
 * false: GS_ERR_UNSUPPORTED), and the grow policy runs one attempt only -- A itself, a pivot below
 * max(DBL_MIN, min_pivot * s_i) failing with GS_ERR_NUMERIC as the host's first attempt does; the
 * shifted refactorizations are the host's (gs_ilu_numeric / gs_ic0 with the grow policy).
 *
 * Schedule (precond/factor_cuda.cu): the levels of the lower factor's dependency DAG are computed on the
 * GPU, rows are sorted by level, and one persistent kernel factors the rows in that order without any
 * global barrier: a group of lanes per row, each row waiting (acquire loads of per-row ready flags) only
 * for the rows of its L pattern, which come earlier in the order, so waiting can never deadlock. */
#ifndef GS_FACTOR_CUDA_H
#define GS_FACTOR_CUDA_H

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"
#include "precond/factor.h"
#include "precond/factor_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* true in builds with CUDA (whether a GPU is usable is the backend's question), false without. */
bool gs_factor_cuda_available(void);

/* gs_ilu_numeric on the device of be (a cuda backend): L->val and U->val are allocated when NULL and
 * overwritten otherwise (left untouched on failure). Zero pivot, shift and non-finite rules, messages and
 * info exactly as the host's. t may be NULL. With keep (NULL: none) the factors stay on the device in
 * *keep (freed first) and L->val, U->val are neither allocated nor written. */
gs_status gs_ilu_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_factor_opts *o, gs_csr *L, gs_csr *U,
                              gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep);

/* ILU(0) of A on the device of be, pattern included: the result of gs_iluk_symbolic(A, 0, L, U) followed
 * by gs_ilu_numeric (L strict lower, unit diagonal not stored; U upper with its diagonal, inserted where A
 * lacks it), bit for bit, with the messages that pair gives (A's structural checks under the symbolic
 * factorization's name); the pattern is built on the device from A, so only A is uploaded. L and U are
 * new host CSR (zeroed on failure). t may be NULL. With keep, the factors stay on the device in *keep
 * and L, U get only their sizes (nrows, ncols, nnz; no arrays). A_dev: a device copy of A, read instead
 * of uploading A, as for gs_ic0_numeric_cuda below (NULL: A is uploaded). */
gs_status gs_ilu0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                               gs_csr *L, gs_csr *U, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep);

/* gs_ic0 on the device of be: L (lower triangle of A, diagonal last in each row) and LT = L^T, both new
 * host CSR (zeroed on failure). t may be NULL. With keep, the factors stay on the device in *keep and
 * L, LT get only their sizes (nrows, ncols, nnz; no arrays). A_dev: a device copy of A on be (the
 * solver's operator, gs_mat_cuda_csr), read instead of uploading A -- only read, during the call, on the
 * backend's stream; its sizes must be A's (GS_ERR_ARG otherwise); the host A still gives the sizes and
 * the error messages. NULL: A is uploaded. */
gs_status gs_ic0_numeric_cuda(gs_backend *be, const gs_csr *A, const gs_csr_dev *A_dev, const gs_factor_opts *o,
                              gs_csr *L, gs_csr *LT, gs_factor_info *info, gs_factor_cuda_times *t, gs_factor_dev *keep);

#ifdef __cplusplus
}
#endif
#endif
