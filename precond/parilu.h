/* ParILU / ParIC: the fine-grained fixed-point incomplete factorization of Chow & Patel (SIAM J. Sci.
 * Comput. 2015) as implemented on GPUs by Chow, Anzt & Dongarra (ISC 2015, papers/asynchronous-
 * iterative-ilu-factorization-gpu.txt): every entry (i,j) of the pattern S is one task of equation (3),
 *     l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj   (i > j),      u_ij = a_ij - sum_{k<i} l_ik u_kj   (i <= j),
 * (ParIC, A ~ L L^T:  l_ij = (a_ij - sum_{k<j} l_ik l_jk) / l_jj,  l_ii = sqrt(a_ii - sum_{k<i} l_ik^2)),
 * applied to all tasks once per "sweep", synchronously (double-buffered, Jacobi-like) or asynchronously
 * (in place: each task reads whatever values are current), starting from the symmetrically scaled A.
 *
 * Pieces (Ginkgo-style: the algorithm once, its kernel per backend):
 *   plan      host, symbolic: pattern S, U by columns, the task list in its execution order.
 *   kernel    the arrays one sweep reads, resident on a backend; one sweep = gs_parilu_sweep_ref
 *             (precond/parilu_ref.c, host backend) or gs_parilu_sweep_cuda (precond/parilu_cuda.cu).
 *   engine    gs_parilu: setup (scaling, initial guess, sweeps, unscaled factors, triangular solvers)
 *             and z = U^{-1} L^{-1} r; used by the "parilu" plug-in and by RAS (local = "parilu").
 *
 * The value array x of a kernel: ParILU x[0 .. nnz_l) = L (strict lower, CSR order), x[nnz_l ..
 * nnz_l + nnz_u) = U by columns (CSC order, column j = rows k <= j, diagonal last); ParIC x[0 .. nnz_l)
 * = L (CSR, diagonal last in each row) and the columns of U = L^T are the rows of L (u_off = 0). */
#ifndef GS_PARILU_H
#define GS_PARILU_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"
#include "precond/factor.h"
#include "precond/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plug-in "parilu" (keys preconditioner.sweeps, symmetric, sweep_type, order, seed, fill_level,
 * diagnostics, zero_pivot, shift; trisolve.lower.* / trisolve.upper.*). */
gs_status gs_pc_create_parilu(gs_pc *pc);

/* Tasks per GPU thread block; also the chunk that order = "random" shuffles (a random thread-block
 * order as in Section 4.4 of the paper, the tasks of a chunk kept in elimination order). */
#define GS_PARILU_CHUNK 128

typedef enum gs_parilu_order { GS_PARILU_FORWARD = 0, GS_PARILU_BACKWARD = 1, GS_PARILU_RANDOM = 2 } gs_parilu_order;

typedef struct gs_parilu_opts {
    bool symmetric;       /* ParIC */
    bool asynchronous;    /* in place; false: synchronous (double-buffered) */
    gs_parilu_order order;
    int sweeps;           /* 0: the initial guess */
    int fill_level;       /* S = pattern of ILU(k) */
    unsigned seed;        /* order = random */
    bool diagnostics;     /* residuals after every sweep (host computation) */
    gs_zero_pivot zero_pivot;
    double shift;
} gs_parilu_opts;

/* Options from the keys preconditioner.{symmetric, sweep_type, order, sweeps, fill_level, seed,
 * diagnostics, zero_pivot, shift}. */
gs_status gs_parilu_opts_from_config(const gs_config *cfg, gs_parilu_opts *o);

/* ---- plan (host, symbolic) ---- */

