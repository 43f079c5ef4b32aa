/* Preconditioners ILU(0), ILU(k), ILUT(p, tau), ILUTP(p, tau, perm_tol) and IC(0): A ~ L U (ILUTP:
 * A Q ~ L U) factored on the host or, for ILU(0), ILU(k) and IC(0) with the cuda backend, on the GPU
 * (preconditioner.factor_on; the same factors either way, precond/factor_kernels.h; with fill level 0 the
 * GPU builds the pattern too), then z = U^{-1} (L^{-1} r) (ILUTP: z = Q U^{-1} L^{-1} r, Q applied on the
 * backend by a scatter) with the configured triangular solvers (L unit lower for the ILUs, L with its
 * diagonal and U = L^T for IC(0)). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "core/threads.h"
#include "precond/factor.h"
#include "precond/factor_kernels.h"
#include "precond/ilu.h"
#include "trisolve/trisolve.h"

/* Relative tolerance of the IC(0) symmetry check: |a_ij - a_ji| <= tol * max(|a_ij|, |a_ji|). */
#define IC0_SYMMETRY_TOL 1e-10

typedef enum ilu_kind { KIND_ILU0, KIND_ILUK, KIND_ILUT, KIND_ILUTP, KIND_IC0 } ilu_kind;

typedef struct ilu_data {
    ilu_kind kind;
    gs_factor_opts opts;
    gs_csr L, U;          /* host factors (ILU: L strict lower, unit diagonal not stored); after a GPU
                           * factorization that keeps its factors on the device, only their sizes */
    bool have_pattern;    /* ILU(0)/ILU(k): L and U hold the symbolic pattern */
    bool device_pattern;  /* ILU(0) factored on the GPU: the pattern is built there from A with the
                           * values (no host symbolic phase); L and U hold at most sizes */
    gs_factor_info info;
    bool on_device;       /* numeric factorization on the GPU (preconditioner.factor_on) */
    bool host_retry;      /* zero_pivot = grow: the GPU's attempt failed, the accepted factors are the host's */
    gs_factor_cuda_times ftimes;
    gs_int nnz_A;
    gs_trisolve *lower, *upper;
    gs_vector *work;      /* y = L^{-1} r */
    gs_vector *work2;     /* ILUTP: U^{-1} y, before Q */
    gs_ivec *colperm;     /* ILUTP: colperm[k] = column of A at column k of A Q (z[colperm[k]] = (U^{-1}y)_k) */
} ilu_data;

static const char *kind_name(ilu_kind k)
{
    switch (k) {
    case KIND_ILU0: return "ILU(0)";
    case KIND_ILUK: return "ILU(k)";
    case KIND_ILUT: return "ILUT";
    case KIND_ILUTP: return "ILUTP";
    case KIND_IC0: return "IC(0)";
    }
    return "ILU";
}

/* Where the numeric factorization runs: preconditioner.factor_on = "auto" (the GPU with the cuda backend,
 * for the kinds that have a GPU factorization), "host", or "device" (an error where it cannot be served). */
static gs_status read_factor_on(const gs_pc *pc, ilu_data *d)
{
    const char *on = gs_config_string(pc->cfg, "preconditioner.factor_on");
    const bool cuda = pc->be && pc->be->kind == GS_BACKEND_CUDA;
    /* the GPU factors ILU(0)/ILU(k)/IC(0) without MILU; ILUT's and ILUTP's patterns depend on the values */
    const bool has_gpu_kind = d->kind != KIND_ILUT && d->kind != KIND_ILUTP && !d->opts.milu;
    if (on && strcmp(on, "device") == 0) {
        if (!cuda)
            return GS_ERROR(GS_ERR_CONFIG,
                            "preconditioner.factor_on = \"device\" needs the cuda backend, but preconditioner %s "
                            "runs on the %s backend; set device.backend = \"cuda\" (or \"auto\" on a machine "
                            "with a GPU), or preconditioner.factor_on = \"auto\" or \"host\"",
                            pc->type, pc->be && pc->be->name ? pc->be->name : "host");
        if (!has_gpu_kind)
            return GS_ERROR(GS_ERR_CONFIG,
                            "preconditioner.factor_on = \"device\": preconditioner %s has no GPU factorization "
                            "(%s); set preconditioner.factor_on = \"auto\" or \"host\"",
                            pc->type,
                            d->opts.milu ? "MILU, preconditioner.milu = true, is computed on the host"
                                         : "ILUT's and ILUTP's patterns depend on the values");
        d->on_device = true;
    } else {
        d->on_device = on && strcmp(on, "auto") == 0 && cuda && has_gpu_kind;
    }
    return GS_OK;
}

