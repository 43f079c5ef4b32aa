"""Shared by the reliability scripts (failures_test.py, data_safety_test.py): the command line
(GPUSOLVE SRC_DIR), a scratch folder, pass/fail bookkeeping, memory limits and the end of a run."""
import os, resource, shutil, sys, tempfile

exe, src = sys.argv[1], sys.argv[2]
data = os.path.join(src, "data", "matrices")
host = ["-s", "device.backend=host"]
tmp = None
failures, passed = [], 0


def scratch(prefix):
    """The scratch folder of this run (removed at the end when every check passed)."""
    global tmp
    tmp = tempfile.mkdtemp(prefix=prefix)
    return tmp


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(name)
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def limit_memory(gib):
    """A preexec_fn limiting the child's address space to gib GiB."""
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return apply


def no_temp_files(name):
    left = [f for f in os.listdir(tmp) if ".tmp." in f]
    check(name + ": no temporary files", not left, left)


def finish():
    print(f"{passed} passed, {len(failures)} failed")
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failures else 0)
