/* ParILU / ParIC preconditioner: A ~ L U (ParIC: L L^T) computed by fixed-point sweeps of equation (3)
 * of papers/asynchronous-iterative-ilu-factorization-gpu.txt from the symmetrically scaled A, then
 * z = U^{-1} (L^{-1} r) with the configured triangular solvers: the engine and the plug-in. Backend-agnostic:
 * the sweeps run through gs_parilu_sweep (parilu_kernel.c: the host reference or the CUDA twin, by
 * pc->be->kind), everything else through the backend and trisolve interfaces; the plan, the initial guess
 * and the unscaling are in parilu_plan.c.
 *
 * Setup, step by step (setup_symbolic: 1-2; setup_numeric: 3-7):
 *  1. S = pattern of ILU(k) of A, k = fill_level (k = 0: the pattern of A); a diagonal entry A lacks
 *     is inserted (counted, "diagonal_inserted"). ParIC: S = lower part of that pattern.
 *  2. The task list: the entries of S row by row, left to right (Gaussian-elimination order), its
 *     reverse (order = backward) or its GS_PARILU_CHUNK-task chunks shuffled by the seed (random).
 *     U is also kept by columns (CSC) so a task merges row i of L with column j of U.
 *  3. Scaling D = diag(|a_ii|): Â = D^{-1/2} A D^{-1/2} has a unit diagonal (up to sign). Initial
 *     guess L = strict lower part of Â + I, U = upper part of Â (ParIC: L = lower part of Â).
 *  4. `sweeps` sweeps, synchronous (two buffers, Jacobi-like, deterministic) or asynchronous (one
 *     buffer, in place). 0 sweeps leaves the initial guess.
 *  5. The pivot flags come back to the host (time_download): the first unusable pivot, the number
 *     of shifted pivots and, when there are any, which rows were shifted. On the host backend the
 *     values are also copied to the host array the unscaling reads.
 *  6. The scaling is undone (time_unscale), into the factors' own layouts: on the host backend by
 *     gs_parilu_unscale into the host CSR L and U; on the cuda backend by a kernel (gs_parilu_unscale_dev)
 *     into device CSR L and U, whose patterns went to the device once per symbolic setup: the values
 *     never leave the device. Both give the same values bit for bit. A non-finite value is an error
 *     naming its row and column (on the device only its position and value are downloaded).
 *     A = D^{1/2} Â D^{1/2} and Â ~ L̂ Û give
 *         A ~ (D^{1/2} L̂ D^{-1/2}) (D^{1/2} Û D^{1/2}),
 *     so L = D^{1/2} L̂ D^{-1/2} stays unit lower (l_ij = l̂_ij sqrt(d_i / d_j)) and
 *     U = D^{1/2} Û D^{1/2} (u_ij = û_ij sqrt(d_i d_j)); ParIC: A ~ (D^{1/2} L̂)(D^{1/2} L̂)^T, so
 *     L = D^{1/2} L̂ (l_ij = l̂_ij sqrt(d_i)) and U = L^T. The fixed point of the sweeps on Â is
 *     exactly the scaled ILU(0) of A, so the unscaled factors are those of ILU(0) of A.
 *  7. The triangular solvers analyse L (unit for ParILU) and U (time_trisolve_analysis): host CSRs on
 *     the host backend, the device ones (gs_trisolve_analyse_dev) on cuda, which the solvers copy; the
 *     device factor values are freed right after (the patterns are kept for the next numeric setup).
 *     On cuda the host keeps the patterns and sizes of L and U (view: nnz_L, nnz_U, fill_ratio), not
 *     their values: gs_parilu_download_factors builds and downloads them on request (tests, tools).
 *
 * Pivots: a zero / tiny pivot met by a sweep (|u_ii| < DBL_MIN; ParIC: a_ii - sum l_ik^2 < DBL_MIN)
 * is GS_ERR_NUMERIC naming the row and the sweep under zero_pivot = error; under shift it becomes
 * sign(u_ii) * shift * ||row i of Â||_inf (ParIC: sqrt of it), is counted, and the row is listed.
 * A zero a_ii cannot be scaled: an error naming the row under zero_pivot = error; under shift the row
 * is scaled by its largest |a_ij| instead and its initial pivot is 1 (counted as "zero_diagonal").
 *
 * Diagnostics (preconditioner.diagnostics = true): after the initial guess and after every sweep,
 * on the host, the unscaled factors give the nonlinear residual ||(A - LU)_S||_F / ||A_S||_F (the
 * equations the sweeps solve; ParIC: S = the lower pattern) and the ILU residual
 * ||A - LU||_F / ||A||_F over all entries. The sweeps are then timed one by one (downloads and
 * residuals excluded from time_sweeps). On cuda these host copies are scratch: the preconditioner is
 * still built from the device factors of step 6.
 *
 * Report keys ("<prefix>." = "preconditioner."):
 *   factorization        "ParILU" or "ParIC"
 *   sweeps, sweep_type, order, seed (random order), fill_level
 *   tasks                |S| (entries of L and U computed by the sweeps)
 *   diagonal_inserted    rows of A without a stored diagonal entry (inserted into S)
 *   zero_diagonal        rows scaled by their largest entry because a_ii = 0 (zero_pivot = shift)
 *   nnz_L, nnz_U, fill_ratio   as the ilu plug-ins (ParILU: the unit diagonal of L not counted)
 *   pivots_shifted, shifted_rows, pivot_shift_events   rows whose pivot was replaced (first 16,
 *                        1-based) and how many replacements the sweeps made in all
 *   time_sweeps          the sweeps (CUDA events on the device)
 *   time_initial_guess, time_download, time_unscale, time_trisolve_analysis, time_diagnostics
 *                        wall-clock seconds of steps 3, 5, 6, 7 and the diagnostics (cuda: download =
 *                        the flags only; unscale = the kernel and its 8-byte check)
 *   sweep_residuals      "r0,r1,...": nonlinear residual after 0, 1, ..., sweeps (diagnostics)
 *   sweep_ilu_residuals  "e0,e1,...": ILU residual after 0, 1, ..., sweeps (diagnostics)
 *   nonlinear_residual, ilu_residual   the final values (diagnostics)
 * and for a Schwarz extension (RAS): local = "parilu", extended_size, extended_nnz. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/parilu.h"
#include "trisolve/trisolve.h"

/* Relative tolerance of the ParIC symmetry check (as the ic0 plug-in). */
#define PARIC_SYMMETRY_TOL 1e-10

