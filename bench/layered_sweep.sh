#!/usr/bin/env bash
# Per-level cost of the exact triangular solvers on layered matrices (scripts/layered_mtx.py): LEVELS
# levels of WIDTH rows, DEPS dependencies per row in the level before, so that a solve's time divided
# by LEVELS is the cost of one level of that width and that many dependencies. One bench_trisolve run
# per matrix and parameter set (--factors triangles, L only reported); prints
# "levels width deps mode params type schedule median_us us_per_level" (also appended to
# OUT/layered_sweep.txt). The default parameters force syncfree's level order: with at most 4
# dependencies per row and thin levels, its rule would merge levels (a different solve).
# usage (repo root, GPU machine): bench/layered_sweep.sh [BUILD_DIR]
#   CONFIGS  "LEVELS WIDTH DEPS MODE" entries separated by commas
#            (default: the set of docs/results/trisolve_layered_h100.txt)
#   PARAMS   parameter sets separated by commas, each a list of NAME=value solver parameters
#            (trisolve/trisolve_params.h; default "syncfree.schedule=levels syncfree.lanes_per_row=1")
#   TYPES    solver types (default syncfree,cusparse);  OUT  output folder (default trisolve-out)
set -uo pipefail
build=${1:-build-gpu}
exe="$build/bench/bench_trisolve"
[ -x "$exe" ] || { echo "layered_sweep.sh: $exe not found (build the bench_trisolve target first)" >&2; exit 2; }
configs=${CONFIGS:-"128 1024 1 c,128 1024 4 c,128 1024 9 c,128 1024 16 a,128 8192 1 c,128 8192 9 c,128 1024 4 a,128 1024 4 s,128 1024 4 r"}
psets=${PARAMS:-"syncfree.schedule=levels syncfree.lanes_per_row=1"}
types=${TYPES:-syncfree,cusparse}
out=${OUT:-trisolve-out}
mkdir -p "$out"
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
IFS=, read -ra cfgs <<< "$configs"
IFS=, read -ra psetl <<< "$psets"
for cfg in "${cfgs[@]}"; do
  read -r lv wd dp md <<< "$cfg"
  md=${md:-c}
  f="$tmpd/l${lv}_w${wd}_k${dp}_${md}.mtx"
  python3 scripts/layered_mtx.py "$lv" "$wd" "$dp" "$f" "$md" || exit 2
  for e in "${psetl[@]}"; do
    j="$tmpd/run.jsonl"
    rm -f "$j"
    params=()
    for p in $e; do params+=(--param "$p"); done
    if ! "$exe" --matrix "$f" --factors triangles --types "$types" --reps 100 --no-jacobi --json "$j" \
        "${params[@]}" > "$tmpd/run.log" 2>&1; then
      echo "# failed: $cfg [$e]: $(tail -1 "$tmpd/run.log")" >&2
      continue
    fi
    python3 - "$j" "$lv" "$wd" "$dp" "$md" "$e" <<'PY' | tee -a "$out/layered_sweep.txt"
import json, sys
path, lv, wd, dp, md, params = sys.argv[1:7]
for line in open(path):
    r = json.loads(line)
    if r.get("side") != "L" or "median_us" not in r:
        continue
    sched = r.get("trisolve", {}).get("schedule", "-")
    print(f'{lv:>6} {wd:>6} {dp:>4} {md} {params:<50} {r["type"]:<9} {sched:<7} {r["median_us"]:9.1f} '
          f'{r["median_us"] / int(lv):7.3f}')
PY
  done
done
