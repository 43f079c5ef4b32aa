#!/usr/bin/env bash
# Robustness benchmark over the development and held-out sets (bench/robustness.py says what it
# measures).
#   bench/robustness.sh [GPUSOLVE] [OUT.jsonl]
# Matrices: the project workspace's real matrices (../shared/data/matrices beside the checkout, or a
# copy of them in .matrices/ -- the GPU machine gets that copy), data/matrices, and the held-out set
# data/heldout; ROBUST_DIRS replaces the list. Backend: ROBUST_BACKEND (auto: the GPU when present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$root/build/gpusolve}
out=${2:-robustness.jsonl}
dirs=${ROBUST_DIRS:-}
if [[ -z $dirs ]]; then
  if [[ -d $root/../shared/data/matrices ]]; then dirs="$root/../shared/data/matrices"
  elif [[ -d $root/.matrices ]]; then dirs="$root/.matrices"; fi
  dirs="$dirs $root/data/matrices $root/data/heldout"
fi
# shellcheck disable=SC2086
exec python3 "$root/bench/robustness.py" "$exe" "$out" $dirs
