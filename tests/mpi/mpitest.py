"""Running programs under mpirun in the tests: the launcher found, the environment a container needs
(root, more ranks than cores, no cross-memory attach), skip (exit 77) where MPI cannot run.

As a script: mpitest.py MPIEXEC NP PROGRAM [ARGS...] runs PROGRAM on NP ranks and exits with its code."""
import os
import shutil
import subprocess
import sys

SKIP = 77


def environment():
    env = dict(os.environ)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
        "OMPI_MCA_btl": "self,vader",
        "OMPI_MCA_plm_rsh_agent": "false",
    })
    return env


def launcher(mpiexec):
    """The mpirun to use, or None (the caller skips)."""
    if mpiexec and os.path.isfile(mpiexec) and os.access(mpiexec, os.X_OK):
        return mpiexec
    return shutil.which("mpirun") or shutil.which("mpiexec")


def start(name, mpiexec, skip_reason=""):
    """The mpirun a test script named `name` uses, or None after printing why it is skipped (the script
    then exits with SKIP)."""
    if skip_reason:
        print(f"{name}: skipped:", skip_reason)
        return None
    found = launcher(mpiexec)
    if not found:
        print(f"{name}: no mpirun: skipped")
    return found


def run(mpiexec, np, argv, timeout=120):
    cmd = [mpiexec, "-np", str(np)] + list(argv)
    return subprocess.run(cmd, env=environment(), capture_output=True, text=True, timeout=timeout)


def main():
    if len(sys.argv) < 4:
        print("usage: mpitest.py MPIEXEC NP PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    mpiexec = launcher(sys.argv[1])
    if not mpiexec:
        print("mpitest: no mpirun: skipped")
        return SKIP
    p = run(mpiexec, int(sys.argv[2]), sys.argv[3:])
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
