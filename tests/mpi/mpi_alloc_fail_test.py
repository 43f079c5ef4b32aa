"""Allocation faults on one rank of a distributed solve: for every k, the k-th host allocation of rank 1
failing, with block Jacobi (BILU) and RAS, no rank hangs. Each run ends with both ranks' calls returning
the same code (0, or 5 with the fault agreed on; the next k then runs in the same processes), or, for a
fault the ranks cannot agree on (inside a solve), with exit 5 through MPI_Abort and the failing rank's
"out of host memory" message (the sweep goes on from the next k in new processes). A run that does not
end within 60 s is a hang.

usage: mpi_alloc_fail_test.py MPIEXEC PROGRAM [SKIP-REASON]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpitest  # noqa: E402


def run(mpiexec, prog, first, last, pc):
    try:
        return subprocess.run([mpiexec, "-np", "2", prog, str(first), str(last), "1", pc], env=mpitest.environment(),
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return subprocess.CompletedProcess(e.cmd, None, out, "")


def done_ks(stdout):
    """The k of each "k K codes A B" line, with the two codes."""
    out = []
    for line in stdout.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "k" and f[2] == "codes":
            out.append((int(f[1]), int(f[3]), int(f[4])))
    return out


def sweep(mpiexec, prog, pc, failures):
    p = run(mpiexec, prog, 0, 0, pc)
    if p.returncode != 0 or "k 0 codes 0 0" not in p.stdout:
        failures.append(f"{pc}: the run without a fault failed: {p.stdout!r} {p.stderr[-300:]!r}")
        return
    n = int(next(l.split()[1] for l in p.stdout.splitlines() if l.startswith("allocations")))
    k, agreed, aborted = 1, 0, 0
    while k <= n:
        p = run(mpiexec, prog, k, n, pc)
        done = done_ks(p.stdout)
        for kk, a, b in done:
            if a != b or a not in (0, 5):
                failures.append(f"{pc}: allocation {kk} of {n} on rank 1 failing: codes {a} and {b}")
        agreed += len(done)
        nxt = done[-1][0] + 1 if done else k  # the k that did not finish
        if p.returncode is None:
            failures.append(f"{pc}: allocation {nxt} of {n} on rank 1 failing: the ranks hung")
        elif p.returncode != 0:
            if p.returncode == 5 and "gpusolve: rank 1: out of host memory" in p.stderr:
                aborted += 1
            else:
                failures.append(f"{pc}: allocation {nxt} of {n}: exit {p.returncode}: {p.stderr.strip()[-300:]!r}")
        elif nxt <= n:
            failures.append(f"{pc}: the sweep stopped at allocation {nxt} of {n}: {p.stdout[-200:]!r}")
        k = nxt + 1 if p.returncode != 0 else n + 1
    print(f"mpi_alloc_fail {pc}: {n} allocations, each failing once: {agreed} agreed, {aborted} aborted")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    mpiexec = mpitest.start("mpi_alloc_fail", sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else "")
    if not mpiexec:
        return mpitest.SKIP
    failures = []
    for pc in ("bilu", "ras"):
        sweep(mpiexec, sys.argv[2], pc, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
