/* The merged-level transformation of the sync-free solver's "merged" schedule, declared once: built by the
 * host twin (merge_ref.c, bit-exact) and on the GPU (merge_cuda.cu, gs_ts_merge_build_gpu for tests).
 * Private to trisolve/. */
#ifndef GS_MERGE_KERNELS_H
#define GS_MERGE_KERNELS_H

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- the sync-free solver's "merged"
 * schedule (merge_ref.c explains it): m consecutive levels form a group; T = T_D + T_O (inside a group /
 * reading an earlier group), x = M^{-1} (T_D^{-1} b) with M = I + T_D^{-1} T_O (unit diagonal, not
 * stored): two solves of m and ceil(levels / m) levels. */
typedef struct gs_ts_merge_stats {
    gs_int m;          /* levels per group */
    gs_int levels;     /* levels of T */
    gs_int groups;     /* ceil(levels / m) */
    long long nnz_td_off; /* off-diagonal entries of T_D */
    long long nnz_r;      /* entries of R = T_D^{-1} T_O (off-diagonal entries of M) */
    gs_int max_row_r;     /* longest row of R */
    double growth;        /* max_i sum_j |R_ij| (< 1 for a diagonally dominant T) */
    bool too_much_fill;   /* R would hold more than max_fill entries: nothing built */
    double build_time;    /* seconds spent building T_D and R (the builder alone) */
    gs_int pool_grown;    /* GPU builder: times its passes stopped for a larger pool of R's entries */
} gs_ts_merge_stats;

/* Build T_D (T's storage conventions: diagonal stored unless unit_diag) and M (unit diagonal, not
 * stored), both sorted CSR in T's triangle, from T (checked by gs_trisolve_check_factor); m >= 1. When R
 * would exceed max_fill entries, stats->too_much_fill is set and TD, M are left empty (GS_OK). */
gs_status gs_ts_merge_build_host(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int m, long long max_fill,
                                 gs_csr *TD, gs_csr *M, gs_ts_merge_stats *stats);
/* The GPU builder's results for a host factor (merge_cuda.cu, cuda backend be; tests): the same steps as
 * the sync-free solver's analysis (T's level plan, the row levels from it, gs_ts_merge_build_cuda),
 * downloaded; T's rows are checked first. Same contract as gs_ts_merge_build_host. With stage_level
 * (2n entries, may be NULL) and R built: the levels the two stages' plans are given, T_D's by row then
 * M's by row (level mod m, level / m of T's level). pool_start as for gs_ts_merge_build_cuda. */
gs_status gs_ts_merge_build_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int m,
                                long long max_fill, long long pool_start, gs_csr *TD, gs_csr *M,
                                gs_ts_merge_stats *stats, gs_int *stage_level);
/* x = M^{-1} (T_D^{-1} b) by sequential substitution (y: n values of work space). */
gs_status gs_ts_merge_solve_host(const gs_csr *TD, const gs_csr *M, gs_uplo uplo, bool unit_diag, const double *b,
                                 double *y, double *x);

#ifdef __cplusplus
}
#endif
#endif
