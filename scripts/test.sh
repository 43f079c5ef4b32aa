#!/usr/bin/env bash
# Set up (install missing packages, build) and run the whole test suite. GPU tests (label gpu) run on
# a machine with a GPU and are reported as skipped elsewhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
