/* Output files that cannot be left half-written and cannot destroy what they point at.
 *
 * What writing to a name does depends on what the name is:
 *   - a new name or a regular file: written to a temporary file in the same folder, flushed to disk,
 *     then renamed over the name (an existing file keeps its permissions), so a failed or
 *     interrupted run never leaves half a file and never touches the old one;
 *   - a symbolic link (or a chain of them): the file at its end is replaced the same way, and the link
 *     stays a link (a dangling link gets its target created);
 *   - a character device, a FIFO (named pipe) or a Unix socket: opened and written in place (a
 *     device or pipe cannot be replaced by a file), every write and the close checked;
 *   - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written in place to that descriptor;
 *   - a folder or a block device: refused.
 * Writes retry after EINTR and after short writes; a SIGINT/SIGTERM that arrives while the file is
 * opened or written stops it (GS_ERR_INTERRUPTED; a regular file is then left as it was). */
#ifndef GS_ATOMIC_FILE_H
#define GS_ATOMIC_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_OUTPUT_PATH_MAX 4096

/* How an output name is written. */
typedef enum gs_output_kind {
    GS_OUTPUT_FILE,   /* temporary file + rename over `target` (which may not exist yet) */
    GS_OUTPUT_STREAM, /* device, FIFO or socket at `target`, written in place */
    GS_OUTPUT_FD      /* an open descriptor (/dev/stdout, /dev/fd/N, ...), written in place */
} gs_output_kind;

/* What an output name resolves to, found without writing or opening anything. */
typedef struct gs_output_target {
    gs_output_kind kind;
    bool exists;                      /* target exists (then dev/ino/mode describe it) */
    dev_t dev;
    ino_t ino;
    mode_t mode;
    int fd;                           /* GS_OUTPUT_FD: the descriptor */
    char target[GS_OUTPUT_PATH_MAX];  /* the file written or replaced (links followed; for a new
                                         file its folder resolved: the same spelling for the same
                                         file, so two names of one new file compare equal) */
} gs_output_target;

/* Resolves path and checks that it can be written: its folder exists and is writable (GS_OUTPUT_FILE),
 * the device/FIFO/socket is writable (GS_OUTPUT_STREAM). A folder, a block device, a missing folder or
 * a folder without write permission is GS_ERR_IO with a message naming the path. */
gs_status gs_output_probe(const char *path, gs_output_target *t);
/* A short description of what t is, for messages: "a regular file", "a FIFO (named pipe)", ... */
const char *gs_output_kind_name(const gs_output_target *t);

typedef struct gs_atomic_file {
    FILE *f;                             /* write here */
    char path[GS_OUTPUT_PATH_MAX];       /* the name given */
    char tmp[GS_OUTPUT_PATH_MAX + 48];   /* temporary name ("" when written in place) */
    gs_output_target t;                  /* what path resolved to */
    int fd;                              /* descriptor under f (-1: none) */
    unsigned sig0;                       /* gs_interrupt_count() at open */
    int err;                             /* first write error (errno); -1: stopped by a signal */
} gs_atomic_file;

/* Opens path for writing as described above (a FIFO blocks until a reader opens it; a signal ends the
 * wait with GS_ERR_INTERRUPTED). Errors: GS_ERR_IO naming the path and the reason, GS_ERR_INTERRUPTED.
 * af must stay where it is until gs_atomic_commit or gs_atomic_abort. */
gs_status gs_atomic_open(gs_atomic_file *af, const char *path);
/* Flushes, fsyncs, closes and renames (a regular file) or flushes and closes (written in place); on any
 * failure removes the temporary file. GS_ERR_IO (write error, disk full, broken pipe, ...) or
 * GS_ERR_INTERRUPTED (a signal arrived while writing: nothing replaced). */
gs_status gs_atomic_commit(gs_atomic_file *af);
/* Closes and removes the temporary file; the target is untouched (a stream keeps what was written).
 * Safe after a failed open or commit, and twice. */
void gs_atomic_abort(gs_atomic_file *af);
/* The error of a write to af->f that failed (fwrite/fprintf short): GS_ERR_INTERRUPTED or GS_ERR_IO
 * with the reason. The caller then calls gs_atomic_abort. */
gs_status gs_atomic_write_error(const gs_atomic_file *af, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif
