/* Output files (core/atomic_file): what writing to a name does for each kind of name, tested through
 * the API that the run and the Matrix Market writer use. A regular file is replaced atomically and
 * keeps its permissions; a symbolic link stays a link and its target is replaced; a dangling link gets
 * its target created; a FIFO is written in place (its reader gets every byte, the FIFO stays a FIFO); a
 * FIFO whose reader goes away is a write error (EPIPE), not a dead process (SIGPIPE); a Unix socket is
 * connected to and written; a signal that
 * arrives while a file is written leaves the old file untouched (GS_ERR_INTERRUPTED), while one that was
 * already pending when the file was opened does not stop it (a run writes the history of an
 * interrupted solve); an existing "<name>.tmp.<pid>" is never overwritten; a folder or a missing folder
 * is refused before anything is created. No system /dev entry is touched: devices are stood in for by
 * FIFOs, or made with mknod in a temporary folder where that is allowed. */
#define _GNU_SOURCE /* mknod, makedev */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/signal.h"
#include "io/mmio.h"
#include "testutil.h"

static char dir[] = "/tmp/gs_outputs_XXXXXX";

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The file's contents (at most 4 KiB), "" when it cannot be read. */
static const char *read_text(const char *path)
{
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* No "*.tmp.*" file in the test folder. */
static void assert_no_temporary(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q '\\.tmp\\.'", dir);
    assert_int_not_equal(system(cmd), 0);
}

static void write_through(const char *path, const char *text)
{
    gs_atomic_file af;
    GS_ASSERT_OK(gs_atomic_open(&af, path));
    fputs(text, af.f);
    GS_ASSERT_OK(gs_atomic_commit(&af));
}

static void regular_file_replaced_with_its_permissions(void **state)
{
    (void)state;
    const char *p = in_dir("keep_mode.txt");
    write_text(p, "old\n");
    assert_int_equal(chmod(p, 0640), 0);
    struct stat before, after;
    assert_int_equal(stat(p, &before), 0);
    write_through(p, "new\n");
    assert_int_equal(stat(p, &after), 0);
    assert_string_equal(read_text(p), "new\n");
    assert_int_equal(after.st_mode & 07777, 0640);
    assert_int_not_equal(after.st_ino, before.st_ino); /* replaced, not rewritten in place */
    assert_no_temporary();
}

static void existing_temporary_name_is_not_overwritten(void **state)
{
    (void)state;
    const char *p = in_dir("taken.txt");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p, (long)getpid());
    write_text(tmp, "a user's file\n");
    write_through(p, "out\n");
    assert_string_equal(read_text(p), "out\n");
    assert_string_equal(read_text(tmp), "a user's file\n");
    unlink(tmp);
}