typedef struct gs_parilu_plan {
    gs_int n, nnz_A;        /* nnz_A: entries of A the plan was built from (numeric setups must match) */
    bool symmetric;
    gs_int nnz_l, nnz_u;    /* ParIC: nnz_u = 0 (U = L^T shares L's values) */
    gs_int ntasks;          /* nnz_l + nnz_u = |S| */
    gs_int diag_inserted;   /* rows of A without a stored diagonal entry (structurally inserted) */
    /* Patterns (val = NULL). ParILU: L strict lower, U upper with its diagonal first (as
     * gs_iluk_symbolic makes them). ParIC: L lower with its diagonal last, U = L^T. */
    gs_csr L, U;
    /* Columns of the factor the sweeps read as "U": ParILU U^T in CSR (nnz_u); ParIC NULL (the
     * columns of U = L^T are the rows of L). */
    gs_int *uc_ptr, *uc_ind;
    /* ParILU: x-offset (relative to nnz_l) of U's CSR entry q; ParIC: position in U = L^T of L's
     * entry p. */
    gs_int *u_map;
    /* The task list in execution order: row, column, destination in x, position of a_ij in A->val
     * (-1: fill of ILU(k) or an inserted diagonal, a_ij = 0). */
    gs_int *task_row, *task_col, *task_dst, *task_src;
} gs_parilu_plan;

/* S from A (sorted, square) and the task list: row-major "Gaussian elimination" order (row by row,
 * left to right), reversed (backward), or its GS_PARILU_CHUNK-task chunks shuffled by `seed`
 * (random; Fisher-Yates with a fixed generator: reproducible on every platform). */
gs_status gs_parilu_plan_build(const gs_csr *A, bool symmetric, int fill_level, gs_parilu_order order,
                               unsigned seed, gs_parilu_plan *P);
void gs_parilu_plan_free(gs_parilu_plan *P);

/* Numeric: the scaling d_i = |a_ii| (sd[i] = sqrt(d_i)), the scaled values task_a[t] = a_ij /
 * sqrt(d_i d_j) of every task (0 for fill), the initial guess x0 (L = strict lower part of the scaled
 * A, U = its upper part; ParIC: L = lower part), and the replacement for a bad pivot of row i,
 * pivot_shift[i] = shift * max_j |a_ij / sqrt(d_i d_j)| (the shift itself for a zero row).
 * A zero (or missing) a_ii is GS_ERR_NUMERIC naming the row under zero_pivot = error; under shift
 * row i is scaled by d_i = ||a_i||_inf (1 for a zero row) and its initial pivot is 1.
 * *zero_diag counts those rows. row_names: if non-NULL, row i is reported as row_names[i]. */
gs_status gs_parilu_initial_guess(const gs_parilu_plan *P, const gs_csr *A, const gs_parilu_opts *o,
                                  const gs_int *row_names, double *sd, double *task_a, double *x0,
                                  double *pivot_shift, gs_int *zero_diag);

/* The unscaled host factors from the scaled values x (A = D^{1/2} Â D^{1/2}, Â ~ L̂ Û):
 *   ParILU  L = D^{1/2} L̂ D^{-1/2} (unit lower: l_ij = l̂_ij sd_i / sd_j),
 *           U = D^{1/2} Û D^{1/2}   (u_ij = û_ij sd_i sd_j);
 *   ParIC   L = D^{1/2} L̂ (l_ij = l̂_ij sd_i), U = L^T.
 * L and U must hold the plan's patterns with values allocated. */
void gs_parilu_unscale(const gs_parilu_plan *P, const double *sd, const double *x, gs_csr *L, gs_csr *U);

/* ---- kernel (one sweep, on a backend) ---- */

/* first_bad = (sweep * n + row) of the first pivot that could not be used: |u_ii| < DBL_MIN or not a
 * number (ParIC: a_ii - sum l_ik^2 < DBL_MIN), under zero_pivot = error, or NaN under either policy;
 * GS_PARILU_NO_ERROR when none. shifts = pivots replaced under zero_pivot = shift (all sweeps). */
typedef struct gs_parilu_flags {
    unsigned long long first_bad;
    unsigned long long shifts;
} gs_parilu_flags;
#define GS_PARILU_NO_ERROR 0xFFFFFFFFFFFFFFFFull

