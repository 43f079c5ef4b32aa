/* Private to the trisolve CUDA files: the backend's stream, device arrays allocated and uploaded through
 * the backend, GPU-scope memory accesses, and the analysis the level-order solvers share (analysis_cuda.cu:
 * upload, row check, level-set plan). */
#ifndef GS_TRISOLVE_CUDA_H
#define GS_TRISOLVE_CUDA_H

#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/backend.h"
#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/gpu_sync_cuda.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/merge_kernels.h"
#include "trisolve/syncfree_kernels.h"
#include "trisolve/trisolve_impl.h"

/* ---------------------------------------------------------------- ready values (syncfree_cuda.cu, the
 * sync-free variant of tiled_cuda.cu): a solved value is published by position at GPU scope and its
 * consumers poll the value itself until it is no longer SF_EMPTY. */
#define SF_EMPTY (-1LL) /* the bit pattern of a not-yet-solved value */
#define SF_NEG_ZERO ((long long)0x8000000000000000ULL) /* the bits of -0.0 (an unused slot of a sum) */
#define SF_QNAN 0x7FF8000000000000LL

/* The polling rounds test only the high word of a value (one compare instead of two): SF_EMPTY's is all
 * ones, and no published value has that high word (sf_bits). */
static __device__ __forceinline__ bool sf_hi_empty(long long bits)
{
    return (int)(bits >> 32) == -1;
}

/* A result never takes a bit pattern whose high word is SF_EMPTY's (it would read as "not solved"): those
 * NaNs become the canonical quiet NaN. */
static __device__ __forceinline__ long long sf_bits(double v)
{
    long long bits = __double_as_longlong(v);
    return sf_hi_empty(bits) ? SF_QNAN : bits;
}

static inline cudaStream_t gs_ts_stream(gs_backend *be) { return (cudaStream_t)gs_backend_cuda_stream(be); }

/* *dst = device copy of count elements of src (count may be 0: a valid minimal block). */
template <typename T>
static gs_status gs_ts_upload_array(gs_backend *be, T **dst, const T *src, size_t count)
{
    void *p = NULL;
    GS_CALL(gs_backend_alloc(be, &p, count * sizeof(T)));
    *dst = (T *)p;
    if (count > 0) GS_CALL(gs_backend_upload(be, p, src, count * sizeof(T)));
    return GS_OK;
}

/* gs_backend_free and NULL; safe on NULL. */
template <typename T>
static void gs_ts_free_array(gs_backend *be, T **p)
{
    if (*p) gs_backend_free(be, (void *)*p);
    *p = NULL;
}

/* Work space of an analysis, stream-ordered on the backend's stream: by default the backend's work space
 * (gs_backend_cuda_work_alloc: a block given back is kept idle for a later request, no cudaFree and no
 * synchronization); with gs_backend_cuda_set_analysis_pool, cudaMallocAsync from the device's default memory pool
 * (measured in analysis_cuda.cu: cheaper later allocations, an expensive first one). For temporaries
 * that only work queued on that stream touches (another stream must wait on an event recorded after the
 * allocation, and be waited for before the block is given back). Given back with gs_ts_work_free (NULL
 * is ignored): work queued on the stream before it may still use the block. */
gs_status gs_ts_work_alloc(gs_backend *be, void **p, size_t bytes);
void gs_ts_work_free(gs_backend *be, void *p);

/* ---------------------------------------------------------------- the level-set plan built on the GPU
 * (analysis_cuda.cu): the same plan as gs_ls_plan_build (levels, rows renumbered level by level with
 * the rows of a level in increasing original order, HEC = column-major ELL part + CSR remainder,
 * 1/diagonal by position), computed by kernels from the uploaded CSR. Columns are original row numbers,
 * or with position_cols the POSITION of the column's row (the sync-free solver keeps its ready values
 * by position). With run_rows > 1 the units renumbered level by level are the runs of the sync-free
 * solver (trisolve_impl.h; gs_sf_runs_plan_build is the host twin): the k-th row of the run at unit
 * position rp is at position k * nunits + rp (warp runs, run_rows = GS_SF_WRUN_ROWS: rp * run_rows + k),
 * positions past a run's end are holes (perm -1). */
