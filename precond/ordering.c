/* Orderings and partitions of the graph of A + A^T: reverse Cuthill-McKee, METIS nested dissection and
 * k-way parts, and the growth of a vertex set by layers of neighbours (overlapping Schwarz subdomains). */
#include "precond/ordering.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <metis.h>

#include "core/mem.h"

/* A vertex and its degree, ordered by (degree, index): the Cuthill-McKee visiting order. */
typedef struct deg_node {
    gs_int deg, v;
} deg_node;

static int deg_node_cmp(const void *a, const void *b)
{
    const deg_node *x = a, *y = b;
    if (x->deg != y->deg) return x->deg < y->deg ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static gs_status check_square(const gs_csr *A, const char *who)
{
    if (!A || !A->rowptr) return GS_ERROR(GS_ERR_ARG, "%s: the matrix is NULL or has no row pointer", who);
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix is %d x %d; a square matrix is required", who,
                        (int)A->nrows, (int)A->ncols);
    return GS_OK;
}

/* Breadth-first level structure rooted at r, restricted to r's connected component. Vertices are
 * written to q in BFS order; mark[v] == stamp flags visited. Returns the number of vertices reached,
 * the eccentricity of r (*ecc = number of levels - 1) and the start of the last level in q. */
static gs_int bfs_levels(const gs_csr *G, gs_int r, gs_int *mark, gs_int stamp, gs_int *q, gs_int *ecc,
                         gs_int *last_start)
{
    gs_int head = 0, tail = 0, level = 0;
    q[tail++] = r;
    mark[r] = stamp;
    gs_int level_start = 0;
    while (head < tail) {
        gs_int level_end = tail;
        level_start = head;
        for (; head < level_end; head++) {
            gs_int v = q[head];
            for (gs_int p = G->rowptr[v]; p < G->rowptr[v + 1]; p++) {
                gs_int w = G->colind[p];
                if (mark[w] != stamp) {
                    mark[w] = stamp;
                    q[tail++] = w;
                }
            }
        }
        if (tail > level_end) level++;
    }
    *ecc = level;
    *last_start = level_start;
    return tail;
}

/* George-Liu pseudo-peripheral node of the component of `start`: repeatedly move to a vertex of
 * minimum degree (ties: lowest index) in the last BFS level while that increases the eccentricity. */
static gs_int pseudo_peripheral(const gs_csr *G, gs_int start, gs_int *mark, gs_int *stamp, gs_int *q)
{
    gs_int r = start, ecc, last;
    gs_int cnt = bfs_levels(G, r, mark, ++*stamp, q, &ecc, &last);
    for (;;) {
        gs_int best = -1, best_deg = GS_INT_MAX;
        for (gs_int p = last; p < cnt; p++) {
            gs_int v = q[p];
            gs_int d = G->rowptr[v + 1] - G->rowptr[v];
            if (d < best_deg || (d == best_deg && v < best)) {
                best = v;
                best_deg = d;
            }
        }
        if (best < 0 || best == r) break;
        gs_int ecc2, last2;
        gs_int cnt2 = bfs_levels(G, best, mark, ++*stamp, q, &ecc2, &last2);
        if (ecc2 <= ecc) break;
        r = best;
        ecc = ecc2;
        last = last2;
        cnt = cnt2;
    }
    return r;
}

