/* The entries of a Matrix Market file, read region by region (a mapped file is one region; a stream gives
 * regions of its buffer): each region is cut into chunks at line ends, the chunks are parsed by all
 * threads (OpenMP; serially without it), then merged in file order. A chunk that stopped at a line, or
 * whose lines conflict with what came before (more entries than declared, the other triangle of a
 * symmetric file, the index limit), is parsed again by the exact pass, which reports the error the serial
 * reader reports: the one on the smallest line. */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "io/mm_internal.h"

#define CHUNK_MIN ((size_t)1 << 20)
#define CHUNK_MAX ((size_t)16 << 20)

static size_t default_chunk(size_t len, int threads)
{
    size_t c = len / ((size_t)threads * 8);
    return c < CHUNK_MIN ? CHUNK_MIN : c > CHUNK_MAX ? CHUNK_MAX : c;
}

static gs_status add_chunk(mm_body *b, const char *begin, const char *end, bool final)
{
    if (b->nchunks == b->cap) {
        long cap = b->cap ? 2 * b->cap : 64;
        GS_CALL(gs_realloc(&b->chunks, (size_t)cap, sizeof *b->chunks));
        b->cap = cap;
    }
    mm_chunk *c = &b->chunks[b->nchunks++];
    memset(c, 0, sizeof *c);
    c->begin = begin;
    c->end = end;
    c->final = final;
    return GS_OK;
}

/* Chunk c after the state b->state: its results added, or the exact pass's error. */
static gs_status merge(const mm_header *h, io_input *in, mm_body *b, mm_chunk *c)
{
    mm_state *s = &b->state;
    if (c->st == GS_ERR_MEM)
        return GS_ERROR(GS_ERR_MEM, "%s: out of host memory while reading the entries from line %lld on", h->path,
                        s->line + 1);
    if (c->st == GS_ERR_INTERRUPTED) return io_interrupted(in, s->line + 1, __FILE__, __LINE__);
    bool conflict = c->stopped || s->count + c->count > h->entries || s->pushes + c->pushes > mm_index_limit() ||
                    (s->first_lower && c->first_upper) || (s->first_upper && c->first_lower);
    if (conflict) {
        GS_CALL(mm_chunk_check(h, c, s));
        return GS_ERROR(GS_ERR_INTERNAL, "%s: lines %lld to %lld: the parallel reading stopped where the serial one "
                        "finds no error", h->path, s->line + 1, s->line + c->nlines);
    }
    if (c->first_lower && !s->first_lower) s->first_lower = s->line + c->first_lower;
    if (c->first_upper && !s->first_upper) s->first_upper = s->line + c->first_upper;
    if (c->underflows) {
        if (b->underflows == 0) {
            b->underflow_line = s->line + c->underflow_line;
            memcpy(b->underflow_text, c->underflow_text, sizeof b->underflow_text);
        }
        b->underflows += c->underflows;
    }
    s->line += c->nlines;
    s->count += c->count;
    s->pushes += c->pushes;
    return GS_OK;
}

gs_status mm_body_read(io_input *in, const mm_header *h, const gs_mm_read_options *opt, mm_body *b)
{
    const int threads = mm_threads(opt);
    memset(b, 0, sizeof *b);
    b->state.line = in->line;
    for (;;) {
        const char *begin, *end;
        bool final;
        GS_CALL(io_text_region(in, b->state.line, &begin, &end, &final));
        size_t csize = opt && opt->chunk_bytes ? opt->chunk_bytes : default_chunk((size_t)(end - begin), threads);
        long first = b->nchunks;
        for (const char *p = begin; p < end;) {
            const char *q = (size_t)(end - p) > csize ? p + csize : end;
            if (q < end) {
                const char *nl = memchr(q - 1, '\n', (size_t)(end - (q - 1)));
                q = nl ? nl + 1 : end;
            }
            GS_CALL(add_chunk(b, p, q, final && q == end));
            p = q;
        }
        long last = b->nchunks;
        mm_chunk *chunks = b->chunks;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (last - first > 1 && threads > 1)
        for (long k = first; k < last; k++) mm_chunk_scan(h, &chunks[k]);
        for (long k = first; k < last; k++) GS_CALL(merge(h, in, b, &chunks[k]));
        if (final) break;
    }
    const mm_state *s = &b->state;
    if (s->count < h->entries) {
        long long more = h->entries - s->count;
        if (h->coordinate)
            return MM_FAIL(h->path, s->line,
                           "end of file after %lld of the %lld entries declared on line %lld; expected %lld more %s "
                           "(is the file truncated?)",
                           s->count, h->entries, h->size_line, more, more == 1 ? "entry" : "entries");
        return MM_FAIL(h->path, s->line,
                       "end of file after %lld of the %lld values declared on line %lld; expected %lld more %s (is "
                       "the file truncated?)",
                       s->count, h->entries, h->size_line, more, more == 1 ? "value" : "values");
    }
    return GS_OK;
}

void mm_body_free(mm_body *b)
{
    for (long k = 0; k < b->nchunks; k++) mm_chunk_free(&b->chunks[k]);
    gs_free(&b->chunks);
    b->nchunks = b->cap = 0;
}

void mm_body_warn_underflow(const mm_header *h, const mm_body *b)
{
    if (b->underflows == 0) return;
    fprintf(stderr,
            "gpusolve: warning: %s:%lld: value %s is below the smallest double (about 4.9e-324) and was read as "
            "0 (kept as an explicit zero entry)",
            h->path, b->underflow_line, b->underflow_text);
    if (b->underflows > 1) fprintf(stderr, "; %lld values of this file underflowed to 0 in all", b->underflows);
    fputc('\n', stderr);
}
