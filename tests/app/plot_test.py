#!/usr/bin/env python3
"""scripts/plot.py: the table (no matplotlib needed) and the install hint when matplotlib is missing
always; the convergence and sweep PNGs only where matplotlib imports (else exit 77: skipped).
Usage: plot_test.py GPUSOLVE SRC_DIR"""
import json, os, struct, subprocess, sys

from apptest import check, exe, finish, scratch, src
plot = os.path.join(os.path.abspath(src), "scripts", "plot.py")
tmp = scratch("gs_plot_")


def py(*args, env=None):
    p = subprocess.run([sys.executable, plot, *args], capture_output=True, text=True, timeout=300, cwd=tmp, env=env)
    return p.returncode, p.stdout, p.stderr


def png_size(path):
    """(width, height) from a PNG's IHDR chunk, None when the file is no PNG."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


# a real sweep with histories: 2 preconditioners x 2 restarts
jl = os.path.join(tmp, "runs.jsonl")
p = subprocess.run([exe, "gen:poisson2d:20", "--json", "-s", "device.backend=host", "-s", "preconditioner.type=none,ilu0",
                    "-s", "solver.restart=5,30", "--history", os.path.join(tmp, "h.csv")],
                   capture_output=True, text=True, timeout=300)
check("sweep ran", p.returncode == 0, p.stderr)
with open(jl, "w") as f:
    f.write(p.stdout)
runs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]

# table: needs no matplotlib
rc, out, err = py("table", jl)
lines = out.splitlines()
check("table exit", rc == 0, err)
check("table header", lines and lines[0].split()[:3] == ["solver.restart", "preconditioner.type", "solve.iterations"],
      lines[:1])
check("table rows", len(lines) == 5 and [l.split()[:2] for l in lines[1:]] ==
      [["5", "none"], ["5", "ilu0"], ["30", "none"], ["30", "ilu0"]], lines)
if len(runs) == 4 and len(lines) == 5:
    check("table iterations", [int(l.split()[2]) for l in lines[1:]] == [r["solve"]["iterations"] for r in runs], lines)
rc, out, err = py("table", jl, "--where", "preconditioner.type=ilu0")
check("table --where", rc == 0 and len(out.splitlines()) == 3, out)

# without matplotlib: the install commands, exit 2 (a stand-in package that fails to import)
fake = os.path.join(tmp, "nompl", "matplotlib")
os.makedirs(fake)
with open(os.path.join(fake, "__init__.py"), "w") as f:
    f.write("raise ImportError('no matplotlib here')\n")
env = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
rc, out, err = py("sweep", jl, "-o", "x.png", env=env)
check("missing matplotlib hint", rc == 2 and "pip install matplotlib" in err and "python3-matplotlib" in err, f"exit {rc}: {err}")

# errors that need no plotting
rc, out, err = py("sweep", jl, "--x", "solver.type")
check("unknown --x", rc == 2 and "not a key this sweep varied" in err and "preconditioner.type" in err, f"exit {rc}: {err}")
rc, out, err = py("sweep", os.path.join(tmp, "none.jsonl"))
check("missing JSON Lines", rc == 2 and "none.jsonl" in err, f"exit {rc}: {err}")
bad = os.path.join(tmp, "bad.jsonl")
with open(bad, "w") as f:
    f.write('{"a": 1}\nnot json\n')
rc, out, err = py("table", bad)
check("malformed JSON Lines", rc == 2 and "bad.jsonl:2" in err, f"exit {rc}: {err}")
rc, out, err = py("convergence", os.path.join(tmp, "h-0.csv"), "--label", "a", "--label", "b")
check("label count", rc == 2 and "--label" in err, f"exit {rc}: {err}")

try:
    import matplotlib  # noqa: F401
except ImportError:
    finish(77, "matplotlib not installed: PNG checks skipped")

rc, out, err = py("sweep", jl, "--x", "solver.restart", "--y", "solve.iterations", "--y", "time.setup+solve", "-o", "s.png")
size = png_size(os.path.join(tmp, "s.png"))
check("sweep PNG", rc == 0 and size is not None and size[0] > 600 and size[1] > 300, f"exit {rc}: {err} {size}")
check("sweep lines", "2 lines per panel" in out, out)
rc, out, err = py("sweep", jl, "--y", "solve.iterations", "--logx", "--logy", "-o", "s2.png")
check("sweep categorical x", rc == 0 and png_size(os.path.join(tmp, "s2.png")), f"exit {rc}: {err}")
rc, out, err = py("convergence", "--jsonl", jl, "-o", "c.png")
check("convergence from a sweep", rc == 0 and "4 curves" in out and png_size(os.path.join(tmp, "c.png")), f"exit {rc}: {out}{err}")
rc, out, err = py("convergence", os.path.join(tmp, "h-0.csv"), os.path.join(tmp, "h-3.csv"), "--label", "none",
                  "--label", "ilu0", "-o", "c2.png")
check("convergence from files", rc == 0 and "2 curves" in out and png_size(os.path.join(tmp, "c2.png")), f"exit {rc}: {err}")
rc, out, err = py("convergence", "--jsonl", jl, "--where", "solver.restart=30", "-o", "c3.png")
check("convergence --where", rc == 0 and "2 curves" in out, f"exit {rc}: {out}{err}")
rc, out, err = py("sweep", jl, "--y", "solve.nothing", "-o", "s3.png")
check("unknown metric", rc == 2 and "solve.nothing" in err, f"exit {rc}: {err}")

finish()
