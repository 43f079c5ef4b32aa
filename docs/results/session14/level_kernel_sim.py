#!/usr/bin/env python3
"""A model of lv_levels_warp_kernel on poisson3d N^3's L (session 14, docs/notes-trisolve.md version 16):
W persistent warps take chunks of 32 consecutive rows in natural order (an atomic ticket); a row's level
is known one hop after its dependencies outside the warp (rows i-N and i-N^2), its in-warp link (row
i-1) costs nothing (shuffles); a warp takes its next chunk once all 32 rows are known. Prints the
number of dependent hops of the whole kernel. With W = 4224 (4 blocks of 256 per SM, 132 SMs) it gives
500 hops against ~225 with unlimited warps; measured 0.96 ms -> ~1.9 us per hop.
usage: level_kernel_sim.py [W [N]]"""
import heapq
import sys


def hops(W, N):
    n = N ** 3
    done = [0.0] * n
    free = [0.0] * W
    heapq.heapify(free)
    last = 0.0
    for c in range((n + 31) // 32):
        start = heapq.heappop(free)
        fin = start
        for r in range(c * 32, min(n, (c + 1) * 32)):
            i, j, k = r % N, (r // N) % N, r // (N * N)
            t = start + 1
            if j > 0:
                t = max(t, done[r - N] + 1)
            if k > 0:
                t = max(t, done[r - N * N] + 1)
            if i > 0:
                t = max(t, done[r - 1] + (0 if r - 1 >= c * 32 else 1))
            done[r] = t
            fin = max(fin, t)
        heapq.heappush(free, fin)
        last = max(last, fin)
    return last


if __name__ == '__main__':
    W = int(sys.argv[1]) if len(sys.argv) > 1 else 4224
    N = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    print("warps %d, N %d: %d hops" % (W, N, hops(W, N)))
