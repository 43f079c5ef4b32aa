#!/usr/bin/env bash
# compute-sanitizer over every GPU test (label gpu), tests in parallel: memcheck, synccheck and racecheck
# on all, in quick mode (GS_TEST_QUICK=1, racecheck 2: the largest cases and the deliberate OOM call are
# skipped, see tests/testutil.h). Logs in $OUT/san/; one line per (tool, test) printed, with its seconds.
# usage (GPU machine, repo root, after a build in build-gpu): bench/gpu_sanitize.sh [parallel] [limit_s]
set -uo pipefail
out=${OUT:-gpu-out}/san; mkdir -p "$out"
par=${1:-6}; limit=${2:-200}
# SAN_TESTS (a regular expression) limits the run to the GPU tests whose names match it; SAN_TOOLS picks tools.
# Each test's command line (a program and its arguments: the solver type, the parameter group, ...) and working
# folder come from ctest.
list="$out/tests.tsv"
(cd build-gpu && ctest --show-only=json-v1 -L gpu ${SAN_TESTS:+-R "$SAN_TESTS"}) | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    wd = next((p["value"] for p in t.get("properties", []) if p["name"] == "WORKING_DIRECTORY"), ".")
    if t.get("command"):
        print(t["name"] + "\t" + wd + "\t" + shlex.join(t["command"]))
' > "$list"
tests=$(cut -f1 "$list")
run_one() {  # tool test limit
  line=$(awk -F'\t' -v t="$2" '$1 == t' "$list")
  [ -z "$line" ] && { echo "$1 $2: no command"; return; }
  wd=$(cut -f2 <<< "$line"); cmd=$(cut -f3 <<< "$line")
  case ${cmd%% *} in */tests/*) ;; *) echo "$1 $2: no executable (a script test)"; return;; esac
  t0=$(date +%s)
  ( cd "$wd" && eval "timeout $3 compute-sanitizer --tool $1 --error-exitcode 99 $cmd" ) > "$out/$1_$2.log" 2>&1
  rc=$?; secs=$(( $(date +%s) - t0 ))
  case $rc in 0) v="clean";; 77) v="skipped";; 99) v="ERRORS";; 124) v="timeout after $3 s";; *) v="rc=$rc";; esac
  echo "$1 $2: $v (${secs} s) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$1_$2.log" | tail -1)"
}
export -f run_one; export out list
for tool in ${SAN_TOOLS:-memcheck synccheck racecheck}; do
  l=$limit; export GS_TEST_QUICK=1; [ $tool = racecheck ] && export GS_TEST_QUICK=2
  printf '%s\n' $tests | xargs -P "$par" -I{} bash -c "run_one $tool {} $l"
done
