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

/* ---------------------------------------------------------------- the sync-free solver's schedules
 *
 * "levels": rows renumbered level by level, a thread per row (the level-set plan above with entry
 * columns as positions). "runs": a thread per RUN of up to GS_SF_RUN_ROWS consecutive rows, each of
 * which reads the row before it in dependency order (lower: row i reads i-1; upper: i reads i+1), so
 * that the dependency inside a run is passed in a register instead of through a cross-SM hop; runs are
 * renumbered level by level of the run graph (level(run) = 1 + max level of the runs its rows read
 * outside the run). A chain of linked rows is cut into runs of GS_SF_RUN_ROWS from its first row. On
 * PDE factors in natural order (chains along the grid lines) the run levels are fewer than the row
 * levels: 2D 5-point 1024^2 1279 run levels for 2047 row levels, 3D 7-point 100^3 223 for 298. */
#define GS_SF_RUN_ROWS 4 /* rows per run */
/* Warp runs (run_rows = GS_SF_WRUN_ROWS; docs/notes-trisolve.md section 4.4): a WARP per run of up to 32
 * rows, lane k holding the run's k-th row. A row is linked only when it reads the row before it AND every
 * other entry lies at least GS_SF_WRUN_ROWS rows back in dependency order, so that no row reads a row of
 * its own run but its predecessor: with c_k = (b_k - the entries outside the run) / t_kk and
 * a_k = t_{k,k-1} / t_kk, the run is the recurrence x_k = c_k - a_k x_{k-1}, which a scan of the affine
 * maps x -> -a_k x + c_k over the lanes solves in 5 steps. Positions: the k-th row of the run at run
 * position rp is at p = rp * GS_SF_WRUN_ROWS + k (a warp's rows adjacent; holes past the run's end). */
#define GS_SF_WRUN_ROWS 32
#define GS_SF_RUN_ELL 4  /* ELL entries per row the run kernel keeps in registers; the rest: remainder */

/* Row statistics of a factor that the GPU analysis collects before it chooses a schedule. */
typedef struct gs_ts_row_stats {
    gs_int n;
    gs_int max_row_length; /* off-diagonal entries of the longest row */
    long long nnz_offdiag;
    long long linked_rows; /* rows linked to the row before them in dependency order (warp runs' strict link) */
} gs_ts_row_stats;

/* The schedule rule of the sync-free solver (trisolve.c, beside auto's rule), given the row statistics,
 * the row levels and the levels per group the merge rule (or the environment) asks for:
 * GS_SF_WRUN_ROWS = warp runs, 1 = the level order (merged where m > 1). */
gs_int gs_ts_syncfree_rule(const gs_ts_row_stats *s, gs_int nlevels, gs_int merge_m);
#define GS_SF_WRUN_MIN_LINKED 0.9 /* warp runs: at least this fraction of the rows linked (positions <= 4.1 n) */
#define GS_SF_WRUN_MAX_ROW 16     /* ... and rows of at most 16 entries (the kernel's ELL slots; longer rows
                                     go through its remainder loop, an entry at a time) */
/* The schedule forced by the environment variable GS_SYNCFREE_SCHEDULE (tests, measurements):
 * "levels" or "merged" (whose two solves are level orders) -> *run_rows = 1, "runs" -> GS_SF_RUN_ROWS,
 * "wruns" -> GS_SF_WRUN_ROWS (warp runs), unset, empty or "auto" -> 0 (the rule decides); anything else
 * is GS_ERR_ARG. */
gs_status gs_ts_syncfree_forced(gs_int *run_rows);
/* Levels per group of the "merged" schedule forced by the environment: GS_SYNCFREE_SCHEDULE=merged ->
 * *m = GS_SYNCFREE_MERGE (1 .. GS_SF_MERGE_MAX; unset or empty: GS_SF_MERGE_DEFAULT); levels or runs ->
 * 1 (not merged); auto -> 0 (the rule decides). A bad value is GS_ERR_ARG naming the variable. */
gs_status gs_ts_syncfree_merge_forced(gs_int *m);
/* The rule (trisolve.c): levels per group for T's level plan statistics (n rows, levels, longest row's
 * off-diagonal entries), 1 = the level order. */
gs_int gs_ts_syncfree_merge_rule(gs_int n, gs_int levels, gs_int max_row_length);
#define GS_SF_MERGE_RULE_MAX 16
#define GS_SF_MERGE_DEFAULT 4
#define GS_SF_MERGE_MAX 64
#define GS_SF_MERGE_FILL 8 /* R may hold at most this many times T's entries + n */

/* The level order of the GPU analysis (analysis_cuda.cu, cuda backend be; tests): T's rows checked, its
 * plan built with rows as units from the host factor (from_device false) or from a device copy of it
 * (from_device: the path of a GPU factorization, T read in place); *nlevels, perm (n entries: rows level
 * by level) and level_ptr (n + 1 entries at most; nlevels + 1 used) downloaded. */
