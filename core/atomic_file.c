/* Output files: a regular file (or the end of a symbolic link) replaced atomically through a
 * temporary file + fsync + rename; a device, FIFO, socket or open descriptor written in place; every
 * write retried after EINTR and short writes, and stopped by a SIGINT/SIGTERM that arrives meanwhile. */
#define _GNU_SOURCE /* fopencookie: a FILE whose writes go through write_all below */
#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/signal.h"

#define LINK_DEPTH_MAX 40    /* as the kernel's limit on symbolic links followed in one lookup */
#define STREAM_BUFFER (1 << 16)

/* ---------------------------------------------------------------------------------------------- */
/* what a name resolves to                                                                        */

const char *gs_output_kind_name(const gs_output_target *t)
{
    if (t->kind == GS_OUTPUT_FD) return "an open descriptor";
    if (!t->exists) return "a new file";
    if (S_ISREG(t->mode)) return "a regular file";
    if (S_ISCHR(t->mode)) return "a character device";
    if (S_ISFIFO(t->mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(t->mode)) return "a socket";
    if (S_ISDIR(t->mode)) return "a folder";
    if (S_ISBLK(t->mode)) return "a block device";
    return "a special file";
}

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: the descriptor number, else -1. These are
 * links the kernel resolves to whatever the descriptor holds (a pipe has no path), so they are written
 * through the descriptor, in place, as a shell redirection would. */
static int fd_of_path(const char *path)
{
    if (strcmp(path, "/dev/stdout") == 0) return 1;
    if (strcmp(path, "/dev/stderr") == 0) return 2;
    const char *num = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0) num = path + 8;
    if (strncmp(path, "/proc/self/fd/", 14) == 0) num = path + 14;
    if (!num || !*num || strlen(num) > 9 || strspn(num, "0123456789") != strlen(num)) return -1;
    return atoi(num);
}

/* The folder part of path ("." when it has none; "/" for "/x"), and the name after it. */
static void split_path(const char *path, char *dir, size_t dlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dlen, ".");
        *base = path;
    } else if (slash == path) {
        snprintf(dir, dlen, "/");
        *base = slash + 1;
    } else {
        snprintf(dir, dlen, "%.*s", (int)(slash - path), path);
        *base = slash + 1;
    }
}

/* Follows the chain of symbolic links that starts at path, which ends at a name that does not exist
 * (a dangling link, or path itself is new): *end receives that name. */
static gs_status follow_dangling(const char *path, char *end, size_t len)
{
    char cur[GS_OUTPUT_PATH_MAX], link[GS_OUTPUT_PATH_MAX], dir[GS_OUTPUT_PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int depth = 0; depth <= LINK_DEPTH_MAX; depth++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0) {
            if (errno != ENOENT)
                return GS_ERROR(GS_ERR_IO, "%s: cannot write the output: %s: %s", path, cur, strerror(errno));
            snprintf(end, len, "%s", cur);
            return GS_OK;
        }
        if (!S_ISLNK(sb.st_mode)) { /* appeared meanwhile: the caller's stat saw nothing here */
            snprintf(end, len, "%s", cur);
            return GS_OK;
        }
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) return GS_ERROR(GS_ERR_IO, "%s: cannot read the symbolic link %s: %s", path, cur, strerror(errno));
        link[n] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else {
            const char *base;
            split_path(cur, dir, sizeof dir, &base);
            int w = strcmp(dir, ".") == 0 ? snprintf(cur, sizeof cur, "%s", link)
                                           : snprintf(cur, sizeof cur, "%s/%s", dir, link);
            if (w < 0 || (size_t)w >= sizeof cur)
                return GS_ERROR(GS_ERR_IO, "%s: the symbolic link leads to a path longer than %d characters", path,
                                GS_OUTPUT_PATH_MAX - 1);
        }
    }
    return GS_ERROR(GS_ERR_IO, "%s: cannot write the output: more than %d levels of symbolic links", path,
                    LINK_DEPTH_MAX);
}

