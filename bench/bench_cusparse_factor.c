/* cuSPARSE csrilu02 / csric02 timed for the benchmark drivers (bench_parilu, bench_factor): the vendor
 * factorization that our GPU factorizations are compared with, and its agreement with the host one. */
#include "bench_util.h"

#include <math.h>

/* csrilu02 / csric02 are deprecated in cuSPARSE but remain the vendor baseline for a fixed-pattern
 * incomplete factorization (the papers compare with them): the warnings are silenced here only. */
#define DISABLE_CUSPARSE_DEPRECATED
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/backend_cuda.h"
#include "core/cuda_check.h"
#include "core/mem.h"
#include "precond/factor.h"

/* max |out - ref| / max |ref| over A's pattern, ref the host factors (ic: L in the lower triangle;
 * else L\U, the unit diagonal of L not stored). */
static double factor_diff(const gs_csr *A, bool ic, const double *out, const gs_csr *L, const gs_csr *U)
{
    double num = 0.0, den = 0.0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int pl = L->rowptr[i], pu = U->rowptr[i];
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int j = A->colind[p];
            double ref;
            if (ic) {
                if (j > i) continue;
                ref = L->val[pl++];
            } else {
                ref = j < i ? L->val[pl++] : U->val[pu++];
            }
            num = fmax(num, fabs(out[p] - ref));
            den = fmax(den, fabs(ref));
        }
    }
    return den > 0.0 ? num / den : num;
}

gs_status bench_cusparse_factor(gs_backend *be, const gs_csr *A, bool ic, int warm, int reps, double *ta,
                                double *tf, const gs_csr *Lh, const gs_csr *Uh, double *err)
{
    gs_status st = GS_OK;
    cusparseHandle_t h = NULL;
    cusparseMatDescr_t descr = NULL;
    csric02Info_t icinfo = NULL;
    csrilu02Info_t iluinfo = NULL;
    gs_int *d_ptr = NULL, *d_ind = NULL;
    double *d_val = NULL, *out = NULL;
    void *buf = NULL;
    gs_timer tm = {0};
    gs_csr Lr = {0}, Ur = {0};
    const int m = A->nrows, nnz = A->nnz;
    const cusparseSolvePolicy_t pol = CUSPARSE_SOLVE_POLICY_USE_LEVEL;
    const size_t vbytes = (size_t)nnz * sizeof(double);

    GS_TRY(GS_CUSPARSE(cusparseCreate(&h)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(h, (cudaStream_t)gs_backend_cuda_stream(be))));
    GS_TRY(GS_CUSPARSE(cusparseCreateMatDescr(&descr)));
    GS_TRY(GS_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO)));
    GS_TRY(GS_CUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL)));
    GS_TRY(gs_backend_alloc(be, (void **)&d_ptr, ((size_t)m + 1) * sizeof(gs_int)));
    GS_TRY(gs_backend_alloc(be, (void **)&d_ind, (size_t)nnz * sizeof(gs_int)));
    GS_TRY(gs_backend_alloc(be, (void **)&d_val, vbytes));
    GS_TRY(gs_backend_upload(be, d_ptr, A->rowptr, ((size_t)m + 1) * sizeof(gs_int)));
    GS_TRY(gs_backend_upload(be, d_ind, A->colind, (size_t)nnz * sizeof(gs_int)));

    for (int r = -warm; r < reps; r++) {
        int bytes = 0, pos = -1;
        double t_a = 0.0, t_f = 0.0;
        /* a fresh info each time: the analysis is part of what is timed */
        if (ic) {
            GS_TRY(GS_CUSPARSE(cusparseCreateCsric02Info(&icinfo)));
            GS_TRY(GS_CUSPARSE(cusparseDcsric02_bufferSize(h, m, nnz, descr, d_val, d_ptr, d_ind, icinfo, &bytes)));
        } else {
            GS_TRY(GS_CUSPARSE(cusparseCreateCsrilu02Info(&iluinfo)));
            GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_bufferSize(h, m, nnz, descr, d_val, d_ptr, d_ind, iluinfo, &bytes)));
        }
        if (!buf) GS_TRY(gs_backend_alloc(be, &buf, (size_t)bytes)); /* same pattern: same size */
        GS_TRY(gs_backend_upload(be, d_val, A->val, vbytes));         /* factored in place: A again */
        GS_TRY(gs_backend_synchronize(be));
        GS_TRY(gs_timer_start(be, &tm));
        if (ic) GS_TRY(GS_CUSPARSE(cusparseDcsric02_analysis(h, m, nnz, descr, d_val, d_ptr, d_ind, icinfo, pol, buf)));
        else GS_TRY(GS_CUSPARSE(cusparseDcsrilu02_analysis(h, m, nnz, descr, d_val, d_ptr, d_ind, iluinfo, pol, buf)));
        GS_TRY(gs_timer_stop(&tm, &t_a));
        GS_TRY(gs_timer_start(be, &tm));
        if (ic) GS_TRY(GS_CUSPARSE(cusparseDcsric02(h, m, nnz, descr, d_val, d_ptr, d_ind, icinfo, pol, buf)));
        else GS_TRY(GS_CUSPARSE(cusparseDcsrilu02(h, m, nnz, descr, d_val, d_ptr, d_ind, iluinfo, pol, buf)));
        GS_TRY(gs_timer_stop(&tm, &t_f));
        cusparseStatus_t zs =
            ic ? cusparseXcsric02_zeroPivot(h, icinfo, &pos) : cusparseXcsrilu02_zeroPivot(h, iluinfo, &pos);
        if (zs == CUSPARSE_STATUS_ZERO_PIVOT)
            GS_FAIL(GS_ERR_NUMERIC, "cuSPARSE reports a zero pivot at row %d (1-based)", pos + 1);
        GS_TRY(GS_CUSPARSE(zs));
        if (icinfo) cusparseDestroyCsric02Info(icinfo);
        if (iluinfo) cusparseDestroyCsrilu02Info(iluinfo);
        icinfo = NULL;
        iluinfo = NULL;
        if (r < 0) continue;
        ta[r] = t_a;
        tf[r] = t_f;
    }

    if (err) {
        if (!Lh) { /* the host reference, computed here */
            if (ic) GS_TRY(gs_ic0(A, NULL, &Lr, &Ur, NULL));
            else {
                GS_TRY(gs_iluk_symbolic(A, 0, &Lr, &Ur));
                GS_TRY(gs_ilu_numeric(A, NULL, &Lr, &Ur, NULL));
            }
            Lh = &Lr;
            Uh = &Ur;
        }
        GS_TRY(GS_MALLOC(out, nnz > 0 ? nnz : 1));
        GS_TRY(gs_backend_download(be, out, d_val, vbytes));
        *err = factor_diff(A, ic, out, Lh, Uh);
    }

cleanup:
    gs_timer_destroy(&tm);
    if (icinfo) cusparseDestroyCsric02Info(icinfo);
    if (iluinfo) cusparseDestroyCsrilu02Info(iluinfo);
    if (descr) cusparseDestroyMatDescr(descr);
    if (h) cusparseDestroy(h);
    if (buf) gs_backend_free(be, buf);
    if (d_ptr) gs_backend_free(be, d_ptr);
    if (d_ind) gs_backend_free(be, d_ind);
    if (d_val) gs_backend_free(be, d_val);
    gs_free(&out);
    gs_csr_free(&Lr);
    gs_csr_free(&Ur);
    return st;
}
