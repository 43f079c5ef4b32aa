/* The level-set plan of a triangular factor (levels, chains, HEC layout), declared once and built by the
 * host twin (levelset_ref.c: gs_ls_plan_build, gs_ls_plan_solve_host) and on the GPU (analysis_cuda.cu:
 * gs_ts_levels_gpu; the GPU solvers' own plan is trisolve_cuda.h's gs_ls_dplan). Private to trisolve/. */
#ifndef GS_LEVELSET_KERNELS_H
#define GS_LEVELSET_KERNELS_H

#include <stdbool.h>

#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"
#include "core/status.h"
#include "trisolve/trisolve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Level of every row: level(i) = 0 for a row without off-diagonal entries, else
 * 1 + max level(j) over its off-diagonal entries j (lower: j < i, upper: j > i). One O(nnz) pass in
 * dependency order. Returns the number of levels (0 when n == 0). */
gs_int gs_ls_levels(const gs_csr *T, gs_uplo uplo, gs_int *level);

/* Default maximum rows of a "thin" level that one thread block of a chain handles (Naumov's chains). */
#define GS_LS_CHAIN_ROWS 512

/* Widest ELL part of a plan: a row with more off-diagonal entries keeps the rest in the remainder
 * (bounds the registers a GPU thread needs for one row, and the histogram of the ELL-width rule). */
#define GS_LS_ELL_MAX_WIDTH 32

/* The level-set plan of a triangular factor (Naumov; Liu/Chen HEC):
 *  - rows renumbered level by level: position p holds original row perm[p]; the rows of level l are
 *    positions level_ptr[l] .. level_ptr[l+1]-1, in increasing original order;
 *  - the off-diagonal entries of the reordered rows in HEC form: an ELL part of width ell_width stored
 *    column-major (slot k of position p at ell_col/ell_val[k*n + p], -1 = padding, padding only after
 *    the row's real entries) and a CSR remainder (rem_ptr by position) for rows longer than ell_width.
 *    Column indices stay in the ORIGINAL numbering, so a solve reads b and writes x through perm and
 *    needs no permutation passes;
 *  - dinv[p] = 1 / T(perm[p], perm[p]) (1 for a unit diagonal);
 *  - chains: consecutive levels of at most chain_rows rows each form one chain (chain_single = 1, run
 *    by one thread block with a barrier between levels); a wider level is a chain of its own
 *    (chain_single = 0, run by many blocks). chain_ptr indexes levels. */
typedef struct gs_ls_plan {
    gs_int n, nlevels, nchains, chain_rows;
    gs_int *level_ptr;           /* nlevels + 1 */
    gs_int *perm;                /* n */
    gs_int *chain_ptr;           /* nchains + 1 */
    unsigned char *chain_single; /* nchains */
    gs_int *chain_max_rows;      /* nchains: widest level of each chain */
    gs_int ell_width;
    gs_int *ell_col;             /* ell_width * n */
    double *ell_val;
    gs_int *rem_ptr;             /* n + 1 */
    gs_int *rem_col;             /* rem_nnz */
    double *rem_val;
    gs_int rem_nnz, nnz_offdiag;
    double *dinv;                /* n */
    /* statistics for view() */
    gs_int max_level_rows, max_row_length, single_chains, multi_chains;
    double time_levels; /* seconds in the level pass and counting sort */
    double time_build;  /* seconds for the whole plan */
} gs_ls_plan;

/* The ELL-width rule of the plan, from the histogram of off-diagonal row lengths: hist[k] = rows with
 * exactly k entries for k < cap, hist[cap] = rows with at least cap entries (cap >= 0). The smallest
 * w <= cap such that at most 10% of the rows are longer than w (those spill into the remainder),
 * reduced while the padded ELL part would hold more than 2 * nnz_off + n slots (bounds the padding of
 * skewed distributions). The host plan (cap GS_LS_ELL_MAX_WIDTH) and the GPU plan builders use it. */
gs_int gs_ls_ell_width(gs_int n, const gs_int *hist, gs_int cap, gs_int nnz_off);

/* Chains of the levels of P (P->n, nlevels and level_ptr set): fills chain_ptr, chain_single,
 * chain_max_rows, nchains, single_chains, multi_chains, chain_rows and max_level_rows. A chain is a
 * maximal run of levels of at most chain_rows rows each; a wider level is a chain of its own. */
gs_status gs_ls_plan_chains(gs_ls_plan *P, gs_int chain_rows);

/* Build the plan of T (checked by gs_trisolve_check_factor). chain_rows >= 1. */
gs_status gs_ls_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int chain_rows, gs_ls_plan *P);
/* Free the arrays; keeps the scalar statistics. Safe on a zeroed plan. */
void gs_ls_plan_free(gs_ls_plan *P);
/* x = T^{-1} b with the plan, level by level, exactly the arithmetic of the GPU kernels:
 * x[perm[p]] = (b[perm[p]] - sum over ELL then remainder entries) * dinv[p]. */
void gs_ls_plan_solve_host(const gs_ls_plan *P, const double *b, double *x);
/* "<prefix>.levels", ".chains", ".max_rows_per_level", ... */
void gs_ls_plan_view(const gs_ls_plan *P, gs_report *rep, const char *prefix);

/* The level order of the GPU analysis (analysis_cuda.cu, cuda backend be; tests): T's rows checked, its
 * plan built with rows as units from the host factor (from_device false) or from a device copy of it
 * (from_device: the path of a GPU factorization, T read in place); *nlevels, perm (n entries: rows level
 * by level) and level_ptr (n + 1 entries at most; nlevels + 1 used) downloaded. */
gs_status gs_ts_levels_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                           gs_int *nlevels, gs_int *perm, gs_int *level_ptr);

#ifdef __cplusplus
}
#endif
#endif
