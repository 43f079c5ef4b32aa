#!/usr/bin/env bash
# Runs every lab of docs/labs.md at the host size or the GPU size, with the commands written in the
# header of each data/labs/lab*.cfg (the single place they are written), then plots each one.
#   data/labs/run_labs.sh host|gpu [OUTDIR] [GPUSOLVE]
# OUTDIR defaults to labs-host or labs-gpu; GPUSOLVE to ./build/gpusolve. Results: OUTDIR/lab*.jsonl,
# OUTDIR/lab*.png (when matplotlib is installed) and each sweep's summary table in OUTDIR/lab*.txt.
set -uo pipefail
size=${1:-}
if [ "$size" != host ] && [ "$size" != gpu ]; then
  echo "usage: $0 host|gpu [OUTDIR] [GPUSOLVE]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-labs-$size}
exe=$(realpath "${3:-$root/build/gpusolve}")
plot="python3 $root/scripts/plot.py"
[ -x "$exe" ] || { echo "$exe: not found; build first (scripts/quickstart.sh)" >&2; exit 2; }
mkdir -p "$out/lab1"
cd "$out"

# the n-th "#   ./build/gpusolve ..." line of a config (1: host size, 2: GPU size), made runnable here
command_of() {
  grep -E '^#   \./build/gpusolve ' "$1" | sed -n "${2}p" | sed -e 's/^#   //' \
    -e "s#\./build/gpusolve#$exe#" -e "s#data/labs/#$root/data/labs/#g"
}
n=1; [ "$size" = gpu ] && n=2
status=0
for cfg in "$root"/data/labs/lab*.cfg; do
  name=$(basename "$cfg" .cfg)
  cmd=$(command_of "$cfg" $n)
  [ -n "$cmd" ] || { echo "$cfg: no run command in its header" >&2; status=1; continue; }
  echo "== $name: $cmd"
  start=$(date +%s)
  eval "$cmd"
  code=$?
  echo "   exit code $code, $(( $(date +%s) - start )) s"
  [ $code -le 1 ] || status=1
done

# the table of each sweep, from its JSON Lines
$plot table lab1/runs.jsonl --y solve.iterations --y time.solve --y time.per_iteration --y solve.error_vs_xstar > lab1.txt
$plot table lab2.jsonl --y solve.iterations --y trisolve.lower.levels --y time.setup --y time.solve > lab2.txt
$plot table lab3.jsonl --y solve.iterations --y preconditioner.nonlinear_residual --y preconditioner.ilu_residual --y preconditioner.time_sweeps > lab3.txt
$plot table lab4.jsonl --y solve.iterations --y preconditioner.extended_nnz --y time.setup --y time.solve > lab4.txt
tail -n +1 lab1.txt lab2.txt lab3.txt lab4.txt
if python3 -c 'import matplotlib' 2>/dev/null; then
  $plot sweep lab1/runs.jsonl --x trisolve.lower.sweeps --y solve.iterations --y time.solve --y time.per_iteration -o lab1.png
  $plot convergence --jsonl lab1/runs.jsonl --where trisolve.lower.sweeps=2 -o lab1-convergence.png
  $plot sweep lab2.jsonl --x preconditioner.blocks --logx --y solve.iterations --y trisolve.lower.levels --y time.solve -o lab2.png
  $plot sweep lab3.jsonl --x preconditioner.sweeps --y solve.iterations --y preconditioner.nonlinear_residual --logy -o lab3.png
  $plot sweep lab4.jsonl --x preconditioner.overlap --y solve.iterations --y time.setup --y time.solve -o lab4.png
else
  echo "plots skipped: pip install matplotlib (or apt-get install python3-matplotlib)"
fi
exit $status
