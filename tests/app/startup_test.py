"""Start-up: time.init (the backend's creation) and time.wall (process start to report) in every run's
JSON, on the host backend and, where a GPU is usable, on cuda with the device started while the matrix is
read (backend.init_overlapped); a sweep's later runs reuse the backend (time.init 0)."""
import json, os
from apptest import check, data, finish, run

west = os.path.join(data, "west0067.mtx")


def solve(*args):
    code, out, err = run(*args, "--json")
    objs = [json.loads(l) for l in out.splitlines() if l.strip()]
    return code, objs, err


for backend in ("host", "auto"):
    for matrix in (west, "gen:poisson2d:30"):
        code, objs, err = solve(matrix, "-s", f"device.backend={backend}")
        check(f"{backend} {matrix}: one object", code == 0 and len(objs) == 1, f"exit {code}: {err[-300:]}")
        if not objs:
            continue
        d = objs[0]
        t, b = d.get("time", {}), d.get("backend", {})
        check(f"{backend} {matrix}: time.init", isinstance(t.get("init"), float) and t["init"] >= 0, str(t))
        check(f"{backend} {matrix}: time.wall >= time.total",
              isinstance(t.get("wall"), float) and t["wall"] + 0.011 >= t.get("total", 1e9), str(t))
        check(f"{backend} {matrix}: time.wall below a minute", t.get("wall", 1e9) < 60, str(t))
        overlapped = b.get("init_overlapped")
        if b.get("name") == "host":
            check(f"{backend} {matrix}: the host backend is made on the main thread", overlapped is False, str(b))
        else:
            check(f"{backend} {matrix}: the GPU started during the read", overlapped is True, str(b))

# a sweep: the first run makes the backend, the others reuse it
code, objs, err = solve(west, "-s", "solver.rtol=1e-6,1e-8,1e-10")
check("sweep: three objects", code == 0 and len(objs) == 3, f"exit {code}: {err[-300:]}")
if len(objs) == 3:
    inits = [o["time"]["init"] for o in objs]
    check("sweep: only the first run starts the backend", inits[1] == 0 and inits[2] == 0, str(inits))
    check("sweep: time.wall grows", objs[0]["time"]["wall"] <= objs[2]["time"]["wall"],
          str([o["time"]["wall"] for o in objs]))

# an unreadable matrix: the device thread is joined and the read error reported as before
code, objs, err = solve("/nonexistent/a.mtx", "-s", "device.backend=auto")
check("missing matrix: exit 3", code == 3, f"exit {code}: {err[-300:]}")
check("missing matrix: one error object", len(objs) == 1 and objs[0].get("status") == "error", str(objs)[:300])

finish()