static void symlink_stays_a_link(void **state)
{
    (void)state;
    const char *target = in_dir("target.txt"), *link1 = in_dir("link1"), *link2 = in_dir("link2");
    write_text(target, "old\n");
    assert_int_equal(symlink("target.txt", link1), 0); /* relative, resolved beside the link */
    assert_int_equal(symlink(link1, link2), 0);        /* a chain */
    write_through(link2, "through the chain\n");
    struct stat sb;
    assert_int_equal(lstat(link1, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(lstat(link2, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_string_equal(read_text(target), "through the chain\n");
    assert_no_temporary();
}

static void dangling_link_gets_its_target(void **state)
{
    (void)state;
    const char *link = in_dir("dangling");
    assert_int_equal(symlink("created_by_output.txt", link), 0);
    write_through(link, "created\n");
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_string_equal(read_text(in_dir("created_by_output.txt")), "created\n");
    /* a link into a folder that does not exist: refused at open, nothing created */
    const char *bad = in_dir("dangling_nofolder");
    assert_int_equal(symlink("no_such_folder/x.txt", bad), 0);
    GS_ASSERT_FAILS(gs_output_probe(bad, &(gs_output_target){0}), GS_ERR_IO, "does not exist");
    gs_atomic_file af;
    GS_ASSERT_FAILS(gs_atomic_open(&af, bad), GS_ERR_IO, "no_such_folder");
    gs_atomic_abort(&af);
}

static void folders_refused(void **state)
{
    (void)state;
    gs_atomic_file af;
    GS_ASSERT_FAILS(gs_atomic_open(&af, dir), GS_ERR_IO, "is a folder");
    gs_atomic_abort(&af);
    GS_ASSERT_FAILS(gs_atomic_open(&af, in_dir("missing/x.txt")), GS_ERR_IO, "does not exist");
    gs_atomic_abort(&af);
    assert_no_temporary();
}

/* A reader of a FIFO in a thread: reads everything (or only `stop_after` bytes, then closes). */
typedef struct {
    const char *path;
    size_t stop_after; /* 0: read to the end */
    char got[1 << 16];
    size_t n;
} fifo_reader;

static void *read_fifo(void *arg)
{
    fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    if (fd < 0) return NULL;
    for (;;) {
        size_t want = sizeof r->got - 1 - r->n;
        if (r->stop_after && r->stop_after - r->n < want) want = r->stop_after - r->n;
        if (want == 0) break;
        ssize_t k = read(fd, r->got + r->n, want);
        if (k <= 0) break;
        r->n += (size_t)k;
    }
    r->got[r->n] = '\0';
    close(fd);
    return NULL;
}

static void fifo_written_in_place(void **state)
{
    (void)state;
    const char *p = in_dir("fifo_ok");
    assert_int_equal(mkfifo(p, 0600), 0);
    static fifo_reader r;
    memset(&r, 0, sizeof r);
    r.path = p;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_fifo, &r), 0);
    gs_output_target t;
    GS_ASSERT_OK(gs_output_probe(p, &t));
    assert_int_equal(t.kind, GS_OUTPUT_STREAM);
    write_through(p, "through the pipe\n");
    pthread_join(th, NULL);
    assert_string_equal(r.got, "through the pipe\n");
    struct stat sb;
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_no_temporary();
}

static void fifo_reader_gone_is_a_write_error(void **state)
{
    (void)state;
    const char *p = in_dir("fifo_epipe");
    assert_int_equal(mkfifo(p, 0600), 0);
    static fifo_reader r;
    memset(&r, 0, sizeof r);
    r.path = p;
    r.stop_after = 10;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_fifo, &r), 0);
    /* a vector far larger than the pipe's buffer: the writer meets the closed end */
    enum { N = 100000 };
    double *x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < N; i++) x[i] = 1.0 / (i + 1);
    GS_ASSERT_FAILS(gs_mm_write_vector(p, N, x), GS_ERR_IO, "Broken pipe");
    pthread_join(th, NULL);
    free(x);
    struct stat sb;
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
}

/* A character device that fails every write (the kernel's "full" device, 1:7) and one that takes
 * everything (1:3), made in the test folder: skipped where mknod is not allowed. */
