/* The numeric incomplete factorizations of the ILU-family preconditioners, by backend: the host ones
 * (precond/factor.h: gs_ilu_numeric, gs_ic0, ilu_factor.c) and the device ones of the cuda backend
 * (precond/factor_cuda.h, factor_cuda*.cu), reached through gs_factor_numeric_dev so that a
 * preconditioner never calls CUDA code itself; the factors are the same either way, entry by entry. */
#ifndef GS_FACTOR_KERNELS_H
#define GS_FACTOR_KERNELS_H

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"
#include "precond/factor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the time of one GPU factorization went (seconds, wall clock with the stream synchronized). */
typedef struct gs_factor_cuda_times {
    double upload;   /* host -> device: A (and the L/U patterns for ILU on a host pattern) */
    double kernel;   /* device work: input checks, levels, sort, factorization (IC(0): pattern, L^T;
                      * ILU(0) from A: the pattern) */
    double download; /* device -> host: the factor values (IC(0), ILU(0) from A: both factors with their
                      * patterns; nothing but shifted rows when the factors are kept) */
    gs_int levels;   /* levels of the dependency DAG of L = length of the longest dependency chain */
    int lanes_per_row; /* threads that factor one row (8 for short rows, 32 for long ones) */
} gs_factor_cuda_times;

/* Factors left in device memory by a GPU factorization (its `keep` argument): L and U (IC(0): L and
 * L^T) as device CSR views into the factorization's own allocations, which this struct now owns; for
 * gs_trisolve_analyse_dev, which copies what it needs, so the caller frees them right after. */
typedef struct gs_factor_dev {
    gs_backend *be;
    void *arena[2];
    gs_csr_dev L, U;
} gs_factor_dev;

/* The device factorizations. */
typedef enum gs_factor_kind {
    GS_FACTOR_ILU,    /* numeric ILU on the host patterns L, U (gs_iluk_symbolic's): values into L->val, U->val */
    GS_FACTOR_ILU0_A, /* ILU(0) with its pattern built on the device from A: L and U new */
    GS_FACTOR_IC0     /* IC(0): L (diagonal last) and U = L^T new */
} gs_factor_kind;

/* The factorization `kind` of A on the device of be (a cuda backend; GS_ERR_ARG otherwise, GS_ERR_UNSUPPORTED
 * in a build without CUDA), with the contracts of precond/factor_cuda.h: op, the solver's operator when it is
 * resident on be with A's sizes, is read there instead of uploading A (GS_FACTOR_ILU0_A, GS_FACTOR_IC0; NULL:
 * A is uploaded); t may be NULL; with keep the factors stay on the device. */
gs_status gs_factor_numeric_dev(gs_backend *be, gs_factor_kind kind, const gs_csr *A, const gs_matrix *op,
                                const gs_factor_opts *o, gs_csr *L, gs_csr *U, gs_factor_info *info,
                                gs_factor_cuda_times *t, gs_factor_dev *keep);

/* Free what f holds (the backend's stream is synchronized first) and zero it; safe on a zeroed struct. */
void gs_factor_dev_free(gs_factor_dev *f);

#ifdef __cplusplus
}
#endif
#endif