/* Arrays resident on the backend the sweeps run on (device pointers under cuda). */
typedef struct gs_parilu_kernel {
    gs_int n, ntasks, nnz_x; /* nnz_x = length of the value arrays */
    gs_int u_off;            /* offset of U's columns in x: nnz_l (ParILU) or 0 (ParIC) */
    bool symmetric, shift;   /* ParIC; zero_pivot = shift */
    gs_int *l_ptr, *l_ind;   /* rows of L (n + 1, nnz_l) */
    gs_int *u_ptr, *u_ind;   /* columns of U (n + 1, nnz_u); ParIC: the same arrays as l_ptr/l_ind */
    gs_int *task_row, *task_col, *task_dst;
    double *task_a;          /* scaled a_ij per task */
    double *pivot_shift;     /* n */
    unsigned char *shifted;  /* n: 1 where a pivot of the row was replaced */
    gs_parilu_flags *flags;  /* 1 */
} gs_parilu_kernel;

/* Allocate K on be and upload the plan's patterns and task list (values: gs_parilu_kernel_set). */
gs_status gs_parilu_kernel_create(gs_backend *be, const gs_parilu_plan *P, bool shift, gs_parilu_kernel *K);
/* Upload task_a and pivot_shift; reset the flags and the shifted rows. */
gs_status gs_parilu_kernel_set(gs_backend *be, gs_parilu_kernel *K, const double *task_a, const double *pivot_shift);
void gs_parilu_kernel_free(gs_backend *be, gs_parilu_kernel *K);

/* One sweep (number `sweep`, 1-based, for the error flags): for every task t in list order,
 *   out[task_dst[t]] = equation (3) of task t evaluated on the values `in`.
 * in != out: synchronous (Jacobi-like, deterministic; out is written completely).
 * in == out: asynchronous, in place (host: sequential in task order, i.e. Gauss-Seidel; GPU: a thread
 * per task, thread blocks in list order, reading whatever values are current).
 * The host twin needs be->kind == host, the CUDA one be->kind == cuda. */
gs_status gs_parilu_sweep_ref(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep);
gs_status gs_parilu_sweep_cuda(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep);
/* The twin for be->kind. */
gs_status gs_parilu_sweep(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep);

/* ---- unscaled factors on the backend (the engine uses them on cuda: no round trip of the values) ---- */

/* What the unscaling needs besides a kernel's task list, resident on the same backend. The factors
 * have the plan's patterns: L = P->L (the kernel's l_ptr/l_ind), U = P->U (u_rowptr/u_colind here). */
typedef struct gs_parilu_factor_dev {
    gs_int n, nnz_L, nnz_U;       /* the plan's L and U */
    gs_int *u_rowptr, *u_colind;  /* U in CSR (n + 1, nnz_U) */
    /* Where a value of x lands in U's CSR: ParIC u_pos[p] = position of L's entry p in U = L^T (the
     * plan's u_map, nnz_L); ParILU u_pos[k] = q with u_map[q] = k, i.e. the CSR position of x[nnz_l + k],
     * the k-th entry of U by columns (nnz_U). */
    gs_int *u_pos;
    double *sd;                   /* n: sqrt(d_i) of the numeric setup (the caller uploads it) */
    unsigned *nonfinite;          /* 2: the lowest position of a non-finite value in L, in U (UINT_MAX: none) */
} gs_parilu_factor_dev;

/* Allocate F on be and upload the plan's U pattern and u_pos (once per plan). */
gs_status gs_parilu_factor_dev_create(gs_backend *be, const gs_parilu_plan *P, gs_parilu_factor_dev *F);
void gs_parilu_factor_dev_free(gs_backend *be, gs_parilu_factor_dev *F);

/* The unscaled factors of gs_parilu_unscale from the scaled values x, for every task t (i, j, d =
 * task_dst[t]):
 *   ParIC   lval[d] = x[d] sd_i,  uval[u_pos[d]] = lval[d];
 *   ParILU  d < nnz_l:  lval[d] = (x[d] sd_i) / sd_j;   else uval[u_pos[d - nnz_l]] = (x[d] sd_i) sd_j,
 * the same operations in the same order as gs_parilu_unscale (correctly rounded, never fused), so the
 * values are gs_parilu_unscale's bit for bit. F->nonfinite is reset, then receives the lowest L / U
 * position holding a non-finite value (CSR positions: row-major order, as make_factors scans).
 * x, lval (nnz_L), uval (nnz_U) live on be. The host twin needs be->kind == host, the CUDA one cuda. */
