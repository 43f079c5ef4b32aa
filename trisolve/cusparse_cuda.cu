/* cuSPARSE SpSV as the vendor baseline, x = T^{-1} b: the factor copied to the device as CSR (uploaded
 * from the host by analyse, copied device-to-device by analyse_dev) with its fill mode (lower/upper) and
 * diagonal type (unit: the diagonal is not stored and taken as 1) set as matrix attributes; buffer size
 * and analysis in analyse(), cusparseSpSV_solve in solve(). The solver has its own cuSPARSE handle bound
 * to the backend's stream, so its work is ordered with the backend's. The dense-vector descriptors are
 * created once and re-pointed at b and x in each solve.
 *
 * Precision (preconditioner.precision = "single"): the factor's values are kept rounded to float,
 * t_f = (float)t_ij, and SpSV runs in CUDA_R_32F. cuSPARSE SpSV needs b and x in the matrix's type, so
 * the solver keeps two float work vectors: b_f = (float)b, SpSV(b_f) -> x_f, x = (double)x_f, with a
 * small conversion kernel on each side. Unlike syncfree and levelset (float values, b, x and the sums in
 * double), cuSPARSE then also rounds b and accumulates in float: its single result is accurate to float
 * precision only (about 1e-7 times the factor's error growth), not to the float rounding of the values. */
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
    double *val;  /* the values (NULL with single) */
    float *val_f; /* single: the values rounded to float (NULL otherwise) */
    void *vecs;   /* 2n of the matrix's type: the vectors of the analysis; with single also the solve's b_f, x_f */
    void *buffer;
    size_t buffer_size;
    bool identity; /* unit diagonal without off-diagonal entries: x = b */
    bool single;   /* values, vectors and SpSV in float */
    gs_int n, nnz;
    double time_analyse;
} csp_data;

/* The factor's arrays as given: in host memory (analyse: uploaded) or in the device memory of the
 * backend (analyse_dev: copied device to device; the caller keeps its arrays). */
typedef struct csp_src {
    gs_int n, nnz;
    const gs_int *rowptr, *colind;
    const double *val;
    bool on_device;
} csp_src;

/* y[k] = (To)x[k] for k < m: the values and b rounded to float, the float solution widened to double. */
template <typename From, typename To>
static __global__ void csp_convert_kernel(gs_int m, const From *__restrict__ x, To *__restrict__ y)
{
    gs_int k = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (k < m) y[k] = (To)x[k];
}

template <typename From, typename To>
static gs_status csp_convert(gs_int m, const From *x, To *y, cudaStream_t s)
{
    if (m == 0) return GS_OK;
    csp_convert_kernel<From, To><<<(unsigned)((m + 255) / 256), 256, 0, s>>>(m, x, y);
    GS_CALL(GS_CUDA_LAUNCHED("csp_convert_kernel"));
    return GS_OK;
}

/* *dst = a device copy of count elements of src, which lies in host memory (upload) or, with on_device,
 * in device memory (a device-to-device copy on the backend's stream). */
template <typename T>
static gs_status csp_copy_in(gs_backend *be, T **dst, const T *src, size_t count, bool on_device)
{
    void *p = NULL;
    if (!on_device) {
        GS_CALL(gs_ts_upload_array(be, dst, src, count));
        return GS_OK;
    }
    GS_CALL(gs_backend_alloc(be, &p, count * sizeof(T)));
    *dst = (T *)p;
    if (count > 0)
        GS_CALL(GS_CUDA(cudaMemcpyAsync(p, src, count * sizeof(T), cudaMemcpyDeviceToDevice, gs_ts_stream(be))));
    return GS_OK;
}

/* One thread per row i of a factor in device memory: the row predicate of gs_ts_check_rows (row pointers
 * inside 0 .. nnz and increasing; columns inside 0 .. n-1, strictly increasing, on the factor's side; a
 * diagonal entry stored exactly when the factor is not unit, and then nonzero and finite). A row is
 * faulty when any condition fails, so their order does not matter; the smallest faulty row is kept. */
