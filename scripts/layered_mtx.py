#!/usr/bin/env python3
"""Layered triangular test matrices for the per-level cost of the exact triangular solvers.

usage: scripts/layered_mtx.py LEVELS WIDTH DEPS OUT.mtx [MODE]

The matrix is lower triangular with LEVELS x WIDTH rows in level order: row r (0 <= r < WIDTH) of level
l > 0 reads DEPS rows of level l - 1, so every level has exactly WIDTH rows and every row DEPS
dependencies (diagonal 2 DEPS + 1, entries -1: diagonally dominant). `bench_trisolve --matrix OUT.mtx
--factors triangles` then times a solve of known levels, width and dependencies per row
(bench/layered_sweep.sh). MODE says which rows of the level before (positions modulo WIDTH; a warp of
the sync-free kernel holds 32 consecutive positions):
  c  a window of DEPS positions centred on r (default; a 1D stencil)
  a  the window inside r's aligned group of 32 (r's warp of the level before)
  s  r + t * (WIDTH / DEPS), t < DEPS: spread over groups of 32, the same lane when WIDTH / DEPS is a
     multiple of 32
  r  as s, but lane (r + t) mod 32 of each group (the same groups as s, lanes mixed)
"""
import sys


def columns(mode, r, k, width):
    if mode == "c":
        cols = ((r - k // 2 + t) % width for t in range(k))
    elif mode == "a":
        cols = ((r & ~31) + ((r + t) & 31) for t in range(k))
    elif mode == "s":
        cols = ((r + t * (width // k)) % width for t in range(k))
    elif mode == "r":
        cols = ((((r + t * (width // k)) % width) & ~31) + ((r + t) & 31) for t in range(k))
    else:
        raise SystemExit("layered_mtx.py: MODE is '%s'; expected c, a, s or r" % mode)
    return sorted(set(cols))


def main(argv):
    if len(argv) not in (5, 6):
        raise SystemExit(__doc__)
    try:
        levels, width, k = int(argv[1]), int(argv[2]), int(argv[3])
    except ValueError:
        raise SystemExit("layered_mtx.py: LEVELS, WIDTH and DEPS must be integers")
    mode = argv[5] if len(argv) == 6 else "c"
    if levels < 1 or width < 1 or not 1 <= k <= width:
        raise SystemExit("layered_mtx.py: expected LEVELS >= 1, WIDTH >= 1 and 1 <= DEPS <= WIDTH")
    width_rows = [columns(mode, r, k, width) for r in range(width)]
    if width > 1 and mode in ("a", "r") and width % 32:
        raise SystemExit("layered_mtx.py: modes a and r need WIDTH a multiple of 32")
    nnz = levels * width + (levels - 1) * sum(len(c) for c in width_rows)
    with open(argv[4], "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write("%% layered: %d levels of %d rows, %d dependencies per row, mode %s\n" % (levels, width, k, mode))
        f.write("%d %d %d\n" % (levels * width, levels * width, nnz))
        for lev in range(levels):
            out = []
            for r in range(width):
                i = lev * width + r + 1
                out.append("%d %d %d\n" % (i, i, 2 * k + 1))
                if lev > 0:
                    base = (lev - 1) * width + 1
                    out.extend("%d %d -1\n" % (i, base + c) for c in width_rows[r])
            f.write("".join(out))


if __name__ == "__main__":
    main(sys.argv)
