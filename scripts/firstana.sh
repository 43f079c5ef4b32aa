#!/usr/bin/env bash
# The analysis in a fresh gpusolve process (the setup a user pays once per run): ILU(0) + BiCGStab on the
# 3D Poisson matrix 100^3 with trisolve auto (merged schedule), with CUDA's lazy and eager module loading;
# prints setup_numeric, each factor's analysis, T's plan and the builder (ms). (The analyses' work space
# from cudaMallocAsync's pool instead of the backend's: bench_trisolve --analysis-pool.)
# usage (GPU machine, repo root, after a build in build-gpu): OUT=dir scripts/firstana.sh
set -uo pipefail
g=build-gpu/gpusolve
out=${OUT:-.}
for mode in LAZY EAGER; do
  f="$out/fa_${mode}.json"
  CUDA_MODULE_LOADING=$mode $g gen:poisson3d:100 --json -s solver.rtol=1e-7 -s system.rhs=Ax \
    -s device.backend=cuda -s solver.type=bicgstab -s preconditioner.type=ilu0 -s trisolve.lower.type=auto \
    -s trisolve.upper.type=auto >"$f" 2>"$out/fa_${mode}.err"
  python3 - "$f" "$mode" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d['trisolve']
ms = lambda v: 1e3 * v
print('%s setup_numeric %.2f ms  L ana %.2f tplan %.2f bld %.2f  U ana %.2f tplan %.2f  solve %.1f ms' % (
    sys.argv[2], ms(d['time']['setup_numeric']), ms(t['lower']['analysis_time']),
    ms(t['lower']['merge_tplan_time']), ms(t['lower']['merge_build_time']), ms(t['upper']['analysis_time']),
    ms(t['upper']['merge_tplan_time']), ms(d['time']['solve'])))
PY
done