gs_status gs_rcm(const gs_csr *A, gs_int *perm)
{
    gs_status st = GS_OK;
    gs_csr G = {0};
    gs_int *mark = NULL, *q = NULL, *order = NULL;
    unsigned char *visited = NULL;
    deg_node *nb = NULL;

    GS_TRY(check_square(A, "RCM"));
    if (!perm) GS_FAIL(GS_ERR_ARG, "RCM: the output permutation is NULL");
    gs_int n = A->nrows;
    if (n == 0) goto cleanup;

    GS_TRY(gs_csr_symmetric_graph(A, &G));
    GS_TRY(GS_CALLOC(mark, n));
    GS_TRY(GS_MALLOC(q, n));
    GS_TRY(GS_MALLOC(order, n));
    gs_int maxdeg = 0;
    for (gs_int v = 0; v < n; v++) {
        gs_int d = G.rowptr[v + 1] - G.rowptr[v];
        if (d > maxdeg) maxdeg = d;
    }
    GS_TRY(GS_MALLOC(nb, maxdeg > 0 ? maxdeg : 1));

    GS_TRY(GS_CALLOC(visited, n));
    gs_int stamp = 0, numbered = 0;
    for (gs_int s = 0; s < n; s++) {
        if (visited[s]) continue;
        gs_int r = pseudo_peripheral(&G, s, mark, &stamp, q);
        /* Cuthill-McKee: BFS from r, each vertex's new neighbours in order of increasing degree. */
        gs_int head = numbered;
        order[numbered++] = r;
        visited[r] = 1;
        while (head < numbered) {
            gs_int v = order[head++];
            gs_int k = 0;
            for (gs_int p = G.rowptr[v]; p < G.rowptr[v + 1]; p++) {
                gs_int w = G.colind[p];
                if (!visited[w]) {
                    visited[w] = 1;
                    nb[k].v = w;
                    nb[k].deg = G.rowptr[w + 1] - G.rowptr[w];
                    k++;
                }
            }
            qsort(nb, (size_t)k, sizeof *nb, deg_node_cmp);
            for (gs_int i = 0; i < k; i++) order[numbered++] = nb[i].v;
        }
    }
    if (numbered != n) GS_FAIL(GS_ERR_INTERNAL, "RCM numbered %d of %d vertices", (int)numbered, (int)n);
    /* Reverse: perm maps new -> old. */
    for (gs_int i = 0; i < n; i++) perm[i] = order[n - 1 - i];

cleanup:
    gs_csr_free(&G);
    gs_free(&mark);
    gs_free(&q);
    gs_free(&order);
    gs_free(&nb);
    gs_free(&visited);
    return st;
}

static const char *metis_code_name(int rc)
{
    switch (rc) {
    case METIS_ERROR_INPUT: return "METIS_ERROR_INPUT (erroneous input graph or options)";
    case METIS_ERROR_MEMORY: return "METIS_ERROR_MEMORY (METIS ran out of memory)";
    case METIS_ERROR: return "METIS_ERROR (internal METIS error)";
    default: return "an unknown METIS return code";
    }
}

/* G's arrays in METIS's own idx_t (32-bit in Debian's build, 64-bit in others): always converted. */
static gs_status metis_graph(const gs_csr *G, idx_t **xadj, idx_t **adjncy)
{
    GS_CALL(GS_MALLOC(*xadj, (size_t)G->nrows + 1));
    GS_CALL(GS_MALLOC(*adjncy, G->nnz));
    for (gs_int i = 0; i <= G->nrows; i++) (*xadj)[i] = (idx_t)G->rowptr[i];
    for (gs_int p = 0; p < G->nnz; p++) (*adjncy)[p] = (idx_t)G->colind[p];
    return GS_OK;
}

/* METIS_NodeND returns perm with row i of A' = row perm[i] of A, i.e. new -> old like gs_rcm. */
gs_status gs_nd(const gs_csr *A, gs_int *perm)
{
    gs_status st = GS_OK;
    gs_csr G = {0};
    idx_t *xadj = NULL, *adjncy = NULL, *mperm = NULL, *miperm = NULL;

    GS_TRY(check_square(A, "nested dissection"));
    if (!perm) GS_FAIL(GS_ERR_ARG, "nested dissection: the output permutation is NULL");
    gs_int n = A->nrows;
    for (gs_int i = 0; i < n; i++) perm[i] = i;
    if (n <= 1) goto cleanup;
    GS_TRY(gs_csr_symmetric_graph(A, &G));
    if (G.nnz == 0) goto cleanup; /* no edges: nothing to dissect, every order is fill-free */

    GS_TRY(metis_graph(&G, &xadj, &adjncy));
    GS_TRY(GS_MALLOC(mperm, n));
    GS_TRY(GS_MALLOC(miperm, n));
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 0;
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nv = (idx_t)n;
    int rc = METIS_NodeND(&nv, xadj, adjncy, NULL, options, mperm, miperm);
    if (rc != METIS_OK)
        GS_FAIL(GS_ERR_METIS, "METIS_NodeND failed on a graph of %d vertices and %d edges: %s", (int)n,
                (int)(G.nnz / 2), metis_code_name(rc));
    for (gs_int i = 0; i < n; i++) /* in range and inverted by iperm: a permutation */
        if (mperm[i] < 0 || mperm[i] >= nv || miperm[mperm[i]] != i)
            GS_FAIL(GS_ERR_METIS, "METIS_NodeND returned an order of %d vertices that is not a permutation", (int)n);
    for (gs_int i = 0; i < n; i++) perm[i] = (gs_int)mperm[i];

cleanup:
    gs_csr_free(&G);
    gs_free(&xadj);
    gs_free(&adjncy);
    gs_free(&mperm);
    gs_free(&miperm);
    return st;
}