/* ------------------------------------------------------------------------------------------------ */
/* Options                                                                                          */

gs_status gs_parilu_opts_from_config(const gs_config *cfg, gs_parilu_opts *o)
{
    if (!cfg) return GS_ERROR(GS_ERR_ARG, "ParILU: no configuration given");
    memset(o, 0, sizeof *o);
    o->symmetric = gs_config_bool(cfg, "preconditioner.symmetric");
    o->asynchronous = strcmp(gs_config_string(cfg, "preconditioner.sweep_type"), "asynchronous") == 0;
    const char *ord = gs_config_string(cfg, "preconditioner.order");
    o->order = strcmp(ord, "backward") == 0 ? GS_PARILU_BACKWARD
               : strcmp(ord, "random") == 0 ? GS_PARILU_RANDOM
                                            : GS_PARILU_FORWARD;
    o->sweeps = (int)gs_config_int(cfg, "preconditioner.sweeps");
    o->fill_level = (int)gs_config_int(cfg, "preconditioner.fill_level");
    o->seed = (unsigned)gs_config_int(cfg, "preconditioner.seed");
    o->diagnostics = gs_config_bool(cfg, "preconditioner.diagnostics");
    const char *zp = gs_config_string(cfg, "preconditioner.zero_pivot");
    if (strcmp(zp, "grow") == 0)
        return GS_ERROR(GS_ERR_CONFIG, "ParILU/ParIC: preconditioner.zero_pivot = \"grow\" (refactoring with growing "
                                       "shifts) is for the exact incomplete factorizations; use \"shift\" or \"error\"");
    if (gs_config_bool(cfg, "preconditioner.milu"))
        return GS_ERROR(GS_ERR_CONFIG, "ParILU/ParIC has no modified (MILU) variant: set preconditioner.milu = false");
    o->zero_pivot = strcmp(zp, "shift") == 0 ? GS_ZERO_PIVOT_SHIFT : GS_ZERO_PIVOT_ERROR;
    o->shift = gs_config_double(cfg, "preconditioner.shift");
    return GS_OK;
}

static const char *order_name(gs_parilu_order o)
{
    return o == GS_PARILU_BACKWARD ? "backward" : o == GS_PARILU_RANDOM ? "random" : "forward";
}

/* ------------------------------------------------------------------------------------------------ */
/* Diagnostics: ||(A - LU)_S||_F / ||A_S||_F and ||A - LU||_F / ||A||_F on the host                 */

static gs_status residuals(const gs_parilu_plan *P, const gs_csr *A, const gs_csr *L, const gs_csr *U,
                           double *nonlinear, double *ilu)
{
    gs_status st = GS_OK;
    const gs_int n = P->n;
    double *w = NULL, *arow = NULL;
    gs_int *wstamp = NULL, *astamp = NULL, *cols = NULL;
    double s_num = 0.0, s_den = 0.0, f_num = 0.0, f_den = 0.0;
    GS_TRY(GS_CALLOC(w, n));
    GS_TRY(GS_CALLOC(arow, n));
    GS_TRY(GS_MALLOC(wstamp, n));
    GS_TRY(GS_MALLOC(astamp, n));
    GS_TRY(GS_MALLOC(cols, n));
    for (gs_int j = 0; j < n; j++) wstamp[j] = astamp[j] = -1;

    for (gs_int i = 0; i < n; i++) {
        /* w = row i of L U = sum_k l_ik (row k of U), plus row i of U itself for ParILU (l_ii = 1,
         * not stored); ParIC's L stores its diagonal and U = L^T. */
        gs_int nc = 0;
        gs_int pl = L->rowptr[i], ple = L->rowptr[i + 1];
        for (gs_int p = pl; p <= ple; p++) {
            gs_int k;
            double lik;
            if (p < ple) {
                k = L->colind[p];
                lik = L->val[p];
            } else if (!P->symmetric) {
                k = i;
                lik = 1.0;
            } else {
                break;
            }
            for (gs_int q = U->rowptr[k]; q < U->rowptr[k + 1]; q++) {
                gs_int j = U->colind[q];
                if (wstamp[j] != i) {
                    wstamp[j] = i;
                    w[j] = 0.0;
                    cols[nc++] = j;
                }
                w[j] += lik * U->val[q];
            }
        }
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            astamp[A->colind[p]] = i;
            arow[A->colind[p]] = A->val[p];
            f_den += A->val[p] * A->val[p];
        }
        /* ||A - LU||_F: every entry of the product, then A's entries the product lacks */
        for (gs_int c = 0; c < nc; c++) {
            gs_int j = cols[c];
            double e = (astamp[j] == i ? arow[j] : 0.0) - w[j];
            f_num += e * e;
        }
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
            if (wstamp[A->colind[p]] != i) f_num += A->val[p] * A->val[p];
        /* ||(A - LU)_S||_F: row i of S = row i of L (and of U for ParILU) */
        for (int part = 0; part < (P->symmetric ? 1 : 2); part++) {
            const gs_csr *T = part == 0 ? &P->L : &P->U;
            for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
                gs_int j = T->colind[q];
                double a = astamp[j] == i ? arow[j] : 0.0;
                double e = a - (wstamp[j] == i ? w[j] : 0.0);
                s_num += e * e;
                s_den += a * a;
            }
        }
    }
    *nonlinear = s_den > 0.0 ? sqrt(s_num / s_den) : sqrt(s_num);
    *ilu = f_den > 0.0 ? sqrt(f_num / f_den) : sqrt(f_num);
