#!/usr/bin/env bash
# Distributed scaling: `mpirun -np P gpusolve` (each rank on its own GPU where there are GPUs; P = 1 is a
# plain single-process run) for P in the list given.
#   strong: 3D Poisson 200^3 (8.0e6 rows) and the 27-point Laplacian 150^3 (3.4e6 rows), CG + IC(0) and
#           GMRES(30) + ILU(0) (block Jacobi: one block per rank), GMRES(30) + RAS(1) with ILU(0)
#           subdomains, and CG + Jacobi (no triangular solve: how the rest of an iteration scales);
#   weak:   3D Poisson with about 2e6 rows per rank, CG + IC(0).
# b = A 1, x0 = 0, rtol 1e-8, no fallback. One line per run: iterations, ms per iteration, solve and setup
# seconds, seconds in communication (the slowest rank), the transport (device.transport = auto: NCCL
# between GPUs), and the per-iteration efficiency t_1 / (P t_P) against the run on one process of the
# same problem and method.
#
#   bench/mpi_scaling.sh BUILD_DIR [--small] [--set KEY=VALUE ...] [P ...]
#     P defaults to 1 2 4; --small: tiny problems; --set: a key for every run (e.g.
#     preconditioner.partition=contiguous, with which every rank generates its own rows)
#
# Needs BUILD_DIR/gpusolve built with MPI and mpirun on the PATH; as root, mpirun gets --allow-run-as-root.
# docs/performance.md records a run.
set -uo pipefail
build=${1:?usage: bench/mpi_scaling.sh BUILD_DIR [--small] [--set KEY=VALUE ...] [P ...]}
shift
small=0
if [ "${1:-}" = "--small" ]; then
  small=1
  shift
fi
sets=()
while [ "${1:-}" = "--set" ]; do
  sets+=(-s "${2:?--set needs KEY=VALUE}")
  shift 2
done
Ps=${*:-1 2 4}
G=$build/gpusolve
[ -x "$G" ] || { echo "mpi_scaling.sh: $G not built" >&2; exit 2; }
launch=(mpirun --bind-to none)
[ "$(id -u)" = 0 ] && launch+=(--allow-run-as-root)
export NCCL_NVLS_ENABLE=0 # NVLink multicast stays off on shared GPU hosts

if [ $small = 1 ]; then
  strong=(gen:poisson3d:24 gen:laplace27:18)
  per_rank=20000
else
  strong=(gen:poisson3d:200 gen:laplace27:150)
  per_rank=2000000
fi
methods=("cg ic0" "gmres ilu0" "gmres ras" "cg jacobi")

run() { # KIND P MATRIX SOLVER PC
  local kind=$1 p=$2 m=$3 s=$4 pc=$5 extra=()
  [ "$pc" = ras ] && extra=(-s preconditioner.overlap=1 -s preconditioner.local=iluk -s preconditioner.fill_level=0
                           -s preconditioner.blocks="$p") # one subdomain per rank; on one process, one
  local cmd=("$G")
  [ "$p" -gt 1 ] && cmd=("${launch[@]}" -np "$p" "$G")
  "${cmd[@]}" "$m" --json -s solver.type="$s" -s preconditioner.type="$pc" -s solver.fallback=none \
    -s system.rhs=Ax "${extra[@]}" "${sets[@]}" 2>/dev/null | python3 -c "
import json, sys
line = sys.stdin.readline()
try:
    d = json.loads(line)
except ValueError:
    print('$kind $m $s+$pc P=$p failed'); sys.exit(0)
t, v, par = d.get('time', {}), d.get('solve', {}), d.get('parallel', {})
comm = max(par.get('time_comm', [0.0]) or [0.0])
print('$kind %s %s+%s P=%d rows=%d it=%s ms_per_it=%.4f solve=%.4f setup=%.4f comm=%.4f backend=%s transport=%s reason=%s' % (
    '$m', '$s', '$pc', $p, d.get('matrix', {}).get('rows', 0), v.get('iterations'),
    1e3 * t.get('per_iteration', 0.0), t.get('solve', 0.0), t.get('setup_symbolic', 0.0) + t.get('setup_numeric', 0.0),
    comm, d.get('backend', {}).get('name'), par.get('transport', '-'), v.get('reason')))"
}

out=$(mktemp)
for m in "${strong[@]}"; do
  for meth in "${methods[@]}"; do
    for p in $Ps; do run strong "$p" "$m" $meth | tee -a "$out"; done
  done
done
for p in $Ps; do
  n=$(python3 -c "print(round(($per_rank * $p) ** (1 / 3)))")
  run weak "$p" "gen:poisson3d:$n" cg ic0 | tee -a "$out"
done

# the table: per-iteration efficiency against P = 1 of the same problem and method (strong), or against
# P = 1's time per iteration (weak: the same work per rank)
python3 - "$out" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or 'failed' in line:
        continue
    kv = dict(x.split('=', 1) for x in f[3:] if '=' in x)
    rows.append((f[0], f[1], f[2], int(kv['P']), kv))
base = {}
for kind, m, meth, p, kv in rows:
    if p == 1:
        base[(kind, m if kind == 'strong' else '', meth)] = float(kv['ms_per_it'])
print('\n%-6s %-20s %-12s %3s %9s %6s %10s %8s %8s %6s %s' % ('kind', 'matrix', 'method', 'P', 'rows', 'it', 'ms/it',
                                                            'solve', 'comm', 'eff', 'transport'))
for kind, m, meth, p, kv in rows:
    t1 = base.get((kind, m if kind == 'strong' else '', meth))
    t = float(kv['ms_per_it'])
    eff = (t1 / (p * t) if kind == 'strong' else t1 / t) if t1 and t > 0 else float('nan')
    print('%-6s %-20s %-12s %3d %9s %6s %10.4f %8.3f %8.3f %5.0f%% %s' % (kind, m, meth, p, kv['rows'], kv['it'], t,
                                                                        float(kv['solve']), float(kv['comm']), 100 * eff,
                                                                        kv.get('transport', '-')))
PY
rm -f "$out"
