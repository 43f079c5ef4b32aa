#!/usr/bin/env bash
# Quick start: set up (install missing packages, build) and solve the bundled example on the GPU if
# there is one, on the host backend otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
exec ./build/gpusolve -c data/examples/quickstart.cfg data/matrices/sherman1.mtx "$@"
