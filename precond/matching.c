/* Maximum-product transversal: the row permutation maximising prod |a_(rowperm[j], j)| and the scaling
 * that makes those entries +-1 and every other entry <= 1 (Duff & Koster's method, written from the math). */
#include "precond/scaling.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

/* The assignment problem. With cmax_j = max_i |a_ij| over column j and, for every nonzero a_ij,
 *     c_ij = log cmax_j - log |a_ij| >= 0,
 * a perfect matching M (row r(j) for each column j) maximises prod |a_(r(j), j)| exactly when it
 * minimises sum c_(r(j), j): the two differ by the constant sum_j log cmax_j. Logs keep 1e-300..1e300
 * entries in a range of a few thousand.
 *
 * Duals u (rows), v (columns) stay feasible, rc_ij = c_ij - u_i - v_j >= 0, with rc = 0 on matched
 * edges. Rows are matched one at a time along a shortest augmenting path in the reduced costs
 * (Dijkstra: nonnegative lengths; a matched column leads on to its row at no cost). If the path found
 * from the free row i0 ends at the free column with length D, every column j the search finalised at
 * distance d_j < D, and its matched row, move by
 *     v_j += d_j - D,   u_(row of j) += D - d_j,   u_i0 += D,
 * which keeps rc >= 0 everywhere and makes every edge of the path tight, so that swapping matched and
 * unmatched edges along it keeps complementary slackness. At the end sum c(M) = sum u + sum v: optimal.
 *
 * Scaling: |a_ij| exp(u_i) exp(v_j) / cmax_j = exp(u_i + v_j - c_ij) is 1 on M and <= 1 elsewhere, so
 * dr_i = exp(u_i), dc_j = exp(v_j) / cmax_j (up to a common factor t: dr e^t, dc e^-t, chosen to centre
 * the logs of the scales so that neither overflows first). */

/* Marks in hpos[] of a column that is in no heap. */
enum { NOT_QUEUED = -1, FINALISED = -2 };

typedef struct mwm_work {
    gs_int n;
    const gs_int *rowptr, *colind;
    double *cost;        /* nnz: c_ij; INFINITY where a_ij == 0 (not an edge) */
    double *lcmax;       /* n: log cmax_j (0 for an empty column) */
    double *u, *v;       /* duals of rows and columns */
    gs_int *mrow, *mcol; /* row -> its column, column -> its row; -1 when free */
    /* Dijkstra scratch; only the touched columns are reset after each search */
    double *dist;
    gs_int *pred, *heap, *hpos, *touched, *popped;
    gs_int nheap, ntouched, npopped;
    unsigned char *dead; /* columns of a failed search (a Hungarian tree): no later path uses them */
    /* the first failed search: its root row and the columns it reached (the singular witness) */
    gs_int fail_row, *fail_cols, nfail_cols;
} mwm_work;

static void heap_up(mwm_work *w, gs_int pos)
{
    gs_int *h = w->heap, j = h[pos];
    double dj = w->dist[j];
    while (pos > 0) {
        gs_int parent = (pos - 1) / 2;
        if (w->dist[h[parent]] <= dj) break;
        h[pos] = h[parent];
        w->hpos[h[pos]] = pos;
        pos = parent;
    }
    h[pos] = j;
    w->hpos[j] = pos;
}

/* Remove and return the nearest column; it is final. */
static gs_int heap_pop(mwm_work *w)
{
    gs_int *h = w->heap, top = h[0], last = h[--w->nheap], pos = 0, n = w->nheap;
    double dl = w->dist[last];
    while (n > 0) {
        gs_int c = 2 * pos + 1;
        if (c >= n) break;
        if (c + 1 < n && w->dist[h[c + 1]] < w->dist[h[c]]) c++;
        if (w->dist[h[c]] >= dl) break;
        h[pos] = h[c];
        w->hpos[h[pos]] = pos;
        pos = c;
    }
    if (n > 0) {
        h[pos] = last;
        w->hpos[last] = pos;
    }
    w->hpos[top] = FINALISED;
    return top;
}

/* Reduced cost of edge p = (i, j): the same expression everywhere, so that edges made tight by
 * v_j = min_i (c_ij - u_i) read exactly 0. Rounding in the dual updates can leave -1e-16: clamped. */
