#!/usr/bin/env bash
# The analysis in a fresh gpusolve process (the setup a user pays once per run): ILU(0) + BiCGStab on the
# 3D Poisson matrix 100^3 with trisolve auto (merged schedule), with CUDA's lazy and eager module loading
# and the analysis work space from cudaMalloc (GS_TS_WORK_POOL=0, the default) or from the stream-ordered
# pool (GS_TS_WORK_POOL=1); prints setup_numeric, each factor's analysis, T's plan and the builder (ms).
# usage (GPU machine, repo root, after a build in build-gpu): OUT=dir scripts/firstana.sh
set -uo pipefail
g=build-gpu/gpusolve
out=${OUT:-.}
for mode in LAZY EAGER; do for pool in 1 0; do
  f="$out/fa_${mode}_$pool.json"
  GS_TS_WORK_POOL=$pool CUDA_MODULE_LOADING=$mode $g gen:poisson3d:100 --json -s solver.rtol=1e-7 -s system.rhs=Ax \
    -s device.backend=cuda -s solver.type=bicgstab -s preconditioner.type=ilu0 -s trisolve.lower.type=auto \
    -s trisolve.upper.type=auto >"$f" 2>"$out/fa_${mode}_$pool.err"
  python3 - "$f" "$mode" "$pool" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d['trisolve']
ms = lambda v: 1e3 * v
print('%s pool %s setup_numeric %.2f ms  L ana %.2f tplan %.2f bld %.2f  U ana %.2f tplan %.2f  solve %.1f ms' % (
    sys.argv[2], sys.argv[3], ms(d['time']['setup_numeric']), ms(t['lower']['analysis_time']),
    ms(t['lower']['merge_tplan_time']), ms(t['lower']['merge_build_time']), ms(t['upper']['analysis_time']),
    ms(t['upper']['merge_tplan_time']), ms(d['time']['solve'])))
PY
done; done
