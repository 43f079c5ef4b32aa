#!/usr/bin/env python3
"""Where a triangular-solve analysis goes: one line per (matrix, type, side) of bench_trisolve --json
files, with the wall time of gs_trisolve_analyse (ana, ms), the solver's own analysis_time (int) and its
steps from the view (level order: upload, row check, level kernel, layout; merged schedule: T's plan,
the builder, the whole transformation, the two stages' plans; warp runs chosen by the rule: tplan is the
row-level pass before the runs' plan), and the median solve (us).
usage: bench/analysis_summary.py FILE.jsonl [...]   (e.g. from bench_trisolve --set --device-factors)"""
import json
import sys


def main(paths):
    for fn in paths:
        for line in open(fn):
            d = json.loads(line)
            if 'type' not in d or 'trisolve' not in d:
                continue
            t = d['trisolve']

            def ms(k):
                return 1e3 * t.get(k, float('nan'))
            print("%-12s %-9s %s %-20s ana %6.2f int %6.2f | up %5.2f chk %5.2f lvl %5.2f lay %5.2f | "
                  "tplan %5.2f bld %5.2f mrg %5.2f td %5.2f m %5.2f | solve %7.1f" % (
                      d['matrix'][:12], d['type'], d['side'], d.get('selected', '')[:20], d['analyse_ms'],
                      ms('analysis_time'), ms('upload_time'), ms('check_time'), ms('level_time'),
                      ms('layout_time'), ms('merge_tplan_time') if 'merge_tplan_time' in t else ms('row_levels_time'), ms('merge_build_time'), ms('merge_time'),
                      ms('td.analysis_time'), ms('m.analysis_time'), d['median_us']))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
