/* What the triangular solvers share: the factor check (the O(1) header and the rows, scanned in parallel
 * with exactly a sequential scan's message), the report helpers of their views, and the host copy of a
 * factor in device memory. */
#include <math.h>
#include <string.h>

#include "trisolve/trisolve_impl.h"

static const char *side_name(gs_uplo uplo) { return uplo == GS_LOWER ? "lower" : "upper"; }

/* ---------------------------------------------------------------- report helpers */

void gs_ts_report_int(gs_report *rep, const char *prefix, const char *name, long long v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) (void)gs_report_int(rep, key, v);
}

void gs_ts_report_double(gs_report *rep, const char *prefix, const char *name, double v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK)
        (void)gs_report_double(rep, key, v);
}

void gs_ts_report_string(gs_report *rep, const char *prefix, const char *name, const char *v)
{
    char key[256];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK)
        (void)gs_report_string(rep, key, v);
}

/* ---------------------------------------------------------------- factor check
 *
 * Two parts: the O(1) header (shape, arrays, rowptr[0], rowptr[n]) and the rows. A row's first fault is
 * found by row_fault (no message, no allocation), so the rows can be scanned in parallel: each OpenMP
 * thread takes a contiguous range, the smallest faulty row wins (a min reduction: deterministic, the
 * same row as a sequential scan), and only that row is described by fault_error. The rows before the
 * first faulty row are valid, so its rowptr[i] >= 0 and every message is the one a sequential scan
 * would give. The GPU analyses (analysis_cuda.cu) evaluate the same predicate in their level kernel and
 * call gs_ts_check_rows on the rows up to the first one they flag, so their messages are these. */

/* What went wrong in a row, in the order a sequential scan meets it. */
typedef enum row_fault_kind {
    RF_NONE = 0,
    RF_ROWPTR,    /* rowptr[i] .. rowptr[i+1] not inside 0 .. nnz, or decreasing */
    RF_RANGE,     /* column outside 0 .. n-1 */
    RF_UNSORTED,  /* column not greater than the previous one */
    RF_SIDE,      /* column on the wrong side of the diagonal */
    RF_UNIT_DIAG, /* unit factor storing a diagonal entry */
    RF_NO_DIAG,   /* non-unit factor without a diagonal entry */
    RF_ZERO_DIAG,
    RF_NONFINITE_DIAG
} row_fault_kind;

typedef struct row_fault {
    row_fault_kind kind;
    gs_int a, e, j, prev; /* the row's entry range; the offending column and the one before it */
    double diag;
} row_fault;

/* The first fault of row i (RF_NONE when the row is valid): range, order and side of each entry in
 * turn, then the diagonal. */
static inline row_fault_kind row_fault_of(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int i, row_fault *f)
{
    gs_int n = T->nrows, a = T->rowptr[i], e = T->rowptr[i + 1];
    const gs_int *ci = T->colind;
    f->a = a;
    f->e = e;
    if (a < 0 || e < a || e > T->nnz) return f->kind = RF_ROWPTR;
    bool has_diag = false;
    double diag = 0.0;
    for (gs_int q = a; q < e; q++) {
        gs_int j = ci[q];
        f->j = j;
        if (j < 0 || j >= n) return f->kind = RF_RANGE;
        if (q > a && j <= ci[q - 1]) {
            f->prev = ci[q - 1];
            return f->kind = RF_UNSORTED;
        }
        if (uplo == GS_LOWER ? j > i : j < i) return f->kind = RF_SIDE;
        if (j == i) {
            has_diag = true;
            diag = T->val[q];
        }
    }
    f->diag = diag;
    if (unit_diag) return f->kind = has_diag ? RF_UNIT_DIAG : RF_NONE;
    if (!has_diag) return f->kind = RF_NO_DIAG;
    if (diag == 0.0) return f->kind = RF_ZERO_DIAG;
    if (!isfinite(diag)) return f->kind = RF_NONFINITE_DIAG;
    return f->kind = RF_NONE;
}

