/* Host CSR utilities: build from COO, sort/dedupe, transpose, triangles, permutations, graphs, levels. */
#include "core/csr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

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

/* Sort one row of len entries by column with qsort through tmp (len slots): for rows too long for sort_row's
 * insertion sort. No order is kept among equal columns. */
static void sort_row_long(gs_int *c, double *v, gs_int len, col_val *tmp)
{
    for (gs_int k = 0; k < len; k++) {
        tmp[k].c = c[k];
        tmp[k].v = v ? v[k] : 0.0;
    }
    qsort(tmp, (size_t)len, sizeof *tmp, cmp_col_val);
    for (gs_int k = 0; k < len; k++) {
        c[k] = tmp[k].c;
        if (v) v[k] = tmp[k].v;
    }
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
            sort_row_long(A->colind + s, A->val ? A->val + s : NULL, len, tmp);
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

/* Rows of B are independent once B's row pointers are known: filled in parallel, rows of up to 64 entries
 * sorted there by insertion; longer rows are sorted afterwards, one by one, by qsort on one buffer. Columns
 * of a row are distinct, so the result does not depend on the sort or the threads. */
gs_status gs_csr_permute(const gs_csr *A, const gs_int *perm, gs_csr *B)
{
    gs_status st = GS_OK;
    gs_int *iperm = NULL, maxlen = 0;
    col_val *tmp = NULL;
    if (A->nrows != A->ncols) return GS_ERROR(GS_ERR_ARG, "symmetric permutation of a non-square matrix");
    GS_CALL(GS_MALLOC(iperm, A->nrows));
    gs_perm_invert(A->nrows, perm, iperm);
    GS_TRY(gs_csr_alloc(B, A->nrows, A->ncols, A->nnz, A->val != NULL));
    B->rowptr[0] = 0;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[perm[i] + 1] - A->rowptr[perm[i]];
        B->rowptr[i + 1] = B->rowptr[i] + len;
        if (len > maxlen) maxlen = len;
    }
    if (maxlen > 64) GS_TRY(GS_MALLOC(tmp, maxlen));
#pragma omp parallel for schedule(dynamic, 1024) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int s = B->rowptr[i], len = B->rowptr[i + 1] - s, q = A->rowptr[perm[i]];
        for (gs_int k = 0; k < len; k++) {
            B->colind[s + k] = iperm[A->colind[q + k]];
            if (A->val) B->val[s + k] = A->val[q + k];
        }
        if (len <= 64) sort_row(B->colind + s, B->val ? B->val + s : NULL, len);
    }
    for (gs_int i = 0; tmp && i < A->nrows; i++) {
        gs_int s = B->rowptr[i], len = B->rowptr[i + 1] - s;
        if (len > 64) sort_row_long(B->colind + s, B->val ? B->val + s : NULL, len, tmp);
    }
cleanup:
    gs_free(&iperm);
    gs_free(&tmp);
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

/* Threads of the symmetry scan. It is memory bound and a few threads saturate it; as in
 * core/parallel_copy.c, two cores of a larger host are left to the CUDA driver's threads, because a
 * region lasts as long as its slowest thread and a thread preempted by them stalls the whole scan for a
 * scheduler time slice (the IC(0) check took ~5 ms with all 16 threads of the H100 host). */
#define SYM_MAX_THREADS 6
/* Below this many entries one thread is faster than waking the team. */
#define SYM_PARALLEL_NNZ 100000
/* Rows handed out at a time: dynamic, so that a preempted thread's remaining rows go to the others. */
#define SYM_ROW_CHUNK 4096
/* "No pair found" in the lexicographic (row, column) key of the first asymmetric pair. */
#define SYM_NO_KEY INT64_MAX