cleanup:
    gs_free(&w);
    gs_free(&arow);
    gs_free(&wstamp);
    gs_free(&astamp);
    gs_free(&cols);
    return st;
}

/* ------------------------------------------------------------------------------------------------ */
/* Engine                                                                                           */

struct gs_parilu {
    gs_backend *be;
    const gs_config *cfg;
    gs_parilu_opts o;
    const char *name; /* "ParILU" or "ParIC" */

    gs_parilu_plan P;
    bool have_plan;
    gs_parilu_kernel K;
    bool have_kernel;
    double *xa, *xb; /* value buffers on the backend (xb: synchronous only) */
    const double *xcur; /* the one of them holding the final values of the last numeric setup */

    /* cuda backend (and n > 0): the factors are built on the device (step 6); F is made once per plan */
    bool on_device;
    gs_parilu_factor_dev F;
    bool have_F;

    /* host */
    double *sd, *task_a, *x0, *pivot_shift, *xh; /* xh: host path, or on_device with diagnostics */
    unsigned char *shifted_h;
    /* Unscaled factors with the plan's patterns. Host path: the factors. on_device: the patterns and
     * sizes; values only once needed (diagnostics scratch, gs_parilu_download_factors). */
    gs_csr L, U;
    bool host_factors; /* L.val, U.val hold the factors of the last successful numeric setup */
    gs_int zero_diag;
    gs_int nshifted, shifted_rows[16];
    unsigned long long shift_events;

    gs_trisolve *lower, *upper;
    gs_vector *work;

    /* Schwarz extension */
    bool blocks;
    gs_int n_global, nnz_global;
    gs_csr Aext;
    gs_int *ext_src;  /* Aext entry -> position in A->val */
    gs_int *ext_rows; /* extended unknown -> global row as messages name it */
    const gs_int *names; /* the rows of A as messages name them (gs_parilu_set_row_names), or NULL */
    gs_ivec *gather, *scatter;
    gs_vector *xe, *ze;

    /* diagnostics: sweeps + 1 values each */
    double *res_nl, *res_ilu;
    int nres;

    bool factored;
    double time_plan, time_init, time_sweeps, time_download, time_unscale, time_analyse, time_diag;
};

static void release_numeric(gs_parilu *p)
{
    gs_trisolve_destroy(&p->lower);
    gs_trisolve_destroy(&p->upper);
    gs_vec_destroy(&p->work);
    if (p->have_kernel) gs_parilu_kernel_free(p->be, &p->K);
    p->have_kernel = false;
    if (p->have_F) gs_parilu_factor_dev_free(p->be, &p->F);
    p->have_F = false;
    p->on_device = false;
    gs_parilu_free_array(p->be, &p->xa);
    gs_parilu_free_array(p->be, &p->xb);
    p->xcur = NULL;
    gs_free(&p->sd);
    gs_free(&p->task_a);
    gs_free(&p->x0);
    gs_free(&p->pivot_shift);
    gs_free(&p->xh);
    gs_free(&p->shifted_h);
    gs_csr_free(&p->L);
    gs_csr_free(&p->U);
    gs_free(&p->res_nl);
    gs_free(&p->res_ilu);
    p->nres = 0;
    p->factored = false;
    p->host_factors = false;
}

static void release_all(gs_parilu *p)
{
    release_numeric(p);
    gs_parilu_plan_free(&p->P);
    p->have_plan = false;
    gs_csr_free(&p->Aext);
    gs_free(&p->ext_src);
    gs_free(&p->ext_rows);
    gs_ivec_destroy(&p->gather);
    gs_ivec_destroy(&p->scatter);
    gs_vec_destroy(&p->xe);
    gs_vec_destroy(&p->ze);
    p->blocks = false;
}

/* How messages and reports name row i of the matrix the sweeps factor: gs_parilu_row_name(row_names_of(p), i). */
static const gs_int *row_names_of(const gs_parilu *p) { return p->blocks ? p->ext_rows : p->names; }

void gs_parilu_set_row_names(gs_parilu *p, const gs_int *names) { p->names = names; }

gs_status gs_parilu_create(gs_backend *be, const gs_config *cfg, gs_parilu **out)
{
    gs_status st = GS_OK;
    gs_parilu *p = NULL;
    if (!be || !out) return GS_ERROR(GS_ERR_ARG, "gs_parilu_create: backend or output is NULL");
    GS_TRY(GS_CALLOC(p, 1));
    p->be = be;
    p->cfg = cfg;
    GS_TRY(gs_parilu_opts_from_config(cfg, &p->o));
    p->name = p->o.symmetric ? "ParIC" : "ParILU";
    *out = p;
    return GS_OK;
cleanup:
    gs_free(&p);
    return st;
}

void gs_parilu_destroy(gs_parilu **pp)
{
    if (!pp || !*pp) return;
    release_all(*pp);
    gs_free(pp);
}

