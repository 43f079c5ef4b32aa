#!/usr/bin/env bash
# Sanitizers: (1) an AddressSanitizer + UndefinedBehaviorSanitizer build of the host code in
# build-sanitize/ (-DGS_SANITIZE=ON -DGS_WITH_CUDA=OFF) running the whole ctest suite — leaks,
# out-of-bounds accesses, use-after-free and undefined behaviour all fail the test that hits them;
# (2) valgrind memcheck over a set of host tests in a plain Debug build (build-valgrind/).
#
#   scripts/sanitize.sh            # both
#   scripts/sanitize.sh asan       # only the ASan + UBSan suite
#   scripts/sanitize.sh valgrind   # only valgrind
#
# The valgrind command for one test, by hand:
#   valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
#            --error-exitcode=99 --suppressions=tests/reliability/valgrind.supp \
#            build-valgrind/tests/io/mmio_test
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
what=${1:-all}
jobs=$(nproc 2>/dev/null || echo 2)
status=0

if [ "$what" = all ] || [ "$what" = asan ]; then
  echo "sanitize: ASan + UBSan build (build-sanitize/)"
  mkdir -p build-sanitize
  # without MPI: Open MPI's own allocations and threads are not ours to check (the mpi tests skip)
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DGS_SANITIZE=ON -DGS_WITH_CUDA=OFF -DGS_WITH_MPI=OFF \
    >build-sanitize/configure.log 2>&1 || { cat build-sanitize/configure.log; exit 1; }
  cmake --build build-sanitize -j"$jobs" >build-sanitize/build.log 2>&1 || { tail -40 build-sanitize/build.log; exit 1; }
  # every finding is fatal: UBSan stops at the first report, LSan runs at every exit
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export LSAN_OPTIONS=suppressions=$root/tests/reliability/lsan.supp:print_suppressions=0
  if ! ctest --test-dir build-sanitize --output-on-failure -j"$jobs"; then
    echo "sanitize: the ASan + UBSan suite FAILED" >&2
    status=1
  fi
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
fi

if [ "$what" = all ] || [ "$what" = valgrind ]; then
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "sanitize: valgrind not found (Debian: apt-get install valgrind)" >&2
    exit 2
  fi
  echo "sanitize: valgrind memcheck (build-valgrind/)"
  mkdir -p build-valgrind
  cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=Debug -DGS_WITH_CUDA=OFF -DGS_WITH_MPI=OFF \
    >build-valgrind/configure.log 2>&1 \
    || { cat build-valgrind/configure.log; exit 1; }
  # host tests that exercise parsing, configuration, CSR utilities and whole runs
  tests=(io/mmio_test cfg/cfg_load cfg/cfg_set cfg/cfg_print unit/csr_test unit/mem_status_test
         unit/report_test fuzz/fuzz_replay_mm fuzz/fuzz_replay_cfg_load fuzz/fuzz_replay_cfg_set
         reliability/config_hostile_test reliability/output_files_test reliability/alloc_fail_test)
  cmake --build build-valgrind -j"$jobs" --target gpusolve "${tests[@]##*/}" >build-valgrind/build.log 2>&1 \
    || { tail -40 build-valgrind/build.log; exit 1; }
  vg=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99
      --suppressions="$root/tests/reliability/valgrind.supp" --quiet)
  for t in "${tests[@]}"; do
    bin="build-valgrind/tests/$t"
    args=()
    case "$t" in
      fuzz/fuzz_replay_*) args=("$root/tests/fuzz/corpus/${t#fuzz/fuzz_replay_}") ;;
      # one whole-run scenario is enough under valgrind (the ASan suite runs them all)
      reliability/alloc_fail_test) export GS_ALLOC_FAIL_SCENARIOS=cg_ic0_poisson ;;
    esac
    log="build-valgrind/valgrind-${t//\//_}.log"
    # run where ctest runs it (the test's build folder)
    if (cd "$(dirname "$bin")" && "${vg[@]}" "./$(basename "$bin")" "${args[@]}") >"$log" 2>&1; then
      echo "  ok    $t"
    else
      echo "  FAIL  $t (log: $log)" >&2
      grep -E "==[0-9]+==" "$log" | head -30 >&2 || true
      status=1
    fi
    unset GS_ALLOC_FAIL_SCENARIOS
  done
  # a whole CLI run too
  if "${vg[@]}" build-valgrind/gpusolve data/matrices/sherman1.mtx -s device.backend=host \
       -s preconditioner.type=ilu0 --quiet >build-valgrind/valgrind-gpusolve.log 2>&1; then
    echo "  ok    gpusolve sherman1 ilu0"
  else
    echo "  FAIL  gpusolve sherman1 ilu0 (log: build-valgrind/valgrind-gpusolve.log)" >&2
    status=1
  fi
fi
exit $status
