/* The vendor-library baseline: ILU(0)-preconditioned BiCGStab written only with cuSPARSE and cuBLAS,
 * the way NVIDIA's documentation teaches it (csrilu02 for the factor, SpSV for L and U, SpMV for A,
 * cuBLAS for the vector operations), so that gpusolve can be compared with it on the same system.
 *
 * The system: A from a Matrix Market file or a generated model problem, b = A * ones, x0 = 0.
 * Setup (timed with CUDA events): ILU(0) buffer size, analysis, zero-pivot checks and factorization
 * in place on a copy of A's values (L unit lower and U upper share that array), the SpSV buffer sizes
 * and analyses of L and U (once), the SpMV buffer. Solve (timed the same way): right-preconditioned
 * BiCGStab, M = LU, x = M^{-1} u where u solves A M^{-1} u = b, so the residual the method monitors
 * is the true one, r = b - A x; it stops when ||r|| / ||b|| < rtol (default 1e-7) or after max_it
 * iterations (default 10000). Then the true residual is recomputed as b - A x.
 *
 * Output: one JSON line {"matrix", "n", "nnz", "setup_s", "solve_s", "iterations",
 * "true_relative_residual", "converged", "reason", "device"} on stdout.
 *
 * usage: baseline_cusparse MATRIX [--rtol R] [--max-iterations N] [--device ID]
 *   MATRIX: a .mtx / .mtx.gz file, or gen:NAME:NX[xNYxNZ][:PECLET] (poisson2d poisson3d laplace27
 *   convdiff3d), as gpusolve takes it.
 * Exit status (as gpusolve): 0 converged, 1 not converged, 2 bad usage, 3 bad input file,
 * 4 numerical failure (zero pivot, breakdown), 5 device failure, 77 no usable GPU. */

/* csrilu02 is the factorization NVIDIA's documentation teaches for this pipeline; cuSPARSE 12+ marks
 * it deprecated (it is still shipped), so its deprecation warnings are silenced here on purpose. */
#define DISABLE_CUSPARSE_DEPRECATED

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csr.h"
#include "core/cuda_check.h"
#include "core/generate.h"
#include "core/mem.h"
#include "core/status.h"
#include "io/mmio.h"

#include "bench_util.h"

enum { EXIT_CONVERGED = 0, EXIT_NOT_CONVERGED = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_NUMERICAL = 4,
       EXIT_DEVICE = 5, EXIT_NO_GPU = 77 };

/* ---- options ---- */

typedef struct {
    const char *matrix;
    double rtol;
    long max_it;
    int device;
} baseline_opts;

static void usage(FILE *f)
{
    fputs("usage: baseline_cusparse MATRIX [--rtol R] [--max-iterations N] [--device ID]\n"
          "  MATRIX: FILE.mtx[.gz] or gen:NAME:NX[xNYxNZ][:PECLET] (poisson2d poisson3d laplace27 convdiff3d)\n"
          "  ILU(0) (cusparseDcsrilu02) + right-preconditioned BiCGStab with cusparseSpSV/SpMV and cuBLAS;\n"
          "  b = A*ones, x0 = 0, stop at ||b - A x|| / ||b|| < R (default 1e-7) or N iterations (10000).\n"
          "  Prints one JSON line.\n",
          f);
}

static int parse_args(int argc, char **argv, baseline_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = 1e-7;
    o->max_it = 10000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc) {
                fprintf(stderr, "baseline_cusparse: %s needs a value\n", a);
                return -1;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--rtol") == 0) {
                o->rtol = strtod(v, &end);
                if (!v[0] || *end || !(o->rtol > 0.0 && o->rtol < 1.0)) {
                    fprintf(stderr, "baseline_cusparse: --rtol expects a number in (0, 1), got \"%s\"\n", v);
                    return -1;
                }
            } else if (strcmp(a, "--max-iterations") == 0) {
                if (bench_parse_int("baseline_cusparse", v, a, 0, 1000000000L, &o->max_it)) return -1;
            } else if (strcmp(a, "--device") == 0) {
                long d = 0;
                if (bench_parse_int("baseline_cusparse", v, a, 0, 1024, &d)) return -1;
                o->device = (int)d;
            } else {
                fprintf(stderr, "baseline_cusparse: unknown option %s\n", a);
                return -1;
            }
        } else if (!o->matrix) {
            o->matrix = a;
        } else {
            fprintf(stderr, "baseline_cusparse: a second matrix \"%s\" (already have \"%s\")\n", a, o->matrix);
            return -1;
        }
    }
    if (!o->matrix) {
        fprintf(stderr, "baseline_cusparse: no matrix given\n");
        return -1;
    }
    return 0;
}