static inline double reduced_cost(const mwm_work *w, gs_int i, gs_int p)
{
    double rc = (w->cost[p] - w->u[i]) - w->v[w->colind[p]];
    return rc > 0.0 ? rc : 0.0;
}

/* Shortest augmenting path from the free row i0 (Dijkstra over columns). Columns no closer than the
 * best free column found so far (lsap) are never queued, and the search stops once the heap holds none
 * closer. Returns that free column (pred[] leads back to i0) with *len its distance, or -1 when no free
 * column is reachable. */
static gs_int shortest_path(mwm_work *w, gs_int i0, double *len)
{
    double lsap = INFINITY, di = 0.0;
    gs_int jsap = -1, i = i0;
    for (;;) {
        for (gs_int p = w->rowptr[i]; p < w->rowptr[i + 1]; p++) {
            gs_int k = w->colind[p];
            if (w->cost[p] == INFINITY || w->dead[k] || w->hpos[k] == FINALISED) continue;
            double dk = di + reduced_cost(w, i, p);
            if (dk >= lsap) continue;
            if (w->mcol[k] < 0) { /* a free column: a candidate end */
                lsap = dk;
                jsap = k;
                w->pred[k] = i;
            } else if (dk < w->dist[k]) {
                if (w->hpos[k] == NOT_QUEUED) {
                    w->touched[w->ntouched++] = k;
                    w->heap[w->nheap] = k;
                    w->hpos[k] = w->nheap++;
                }
                w->dist[k] = dk;
                w->pred[k] = i;
                heap_up(w, w->hpos[k]);
            }
        }
        if (w->nheap == 0 || w->dist[w->heap[0]] >= lsap) break;
        gs_int j = heap_pop(w);
        w->popped[w->npopped++] = j;
        i = w->mcol[j];
        di = w->dist[j];
    }
    *len = lsap;
    return jsap;
}

/* After a path of length D to the free column jend: move the duals of the finalised columns and their
 * rows (see the top of the file), then swap matched and unmatched edges along the path. */
static void augment(mwm_work *w, gs_int i0, gs_int jend, double D)
{
    for (gs_int q = 0; q < w->npopped; q++) {
        gs_int j = w->popped[q];
        double dj = w->dist[j];
        w->v[j] += dj - D;
        w->u[w->mcol[j]] += D - dj;
    }
    w->u[i0] += D;
    gs_int j = jend;
    for (;;) {
        gs_int i = w->pred[j], jnext = w->mrow[i];
        w->mrow[i] = j;
        w->mcol[j] = i;
        if (i == i0) break;
        j = jnext;
    }
}

/* Forget one search: clear the touched columns' distances and heap marks. */
static void reset_search(mwm_work *w)
{
    for (gs_int q = 0; q < w->ntouched; q++) {
        gs_int k = w->touched[q];
        w->dist[k] = INFINITY;
        w->hpos[k] = NOT_QUEUED;
    }
    w->ntouched = w->npopped = w->nheap = 0;
}

/* cost[p] = log cmax_j - log|a_ij| (INFINITY for a stored zero), lcmax, and the initial duals
 * u_i = min_j c_ij, v_j = min_i (c_ij - u_i) (0 for an empty row or column), so rc >= 0 with a tight
 * edge in every nonempty row and column. Refuses NaN and Inf. */
