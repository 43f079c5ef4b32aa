#!/usr/bin/env python3
"""Golden runs: a matrix, a configuration and the expected summary (reason, iterations), the same
expectation for the host and the cuda backends (iterations within a stated tolerance).
Usage: golden_test.py GPUSOLVE SRC_DIR host|cuda   (cuda: exit 77 when no GPU is usable)"""
import json, os, subprocess, sys

exe, src, backend = sys.argv[1], sys.argv[2], sys.argv[3]
cases_path = os.path.join(src, "tests", "golden", "cases.json")
with open(cases_path) as f:
    cases = json.load(f)

if backend == "cuda":
    p = subprocess.run([exe, "gen:poisson2d:4", "-s", "device.backend=cuda"], capture_output=True, text=True)
    if p.returncode == 5:
        print("skipped: no usable GPU:", p.stderr.strip())
        sys.exit(77)

failures, passed = [], 0
for c in cases:
    m = c["matrix"]
    if not m.startswith("gen:"):
        m = os.path.join(src, m)
    # a golden case is the configuration it names: no fallback to another one (cases with "auto" test
    # the automatic choice and its ladder, and set solver.fallback themselves)
    args = [exe, m, "--json", "-s", f"device.backend={backend}"]
    if not c.get("fallback"):
        args += ["-s", "solver.fallback=none"]
    for kv in c.get("set", []):
        args += ["-s", kv]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    try:
        obj = json.loads(p.stdout)
        reason, its = obj["solve"]["reason"], obj["solve"].get("iterations", 0)
        res = obj["solve"].get("residual_true")
    except (ValueError, KeyError) as e:
        failures.append(f"{c['name']}: no JSON ({e}); exit {p.returncode}; {p.stderr.strip()[:300]}")
        continue
    tol = c.get("tolerance", 1)
    ok = reason == c["reason"] and abs(its - c["iterations"]) <= tol
    if ok and reason.startswith("converged") and "rtol" in c:
        ok = res is not None and res <= 10 * c["rtol"]
    line = f"{c['name']:<28} {backend:<5} reason {reason:<22} iterations {its:>5} (expected {c['iterations']} ±{tol}) residual {res}"
    print(("ok   " if ok else "FAIL ") + line)
    if ok:
        passed += 1
    else:
        failures.append(line)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
