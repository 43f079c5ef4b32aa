#!/usr/bin/env python3
"""What a run shows while it solves: --monitor lines arrive on the pipe before the solve ends, in their
format (iteration, residual, relative, time; an attempt column when the strategy may make several
attempts), every K-th iteration or at most once per N seconds (first and last always), on stderr with
--json; malformed --monitor / output.monitor values are usage errors (exit 2) before anything is read;
the history CSV is written row by row into its temporary file and renamed at the end; no progress line
when stderr is not a terminal. Usage: monitor_test.py GPUSOLVE SRC_DIR"""
import glob, json, os, re, subprocess, time

from apptest import check, exe, finish, run, scratch

tmp = scratch("gs_monitor_")
host = ["-s", "device.backend=host"]
cg = ["-s", "solver.type=cg", "-s", "preconditioner.type=none", "-s", "solver.fallback=none"]
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\d+\.\d{4})$")
ROW_TAGGED = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+\.\d{4})$")


def rows(text, tagged=False):
    """The monitor rows of text: (iteration, residual, relative, time) or (attempt, iteration, ...)."""
    out = []
    for line in text.splitlines():
        m = (ROW_TAGGED if tagged else ROW).match(line)
        if m:
            g = m.groups()
            out.append(tuple(int(v) for v in g[:2 if tagged else 1]) + tuple(float(v) for v in g[2 if tagged else 1:]))
    return out


# --- lines arrive while the solve runs ------------------------------------------------------------------
# CG without a preconditioner on the 2D Laplacian 300^2 (90000 rows) takes hundreds of iterations: the
# lines are read from the pipe as they come and must arrive while gpusolve still runs
args = [exe, "gen:poisson2d:300", "--monitor", "--quiet", "-s", "solver.rtol=1e-10"] + host + cg
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
seen_running, first_at, lines = False, None, []
t0 = time.time()
for line in p.stdout:
    lines.append(line.rstrip("\n"))
    if rows(line) and first_at is None:
        first_at = time.time() - t0
        seen_running = p.poll() is None
err = p.stderr.read()
p.wait(300)
total = time.time() - t0
check("--monitor: exit 0", p.returncode == 0, f"exit {p.returncode}: {err[:300]}")
check("--monitor: a line arrived before gpusolve ended", seen_running, f"first line at {first_at} s of {total} s")
check("--monitor: header", lines and lines[0].split() == ["#", "iteration", "residual", "relative", "time_s"],
      lines[:1])
r = rows("\n".join(lines))
check("--monitor: one line per iteration", len(r) > 100 and [x[0] for x in r] == list(range(len(r))),
      [x[0] for x in r[:5]])
check("--monitor: relative starts at 1", r and r[0][2] == 1.0 and r[0][3] == 0.0, r[:1])
check("--monitor: relative = residual / first", all(abs(x[2] - x[1] / r[0][1]) <= 1e-6 * x[2] for x in r), r[:3])
check("--monitor: time does not decrease", all(b[3] >= a[3] for a, b in zip(r, r[1:])), r[-3:])
summary = lines[-1] if lines else ""
check("--monitor: the summary line ends the output", summary.startswith("reason=converged_rtol"), summary)
it = int(re.search(r"iterations=(\d+)", summary).group(1)) if "iterations=" in summary else -1
check("--monitor: the last line is the last iteration", r and r[-1][0] == it, (r[-1:], it))

# --- every K-th, every N seconds ------------------------------------------------------------------------
rc, out, err = run("gen:poisson2d:40", "--monitor=7", "--quiet", *host, *cg)
r = rows(out)
its = [x[0] for x in r]
last = int(re.search(r"iterations=(\d+)", out).group(1))
check("--monitor=7: exit 0", rc == 0, err[:300])
check("--monitor=7: every 7th, first and last", its[:3] == [0, 7, 14] and its[-1] == last and
      all(i % 7 == 0 for i in its[:-1]), its)
rc, out, err = run("gen:poisson2d:40", "--monitor=100s", "--quiet", *host, *cg)
its = [x[0] for x in rows(out)]
check("--monitor=100s: first and last only", rc == 0 and len(its) == 2 and its[0] == 0, (its, err[:300]))
rc, out, err = run("gen:poisson2d:40", "--monitor=0.000001s", "--quiet", *host, *cg)
check("--monitor=0.000001s: many lines", rc == 0 and len(rows(out)) > 10, out[:300])
rc, out2, err = run("gen:poisson2d:40", "-s", "output.monitor=7", "--quiet", *host, *cg)
check("output.monitor=7 is --monitor=7", rc == 0 and [x[0] for x in rows(out2)] == [x[0] for x in rows(run(
    "gen:poisson2d:40", "--monitor=7", "--quiet", *host, *cg)[1])], out2[:300])
