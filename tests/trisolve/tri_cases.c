/* Builds the triangular test factors of tri_cases.h. */
#include "tri_cases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/trisolve_impl.h"

gs_status tri_from_matrix(const gs_csr *A, gs_uplo uplo, bool unit, gs_csr *T)
{
    gs_status st = GS_OK;
    gs_int n = A->nrows, nnz = 0;
    memset(T, 0, sizeof *T);
    for (gs_int i = 0; i < n; i++) {
        for (gs_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            gs_int j = A->colind[q];
            if ((uplo == GS_LOWER && j < i) || (uplo == GS_UPPER && j > i)) nnz++;
        }
        if (!unit) nnz++;
    }
    GS_TRY(gs_csr_alloc(T, n, n, nnz, true));
    gs_int k = 0;
    for (gs_int i = 0; i < n; i++) {
        double sum = 0.0, aii = 0.0;
        for (gs_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            gs_int j = A->colind[q];
            if (j == i) aii = A->val ? A->val[q] : 1.0;
            else if ((uplo == GS_LOWER && j < i) || (uplo == GS_UPPER && j > i))
                sum += fabs(A->val ? A->val[q] : 1.0);
        }
        double scale = (unit && sum > 0.5) ? 0.5 / sum : 1.0;
        double diag = (aii < 0 ? -1.0 : 1.0) * (sum + (fabs(aii) > 1.0 ? fabs(aii) : 1.0));
        T->rowptr[i] = k;
        if (!unit && uplo == GS_UPPER) {
            T->colind[k] = i;
            T->val[k++] = diag;
        }
        for (gs_int q = A->rowptr[i]; q < A->rowptr[i + 1]; q++) {
            gs_int j = A->colind[q];
            if ((uplo == GS_LOWER && j < i) || (uplo == GS_UPPER && j > i)) {
                T->colind[k] = j;
                T->val[k++] = scale * (A->val ? A->val[q] : 1.0);
            }
        }
        if (!unit && uplo == GS_LOWER) {
            T->colind[k] = i;
            T->val[k++] = diag;
        }
    }
    T->rowptr[n] = k;
cleanup:
    if (st != GS_OK) gs_csr_free(T);
    return st;
}

gs_status tri_random(gs_int n, int per_row, gs_uplo uplo, bool unit, uint64_t seed, gs_csr *T)
{
    gs_status st = GS_OK;
    gs_csr A = {0};
    gs_int *ri = NULL, *ci = NULL, cnt = 0;
    double *v = NULL;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    size_t cap = (size_t)n * (size_t)(2 * per_row + 1) + (size_t)n;
    GS_TRY(GS_MALLOC(ri, cap));
    GS_TRY(GS_MALLOC(ci, cap));
    GS_TRY(GS_MALLOC(v, cap));
    gs_int dense = n / 2;
    for (gs_int i = 0; i < n; i++) {
        gs_int lo = uplo == GS_LOWER ? 0 : i + 1, hi = uplo == GS_LOWER ? i : n; /* columns [lo, hi) */
        if (hi <= lo || i % 17 == 5) continue;                                /* no dependencies */
        if (i == dense) {
            for (gs_int j = lo; j < hi; j++) {
                ri[cnt] = i;
                ci[cnt] = j;
                v[cnt++] = 2.0 * gs_test_rand(&s) - 1.0;
            }
            continue;
        }
        int k = (int)(gs_test_rand(&s) * (2 * per_row + 1));
        for (int t = 0; t < k; t++) {
            /* mostly near the diagonal (banded, many levels), sometimes far (long-range dependencies) */
            gs_int j;
            if (gs_test_rand(&s) < 0.7) {
                gs_int off = 1 + (gs_int)(gs_test_rand(&s) * 40);
                j = uplo == GS_LOWER ? i - off : i + off;
                if (j < lo) j = lo;
                if (j >= hi) j = hi - 1;
            } else {
                j = lo + (gs_int)(gs_test_rand(&s) * (hi - lo));
                if (j >= hi) j = hi - 1;
            }
            ri[cnt] = i;
            ci[cnt] = j;
            v[cnt++] = 2.0 * gs_test_rand(&s) - 1.0;
        }
    }
    GS_TRY(gs_csr_from_coo(n, n, cnt, ri, ci, v, &A)); /* duplicates summed */
    GS_TRY(tri_from_matrix(&A, uplo, unit, T));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&A);
    return st;
}

