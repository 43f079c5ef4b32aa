#!/usr/bin/env python3
"""The documentation cannot drift from the code: docs/config-keys.md is byte for byte the output of
`gpusolve --help-config-markdown`, every key of the schema is in it, and every option of
`gpusolve --help` is described in docs/user-guide.md. Usage: docs_test.py GPUSOLVE SRC_DIR"""
import os, re, subprocess

from apptest import check, exe, finish, src


gen = subprocess.run([exe, "--help-config-markdown"], capture_output=True, text=True, timeout=60)
check("--help-config-markdown exit", gen.returncode == 0, gen.stderr)
path = os.path.join(src, "docs", "config-keys.md")
try:
    with open(path) as f:
        committed = f.read()
except OSError as e:
    committed = ""
    check("docs/config-keys.md exists", False, str(e))
if committed != gen.stdout:
    a, b = committed.splitlines(), gen.stdout.splitlines()
    first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    check("docs/config-keys.md is generated", False,
          f"differs from `gpusolve --help-config-markdown` at line {first + 1}: "
          f"file {a[first] if first < len(a) else '<end>'!r}, generated {b[first] if first < len(b) else '<end>'!r}; "
          f"regenerate with: build/gpusolve --help-config-markdown > docs/config-keys.md")
else:
    check("docs/config-keys.md is generated", True)

# every schema key (from --help-config, first column) is in the page
table = subprocess.run([exe, "--help-config"], capture_output=True, text=True, timeout=60).stdout.splitlines()
keys = [l.split()[0] for l in table[1:] if l.strip()]
check("schema has keys", len(keys) > 30, len(keys))
for k in keys:
    check(f"key {k} documented", f"`{k}`" in committed, k)

# every long option of --help is described in the user guide
with open(os.path.join(src, "docs", "user-guide.md")) as f:
    guide = f.read()
usage = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60).stdout
opts = sorted(set(re.findall(r"^\s+(--[a-z-]+|-[a-z])\b", usage, re.M)))
check("help lists options", len(opts) >= 10, opts)
for o in opts:
    check(f"option {o} in user guide", f"`{o}" in guide, o)
for code in (0, 1, 2, 3, 4, 5, 6, 70):
    check(f"exit code {code} in user guide", re.search(rf"^\| {code} \|", guide, re.M) is not None, code)

finish()
