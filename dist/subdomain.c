/* Subdomains of restricted additive Schwarz across ranks (dist/subdomain.h): the rows of the graph of
 * A + A^T that a rank owns (the transposed half sent by the owners of the other endpoints), the overlap
 * grown layer by layer with each layer's rows fetched from their owners, and A(S, S) assembled in the
 * order of the original rows. Every helper that communicates returns a status agreed by all ranks. */
#include "dist/subdomain.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"

#define MPI_TRY(expr)                                                                              \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != MPI_SUCCESS) GS_FAIL(GS_ERR_INTERNAL, "MPI: %s failed (error %d)", #expr, rc_); \
    } while (0)

/* The rows fetched for one layer of the overlap: their new and original indices, their rows of A
 * (new-index columns, values) and, for a layer that is grown further, their rows of the graph. */
typedef struct layer {
    gs_int n;
    gs_int *idx, *orig;
    gs_csr A, G; /* G.rowptr NULL: not fetched */
} layer;

static void layer_free(layer *L)
{
    gs_free(&L->idx);
    gs_free(&L->orig);
    gs_csr_free(&L->A);
    gs_csr_free(&L->G);
    memset(L, 0, sizeof *L);
}

/* Counts and displacements of one all-to-all exchange: send (sc, sd) and receive (rc, rd), P each and
 * P + 1 displacements (the last one the total). */
typedef struct xfer {
    int *sc, *sd, *rc, *rd;
} xfer;

static gs_status xfer_alloc(xfer *x, int P)
{
    GS_CALL(GS_CALLOC(x->sc, P));
    GS_CALL(GS_CALLOC(x->sd, P + 1));
    GS_CALL(GS_CALLOC(x->rc, P));
    GS_CALL(GS_CALLOC(x->rd, P + 1));
    return GS_OK;
}

static void xfer_free(xfer *x)
{
    gs_free(&x->sc);
    gs_free(&x->sd);
    gs_free(&x->rc);
    gs_free(&x->rd);
}

/* st agreed; then every rank's receive counts from the others' send counts, and both displacements.
 * The returned status is this rank's (a total past MPI's int counts). */
