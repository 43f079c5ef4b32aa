#!/usr/bin/env python3
"""Robustness benchmark: every matrix of the development set, b = A*ones, x0 = 0, success = true relative
residual ||b - Ax|| / ||b|| <= 1e-7 within 2000 iterations, for gpusolve's default (no configuration), five
common explicit configurations (solver.fallback = none) and, where SciPy is installed, SciPy's spilu
(SuperLU ILUTP, drop 1e-4, fill 10) + GMRES(50) run by this script on the CPU.

usage: bench/robustness.py GPUSOLVE OUT.jsonl MATRIX_DIR [MATRIX_DIR ...]
  Environment: ROBUST_BACKEND = auto | cuda | host (default auto); ROBUST_TIMEOUT = seconds per run
  (default 300); ROBUST_CONFIGS = names of the configurations to run (default all, "scipy" included);
  ROBUST_ONLY = a regular expression the matrix file names must match.
Writes one JSON line per (matrix, configuration) and prints the per-matrix table and the tally
(converged per configuration; the default's time against the fastest converging explicit one)."""
import json
import os
import re
import subprocess
import sys
import time

TARGET = 1e-7
MAXIT = 2000

CONFIGS = {
    "default": [],
    "gmres": ["solver.type=gmres", "preconditioner.type=none"],
    "gmres-ilu0": ["solver.type=gmres", "preconditioner.type=ilu0"],
    "bicgstab-ilu0": ["solver.type=bicgstab", "preconditioner.type=ilu0"],
    "gmres50-iluk1-shift": ["solver.type=gmres", "solver.restart=50", "preconditioner.type=iluk",
                            "preconditioner.fill_level=1", "preconditioner.zero_pivot=shift"],
    "gmres-ilut": ["solver.type=gmres", "preconditioner.type=ilut", "preconditioner.drop_tolerance=1e-3",
                   "preconditioner.max_fill=10"],
}
EXPLICIT = [c for c in CONFIGS if c != "default"]


def run_gpusolve(exe, path, name, settings, backend, timeout):
    cmd = [exe, path, "--json", "-s", "system.rhs=Ax", "-s", f"solver.max_iterations={MAXIT}",
           "-s", "solver.rtol=1e-8", "-s", f"device.backend={backend}"]
    if name != "default":
        cmd += ["-s", "solver.fallback=none"]
    for s in settings:
        cmd += ["-s", s]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"converged": False, "reason": "timeout", "wall": time.time() - t0}
    wall = time.time() - t0
    try:
        d = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"converged": False, "reason": f"no JSON (exit {p.returncode}): {p.stderr.strip()[:200]}", "wall": wall}
    solve, t = d.get("solve", {}), d.get("time", {})
    res = solve.get("residual_true")
    rec = {
        "exit": p.returncode,
        "reason": solve.get("reason", d.get("error", {}).get("status", "error")),
        "iterations": solve.get("iterations"),
        "residual_true": res,
        "setup": sum(t.get(k) or 0.0 for k in ("preprocess", "setup_symbolic", "setup_numeric")),
        "solve": t.get("solve"),
        "total": t.get("total"),
        "wall": wall,
        "converged": res is not None and res <= TARGET,
        "method": f'{d.get("solver", {}).get("type", "?")} + {d.get("preconditioner", {}).get("type", "?")}',
        "attempts": d.get("strategy", {}).get("attempts"),
    }
    if name == "default" and "attempts" in d:
        rec["attempt_list"] = [(a["rung"], a["reason"], a["iterations"]) for a in d["attempts"]]
    return rec


def run_scipy(path):
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    import scipy.sparse.linalg as sla
    import warnings
    warnings.simplefilter("ignore")
    t0 = time.time()
    A = sp.csc_matrix(scipy.io.mmread(path)).astype(float)
    t_read = time.time() - t0
    n = A.shape[0]
    b = A @ np.ones(n)
    t1 = time.time()
    try:
        M = sla.spilu(A, drop_tol=1e-4, fill_factor=10)
    except RuntimeError as e:
        return {"converged": False, "reason": f"spilu: {e}", "setup": time.time() - t1}
    t2 = time.time()
    its = [0]

    def count(_):
        its[0] += 1
    x, info = sla.gmres(A, b, M=sla.LinearOperator((n, n), M.solve), restart=50, maxiter=MAXIT // 50, rtol=1e-8,
                        callback=count, callback_type="pr_norm")
    t3 = time.time()
    r = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    return {"reason": "converged" if r <= TARGET else f"gmres info {info}", "iterations": its[0],
            "residual_true": r, "setup": t2 - t1, "solve": t3 - t2, "total": t3 - t0,
            "read": t_read, "converged": r <= TARGET}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    exe, out_path, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    backend = os.environ.get("ROBUST_BACKEND", "auto")
    timeout = float(os.environ.get("ROBUST_TIMEOUT", "300"))
    only = re.compile(os.environ.get("ROBUST_ONLY", "."))
    names = os.environ.get("ROBUST_CONFIGS", " ".join(list(CONFIGS) + ["scipy"])).split()
    try:
        import scipy  # noqa: F401
        have_scipy = True
    except ImportError:
        have_scipy = False
    if not have_scipy and "scipy" in names:
        names.remove("scipy")
        print("robustness: SciPy is not installed: its column is left out", file=sys.stderr)
    files = {}
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if re.search(r"\.mtx(\.gz)?$", f) and only.search(f):
                files.setdefault(re.sub(r"\.gz$", "", f), os.path.join(d, f))  # first folder wins
    results = {}
    with open(out_path, "w") as out:
        for key in sorted(files, key=str.lower):
            path = files[key]
            for name in names:
                rec = run_scipy(path) if name == "scipy" else \
                    run_gpusolve(exe, path, name, CONFIGS[name], backend, timeout)
                rec.update({"matrix": key, "config": name, "backend": backend})
                results[(key, name)] = rec
                out.write(json.dumps(rec) + "\n")
                out.flush()
            row = " ".join(f'{"Y" if results[(key, n)]["converged"] else "."}' for n in names)
            d = results[(key, "default")] if "default" in names else {}
            print(f"{key:42s} {row}  default: {d.get('method', '')} {d.get('reason', '')} it={d.get('iterations')} "
                  f"total={d.get('total') or 0:.3f}s attempts={d.get('attempts')}", flush=True)
    # tally
    print("\nconverged (true residual <= 1e-7) per configuration, of", len(files), "matrices:")
    for name in names:
        print(f"  {name:22s} {sum(results[(k, name)]['converged'] for k in files)}")
    if "default" in names:
        within, compared, slow = 0, 0, []
        for k in files:
            best = [results[(k, n)]["total"] for n in EXPLICIT if n in names and results[(k, n)]["converged"]]
            if not best:
                continue
            compared += 1
            d = results[(k, "default")]
            if d["converged"] and d["total"] <= 2.0 * min(best):
                within += 1
            else:
                slow.append(f'{k} ({d.get("total") or 0:.3f}s vs {min(best):.3f}s)')
        print(f"default within 2x of the fastest converging explicit configuration: {within} of {compared}")
        for s in slow:
            print("  not within:", s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