static __global__ void csp_check_rows_kernel(gs_int n, gs_int nnz, bool lower, bool unit,
                                             const gs_int *__restrict__ rowptr, const gs_int *__restrict__ col,
                                             const double *__restrict__ val, int *bad)
{
    gs_int i = (gs_int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    gs_int a = rowptr[i], e = rowptr[i + 1];
    bool fault = a < 0 || e < a || e > nnz, has_diag = false;
    double diag = 0.0;
    for (gs_int k = a; !fault && k < e; k++) {
        gs_int j = col[k];
        if (j < 0 || j >= n || (k > a && j <= col[k - 1]) || (lower ? j > i : j < i)) fault = true;
        else if (j == i) {
            has_diag = true;
            diag = val[k];
        }
    }
    if (!fault) fault = unit ? has_diag : (!has_diag || diag == 0.0 || !isfinite(diag));
    if (fault) atomicMin(bad, (int)i);
}

/* The rows of a factor in device memory, checked there (gs_trisolve_analyse_dev checks only the header;
 * analyse's rows are checked by gs_trisolve_analyse on the host). On a fault, a host copy of rows
 * 0 .. first faulty row (downloaded on this error path only) gives, through gs_ts_check_rows, exactly
 * the error of gs_trisolve_check_factor. Rows before the faulty one are valid, so its first entry lies
 * inside 0 .. nnz; its entries are copied when its row pointers are valid (else the host check stops at
 * them). */
static gs_status csp_check_rows_dev(gs_trisolve *ts, const csp_src *T)
{
    gs_status st = GS_OK;
    gs_backend *be = ts->be;
    const gs_int n = T->n;
    int *dbad = NULL, bad = n;
    gs_csr H = {};
    if (n == 0) return GS_OK;
    GS_TRY(gs_ts_upload_array(be, &dbad, &bad, 1));
    csp_check_rows_kernel<<<(unsigned)((n + 255) / 256), 256, 0, gs_ts_stream(be)>>>(
        n, T->nnz, ts->uplo == GS_LOWER, ts->unit_diag, T->rowptr, T->colind, T->val, dbad);
    GS_TRY(GS_CUDA_LAUNCHED("csp_check_rows_kernel"));
    GS_TRY(gs_backend_download(be, &bad, dbad, sizeof bad));
    if (bad < n) {
        H.nrows = H.ncols = n;
        H.nnz = T->nnz;
        GS_TRY(GS_MALLOC(H.rowptr, (size_t)bad + 2));
        GS_TRY(gs_backend_download(be, H.rowptr, T->rowptr, ((size_t)bad + 2) * sizeof(gs_int)));
        gs_int a = H.rowptr[bad], e = H.rowptr[bad + 1];
        gs_int entries = (e >= a && e <= T->nnz) ? e : a;
        GS_TRY(GS_MALLOC(H.colind, (size_t)entries + 1));
        GS_TRY(GS_MALLOC(H.val, (size_t)entries + 1));
        GS_TRY(gs_backend_download(be, H.colind, T->colind, (size_t)entries * sizeof(gs_int)));
        GS_TRY(gs_backend_download(be, H.val, T->val, (size_t)entries * sizeof(double)));
        GS_TRY(gs_ts_check_rows(&H, ts->uplo, ts->unit_diag, bad + 1));
        GS_FAIL(GS_ERR_INTERNAL, "the device check flagged row %d (1-based) of the %s factor but the host check "
                                 "finds no fault in rows 1..%d", bad + 1, ts->uplo == GS_LOWER ? "lower" : "upper",
                bad + 1);
    }
cleanup:
    gs_free(&H.rowptr);
    gs_free(&H.colind);
    gs_free(&H.val);
    gs_ts_free_array(be, &dbad);
    return st;
}

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
    gs_ts_free_array(be, &d->val_f);
    gs_ts_free_array(be, &d->vecs);
    gs_ts_free_array(be, &d->buffer);
    d->buffer_size = 0;
}

/* The values on the device: a copy in double, or with single rounded to float, t_f = (float)t_ij (from
 * the caller's device array directly, or from the uploaded doubles, which are then freed). */
