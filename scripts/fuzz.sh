#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets (clang, ASan + UBSan, host code only) in build-fuzz/ and runs
# each target for SECONDS (default 60) starting from its seed corpus tests/fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   scripts/fuzz.sh 20              # CI: 20 s each
#   scripts/fuzz.sh 3600 mm         # a long run of one target (see docs/failures.md, "Fuzzing")
#   GS_FUZZ_JOBS=2 scripts/fuzz.sh 1800   # 2 workers per target
#
# Targets: mm (Matrix Market reader, plain and .gz, matrix and vector, serial and parallel), petsc (PETSc
# binary reader), cfg_load (configuration loader), cfg_set (-s override parser). New interesting inputs go to build-fuzz/corpus/<target>/
# (the seed corpus in the tree is only read); a crash, leak, timeout or failed oracle leaves its
# input in build-fuzz/artifacts/<target>/ and makes this script exit 1. Turn every finding into a
# regression: copy the input into tests/fuzz/corpus/<target>/ under a descriptive name, fix the bug,
# and the ctest test fuzz_replay_<target> replays it in every build from then on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(mm petsc cfg_load cfg_set)
build=${GS_FUZZ_BUILD:-build-fuzz}
jobs=${GS_FUZZ_JOBS:-1}

cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cc" ]; then
  echo "fuzz: clang not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
mkdir -p "$build"
CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGS_WITH_CUDA=OFF -DGS_FUZZ=ON \
  -DGS_SANITIZE=OFF >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
if grep -q "GS_FUZZ:" "$build/configure.log"; then
  grep -A2 "GS_FUZZ:" "$build/configure.log" >&2
  exit 2
fi
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1 \
  || { tail -40 "$build/build.log"; exit 1; }

# leaks are findings; UB already aborts (-fno-sanitize-recover); keep a run under the memory limit
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/reliability/lsan.supp:print_suppressions=0}
status=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  seeds="tests/fuzz/corpus/$t"
  work="$build/corpus/$t"
  art="$build/artifacts/$t"
  mkdir -p "$work" "$art"
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s (seeds: $seeds, new inputs: $work, findings: $art/)"
  log="$build/fuzz-$t.log"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
        -artifact_prefix="$art/" -print_final_stats=1 "${dict[@]}")
  if [ "$jobs" -gt 1 ]; then
    args+=(-jobs="$jobs" -workers="$jobs")
  fi
  if "$bin" "${args[@]}" "$work" "$seeds" >"$log" 2>&1; then
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)" "$log" | sed 's/^/  /' || true
  else
    status=1
    echo "fuzz: $t FOUND A PROBLEM (log: $log):" >&2
    grep -E "ERROR|SUMMARY|fuzz oracle failed|Test unit written|runtime error" "$log" | head -20 >&2 || true
  fi
done
if [ $status -ne 0 ]; then
  echo "fuzz: findings are in $build/artifacts/; reproduce with $build/tests/fuzz/fuzz_TARGET FILE" >&2
else
  echo "fuzz: no crash, hang, leak or failed oracle in ${#targets[@]} target(s) x ${seconds}s"
fi
exit $status
