#!/usr/bin/env bash
# Reading matrices: gpusolve's reader (bench_read: median of REPS reads after a warm-up, 1 thread and
# every thread) against fast_matrix_market's Python reader (fmm.read_coo with the same thread counts,
# the same median), in the same run, on a ~120 MB 1M-row convection-diffusion .mtx (as written: row by
# row; and sorted column by column, the order of SuiteSparse's files), and a small one.
#
#   bench/reader.sh [BUILD_DIR] [REPS]      # defaults: build, 5
#
# Needs: BUILD_DIR with bench_read and gpusolve-gen; python3 -m venv and pip to install
# fast_matrix_market into a private venv (bench-only, under $GS_READER_TMP, default /tmp/gs_reader_bench;
# without network the fmm column says "n/a"). Prints a table; docs/performance.md records one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
reps=${2:-5}
tmp=${GS_READER_TMP:-/tmp/gs_reader_bench}
mkdir -p "$tmp"
threads=$(nproc 2>/dev/null || echo 1)

[ -x "$build/bench/bench_read" ] || { echo "reader.sh: $build/bench/bench_read not built" >&2; exit 2; }
gen=$build/gpusolve-gen
[ -x "$gen" ] || gen=$build/app/gpusolve-gen
[ -s "$tmp/convdiff100.mtx" ] || "$gen" convdiff3d 100 -o "$tmp/convdiff100.mtx" >/dev/null
[ -s "$tmp/convdiff20.mtx" ] || "$gen" convdiff3d 20 -o "$tmp/convdiff20.mtx" >/dev/null
# the same entries column by column (the order of SuiteSparse's files): the reader's sorting path
if [ ! -s "$tmp/convdiff100_bycol.mtx" ]; then
  { head -n 3 "$tmp/convdiff100.mtx"; tail -n +4 "$tmp/convdiff100.mtx" | LC_ALL=C sort -S 1G -k2,2n -k1,1n; } \
    > "$tmp/convdiff100_bycol.mtx.part" && mv "$tmp/convdiff100_bycol.mtx.part" "$tmp/convdiff100_bycol.mtx"
fi

# fast_matrix_market: the python3 in PATH when it has it (e.g. a wheel installed with --target and PYTHONPATH
# on a machine without network), else a private venv where pip installs it
py=$tmp/venv/bin/python
if python3 -c "import fast_matrix_market, numpy" 2>/dev/null; then
  py=python3
elif [ ! -x "$py" ] || ! "$py" -c "import fast_matrix_market, numpy" 2>/dev/null; then
  { python3 -m venv "$tmp/venv" && "$tmp/venv/bin/pip" install -q fast_matrix_market numpy; } >"$tmp/pip.log" 2>&1 || true
fi
have_fmm=0
"$py" -c "import fast_matrix_market, numpy" 2>/dev/null && have_fmm=1

fmm_time() { # FILE THREADS -> median seconds of REPS reads after a warm-up
  "$py" - "$1" "$2" "$reps" <<'PY'
import statistics, sys, time
import fast_matrix_market as fmm
path, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fmm.read_coo(path, parallelism=threads)
t = []
for _ in range(reps):
    t0 = time.perf_counter()
    fmm.read_coo(path, parallelism=threads)
    t.append(time.perf_counter() - t0)
print(f"{statistics.median(t):.4f}")
PY
}

echo "host: $(uname -n), $threads cores ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'))"
echo "date: $(date -u +%Y-%m-%d)  reps: $reps (median after one warm-up)"
printf '%-18s %9s %8s %10s %10s %10s %10s %12s\n' file MB threads "ours [s]" "ours MB/s" "fmm [s]" "fmm MB/s" "ours/fmm"
for f in convdiff20 convdiff100 convdiff100_bycol; do
  path=$tmp/$f.mtx
  bytes=$(stat -c %s "$path")
  for t in 1 "$threads"; do
    ours=$("$build/bench/bench_read" "$path" --threads "$t" --reps "$reps" | sed -n 's/.*median \([0-9.]*\) s.*/\1/p')
    if [ $have_fmm = 1 ]; then fmm=$(fmm_time "$path" "$t"); else fmm=n/a; fi
    awk -v f="$f" -v b="$bytes" -v t="$t" -v o="$ours" -v m="$fmm" 'BEGIN {
      mb = b / 1e6
      if (m == "n/a") printf "%-18s %9.1f %8d %10.4f %10.1f %10s %10s %12s\n", f, mb, t, o, mb / o, "n/a", "n/a", "n/a"
      else printf "%-18s %9.1f %8d %10.4f %10.1f %10.4f %10.1f %12.2f\n", f, mb, t, o, mb / o, m, mb / m, o / m }'
  done
done
