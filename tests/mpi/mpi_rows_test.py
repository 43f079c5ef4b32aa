"""gpusolve under mpirun with rows made where they live (preconditioner.partition = contiguous and a
generated matrix or a PETSc binary file): every rank generates or reads its own rows, and the run equals
the one where rank 0 reads the same matrix from a Matrix Market file and scatters it (the same iterations,
the solution to rounding), and one process with the same contiguous blocks; b = A x* with a random x* made
per rank gives one process's b and error against x*; -b and -x files are read by rank 0 and scattered;
"auto" resolves from the distributed matrix (SPD-looking only when the couplings between ranks are
symmetric too); a bad entry in one rank's part of a PETSc file ends every rank with exit 3 and one message
naming the file's row; a file named .bin that is not a PETSc file is left to rank 0's reader, which refuses
it with one message.

usage: mpi_rows_test.py GPUSOLVE MPIEXEC [SKIP-REASON]"""
import json
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpitest  # noqa: E402
from mpi_cli_test import check, failures, poisson_entries, read_vector, rel_diff, single, write_mm  # noqa: E402


def write_petsc(path, n, entries):
    """A PETSc binary matrix (big-endian, 32-bit indices), rows sorted."""
    rows = [[] for _ in range(n)]
    for i, j, v in entries:
        rows[i].append((j, v))
    for r in rows:
        r.sort()
    nnz = len(entries)
    with open(path, "wb") as f:
        f.write(struct.pack(">4i", 1211216, n, n, nnz))
        f.write(struct.pack(f">{n}i", *[len(r) for r in rows]))
        f.write(struct.pack(f">{nnz}i", *[j for r in rows for j, _ in r]))
        f.write(struct.pack(f">{nnz}d", *[v for r in rows for _, v in r]))


def write_vec(path, xs):
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n")
        f.write(f"{len(xs)} 1\n")
        for x in xs:
            f.write(f"{x!r}\n")


BASE = ["--json", "-s", "solver.rtol=1e-10", "--threads", "1"]
CONT = ["-s", "preconditioner.partition=contiguous"]


def run_mpi(gpusolve, mpiexec, np, matrix, sets, out, label):
    p = mpitest.run(mpiexec, np, [gpusolve, matrix] + BASE + sets + ["-o", out])
    check(p.returncode == 0, f"{label}: exit {p.returncode}: {p.stderr[-600:]}")
    objs = [l for l in p.stdout.splitlines() if l.strip()]
    check(len(objs) == 1, f"{label}: {len(objs)} JSON objects")
    return json.loads(objs[0]) if p.returncode == 0 and len(objs) == 1 else None


