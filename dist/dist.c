/* Distribution of a matrix over MPI ranks (dist/dist.h): METIS parts, the rows scattered from rank 0,
 * each rank's local numbering and halo plan. */
#include "dist/dist.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/mem.h"
#include "precond/ordering.h"

#define DIST_PARALLEL_NNZ 100000 /* fewer entries are handled by one thread */

#define MPI_TRY(expr)                                                                         \
    do {                                                                                      \
        int rc_ = (expr);                                                                     \
        if (rc_ != MPI_SUCCESS) GS_FAIL(GS_ERR_INTERNAL, "MPI: %s failed (error %d)", #expr, rc_); \
    } while (0)

gs_status gs_dist_agree(MPI_Comm comm, gs_status st)
{
    int rank = 0, size = 1, mine, first = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mine = st != GS_OK ? rank : size;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on the ranks' status failed");
    if (first == size) return GS_OK;
    struct {
        int st;
        char msg[1500];
    } m;
    memset(&m, 0, sizeof m);
    if (rank == first) {
        m.st = (int)st;
        snprintf(m.msg, sizeof m.msg, "%s", gs_error_message()[0] ? gs_error_message() : gs_status_name(st));
    }
    if (MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: forwarding the error of rank %d failed", first);
    if (rank == first && first == 0) return st; /* rank 0's own error, with its trace, stays pending */
    gs_error_clear(); /* the failing rank's too: every rank holds the same message */
    if (first == 0) return GS_ERROR((gs_status)m.st, "%s", m.msg);
    return GS_ERROR((gs_status)m.st, "rank %d: %s", first, m.msg);
}

void gs_dist_free(gs_dist *d)
{
    if (!d) return;
    gs_free(&d->displs);
    gs_free(&d->perm);
    gs_free(&d->rows);
    gs_free(&d->halo_cols);
    gs_csr_free(&d->local);
    gs_csr_free(&d->diag);
    gs_halo_free(&d->halo);
    memset(d, 0, sizeof *d);
}

/* Rank 0: the parts, the new numbering (perm: new -> old, inew: old -> new) and each rank's range. */
static gs_status partition(const gs_csr *A, int size, gs_partition_kind kind, int seed, gs_int *displs, gs_int *perm,
                           gs_int *inew)
{
    gs_status st = GS_OK;
    gs_int *part = NULL, n = A->nrows;
    GS_TRY(GS_MALLOC(part, n + 1));
    GS_TRY(gs_partition(A, size, kind, seed, part));
    for (int r = 0; r <= size; r++) displs[r] = 0;
    for (gs_int i = 0; i < n; i++) displs[part[i] + 1]++;
    for (int r = 0; r < size; r++) displs[r + 1] += displs[r];
    /* stable: the rows of a part keep their original order, as in BILU's blocks */
    for (gs_int i = 0; i < n; i++) {
        gs_int k = displs[part[i]]++;
        perm[k] = i;
        inew[i] = k;
    }
    for (int r = size; r > 0; r--) displs[r] = displs[r - 1];
    displs[0] = 0;
cleanup:
    gs_free(&part);
    return st;
}

/* The rows each rank holds (displs: P + 1 row offsets), as counts and displacements for Scatterv. */
static void row_counts(const gs_int *displs, int P, int *cnt, int *dsp)
{
    for (int r = 0; r < P; r++) {
        cnt[r] = (int)(displs[r + 1] - displs[r]);
        dsp[r] = (int)displs[r];
    }
}

/* Rank 0: the entries each rank's rows hold (len: the packed rows' lengths), as counts and displacements. */
static void entry_layout(const gs_int *displs, int P, const int *len, int *ncnt, int *ndsp)
{
    ndsp[0] = 0;
    for (int r = 0; r < P; r++) {
        int64_t s = 0;
        for (gs_int k = displs[r]; k < displs[r + 1]; k++) s += len[k];
        ncnt[r] = (int)s;
        ndsp[r + 1] = ndsp[r] + ncnt[r];
    }
}

/* Rank 0's rows packed rank by rank for the scatter: in the new order (perm: new -> original row),
 * columns in the new numbering (inew: original -> new), len[k] entries for new row k; ncnt/ndsp the
 * entries of each rank's rows. */
typedef struct packed_rows {
    int *len, *ncnt, *ndsp;
    gs_int *col;
    double *val;
} packed_rows;

static void packed_free(packed_rows *pk)
{
    gs_free(&pk->len);
    gs_free(&pk->ncnt);
    gs_free(&pk->ndsp);
    gs_free(&pk->col);
    gs_free(&pk->val);
}

static gs_status pack_rows(const gs_csr *A, const gs_int *perm, const gs_int *inew, const gs_int *displs, int P,
                           packed_rows *pk)
{
    memset(pk, 0, sizeof *pk);
    gs_status st = GS_MALLOC(pk->len, A->nrows + 1);
    if (st == GS_OK) st = GS_MALLOC(pk->col, A->nnz + 1);
    if (st == GS_OK) st = GS_MALLOC(pk->val, A->nnz + 1);
    if (st == GS_OK) st = GS_MALLOC(pk->ncnt, P);
    if (st == GS_OK) st = GS_MALLOC(pk->ndsp, P + 1);
    if (st != GS_OK) {
        packed_free(pk);
        return st;
    }
    gs_int q = 0;
    for (gs_int k = 0; k < A->nrows; k++) {
        gs_int i = perm[k];
        pk->len[k] = (int)(A->rowptr[i + 1] - A->rowptr[i]);
        for (gs_int p = A->rowptr[i]; p < A->rowptr[i + 1]; p++, q++) {
            pk->col[q] = inew[A->colind[p]];
            pk->val[q] = A->val[p];
        }
    }
    entry_layout(displs, P, pk->len, pk->ncnt, pk->ndsp);
    return GS_OK;
}

static int cmp_gs_int(const void *a, const void *b)
{
    gs_int x = *(const gs_int *)a, y = *(const gs_int *)b;
    return (x > y) - (x < y);
}

int gs_dist_owner(const gs_dist *d, gs_int c)
{
    int lo = 0, hi = d->size - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (d->displs[mid] <= c) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Local columns from the rows' new column numbers (L's colind on entry): owned columns first, then the
 * sorted distinct off-rank ones (*halo_new, *nh). */
static gs_status localize(const gs_dist *d, gs_csr *L, gs_int **halo_new, gs_int *nh_out)
{
    gs_status st = GS_OK;
    const gs_int lo = d->displs[d->rank], hi = d->displs[d->rank + 1], n = hi - lo;
    gs_int *h = NULL, nh = 0;
    GS_TRY(GS_MALLOC(h, L->nnz + 1));
    for (gs_int p = 0; p < L->nnz; p++)
        if (L->colind[p] < lo || L->colind[p] >= hi) h[nh++] = L->colind[p];
    qsort(h, (size_t)nh, sizeof *h, cmp_gs_int);
    gs_int u = 0;
    for (gs_int j = 0; j < nh; j++)
        if (u == 0 || h[j] != h[u - 1]) h[u++] = h[j];
    nh = u;
#pragma omp parallel for schedule(static) if (L->nnz > DIST_PARALLEL_NNZ)
    for (gs_int p = 0; p < L->nnz; p++) {
        gs_int c = L->colind[p];
        if (c >= lo && c < hi) L->colind[p] = c - lo;
        else L->colind[p] = n + (gs_int)((gs_int *)bsearch(&c, h, (size_t)nh, sizeof *h, cmp_gs_int) - h);
    }
    L->ncols = n + nh;
    GS_TRY(gs_csr_sort_rows(L));
    *halo_new = h;
    *nh_out = nh;
    return GS_OK;
cleanup:
    gs_free(&h);
    return st;
}

/* The receive side of H from the sorted off-rank indices cols: runs of one owner, in rank order. */
static gs_status halo_recv_side(const gs_dist *d, gs_int nh, const gs_int *cols, gs_halo *H)
{
    H->n_own = d->displs[d->rank + 1] - d->displs[d->rank];
    H->n_halo = nh;
    GS_CALL(GS_MALLOC(H->recv_rank, d->size + 1));
    GS_CALL(GS_MALLOC(H->recv_off, d->size + 1));
    H->recv_off[0] = 0;
    for (gs_int j = 0; j < nh; j++) {
        int r = gs_dist_owner(d, cols[j]);
        if (r == d->rank || (j > 0 && cols[j] <= cols[j - 1]))
            return GS_ERROR(GS_ERR_INTERNAL, "halo plan: index %d is owned or out of order", (int)cols[j]);
        if (H->nrecv == 0 || H->recv_rank[H->nrecv - 1] != r) {
            H->recv_rank[H->nrecv] = r;
            H->recv_off[H->nrecv + 1] = H->recv_off[H->nrecv];
            H->nrecv++;
        }
        H->recv_off[H->nrecv]++;
    }
    return GS_OK;
}

gs_status gs_dist_halo_create(const gs_dist *d, gs_int nh, const gs_int *cols, gs_status st, gs_halo *H)
{
    int *need = NULL, *give = NULL, *sd = NULL, *rd = NULL;
    gs_int *req = NULL;
    const int P = d->size;
    memset(H, 0, sizeof *H);
    if (st == GS_OK) st = halo_recv_side(d, nh, cols, H);
    if (st == GS_OK) st = GS_CALLOC(need, P);
    if (st == GS_OK) st = GS_CALLOC(give, P);
    if (st == GS_OK) st = GS_CALLOC(sd, P + 1);
    if (st == GS_OK) st = GS_CALLOC(rd, P + 1);
    if (st == GS_OK) st = GS_MALLOC(req, nh + 1);
    if (st == GS_OK) {
        for (int k = 0; k < H->nrecv; k++) need[H->recv_rank[k]] = (int)(H->recv_off[k + 1] - H->recv_off[k]);
        for (gs_int j = 0; j < nh; j++) req[j] = cols[j] - d->displs[gs_dist_owner(d, cols[j])];
    }
    /* every owner learns which of its rows each rank needs (their owner-local indices) */
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Alltoall(need, 1, MPI_INT, give, 1, MPI_INT, d->comm));
    for (int r = 0; r < P; r++) {
        sd[r + 1] = sd[r] + need[r];
        rd[r + 1] = rd[r] + give[r];
    }
    st = GS_MALLOC(H->send_idx, rd[P] + 1);
    if (st == GS_OK) st = GS_MALLOC(H->send_rank, P + 1);
    if (st == GS_OK) st = GS_MALLOC(H->send_off, P + 1);
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Alltoallv(req, need, sd, MPI_INT32_T, H->send_idx, give, rd, MPI_INT32_T, d->comm));
    H->send_off[0] = 0;
    for (int r = 0; r < P; r++)
        if (give[r] > 0) {
            H->send_rank[H->nsend] = r;
            H->send_off[H->nsend + 1] = H->send_off[H->nsend] + give[r];
            H->nsend++;
        }
cleanup:
    gs_free(&need);
    gs_free(&give);
    gs_free(&sd);
    gs_free(&rd);
    gs_free(&req);
    if (st != GS_OK) gs_halo_free(H);
    return st;
}