static gs_status init_costs(const gs_csr *A, mwm_work *w)
{
    gs_int n = w->n;
    const double *a = A->val;
    int64_t bad = -1;
    /* the logs are the one costly step that parallelises; below a million entries threads cost more */
#pragma omp parallel for schedule(static) if (A->nnz > 1000000)
    for (gs_int p = 0; p < A->nnz; p++) {
        double x = a ? fabs(a[p]) : 1.0;
        if (!isfinite(x)) {
#pragma omp critical(gs_mwm_bad)
            if (bad < 0 || p < bad) bad = p;
        }
        w->cost[p] = x > 0.0 ? log(x) : -INFINITY; /* log|a_ij| for now */
    }
    if (bad >= 0) {
        gs_int r = 0;
        while (A->rowptr[r + 1] <= bad) r++;
        return GS_ERROR(GS_ERR_NUMERIC, "matching: entry (%d, %d) (1-based) is %g; the matching needs finite values",
                        (int)r + 1, (int)A->colind[bad] + 1, a[bad]);
    }
    for (gs_int j = 0; j < n; j++) w->lcmax[j] = -INFINITY;
    for (gs_int p = 0; p < A->nnz; p++)
        if (w->cost[p] > w->lcmax[A->colind[p]]) w->lcmax[A->colind[p]] = w->cost[p];
    for (gs_int j = 0; j < n; j++) {
        if (w->lcmax[j] == -INFINITY) w->lcmax[j] = 0.0;
        w->v[j] = INFINITY;
    }
    for (gs_int i = 0; i < n; i++) {
        double ui = INFINITY;
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double la = w->cost[p];
            w->cost[p] = la == -INFINITY ? INFINITY : w->lcmax[A->colind[p]] - la;
            if (w->cost[p] < ui) ui = w->cost[p];
        }
        w->u[i] = ui == INFINITY ? 0.0 : ui;
    }
    for (gs_int i = 0; i < n; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            double r = w->cost[p] - w->u[i];
            if (r < w->v[A->colind[p]]) w->v[A->colind[p]] = r;
        }
    for (gs_int j = 0; j < n; j++)
        if (w->v[j] == INFINITY) w->v[j] = 0.0;
    return GS_OK;
}

static inline bool tight(const mwm_work *w, gs_int i, gs_int p)
{
    return w->cost[p] != INFINITY && (w->cost[p] - w->u[i]) - w->v[w->colind[p]] <= 0.0;
}

/* Cheap start on tight edges (rc = 0, so optimality is kept): each row takes a free tight column;
 * a row left over then tries to take a tight column from a row that can move to another free tight
 * column (an augmenting path of length 3). On matrices with a dominant diagonal this is everything. */
static void greedy_start(mwm_work *w)
{
    for (gs_int i = 0; i < w->n; i++)
        for (gs_int p = w->rowptr[i]; p < w->rowptr[i + 1]; p++) {
            gs_int j = w->colind[p];
            if (w->mcol[j] < 0 && tight(w, i, p)) {
                w->mcol[j] = i;
                w->mrow[i] = j;
                break;
            }
        }
    for (gs_int i = 0; i < w->n; i++) {
        if (w->mrow[i] >= 0) continue;
        for (gs_int p = w->rowptr[i]; p < w->rowptr[i + 1] && w->mrow[i] < 0; p++) {
            if (!tight(w, i, p)) continue;
            gs_int j = w->colind[p], r = w->mcol[j];
            for (gs_int q = w->rowptr[r]; q < w->rowptr[r + 1]; q++) {
                gs_int k = w->colind[q];
                if (w->mcol[k] < 0 && tight(w, r, q)) {
                    w->mrow[r] = k;
                    w->mcol[k] = r;
                    w->mrow[i] = j;
                    w->mcol[j] = i;
                    break;
                }
            }
        }
    }
}

/* Match every free row along shortest augmenting paths. A failed search reached only matched columns:
 * its rows (the root and their partners) have all their nonzeros in those columns, one fewer than the
 * rows. By the Hungarian-tree argument no later augmenting path passes through them, so they are
 * marked dead (each failure then costs its own tree once) and the first one is kept as the witness. */
static gs_status match_free_rows(mwm_work *w)
{
    for (gs_int i0 = 0; i0 < w->n; i0++) {
        if (w->mrow[i0] >= 0) continue;
        double D;
        gs_int jend = shortest_path(w, i0, &D);
        if (jend >= 0) {
            augment(w, i0, jend, D);
        } else {
            if (w->fail_row < 0) {
                w->fail_row = i0;
                w->nfail_cols = w->npopped;
                GS_CALL(GS_MALLOC(w->fail_cols, w->npopped > 0 ? w->npopped : 1));
                memcpy(w->fail_cols, w->popped, (size_t)w->npopped * sizeof *w->popped);
            }
            for (gs_int q = 0; q < w->npopped; q++) w->dead[w->popped[q]] = 1;
        }
        reset_search(w);
    }
    return GS_OK;
}

