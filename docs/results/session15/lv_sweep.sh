#!/bin/bash
# Session 15: the level kernel's variants and resident blocks per SM (GS_LV_BLOCKS_PER_SM), level order
# forced so that level_time is the level kernel. GS_LV_VARIANT selected kernel variants in the session's
# experiment builds only (lv_sweep.txt says which); the committed code ignores it.
# usage: lv_sweep.sh BUILD OUTDIR "v b" ...   (e.g. "0 4" "0 3")
B=$1; O=$2; shift 2; VB=("$@")
for round in 1 2; do
  for g in "poisson3d 100" "laplace27 64" "poisson2d 1024"; do
    for vb in "${VB[@]}"; do
      set -- $g; v=${vb% *}; b=${vb#* }
      GS_LV_VARIANT=$v GS_LV_BLOCKS_PER_SM=$b GS_SYNCFREE_SCHEDULE=levels $B/bench/bench_trisolve --gen $1 --n $2 \
        --types syncfree --device-factors --reps 50 --no-jacobi --json $O/lv_$1_v${v}_b${b}_r$round.jsonl > /dev/null 2>&1 \
        || echo "FAIL $1 v$v b$b"
      python3 bench/analysis_summary.py $O/lv_$1_v${v}_b${b}_r$round.jsonl | \
        awk -v t="v$v b$b r$round" '{for(i=1;i<=NF;i++) if($i=="lvl") l=$(i+1); for(i=1;i<=NF;i++) if($i=="ana") a=$(i+1); print $1, $3, t, "lvl", l, "ana", a}'
    done
  done
done