/* gen:NAME:NX[xNYxNZ][:PECLET] -> generated matrix; anything else is read as Matrix Market. */
static gs_status load_matrix(const char *spec, gs_csr *A)
{
    char name[64];
    long dims[3] = {0, 0, 0};
    double peclet = 1.0;
    const char *p = NULL, *colon = NULL;
    char *end = NULL;
    size_t len = 0;
    int nd = 0;
    if (strncmp(spec, "gen:", 4) != 0) return gs_mm_read_matrix(spec, A, NULL);
    p = spec + 4;
    colon = strchr(p, ':');
    len = colon ? (size_t)(colon - p) : 0;
    if (!colon || len == 0 || len >= sizeof name)
        return GS_ERROR(GS_ERR_ARG, "matrix \"%s\": expected gen:NAME:NX[xNYxNZ][:PECLET], e.g. gen:poisson3d:100",
                        spec);
    memcpy(name, p, len);
    name[len] = '\0';
    p = colon + 1;
    while (nd < 3) {
        dims[nd] = strtol(p, &end, 10);
        if (end == p || dims[nd] < 1 || dims[nd] > GS_INT_MAX)
            return GS_ERROR(GS_ERR_ARG, "matrix \"%s\": sizes must be positive integers, e.g. gen:poisson3d:100 or "
                            "gen:laplace27:64x64x32", spec);
        nd++;
        p = end;
        if (*p != 'x') break;
        p++;
    }
    if (*p == ':') {
        peclet = strtod(p + 1, &end);
        if (end == p + 1 || *end)
            return GS_ERROR(GS_ERR_ARG, "matrix \"%s\": the Peclet number after the sizes is not a number", spec);
    } else if (*p) {
        return GS_ERROR(GS_ERR_ARG, "matrix \"%s\": unexpected \"%s\" after the sizes", spec, p);
    }
    return gs_gen_by_name(name, (gs_int)dims[0], (gs_int)(nd > 1 ? dims[1] : 0), (gs_int)(nd > 2 ? dims[2] : 0),
                          peclet, A);
}

/* ---- the solve ---- */

typedef struct {
    double setup_s, solve_s, true_rel;
    long iterations;
    bool converged;
    char reason[160];
} baseline_result;

/* Device vectors of BiCGStab, each with a cuSPARSE descriptor. */
enum { V_B, V_X, V_R, V_RHAT, V_P, V_PHAT, V_V, V_S, V_SHAT, V_T, V_TMP, NVEC };

