#!/usr/bin/env python3
"""`gpusolve --completion bash`: the script is valid bash, and its completion function (called with
COMP_WORDS/COMP_CWORD as bash sets them, words split at '=') completes the options, every schema key
after -s / --set, the values of every choice and boolean key, and file names where a file is expected;
an unknown shell is a usage error. Usage: completion_test.py GPUSOLVE SRC_DIR"""
import os, shutil, subprocess, sys

from apptest import check, exe, finish, run, scratch

if not shutil.which("bash"):
    print("bash not found: skipped")
    sys.exit(77)
tmp = scratch("gs_completion_")
rc, script, err = run("--completion", "bash")
check("--completion bash: exit 0", rc == 0 and script.startswith("#"), err[:300])
path = os.path.join(tmp, "gpusolve.bash")
with open(path, "w") as f:
    f.write(script)
syn = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
check("the script is valid bash", syn.returncode == 0, syn.stderr[:300])
rc, out, err = run("--completion", "zsh")
check("--completion zsh: exit 2", rc == 2 and "bash" in err, f"exit {rc}: {err[:200]}")
rc, out, err = run("--completion")
check("--completion without a shell: exit 2", rc == 2, f"exit {rc}: {err[:200]}")

# the words of each case as bash gives them: '=' is a word of its own (COMP_WORDBREAKS)
DRIVER = r'''
source "$1"
shift
COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
_gpusolve
printf '%s\n' "${COMPREPLY[@]}"
'''


def complete(*words, cwd=None):
    """The completions of the last word of `gpusolve WORDS...`."""
    p = subprocess.run(["bash", "-c", DRIVER, "driver", path, "gpusolve", *words], capture_output=True, text=True,
                       cwd=cwd, timeout=60)
    check(f"complete {words}: no error", p.returncode == 0 and not p.stderr, p.stderr[:300])
    return [l for l in p.stdout.split("\n") if l]


# options: short and long, with the long forms of -c -s -o -b -x
check("--con -> --config", complete("--con") == ["--config"], complete("--con"))
opts = complete("-")
for o in ("-c", "-s", "-o", "-b", "-x", "-q", "-v", "-h", "--config", "--set", "--output", "--rhs", "--x0", "--history", "--json",
          "--monitor", "--threads", "--completion", "--dry-run", "--inspect", "--help"):
    check(f"option {o} offered", o in opts, opts)

# every schema key after -s and --set, ending in '='
table = run("--help-config")[1].splitlines()[1:]
schema = {}
for line in table:
    cols = line.split()
    if len(cols) >= 4:
        schema[cols[0]] = (cols[1], cols[3])
check("schema read", len(schema) > 30, len(schema))
keys = complete("-s", "")
check("-s: every schema key, KEY=", sorted(keys) == sorted(k + "=" for k in schema), set(keys) ^ {k + "=" for k in schema})
check("--set: the same keys", sorted(complete("--set", "")) == sorted(keys))
check("-s solver.ty -> solver.type=", complete("-s", "solver.ty") == ["solver.type="], complete("-s", "solver.ty"))
check("-s precond -> the preconditioner keys",
      sorted(complete("-s", "precond")) == sorted(k + "=" for k in schema if k.startswith("precond")))

# the values of every choice and boolean key, after KEY= (bash splits at '=': KEY, =, VALUE)
for key, (typ, allowed) in schema.items():
    if typ not in ("choice", "bool"):
        continue
    values = allowed.split("|") if typ == "choice" else ["true", "false"]
    got = complete("-s", key, "=")
    check(f"-s {key}= -> its values", sorted(got) == sorted(values), (got, values))
    got = complete("--set", "=", key, "=", values[0][:1])
    check(f"--set={key}={values[0][:1]} -> the values starting so",
          sorted(got) == sorted(v for v in values if v.startswith(values[0][:1])), got)
check("-s solver.type=c -> cg", complete("-s", "solver.type", "=", "c") == ["cg"], complete("-s", "solver.type", "=", "c"))
check("-s solver.restart= -> nothing (a number)", complete("-s", "solver.restart", "=") == [])

# file names: after -c/-o/-b/-x/--history, for the matrix, and for keys naming a file
os.mkdir(os.path.join(tmp, "sub"))
for name in ("a.mtx", "a.cfg", "b.mtx"):
    open(os.path.join(tmp, name), "w").close()
check("-c a -> files", sorted(complete("-c", "a", cwd=tmp)) == ["a.cfg", "a.mtx"], complete("-c", "a", cwd=tmp))
check("--output b -> b.mtx", complete("--output", "b", cwd=tmp) == ["b.mtx"])
check("-x b -> b.mtx", complete("-x", "b", cwd=tmp) == ["b.mtx"])
check("--history b -> b.mtx", complete("--history", "b", cwd=tmp) == ["b.mtx"])
check("-q b: the matrix", complete("-q", "b", cwd=tmp) == ["b.mtx"])
check("--threads: nothing", complete("--threads", "") == [])
check("the matrix: a -> files", sorted(complete("a", cwd=tmp)) == ["a.cfg", "a.mtx"], complete("a", cwd=tmp))
check("the matrix: gen -> the generators", "gen:poisson2d:" in complete("gen", cwd=tmp), complete("gen", cwd=tmp))
check("-s system.rhs=a -> files", sorted(complete("-s", "system.rhs", "=", "a", cwd=tmp)) == ["a.cfg", "a.mtx"],
      complete("-s", "system.rhs", "=", "a", cwd=tmp))
check("--completion b -> bash", complete("--completion", "b") == ["bash"])

# cmake --install puts a copy beside the other files (checked by tests/lib/install_test.sh when it runs)
finish()
