#!/usr/bin/env bash
# The triangular-solve benchmark set in one run of bench_trisolve: the ILU(0) factors of the four
# generated PDE matrices (poisson3d 100, laplace27 64, poisson2d 1024, convdiff3d 100) and of every real
# matrix with more than 10,000 rows found in the matrix folders (zero pivots shifted), every solver
# including cuSPARSE; per-matrix tables, a summary and the verdict "auto never slower than cusparse".
# usage (repo root, GPU machine): bench/trisolve_set.sh [BUILD_DIR [MATRIX_DIR ...]]
#   BUILD_DIR   default build-gpu;  MATRIX_DIR default data/matrices (a file name seen twice is taken once)
#   environment: OUT (default trisolve-out) gets trisolve_set.txt and trisolve_set.jsonl;
#                BENCH_ARGS extra options for bench_trisolve (e.g. "--reps 200 --no-jacobi")
set -uo pipefail
build=${1:-build-gpu}
[ $# -gt 0 ] && shift
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(data/matrices)
out=${OUT:-trisolve-out}
mkdir -p "$out"
exe="$build/bench/bench_trisolve"
[ -x "$exe" ] || { echo "trisolve_set.sh: $exe not found (build the bench_trisolve target first)" >&2; exit 2; }

args=()
seen=" "
for d in "${dirs[@]}"; do
  for f in "$d"/*.mtx "$d"/*.mtx.gz; do
    [ -f "$f" ] || continue
    base=$(basename "$f")
    [[ "$seen" == *" $base "* ]] && continue
    # the size line: the first line that is not a comment; its first field is the number of rows
    rows=$(gzip -cdf "$f" 2>/dev/null | awk '!/^%/ && NF >= 2 { print $1; exit }')
    if [[ "$rows" =~ ^[0-9]+$ ]] && [ "$rows" -gt 10000 ]; then
      args+=(--matrix "$f")
      seen+="$base "
      echo "# real matrix: $f ($rows rows)"
    fi
  done
done
[ ${#args[@]} -eq 0 ] && echo "# no real matrix with more than 10,000 rows in: ${dirs[*]}"

json="$out/trisolve_set.jsonl"
: > "$json"
# shellcheck disable=SC2086
"$exe" --set "${args[@]}" --json "$json" ${BENCH_ARGS:-} | tee "$out/trisolve_set.txt"
rc=${PIPESTATUS[0]}
echo "# JSON lines: $json; table: $out/trisolve_set.txt (exit $rc)"
exit "$rc"
