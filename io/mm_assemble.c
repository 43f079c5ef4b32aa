/* Sorted CSR from the triplets of every chunk, in parallel. Files whose entries come row by row with
 * increasing columns (as gpusolve-gen, MatView and most writers of CSR write them) are copied in place:
 * each chunk's columns and values to their offset, row starts where the row index changes. Any other order
 * is placed stably -- every row receives its entries in file order: serially by a counting sort, in
 * parallel through blocks of rows (each chunk's triplets first grouped by block, in order, then each block
 * placed by one thread) -- then each row is sorted stably by column and its repeated entries summed in
 * file order. No atomics: the result is the same whatever the thread count and the path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/mm_internal.h"

typedef struct {
    gs_int c, k; /* column, position in the row (its place in the file among the row's entries) */
    double v;
} slot;

static int slot_cmp(const void *pa, const void *pb)
{
    const slot *a = pa, *b = pb;
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

/* Sorts row [s, e), whose entries are in file order, stably by column and sums repeated columns in file
 * order; returns the new length. tmp holds at least e - s slots. */
static gs_int sort_row(gs_int *col, double *val, gs_int s, gs_int e, slot *tmp)
{
    gs_int len = e - s;
    if (len <= 32) {
        for (gs_int a = s + 1; a < e; a++) {
            gs_int c = col[a];
            double v = val[a];
            gs_int b = a - 1;
            while (b >= s && col[b] > c) {
                col[b + 1] = col[b], val[b + 1] = val[b];
                b--;
            }
            col[b + 1] = c, val[b + 1] = v;
        }
    } else {
        for (gs_int a = 0; a < len; a++) tmp[a] = (slot){col[s + a], a, val[s + a]};
        qsort(tmp, (size_t)len, sizeof *tmp, slot_cmp);
        for (gs_int a = 0; a < len; a++) col[s + a] = tmp[a].c, val[s + a] = tmp[a].v;
    }
    gs_int out = s;
    for (gs_int a = s; a < e; a++) {
        if (out > s && col[out - 1] == col[a]) {
            val[out - 1] += val[a];
        } else {
            col[out] = col[a];
            val[out] = val[a];
            out++;
        }
    }
    return out - s;
}

/* Rows sorted and deduplicated in place (each keeps its start; len[i] its new length); *bad: the first row
 * holding a non-finite sum, or -1. */
static gs_status sort_rows(gs_csr *A, gs_int *len, int threads, gs_int *bad)
{
    gs_int n = A->nrows, maxlen = 0, first_bad = n;
    for (gs_int i = 0; i < n; i++)
        if (A->rowptr[i + 1] - A->rowptr[i] > maxlen) maxlen = A->rowptr[i + 1] - A->rowptr[i];
    bool nomem = false;
#pragma omp parallel num_threads(threads) reduction(min : first_bad) reduction(|| : nomem)
    {
        slot *tmp = NULL;
        if (maxlen > 32 && gs_malloc(&tmp, (size_t)maxlen, sizeof *tmp) != GS_OK) nomem = true;
#pragma omp for schedule(dynamic, 4096)
        for (gs_int i = 0; i < n; i++) {
            if (nomem) continue;
            const gs_int s = A->rowptr[i], e = A->rowptr[i + 1];
            gs_int a = s + 1;
            while (a < e && A->colind[a] > A->colind[a - 1]) a++;
            if (a >= e) { /* in order, nothing repeated: no sum, so every value is a finite one as read */
                len[i] = e - s;
                continue;
            }
            len[i] = sort_row(A->colind, A->val, s, e, tmp);
            for (gs_int k = s; k < s + len[i]; k++)
                if (!isfinite(A->val[k]) && i < first_bad) first_bad = i;
        }
        gs_free(&tmp);
    }
    if (nomem) return GS_ERROR(GS_ERR_MEM, "out of host memory while sorting the rows of a %d-row matrix", (int)n);
    *bad = first_bad < n ? first_bad : -1;
    return GS_OK;
}

/* Serial stable placement: rows counted, entries placed in file order (next: n row cursors). */
static void place_serial(mm_body *b, gs_csr *A, gs_int *next)
{
    const gs_int n = A->nrows;
    mm_chunk *ch = b->chunks;
    memset(A->rowptr, 0, ((size_t)n + 1) * sizeof *A->rowptr);
    for (long k = 0; k < b->nchunks; k++)
        for (long long e = 0; e < ch[k].pushes; e++) A->rowptr[ch[k].ri[e] + 1]++;
    for (gs_int i = 0; i < n; i++) A->rowptr[i + 1] += A->rowptr[i];
    memcpy(next, A->rowptr, (size_t)n * sizeof *next);
    for (long k = 0; k < b->nchunks; k++) {
        for (long long e = 0; e < ch[k].pushes; e++) {
            const gs_int p = next[ch[k].ri[e]]++;
            A->colind[p] = ch[k].ci[e];
            A->val[p] = ch[k].v[e];
        }
        mm_chunk_free(&ch[k]);
    }
}

/* Parallel stable placement through R blocks of consecutive rows. Each chunk sorts its triplets by block,
 * stably, into an index list (idx: a chunk's positions, at its offset, block by block); then each block,
 * by one thread, counts its rows and places its triplets chunk after chunk, in list order -- so every row
 * receives its entries in file order. The chunks' triplets are freed at the end. next: n cursors. */
static gs_status place_blocks(mm_body *b, const gs_int *offset, gs_csr *A, gs_int *next, int threads)
{
    gs_status st = GS_OK;
    const gs_int n = A->nrows;
    const long nc = b->nchunks;
    mm_chunk *ch = b->chunks;
    const long R = n < 8L * threads ? (n > 0 ? n : 1) : 8L * threads;
    const gs_int bsize = (gs_int)((n + R - 1) / R > 0 ? (n + R - 1) / R : 1);
    gs_int *at = NULL, *bcount = NULL, *idx = NULL;
    GS_TRY(GS_MALLOC(at, (size_t)nc * (size_t)(R + 1))); /* chunk k, block r: at[k * (R + 1) + r] */
    GS_TRY(GS_MALLOC(bcount, R));
    GS_TRY(GS_MALLOC(idx, offset[nc]));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long k = 0; k < nc; k++) {
        gs_int *a = at + k * (R + 1), *list = idx + offset[k];
        memset(a, 0, (size_t)(R + 1) * sizeof *a);
        for (long long e = 0; e < ch[k].pushes; e++) a[ch[k].ri[e] / bsize + 1]++;
        for (long r = 0; r < R; r++) a[r + 1] += a[r]; /* a[r]: block r's first list place */
        for (long long e = 0; e < ch[k].pushes; e++) list[a[ch[k].ri[e] / bsize]++] = (gs_int)e;
        for (long r = R; r > 0; r--) a[r] = a[r - 1]; /* back to the starts (a[r + 1]: block r's end) */
        a[0] = 0;
    }
    /* rows before block r: the entries of the blocks before it */
    for (long r = 0; r < R; r++) {
        gs_int c = 0;
        for (long k = 0; k < nc; k++) c += at[k * (R + 1) + r + 1] - at[k * (R + 1) + r];
        bcount[r] = c;
    }
    gs_int pos = 0;
    for (long r = 0; r < R; r++) {
        const gs_int c = bcount[r];
        bcount[r] = pos;
        pos += c;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long r = 0; r < R; r++) {
        const long lo_l = r * (long)bsize, hi_l = lo_l + bsize; /* (long: no overflow near the index limit) */
        const gs_int lo = lo_l < n ? (gs_int)lo_l : n, hi = hi_l < n ? (gs_int)hi_l : n;
        for (gs_int i = lo; i < hi; i++) next[i] = 0;
        for (long k = 0; k < nc; k++) {
            const gs_int *a = at + k * (R + 1), *list = idx + offset[k], *ri = ch[k].ri;
            for (gs_int q = a[r]; q < a[r + 1]; q++) next[ri[list[q]]]++;
        }
        gs_int p = bcount[r];
        for (gs_int i = lo; i < hi; i++) {
            const gs_int c = next[i];
            A->rowptr[i] = next[i] = p;
            p += c;
        }
        for (long k = 0; k < nc; k++) {
            const gs_int *a = at + k * (R + 1), *list = idx + offset[k];
            const mm_chunk *c = &ch[k];
            for (gs_int q = a[r]; q < a[r + 1]; q++) {
                const gs_int e = list[q], t = next[c->ri[e]]++;
                A->colind[t] = c->ci[e];
                A->val[t] = c->v[e];
            }
        }
    }
    A->rowptr[n] = offset[nc];
    for (long k = 0; k < nc; k++) mm_chunk_free(&ch[k]);
cleanup:
    gs_free(&at);
    gs_free(&bcount);
    gs_free(&idx);
    return st;
}