/* Options from the config keys preconditioner.{fill_level, drop_tolerance, max_fill, pivot_tolerance,
 * milu, zero_pivot, shift, min_pivot, factor_on}. */
static gs_status read_options(const gs_pc *pc, ilu_data *d)
{
    if (!pc->cfg) return GS_ERROR(GS_ERR_ARG, "preconditioner %s: no configuration given", pc->type);
    GS_CALL(gs_factor_opts_from_config(pc->cfg, &d->opts));
    d->opts.row_names = pc->row_names;
    if (d->kind != KIND_ILUTP) d->opts.perm_tol = 0.0;
    if (d->kind != KIND_ILUK) d->opts.fill_level = 0;
    if (d->opts.milu && d->kind == KIND_IC0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "preconditioner.milu = true: IC(0) has no modified (MIC) variant here; use ilu0 or iluk "
                        "with milu, or set preconditioner.milu = false");
    GS_CALL(read_factor_on(pc, d));
    return GS_OK;
}

static void release_solvers(ilu_data *d)
{
    gs_trisolve_destroy(&d->lower);
    gs_trisolve_destroy(&d->upper);
}

static gs_status ilu_setup_symbolic(gs_pc *pc, const gs_csr *A)
{
    ilu_data *d = pc->data;
    GS_CALL(read_options(pc, d));
    pc->n = A->nrows;
    /* A new pattern: factors and the solvers analysed on them are rebuilt in setup_numeric. */
    release_solvers(d);
    gs_vec_destroy(&d->work);
    gs_vec_destroy(&d->work2);
    gs_ivec_destroy(&d->colperm);
    gs_csr_free(&d->L);
    gs_csr_free(&d->U);
    d->have_pattern = false;
    d->device_pattern = false;
    if (d->kind == KIND_ILU0 || d->kind == KIND_ILUK) {
        if (d->on_device && d->opts.fill_level == 0) {
            /* ILU(0)'s pattern is A's split at the diagonal: the GPU builds it in setup_numeric, which
             * checks A with the symbolic factorization's messages */
            d->device_pattern = true;
        } else {
            GS_CALL(gs_iluk_symbolic(A, d->opts.fill_level, &d->L, &d->U));
        }
        d->have_pattern = true;
    }
    /* ILUT, ILUTP: the pattern depends on the values; IC(0): the lower triangle of A, built with the
     * values. */
    return GS_OK;
}

/* GS_ERR_ARG naming the first (i, j) in row order with |a_ij - a_ji| > tol * max(|a_ij|, |a_ji|) (a missing
 * entry being 0) when the check found A not numerically symmetric; explicit zeros facing missing entries
 * pass. */
static gs_status asymmetry_error(const gs_pc *pc, bool numerical, const gs_csr_asymmetry *first)
{
    if (numerical || !first->found) return GS_OK; /* only explicit zeros differ between the triangles */
    const gs_int *nm = pc->row_names; /* A is square: its columns are named as its rows */
    const int i = (int)(nm ? nm[first->i] : first->i) + 1, j = (int)(nm ? nm[first->j] : first->j) + 1;
    return GS_ERROR(GS_ERR_ARG,
                    "preconditioner %s needs a symmetric matrix, but A(%d,%d) = %.17g while A(%d,%d) = "
                    "%.17g (1-based; relative tolerance %g); use ilu0 (with bicgstab or gmres) for a "
                    "nonsymmetric matrix",
                    pc->type, i, j, first->aij, j, i, first->aji, IC0_SYMMETRY_TOL);
}