static int gs_int_cmp(const void *x, const void *y)
{
    gs_int a = *(const gs_int *)x, b = *(const gs_int *)y;
    return (a > b) - (a < b);
}

/* Append "a, b, c" (1-based, at most `show` of the k sorted values, then ", ...") to buf. */
static void append_list(char *buf, size_t cap, gs_int *vals, gs_int k, gs_int show)
{
    qsort(vals, (size_t)k, sizeof *vals, gs_int_cmp);
    for (gs_int q = 0; q < k && q < show; q++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%d", q ? ", " : "", (int)vals[q] + 1);
    }
    if (k > show) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, ", ...");
    }
}

/* The structural-rank error, with a witness: an empty column, else the failed search's rows. */
static gs_status singular_error(const gs_csr *A, mwm_work *w, gs_int rank)
{
    char why[512] = "";
    gs_int empty_col = -1, *count = w->touched; /* nonzeros per column; touched[] is free scratch now */
    bool zeros = false;
    memset(count, 0, (size_t)w->n * sizeof *count);
    for (gs_int p = 0; p < A->nnz; p++) {
        if (w->cost[p] != INFINITY) count[A->colind[p]]++;
        else zeros = true;
    }
    for (gs_int j = 0; j < w->n && empty_col < 0; j++)
        if (count[j] == 0) empty_col = j;
    const char *note = zeros ? " (stored zeros do not count)" : "";
    if (empty_col >= 0) {
        snprintf(why, sizeof why, "column %d (1-based) has no nonzero entry%s", (int)empty_col + 1, note);
    } else if (w->nfail_cols == 0) {
        snprintf(why, sizeof why, "row %d (1-based) has no nonzero entry%s", (int)w->fail_row + 1, note);
    } else {
        gs_int k = w->nfail_cols;
        /* the rows: the root and the partners of the reached columns (reuse popped[] as scratch) */
        w->popped[0] = w->fail_row;
        for (gs_int q = 0; q < k; q++) w->popped[q + 1] = w->mcol[w->fail_cols[q]];
        snprintf(why, sizeof why, "the %d rows ", (int)k + 1);
        append_list(why, sizeof why, w->popped, k + 1, 8);
        size_t len = strlen(why);
        snprintf(why + len, sizeof why - len, " (1-based) have all their nonzeros%s in only %d columns: ", note, (int)k);
        append_list(why, sizeof why, w->fail_cols, k, 8);
    }
    return GS_ERROR(GS_ERR_NUMERIC,
                    "the matrix is structurally singular: structural rank %d of %d (no row permutation puts "
                    "nonzeros on the whole diagonal; e.g. %s)",
                    (int)rank, (int)w->n, why);
}

/* Clamp a natural log to the exponent range of normal doubles before exp(). */
static inline double exp_clamped(double x)
{
    const double ln2 = 0.69314718055994530942, lo = -1022.0 * ln2, hi = 1023.0 * ln2;
    return exp(x < lo ? lo : x > hi ? hi : x);
}

/* Beyond this |log| of a scale (1e100) the scales are narrowed by balance_scales. */
#define BALANCE_LIMIT 230.0

/* Narrowing the scales. The optimal duals are not unique: on a reducible matrix the blocks' duals are
 * bounded only one way relative to each other and may drift far apart (past 1e300 on random 1e+-150
 * entries) while much narrower scales meet the same conditions. With the matching fixed and m(k) the
 * column of row k, x_k = log dr_k fixes log dc_(m(k)) = s_k - x_k, s_k = -log|a_(k, m(k))|, and
 * "every scaled entry <= 1" reads, for each other nonzero a_ij with j = m(k),
 *     x_i - x_k <= w_ik = c_ij - c_kj                                                     (*)
 * The duals give one solution xs. Wanted: one with every log-scale in [-H, H] for H as small as
 * possible, i.e. lb_k(H) = max(-H, s_k - H) <= x_k <= ub_k(H) = min(H, s_k + H). For a given H the
 * greatest solution of (*) below ub is a shortest-path labelling (x_i = min over k of ub_k + path
 * length k -> i), computed by one Dijkstra from all rows at once over the weights w_ik + xs_k - xs_i,
 * which xs makes nonnegative; H is feasible iff that solution is >= lb. Bisection on H, then
 * Gauss-Seidel sweeps move each x_k, the others fixed, to the point of its feasible interval nearest
 * the balanced split s_k / 2 (dr = dc on the matched entry). Only for spread scales: each step costs
 * a pass over A. */

