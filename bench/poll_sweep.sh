#!/usr/bin/env bash
# Sweep of the sync-free solver's parameters (syncfree.rem_prefetch, syncfree.warps_per_sm, syncfree.schedule,
# syncfree.merge_levels, syncfree.td_sync, ...; trisolve/trisolve_params.h, docs/notes-trisolve.md section 6)
# over the PDE factors: one bench_trisolve run per configuration and factor, syncfree only; prints
# "config factor schedule L_us U_us L+U rel_err" (also in OUTFILE.jsonl.txt).
# usage (repo root, GPU machine): bench/poll_sweep.sh BUILD_DIR OUTFILE.jsonl "CONFIG1" "CONFIG2" ...
#   a CONFIG is a list of NAME=value solver parameters separated by spaces (empty string: the defaults), e.g.
#   "syncfree.warps_per_sm=8 syncfree.rem_prefetch=off"; FACTORS overrides the factor list (gen:n or
#   gen:n:schedule, default "poisson3d:100 poisson3d:100:levels laplace27:64 poisson2d:1024").
set -uo pipefail
build=$1 json=$2
shift 2
exe="$build/bench/bench_trisolve"
[ -x "$exe" ] || { echo "poll_sweep.sh: $exe not found" >&2; exit 2; }
factors=${FACTORS:-"poisson3d:100 poisson3d:100:levels laplace27:64 poisson2d:1024"}
: > "$json"
for cfg in "$@"; do
  for f in $factors; do
    IFS=: read -r gen n sched <<< "$f"
    params=()
    for p in $cfg; do params+=(--param "$p"); done
    [ -n "${sched:-}" ] && params+=(--param "syncfree.schedule=$sched")
    tmp=$(mktemp)
    "$exe" --gen "$gen" --n "$n" --types syncfree --reps 50 --json "$tmp" "${params[@]}" > /dev/null 2>&1 \
      || echo "# failed: $cfg $f" >&2
    python3 - "$tmp" "${cfg:-default}" "$f" <<'PY' | tee -a "$json.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lu = {r["side"]: r for r in rows if r.get("type") == "syncfree"}
if "L" in lu and "U" in lu:
    L, U = lu["L"], lu["U"]
    sch = L["trisolve"].get("schedule", "?")
    print(f'{sys.argv[2]:<40} {sys.argv[3]:<24} {sch:<7} {L["median_us"]:8.1f} {U["median_us"]:8.1f} '
          f'{L["median_us"] + U["median_us"]:8.1f} {max(L["rel_err"], U["rel_err"]):.1e}')
else:
    print(f'{sys.argv[2]:<40} {sys.argv[3]:<24} missing')
PY
    cat "$tmp" >> "$json"
    rm -f "$tmp"
  done
done