static gs_status run(const baseline_opts *o, const gs_csr *A, baseline_result *res)
{
    gs_status st = GS_OK;
    const gs_int n = A->nrows, nnz = A->nnz;
    const double one = 1.0, zero = 0.0, minus_one = -1.0;
    cudaStream_t stream = NULL;
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    cusparseHandle_t sp = NULL;
    cublasHandle_t bl = NULL;
    cusparseMatDescr_t descr_ilu = NULL;
    csrilu02Info_t ilu = NULL;
    cusparseSpMatDescr_t matA = NULL, matL = NULL, matU = NULL;
    cusparseSpSVDescr_t spsvL = NULL, spsvU = NULL;
    cusparseDnVecDescr_t dv[NVEC];
    gs_int *d_rowptr = NULL, *d_colind = NULL;
    double *d_val = NULL, *d_lu = NULL, *vec[NVEC];
    void *buf_ilu = NULL, *buf_L = NULL, *buf_U = NULL, *buf_mv = NULL;
    int ilu_bytes = 0, pivot = -1;
    size_t L_bytes = 0, U_bytes = 0, mv_bytes = 0;
    double *ones = NULL, *bh = NULL;
    float ms = 0.0f;
    double bnorm = 0.0, rnorm = 0.0, rho = 1.0, rho_old = 1.0, alpha = 1.0, omega = 1.0, beta = 0.0, tmp = 0.0,
           tt = 0.0, ts = 0.0;
    cusparseStatus_t zp;
    cusparseFillMode_t lower = CUSPARSE_FILL_MODE_LOWER, upper = CUSPARSE_FILL_MODE_UPPER; /* the API takes void * */
    cusparseDiagType_t unit = CUSPARSE_DIAG_TYPE_UNIT, non_unit = CUSPARSE_DIAG_TYPE_NON_UNIT;

    memset(dv, 0, sizeof dv);
    memset(vec, 0, sizeof vec);
    memset(res, 0, sizeof *res);
    snprintf(res->reason, sizeof res->reason, "not started");

    /* ---- upload A and b = A * ones (host product: the same b for every method) ---- */
    GS_TRY(GS_MALLOC(ones, n));
    GS_TRY(GS_MALLOC(bh, n));
    for (gs_int i = 0; i < n; i++) ones[i] = 1.0;
    gs_csr_spmv(1.0, A, ones, 0.0, bh);
    GS_TRY(GS_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)));
    for (int k = 0; k < 4; k++) GS_TRY(GS_CUDA(cudaEventCreate(&ev[k])));
    GS_TRY(GS_CUSPARSE(cusparseCreate(&sp)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(sp, stream)));
    GS_TRY(GS_CUBLAS(cublasCreate(&bl)));
    GS_TRY(GS_CUBLAS(cublasSetStream(bl, stream)));
    GS_TRY(GS_CUBLAS(cublasSetPointerMode(bl, CUBLAS_POINTER_MODE_HOST)));
    GS_TRY(GS_CUDA(cudaMalloc((void **)&d_rowptr, ((size_t)n + 1) * sizeof(gs_int))));
    GS_TRY(GS_CUDA(cudaMalloc((void **)&d_colind, (size_t)nnz * sizeof(gs_int))));
    GS_TRY(GS_CUDA(cudaMalloc((void **)&d_val, (size_t)nnz * sizeof(double))));
    GS_TRY(GS_CUDA(cudaMalloc((void **)&d_lu, (size_t)nnz * sizeof(double))));
    GS_TRY(GS_CUDA(cudaMemcpy(d_rowptr, A->rowptr, ((size_t)n + 1) * sizeof(gs_int), cudaMemcpyHostToDevice)));
    GS_TRY(GS_CUDA(cudaMemcpy(d_colind, A->colind, (size_t)nnz * sizeof(gs_int), cudaMemcpyHostToDevice)));
    GS_TRY(GS_CUDA(cudaMemcpy(d_val, A->val, (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice)));
    GS_TRY(GS_CUDA(cudaMemcpy(d_lu, A->val, (size_t)nnz * sizeof(double), cudaMemcpyHostToDevice)));
    for (int k = 0; k < NVEC; k++) {
        GS_TRY(GS_CUDA(cudaMalloc((void **)&vec[k], (size_t)n * sizeof(double))));
        GS_TRY(GS_CUDA(cudaMemset(vec[k], 0, (size_t)n * sizeof(double))));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&dv[k], n, vec[k], CUDA_R_64F)));
    }
    GS_TRY(GS_CUDA(cudaMemcpy(vec[V_B], bh, (size_t)n * sizeof(double), cudaMemcpyHostToDevice)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&matA, n, n, nnz, d_rowptr, d_colind, d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&matL, n, n, nnz, d_rowptr, d_colind, d_lu, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(matL, CUSPARSE_SPMAT_FILL_MODE, &lower, sizeof lower)));
    GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(matL, CUSPARSE_SPMAT_DIAG_TYPE, &unit, sizeof unit)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&matU, n, n, nnz, d_rowptr, d_colind, d_lu, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F)));
    GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(matU, CUSPARSE_SPMAT_FILL_MODE, &upper, sizeof upper)));
    GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(matU, CUSPARSE_SPMAT_DIAG_TYPE, &non_unit, sizeof non_unit)));
    GS_TRY(GS_CUSPARSE(cusparseCreateMatDescr(&descr_ilu)));
    GS_TRY(GS_CUSPARSE(cusparseSetMatType(descr_ilu, CUSPARSE_MATRIX_TYPE_GENERAL)));
    GS_TRY(GS_CUSPARSE(cusparseSetMatIndexBase(descr_ilu, CUSPARSE_INDEX_BASE_ZERO)));
    GS_TRY(GS_CUSPARSE(cusparseCreateCsrilu02Info(&ilu)));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_createDescr(&spsvL)));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_createDescr(&spsvU)));
    GS_TRY(GS_CUDA(cudaDeviceSynchronize()));

    /* ---- setup: ILU(0) in place on d_lu, then the SpSV analyses of L and U, the SpMV buffer ---- */
    GS_TRY(GS_CUDA(cudaEventRecord(ev[0], stream)));
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_bufferSize(sp, n, nnz, descr_ilu, d_lu, d_rowptr, d_colind, ilu, &ilu_bytes)));
    GS_TRY(GS_CUDA(cudaMalloc(&buf_ilu, ilu_bytes > 0 ? (size_t)ilu_bytes : 1)));
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_analysis(sp, n, nnz, descr_ilu, d_lu, d_rowptr, d_colind, ilu,
                                         CUSPARSE_SOLVE_POLICY_USE_LEVEL, buf_ilu)));
    /* structural zero: a row without a stored diagonal entry */
    zp = cusparseXcsrilu02_zeroPivot(sp, ilu, &pivot);
    if (zp == CUSPARSE_STATUS_ZERO_PIVOT) {
        snprintf(res->reason, sizeof res->reason, "structural zero pivot: row %d has no diagonal entry", pivot);
        GS_FAIL(GS_ERR_NUMERIC, "ILU(0) analysis: %s", res->reason);
    }
    GS_TRY(GS_CUSPARSE(zp));
    GS_TRY(GS_CUSPARSE(cusparseDcsrilu02(sp, n, nnz, descr_ilu, d_lu, d_rowptr, d_colind, ilu, CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                buf_ilu)));
    /* numerical zero: U(k,k) == 0 (the factor would divide by it in the solve) */
    zp = cusparseXcsrilu02_zeroPivot(sp, ilu, &pivot);
    if (zp == CUSPARSE_STATUS_ZERO_PIVOT) {
        snprintf(res->reason, sizeof res->reason, "zero pivot: U(%d,%d) = 0 in the ILU(0) factorization", pivot,
                 pivot);
        GS_FAIL(GS_ERR_NUMERIC, "ILU(0) factorization: %s", res->reason);
    }
    GS_TRY(GS_CUSPARSE(zp));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matL, dv[V_P], dv[V_TMP],
                                      CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, spsvL, &L_bytes)));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matU, dv[V_TMP], dv[V_PHAT],
                                      CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, spsvU, &U_bytes)));
    GS_TRY(GS_CUDA(cudaMalloc(&buf_L, L_bytes > 0 ? L_bytes : 1)));
    GS_TRY(GS_CUDA(cudaMalloc(&buf_U, U_bytes > 0 ? U_bytes : 1)));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matL, dv[V_P], dv[V_TMP], CUDA_R_64F,
                                    CUSPARSE_SPSV_ALG_DEFAULT, spsvL, buf_L)));
    GS_TRY(GS_CUSPARSE(cusparseSpSV_analysis(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matU, dv[V_TMP], dv[V_PHAT],
                                    CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, spsvU, buf_U)));
    GS_TRY(GS_CUSPARSE(cusparseSpMV_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matA, dv[V_PHAT], &zero, dv[V_V],
                                      CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &mv_bytes)));
    GS_TRY(GS_CUDA(cudaMalloc(&buf_mv, mv_bytes > 0 ? mv_bytes : 1)));
    GS_TRY(GS_CUDA(cudaEventRecord(ev[1], stream)));
    GS_TRY(GS_CUDA(cudaEventSynchronize(ev[1])));
    GS_TRY(GS_CUDA(cudaEventElapsedTime(&ms, ev[0], ev[1])));
    res->setup_s = 1e-3 * (double)ms;

