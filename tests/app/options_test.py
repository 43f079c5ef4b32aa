#!/usr/bin/env python3
"""Options: the long forms --config, --set (also --set=KEY=V), --output, --rhs, --x0 do what -c, -s, -o,
-b, -x do; --threads N sets device.threads (the host backend's team) and refuses what is not a count;
a sweep whose output paths cannot all be written fails before anything is read or solved (exit 3, the
message naming the path and its run), also when the path of its indexed outputs is a folder.
Usage: options_test.py GPUSOLVE SRC_DIR"""
import json, os, re, time

from apptest import check, finish, run, scratch, write

tmp = scratch("gs_options_")
host = ["-s", "device.backend=host"]


def summary(out):
    """The summary line without its times."""
    line = [l for l in out.splitlines() if l.startswith("reason=")]
    return re.sub(r" (setup_s|solve_s)=\S+", "", line[-1]) if line else None


def read(path):
    with open(path) as f:
        return f.read()


# --- long forms -------------------------------------------------------------------------------------------
n = 15 * 15
cfg = write("run.cfg", 'solver = { type = "gmres"; restart = 12; };\npreconditioner = { type = "ilu0"; };\n')
rhs = write("rhs.mtx", "%%MatrixMarket matrix array real general\n" + f"{n} 1\n" + "".join(f"{1 + i % 7}\n" for i in range(n)))
x0 = write("x0.mtx", "%%MatrixMarket matrix array real general\n" + f"{n} 1\n" + "0.5\n" * n)
short = ["-c", cfg, "-s", "solver.rtol=1e-9", "-b", rhs, "-x", x0, "-o", os.path.join(tmp, "xs.mtx")]
long_ = ["--config", cfg, "--set", "solver.rtol=1e-9", "--rhs", rhs, "--x0", x0, "--output", os.path.join(tmp, "xl.mtx")]
eq = ["--config=" + cfg, "--set=solver.rtol=1e-9", "--rhs=" + rhs, "--x0=" + x0, "--output=" + os.path.join(tmp, "xe.mtx")]
res = {}
for name, args in (("short", short), ("long", long_), ("long=", eq)):
    rc, out, err = run("gen:poisson2d:15", "--quiet", *host, *args)
    check(f"{name} options: exit 0", rc == 0, f"exit {rc}: {err[:300]}")
    res[name] = summary(out)
check("long options: the same run as the short ones", res["short"] == res["long"] == res["long="] and res["short"], res)
check("long options: the same solution",
      read(os.path.join(tmp, "xs.mtx")) == read(os.path.join(tmp, "xl.mtx")) == read(os.path.join(tmp, "xe.mtx")))
rc, out, err = run("--print-config", "--set=solver.restart=77", "--set", "preconditioner.blocks=9", "--config", cfg)
check("--set/--config in --print-config", rc == 0 and "restart = 77;" in out and "blocks = 9;" in out and
      '"ilu0"' in out, out[:400])
rc, out, err = run("--print-config", "--set", "solver.restart=5,6")
check("--set with a list: a sweep", rc == 0 and "solver.restart" in out and "sweep: 2 runs" in out, out[-300:])
for opt in ("--set", "--config", "--output", "--rhs", "--x0", "--threads"):
    rc, out, err = run("gen:poisson2d:5", opt)
    check(f"{opt} without a value: exit 2", rc == 2 and opt in err and "needs a value" in err, f"exit {rc}: {err[:200]}")
rc, out, err = run("gen:poisson2d:5", "--set", "solver.nokey=1")
check("--set unknown key: exit 2", rc == 2 and "solver.nokey" in err, f"exit {rc}: {err[:200]}")

# --- --threads ----------------------------------------------------------------------------------------------
rc, out, err = run("--print-config", "--threads", "3")
check("--threads 3: device.threads = 3", rc == 0 and re.search(r"threads = 3;", out), out[:300])
rc, out, err = run("--print-config", "-s", "device.threads=5", "--threads", "2")
check("--threads wins over -s", rc == 0 and re.search(r"threads = 2;", out), out[:300])
for t in ("1", "2"):
    rc, out, err = run("gen:poisson2d:20", "--json", "--threads", t, *host)
    obj = json.loads(out) if rc == 0 else {}
    check(f"--threads {t}: the host backend's team", obj.get("backend", {}).get("device") ==
          f"host ({t} thread{'' if t == '1' else 's'})" and obj["config"]["device"]["threads"] == int(t), out[:300])
