#!/usr/bin/env bash
# The parts schedule of syncfree against the level schedule and cuSPARSE SpSV on the four PDE factors
# (bench_trisolve, L and U of ILU(0)), optionally over several band widths.
# usage (GPU machine, repo root, after a build in BUILD): bench/parts_sweep.sh BUILD [BANDS...]
set -uo pipefail
b=${1:-build-gpu}; shift || true
bands=${*:-32}
for g in "poisson3d --n 100" "laplace27 --n 64" "poisson2d --n 1024" "convdiff3d --n 100"; do
  echo "== $g"
  GS_SYNCFREE_SCHEDULE=levels timeout 120 "$b/bench/bench_trisolve" --gen $g --types cusparse,syncfree --reps 100 2>&1 \
    | grep -E "^\s*(L|U|side|type)|cusparse|syncfree" | head -12 | sed 's/^/levels  /'
  for B in $bands; do
    GS_SF_BAND=$B GS_SYNCFREE_SCHEDULE=parts timeout 120 "$b/bench/bench_trisolve" --gen $g --types syncfree --reps 100 2>&1 \
      | grep -E "syncfree|error|rel" | head -6 | sed "s/^/parts B=$B  /"
  done
done
