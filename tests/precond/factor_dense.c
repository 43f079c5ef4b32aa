/* Dense reference factorizations for the ILU-family tests (see factor_dense.h). */
#include "factor_dense.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "core/mem.h"

double *dense_from_csr(const gs_csr *A)
{
    int n = A->nrows;
    double *a = calloc((size_t)n * (size_t)n, sizeof *a);
    assert_non_null(a);
    for (int i = 0; i < n; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) a[(size_t)i * n + A->colind[p]] = A->val[p];
    return a;
}

void dense_lu(int n, double *a)
{
    for (int k = 0; k < n; k++)
        for (int i = k + 1; i < n; i++) {
            a[i * n + k] /= a[k * n + k];
            for (int j = k + 1; j < n; j++) a[i * n + j] -= a[i * n + k] * a[k * n + j];
        }
}

bool dense_cholesky(int n, double *a)
{
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++) d -= a[j * n + k] * a[j * n + k];
        if (d <= 0) return false;
        a[j * n + j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double s = a[i * n + j];
            for (int k = 0; k < j; k++) s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / a[j * n + j];
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) a[i * n + j] = 0.0;
    return true;
}

void dense_iluk_mask(const gs_csr *A, int k, bool *mask)
{
    int n = A->nrows;
    const int inf = 1 << 28;
    int *lev = malloc((size_t)n * n * sizeof *lev);
    assert_non_null(lev);
    for (int i = 0; i < n * n; i++) lev[i] = inf;
    for (int i = 0; i < n; i++) {
        lev[i * n + i] = 0;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) lev[i * n + A->colind[p]] = 0;
    }
    for (int c = 0; c < n; c++)
        for (int i = c + 1; i < n; i++) {
            if (lev[i * n + c] > k) continue;
            for (int j = c + 1; j < n; j++) {
                if (lev[c * n + j] > k) continue;
                int l = lev[i * n + c] + lev[c * n + j] + 1;
                if (l < lev[i * n + j]) lev[i * n + j] = l;
            }
        }
    for (int i = 0; i < n * n; i++) mask[i] = lev[i] <= k;
    free(lev);
}

void dense_ilu_masked(int n, double *a, const bool *mask)
{
    for (int i = 0; i < n * n; i++)
        if (!mask[i]) a[i] = 0.0;
    for (int k = 0; k < n; k++)
        for (int i = k + 1; i < n; i++) {
            if (!mask[i * n + k]) continue;
            a[i * n + k] /= a[k * n + k];
            for (int j = k + 1; j < n; j++)
                if (mask[i * n + j]) a[i * n + j] -= a[i * n + k] * a[k * n + j];
        }
}

/* index of the largest |w[j]| among cols (ties: smaller column) */
static int pick_largest(const double *w, const bool *take, int lo, int hi)
{
    int best = -1;
    for (int j = lo; j < hi; j++)
        if (take[j] && (best < 0 || fabs(w[j]) > fabs(w[best]))) best = j;
    return best;
}

bool dense_ilut(int n, double *a, double tau, int p)
{
    double *w = malloc((size_t)n * sizeof *w);
    bool *take = malloc((size_t)n * sizeof *take), *keep = malloc((size_t)n * sizeof *keep);
    assert_non_null(w);
    assert_non_null(take);
    assert_non_null(keep);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        double nrm = 0.0;
        for (int j = 0; j < n; j++) {
            w[j] = a[i * n + j];
            nrm += w[j] * w[j];
        }
        double t = tau * sqrt(nrm);
        for (int k = 0; k < i; k++) {
            if (w[k] == 0.0) continue;
            w[k] /= a[k * n + k];
            if (fabs(w[k]) < t) {
                w[k] = 0.0;
                continue;
            }
            for (int j = k + 1; j < n; j++) w[j] -= w[k] * a[k * n + j];
        }
        for (int j = 0; j < n; j++) take[j] = j != i && w[j] != 0.0 && fabs(w[j]) >= t;
        memset(keep, 0, (size_t)n * sizeof *keep);
        for (int c = 0; c < p; c++) { /* p largest of L part, then of U part */
            int b = pick_largest(w, take, 0, i);
            if (b < 0) break;
            keep[b] = true;
            take[b] = false;
        }
        for (int c = 0; c < p; c++) {
            int b = pick_largest(w, take, i + 1, n);
            if (b < 0) break;
            keep[b] = true;
            take[b] = false;
        }
        keep[i] = true;
        for (int j = 0; j < n; j++) a[i * n + j] = keep[j] ? w[j] : 0.0;
        if (a[i * n + i] == 0.0) ok = false;
    }
    free(w);
    free(take);
    free(keep);
    return ok;
}

bool csr_has(const gs_csr *A, gs_int i, gs_int j)
{
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->colind[p] == j) return true;
    return false;
}

double csr_get(const gs_csr *A, gs_int i, gs_int j)
{
    for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
        if (A->colind[p] == j) return A->val ? A->val[p] : 1.0;
    return 0.0;
}

double dense_max_abs(int n, const double *a)
{
    double m = 0.0;
    for (int i = 0; i < n * n; i++)
        if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

void make_tridiag(gs_int n, double sub, double diag, double super, gs_csr *A)
{
    gs_int *ri = malloc(3 * (size_t)n * sizeof *ri), *ci = malloc(3 * (size_t)n * sizeof *ci), k = 0;
    double *v = malloc(3 * (size_t)n * sizeof *v);
    assert_non_null(ri);
    assert_non_null(ci);
    assert_non_null(v);
    for (gs_int i = 0; i < n; i++) {
        if (i > 0) { ri[k] = i; ci[k] = i - 1; v[k++] = sub; }
        ri[k] = i; ci[k] = i; v[k++] = diag + 0.01 * (i % 7); /* not Toeplitz */
        if (i + 1 < n) { ri[k] = i; ci[k] = i + 1; v[k++] = super; }
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, A));
    free(ri);
    free(ci);
    free(v);
}

void make_random_spd(gs_int n, int per_row, unsigned long long seed, gs_csr *A)
{
    size_t cap = 2 * (size_t)n * (size_t)per_row + (size_t)n;
    gs_int *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci), k = 0;
    double *v = malloc(cap * sizeof *v), *rs = calloc((size_t)n, sizeof *rs);
    assert_non_null(ri);
    assert_non_null(ci);
    assert_non_null(v);
    assert_non_null(rs);
    uint64_t s = seed * 7919u + 3;
    for (gs_int i = 0; i < n; i++)
        for (int t = 0; t < per_row; t++) {
            gs_int j = (gs_int)(gs_test_rand(&s) * n);
            if (j >= n) j = n - 1;
            if (j == i) continue;
            double x = gs_test_rand(&s) - 0.5;
            ri[k] = i; ci[k] = j; v[k++] = x;
            ri[k] = j; ci[k] = i; v[k++] = x;
            rs[i] += fabs(x);
            rs[j] += fabs(x);
        }
    for (gs_int i = 0; i < n; i++) { ri[k] = i; ci[k] = i; v[k++] = 1.1 * rs[i] + 0.5; }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, k, ri, ci, v, A));
    free(ri);
    free(ci);
    free(v);
    free(rs);
}