static gs_status csp_values(gs_trisolve *ts, csp_data *d, const csp_src *T)
{
    gs_backend *be = ts->be;
    cudaStream_t s = gs_ts_stream(be);
    const size_t nz = (size_t)T->nnz;
    void *p = NULL;
    if (!d->single) {
        GS_CALL(csp_copy_in(be, &d->val, T->val, nz, T->on_device));
        return GS_OK;
    }
    GS_CALL(gs_backend_alloc(be, &p, nz * sizeof(float)));
    d->val_f = (float *)p;
    if (T->on_device) {
        GS_CALL(csp_convert(T->nnz, T->val, d->val_f, s));
        return GS_OK;
    }
    GS_CALL(csp_copy_in(be, &d->val, T->val, nz, false));
    GS_CALL(csp_convert(T->nnz, (const double *)d->val, d->val_f, s));
    GS_CALL(GS_CUDA(cudaStreamSynchronize(s))); /* the conversion has read the doubles */
    gs_ts_free_array(be, &d->val);
    return GS_OK;
}

/* The analysis of T (host or device arrays): copy, descriptors, SpSV buffer and analysis. */
static gs_status csp_analyse_from(gs_trisolve *ts, const csp_src *T)
{
    csp_data *d = (csp_data *)ts->data;
    gs_backend *be = ts->be;
    gs_status st = GS_OK;
    const gs_int n = T->n;
    double t0 = gs_wtime();
    const double one = 1.0;
    const float one_f = 1.0f;
    cudaStream_t s = gs_ts_stream(be);

    csp_release(ts, d);
    if (T->on_device) GS_TRY(csp_check_rows_dev(ts, T));
    d->n = n;
    d->nnz = T->nnz;
    d->single = ts->prm.single;
    d->identity = (T->nnz == 0); /* the row check guarantees: only a unit-diagonal factor has nnz == 0 */
    if (!d->identity) {
        const cudaDataType vt = d->single ? CUDA_R_32F : CUDA_R_64F; /* values, vectors and computation */
        const void *alpha = d->single ? (const void *)&one_f : (const void *)&one;
        const size_t vsize = d->single ? sizeof(float) : sizeof(double);
        GS_TRY(GS_CUSPARSE(cusparseSetStream(d->handle, s)));
        GS_TRY(csp_copy_in(be, &d->rowptr, T->rowptr, (size_t)n + 1, T->on_device));
        GS_TRY(csp_copy_in(be, &d->colind, T->colind, (size_t)T->nnz, T->on_device));
        GS_TRY(csp_values(ts, d, T));
        void *vals = d->single ? (void *)d->val_f : (void *)d->val;
        GS_TRY(gs_backend_alloc(be, &d->vecs, 2 * (size_t)n * vsize));
        GS_TRY(GS_CUDA(cudaMemsetAsync(d->vecs, 0, 2 * (size_t)n * vsize, s)));
        GS_TRY(GS_CUSPARSE(cusparseCreateCsr(&d->mat, n, n, T->nnz, d->rowptr, d->colind, vals, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt)));
        cusparseFillMode_t fill = ts->uplo == GS_LOWER ? CUSPARSE_FILL_MODE_LOWER : CUSPARSE_FILL_MODE_UPPER;
        cusparseDiagType_t diag = ts->unit_diag ? CUSPARSE_DIAG_TYPE_UNIT : CUSPARSE_DIAG_TYPE_NON_UNIT;
        GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(d->mat, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill)));
        GS_TRY(GS_CUSPARSE(cusparseSpMatSetAttribute(d->mat, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&d->vb, n, d->vecs, vt)));
        GS_TRY(GS_CUSPARSE(cusparseCreateDnVec(&d->vx, n, (char *)d->vecs + (size_t)n * vsize, vt)));
        GS_TRY(GS_CUSPARSE(cusparseSpSV_createDescr(&d->spsv)));
        GS_TRY(GS_CUSPARSE(cusparseSpSV_bufferSize(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d->mat, d->vb,
                                                   d->vx, vt, CUSPARSE_SPSV_ALG_DEFAULT, d->spsv, &d->buffer_size)));
        GS_TRY(gs_backend_alloc(be, &d->buffer, d->buffer_size));
        GS_TRY(GS_CUSPARSE(cusparseSpSV_analysis(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d->mat, d->vb,
                                                 d->vx, vt, CUSPARSE_SPSV_ALG_DEFAULT, d->spsv, d->buffer)));
    }
    GS_TRY(GS_CUDA(cudaStreamSynchronize(s)));
    d->time_analyse = gs_wtime() - t0;
