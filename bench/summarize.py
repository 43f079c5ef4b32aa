#!/usr/bin/env python3
"""Table of JSON-lines gpusolve results: matrix, method, backend, iterations, reason, residual, times."""
import json, sys

rows = []
for path in sys.argv[1:] or ["-"]:
    f = sys.stdin if path == "-" else open(path)
    for line in f:
        line = line.strip()
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        c, s, t = o.get("config", {}), o.get("solve", {}), o.get("time", {})
        pc = c.get("preconditioner", {})
        pct = pc.get("type", "?")
        if pct in ("bilu", "bilut", "ras"):
            pct += f"/{pc.get('blocks')}"
        if pct in ("parilu",):
            pct += f"/{pc.get('sweeps')}sw"
        tl = c.get("trisolve", {}).get("lower", {})
        tri = tl.get("type", "")
        if tri in ("jacobi", "async-jacobi"):
            tri += f"/{tl.get('sweeps')}"
        rows.append((o.get("matrix", {}).get("name", "?"), c.get("solver", {}).get("type", "?"), pct, tri,
                     o.get("backend", {}).get("name", "?"), s.get("iterations", -1),
                     s.get("reason", o.get("error", {}).get("status", "?")), s.get("residual_true", float("nan")),
                     (t.get("setup_symbolic") or 0.0) + (t.get("setup_numeric") or 0.0), t.get("solve", float("nan")),
                     1e3 * (t.get("per_iteration") or float("nan")), 1e3 * (t.get("preconditioner_apply") or float("nan"))))
print(f"{'matrix':<20} {'solver':<8} {'precond':<12} {'trisolve':<15} {'backend':<7} {'its':>6} {'reason':<16} {'true res':>9} {'setup s':>8} {'solve s':>8} {'ms/it':>7} {'pc ms':>7}")
for r in rows:
    print(f"{r[0]:<20} {r[1]:<8} {r[2]:<12} {r[3]:<15} {r[4]:<7} {r[5]:>6} {r[6][:16]:<16} {r[7]:>9.2e} {r[8]:>8.3f} {r[9]:>8.3f} {r[10]:>7.3f} {r[11]:>7.3f}")
