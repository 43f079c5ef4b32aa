#!/usr/bin/env python3
"""gpusolve --inspect: every number compared with an independent computation in Python on the same
Matrix Market file (sizes, row lengths, symmetry, diagonal, dominance, bandwidth, triangular levels),
the advice lines for the classic cases, text and JSON forms, and the error paths.
Usage: inspect_test.py GPUSOLVE SRC_DIR"""
import gzip, json, os

from apptest import check, data, finish, run, scratch
tmp = scratch("gs_inspect_")


def read_mtx(path):
    """{(i, j): value} 0-based, symmetric halves expanded, duplicates summed; and n."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        banner = f.readline().lower().split()
        field, sym = banner[3], banner[4]
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        n, m, nnz = map(int, line.split())
        a = {}
        for line in f:
            if not line.strip() or line.startswith("%"):
                continue
            parts = line.split()
            i, j = int(parts[0]) - 1, int(parts[1]) - 1
            v = 1.0 if field == "pattern" else float(parts[2])
            a[(i, j)] = a.get((i, j), 0.0) + v
            if sym != "general" and i != j:
                a[(j, i)] = a.get((j, i), 0.0) + (-v if sym == "skew-symmetric" else v)
    return n, a


def reference(n, a):
    rows = [[] for _ in range(n)]
    for (i, j), v in a.items():
        rows[i].append((j, v))
    for r in rows:
        r.sort()
    lens = [len(r) for r in rows]
    diag = {i: v for (i, j), v in a.items() if i == j}
    missing = [i + 1 for i in range(n) if i not in diag]
    zero = [i + 1 for i in range(n) if i in diag and diag[i] == 0.0]
    strict = weak = not_dom = 0
    for i in range(n):
        d = abs(diag.get(i, 0.0))
        off = sum(abs(v) for j, v in rows[i] if j != i)
        m = max(d, off)
        if m > 0 and abs(d - off) <= 1e-12 * m:
            weak += 1
        elif d > off:
            strict += 1
        else:
            not_dom += 1
    sym_s = all((j, i) in a for (i, j) in a)
    sym_n = sym_s and all(abs(v - a[(j, i)]) <= 1e-12 * max(abs(v), abs(a[(j, i)])) for (i, j), v in a.items())

    def levels(lower):
        lev = [0] * n
        order = range(n) if lower else range(n - 1, -1, -1)
        for i in order:
            deps = [lev[j] + 1 for j, _ in rows[i] if (j < i if lower else j > i)]
            lev[i] = max(deps, default=0)
        return max(lev) + 1 if n else 0

    return {
        "rows": n, "nnz": len(a), "min": min(lens), "max": max(lens), "avg": len(a) / n,
        "empty": lens.count(0), "missing": missing, "zero": zero,
        "positive": sum(1 for i, v in diag.items() if v > 0), "negative": sum(1 for i, v in diag.items() if v < 0),
        "strict": strict, "weak": weak, "not": not_dom, "sym_s": sym_s, "sym_n": sym_n,
        "bw": max(abs(i - j) for i, j in a), "bw_lower": max([i - j for i, j in a if i > j], default=0),
        "bw_upper": max([j - i for i, j in a if j > i], default=0),
        "lev_lower": levels(True), "lev_upper": levels(False),
        "explicit_zeros": sum(1 for v in a.values() if v == 0.0),
    }


def compare(name, path):
    n, a = read_mtx(path)
    ref = reference(n, a)
    rc, out, err = run("--inspect", path, "--json")
    check(f"{name} exit", rc == 0, f"exit {rc}: {err}")
    try:
        o = json.loads(out)
    except ValueError as e:
        check(f"{name} JSON", False, f"{e}: {out[:300]}")
        return None
    got = {
        "rows": o["matrix"]["rows"], "nnz": o["matrix"]["nnz"], "min": o["nnz_per_row"]["min"],
        "max": o["nnz_per_row"]["max"], "avg": o["nnz_per_row"]["avg"], "empty": o["nnz_per_row"]["empty_rows"],
        "missing": o["diagonal"]["missing_rows"], "zero": o["diagonal"]["zero_rows"],
        "positive": o["diagonal"]["positive"], "negative": o["diagonal"]["negative"],
        "strict": o["dominance"]["strict"], "weak": o["dominance"]["weak"], "not": o["dominance"]["not"],
        "sym_s": o["symmetry"]["structural"], "sym_n": o["symmetry"]["numerical"],
        "bw": o["bandwidth"]["max"], "bw_lower": o["bandwidth"]["lower"], "bw_upper": o["bandwidth"]["upper"],
        "lev_lower": o["levels"]["lower"], "lev_upper": o["levels"]["upper"],
        "explicit_zeros": o["values"]["explicit_zeros"],
    }
    check(f"{name} missing count", o["diagonal"]["missing"] == len(ref["missing"]), (o["diagonal"]["missing"], len(ref["missing"])))
    check(f"{name} zero count", o["diagonal"]["zero"] == len(ref["zero"]), (o["diagonal"]["zero"], len(ref["zero"])))
    ref["missing"], ref["zero"] = ref["missing"][:10], ref["zero"][:10]
    for k in ref:
        ok = abs(got[k] - ref[k]) <= 1e-12 * abs(ref[k]) if k == "avg" else got[k] == ref[k]
        check(f"{name} {k}", ok, f"gpusolve {got[k]}, reference {ref[k]}")
    return o


o = compare("west0067", os.path.join(data, "west0067.mtx"))
if o:
    check("west0067 advice: zero pivot", any("zero_pivot" in s and "ILU(0)" in s for s in o["advice"]), o["advice"])
    check("west0067 advice: nonsymmetric", any("gmres" in s for s in o["advice"]), o["advice"])
o = compare("bcsstk01", os.path.join(data, "bcsstk01.mtx"))
if o:
    check("bcsstk01 advice: cg + ic0", any("cg" in s and "ic0" in s for s in o["advice"]), o["advice"])
    check("bcsstk01 file symmetry", o["matrix"]["symmetry"] == "symmetric", o["matrix"])
o = compare("sherman1", os.path.join(data, "sherman1.mtx"))
if o:
    check("sherman1 advice: negative diagonal", any("negative" in s for s in o["advice"]), o["advice"])
compare("e05r0000 (gz, explicit zeros)", os.path.join(data, "e05r0000.mtx.gz"))
compare("orsirr_1", os.path.join(data, "orsirr_1.mtx"))

# hand-made: a zero diagonal entry, a missing one, an empty row, an explicit zero off the diagonal
odd = os.path.join(tmp, "odd.mtx")
with open(odd, "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n6 6 8\n"
            "1 1 4\n1 2 -1\n2 2 0\n3 1 2\n3 3 1\n5 5 -3\n5 6 0\n6 4 1\n")
o = compare("hand-made", odd)
if o:
    check("hand-made empty row advice", any("empty row" in s and "first: 4" in s for s in o["advice"]), o["advice"])
    check("hand-made bad diagonal advice", any("3 rows" in s and "first: row 2" in s for s in o["advice"]), o["advice"])

# generated: the 5-point Laplacian on a k x k grid has k^2 rows, 5k^2 - 4k nonzeros, 2k - 1 levels
rc, out, err = run("--inspect", "gen:poisson2d:30", "--json")
o = json.loads(out)
check("poisson2d sizes", o["matrix"]["rows"] == 900 and o["matrix"]["nnz"] == 5 * 900 - 4 * 30, o["matrix"])
check("poisson2d levels", o["levels"]["lower"] == 59 and o["levels"]["upper"] == 59, o["levels"])
check("poisson2d dominance", o["dominance"]["not"] == 0 and o["dominance"]["strict"] == 4 * 30 - 4, o["dominance"])
check("poisson2d bandwidth", o["bandwidth"]["max"] == 30, o["bandwidth"])
check("poisson2d no file fields", "field" not in o["matrix"], o["matrix"])

# text form: every fact on its labelled line
rc, out, err = run("--inspect", os.path.join(data, "west0067.mtx"))
check("text exit", rc == 0, err)
for label in ("size", "nnz per row", "symmetry", "diagonal", "dominance", "bandwidth", "levels", "advice"):
    check(f"text has {label}", any(l.startswith(label) for l in out.splitlines()), out)
check("text missing rows", "missing 65 (rows 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, ...)" in out, out)

# errors
rc, out, err = run("--inspect", os.path.join(tmp, "none.mtx"))
check("missing file", rc == 3 and "none.mtx" in err, f"exit {rc}: {err}")
rc, out, err = run("--inspect", os.path.join(tmp, "none.mtx"), "--json")
check("missing file JSON", rc == 3 and json.loads(out)["status"] == "error", out)
rc, out, err = run("--inspect")
check("no matrix", rc == 2 and "needs a matrix" in err, f"exit {rc}: {err}")
rect = os.path.join(tmp, "rect.mtx")
with open(rect, "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n")
rc, out, err = run("--inspect", rect)
check("rectangular", rc in (2, 3) and "square" in err, f"exit {rc}: {err}")

finish()
