"""'-' as standard input and output (run as SCRIPT GPUSOLVE SRC_DIR GPUSOLVE_GEN): the matrix, -b and -x read
from standard input in every format (Matrix Market, gzip, PETSc binary, recognised by content); -o -
writes the solution to standard output with the report on standard error; two inputs from standard input
and -o - with --json are usage errors; errors name <stdin> with the true line."""
import gzip, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apptest import exe, data, scratch, check, finish  # noqa: E402

gen = sys.argv[3]
tmp = scratch("gs_stdin_")
lfat = os.path.join(data, "LFAT5.mtx")


def run_in(args, stdin_bytes):
    p = subprocess.run([exe, *args], input=stdin_bytes, capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def summary(out):
    """The summary line's reason, iterations and residual (not its timings)."""
    return [" ".join(w for w in l.split() if w.split("=")[0] in ("reason", "iterations", "residual"))
            for l in out.splitlines() if l.startswith("reason=")]


text = open(lfat, "rb").read()
rc, ref, _ = run_in(["-q", lfat], b"")
check("reference run", rc == 0 and summary(ref), f"rc={rc} {ref}")

# the matrix from standard input: plain, gzip, PETSc binary (content decides)
petsc = os.path.join(tmp, "lfat.petsc")
rc = subprocess.run([gen, "poisson2d", "12", "-o", petsc], capture_output=True, text=True).returncode
check("gen writes .petsc", rc == 0 and open(petsc, "rb").read(4) == b"\x00\x12\x7b\x50", f"rc={rc}")
for name, payload, args in (("plain", text, ["-q", "-"]), ("gzip", gzip.compress(text), ["-q", "-"])):
    rc, out, err = run_in(args, payload)
    check(f"matrix from stdin ({name})", rc == 0 and summary(out) == summary(ref), f"rc={rc} out={out} err={err}")
rc, out, err = run_in(["-q", petsc], b"")
rc2, out2, err2 = run_in(["-q", "-"], open(petsc, "rb").read())
check("matrix from stdin (PETSc binary)", rc == 0 and rc2 == 0 and summary(out) == summary(out2), f"{rc} {rc2} {err2}")

# -b - and -x -: the vector from standard input
b = "%%MatrixMarket matrix array real general\n14 1\n" + "".join(f"{1 + k % 3}\n" for k in range(14))
with open(os.path.join(tmp, "b.mtx"), "w") as f:
    f.write(b)
rc, out_file, _ = run_in(["-q", lfat, "-b", os.path.join(tmp, "b.mtx")], b"")
rc2, out_stdin, err = run_in(["-q", lfat, "-b", "-"], b.encode())
check("-b - reads the right-hand side", rc == 0 and rc2 == 0 and summary(out_file) == summary(out_stdin), f"{rc} {rc2} {err}")
rc, out, err = run_in(["-q", lfat, "-x", "-"], b.encode())
check("-x - reads the initial guess", rc == 0 and summary(out), f"rc={rc} {err}")

# -o -: the solution on standard output, the report on standard error
rc, out, err = run_in(["-q", lfat, "-o", "-"], b"")
check("-o - writes the solution to stdout", rc == 0 and out.startswith("%%MatrixMarket matrix array real general")
      and "\n14 1\n" in out and len(out.strip().splitlines()) == 2 + 1 + 14, f"rc={rc} out={out[:200]}")
check("-o - sends the report to stderr", summary(err) == summary(ref), f"err={err}")
rc, out, err = run_in(["-q", "-", "-o", "-"], text)
check("matrix from stdin and -o -", rc == 0 and out.startswith("%%MatrixMarket") and summary(err), f"rc={rc} {err}")

# usage errors (exit 2), nothing solved
rc, out, err = run_in(["-", "-b", "-"], text)
check("two inputs from stdin refused", rc == 2 and "both read standard input" in err, f"rc={rc} err={err}")
rc, out, err = run_in([lfat, "-b", "-", "-x", "-"], text)
check("-b - and -x - refused", rc == 2 and "-b and -x both read standard input" in err, f"rc={rc} err={err}")
rc, out, err = run_in(["--json", lfat, "-o", "-"], b"")
check("-o - with --json refused", rc == 2 and "-o - writes the solution to standard output" in err, f"rc={rc} err={err}")

# an error in what came through standard input names <stdin> and the true line (exit 3)
bad = text.decode().splitlines()
first = next(k for k, l in enumerate(bad) if l[:1].isdigit()) + 1  # the size line's index + 1: an entry
bad[first + 3] = "1 1 x"
rc, out, err = run_in(["-q", "-"], ("\n".join(bad) + "\n").encode())
check("stdin error names <stdin>:LINE", rc == 3 and f"<stdin>:{first + 4}: value 'x' is not a number" in err,
      f"rc={rc} err={err}")
rc, out, err = run_in(["-q", "-"], b"")
check("empty stdin", rc == 3 and "<stdin>:1: the file is empty" in err, f"rc={rc} err={err}")
rc, out, err = run_in(["-q", "-"], open(petsc, "rb").read()[:100])
check("truncated PETSc binary on stdin", rc == 3 and "truncated PETSc binary matrix" in err and "<stdin>" in err,
      f"rc={rc} err={err}")

finish()