/* Whether the triplets of all chunks, in order, are row-major with strictly increasing columns. */
static bool triplets_sorted(const mm_body *b)
{
    const mm_chunk *prev = NULL;
    for (long k = 0; k < b->nchunks; k++) {
        const mm_chunk *c = &b->chunks[k];
        if (c->pushes == 0) continue;
        if (c->unsorted) return false;
        if (prev) {
            const gs_int pi = prev->ri[prev->pushes - 1], pj = prev->ci[prev->pushes - 1];
            if (!(c->ri[0] > pi || (c->ri[0] == pi && c->ci[0] > pj))) return false;
        }
        prev = c;
    }
    return true;
}

/* The in-place path for sorted triplets (no repeated positions, so no sums): every row start is written
 * once, by the chunk holding the first entry at or after it. */
static void assemble_sorted(mm_body *b, const gs_int *offset, int threads, gs_csr *A)
{
    const long nc = b->nchunks;
    mm_chunk *ch = b->chunks;
    const gs_int n = A->nrows, nnz = offset[nc];
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1 && nc > 1)
    for (long k = 0; k < nc; k++) {
        const mm_chunk *c = &ch[k];
        if (c->pushes == 0) continue;
        /* the row of the entry before this chunk's first (-1: none) */
        gs_int before = -1;
        for (long q = k - 1; q >= 0 && before < 0; q--)
            if (ch[q].pushes) before = ch[q].ri[ch[q].pushes - 1];
        const gs_int base = offset[k];
        for (long long e = 0; e < c->pushes; e++) {
            const gs_int r = c->ri[e], prev = e ? c->ri[e - 1] : before;
            for (gs_int i = prev + 1; i <= r; i++) A->rowptr[i] = base + (gs_int)e;
        }
        memcpy(A->colind + base, c->ci, (size_t)c->pushes * sizeof *A->colind);
        memcpy(A->val + base, c->v, (size_t)c->pushes * sizeof *A->val);
    }
    /* rows after the last entry (all rows when there is none) */
    gs_int last = -1;
    for (long k = nc - 1; k >= 0 && last < 0; k--)
        if (ch[k].pushes) last = ch[k].ri[ch[k].pushes - 1];
    for (gs_int i = last + 1; i <= n; i++) A->rowptr[i] = nnz;
    for (long k = 0; k < nc; k++) mm_chunk_free(&ch[k]);
}