/* The diagonal block: each sorted row's leading entries with an owned column (rows counted, then copied,
 * by all host threads). */
static gs_status diagonal_block(const gs_csr *L, gs_int n, gs_csr *D)
{
    gs_int *len = NULL;
    int64_t nnz = 0;
    GS_CALL(GS_MALLOC(len, n + 1));
#pragma omp parallel for schedule(static) reduction(+ : nnz) if (L->nnz > DIST_PARALLEL_NNZ)
    for (gs_int i = 0; i < n; i++) {
        gs_int c = 0;
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1] && L->colind[p] < n; p++) c++;
        len[i] = c;
        nnz += c;
    }
    gs_status st = gs_csr_alloc(D, n, n, (gs_int)nnz, true);
    if (st != GS_OK) {
        gs_free(&len);
        return st;
    }
    D->rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) D->rowptr[i + 1] = D->rowptr[i] + len[i];
    gs_free(&len);
#pragma omp parallel for schedule(static) if (L->nnz > DIST_PARALLEL_NNZ)
    for (gs_int i = 0; i < n; i++) {
        const gs_int q = D->rowptr[i], p0 = L->rowptr[i], m = D->rowptr[i + 1] - q;
        if (m > 0) {
            memcpy(D->colind + q, L->colind + p0, (size_t)m * sizeof *D->colind);
            memcpy(D->val + q, L->val + p0, (size_t)m * sizeof *D->val);
        }
    }
    return GS_OK;
}