cfg = os.path.join(tmp, "m.cfg")
with open(cfg, "w") as f:
    f.write('output = { monitor = "5"; };\n')
rc, out, err = run("gen:poisson2d:40", "-c", cfg, "--quiet", *host, *cg)
check("output.monitor in a file", rc == 0 and [x[0] for x in rows(out)][:3] == [0, 5, 10], out[:300])

# --- malformed values: usage errors before the matrix is read --------------------------------------------
for bad in ("0", "x", "-3", "1.5", "s", "0s", "-1s", "1e400s", "", "2 s"):
    rc, out, err = run("/nonexistent.mtx", f"--monitor={bad}")
    check(f"--monitor={bad}: exit 2", rc == 2, f"exit {rc}: {err[:200]}")
    check(f"--monitor={bad}: message", f"--monitor={bad}" in err and "expected" in err and "nonexistent" not in err,
          err[:300])
rc, out, err = run("/nonexistent.mtx", "-s", "output.monitor=often")
check("output.monitor=often: exit 2 naming the key", rc == 2 and 'output.monitor = "often"' in err and
      "nonexistent" not in err, f"exit {rc}: {err[:300]}")
with open(cfg, "w") as f:
    f.write('output = { monitor = "fast"; };\n')
rc, out, err = run("/nonexistent.mtx", "-c", cfg)
check("output.monitor in a file, malformed: exit 2", rc == 2 and "fast" in err, f"exit {rc}: {err[:300]}")

# --- with --json: the lines on stderr, stdout one JSON object ----------------------------------------------
rc, out, err = run("gen:poisson2d:30", "--monitor", "--json", *host, *cg)
try:
    obj = json.loads(out)
    one = out.count("\n") == 1
except ValueError:
    obj, one = None, False
check("--monitor --json: stdout is one JSON object", rc == 0 and obj is not None and one, out[:300])
r = rows(err)
check("--monitor --json: the lines on stderr", obj and len(r) == obj["solve"]["iterations"] + 1, err[:300])

# --- the attempt column when the strategy may make several attempts ----------------------------------------
rc, out, err = run("gen:poisson2d:30", "--monitor", "--quiet", *host)
r = rows(out, tagged=True)
check("automatic choice: header with attempt", out.splitlines()[0].split()[:3] == ["#", "attempt", "iteration"],
      out[:200])
check("automatic choice: rows tagged with attempt 1", rc == 0 and r and all(x[0] == 1 for x in r), out[:300])
# a first attempt that fails (CG on a nonsymmetric matrix breaks down or stalls), then the ladder
rc, out, err = run("gen:convdiff3d:12:50", "--monitor=5", "--quiet", "-s", "solver.type=cg", "-s",
                   "preconditioner.type=none", "-s", "solver.max_iterations=30", *host)
r = rows(out, tagged=True)
attempts = sorted(set(x[0] for x in r))
n_att = int(re.search(r"attempts=(\d+)", out).group(1)) if "attempts=" in out else 0
check("fallback ladder: the lines name their attempts", n_att >= 2 and attempts == list(range(1, n_att + 1)),
      (attempts, n_att, out[-400:]))
check("fallback ladder: each attempt starts at iteration 0",
      all(min(x[1] for x in r if x[0] == a) == 0 for a in attempts), r[:5])

