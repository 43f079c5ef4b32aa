/* cuSPARSE SpSV as the vendor baseline, x = T^{-1} b: the factor uploaded as CSR with its fill mode
 * (lower/upper) and diagonal type (unit: the diagonal is not stored and taken as 1) set as matrix
 * attributes; buffer size and analysis in analyse(), cusparseSpSV_solve in solve(). The solver has
 * its own cuSPARSE handle bound to the backend's stream, so its work is ordered with the backend's.
 * The dense-vector descriptors are created once and re-pointed at b and x in each solve. */
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/mem.h"
#include "trisolve/trisolve_cuda.h"

typedef struct csp_data {
    cusparseHandle_t handle;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vb, vx;
    cusparseSpSVDescr_t spsv;
    gs_int *rowptr, *colind;
    double *val;
    double *scratch; /* 2n: the vectors the analysis is run with */
    void *buffer;
    size_t buffer_size;
    bool identity; /* unit diagonal without off-diagonal entries: x = b */
    gs_int nnz;
    double time_analyse;
} csp_data;

static void csp_release(gs_trisolve *ts, csp_data *d)
{
    gs_backend *be = ts->be;
    if (cudaStreamSynchronize(gs_ts_stream(be)) != cudaSuccess) (void)cudaGetLastError();
    if (d->spsv) (void)cusparseSpSV_destroyDescr(d->spsv);
    if (d->mat) (void)cusparseDestroySpMat(d->mat);
    if (d->vb) (void)cusparseDestroyDnVec(d->vb);
    if (d->vx) (void)cusparseDestroyDnVec(d->vx);
    d->spsv = NULL;
    d->mat = NULL;
    d->vb = NULL;
    d->vx = NULL;
    gs_ts_free_array(be, &d->rowptr);
    gs_ts_free_array(be, &d->colind);
    gs_ts_free_array(be, &d->val);
    gs_ts_free_array(be, &d->scratch);
    if (d->buffer) gs_backend_free(be, d->buffer);
    d->buffer = NULL;
    d->buffer_size = 0;
}

static gs_status csp_analyse(gs_trisolve *ts, const gs_csr *T)
{
    csp_data *d = (csp_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    gs_int n = T->nrows;
    double t0 = gs_wtime();
    const double one = 1.0;
    cudaStream_t s = gs_ts_stream(be);

    csp_release(ts, d);
    d->nnz = T->nnz;
    d->identity = (T->nnz == 0); /* check_factor guarantees: only a unit-diagonal factor has nnz == 0 */
    if (!d->identity) {
        GS_TRY(TS_CUSPARSE(cusparseSetStream(d->handle, s)));
        GS_TRY(gs_ts_upload_array(be, &d->rowptr, T->rowptr, (size_t)n + 1));
        GS_TRY(gs_ts_upload_array(be, &d->colind, T->colind, (size_t)T->nnz));
        GS_TRY(gs_ts_upload_array(be, &d->val, T->val, (size_t)T->nnz));
        {
            void *p = NULL;
            GS_TRY(gs_backend_alloc(be, &p, 2 * (size_t)n * sizeof(double)));
            d->scratch = (double *)p;
        }
        GS_TRY(TS_CUDA(cudaMemsetAsync(d->scratch, 0, 2 * (size_t)n * sizeof(double), s)));
        GS_TRY(TS_CUSPARSE(cusparseCreateCsr(&d->mat, n, n, T->nnz, d->rowptr, d->colind, d->val,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                             CUDA_R_64F)));
        cusparseFillMode_t fill = ts->uplo == GS_LOWER ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
        cusparseDiagType_t diag = ts->unit_diag ? CUSPARSE_DIAG_TYPE_UNIT : CUSPARSE_DIAG_TYPE_NON_UNIT;
        GS_TRY(TS_CUSPARSE(cusparseSpMatSetAttribute(d->mat, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill)));
        GS_TRY(TS_CUSPARSE(cusparseSpMatSetAttribute(d->mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag)));
        GS_TRY(TS_CUSPARSE(cusparseCreateDnVec(&d->vb, n, d->scratch, CUDA_R_64F)));
        GS_TRY(TS_CUSPARSE(cusparseCreateDnVec(&d->vx, n, d->scratch + n, CUDA_R_64F)));
        GS_TRY(TS_CUSPARSE(cusparseSpSV_createDescr(&d->spsv)));
        GS_TRY(TS_CUSPARSE(cusparseSpSV_bufferSize(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d->mat,
                                                   d->vb, d->vx, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT,
                                                   d->spsv, &d->buffer_size)));
        GS_TRY(gs_backend_alloc(be, &d->buffer, d->buffer_size));
        GS_TRY(TS_CUSPARSE(cusparseSpSV_analysis(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d->mat,
                                                 d->vb, d->vx, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, d->spsv,
                                                 d->buffer)));
        GS_TRY(TS_CUDA(cudaStreamSynchronize(s)));
    }
    d->time_analyse = gs_wtime() - t0;
cleanup:
    if (st != GS_OK) csp_release(ts, d);
    return st;
}

static gs_status csp_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    csp_data *d = (csp_data *)ts->data;
    const double one = 1.0;
    if (d->identity) {
        GS_CALL(TS_CUDA(cudaMemcpyAsync(x->data, b->data, (size_t)x->n * sizeof(double), cudaMemcpyDeviceToDevice,
                                        gs_ts_stream(ts->be))));
        return GS_OK;
    }
    /* cuSPARSE reads b only; the descriptor type is non-const for re-pointing */
    GS_CALL(TS_CUSPARSE(cusparseDnVecSetValues(d->vb, (void *)b->data)));
    GS_CALL(TS_CUSPARSE(cusparseDnVecSetValues(d->vx, x->data)));
    GS_CALL(TS_CUSPARSE(cusparseSpSV_solve(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d->mat, d->vb, d->vx,
                                           CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, d->spsv)));
    return GS_OK;
}

static void csp_destroy(gs_trisolve *ts)
{
    csp_data *d = (csp_data *)ts->data;
    if (!d) return;
    csp_release(ts, d);
    if (d->handle) (void)cusparseDestroy(d->handle);
    gs_free(&ts->data);
}

static void csp_view(const gs_trisolve *ts, gs_report *rep, const char *prefix)
{
    const csp_data *d = (const csp_data *)ts->data;
    gs_ts_report_string(rep, prefix, "implementation", d->identity ? "identity (copy)" : "cuSPARSE SpSV");
    gs_ts_report_int(rep, prefix, "nnz", d->nnz);
    gs_ts_report_int(rep, prefix, "buffer_bytes", (long long)d->buffer_size);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops csp_ops = {csp_analyse, csp_solve, csp_destroy, csp_view, NULL};

gs_status gs_trisolve_create_cusparse_cuda(gs_trisolve *ts)
{
    gs_status st = GS_OK;
    csp_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_UNSUPPORTED, "cusparse needs device.backend = cuda");
    GS_TRY(GS_CALLOC(d, 1));
    GS_TRY(TS_CUSPARSE(cusparseCreate(&d->handle)));
    GS_TRY(TS_CUSPARSE(cusparseSetStream(d->handle, gs_ts_stream(ts->be))));
    ts->data = d;
    ts->ops = &csp_ops;
    d = NULL;
cleanup:
    if (d) {
        if (d->handle) (void)cusparseDestroy(d->handle);
        gs_free(&d);
    }
    return st;
}