/* The local numbering (d->local's columns, new numbers on entry), the halo plan and the diagonal block;
 * st: the caller's status so far (a failing rank still calls: the steps are agreed). */
static gs_status finish_local(gs_dist *d, gs_status st)
{
    gs_int nh = 0;
    if (st == GS_OK) st = localize(d, &d->local, &d->halo_cols, &nh);
    GS_CALL(gs_dist_halo_create(d, nh, d->halo_cols, st, &d->halo));
    st = diagonal_block(&d->local, d->halo.n_own, &d->diag);
    return gs_dist_agree(d->comm, st);
}

gs_status gs_dist_create_rows(MPI_Comm comm, gs_int n_global, gs_int first_row, gs_csr *mine, gs_dist *d)
{
    gs_status st = GS_OK;
    gs_int *pairs = NULL, my[2] = {first_row, mine->nrows};
    memset(d, 0, sizeof *d);
    d->comm = comm;
    MPI_Comm_rank(comm, &d->rank);
    MPI_Comm_size(comm, &d->size);
    const int P = d->size;
    st = GS_MALLOC(d->displs, P + 1);
    if (st == GS_OK) st = GS_MALLOC(pairs, 2 * (size_t)P);
    GS_TRY(gs_dist_agree(comm, st));
    MPI_TRY(MPI_Allgather(my, 2, MPI_INT32_T, pairs, 2, MPI_INT32_T, comm));
    d->displs[0] = 0;
    for (int r = 0; r < P && st == GS_OK; r++) { /* the ranks' rows follow one another and cover 0..n-1 */
        if (pairs[2 * r] != d->displs[r] || pairs[2 * r + 1] < 0 || pairs[2 * r + 1] > n_global - d->displs[r])
            st = GS_ERROR(GS_ERR_ARG,
                          "rank %d holds %d rows from row %d on; expected rows from %d on (the ranks' rows follow "
                          "one another in rank order and cover the %d rows)",
                          r, (int)pairs[2 * r + 1], (int)pairs[2 * r], (int)d->displs[r], (int)n_global);
        else
            d->displs[r + 1] = d->displs[r] + pairs[2 * r + 1];
    }
    if (st == GS_OK && d->displs[P] != n_global)
        st = GS_ERROR(GS_ERR_ARG, "the ranks hold %d rows in all; expected the matrix's %d", (int)d->displs[P],
                      (int)n_global);
    const gs_int n = mine->nrows;
    if (st == GS_OK && mine->ncols != n_global)
        st = GS_ERROR(GS_ERR_ARG, "rank %d's rows have %d columns; expected the matrix's %d", d->rank,
                      (int)mine->ncols, (int)n_global);
    if (st == GS_OK && n > 0 && !gs_csr_is_sorted(mine))
        st = GS_ERROR(GS_ERR_ARG, "rank %d: its rows' columns are not sorted", d->rank);
    if (st == GS_OK) st = GS_MALLOC(d->rows, n + 1);
    GS_TRY(gs_dist_agree(comm, st));
    for (gs_int i = 0; i < n; i++) d->rows[i] = first_row + i;
    d->n_global = n_global;
    int64_t nnz = mine->nnz;
    MPI_TRY(MPI_Allreduce(&nnz, &d->nnz_global, 1, MPI_INT64_T, MPI_SUM, comm));
    d->local = *mine; /* taken over: new numbering = original (no permutation) */
    memset(mine, 0, sizeof *mine);
    GS_TRY(finish_local(d, GS_OK));
cleanup:
    gs_free(&pairs);
    if (st != GS_OK) gs_dist_free(d);
    return st;
}