cleanup:
    if (st != GS_OK) csp_release(ts, d);
    return st;
}

static gs_status csp_analyse(gs_trisolve *ts, const gs_csr *T)
{
    const csp_src src = {T->nrows, T->nnz, T->rowptr, T->colind, T->val, false};
    GS_CALL(csp_analyse_from(ts, &src));
    return GS_OK;
}

static gs_status csp_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T)
{
    const csp_src src = {T->nrows, T->nnz, T->rowptr, T->colind, T->val, true};
    GS_CALL(csp_analyse_from(ts, &src));
    return GS_OK;
}

static gs_status csp_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x)
{
    csp_data *d = (csp_data *)ts->data;
    cudaStream_t s = gs_ts_stream(ts->be);
    const double one = 1.0;
    const float one_f = 1.0f;
    if (d->identity) {
        GS_CALL(GS_CUDA(cudaMemcpyAsync(x->data, b->data, (size_t)x->n * sizeof(double), cudaMemcpyDeviceToDevice, s)));
        return GS_OK;
    }
    if (d->single) {
        /* b_f = (float)b; x_f = T_f^{-1} b_f in float (the descriptors point at the work vectors); x = x_f */
        float *bf = (float *)d->vecs, *xf = bf + d->n;
        GS_CALL(csp_convert(d->n, (const double *)b->data, bf, s));
        GS_CALL(GS_CUSPARSE(cusparseSpSV_solve(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_f, d->mat, d->vb,
                                               d->vx, CUDA_R_32F, CUSPARSE_SPSV_ALG_DEFAULT, d->spsv)));
        GS_CALL(csp_convert(d->n, (const float *)xf, x->data, s));
        return GS_OK;
    }
    /* cuSPARSE reads b only; the descriptor type is non-const for re-pointing */
    GS_CALL(GS_CUSPARSE(cusparseDnVecSetValues(d->vb, (void *)b->data)));
    GS_CALL(GS_CUSPARSE(cusparseDnVecSetValues(d->vx, x->data)));
    GS_CALL(GS_CUSPARSE(cusparseSpSV_solve(d->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d->mat, d->vb, d->vx,
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
    gs_ts_report_string(rep, prefix, "implementation",
                        d->identity ? "identity (copy)"
                        : d->single ? "cuSPARSE SpSV in float (values, b and x rounded to float; float accumulation)"
                                    : "cuSPARSE SpSV");
    gs_ts_report_string(rep, prefix, "precision", ts->prm.single ? "single" : "double");
    gs_ts_report_int(rep, prefix, "nnz", d->nnz);
    gs_ts_report_int(rep, prefix, "buffer_bytes", (long long)d->buffer_size);
    gs_ts_report_double(rep, prefix, "analysis_time", d->time_analyse);
}

static const gs_trisolve_ops csp_ops = {csp_analyse, csp_solve, csp_destroy, csp_view, csp_analyse_dev};

gs_status gs_trisolve_create_cusparse_cuda(gs_trisolve *ts)
{
    gs_status st = GS_OK;
    csp_data *d = NULL;
    if (ts->be->kind != GS_BACKEND_CUDA || !gs_ts_stream(ts->be))
        return GS_ERROR(GS_ERR_UNSUPPORTED, "cusparse needs device.backend = cuda");
    GS_TRY(GS_CALLOC(d, 1));
    GS_TRY(GS_CUSPARSE(cusparseCreate(&d->handle)));
    GS_TRY(GS_CUSPARSE(cusparseSetStream(d->handle, gs_ts_stream(ts->be))));
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