void tri_rhs(gs_int n, uint64_t seed, double *b)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 3;
    for (gs_int i = 0; i < n; i++) b[i] = 2.0 * gs_test_rand(&s) - 1.0;
}

double tri_residual(const gs_csr *T, bool unit, const double *x, const double *b)
{
    double rmax = 0.0, tnorm = 0.0, xmax = 0.0, bmax = 0.0;
    for (gs_int i = 0; i < T->nrows; i++) {
        double s = unit ? x[i] : 0.0, rowabs = unit ? 1.0 : 0.0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            s += T->val[q] * x[T->colind[q]];
            rowabs += fabs(T->val[q]);
        }
        if (isnan(s)) return INFINITY;
        if (fabs(s - b[i]) > rmax) rmax = fabs(s - b[i]);
        if (rowabs > tnorm) tnorm = rowabs;
        if (fabs(x[i]) > xmax) xmax = fabs(x[i]);
        if (fabs(b[i]) > bmax) bmax = fabs(b[i]);
    }
    double den = tnorm * xmax + bmax;
    return rmax / (den > 0 ? den : 1.0);
}

/* ------------------------------------------------------------------------------------------------ */

gs_status tri_suite_add(tri_suite *S, const char *name, gs_uplo uplo, bool unit, gs_csr *T)
{
    if (S->n == S->cap) {
        int cap = S->cap ? 2 * S->cap : 32;
        GS_CALL(gs_realloc(&S->c, (size_t)cap, sizeof *S->c));
        S->cap = cap;
    }
    tri_case *c = &S->c[S->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s/%s/%s", name, uplo == GS_LOWER ? "lower" : "upper",
             unit ? "unit" : "nonunit");
    c->uplo = uplo;
    c->unit = unit;
    c->T = *T; /* ownership moves */
    memset(T, 0, sizeof *T);
    return GS_OK;
}

/* Both sides and both diagonal kinds of a square A. */
static gs_status push_triangles(tri_suite *S, const char *name, const gs_csr *A)
{
    gs_status st = GS_OK;
    gs_csr T = {0};
    for (int side = 0; side < 2; side++)
        for (int unit = 0; unit < 2; unit++) {
            GS_TRY(tri_from_matrix(A, (gs_uplo)side, unit != 0, &T));
            GS_TRY(tri_suite_add(S, name, (gs_uplo)side, unit != 0, &T));
        }
cleanup:
    gs_csr_free(&T);
    return st;
}

/* A bidiagonal factor: a single chain of n levels. */
static gs_status bidiagonal(gs_int n, gs_uplo uplo, bool unit, gs_csr *T)
{
    gs_status st = GS_OK;
    gs_int nnz = (n - 1) + (unit ? 0 : n), k = 0;
    GS_TRY(gs_csr_alloc(T, n, n, nnz, true));
    for (gs_int i = 0; i < n; i++) {
        T->rowptr[i] = k;
        if (uplo == GS_LOWER && i > 0) {
            T->colind[k] = i - 1;
            T->val[k++] = unit ? -0.5 : -1.0;
        }
        if (!unit) {
            T->colind[k] = i;
            T->val[k++] = 2.0 + (i % 3);
        }
        if (uplo == GS_UPPER && i < n - 1) {
            T->colind[k] = i + 1;
            T->val[k++] = unit ? 0.5 : 1.0;
        }
    }
    T->rowptr[n] = k;
cleanup:
    return st;
}

/* Diagonal factor (one level of n rows); unit: the identity with no stored entry. */
static gs_status diagonal(gs_int n, bool unit, gs_csr *T)
{
    gs_status st = GS_OK;
    GS_TRY(gs_csr_alloc(T, n, n, unit ? 0 : n, true));
    for (gs_int i = 0; i < n; i++) {
        T->rowptr[i] = unit ? 0 : i;
        if (!unit) {
            T->colind[i] = i;
            T->val[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (double)(i % 7) / 7.0);
        }
    }
    T->rowptr[n] = unit ? 0 : n;
cleanup:
    return st;
}

