/* Host CSR utilities: build from COO, sort/dedupe, transpose, triangles, permutations, graphs, levels. */
#include "core/csr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

gs_status gs_csr_alloc(gs_csr *A, gs_int nrows, gs_int ncols, gs_int nnz, bool with_values)
{
    gs_status st = GS_OK;
    memset(A, 0, sizeof *A);
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return GS_ERROR(GS_ERR_ARG, "negative matrix size %d x %d with %d entries", nrows, ncols, nnz);
    A->nrows = nrows;
    A->ncols = ncols;
    A->nnz = nnz;
    GS_TRY(GS_CALLOC(A->rowptr, (size_t)nrows + 1));
    GS_TRY(GS_MALLOC(A->colind, nnz));
    if (with_values) GS_TRY(GS_MALLOC(A->val, nnz));
    return GS_OK;
cleanup:
    gs_csr_free(A);
    return st;
}

void gs_csr_free(gs_csr *A)
{
    if (!A) return;
    gs_free(&A->rowptr);
    gs_free(&A->colind);
    gs_free(&A->val);
    memset(A, 0, sizeof *A);
}

gs_status gs_csr_copy(const gs_csr *A, gs_csr *B)
{
    GS_CALL(gs_csr_alloc(B, A->nrows, A->ncols, A->nnz, A->val != NULL));
    memcpy(B->rowptr, A->rowptr, ((size_t)A->nrows + 1) * sizeof(gs_int));
    memcpy(B->colind, A->colind, (size_t)A->nnz * sizeof(gs_int));
    if (A->val) memcpy(B->val, A->val, (size_t)A->nnz * sizeof(double));
    return GS_OK;
}

/* Insertion sort of one row by column (rows are short); values follow their columns. */
static void sort_row(gs_int *c, double *v, gs_int len)
{
    for (gs_int a = 1; a < len; a++) {
        gs_int cj = c[a];
        double vj = v ? v[a] : 0.0;
        gs_int b = a - 1;
        while (b >= 0 && c[b] > cj) {
            c[b + 1] = c[b];
            if (v) v[b + 1] = v[b];
            b--;
        }
        c[b + 1] = cj;
        if (v) v[b + 1] = vj;
    }
}

typedef struct {
    gs_int c;
    double v;
} col_val;

static int cmp_col_val(const void *a, const void *b)
{
    gs_int x = ((const col_val *)a)->c, y = ((const col_val *)b)->c;
    return (x > y) - (x < y);
}

gs_status gs_csr_sort_dedupe(gs_csr *A)
{
    gs_status st = GS_OK;
    col_val *tmp = NULL;
    gs_int maxlen = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > maxlen) maxlen = len;
    }
    if (maxlen > 64) GS_TRY(GS_MALLOC(tmp, maxlen));
    gs_int out = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int s = A->rowptr[i], e = A->rowptr[i + 1], len = e - s;
        if (len > 64) {
            for (gs_int k = 0; k < len; k++) {
                tmp[k].c = A->colind[s + k];
                tmp[k].v = A->val ? A->val[s + k] : 0.0;
            }
            qsort(tmp, (size_t)len, sizeof *tmp, cmp_col_val);
            for (gs_int k = 0; k < len; k++) {
                A->colind[s + k] = tmp[k].c;
                if (A->val) A->val[s + k] = tmp[k].v;
            }
        } else {
            sort_row(A->colind + s, A->val ? A->val + s : NULL, len);
        }
        A->rowptr[i] = out;
        for (gs_int k = s; k < e; k++) {
            if (out > A->rowptr[i] && A->colind[out - 1] == A->colind[k]) {
                if (A->val) A->val[out - 1] += A->val[k];
            } else {
                A->colind[out] = A->colind[k];
                if (A->val) A->val[out] = A->val[k];
                out++;
            }
        }
    }
    A->rowptr[A->nrows] = out;
    A->nnz = out;
cleanup:
    gs_free(&tmp);
    return st;
}

bool gs_csr_is_sorted(const gs_csr *A)
{
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int k = A->rowptr[i] + 1; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] <= A->colind[k - 1]) return false;
    return true;
}