/* Plan, kernel arrays and host work arrays for the matrix M (A itself or the extended one). */
static gs_status symbolic_core(gs_parilu *p, const gs_csr *M)
{
    double t0 = gs_wtime();
    GS_CALL(gs_parilu_plan_build(M, p->o.symmetric, p->o.fill_level, p->o.order, p->o.seed, &p->P));
    p->have_plan = true;
    const gs_parilu_plan *P = &p->P;
    GS_CALL(gs_parilu_kernel_create(p->be, P, p->o.zero_pivot == GS_ZERO_PIVOT_SHIFT, &p->K));
    p->have_kernel = true;
    /* cuda: the unscaled factors are made on the device (an empty matrix takes the host path) */
    p->on_device = p->be->kind == GS_BACKEND_CUDA && P->n > 0;
    if (p->on_device) {
        GS_CALL(gs_parilu_factor_dev_create(p->be, P, &p->F));
        p->have_F = true;
    }
    size_t nx = (size_t)P->ntasks;
    GS_CALL(gs_backend_alloc(p->be, (void **)&p->xa, nx * sizeof(double)));
    if (!p->o.asynchronous) GS_CALL(gs_backend_alloc(p->be, (void **)&p->xb, nx * sizeof(double)));
    GS_CALL(GS_MALLOC(p->sd, P->n));
    GS_CALL(GS_MALLOC(p->task_a, nx));
    GS_CALL(GS_MALLOC(p->x0, nx));
    GS_CALL(GS_MALLOC(p->pivot_shift, P->n));
    if (!p->on_device) GS_CALL(GS_MALLOC(p->xh, nx));
    GS_CALL(GS_MALLOC(p->shifted_h, P->n));
    /* host factors: the plan's patterns, with values on the host path */
    GS_CALL(gs_csr_alloc(&p->L, P->n, P->n, P->L.nnz, !p->on_device));
    memcpy(p->L.rowptr, P->L.rowptr, ((size_t)P->n + 1) * sizeof(gs_int));
    if (P->L.nnz > 0) memcpy(p->L.colind, P->L.colind, (size_t)P->L.nnz * sizeof(gs_int));
    GS_CALL(gs_csr_alloc(&p->U, P->n, P->n, P->U.nnz, !p->on_device));
    memcpy(p->U.rowptr, P->U.rowptr, ((size_t)P->n + 1) * sizeof(gs_int));
    if (P->U.nnz > 0) memcpy(p->U.colind, P->U.colind, (size_t)P->U.nnz * sizeof(gs_int));
    if (p->o.diagnostics) {
        GS_CALL(GS_CALLOC(p->res_nl, (size_t)p->o.sweeps + 1));
        GS_CALL(GS_CALLOC(p->res_ilu, (size_t)p->o.sweeps + 1));
    }
    GS_CALL(gs_vec_create(p->be, P->n, &p->work));
    p->time_plan = gs_wtime() - t0;
    return GS_OK;
}

gs_status gs_parilu_setup_symbolic(gs_parilu *p, const gs_csr *A)
{
    gs_status st = GS_OK;
    release_all(p);
    p->n_global = A->nrows;
    p->nnz_global = A->nnz;
    GS_TRY(symbolic_core(p, A));
cleanup:
    if (st != GS_OK) release_all(p); /* a half-built plan must not reach a numeric setup */
    return st;
}

gs_status gs_parilu_setup_symbolic_blocks(gs_parilu *p, const gs_csr *A, gs_int nblocks, const gs_int *off,
                                          const gs_int *rows, const gs_int *owner)
{
    gs_status st = GS_OK;
    gs_int *loc = NULL;
    release_all(p);
    if (A->nrows != A->ncols || !A->val || !gs_csr_is_sorted(A))
        return GS_ERROR(GS_ERR_ARG, "%s (Schwarz): the matrix must be square and sorted, with values", p->name);
    if (nblocks < 0 || !off || off[0] != 0)
        return GS_ERROR(GS_ERR_ARG, "%s (Schwarz): invalid block layout (%d blocks)", p->name, (int)nblocks);
    const gs_int n = A->nrows, next = off[nblocks];
    p->blocks = true;
    p->n_global = n;
    p->nnz_global = A->nnz;

    /* Aext = diag(A(S_b, S_b)): block b's rows and columns shifted by off[b]; loc[g] = local index of
     * global row g in the current block, -1 outside it. */
    GS_TRY(GS_MALLOC(loc, n));
    for (gs_int g = 0; g < n; g++) loc[g] = -1;
    int64_t cnt = 0;
    for (gs_int b = 0; b < nblocks; b++) {
        if (off[b + 1] < off[b])
            GS_FAIL(GS_ERR_ARG, "%s (Schwarz): block %d has decreasing offsets", p->name, (int)b);
        for (gs_int e = off[b]; e < off[b + 1]; e++) {
            if (rows[e] < 0 || rows[e] >= n || (e > off[b] && rows[e] <= rows[e - 1]))
                GS_FAIL(GS_ERR_ARG, "%s (Schwarz): the rows of block %d must be strictly increasing in 0..%d",
                        p->name, (int)b, (int)n - 1);
            if (owner && owner[e] != -1 && owner[e] != rows[e])
                GS_FAIL(GS_ERR_ARG, "%s (Schwarz): extended unknown %d (row %d) writes back to row %d", p->name,
                        (int)e, (int)rows[e], (int)owner[e]);
            loc[rows[e]] = e - off[b];
        }
        for (gs_int e = off[b]; e < off[b + 1]; e++)
            for (gs_int q = A->rowptr[rows[e]]; q < A->rowptr[rows[e] + 1]; q++) cnt += loc[A->colind[q]] >= 0;
        for (gs_int e = off[b]; e < off[b + 1]; e++) loc[rows[e]] = -1;
    }
    if (cnt > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "%s (Schwarz): the subdomains hold %lld entries, more than 32-bit indices allow",
                p->name, (long long)cnt);
    GS_TRY(gs_csr_alloc(&p->Aext, next, next, (gs_int)cnt, true));
    GS_TRY(GS_MALLOC(p->ext_src, cnt));
    GS_TRY(GS_MALLOC(p->ext_rows, next));
    gs_int k = 0;
    for (gs_int b = 0; b < nblocks; b++) {
        gs_int o = off[b];
        for (gs_int e = o; e < off[b + 1]; e++) loc[rows[e]] = e - o;
        for (gs_int e = o; e < off[b + 1]; e++) {
            /* S_b increasing: local columns come out in global (hence sorted) order */
            for (gs_int q = A->rowptr[rows[e]]; q < A->rowptr[rows[e] + 1]; q++) {
                gs_int c = loc[A->colind[q]];
                if (c < 0) continue;
                p->Aext.colind[k] = o + c;
                p->Aext.val[k] = A->val[q];
                p->ext_src[k++] = q;
            }
            p->Aext.rowptr[e + 1] = k;
            p->ext_rows[e] = p->names ? p->names[rows[e]] : rows[e];
        }
        for (gs_int e = o; e < off[b + 1]; e++) loc[rows[e]] = -1;
    }
    GS_TRY(symbolic_core(p, &p->Aext));
    if (next > 0) {
        GS_TRY(gs_ivec_create(p->be, next, rows, &p->gather));
        GS_TRY(gs_ivec_create(p->be, next, owner ? owner : rows, &p->scatter));
        GS_TRY(gs_vec_create(p->be, next, &p->xe));
        GS_TRY(gs_vec_create(p->be, next, &p->ze));
    }
cleanup:
    gs_free(&loc);
    if (st != GS_OK) release_all(p);
    return st;
}

