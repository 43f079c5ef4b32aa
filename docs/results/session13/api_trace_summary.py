#!/usr/bin/env python3
"""Summary of an api_trace.so log (session 13): for each analysis window (from a launch of
lv_stats_init_kernel that follows a solve or the start, to the next solve kernel launch), the wall time,
the time inside each CUDA API call kind (count, total ms) and the gaps; with -v the timeline.
usage: api_trace_summary.py TRACE NM_OUTPUT [-v]   (NM_OUTPUT: `nm -C BINARY`)"""
import sys
from collections import defaultdict


def main(trace, nmfile, verbose):
    names = {}
    for line in open(nmfile):
        p = line.split(None, 2)
        if len(p) == 3 and p[1] in 'tTwW':
            names[int(p[0], 16)] = p[2].strip()
    ev, handle = [], {}
    for line in open(trace):
        f = line.split()
        if f[0] == 'kernel_off':
            handle[int(f[1])] = names.get(int(f[2]), f[2])
            continue
        n, s, d, a = f
        s, d, a = float(s), float(d), int(a)
        if n == 'kernel':
            continue
        k = handle.get(a, hex(a)) if n == 'launch' else ''
        ev.append((n, s, d, a, k))
    # windows: analysis kernels until a solve kernel
    wins, cur = [], None
    for e in ev:
        n, s, d, a, k = e
        if n == 'launch' and 'lv_stats_init_kernel' in k and cur is None:
            cur = [e]
        elif cur is not None:
            if n == 'launch' and any(x in k for x in ('sf_kernel', 'sf_once_kernel', 'sf_td2_kernel', 'sf_level_kernel')):
                wins.append(cur)
                cur = None
            else:
                cur.append(e)
    for w in wins:
        t0, t1 = w[0][1], w[-1][1] + w[-1][2]
        agg = defaultdict(lambda: [0, 0.0])
        for n, s, d, a, k in w:
            agg[n][0] += 1
            agg[n][1] += d
        print("window %.1f ms (%.2f .. %.2f ms): %s" % ((t1 - t0) / 1e3, t0 / 1e3, t1 / 1e3, ", ".join(
            "%s %d/%.2f" % (n, c, t / 1e3) for n, (c, t) in sorted(agg.items(), key=lambda x: -x[1][1]))))
        if verbose:
            for n, s, d, a, k in w:
                print("   %9.1f %8.1f %-22s %s" % (s - t0, d, n, k[:70] if n == 'launch' else a))


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], '-v' in sys.argv)