/* The symmetry check (one parallel pass over A, core/csr.h), run on a host thread of its own while the
 * GPU factorizes: the factorization's host thread mostly waits for the device. */
typedef struct sym_job {
    const gs_csr *A;
    gs_status st; /* of gs_csr_find_asymmetry (a failure's message stays on the job's thread) */
    bool numerical;
    gs_csr_asymmetry first;
} sym_job;

static void *sym_run(void *arg)
{
    sym_job *J = arg;
    J->st = gs_csr_find_asymmetry(J->A, IC0_SYMMETRY_TOL, &J->numerical, &J->first);
    gs_error_clear();
    return NULL;
}

static gs_status check_symmetric(const gs_pc *pc, const gs_csr *A)
{
    bool numerical = false;
    gs_csr_asymmetry first;
    GS_CALL(gs_csr_find_asymmetry(A, IC0_SYMMETRY_TOL, &numerical, &first));
    return asymmetry_error(pc, numerical, &first);
}

/* IC(0) on the GPU with the symmetry check beside it; an asymmetric A is refused whatever the
 * factorization gave (the verdict of checking first), and then no factors are kept. Without a thread the
 * check runs first, as on the host. */
static gs_status ic0_device(gs_pc *pc, const gs_csr *A, gs_factor_dev *keep)
{
    ilu_data *d = pc->data;
    sym_job J = {A, GS_OK, false, {false, -1, -1, 0.0, 0.0}};
    pthread_t th;
    bool threaded = gs_threads_max() > 1 && pthread_create(&th, NULL, sym_run, &J) == 0; /* device.threads */
    if (!threaded) GS_CALL(check_symmetric(pc, A));
    /* A read from the solver's device copy (gs_pc_set_operator) where there is one */
    gs_status fst = gs_factor_numeric_dev(pc->be, GS_FACTOR_IC0, A, pc->op, &d->opts, &d->L, &d->U, &d->info,
                                          &d->ftimes, keep);
    if (threaded) {
        pthread_join(th, NULL);
        if (J.st != GS_OK || (!J.numerical && J.first.found)) {
            gs_factor_dev_free(keep);
            gs_error_clear(); /* the check's verdict replaces whatever the factorization said */
            if (J.st != GS_OK)
                return GS_ERROR(J.st, "preconditioner %s: the symmetry check of A failed (%s)", pc->type,
                                J.st == GS_ERR_MEM ? "out of memory" : "internal error");
            return asymmetry_error(pc, J.numerical, &J.first);
        }
    }
    return fst;
}

/* ILU(0)/ILU(k) on the GPU (factor_on) or the host. zero_pivot = grow: when the GPU's attempt on A fails
 * (a pivot below the bound, a non-finite value), the whole grow sequence runs on the host -- A's attempt
 * again, then the shifted ones -- so shift_used and refactorizations are the host path's. */