static gs_status xfer_plan(const gs_dist *d, xfer *x, gs_status st)
{
    GS_CALL(gs_dist_agree(d->comm, st));
    if (MPI_Alltoall(x->sc, 1, MPI_INT, x->rc, 1, MPI_INT, d->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: exchanging the sizes of the overlap messages failed");
    int64_t s = 0, r = 0;
    for (int k = 0; k < d->size; k++) {
        x->sd[k] = (int)(s < INT_MAX ? s : INT_MAX);
        x->rd[k] = (int)(r < INT_MAX ? r : INT_MAX);
        s += x->sc[k];
        r += x->rc[k];
    }
    if (s > INT_MAX || r > INT_MAX)
        return GS_ERROR(GS_ERR_UNSUPPORTED,
                        "RAS across ranks: one rank's overlap messages hold %lld entries, more than MPI's int counts "
                        "allow; use fewer overlap layers (preconditioner.overlap) or more ranks",
                        (long long)(s > r ? s : r));
    x->sd[d->size] = (int)s;
    x->rd[d->size] = (int)r;
    return GS_OK;
}

static int cmp_gs_int(const void *a, const void *b)
{
    gs_int x = *(const gs_int *)a, y = *(const gs_int *)b;
    return (x > y) - (x < y);
}

/* The new index of local column c of the owned rows. */
static gs_int new_col(const gs_dist *d, gs_int c)
{
    const gs_int n = d->halo.n_own;
    return c < n ? d->displs[d->rank] + c : d->halo_cols[c - n];
}

/* Sort v[0..k) and drop repeats; the new length. */
static gs_int sort_unique(gs_int *v, gs_int k)
{
    if (k > 1) qsort(v, (size_t)k, sizeof *v, cmp_gs_int);
    gs_int u = 0;
    for (gs_int j = 0; j < k; j++)
        if (u == 0 || v[j] != v[u - 1]) v[u++] = v[j];
    return u;
}

/* G from T: each row of T sorted, repeats dropped (pattern only; T's rows are reordered in place). */
static gs_status compress_rows(gs_csr *T, gs_csr *G)
{
    gs_int nnz = 0, *len = NULL;
    GS_CALL(GS_MALLOC(len, T->nrows + 1));
    for (gs_int i = 0; i < T->nrows; i++) {
        len[i] = sort_unique(T->colind + T->rowptr[i], T->rowptr[i + 1] - T->rowptr[i]);
        nnz += len[i];
    }
    gs_status st = gs_csr_alloc(G, T->nrows, T->ncols, nnz, false);
    for (gs_int i = 0, q = 0; st == GS_OK && i < T->nrows; i++) {
        if (len[i] > 0) memcpy(G->colind + q, T->colind + T->rowptr[i], (size_t)len[i] * sizeof *G->colind);
        q += len[i];
        G->rowptr[i + 1] = q;
    }
    gs_free(&len);
    return st;
}

/* G = this rank's rows of the graph of A + A^T: row i lists the new indices j != lo + i with a_ij or
 * a_ji stored, increasing. The pairs (j, lo + i) of an entry a_ij with an off-rank column j go to j's
 * owner, which adds lo + i to row j. */
static gs_status own_graph(const gs_dist *d, gs_csr *G)
{
    gs_status st = GS_OK;
    const gs_csr *L = &d->local;
    const int P = d->size;
    const gs_int n = d->halo.n_own, lo = d->displs[d->rank];
    xfer x = {0};
    gs_int *deg = NULL, *pairs = NULL, *got = NULL, *cur = NULL;
    gs_csr T = {0};
    int64_t total = 0;

    st = xfer_alloc(&x, P);
    if (st == GS_OK) st = GS_CALLOC(deg, n + 1);
    if (st == GS_OK) st = GS_MALLOC(cur, P + 1);
    if (st == GS_OK)
        for (gs_int i = 0; i < n; i++)
            for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
                gs_int c = L->colind[p];
                if (c == i) continue;
                deg[i]++;
                if (c < n) deg[c]++;
                else x.sc[gs_dist_owner(d, d->halo_cols[c - n])] += 2;
            }
    st = xfer_plan(d, &x, st);
    if (st == GS_OK) st = GS_MALLOC(pairs, x.sd[P] + 1);
    if (st == GS_OK) st = GS_MALLOC(got, x.rd[P] + 1);
    if (st == GS_OK) {
        memcpy(cur, x.sd, (size_t)P * sizeof *cur);
        for (gs_int i = 0; i < n; i++)
            for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
                gs_int c = L->colind[p];
                if (c < n) continue;
                gs_int j = d->halo_cols[c - n];
                int r = gs_dist_owner(d, j);
                pairs[cur[r]++] = j;
                pairs[cur[r]++] = lo + i;
            }
    }
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Alltoallv(pairs, x.sc, x.sd, MPI_INT32_T, got, x.rc, x.rd, MPI_INT32_T, d->comm));

    /* T: every neighbour once or more; G: T's rows sorted without repeats */
    for (int t = 0; t + 1 < x.rd[P] && st == GS_OK; t += 2) {
        if (got[t] < lo || got[t] >= lo + n)
            st = GS_ERROR(GS_ERR_INTERNAL, "RAS across ranks: rank %d got the graph row %d it does not own", d->rank,
                          (int)got[t]);
        else deg[got[t] - lo]++;
    }
    for (gs_int i = 0; i < n; i++) total += deg[i];
    if (st == GS_OK && total > GS_INT_MAX)
        st = GS_ERROR(GS_ERR_UNSUPPORTED,
                      "RAS across ranks: rank %d's graph rows hold %lld edges, over the 32-bit limit", d->rank,
                      (long long)total);
    if (st == GS_OK) st = gs_csr_alloc(&T, n, d->n_global, (gs_int)total, false);
    if (st == GS_OK) {
        for (gs_int i = 0; i < n; i++) T.rowptr[i + 1] = T.rowptr[i] + deg[i];
        for (gs_int i = 0; i < n; i++) deg[i] = T.rowptr[i]; /* fill positions */
        for (gs_int i = 0; i < n; i++)
            for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
                gs_int c = L->colind[p];
                if (c == i) continue;
                T.colind[deg[i]++] = new_col(d, c);
                if (c < n) T.colind[deg[c]++] = lo + i;
            }
        for (int t = 0; t + 1 < x.rd[P]; t += 2) T.colind[deg[got[t] - lo]++] = got[t + 1];
        st = compress_rows(&T, G);
    }
    st = gs_dist_agree(d->comm, st);