gs_status gs_dist_create(MPI_Comm comm, const gs_csr *A, gs_partition_kind kind, int seed, gs_dist *d)
{
    gs_status st = GS_OK;
    int *cnt = NULL, *dsp = NULL, *mylen = NULL;
    gs_int *inew = NULL, hdr[2] = {0, 0};
    packed_rows pk = {0};
    memset(d, 0, sizeof *d);
    d->comm = comm;
    MPI_Comm_rank(comm, &d->rank);
    MPI_Comm_size(comm, &d->size);
    const int P = d->size, root = d->rank == 0;

    /* rank 0: parts, numbering, the rows packed rank by rank */
    st = GS_MALLOC(d->displs, P + 1);
    if (st == GS_OK && root) {
        hdr[0] = A->nrows;
        hdr[1] = A->nnz;
        if (A->nrows != A->ncols) st = GS_ERROR(GS_ERR_ARG, "the matrix is %d x %d: a square matrix is required",
                                                (int)A->nrows, (int)A->ncols);
        if (st == GS_OK) st = GS_MALLOC(d->perm, A->nrows + 1);
        if (st == GS_OK) st = GS_MALLOC(inew, A->nrows + 1);
        if (st == GS_OK) st = partition(A, P, kind, seed, d->displs, d->perm, inew);
        if (st == GS_OK) st = pack_rows(A, d->perm, inew, d->displs, P, &pk);
    }
    if (st == GS_OK) st = GS_MALLOC(cnt, P);
    if (st == GS_OK) st = GS_MALLOC(dsp, P + 1);
    GS_TRY(gs_dist_agree(comm, st));
    MPI_TRY(MPI_Bcast(hdr, 2, MPI_INT32_T, 0, comm));
    MPI_TRY(MPI_Bcast(d->displs, P + 1, MPI_INT32_T, 0, comm));
    d->n_global = hdr[0];
    d->nnz_global = hdr[1];
    row_counts(d->displs, P, cnt, dsp);
    const gs_int n = d->displs[d->rank + 1] - d->displs[d->rank];
    int mynnz = 0;
    MPI_TRY(MPI_Scatter(pk.ncnt, 1, MPI_INT, &mynnz, 1, MPI_INT, 0, comm));

    /* every rank: its rows, in the new numbering */
    st = GS_MALLOC(mylen, n + 1);
    if (st == GS_OK) st = GS_MALLOC(d->rows, n + 1);
    if (st == GS_OK) st = gs_csr_alloc(&d->local, n, d->n_global, mynnz, true);
    GS_TRY(gs_dist_agree(comm, st));
    MPI_TRY(MPI_Scatterv(pk.len, cnt, dsp, MPI_INT, mylen, (int)n, MPI_INT, 0, comm));
    MPI_TRY(MPI_Scatterv(d->perm, cnt, dsp, MPI_INT32_T, d->rows, (int)n, MPI_INT32_T, 0, comm));
    MPI_TRY(MPI_Scatterv(pk.col, pk.ncnt, pk.ndsp, MPI_INT32_T, d->local.colind, mynnz, MPI_INT32_T, 0, comm));
    MPI_TRY(MPI_Scatterv(pk.val, pk.ncnt, pk.ndsp, MPI_DOUBLE, d->local.val, mynnz, MPI_DOUBLE, 0, comm));
    d->local.rowptr[0] = 0;
    for (gs_int i = 0; i < n; i++) d->local.rowptr[i + 1] = d->local.rowptr[i] + mylen[i];

    GS_TRY(finish_local(d, GS_OK));

cleanup:
    gs_free(&cnt);
    gs_free(&dsp);
    gs_free(&mylen);
    gs_free(&inew);
    packed_free(&pk);
    if (st != GS_OK) gs_dist_free(d);
    return st;
}