static gs_status factor_ilu(gs_pc *pc, const gs_csr *A, gs_factor_dev *keep)
{
    ilu_data *d = pc->data;
    gs_status st;
    if (d->device_pattern) {
        /* pattern and values from A on the GPU (the same pattern for the same A: the solvers are analysed
         * again on it) */
        gs_csr_free(&d->L);
        gs_csr_free(&d->U);
        st = gs_factor_numeric_dev(pc->be, GS_FACTOR_ILU0_A, A, pc->op, &d->opts, &d->L, &d->U, &d->info,
                                   &d->ftimes, keep);
    } else if (d->on_device) {
        st = gs_factor_numeric_dev(pc->be, GS_FACTOR_ILU, A, NULL, &d->opts, &d->L, &d->U, &d->info, &d->ftimes,
                                   keep);
    } else {
        GS_CALL(gs_ilu_numeric(A, &d->opts, &d->L, &d->U, &d->info));
        return GS_OK;
    }
    if (st == GS_ERR_NUMERIC && d->opts.zero_pivot == GS_ZERO_PIVOT_GROW) {
        gs_error_clear();
        d->host_retry = true;
        if (d->device_pattern) GS_CALL(gs_iluk_symbolic(A, 0, &d->L, &d->U));
        st = gs_ilu_numeric(A, &d->opts, &d->L, &d->U, &d->info);
    }
    GS_CALL(st);
    return GS_OK;
}

/* ILUTP on the host; Q goes to the backend as colperm. */
static gs_status factor_ilutp(gs_pc *pc, const gs_csr *A)
{
    ilu_data *d = pc->data;
    gs_status st = GS_OK;
    gs_int *cp = NULL;
    const gs_int n = A->nrows;
    gs_ivec_destroy(&d->colperm);
    GS_TRY(GS_MALLOC(cp, n > 0 ? (size_t)n : 1));
    GS_TRY(gs_ilutp(A, &d->opts, &d->L, &d->U, cp, &d->info));
    if (n > 0) GS_TRY(gs_ivec_create(pc->be, n, cp, &d->colperm));
cleanup:
    gs_free(&cp);
    return st;
}

static gs_status ilu_setup_numeric(gs_pc *pc, const gs_csr *A)
{
    ilu_data *d = pc->data;
    gs_status st = GS_OK;
    const gs_int n = A->nrows;
    bool unit_lower = d->kind != KIND_IC0;
    /* A GPU factorization leaves its factors on the device and the triangular solvers are analysed there
     * (no download and re-upload); the host keeps the patterns (ILU(k) on a host pattern) or only the
     * sizes (IC(0), ILU(0) with its pattern built on the device). */
    gs_factor_dev keep;
    memset(&keep, 0, sizeof keep);
    gs_factor_dev *keep_ptr = n > 0 ? &keep : NULL;

    d->host_retry = false;
    memset(&d->ftimes, 0, sizeof d->ftimes);
    switch (d->kind) {
    case KIND_ILU0:
    case KIND_ILUK:
        if (!d->have_pattern)
            GS_FAIL(GS_ERR_ARG, "preconditioner %s: numeric setup before the symbolic one", pc->type);
        GS_TRY(factor_ilu(pc, A, keep_ptr));
        break;
    case KIND_ILUT:
        /* A new pattern each time: solvers are analysed afresh. */
        release_solvers(d);
        gs_csr_free(&d->L);
        gs_csr_free(&d->U);
        GS_TRY(gs_ilut(A, &d->opts, &d->L, &d->U, &d->info));
        break;
    case KIND_ILUTP:
        release_solvers(d);
        gs_csr_free(&d->L);
        gs_csr_free(&d->U);
        GS_TRY(factor_ilutp(pc, A));
        break;
    case KIND_IC0:
        gs_csr_free(&d->L);
        gs_csr_free(&d->U);
        if (d->on_device) {
            gs_status fst = ic0_device(pc, A, keep_ptr);
            if (fst == GS_ERR_NUMERIC && d->opts.zero_pivot == GS_ZERO_PIVOT_GROW) {
                /* the whole grow sequence on the host (A's symmetry was checked beside the GPU's attempt) */
                gs_error_clear();
                d->host_retry = true;
                fst = gs_ic0(A, &d->opts, &d->L, &d->U, &d->info);
            }
            GS_TRY(fst);
        } else {
            GS_TRY(check_symmetric(pc, A));
            GS_TRY(gs_ic0(A, &d->opts, &d->L, &d->U, &d->info));
        }
        break;
    }
    d->nnz_A = A->nnz;

    const bool single = gs_pc_single_precision(pc->cfg);
    if (!d->lower) GS_TRY(gs_trisolve_create_from_config(pc->cfg, pc->be, GS_LOWER, unit_lower, single, &d->lower));
    if (!d->upper) GS_TRY(gs_trisolve_create_from_config(pc->cfg, pc->be, GS_UPPER, false, single, &d->upper));
    if (keep.arena[0]) {
        GS_TRY(gs_trisolve_analyse_dev(d->lower, &keep.L));
        GS_TRY(gs_trisolve_analyse_dev(d->upper, &keep.U));
    } else {
        GS_TRY(gs_trisolve_analyse(d->lower, &d->L));
        GS_TRY(gs_trisolve_analyse(d->upper, &d->U));
    }
    if (!d->work) GS_TRY(gs_vec_create(pc->be, n, &d->work));
    if (d->kind == KIND_ILUTP && !d->work2) GS_TRY(gs_vec_create(pc->be, n, &d->work2));
    pc->variable = d->lower->variable || d->upper->variable;
cleanup:
    gs_factor_dev_free(&keep);
    return st;
}