cleanup:
    xfer_free(&x);
    gs_free(&deg);
    gs_free(&pairs);
    gs_free(&got);
    gs_free(&cur);
    gs_csr_free(&T);
    if (st != GS_OK) gs_csr_free(G);
    return st;
}

/* The owners' answers for the rows this rank asked: per row the integers (original index, length of its
 * row of A, length of its graph row, A's columns, the graph's columns) and the doubles (A's values). The
 * rows asked of this rank are asked[0..); xi, xd get the send counts of the answers by requesting rank. */
static gs_status answer(const gs_dist *d, const gs_csr *G, const xfer *q, const gs_int *asked, bool with_graph,
                        xfer *xi, xfer *xd)
{
    const gs_csr *L = &d->local;
    const gs_int n = d->halo.n_own;
    for (int r = 0; r < d->size; r++) {
        int64_t ni = 0, nd = 0;
        for (int t = q->rd[r]; t < q->rd[r + 1]; t++) {
            gs_int i = asked[t];
            if (i < 0 || i >= n)
                return GS_ERROR(GS_ERR_INTERNAL, "RAS across ranks: rank %d was asked for row %d of its %d", d->rank,
                                (int)i, (int)n);
            gs_int alen = L->rowptr[i + 1] - L->rowptr[i], glen = with_graph ? G->rowptr[i + 1] - G->rowptr[i] : 0;
            ni += 3 + alen + glen;
            nd += alen;
        }
        if (ni > INT_MAX)
            return GS_ERROR(GS_ERR_UNSUPPORTED,
                            "RAS across ranks: the overlap rows rank %d sends to rank %d hold more than 2^31 entries",
                            d->rank, r);
        xi->sc[r] = (int)ni;
        xd->sc[r] = (int)nd;
    }
    return GS_OK;
}

/* The answers packed in the order asked (grouped by requesting rank, as the displacements). */
static void pack_answers(const gs_dist *d, const gs_csr *G, const gs_int *asked, int nasked, bool with_graph,
                         gs_int *ib, double *db)
{
    const gs_csr *L = &d->local;
    size_t a = 0, b = 0;
    for (int t = 0; t < nasked; t++) {
        gs_int i = asked[t];
        gs_int alen = L->rowptr[i + 1] - L->rowptr[i], glen = with_graph ? G->rowptr[i + 1] - G->rowptr[i] : 0;
        ib[a++] = d->rows[i];
        ib[a++] = alen;
        ib[a++] = glen;
        for (gs_int p = L->rowptr[i]; p < L->rowptr[i + 1]; p++) {
            ib[a++] = new_col(d, L->colind[p]);
            db[b++] = L->val[p];
        }
        for (gs_int p = 0; p < glen; p++) ib[a++] = G->colind[G->rowptr[i] + p];
    }
}

/* out = the rows want[0..nw) (increasing off-rank new indices) as their owners answered: ib (ni
 * integers) and db, in the order of want. */
