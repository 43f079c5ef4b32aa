#!/usr/bin/env python3
"""The lab material cannot go stale: every data/labs/*.cfg loads (--print-config); each names its host
and GPU commands in its header, which docs/labs.md shows verbatim; every host command expands to its
sweep (--dry-run); the host variants of lab 2 (BILU blocks) and lab 4 (RAS overlap) run in full with
the trends the lab asks students to observe. Usage: labs_test.py GPUSOLVE SRC_DIR"""
import glob, json, os, re, shlex, subprocess

from apptest import check, exe, finish, src
labs = sorted(glob.glob(os.path.join(src, "data", "labs", "lab*.cfg")))


def commands(cfg):
    """The '#   ./build/gpusolve ...' lines of a lab config: [host command, GPU command]."""
    with open(cfg) as f:
        return [l[len("#   "):].strip() for l in f if l.startswith("#   ./build/gpusolve ")]


def argv_of(cmd, extra=()):
    """gpusolve's arguments in a documented command: paths made absolute, outputs dropped."""
    words = shlex.split(cmd.split(">")[0])
    out, skip = [], False
    for w in words[1:]:
        if skip:
            skip = False
            continue
        if w in ("--history", "-o"):
            skip = True
            continue
        out.append(os.path.join(src, w) if w.startswith("data/") else w)
    return [exe, *out, *extra]


check("four labs or more", len(labs) >= 4, labs)
try:
    with open(os.path.join(src, "docs", "labs.md")) as f:
        doc = f.read()
except OSError as e:
    doc = ""
    check("docs/labs.md exists", False, str(e))
for cfg in labs:
    name = os.path.basename(cfg)
    p = subprocess.run([exe, "-c", cfg, "--print-config"], capture_output=True, text=True, timeout=60)
    check(f"{name} loads", p.returncode == 0, p.stderr)
    cmds = commands(cfg)
    check(f"{name} has host and GPU commands", len(cmds) == 2 and "device.backend=host" in cmds[0]
          and "device.backend" not in cmds[1], cmds)
    for c in cmds:
        check(f"{name} command in docs/labs.md", c in doc, c)
    if cmds:
        p = subprocess.run(argv_of(cmds[0], ["--dry-run", "--json"]), capture_output=True, text=True, timeout=60)
        runs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        check(f"{name} host command is a sweep", p.returncode == 0 and len(runs) >= 3, f"exit {p.returncode}: {p.stderr}")
        m = re.search(r"gen:\S+", cmds[0])
        check(f"{name} host matrix is generated", m is not None, cmds[0])


# the script that runs them all is valid shell, and finds a host and a GPU command in every config
script = os.path.join(src, "data", "labs", "run_labs.sh")
p = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
check("run_labs.sh parses", p.returncode == 0, p.stderr)
p = subprocess.run(["bash", script], capture_output=True, text=True)
check("run_labs.sh usage", p.returncode == 2 and "host|gpu" in p.stderr, f"exit {p.returncode}: {p.stderr}")


def run_lab(prefix):
    cfg = next(c for c in labs if os.path.basename(c).startswith(prefix))
    p = subprocess.run(argv_of(commands(cfg)[0]), capture_output=True, text=True, timeout=600)
    runs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    check(f"{prefix} host run exit", p.returncode == 0, f"exit {p.returncode}: {p.stderr[:500]}")
    check(f"{prefix} every run converged", runs and all(r.get("solve", {}).get("converged") for r in runs),
          [r.get("solve", {}).get("reason") for r in runs])
    return runs


# lab 2: BILU; blocks = 1 is ILU(0); more blocks, fewer levels and (on this Laplacian) more iterations
runs = run_lab("lab2")
if runs:
    blocks = [r["sweep"]["varied"]["preconditioner.blocks"] for r in runs]
    its = [r["solve"]["iterations"] for r in runs]
    levels = [r["trisolve"]["lower"]["levels"] for r in runs]
    check("lab2 blocks swept", blocks == sorted(blocks) and len(blocks) >= 4, blocks)
    check("lab2 iterations grow with blocks", its[-1] > its[0] and all(i >= its[0] for i in its), its)
    check("lab2 levels shrink with blocks", levels[-1] < levels[0] and levels == sorted(levels, reverse=True), levels)
    ilu0 = subprocess.run([exe, runs[0]["matrix"]["source"], "--json", "-s", "device.backend=host", "-s",
                           "preconditioner.type=ilu0", "-s", "solver.type=gmres", "-s", "solver.restart=50",
                           "-s", "system.rhs=Ax"], capture_output=True, text=True, timeout=300)
    check("lab2 one block = ILU(0)", json.loads(ilu0.stdout)["solve"]["iterations"] == its[0],
          (ilu0.stdout[:200], its[0]))

# lab 4: RAS; overlap 0 = BILU with the same blocks; overlap lowers the iteration count, grows the factors
runs = run_lab("lab4")
if runs:
    ov = [r["sweep"]["varied"]["preconditioner.overlap"] for r in runs]
    its = [r["solve"]["iterations"] for r in runs]
    nnz = [r["preconditioner"]["extended_nnz"] for r in runs]
    check("lab4 overlap swept", ov == sorted(ov) and ov[0] == 0 and len(ov) >= 3, ov)
    check("lab4 overlap lowers iterations", its[-1] < its[0] and its[1] < its[0], its)
    check("lab4 local factors grow", nnz == sorted(nnz) and nnz[-1] > nnz[0], nnz)
    b = runs[0]["config"]["preconditioner"]["blocks"]
    bilu = subprocess.run([exe, runs[0]["matrix"]["source"], "--json", "-s", "device.backend=host", "-s",
                           "preconditioner.type=bilu", "-s", f"preconditioner.blocks={b}", "-s", "solver.type=gmres", "-s", "solver.restart=50",
                           "-s", "system.rhs=Ax"], capture_output=True, text=True, timeout=300)
    check("lab4 overlap 0 = BILU", json.loads(bilu.stdout)["solve"]["iterations"] == its[0], (bilu.stdout[:200], its[0]))

finish()
