"""Build of the gpusolve Python package: the pure-Python module (a ctypes binding) plus libgpusolve.so,
compiled from the gpusolve sources around this folder with CMake, or taken from GPUSOLVE_LIBRARY.

Environment:
  GPUSOLVE_LIBRARY     a built libgpusolve.so to bundle (no compilation)
  GPUSOLVE_SOURCE_DIR  the gpusolve sources (default: the folder above this one)
  GPUSOLVE_CUDA        ON, OFF or auto (default: ON when nvcc is found)
  GPUSOLVE_CMAKE_ARGS  more arguments for the CMake configuration (e.g. -DCMAKE_CUDA_ARCHITECTURES=80)
  GPUSOLVE_BUILD_JOBS  parallel build jobs (default: the number of processors)
"""
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


def _nvcc():
    found = shutil.which("nvcc")
    if found:
        return found
    return "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None


def _build_library(build_temp):
    """Path of the libgpusolve.so to bundle."""
    given = os.environ.get("GPUSOLVE_LIBRARY")
    if given:
        if not Path(given).is_file():
            raise RuntimeError(f"GPUSOLVE_LIBRARY={given}: no such file")
        return Path(given)
    src = Path(os.environ.get("GPUSOLVE_SOURCE_DIR") or HERE.parent)
    if not (src / "CMakeLists.txt").is_file() or not (src / "api" / "gpusolve.h").is_file():
        raise RuntimeError(
            f"the gpusolve sources are not at {src}: set GPUSOLVE_SOURCE_DIR, or GPUSOLVE_LIBRARY to a built "
            "libgpusolve.so")
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("cmake is needed to build libgpusolve (Debian: apt-get install cmake)")
    cuda = os.environ.get("GPUSOLVE_CUDA", "auto").upper()
    nvcc = _nvcc()
    if cuda == "AUTO":
        cuda = "ON" if nvcc else "OFF"
    env = dict(os.environ)
    if cuda == "ON" and nvcc and not shutil.which("nvcc"):
        env["PATH"] = str(Path(nvcc).parent) + os.pathsep + env.get("PATH", "")
    build = Path(build_temp).resolve() / "libgpusolve"
    jobs = os.environ.get("GPUSOLVE_BUILD_JOBS") or str(os.cpu_count() or 2)
    configure = [cmake, "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DGS_BUILD_TESTS=OFF",
                 f"-DGS_WITH_CUDA={cuda}"] + shlex.split(os.environ.get("GPUSOLVE_CMAKE_ARGS", ""))
    subprocess.check_call(configure, env=env)
    subprocess.check_call([cmake, "--build", str(build), "--target", "gpusolve_shared", "-j", jobs], env=env)
    return build / "libgpusolve.so"


class BuildWithLibrary(build_py):
    """build_py that adds libgpusolve.so to the package."""

    def run(self):
        super().run()
        lib = _build_library(self.get_finalized_command("build").build_temp)
        dest = Path(self.build_lib) / "gpusolve" / "libgpusolve.so"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib.resolve(), dest)


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tagged for this platform, not pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