static gs_status unpack_answers(const gs_dist *d, gs_int nw, const gs_int *want, const gs_int *ib, int64_t ni,
                                const double *db, bool with_graph, layer *out)
{
    int64_t a = 0, nnzA = 0, nnzG = 0;
    for (gs_int j = 0; j < nw; j++) { /* sizes, and a check of the stream's framing */
        if (a + 3 > ni || ib[a + 1] < 0 || ib[a + 2] < 0 || a + 3 + ib[a + 1] + ib[a + 2] > ni)
            return GS_ERROR(GS_ERR_INTERNAL, "RAS across ranks: rank %d got a malformed answer for row %d", d->rank,
                            (int)want[j]);
        nnzA += ib[a + 1];
        nnzG += ib[a + 2];
        a += 3 + ib[a + 1] + ib[a + 2];
    }
    if (nnzA > GS_INT_MAX || nnzG > GS_INT_MAX)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "RAS across ranks: rank %d's overlap rows hold more than 2^31 entries",
                        d->rank);
    out->n = nw;
    GS_CALL(GS_MALLOC(out->idx, nw + 1));
    GS_CALL(GS_MALLOC(out->orig, nw + 1));
    GS_CALL(gs_csr_alloc(&out->A, nw, d->n_global, (gs_int)nnzA, true));
    if (with_graph) GS_CALL(gs_csr_alloc(&out->G, nw, d->n_global, (gs_int)nnzG, false));
    gs_int qa = 0, qg = 0;
    int64_t b = 0;
    a = 0;
    for (gs_int j = 0; j < nw; j++) {
        gs_int alen = ib[a + 1], glen = ib[a + 2];
        out->idx[j] = want[j];
        out->orig[j] = ib[a];
        a += 3;
        for (gs_int p = 0; p < alen; p++) {
            out->A.colind[qa] = ib[a++];
            out->A.val[qa++] = db[b++];
        }
        out->A.rowptr[j + 1] = qa;
        for (gs_int p = 0; p < glen; p++) out->G.colind[qg++] = ib[a++];
        if (with_graph) out->G.rowptr[j + 1] = qg;
    }
    return GS_OK;
}

/* Fetch the rows want[0..nw) (increasing off-rank new indices) from their owners into out: the requests,
 * then the answers (G: this rank's graph rows, sent when with_graph, the same on every rank). */
static gs_status fetch_layer(const gs_dist *d, const gs_csr *G, gs_int nw, const gs_int *want, bool with_graph,
                             layer *out)
{
    gs_status st = GS_OK;
    const int P = d->size;
    xfer q = {0}, xi = {0}, xd = {0};
    gs_int *req = NULL, *asked = NULL, *ib = NULL, *ir = NULL;
    double *db = NULL, *dr = NULL;

    st = xfer_alloc(&q, P);
    if (st == GS_OK) st = xfer_alloc(&xi, P);
    if (st == GS_OK) st = xfer_alloc(&xd, P);
    if (st == GS_OK) st = GS_MALLOC(req, nw + 1);
    if (st == GS_OK)
        for (gs_int j = 0; j < nw; j++) {
            int r = gs_dist_owner(d, want[j]);
            q.sc[r]++;
            req[j] = want[j] - d->displs[r];
        }
    st = xfer_plan(d, &q, st);
    if (st == GS_OK) st = GS_MALLOC(asked, q.rd[P] + 1);
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Alltoallv(req, q.sc, q.sd, MPI_INT32_T, asked, q.rc, q.rd, MPI_INT32_T, d->comm));

    st = answer(d, G, &q, asked, with_graph, &xi, &xd);
    st = xfer_plan(d, &xi, st);
    st = xfer_plan(d, &xd, st);
    if (st == GS_OK) st = GS_MALLOC(ib, xi.sd[P] + 1);
    if (st == GS_OK) st = GS_MALLOC(db, xd.sd[P] + 1);
    if (st == GS_OK) st = GS_MALLOC(ir, xi.rd[P] + 1);
    if (st == GS_OK) st = GS_MALLOC(dr, xd.rd[P] + 1);
    if (st == GS_OK) pack_answers(d, G, asked, q.rd[P], with_graph, ib, db);
    GS_TRY(gs_dist_agree(d->comm, st));
    MPI_TRY(MPI_Alltoallv(ib, xi.sc, xi.sd, MPI_INT32_T, ir, xi.rc, xi.rd, MPI_INT32_T, d->comm));
    MPI_TRY(MPI_Alltoallv(db, xd.sc, xd.sd, MPI_DOUBLE, dr, xd.rc, xd.rd, MPI_DOUBLE, d->comm));
    st = unpack_answers(d, nw, want, ir, xi.rd[P], dr, with_graph, out);
    st = gs_dist_agree(d->comm, st);
