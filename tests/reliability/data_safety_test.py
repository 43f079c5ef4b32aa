#!/usr/bin/env python3
"""gpusolve never loses or corrupts a user's data, at the command line. One section per class:
  1. outputs that are inputs or other outputs: exit 2 naming both, before anything is solved, nothing touched;
  2. what an output name is: a file replaced atomically, a symlink's target replaced (the link stays),
     a FIFO written in place, a FIFO whose reader leaves (EPIPE, no death by SIGPIPE), character devices
     made in a temporary folder (a failing one: exit 3), descriptors; unwritable outputs refused up front;
  3. SIGTERM/SIGINT while reading (slow FIFOs: matrix, right-hand side, configuration) or writing: exit 6;
  4. configuration input: size cap, NUL bytes, unterminated comments, settings given twice, missing and
     non-regular @include files, nesting cap, byte-order marks;
  5. generator specs parsed strictly;
  6. huge declared sizes with few entries: refused fast with little memory (also --inspect);
  7. RAS on matrices with rows without off-diagonal entries (undefined behaviour before: UBSan);
  8. smaller ones: byte-order marks and underflow in .mtx files, 20000 -s options, the exit code of a
     malformed configuration as documented.
No system /dev entry is touched. Usage: data_safety_test.py GPUSOLVE SRC_DIR"""
import json, os, signal, stat, subprocess, threading, time

from reltest import check, exe, finish, host, limit_memory, no_temp_files, scratch, src
tmp = scratch("gs_safety_")