/* The rows each rank holds, as counts and displacements for Scatterv/Gatherv, and (rank 0) a buffer of
 * the global vector in the distributed numbering; agreed on by every rank. */
static gs_status row_layout(const gs_dist *d, int **cnt, int **dsp, double **g)
{
    gs_status st = GS_MALLOC(*cnt, d->size);
    if (st == GS_OK) st = GS_MALLOC(*dsp, d->size);
    if (st == GS_OK && d->rank == 0) st = GS_MALLOC(*g, d->n_global + 1);
    GS_CALL(gs_dist_agree(d->comm, st));
    row_counts(d->displs, d->size, *cnt, *dsp);
    return GS_OK;
}

gs_status gs_dist_scatter(const gs_dist *d, const double *global, double *local)
{
    gs_status st = GS_OK;
    double *g = NULL;
    int *cnt = NULL, *dsp = NULL;
    GS_TRY(gs_dist_agree(d->comm, row_layout(d, &cnt, &dsp, &g))); /* no rank left in the collective */
    if (d->rank == 0)
        for (gs_int k = 0; k < d->n_global; k++) g[k] = global[d->perm ? d->perm[k] : k];
    MPI_TRY(MPI_Scatterv(g, cnt, dsp, MPI_DOUBLE, local, cnt[d->rank], MPI_DOUBLE, 0, d->comm));
cleanup:
    gs_free(&g);
    gs_free(&cnt);
    gs_free(&dsp);
    return st;
}