cleanup:
    xfer_free(&q);
    xfer_free(&xi);
    xfer_free(&xd);
    gs_free(&req);
    gs_free(&asked);
    gs_free(&ib);
    gs_free(&ir);
    gs_free(&db);
    gs_free(&dr);
    return st;
}

/* The layers 1..delta: layer k = the neighbours of layer k - 1 (layer 0: the owned rows) in the graph
 * that are neither owned nor in an earlier layer, fetched with their graph rows unless k is the last. */
static gs_status grow(const gs_dist *d, const gs_csr *G, int delta, layer *lay)
{
    gs_status st = GS_OK;
    const gs_int lo = d->displs[d->rank], hi = d->displs[d->rank + 1];
    gs_int *have = NULL, nhave = 0, *cand = NULL, *merged = NULL;
    for (int k = 0; k < delta; k++) {
        const gs_csr *F = k == 0 ? G : &lay[k - 1].G;
        gs_int nc = 0;
        st = GS_MALLOC(cand, F->nnz + 1);
        if (st == GS_OK) {
            if (F->nnz > 0) memcpy(cand, F->colind, (size_t)F->nnz * sizeof *cand);
            gs_int u = sort_unique(cand, F->nnz);
            for (gs_int p = 0, h = 0; p < u; p++) { /* drop the owned rows and the earlier layers' */
                gs_int c = cand[p];
                while (h < nhave && have[h] < c) h++;
                if ((c >= lo && c < hi) || (h < nhave && have[h] == c)) continue;
                cand[nc++] = c;
            }
        }
        st = gs_dist_agree(d->comm, st);
        long long most = nc, top = 0; /* no rank grows any further: the remaining layers are empty */
        if (st == GS_OK && MPI_Allreduce(&most, &top, 1, MPI_LONG_LONG, MPI_MAX, d->comm) != MPI_SUCCESS)
            st = GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on the overlap's growth failed");
        if (st == GS_OK && top == 0) {
            gs_free(&cand);
            break;
        }
        if (st == GS_OK) st = fetch_layer(d, G, nc, cand, k + 1 < delta, &lay[k]);
        if (st == GS_OK && k + 1 < delta) { /* have = have u cand, both increasing and disjoint */
            st = GS_MALLOC(merged, nhave + nc + 1);
            if (st == GS_OK) {
                gs_int a = 0, b = 0, t = 0;
                while (a < nhave || b < nc)
                    merged[t++] = (b >= nc || (a < nhave && have[a] < cand[b])) ? have[a++] : cand[b++];
                gs_free(&have);
                have = merged;
                merged = NULL;
                nhave = t;
            }
            st = gs_dist_agree(d->comm, st);
        }
        gs_free(&cand);
        if (st != GS_OK) break; /* agreed: every rank leaves here */
    }
    gs_free(&have);
    gs_free(&merged);
    return st;
}

/* A row of S: sorted by key, the original index; src >= 0: owned row src, < 0: overlap row -src - 1. */
typedef struct ext_row {
    gs_int key, src;
} ext_row;

static int cmp_ext_row(const void *a, const void *b)
{
    gs_int x = ((const ext_row *)a)->key, y = ((const ext_row *)b)->key;
    return (x > y) - (x < y);
}

/* An overlap row: its new index, and where its fetched data lie (layer k, row j). */
typedef struct ovl_ref {
    gs_int idx;
    int k;
    gs_int j;
} ovl_ref;

static int cmp_ovl_ref(const void *a, const void *b)
{
    gs_int x = ((const ovl_ref *)a)->idx, y = ((const ovl_ref *)b)->idx;
    return (x > y) - (x < y);
}

typedef struct col_val {
    gs_int c;
    double v;
} col_val;