gs_partition_kind gs_partition_kind_of(const char *name)
{
    return name && strcmp(name, "contiguous") == 0 ? GS_PARTITION_CONTIGUOUS : GS_PARTITION_METIS;
}

const char *gs_partition_kind_name(gs_partition_kind k)
{
    return k == GS_PARTITION_CONTIGUOUS ? "contiguous" : "metis";
}

/* Rows in consecutive ranges: row i in part floor(i nparts / n). */
static void contiguous_parts(gs_int n, gs_int nparts, gs_int *part)
{
    for (gs_int i = 0; i < n; i++) part[i] = (gs_int)(((int64_t)i * nparts) / n);
}

/* The least i with floor(i nparts / n) >= r: ceil(r n / nparts). */
gs_int gs_partition_contiguous_start(gs_int n, gs_int nparts, gs_int r)
{
    return (gs_int)(((int64_t)r * n + nparts - 1) / nparts);
}

gs_status gs_partition(const gs_csr *A, gs_int nparts, gs_partition_kind kind, int seed, gs_int *part)
{
    if (kind != GS_PARTITION_CONTIGUOUS) return gs_partition_kway(A, nparts, seed, part);
    GS_CALL(check_square(A, "contiguous partition"));
    if (!part) return GS_ERROR(GS_ERR_ARG, "contiguous partition: the output part array is NULL");
    if (nparts < 1)
        return GS_ERROR(GS_ERR_ARG, "contiguous partition: %d parts requested; at least 1 is needed", (int)nparts);
    contiguous_parts(A->nrows, nparts, part);
    return GS_OK;
}

gs_status gs_partition_kway(const gs_csr *A, gs_int nparts, int seed, gs_int *part)
{
    gs_status st = GS_OK;
    gs_csr G = {0};
    idx_t *xadj = NULL, *adjncy = NULL, *mpart = NULL;

    GS_TRY(check_square(A, "METIS partition"));
    if (!part) GS_FAIL(GS_ERR_ARG, "METIS partition: the output part array is NULL");
    if (nparts < 1) GS_FAIL(GS_ERR_ARG, "METIS partition: %d parts requested; at least 1 is needed", (int)nparts);
    gs_int n = A->nrows;
    if (n == 0) goto cleanup;
    if (nparts == 1) {
        memset(part, 0, (size_t)n * sizeof *part);
        goto cleanup;
    }
    if (nparts >= n) { /* one vertex per part; parts n..nparts-1 stay empty */
        for (gs_int i = 0; i < n; i++) part[i] = i;
        goto cleanup;
    }

    GS_TRY(gs_csr_symmetric_graph(A, &G));
    if (G.nnz == 0) { /* no edges: METIS has nothing to cut; split 0..n-1 into contiguous ranges */
        contiguous_parts(n, nparts, part);
        goto cleanup;
    }

    GS_TRY(metis_graph(&G, &xadj, &adjncy));
    GS_TRY(GS_MALLOC(mpart, n));

    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = (idx_t)seed;
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nv = (idx_t)n, ncon = 1, np = (idx_t)nparts, objval = 0;
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adjncy, NULL, NULL, NULL, &np, NULL, NULL, options,
                                 &objval, mpart);
    if (rc != METIS_OK)
        GS_FAIL(GS_ERR_METIS, "METIS_PartGraphKway failed on a graph of %d vertices and %d edges into %d parts: %s",
                (int)n, (int)(G.nnz / 2), (int)nparts, metis_code_name(rc));
    for (gs_int i = 0; i < n; i++) {
        if (mpart[i] < 0 || mpart[i] >= np)
            GS_FAIL(GS_ERR_METIS, "METIS_PartGraphKway put vertex %d in part %ld; expected 0..%d", (int)i,
                    (long)mpart[i], (int)nparts - 1);
        part[i] = (gs_int)mpart[i];
    }

cleanup:
    gs_csr_free(&G);
    gs_free(&xadj);
    gs_free(&adjncy);
    gs_free(&mpart);
    return st;
}

static int gs_int_cmp(const void *a, const void *b)
{
    gs_int x = *(const gs_int *)a, y = *(const gs_int *)b;
    return (x > y) - (x < y);
}

/* Make room for `need` entries in *buf (capacity *cap), keeping the contents. */
static gs_status reserve(gs_int **buf, int64_t *cap, int64_t need)
{
    if (need <= *cap) return GS_OK;
    if (need > GS_INT_MAX)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "overlap growth: %lld candidate vertices exceed 32-bit indices",
                        (long long)need);
    int64_t c = *cap < 16 ? 16 : *cap;
    while (c < need) c *= 2;
    if (c > GS_INT_MAX) c = GS_INT_MAX;
    GS_CALL(gs_realloc(buf, (size_t)c, sizeof **buf));
    *cap = c;
    return GS_OK;
}

