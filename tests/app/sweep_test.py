#!/usr/bin/env python3
"""Parameter sweeps of the gpusolve CLI: lists in a file, -s KEY=A,B, repeated -s, wildcard-linked keys;
the Cartesian product of runs, one JSON object per run with its "sweep" member, the text summary
table, --dry-run, failing runs reported while the sweep goes on, the sweep's exit code, one history
file per run, and the errors of malformed lists. Usage: sweep_test.py GPUSOLVE SRC_DIR"""
import itertools, json, os

from apptest import check, data, finish, run, scratch, write
tmp = scratch("gs_sweep_")
host = ["-s", "device.backend=host"]


def jsonl(out):
    objs = []
    for line in out.splitlines():
        if line.strip():
            objs.append(json.loads(line))
    return objs


# --- a sweep over three keys from one command: a list in the file, -s A,B and a repeated -s ---------
cfg = write("three.cfg", 'solver = { type = "fgmres"; };\n'
                         'preconditioner = {\n  type = "bilu";\n  blocks = [2, 8];\n};\n')
rc, out, err = run("-c", cfg, "gen:poisson2d:24", "--json", *host, "-s", "preconditioner.fill_level=0,1",
                   "-s", "solver.restart=10", "-s", "solver.restart=40", "-s", "system.rhs=Ax")
check("three-key sweep exit", rc == 0, f"exit {rc}: {err[:400]}")
try:
    objs = jsonl(out)
except ValueError as e:
    objs = []
    check("three-key sweep JSON Lines", False, f"{e}: {out[:300]}")
check("three-key sweep run count", len(objs) == 8, f"{len(objs)} objects")
varied_seen = []
for i, o in enumerate(objs):
    sw = o.get("sweep", {})
    check(f"run {i} index/count", sw.get("index") == i and sw.get("count") == 8, sw)
    v = sw.get("varied", {})
    check(f"run {i} varied keys", sorted(v) == ["preconditioner.blocks", "preconditioner.fill_level", "solver.restart"], v)
    # the varied values are the values the run used
    c = o.get("config", {})
    check(f"run {i} varied = config", v.get("solver.restart") == c["solver"]["restart"] and
          v.get("preconditioner.blocks") == c["preconditioner"]["blocks"] and
          v.get("preconditioner.fill_level") == c["preconditioner"]["fill_level"], (v, c.get("preconditioner")))
    check(f"run {i} converged", o.get("status") == "ok" and o["solve"]["reason"] == "converged_rtol", o.get("solve"))
    check(f"run {i} x* error", o.get("solve", {}).get("error_vs_xstar", 1) < 1e-5, o.get("solve"))
    varied_seen.append((v.get("solver.restart"), v.get("preconditioner.fill_level"), v.get("preconditioner.blocks")))
# schema order: solver.restart, then fill_level, then blocks; the last varies fastest
expect = list(itertools.product([10, 40], [0, 1], [2, 8]))
check("Cartesian product in order", varied_seen == expect, varied_seen)
# the matrix is read once: every run reports the same read time
reads = {o.get("time", {}).get("read") for o in objs}
check("matrix read once", len(reads) == 1, reads)
# more fill, fewer iterations (ILU(1) is a better preconditioner than ILU(0) on the Laplacian)
its = {(o["sweep"]["varied"]["solver.restart"], o["sweep"]["varied"]["preconditioner.fill_level"],
        o["sweep"]["varied"]["preconditioner.blocks"]): o["solve"]["iterations"] for o in objs if "solve" in o}
if len(its) == 8:
    check("fill 1 beats fill 0", all(its[(r, 1, b)] <= its[(r, 0, b)] for r in (10, 40) for b in (2, 8)), its)
# JSON Lines load into pandas without edits (pandas is optional here)
try:
    import pandas as pd
    path = write("three.jsonl", out)
    df = pd.read_json(path, lines=True)
    check("pandas rows", len(df) == 8, len(df))
    flat = pd.json_normalize(df.to_dict("records"))
    for col in ("sweep.index", "sweep.varied.solver.restart", "sweep.varied.preconditioner.blocks",
                "solve.iterations", "time.solve"):
        check(f"pandas column {col}", col in flat.columns, list(flat.columns)[:20])
    check("pandas values", sorted(flat["sweep.varied.preconditioner.blocks"].tolist()) == [2] * 4 + [8] * 4,
          flat["sweep.varied.preconditioner.blocks"].tolist())
