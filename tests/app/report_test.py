#!/usr/bin/env python3
"""The report contract: the text report's levels (-q: one line; default: a screen, at most 15 lines;
-v: more; -vv: everything, the configuration and the triangular solvers' figures included), error
messages without their internal trace unless -v or GS_DEBUG asks for it, --version, the warning for keys
without effect, and the JSON objects: one per run or error (every malformed matrix fixture, bad
configurations, bad options, missing files), valid UTF-8 (a file name that is not), with provenance,
and valid against docs/gpusolve-result.schema.json.
Usage: report_test.py GPUSOLVE SRC_DIR"""
import datetime, json, os, re, socket, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from apptest import exe, src, data, check, finish, run, scratch, write  # noqa: E402
from schemacheck import validator  # noqa: E402

tmp = scratch("gs_report_")
host = ["-s", "device.backend=host"]
sherman = os.path.join(data, "sherman1.mtx")
with open(os.path.join(src, "docs", "gpusolve-result.schema.json")) as f:
    validate = validator(json.load(f))


def lines(text):
    return [l for l in text.splitlines() if l.strip()]


def run_bytes(*args, env_extra=None):
    """gpusolve ARGS with arguments given as bytes or str: (exit code, stdout bytes, stderr text)."""
    env = dict(os.environ)
    env.pop("GS_DEBUG", None)
    env.update(env_extra or {})
    p = subprocess.run([exe, *args], capture_output=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def objects(name, out_bytes):
    """The JSON objects of stdout (strict UTF-8, one per line), each checked against the schema."""
    try:
        text = out_bytes.decode("utf-8")  # strict: invalid UTF-8 fails here
    except UnicodeDecodeError as e:
        check(f"{name}: stdout is UTF-8", False, str(e))
        return []
    objs = []
    for l in text.splitlines():
        try:
            objs.append(json.loads(l))
        except ValueError as e:
            check(f"{name}: JSON line", False, f"{e}: {l[:200]}")
    for o in objs:
        errs = validate(o)
        check(f"{name}: schema", not errs, "; ".join(errs[:5]))
    return objs


def one_error(name, args, code):
    """--json ARGS: exactly one object, status error, exit code `code` in the object and as the exit."""
    rc, out, err = run_bytes(*args)
    objs = objects(name, out)
    ok = len(objs) == 1 and objs[0].get("status") == "error" and objs[0].get("exit_code") == rc == code
    check(f"{name}: one error object, exit {code}", ok, f"exit {rc}, {len(objs)} objects: {out[:300]!r} {err[:200]}")
    if ok:
        e = objs[0]["error"]
        check(f"{name}: error members", e["message"] and e["status"].startswith("GS_ERR_") and e["class"], e)
    return objs[0] if len(objs) == 1 else {}


# --- report levels: a solve --------------------------------------------------------------------------
by_level = {}
for name, opts in (("quiet", ["-q"]), ("default", []), ("verbose", ["-v"]), ("everything", ["-vv"]),
                   ("verbose twice", ["-v", "--verbose"]), ("quiet key", ["-s", "output.quiet=true"]),
                   ("verbosity key", ["-s", "output.verbosity=1"])):
    rc, out, err = run(sherman, *host, *opts)
    check(f"solve {name}: exit 0", rc == 0, err)
    by_level[name] = lines(out)
q, d, v, vv = by_level["quiet"], by_level["default"], by_level["verbose"], by_level["everything"]
check("-q: the summary line alone", len(q) == 1 and q[0].startswith("reason=converged"), q)
check("default: fits a screen (<= 15 lines)", 6 <= len(d) <= 15, f"{len(d)} lines: {d}")
for label in ("matrix ", "method ", "backend ", "where ", "times [s] ", "iterations ", "residual "):
    check(f"default: has {label.strip()}", any(l.startswith(label) for l in d), d)
check("default: ends with the summary line", d[-1] == d[-1] and d[-1].startswith("reason=") and d[-1].split()[0] == q[0].split()[0], d[-1])
check("default: no internals", not any(l.lstrip().startswith(("trisolve.", "preconditioner.nnz")) for l in d), d)
check("-v: more than the default", len(v) > len(d) and any(l.startswith("setup details") for l in v)
      and any(l.startswith("strategy ") for l in v), len(v))
check("-v: the default's lines too", all(any(l.split()[0] == m.split()[0] for m in v) for l in d), d)
check("-vv: more than -v", len(vv) > len(v), (len(v), len(vv)))
for label in ("configuration ", "setup details", "  trisolve.lower.levels", "  trisolve.upper.levels", "system ",
              "solver ", "preconditioner ", "strategy ", "memory ", "gpusolve "):
    check(f"-vv: has {label.strip()}", any(l.startswith(label) for l in vv), label)
check("-v --verbose is -vv", by_level["verbose twice"] == vv or len(by_level["verbose twice"]) == len(vv),
      len(by_level["verbose twice"]))
check("output.quiet = true is -q", len(by_level["quiet key"]) == 1, by_level["quiet key"])
check("output.verbosity = 1 is -v", len(by_level["verbosity key"]) == len(v), len(by_level["verbosity key"]))
rc, out, _ = run(sherman, *host, "-v", "-q")
check("the last of -v/-q wins", rc == 0 and len(lines(out)) == 1, out)
rc, out, _ = run(sherman, *host, "-s", "output.quiet=true", "-v")
check("-v wins over output.quiet in the file", rc == 0 and len(lines(out)) == len(v), out[:200])

# --- report levels: an error -------------------------------------------------------------------------
missing = os.path.join(tmp, "none.mtx")
rc, out, err = run(missing, *host)
check("error: exit 3, the message alone", rc == 3 and len(lines(err)) == 1 and "none.mtx" in err
      and " at " not in err, err)
check("error: nothing on stdout", out == "", out)
rc, out, err = run(missing, *host, "-v")
check("error -v: the trace follows", rc == 3 and len(lines(err)) > 1 and any(l.startswith("  at ") for l in lines(err)), err)
rc, out, err = run(missing, *host, env_extra={"GS_DEBUG": "1"})
check("error GS_DEBUG=1: the trace follows", rc == 3 and any(l.startswith("  at ") for l in lines(err)), err)
rc, out, err = run(missing, *host, env_extra={"GS_DEBUG": "0"})
check("error GS_DEBUG=0: no trace", rc == 3 and len(lines(err)) == 1, err)
rc, out, err = run(sherman, *host, "-s", "solver.restrat=5")
check("config error: the message alone", rc == 2 and len(lines(err)) == 1 and "solver.restrat" in err, err)
rc, out, err = run("--bogus")
check("usage error: message and hint", rc == 2 and lines(err) == ["gpusolve: unknown option --bogus",
                                                                   "try 'gpusolve --help'"], err)

# --- --version -----------------------------------------------------------------------------------------
rc, out, _ = run("--version")
vl = lines(out)
check("--version: four lines", rc == 0 and len(vl) == 4 and vl[0].startswith("gpusolve "), out)
check("--version: commit", len(vl) > 1 and re.match(r"^commit ([0-9a-f]{7,}|unknown)$", vl[1]), out)
check("--version: CUDA", len(vl) > 2 and (vl[2] == "cuda host only build (GS_WITH_CUDA=OFF)"
                                           or vl[2].startswith("cuda CUDA toolkit ")), out)
check("--version: build flags", len(vl) > 3 and vl[3].startswith("build CMAKE_BUILD_TYPE=") and "GS_WITH_CUDA=" in vl[3]
      and "compiler=" in vl[3], out)

# --- keys without effect -------------------------------------------------------------------------------
rc, out, err = run(sherman, *host, "-s", "solver.type=cg", "-s", "solver.restart=50", "-s", "solver.fallback=none",
                   "-q")
check("no effect: warned on stderr", "gpusolve: warning: solver.restart = 50 has no effect with solver.type = \"cg\""
      in err, err)
rc, out, err = run(sherman, *host, "--json", "-s", "solver.type=cg", "-s", "solver.restart=50",
                   "-s", "solver.fallback=none")
obj = json.loads(out)
check("no effect: in the JSON warnings", any("solver.restart" in w for w in obj.get("warnings", [])), obj.get("warnings"))
rc, out, err = run(sherman, *host, "--json", "-s", "solver.type=gmres", "-s", "solver.restart=50")
check("a key with effect: no warning", json.loads(out).get("warnings") == [] and "warning" not in err, err)
# the automatic choice: sherman1 gets BiCGStab, which has no restart
rc, out, err = run(sherman, *host, "--json", "-s", "solver.restart=40")
obj = json.loads(out)
chosen = obj["solver"]["type"]
check("no effect after the automatic choice",
      ("gmres" in chosen) == (not any("solver.restart" in w for w in obj["warnings"])), (chosen, obj["warnings"]))

# --- JSON: provenance and the schema ---------------------------------------------------------------------
argv = [sherman, "-s", "device.backend=host", "--json"]
before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
rc, out, err = run_bytes(*argv)
after = datetime.datetime.now(datetime.timezone.utc)
objs = objects("solve", out)
check("solve: one object", rc == 0 and len(objs) == 1, out[:300])
if objs:
    o = objs[0]
    t = datetime.datetime.strptime(o["started_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    check("started_at: ISO 8601 UTC, now", before - datetime.timedelta(seconds=1) <= t <= after, o["started_at"])
    check("host", o["host"] == socket.gethostname(), o["host"])
    check("command_line: argv as given", o["command_line"] == [exe] + argv, o["command_line"])
    check("version and commit", re.match(r"^\d+\.\d+\.\d+", o["gpusolve"]["version"])
          and re.match(r"^([0-9a-f]{7,}|unknown)$", o["gpusolve"]["commit"]), o["gpusolve"])
    check("device and peak memory", o["backend"]["device"] and isinstance(o["backend"]["memory_peak_bytes"], int)
          and o["backend"]["memory_peak_bytes"] >= 8 * 1000 * 3, o["backend"])
    check("warnings: an array", o["warnings"] == [], o["warnings"])
    keys = list(o)
    check("member order", keys[:5] == ["sweep", "gpusolve", "started_at", "host", "command_line"]
          and keys.index("matrix") < keys.index("solve") < keys.index("status") < keys.index("config"), keys)

rc, out, err = run_bytes(sherman, *host, "--json", "-s", "preconditioner.type=ilu0,jacobi", "-s", "solver.type=gmres")
objs = objects("sweep", out)
check("sweep: one object per run", rc in (0, 1) and len(objs) == 2 and [o["sweep"]["index"] for o in objs] == [0, 1], out[:300])
rc, out, err = run_bytes("--dry-run", "--json", "-s", "solver.restart=10,20,30")
objs = objects("dry run", out)
check("dry run: one object per run", rc == 0 and len(objs) == 3 and all(o["status"] == "dry_run" for o in objs), out[:300])
rc, out, err = run_bytes("--inspect", sherman, "--json")
objs = objects("inspect", out)
check("inspect: one object", rc == 0 and len(objs) == 1 and objs[0]["matrix"]["rows"] == 1000
      and "command_line" in objs[0], out[:300])
rc, out, err = run_bytes(sherman, *host, "--json", "-s", "solver.type=gmres", "-s", "preconditioner.type=none",
                         "-s", "solver.max_iterations=3", "-s", "solver.fallback=none")
objs = objects("not converged", out)
check("not converged: exit 1, status ok", rc == 1 and len(objs) == 1 and objs[0]["status"] == "ok"
      and objs[0]["exit_code"] == 1, out[:300])

# --- JSON: one error object for every error -------------------------------------------------------------
fixtures = sorted(f for f in os.listdir(os.path.join(src, "tests", "io", "data")) if f.endswith(".mtx"))
check("matrix fixtures found", len(fixtures) > 30, len(fixtures))
for f in fixtures:
    o = one_error(f"fixture {f}", [os.path.join(src, "tests", "io", "data", f), "--json", *host], 3)
    if o:
        check(f"fixture {f}: names the file", f in o["error"]["message"] and o["matrix"]["source"].endswith(f)
              and o["error"]["class"] == "input", o["error"])
    o = one_error(f"inspect fixture {f}", ["--inspect", os.path.join(src, "tests", "io", "data", f), "--json"], 3)

bad_cfgs = {
    "unknown key": "solver = { restrat = 5; };\n",
    "wrong type": "solver = { restart = \"many\"; };\n",
    "out of range": "solver = { rtol = 2.0; };\n",
    "syntax": "solver = { type = \"cg\" \n",
    "unknown group": "solvr = { type = \"cg\"; };\n",
}
for name, text in bad_cfgs.items():
    path = write(name.replace(" ", "_") + ".cfg", text)
    o = one_error(f"config {name}", ["-c", path, sherman, "--json", *host], 2)
    if o:
        check(f"config {name}: class usage, names the file", o["error"]["class"] == "usage"
              and os.path.basename(path) in o["error"]["message"], o["error"])
o = one_error("config missing include", ["-c", write("include.cfg", "@include \"nowhere.cfg\"\n"), sherman, "--json"], 3)
check("config missing include: class input", o.get("error", {}).get("class") == "input", o)
one_error("unreadable config", ["-c", os.path.join(tmp, "absent.cfg"), sherman, "--json"], 3)
one_error("bad -s key", [sherman, "--json", "-s", "solver.restrat=5"], 2)
one_error("bad -s value", [sherman, "--json", "-s", "solver.restart=abc"], 2)
one_error("-s without '='", [sherman, "--json", "-s", "solver.restart"], 2)
one_error("bad option", [sherman, "--json", "--bogus"], 2)
one_error("bad option before --json", ["--bogus", sherman, "--json"], 2)
one_error("option without its value", [sherman, "--json", "-c"], 2)
one_error("missing matrix argument", ["--json"], 2)
one_error("missing matrix argument, JSON from the file", ["-c", write("json.cfg", "output = { format = \"json\"; };\n")], 2)
one_error("two matrices", [sherman, sherman, "--json"], 2)
one_error("--inspect without a matrix", ["--inspect", "--json"], 2)
one_error("-o - with --json", [sherman, "-o", "-", "--json", *host], 2)
one_error("two inputs from standard input", ["-", "-b", "-", "--json", *host], 2)
one_error("missing matrix file", [missing, "--json", *host], 3)
one_error("-s output.format=json", [missing, "-s", "output.format=json", *host], 3)
one_error("missing rhs file", [sherman, "-b", os.path.join(tmp, "b.mtx"), "--json", *host], 3)
one_error("bad gen spec", ["gen:poisson3d:abc", "--json", *host], 2)
one_error("sweep with a bad value", [sherman, "--json", "-s", "solver.restart=10,abc"], 2)
one_error("no GPU", [sherman, "--json", "-s", "device.backend=cuda"], 5) if subprocess.run(
    [exe, "gen:poisson2d:4", "-s", "device.backend=cuda", "-q"], capture_output=True).returncode == 5 else None
rc, out, err = run_bytes(missing, "--json", "-s", "solver.restart=10,20", *host)
objs = objects("sweep of a missing matrix", out)
check("sweep of a missing matrix: one error object per run", rc == 3 and len(objs) == 2
      and all(o["status"] == "error" and o["exit_code"] == 3 for o in objs), out[:300])

# --- a file name that is not UTF-8 ------------------------------------------------------------------------
raw = os.path.join(tmp, "caf\xe9.mtx").encode("latin-1")
with open(sherman, "rb") as src_f, open(raw, "wb") as dst:
    dst.write(src_f.read())
for name, args in (("solve", [raw, "--json", *host]), ("inspect", ["--inspect", raw, "--json"]),
                   ("error", [raw + b".absent", "--json", *host])):
    rc, out, err = run_bytes(*args)
    objs = objects(f"non-UTF-8 name: {name}", out)
    ok = len(objs) == 1 and objs[0]["matrix"]["source"].endswith("caf\\xe9.mtx" + (".absent" if name == "error" else ""))
    check(f"non-UTF-8 name: {name}: \\xNN in place of the byte", ok, out[:300])
    if objs and name == "solve":
        check("non-UTF-8 name: command line", objs[0]["command_line"][1].endswith("caf\\xe9.mtx"),
              objs[0]["command_line"])
    if objs and name == "error":
        check("non-UTF-8 name: error message", "caf\\xe9.mtx" in objs[0]["error"]["message"], objs[0]["error"])

finish()
