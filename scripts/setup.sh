#!/usr/bin/env bash
# Shared set-up for the two quick-start commands: install what is missing (Debian/Ubuntu), configure
# and build into build/. Sourced by scripts/quickstart.sh and scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

pkgs=()
for p in cmake gcc make pkg-config libmetis-dev libconfig-dev libjansson-dev libcmocka-dev zlib1g-dev python3 \
         libopenmpi-dev openmpi-bin; do
  dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p")
done
# CI (and GS_SETUP_TOOLS=1) also runs scripts/sanitize.sh and scripts/fuzz.sh: valgrind, clang and the
# clang runtime libraries with libFuzzer (libclang-rt-dev = libclang-rt-14-dev on Debian 12); and the
# Python module's tests (tests/lib: numpy, scipy, pytest; a virtual environment to pip-install it into)
if [ "${CI:-}" = "true" ] || [ "${GS_SETUP_TOOLS:-}" = "1" ]; then
  for p in valgrind clang libclang-rt-dev python3-numpy python3-scipy python3-pytest python3-venv \
           python3-setuptools python3-wheel; do
    dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p")
  done
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${pkgs[*]}"
    (apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1) || \
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null; }
  else
    echo "setup: missing packages; run as root:  apt-get install -y ${pkgs[*]}" >&2
    exit 2
  fi
fi

cuda=ON
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH
  else cuda=OFF; echo "setup: no CUDA toolkit (nvcc) found: building the host backend only"; fi
fi
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGS_WITH_CUDA=$cuda -DGS_WERROR=$werror >build-configure.log 2>&1 \
  || { cat build-configure.log; exit 1; }
cmake --build build -j"$jobs" 2>&1 | grep -E "error|warning|Error" || true
cmake --build build -j"$jobs" >/dev/null   # fails loudly if the build is broken
