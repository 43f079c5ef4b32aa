/* Internals of the matrix and vector readers, shared by their parts:
 *   io/input.c      the input: a file or standard input, its first bytes (format detection), raw reads,
 *                   and its text as lines (the header) and as regions of whole lines (the entries);
 *   io/gz.c         gzip decompression streaming into that text;
 *   io/mm_header.c  banner and size line;
 *   io/mm_chunk.c   the entries of one chunk of lines: tokens, numbers, the serial reader's checks;
 *   io/mm_body.c    chunks parsed by all threads, merged in file order (the first error by line wins);
 *   io/mm_assemble.c the triplets of all chunks as sorted CSR (duplicates summed), in parallel;
 *   io/petsc_bin.c  PETSc binary matrices and vectors.
 * Not a public interface. */
#ifndef GS_MM_INTERNAL_H
#define GS_MM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "core/csr.h"
#include "core/status.h"
#include "io/mmio.h"

#define MM_BANNER_EXAMPLE "%%MatrixMarket matrix coordinate real general"
#define MM_LINE_MAX       ((size_t)1 << 26) /* a 64 MiB line is not Matrix Market */
#define MM_STDIN_NAME     "<stdin>"         /* the name of standard input ("-") in messages */

enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN };
enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW };
extern const char *const mm_field_names[];
extern const char *const mm_symmetry_names[];

/* Largest size or entry count accepted (GS_INT_MAX unless a test lowered it, io/mmio_testing.h). */
long long mm_index_limit(void);
/* The thread count a reader uses: opt->threads, or the OpenMP default when 0 (1 without OpenMP). */
int mm_threads(const gs_mm_read_options *opt);

/* ------------------------------------------------------------------------------------------------ */
/* Messages: "PATH:LINE: what was found; what was expected". */