gs_status gs_csr_from_coo(gs_int nrows, gs_int ncols, gs_int nnz, const gs_int *ri, const gs_int *ci,
                          const double *val, gs_csr *A)
{
    for (gs_int k = 0; k < nnz; k++)
        if (ri[k] < 0 || ri[k] >= nrows || ci[k] < 0 || ci[k] >= ncols)
            return GS_ERROR(GS_ERR_ARG, "entry %d at (%d, %d) is outside the %d x %d matrix", k, ri[k],
                            ci[k], nrows, ncols);
    GS_CALL(gs_csr_alloc(A, nrows, ncols, nnz, true));
    for (gs_int k = 0; k < nnz; k++) A->rowptr[ri[k] + 1]++;
    for (gs_int i = 0; i < nrows; i++) A->rowptr[i + 1] += A->rowptr[i];
    /* counting sort by row (stable), then per-row sort by column */
    gs_int *next = NULL;
    gs_status st = GS_MALLOC(next, nrows);
    if (st != GS_OK) {
        gs_csr_free(A);
        GS_CALL(st);
    }
    memcpy(next, A->rowptr, (size_t)nrows * sizeof(gs_int));
    for (gs_int k = 0; k < nnz; k++) {
        gs_int p = next[ri[k]]++;
        A->colind[p] = ci[k];
        A->val[p] = val ? val[k] : 1.0;
    }
    gs_free(&next);
    st = gs_csr_sort_dedupe(A);
    if (st != GS_OK) {
        gs_csr_free(A);
        GS_CALL(st);
    }
    return GS_OK;
}

gs_status gs_csr_transpose(const gs_csr *A, gs_csr *AT)
{
    gs_status st = GS_OK;
    gs_int *next = NULL;
    GS_CALL(gs_csr_alloc(AT, A->ncols, A->nrows, A->nnz, A->val != NULL));
    GS_TRY(GS_MALLOC(next, (size_t)A->ncols + 1));
    for (gs_int k = 0; k < A->nnz; k++) AT->rowptr[A->colind[k] + 1]++;
    for (gs_int j = 0; j < A->ncols; j++) AT->rowptr[j + 1] += AT->rowptr[j];
    memcpy(next, AT->rowptr, ((size_t)A->ncols + 1) * sizeof(gs_int));
    /* rows visited in increasing order, so each output row receives increasing columns */
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            gs_int p = next[A->colind[k]]++;
            AT->colind[p] = i;
            if (A->val) AT->val[p] = A->val[k];
        }
cleanup:
    gs_free(&next);
    if (st != GS_OK) gs_csr_free(AT);
    return st;
}

static gs_status csr_triangle(const gs_csr *A, bool lower, bool with_diag, gs_csr *T)
{
    gs_int cnt = 0;
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            gs_int j = A->colind[k];
            if (lower ? (j < i || (with_diag && j == i)) : (j > i || (with_diag && j == i))) cnt++;
        }
    GS_CALL(gs_csr_alloc(T, A->nrows, A->ncols, cnt, A->val != NULL));
    gs_int p = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            gs_int j = A->colind[k];
            if (lower ? (j < i || (with_diag && j == i)) : (j > i || (with_diag && j == i))) {
                T->colind[p] = j;
                if (A->val) T->val[p] = A->val[k];
                p++;
            }
        }
        T->rowptr[i + 1] = p;
    }
    return GS_OK;
}

gs_status gs_csr_lower(const gs_csr *A, bool with_diag, gs_csr *L) { return csr_triangle(A, true, with_diag, L); }
gs_status gs_csr_upper(const gs_csr *A, bool with_diag, gs_csr *U) { return csr_triangle(A, false, with_diag, U); }

void gs_perm_invert(gs_int n, const gs_int *perm, gs_int *iperm)
{
    for (gs_int i = 0; i < n; i++) iperm[perm[i]] = i;
}

bool gs_perm_is_valid(gs_int n, const gs_int *perm)
{
    unsigned char *seen = NULL;
    bool ok = gs_calloc(&seen, (size_t)n + 1, 1) == GS_OK;
    for (gs_int i = 0; ok && i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) ok = false;
        else seen[perm[i]] = 1;
    }
    gs_free(&seen);
    return ok;
}

