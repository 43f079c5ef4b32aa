"""Helpers shared by the end-to-end tests tests/app/*_test.py (each run as SCRIPT GPUSOLVE SRC_DIR): the
arguments, a scratch directory, running gpusolve, pass/fail bookkeeping and the summary line + exit code."""
import os, subprocess, sys, tempfile

exe, src = sys.argv[1], sys.argv[2]
data = os.path.join(src, "data", "matrices")
failures = []
_count = {"passed": 0}
_scratch = {"dir": None}


def scratch(prefix):
    """A new temporary directory (prefix gs_<name>_), also where write() puts its files."""
    _scratch["dir"] = tempfile.mkdtemp(prefix=prefix)
    return _scratch["dir"]


def run(*args, env_extra=None, timeout=300):
    """gpusolve ARGS (environment plus env_extra): (exit code, stdout, stderr)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    p = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    """Counts a pass, or records and prints a failure with its detail."""
    if cond:
        _count["passed"] += 1
    else:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def write(name, text):
    """text into the file `name` of the scratch directory; its path."""
    path = os.path.join(_scratch["dir"], name)
    with open(path, "w") as f:
        f.write(text)
    return path


def finish(ok_code=0, note=""):
    """Prints "N passed, M failed[; note]" and exits: 1 on any failure, else ok_code."""
    print(f"{_count['passed']} passed, {len(failures)} failed" + (f"; {note}" if note else ""))
    sys.exit(1 if failures else ok_code)
