"""The gpusolve Python module on the host backend (and the CuPy path where CuPy and a GPU are present):
a SciPy matrix in, the solution and the report out (true residual checked against SciPy's product),
CSR arrays, repeated solves on one setup, new values of a pattern, the monitor, an initial guess,
settings errors raising gpusolve.Error with the key named, a zero-diagonal matrix solved by the default
choice, the report's members against those of `gpusolve --json`, and interrupting a solve (Solver.interrupt,
Ctrl-C)."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

sp = pytest.importorskip("scipy.sparse")
import gpusolve  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WEST = os.path.join(ROOT, "data", "matrices", "west0067.mtx")
HOST = {"device.backend": "host"}


def laplacian(m):
    """The 5-point Laplacian on an m x m grid (SPD), CSR."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def convdiff(m, beta=20.0):
    """Upwind convection-diffusion on an m x m grid (nonsymmetric), COO."""
    h = 1.0 / (m + 1)
    t = sp.diags([-1.0 - beta * h, 2.0 + beta * h, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    return (sp.kron(i, t) + sp.kron(t, i)).tocoo()


def rel_residual(A, x, b):
    return np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def test_solve_scipy_matrix_default():
    A = laplacian(30)
    b = np.ones(A.shape[0])
    x, info = gpusolve.solve(A, b, settings=HOST)
    assert isinstance(x, np.ndarray) and x.shape == b.shape
    assert info["status"] == "ok" and info["exit_code"] == 0
    assert info["solve"]["converged"] is True
    assert info["solve"]["reason"] == "converged_rtol"
    r = rel_residual(A, x, b)
    assert r <= 1e-7
    assert info["solve"]["residual_true"] == pytest.approx(r, rel=1e-3, abs=1e-15)
    assert info["strategy"]["automatic"] is True and info["strategy"]["class"] == "spd"
    assert info["attempts"][0]["converged"] is True
    assert info["matrix"]["rows"] == A.shape[0] and info["matrix"]["nnz"] == A.nnz
    assert info["config"]["device"]["backend"] == "host"


def test_solve_nonsymmetric_any_format_and_csr_arrays():
    A = convdiff(25)  # COO: converted
    b = np.linspace(1.0, 2.0, A.shape[0])
    x, info = gpusolve.solve(A, b, settings={**HOST, "solver.type": "gmres", "preconditioner.type": "ilu0",
                                             "solver.rtol": 1e-10})
    assert info["solve"]["converged"]
    assert rel_residual(A.tocsr(), x, b) <= 1e-9
    assert info["solver"]["type"] == "gmres" and info["preconditioner"]["type"] == "ilu0"
    C = A.tocsr()
    x2, info2 = gpusolve.solve((C.indptr, C.indices, C.data, C.shape), b, settings=HOST)
    assert info2["solve"]["converged"] and rel_residual(C, x2, b) <= 1e-7
    # int64 indices and an unsorted, duplicated row are accepted (sorted and summed)
    D = sp.csr_matrix((np.array([1.0, 3.0, 1.0, 4.0]), np.array([1, 0, 1, 1], dtype=np.int64),
                       np.array([0, 3, 4], dtype=np.int64)), shape=(2, 2))
    x3, _ = gpusolve.solve(D, np.array([5.0, 8.0]), settings=HOST)
    assert np.allclose(D.toarray() @ x3, [5.0, 8.0])


def test_solver_repeated_solves_reuse_setup():
    A = laplacian(25)
    n = A.shape[0]
    calls = []
    s = gpusolve.Solver(A, settings=HOST, monitor=lambda it, res: calls.append((it, res)))
    for k in range(4):
        b = np.sin(0.05 * (k + 1) * np.arange(n)) + 1.0
        calls.clear()
        x, info = s.solve(b)
        assert info["solve"]["converged"]
        assert rel_residual(A, x, b) <= 1e-7
        assert info["setup"]["reused"] is (k > 0)
        assert len(calls) == info["solve"]["iterations"] + 1 and calls[-1][1] < calls[0][1]
    # an initial guess: the solution needs no iteration
    x0 = x.copy()
    x, info = s.solve(b, x0=x0)
    assert info["solve"]["iterations"] == 0 and info["system"]["x0"] == "given"
    s.close()
    with pytest.raises(ValueError):
        s.solve(b)


def test_new_values_same_pattern_keep_symbolic_setup():
    A = laplacian(20)
    b = np.ones(A.shape[0])
    with gpusolve.Solver(A, settings={**HOST, "solver.type": "gmres", "preconditioner.type": "iluk",
                                      "preconditioner.fill_level": 1}) as s:
        s.setup()
        x, info = s.solve(b)
        assert info["solve"]["converged"] and not info["setup"]["refactored"]
        B = A.copy()
        B.data = B.data * np.where(B.indices == np.repeat(np.arange(B.shape[0]), np.diff(B.indptr)), 1.5, 0.9)
        s.set_matrix(B)
        x, info = s.solve(b)
        assert info["setup"]["refactored"] is True and info["time"]["setup_symbolic"] == 0
        assert rel_residual(B, x, b) <= 1e-7


def test_settings_errors_raise_with_the_key():
    A = laplacian(5)
    with pytest.raises(gpusolve.Error) as e:
        gpusolve.solve(A, np.ones(25), settings={"solver.restrat": 10})
    assert "solver.restrat" in e.value.message
    assert e.value.exit_code == 2 and e.value.status == "GS_ERR_CONFIG"
    assert e.value.report["status"] == "error"
    with pytest.raises(gpusolve.Error) as e:
        gpusolve.solve(A, np.ones(25), settings={"solver.type": "qmr"})
    assert "solver.type" in e.value.message and e.value.exit_code == 2
    with pytest.raises(gpusolve.Error) as e:
        gpusolve.solve(A, np.ones(25), settings={"solver.rtol": -1})
    assert "solver.rtol" in e.value.message
    with pytest.raises(gpusolve.Error) as e:
        gpusolve.solve(A, np.ones(25), config="/nonexistent/run.cfg")
    assert e.value.exit_code == 3
    with pytest.raises(ValueError):
        gpusolve.solve(A, np.ones(24), settings=HOST)
    with pytest.raises(ValueError):
        gpusolve.solve(sp.csr_matrix((3, 4)), np.ones(3), settings=HOST)
    with pytest.raises(TypeError):
        gpusolve.solve(A, np.ones(25), settings={"preconditioner.blocks": [16, 128]})
    with pytest.raises(TypeError):
        gpusolve.solve(A.astype(complex), np.ones(25), settings=HOST)


def test_config_text_and_file(tmp_path):
    A = laplacian(12)
    b = np.ones(A.shape[0])
    x, info = gpusolve.solve(A, b, settings=HOST, config_text='solver = { type = "bicgstab"; rtol = 1e-11; };')
    assert info["solver"]["type"] == "bicgstab" and rel_residual(A, x, b) <= 1e-10
    cfg = tmp_path / "run.cfg"
    cfg.write_text('solver = { type = "cg"; };\npreconditioner = { type = "jacobi"; };\n')
    x, info = gpusolve.solve(A, b, settings=HOST, config=cfg)
    assert info["solver"]["type"] == "cg" and info["preconditioner"]["type"] == "jacobi"


def test_zero_diagonal_matrix_by_default():
    import scipy.io

    A = scipy.io.mmread(WEST).tocsr()
    assert (A.diagonal() == 0).any()
    b = np.ones(A.shape[0])
    x, info = gpusolve.solve(A, b, settings=HOST)
    assert info["solve"]["converged"] and rel_residual(A, x, b) <= 1e-7
    assert info["strategy"]["class"] == "weak-diagonal" and info["system"]["matching"] == "mwm"
    # the library's own reader
    s = gpusolve.Solver(settings=HOST)
    s.read_matrix(WEST)
    x2, info2 = s.solve(b)
    assert info2["solve"]["converged"] and np.allclose(x, x2, rtol=1e-6, atol=1e-9)
    assert info2["matrix"]["name"] == "west0067.mtx"


def test_outcome_without_convergence_is_no_error():
    A = laplacian(30)
    b = np.ones(A.shape[0])
    x, info = gpusolve.solve(A, b, settings={**HOST, "solver.type": "cg", "preconditioner.type": "none",
                                             "solver.max_iterations": 3, "solver.fallback": "none"})
    assert info["solve"]["converged"] is False and info["solve"]["reason"] == "diverged_max_it"
    assert info["exit_code"] == 1 and info["solve"]["iterations"] == 3 and np.isfinite(x).all()


def test_report_members_match_the_command():
    exe = os.environ.get("GPUSOLVE_EXE") or shutil.which("gpusolve")
    if not exe:
        pytest.skip("no gpusolve command (GPUSOLVE_EXE)")
    A = laplacian(10)
    _, info = gpusolve.solve(A, np.ones(100), settings=HOST)
    out = subprocess.run([exe, "gen:poisson2d:10", "--json", "-s", "device.backend=host"], capture_output=True,
                         text=True, check=True).stdout
    cli = json.loads(out)
    for group in ("solve", "time", "strategy", "preconditioner", "system", "backend", "matrix", "config"):
        missing = set(cli[group]) - set(info[group])
        assert not missing, (group, missing)
    # the command's alone: its place in a sweep and its command line
    assert set(cli) - set(info) == {"sweep", "command_line"}
    assert info["attempts"][0].keys() == cli["attempts"][0].keys()


def test_cupy_arrays_stay_on_the_device():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception:
        pytest.skip("no usable GPU")
    import cupyx.scipy.sparse as csp

    A = laplacian(40)
    b = cupy.ones(A.shape[0])
    x, info = gpusolve.solve(A, b)
    assert isinstance(x, cupy.ndarray) and info["backend"]["name"] == "cuda"
    assert rel_residual(A, cupy.asnumpy(x), np.ones(A.shape[0])) <= 1e-7
    Ad = csp.csr_matrix(A)
    s = gpusolve.Solver(Ad)
    for k in range(3):
        bd = cupy.arange(A.shape[0], dtype=cupy.float64) % (k + 3) + 1.0
        xd, info = s.solve(bd)
        assert isinstance(xd, cupy.ndarray) and info["solve"]["converged"]
        assert float(cupy.linalg.norm(bd - Ad @ xd) / cupy.linalg.norm(bd)) <= 1e-7


def _long_solver(monitor=None):
    """CG without a preconditioner to a tight tolerance on a 2D Laplacian: a solve of many iterations."""
    settings = dict(HOST, **{"solver.type": "cg", "preconditioner.type": "none", "solver.fallback": "none",
                             "solver.rtol": 1e-15, "solver.max_iterations": 1000000})
    return gpusolve.Solver(laplacian(300), settings=settings, monitor=monitor)


def test_interrupt_from_the_monitor():
    holder = {}

    def monitor(it, res):
        if it == 5:
            holder["s"].interrupt()

    with _long_solver(monitor) as s:
        holder["s"] = s
        x, info = s.solve(np.ones(s.n))
        assert info["solve"]["reason"] == "diverged_interrupted"
        assert info["exit_code"] == 6
        assert 5 <= info["solve"]["iterations"] <= 15
        assert np.all(np.isfinite(x)) and np.any(x != 0)


def test_keyboard_interrupt_stops_the_solve():
    import signal
    import threading
    import time

    # Ctrl-C raises KeyboardInterrupt in the main thread, as at an interactive prompt, even where this
    # process was started with SIGINT ignored (a background job of a non-interactive shell)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _keyboard_interrupt_case(threading, time, signal)
    finally:
        signal.signal(signal.SIGINT, previous)


def _keyboard_interrupt_case(threading, time, signal):
    with _long_solver() as s:
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        t0 = time.time()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            s.solve(np.ones(s.n))
        timer.join()
        assert time.time() - t0 < 30
        # the request was taken by the solve it stopped: the solver still works
        s.set("solver.rtol", 1e-3)
        x, info = s.solve(np.ones(s.n))
        assert info["solve"]["converged"]