except ImportError:
    print("note: pandas not installed; the pandas loading check is skipped")

# --- a single run is a sweep of one -------------------------------------------------------------------
rc, out, err = run("gen:poisson2d:10", "--json", *host)
o = json.loads(out)
check("single run sweep member", o.get("sweep") == {"index": 0, "count": 1, "varied": {}}, o.get("sweep"))

# --- text mode: one summary line per run, then the table -------------------------------------------------
rc, out, err = run("gen:poisson2d:16", *host, "-s", "preconditioner.type=none,jacobi,ilu0")
check("text sweep exit", rc == 0, f"exit {rc}: {err[:300]}")
lines = out.splitlines()
check("text sweep header", lines and lines[0].startswith("sweep: 3 runs over 1 varied key"), lines[:1])
run_lines = [l for l in lines if l.startswith("index=")]
check("text sweep lines", len(run_lines) == 3 and all("reason=converged_rtol" in l for l in run_lines), run_lines)
check("text line names the run", run_lines and run_lines[1].startswith("index=1 preconditioner.type=jacobi "), run_lines)
head = [l for l in lines if "iterations" in l and "true_residual" in l]
check("summary table header", len(head) == 1 and "preconditioner.type" in head[0] and "setup_s" in head[0]
      and "solve_s" in head[0] and "reason" in head[0], head)
if head:
    k = lines.index(head[0])
    rows = lines[k + 1:k + 4]
    check("summary table rows", [r.split()[:2] for r in rows] == [["0", "none"], ["1", "jacobi"], ["2", "ilu0"]], rows)
    # fewer iterations with a better preconditioner, read from the table itself
    its_col = head[0].split().index("iterations")
    it_vals = [int(r.split()[its_col]) for r in rows]
    check("table iterations", it_vals[2] < it_vals[0], it_vals)
check("tally", "converged: 3 of 3" in out and "exit code 0" in out, out[-200:])
rc, out, err = run("gen:poisson2d:16", *host, "-s", "preconditioner.type=none,jacobi", "--quiet")
check("quiet sweep: lines only", rc == 0 and len(out.splitlines()) == 2 and "summary" not in out, out)

# --- --dry-run lists the runs without reading the matrix ------------------------------------------------
rc, out, err = run(os.path.join(tmp, "absent.mtx"), "--dry-run", "-s", "solver.type=cg,gmres", "-s",
                   "preconditioner.blocks=4,16,64")
check("dry run exit", rc == 0, f"exit {rc}: {err[:300]}")
rows = [l.split() for l in out.splitlines() if l.strip()[:1].isdigit()]
check("dry run rows", rows == [[str(i), t, b] for i, (t, b) in enumerate(itertools.product(["cg", "gmres"], ["4", "16", "64"]))], rows)
rc, out, err = run("--dry-run", "--json", "-s", "solver.rtol=1e-6,1e-8")
objs = jsonl(out)
check("dry run JSON", [o["status"] for o in objs] == ["dry_run"] * 2 and
      [o["config"]["solver"]["rtol"] for o in objs] == [1e-6, 1e-8] and
      [o["sweep"]["varied"]["solver.rtol"] for o in objs] == [1e-6, 1e-8], out[:300])

# --- wildcard: keys set by one -s vary together ----------------------------------------------------------
rc, out, err = run("--dry-run", "--json", "-s", "trisolve.*.sweeps=1,2,5", "-s", "trisolve.*.type=jacobi")
objs = jsonl(out)
check("linked run count", len(objs) == 3, len(objs))
check("linked values", [(o["config"]["trisolve"]["lower"]["sweeps"], o["config"]["trisolve"]["upper"]["sweeps"]) for o in objs]
      == [(1, 1), (2, 2), (5, 5)] and all(o["config"]["trisolve"]["upper"]["type"] == "jacobi" for o in objs), out[:300])