/* Layer by layer with sorted arrays only (no n-sized marker), so growing many small subdomains of a
 * large graph costs O(sum of their sizes * log), not O(n) each:
 *   C = neighbours of the frontier F, sorted and unique;  F' = C \ S;  S = S u F' (merge). */
gs_status gs_grow_overlap(const gs_csr *G, gs_int k, const gs_int *in, int layers, gs_int **out, gs_int *kout)
{
    gs_status st = GS_OK;
    gs_int *set = NULL, *tmp = NULL, *front = NULL, *cand = NULL;
    int64_t cap_set = 0, cap_tmp = 0, cap_front = 0, cap_cand = 0;

    if (out) *out = NULL;
    if (kout) *kout = 0;
    GS_TRY(check_square(G, "overlap growth"));
    if (!out || !kout) GS_FAIL(GS_ERR_ARG, "overlap growth: NULL output pointer");
    if (k < 0 || (k > 0 && !in)) GS_FAIL(GS_ERR_ARG, "overlap growth: invalid input set (k = %d)", (int)k);
    if (layers < 0) GS_FAIL(GS_ERR_ARG, "overlap growth: %d layers requested; expected >= 0", layers);
    gs_int n = G->nrows;
    for (gs_int i = 0; i < k; i++) {
        if (in[i] < 0 || in[i] >= n)
            GS_FAIL(GS_ERR_ARG, "overlap growth: vertex %d at position %d is outside 0..%d", (int)in[i], (int)i,
                    (int)n - 1);
        if (i > 0 && in[i] <= in[i - 1])
            GS_FAIL(GS_ERR_ARG, "overlap growth: the input set is not strictly increasing at position %d (%d after %d)",
                    (int)i, (int)in[i], (int)in[i - 1]);
    }

    gs_int cnt = k, nf = k;
    GS_TRY(reserve(&set, &cap_set, k > 0 ? k : 1)); /* *out is allocated even when empty */
    GS_TRY(reserve(&front, &cap_front, k));
    if (k > 0) {
        memcpy(set, in, (size_t)k * sizeof *set);
        memcpy(front, in, (size_t)k * sizeof *front);
    }
    for (int layer = 0; layer < layers && nf > 0 && cnt < n; layer++) {
        int64_t nc = 0;
        for (gs_int p = 0; p < nf; p++) nc += G->rowptr[front[p] + 1] - G->rowptr[front[p]];
        GS_TRY(reserve(&cand, &cap_cand, nc));
        gs_int c = 0;
        for (gs_int p = 0; p < nf; p++)
            for (gs_int e = G->rowptr[front[p]]; e < G->rowptr[front[p] + 1]; e++) {
                gs_int w = G->colind[e];
                if (w < 0 || w >= n)
                    GS_FAIL(GS_ERR_ARG, "overlap growth: graph row %d has column %d outside 0..%d", (int)front[p],
                            (int)w, (int)n - 1);
                cand[c++] = w;
            }
        if (c > 1) qsort(cand, (size_t)c, sizeof *cand, gs_int_cmp); /* cand is NULL when no vertex has neighbours */
        /* F' = unique(C) \ S, by one walk over both sorted arrays */
        gs_int m = 0;
        for (gs_int p = 0, j = 0; p < c; p++) {
            if (p > 0 && cand[p] == cand[p - 1]) continue;
            while (j < cnt && set[j] < cand[p]) j++;
            if (j < cnt && set[j] == cand[p]) continue;
            cand[m++] = cand[p];
        }
        /* S = S u F' (merge of two sorted disjoint arrays) */
        GS_TRY(reserve(&tmp, &cap_tmp, (int64_t)cnt + m));
        gs_int a = 0, b = 0, t = 0;
        while (a < cnt || b < m) tmp[t++] = (b >= m || (a < cnt && set[a] < cand[b])) ? set[a++] : cand[b++];
        gs_int *sw = set;
        set = tmp;
        tmp = sw;
        int64_t cs = cap_set;
        cap_set = cap_tmp;
        cap_tmp = cs;
        cnt = t;
        /* the new vertices are the next frontier */
        sw = front;
        front = cand;
        cand = sw;
        cs = cap_front;
        cap_front = cap_cand;
        cap_cand = cs;
        nf = m;
    }
    *out = set;
    *kout = cnt;
    set = NULL;

cleanup:
    gs_free(&set);
    gs_free(&tmp);
    gs_free(&front);
    gs_free(&cand);
    return st;
}
