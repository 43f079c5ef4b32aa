#!/usr/bin/env python3
"""gpusolve under numerical trouble and hostile input, at the command line: every failure class ends
with its documented exit code and a message that names what went wrong; nothing crashes; an interrupted
or failed run leaves no solution file and no temporary file.
Usage: failures_test.py GPUSOLVE SRC_DIR"""
import json, os, signal, subprocess, time

from reltest import check, data, exe, finish, host, limit_memory, no_temp_files, scratch
tmp = scratch("gs_fail_")


# The configurations these checks name are the ones that run: no automatic choice and no fallback ladder
# (GMRES without a preconditioner where a check names no method).
PINNED = [("solver.type", "gmres"), ("preconditioner.type", "none"), ("solver.fallback", "none")]


def pinned(args):
    if not args or args[0].startswith("--") and args[0] != "--json":
        return args
    given = " ".join(args)
    return args + [x for k, v in PINNED if k + "=" not in given for x in ("-s", f"{k}={v}")]


def run(args, mem_gib=None, timeout=300):
    p = subprocess.run([exe, *pinned(args)], capture_output=True, text=True, timeout=timeout,
                       preexec_fn=limit_memory(mem_gib) if mem_gib else None)
    return p.returncode, p.stdout, p.stderr


def run_json(name, args, **kw):
    rc, out, err = run(args + ["--json"], **kw)
    try:
        return rc, json.loads(out), err
    except ValueError:
        check(name + " (one JSON object)", False, f"exit {rc}; stdout {out[:300]!r}; stderr {err[:300]!r}")
        return rc, {}, err


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# An address-space limit shows that hostile sizes are refused before anything big is allocated. ASan
# reserves terabytes of shadow memory and cannot run under such a limit: there, those checks are skipped.
try:
    can_limit = run(["--version"], mem_gib=1)[0] == 0  # (a CUDA build maps large libraries: probe it)
except (OSError, subprocess.SubprocessError):
    can_limit = False
if not can_limit:
    print("note: gpusolve cannot run under RLIMIT_AS (sanitizer build?): memory-limit checks skipped")

# --- zero pivots: the zero-diagonal matrices of data/matrices -----------------------------------------
for m in ("west0067.mtx", "impcol_a.mtx", "west0497.mtx"):
    path = os.path.join(data, m)
    sol = os.path.join(tmp, "x_" + m)
    rc, obj, err = run_json(f"{m} ilu0 error", [path, "-s", "preconditioner.type=ilu0",
                                                "-s", "preconditioner.zero_pivot=error", "-o", sol] + host)
    s = obj.get("solve", {})
    check(f"{m} ilu0 zero_pivot=error: exit 4", rc == 4, f"exit {rc}: {err[:300]}")
    check(f"{m} ilu0 zero_pivot=error: reason", s.get("reason") == "diverged_pc_failed", s)
    check(f"{m} ilu0 zero_pivot=error: names the row", "zero pivot at row" in s.get("detail", ""), s)
    check(f"{m} ilu0 zero_pivot=error: no solution file", not os.path.exists(sol), sol)
    rc, obj, err = run_json(f"{m} ilu0 shift", [path, "-s", "preconditioner.type=ilu0",
                                                "-s", "preconditioner.zero_pivot=shift",
                                                "-s", "solver.max_iterations=200"] + host)
    pc = obj.get("preconditioner", {})
    check(f"{m} ilu0 shift: runs (exit 0 or 1)", rc in (0, 1), f"exit {rc}: {err[:300]}")
    check(f"{m} ilu0 shift: reports shifted pivots", isinstance(pc.get("pivots_shifted"), int)
          and pc["pivots_shifted"] > 0, pc)
    rows = str(pc.get("shifted_rows", ""))
    check(f"{m} ilu0 shift: lists the shifted rows", rows and all(r.strip().isdigit() for r in rows.split(",")),
          rows[:100])
# the text report names the row too
rc, out, err = run([os.path.join(data, "west0067.mtx"), "-s", "preconditioner.type=ilu0"] + host)
check("west0067 text: exit 4", rc == 4, err[:300])
check("west0067 text: detail names row 1", "zero pivot at row 1 (1-based)" in out, out[-600:])
check("west0067 text: summary line", "reason=diverged_pc_failed" in out, out[-300:])

# --- divergence: bayer10 (a zero diagonal) with a shifted ILU(0) and BiCGStab blows up; the solve stops
# at the divergence bound, long before the iteration limit, as not converged (exit 1)
rc, obj, err = run_json("bayer10 dtol", [os.path.join(data, "bayer10.mtx"), "-s", "preconditioner.type=ilu0",
                                         "-s", "preconditioner.zero_pivot=shift", "-s", "solver.type=bicgstab",
                                         "-s", "system.rhs=Ax", "-s", "solver.max_iterations=10000"] + host)