struct gs_ls_dplan {
    gs_int n, nlevels, ell_width, rem_nnz, nnz_off, max_row_length, max_width;
    gs_int run_rows; /* 1: units are rows (positions = rows); GS_SF_RUN_ROWS: runs; GS_SF_WRUN_ROWS: warp runs */
    gs_int nunits;   /* rows or runs */
    gs_int npos;     /* positions: run_rows * nunits */
    bool position_cols;
    void *arena; /* one block of the backend's work space (gs_backend_cuda_work_alloc) holding the arrays below */
    gs_int *perm, *level_ptr, *ell_col, *rem_ptr, *rem_col; /* level_ptr indexes unit positions */
    double *ell_val, *rem_val, *dinv; /* NULL with single */
    bool single;                      /* values stored in float instead (gs_ts_plan_opts.single) */
    float *ell_val_f, *rem_val_f, *dinv_f; /* NULL without single; dinv_f = (float)(1 / t_ii) */
    gs_int *h_level_ptr; /* host copy of level_ptr (gs_malloc) */
};

/* Free the device and host arrays (the device block is given back to the backend's work space: work queued
 * on the stream before may still read it); keeps the statistics. */
void gs_ls_dplan_free(gs_backend *be, gs_ls_dplan *D);

/* Seconds spent in the steps of one analysis, and what the upload moved. The value upload overlaps the
 * level kernel (its time counts in upload; level_time is what is left of the level kernel after it). */
struct gs_ts_atimes {
    double upload;        /* T's CSR to the device: wall time of the host-side staging of the pattern and
                             of the values (work space allocation included) */
    double staging_alloc; /* part of upload: allocating the pinned staging buffer (once per process) */
    double check;         /* row pass (check, row statistics) with its download; the runs' construction */
    double levels;        /* the rest of the level kernel once the values are staged */
    double layout;        /* sort, HEC layout, value check, level pointers to the host */
    double plan;          /* total - upload: check, levels, layout and the solver's own steps */
    double total;
    long long upload_bytes;
    bool staged; /* through the pinned staging buffer (false: directly from pageable memory) */
};

/* What the level-order GPU solvers (syncfree, levelset) keep of their analysis. */
struct gs_ts_analysis {
    gs_ls_dplan D;
    gs_ts_atimes t;
    gs_int max_level_rows; /* widest level (units: rows or runs) */
    gs_int rows_level0;    /* units without dependencies */
    long long linked_rows; /* rows linked to the row before them (the strict link unless runs of GS_SF_RUN_ROWS) */
    int sms;               /* multiprocessors of the device */
    double t0;             /* gs_wtime() at the start of the analysis */
    /* Levels-only analyses (gs_ts_plan_opts.levels_only; NULL otherwise): the level of each row (device),
     * and for a factor given on the host its copy on the device (tdev: rowptr, colind and val uploaded by
     * the analysis, so the caller need not upload T again; nrows = 0 for a device factor), both in `kept`,
     * the analysis's work block, given back by gs_ts_analysis_free. */
    const gs_int *row_level;
    gs_csr_dev tdev;
    void *kept;
};