static int cmp_col_val(const void *a, const void *b)
{
    gs_int x = ((const col_val *)a)->c, y = ((const col_val *)b)->c;
    return (x > y) - (x < y);
}

/* The position in S of new index c, or -1 when c is not in S. */
static gs_int position(const gs_dist *d, const gs_dist_subdomain *s, gs_int c)
{
    const gs_int lo = d->displs[d->rank];
    if (c >= lo && c < lo + s->n_own) return s->own_pos[c - lo];
    const gs_int *f = s->n_overlap ? bsearch(&c, s->ovl_new, (size_t)s->n_overlap, sizeof c, cmp_gs_int) : NULL;
    return f ? s->ovl_pos[f - s->ovl_new] : -1;
}

/* S's rows: the overlap by new index (ovl_new, and ref[k] for its data), all of S by original index
 * (names, own_pos, ovl_pos). */
static gs_status order_rows(const gs_dist *d, const layer *lay, int delta, gs_dist_subdomain *s, ovl_ref *ref)
{
    gs_status st = GS_OK;
    ext_row *all = NULL;
    const gs_int n = s->n_own, no = s->n_overlap;
    gs_int t = 0;
    for (int k = 0; k < delta; k++)
        for (gs_int j = 0; j < lay[k].n; j++) ref[t++] = (ovl_ref){lay[k].idx[j], k, j};
    if (no > 1) qsort(ref, (size_t)no, sizeof *ref, cmp_ovl_ref);
    GS_TRY(GS_MALLOC(all, s->m + 1));
    for (gs_int i = 0; i < n; i++) all[i] = (ext_row){d->rows[i], i};
    for (gs_int k = 0; k < no; k++) {
        s->ovl_new[k] = ref[k].idx;
        all[n + k] = (ext_row){lay[ref[k].k].orig[ref[k].j], -k - 1};
    }
    if (s->m > 1) qsort(all, (size_t)s->m, sizeof *all, cmp_ext_row);
    for (gs_int p = 0; p < s->m; p++) {
        if (p > 0 && all[p].key == all[p - 1].key)
            GS_FAIL(GS_ERR_INTERNAL, "RAS across ranks: original row %d is twice in rank %d's subdomain",
                    (int)all[p].key + 1, d->rank);
        s->names[p] = all[p].key;
        if (all[p].src >= 0) s->own_pos[all[p].src] = p;
        else s->ovl_pos[-all[p].src - 1] = p;
    }
cleanup:
    gs_free(&all);
    return st;
}

/* Row p of A(S, S) into buf (positions in S, values) from the source row's new-index columns; the
 * number of entries kept. An owned row's columns are local ones. */
static gs_int subdomain_row(const gs_dist *d, const gs_dist_subdomain *s, const layer *lay, const ovl_ref *ref,
                            gs_int src, col_val *buf)
{
    gs_int m = 0;
    if (src >= 0) {
        const gs_csr *L = &d->local;
        for (gs_int q = L->rowptr[src]; q < L->rowptr[src + 1]; q++) {
            gs_int c = L->colind[q], pos = c < s->n_own ? s->own_pos[c] : position(d, s, new_col(d, c));
            if (pos >= 0) buf[m++] = (col_val){pos, L->val[q]};
        }
    } else {
        const ovl_ref *r = &ref[-src - 1];
        const gs_csr *A = &lay[r->k].A;
        for (gs_int q = A->rowptr[r->j]; q < A->rowptr[r->j + 1]; q++) {
            gs_int pos = position(d, s, A->colind[q]);
            if (pos >= 0) buf[m++] = (col_val){pos, A->val[q]};
        }
    }
    if (m > 1) qsort(buf, (size_t)m, sizeof *buf, cmp_col_val);
    return m;
}

