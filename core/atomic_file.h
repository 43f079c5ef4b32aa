/* Files written atomically: to a temporary name in the same folder, then renamed over the target,
 * so a failed or interrupted run never leaves half a file. */
#ifndef GS_ATOMIC_FILE_H
#define GS_ATOMIC_FILE_H

#include <stdio.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_atomic_file {
    FILE *f;             /* write here */
    char path[4096];     /* final name */
    char tmp[4096 + 32]; /* temporary name */
} gs_atomic_file;

/* Opens "<path>.tmp.<pid>" for writing (GS_ERR_IO naming the path and strerror on failure). */
gs_status gs_atomic_open(gs_atomic_file *af, const char *path);
/* Flushes, fsyncs, closes and renames; on any failure removes the temporary (GS_ERR_IO). */
gs_status gs_atomic_commit(gs_atomic_file *af);
/* Closes and removes the temporary; the target is untouched. Safe after a failed open/commit. */
void gs_atomic_abort(gs_atomic_file *af);

#ifdef __cplusplus
}
#endif
#endif
