#!/usr/bin/env python3
"""gpusolve CLI contract: every bad input gets a clear message and its documented exit code; outputs
(JSON object, history CSV, solution file) are complete or absent. Usage: cli_test.py GPUSOLVE SRC_DIR"""
import json, os

from apptest import check, data, finish, run, scratch, write
tmp = scratch("gs_cli_")


def expect(name, args, code, stderr_has=(), stdout_has=()):
    rc, out, err = run(*args)
    check(name, rc == code, f"exit {rc}, expected {code}; stderr: {err.strip()[:400]}")
    for s in stderr_has:
        check(name, s in err, f"stderr lacks {s!r}: {err.strip()[:400]}")
    for s in stdout_has:
        check(name, s in out, f"stdout lacks {s!r}: {out.strip()[:400]}")
    return rc, out, err


host = ["-s", "device.backend=host"]
sherman = os.path.join(data, "sherman1.mtx")

# usage
expect("no matrix", [], 2, ["no matrix given"])
expect("unknown option", ["--frobnicate"], 2, ["unknown option --frobnicate"])
expect("option without value", [sherman, "-s"], 2, ["needs a value"])
expect("two matrices", [sherman, sherman], 2, ["unexpected argument"])
expect("help", ["--help"], 0, stdout_has=["usage: gpusolve", "exit codes"])
expect("version", ["--version"], 0, stdout_has=["gpusolve "])
expect("help-config", ["--help-config"], 0, stdout_has=["solver.restart", "preconditioner.type"])

# configuration errors name file, line, key and what is allowed
expect("unknown key -s", [sherman, "-s", "solver.restrt=5"], 2, ["solver.restrt", "solver.restart"])
expect("bad value -s", [sherman, "-s", "solver.restart=zero"], 2, ["solver.restart"])
expect("out of range -s", [sherman, "-s", "solver.restart=0"], 2, ["solver.restart"])
expect("bad choice -s", [sherman, "-s", "solver.type=cgs"], 2, ["solver.type", "bicgstab"])
cfg = write("bad.cfg", "solver = {\n  type = \"gmres\";\n  restart = \"many\";\n};\n")
expect("wrong type in file", ["-c", cfg, sherman], 2, ["bad.cfg", ":3", "solver.restart"])
cfg = write("syntax.cfg", "solver = {\n  type = \"gmres\";\n  restart = = 5;\n};\n")
expect("libconfig syntax error", ["-c", cfg, sherman], 2, ["syntax.cfg", ":3"])
expect("missing config file", ["-c", os.path.join(tmp, "nope.cfg"), sherman], 3, ["nope.cfg"])
rc, out, _ = expect("print-config", ["--print-config", "-s", "solver.restart=77"], 0, stdout_has=["restart = 77"])
cfg = write("printed.cfg", out)
expect("print-config reloads", ["-c", cfg, "--print-config"], 0, stdout_has=["restart = 77"])

# input files
expect("missing matrix", [os.path.join(tmp, "none.mtx")] + host, 3, ["none.mtx"])
bad = write("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n")
expect("index out of range", [bad] + host, 3, ["bad.mtx:4"])
rect = write("rect.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1.0\n")
expect("non-square", [rect] + host, 3, ["rect.mtx", "square"])
rhs = write("short.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
expect("rhs length", [sherman, "-b", rhs] + host, 3, ["short.mtx", "1000"])
expect("bad gen spec", ["gen:poisson3d:abc"] + host, 2, ["gen:"])
# backend = cuda: exit 5 naming the key where no GPU is usable; a normal (not converged) run where one is
rc, _, err = run(sherman, "-s", "device.backend=cuda", "-s", "solver.max_iterations=1")
check("cuda backend", rc == 1 or (rc == 5 and "device.backend" in err), f"exit {rc}: {err}")

# numerical outcomes
expect("jacobi zero diagonal", [os.path.join(data, "west0067.mtx"), "-s", "preconditioner.type=jacobi",
                                "-s", "solver.type=gmres", "-s", "solver.fallback=none"] + host, 4,
       stdout_has=["diverged_pc_failed", "row"])
expect("max iterations", [sherman, "-s", "solver.max_iterations=3", "-s", "solver.fallback=none"] + host, 1,
       stdout_has=["reason=diverged_max_it"])
zero = write("zero.mtx", "%%MatrixMarket matrix array real general\n1000 1\n" + "0\n" * 1000)
expect("zero rhs", [sherman, "-b", zero] + host, 0, stdout_has=["reason=converged_zero_rhs", "iterations=0"])

# output contract
hist = os.path.join(tmp, "h.csv")
sol = os.path.join(tmp, "x.mtx")
rc, out, err = expect("json", [sherman, "--json", "--history", hist, "-o", sol, "-s", "preconditioner.type=jacobi",
                               "-s", "system.rhs=Ax"] + host, 0)
lines = [l for l in out.splitlines() if l.strip()]
check("json is one line", len(lines) == 1, out[:300])
try:
    obj = json.loads(out)
    for key in ("solve", "time", "matrix", "config", "backend"):
        check(f"json has {key}", key in obj, list(obj))
    check("json reason", obj["solve"]["reason"] == "converged_rtol", obj.get("solve"))
    check("json true residual", obj["solve"]["residual_true"] <= 1e-8 * 10, obj.get("solve"))
    check("json error vs x*", obj["solve"]["error_vs_xstar"] < 1e-4, obj.get("solve"))
    check("json config", obj["config"]["solver"]["type"] == "auto", obj.get("config"))
    check("json chosen solver", obj["solver"]["type"] in ("gmres", "bicgstab", "cg"), obj.get("solver"))
except (ValueError, KeyError, TypeError) as e:
    check("json parses", False, f"{e}: {out[:300]}")
with open(hist) as f:
    rows = f.read().splitlines()
check("history header", rows[0] == "iteration,residual,relative_residual,time_s", rows[:1])
check("history rows", len(rows) >= 3 and rows[1].startswith("0,"), rows[:3])
with open(sol) as f:
    head = f.readline()
check("solution banner", head.startswith("%%MatrixMarket matrix array real general"), head)
check("no temp files left", not [f for f in os.listdir(tmp) if ".tmp." in f], os.listdir(tmp))
rc, out, err = run(os.path.join(tmp, "none.mtx"), "--json", *host)
check("json on error", rc == 3 and json.loads(out)["status"] == "error", out[:300])
rc, out, err = run(sherman, "-o", os.path.join(tmp, "nodir", "x.mtx"), *host)
check("unwritable output", rc == 3 and "nodir" in err, err)
check("no partial file", not os.path.exists(os.path.join(tmp, "nodir")), "")

finish()
