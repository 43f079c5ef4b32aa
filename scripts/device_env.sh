# Source this on the GPU machine, from the project root, after carrying the folder made by
# scripts/device_deps.sh:   source .deps/env.sh .deps
# It points compilers, CMake, the loader and Open MPI at the unpacked packages.
_d=$(realpath -m "${1:-.deps}")
export CMAKE_PREFIX_PATH="$_d/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export CPATH="$_d/usr/include${CPATH:+:$CPATH}"
export LIBRARY_PATH="$_d/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
export LD_LIBRARY_PATH="$_d/usr/lib/x86_64-linux-gnu:$_d/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$_d/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$_d"
export PATH="/usr/local/cuda/bin:$_d/usr/bin:$PATH"
# Open MPI finds its components, help texts and wrapper data below OPAL_PREFIX
export OPAL_PREFIX="$_d/usr"
# the GPU machines are shared: NVLink multicast off in every process started from here
export NCCL_NVLS_ENABLE=0
unset _d