/* What a solver asks of the analysis. */
struct gs_ts_plan_opts {
    gs_int max_width;     /* ELL width limit of the level order (1 .. GS_LS_ELL_MAX_WIDTH) */
    bool position_cols;   /* entry columns as positions */
    /* rows per run: 0 or 1 the level order (rows as units), GS_SF_RUN_ROWS runs (links as defined for
     * them), GS_SF_WRUN_ROWS warp runs (the strict link, positions p = rp * GS_SF_WRUN_ROWS + k) */
    gs_int forced_run_rows;
    gs_int run_max_width;   /* ELL width limit of the run schedule (GS_SF_RUN_ROWS; warp runs: max_width) */
    bool single;            /* the plan's values (ELL, remainder, 1/diagonal) in float */
    /* Levels given instead of computed (the merged schedule's T_D and M, whose levels follow from T's):
     * device array by row, every dependency of a row at a smaller level, the largest given_max_level;
     * rows as units. NULL: the level kernel computes them. */
    const gs_int *given_level;
    gs_int given_max_level;
    /* Levels only (the merged schedule, which needs T's levels but not T's plan): asked once the levels
     * of a level-order analysis (rows as units) are known; true stops the analysis there, before the
     * sort and the layout, with gs_ts_analysis.row_level set and D holding n, nlevels, max_row_length
     * and nnz_off only (no arrays, and T's diagonal values unchecked: the caller's next plan of the
     * same rows must check them). NULL: never. Given the row statistics (linked_rows: strict links, as
     * for warp runs) and the number of levels. */
    bool (*levels_only)(const gs_ts_row_stats *rs, gs_int nlevels, const void *ctx);
    const void *levels_ctx;
    bool poison_plan; /* tests: the plan's block filled with 0xA5 bytes before the kernels write it */
    int level_blocks_per_sm; /* blocks per multiprocessor of the row-level kernel (0: LV_WARP_BLOCKS_PER_SM) */
};

/* The analysis of the level-order solvers, x = T^{-1} b with T given on the host (header checked by
 * gs_ts_check_header, rows NOT yet checked):
 *   1. upload: rowptr and colind, then (step 4) the values on a second stream, through the process's
 *      pinned staging buffer (chunks copied by the OpenMP threads, each chunk's DMA overlapping the copy
 *      of the next);
 *   2. row pass, one thread per row: the row predicate of gs_ts_check_rows (row pointers, column range,
 *      order, side, diagonal presence; the first faulty row by atomicMin), row lengths and their
 *      histogram, links (row reads its predecessor in dependency order; unless GS_SF_RUN_ROWS runs are
 *      asked for, the strict link of warp runs: and no other entry less than GS_SF_WRUN_ROWS rows back). A faulty row: gs_ts_check_rows
 *      on the host over the rows up to it gives the error, with exactly gs_trisolve_check_factor's
 *      message (the first faulty row, whatever its fault);
 *   3. schedule: opts->forced_run_rows rows per run; for runs, chain starts by a max-scan, run
 *      starts and a scan give the runs;
 *   4. levels of the units (rows or runs): one thread per unit in dependency order (blocks take their
 *      units by an atomic ticket, so a unit only waits for units of running or finished blocks), each
 *      spinning on the level of the rows it reads outside itself (-1 = not yet known); for rows, a
 *      dependency inside the same warp is passed by shuffles instead (lv_levels_warp_kernel); the value
 *      upload overlaps it. Skipped when opts->given_level gives the levels;
 *   5. a stable radix sort of (level, unit) gives the unit positions, level_ptr and the row positions;
 *      the ELL width by gs_ls_ell_width on the downloaded histogram, the remainder pointers by a scan;
 *      once the values are there, one thread per position writes its row's ELL slots, remainder
 *      entries and 1/diagonal, and flags a zero or non-finite diagonal (reported like step 2).
 * A is overwritten (free it first); on failure nothing is kept and the status is the check's error
 * (GS_ERR_ARG / GS_ERR_NUMERIC) or a device one. */
gs_status gs_ts_analysis_run(gs_backend *be, const gs_csr *T, gs_uplo uplo, bool unit_diag,
                             const gs_ts_plan_opts *opts, gs_ts_analysis *A);
/* The same analysis of a factor already in device memory (dT, header checked by the caller): no step 1,
 * dT is read in place (it must stay valid until the call returns); a faulty row is reported with
 * gs_trisolve_check_factor's message from a host copy of the rows up to it (downloaded on that error path
 * only). The work space of both is stream-ordered (gs_ts_work_alloc). */
