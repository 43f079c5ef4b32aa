#!/bin/sh
# Tiled solver, both variants forced and the rule, against cuSPARSE SpSV in the same process.
# Usage: tiled_sweep.sh BUILD_DIR OUT_DIR [REPS]   (on the GPU machine; prints "factor variant L U L+U")
B=$1; O=$2; R=${3:-50}
mkdir -p "$O"
run() { # name args...
    name=$1; shift
    for v in levelset syncfree auto; do
        GS_TILED_VARIANT=$v "$B/bench/bench_trisolve" "$@" --types tiled,cusparse --reps "$R" --no-jacobi \
            --json "$O/tiled_$name.jsonl" > "$O/tiled_${name}_$v.txt" 2>&1 || echo "FAILED $name $v"
    done
}
run poisson3d --gen poisson3d --n 100
run laplace27 --gen laplace27 --n 64
run poisson2d --gen poisson2d --n 1024
run convdiff3d --gen convdiff3d --n 100
run cage10 --matrix data/matrices/cage10.mtx
run bayer10 --matrix data/matrices/bayer10.mtx
python3 - "$O" <<'PY'
import json, sys, glob, os
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "tiled_*.jsonl"))):
    name = os.path.basename(f)[6:-6]
    k = 0
    for line in open(f):
        d = json.loads(line)
        if d.get("bench") != "trisolve": continue
        key = (name, d["type"], d.get("selected", ""), d["side"])
        rows.setdefault(key, []).append((d["median_us"], d["analyse_ms"]))
print("%-10s %-9s %-9s %9s %9s %9s %9s" % ("factor", "type", "variant", "L us", "U us", "L+U", "anaL+U ms"))
seen = set()
for (name, t, sel, side) in sorted(rows):
    if (name, t, sel) in seen: continue
    seen.add((name, t, sel))
    L = rows.get((name, t, sel, "L")); U = rows.get((name, t, sel, "U"))
    if not L or not U: continue
    l = min(x[0] for x in L); u = min(x[0] for x in U)
    a = min(x[1] for x in L) + min(x[1] for x in U)
    print("%-10s %-9s %-9s %9.1f %9.1f %9.1f %9.1f" % (name, t, sel, l, u, l + u, a))
PY
