#!/usr/bin/env bash
# The Python module's pytest suite (python/tests) with the library just built, or (mode "pip") the
# package built and installed by pip into a fresh virtual environment, bundling that library, then the
# suite run against the installed package. Skipped (exit 77) without a Python that has numpy, scipy and
# pytest (Debian: python3-numpy python3-scipy python3-pytest; for pip: python3-venv), and in a
# sanitizer build (its library needs the sanitizer runtime loaded first).
# Usage: python_test.sh LIBGPUSOLVE SOURCE_DIR [PYTHON] [pip]
set -euo pipefail
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
mode=${4:-}
if [ "${GS_SANITIZE_BUILD:-OFF}" = ON ]; then
  echo "skipped: a sanitizer build (libgpusolve.so needs the ASan runtime loaded before Python)"; exit 77
fi
py=
for cand in ${3:+"$3"} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import numpy, scipy, pytest' >/dev/null 2>&1; then
    py=$cand; break
  fi
done
if [ -z "$py" ]; then
  echo "skipped: no python3 with numpy, scipy and pytest (Debian: apt-get install python3-scipy python3-pytest)"
  exit 77
fi
echo "python: $(command -v "$py") ($("$py" --version 2>&1))"
gs=$(dirname "$lib")/gpusolve
export GPUSOLVE_EXE=$gs
export PYTHONDONTWRITEBYTECODE=1
if [ "$mode" != pip ]; then
  GPUSOLVE_LIBRARY=$lib PYTHONPATH=$src/python exec "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
fi

tmp=$(mktemp -d /tmp/gs_pip_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if ! "$py" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1; then
  cat "$tmp/venv.log"
  echo "skipped: $py -m venv does not work (Debian: apt-get install python3-venv)"; exit 77
fi
vpy=$tmp/venv/bin/python
if ! "$vpy" -c 'import numpy, scipy, pytest' >/dev/null 2>&1; then
  # e.g. $py itself runs in a virtual environment: the new one sees the base interpreter's packages
  echo "skipped: a virtual environment of $py does not see numpy, scipy and pytest"; exit 77
fi
# the build backend (setuptools + wheel): the system's (Debian: python3-setuptools python3-wheel), else
# from the package index
if ! "$vpy" -c 'import setuptools, wheel' >/dev/null 2>&1 &&
   ! "$vpy" -m pip install -q setuptools wheel >"$tmp/backend.log" 2>&1; then
  cat "$tmp/backend.log"
  echo "skipped: no setuptools and wheel for the build (Debian: python3-setuptools python3-wheel)"; exit 77
fi
# a copy of the package folder: the build writes nothing into the sources; the library given is bundled
cp -r "$src/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info "$tmp/pkg/gpusolve/libgpusolve.so"
if ! GPUSOLVE_LIBRARY=$lib "$vpy" -m pip install --no-build-isolation --no-deps --no-index -q "$tmp/pkg" \
     >"$tmp/pip.log" 2>&1; then
  cat "$tmp/pip.log"
  echo "FAIL: pip install of the package"; exit 1
fi
# the installed package (not the sources), with the library it bundles
cd "$tmp"
unset GPUSOLVE_LIBRARY
"$vpy" - <<PY
import os, gpusolve
p = gpusolve.library_path()
assert p.startswith("$tmp/venv") and os.path.basename(p) == "libgpusolve.so", p
print("installed:", os.path.dirname(gpusolve.__file__), "library:", p, "version:", gpusolve.version())
PY
cp -r "$src/python/tests" "$tmp/tests"
sed -i "s#^ROOT = .*#ROOT = \"$src\"#" "$tmp/tests/test_gpusolve.py"
exec "$vpy" -m pytest -q -p no:cacheprovider "$tmp/tests"
