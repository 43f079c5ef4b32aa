#!/usr/bin/env bash
# Robustness benchmark over the development set (bench/robustness.py says what it measures).
#   bench/robustness.sh [GPUSOLVE] [OUT.jsonl]
# Matrices: ../shared/data/matrices (the project workspace's real matrices, if present beside the
# checkout, or ROBUST_DIRS) and data/matrices. Backend: ROBUST_BACKEND (auto: the GPU when present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$root/build/gpusolve}
out=${2:-robustness.jsonl}
dirs=${ROBUST_DIRS:-}
if [[ -z $dirs ]]; then
  [[ -d $root/../shared/data/matrices ]] && dirs="$root/../shared/data/matrices"
  dirs="$dirs $root/data/matrices"
fi
# shellcheck disable=SC2086
exec python3 "$root/bench/robustness.py" "$exe" "$out" $dirs