gs_status gs_ts_levels_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                           gs_int *nlevels, gs_int *perm, gs_int *level_ptr);

/* H = host copy of a factor in the device memory of the cuda backend be (H freed on failure). */
gs_status gs_ts_csr_download(gs_backend *be, const gs_csr_dev *T, gs_csr *H);

/* T's row levels as an analysed cuda syncfree solver found them (whatever schedule it then chose: level
 * order, merged or warp runs; with runs forced through GS_SYNCFREE_SCHEDULE, the run levels); -1 when ts is
 * not one (syncfree_cuda.cu; trisolve_nocuda.c without CUDA). auto's rule reads it: SpSV, its alternative,
 * pays one step per row level. */
gs_int gs_ts_syncfree_levels(const gs_trisolve *ts);

/* The run schedule built on the host (syncfree_ref.c): the host twin of the GPU analysis with
 * run_rows > 1 (run_rows = 1 gives the level order with position columns), and the solve with the
 * arithmetic of the run kernel. Positions: the k-th row of the run at run position rp is at position
 * p = k * nruns + rp (the rows of one warp's runs are adjacent for each k); positions k >= the run's
 * length are holes (perm -1). */
typedef struct gs_sf_runs_plan {
    gs_int n, run_rows, nruns, npos, nlevels, ell_width, rem_nnz, max_row_length;
    long long linked_rows; /* rows linked to their predecessor (warp runs: by the strict link) */
    gs_int *run_first; /* nruns + 1: dependency index (lower: row, upper: n-1-row) of each run's first row */
    gs_int *run_level; /* nruns */
    gs_int *order;     /* nruns: the run at run position rp (by level, then run index) */
    gs_int *level_ptr; /* nlevels + 1: first run position of each run level */
    gs_int *perm;      /* npos: row at position p, -1 for a hole */
    gs_int *ell_col;   /* ell_width * npos, column-major; the POSITION of the entry's row, -1 padding */
    double *ell_val;
    gs_int *rem_ptr; /* npos + 1 */
    gs_int *rem_col; /* positions */
    double *rem_val;
    double *dinv; /* npos: 1 / t_ii (1 for a unit factor and for holes) */
} gs_sf_runs_plan;

/* Build the plan of T (checked by gs_trisolve_check_factor); ELL width by gs_ls_ell_width capped at
 * max_width (1 .. GS_LS_ELL_MAX_WIDTH). On failure P is freed. */
gs_status gs_sf_runs_plan_build(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int run_rows, gs_int max_width,
                                gs_sf_runs_plan *P);
void gs_sf_runs_plan_free(gs_sf_runs_plan *P);
/* The warp-run plan of the GPU analysis (analysis_cuda.cu, cuda backend be; tests): T's rows checked, the
 * plan built with run_rows = GS_SF_WRUN_ROWS and ELL width limit max_width from the host factor or from a
 * device copy of it (from_device), downloaded into P's arrays and scalars (run_first, run_level and order
 * stay NULL: the GPU plan keeps no such arrays). P is freed on failure. */
gs_status gs_ts_wruns_plan_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, bool from_device,
                               gs_int max_width, gs_sf_runs_plan *P);

/* x = T^{-1} b: runs in run-position order, the rows of a run in order, each
 * x = (b - ELL entries in order - remainder entries in order) * dinv, values kept by position. Warp runs
 * (run_rows = GS_SF_WRUN_ROWS): the entry of a row's predecessor inside its run is left out of the sum
 * (the link, column p - 1), c = s * dinv, a = link * dinv, and the run is solved by the warp kernel's scan
 * in its order: (A_k, B_k) = (-a_k, c_k) (holes: (1, 0)); for off = 1, 2, 4, 8, 16 and every k >= off at
 * once: B_k = fma(A_k, B_{k-off}, B_k), A_k = A_k * A_{k-off}; x_k = B_k. */
gs_status gs_sf_runs_solve_host(const gs_sf_runs_plan *P, const double *b, double *x);

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
 * M's by row (level mod m, level / m of T's level). */
gs_status gs_ts_merge_build_gpu(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int m,
                                long long max_fill, gs_csr *TD, gs_csr *M, gs_ts_merge_stats *stats,
                                gs_int *stage_level);
/* x = M^{-1} (T_D^{-1} b) by sequential substitution (y: n values of work space). */
gs_status gs_ts_merge_solve_host(const gs_csr *TD, const gs_csr *M, gs_uplo uplo, bool unit_diag, const double *b,
                                 double *y, double *x);

/* Report helpers that ignore the (memory-only) failure of a report insertion: view() returns void. */
void gs_ts_report_int(gs_report *rep, const char *prefix, const char *name, long long v);
void gs_ts_report_double(gs_report *rep, const char *prefix, const char *name, double v);
void gs_ts_report_string(gs_report *rep, const char *prefix, const char *name, const char *v);

#ifdef __cplusplus
}
#endif
#endif