/* First (i, j) with |a_ij - a_ji| > tol * max(|a_ij|, |a_ji|) (a missing entry is 0); GS_ERR_ARG
 * naming it, GS_OK when the values are symmetric. */
static gs_status check_symmetric(const gs_parilu *p, const gs_csr *A)
{
    bool numerical = false;
    gs_csr_asymmetry f;
    GS_CALL(gs_csr_find_asymmetry(A, PARIC_SYMMETRY_TOL, &numerical, &f)); /* one parallel pass (core/csr.h) */
    if (numerical || !f.found) return GS_OK; /* only explicit zeros differ between the triangles */
    const gs_int *nm = row_names_of(p);
    return GS_ERROR(GS_ERR_ARG,
                    "ParIC (preconditioner.symmetric = true) needs a symmetric matrix, but A(%d,%d) = %.17g "
                    "while A(%d,%d) = %.17g (1-based; relative tolerance %g); use ParILU "
                    "(preconditioner.symmetric = false) with bicgstab or gmres",
                    (int)gs_parilu_row_name(nm, f.i) + 1, (int)gs_parilu_row_name(nm, f.j) + 1, f.aij, (int)gs_parilu_row_name(nm, f.j) + 1,
                    (int)gs_parilu_row_name(nm, f.i) + 1, f.aji, PARIC_SYMMETRY_TOL);
}

/* The error for the non-finite value v at position q (row i) of factor f (0: L, 1: U). */
static gs_status nonfinite_error(const gs_parilu *p, int f, gs_int i, gs_int q, double v, int sweeps_done)
{
    const gs_int *nm = row_names_of(p);
    const gs_csr *T = f == 0 ? &p->L : &p->U;
    return GS_ERROR(GS_ERR_NUMERIC,
                    "%s: non-finite value %g in row %d, column %d (1-based) of %s after %d sweep%s: "
                    "the fixed-point iteration diverged for this matrix (try "
                    "preconditioner.sweep_type = \"asynchronous\", fewer sweeps, a reordering, "
                    "or ilu0)",
                    p->name, v, (int)gs_parilu_row_name(nm, i) + 1, (int)gs_parilu_row_name(nm, T->colind[q]) + 1, f == 0 ? "L" : "U",
                    sweeps_done, sweeps_done == 1 ? "" : "s");
}

/* The unscaled factors from the host values xh; non-finite entries are errors naming them. */
static gs_status make_factors(gs_parilu *p, int sweeps_done)
{
    gs_parilu_unscale(&p->P, p->sd, p->xh, &p->L, &p->U);
    for (int f = 0; f < 2; f++) {
        const gs_csr *T = f == 0 ? &p->L : &p->U;
        for (gs_int i = 0; i < T->nrows; i++)
            for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++)
                if (!isfinite(T->val[q])) return nonfinite_error(p, f, i, q, T->val[q], sweeps_done);
    }
    return GS_OK;
}

/* Host room for values the on_device path normally never has on the host: the sweep values xh and
 * the factor values (diagnostics, gs_parilu_download_factors). No-op once allocated. */
static gs_status host_values(gs_parilu *p)
{
    if (!p->xh) GS_CALL(GS_MALLOC(p->xh, p->P.ntasks));
    if (!p->L.val) GS_CALL(GS_MALLOC(p->L.val, p->L.nnz));
    if (!p->U.val) GS_CALL(GS_MALLOC(p->U.val, p->U.nnz));
    return GS_OK;
}