# --- the history: written as the solve runs, renamed at the end --------------------------------------------
hist = os.path.join(tmp, "h.csv")
p = subprocess.Popen([exe, "gen:poisson2d:400", "--quiet", "--history", hist, "--monitor=50", "-s",
                      "solver.rtol=1e-10", "-s", "solver.max_iterations=100000"] + host + cg, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
partial, temps, looked = None, [], False
for line in p.stdout:
    r = rows(line)
    if r and r[0][0] >= 100 and not looked:
        # the temporary file beside the history holds the rows so far (flushed at least every 0.1 s)
        looked = True
        deadline = time.time() + 2
        while time.time() < deadline:
            temps = glob.glob(hist + ".tmp.*")
            if temps:
                with open(temps[0]) as f:
                    partial = f.read().splitlines()
                if len(partial) > 50:
                    break
            time.sleep(0.05)
        check("history: the temporary file exists during the solve", len(temps) == 1 and not os.path.exists(hist),
              (temps, os.listdir(tmp)))
        check("history: still solving when the rows were read", p.poll() is None, p.poll())
p.communicate(timeout=300)
check("history run: exit 0", p.returncode == 0, p.returncode)
check("history: rows arrive during the solve", partial and partial[0] == "iteration,residual,relative_residual,time_s"
      and len(partial) > 50, (partial or [])[:3])
with open(hist) as f:
    final = f.read().splitlines()
check("history: the final file starts with the rows seen during the solve",
      partial and final[:len(partial) - 1] == partial[:-1], (final[:2], (partial or [])[:2]))
check("history: no temporary file left", not glob.glob(hist + ".tmp.*"), os.listdir(tmp))
rows_csv = [l.split(",") for l in final[1:]]
check("history: one row per iteration", [int(x[0]) for x in rows_csv] == list(range(len(rows_csv))), final[:3])
check("history: time from the solve's start", float(rows_csv[0][3]) == 0.0, final[1])

# an interrupted run leaves no history and no temporary file
hist2 = os.path.join(tmp, "h2.csv")
# rtol = 0: the solve runs until it is stopped
p = subprocess.Popen([exe, "gen:poisson2d:600", "--quiet", "--history", hist2, "--monitor=1s", "-s",
                      "solver.rtol=0", "-s", "solver.max_iterations=1000000"] + host + cg,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
p.stdout.readline()  # the header: the solve is under way
p.stdout.readline()  # iteration 0
time.sleep(0.3)
p.send_signal(2)
out, err = p.communicate(timeout=120)
check("interrupted with --history: exit 6", p.returncode == 6, f"exit {p.returncode}: {err[:300]}")
check("interrupted with --history: no file, no temporary file",
      not os.path.exists(hist2) and not glob.glob(hist2 + ".tmp.*"), os.listdir(tmp))

# the history of a fallback ladder is the reported attempt's, also when an earlier attempt is reported
hist3 = os.path.join(tmp, "h3.csv")
rc, out, err = run("gen:convdiff3d:12:50", "--quiet", "--history", hist3, "-s", "solver.type=cg", "-s",
                   "preconditioner.type=none", "-s", "solver.max_iterations=30", *host)
with open(hist3) as f:
    h3 = f.read().splitlines()
it3 = int(re.search(r"iterations=(\d+)", out).group(1))
check("fallback history: the reported attempt's rows", h3[0].startswith("iteration,") and
      [int(l.split(",")[0]) for l in h3[1:]] == list(range(it3 + 1)), (h3[:3], it3))

# --- no progress line when stderr is not a terminal ---------------------------------------------------------
rc, out, err = run("gen:poisson2d:30", "-s", "solver.rtol=1e-1,1e-2", *host, *cg)
check("sweep, stderr not a terminal: no progress line", rc == 0 and "\r" not in err and "\r" not in out, repr(err[:200]))

# --- on a terminal: the progress line, erased before the report ---------------------------------------------
try:
    import pty
    master, slave = pty.openpty()
except (ImportError, OSError):
    master = None
if master is not None:
    p = subprocess.Popen([exe, "gen:poisson2d:60", "-s", "solver.rtol=1e-4,1e-6", "--quiet"] + host + cg,
                         stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        tty += chunk
    out = p.communicate(timeout=120)[0]
    os.close(master)
    text = tty.decode(errors="replace")
    check("terminal: the sweep's progress line names the run", "gpusolve: sweep run 1 of 2" in text and
          "sweep run 2 of 2" in text, repr(text[:300]))
    check("terminal: rewritten in place and erased", text.count("\r") >= 2 and text.endswith("\r\x1b[K"),
          repr(text[-100:]))
    check("terminal: the report on stdout is plain", p.returncode == 0 and "\r" not in out and out.count("reason=converged_rtol") == 2,
          out[-300:])
    # --monitor replaces the progress line
    master, slave = pty.openpty()
    p = subprocess.Popen([exe, "gen:poisson2d:60", "-s", "solver.rtol=1e-4,1e-6", "--quiet", "--monitor=100s"] +
                         host + cg, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    out = p.communicate(timeout=120)[0]
    os.close(master)
    check("terminal with --monitor: no progress line", b"\r" not in tty and "# index=0 solver.rtol=0.0001" in out and
          "# index=1 solver.rtol=1e-06" in out, (tty[:200], out[:300]))

finish()