/* The message of fault f at row i. */
static gs_status fault_error(const gs_csr *T, gs_uplo uplo, gs_int i, const row_fault *f)
{
    const char *side = side_name(uplo);
    switch (f->kind) {
    case RF_ROWPTR:
        return GS_ERROR(GS_ERR_ARG, "the %s factor's row pointer is invalid at row %d (1-based): %d .. %d "
                                    "with nnz = %d", side, (int)i + 1, (int)f->a, (int)f->e, (int)T->nnz);
    case RF_RANGE:
        return GS_ERROR(GS_ERR_ARG, "row %d (1-based) of the %s factor has column %d outside 1..%d", (int)i + 1,
                        side, (int)f->j + 1, (int)T->nrows);
    case RF_UNSORTED:
        return GS_ERROR(GS_ERR_ARG, "row %d (1-based) of the %s factor is not sorted: column %d comes "
                                    "after column %d; expected strictly increasing columns (sorted CSR)",
                        (int)i + 1, side, (int)f->j + 1, (int)f->prev + 1);
    case RF_SIDE:
        return GS_ERROR(GS_ERR_ARG, "the %s factor has an entry at row %d, column %d (1-based) %s the "
                                    "diagonal; a %s factor holds only columns j %s i", side, (int)i + 1,
                        (int)f->j + 1, uplo == GS_LOWER ? "above" : "below", side, uplo == GS_LOWER ? "<=" : ">=");
    case RF_UNIT_DIAG:
        return GS_ERROR(GS_ERR_ARG, "the unit-diagonal %s factor stores a diagonal entry at row %d (1-based); "
                                    "with unit_diag the diagonal is implied and must not be stored",
                        side, (int)i + 1);
    case RF_NO_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "the %s factor has no diagonal entry at row %d (1-based); every row "
                                        "of a non-unit factor must store its diagonal", side, (int)i + 1);
    case RF_ZERO_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "zero diagonal at row %d (1-based) of the %s factor", (int)i + 1, side);
    case RF_NONFINITE_DIAG:
        return GS_ERROR(GS_ERR_NUMERIC, "the diagonal at row %d (1-based) of the %s factor is %g (not finite)",
                        (int)i + 1, side, f->diag);
    case RF_NONE:
        break;
    }
    return GS_ERROR(GS_ERR_INTERNAL, "factor check: row %d (1-based) of the %s factor has no fault to describe",
                    (int)i + 1, side);
}

/* Rows + entries from which the row scan is split among OpenMP threads (below: thread start-up costs
 * more than the scan). */
#define CHECK_PARALLEL_WORK 65536

gs_status gs_ts_check_header(const gs_csr *T, gs_uplo uplo, bool unit_diag)
{
    const char *side = (uplo == GS_LOWER) ? "lower" : "upper";
    (void)unit_diag;
    if (!T) return GS_ERROR(GS_ERR_ARG, "the %s triangular factor is NULL", side);
    if (uplo != GS_LOWER && uplo != GS_UPPER)
        return GS_ERROR(GS_ERR_ARG, "uplo is %d; expected GS_LOWER or GS_UPPER", (int)uplo);
    gs_int n = T->nrows;
    if (n < 0 || T->ncols != n)
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor is %d x %d; expected a square matrix", side,
                        (int)T->nrows, (int)T->ncols);
    if (T->nnz < 0 || !T->rowptr || (T->nnz > 0 && !T->colind))
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor (n = %d, nnz = %d) has missing arrays", side,
                        (int)n, (int)T->nnz);
    if (T->nnz > 0 && !T->val)
        return GS_ERROR(GS_ERR_ARG, "the %s triangular factor has no values (pattern only)", side);
    if (T->rowptr[0] != 0)
        return GS_ERROR(GS_ERR_ARG, "the %s factor's rowptr[0] is %d; expected 0", side, (int)T->rowptr[0]);
    if (T->rowptr[n] != T->nnz)
        return GS_ERROR(GS_ERR_ARG, "the %s factor's rowptr[n] is %d; expected nnz = %d", side,
                        (int)T->rowptr[n], (int)T->nnz);
    return GS_OK;
}

gs_status gs_ts_check_rows(const gs_csr *T, gs_uplo uplo, bool unit_diag, gs_int end)
{
    gs_int first = end;
    long long work = (long long)end + (long long)T->nnz;
    (void)work; /* unused without OpenMP */
#pragma omp parallel for schedule(static) reduction(min : first) if (work >= CHECK_PARALLEL_WORK)
    for (gs_int i = 0; i < end; i++) {
        row_fault g;
        /* a thread's rows come in increasing order: past its first faulty row it only skips */
        if (i < first && row_fault_of(T, uplo, unit_diag, i, &g) != RF_NONE) first = i;
    }
    if (first >= end) return GS_OK;
    row_fault f;
    (void)row_fault_of(T, uplo, unit_diag, first, &f);
    return fault_error(T, uplo, first, &f);
}

gs_status gs_trisolve_check_factor(const gs_csr *T, gs_uplo uplo, bool unit_diag)
{
    GS_CALL(gs_ts_check_header(T, uplo, unit_diag));
    GS_CALL(gs_ts_check_rows(T, uplo, unit_diag, T->nrows));
    return GS_OK;
}

/* ---------------------------------------------------------------- a device factor on the host */

gs_status gs_ts_csr_download(gs_backend *be, const gs_csr_dev *T, gs_csr *H)
{
    gs_status st = GS_OK;
    GS_TRY(gs_csr_alloc(H, T->nrows, T->ncols, T->nnz, true));
    GS_TRY(gs_backend_download(be, H->rowptr, T->rowptr, ((size_t)T->nrows + 1) * sizeof(gs_int)));
    if (T->nnz > 0) {
        GS_TRY(gs_backend_download(be, H->colind, T->colind, (size_t)T->nnz * sizeof(gs_int)));
        GS_TRY(gs_backend_download(be, H->val, T->val, (size_t)T->nnz * sizeof(double)));
    }
cleanup:
    if (st != GS_OK) gs_csr_free(H);
    return st;
}