gs_status gs_parilu_unscale_ref(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                const double *x, double *lval, double *uval);
gs_status gs_parilu_unscale_cuda(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                 const double *x, double *lval, double *uval);
/* The twin for be->kind (GS_ERR_UNSUPPORTED for cuda in a build without CUDA). */
gs_status gs_parilu_unscale_dev(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                const double *x, double *lval, double *uval);

/* Row i as messages and info name it: row_names[i], or i itself (row_names NULL). */
static inline gs_int gs_parilu_row_name(const gs_int *row_names, gs_int i) { return row_names ? row_names[i] : i; }
/* gs_backend_free(*pp) (NULL ignored) and *pp = NULL; pp points to a pointer to the array. */
void gs_parilu_free_array(gs_backend *be, void *pp);

/* ---- engine ---- */

typedef struct gs_parilu gs_parilu;

/* cfg: the options (gs_parilu_opts_from_config) and the trisolve.* keys; kept, must outlive p. */
gs_status gs_parilu_create(gs_backend *be, const gs_config *cfg, gs_parilu **p);
/* Row i of the A given to the following setups is row names[i] of a larger matrix in messages and
 * reported rows (borrowed; must outlive the setups; NULL: A's own numbering). */
void gs_parilu_set_row_names(gs_parilu *p, const gs_int *names);
/* Factor A itself. */
gs_status gs_parilu_setup_symbolic(gs_parilu *p, const gs_csr *A);
/* Factor the block-diagonal "extended" matrix diag(A(S_0,S_0), A(S_1,S_1), ...) of a Schwarz
 * method: S_b = rows[off[b] .. off[b+1]) (strictly increasing global rows); apply is then
 * z = R_s^T U^{-1} L^{-1} R_g r with R_g the gather by rows and R_s the scatter by owner
 * (owner[e] = rows[e] or -1 for a discarded overlap copy; owner == NULL: rows). The blocks are
 * independent in equation (3), so one set of sweeps factors all of them at once. */
gs_status gs_parilu_setup_symbolic_blocks(gs_parilu *p, const gs_csr *A, gs_int nblocks, const gs_int *off,
                                          const gs_int *rows, const gs_int *owner);
/* Scaling, sweeps, unscaled factors, triangular-solver analysis. A: same pattern as the symbolic
 * setup. */
gs_status gs_parilu_setup_numeric(gs_parilu *p, const gs_csr *A);
/* z = U^{-1} (L^{-1} r) (blocks: gathered and scattered as above). */
gs_status gs_parilu_apply(gs_parilu *p, const gs_vector *r, gs_vector *z);
/* The host factors of the last numeric setup (layout of the plan's L and U, values unscaled); NULL
 * before a successful numeric setup. On the cuda backend the factors are built and analysed on the
 * device and only their patterns live on the host: NULL there until gs_parilu_download_factors. */
void gs_parilu_factors(const gs_parilu *p, const gs_csr **L, const gs_csr **U);
/* Make gs_parilu_factors available: nothing to do on the host backend; on cuda the unscaling kernel
 * runs again on the final sweep values (still on the device) and L and U are downloaded - the very
 * values the triangular solvers were analysed on. For tests and tools, not the setup path. */
gs_status gs_parilu_download_factors(gs_parilu *p);
/* The operator may change between applications (asynchronous triangular solvers). */
bool gs_parilu_variable(const gs_parilu *p);
/* Keys "<prefix>.<name>" (see parilu.c) and the triangular solvers' under trisolve.lower/upper. */
void gs_parilu_view(const gs_parilu *p, gs_report *rep, const char *prefix);
void gs_parilu_destroy(gs_parilu **p);

#ifdef __cplusplus
}
#endif
#endif
