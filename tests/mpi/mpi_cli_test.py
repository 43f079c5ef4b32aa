"""gpusolve under mpirun against one process: block Jacobi on 2 and 3 ranks gives the iterations (+-1)
and the solution (to rounding) of preconditioner.blocks = P on one process; a local method (ilu0) means
block Jacobi with that method; RAS with overlap 0, 1 and 2 (local iluk, ilut, parilu) gives those of
the one-process RAS with P parts, subdomain sizes included; a rank without rows; a matrix without
couplings between parts; a zero pivot in one rank's block or subdomain ends every rank with the
numerical-failure exit code and one report whose message names the row as the input numbers it (as one
process does); an unreadable file and an unsupported option end every rank with one message and their
exit code; the report names the transport (MPI without GPUs or when asked, refusing NCCL on the host); a
SIGINT or SIGTERM to one rank alone stops every rank at the same iteration with exit 6 and nothing written;
preconditioner.partition = contiguous gives the ranks the one-process contiguous parts.
With --four: only the equivalences, on 4 ranks (block Jacobi with GMRES, BiCGStab and CG, RAS(1), and
contiguous parts), so that a machine with four GPUs checks them with a GPU and NCCL per rank.

usage: mpi_cli_test.py GPUSOLVE MPIEXEC [SKIP-REASON] [--four]"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "app"))
import mpitest  # noqa: E402
import schemacheck  # noqa: E402

with open(os.path.join(HERE, "..", "..", "docs", "gpusolve-result.schema.json")) as f:
    VALIDATE = schemacheck.validator(json.load(f))

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read_vector(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("%")]
    return [float(v) for v in lines[1:]]


def rel_diff(a, b):
    num = sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5
    den = sum(y * y for y in b) ** 0.5
    return num / den if den else num


def single(gpusolve, args):
    p = subprocess.run([gpusolve] + args, capture_output=True, text=True, timeout=120)
    return p


def write_mm(path, n, entries):
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{n} {n} {len(entries)}\n")
        for i, j, v in entries:
            f.write(f"{i + 1} {j + 1} {v!r}\n")


def poisson_entries(nx, ny, zero_diag_row=None, zero_pivot_row=None):
    """The 5-point Laplacian; zero_diag_row: a zero diagonal entry there; zero_pivot_row: a zero diagonal
    and no entries left of it in that row, so that ILU meets a zero pivot in that row whatever rows come
    before it."""
    e = []
    for y in range(ny):
        for x in range(nx):
            i = y * nx + x
            e.append((i, i, 0.0 if i in (zero_diag_row, zero_pivot_row) else 4.0))
            for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                j = (y + dy) * nx + x + dx
                if 0 <= x + dx < nx and 0 <= y + dy < ny and not (i == zero_pivot_row and j < i):
                    e.append((i, j, -1.0))
    return e


def failure_detail(p, label):
    """The detail of the one JSON report of a run that failed numerically (exit 4), or ""."""
    check(p.returncode == 4, f"{label}: exit {p.returncode} (expected 4): {p.stderr}")
    objs = [l for l in p.stdout.splitlines() if l.strip()]
    check(len(objs) == 1, f"{label}: {len(objs)} JSON objects")
    if len(objs) != 1:
        return ""
    r = json.loads(objs[0])
    check(r["solve"]["reason"] == "diverged_pc_failed", f"{label}: reason {r['solve']}")
    return r["solve"].get("detail", "")


RAS_KEYS = ("blocks", "blocks_nonempty", "overlap", "extended_size", "extended_nnz", "subdomain_size_max",
            "nnz_L", "nnz_U", "fill_ratio")


def ras_cases(gpusolve, mpiexec, tmp):
    """RAS across ranks against the one-process RAS with as many parts."""
    for np in (2, 3):
        for delta in (0, 1, 2):
            ras = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ras", "-s", f"preconditioner.overlap={delta}"]
            rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:30", np, ras,
                             ras + ["-s", f"preconditioner.blocks={np}"], f"gmres ras({delta}) np{np}", RAS_KEYS)
            if rp:
                par = rp["parallel"]
                check(len(par.get("overlap", [])) == np and len(par.get("subdomain_nnz", [])) == np,
                      f"ras({delta}) np{np}: parallel object {par}")
                check((delta == 0) == (sum(par.get("overlap", [1])) == 0), f"ras({delta}) np{np}: overlap {par}")
                check(rp["preconditioner"]["blocks"] == np and rp["preconditioner"]["overlap"] == delta,
                      f"ras({delta}) np{np}: preconditioner {rp['preconditioner']}")
    for np, local, delta in ((2, "ilut", 1), (3, "parilu", 2), (3, "iluk", 1)):
        ras = ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=ras", "-s", f"preconditioner.local={local}",
               "-s", f"preconditioner.overlap={delta}", "-s", "preconditioner.fill_level=1"]
        equivalence(gpusolve, mpiexec, tmp, "gen:convdiff3d:8", np, ras, ras + ["-s", f"preconditioner.blocks={np}"],
                    f"bicgstab ras({delta}) {local} np{np}", RAS_KEYS)
    # a rank without rows: 2 rows on 3 ranks
    ras = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ras", "-s", "preconditioner.overlap=1"]
    rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:2x1", 3, ras, ras + ["-s", "preconditioner.blocks=3"],
                     "ras empty rank")
    if rp:
        par = rp["parallel"]
        check(0 in par["rows"] and par["overlap"][par["rows"].index(0)] == 0, f"ras empty rank: {par}")
    # no couplings between parts: no overlap
    path = os.path.join(tmp, "blockdiag.mtx")
    rp = equivalence(gpusolve, mpiexec, tmp, path, 2, ras, ras + ["-s", "preconditioner.blocks=2"], "ras block diagonal")
    if rp:
        check(rp["parallel"]["overlap"] == [0, 0], f"ras block diagonal: overlap {rp['parallel']['overlap']}")


def row_names(gpusolve, mpiexec, tmp):
    """A zero pivot in one rank's rows: every rank ends with exit 4 and one report, whose message names the
    rank and the row as the file numbers it (1-based), the row one process names."""
    path = os.path.join(tmp, "zeropivot22.mtx")  # row 23 lies in rank 1's part on 3 ranks, not first there
    write_mm(path, 100, poisson_entries(10, 10, zero_pivot_row=22))
    path77 = os.path.join(tmp, "zeropivot77.mtx")  # row 78 lies in rank 0's part on 2 ranks, not first there
    write_mm(path77, 100, poisson_entries(10, 10, zero_pivot_row=77))
    base = ["--json", "-s", "solver.type=gmres", "-s", "preconditioner.zero_pivot=error"]
    cases = [(path, 3, "23", "rank 1: ", ["-s", "preconditioner.type=ras", "-s", "preconditioner.overlap=1"],
              ["-s", "preconditioner.type=ras", "-s", "preconditioner.blocks=3", "-s", "preconditioner.overlap=1"]),
             (path, 3, "23", "rank 1: ", ["-s", "preconditioner.type=ilu0"], ["-s", "preconditioner.type=ilu0"]),
             (path, 3, "23", "rank 1: ", ["-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=6"],
              ["-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=3"]),
             (path, 3, "23", "rank 1: ", ["-s", "preconditioner.type=jacobi"], ["-s", "preconditioner.type=jacobi"]),
             (path77, 2, "78", "", ["-s", "preconditioner.type=ras", "-s", "preconditioner.overlap=2"],
              ["-s", "preconditioner.type=ras", "-s", "preconditioner.blocks=2", "-s", "preconditioner.overlap=2"]),
             (path77, 2, "78", "", ["-s", "preconditioner.type=ilu0"], ["-s", "preconditioner.type=ilu0"])]
    for m, np, row, where, mpi_sets, one_sets in cases:
        label = f"zero pivot row {row} np{np} {' '.join(mpi_sets[1::2])}"
        p = mpitest.run(mpiexec, np, [gpusolve, m] + base + mpi_sets)
        detail = failure_detail(p, label)
        named = f"row {row} is" if "jacobi" in label else f"row {row} (1-based)"
        check(named in detail, f"{label}: the message does not name {named}: {detail}")
        check(where in detail if where else "rank " not in detail, f"{label}: the message's rank: {detail}")
        s = single(gpusolve, [m] + base + one_sets + ["-s", "solver.fallback=none"])
        one = failure_detail(s, label + " (one process)")
        check(named in one, f"{label}: one process names another row: {one}")


def rank_pids(token):
    """The pids of the processes whose command line holds token (the ranks of one run), lowest first."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if token.encode() in argv and not any(b"mpirun" in a or b"mpiexec" in a or b"orterun" in a for a in argv[:1]):
            pids.append(int(d))
    return sorted(pids)


def interrupt_one_rank(gpusolve, mpiexec, tmp, which, sig):
    """SIGINT or SIGTERM to one rank alone in the middle of a long solve: every rank stops at the same
    iteration (the ranks agree on interrupts), exit 6 everywhere, one message, nothing written, no hang."""
    label = f"{signal.Signals(sig).name} to rank pid #{which}"
    out = os.path.join(tmp, f"x_int{which}.mtx")
    token = f"system.seed={4711 + which}"  # marks this run's ranks in /proc
    cmd = [mpiexec, "-np", "2", gpusolve, "gen:poisson3d:40", "-s", "solver.type=cg", "-s",
           "preconditioner.type=none", "-s", "solver.rtol=1e-300", "-s", "solver.max_iterations=10000000", "-s",
           "solver.stagnation_window=0", "-s", token, "--monitor=20", "--json", "-o", out]
    p = subprocess.Popen(cmd, env=mpitest.environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids, t0 = [], time.time()
    while len(pids) < 2 and time.time() - t0 < 60 and p.poll() is None:
        time.sleep(0.2)
        pids = rank_pids(token)
    time.sleep(2.0)  # into the solve (setup takes well under this on 64,000 rows)
    if len(pids) == 2 and p.poll() is None:
        os.kill(pids[which], sig)
    try:
        stdout, stderr = p.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
        check(False, f"{label}: the ranks hung after one was interrupted")
        return
    check(len(pids) == 2, f"{label}: found ranks {pids}")
    check(p.returncode == 6, f"{label}: exit {p.returncode} (expected 6): {stderr[-500:]}")
    msgs = [l for l in stderr.splitlines() if l.startswith("gpusolve:")]
    check(len(msgs) == 1 and "interrupted by" in msgs[0] and "nothing written" in msgs[0],
          f"{label}: messages {msgs}")
    objs = [l for l in stdout.splitlines() if l.strip().startswith("{")]
    check(len(objs) == 1, f"{label}: {len(objs)} JSON objects")
    if len(objs) == 1:
        r = json.loads(objs[0])
        check(r["solve"]["reason"] == "diverged_interrupted" and r["exit_code"] == 6, f"{label}: {r['solve']}")
    check(not os.path.exists(out), f"{label}: the solution was written")


def equivalence(gpusolve, mpiexec, tmp, matrix, np, mpi_sets, single_sets, label, same_keys=()):
    """The distributed run against one process: iterations, solution, the report's shape, and the
    preconditioner keys same_keys equal in both reports; the distributed report, or None."""
    o1, op = os.path.join(tmp, "x1.mtx"), os.path.join(tmp, "xp.mtx")
    base = ["--json", "-s", "solver.rtol=1e-10", "--threads", "1"]
    s = single(gpusolve, [matrix] + base + single_sets + ["-o", o1])
    p = mpitest.run(mpiexec, np, [gpusolve, matrix] + base + mpi_sets + ["-o", op])
    check(s.returncode == 0, f"{label}: one process exit {s.returncode}: {s.stderr}")
    check(p.returncode == 0, f"{label}: {np} ranks exit {p.returncode}: {p.stderr}")
    if s.returncode or p.returncode:
        return None
    rs, rp = json.loads(s.stdout), json.loads(p.stdout)
    check(len(p.stdout.strip().splitlines()) == 1, f"{label}: {np} ranks printed more than one JSON object")
    its, itp = rs["solve"]["iterations"], rp["solve"]["iterations"]
    check(abs(its - itp) <= 1, f"{label}: iterations {itp} on {np} ranks, {its} on one process")
    d = rel_diff(read_vector(op), read_vector(o1))
    check(d < 1e-8, f"{label}: solutions differ by {d:.3g}")
    errs = VALIDATE(rp)
    check(not errs, f"{label}: the report does not match docs/gpusolve-result.schema.json: {errs[:3]}")
    par = rp.get("parallel", {})
    check(par.get("ranks") == np and len(par.get("rows", [])) == np, f"{label}: parallel object {par}")
    check(sum(par.get("rows", [])) == rs["matrix"]["rows"], f"{label}: the ranks' rows do not add up")
    check(par.get("transport") in ("nccl", "mpi") and par.get("transport_note"), f"{label}: transport {par}")
    if rp["backend"]["name"] == "host+mpi" or "device.transport=mpi" in mpi_sets:
        check(par.get("transport") == "mpi", f"{label}: transport {par.get('transport')} without GPUs or asked mpi")
    for k in same_keys:
        a, b = rs["preconditioner"].get(k), rp["preconditioner"].get(k)
        check(a is not None and a == b, f"{label}: preconditioner.{k} {b} on {np} ranks, {a} on one process")
    return rp


def four_ranks(gpusolve, mpiexec, tmp):
    """The equivalences on 4 ranks."""
    b = ["-s", "preconditioner.blocks=4"]
    for solver, matrix in (("gmres", "gen:poisson2d:30"), ("cg", "gen:poisson2d:25")):
        bj = ["-s", f"solver.type={solver}", "-s", "preconditioner.type=bilu"] + b
        equivalence(gpusolve, mpiexec, tmp, matrix, 4, bj, bj, f"{solver} bilu np4")
    equivalence(gpusolve, mpiexec, tmp, "gen:convdiff3d:8", 4,
                ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=ilu0"],
                ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=bilu"] + b, "bicgstab ilu0 blocks np4")
    ras = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ras", "-s", "preconditioner.overlap=1"]
    equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:30", 4, ras, ras + b, "gmres ras(1) np4", RAS_KEYS)
    cont = ["-s", "preconditioner.partition=contiguous"]
    rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:31", 4,
                     ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"] + cont,
                     ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu"] + b + cont,
                     "gmres ilu0 contiguous np4")
    if rp:
        rows = rp["parallel"]["rows"]
        check(max(rows) - min(rows) <= 1 and sum(rows) == 961, f"contiguous np4: rows {rows}")


def main():
    args = [a for a in sys.argv[1:] if a != "--four"]
    four = len(args) < len(sys.argv) - 1
    if len(args) < 2:
        print(__doc__)
        return 2
    gpusolve = args[0]
    mpiexec = mpitest.start("mpi_cli", args[1], args[2] if len(args) > 2 else "")
    if not mpiexec:
        return mpitest.SKIP
    if four:
        with tempfile.TemporaryDirectory() as tmp:
            four_ranks(gpusolve, mpiexec, tmp)
        print(f"mpi_cli --four: {len(failures)} failures" if failures else "mpi_cli --four: ok")
        return 1 if failures else 0
    with tempfile.TemporaryDirectory() as tmp:
        # block Jacobi = BILU with the same parts, 2 and 3 ranks, GMRES and CG
        for np in (2, 3):
            b = [f"preconditioner.blocks={np}"]
            equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:30", np,
                        ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s", b[0]],
                        ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s", b[0]], f"gmres bilu np{np}")
            equivalence(gpusolve, mpiexec, tmp, "gen:convdiff3d:8", np,
                        ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=ilu0"],
                        ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=bilu", "-s", b[0]],
                        f"bicgstab ilu0 blocks np{np}")
        equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:25", 2,
                    ["-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=2"],
                    ["-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=2"], "cg bilu np2")
        # contiguous row ranges (preconditioner.partition) instead of METIS parts, block Jacobi and RAS
        cont = ["-s", "preconditioner.partition=contiguous"]
        rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:31", 3,
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"] + cont,
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=3"]
                         + cont, "gmres ilu0 contiguous np3")
        if rp:
            check(rp["parallel"]["partition"] == "contiguous", f"contiguous: parallel.partition {rp['parallel']}")
            rows = rp["parallel"]["rows"]
            check(max(rows) - min(rows) <= 1 and sum(rows) == 961, f"contiguous: rows {rows}")
        ras = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ras", "-s", "preconditioner.overlap=1"] + cont
        rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:30", 2, ras, ras + ["-s", "preconditioner.blocks=2"],
                         "gmres ras(1) contiguous np2", RAS_KEYS)
        if rp:
            check(rp["preconditioner"].get("partition") == "contiguous", f"contiguous ras: {rp['preconditioner']}")
        # the fused CG through host buffers (on GPUs the default is NCCL where each rank has its own)
        equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:25", 2,
                    ["-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=2",
                     "-s", "device.transport=mpi"],
                    ["-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=2"],
                    "cg bilu np2 transport mpi")
        # a rank without rows: 2 rows on 3 ranks
        rp = equivalence(gpusolve, mpiexec, tmp, "gen:poisson2d:2x1", 3,
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"],
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=3"],
                         "empty rank")
        if rp:
            check(0 in rp["parallel"]["rows"], f"empty rank: rows {rp['parallel']['rows']}")

        # no couplings between parts: two separate grids, one per rank
        blk = poisson_entries(6, 5) + [(i + 30, j + 30, v) for i, j, v in poisson_entries(6, 5)]
        path = os.path.join(tmp, "blockdiag.mtx")
        write_mm(path, 60, blk)
        rp = equivalence(gpusolve, mpiexec, tmp, path, 2,
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"],
                         ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=2"],
                         "block diagonal")
        if rp:
            check(rp["parallel"]["halo"] == [0, 0], f"block diagonal: halo {rp['parallel']['halo']}")
            check("overlap" not in rp["parallel"], f"block diagonal: overlap without RAS {rp['parallel']}")

        ras_cases(gpusolve, mpiexec, tmp)
        row_names(gpusolve, mpiexec, tmp)

        # a zero pivot in one rank's block: every rank exits 4, one report
        path = os.path.join(tmp, "zeropivot.mtx")
        write_mm(path, 100, poisson_entries(10, 10, zero_diag_row=0))
        p = mpitest.run(mpiexec, 2, [gpusolve, path, "--json", "-s", "solver.type=gmres",
                                     "-s", "preconditioner.type=ilu0"])
        check(p.returncode == 4, f"zero pivot: exit {p.returncode} (expected 4): {p.stderr}")
        objs = [l for l in p.stdout.splitlines() if l.strip()]
        check(len(objs) == 1, f"zero pivot: {len(objs)} JSON objects")
        if len(objs) == 1:
            r = json.loads(objs[0])
            check(r["solve"]["reason"] == "diverged_pc_failed" and "pivot" in r["solve"]["detail"],
                  f"zero pivot: reason {r['solve']}")

        # errors before the solve: one message, the same exit code everywhere
        p = mpitest.run(mpiexec, 2, [gpusolve, os.path.join(tmp, "missing.mtx")])
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 3 and len(msgs) == 1, f"missing file: exit {p.returncode}, messages {msgs}")
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson2d:8", "-s", "preconditioner.type=ras", "-s",
                                     "preconditioner.blocks=4"])
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 2 and len(msgs) == 1 and "one subdomain per rank" in p.stderr,
              f"ras with 4 blocks on 2 ranks: exit {p.returncode}, {msgs}")
        p = mpitest.run(mpiexec, 3, [gpusolve, "gen:poisson2d:8", "-s", "preconditioner.type=bilu",
                                     "-s", "preconditioner.blocks=4"])
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 2 and len(msgs) == 1, f"blocks not a multiple: exit {p.returncode}, {msgs}")
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson2d:8", "-s", "device.backend=host", "-s",
                                     "device.transport=nccl"])
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 2 and len(msgs) == 1 and "device.transport" in p.stderr,
              f"nccl on the host: exit {p.returncode}, {msgs}")
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson2d:8", "-s", "system.reorder=rcm"])
        check(p.returncode == 2 and "system.reorder" in p.stderr, f"reorder: exit {p.returncode}")
        # --monitor: rank 0's lines, every 5th iteration and the last, the same norms as one process
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson2d:20", "-s", "solver.type=cg", "-s",
                                     "preconditioner.type=bilu", "-s", "preconditioner.blocks=2", "--monitor=5",
                                     "--json"])
        s = single(gpusolve, ["gen:poisson2d:20", "-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s",
                              "preconditioner.blocks=2", "--json"])
        rows = [l.split() for l in p.stderr.splitlines() if l.strip() and l.split()[0].isdigit()]
        its = [int(r[0]) for r in rows]
        check(p.returncode == 0 and len(p.stdout.strip().splitlines()) == 1, f"monitor: exit {p.returncode}")
        check(p.stderr.count("# iteration") == 1, f"monitor: one header line (rank 0 only): {p.stderr[:300]}")
        last = json.loads(s.stdout)["solve"]["iterations"] if s.returncode == 0 else -1
        check(its[:2] == [0, 5] and its[-1] == last and all(i % 5 == 0 for i in its[:-1]),
              f"monitor: iterations {its}, one process {last}")
        # --history: rank 0 writes the rows of every iteration, the same norms as one process
        hist_mpi, hist_one = os.path.join(tmp, "h_mpi.csv"), os.path.join(tmp, "h_one.csv")
        args = ["gen:poisson2d:20", "-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s",
                "preconditioner.blocks=2"]
        p = mpitest.run(mpiexec, 2, [gpusolve] + args + ["--history", hist_mpi, "--json"])
        s1 = single(gpusolve, args + ["--history", hist_one])
        check(p.returncode == 0 and s1.returncode == 0, f"history: exit {p.returncode} / {s1.returncode}")
        if os.path.exists(hist_mpi) and os.path.exists(hist_one):
            rm = [l.split(",") for l in open(hist_mpi).read().splitlines()]
            ro = [l.split(",") for l in open(hist_one).read().splitlines()]
            check(rm[0] == ro[0] and len(rm) == len(ro), f"history: {len(rm)} lines on 2 ranks, {len(ro)} on one")
            check(all(abs(float(a[1]) - float(b[1])) <= 1e-8 * max(1.0, abs(float(b[1])))
                      for a, b in zip(rm[1:], ro[1:])), "history: residuals differ from one process")
            check(json.loads(p.stdout).get("output", {}).get("history") == hist_mpi, "history: output.history")
        else:
            check(False, "history: a file is missing")
        check(not [f for f in os.listdir(tmp) if ".tmp." in f], f"history: temporary files left: {os.listdir(tmp)}")
        # a signal to one rank only (rank 0 or the other): all stop together
        interrupt_one_rank(gpusolve, mpiexec, tmp, 0, signal.SIGINT)
        interrupt_one_rank(gpusolve, mpiexec, tmp, 1, signal.SIGTERM)
        # text report: one report, from rank 0, with its parallel line
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson2d:12"])
        check(p.returncode == 0 and p.stdout.count("parallel ") == 1 and p.stdout.count("reason=") == 1,
              f"text report: exit {p.returncode}: {p.stdout}")
    if failures:
        print(f"mpi_cli: {len(failures)} failures")
        return 1
    print("mpi_cli: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