/* Column access to A's positions, for the edges k -> i of (*) (i over column m(k)). */
typedef struct col_index {
    gs_int *colptr, *cpos, *crow;
} col_index;

static void col_index_free(col_index *c)
{
    gs_free(&c->colptr);
    gs_free(&c->cpos);
    gs_free(&c->crow);
}

static gs_status col_index_build(const gs_csr *A, col_index *c)
{
    gs_int n = A->ncols;
    GS_CALL(GS_CALLOC(c->colptr, (size_t)n + 1));
    GS_CALL(GS_MALLOC(c->cpos, A->nnz));
    GS_CALL(GS_MALLOC(c->crow, A->nnz));
    for (gs_int p = 0; p < A->nnz; p++) c->colptr[A->colind[p] + 1]++;
    for (gs_int j = 0; j < n; j++) c->colptr[j + 1] += c->colptr[j];
    for (gs_int i = 0; i < A->nrows; i++)
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            gs_int q = c->colptr[A->colind[p]]++;
            c->cpos[q] = p;
            c->crow[q] = i;
        }
    for (gs_int j = n; j > 0; j--) c->colptr[j] = c->colptr[j - 1];
    c->colptr[0] = 0;
    return GS_OK;
}

/* The greatest solution x of (*) with x <= ub(H) (see above), by Dijkstra on rows with labels
 * x_k - xs_k; the column heap arrays of the matching serve as row arrays here. Returns x >= lb(H). */
static bool greatest_below(mwm_work *w, const col_index *c, const gs_int *mp, const double *xs, const double *s,
                           double H, double *x)
{
    gs_int n = w->n;
    for (gs_int k = 0; k < n; k++) {
        w->dist[k] = fmin(H, s[k] + H) - xs[k];
        w->heap[k] = k;
        w->hpos[k] = k;
    }
    w->nheap = n;
    for (gs_int k = 1; k < n; k++) heap_up(w, k); /* heap[0..k] a heap after step k */
    while (w->nheap > 0) {
        gs_int k = heap_pop(w), jm = w->mrow[k];
        double ckm = w->cost[mp[k]];
        for (gs_int q = c->colptr[jm]; q < c->colptr[jm + 1]; q++) {
            gs_int i = c->crow[q], p = c->cpos[q];
            if (i == k || w->cost[p] == INFINITY || w->hpos[i] == FINALISED) continue;
            double wr = (w->cost[p] - ckm) + xs[k] - xs[i];
            double di = w->dist[k] + (wr > 0.0 ? wr : 0.0);
            if (di < w->dist[i]) {
                w->dist[i] = di;
                heap_up(w, w->hpos[i]);
            }
        }
    }
    bool ok = true;
    for (gs_int k = 0; k < n; k++) {
        x[k] = xs[k] + w->dist[k];
        if (x[k] < fmax(-H, s[k] - H) - 1e-9 * (1.0 + H)) ok = false;
        w->dist[k] = INFINITY;
        w->hpos[k] = NOT_QUEUED;
    }
    return ok;
}