/* z = U^{-1} (L^{-1} r); ILUTP: z = Q U^{-1} (L^{-1} r), i.e. z[colperm[k]] = (U^{-1} L^{-1} r)_k (a
 * scatter; skipped when no column was exchanged, Q = I). */
static gs_status ilu_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    ilu_data *d = pc->data;
    GS_CALL(gs_trisolve_solve(d->lower, r, d->work));
    if (d->kind == KIND_ILUTP && d->info.columns_exchanged > 0) {
        GS_CALL(gs_trisolve_solve(d->upper, d->work, d->work2));
        GS_CALL(gs_vec_scatter(d->work2, d->colperm, z));
        return GS_OK;
    }
    GS_CALL(gs_trisolve_solve(d->upper, d->work, z));
    return GS_OK;
}

static void ilu_destroy(gs_pc *pc)
{
    ilu_data *d = pc->data;
    if (d) {
        release_solvers(d);
        gs_vec_destroy(&d->work);
        gs_vec_destroy(&d->work2);
        gs_ivec_destroy(&d->colperm);
        gs_csr_free(&d->L);
        gs_csr_free(&d->U);
    }
    gs_free(&pc->data);
}

/* Report keys:
 *   preconditioner.factorization   "ILU(0)", "ILU(k)", "ILUT", "ILUTP" or "IC(0)"
 *   preconditioner.fill_ratio      (nnz_L + nnz_U) / nnz(A): stored factor entries per entry of A
 *                                  (ILU: the unit diagonal of L is not stored and not counted;
 *                                  IC(0): L and U = L^T both count their diagonal)
 *   preconditioner.nnz_L, nnz_U    stored entries of each factor
 *   preconditioner.pivots_shifted  pivots replaced under zero_pivot = "shift"
 *   preconditioner.shifted_rows    the first (up to 16) such rows, 1-based, comma separated
 *   preconditioner.shift_used      zero_pivot = "grow": alpha of the accepted factorization of
 *                                  A + alpha diag(||a_i||_inf) (0 when A itself factored)
 *   preconditioner.refactorizations  zero_pivot = "grow": factorizations after the first
 *   preconditioner.milu            whether the dropped part of each row went to its pivot (MILU)
 *   preconditioner.pivot_tolerance, columns_exchanged   (ILUTP) the tolerance and the column exchanges
 *   preconditioner.factor_on       "device" (the accepted numeric factorization ran on the GPU) or "host"
 *                                  (also when the GPU's first attempt under zero_pivot = "grow" failed and
 *                                  the host refactored)
 *   preconditioner.time_factor_upload, time_factor_kernel, time_factor_download   (device only) seconds
 *                                  of the GPU factorization: A (and host patterns) up, the device
 *                                  work, the factors back
 *   preconditioner.factor_levels   (device only) levels of L's dependency DAG the GPU walked
 * and the triangular solvers' keys under trisolve.lower / trisolve.upper. */