rc, out, err = run("--dry-run", "-s", "trisolve.*.sweeps=1,2", "-s", "trisolve.lower.sweeps=3,4,5")
check("linked lengths differ", rc == 2 and "same length" in err, f"exit {rc}: {err}")
rc, out, err = run("--dry-run", "-s", "trisolve.*.sweepz=1")
check("wildcard matches nothing", rc == 2 and "no configuration key matches" in err, f"exit {rc}: {err}")

# --- a failing run is reported and the sweep goes on; the exit code is the most serious one ------------
rc, out, err = run("gen:poisson2d:16", "--json", *host, "-s", "preconditioner.type=ilu0", "-s", "solver.type=cg,fgmres",
                   "-s", "trisolve.lower.type=levelset,async-jacobi")
objs = jsonl(out)
check("failing run: all runs reported", len(objs) == 4, len(objs))
status = [(o["sweep"]["varied"]["solver.type"], o["sweep"]["varied"]["trisolve.lower.type"], o["status"]) for o in objs]
check("failing run: only cg+async-jacobi fails", status == [("cg", "levelset", "ok"), ("cg", "async-jacobi", "error"),
                                                            ("fgmres", "levelset", "ok"), ("fgmres", "async-jacobi", "ok")], status)
if len(objs) == 4:
    check("failing run: message and code", objs[1]["exit_code"] == 2 and "fgmres" in objs[1]["error"]["message"], objs[1].get("error"))
check("failing run: sweep exit code", rc == 2, f"exit {rc}")
check("failing run: stderr names the run", "index=1" in err and "async-jacobi" in err, err[:300])
west = os.path.join(data, "west0067.mtx")
rc, out, err = run(west, *host, "-s", "solver.type=gmres", "-s", "preconditioner.type=none,jacobi", "-s",
                   "solver.max_iterations=3")
check("priority: numerical over not converged", rc == 4, f"exit {rc}: {out[-300:]}")
check("tally lists both", "not converged: 1 (index 0)" in out and "numerical failure: 1 (index 1)" in out, out[-300:])
rc, out, err = run(os.path.join(tmp, "absent.mtx"), "--json", *host, "-s", "solver.type=cg,gmres")
objs = jsonl(out)
check("unreadable matrix: one error object per run", rc == 3 and len(objs) == 2 and
      all(o["status"] == "error" and o["exit_code"] == 3 for o in objs) and
      [o["sweep"]["varied"]["solver.type"] for o in objs] == ["cg", "gmres"], f"exit {rc}: {out[:300]}")
check("unreadable matrix: one message", err.count("absent.mtx: cannot open") == 1, err)

# --- output files: one per run ---------------------------------------------------------------------------
hist = os.path.join(tmp, "h.csv")
rc, out, err = run("gen:poisson2d:12", "--json", *host, "-s", "preconditioner.type=none,jacobi", "--history", hist,
                   "-o", os.path.join(tmp, "x.mtx"))
objs = jsonl(out)
for i in range(2):
    h = os.path.join(tmp, f"h-{i}.csv")
    check(f"history of run {i}", os.path.exists(h) and objs[i]["output"]["history"] == h, objs[i].get("output") if i < len(objs) else out)
    check(f"solution of run {i}", os.path.exists(os.path.join(tmp, f"x-{i}.mtx")), os.listdir(tmp))
    if os.path.exists(h):
        with open(h) as f:
            n = len(f.read().splitlines()) - 2  # header, iteration 0
        check(f"history {i} length = iterations", n == objs[i]["solve"]["iterations"], (n, objs[i]["solve"]["iterations"]))
check("no unindexed history", not os.path.exists(hist), "")
rc, out, err = run("gen:poisson2d:12", *host, "-s", "preconditioner.type=none,jacobi", "-s",
                   "output.history=" + os.path.join(tmp, "run{index}.csv"), "--quiet")
check("{index} in a path", os.path.exists(os.path.join(tmp, "run0.csv")) and os.path.exists(os.path.join(tmp, "run1.csv")),
      os.listdir(tmp))