/* z = M^{-1} y = U^{-1} (L^{-1} y), through V_TMP */
#define PRECONDITION(y, z)                                                                                       \
    do {                                                                                                         \
        GS_TRY(GS_CUSPARSE(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matL, dv[y], dv[V_TMP], CUDA_R_64F, \
                                     CUSPARSE_SPSV_ALG_DEFAULT, spsvL)));                                        \
        GS_TRY(GS_CUSPARSE(cusparseSpSV_solve(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matU, dv[V_TMP], dv[z], CUDA_R_64F, \
                                     CUSPARSE_SPSV_ALG_DEFAULT, spsvU)));                                        \
    } while (0)
/* w = A y */
#define MATVEC(y, w)                                                                                             \
    GS_TRY(GS_CUSPARSE(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matA, dv[y], &zero, dv[w], CUDA_R_64F,      \
                           CUSPARSE_SPMV_ALG_DEFAULT, buf_mv)))

    /* ---- solve: right-preconditioned BiCGStab on A M^{-1} u = b, x = M^{-1} u, x0 = 0 ---- */
    GS_TRY(GS_CUDA(cudaEventRecord(ev[2], stream)));
    GS_TRY(GS_CUBLAS(cublasDnrm2(bl, n, vec[V_B], 1, &bnorm)));
    /* r = b - A x0 = b (x0 = 0), rhat = r */
    GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_B], 1, vec[V_R], 1)));
    GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_B], 1, vec[V_RHAT], 1)));
    rnorm = bnorm;
    snprintf(res->reason, sizeof res->reason, "max_iterations");
    if (bnorm == 0.0) { /* b = 0: x = 0 is exact */
        res->converged = true;
        snprintf(res->reason, sizeof res->reason, "converged (b = 0)");
    }
    for (long it = 1; !res->converged && it <= o->max_it; it++) {
        res->iterations = it;
        /* rho = rhat' r */
        GS_TRY(GS_CUBLAS(cublasDdot(bl, n, vec[V_RHAT], 1, vec[V_R], 1, &rho)));
        if (rho == 0.0 || !isfinite(rho)) {
            snprintf(res->reason, sizeof res->reason, "breakdown: rhat'r = %g at iteration %ld", rho, it);
            break;
        }
        if (it == 1) {
            GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_R], 1, vec[V_P], 1))); /* p = r */
        } else {
            /* p = r + beta (p - omega v), beta = (rho / rho_old) (alpha / omega) */
            beta = (rho / rho_old) * (alpha / omega);
            tmp = -omega;
            GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &tmp, vec[V_V], 1, vec[V_P], 1)));
            GS_TRY(GS_CUBLAS(cublasDscal(bl, n, &beta, vec[V_P], 1)));
            GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &one, vec[V_R], 1, vec[V_P], 1)));
        }
        PRECONDITION(V_P, V_PHAT); /* phat = M^{-1} p */
        MATVEC(V_PHAT, V_V);       /* v = A phat */
        GS_TRY(GS_CUBLAS(cublasDdot(bl, n, vec[V_RHAT], 1, vec[V_V], 1, &tmp)));
        if (tmp == 0.0 || !isfinite(tmp)) {
            snprintf(res->reason, sizeof res->reason, "breakdown: rhat'v = %g at iteration %ld", tmp, it);
            break;
        }
        alpha = rho / tmp;
        /* s = r - alpha v; x = x + alpha phat */
        GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_R], 1, vec[V_S], 1)));
        tmp = -alpha;
        GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &tmp, vec[V_V], 1, vec[V_S], 1)));
        GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &alpha, vec[V_PHAT], 1, vec[V_X], 1)));
        GS_TRY(GS_CUBLAS(cublasDnrm2(bl, n, vec[V_S], 1, &rnorm)));
        if (rnorm < o->rtol * bnorm) { /* converged half way: r = s */
            res->converged = true;
            break;
        }
        PRECONDITION(V_S, V_SHAT); /* shat = M^{-1} s */
        MATVEC(V_SHAT, V_T);       /* t = A shat */
        /* omega = t's / t't */
        GS_TRY(GS_CUBLAS(cublasDdot(bl, n, vec[V_T], 1, vec[V_S], 1, &ts)));
        GS_TRY(GS_CUBLAS(cublasDdot(bl, n, vec[V_T], 1, vec[V_T], 1, &tt)));
        if (tt == 0.0 || !isfinite(tt) || !isfinite(ts)) {
            snprintf(res->reason, sizeof res->reason, "breakdown: t't = %g at iteration %ld", tt, it);
            break;
        }
        omega = ts / tt;
        /* x = x + omega shat; r = s - omega t */
        GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &omega, vec[V_SHAT], 1, vec[V_X], 1)));
        GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_S], 1, vec[V_R], 1)));
        tmp = -omega;
        GS_TRY(GS_CUBLAS(cublasDaxpy(bl, n, &tmp, vec[V_T], 1, vec[V_R], 1)));
        GS_TRY(GS_CUBLAS(cublasDnrm2(bl, n, vec[V_R], 1, &rnorm)));
        if (!isfinite(rnorm)) {
            snprintf(res->reason, sizeof res->reason, "diverged: ||r|| = %g at iteration %ld", rnorm, it);
            break;
        }
        if (rnorm < o->rtol * bnorm) {
            res->converged = true;
            break;
        }
        if (omega == 0.0) {
            snprintf(res->reason, sizeof res->reason, "breakdown: omega = 0 at iteration %ld", it);
            break;
        }
        rho_old = rho;
    }
    if (res->converged && strncmp(res->reason, "converged", 9) != 0)
        snprintf(res->reason, sizeof res->reason, "converged");
    GS_TRY(GS_CUDA(cudaEventRecord(ev[3], stream)));
    GS_TRY(GS_CUDA(cudaEventSynchronize(ev[3])));
    GS_TRY(GS_CUDA(cudaEventElapsedTime(&ms, ev[2], ev[3])));
    res->solve_s = 1e-3 * (double)ms;
