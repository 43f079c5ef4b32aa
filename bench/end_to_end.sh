#!/usr/bin/env bash
# End to end: gpusolve against the cuSPARSE/cuBLAS-only baseline (bench/baseline_cusparse.c) on the
# same systems with the same mathematics: ILU(0) + right-preconditioned BiCGStab, b = A*ones, x0 = 0,
# stop at ||b - A x|| / ||b|| < 1e-7, at most 10000 iterations. gpusolve runs once per triangular
# solver type (cusparse: the vendor solve inside our pipeline; auto: our choice); then the best
# configurations we know per matrix (E2E_BEST=0 skips them) and, with E2E_HOST=1, the same-math and best
# configurations on the host backend (all cores; OpenMP).
#
# usage: bench/end_to_end.sh GPUSOLVE BASELINE [MATRIX.mtx ...]
#   Matrices: gen:poisson3d:100, gen:laplace27:64, gen:poisson2d:1024, gen:convdiff3d:100, then the
#   Matrix Market files given.
#   Environment: OUT = the JSON-lines file (or a folder, which gets e2e.jsonl), default ./e2e.jsonl;
#   E2E_SPMV = SpMV modes of gpusolve to run (device.spmv values, space separated; default "own");
#   E2E_TIMEOUT = seconds allowed per run (default 1800).
# Prints a table (setup, solve, iterations, true residual, speed-up over the baseline) on stdout; the
# JSON file gets one line per run: tool, matrix, settings, the numbers, and the program's own output.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 GPUSOLVE BASELINE [MATRIX.mtx ...]" >&2
  exit 2
fi
gpusolve=$1
baseline=$2
shift 2
for exe in "$gpusolve" "$baseline"; do
  if [[ ! -x $exe ]]; then
    echo "$0: $exe is not an executable file" >&2
    exit 2
  fi
done
command -v python3 >/dev/null || { echo "$0: python3 is needed to read the JSON results" >&2; exit 2; }

