"""gpusolve: sparse linear systems A x = b with ILU-family preconditioned Krylov methods, on an NVIDIA GPU
or on the host, through libgpusolve (the library the gpusolve command runs on).

    x, info = gpusolve.solve(A, b, settings={"solver.rtol": 1e-10})

    s = gpusolve.Solver(A, settings={"preconditioner.type": "ilu0"})   # set up once
    x1, info1 = s.solve(b1)                                            # solve many
    x2, info2 = s.solve(b2)

A: a SciPy sparse matrix (any format; CSR is used as it is), a CuPy sparse matrix, or CSR arrays
(indptr, indices, data, shape). b: a NumPy array, or a CuPy array (the solution is then a CuPy array on
the same device). settings: configuration keys (`gpusolve --help-config`) to values. info: the report
of `gpusolve --json` as a dict (info["solve"]["converged"], ["iterations"], ["residual_true"],
info["strategy"], info["attempts"], info["time"], ...). A solve that does not converge returns its
best x with info["solve"]["converged"] False (info["exit_code"] 1 or 4); errors (a bad setting, a bad
matrix, no GPU for device.backend = "cuda") raise gpusolve.Error.
"""
from ._core import Error, Solver, library_path, solve, version

__version__ = "0.1.0"
__all__ = ["Error", "Solver", "solve", "version", "library_path", "__version__"]
