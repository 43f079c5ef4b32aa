#!/usr/bin/env python3
"""Bar chart of bench/end_to_end.sh results: setup + solve time per matrix for the cuSPARSE-only
baseline, gpusolve with the same mathematics (ILU(0) + BiCGStab, our triangular solves), the same with
float factors, gpusolve's best configuration on the GPU, and the best on the host backend. Stacked bars:
setup (hatched) below solve; log scale; runs that did not converge are left out.

usage: scripts/plot_e2e.py E2E.jsonl [MORE.jsonl ...] OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def series(rows):
    """matrix -> {label: (setup, solve)} with the best (fastest total) of several candidates."""
    out = {}
    for r in rows:
        if not r.get("converged") or r.get("solve_s") is None:
            continue
        m = r["matrix"].replace("gen:", "").replace("data/matrices/", "")
        cfg = r.get("config") or ""
        if r["tool"] == "baseline":
            label = "baseline (cuSPARSE)"
        elif r["tool"] == "host":
            label = "host, best"
        elif cfg == "same math, trisolve auto":
            label = "same math"
        elif cfg.startswith("same math") and "float" in cfg:
            label = "same math, float factors"
        elif cfg.startswith("same math"):
            continue
        else:
            label = "GPU, best"
        t = ((r.get("setup_s") or 0.0), r["solve_s"])
        d = out.setdefault(m, {})
        if label not in d or sum(t) < sum(d[label]):
            d[label] = t
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    data = series(load(sys.argv[1:-1]))
    labels = ["baseline (cuSPARSE)", "same math", "same math, float factors", "GPU, best", "host, best"]
    colors = ["#888888", "#1f77b4", "#6baed6", "#2ca02c", "#d62728"]
    mats = [m for m in data if len(data[m]) > 1]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    w = 0.16
    for k, (lab, col) in enumerate(zip(labels, colors)):
        xs, setup, solve = [], [], []
        for i, m in enumerate(mats):
            if lab in data[m]:
                xs.append(i + (k - 2) * w)
                setup.append(max(data[m][lab][0], 1e-5))
                solve.append(data[m][lab][1])
        ax.bar(xs, setup, w, color=col, hatch="//", edgecolor="white", linewidth=0)
        ax.bar(xs, solve, w, bottom=setup, color=col, label=lab)
    ax.set_yscale("log")
    ax.set_xticks(range(len(mats)))
    ax.set_xticklabels(mats)
    ax.set_ylabel("setup (hatched) + solve [s]")
    ax.set_title("Time to ||b - Ax|| / ||b|| < 1e-7 (b = A*1, x0 = 0), H100; host = 16 cores")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(sys.argv[-1], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