gs_status mm_assemble_csr(const mm_header *h, mm_body *b, int threads, gs_csr *A)
{
    gs_status st = GS_OK;
    gs_int *next = NULL, *offset = NULL;
    const gs_int n = (gs_int)h->nrows, nnz = (gs_int)b->state.pushes;
    const long nc = b->nchunks;
    mm_chunk *ch = b->chunks;
    GS_TRY(gs_csr_alloc(A, n, (gs_int)h->ncols, nnz, true));
    /* file positions: the chunks' triplets numbered in order */
    GS_TRY(GS_MALLOC(offset, nc + 1));
    offset[0] = 0;
    for (long k = 0; k < nc; k++) offset[k + 1] = offset[k] + (gs_int)ch[k].pushes;
    if (triplets_sorted(b)) {
        assemble_sorted(b, offset, threads, A);
        goto cleanup;
    }
    GS_TRY(GS_MALLOC(next, n));
    if (threads > 1 && nc > 1)
        GS_TRY(place_blocks(b, offset, A, next, threads));
    else
        place_serial(b, A, next);
    gs_int bad = -1;
    GS_TRY(sort_rows(A, next, threads, &bad));
    if (bad >= 0) {
        for (gs_int k = A->rowptr[bad]; k < A->rowptr[bad] + next[bad]; k++)
            if (!isfinite(A->val[k])) {
                GS_FAIL(GS_ERR_IO,
                        "%s: the repeated entries at (%d,%d) add up to %g, beyond the range of a double; expected the "
                        "entries given for one position to sum to a finite number",
                        h->path, (int)bad + 1, (int)A->colind[k] + 1, A->val[k]);
            }
    }
    /* rows that lost repeated entries: close the gaps (in order, so moves never overwrite) */
    gs_int out = 0;
    for (gs_int i = 0; i < n; i++) {
        gs_int s = A->rowptr[i];
        if (s != out) {
            memmove(A->colind + out, A->colind + s, (size_t)next[i] * sizeof *A->colind);
            memmove(A->val + out, A->val + s, (size_t)next[i] * sizeof *A->val);
        }
        A->rowptr[i] = out;
        out += next[i];
    }
    A->rowptr[n] = out;
    A->nnz = out;
cleanup:
    gs_free(&offset);
    gs_free(&next);
    if (st != GS_OK) gs_csr_free(A);
    return st;
}