/* Lower factor of two levels wider than a GPU solver's whole grid (132 SMs x 1024 threads on an H100):
 * rows 0 .. half-1 independent, each row i >= half reading rows i - half and (7 i) mod half. */
static gs_status two_wide_levels(gs_int half, gs_csr *T)
{
    gs_status st = GS_OK;
    gs_int n = 2 * half + 1, nnz = half + 3 * (half + 1), q = 0;
    GS_TRY(gs_csr_alloc(T, n, n, nnz, true));
    for (gs_int i = 0; i < n; i++) {
        T->rowptr[i] = q;
        if (i >= half) {
            gs_int j1 = i - half, j2 = (gs_int)((7 * (int64_t)i) % half);
            if (j2 == j1) j2 = (j1 + 1) % half;
            T->colind[q] = j1 < j2 ? j1 : j2;
            T->val[q++] = 0.25;
            T->colind[q] = j1 < j2 ? j2 : j1;
            T->val[q++] = -0.5;
        }
        T->colind[q] = i;
        T->val[q++] = 2.0 + (double)(i % 5) / 5.0;
    }
    T->rowptr[n] = q;
cleanup:
    return st;
}

/* Lower factor mixing wide and thin levels: 3000 independent rows (one wide level), a chain of 1000
 * rows (133 under the sanitizers) each also reading a random early row, 2000 rows hanging off the chain (thin levels), then
 * 1001 rows all reading the last row (one more wide level). */
static gs_status mixed_lower(gs_csr *T)
{
    gs_status st = GS_OK;
    gs_csr A = {0};
    const gs_int chain = gs_test_quick() ? 133 : 1000; /* sanitizers: fewer levels (a launch per level) */
    gs_int n = 3000 + chain + 3001, cnt = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    uint64_t s = 12345;
    GS_TRY(GS_MALLOC(ri, 2 * (size_t)n));
    GS_TRY(GS_MALLOC(ci, 2 * (size_t)n));
    GS_TRY(GS_MALLOC(v, 2 * (size_t)n));
    for (gs_int i = 3000; i < n; i++) {
        gs_int j1, j2;
        if (i < 3000 + chain) {
            j1 = i - 1;
            j2 = (gs_int)(gs_test_rand(&s) * 3000);
        } else if (i < 5000 + chain) {
            j1 = 3000 + (gs_int)(gs_test_rand(&s) * (double)chain);
            j2 = (gs_int)(gs_test_rand(&s) * 3000);
        } else {
            j1 = 4999 + chain;
            j2 = (gs_int)(gs_test_rand(&s) * 3000);
        }
        ri[cnt] = i;
        ci[cnt] = j1;
        v[cnt++] = gs_test_rand(&s) - 0.5;
        ri[cnt] = i;
        ci[cnt] = j2;
        v[cnt++] = gs_test_rand(&s) - 0.5;
    }
    GS_TRY(gs_csr_from_coo(n, n, cnt, ri, ci, v, &A));
    GS_TRY(tri_from_matrix(&A, GS_LOWER, false, T));
cleanup:
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&A);
    return st;
}

