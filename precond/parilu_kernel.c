/* ParILU / ParIC kernels on a backend (precond/parilu.h): the arrays one sweep and the unscaling read,
 * resident on the backend, and the dispatch of a sweep and of the unscaling to the host twin
 * (parilu_ref.c) or the CUDA one (parilu_cuda.cu) by the backend's kind. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "precond/parilu.h"

/* ------------------------------------------------------------------------------------------------ */
/* Kernel arrays on a backend                                                                       */

static gs_status upload_ints(gs_backend *be, gs_int **dst, const gs_int *src, size_t count)
{
    void *p = NULL;
    GS_CALL(gs_backend_alloc(be, &p, count * sizeof(gs_int)));
    *dst = p;
    if (count > 0) GS_CALL(gs_backend_upload(be, p, src, count * sizeof(gs_int)));
    return GS_OK;
}

void gs_parilu_free_array(gs_backend *be, void *pp)
{
    void **p = pp;
    if (*p) gs_backend_free(be, *p);
    *p = NULL;
}

void gs_parilu_kernel_free(gs_backend *be, gs_parilu_kernel *K)
{
    if (!K || !be) return;
    if (K->u_ptr == K->l_ptr) K->u_ptr = NULL; /* ParIC: shared with L */
    if (K->u_ind == K->l_ind) K->u_ind = NULL;
    gs_parilu_free_array(be, &K->l_ptr);
    gs_parilu_free_array(be, &K->l_ind);
    gs_parilu_free_array(be, &K->u_ptr);
    gs_parilu_free_array(be, &K->u_ind);
    gs_parilu_free_array(be, &K->task_row);
    gs_parilu_free_array(be, &K->task_col);
    gs_parilu_free_array(be, &K->task_dst);
    gs_parilu_free_array(be, &K->task_a);
    gs_parilu_free_array(be, &K->pivot_shift);
    gs_parilu_free_array(be, &K->shifted);
    gs_parilu_free_array(be, &K->flags);
    memset(K, 0, sizeof *K);
}

gs_status gs_parilu_kernel_create(gs_backend *be, const gs_parilu_plan *P, bool shift, gs_parilu_kernel *K)
{
    gs_status st = GS_OK;
    memset(K, 0, sizeof *K);
    const gs_int n = P->n;
    K->n = n;
    K->ntasks = P->ntasks;
    K->nnz_x = P->ntasks;
    K->u_off = P->symmetric ? 0 : P->nnz_l;
    K->symmetric = P->symmetric;
    K->shift = shift;
    GS_TRY(upload_ints(be, &K->l_ptr, P->L.rowptr, (size_t)n + 1));
    GS_TRY(upload_ints(be, &K->l_ind, P->L.colind, (size_t)P->L.nnz));
    if (P->symmetric) {
        K->u_ptr = K->l_ptr; /* column j of U = L^T is row j of L */
        K->u_ind = K->l_ind;
    } else {
        GS_TRY(upload_ints(be, &K->u_ptr, P->uc_ptr, (size_t)n + 1));
        GS_TRY(upload_ints(be, &K->u_ind, P->uc_ind, (size_t)P->nnz_u));
    }
    GS_TRY(upload_ints(be, &K->task_row, P->task_row, (size_t)P->ntasks));
    GS_TRY(upload_ints(be, &K->task_col, P->task_col, (size_t)P->ntasks));
    GS_TRY(upload_ints(be, &K->task_dst, P->task_dst, (size_t)P->ntasks));
    GS_TRY(gs_backend_alloc(be, (void **)&K->task_a, (size_t)P->ntasks * sizeof(double)));
    GS_TRY(gs_backend_alloc(be, (void **)&K->pivot_shift, (size_t)n * sizeof(double)));
    GS_TRY(gs_backend_alloc(be, (void **)&K->shifted, (size_t)n));
    GS_TRY(gs_backend_alloc(be, (void **)&K->flags, sizeof(gs_parilu_flags)));
cleanup:
    if (st != GS_OK) gs_parilu_kernel_free(be, K);
    return st;
}