#undef PRECONDITION
#undef MATVEC

    /* ---- the true residual, recomputed: r = b - A x ---- */
    GS_TRY(GS_CUBLAS(cublasDcopy(bl, n, vec[V_B], 1, vec[V_R], 1)));
    GS_TRY(GS_CUSPARSE(cusparseSpMV(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &minus_one, matA, dv[V_X], &one, dv[V_R], CUDA_R_64F,
                           CUSPARSE_SPMV_ALG_DEFAULT, buf_mv)));
    GS_TRY(GS_CUBLAS(cublasDnrm2(bl, n, vec[V_R], 1, &rnorm)));
    res->true_rel = bnorm > 0.0 ? rnorm / bnorm : rnorm;

cleanup:
    if (stream) (void)cudaStreamSynchronize(stream);
    if (spsvL) cusparseSpSV_destroyDescr(spsvL);
    if (spsvU) cusparseSpSV_destroyDescr(spsvU);
    if (ilu) cusparseDestroyCsrilu02Info(ilu);
    if (descr_ilu) cusparseDestroyMatDescr(descr_ilu);
    if (matA) cusparseDestroySpMat(matA);
    if (matL) cusparseDestroySpMat(matL);
    if (matU) cusparseDestroySpMat(matU);
    for (int k = 0; k < NVEC; k++) {
        if (dv[k]) cusparseDestroyDnVec(dv[k]);
        if (vec[k]) cudaFree(vec[k]);
    }
    if (buf_ilu) cudaFree(buf_ilu);
    if (buf_L) cudaFree(buf_L);
    if (buf_U) cudaFree(buf_U);
    if (buf_mv) cudaFree(buf_mv);
    if (d_rowptr) cudaFree(d_rowptr);
    if (d_colind) cudaFree(d_colind);
    if (d_val) cudaFree(d_val);
    if (d_lu) cudaFree(d_lu);
    if (sp) cusparseDestroy(sp);
    if (bl) cublasDestroy(bl);
    for (int k = 0; k < 4; k++)
        if (ev[k]) cudaEventDestroy(ev[k]);
    if (stream) cudaStreamDestroy(stream);
    gs_free(&ones);
    gs_free(&bh);
    return st;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void print_json(const char *matrix, const gs_csr *A, const baseline_result *r, const char *device)
{
    printf("{\"program\": \"baseline_cusparse\", \"matrix\": ");
    json_string(matrix);
    printf(", \"n\": %d, \"nnz\": %d, \"setup_s\": %.9g, \"solve_s\": %.9g, \"iterations\": %ld, "
           "\"true_relative_residual\": ",
           (int)A->nrows, (int)A->nnz, r->setup_s, r->solve_s, r->iterations);
    if (isfinite(r->true_rel)) printf("%.9g", r->true_rel);
    else printf("null");
    printf(", \"converged\": %s, \"reason\": ", r->converged ? "true" : "false");
    json_string(r->reason);
    printf(", \"device\": ");
    json_string(device);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    baseline_opts o;
    gs_csr A = {0};
    baseline_result r;
    struct cudaDeviceProp prop;
    int count = 0, code = EXIT_CONVERGED;
    gs_status st = GS_OK;
    cudaError_t e;

    memset(&r, 0, sizeof r);
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return EXIT_USAGE;
    }
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count < 1) {
        fprintf(stderr, "baseline_cusparse: skipped, no usable GPU (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no device");
        return EXIT_NO_GPU;
    }
    if (o.device >= count) {
        fprintf(stderr, "baseline_cusparse: device %d requested, but the devices visible are 0..%d\n", o.device,
                count - 1);
        return EXIT_USAGE;
    }
    if (cudaSetDevice(o.device) != cudaSuccess || cudaGetDeviceProperties(&prop, o.device) != cudaSuccess) {
        fprintf(stderr, "baseline_cusparse: cannot use CUDA device %d\n", o.device);
        return EXIT_DEVICE;
    }
    st = load_matrix(o.matrix, &A);
    if (st == GS_OK && A.nrows != A.ncols)
        st = GS_ERROR(GS_ERR_ARG, "matrix %s is %d x %d; a square matrix is needed", o.matrix, (int)A.nrows,
                      (int)A.ncols);
    if (st != GS_OK) {
        fprintf(stderr, "baseline_cusparse: ");
        gs_error_print(stderr);
        return st == GS_ERR_IO ? EXIT_INPUT : EXIT_USAGE;
    }
    fprintf(stderr, "baseline_cusparse: %s, n %d, nnz %d, on %s\n", o.matrix, (int)A.nrows, (int)A.nnz, prop.name);
    st = run(&o, &A, &r);
    if (st == GS_ERR_NUMERIC) { /* a zero pivot: a result, reported as such */
        r.converged = false;
        r.true_rel = NAN;
        fprintf(stderr, "baseline_cusparse: %s\n", r.reason);
        print_json(o.matrix, &A, &r, prop.name);
        code = EXIT_NUMERICAL;
    } else if (st != GS_OK) {
        fprintf(stderr, "baseline_cusparse: ");
        gs_error_print(stderr);
        code = EXIT_DEVICE;
    } else {
        print_json(o.matrix, &A, &r, prop.name);
        code = r.converged ? EXIT_CONVERGED : strncmp(r.reason, "breakdown", 9) == 0 ? EXIT_NUMERICAL
                                                                                     : EXIT_NOT_CONVERGED;
    }
    gs_csr_free(&A);
    return code;
}