/* The row of CSR position q (rowptr[i] <= q < rowptr[i+1]; empty rows skipped). */
static gs_int row_of(const gs_csr *T, gs_int q)
{
    gs_int lo = 0, hi = T->nrows;
    while (hi - lo > 1) {
        gs_int mid = lo + (hi - lo) / 2;
        if (T->rowptr[mid] <= q) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* On the device (on_device): one allocation `arena` = L's values then U's, filled from the sweep
 * values x by the unscaling kernel; *L, *U view it with the patterns of p->K (L) and p->F (U). */
static gs_status device_factors(gs_parilu *p, const double *x, double **arena, gs_csr_dev *L, gs_csr_dev *U)
{
    const gs_int n = p->P.n, nl = p->F.nnz_L, nu = p->F.nnz_U;
    GS_CALL(gs_backend_alloc(p->be, (void **)arena, ((size_t)nl + (size_t)nu) * sizeof(double)));
    double *lval = *arena, *uval = *arena + nl;
    GS_CALL(gs_parilu_unscale_dev(p->be, &p->K, &p->F, x, lval, uval));
    *L = (gs_csr_dev){.nrows = n, .ncols = n, .nnz = nl, .rowptr = p->K.l_ptr, .colind = p->K.l_ind, .val = lval};
    *U = (gs_csr_dev){.nrows = n, .ncols = n, .nnz = nu, .rowptr = p->F.u_rowptr, .colind = p->F.u_colind, .val = uval};
    return GS_OK;
}

/* make_factors' check on the device factors: the lowest non-finite position of L, else of U, comes
 * back (8 bytes) and, when there is one, its value (8 more); the message is make_factors'. */
static gs_status check_device_factors(gs_parilu *p, const gs_csr_dev *L, const gs_csr_dev *U, int sweeps_done)
{
    unsigned pos[2];
    GS_CALL(gs_backend_download(p->be, pos, p->F.nonfinite, sizeof pos));
    for (int f = 0; f < 2; f++) {
        if (pos[f] == UINT_MAX) continue;
        const gs_csr_dev *T = f == 0 ? L : U;
        const gs_int q = (gs_int)pos[f];
        if (q < 0 || q >= T->nnz)
            return GS_ERROR(GS_ERR_INTERNAL, "%s: the unscaling reported position %u of %s, which has %d entries",
                            p->name, pos[f], f == 0 ? "L" : "U", (int)T->nnz);
        double v = 0.0;
        GS_CALL(gs_backend_download(p->be, &v, T->val + q, sizeof v));
        return nonfinite_error(p, f, row_of(f == 0 ? &p->L : &p->U, q), q, v, sweeps_done);
    }
    return GS_OK;
}

/* Diagnostics after `s` sweeps from the values at `x` (a backend array). */
static gs_status diagnose(gs_parilu *p, const gs_csr *M, const double *x, int s)
{
    double t0 = gs_wtime();
    size_t bytes = (size_t)p->P.ntasks * sizeof(double);
    GS_CALL(host_values(p));
    if (bytes > 0) GS_CALL(gs_backend_download(p->be, p->xh, x, bytes));
    gs_parilu_unscale(&p->P, p->sd, p->xh, &p->L, &p->U);
    GS_CALL(residuals(&p->P, M, &p->L, &p->U, &p->res_nl[s], &p->res_ilu[s]));
    p->nres = s + 1;
    p->time_diag += gs_wtime() - t0;
    return GS_OK;
}

static gs_status sweeps_error(const gs_parilu *p, unsigned long long key)
{
    const gs_int n = p->P.n;
    gs_int i = (gs_int)(key % (unsigned long long)n);
    unsigned long long s = key / (unsigned long long)n;
    gs_int r = gs_parilu_row_name(row_names_of(p), i) + 1;
    if (p->o.symmetric)
        return GS_ERROR(GS_ERR_NUMERIC,
                        "ParIC: non-positive pivot a_ii - sum_k l_ik^2 at row %d (1-based) in sweep %llu of %d (the "
                        "matrix may not be positive definite, or the iteration has not settled); set "
                        "preconditioner.zero_pivot = \"shift\" to perturb it, or use ParILU",
                        (int)r, s, p->o.sweeps);
    return GS_ERROR(GS_ERR_NUMERIC,
                    "ParILU: zero pivot u_ii at row %d (1-based) in sweep %llu of %d (|u_ii| < %g or not a number); "
                    "set preconditioner.zero_pivot = \"shift\" to perturb it, or system.matching = \"mwm\" to put large entries "
                    "on the diagonal",
                    (int)r, s, p->o.sweeps, DBL_MIN);
}

static gs_status numeric_core(gs_parilu *p, const gs_csr *M)
{
    gs_status st = GS_OK;
    gs_timer tm = {0};
    bool timing = false;
    const gs_parilu_plan *P = &p->P;
    const gs_int *nm = row_names_of(p);
    const size_t bytes = (size_t)P->ntasks * sizeof(double);
    gs_backend *be = p->be;
    double *arena = NULL; /* on_device: the factor values (L's, then U's), freed after the analysis */
    gs_csr_dev Ld = {0}, Ud = {0};
    p->factored = false;
    p->host_factors = false;
    p->xcur = NULL;
    p->time_diag = 0.0;
    p->nres = 0;

    if (p->o.symmetric) GS_TRY(check_symmetric(p, M));

    /* 3. scaling and initial guess (host), uploaded with the task values (and the scaling itself for
     * the device unscaling) */
    double t0 = gs_wtime();
    GS_TRY(gs_parilu_initial_guess(P, M, &p->o, nm, p->sd, p->task_a, p->x0, p->pivot_shift, &p->zero_diag));
    GS_TRY(gs_parilu_kernel_set(be, &p->K, p->task_a, p->pivot_shift));
    if (bytes > 0) GS_TRY(gs_backend_upload(be, p->xa, p->x0, bytes));
    if (p->on_device) GS_TRY(gs_backend_upload(be, p->F.sd, p->sd, (size_t)P->n * sizeof(double)));
    p->time_init = gs_wtime() - t0;

    /* 4. the sweeps: synchronous ones alternate between xa and xb */
    double *cur = p->xa, *other = p->o.asynchronous ? p->xa : p->xb;
    if (p->o.diagnostics) GS_TRY(diagnose(p, M, cur, 0));
    p->time_sweeps = 0.0;
    if (!p->o.diagnostics) {
        GS_TRY(gs_timer_start(be, &tm));
        timing = true;
    }
    for (int s = 1; s <= p->o.sweeps; s++) {
        if (p->o.diagnostics) {
            GS_TRY(gs_timer_start(be, &tm));
            timing = true;
        }
        GS_TRY(gs_parilu_sweep(be, &p->K, cur, other, s));
        if (!p->o.asynchronous) {
            double *tmp = cur;
            cur = other;
            other = tmp;
        }
        if (p->o.diagnostics) {
            double dt = 0.0;
            timing = false;
            GS_TRY(gs_timer_stop(&tm, &dt));
            p->time_sweeps += dt;
            GS_TRY(diagnose(p, M, cur, s));
        }
    }
    if (timing) {
        timing = false;
        GS_TRY(gs_timer_stop(&tm, &p->time_sweeps));
    }

    /* 5. the flags back to the host (host path: and the values, for make_factors) */
    t0 = gs_wtime();
    if (!p->on_device && bytes > 0) GS_TRY(gs_backend_download(be, p->xh, cur, bytes));
    gs_parilu_flags fl;
    GS_TRY(gs_backend_download(be, &fl, p->K.flags, sizeof fl));
    p->shift_events = fl.shifts;
    p->nshifted = 0;
    if (fl.shifts > 0 && P->n > 0) {
        GS_TRY(gs_backend_download(be, p->shifted_h, p->K.shifted, (size_t)P->n));
        for (gs_int i = 0; i < P->n; i++)
            if (p->shifted_h[i]) {
                if (p->nshifted < 16) p->shifted_rows[p->nshifted] = gs_parilu_row_name(nm, i);
                p->nshifted++;
            }
    }
    p->time_download = gs_wtime() - t0;
    if (fl.first_bad != GS_PARILU_NO_ERROR) GS_TRY(sweeps_error(p, fl.first_bad));

    /* 6. unscaled factors: on the device (kernel + an 8-byte check) or on the host */
    t0 = gs_wtime();
    if (p->on_device) {
        GS_TRY(device_factors(p, cur, &arena, &Ld, &Ud));
        GS_TRY(check_device_factors(p, &Ld, &Ud, p->o.sweeps));
    } else {
        GS_TRY(make_factors(p, p->o.sweeps));
    }
    p->time_unscale = gs_wtime() - t0;

    /* 7. triangular solvers: they copy what they need, so the device values go right after */
    t0 = gs_wtime();
    const bool single = gs_pc_single_precision(p->cfg);
    if (!p->lower) GS_TRY(gs_trisolve_create_from_config(p->cfg, be, GS_LOWER, !p->o.symmetric, single, &p->lower));
    if (!p->upper) GS_TRY(gs_trisolve_create_from_config(p->cfg, be, GS_UPPER, false, single, &p->upper));
    if (p->on_device) {
        GS_TRY(gs_trisolve_analyse_dev(p->lower, &Ld));
        GS_TRY(gs_trisolve_analyse_dev(p->upper, &Ud));
        gs_parilu_free_array(be, &arena);
    } else {
        GS_TRY(gs_trisolve_analyse(p->lower, &p->L));
        GS_TRY(gs_trisolve_analyse(p->upper, &p->U));
    }
    p->time_analyse = gs_wtime() - t0;
    p->xcur = cur;
    p->host_factors = !p->on_device;
    p->factored = true;

cleanup:
    if (timing) {
        double dummy = 0.0;
        (void)gs_timer_stop(&tm, &dummy);
    }
    gs_timer_destroy(&tm);
    gs_parilu_free_array(be, &arena);
    return st;
}

gs_status gs_parilu_setup_numeric(gs_parilu *p, const gs_csr *A)
{
    if (!p->have_plan)
        return GS_ERROR(GS_ERR_ARG, "%s: numeric setup before the symbolic one", p->name);
    if (A->nrows != p->n_global || A->nnz != p->nnz_global || !A->val)
        return GS_ERROR(GS_ERR_ARG,
                        "%s: numeric setup with a %d-row matrix of %d entries after a symbolic setup with %d rows "
                        "and %d entries; the pattern must not change (run the symbolic setup again)",
                        p->name, (int)A->nrows, (int)A->nnz, (int)p->n_global, (int)p->nnz_global);
    if (!p->blocks) {
        GS_CALL(numeric_core(p, A));
        return GS_OK;
    }
    for (gs_int e = 0; e < p->Aext.nnz; e++) p->Aext.val[e] = A->val[p->ext_src[e]];
    GS_CALL(numeric_core(p, &p->Aext));
    return GS_OK;
}

gs_status gs_parilu_apply(gs_parilu *p, const gs_vector *r, gs_vector *z)
{
    if (!p->factored) return GS_ERROR(GS_ERR_ARG, "%s applied before a successful numeric setup", p->name);
    if (!p->blocks) {
        /* z = U^{-1} (L^{-1} r) */
        GS_CALL(gs_trisolve_solve(p->lower, r, p->work));
        GS_CALL(gs_trisolve_solve(p->upper, p->work, z));
        return GS_OK;
    }
    if (!p->xe) return GS_OK; /* no subdomains */
    /* x_e = R_g r;  w = L^{-1} x_e;  z_e = U^{-1} w;  z = R_s^T z_e */
    GS_CALL(gs_vec_gather(r, p->gather, p->xe));
    GS_CALL(gs_trisolve_solve(p->lower, p->xe, p->work));
    GS_CALL(gs_trisolve_solve(p->upper, p->work, p->ze));
    GS_CALL(gs_vec_scatter(p->ze, p->scatter, z));
    return GS_OK;
}

void gs_parilu_factors(const gs_parilu *p, const gs_csr **L, const gs_csr **U)
{
    const bool ok = p->factored && p->host_factors;
    if (L) *L = ok ? &p->L : NULL;
    if (U) *U = ok ? &p->U : NULL;
}

gs_status gs_parilu_download_factors(gs_parilu *p)
{
    gs_status st = GS_OK;
    double *arena = NULL;
    gs_csr_dev Ld = {0}, Ud = {0};
    if (!p || !p->factored)
        return GS_ERROR(GS_ERR_ARG, "%s: no factors to download: the numeric setup has not succeeded",
                        p ? p->name : "ParILU");
    if (p->host_factors) return GS_OK;
    /* on_device: the sweep values of the last setup are still in xa/xb; the same kernel again */
    GS_TRY(host_values(p));
    GS_TRY(device_factors(p, p->xcur, &arena, &Ld, &Ud));
    if (Ld.nnz > 0) GS_TRY(gs_backend_download(p->be, p->L.val, Ld.val, (size_t)Ld.nnz * sizeof(double)));
    if (Ud.nnz > 0) GS_TRY(gs_backend_download(p->be, p->U.val, Ud.val, (size_t)Ud.nnz * sizeof(double)));
    p->host_factors = true;
cleanup:
    gs_parilu_free_array(p->be, &arena);
    return st;
}

bool gs_parilu_variable(const gs_parilu *p)
{
    return (p->lower && p->lower->variable) || (p->upper && p->upper->variable);
}

/* ------------------------------------------------------------------------------------------------ */
/* View                                                                                             */

static void key_int(gs_report *rep, const char *prefix, const char *name, long long v)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) (void)gs_report_int(rep, key, v);
}