static void character_devices_written_in_place(void **state)
{
    (void)state;
    const char *full = in_dir("full_device"), *null = in_dir("null_device");
    if (mknod(full, S_IFCHR | 0600, makedev(1, 7)) != 0 || mknod(null, S_IFCHR | 0600, makedev(1, 3)) != 0) {
        fprintf(stderr, "note: mknod not allowed here (%s): character device cases skipped\n", strerror(errno));
        return;
    }
    int probe = open(full, O_WRONLY);
    if (probe < 0) { /* a file system mounted nodev */
        fprintf(stderr, "note: device nodes unusable here (%s): character device cases skipped\n", strerror(errno));
        return;
    }
    close(probe);
    double x[3] = {1, 2, 3};
    GS_ASSERT_FAILS(gs_mm_write_vector(full, 3, x), GS_ERR_IO, "No space left on device");
    gs_atomic_file af;
    GS_ASSERT_OK(gs_atomic_open(&af, full));
    fputs("history\n", af.f);
    GS_ASSERT_FAILS(gs_atomic_commit(&af), GS_ERR_IO, "No space left on device");
    gs_atomic_abort(&af);
    GS_ASSERT_OK(gs_mm_write_vector(null, 3, x));
    struct stat sb;
    assert_int_equal(lstat(full, &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(lstat(null, &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_no_temporary();
}

static void descriptor_paths_written_in_place(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[1]);
    gs_output_target t;
    GS_ASSERT_OK(gs_output_probe(path, &t));
    assert_int_equal(t.kind, GS_OUTPUT_FD);
    write_through(path, "to the descriptor\n");
    close(fds[1]);
    char got[64] = "";
    ssize_t n = read(fds[0], got, sizeof got - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, "to the descriptor\n");
    close(fds[0]);
}


/* A Unix socket's server in a thread: accepts one connection and reads it to the end. */
typedef struct {
    int listener;
    char got[256];
    size_t n;
} socket_server;

static void *serve_once(void *arg)
{
    socket_server *sv = arg;
    int c = accept(sv->listener, NULL, NULL);
    if (c < 0) return NULL;
    ssize_t k;
    while ((k = read(c, sv->got + sv->n, sizeof sv->got - 1 - sv->n)) > 0) sv->n += (size_t)k;
    sv->got[sv->n] = '\0';
    close(c);
    return NULL;
}

static void socket_written_in_place(void **state)
{
    (void)state;
    const char *p = in_dir("out.sock");
    static socket_server sv;
    memset(&sv, 0, sizeof sv);
    sv.listener = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sv.listener >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", p);
    assert_int_equal(bind(sv.listener, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(sv.listener, 1), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, serve_once, &sv), 0);
    gs_output_target t;
    GS_ASSERT_OK(gs_output_probe(p, &t));
    assert_int_equal(t.kind, GS_OUTPUT_STREAM);
    write_through(p, "to the socket\n");
    pthread_join(th, NULL);
    close(sv.listener);
    assert_string_equal(sv.got, "to the socket\n");
    struct stat sb;
    assert_int_equal(lstat(p, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
}

static void signal_while_writing_leaves_the_file(void **state)
{
    (void)state;
    gs_interrupt_install();
    gs_interrupt_reset();
    const char *p = in_dir("interrupted.txt");
    write_text(p, "the old contents\n");
    gs_atomic_file af;
    GS_ASSERT_OK(gs_atomic_open(&af, p));
    fputs("half of the new\n", af.f);
    raise(SIGTERM); /* arrives while the file is written */
    fputs("the other half\n", af.f);
    GS_ASSERT_FAILS(gs_atomic_commit(&af), GS_ERR_INTERRUPTED, "nothing was written");
    gs_atomic_abort(&af);
    assert_string_equal(read_text(p), "the old contents\n");
    assert_no_temporary();
    gs_interrupt_reset();
}

static void pending_signal_does_not_stop_a_new_file(void **state)
{
    (void)state;
    /* the history of an interrupted solve is written after the signal arrived */
    gs_interrupt_install();
    gs_interrupt_reset();
    raise(SIGINT);
    assert_true(gs_interrupt_requested());
    write_through(in_dir("after_signal.csv"), "iteration,residual\n");
    assert_string_equal(read_text(in_dir("after_signal.csv")), "iteration,residual\n");
    gs_interrupt_reset();
}

static void abort_leaves_target_and_is_idempotent(void **state)
{
    (void)state;
    const char *p = in_dir("aborted.txt");
    write_text(p, "kept\n");
    gs_atomic_file af;
    GS_ASSERT_OK(gs_atomic_open(&af, p));
    fputs("never seen\n", af.f);
    gs_atomic_abort(&af);
    gs_atomic_abort(&af);
    assert_string_equal(read_text(p), "kept\n");
    assert_no_temporary();
}

static void gz_output_through_a_link(void **state)
{
    (void)state;
    /* compressed output goes through the same FILE (no second descriptor), so links and FIFOs work for
     * .gz names too; the result reads back */
    const char *target = in_dir("v_target.mtx.gz"), *link = in_dir("v_link.mtx.gz");
    assert_int_equal(symlink("v_target.mtx.gz", link), 0);
    double x[4] = {1.5, -2, 3e-300, 4};
    GS_ASSERT_OK(gs_mm_write_vector(link, 4, x));
    double *y = NULL;
    gs_int n = 0;
    GS_ASSERT_OK(gs_mm_read_vector(target, 4, &y, &n));
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) assert_true(y[i] == x[i]);
    free(y);
    struct stat sb;
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
}

int main(void)
{
    assert_non_null(mkdtemp(dir));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_file_replaced_with_its_permissions),
        cmocka_unit_test(existing_temporary_name_is_not_overwritten),
        cmocka_unit_test(symlink_stays_a_link),
        cmocka_unit_test(dangling_link_gets_its_target),
        cmocka_unit_test(folders_refused),
        cmocka_unit_test(fifo_written_in_place),
        cmocka_unit_test(fifo_reader_gone_is_a_write_error),
        cmocka_unit_test(character_devices_written_in_place),
        cmocka_unit_test(descriptor_paths_written_in_place),
        cmocka_unit_test(socket_written_in_place),
        cmocka_unit_test(signal_while_writing_leaves_the_file),
        cmocka_unit_test(pending_signal_does_not_stop_a_new_file),
        cmocka_unit_test(abort_leaves_target_and_is_idempotent),
        cmocka_unit_test(gz_output_through_a_link),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (!failed) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
    }
    return failed;
}