gs_status gs_dist_gather(const gs_dist *d, const double *local, double *global)
{
    gs_status st = GS_OK;
    double *g = NULL;
    int *cnt = NULL, *dsp = NULL;
    GS_TRY(gs_dist_agree(d->comm, row_layout(d, &cnt, &dsp, &g))); /* no rank left in the collective */
    MPI_TRY(MPI_Gatherv(local, cnt[d->rank], MPI_DOUBLE, g, cnt, dsp, MPI_DOUBLE, 0, d->comm));
    if (d->rank == 0)
        for (gs_int k = 0; k < d->n_global; k++) global[d->perm ? d->perm[k] : k] = g[k];
cleanup:
    gs_free(&g);
    gs_free(&cnt);
    gs_free(&dsp);
    return st;
}

/* The received rows (new column numbers) in d's local numbering, sorted as d->local; false when an entry
 * has a column outside the rank's rows and its halo (another pattern). */
static bool relocalize(const gs_dist *d, gs_csr *L)
{
    const gs_int lo = d->displs[d->rank], hi = d->displs[d->rank + 1], n = hi - lo, nh = d->halo.n_halo;
    for (gs_int p = 0; p < L->nnz; p++) {
        gs_int c = L->colind[p];
        if (c >= lo && c < hi) {
            L->colind[p] = c - lo;
            continue;
        }
        const gs_int *f = nh ? bsearch(&c, d->halo_cols, (size_t)nh, sizeof *d->halo_cols, cmp_gs_int) : NULL;
        if (!f) return false;
        L->colind[p] = n + (gs_int)(f - d->halo_cols);
    }
    L->ncols = n + nh;
    return true;
}