static int symmetry_threads(void)
{
#ifdef _OPENMP
    const int procs = omp_get_num_procs();
    int t = procs > 4 ? procs - 2 : procs;
    if (t > SYM_MAX_THREADS) t = SYM_MAX_THREADS;
    if (t > omp_get_max_threads()) t = omp_get_max_threads();
    return t < 1 ? 1 : t;
#else
    return 1;
#endif
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

/* Position of column j > i in the sorted row i, or -1: scanned from the row's end in a short (stencil)
 * row, where the upper entries sit, bisected in a long one. */
static inline gs_int find_upper(const gs_int *rowptr, const gs_int *colind, gs_int i, gs_int j)
{
    gs_int lo = rowptr[i], hi = rowptr[i + 1] - 1;
    if (hi - lo < 8) {
        for (; hi >= lo && colind[hi] > j; hi--) {
        }
        return hi >= lo && colind[hi] == j ? hi : -1;
    }
    while (lo <= hi) {
        gs_int mid = lo + (hi - lo) / 2;
        if (colind[mid] == j) return mid;
        if (colind[mid] < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* a_p, 1 for a pattern-only matrix (as gs_csr_from_coo reads it). */
static inline double entry_value(const gs_csr *A, gs_int p)
{
    return A->val ? A->val[p] : 1.0;
}

/* gs_csr_symmetry's numerical test of a stored pair: |x - y| > tol * max(|x|, |y|). With a NaN the
 * difference is NaN and the test false whatever the maximum, so a plain comparison serves for fmax (a
 * libm call that is not inlined). */
static inline bool values_differ(double x, double y, double tol)
{
    const double ax = fabs(x), ay = fabs(y);
    return fabs(x - y) > tol * (ax > ay ? ax : ay);
}

/* The first-pair test of gs_csr_find_asymmetry: values_differ, or exactly one of x, y NaN. */
static inline bool pair_differs(double x, double y, double tol)
{
    return values_differ(x, y, tol) || (isnan(x) != isnan(y));
}

static inline int64_t pair_key(gs_int i, gs_int j)
{
    return ((int64_t)i << 32) | (int64_t)(uint32_t)j;
}

/* What one pass over a square matrix finds out. */
typedef struct sym_scan {
    bool sorted;     /* every row's columns strictly increase; when false the rest is meaningless */
    bool structural; /* a_ij stored <=> a_ji stored */
    bool numerical;  /* structural, and no stored pair passes values_differ */
    int64_t first;   /* key of the first (i, j) in row order failing pair_differs, a missing entry being 0;
                      * SYM_NO_KEY when none (only computed when asked) */
} sym_scan;

/* One parallel pass over the lower triangle: each a_ij with j < i is compared with its mirror a_ji, found
 * in the upper part of row j (the rows being sorted: no transpose). Row j was streamed shortly before for
 * a banded matrix, so the mirror is mostly in cache. The upper triangle is only counted: every lower entry
 * having its mirror maps the lower entries one-to-one into the upper ones, so equal counts mean the
 * patterns match. The set of failing pairs is symmetric and the diagonal never fails, so the first failing
 * (i, j) in row order has i < j: either a_ji is stored (met here from row j), or a_ji is missing while
 * a_ij is stored, which only a nonsymmetric pattern allows and a second pass over the upper triangle
 * finds. */
static void symmetry_scan(const gs_csr *A, double tol, bool want_first, sym_scan *out)
{
    const gs_int n = A->nrows;
    const int threads = symmetry_threads();
    bool sorted = true, mirrored = true, num = true;
    long long nlow = 0, nup = 0;
    int64_t first = SYM_NO_KEY;
    const gs_int *rowptr = A->rowptr, *colind = A->colind;
    const double *val = A->val;
    (void)threads; /* without OpenMP */
#pragma omp parallel for schedule(dynamic, SYM_ROW_CHUNK) num_threads(threads) if (A->nnz > SYM_PARALLEL_NNZ) \
    reduction(&& : sorted, mirrored, num) reduction(+ : nlow, nup) reduction(min : first)
    for (gs_int i = 0; i < n; i++) {
        const gs_int pb = rowptr[i], pe = rowptr[i + 1];
        bool row_done = !want_first; /* keys (j, i) grow with j: the row's first failure is its smallest */
        gs_int p = pb;
        for (; p < pe && colind[p] < i; p++) {
            const gs_int j = colind[p];
            if (p > pb && j <= colind[p - 1]) sorted = false;
            const gs_int q = find_upper(rowptr, colind, j, i);
            const double x = val ? val[p] : 1.0, y = q < 0 ? 0.0 : val ? val[q] : 1.0;
            const bool differ = values_differ(x, y, tol);
            if (q < 0) mirrored = false;
            else if (differ) num = false;
            if (!row_done && (differ || isnan(x) != isnan(y))) {
                row_done = true;
                const int64_t key = pair_key(j, i);
                if (key < first) first = key;
            }
        }
        nlow += p - pb;
        if (p < pe && colind[p] == i) p++; /* the diagonal */
        if (p < pe && p > pb && colind[p] <= colind[p - 1]) sorted = false;
        nup += pe - p;
        for (p++; p < pe; p++)
            if (colind[p] <= colind[p - 1]) sorted = false;
    }
    out->sorted = sorted;
    out->structural = sorted && mirrored && nlow == nup;
    out->numerical = out->structural && num;
    if (want_first && sorted && !out->structural) {
        /* a stored upper entry a_ij (j > i) whose mirror a_ji is missing: the pair (i, j), 0 on the side of
         * a_ji */
#pragma omp parallel for schedule(dynamic, SYM_ROW_CHUNK) num_threads(threads) \
    if (A->nnz > SYM_PARALLEL_NNZ) reduction(min : first)
        for (gs_int i = 0; i < n; i++) {
            for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
                const gs_int j = A->colind[p];
                if (j > i && find_in_row(A, j, i) < 0 && pair_differs(entry_value(A, p), 0.0, tol)) {
                    const int64_t key = pair_key(i, j);
                    if (key < first) first = key;
                    break; /* later columns give larger keys */
                }
            }
        }
    }
    out->first = want_first ? first : SYM_NO_KEY;
}

gs_status gs_csr_symmetry(const gs_csr *A, double rel_tol, bool *structural, bool *numerical)
{
    gs_csr AT = {0};
    bool s = A->nrows == A->ncols, num = s;
    sym_scan scan = {0};
    if (s) symmetry_scan(A, rel_tol, false, &scan);
    if (s && scan.sorted) {
        s = scan.structural;
        num = scan.numerical;
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

/* Unsorted rows: merge each row of A with the same row of A^T (the mirrors), in stored order. */
static gs_status first_asymmetry_by_transpose(const gs_csr *A, double tol, gs_csr_asymmetry *first)
{
    gs_csr AT = {0};
    GS_CALL(gs_csr_transpose(A, &AT));
    for (gs_int i = 0; i < A->nrows && !first->found; i++) {
        gs_int p = A->rowptr[i], pe = A->rowptr[i + 1], q = AT.rowptr[i], qe = AT.rowptr[i + 1];
        while ((p < pe || q < qe) && !first->found) {
            gs_int cj = p < pe ? A->colind[p] : GS_INT_MAX;
            gs_int ct = q < qe ? AT.colind[q] : GS_INT_MAX;
            gs_int j = cj < ct ? cj : ct;
            double x = cj == j ? entry_value(A, p++) : 0.0;  /* a_ij */
            double y = ct == j ? entry_value(&AT, q++) : 0.0; /* (A^T)_ij = a_ji */
            if (pair_differs(x, y, tol)) {
                first->found = true;
                first->i = i;
                first->j = j;
                first->aij = x;
                first->aji = y;
            }
        }
    }
    gs_csr_free(&AT);
    return GS_OK;
}

gs_status gs_csr_find_asymmetry(const gs_csr *A, double rel_tol, bool *numerical, gs_csr_asymmetry *first)
{
    sym_scan scan = {0};
    memset(first, 0, sizeof *first);
    first->i = first->j = -1;
    *numerical = false;
    if (A->nrows != A->ncols) return GS_OK; /* no mirror to compare with */
    symmetry_scan(A, rel_tol, true, &scan);
    if (!scan.sorted) {
        GS_CALL(gs_csr_symmetry(A, rel_tol, NULL, numerical));
        return first_asymmetry_by_transpose(A, rel_tol, first);
    }
    *numerical = scan.numerical;
    if (scan.first != SYM_NO_KEY) {
        const gs_int i = (gs_int)(scan.first >> 32), j = (gs_int)(scan.first & 0xffffffff);
        const gs_int p = find_in_row(A, i, j), q = find_in_row(A, j, i);
        first->found = true;
        first->i = i;
        first->j = j;
        first->aij = p < 0 ? 0.0 : entry_value(A, p);
        first->aji = q < 0 ? 0.0 : entry_value(A, q);
    }
    return GS_OK;
}

/* Rows sorted independently, as gs_csr_permute sorts its output: rows of up to 64 entries by insertion in
 * parallel, longer rows one by one by qsort on one buffer. */
gs_status gs_csr_sort_rows(gs_csr *A)
{
    gs_int maxlen = 0;
    col_val *tmp = NULL;
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int len = A->rowptr[i + 1] - A->rowptr[i];
        if (len > maxlen) maxlen = len;
    }
    if (maxlen > 64) GS_CALL(GS_MALLOC(tmp, maxlen));
#pragma omp parallel for schedule(dynamic, 1024) if (A->nnz > 100000)
    for (gs_int i = 0; i < A->nrows; i++) {
        gs_int s = A->rowptr[i], len = A->rowptr[i + 1] - s;
        if (len <= 64) sort_row(A->colind + s, A->val ? A->val + s : NULL, len);
    }
    for (gs_int i = 0; tmp && i < A->nrows; i++) {
        gs_int s = A->rowptr[i], len = A->rowptr[i + 1] - s;
        if (len > 64) sort_row_long(A->colind + s, A->val ? A->val + s : NULL, len, tmp);
    }
    gs_free(&tmp);
    return GS_OK;
}