static void key_double(gs_report *rep, const char *prefix, const char *name, double v)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) (void)gs_report_double(rep, key, v);
}

static void key_string(gs_report *rep, const char *prefix, const char *name, const char *v)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) (void)gs_report_string(rep, key, v);
}

/* "v0,v1,..." with %.6e each; NULL on allocation failure (the key is then left out). */
static char *join_values(const double *v, int m)
{
    char *s = NULL;
    size_t cap = (size_t)m * 16 + 1, len = 0;
    if (gs_malloc(&s, cap, 1) != GS_OK) {
        gs_error_clear();
        return NULL;
    }
    s[0] = '\0';
    for (int k = 0; k < m; k++) {
        int w = snprintf(s + len, cap - len, "%s%.6e", k ? "," : "", v[k]);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
    }
    return s;
}

void gs_parilu_view(const gs_parilu *p, gs_report *rep, const char *prefix)
{
    if (!p) return;
    key_string(rep, prefix, "factorization", p->name);
    key_int(rep, prefix, "sweeps", p->o.sweeps);
    key_string(rep, prefix, "sweep_type", p->o.asynchronous ? "asynchronous" : "synchronous");
    key_string(rep, prefix, "order", order_name(p->o.order));
    if (p->o.order == GS_PARILU_RANDOM) key_int(rep, prefix, "seed", p->o.seed);
    key_int(rep, prefix, "fill_level", p->o.fill_level);
    if (p->blocks) {
        key_string(rep, prefix, "local", "parilu");
        key_int(rep, prefix, "extended_size", p->Aext.nrows);
        key_int(rep, prefix, "extended_nnz", p->Aext.nnz);
    }
    if (!p->have_plan) return;
    key_int(rep, prefix, "tasks", p->P.ntasks);
    key_int(rep, prefix, "diagonal_inserted", p->P.diag_inserted);
    key_double(rep, prefix, "time_plan", p->time_plan);
    if (!p->factored) return;
    key_int(rep, prefix, "zero_diagonal", p->zero_diag);
    long long nl = p->L.nnz, nu = p->U.nnz;
    gs_int nnz_a = p->blocks ? p->Aext.nnz : p->nnz_global;
    key_int(rep, prefix, "nnz_L", nl);
    key_int(rep, prefix, "nnz_U", nu);
    key_double(rep, prefix, "fill_ratio", nnz_a > 0 ? (double)(nl + nu) / (double)nnz_a : 0.0);
    key_int(rep, prefix, "pivots_shifted", p->nshifted);
    char rows[16 * 12 + 1] = "";
    size_t len = 0;
    for (gs_int t = 0; t < p->nshifted && t < 16; t++) {
        int w = snprintf(rows + len, sizeof rows - len, "%s%d", t ? "," : "", (int)p->shifted_rows[t] + 1);
        if (w < 0 || (size_t)w >= sizeof rows - len) break;
        len += (size_t)w;
    }
    key_string(rep, prefix, "shifted_rows", rows);
    key_int(rep, prefix, "pivot_shift_events", (long long)p->shift_events);
    key_double(rep, prefix, "time_initial_guess", p->time_init);
    key_double(rep, prefix, "time_sweeps", p->time_sweeps);
    key_double(rep, prefix, "time_download", p->time_download);
    key_double(rep, prefix, "time_unscale", p->time_unscale);
    key_double(rep, prefix, "time_trisolve_analysis", p->time_analyse);
    if (p->o.diagnostics && p->nres > 0) {
        char *s = join_values(p->res_nl, p->nres);
        if (s) key_string(rep, prefix, "sweep_residuals", s);
        gs_free(&s);
        s = join_values(p->res_ilu, p->nres);
        if (s) key_string(rep, prefix, "sweep_ilu_residuals", s);
        gs_free(&s);
        key_double(rep, prefix, "nonlinear_residual", p->res_nl[p->nres - 1]);
        key_double(rep, prefix, "ilu_residual", p->res_ilu[p->nres - 1]);
        key_double(rep, prefix, "time_diagnostics", p->time_diag);
    }
    if (p->lower) gs_trisolve_view(p->lower, rep, "trisolve.lower");
    if (p->upper) gs_trisolve_view(p->upper, rep, "trisolve.upper");
}

