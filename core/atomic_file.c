/* Atomic file output: temporary file + fsync + rename. */
#include "core/atomic_file.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

gs_status gs_atomic_open(gs_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    if (strlen(path) >= sizeof af->path) return GS_ERROR(GS_ERR_IO, "%s: output path too long", path);
    snprintf(af->path, sizeof af->path, "%s", path);
    snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", path, (long)getpid());
    af->f = fopen(af->tmp, "w");
    if (!af->f)
        return GS_ERROR(GS_ERR_IO, "%s: cannot create output file: %s", path, strerror(errno));
    return GS_OK;
}

gs_status gs_atomic_commit(gs_atomic_file *af)
{
    if (!af->f) return GS_ERROR(GS_ERR_IO, "%s: output file is not open", af->path);
    int err = 0;
    if (fflush(af->f) != 0 || ferror(af->f)) err = errno ? errno : EIO;
    if (!err && fsync(fileno(af->f)) != 0 && errno != EINVAL) err = errno;
    if (fclose(af->f) != 0 && !err) err = errno ? errno : EIO;
    af->f = NULL;
    if (!err && rename(af->tmp, af->path) != 0) err = errno;
    if (err) {
        remove(af->tmp);
        return GS_ERROR(GS_ERR_IO, "%s: writing failed: %s (nothing was written)", af->path, strerror(err));
    }
    return GS_OK;
}

void gs_atomic_abort(gs_atomic_file *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
    }
    if (af->tmp[0]) remove(af->tmp);
}