rc1, out1, _ = run("gen:poisson2d:20", "--quiet", "--threads", "1", *host, "-s", "solver.type=cg", "-s",
                   "preconditioner.type=ic0")
rc2, out2, _ = run("gen:poisson2d:20", "--quiet", "--threads", "2", *host, "-s", "solver.type=cg", "-s",
                   "preconditioner.type=ic0")
check("--threads 1 and 2: the same iterations", rc1 == rc2 == 0 and summary(out1).split()[1] == summary(out2).split()[1],
      (out1, out2))
rc, out, err = run("gen:poisson2d:20", "-s", "device.threads=1,2", "--json", *host)
objs = [json.loads(l) for l in out.splitlines()] if rc == 0 else []
check("a sweep over device.threads: each run its team", [o["backend"]["device"] for o in objs] ==
      ["host (1 thread)", "host (2 threads)"], out[:400])
for bad in ("x", "-1", "1.5", "5000", "99999999999999999999999999999999999999"):
    rc, out, err = run("/nonexistent.mtx", "--threads", bad)
    check(f"--threads {bad}: exit 2 naming device.threads", rc == 2 and "device.threads" in err and
          "nonexistent" not in err, f"exit {rc}: {err[:300]}")

# --- a sweep's outputs are checked before the first run -------------------------------------------------------
sweep = ["gen:poisson2d:20", "-s", "solver.rtol=1e-6,1e-8", *host]
os.mkdir(os.path.join(tmp, "outdir"))
os.mkdir(os.path.join(tmp, "run0"))
for name, args, needles in (
        ("--history in a missing folder", ["--history", os.path.join(tmp, "nofolder", "h.csv")], ["does not exist"]),
        ("-o in a missing folder", ["-o", os.path.join(tmp, "nofolder", "x.mtx")], ["does not exist"]),
        ("-o a folder", ["-o", os.path.join(tmp, "outdir")], ["is a folder"]),
        ("-o a folder with a slash", ["-o", os.path.join(tmp, "outdir") + "/"], ["is a folder"]),
        ("--history a folder", ["--history", os.path.join(tmp, "outdir")], ["is a folder", "--history"]),
        ("output.history per run, run 1's folder missing",
         ["-s", "output.history=" + os.path.join(tmp, "run{index}", "h.csv")], ["run1", "of run 1"]),
        ("output.solution a folder", ["-s", "output.solution=" + os.path.join(tmp, "outdir")], ["is a folder"])):
    t0 = time.time()
    rc, out, err = run(*sweep, "--monitor", *args)
    check(f"sweep, {name}: exit 3", rc == 3, f"exit {rc}: {err[:300]}")
    check(f"sweep, {name}: nothing solved", "reason=" not in out and "iteration" not in out and "sweep:" not in out,
          out[:300])
    for s in needles:
        check(f"sweep, {name}: message has {s!r}", s in err, err[:300])
check("sweep: nothing written", os.listdir(os.path.join(tmp, "outdir")) == [] and
      os.listdir(os.path.join(tmp, "run0")) == [], (os.listdir(os.path.join(tmp, "outdir")),
                                                     os.listdir(os.path.join(tmp, "run0"))))
rc, out, err = run(*sweep, "--json", "--history", os.path.join(tmp, "nofolder", "h.csv"))
objs = [json.loads(l) for l in out.splitlines() if l.strip()]
check("sweep --json, bad output: an error object per run, none solved", rc == 3 and len(objs) == 2 and
      all(o.get("status") == "error" and "solve" not in o for o in objs), out[:400])
rc, out, err = run(*sweep, "--dry-run", "-o", os.path.join(tmp, "outdir"))
check("sweep --dry-run, -o a folder: exit 3", rc == 3 and "is a folder" in err, f"exit {rc}: {err[:300]}")
# the good case: one file per run
rc, out, err = run(*sweep, "--quiet", "--history", os.path.join(tmp, "h.csv"), "-o", os.path.join(tmp, "x.mtx"))
check("sweep with good outputs: exit 0 and one file per run", rc == 0 and all(
    os.path.exists(os.path.join(tmp, f)) for f in ("h-0.csv", "h-1.csv", "x-0.mtx", "x-1.mtx")), err[:300])

finish()
