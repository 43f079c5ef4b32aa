#!/usr/bin/env bash
# Benchmarks the issues ask for, as gpusolve sweeps (JSON Lines in $OUT, a table on stdout).
# usage: bench/issue_runs.sh GPUSOLVE [hec] [approx] [lap2d] [labs]
set -uo pipefail
exe=$1; shift
out=${OUT:-bench-out}; mkdir -p "$out"
steps=${*:-hec approx lap2d}
has() { [[ " $steps " == *" $1 "* ]]; }
if has hec; then
  # In the spirit of Table 1 of the HEC paper: GMRES(20) to rtol 1e-6, b = ones
  for m in gen:poisson3d:100 gen:convdiff3d:100; do
    for be in cuda host; do
      common=(--json -s device.backend=$be -s solver.type=gmres -s solver.restart=20 -s solver.rtol=1e-6 -s solver.max_iterations=3000)
      "$exe" $m "${common[@]}" -s preconditioner.type=bilu -s preconditioner.blocks=16,128,512
      "$exe" $m "${common[@]}" -s preconditioner.type=bilut -s preconditioner.blocks=128 -s preconditioner.max_fill=7 -s preconditioner.drop_tolerance=0.1
      "$exe" $m "${common[@]}" -s preconditioner.type=ras -s preconditioner.blocks=256,2048 -s preconditioner.overlap=1
    done
  done > "$out/hec_table1.jsonl" 2> "$out/hec_table1.err"
  python3 bench/summarize.py "$out/hec_table1.jsonl"
fi
if has approx; then
  # FGMRES(50) + ILU(0) on 3D convection-diffusion 100^3: exact vs jacobi vs async-jacobi solves
  m=gen:convdiff3d:100
  common=(--json -s device.backend=cuda -s solver.type=fgmres -s solver.restart=50 -s solver.rtol=1e-8 -s preconditioner.type=ilu0)
  { "$exe" $m "${common[@]}" -s 'trisolve.*.type=auto,cusparse'
    "$exe" $m "${common[@]}" -s 'trisolve.*.type=jacobi,async-jacobi' -s 'trisolve.*.sweeps=1,2,3,5'; } > "$out/approx.jsonl" 2> "$out/approx.err"
  python3 bench/summarize.py "$out/approx.jsonl"
fi
if has lap2d; then
  # 2D Laplacian 1024^2 to ||r||/||b|| < 1e-7 with b = A*1 (the cuSPARSE baseline's problem)
  m=gen:poisson2d:1024
  common=(--json -s device.backend=cuda -s solver.rtol=1e-7 -s system.rhs=Ax -s solver.max_iterations=20000)
  { "$exe" $m "${common[@]}" -s solver.type=cg -s preconditioner.type=none,jacobi
    "$exe" $m "${common[@]}" -s solver.type=cg -s preconditioner.type=ic0 -s 'trisolve.*.type=auto'
    # symmetric approximate IC for CG: the same number of synchronous Jacobi sweeps on L and L^T keeps M SPD
    "$exe" $m "${common[@]}" -s solver.type=cg -s preconditioner.type=ic0 -s 'trisolve.*.type=jacobi' -s 'trisolve.*.sweeps=1,2'
    "$exe" $m "${common[@]}" -s solver.type=cg -s preconditioner.type=parilu -s preconditioner.symmetric=true -s preconditioner.sweeps=1,2 -s 'trisolve.*.type=jacobi' -s 'trisolve.*.sweeps=1'
    "$exe" $m "${common[@]}" -s solver.type=fgmres -s solver.restart=50 -s preconditioner.type=ilu0 -s 'trisolve.*.type=jacobi' -s 'trisolve.*.sweeps=1,3'
    "$exe" $m "${common[@]}" -s solver.type=fgmres -s solver.restart=50 -s preconditioner.type=parilu -s preconditioner.sweeps=2 -s 'trisolve.*.type=jacobi' -s 'trisolve.*.sweeps=1,3'
    "$exe" $m "${common[@]}" -s solver.type=bicgstab -s preconditioner.type=ilu0 -s 'trisolve.*.type=auto'; } > "$out/lap2d.jsonl" 2> "$out/lap2d.err"
  python3 bench/summarize.py "$out/lap2d.jsonl"
fi
if has labs; then
  ( time timeout 200 data/labs/run_labs.sh gpu "$out/labs" "$exe" ) > "$out/labs.txt" 2>&1
  tail -25 "$out/labs.txt"
fi