gs_status gs_csr_permute(const gs_csr *A, const gs_int *perm, gs_csr *B)
{
    gs_status st = GS_OK;
    gs_int *iperm = NULL;
    if (A->nrows != A->ncols) return GS_ERROR(GS_ERR_ARG, "symmetric permutation of a non-square matrix");
    GS_CALL(GS_MALLOC(iperm, A->nrows));
    gs_perm_invert(A->nrows, perm, iperm);
    GS_TRY(gs_csr_alloc(B, A->nrows, A->ncols, A->nnz, A->val != NULL));
    gs_int p = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int r = perm[i];
        gs_int s = p;
        for (gs_int k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
            B->colind[p] = iperm[A->colind[k]];
            if (A->val) B->val[p] = A->val[k];
            p++;
        }
        B->rowptr[i + 1] = p;
        sort_row(B->colind + s, B->val ? B->val + s : NULL, p - s);
    }
cleanup:
    gs_free(&iperm);
    if (st != GS_OK) gs_csr_free(B);
    return st;
}

gs_status gs_csr_symmetric_graph(const gs_csr *A, gs_csr *G)
{
    gs_status st = GS_OK;
    gs_csr AT = {0}, P = {0};
    GS_CALL(gs_csr_transpose(A, &AT));
    /* merge the sorted rows of A and A^T, skipping the diagonal */
    int64_t cnt = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int a = A->rowptr[i], ae = A->rowptr[i + 1], b = AT.rowptr[i], be = AT.rowptr[i + 1];
        while (a < ae || b < be) {
            gs_int ca = a < ae ? A->colind[a] : GS_INT_MAX, cb = b < be ? AT.colind[b] : GS_INT_MAX;
            gs_int c = ca < cb ? ca : cb;
            if (ca == c) a++;
            if (cb == c) b++;
            if (c != i) cnt++;
        }
    }
    if (cnt > GS_INT_MAX) GS_FAIL(GS_ERR_ARG, "the symmetrized graph has %lld edges, over the 32-bit limit", (long long)cnt);
    GS_TRY(gs_csr_alloc(&P, A->nrows, A->ncols, (gs_int)cnt, false));
    gs_int p = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int a = A->rowptr[i], ae = A->rowptr[i + 1], b = AT.rowptr[i], be = AT.rowptr[i + 1];
        while (a < ae || b < be) {
            gs_int ca = a < ae ? A->colind[a] : GS_INT_MAX, cb = b < be ? AT.colind[b] : GS_INT_MAX;
            gs_int c = ca < cb ? ca : cb;
            if (ca == c) a++;
            if (cb == c) b++;
            if (c != i) P.colind[p++] = c;
        }
        P.rowptr[i + 1] = p;
    }
    *G = P;
    memset(&P, 0, sizeof P);
cleanup:
    gs_csr_free(&AT);
    gs_csr_free(&P);
    return st;
}

gs_status gs_csr_submatrix(const gs_csr *A, gs_int k, const gs_int *rows, gs_csr *B)
{
    gs_status st = GS_OK;
    gs_int *map = NULL; /* global column -> local index, -1 outside */
    GS_CALL(GS_MALLOC(map, A->ncols));
    for (gs_int j = 0; j < A->ncols; j++) map[j] = -1;
    for (gs_int r = 0; r < k; r++) {
        if (rows[r] < 0 || rows[r] >= A->nrows || (r > 0 && rows[r] <= rows[r - 1]))
            GS_FAIL(GS_ERR_ARG, "submatrix rows must be sorted, distinct and in range (entry %d = %d)", r, rows[r]);
        map[rows[r]] = r;
    }
    gs_int cnt = 0;
    for (gs_int r = 0; r < k; r++)
        for (gs_int q = A->rowptr[rows[r]]; q < A->rowptr[rows[r] + 1]; q++)
            if (map[A->colind[q]] >= 0) cnt++;
    GS_TRY(gs_csr_alloc(B, k, k, cnt, A->val != NULL));
    gs_int p = 0;
    for (gs_int r = 0; r < k; r++) {
        for (gs_int q = A->rowptr[rows[r]]; q < A->rowptr[rows[r] + 1]; q++) {
            gs_int c = map[A->colind[q]];
            if (c < 0) continue;
            B->colind[p] = c; /* rows sorted: local columns stay increasing */
            if (A->val) B->val[p] = A->val[q];
            p++;
        }
        B->rowptr[r + 1] = p;
    }
cleanup:
    gs_free(&map);
    return st;
}

