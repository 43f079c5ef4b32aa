#!/usr/bin/env python3
"""GMRES(30) time per iteration: gpusolve's against CuPy's (cupyx.scipy.sparse.linalg.gmres) on the same
matrix, card and right-hand side, in one process. Both run a fixed number of iterations (a tolerance
that is never met): gpusolve `solver.max_iterations` = ITERS, CuPy `maxiter` = ITERS (CuPy counts inner
iterations and always completes a cycle, so ITERS is a multiple of the restart). No preconditioner, no
scaling or reordering. gpusolve runs with each orthogonalization of ORTHOS (CGS2: two reductions per
iteration; DCGS2: one). Each is run REPS times after a warm-up; the median is reported.

  bench/gmres_cupy.py BUILD_DIR [NAME:N ...]     # default gen names: convdiff3d:100 poisson3d:100

Needs CuPy; gpusolve's library from BUILD_DIR (GPUSOLVE_LIBRARY) and python/ on the path. The matrix is
written by BUILD_DIR/gpusolve-gen as a PETSc binary file and read here with numpy."""
import os, statistics, subprocess, sys, tempfile, time

ITERS, RESTART, REPS = 300, 30, 5
ORTHOS = ("cgs2", "dcgs2")


def read_petsc(path):
    import numpy as np, scipy.sparse as sp
    with open(path, "rb") as f:
        head = np.fromfile(f, dtype=">i4", count=4)
        assert head[0] == 1211216, "not a PETSc matrix file"
        m, n, nnz = int(head[1]), int(head[2]), int(head[3])
        lens = np.fromfile(f, dtype=">i4", count=m).astype(np.int64)
        cols = np.fromfile(f, dtype=">i4", count=nnz).astype(np.int32)
        vals = np.fromfile(f, dtype=">f8", count=nnz).astype(np.float64)
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    return sp.csr_matrix((vals, cols, ptr.astype(np.int32)), shape=(m, n))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    names = sys.argv[2:] or ["convdiff3d:100", "poisson3d:100"]
    os.environ.setdefault("GPUSOLVE_LIBRARY", os.path.join(build, "libgpusolve.so"))
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import numpy as np, cupy as cp, cupyx.scipy.sparse as csp, cupyx.scipy.sparse.linalg as cla
    import gpusolve
    print("%-16s %9s %10s %6s %14s %12s %7s" % ("matrix", "rows", "nnz", "ortho", "gpusolve ms/it", "cupy ms/it",
                                                "ratio"))
    for name in names:
        kind, nx = name.split(":")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "A.petsc")
            subprocess.run([os.path.join(build, "gpusolve-gen"), kind, nx, "-o", path], check=True,
                           stdout=subprocess.DEVNULL)
            A = read_petsc(path)
        b = A @ np.ones(A.shape[0])
        Ad, bd = csp.csr_matrix(A), cp.asarray(b)
        ours = {}
        for ortho in ORTHOS:
            st = {"device.backend": "cuda", "solver.type": "gmres", "solver.restart": RESTART,
                  "solver.orthogonalization": ortho,
                  "preconditioner.type": "none", "solver.fallback": "none", "solver.rtol": 0.0,
                  "solver.max_iterations": ITERS, "solver.divergence_tolerance": 0.0,
                  "system.scaling": "none", "system.reorder": "none", "system.matching": "none"}
            ours[ortho] = []
            with gpusolve.Solver(Ad, settings=st) as s:
                s.setup()
                for r in range(REPS + 1):
                    x, info = s.solve(bd)
                    it = info["solve"]["iterations"]
                    if r: ours[ortho].append(info["time"]["solve"] / max(it, 1))
        theirs = []
        for r in range(REPS + 1):
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            try:
                x, _ = cla.gmres(Ad, bd, restart=RESTART, maxiter=ITERS, rtol=1e-300, atol=0.0)
            except TypeError:  # older CuPy: tol instead of rtol
                x, _ = cla.gmres(Ad, bd, restart=RESTART, maxiter=ITERS, tol=1e-300, atol=0.0)
            cp.cuda.Device().synchronize()
            if r: theirs.append((time.perf_counter() - t) / ITERS)
        c = statistics.median(theirs)
        for ortho in ORTHOS:
            a = statistics.median(ours[ortho])
            print("%-16s %9d %10d %6s %14.4f %12.4f %7.2f" % (name, A.shape[0], A.nnz, ortho, 1e3 * a, 1e3 * c,
                                                             a / c))


if __name__ == "__main__":
    main()