s = obj.get("solve", {})
check("bayer10 dtol: exit 1", rc == 1, f"exit {rc}: {err[:300]}")
check("bayer10 dtol: reason diverged_dtol", s.get("reason") == "diverged_dtol", s)
check("bayer10 dtol: stopped early", 0 < (s.get("iterations") or 0) < 100, s)
check("bayer10 dtol: detail names the key", "solver.divergence_tolerance" in s.get("detail", ""), s)
# turned off: the same run goes on to the iteration limit
rc, obj, err = run_json("bayer10 dtol off", [os.path.join(data, "bayer10.mtx"), "-s", "preconditioner.type=ilu0",
                                             "-s", "preconditioner.zero_pivot=shift", "-s", "solver.type=bicgstab",
                                             "-s", "system.rhs=Ax", "-s", "solver.max_iterations=50",
                                             "-s", "solver.divergence_tolerance=0"] + host)
check("bayer10 dtol off: diverged_max_it", obj.get("solve", {}).get("reason") == "diverged_max_it", obj.get("solve"))

# --- overflow: an ILU(0) whose triangular solve overflows --------------------------------------------
# A is upper bidiagonal (a_ii = 1, a_i,i+1 = 4), so ILU(0) is exact: U = A. Its backward solve
# multiplies by -4 per row, 4^600 > 1e308: M^-1 r overflows to inf and BiCGStab meets NaN at once.
n = 600
lines = [f"{i} {i} 1" for i in range(1, n + 1)] + [f"{i} {i + 1} 4" for i in range(1, n)]
growth = write("growth.mtx", "%%MatrixMarket matrix coordinate real general\n"
               f"{n} {n} {len(lines)}\n" + "\n".join(lines) + "\n")
for solver in ("bicgstab", "gmres"):
    sol = os.path.join(tmp, "x_growth.mtx")
    rc, obj, err = run_json(f"overflow {solver}", [growth, "-s", f"solver.type={solver}",
                                                   "-s", "preconditioner.type=ilu0", "-o", sol] + host)
    s = obj.get("solve", {})
    check(f"overflow ilu0+{solver}: exit 4", rc == 4, f"exit {rc}: {err[:300]}")
    check(f"overflow ilu0+{solver}: reason diverged_nan", s.get("reason") == "diverged_nan", s)
    check(f"overflow ilu0+{solver}: detail names the quantity", "NaN" in s.get("detail", "")
          or "Inf" in s.get("detail", "") or "inf" in s.get("detail", ""), s)
    check(f"overflow ilu0+{solver}: not converged", s.get("converged") is False, s)
    # a diverged solve still writes its (non-finite) iterate, complete: the file says what happened
    if os.path.exists(sol):
        with open(sol) as f:
            body = [l for l in f.read().splitlines() if l and not l.startswith("%")]
        check(f"overflow ilu0+{solver}: solution file complete", len(body) == n + 1 and body[0] == f"{n} 1",
              body[:2])
        os.unlink(sol)
# the same matrix with b = A*ones is harmless: U^-1 b = ones exactly
rc, obj, err = run_json("growth Ax", [growth, "-s", "solver.type=bicgstab", "-s", "preconditioner.type=ilu0",
                                      "-s", "system.rhs=Ax"] + host)
check("growth with b = A*ones converges", rc == 0 and obj.get("solve", {}).get("reason") == "converged_rtol",
      f"exit {rc}: {obj.get('solve')}")

# --- a singular matrix is never reported as converged --------------------------------------------------
plat = os.path.join(data, "plat1919.mtx.gz")
for extra in (["-s", "solver.type=gmres"], ["-s", "solver.type=gmres", "-s", "preconditioner.type=ilu0"],
              ["-s", "solver.type=cg"], ["-s", "solver.type=bicgstab", "-s", "preconditioner.type=jacobi"],
              ["-s", "solver.type=cg", "-s", "preconditioner.type=ic0"]):
    name = "plat1919 " + " ".join(extra[1::2])
    rc, obj, err = run_json(name, [plat, "-s", "solver.max_iterations=400"] + extra + host)
    s = obj.get("solve", {})
    check(f"{name}: not converged", s.get("converged") is False and not s.get("reason", "").startswith("converged"),
          s)
    check(f"{name}: exit 1 or 4", rc in (1, 4), f"exit {rc}: {err[:300]}")
    if "residual_true" in s:
        check(f"{name}: true residual far from the tolerance", s["residual_true"] > 1e-6, s)

