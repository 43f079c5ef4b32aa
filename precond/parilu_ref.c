/* One ParILU/ParIC sweep on the host, and the unscaling of its values into the factors L and U, the
 * references the CUDA twins are compared with. The sweep: for every task
 * (i,j) of the list, equation (3) of the paper evaluated on the current values,
 *     l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj   (i > j),     u_ij = a_ij - sum_{k<i} l_ik u_kj   (i <= j)
 * (ParIC: u_kj = l_jk and l_ii = sqrt(a_ii - sum_{k<i} l_ik^2)), the sum taken over the k present in
 * both row i of L and column j of U (a merge of two sorted index lists, stopped at k = min(i,j)).
 *
 * Synchronous (in != out): every task reads the previous sweep only, so the tasks are independent and
 * run as one OpenMP loop (deterministic: each output is written by one task from the same inputs).
 * Asynchronous (in == out): one thread, tasks in list order, each reading the values written before
 * it in this sweep - Gauss-Seidel in the task order. With the forward (row-major, Gaussian
 * elimination) order one such sweep reproduces the exact ILU(0)/IC(0) on S: when task (i,j) runs,
 * every l_ik (k < j) of its row and every u_kj (k < min(i,j)) of its column is already final.
 *
 * The subtractions run in increasing k starting from a_ij, the order of the IKJ elimination in
 * precond/ilu_factor.c, so that one forward asynchronous sweep rounds like the classical ILU. */
#include <float.h>
#include <limits.h>
#include <math.h>

#include "precond/parilu.h"

/* Record a pivot that could not be used (the earliest sweep, then the lowest row, wins). */
static void record_bad(const gs_parilu_kernel *K, gs_int i, int sweep)
{
    unsigned long long key = (unsigned long long)sweep * (unsigned long long)K->n + (unsigned long long)i;
#pragma omp critical(gs_parilu_flags)
    {
        if (key < K->flags->first_bad) K->flags->first_bad = key;
    }
}

static void record_shift(const gs_parilu_kernel *K, gs_int i)
{
#pragma omp critical(gs_parilu_flags)
    {
        K->flags->shifts++;
        K->shifted[i] = 1;
    }
}

/* The diagonal task of row i from s = a_ii - sum_{k<i} l_ik u_ki: u_ii = s (ParILU) or l_ii = sqrt(s)
 * (ParIC). A zero / tiny (|s| < DBL_MIN; ParIC: s < DBL_MIN) or NaN pivot is replaced under the shift
 * policy (NaN never is) and otherwise recorded, the previous value `old` being kept so that no
 * division by it happens in later tasks. */
static double pivot(const gs_parilu_kernel *K, gs_int i, double s, double old, int sweep)
{
    if (K->symmetric) {
        if (s >= DBL_MIN) return sqrt(s);
    } else if (fabs(s) >= DBL_MIN) {
        return s;
    }
    if (K->shift && !isnan(s)) {
        record_shift(K, i);
        double r = K->pivot_shift[i];
        return K->symmetric ? sqrt(r) : (s < 0.0 ? -r : r);
    }
    record_bad(K, i, sweep);
    return old;
}

/* Equation (3) for task t on the values `in`. */
static double eval_task(const gs_parilu_kernel *K, gs_int t, const double *in, int sweep)
{
    const gs_int i = K->task_row[t], j = K->task_col[t];
    const gs_int m = i < j ? i : j;
    const double *xu = in + K->u_off;
    double s = K->task_a[t];
    gs_int p = K->l_ptr[i], pe = K->l_ptr[i + 1];
    gs_int q = K->u_ptr[j], qe = K->u_ptr[j + 1];
    while (p < pe && q < qe) {
        gs_int kl = K->l_ind[p], ku = K->u_ind[q];
        if (kl >= m || ku >= m) break;
        if (kl == ku) {
            s -= in[p] * xu[q];
            p++;
            q++;
        } else if (kl < ku) {
            p++;
        } else {
            q++;
        }
    }
    if (i > j) return s / xu[K->u_ptr[j + 1] - 1]; /* u_jj: last entry of column j, never tiny */
    if (i < j) return s;
    return pivot(K, i, s, in[K->task_dst[t]], sweep);
}

gs_status gs_parilu_sweep_ref(gs_backend *be, const gs_parilu_kernel *K, const double *in, double *out, int sweep)
{
    if (!be || be->kind != GS_BACKEND_HOST)
        return GS_ERROR(GS_ERR_ARG, "ParILU host sweep: the arrays must live on the host backend (got %s)",
                        be && be->name ? be->name : "none");
    if (!K || !in || !out) return GS_ERROR(GS_ERR_ARG, "ParILU host sweep: missing kernel arrays or values");
    const gs_int nt = K->ntasks;
    if (in == out) {
        for (gs_int t = 0; t < nt; t++) out[K->task_dst[t]] = eval_task(K, t, out, sweep);
    } else {
        /* threads only pay off beyond a few tens of thousands of tasks */
#pragma omp parallel for schedule(static) if (nt > 32768)
        for (gs_int t = 0; t < nt; t++) out[K->task_dst[t]] = eval_task(K, t, in, sweep);
    }
    return GS_OK;
}

/* The lowest position (row-major in the factor's CSR) of a non-finite value. */
static void record_nonfinite(unsigned *slot, gs_int pos)
{
#pragma omp critical(gs_parilu_nonfinite)
    {
        if ((unsigned)pos < *slot) *slot = (unsigned)pos;
    }
}

gs_status gs_parilu_unscale_ref(gs_backend *be, const gs_parilu_kernel *K, const gs_parilu_factor_dev *F,
                                const double *x, double *lval, double *uval)
{
    if (!be || be->kind != GS_BACKEND_HOST)
        return GS_ERROR(GS_ERR_ARG, "ParILU host unscaling: the arrays must live on the host backend (got %s)",
                        be && be->name ? be->name : "none");
    if (!K || !F || !x || !lval || !uval || !F->nonfinite)
        return GS_ERROR(GS_ERR_ARG, "ParILU host unscaling: missing kernel arrays, factor arrays or values");
    const gs_int nt = K->ntasks;
    F->nonfinite[0] = F->nonfinite[1] = UINT_MAX;
    /* every entry of x is one task's destination: each output is written once, by one task */
#pragma omp parallel for schedule(static) if (nt > 32768)
    for (gs_int t = 0; t < nt; t++) {
        const gs_int i = K->task_row[t], j = K->task_col[t], d = K->task_dst[t];
        if (K->symmetric) {
            /* L = D^{1/2} L^, U = L^T */
            const double v = x[d] * F->sd[i];
            const gs_int q = F->u_pos[d];
            lval[d] = v;
            uval[q] = v;
            if (!isfinite(v)) {
                record_nonfinite(&F->nonfinite[0], d);
                record_nonfinite(&F->nonfinite[1], q);
            }
        } else if (d < K->u_off) {
            /* L = D^{1/2} L^ D^{-1/2} (unit diagonal, not stored) */
            const double v = x[d] * F->sd[i] / F->sd[j];
            lval[d] = v;
            if (!isfinite(v)) record_nonfinite(&F->nonfinite[0], d);
        } else {
            /* U = D^{1/2} U^ D^{1/2} */
            const gs_int q = F->u_pos[d - K->u_off];
            const double v = x[d] * F->sd[i] * F->sd[j];
            uval[q] = v;
            if (!isfinite(v)) record_nonfinite(&F->nonfinite[1], q);
        }
    }
    return GS_OK;
}