out=${OUT:-./e2e.jsonl}
[[ -d $out ]] && out=$out/e2e.jsonl
: >"$out" || { echo "$0: cannot write $out" >&2; exit 2; }
spmv_modes=${E2E_SPMV:-own}
limit=${E2E_TIMEOUT:-1800}
# E2E_MATRICES replaces the generated set (e.g. smaller sizes for a smoke test)
read -r -a gen_set <<<"${E2E_MATRICES:-gen:poisson3d:100 gen:laplace27:64 gen:poisson2d:1024 gen:convdiff3d:100}"
matrices=("${gen_set[@]}" "$@")
# every key at most once: a key given twice is a sweep
common=(-s solver.rtol=1e-7 -s system.rhs=Ax -s solver.max_iterations=10000)
math=("${common[@]}" -s device.backend=cuda -s solver.type=bicgstab -s preconditioner.type=ilu0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# record TOOL MATRIX TRISOLVE SPMV EXIT_CODE STDOUT_FILE: one normalized JSON line appended to $out
record() {
  python3 - "$@" >>"$out" <<'EOF'
import json, sys
tool, matrix, config, spmv, code, path = sys.argv[1:7]
raw = None
try:
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            raw = json.loads(line)
except (OSError, ValueError):
    raw = None
rec = {"tool": tool, "matrix": matrix, "config": config or None, "spmv": spmv or None,
       "exit_code": int(code), "setup_s": None, "solve_s": None, "iterations": None,
       "true_relative_residual": None, "converged": False, "raw": raw}
if raw and tool == "baseline":
    for k in ("setup_s", "solve_s", "iterations", "true_relative_residual", "converged"):
        rec[k] = raw.get(k)
    rec["reason"] = raw.get("reason")
elif raw:
    t, s = raw.get("time", {}), raw.get("solve", {})
    if t.get("setup_symbolic") is not None or t.get("setup_numeric") is not None:
        rec["setup_s"] = (t.get("setup_symbolic") or 0.0) + (t.get("setup_numeric") or 0.0)
    rec["solve_s"] = t.get("solve")
    rec["iterations"] = s.get("iterations")
    rec["true_relative_residual"] = s.get("residual_true")
    rec["converged"] = bool(s.get("converged"))
    rec["reason"] = s.get("reason") or raw.get("error", {}).get("message")
    rec["device"] = raw.get("backend", {}).get("device")
print(json.dumps(rec))
EOF
}

for m in "${matrices[@]}"; do
  echo "== $m" >&2
  timeout "$limit" "$baseline" "$m" --rtol 1e-7 --max-iterations 10000 >"$tmp/out" 2>"$tmp/err"
  code=$?
  [[ $code -ne 0 ]] && { echo "   baseline exit $code:" >&2; tail -n 3 "$tmp/err" >&2; }
  record baseline "$m" "" "" "$code" "$tmp/out"
  for spmv in $spmv_modes; do
    for ts in cusparse auto; do
      timeout "$limit" "$gpusolve" "$m" --json "${math[@]}" -s device.spmv="$spmv" \
        -s trisolve.lower.type=$ts -s trisolve.upper.type=$ts >"$tmp/out" 2>"$tmp/err"
      code=$?
      [[ $code -ne 0 ]] && { echo "   gpusolve ($ts, SpMV $spmv) exit $code:" >&2; tail -n 3 "$tmp/err" >&2; }
      record gpusolve "$m" "same math, trisolve $ts" "$spmv" "$code" "$tmp/out"
    done
  done
  # mixed precision: the same math with the factors stored in float (preconditioner.precision = single)
  timeout "$limit" "$gpusolve" "$m" --json "${math[@]}" -s preconditioner.precision=single >"$tmp/out" 2>"$tmp/err"
  code=$?
  [[ $code -ne 0 ]] && { echo "   gpusolve (same math, single) exit $code:" >&2; tail -n 3 "$tmp/err" >&2; }
  record gpusolve "$m" "same math, auto, float factors" "own" "$code" "$tmp/out"
  # best configurations (our choice per matrix): CG for the SPD PDE matrices, BiCGStab otherwise
  case $m in
    gen:poisson3d:*|gen:laplace27:*|gen:poisson2d:*)
      best=("cg none|-s solver.type=cg -s preconditioner.type=none"
            "cg ic0 jacobi/1|-s solver.type=cg -s preconditioner.type=ic0 -s trisolve.lower.type=jacobi -s trisolve.upper.type=jacobi -s trisolve.lower.sweeps=1 -s trisolve.upper.sweeps=1"
            "cg ic0 jacobi/1 float|-s solver.type=cg -s preconditioner.type=ic0 -s trisolve.lower.type=jacobi -s trisolve.upper.type=jacobi -s trisolve.lower.sweeps=1 -s trisolve.upper.sweeps=1 -s preconditioner.precision=single"
            "cg ic0 jacobi/2|-s solver.type=cg -s preconditioner.type=ic0 -s trisolve.lower.type=jacobi -s trisolve.upper.type=jacobi -s trisolve.lower.sweeps=2 -s trisolve.upper.sweeps=2") ;;
    *)
      best=("bicgstab none|-s solver.type=bicgstab -s preconditioner.type=none"
            "bicgstab ilu0 jacobi/2|-s solver.type=bicgstab -s preconditioner.type=ilu0 -s trisolve.lower.type=jacobi -s trisolve.upper.type=jacobi -s trisolve.lower.sweeps=2 -s trisolve.upper.sweeps=2"
            "bicgstab ilu0 jacobi/2 float|-s solver.type=bicgstab -s preconditioner.type=ilu0 -s trisolve.lower.type=jacobi -s trisolve.upper.type=jacobi -s trisolve.lower.sweeps=2 -s trisolve.upper.sweeps=2 -s preconditioner.precision=single") ;;
  esac
  [[ ${E2E_BEST:-1} == 0 ]] && best=()
  for entry in "${best[@]}"; do
    label=${entry%%|*}
    read -r -a extra <<<"${entry#*|}"
    timeout "$limit" "$gpusolve" "$m" --json "${common[@]}" -s device.backend=cuda "${extra[@]}" >"$tmp/out" 2>"$tmp/err"
    code=$?
    [[ $code -ne 0 ]] && { echo "   gpusolve ($label) exit $code:" >&2; tail -n 3 "$tmp/err" >&2; }
    record gpusolve "$m" "$label" "own" "$code" "$tmp/out"
  done
  # the host backend (all cores) on the same math and the best configurations
  if [[ ${E2E_HOST:-0} == 1 ]]; then
    for entry in "same math|-s solver.type=bicgstab -s preconditioner.type=ilu0" "${best[@]}"; do
      label=${entry%%|*}
      [[ $label == *float* ]] && continue # float factors: cuda solvers only
      read -r -a extra <<<"${entry#*|}"
      timeout "$limit" "$gpusolve" "$m" --json "${common[@]}" -s device.backend=host "${extra[@]}" >"$tmp/out" 2>"$tmp/err"
      code=$?
      [[ $code -ne 0 ]] && { echo "   host ($label) exit $code:" >&2; tail -n 3 "$tmp/err" >&2; }
      record host "$m" "$label" "" "$code" "$tmp/out"
    done
  fi
done

# The table: speed-up = baseline time / gpusolve time, for the solve and for setup + solve.
python3 - "$out" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def f(v, fmt):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return format(v, fmt)
    return "-".rjust(int("".join(c for c in fmt.split(".")[0] if c.isdigit()) or 0))
base = {r["matrix"]: r for r in rows if r["tool"] == "baseline"}
print(f"{'matrix':<24} {'program':<34} {'setup s':>9} {'solve s':>9} {'its':>6} {'true res':>9} {'conv':>5} "
      f"{'x solve':>8} {'x total':>8}")
for r in rows:
    name = "baseline (cuSPARSE)" if r["tool"] == "baseline" else f"{r['tool']} {r['config']}"
    b = base.get(r["matrix"])
    sp_solve = sp_total = None
    if r["tool"] != "baseline" and b and b.get("converged") and r.get("converged"):
        if r.get("solve_s") and b.get("solve_s"):
            sp_solve = b["solve_s"] / r["solve_s"]
        if r.get("solve_s") and r.get("setup_s") is not None and b.get("setup_s") is not None:
            sp_total = (b["setup_s"] + b["solve_s"]) / (r["setup_s"] + r["solve_s"])
    print(f"{r['matrix'][-24:]:<24} {name[:34]:<34} {f(r.get('setup_s'), '9.4f')} {f(r.get('solve_s'), '9.4f')} "
          f"{f(r.get('iterations'), '6d')} {f(r.get('true_relative_residual'), '9.2e')} "
          f"{('yes' if r.get('converged') else 'no'):>5} {f(sp_solve, '8.2f')} {f(sp_total, '8.2f')}")
print(f"\nJSON lines: {sys.argv[1]}")
EOF
