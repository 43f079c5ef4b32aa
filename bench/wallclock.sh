#!/usr/bin/env bash
# Wall-clock time where users feel it: one gpusolve process per run, small systems (10^3-10^4 rows) and a
# large one (10^6 rows), each Krylov method with ILU(0) (and the large one without a preconditioner too):
# iterations, time per iteration, device start-up (time.init, whether it overlapped the read), read,
# the run's total and the process's wall time (time.wall: process start to report). Then the reader's
# throughput against fast_matrix_market (bench/reader.sh) unless READER=0.
#
#   bench/wallclock.sh [BUILD_DIR] [BACKEND]     # defaults: build, cuda
#
# Prints one line per run (stdout); docs/performance.md records a run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
backend=${2:-cuda}
G=$build/gpusolve
[ -x "$G" ] || { echo "wallclock.sh: $G not built" >&2; exit 2; }

run() { # MATRIX SOLVER PRECONDITIONER [env...]
  local m=$1 s=$2 p=$3
  shift 3
  env "$@" "$G" "$m" --json -s solver.type="$s" -s preconditioner.type="$p" -s solver.fallback=none \
    -s device.backend="$backend" -s system.rhs=Ax 2>/dev/null | python3 -c "
import json, sys
for line in sys.stdin:
    d = json.loads(line); t = d.get('time', {}); s = d.get('solve', {})
    print('%-26s %-9s %-5s it=%5s per_it=%.5f init=%.3f overlapped=%-5s read=%.3f total=%.3f wall=%.3f' % (
        d.get('matrix', {}).get('name', '?')[:26], '$s', '$p', s.get('iterations'), t.get('per_iteration', 0),
        t.get('init', 0), d.get('backend', {}).get('init_overlapped'), t.get('read', 0), t.get('total', 0),
        t.get('wall', 0)))"
}

for m in "$root/data/matrices/orsirr_1.mtx" gen:poisson2d:40 gen:convdiff3d:15; do
  for s in gmres fgmres bicgstab; do run "$m" "$s" ilu0; done
done
for s in gmres bicgstab; do
  run gen:convdiff3d:100 "$s" ilu0
  run gen:convdiff3d:100 "$s" none
done
[ "${READER:-1}" = 0 ] || "$root/bench/reader.sh" "$build" 5
