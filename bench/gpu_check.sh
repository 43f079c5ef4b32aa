#!/usr/bin/env bash
# One device call: build, GPU tests, compute-sanitizer, acceptance runs and benchmarks.
# usage (on the GPU machine, repo root): bench/gpu_check.sh [steps...]   steps: build test sanitize foundation spmv trisolve parilu golden
# Logs go to $OUT (or ./gpu-out); a short summary is printed last.
set -uo pipefail
out=${OUT:-gpu-out}; mkdir -p "$out"
steps=${*:-build test sanitize foundation spmv trisolve}
summary=()
[ -f .deps/env.sh ] && source .deps/env.sh .deps
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
has() { [[ " $steps " == *" $1 "* ]]; }
if has build; then
  t0=$(date +%s)
  cmake -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 \
    && cmake --build build-gpu -j16 >> "$out/build.log" 2>&1
  rc=$?; summary+=("build: rc=$rc in $(( $(date +%s) - t0 )) s")
  [ $rc -ne 0 ] && { grep -E "error" "$out/build.log" | head -30; printf '%s\n' "${summary[@]}"; exit 1; }
fi
if has test; then
  t0=$(date +%s)
  ctest --test-dir build-gpu --output-on-failure -j4 --timeout 300 > "$out/ctest.log" 2>&1
  summary+=("ctest (all): $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1) in $(( $(date +%s) - t0 )) s")
  summary+=("$(grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Not Run|Subprocess)' "$out/ctest.log" | tr -s ' ' | head -20)")
fi
if has sanitize; then
  # memcheck, synccheck, racecheck on every GPU test in quick mode (bench/gpu_sanitize.sh)
  OUT=$out bench/gpu_sanitize.sh ${SAN_PAR:-8} ${SAN_LIMIT:-200} > "$out/sanitize.txt" 2>&1
  summary+=("compute-sanitizer: $(grep -c ': clean' "$out/sanitize.txt") clean, $(grep -c ': skipped' "$out/sanitize.txt") skipped, problems:")
  summary+=("$(grep -vE ': (clean|skipped)' "$out/sanitize.txt")")
fi
if has golden; then
  python3 tests/app/golden_test.py build-gpu/gpusolve . cuda > "$out/golden_cuda.log" 2>&1
  summary+=("golden cuda: $(tail -1 "$out/golden_cuda.log")")
fi
if has foundation; then
  bench/foundation_runs.sh build-gpu/gpusolve cuda 100 > "$out/foundation_cuda.jsonl" 2> "$out/foundation_cuda.err"
  summary+=("$(python3 bench/summarize.py "$out/foundation_cuda.jsonl")")
fi
if has spmv; then
  for m in "--gen poisson3d --n 100" "--gen laplace27 --n 64" "--gen poisson2d --n 1024"; do
    f="$out/spmv_$(echo $m | tr -d ' -').txt"
    timeout 120 build-gpu/bench/bench_spmv $m --reps 200 --spmv own --spmv cusparse-alg2 --spmv cusparse-alg1 > "$f" 2>&1
    summary+=("spmv $m:" "$(grep -iE 'copy|own|alg' "$f" | tail -8)")
  done
fi
if has e2e; then
  timeout 500 bench/end_to_end.sh build-gpu/gpusolve build-gpu/bench/baseline_cusparse > "$out/e2e.txt" 2>&1
  summary+=("end to end:" "$(grep -E "^gen:|^matrix|[a-z0-9_]+\.mtx" "$out/e2e.txt")")
fi
if has trisolve; then
  # the whole benchmark set (4 PDE factors + real matrices > 10^4 rows), every solver incl. cuSPARSE
  OUT=$out timeout 400 bench/trisolve_set.sh build-gpu > "$out/trisolve_set.log" 2>&1
  summary+=("trisolve set:" "$(tail -30 "$out/trisolve_set.txt" 2>/dev/null || tail -5 "$out/trisolve_set.log")")
fi
if has parilu; then
  timeout 300 build-gpu/bench/bench_parilu > "$out/parilu.txt" 2>&1
  summary+=("parilu:" "$(tail -30 "$out/parilu.txt")")
fi
echo "================ summary ================"
cat "$out/gpu.txt"
printf '%s\n' "${summary[@]}"