gs_status tri_suite_build(tri_suite *S, bool with_real)
{
    gs_status st = GS_OK;
    gs_csr T = {0}, A = {0};
    memset(S, 0, sizeof *S);

    static const gs_int rsizes[] = {1000, 4099};
    for (int r = 0; r < (gs_test_quick() ? 1 : 2); r++) /* sanitizers: n = 1000 only */
        for (int side = 0; side < 2; side++)
            for (int unit = 0; unit < 2; unit++) {
                char name[32];
                snprintf(name, sizeof name, "random%d", (int)rsizes[r]);
                GS_TRY(tri_random(rsizes[r], 5, (gs_uplo)side, unit != 0, 17 + 4 * r + 2 * side + unit, &T));
                GS_TRY(tri_suite_add(S, name, (gs_uplo)side, unit != 0, &T));
            }
    for (int side = 0; side < 2; side++)
        for (int unit = 0; unit < 2; unit++) {
            /* sanitizers: a launch per level (racecheck, the slowest, 45 levels) */
            const gs_int chain = gs_test_quick() >= 2 ? 45 : gs_test_quick() ? 133 : 5000;
            char name[32];
            snprintf(name, sizeof name, "bidiagonal%d", (int)chain);
            GS_TRY(bidiagonal(chain, (gs_uplo)side, unit != 0, &T));
            GS_TRY(tri_suite_add(S, name, (gs_uplo)side, unit != 0, &T));
        }
    GS_TRY(diagonal(1000, false, &T));
    GS_TRY(tri_suite_add(S, "diagonal1000", GS_LOWER, false, &T));
    GS_TRY(diagonal(1000, false, &T));
    GS_TRY(tri_suite_add(S, "diagonal1000", GS_UPPER, false, &T));
    GS_TRY(diagonal(777, true, &T));
    GS_TRY(tri_suite_add(S, "identity777", GS_UPPER, true, &T));
    GS_TRY(diagonal(33, true, &T));
    GS_TRY(tri_suite_add(S, "identity33", GS_LOWER, true, &T));
    GS_TRY(mixed_lower(&T));
    {
        char name[32];
        snprintf(name, sizeof name, "mixed%d", (int)T.nrows);
        GS_TRY(tri_suite_add(S, name, GS_LOWER, false, &T));
    }
    if (!gs_test_quick()) { /* sanitizers: left out (the largest case) */
        GS_TRY(two_wide_levels(150000, &T));
        GS_TRY(tri_suite_add(S, "twolevels300001", GS_LOWER, false, &T));
    }

    GS_TRY(gs_gen_poisson3d(17, 13, 11, &A));
    GS_TRY(push_triangles(S, "poisson3d_17x13x11", &A));
    gs_csr_free(&A);

    if (with_real && gs_test_quick() < 2) {
        static const char *const names[] = {"sherman1.mtx", "orsirr_1.mtx", "west0497.mtx", "662_bus.mtx",
                                            "gr_30_30.mtx", "plat1919.mtx.gz"};
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            GS_TRY(gs_test_load(names[k], &A));
            GS_TRY(push_triangles(S, names[k], &A));
            gs_csr_free(&A);
        }
    }
cleanup:
    gs_csr_free(&T);
    gs_csr_free(&A);
    if (st != GS_OK) tri_suite_free(S);
    return st;
}

void tri_suite_free(tri_suite *S)
{
    for (int k = 0; k < S->n; k++) gs_csr_free(&S->c[k].T);
    gs_free(&S->c);
    S->n = S->cap = 0;
}

double tri_iteration_norm(const gs_csr *T, bool unit)
{
    double rho = 0.0;
    for (gs_int i = 0; i < T->nrows; i++) {
        double off = 0.0, d = 1.0;
        for (gs_int q = T->rowptr[i]; q < T->rowptr[i + 1]; q++) {
            if (T->colind[q] == i) d = fabs(T->val[q]);
            else off += fabs(T->val[q]);
        }
        if (unit) d = 1.0;
        if (off / d > rho) rho = off / d;
    }
    return rho;
}

double tri_max_diff(gs_int n, const double *x, const double *y)
{
    double m = 0.0;
    for (gs_int i = 0; i < n; i++) {
        double d = fabs(x[i] - y[i]);
        if (isnan(d)) return INFINITY;
        if (d > m) m = d;
    }
    return m;
}