/* Gauss-Seidel: each x_k to the point nearest s_k / 2 of its interval under (*) and the window H. */
static void polish_sweeps(const gs_csr *A, const mwm_work *w, const col_index *c, const gs_int *mp,
                          const double *s, double H, double *x)
{
    for (int sweep = 0; sweep < 20; sweep++) {
        double moved = 0.0;
        for (gs_int k = 0; k < w->n; k++) {
            gs_int jm = w->mrow[k];
            double ckm = w->cost[mp[k]], lo = fmax(-H, s[k] - H), hi = fmin(H, s[k] + H);
            for (gs_int p = A->rowptr[k]; p < A->rowptr[k + 1]; p++) { /* x_k <= x_l + w_kl */
                gs_int l = w->mcol[A->colind[p]];
                if (l != k && w->cost[p] != INFINITY) hi = fmin(hi, x[l] + w->cost[p] - w->cost[mp[l]]);
            }
            for (gs_int q = c->colptr[jm]; q < c->colptr[jm + 1]; q++) { /* x_k >= x_i - w_ik */
                gs_int i = c->crow[q], p = c->cpos[q];
                if (i != k && w->cost[p] != INFINITY) lo = fmax(lo, x[i] - (w->cost[p] - ckm));
            }
            if (!(lo <= hi)) continue; /* rounding: keep the current value */
            double xk = s[k] / 2.0 < lo ? lo : s[k] / 2.0 > hi ? hi : s[k] / 2.0;
            moved = fmax(moved, fabs(xk - x[k]));
            x[k] = xk;
        }
        if (moved < 1e-2) break;
    }
}

/* x: the centred duals on entry (feasible for (*)), the narrowed log row scales on return. */
static gs_status balance_scales(const gs_csr *A, mwm_work *w, const gs_int *mp, double *x)
{
    gs_status st = GS_OK;
    gs_int n = w->n;
    col_index c = {0};
    double *s = NULL, *xs = NULL, *xt = NULL;
    GS_TRY(col_index_build(A, &c));
    GS_TRY(GS_MALLOC(s, n));
    GS_TRY(GS_MALLOC(xs, n));
    GS_TRY(GS_MALLOC(xt, n));
    double lo = 0.0, hi = 0.0;
    for (gs_int k = 0; k < n; k++) {
        s[k] = w->cost[mp[k]] - w->lcmax[w->mrow[k]];
        xs[k] = x[k];
        lo = fmax(lo, fabs(s[k]) / 2.0);                         /* no window is narrower */
        hi = fmax(hi, fmax(fabs(x[k]), fabs(s[k] - x[k])));        /* xs fits this one */
    }
    hi *= 1.0 + 1e-12;
    if (!greatest_below(w, &c, mp, xs, s, hi, xt)) goto cleanup; /* rounding trouble: keep the duals */
    memcpy(x, xt, (size_t)n * sizeof *x);
    for (int it = 0; it < 60 && hi - lo > 0.1; it++) {
        double mid = (lo + hi) / 2.0;
        if (greatest_below(w, &c, mp, xs, s, mid, xt)) {
            hi = mid;
            memcpy(x, xt, (size_t)n * sizeof *x);
        } else {
            lo = mid;
        }
    }
    polish_sweeps(A, w, &c, mp, s, hi, x);
cleanup:
    col_index_free(&c);
    gs_free(&s);
    gs_free(&xs);
    gs_free(&xt);
    return st;
}

/* dr, dc from the optimal duals (see the top of the file): x_r = log dr_r = u_r + t, log dc_j =
 * v_j - log cmax_j - t, t centring the two sets of logs; balance_scales where they spread past
 * BALANCE_LIMIT. Then dr_r = exp(x_r) and dc_j = 1 / |a_(r, j) dr_r| on the matched entry, which makes
 * it +-1 to an ulp (exp of the dual would carry the dual's rounding); exp(log dc_j) only where that
 * product leaves the normal range. */
static gs_status duals_to_scaling(const gs_csr *A, mwm_work *w, double *dr, double *dc)
{
    gs_status st = GS_OK;
    gs_int n = w->n, *mp = NULL;
    double *x = NULL, lo = INFINITY, hi = -INFINITY;
    GS_TRY(GS_MALLOC(mp, n));
    GS_TRY(GS_MALLOC(x, n));
    for (gs_int i = 0; i < n; i++) {
        double s = w->u[i], c = -(w->v[i] - w->lcmax[i]);
        lo = fmin(lo, fmin(s, c));
        hi = fmax(hi, fmax(s, c));
        gs_int p = A->rowptr[i];
        while (A->colind[p] != w->mrow[i]) p++;
        mp[i] = p;
    }
    double t = n > 0 ? -(lo + hi) / 2.0 : 0.0;
    for (gs_int i = 0; i < n; i++) x[i] = w->u[i] + t;
    if ((hi - lo) / 2.0 > BALANCE_LIMIT) GS_TRY(balance_scales(A, w, mp, x));
    for (gs_int r = 0; r < n; r++) {
        gs_int j = w->mrow[r];
        double d = exp_clamped(x[r]);
        if (dr) dr[r] = d;
        double prod = (A->val ? fabs(A->val[mp[r]]) : 1.0) * d, inv = 1.0 / prod;
        /* log dc_j = -log|a_rj| - x_r = (c_rj - log cmax_j) - x_r */
        if (dc) dc[j] = (prod >= DBL_MIN && isfinite(inv)) ? inv : exp_clamped(w->cost[mp[r]] - w->lcmax[j] - x[r]);
    }
cleanup:
    gs_free(&mp);
    gs_free(&x);
    return st;
}

