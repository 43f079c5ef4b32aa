/* Test matrices shared by the ParILU host and GPU tests (see parilu_cases.h). */
#include <string.h>

#include "testutil.h"

#include "core/mem.h"
#include "parilu_cases.h"

void parilu_awkward_matrix(gs_csr *A)
{
    gs_csr B = {0};
    GS_ASSERT_OK(gs_test_convdiff2d(31, 29, 0.8, &B));
    const gs_int n = B.nrows, r0 = 200, r1 = 517, nd0 = 333, nd1 = 640;
    gs_int cap = B.nnz + n + 8, q = 0;
    gs_int *ri = NULL, *ci = NULL;
    double *v = NULL;
    GS_ASSERT_OK(GS_MALLOC(ri, cap));
    GS_ASSERT_OK(GS_MALLOC(ci, cap));
    GS_ASSERT_OK(GS_MALLOC(v, cap));
    for (gs_int i = 0; i < n; i++) {
        if (i == r0) continue;
        if (i == r1) {
            for (gs_int j = 0; j < n; j++) {
                if (j == r0) continue;
                ri[q] = i;
                ci[q] = j;
                v[q++] = j == i ? 2.0 * n : -1.0 / (1.0 + j % 7);
            }
            continue;
        }
        for (gs_int p = B.rowptr[i]; p < B.rowptr[i + 1]; p++) {
            gs_int j = B.colind[p];
            if (j == r0) continue;
            if ((i == nd0 || i == nd1) && j == i) continue;
            ri[q] = i;
            ci[q] = j;
            v[q++] = B.val[p];
        }
    }
    GS_ASSERT_OK(gs_csr_from_coo(n, n, q, ri, ci, v, A));
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_csr_free(&B);
}

void parilu_singular_tail(gs_int nx, gs_int ny, gs_csr *A)
{
    gs_csr L2 = {0};
    GS_ASSERT_OK(gs_test_laplace2d(nx, ny, &L2));
    gs_int n = L2.nrows + 2;
    GS_ASSERT_OK(gs_csr_alloc(A, n, n, L2.nnz + 4, true));
    memcpy(A->rowptr, L2.rowptr, ((size_t)L2.nrows + 1) * sizeof(gs_int));
    memcpy(A->colind, L2.colind, (size_t)L2.nnz * sizeof(gs_int));
    memcpy(A->val, L2.val, (size_t)L2.nnz * sizeof(double));
    gs_int q = L2.nnz;
    for (gs_int i = L2.nrows; i < n; i++) {
        for (gs_int j = L2.nrows; j < n; j++) {
            A->colind[q] = j;
            A->val[q++] = 1.0;
        }
        A->rowptr[i + 1] = q;
    }
    gs_csr_free(&L2);
}

void parilu_overflow_tail(bool in_u, gs_csr *A)
{
    gs_csr B = {0};
    GS_ASSERT_OK(gs_test_laplace2d(7, 5, &B));
    const gs_int m = B.nrows, n = m + 3;
    /* the tail's rows as (column offset, value) lists, -1 ending a row */
    static const int cols_l[3][4] = {{0, 1, -1}, {0, 1, -1}, {1, 2, -1}};
    static const int cols_u[3][4] = {{0, 2, -1}, {0, 1, 2, -1}, {2, -1}};
    const double vals_l[3][3] = {{1.0, 1.0}, {1.0 - 0x1p-50, 1.0}, {1e300, 1.0}};
    const double vals_u[3][3] = {{1.0, 1e300}, {1e10, 1.0, 1.0}, {1.0}};
    GS_ASSERT_OK(gs_csr_alloc(A, n, n, B.nnz + 7, true));
    memcpy(A->rowptr, B.rowptr, ((size_t)m + 1) * sizeof(gs_int));
    memcpy(A->colind, B.colind, (size_t)B.nnz * sizeof(gs_int));
    memcpy(A->val, B.val, (size_t)B.nnz * sizeof(double));
    gs_int q = B.nnz;
    for (int r = 0; r < 3; r++) {
        const int *c = in_u ? cols_u[r] : cols_l[r];
        const double *v = in_u ? vals_u[r] : vals_l[r];
        for (int k = 0; c[k] >= 0; k++) {
            A->colind[q] = m + c[k];
            A->val[q++] = v[k];
        }
        A->rowptr[m + r + 1] = q;
    }
    A->nnz = q;
    gs_csr_free(&B);
}