# --- an indefinite matrix under CG ---------------------------------------------------------------------
tumor = os.path.join(data, "tumorAntiAngiogenesis_2.mtx")
rc, obj, err = run_json("tumor cg", [tumor, "-s", "solver.type=cg"] + host)
s = obj.get("solve", {})
check("indefinite cg: exit 4", rc == 4, f"exit {rc}: {err[:300]}")
check("indefinite cg: reason", s.get("reason") in ("diverged_indefinite", "diverged_breakdown"), s)
check("indefinite cg: detail says why", s.get("detail", "") != "", s)

# --- interruption: SIGINT / SIGTERM stop cleanly, no solution, no temporary file ------------------------
for sig in (signal.SIGINT, signal.SIGTERM):
    sol = os.path.join(tmp, f"x_sig{int(sig)}.mtx")
    hist = os.path.join(tmp, f"h_sig{int(sig)}.csv")
    # pinned: the signal must reach the solve (an automatic choice's setup can take over 1 s under ASan)
    p = subprocess.Popen([exe, *pinned(["gen:poisson3d:60", "-s", "solver.max_iterations=1000000000",
                                        "-s", "solver.rtol=1e-300", "-o", sol, "--history", hist] + host)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    check(f"signal {sig.name}: still running after 1 s", p.poll() is None, p.poll())
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        check(f"signal {sig.name}: stops within 60 s", False, "killed")
    check(f"signal {sig.name}: exit 6", p.returncode == 6, f"exit {p.returncode}: {err[-300:]}")
    check(f"signal {sig.name}: message", f"interrupted by signal {int(sig)}" in err and "nothing written" in err,
          err[-300:])
    check(f"signal {sig.name}: reason", "reason=diverged_interrupted" in out, out[-300:])
    check(f"signal {sig.name}: no solution file", not os.path.exists(sol), sol)
    no_temp_files(f"signal {sig.name}")

# with --json an interrupted run still prints exactly one JSON object
p = subprocess.Popen([exe, *pinned(["gen:poisson3d:60", "-s", "solver.max_iterations=1000000000", "-s",
                                    "solver.rtol=1e-300", "--json", "-o", os.path.join(tmp, "x_json.mtx")] + host)],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
p.send_signal(signal.SIGINT)
try:
    out, err = p.communicate(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    out, err = p.communicate()
lines = [l for l in out.splitlines() if l.strip()]
try:
    obj = json.loads(out)
except ValueError:
    obj = {}
check("SIGINT --json: exit 6, one JSON object", p.returncode == 6 and len(lines) == 1, f"exit {p.returncode}: {out[:300]}")
check("SIGINT --json: reason", obj.get("solve", {}).get("reason") == "diverged_interrupted", obj.get("solve"))
check("SIGINT --json: no solution file", not os.path.exists(os.path.join(tmp, "x_json.mtx")), "")

# an output path that is a folder: exit 3, nothing written, no temporary file
outdir = os.path.join(tmp, "outdir")
os.mkdir(outdir)
for opt in ("-o", "--history"):
    rc, out, err = run([os.path.join(data, "sherman1.mtx"), opt, outdir] + host)
    check(f"{opt} to a folder: exit 3", rc == 3 and "outdir" in err, f"exit {rc}: {err[:300]}")
    check(f"{opt} to a folder: folder untouched", os.listdir(outdir) == [], os.listdir(outdir))
no_temp_files("outputs to a folder")

# --- hostile sizes ------------------------------------------------------------------------------------
def expect_input_error(name, args, needles, code=3, mem_gib=None):
    t0 = time.time()
    rc, out, err = run(args + host, mem_gib=mem_gib)
    check(f"{name}: exit {code}", rc == code, f"exit {rc}: {err[:400]}")
    for s in needles:
        check(f"{name}: message has {s!r}", s in err, err[:400])
    check(f"{name}: fast", time.time() - t0 < 20, time.time() - t0)


mem = 1 if can_limit else None
big_rows = write("rows_2147483648.mtx", "%%MatrixMarket matrix coordinate real general\n"
                 "2147483648 2147483648 1\n1 1 1.0\n")
expect_input_error("2147483648 rows", [big_rows], ["rows_2147483648.mtx:2", "2147483648", "32-bit index limit"],
                   mem_gib=mem)
big_nnz = write("nnz_2e9.mtx", "%%MatrixMarket matrix coordinate real general\n1000 1000 2000000000\n1 1 1.0\n")
expect_input_error("2e9 declared entries, tiny file", [big_nnz],
                   ["nnz_2e9.mtx:", "after 1 of the 2000000000 entries"], mem_gib=mem)
sym_nnz = write("sym_2e9.mtx", "%%MatrixMarket matrix coordinate real symmetric\n1000 1000 2000000000\n2 1 1.0\n")
expect_input_error("2e9 declared symmetric entries, tiny file", [sym_nnz], ["sym_2e9.mtx:", "2000000000"],
                   mem_gib=mem)
over_nnz = write("nnz_2147483648.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2147483648\n1 1 1.0\n")
expect_input_error("2147483648 declared entries", [over_nnz], ["nnz_2147483648.mtx:2", "32-bit index limit"],
                   mem_gib=mem)
huge = write("size_t_overflow.mtx", "%%MatrixMarket matrix coordinate real general\n"
             "99999999999999999999999 99999999999999999999999 1\n1 1 1.0\n")
expect_input_error("sizes beyond 64 bits", [huge], ["size_t_overflow.mtx:2"], mem_gib=mem)
sherman = os.path.join(data, "sherman1.mtx")
rhs_rows = write("rhs_2147483648.mtx", "%%MatrixMarket matrix array real general\n2147483648 1\n1\n")
expect_input_error("rhs of 2147483648 rows", [sherman, "-b", rhs_rows], ["rhs_2147483648.mtx:2", "2147483648"],
                   mem_gib=mem)
rhs_nnz = write("rhs_2e9.mtx", "%%MatrixMarket matrix coordinate real general\n1000 1 2000000000\n1 1 1.0\n")
expect_input_error("rhs declaring 2e9 entries", [sherman, "-b", rhs_nnz], ["rhs_2e9.mtx:", "2000000000"],
                   mem_gib=mem)
x0_rows = write("x0_long.mtx", "%%MatrixMarket matrix array real general\n2147483647 1\n1\n")
expect_input_error("x0 of 2147483647 rows for a 1000-row matrix", [sherman, "-x", x0_rows],
                   ["x0_long.mtx:2", "1000"], mem_gib=mem)
for spec, needle in (("gen:poisson3d:1291", "32-bit index limit"), ("gen:poisson2d:46341", "32-bit index limit"),
                     ("gen:poisson3d:2147483647", "32-bit index limit"), ("gen:laplace27:2097152", "32-bit index limit"),
                     ("gen:poisson3d:99999999999999999999", "gen:")):
    expect_input_error(spec, [spec], [needle], code=2, mem_gib=mem)
dup = write("dup_overflow.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1e308\n1 1 1e308\n2 2 1\n")
expect_input_error("duplicates summing to inf", [dup], ["dup_overflow.mtx", "(1,1)", "add up to inf"])
# legal size, but 2^31-1 rows with one entry: at least 2^31-2 rows are empty, the matrix is singular;
# refused before anything of the declared size is allocated (tests/reliability/data_safety_test.py
# checks the memory it takes, and --inspect)
absurd = write("rows_2147483647.mtx", "%%MatrixMarket matrix coordinate real general\n"
               "2147483647 2147483647 1\n1 1 1.0\n")
expect_input_error("2^31-1 rows, one entry", [absurd], ["rows_2147483647.mtx:2", "singular"], mem_gib=mem)

# --- hostile configuration files ------------------------------------------------------------------------
os.mkdir(os.path.join(tmp, "adir"))
inc = write("include_dir.cfg", '@include "adir"\n')
rc, out, err = run(["-c", inc, sherman] + host)
check("@include of a folder: exit 2", rc == 2, f"exit {rc}: {err[:300]}")
check("@include of a folder: message", "include_dir.cfg:1" in err and "names a folder" in err, err[:300])
inc2 = write("include_outer.cfg", '# nested\n@include "include_dir.cfg"\n')
rc, out, err = run(["-c", inc2, sherman] + host)
check("nested @include of a folder: exit 2", rc == 2 and "include_dir.cfg:1" in err, f"exit {rc}: {err[:300]}")
selfinc = write("include_self.cfg", '@include "include_self.cfg"\n' * 40)
rc, out, err = run(["-c", selfinc, sherman] + host, timeout=30)
check("self-including config: exit 2 quickly", rc == 2 and "nesting too deep" in err, f"exit {rc}: {err[:300]}")
empty_str = write("empty_string.cfg", '""')
rc, out, err = run(["-c", empty_str, sherman] + host)
check("libconfig syntax error after a string: exit 2", rc == 2 and "empty_string.cfg:1" in err,
      f"exit {rc}: {err[:300]}")
wrap = write("wrap.cfg", "solver = { max_iterations = 4294967297; };\n")
rc, out, err = run(["-c", wrap, sherman] + host)
check("32-bit integer wrap refused: exit 2", rc == 2 and "wrap.cfg:1" in err, f"exit {rc}: {err[:300]}")

no_temp_files("end")
finish()