static void ilu_view(const gs_pc *pc, gs_report *rep)
{
    const ilu_data *d = pc->data;
    if (!d) return;
    gs_report_string(rep, "preconditioner.factorization", kind_name(d->kind));
    if (pc->state < GS_PC_READY) return;
    long long nl = d->L.nnz, nu = d->U.nnz;
    gs_report_double(rep, "preconditioner.fill_ratio", d->nnz_A > 0 ? (double)(nl + nu) / (double)d->nnz_A : 0.0);
    gs_report_int(rep, "preconditioner.nnz_L", nl);
    gs_report_int(rep, "preconditioner.nnz_U", nu);
    gs_report_int(rep, "preconditioner.pivots_shifted", d->info.nshifted);
    char rows[16 * 12 + 1] = "";
    size_t len = 0;
    gs_int shown = d->info.nshifted < 16 ? d->info.nshifted : 16;
    for (gs_int t = 0; t < shown; t++) {
        int w = snprintf(rows + len, sizeof rows - len, "%s%d", t ? "," : "", (int)d->info.shifted_rows[t] + 1);
        if (w < 0 || (size_t)w >= sizeof rows - len) break;
        len += (size_t)w;
    }
    gs_report_string(rep, "preconditioner.shifted_rows", rows);
    gs_report_double(rep, "preconditioner.shift_used", d->info.shift_used);
    gs_report_int(rep, "preconditioner.refactorizations", d->info.refactorizations);
    gs_report_bool(rep, "preconditioner.milu", d->opts.milu);
    if (d->kind == KIND_ILUTP) {
        gs_report_double(rep, "preconditioner.pivot_tolerance", d->opts.perm_tol);
        gs_report_int(rep, "preconditioner.columns_exchanged", d->info.columns_exchanged);
    }
    gs_report_string(rep, "preconditioner.factor_on", d->on_device && !d->host_retry ? "device" : "host");
    if (d->on_device) {
        gs_report_double(rep, "preconditioner.time_factor_upload", d->ftimes.upload);
        gs_report_double(rep, "preconditioner.time_factor_kernel", d->ftimes.kernel);
        gs_report_double(rep, "preconditioner.time_factor_download", d->ftimes.download);
        gs_report_int(rep, "preconditioner.factor_levels", d->ftimes.levels);
    }
    if (d->lower) gs_trisolve_view(d->lower, rep, "trisolve.lower");
    if (d->upper) gs_trisolve_view(d->upper, rep, "trisolve.upper");
}

static const gs_pc_ops ilu_ops = {
    .setup_symbolic = ilu_setup_symbolic,
    .setup_numeric = ilu_setup_numeric,
    .apply = ilu_apply,
    .destroy = ilu_destroy,
    .view = ilu_view,
};

static gs_status create(gs_pc *pc, ilu_kind kind)
{
    ilu_data *d = NULL;
    GS_CALL(gs_calloc(&d, 1, sizeof *d));
    d->kind = kind;
    d->info.first_shifted = -1;
    pc->data = d;
    pc->ops = &ilu_ops;
    pc->variable = false;
    return GS_OK;
}

gs_status gs_pc_create_ilu0(gs_pc *pc) { return create(pc, KIND_ILU0); }
gs_status gs_pc_create_iluk(gs_pc *pc) { return create(pc, KIND_ILUK); }
gs_status gs_pc_create_ilut(gs_pc *pc) { return create(pc, KIND_ILUT); }
gs_status gs_pc_create_ilutp(gs_pc *pc) { return create(pc, KIND_ILUTP); }
gs_status gs_pc_create_ic0(gs_pc *pc) { return create(pc, KIND_IC0); }
