#!/usr/bin/env bash
# The installed package used from outside the source tree: `cmake --install` into a temporary prefix,
# the files there (no libgs), the shared library's exports (gpusolve_* in version GPUSOLVE_0, nothing
# else), the header alone, examples/c/solve.c built with pkg-config (shared, and static with
# --static), a CMake project with find_package(gpusolve) (gpusolve::gpusolve and
# gpusolve::gpusolve_static), each run on the host backend. A library built with MPI (it exports
# gpusolve_create_comm) also installs gpusolve_mpi.h: the header alone with mpicc, and
# examples/c/solve_mpi.c built with mpicc and pkg-config and with find_package, run on 2 ranks (rank 0's
# matrix, then every rank's own rows); a
# library built without MPI installs no gpusolve_mpi.h.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
if [ "${GS_SANITIZE_BUILD:-OFF}" = ON ]; then
  echo "skipped: a sanitizer build (programs linking its libgpusolve.so need the ASan runtime)"; exit 77
fi
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d /tmp/gs_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libgpusolve.so' | head -1)")
for f in "$libdir/libgpusolve.so" "$libdir/libgpusolve.so.0" "$libdir/libgpusolve.a" include/gpusolve.h \
         bin/gpusolve bin/gpusolve-gen share/man/man1/gpusolve.1 share/bash-completion/completions/gpusolve \
         "$libdir/pkgconfig/gpusolve.pc" \
         "$libdir/cmake/gpusolve/gpusolve-config.cmake" "$libdir/cmake/gpusolve/gpusolve-config-version.cmake"; do
  case $f in /*) p=$f ;; *) p=$prefix/$f ;; esac
  if [ -e "$p" ]; then ok "installed ${p#"$prefix"/}"; else bad "missing ${p#"$prefix"/}"; fi
done
if find "$prefix" -name 'libgs*' | grep -q .; then bad "an installed file is named libgs*"; else ok "no libgs*"; fi

# exports: the gpusolve_* functions in version GPUSOLVE_0 and the version node, nothing else
others=$(nm -D --defined-only "$libdir/libgpusolve.so" | awk '{print $3}' |
         grep -v -E '^(gpusolve_[a-z_]+@@GPUSOLVE_0|GPUSOLVE_0)$' || true)
nexp=$(nm -D --defined-only "$libdir/libgpusolve.so" | grep -c '@@GPUSOLVE_0' || true)
if [ -z "$others" ] && [ "$nexp" -ge 10 ]; then ok "exports: $nexp gpusolve_* symbols, nothing else"
else bad "exports beyond gpusolve_*@@GPUSOLVE_0: $others"; fi

# the header compiles alone, as C99 and as C++
if echo '#include <gpusolve.h>' | cc -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$prefix/include" -x c -; then
  ok "header alone (C99)"; else bad "header alone (C99)"; fi
if command -v c++ >/dev/null 2>&1; then
  if echo '#include <gpusolve.h>' | c++ -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" -x c++ -; then
    ok "header alone (C++)"; else bad "header alone (C++)"; fi
fi

# built with MPI: gpusolve_mpi.h beside gpusolve.h, compiled by the MPI compiler wrapper
with_mpi=0
if nm -D --defined-only "$libdir/libgpusolve.so" | grep -q ' gpusolve_create_comm@@GPUSOLVE_0$'; then with_mpi=1; fi
if [ $with_mpi = 1 ]; then
  if [ -e "$prefix/include/gpusolve_mpi.h" ]; then ok "installed include/gpusolve_mpi.h"; else bad "missing include/gpusolve_mpi.h"; fi
  if command -v mpicc >/dev/null 2>&1; then
    if echo '#include <gpusolve_mpi.h>' | mpicc -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only \
         -I"$prefix/include" -x c -; then ok "gpusolve_mpi.h alone (mpicc, C99)"; else bad "gpusolve_mpi.h alone (mpicc)"; fi
  fi
elif [ -e "$prefix/include/gpusolve_mpi.h" ]; then bad "gpusolve_mpi.h installed by a library without MPI"
else ok "no gpusolve_mpi.h (built without MPI)"; fi
# solve_mpi on 2 ranks (the environment a container needs, as tests/mpi/mpitest.py sets it)
run_mpi() { # name, then the program
  local name=$1; shift
  if env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false \
       OMP_NUM_THREADS=1 mpirun -np 2 "$@" device.backend=host solver.type=gmres preconditioner.type=ras \
       >"$tmp/out.txt" 2>&1 && [ "$(grep -c 'on 2 ranks.* exit 0' "$tmp/out.txt")" = 3 ]; then
    ok "$name"; sed 's/^/       /' "$tmp/out.txt"
  else
    bad "$name"; cat "$tmp/out.txt"
  fi
}
mpi_tools=0
if [ $with_mpi = 1 ] && command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then mpi_tools=1; fi

# the example through pkg-config, run outside the source tree (a sysroot set for unpacked packages
# must not prefix the temporary prefix)
cd "$tmp"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
unset PKG_CONFIG_SYSROOT_DIR
west=$src/data/matrices/west0067.mtx
check_run() { # name, then the command
  local name=$1; shift
  if "$@" >"$tmp/out.txt" 2>&1 && grep -q 'west0067 (zero diagonal)     exit 0' "$tmp/out.txt" &&
     grep -q 'laplacian, new b (reuse)     exit 0' "$tmp/out.txt"; then
    ok "$name"; sed 's/^/       /' "$tmp/out.txt"
  else
    bad "$name"; cat "$tmp/out.txt"
  fi
}
if command -v pkg-config >/dev/null 2>&1; then
  # shellcheck disable=SC2046
  if cc "$src/examples/c/solve.c" $(pkg-config --cflags --libs gpusolve) -o solve_pc 2>"$tmp/cc.log"; then
    check_run "example built with pkg-config (shared)" env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      ./solve_pc "$west" device.backend=host
  else bad "cc examples/c/solve.c \$(pkg-config --cflags --libs gpusolve)"; cat "$tmp/cc.log"; fi
  if [ $mpi_tools = 1 ]; then
    # shellcheck disable=SC2046
    if mpicc "$src/examples/c/solve_mpi.c" $(pkg-config --cflags --libs gpusolve) -o solve_mpi 2>"$tmp/cc.log"; then
      run_mpi "solve_mpi built with mpicc and pkg-config, 2 ranks" \
        env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ./solve_mpi
    else bad "mpicc examples/c/solve_mpi.c \$(pkg-config --cflags --libs gpusolve)"; cat "$tmp/cc.log"; fi
  fi
  static_libs=$(pkg-config --static --libs gpusolve | sed 's/-lgpusolve//')
  # shellcheck disable=SC2086
  if cc "$src/examples/c/solve.c" $(pkg-config --cflags gpusolve) "$libdir/libgpusolve.a" $static_libs -o solve_static \
       2>"$tmp/cc.log"; then
    if ldd ./solve_static | grep -q libgpusolve; then bad "the static example loads libgpusolve.so"; fi
    check_run "example built with libgpusolve.a and pkg-config --static" ./solve_static "$west" device.backend=host
  else bad "static link with pkg-config --static"; cat "$tmp/cc.log"; fi
else
  echo "skip pkg-config (not installed)"
fi

# a CMake project: find_package(gpusolve)
mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(use_gpusolve C)
find_package(gpusolve 0.1 REQUIRED)
add_executable(solve_shared "$src/examples/c/solve.c")
target_link_libraries(solve_shared PRIVATE gpusolve::gpusolve)
add_executable(solve_static "$src/examples/c/solve.c")
target_link_libraries(solve_static PRIVATE gpusolve::gpusolve_static)
if(gpusolve_WITH_MPI)
  find_package(MPI REQUIRED COMPONENTS C)
  add_executable(solve_mpi "$src/examples/c/solve_mpi.c")
  target_link_libraries(solve_mpi PRIVATE gpusolve::gpusolve MPI::MPI_C)
endif()
CMAKE
if cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+;$CMAKE_PREFIX_PATH}" \
     >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/proj/build" >>"$tmp/cmake.log" 2>&1; then
  check_run "find_package(gpusolve): gpusolve::gpusolve" "$tmp/proj/build/solve_shared" "$west" device.backend=host
  check_run "find_package(gpusolve): gpusolve::gpusolve_static" "$tmp/proj/build/solve_static" "$west" device.backend=host
  if [ $mpi_tools = 1 ]; then run_mpi "find_package(gpusolve) with MPI: solve_mpi, 2 ranks" "$tmp/proj/build/solve_mpi"; fi
else
  bad "a CMake project with find_package(gpusolve)"; cat "$tmp/cmake.log"
fi

# the installed command runs from the prefix
if "$prefix/bin/gpusolve" gen:poisson2d:12 -s device.backend=host --quiet >/dev/null; then ok "installed gpusolve runs"
else bad "installed gpusolve runs"; fi

if [ "$fails" -gt 0 ]; then echo "$fails failed"; exit 1; fi
echo "install test: all passed"