# --- lists in a file: validated element by element, file and line named -----------------------------
bad = write("badlist.cfg", "solver = {\n  restart = [10, 0, 20];\n};\n")
rc, out, err = run("-c", bad, "--dry-run")
check("bad list element", rc == 2 and "badlist.cfg:2" in err and "value 2 of the list" in err and "solver.restart" in err,
      f"exit {rc}: {err}")
bad = write("emptylist.cfg", "solver = { restart = []; };\n")
rc, out, err = run("-c", bad, "--dry-run")
check("empty list", rc == 2 and "empty list" in err, f"exit {rc}: {err}")
bad = write("grouplist.cfg", "solver = { type = ( { a = 1; } ); };\n")
rc, out, err = run("-c", bad, "--dry-run")
check("group in a list", rc == 2 and "grouplist.cfg:1" in err and "a group" in err, f"exit {rc}: {err}")
good = write("mixed.cfg", 'solver = { type = ("cg", "gmres"); rtol = [1e-6, 1e-10]; };\n')
rc, out, err = run("-c", good, "--dry-run")
check("list and array syntax", rc == 0 and "4 runs" in out, f"exit {rc}: {out}{err}")
rc, out, err = run("--dry-run", "-s", "solver.restart=10,,20")
check("empty -s element", rc == 2 and "empty value" in err, f"exit {rc}: {err}")
rc, out, err = run("--dry-run", "-s", "solver.type=cg,gmress")
check("bad -s element", rc == 2 and "value 2 of the comma-separated list" in err and "gmres" in err, f"exit {rc}: {err}")
rc, out, err = run("--dry-run", "--json", "-s", "system.rhs=" + os.path.join(tmp, "a,b.mtx"))
objs = jsonl(out)
check("string keys are not split", rc == 0 and len(objs) == 1 and objs[0]["config"]["system"]["rhs"].endswith("a,b.mtx"), out[:200])
rc, out, err = run("--dry-run", "-s", "output.format=text,json")
check("format cannot be swept", rc == 2 and "output.format" in err, f"exit {rc}: {err}")
rc, out, err = run("--print-config", "-c", good)
check("print-config lists the sweep", rc == 0 and '#   solver.type = ["cg", "gmres"];' in out and
      "#   solver.rtol = [1e-06, 1e-10];" in out, out[-300:])
printed = write("printed.cfg", out)
rc, out, err = run("-c", printed, "--print-config")
check("printed sweep config reloads", rc == 0, f"exit {rc}: {err}")

# --- ground truth: system.rhs = "Ax" builds b from a known x* (ones or random), in the matrix's own
# numbering even when the system is reordered, and the run reports ||x - x*|| / ||x*|| ----------------
sol = os.path.join(tmp, "gt.mtx")
rc, out, err = run(os.path.join(data, "sherman1.mtx"), "--json", *host, "-s", "preconditioner.type=ilu0", "-s",
                   "system.rhs=Ax", "-s", "system.xstar=ones,random", "-s", "system.reorder=none,rcm", "-s",
                   "solver.rtol=1e-10", "-o", sol)
objs = jsonl(out)
check("ground truth runs", rc == 0 and len(objs) == 4, f"exit {rc}: {err[:300]}")
for o in objs:
    v = o["sweep"]["varied"]
    check(f"ground truth {v}", o["solve"]["error_vs_xstar"] < 1e-6 and o["system"]["rhs"] == f"Ax (x* = {v['system.xstar']})",
          o.get("solve"))
for i in (0, 1):  # x* = ones, natural and RCM order: the solution written is ones, in the file's numbering
    with open(os.path.join(tmp, f"gt-{i}.mtx")) as f:
        body = [l for l in f.read().splitlines() if l.strip() and not l.startswith("%")]
        vals = [float(l) for l in body[1:]]  # after the size line
    check(f"solution {i} = ones", len(vals) == 1000 and max(abs(x - 1.0) for x in vals) < 1e-5,
          max(abs(x - 1.0) for x in vals) if vals else "empty")
rc, out, err = run("gen:poisson2d:10", "--json", *host)
check("no x*, no error", "error_vs_xstar" not in json.loads(out)["solve"], out[:200])

finish()