gs_status gs_ts_analysis_run_dev(gs_backend *be, const gs_csr_dev *dT, gs_uplo uplo, bool unit_diag,
                                 const gs_ts_plan_opts *opts, gs_ts_analysis *A);
/* Called by the solver once its own steps are done: t.total and t.plan from t0. */
void gs_ts_analysis_done(gs_ts_analysis *A);
/* Free the plan and row_level (given back to the work space, ordered by the stream); keeps the
 * statistics. Safe on a zeroed struct. */
void gs_ts_analysis_free(gs_backend *be, gs_ts_analysis *A);
/* "<prefix>.upload_time", ".staging_alloc_time", ".upload_bytes", ".upload_path", ".check_time", ".level_time",
 * ".layout_time", ".plan_time", ".analysis_time" and the plan's statistics ".levels",
 * ".max_rows_per_level", ".avg_rows_per_level", ".rows_without_dependencies" (for runs: "runs" instead
 * of "rows" in these three, and ".run_rows", ".runs"), ".linked_rows", ".nnz_offdiag",
 * ".max_row_length", ".ell_width", ".remainder_nnz". */
void gs_ts_analysis_view(const gs_ts_analysis *A, gs_report *rep, const char *prefix);

/* ---------------------------------------------------------------- the merged-level transformation on
 * the GPU (merge_cuda.cu; merge_ref.c is its bit-exact host twin, trisolve_impl.h the definitions). */
struct gs_ts_merge_dev {
    gs_csr_dev TD, M; /* views of the arrays below */
    gs_int *td_rowptr, *td_colind, *m_rowptr, *m_colind;
    double *td_val, *m_val;
    /* gs_ts_merge_prepare: levels of T_D and M by row from T's (the level inside the group, the group),
     * valid level orders for their plans (gs_ts_plan_opts.given_level), and their largest values */
    gs_int *td_level, *m_level;
    gs_int td_max_level, m_max_level;
};
/* lev[row] = level of each row of an analysed level plan D (rows renumbered level by level; a
 * levels-only analysis has them in gs_ts_analysis.row_level instead). */
gs_status gs_ts_merge_row_levels(gs_backend *be, const gs_ls_dplan *D, gs_int *lev);
/* T_D and M of a factor T in device memory (rows already checked) with the level of each row in lev
 * (device, nlevels levels): gs_ts_merge_build_host's results, bit for bit, in device arrays owned by R.
 * Too much fill (R over max_fill entries, checked pass by pass as the host twin does, or beyond gs_int's
 * range): too_much_fill, nothing kept, GS_OK. pool_start: the first size of the pool of R's entries
 * (0: a guess from T's size; tests give a small one that must grow). */
gs_status gs_ts_merge_build_cuda(gs_backend *be, const gs_csr_dev *T, const gs_int *lev, gs_int nlevels, bool unit_diag,
                                 gs_int m, long long max_fill, long long pool_start, gs_ts_merge_dev *R,
                                 gs_ts_merge_stats *stats);
void gs_ts_merge_dev_free(gs_backend *be, gs_ts_merge_dev *R);
/* The merged schedule's transformation of a factor on the host (T) or in device memory (dT) whose level
 * plan AT is built (gs_ts_analysis_run: it checked the rows' structure; a levels-only AT gives its
 * row_level and leaves the diagonal values to T_D's plan): the level of each row from AT; T on the host
 * is read from AT's upload (levels-only AT) or uploaded once more; then gs_ts_merge_build_cuda. On failure
 * nothing is kept in R. */
gs_status gs_ts_merge_prepare(gs_backend *be, const gs_csr *T, const gs_csr_dev *dT, bool unit_diag, gs_int m,
                              long long max_fill, long long pool_start, const gs_ts_analysis *AT, gs_ts_merge_dev *R,
                              gs_ts_merge_stats *stats);

#endif
