#!/usr/bin/env bash
# The packages the GPU machine lacks, unpacked into a folder (default: .deps) that travels with the sources:
# ../shared/device/deps.sh's list (METIS, libconfig, cmocka, zlib), jansson (the JSON reports) and Open MPI
# with the libraries it loads (the MPI build, mpirun). On the GPU machine, from the project root:
#   source .deps/env.sh .deps
# sets the compiler, CMake, loader and Open MPI (OPAL_PREFIX: the unpacked tree is relocatable) paths, and
# NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on shared machines).
#   scripts/device_deps.sh [DEST]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$(realpath -m "${1:-.deps}")
pkgs="libmetis5 libmetis-dev libconfig9 libconfig-dev libcmocka0 libcmocka-dev zlib1g zlib1g-dev
      libjansson4 libjansson-dev
      openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 libhwloc-plugins libevent-2.1-7
      libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 librdmacm1 libnl-3-200
      libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1 libpciaccess0 libxnvctrl0
      ocl-icd-libopencl1 libltdl7"
mkdir -p "$dest"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
( cd "$tmp" && apt-get download $pkgs >/dev/null 2>&1 ) || {
  apt-get update >/dev/null 2>&1; ( cd "$tmp" && apt-get download $pkgs >/dev/null ); }
for f in "$tmp"/*.deb; do dpkg -x "$f" "$dest"; done
rm -rf "$dest/usr/share/doc" "$dest/usr/share/man" "$dest/usr/share/lintian"
# absolute symlinks inside the packages would point at this machine's /usr: make them relative
find "$dest" -type l | while read -r l; do
  t=$(readlink "$l"); case "$t" in /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$dest$t")" "$l";; esac
done
# Open MPI's plain command names are alternatives made by its install scripts: links instead
for pair in mpicc:mpicc.openmpi mpicxx:mpicxx.openmpi mpiexec:mpiexec.openmpi mpirun:mpirun.openmpi; do
  ln -sfn "${pair#*:}" "$dest/usr/bin/${pair%%:*}"
done
cp "$root/scripts/device_env.sh" "$dest/env.sh"
echo "unpacked into $dest ($(du -sh "$dest" | cut -f1)): $(ls "$dest"/usr/lib/x86_64-linux-gnu | grep -c '\.so') libraries, $(ls "$dest/usr/bin" | tr '\n' ' ')"