gs_status mm_error(const char *path, long long line, const char *file, int srcline, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define MM_FAIL(path, line, ...) mm_error((path), (line), __FILE__, __LINE__, __VA_ARGS__)

/* 'text' for a message: at most 48 characters (then "..."), control characters shown as '?'. */
typedef struct {
    char s[64];
} mm_quote;
mm_quote mm_quote_text(const char *s, size_t n);

/* ------------------------------------------------------------------------------------------------ */
/* Tokens: a line split at blanks (space, tab, CR, VT, FF). */

typedef struct {
    const char *s;
    size_t n;
} mm_tok;

static inline bool mm_is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
/* Splits [p, end) at blanks; stores the first `max` tokens and returns how many there are in all. */
int mm_split(const char *p, const char *end, mm_tok *tok, int max);
bool mm_tok_is(mm_tok t, const char *word);

typedef enum { NUM_OK, NUM_BAD, NUM_RANGE } mm_num;
/* Decimal integer with optional sign, digits only. */
mm_num mm_parse_ll(mm_tok t, long long *v);

/* ------------------------------------------------------------------------------------------------ */
/* The input (io/input.c, io/gz.c). */

typedef enum { IO_TEXT, IO_GZIP, IO_PETSC_MAT, IO_PETSC_VEC, IO_PETSC_MAT64, IO_PETSC_VEC64 } io_kind;

typedef struct io_input {
    const char *path;   /* the name in messages: the path given, or MM_STDIN_NAME for "-" */
    int fd;
    bool close_fd;      /* opened here (not standard input) */
    bool regular;       /* a regular file opened by name (mapped when plain text) */
    long long size;     /* its size in bytes (regular files) */
    unsigned char head[8]; /* the first bytes, read to detect the format */
    size_t nhead, headpos;
    bool raw_eof;       /* the descriptor has no more bytes */
    long long raw_bytes; /* bytes handed out by io_raw_read */
    /* gzip (io/gz.c) */
    bool gz, zs_ready, gz_eof;
    int gz_error;         /* a read error found after text came out of the same call: reported at the next */
    char gz_zmsg[128];    /* zlib's words for it */
    z_stream zs;
    unsigned char *zin;
    /* text: a mapped plain file, or a buffer refilled from the stream */
    char *map;
    size_t map_len;
    char *buf;
    size_t cap, pos, end; /* buf[pos, end) not yet handed out */
    size_t block;         /* bytes wanted in buf per region (streams) */
    bool eof;             /* the text has no more bytes beyond buf[end] */
    long long line;       /* lines handed out by io_text_line */
    bool unterminated;    /* the line last returned by io_text_line ended the file without a newline */
    /* a read error (truncated or corrupt compressed data, EIO) is reported where the text stops, after
     * the whole lines before it, so that the error on the smallest line wins whatever the buffer size */
    bool deferred;
    char deferred_what[512];
} io_input;

/* Opens path ("-": standard input) and reads its first bytes. `expected` completes messages
 * ("a Matrix Market file"). */
gs_status io_open(io_input *in, const char *path, const char *expected);
void io_close(io_input *in);
io_kind io_detect(const io_input *in);
/* Up to `want` raw bytes (the first bytes again, then the descriptor's); *got = 0 at its end. A
 * SIGINT/SIGTERM stops it (GS_ERR_INTERRUPTED). */
gs_status io_raw_read(io_input *in, void *dst, size_t want, size_t *got);
/* Exactly `want` raw bytes unless the input ends first (*got < want). */
gs_status io_raw_read_full(io_input *in, void *dst, size_t want, size_t *got);
gs_status io_interrupted(const io_input *in, long long line, const char *file, int srcline);

/* Text mode: the plain or decompressed text; block_bytes: bytes per region for streams (0: default). */
gs_status io_text_start(io_input *in, size_t block_bytes);
/* Next line for the header, without its newline and trailing blanks; *line = NULL at the end. The first
 * line is checked for byte-order marks; every line for NUL bytes and its length. */
gs_status io_text_line(io_input *in, const char **line, size_t *len);
/* Next region of whole lines after what was handed out: [*begin, *end) ends after a newline, or at the
 * end of the text (*final). lines_before: lines handed out so far (for the message of an over-long line). */
gs_status io_text_region(io_input *in, long long lines_before, const char **begin, const char **end, bool *final);

gs_status io_gz_start(io_input *in);
gs_status io_gz_read(io_input *in, char *dst, size_t want, size_t *got);
void io_gz_end(io_input *in);

/* ------------------------------------------------------------------------------------------------ */
/* Header (io/mm_header.c). */

typedef struct mm_header {
    const char *path;
    bool coordinate; /* else array */
    int field, symmetry;
    long long nrows, ncols, entries; /* entries: declared on the size line (array: rows * cols) */
    long long size_line;
} mm_header;

gs_status mm_read_banner(io_input *in, mm_header *h);
gs_status mm_read_size_line(io_input *in, mm_header *h);

/* ------------------------------------------------------------------------------------------------ */
/* Entries (io/mm_chunk.c, io/mm_body.c). */

/* What the lines before a chunk established: the serial reader's state when it reaches the chunk. */
typedef struct mm_state {
    long long line;                     /* lines before the chunk */
    long long count;                    /* entry (or value) lines before it */
    long long pushes;                   /* triplets stored before it (mirrored halves counted) */
    long long first_lower, first_upper; /* first line holding an entry below / above the diagonal */
} mm_state;

/* One chunk of whole lines and what the parallel pass found in it. */
typedef struct mm_chunk {
    const char *begin, *end;
    bool final;                         /* holds the end of the text: its last line may lack a newline */
    long long nlines, count, pushes;    /* lines, entry lines, triplets stored */
    long long first_lower, first_upper; /* lines relative to the chunk (1 = its first), 0: none */
    bool stopped;                       /* stopped at a line the exact pass must judge */
    gs_status st;                       /* GS_ERR_MEM or GS_ERR_INTERRUPTED met by the parallel pass */
    gs_int *ri, *ci;                    /* triplets (array vectors: values in v only) */
    bool unsorted;                      /* the triplets are not in row-major order with increasing columns */
    double *v;
    long long cap;
    long long underflows, underflow_line; /* values read as 0 below the smallest double; first one's line */
    char underflow_text[64];
} mm_chunk;

/* The parallel pass over one chunk, from a blank state: stores its triplets, counts, and stops at the
 * first line that is an error by itself or may be one given the lines before (c->stopped). Touches no
 * error state: any thread may run it. */
void mm_chunk_scan(const mm_header *h, mm_chunk *c);
/* The exact pass: the serial reader's verdict on the chunk's lines given the state before it. Returns
 * the first error with its message (always an error for a chunk the parallel pass stopped or that the
 * merge found in conflict with the lines before it). */
gs_status mm_chunk_check(const mm_header *h, const mm_chunk *c, const mm_state *s);
void mm_chunk_free(mm_chunk *c);

/* Every chunk of the entries, in file order. */
typedef struct mm_body {
    mm_chunk *chunks;
    long nchunks, cap;
    mm_state state; /* after the last line */
    long long underflows, underflow_line;
    char underflow_text[64];
} mm_body;

/* Reads the entries after the size line: regions of the text split into chunks, parsed by `threads`
 * threads, merged in order; the serial reader's first error (smallest line) is returned. */
gs_status mm_body_read(io_input *in, const mm_header *h, const gs_mm_read_options *opt, mm_body *b);
void mm_body_free(mm_body *b);
/* The warning for values that underflowed to zero (stderr). */
void mm_body_warn_underflow(const mm_header *h, const mm_body *b);

/* Sorted CSR from the body's triplets: duplicates summed in file order, columns sorted (io/mm_assemble.c).
 * Frees the chunks' triplets as it goes. */
gs_status mm_assemble_csr(const mm_header *h, mm_body *b, int threads, gs_csr *A);

/* ------------------------------------------------------------------------------------------------ */
/* PETSc binary (io/petsc_bin.c), from an opened input whose first bytes name a PETSc object. */

gs_status petsc_read_matrix(io_input *in, int threads, gs_csr *A, gs_mm_info *info);
gs_status petsc_read_vector(io_input *in, int threads, gs_int expected_n, double **x, gs_int *n);

#endif