def same_run(a, b, xa, xb, label, exact=False):
    """Two reports and solution files of one system: iterations equal (exact) or within 1, solutions to
    rounding."""
    if not a or not b:
        return
    ia, ib = a["solve"]["iterations"], b["solve"]["iterations"]
    check(ia == ib if exact else abs(ia - ib) <= 1, f"{label}: iterations {ia} and {ib}")
    d = rel_diff(read_vector(xa), read_vector(xb))
    check(d < (1e-12 if exact else 1e-8), f"{label}: solutions differ by {d:.3g}")
    check(a["matrix"]["rows"] == b["matrix"]["rows"] and a["matrix"]["nnz"] == b["matrix"]["nnz"],
          f"{label}: matrix {a['matrix']} and {b['matrix']}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    gpusolve = sys.argv[1]
    mpiexec = mpitest.start("mpi_rows", sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
    if not mpiexec:
        return mpitest.SKIP
    with tempfile.TemporaryDirectory() as tmp:
        x = {k: os.path.join(tmp, f"x_{k}.mtx") for k in ("gen", "mtx", "petsc", "one")}
        nx, ny = 31, 29  # 899 rows: not a multiple of 2 or 3
        e = poisson_entries(nx, ny)
        mtx, bin_ = os.path.join(tmp, "p.mtx"), os.path.join(tmp, "p.petsc")
        write_mm(mtx, nx * ny, e)
        write_petsc(bin_, nx * ny, e)
        gen = f"gen:poisson2d:{nx}x{ny}"
        gmres = ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"] + CONT
        for np in (2, 3):
            rg = run_mpi(gpusolve, mpiexec, np, gen, gmres, x["gen"], f"gen np{np}")
            rm = run_mpi(gpusolve, mpiexec, np, mtx, gmres, x["mtx"], f"mtx np{np}")
            rb = run_mpi(gpusolve, mpiexec, np, bin_, gmres, x["petsc"], f"petsc np{np}")
            if rg and rm and rb:
                check(rg["where"]["read"] == "every rank generates its rows", f"gen np{np}: where {rg['where']}")
                check(rb["where"]["read"] == "every rank reads its rows", f"petsc np{np}: where {rb['where']}")
                check(rm["where"]["read"] == "host (rank 0)", f"mtx np{np}: where {rm['where']}")
                check(rg["parallel"]["rows"] == rm["parallel"]["rows"] == rb["parallel"]["rows"],
                      f"np{np}: rows {rg['parallel']['rows']} {rm['parallel']['rows']} {rb['parallel']['rows']}")
                check(rg["parallel"]["halo"] == rm["parallel"]["halo"], f"np{np}: halos differ")
            same_run(rg, rm, x["gen"], x["mtx"], f"gen against rank 0's file np{np}", exact=True)
            same_run(rb, rm, x["petsc"], x["mtx"], f"petsc by rows against rank 0's file np{np}", exact=True)
            s = single(gpusolve, [gen] + BASE + ["-s", "solver.type=gmres", "-s", "preconditioner.type=bilu", "-s",
                                                 f"preconditioner.blocks={np}", "-o", x["one"]] + CONT)
            check(s.returncode == 0, f"one process np{np}: exit {s.returncode}: {s.stderr}")
            if s.returncode == 0:
                same_run(rg, json.loads(s.stdout), x["gen"], x["one"], f"gen np{np} against one process")

        # b = A x*, x* random: made per rank, the one-process b and error against x*; auto types: CG + IC(0)
        ax = ["-s", "system.rhs=Ax", "-s", "system.xstar=random", "-s", "system.seed=7"]
        r3 = run_mpi(gpusolve, mpiexec, 3, "gen:poisson3d:11x9x10", ax + CONT, x["gen"], "Ax random np3")
        s = single(gpusolve, ["gen:poisson3d:11x9x10"] + BASE + ax + CONT + [
            "-s", "solver.type=cg", "-s", "preconditioner.type=bilu", "-s", "preconditioner.blocks=3", "-o", x["one"]])
        if r3 and s.returncode == 0:
            r1 = json.loads(s.stdout)
            check(r3["solver"]["type"] == "cg" and r3["preconditioner"]["type"] == "ic0",
                  f"auto on own rows: {r3['solver']['type']} + {r3['preconditioner']['type']}")
            check(abs(r3["solve"]["bnorm"] - r1["solve"]["bnorm"]) <= 1e-12 * r1["solve"]["bnorm"],
                  f"Ax random: ||b|| {r3['solve']['bnorm']} on 3 ranks, {r1['solve']['bnorm']} on one")
            e3, e1 = r3["solve"].get("error_vs_xstar"), r1["solve"].get("error_vs_xstar")
            check(e3 is not None and e1 is not None and abs(e3 - e1) <= 1e-6 + 0.05 * e1,
                  f"Ax random: error against x* {e3} on 3 ranks, {e1} on one")
            same_run(r3, r1, x["gen"], x["one"], "Ax random np3 against one process")
        # without -o: nothing gathered, the error against x* still reported
        p = mpitest.run(mpiexec, 2, [gpusolve, "gen:poisson3d:12"] + BASE + ax + CONT)
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        check(p.returncode == 0 and r.get("solve", {}).get("error_vs_xstar", 1) < 1e-6 and "output" not in r,
              f"no -o: exit {p.returncode}, {r.get('solve')}")

        # -b and -x files: read by rank 0 and scattered over the ranks' own rows
        n = nx * ny
        bfile, xfile = os.path.join(tmp, "b.mtx"), os.path.join(tmp, "x0.mtx")
        write_vec(bfile, [((7 * i) % 13) - 6.0 for i in range(n)])
        write_vec(xfile, [0.01 * (i % 5) for i in range(n)])
        files = ["-b", bfile, "-x", xfile]
        rg = run_mpi(gpusolve, mpiexec, 3, gen, gmres + files, x["gen"], "files np3")
        rm = run_mpi(gpusolve, mpiexec, 3, mtx, gmres + files, x["mtx"], "files np3 rank 0")
        same_run(rg, rm, x["gen"], x["mtx"], "-b/-x on own rows against rank 0's", exact=True)
        check(rg is not None and rg["solve"]["r0norm"] == rm["solve"]["r0norm"], "files: r0 differs")

        # auto: couplings between ranks that are not symmetric make the matrix nonsymmetric (GMRES), even
        # though every rank's diagonal block is symmetric
        skew = [(i, j, -0.5 if (i < n // 2 <= j) else v) for i, j, v in e]
        skewbin = os.path.join(tmp, "skew.petsc")
        write_petsc(skewbin, n, skew)
        r = run_mpi(gpusolve, mpiexec, 2, skewbin, CONT, x["petsc"], "skew couplings")
        if r:
            check(r["solver"]["type"] == "gmres" and r["preconditioner"]["type"] == "ilu0",
                  f"skew couplings: auto chose {r['solver']['type']} + {r['preconditioner']['type']}")
        r = run_mpi(gpusolve, mpiexec, 2, bin_, CONT, x["petsc"], "symmetric couplings")
        if r:
            check(r["solver"]["type"] == "cg", f"symmetric: auto chose {r['solver']['type']}")

        # a column out of range in the last rank's part: every rank ends, exit 3, one message with the row
        bad = list(e)
        last = max(k for k, (i, j, v) in enumerate(bad) if i == n - 2)
        bad[last] = (n - 2, n + 50, -1.0)
        badbin = os.path.join(tmp, "bad.petsc")
        write_petsc(badbin, n + 6, bad + [(n + k, n + k, 4.0) for k in range(6)])
        p = mpitest.run(mpiexec, 3, [gpusolve, badbin] + CONT)
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 3 and len(msgs) == 1, f"bad column: exit {p.returncode}, messages {msgs}")
        check(msgs and "rank 2: " in msgs[0] and f"row {n - 1} " in msgs[0], f"bad column: message {msgs}")
        # a contiguous split with METIS asked: rank 0 reads (no own rows); a compressed file: rank 0 reads
        r = run_mpi(gpusolve, mpiexec, 2, bin_, ["-s", "solver.type=gmres"], x["petsc"], "petsc metis")
        check(r is not None and r["where"]["read"] == "host (rank 0)", f"petsc metis: {r and r['where']}")
        # a Matrix Market file named .bin: not read by rows; rank 0's reader refuses it, one message, exit 3
        txt = os.path.join(tmp, "p_text.bin")
        with open(mtx) as f, open(txt, "w") as g:
            g.write(f.read())
        p = mpitest.run(mpiexec, 2, [gpusolve, txt] + CONT)
        msgs = [l for l in p.stderr.splitlines() if l.startswith("gpusolve:")]
        check(p.returncode == 3 and len(msgs) == 1 and "expected a PETSc binary matrix" in msgs[0],
              f"text .bin: exit {p.returncode}, messages {msgs}")
    if failures:
        print(f"mpi_rows: {len(failures)} failures")
        return 1
    print("mpi_rows: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
