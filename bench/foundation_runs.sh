#!/usr/bin/env bash
# The foundation acceptance runs: 3D Poisson 100^3 (10^6 rows), b = ones, x0 = 0, rtol 1e-8, with
# CG, BiCGStab, GMRES(30), FGMRES(30) x {none, jacobi}. One JSON line per run on stdout.
# usage: bench/foundation_runs.sh GPUSOLVE BACKEND [N] [extra -s options...]
set -uo pipefail
exe=$1; backend=$2; n=${3:-100}; shift 3 || shift $#
for pc in none jacobi; do
  for s in cg bicgstab gmres fgmres; do
    "$exe" "gen:poisson3d:$n" --json -s device.backend="$backend" -s solver.type=$s -s solver.restart=30 \
      -s preconditioner.type=$pc -s solver.max_iterations=20000 "$@"
  done
done
