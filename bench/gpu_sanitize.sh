#!/usr/bin/env bash
# compute-sanitizer over every GPU test (label gpu), tests in parallel: memcheck, synccheck and racecheck
# on all, in quick mode (GS_TEST_QUICK=1, racecheck 2: the largest cases and the deliberate OOM call are
# skipped, see tests/testutil.h). Logs in $OUT/san/; one line per (tool, test) printed.
# usage (GPU machine, repo root, after a build in build-gpu): bench/gpu_sanitize.sh [parallel] [limit_s]
set -uo pipefail
out=${OUT:-gpu-out}/san; mkdir -p "$out"
par=${1:-6}; limit=${2:-200}
# SAN_TESTS (a regular expression) limits the run to the GPU tests whose names match it; SAN_TOOLS picks tools
tests=$(cd build-gpu && ctest -N -L gpu ${SAN_TESTS:+-R "$SAN_TESTS"} | awk '/Test +#/{print $3}')
run_one() {  # tool test limit
  exe=$(find build-gpu/tests -type f -name "$2" -perm -u+x | head -1)
  [ -z "$exe" ] && { echo "$1 $2: no executable (a script test)"; return; }
  ( cd "$(dirname "$exe")" && timeout "$3" compute-sanitizer --tool "$1" --error-exitcode 99 "./$2" ) > "$out/$1_$2.log" 2>&1
  rc=$?
  case $rc in 0) v="clean";; 77) v="skipped";; 99) v="ERRORS";; 124) v="timeout after $3 s";; *) v="rc=$rc";; esac
  echo "$1 $2: $v $(grep -E 'ERROR SUMMARY' "$out/$1_$2.log" | tail -1)"
}
export -f run_one; export out
for tool in ${SAN_TOOLS:-memcheck synccheck racecheck}; do
  l=$limit; export GS_TEST_QUICK=1; [ $tool = racecheck ] && export GS_TEST_QUICK=2
  printf '%s\n' $tests | xargs -P "$par" -I{} bash -c "run_one $tool {} $l"
done