gs_status gs_output_probe(const char *path, gs_output_target *t)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!path || !path[0]) return GS_ERROR(GS_ERR_IO, "an output file name is empty; expected a path");
    if (strlen(path) >= GS_OUTPUT_PATH_MAX)
        return GS_ERROR(GS_ERR_IO, "%.80s...: output path longer than %d characters", path, GS_OUTPUT_PATH_MAX - 1);
    struct stat sb;
    int fd = fd_of_path(path);
    if (fd >= 0) {
        if (fstat(fd, &sb) != 0)
            return GS_ERROR(GS_ERR_IO, "%s: cannot write the output: descriptor %d is not open", path, fd);
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY)
            return GS_ERROR(GS_ERR_IO, "%s: cannot write the output: descriptor %d is open for reading only", path,
                            fd);
        t->kind = GS_OUTPUT_FD;
        t->exists = true;
        t->dev = sb.st_dev;
        t->ino = sb.st_ino;
        t->mode = sb.st_mode;
        t->fd = fd;
        snprintf(t->target, sizeof t->target, "%s", path);
        return GS_OK;
    }

    if (stat(path, &sb) == 0) { /* exists (links followed by the kernel) */
        t->exists = true;
        t->dev = sb.st_dev;
        t->ino = sb.st_ino;
        t->mode = sb.st_mode;
        if (S_ISDIR(sb.st_mode))
            return GS_ERROR(GS_ERR_IO, "%s: is a folder (%s); expected a file name for the output", path,
                            strerror(EISDIR));
        if (S_ISBLK(sb.st_mode))
            return GS_ERROR(GS_ERR_IO,
                            "%s: is a block device; outputs go to regular files, FIFOs, sockets and character "
                            "devices, never to a disk",
                            path);
        if (!realpath(path, t->target)) snprintf(t->target, sizeof t->target, "%s", path);
        if (S_ISREG(sb.st_mode)) {
            t->kind = GS_OUTPUT_FILE;
        } else if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)) {
            t->kind = GS_OUTPUT_STREAM;
            if (!S_ISSOCK(sb.st_mode) && access(path, W_OK) != 0)
                return GS_ERROR(GS_ERR_IO, "%s: cannot write the output (%s): %s", path, gs_output_kind_name(t),
                                strerror(errno));
            return GS_OK;
        } else {
            return GS_ERROR(GS_ERR_IO, "%s: is %s; expected a regular file, a FIFO, a socket or a character device",
                            path, gs_output_kind_name(t));
        }
    } else if (errno == ENOENT) { /* a new file, perhaps at the end of a dangling link */
        char end[GS_OUTPUT_PATH_MAX];
        GS_CALL(follow_dangling(path, end, sizeof end));
        snprintf(t->target, sizeof t->target, "%s", end);
        t->kind = GS_OUTPUT_FILE;
    } else {
        return GS_ERROR(GS_ERR_IO, "%s: cannot write the output: %s", path, strerror(errno));
    }

    /* a file: the temporary file is made in the target's folder, which must exist and be writable */
    char dir[GS_OUTPUT_PATH_MAX], rdir[PATH_MAX];
    const char *base;
    split_path(t->target, dir, sizeof dir, &base);
    struct stat db;
    if (stat(dir, &db) != 0)
        return GS_ERROR(GS_ERR_IO, "%s: cannot create the output file: %s (the folder %s%s)", path, strerror(errno),
                        dir, errno == ENOENT ? " does not exist" : "");
    if (!S_ISDIR(db.st_mode))
        return GS_ERROR(GS_ERR_IO, "%s: cannot create the output file: %s is not a folder", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return GS_ERROR(GS_ERR_IO,
                        "%s: cannot create the output file: no permission to write in the folder %s (an output "
                        "is written to a temporary file there, then renamed)",
                        path, dir);
    if (!t->exists) { /* one spelling per new file: its folder resolved, then its name */
        char name[GS_OUTPUT_PATH_MAX];
        snprintf(name, sizeof name, "%s", base);
        if (realpath(dir, rdir)) {
            int w = snprintf(t->target, sizeof t->target, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", name);
            if (w < 0 || (size_t)w >= sizeof t->target)
                return GS_ERROR(GS_ERR_IO, "%s: output path longer than %d characters", path, GS_OUTPUT_PATH_MAX - 1);
        }
    }
    return GS_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* writing                                                                                        */

static bool signalled(const gs_atomic_file *af) { return gs_interrupt_count() != af->sig0; }

/* write(2) to a pipe, FIFO or socket without SIGPIPE: a reader that went away is the error EPIPE, which
 * the caller reports, whatever the program's SIGPIPE disposition (the signal is blocked around the call
 * and, when this write raised it, taken back). */
static ssize_t write_nosigpipe(int fd, const char *buf, size_t n)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t r = write(fd, buf, n);
    int e = errno;
    if (r < 0 && e == EPIPE && !was_pending) {
        const struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &now) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return r;
}

/* The FILE's write function: every byte written, EINTR and short writes retried, a new signal stops. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
    gs_atomic_file *af = cookie;
    size_t done = 0;
    while (done < size) {
        if (signalled(af)) {
            af->err = -1;
            errno = EINTR;
            return done > 0 ? (ssize_t)done : -1;
        }
        ssize_t n = af->t.kind == GS_OUTPUT_FILE ? write(af->fd, buf + done, size - done)
                                                 : write_nosigpipe(af->fd, buf + done, size - done);
        if (n < 0) {
            if (errno == EINTR) continue; /* the loop looks at the signal count first */
            if (af->err == 0) af->err = errno;
            return done > 0 ? (ssize_t)done : -1;
        }
        done += (size_t)n;
    }
    return (ssize_t)size;
}