gs_status gs_parilu_kernel_set(gs_backend *be, gs_parilu_kernel *K, const double *task_a, const double *pivot_shift)
{
    gs_status st = GS_OK;
    unsigned char *zeros = NULL;
    gs_parilu_flags f = {GS_PARILU_NO_ERROR, 0};
    if (K->ntasks > 0) GS_TRY(gs_backend_upload(be, K->task_a, task_a, (size_t)K->ntasks * sizeof(double)));
    if (K->n > 0) {
        GS_TRY(gs_backend_upload(be, K->pivot_shift, pivot_shift, (size_t)K->n * sizeof(double)));
        GS_TRY(GS_CALLOC(zeros, K->n));
        GS_TRY(gs_backend_upload(be, K->shifted, zeros, (size_t)K->n));
    }
    GS_TRY(gs_backend_upload(be, K->flags, &f, sizeof f));
cleanup:
    gs_free(&zeros);
    return st;
}

gs_status gs_parilu_sweep(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep)
{
    if (be->kind == GS_BACKEND_CUDA) return gs_parilu_sweep_cuda(be, K, in, out, sweep);
    return gs_parilu_sweep_ref(be, K, in, out, sweep);
}

void gs_parilu_factor_dev_free(gs_backend *be, gs_parilu_factor_dev *F)
{
    if (!F || !be) return;
    gs_parilu_free_array(be, &F->u_rowptr);
    gs_parilu_free_array(be, &F->u_colind);
    gs_parilu_free_array(be, &F->u_pos);
    gs_parilu_free_array(be, &F->sd);
    gs_parilu_free_array(be, &F->nonfinite);
    memset(F, 0, sizeof *F);
}

gs_status gs_parilu_factor_dev_create(gs_backend *be, const gs_parilu_plan *P, gs_parilu_factor_dev *F)
{
    gs_status st = GS_OK;
    gs_int *inv = NULL;
    memset(F, 0, sizeof *F);
    const gs_int n = P->n;
    F->n = n;
    F->nnz_L = P->L.nnz;
    F->nnz_U = P->U.nnz;
    GS_TRY(upload_ints(be, &F->u_rowptr, P->U.rowptr, (size_t)n + 1));
    GS_TRY(upload_ints(be, &F->u_colind, P->U.colind, (size_t)P->U.nnz));
    if (P->symmetric) {
        /* L's entry p is U's entry u_map[p] */
        GS_TRY(upload_ints(be, &F->u_pos, P->u_map, (size_t)P->L.nnz));
    } else {
        /* U's CSR entry q is x[nnz_l + u_map[q]]: invert the map */
        GS_TRY(GS_MALLOC(inv, P->U.nnz));
        for (gs_int q = 0; q < P->U.nnz; q++) inv[P->u_map[q]] = q;
        GS_TRY(upload_ints(be, &F->u_pos, inv, (size_t)P->U.nnz));
    }
    GS_TRY(gs_backend_alloc(be, (void **)&F->sd, (size_t)n * sizeof(double)));
    GS_TRY(gs_backend_alloc(be, (void **)&F->nonfinite, 2 * sizeof(unsigned)));
cleanup:
    gs_free(&inv);
    if (st != GS_OK) gs_parilu_factor_dev_free(be, F);
    return st;
}

gs_status gs_parilu_unscale_dev(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                const double *x, double *lval, double *uval)
{
    if (!be) return GS_ERROR(GS_ERR_ARG, "ParILU unscaling: no backend given");
    if (be->kind != GS_BACKEND_CUDA) {
        GS_CALL(gs_parilu_unscale_ref(be, K, F, x, lval, uval));
        return GS_OK;
    }
    /* the CUDA twin (parilu_cuda.cu; its stand-in without CUDA is in parilu_nocuda.c) */
    GS_CALL(gs_parilu_unscale_cuda(be, K, F, x, lval, uval));
    return GS_OK;
}