gs_status gs_dist_update_values(gs_dist *d, const gs_csr *A)
{
    gs_status st = GS_OK;
    const int P = d->size, root = d->rank == 0;
    int *cnt = NULL, *dsp = NULL, *mylen = NULL, mynnz = 0;
    gs_int *inew = NULL;
    packed_rows pk = {0};
    gs_csr L = {0};
    const gs_int n = d->halo.n_own;

    if (root) { /* the rows packed rank by rank, as gs_dist_create did */
        if (A->nrows != d->n_global || A->ncols != d->n_global || A->nnz != d->nnz_global || !A->val)
            st = GS_ERROR(GS_ERR_ARG, "new values: a %d x %d matrix with %d entries for a distributed one of %d rows "
                                      "and %lld entries",
                          (int)A->nrows, (int)A->ncols, (int)A->nnz, (int)d->n_global, (long long)d->nnz_global);
        else if (!d->perm)
            st = GS_ERROR(GS_ERR_UNSUPPORTED, "new values from rank 0 for a matrix whose ranks made their own rows");
        if (st == GS_OK) st = GS_MALLOC(inew, d->n_global + 1);
        if (st == GS_OK) {
            for (gs_int k = 0; k < d->n_global; k++) inew[d->perm[k]] = k;
            st = pack_rows(A, d->perm, inew, d->displs, P, &pk);
        }
    }
    if (st == GS_OK) st = GS_MALLOC(cnt, P);
    if (st == GS_OK) st = GS_MALLOC(dsp, P + 1);
    if (st == GS_OK) st = GS_MALLOC(mylen, n + 1);
    GS_TRY(gs_dist_agree(d->comm, st));
    row_counts(d->displs, P, cnt, dsp);
    /* the row lengths first: another pattern is refused before its entries travel */
    MPI_TRY(MPI_Scatter(pk.ncnt, 1, MPI_INT, &mynnz, 1, MPI_INT, 0, d->comm));
    MPI_TRY(MPI_Scatterv(pk.len, cnt, dsp, MPI_INT, mylen, (int)n, MPI_INT, 0, d->comm));
    bool same = mynnz == d->local.nnz;
    for (gs_int i = 0; i < n && same; i++) same = mylen[i] == d->local.rowptr[i + 1] - d->local.rowptr[i];
    st = same ? gs_csr_alloc(&L, n, d->n_global, mynnz, true)
              : GS_ERROR(GS_ERR_ARG, "new values: the matrix has another pattern than the distributed one");
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Scatterv(pk.col, pk.ncnt, pk.ndsp, MPI_INT32_T, L.colind, mynnz, MPI_INT32_T, 0, d->comm));
    MPI_TRY(MPI_Scatterv(pk.val, pk.ncnt, pk.ndsp, MPI_DOUBLE, L.val, mynnz, MPI_DOUBLE, 0, d->comm));
    memcpy(L.rowptr, d->local.rowptr, ((size_t)n + 1) * sizeof *L.rowptr);
    same = relocalize(d, &L);
    if (same) st = gs_csr_sort_rows(&L);
    if (st == GS_OK && same && mynnz > 0)
        same = memcmp(L.colind, d->local.colind, (size_t)mynnz * sizeof *L.colind) == 0;
    if (st == GS_OK && !same)
        st = GS_ERROR(GS_ERR_ARG, "new values: the matrix has another pattern than the distributed one");
    GS_TRY(gs_dist_agree(d->comm, st));
    if (mynnz > 0) memcpy(d->local.val, L.val, (size_t)mynnz * sizeof *L.val);
    for (gs_int i = 0, q = 0; i < n; i++) /* the diagonal block: each row's leading owned entries */
        for (gs_int p = d->local.rowptr[i]; p < d->local.rowptr[i + 1] && d->local.colind[p] < n; p++, q++)
            d->diag.val[q] = d->local.val[p];

cleanup:
    gs_csr_free(&L);
    gs_free(&cnt);
    gs_free(&dsp);
    gs_free(&mylen);
    gs_free(&inew);
    packed_free(&pk);
    return st;
}