def run(args, mem_gib=None, timeout=120, stdout=subprocess.PIPE):
    p = subprocess.run([exe, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=timeout,
                       preexec_fn=limit_memory(mem_gib) if mem_gib else None)
    return p.returncode, p.stdout, p.stderr


def path(name):
    return os.path.join(tmp, name)


def write(name, text, mode="w"):
    with open(path(name), mode) as f:
        f.write(text)
    return path(name)


def read(p, mode="r"):
    with open(p, mode) as f:
        return f.read()


def expect(name, args, code, needles=(), quick=None, mem_gib=None, **kw):
    t0 = time.time()
    rc, out, err = run(args, mem_gib=mem_gib, **kw)
    check(f"{name}: exit {code}", rc == code, f"exit {rc}: {err[:500]}")
    for s in needles:
        check(f"{name}: message has {s!r}", s in err, err[:500])
    if quick:
        check(f"{name}: within {quick} s", time.time() - t0 < quick, time.time() - t0)
    return rc, out, err


try:
    can_limit = run(["--version"], mem_gib=1)[0] == 0
except (OSError, subprocess.SubprocessError):
    can_limit = False
mem = 1 if can_limit else None
if not can_limit:
    print("note: gpusolve cannot run under RLIMIT_AS (sanitizer build?): memory-limit checks skipped")

# the matrix of most runs: 1000 rows, tridiagonal and diagonally dominant (any method converges at once,
# so the checks are about files, not numerics)
s_mtx = write("s.mtx", "%%MatrixMarket matrix coordinate real general\n1000 1000 2998\n"
              + "".join(f"{i} {i} 4\n" for i in range(1, 1001)) + "".join(f"{i} {i + 1} -1\n" for i in range(1, 1000))
              + "".join(f"{i + 1} {i} -1\n" for i in range(1, 1000)))
s_bytes = read(s_mtx, "rb")
solve = [s_mtx] + host + ["--quiet"]

# --- 1. an output that is an input, or another output ---------------------------------------------------
rhs = write("rhs.mtx", "%%MatrixMarket matrix array real general\n1000 1\n" + "1\n" * 1000)
rhs_bytes = read(rhs, "rb")
cfg = write("run.cfg", "solver = { rtol = 1e-8; };\n")
os.symlink("s.mtx", path("s_link.mtx"))
os.link(s_mtx, path("s_hard.mtx"))
for name, args, needles in (
        ("-o onto the matrix", ["-o", s_mtx], ["-o", "the matrix", "s.mtx"]),
        ("--history onto the matrix", ["--history", s_mtx], ["--history", "the matrix"]),
        ("-o onto a symlink to the matrix", ["-o", path("s_link.mtx")], ["s_link.mtx", "the matrix"]),
        ("-o onto a hard link of the matrix", ["-o", path("s_hard.mtx")], ["s_hard.mtx", "the matrix"]),
        ("-o onto -b", ["-b", rhs, "-o", rhs], ["-o", "-b", "rhs.mtx"]),
        ("--history onto -c", ["-c", cfg, "--history", cfg], ["--history", "-c", "run.cfg"]),
        ("output.solution onto the matrix", ["-s", "output.solution=" + s_mtx], ["output.solution", "the matrix"]),
        ("-o onto system.rhs", ["-s", "system.rhs=" + rhs, "-o", rhs], ["-o", "system.rhs"]),
        ("-o and --history one file", ["-o", path("F"), "--history", path("F")], ["-o", "--history", "the same file"]),
        ("-o and --history one file by two names", ["-o", path("G"), "--history", os.path.join(tmp, ".", "G")],
         ["-o", "--history"]),
):
    t0 = time.time()
    rc, out, err = run(solve + args)
    check(f"{name}: exit 2", rc == 2, f"exit {rc}: {err[:400]}")
    for s in needles:
        check(f"{name}: message names {s!r}", s in err, err[:400])
    check(f"{name}: nothing solved", "reason=" not in out, out[:200])
check("the matrix unchanged", read(s_mtx, "rb") == s_bytes)
check("the right-hand side unchanged", read(rhs, "rb") == rhs_bytes)
check("the configuration unchanged", read(cfg) == "solver = { rtol = 1e-8; };\n")
check("the conflicting outputs not created", not os.path.exists(path("F")) and not os.path.exists(path("G")))
# sweeps: each run's outputs are checked too (a list of paths that repeats one)
rc, out, err = run(solve + ["-s", "solver.restart=10,20", "-s", "output.history=" + path("h.csv")])
check("sweep: one history path indexed per run: exit 0", rc == 0, err[:300])
check("sweep: one history path indexed per run: files", os.path.exists(path("h-0.csv")) and os.path.exists(path("h-1.csv")))
two = write("two.cfg", f'output = {{ history = ["{path("a.csv")}", "{path("a.csv")}"]; }};\n')
rc, out, err = run(["-c", two] + solve)
check("sweep: two runs writing one file: exit 2", rc == 2 and "(run 0)" in err and "(run 1)" in err, err[:400])
rc, out, err = run(solve + ["-s", "solver.restart=10,20", "-o", path("x{index}.mtx"), "--dry-run"])
check("dry run: outputs checked, none written", rc == 0 and not os.path.exists(path("x0.mtx")), err[:300])
rc, out, err = run(solve + ["-o", s_mtx, "--dry-run"])
check("dry run: a conflict is reported", rc == 2 and "the matrix" in err, f"exit {rc}: {err[:300]}")
# with --json an error still prints one object per run
rc, out, err = run(solve + ["-o", s_mtx, "--json"])
try:
    obj = json.loads(out)
except ValueError:
    obj = {}
check("--json conflict: one error object", rc == 2 and obj.get("status") == "error" and "the matrix" in
      obj.get("error", {}).get("message", ""), out[:300])

# --- 2. what an output name is --------------------------------------------------------------------------
# a regular file: replaced atomically, permissions kept
out_x = write("x.mtx", "old\n")
os.chmod(out_x, 0o640)
ino = os.stat(out_x).st_ino
rc, out, err = run(solve + ["-o", out_x])
check("regular file: exit 0", rc == 0, err[:300])
check("regular file: replaced", read(out_x).startswith("%%MatrixMarket") and os.stat(out_x).st_ino != ino)
check("regular file: permissions kept", stat.S_IMODE(os.stat(out_x).st_mode) == 0o640, oct(os.stat(out_x).st_mode))
# a symbolic link: its target replaced, the link stays
write("target.mtx", "old\n")
os.symlink("target.mtx", path("link.mtx"))
rc, out, err = run(solve + ["-o", path("link.mtx")])
check("symlink: exit 0", rc == 0, err[:300])
check("symlink: still a link", os.path.islink(path("link.mtx")))
check("symlink: target written", read(path("target.mtx")).startswith("%%MatrixMarket"))
os.symlink("new_target.csv", path("dangling.csv"))
rc, out, err = run(solve + ["--history", path("dangling.csv")])
check("dangling symlink: target created", rc == 0 and os.path.islink(path("dangling.csv"))
      and read(path("new_target.csv")).startswith("iteration,"), err[:300])


def fifo_reader(p, keep, stop_after=None, writers=1):
    """Reads FIFO p in a thread: everything each of `writers` writers sends (the FIFO opened once per
    writer, as a shell loop around cat would), or only stop_after bytes before closing it."""
    def body():
        for _ in range(writers):
            with open(p, "rb") as f:
                keep.append(f.read(stop_after) if stop_after else f.read())
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


# a FIFO: written in place, the reader gets the whole solution
fifo = path("out.fifo")
os.mkfifo(fifo)
got = []
t = fifo_reader(fifo, got)
rc, out, err = run(solve + ["-o", fifo])
t.join(10)
check("FIFO: exit 0", rc == 0, err[:300])
check("FIFO: reader got the solution", got and got[0].startswith(b"%%MatrixMarket") and got[0].count(b"\n") == 1003,
      got[0][:80] if got else None)
check("FIFO: still a FIFO", stat.S_ISFIFO(os.lstat(fifo).st_mode))
# a FIFO whose reader closes early: a write error (EPIPE), exit 3, not a death by SIGPIPE
got = []
t = fifo_reader(fifo, got, stop_after=10)
rc, out, err = run(["gen:poisson2d:300", "-o", fifo] + host + ["--quiet"])
t.join(10)
check("FIFO reader gone: exit 3", rc == 3, f"exit {rc}: {err[:300]}")
check("FIFO reader gone: message", "Broken pipe" in err and "out.fifo" in err, err[:300])
# the same for the history
got = []
t = fifo_reader(fifo, got, stop_after=5)
rc, out, err = run(["gen:poisson2d:100", "--history", fifo, "-s", "solver.type=cg", "-s", "preconditioner.type=none",
                    "-s", "solver.rtol=1e-300", "-s", "solver.max_iterations=3000", "-s", "solver.fallback=none"]
         + host + ["--quiet"])
t.join(10)
check("FIFO reader gone (history): exit 3", rc == 3, f"exit {rc}: {err[:300]}")
# in a sweep a FIFO is not indexed: every run writes to it
# (the second run may open the FIFO before the reader has seen the first one's end, so the histories are
# counted by their headers in everything read, not by the reader's opens)
got = []
t = fifo_reader(fifo, got, writers=2)
rc, out, err = run(solve + ["-s", "solver.restart=10,20", "--history", fifo], timeout=60)
t.join(10)
if t.is_alive():  # both histories arrived through one open: release the reader's second open
    with open(fifo, "wb"):
        pass
    t.join(10)
both = b"".join(got)
check("sweep into a FIFO: exit 0, both histories", rc == 0 and both.startswith(b"iteration,")
      and both.count(b"iteration,residual") == 2, err[:300])
check("sweep into a FIFO: no indexed files", not [f for f in os.listdir(tmp) if f.startswith("out.fifo-")])
# a descriptor: /proc/self/fd/N (what /dev/stdout and /dev/fd/N name), written in place
r_fd, w_fd = os.pipe()
p = subprocess.Popen([exe, *solve, "-o", f"/proc/self/fd/{w_fd}"], pass_fds=(w_fd,), stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
os.close(w_fd)
piped = b""
while True:
    chunk = os.read(r_fd, 65536)
    if not chunk:
        break
    piped += chunk
os.close(r_fd)
p.wait(60)
check("descriptor output: exit 0 and the solution", p.returncode == 0 and piped.count(b"\n") == 1003, p.returncode)

# character devices, made in the temporary folder (the kernel's full and null devices): skipped where
# mknod is not allowed or the folder is mounted nodev
devices = False
try:
    os.mknod(path("full_dev"), 0o600 | stat.S_IFCHR, os.makedev(1, 7))
    os.mknod(path("null_dev"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    os.close(os.open(path("full_dev"), os.O_WRONLY))
    devices = True
except OSError as e:
    print(f"note: no device nodes here ({e}): the character device cases are skipped (the FIFO cases stand in)")
if devices:
    for opt in ("-o", "--history"):
        rc, out, err = run(solve + [opt, path("full_dev")])
        check(f"{opt} onto a failing device: exit 3", rc == 3 and "No space left on device" in err,
              f"exit {rc}: {err[:300]}")
        check(f"{opt} onto a failing device: still a device", stat.S_ISCHR(os.lstat(path("full_dev")).st_mode))
    rc, out, err = run(solve + ["-o", path("null_dev"), "--history", path("null_dev")])
    check("outputs onto a null device: exit 0, still a device", rc == 0 and stat.S_ISCHR(os.lstat(path("null_dev")).st_mode),
          f"exit {rc}: {err[:300]}")
    rc, out, err = run(solve, stdout=open(path("full_dev"), "w"))
    check("report onto a failing device: exit 3", rc == 3 and "standard output" in err, f"exit {rc}: {err[:300]}")
# the report to a closed pipe: exit 3 with a message, no death by SIGPIPE
p = subprocess.Popen([exe, *solve], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
p.stdout.close()
err = p.stderr.read().decode()
p.wait(60)
check("report onto a closed pipe: exit 3", p.returncode == 3 and "standard output" in err, f"exit {p.returncode}: {err[:300]}")

# unwritable outputs are found before the solve
os.mkdir(path("outdir"))
for opt, target, needle in (("-o", path("outdir"), "is a folder"), ("--history", path("nofolder/h.csv"), "does not exist"),
                            ("-o", path("nofolder/x.mtx"), "does not exist")):
    t0 = time.time()
    rc, out, err = run(solve + [opt, target])
    check(f"{opt} {os.path.basename(target)}: exit 3 before the solve", rc == 3 and needle in err and "reason=" not in out,
          f"exit {rc}: {err[:300]}")
no_temp_files("outputs")

# --- 3. signals while reading and writing ---------------------------------------------------------------


def slow_writer(p, text, hold):
    """Writes text into FIFO p, then keeps it open for `hold` seconds (a stalled producer)."""
    def body():
        try:
            fd = os.open(p, os.O_WRONLY)
            os.write(fd, text.encode())
            time.sleep(hold)
            os.close(fd)
        except OSError:
            pass
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def interrupted(name, args, sig=signal.SIGTERM, delay=0.7, writer=None):
    p = subprocess.Popen([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    check(f"{name}: still waiting after {delay} s", p.poll() is None, p.poll())
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    check(f"{name}: exit 6", p.returncode == 6, f"exit {p.returncode}: {err[:400]}")
    check(f"{name}: message", "interrupted by" in err, err[:300])
    if writer:
        writer.join(10)
    return out, err


mfifo = path("matrix.fifo")
os.mkfifo(mfifo)
w = slow_writer(mfifo, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n", 3)
interrupted("SIGTERM while reading a matrix from a slow FIFO", [mfifo, "-o", path("never.mtx")] + host, writer=w)
check("SIGTERM while reading: no output", not os.path.exists(path("never.mtx")))
interrupted("SIGINT while waiting for a FIFO's writer", [mfifo] + host, sig=signal.SIGINT)
bfifo = path("rhs.fifo")
os.mkfifo(bfifo)
w = slow_writer(bfifo, "%%MatrixMarket matrix array real general\n1000 1\n1\n", 3)
interrupted("SIGTERM while reading -b from a slow FIFO", solve + ["-b", bfifo], writer=w)
cfifo = path("cfg.fifo")
os.mkfifo(cfifo)
w = slow_writer(cfifo, "solver = {\n", 3)
interrupted("SIGTERM while reading -c from a slow FIFO", ["-c", cfifo] + solve, writer=w)
ofifo = path("nobody.fifo")
os.mkfifo(ofifo)
out, err = interrupted("SIGTERM while waiting for an output FIFO's reader", solve + ["-o", ofifo], delay=1.5)
check("output FIFO: still a FIFO", stat.S_ISFIFO(os.lstat(ofifo).st_mode))
# a configuration from a FIFO is read once, not twice (-c <(...) works)
w = slow_writer(cfifo, "solver = { restart = 7; };\n", 0)
rc, out, err = run(["-c", cfifo, "--print-config"] + host)
check("-c from a FIFO: read once", rc == 0 and "restart = 7;" in out, f"exit {rc}: {err[:300]}")
no_temp_files("signals")

# --- 4. configuration input -----------------------------------------------------------------------------
t0 = time.time()
big = path("big.cfg")
with open(big, "w") as f:
    f.write("# " + " " * (17 << 20) + "\n")
expect("17 MiB configuration", ["-c", big] + solve, 2, ["big.cfg", "larger than 16 MiB"], quick=20, mem_gib=mem)
zeros = path("zeros.cfg")
with open(zeros, "wb") as f:
    f.write(b"solver = {\n")
    f.truncate(1 << 20)  # then NUL bytes, as /dev/zero gives
expect("NUL bytes", ["-c", zeros] + solve, 2, ["zeros.cfg:2", "NUL byte"], quick=10, mem_gib=mem)
huge = path("huge.cfg")
with open(huge, "wb") as f:
    f.truncate(64 << 30)  # a sparse 64 GiB file: refused from its size, not read
expect("64 GiB configuration file", ["-c", huge] + solve, 2, ["huge.cfg", "larger than 16 MiB"], quick=5, mem_gib=mem)
# an endless stream: the reading stops at the limit, with little memory
sfifo = path("endless.fifo")
os.mkfifo(sfifo)


def endless(p):
    def body():
        try:
            with open(p, "w") as f:
                while True:
                    f.write("#" * 65535 + "\n")
        except OSError:
            pass
    threading.Thread(target=body, daemon=True).start()


endless(sfifo)
expect("endless configuration stream", ["-c", sfifo] + solve, 2, ["endless.fifo", "larger than 16 MiB"], quick=20,
       mem_gib=mem)
cases = (
    ("unterminated comment", "solver = { restart = 5; };\n/* old settings\nsolver = { rtol = 1e-3; };\n",
     ["unterminated.cfg:2", "never closed"]),
    ("setting given twice", "solver = {\n  restart = 5;\n  rtol = 1e-6;\n  restart = 7;\n};\n",
     ["twice.cfg:4", "solver.restart", "set twice", "line 2"]),
    ("group given twice", "solver = { restart = 5; };\nsolver = { rtol = 1e-6; };\n", ["group_twice.cfg:2", "solver", "line 1"]),
    ("nesting", "solver = " + "{ a = " * 100 + "1;" + " };" * 100 + "\n", ["nesting.cfg:1", "nested more than 64"]),
    ("byte-order mark", "\ufeffsolver = { restart = 5; };\n", ["bom.cfg:1", "byte-order mark"]),
)
for name, text, needles in cases:
    fname = {"unterminated comment": "unterminated.cfg", "setting given twice": "twice.cfg",
             "group given twice": "group_twice.cfg", "nesting": "nesting.cfg", "byte-order mark": "bom.cfg"}[name]
    p = write(fname, text)
    expect(f"config {name}", ["-c", p] + solve, 2, needles, quick=10)
deep = write("deep.cfg", "a = " + "{ b = " * 20000 + "1;" + " };" * 20000 + "\n")
rc, out, err = expect("config nested 20000 deep", ["-c", deep] + solve, 2, ["deep.cfg:1", "nested"], quick=10)
check("config nested 20000 deep: not libconfig's 'memory exhausted' alone", "nested" in err, err[:200])
inc = write("inc_missing.cfg", "solver = { restart = 5; };\n@include \"not_there.cfg\"\n")
expect("missing @include", ["-c", inc] + solve, 3, ["inc_missing.cfg:2", "not_there.cfg", "No such file"])
incf = write("inc_fifo.cfg", f'@include "{os.path.basename(cfifo)}"\n')
expect("@include of a FIFO", ["-c", incf] + solve, 2, ["inc_fifo.cfg:1", "FIFO"], quick=10)
write("part.cfg", "solver = { restart = 9; };\n")
inc2 = write("inc_twice.cfg", "solver = { rtol = 1e-6; };\n@include \"part.cfg\"\n")
expect("setting twice across an @include", ["-c", inc2] + solve, 2, ["part.cfg:1", "solver", "inc_twice.cfg:1"])
commented = write("commented.cfg", "/*\n@include \"not_there.cfg\"\n*/\nsolver = { restart = 5; };\n")
rc, out, err = run(["-c", commented, "--print-config"] + host)
check("@include inside a comment is ignored", rc == 0 and "restart = 5;" in out, f"exit {rc}: {err[:300]}")

# --- 5. generator specs ---------------------------------------------------------------------------------
for spec, needle in (("gen:poisson2d:10xx", "at character 18"), ("gen:poisson3d:10x0x10", "is 0"),
                     ("gen:poisson2d:10x10x10", "poisson2d takes"), ("gen:poisson3d:10x20", "found 2 sizes"),
                     ("gen:poisson2d:10abc", "unexpected text 'abc'"), ("gen:poisson2d:+10", "positive integer"),
                     ("gen:poisson2d:-5", "positive integer"), ("gen:poisson2d:0", "is 0"),
                     ("gen:poisson2d: 10", "positive integer"), ("gen:foo:10", "unknown generator 'foo'"),
                     ("gen:poisson2d", "expected gen:NAME:SIZE"), ("gen:poisson2d:", "found the end"),
                     ("gen:poisson2d:10:3", "no Peclet number"), ("gen:convdiff3d:10:abc", "Peclet"),
                     ("gen:convdiff3d:10:nan", "Peclet"), ("gen:convdiff3d:10:", "Peclet"),
                     ("gen:poisson3d:99999999999999999999", "32-bit index limit")):
    expect(f"spec {spec!r}", [spec] + host, 2, [spec, needle])
for spec in ("gen:poisson2d:12", "gen:poisson2d:12x7", "gen:poisson3d:6", "gen:laplace27:5x4x3", "gen:convdiff3d:6:20"):
    rc, out, err = run([spec, "--quiet"] + host)
    check(f"spec {spec!r} still accepted", rc == 0, f"exit {rc}: {err[:300]}")

# --- 6. huge declared sizes with few entries ------------------------------------------------------------
absurd = write("n_2147483647.mtx", "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n1 1 1\n")
check("the absurd file is small", os.path.getsize(absurd) < 80)
for mode, extra in (("solve", host), ("--inspect", ["--inspect"])):
    args = [absurd] + extra if mode == "solve" else ["--inspect", absurd]
    expect(f"n = 2^31-1 with one entry ({mode})", args, 3, ["n_2147483647.mtx:2", "singular", "2147483646 rows"],
           quick=5, mem_gib=mem)
sym = write("n_sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n1000000 1000000 2\n2 1 1\n3 3 1\n")
expect("symmetric: more rows than mirrored entries", [sym] + host, 3, ["n_sym.mtx:2", "singular"], quick=5, mem_gib=mem)
few = write("few.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 2 1\n3 3 1\n")
expect("4 rows, 3 entries", [few] + host, 3, ["few.mtx:2", "at least 1 rows hold no entry"])

# --- 7. RAS on matrices with rows without off-diagonal entries ------------------------------------------
n = 60
diag = write("diag.mtx", "%%MatrixMarket matrix coordinate real general\n"
             f"{n} {n} {n}\n" + "".join(f"{i} {i} {1 + i % 5}\n" for i in range(1, n + 1)))
lines = [f"{i} {i} 4" for i in range(1, n + 1)] + [f"{i} {i + 1} -1" for i in range(1, n // 2)] \
    + [f"{i + 1} {i} -1" for i in range(1, n // 2)]
mixed = write("mixed.mtx", "%%MatrixMarket matrix coordinate real general\n"
              f"{n} {n} {len(lines)}\n" + "\n".join(lines) + "\n")
for m in (diag, mixed):
    for overlap in (0, 1, 2):
        for blocks in (1, 4):
            rc, out, err = run([m, "-s", "preconditioner.type=ras", "-s", f"preconditioner.overlap={overlap}",
                                "-s", f"preconditioner.blocks={blocks}", "--quiet"] + host)
            check(f"RAS overlap {overlap} blocks {blocks} on {os.path.basename(m)}: converges", rc == 0,
                  f"exit {rc}: {err[:300]}")

# --- 8. smaller ones ------------------------------------------------------------------------------------
bom = write("bom.mtx", "\ufeff%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n")
expect("UTF-8 byte-order mark in a .mtx", [bom] + host, 3, ["bom.mtx:1", "byte-order mark"])
with open(path("utf16.mtx"), "wb") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n".encode("utf-16"))
expect("UTF-16 .mtx", [path("utf16.mtx")] + host, 3, ["utf16.mtx:1", "UTF-16"])
under = write("under.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 2\n% c\n1 2 1e-400\n"
              "2 1 -3e-999\n2 2 2\n")
rc, out, err = run([under, "--quiet"] + host)
check("underflow: the run goes on", rc == 0, f"exit {rc}: {err[:300]}")
check("underflow: warning names file:line", "under.mtx:5" in err and "1e-400" in err and "underflow" in err, err[:400])
check("underflow: counted", "2 values" in err, err[:400])
zero = write("zero.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 2\n1 2 0e-400\n2 2 2\n")
rc, out, err = run([zero, "--quiet"] + host)
check("an exact zero is no underflow", rc == 0 and "warning" not in err, err[:300])
# 20000 -s options: near-linear
many = []
for i in range(20000):
    many += ["-s", f"solver.restart={i % 100 + 1}"]
t0 = time.time()
rc, out, err = run(["gen:poisson2d:8", "--print-config"] + many + host, timeout=120)
t_print = time.time() - t0
check("20000 -s options: --print-config", rc == 0 and "sweep: 20000 runs" in out, f"exit {rc}: {err[:200]}")
t0 = time.time()
rc, out, err = run(["gen:poisson2d:8", "--dry-run"] + many + host, timeout=120)
t_dry = time.time() - t0
check("20000 -s options: --dry-run lists 20000 runs", rc == 0 and out.count("\n") >= 20000, f"exit {rc}: {err[:200]}")
slow = 20 if not can_limit else 5  # a sanitizer build is slower
check(f"20000 -s options: parsed in under {slow} s", t_print < slow, t_print)
check(f"20000 -s options: dry run in under {2 * slow} s", t_dry < 2 * slow, t_dry)
# the exit code of a malformed configuration, as the code and both documents say
bad = write("syntax.cfg", "solver = { restart = ; };\n")
rc, out, err = run(["-c", bad] + solve)
check("malformed configuration: exit 2", rc == 2 and "syntax.cfg:1" in err, f"exit {rc}: {err[:300]}")
rc, out, err = run(["-c", path("no_such.cfg")] + solve)
check("missing configuration: exit 3", rc == 3, f"exit {rc}: {err[:300]}")
readme = read(os.path.join(src, "README.md"))
failures_md = read(os.path.join(src, "docs", "failures.md"))
row = {l.split("|")[1].strip(): l for l in readme.splitlines() if l.startswith("| ") and l.split("|")[1].strip().isdigit()}
check("README: exit 2 covers a malformed configuration file", "malformed configuration" in row.get("2", ""), row.get("2"))
check("README: exit 3 does not claim malformed configuration files", "config" not in row.get("3", "").split("malformed")[-1]
      if "malformed" in row.get("3", "") else True, row.get("3"))
check("docs/failures.md: a malformed configuration file is exit 2", "malformed configuration file" in failures_md
      and "exit 2" in failures_md, "")

no_temp_files("end")
finish()