void gs_csr_diagonal(const gs_csr *A, double *diag, gs_int *missing, gs_int *first_missing)
{
    gs_int miss = 0, first = -1;
    for (gs_int i = 0; i < A->nrows; i++) {
        double d = 0.0;
        bool found = false;
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
            if (A->colind[k] == i) {
                d += A->val ? A->val[k] : 1.0;
                found = true;
            }
        if (!found) {
            miss++;
            if (first < 0) first = i;
        }
        if (diag) diag[i] = d;
    }
    if (missing) *missing = miss;
    if (first_missing) *first_missing = first;
}

void gs_csr_spmv(double alpha, const gs_csr *A, const double *x, double beta, double *y)
{
#pragma omp parallel for schedule(static) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) s += A->val[k] * x[A->colind[k]];
        y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
    }
}

gs_int gs_csr_levels(const gs_csr *T, bool lower, gs_int *level)
{
    gs_int nlev = 0;
    gs_int *lev = level;
    gs_int *own = NULL;
    if (!lev) {
        if (GS_MALLOC(own, (size_t)T->nrows + 1) != GS_OK) return -1;
        lev = own;
    }
    for (gs_int t = 0; t < T->nrows; t++) {
        gs_int i = lower ? t : T->nrows - 1 - t;
        gs_int l = 0;
        for (gs_int k = T->rowptr[i]; k < T->rowptr[i + 1]; k++) {
            gs_int j = T->colind[k];
            if ((lower && j < i) || (!lower && j > i))
                if (lev[j] + 1 > l) l = lev[j] + 1;
        }
        lev[i] = l;
        if (l + 1 > nlev) nlev = l + 1;
    }
    gs_free(&own);
    return nlev;
}

/* true when every row's columns increase strictly (sorted, no duplicates) */
static bool rows_strictly_sorted(const gs_csr *A)
{
    bool ok = true;
#pragma omp parallel for schedule(static) reduction(&& : ok) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int p = A->rowptr[i] + 1; p < A->rowptr[i + 1]; p++)
            if (A->colind[p] <= A->colind[p - 1]) ok = false;
    return ok;
}

/* Position of column j in the sorted row i, or -1. */
static gs_int find_in_row(const gs_csr *A, gs_int i, gs_int j)
{
    gs_int lo = A->rowptr[i], hi = A->rowptr[i + 1] - 1;
    while (lo <= hi) {
        gs_int mid = lo + (hi - lo) / 2;
        if (A->colind[mid] == j) return mid;
        if (A->colind[mid] < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

gs_status gs_csr_symmetry(const gs_csr *A, double rel_tol, bool *structural, bool *numerical)
{
    gs_csr AT = {0};
    bool s = A->nrows == A->ncols, num = s;
    if (s && rows_strictly_sorted(A)) {
        /* Sorted rows: look each a_ij's mirror a_ji up in row j (binary search), in parallel, with no
         * transpose to build (the IC(0)/ParIC setup calls this on every matrix). */
#pragma omp parallel for schedule(static) reduction(&& : s, num) if (A->nnz > 100000)
        for (gs_int i = 0; i < A->nrows; i++) {
            for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                gs_int j = A->colind[p];
                gs_int q = j == i ? p : find_in_row(A, j, i);
                if (q < 0) {
                    s = false;
                    continue;
                }
                if (A->val) {
                    double x = A->val[p], y = A->val[q];
                    if (fabs(x - y) > rel_tol * fmax(fabs(x), fabs(y))) num = false;
                }
            }
        }
    } else if (s) { /* unsorted or duplicated columns: compare with the transpose entry by entry */
        GS_CALL(gs_csr_transpose(A, &AT));
        for (gs_int i = 0; i < A->nrows && s; i++) {
            gs_int a = A->rowptr[i], b = AT.rowptr[i];
            if (A->rowptr[i + 1] - a != AT.rowptr[i + 1] - b) {
                s = false;
                break;
            }
            for (gs_int k = 0; k < A->rowptr[i + 1] - a; k++) {
                if (A->colind[a + k] != AT.colind[b + k]) {
                    s = false;
                    break;
                }
                if (A->val) {
                    double x = A->val[a + k], y = AT.val[b + k];
                    double m = fmax(fabs(x), fabs(y));
                    if (fabs(x - y) > rel_tol * m) num = false;
                }
            }
        }
        gs_csr_free(&AT);
    }
    if (structural) *structural = s;
    if (numerical) *numerical = s && num;
    return GS_OK;
}