static void mwm_work_free(mwm_work *w)
{
    gs_free(&w->cost);
    gs_free(&w->lcmax);
    gs_free(&w->u);
    gs_free(&w->v);
    gs_free(&w->mrow);
    gs_free(&w->mcol);
    gs_free(&w->dist);
    gs_free(&w->pred);
    gs_free(&w->heap);
    gs_free(&w->hpos);
    gs_free(&w->touched);
    gs_free(&w->popped);
    gs_free(&w->dead);
    gs_free(&w->fail_cols);
}

static gs_status mwm_work_alloc(const gs_csr *A, mwm_work *w)
{
    gs_int n = A->nrows;
    w->n = n;
    w->rowptr = A->rowptr;
    w->colind = A->colind;
    w->fail_row = -1;
    GS_CALL(GS_MALLOC(w->cost, A->nnz));
    GS_CALL(GS_MALLOC(w->lcmax, n));
    GS_CALL(GS_MALLOC(w->u, n));
    GS_CALL(GS_MALLOC(w->v, n));
    GS_CALL(GS_MALLOC(w->mrow, n));
    GS_CALL(GS_MALLOC(w->mcol, n));
    GS_CALL(GS_MALLOC(w->dist, n));
    GS_CALL(GS_MALLOC(w->pred, n));
    GS_CALL(GS_MALLOC(w->heap, n));
    GS_CALL(GS_MALLOC(w->hpos, n));
    GS_CALL(GS_MALLOC(w->touched, n));
    GS_CALL(GS_MALLOC(w->popped, (size_t)n + 1));
    GS_CALL(GS_CALLOC(w->dead, n));
    for (gs_int k = 0; k < n; k++) {
        w->mrow[k] = w->mcol[k] = -1;
        w->dist[k] = INFINITY;
        w->hpos[k] = NOT_QUEUED;
    }
    return GS_OK;
}

gs_status gs_mwm(const gs_csr *A, gs_int *rowperm, double *dr, double *dc, gs_int *rank)
{
    gs_status st = GS_OK;
    mwm_work w = {0};

    if (rank) *rank = 0;
    if (!A || !A->rowptr || (A->nnz > 0 && !A->colind))
        return GS_ERROR(GS_ERR_ARG, "matching: the matrix is NULL or has no arrays");
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "matching: the matrix is %d x %d; a square matrix is required", (int)A->nrows,
                        (int)A->ncols);
    if (!rowperm) return GS_ERROR(GS_ERR_ARG, "matching: the output row permutation is NULL");
    gs_int n = A->nrows;

    GS_TRY(mwm_work_alloc(A, &w));
    GS_TRY(init_costs(A, &w));
    greedy_start(&w);
    GS_TRY(match_free_rows(&w));

    gs_int matched = 0;
    for (gs_int j = 0; j < n; j++) matched += w.mcol[j] >= 0;
    if (rank) *rank = matched;
    /* rowperm[j] = the row matched to column j; unmatched rows fill the unmatched columns in order */
    for (gs_int j = 0, r = 0; j < n; j++) {
        if (w.mcol[j] >= 0) {
            rowperm[j] = w.mcol[j];
            continue;
        }
        while (w.mrow[r] >= 0) r++;
        rowperm[j] = r++;
    }
    if (matched < n) {
        st = singular_error(A, &w, matched);
        goto cleanup;
    }
    if (dr || dc) GS_TRY(duals_to_scaling(A, &w, dr, dc));

cleanup:
    mwm_work_free(&w);
    return st;
}