/* opened: writing had begun (a stream then keeps what it was given; a file is still left as it was). */
static gs_status interrupted_error(const gs_atomic_file *af, bool opened, const char *file, int line)
{
    const char *what = af->t.kind == GS_OUTPUT_FILE ? "nothing was written (the file is as it was)"
                       : opened ? "writing stopped (what was already written to it stays)"
                                : "nothing was written";
    return gs_error_set(GS_ERR_INTERRUPTED, file, line, "%s: interrupted by %s while writing the output; %s",
                        af->path, gs_interrupt_name(gs_interrupt_signal()), what);
}

gs_status gs_atomic_write_error(const gs_atomic_file *af, const char *file, int line)
{
    if (af->err == -1 || signalled(af)) return interrupted_error(af, true, file, line);
    int e = af->err > 0 ? af->err : (errno ? errno : EIO);
    if (af->t.kind == GS_OUTPUT_FILE)
        return gs_error_set(GS_ERR_IO, file, line, "%s: writing failed: %s (nothing was written; the file is as it was)",
                            af->path, strerror(e));
    return gs_error_set(GS_ERR_IO, file, line, "%s: writing to %s failed: %s", af->path, gs_output_kind_name(&af->t),
                        strerror(e));
}

/* Opens a Unix socket for writing: connect, retried after EINTR (the connection then completes on its
 * own: wait for it). */
static int open_socket(const char *path, const gs_atomic_file *af, int *err)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sa.sun_path) {
        *err = ENAMETOOLONG;
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)&sa, sizeof sa) == 0) return fd;
    if (errno == EINTR || errno == EINPROGRESS) {
        for (;;) {
            if (signalled(af)) {
                *err = EINTR;
                break;
            }
            struct pollfd p = {fd, POLLOUT, 0};
            int r = poll(&p, 1, -1);
            if (r < 0 && errno == EINTR) continue;
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) soerr = errno;
            if (soerr == 0) return fd;
            *err = soerr;
            break;
        }
    } else {
        *err = errno;
    }
    close(fd);
    return -1;
}

/* Creates the temporary file beside the target: "<target>.tmp.<pid>" (a further ".<n>" when that name
 * is taken: an existing file is never opened), or a short hidden name when the long one is too long. */
static int create_temporary(gs_atomic_file *af, int *err)
{
    char dir[GS_OUTPUT_PATH_MAX];
    const char *base;
    split_path(af->t.target, dir, sizeof dir, &base);
    for (int attempt = 0; attempt < 100; attempt++) {
        bool short_name = attempt >= 50; /* after ENAMETOOLONG */
        if (!short_name && attempt == 0)
            snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", af->t.target, (long)getpid());
        else if (!short_name)
            snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld.%d", af->t.target, (long)getpid(), attempt);
        else
            snprintf(af->tmp, sizeof af->tmp, "%s/.gpusolve.tmp.%ld.%d", dir, (long)getpid(), attempt);
        int fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno == EINTR && !signalled(af)) {
            attempt--;
            continue;
        }
        if (errno == ENAMETOOLONG && !short_name) {
            attempt = 49;
            continue;
        }
        if (errno != EEXIST) {
            *err = errno;
            af->tmp[0] = '\0';
            return -1;
        }
    }
    *err = EEXIST;
    af->tmp[0] = '\0';
    return -1;
}