/* s's rows, positions and A(S, S) from the owned rows and the fetched layers (no communication). */
static gs_status assemble(const gs_dist *d, const layer *lay, int delta, gs_dist_subdomain *s)
{
    gs_status st = GS_OK;
    ovl_ref *ref = NULL;
    gs_int *src = NULL;
    col_val *buf = NULL;
    const gs_int n = s->n_own;
    int64_t no = 0, width = d->local.ncols;
    for (int k = 0; k < delta; k++) {
        no += lay[k].n;
        for (gs_int j = 0; j < lay[k].n; j++) {
            gs_int len = lay[k].A.rowptr[j + 1] - lay[k].A.rowptr[j];
            if (len > width) width = len;
        }
    }
    if (n + no > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "RAS across ranks: rank %d's subdomain holds %lld rows, over the 32-bit limit",
                d->rank, (long long)(n + no));
    s->n_overlap = (gs_int)no;
    s->m = n + s->n_overlap;
    GS_TRY(GS_MALLOC(ref, no + 1));
    GS_TRY(GS_MALLOC(s->names, s->m + 1));
    GS_TRY(GS_MALLOC(s->own_pos, n + 1));
    GS_TRY(GS_MALLOC(s->ovl_new, no + 1));
    GS_TRY(GS_MALLOC(s->ovl_pos, no + 1));
    GS_TRY(order_rows(d, lay, delta, s, ref));

    /* src[p]: the row behind position p; then A(S, S) row by row, counted first */
    GS_TRY(GS_MALLOC(src, s->m + 1));
    for (gs_int i = 0; i < n; i++) src[s->own_pos[i]] = i;
    for (gs_int k = 0; k < s->n_overlap; k++) src[s->ovl_pos[k]] = -k - 1;
    GS_TRY(GS_MALLOC(buf, width + 1));
    int64_t nnz = 0;
    for (gs_int p = 0; p < s->m; p++) nnz += subdomain_row(d, s, lay, ref, src[p], buf);
    if (nnz > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "RAS across ranks: rank %d's subdomain holds %lld entries, over the 32-bit limit",
                d->rank, (long long)nnz);
    GS_TRY(gs_csr_alloc(&s->A, s->m, s->m, (gs_int)nnz, true));
    gs_int q = 0;
    for (gs_int p = 0; p < s->m; p++) {
        gs_int k = subdomain_row(d, s, lay, ref, src[p], buf);
        for (gs_int t = 0; t < k; t++, q++) {
            s->A.colind[q] = buf[t].c;
            s->A.val[q] = buf[t].v;
        }
        s->A.rowptr[p + 1] = q;
    }
cleanup:
    gs_free(&ref);
    gs_free(&src);
    gs_free(&buf);
    return st;
}

void gs_dist_subdomain_free(gs_dist_subdomain *s)
{
    if (!s) return;
    gs_free(&s->names);
    gs_free(&s->own_pos);
    gs_free(&s->ovl_new);
    gs_free(&s->ovl_pos);
    gs_csr_free(&s->A);
    gs_halo_free(&s->xchg);
    memset(s, 0, sizeof *s);
}

gs_status gs_dist_subdomain_create(const gs_dist *d, int delta, gs_dist_subdomain *s)
{
    gs_status st = GS_OK;
    gs_csr G = {0};
    layer *lay = NULL;
    double t0 = gs_wtime();
    memset(s, 0, sizeof *s);
    s->delta = delta;
    s->n_own = d->halo.n_own;
    if (delta < 0) st = GS_ERROR(GS_ERR_ARG, "RAS across ranks: %d overlap layers; expected >= 0", delta);
    if (st == GS_OK && delta > 0) st = GS_CALLOC(lay, delta);
    GS_TRY(gs_dist_agree(d->comm, st));
    if (delta > 0) {
        GS_TRY(own_graph(d, &G));
        GS_TRY(grow(d, &G, delta, lay));
    }
    st = assemble(d, lay, delta, s);
    GS_TRY(gs_dist_halo_create(d, s->n_overlap, s->ovl_new, st, &s->xchg));
    s->time_build = gs_wtime() - t0;
cleanup:
    if (lay)
        for (int k = 0; k < delta; k++) layer_free(&lay[k]);
    gs_free(&lay);
    gs_csr_free(&G);
    if (st != GS_OK) gs_dist_subdomain_free(s);
    return st;
}