/* ------------------------------------------------------------------------------------------------ */
/* The plug-in                                                                                      */

static gs_status pc_symbolic(gs_pc *pc, const gs_csr *A)
{
    gs_parilu_set_row_names(pc->data, pc->row_names);
    GS_CALL(gs_parilu_setup_symbolic(pc->data, A));
    return GS_OK;
}

static gs_status pc_numeric(gs_pc *pc, const gs_csr *A)
{
    GS_CALL(gs_parilu_setup_numeric(pc->data, A));
    pc->variable = gs_parilu_variable(pc->data);
    return GS_OK;
}

static gs_status pc_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    GS_CALL(gs_parilu_apply(pc->data, r, z));
    return GS_OK;
}

static void pc_destroy(gs_pc *pc)
{
    gs_parilu *p = pc->data;
    gs_parilu_destroy(&p);
    pc->data = NULL;
}

static void pc_view(const gs_pc *pc, gs_report *rep) { gs_parilu_view(pc->data, rep, "preconditioner"); }

static const gs_pc_ops parilu_ops = {
    .setup_symbolic = pc_symbolic,
    .setup_numeric = pc_numeric,
    .apply = pc_apply,
    .destroy = pc_destroy,
    .view = pc_view,
};

gs_status gs_pc_create_parilu(gs_pc *pc)
{
    gs_parilu *p = NULL;
    if (!pc->cfg) return GS_ERROR(GS_ERR_ARG, "preconditioner %s: no configuration given", pc->type);
    GS_CALL(gs_parilu_create(pc->be, pc->cfg, &p));
    pc->data = p;
    pc->ops = &parilu_ops;
    pc->variable = false;
    return GS_OK;
}
