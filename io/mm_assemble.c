/* Sorted CSR from the triplets of every chunk, in parallel: rows counted, entries scattered to their rows
 * (in any order: threads race for slots), then each row sorted by (column, position in the file) and its
 * repeated entries summed in file order, so the result is the same whatever the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/mm_internal.h"

typedef struct {
    gs_int c, k; /* column, position of the triplet in the file */
    double v;
} slot;

static int slot_cmp(const void *pa, const void *pb)
{
    const slot *a = pa, *b = pb;
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    return (a->k > b->k) - (a->k < b->k);
}

/* Sorts row [s, e) by (column, file position), sums repeated columns; returns the new length. tmp holds
 * at least e - s slots. */
static gs_int sort_row(gs_int *col, gs_int *key, double *val, gs_int s, gs_int e, slot *tmp)
{
    gs_int len = e - s;
    if (len <= 32) {
        for (gs_int a = s + 1; a < e; a++) {
            gs_int c = col[a], k = key[a];
            double v = val[a];
            gs_int b = a - 1;
            while (b >= s && (col[b] > c || (col[b] == c && key[b] > k))) {
                col[b + 1] = col[b], key[b + 1] = key[b], val[b + 1] = val[b];
                b--;
            }
            col[b + 1] = c, key[b + 1] = k, val[b + 1] = v;
        }
    } else {
        for (gs_int a = 0; a < len; a++) tmp[a] = (slot){col[s + a], key[s + a], val[s + a]};
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
static gs_status sort_rows(gs_csr *A, gs_int *key, gs_int *len, int threads, gs_int *bad)
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
            gs_int s = A->rowptr[i];
            len[i] = sort_row(A->colind, key, A->val, s, A->rowptr[i + 1], tmp);
            for (gs_int k = s; k < s + len[i]; k++)
                if (!isfinite(A->val[k]) && i < first_bad) first_bad = i;
        }
        gs_free(&tmp);
    }
    if (nomem) return GS_ERROR(GS_ERR_MEM, "out of host memory while sorting the rows of a %d-row matrix", (int)n);
    *bad = first_bad < n ? first_bad : -1;
    return GS_OK;
}

gs_status mm_assemble_csr(const mm_header *h, mm_body *b, int threads, gs_csr *A)
{
    gs_status st = GS_OK;
    gs_int *key = NULL, *next = NULL, *offset = NULL;
    const gs_int n = (gs_int)h->nrows, nnz = (gs_int)b->state.pushes;
    const long nc = b->nchunks;
    mm_chunk *ch = b->chunks;
    GS_TRY(gs_csr_alloc(A, n, (gs_int)h->ncols, nnz, true));
    GS_TRY(GS_MALLOC(key, nnz));
    GS_TRY(GS_MALLOC(next, n));
    memset(A->rowptr, 0, ((size_t)n + 1) * sizeof *A->rowptr);
    gs_int *cnt = A->rowptr + 1;
    if (threads > 1 && nc > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (long k = 0; k < nc; k++)
            for (long long e = 0; e < ch[k].pushes; e++) {
#pragma omp atomic
                cnt[ch[k].ri[e]]++;
            }
    } else {
        for (long k = 0; k < nc; k++)
            for (long long e = 0; e < ch[k].pushes; e++) cnt[ch[k].ri[e]]++;
    }
    for (gs_int i = 0; i < n; i++) A->rowptr[i + 1] += A->rowptr[i];
    memcpy(next, A->rowptr, (size_t)n * sizeof *next);
    /* file positions: the chunks' triplets numbered in order */
    GS_TRY(GS_MALLOC(offset, nc + 1));
    offset[0] = 0;
    for (long k = 0; k < nc; k++) offset[k + 1] = offset[k] + (gs_int)ch[k].pushes;
    const bool racing = threads > 1 && nc > 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (racing)
    for (long k = 0; k < nc; k++) {
        for (long long e = 0; e < ch[k].pushes; e++) {
            gs_int p;
            if (racing) {
#pragma omp atomic capture
                p = next[ch[k].ri[e]]++;
            } else {
                p = next[ch[k].ri[e]]++;
            }
            A->colind[p] = ch[k].ci[e];
            A->val[p] = ch[k].v[e];
            key[p] = offset[k] + (gs_int)e;
        }
        mm_chunk_free(&ch[k]);
    }
    gs_free(&offset);
    gs_int bad = -1;
    GS_TRY(sort_rows(A, key, next, threads, &bad));
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
    gs_free(&key);
    gs_free(&next);
    if (st != GS_OK) gs_csr_free(A);
    return st;
}