double tri_max_abs(gs_int n, const double *x)
{
    double m = 0.0;
    for (gs_int i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

gs_trisolve_params tri_params(int sweeps, const char *order, bool deterministic, bool single)
{
    gs_trisolve_params p = gs_trisolve_params_default();
    p.sweeps = sweeps;
    p.block_order = order;
    p.deterministic = deterministic;
    p.single = single;
    return p;
}

void tri_params_apply(gs_trisolve_params *p, const char *list)
{
    char buf[512];
    if (!list || !list[0]) return;
    assert_true(strlen(list) < sizeof buf);
    snprintf(buf, sizeof buf, "%s", list);
    for (char *item = buf, *next; item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = '\0';
        GS_ASSERT_OK(gs_trisolve_params_set(p, item, NULL));
    }
}

int tri_backends_create(gs_backend **gpu, gs_backend **host)
{
    if (gs_backend_create("cuda", 0, gpu) != GS_OK) {
        gs_error_print(stderr);
        return -1;
    }
    return gs_backend_create("host", 0, host) == GS_OK ? 0 : -1;
}

void tri_backends_destroy(gs_backend **gpu, gs_backend **host)
{
    gs_backend_destroy(gpu);
    gs_backend_destroy(host);
}

void tri_host_solve(gs_backend *host, const char *type, const gs_csr *T, gs_uplo uplo, bool unit,
                    const gs_trisolve_params *prm, const double *b, double *x)
{
    gs_trisolve *ts = NULL;
    gs_vector *vb = NULL, *vx = NULL;
    GS_ASSERT_OK(gs_trisolve_create(type, host, uplo, unit, prm, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, T));
    GS_ASSERT_OK(gs_vec_create(host, T->nrows, &vb));
    GS_ASSERT_OK(gs_vec_create(host, T->nrows, &vx));
    GS_ASSERT_OK(gs_vec_upload(vb, b));
    gs_test_poison(T->nrows, vx->data);
    GS_ASSERT_OK(gs_trisolve_solve(ts, vb, vx));
    GS_ASSERT_OK(gs_vec_download(vx, x));
    gs_vec_destroy(&vb);
    gs_vec_destroy(&vx);
    gs_trisolve_destroy(&ts);
    assert_null(ts);
}

void tri_gpu_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x, double *hx, const double *poison)
{
    GS_ASSERT_OK(gs_vec_upload(x, poison));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    GS_ASSERT_OK(gs_vec_download(x, hx));
}

void tri_check_reanalyse(gs_backend *be, const char *type, gs_uplo uplo, double tol)
{
    gs_csr T = {0}, T2 = {0};
    GS_ASSERT_OK(tri_random(1000, 5, uplo, false, 3, &T));
    GS_ASSERT_OK(tri_random(777, 3, uplo, false, 4, &T2));
    gs_trisolve *ts = NULL;
    gs_vector *b = NULL, *x = NULL, *y = NULL;
    GS_ASSERT_OK(gs_vec_create(be, 1000, &b));
    GS_ASSERT_OK(gs_vec_create(be, 1000, &x));
    GS_ASSERT_OK(gs_vec_create(be, 1000, &y));
    tri_rhs(1000, 1, b->data);
    GS_ASSERT_OK(gs_trisolve_create(type, be, uplo, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    for (gs_int q = 0; q < T.nnz; q++) T.val[q] *= 2.0; /* x halves (exactly: powers of two) */
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, y));
    for (gs_int i = 0; i < 1000; i++) {
        if (tol == 0.0) assert_true(y->data[i] == 0.5 * x->data[i]);
        else assert_true(fabs(y->data[i] - 0.5 * x->data[i]) <= tol * (1 + fabs(x->data[i])));
    }
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T2));
    assert_int_equal(ts->n, 777);
    GS_ASSERT_FAILS(gs_trisolve_solve(ts, b, x), GS_ERR_ARG, "the factor has 777 rows");
    gs_trisolve_destroy(&ts);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_vec_destroy(&y);
    gs_csr_free(&T);
    gs_csr_free(&T2);
}

void tri_check_alloc_failures(gs_backend *be, const char *type, const gs_csr *T, gs_uplo uplo, bool unit,
                              int min_failures)
{
    gs_int n = T->nrows;
    gs_trisolve *ts = NULL;
    GS_ASSERT_OK(gs_trisolve_create(type, be, uplo, unit, NULL, &ts));
    int failures = 0;
    for (long k = 1; k < 1000; k++) {
        gs_error_clear();
        gs_alloc_fail_at(k);
        gs_status st = gs_trisolve_analyse(ts, T);
        gs_alloc_fail_at(0);
        if (st == GS_OK) break;
        assert_int_equal(st, GS_ERR_MEM);
        assert_false(ts->analysed);
        failures++;
    }
    gs_error_clear();
    assert_true(failures >= min_failures);
    assert_true(ts->analysed);
    gs_vector *b = NULL, *x = NULL;
    GS_ASSERT_OK(gs_vec_create(be, n, &b));
    GS_ASSERT_OK(gs_vec_create(be, n, &x));
    GS_ASSERT_OK(gs_vec_set(b, 1.0));
    GS_ASSERT_OK(gs_trisolve_solve(ts, b, x));
    assert_true(tri_residual(T, unit, x->data, b->data) < 1e-14);
    gs_vec_destroy(&b);
    gs_vec_destroy(&x);
    gs_trisolve_destroy(&ts);
}
