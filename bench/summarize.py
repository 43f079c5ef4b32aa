#!/usr/bin/env python3
"""Table of JSON-lines gpusolve results: solver, preconditioner, backend, iterations, reason, times."""
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
        rows.append((o.get("matrix", {}).get("name", "?"), c.get("solver", {}).get("type", "?"),
                     c.get("preconditioner", {}).get("type", "?"), o.get("backend", {}).get("name", "?"),
                     s.get("iterations", -1), s.get("reason", o.get("error", {}).get("status", "?")),
                     s.get("residual_true", float("nan")), t.get("setup_numeric", 0.0) or 0.0,
                     t.get("solve", float("nan")), 1e3 * (t.get("per_iteration") or float("nan"))))
print(f"{'matrix':<22} {'solver':<9} {'precond':<8} {'backend':<7} {'its':>6} {'reason':<20} {'true res':>9} {'setup s':>8} {'solve s':>8} {'ms/it':>7}")
for r in rows:
    print(f"{r[0]:<22} {r[1]:<9} {r[2]:<8} {r[3]:<7} {r[4]:>6} {r[5]:<20} {r[6]:>9.2e} {r[7]:>8.3f} {r[8]:>8.3f} {r[9]:>7.3f}")