gs_status gs_atomic_open(gs_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
    af->sig0 = gs_interrupt_count();
    if (!path) return GS_ERROR(GS_ERR_ARG, "gs_atomic_open: path is NULL");
    snprintf(af->path, sizeof af->path, "%s", path);
    GS_CALL(gs_output_probe(path, &af->t));

    int err = 0;
    switch (af->t.kind) {
    case GS_OUTPUT_FD:
        if (af->t.fd == 1) fflush(stdout); /* what was printed before comes first */
        if (af->t.fd == 2) fflush(stderr);
        af->fd = fcntl(af->t.fd, F_DUPFD_CLOEXEC, 3);
        if (af->fd < 0) err = errno;
        break;
    case GS_OUTPUT_STREAM:
        while (af->fd < 0 && !err) {
            if (S_ISSOCK(af->t.mode))
                af->fd = open_socket(path, af, &err);
            else
                af->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC); /* a FIFO waits for its reader */
            if (af->fd < 0 && !err) err = errno;
            if (err == EINTR && !signalled(af)) err = 0; /* not ours: open again */
        }
        break;
    case GS_OUTPUT_FILE:
        af->fd = create_temporary(af, &err);
        /* an existing file keeps its permissions (umask applied to a new one by open) */
        if (af->fd >= 0 && af->t.exists) (void)fchmod(af->fd, af->t.mode & 0777); /* not set-id bits */
        break;
    }
    if (af->fd < 0) {
        if (signalled(af)) {
            af->err = -1;
            return interrupted_error(af, false, __FILE__, __LINE__);
        }
        if (af->t.kind == GS_OUTPUT_FILE)
            return GS_ERROR(GS_ERR_IO, "%s: cannot create output file: %s", path, strerror(err));
        return GS_ERROR(GS_ERR_IO, "%s: cannot open %s for writing: %s", path, gs_output_kind_name(&af->t),
                        strerror(err));
    }
    static const cookie_io_functions_t io = {NULL, cookie_write, NULL, NULL};
    af->f = fopencookie(af, "w", io);
    if (!af->f) {
        gs_atomic_abort(af);
        return GS_ERROR(GS_ERR_MEM, "%s: out of host memory while opening the output", path);
    }
    setvbuf(af->f, NULL, _IOFBF, STREAM_BUFFER);
    return GS_OK;
}

/* fsync, retried after EINTR; devices and pipes that cannot sync (EINVAL, ENOTSUP) are not errors. */
static int sync_fd(int fd)
{
    while (fsync(fd) != 0) {
        if (errno == EINTR) continue;
        if (errno == EINVAL || errno == ENOTSUP || errno == EROFS) return 0;
        return errno;
    }
    return 0;
}

gs_status gs_atomic_commit(gs_atomic_file *af)
{
    if (!af->f) return GS_ERROR(GS_ERR_IO, "%s: output file is not open", af->path);
    int err = 0;
    if (fflush(af->f) != 0 || ferror(af->f)) err = af->err ? af->err : (errno ? errno : EIO);
    fclose(af->f); /* no close function: the descriptor is closed below, and checked */
    af->f = NULL;
    if (!err && af->t.kind == GS_OUTPUT_FILE) err = sync_fd(af->fd);
    /* close(2) may report a delayed write error (NFS, a full disk); EINTR leaves the descriptor closed */
    if (close(af->fd) != 0 && !err && errno != EINTR) err = errno;
    af->fd = -1;
    if (err == -1 || (!err && signalled(af))) {
        af->err = -1;
        gs_status st = interrupted_error(af, true, __FILE__, __LINE__);
        gs_atomic_abort(af);
        return st;
    }
    if (!err && af->t.kind == GS_OUTPUT_FILE && rename(af->tmp, af->t.target) != 0) err = errno;
    if (err) {
        af->err = err;
        gs_status st = gs_atomic_write_error(af, __FILE__, __LINE__);
        gs_atomic_abort(af);
        return st;
    }
    if (af->t.kind == GS_OUTPUT_FILE) { /* the rename itself reaches the disk with its folder */
        char dir[GS_OUTPUT_PATH_MAX];
        const char *base;
        split_path(af->t.target, dir, sizeof dir, &base);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)sync_fd(dfd);
            close(dfd);
        }
        af->tmp[0] = '\0';
    }
    return GS_OK;
}

void gs_atomic_abort(gs_atomic_file *af)
{
    int fd = af->fd;
    af->fd = -1; /* what fclose would still flush goes nowhere: an aborted output gets no more bytes */
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
    }
    if (fd >= 0) close(fd);
    if (af->tmp[0]) {
        unlink(af->tmp);
        af->tmp[0] = '\0';
    }
}
