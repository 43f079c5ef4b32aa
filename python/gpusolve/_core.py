"""The ctypes binding of libgpusolve (api/gpusolve.h) and the Python interface over it."""
import concurrent.futures
import ctypes
import ctypes.util
import json
import os
import threading

import numpy as np

_DEVICE = 1  # GPUSOLVE_DEVICE: the arrays are CUDA device pointers
_GUESS = 2   # GPUSOLVE_GUESS: x holds the initial guess
_MONITOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_double)


class Error(Exception):
    """A gpusolve error: .message (what went wrong, naming the key or the input), .exit_code (the class
    of the gpusolve command: 2 usage or configuration, 3 input file, 4 numerical, 5 device or memory,
    70 internal), .status (e.g. "GS_ERR_CONFIG") and .report (the JSON report as a dict)."""

    def __init__(self, message, exit_code, status, report=None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.status = status
        self.report = report or {}

    def __str__(self):
        return f"{self.message} (exit class {self.exit_code}, {self.status})"


def _candidates():
    env = os.environ.get("GPUSOLVE_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    found = [os.path.join(here, "libgpusolve.so")]
    system = ctypes.util.find_library("gpusolve")
    if system:
        found.append(system)
    return found


_lib = None
_lib_path = None


def _library():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib
    raise ImportError("libgpusolve could not be loaded (" + "; ".join(errors) +
                      "); install the package with `python3 -m pip install ./python` from the gpusolve sources, "
                      "or set GPUSOLVE_LIBRARY to a built libgpusolve.so")


def _declare(lib):
    P, I, D, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p
    sigs = {
        "gpusolve_version": (S, []),
        "gpusolve_create": (I, [ctypes.POINTER(P), S, S, ctypes.POINTER(S)]),
        "gpusolve_set": (I, [P, S]),
        "gpusolve_destroy": (None, [ctypes.POINTER(P)]),
        "gpusolve_set_matrix": (I, [P, I, I, P, P, P, ctypes.c_uint]),
        "gpusolve_read_matrix": (I, [P, S]),
        "gpusolve_size": (I, [P]),
        "gpusolve_setup": (I, [P]),
        "gpusolve_solve": (I, [P, P, P, ctypes.c_uint]),
        "gpusolve_report_json": (S, [P]),
        "gpusolve_exit_code": (I, [P]),
        "gpusolve_reason": (S, [P]),
        "gpusolve_reason_detail": (S, [P]),
        "gpusolve_iterations": (I, [P]),
        "gpusolve_residual": (D, [P]),
        "gpusolve_error_status": (S, [P]),
        "gpusolve_error_message": (S, [P]),
        "gpusolve_set_monitor": (I, [P, _MONITOR, P]),
        "gpusolve_interrupt": (I, [P]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def library_path():
    """The path of the libgpusolve loaded."""
    _library()
    return _lib_path


def version():
    """The library's version ("0.1.0")."""
    return _library().gpusolve_version().decode()


def _setting_text(key, value):
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        raise TypeError(f"setting {key}: one value per solve (a list is a sweep of the gpusolve command)")
    return f"{key}={value}".encode()


def _is_cupy(a):
    return type(a).__module__.split(".")[0] in ("cupy", "cupyx")


def _cupy():
    import cupy  # noqa: F401  (only when a CuPy array was given)
    return cupy


def _csr_arrays(A):
    """(n, indptr, indices, data, on_device) with int32 indices and float64 values, contiguous."""
    if isinstance(A, tuple) and len(A) == 4:
        indptr, indices, data, shape = A
        shape = tuple(int(v) for v in shape)
    elif hasattr(A, "tocsr") and hasattr(A, "shape"):
        csr = A if getattr(A, "format", None) == "csr" else A.tocsr()
        indptr, indices, data, shape = csr.indptr, csr.indices, csr.data, tuple(int(v) for v in csr.shape)
    else:
        raise TypeError("A must be a SciPy (or CuPy) sparse matrix or CSR arrays (indptr, indices, data, shape), "
                        f"not {type(A).__name__}")
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"A must be square, not {shape[0]} x {shape[1]}" if len(shape) == 2 else
                         f"A must be a 2-D matrix, not of shape {shape}")
    n = shape[0]
    device = _is_cupy(indptr) or _is_cupy(data)
    xp = _cupy() if device else np
    if len(data) > np.iinfo(np.int32).max or n > np.iinfo(np.int32).max:
        raise ValueError(f"A has {len(data)} entries and {n} rows: gpusolve's indices are 32-bit")
    if len(indptr) != n + 1:
        raise ValueError(f"indptr has {len(indptr)} entries; expected n + 1 = {n + 1}")
    if getattr(data, "dtype", np.dtype(float)).kind == "c":
        raise TypeError("gpusolve solves real systems: A has complex values")
    indptr = xp.ascontiguousarray(indptr, dtype=xp.int32)
    indices = xp.ascontiguousarray(indices, dtype=xp.int32)
    data = xp.ascontiguousarray(data, dtype=xp.float64)
    return n, indptr, indices, data, device


def _pointer(a, device):
    return ctypes.c_void_p(a.data.ptr if device else a.ctypes.data)


class Solver:
    """A solver set up once and solved with many right-hand sides.

    Solver(A=None, settings=None, config=None, config_text=None, monitor=None)
      settings     dict of configuration keys to values ({"solver.type": "gmres", "solver.rtol": 1e-10})
      config       path of a libconfig configuration file
      config_text  libconfig text ('solver = { type = "cg"; };')
      monitor      monitor(iteration, residual), called at every Krylov iteration

    .set_matrix(A) (same pattern: the preconditioner's symbolic setup is kept), .read_matrix(path),
    .setup() (optional), .solve(b, x0=None) -> (x, info), .report (the last info), .interrupt(), .close().

    The library's work (setup, solve, new matrices) runs on a thread of the solver's own, every call of
    one solver on the same thread, while the calling thread waits: Ctrl-C (KeyboardInterrupt) during a
    setup or a solve stops it at its next check (gpusolve_interrupt), and is raised once it has stopped.
    """

    def __init__(self, A=None, settings=None, config=None, config_text=None, monitor=None):
        self._lib = _library()
        self._h = ctypes.c_void_p()
        self._worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="gpusolve")
        self._worker_id = self._worker.submit(threading.get_ident).result()
        self._monitor_cb = None
        self.report = {}
        settings = dict(settings or {})
        self._device_default = False
        items = [_setting_text(k, v) for k, v in settings.items()]
        arr = (ctypes.c_char_p * (len(items) + 1))(*items, None)
        path = os.fspath(config).encode() if config is not None else None
        text = config_text.encode() if config_text is not None else None
        code = self._lib.gpusolve_create(ctypes.byref(self._h), path, text, arr)
        if not self._h:
            raise MemoryError("gpusolve: no memory for a solver")
        self._settings = settings
        self._check(code)
        if monitor is not None:
            self.set_monitor(monitor)
        if A is not None:
            self.set_matrix(A)

    # -- lifetime --
    def close(self):
        self._close(finalizing=False)

    def _close(self, finalizing):
        # from __del__ (the garbage collector may run it inside the executor's own locked code) nothing
        # goes through the executor: the handle is destroyed here, and the idle thread ends when the
        # executor is collected
        worker = getattr(self, "_worker", None)
        if getattr(self, "_h", None):
            if finalizing:
                self._lib.gpusolve_destroy(ctypes.byref(self._h))
            else:
                self._run(self._lib.gpusolve_destroy, ctypes.byref(self._h))
            self._h = ctypes.c_void_p()
        self._worker = None
        if worker is not None and not finalizing:
            worker.shutdown(wait=False)  # idle: its last call has returned

    def _run(self, fn, *args):
        """fn(*args) on the solver's thread. A KeyboardInterrupt while it runs interrupts the call
        (gpusolve_interrupt), waits until it has stopped, and is raised."""
        worker = getattr(self, "_worker", None)
        if worker is None or threading.get_ident() == self._worker_id:
            return fn(*args)
        try:
            future = worker.submit(fn, *args)
        except RuntimeError:  # the interpreter is shutting down
            return fn(*args)
        try:
            return future.result()
        except KeyboardInterrupt:
            if self._h:
                self._lib.gpusolve_interrupt(self._h)
            while True:
                try:
                    future.result()
                    break
                except KeyboardInterrupt:  # pressed again while the call stops
                    continue
            raise

    def interrupt(self):
        """Asks the setup or solve running on this solver to stop at its next check; returns at once. Safe
        from another thread and from the monitor. The solve returns (x, info) with info["solve"]["reason"]
        "diverged_interrupted" and info["exit_code"] 6; a request made while none runs stops the next."""
        if getattr(self, "_h", None):
            self._lib.gpusolve_interrupt(self._h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self._close(finalizing=True)
        except Exception:
            pass

    # -- outcomes --
    def _report(self):
        text = self._lib.gpusolve_report_json(self._h)
        try:
            return json.loads(text.decode("utf-8", errors="replace")) if text else {}
        except ValueError:
            return {"raw": text.decode("utf-8", errors="replace")}

    def _check(self, code):
        """Raises Error when the last call failed (a solve that did not converge is no error)."""
        self.report = self._report()
        status = self._lib.gpusolve_error_status(self._h).decode()
        if code != 0 and status:
            raise Error(self._lib.gpusolve_error_message(self._h).decode("utf-8", errors="replace"), code, status,
                        self.report)
        return code

    def _handle(self):
        if not self._h:
            raise ValueError("the solver is closed")
        return self._h

    # -- configuration and matrix --
    def set(self, key, value):
        """One more setting (the next solve sets up again)."""
        self._check(self._run(self._lib.gpusolve_set, self._handle(), _setting_text(key, value)))
        self._settings[key] = value

    def set_monitor(self, monitor):
        """monitor(iteration, residual) at every Krylov iteration of later solves (None: none)."""
        if monitor is None:
            self._monitor_cb = None
            self._lib.gpusolve_set_monitor(self._handle(), _MONITOR(), None)
            return
        self._monitor_cb = _MONITOR(lambda ctx, it, res: monitor(it, res))
        self._lib.gpusolve_set_monitor(self._handle(), self._monitor_cb, None)

    def _use_device(self, arr):
        """With CuPy arrays: the cuda backend on the array's device, unless the settings chose."""
        if self._device_default:
            return
        self._device_default = True
        if "device.backend" not in self._settings:
            self.set("device.backend", "cuda")
        if "device.id" not in self._settings:
            self.set("device.id", int(arr.device.id))
        _cupy().cuda.get_current_stream().synchronize()

    def set_matrix(self, A):
        """The matrix (copied). A matrix with the pattern of the current one keeps the preconditioner's
        symbolic setup where its preprocessing allows (no matching, no scaling)."""
        n, indptr, indices, data, device = _csr_arrays(A)
        if device:
            self._use_device(data)
            _cupy().cuda.get_current_stream().synchronize()
        self.n = n
        self._check(self._run(self._lib.gpusolve_set_matrix, self._handle(), n, len(data), _pointer(indptr, device),
                              _pointer(indices, device), _pointer(data, device), _DEVICE if device else 0))

    def read_matrix(self, path):
        """The matrix from a Matrix Market file (.mtx, .mtx.gz)."""
        self._check(self._run(self._lib.gpusolve_read_matrix, self._handle(), os.fspath(path).encode()))
        self.n = self._lib.gpusolve_size(self._h)

    def setup(self):
        """Builds the setup of an explicit configuration now (else the first solve chooses and builds)."""
        return self._check(self._run(self._lib.gpusolve_setup, self._handle()))

    def solve(self, b, x0=None):
        """(x, info) for A x = b; x0 the initial guess (default 0). b a NumPy array (or a CuPy array: x is
        then a CuPy array on its device)."""
        device = _is_cupy(b)
        xp = _cupy() if device else np
        if getattr(b, "dtype", np.dtype(float)).kind == "c":
            raise TypeError("gpusolve solves real systems: b has complex values")
        b = xp.ascontiguousarray(b, dtype=xp.float64)
        if b.ndim == 2 and b.shape[1] == 1:
            b = b.reshape(-1)
        if b.ndim != 1:
            raise ValueError(f"b must be a vector, not of shape {b.shape}")
        n = getattr(self, "n", None)
        if n is not None and b.shape[0] != n:
            raise ValueError(f"b has {b.shape[0]} entries; A has {n} rows")
        flags = _DEVICE if device else 0
        if x0 is not None:
            x = xp.array(x0, dtype=xp.float64, copy=True).reshape(-1)
            if x.shape != b.shape:
                raise ValueError(f"x0 has {x.shape[0]} entries; b has {b.shape[0]}")
            flags |= _GUESS
        else:
            x = xp.zeros_like(b)
        if device:
            self._use_device(b)
            _cupy().cuda.get_current_stream().synchronize()
        code = self._run(self._lib.gpusolve_solve, self._handle(), _pointer(b, device), _pointer(x, device), flags)
        self._check(code)
        if self._lib.gpusolve_iterations(self._h) < 0:
            x[...] = np.nan  # no solve ran (the setup failed): no solution
        return x, self.report


def solve(A, b, settings=None, config=None, config_text=None, x0=None, monitor=None):
    """x, info = solve(A, b, settings={...}): one solve (the method chosen from A unless settings name it).
    See Solver for the arguments; info is the report of `gpusolve --json` as a dict."""
    with Solver(A, settings=settings, config=config, config_text=config_text, monitor=monitor) as s:
        return s.solve(b, x0=x0)
