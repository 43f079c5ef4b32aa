#!/usr/bin/env python3
"""The automatic choice and the fallback ladder through the CLI: the default run's report (strategy and
attempts, text and JSON), a failing explicit configuration followed by the ladder, solver.fallback =
none unchanged, the ladder exhausted (exit code of the reported attempt), a structurally singular
matrix (exit 4 with its structural rank), and no fallback inside a sweep.
Usage: strategy_test.py GPUSOLVE SRC_DIR"""
import json, os

from apptest import check, data, finish, run, scratch, write
tmp = scratch("gs_strategy_")
host = ["-s", "device.backend=host"]
west = os.path.join(data, "west0067.mtx")
west497 = os.path.join(data, "west0497.mtx")


def run_json(*args):
    rc, out, err = run(*args, "--json", *host)
    try:
        return rc, json.loads(out.strip().splitlines()[-1]), err
    except (ValueError, IndexError):
        check("one JSON object", False, f"exit {rc}: {out[:300]} {err[:300]}")
        return rc, {}, err


# the default: no configuration at all
rc, obj, err = run_json(west, "-s", "system.rhs=Ax")
check("default converges on west0067", rc == 0 and obj.get("solve", {}).get("residual_true", 1) <= 1e-7,
      f"exit {rc}: {obj.get('solve')}")
st = obj.get("strategy", {})
check("strategy reported", st.get("automatic") is True and st.get("class") == "weak-diagonal"
      and "zero or missing" in st.get("rule", ""), st)
att = obj.get("attempts", [])
check("attempts array", isinstance(att, list) and len(att) == 1 and att[0]["converged"] is True
      and att[0]["rung"] == "mwm-ilut" and "matching mwm" in att[0]["method"]
      and set(att[0]) >= {"index", "rung", "method", "reason", "detail", "iterations", "time_setup",
                         "time_solve", "residual_true", "converged"}, att)
check("the method reported", obj.get("system", {}).get("matching") == "mwm"
      and obj.get("preconditioner", {}).get("type") == "ilut" and obj.get("config", {}).get("solver", {}).get("type") == "auto",
      (obj.get("system"), obj.get("preconditioner", {}).get("type")))
rc, out, err = run(west, "-s", "system.rhs=Ax", "-v", *host)
check("text: strategy line", "strategy        auto (weak-diagonal)" in out and out.rstrip().endswith("attempts=1"),
      out[-400:])

# an explicit configuration that fails (zero pivot) is followed by the ladder
explicit = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0", "-s", "system.rhs=Ax"]
rc, obj, err = run_json(west497, *explicit)
att = obj.get("attempts", [])
check("fallback after a zero pivot", rc == 0 and len(att) >= 2 and att[0]["rung"] == "configuration"
      and att[0]["reason"] == "diverged_pc_failed" and "zero pivot at row" in att[0]["detail"]
      and att[-1]["converged"] is True and obj["strategy"]["reported_attempt"] == len(att), (rc, att))
rc, out, err = run(west497, *explicit, *host)
check("text: attempt count", "attempts        " in out and "-v lists them" in out, out[-600:])
rc, out, err = run(west497, *explicit, "-v", *host)
check("text: attempt lines", "attempt 1" in out and "attempt 2" in out and "(reported)" in out
      and "zero pivot at row" in out, out[-600:])

# solver.fallback = none: the configuration alone, as without a strategy
rc, obj, err = run_json(west497, *explicit, "-s", "solver.fallback=none")
check("fallback none: one attempt, exit 4", rc == 4 and len(obj.get("attempts", [])) == 1
      and obj["solve"]["reason"] == "diverged_pc_failed" and "zero pivot at row" in obj["solve"]["detail"],
      (rc, obj.get("solve")))

# every rung fails (no iteration allowed): the ladder is exhausted, the exit code is the reported one's
rc, obj, err = run_json(west, "-s", "solver.max_iterations=0")
att = obj.get("attempts", [])
check("ladder exhausted", rc == 1 and len(att) >= 4 and len({a["method"] for a in att}) == len(att)
      and "every rung" in obj.get("strategy", {}).get("stopped", ""), (rc, [a["rung"] for a in att]))

# the budget: no new attempt once it is spent
rc, obj, err = run_json(west, "-s", "solver.max_iterations=0", "-s", "solver.fallback_budget=1e-9")
check("budget", rc == 1 and len(obj.get("attempts", [])) == 1
      and "fallback_budget" in obj.get("strategy", {}).get("stopped", ""), (rc, obj.get("strategy")))

# structurally singular: rows 1 and 2 only in column 1
sing = write("singular.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 6\n1 1 1\n2 1 2\n3 2 3\n"
             "3 3 4\n4 4 5\n4 3 1\n")
rc, obj, err = run_json(sing)
check("structurally singular: exit 4", rc == 4 and "structural rank 3 of 4" in obj.get("solve", {}).get("detail", "")
      and "structurally singular" in obj.get("strategy", {}).get("stopped", ""), (rc, obj.get("solve")))

# a sweep never falls back: each run is the configuration it names
rc, out, err = run(west497, *host, "--json", "-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0,ilut")
objs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
check("sweep: no fallback", len(objs) == 2 and len(objs[0].get("attempts", [])) == 1
      and objs[0]["solve"]["reason"] == "diverged_pc_failed", [o.get("solve", {}).get("reason") for o in objs])

finish()
