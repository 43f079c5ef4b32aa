#!/usr/bin/env python3
"""Plots of gpusolve results, as PNG files (matplotlib; optional: this script says how to install it).

  plot.py convergence H1.csv [H2.csv ...] [--label NAME ...] -o conv.png
  plot.py convergence --jsonl sweep.jsonl [--where KEY=VALUE ...] -o conv.png
      relative residual against iteration (left) and against time (right), log scale, one line per
      history CSV (gpusolve --history). With --jsonl, the histories named by the runs of a sweep
      (output.history of each JSON object), labelled by the values the sweep varied.

  plot.py sweep sweep.jsonl [--x KEY] [--y METRIC ...] [--where KEY=VALUE ...] -o sweep.png
      a metric against a varied key, one line per combination of the other varied keys, one panel per
      metric. KEY is a key the sweep varied (default: the first); METRIC a dotted path into the JSON
      object (default: solve.iterations and time.solve); `time.setup` is the sum of
      time.setup_symbolic and time.setup_numeric, `time.setup+solve` adds time.solve. Runs that did
      not converge are drawn as red crosses. Keys set together (-s 'trisolve.*.sweeps=1,2') are
      shown once, as trisolve.*.sweeps. --where KEY=VALUE keeps only the runs with that value.

  plot.py table sweep.jsonl [--y METRIC ...] [--where KEY=VALUE ...]
      the runs as a text table: the varied keys, then the metrics (needs no matplotlib).
"""
import argparse
import json
import os
import sys

INSTALL_HINT = ("plot.py needs matplotlib, which is not installed.\n"
                "  pip install matplotlib              (any system)\n"
                "  sudo apt-get install python3-matplotlib   (Debian/Ubuntu)\n")


def need_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display needed
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        sys.stderr.write(INSTALL_HINT)
        sys.exit(2)


def die(msg):
    sys.stderr.write(f"plot.py: {msg}\n")
    sys.exit(2)


# ------------------------------------------------------------------------------------------------
# reading

def read_history(path):
    """(iterations, relative residuals, times) of a history CSV written by gpusolve --history."""
    its, rel, t = [], [], []
    try:
        with open(path) as f:
            header = f.readline().strip().split(",")
            want = ["iteration", "residual", "relative_residual", "time_s"]
            if header != want:
                die(f"{path}: expected the header {','.join(want)}, found {','.join(header)}")
            for n, line in enumerate(f, start=2):
                if not line.strip():
                    continue
                parts = line.split(",")
                if len(parts) != 4:
                    die(f"{path}:{n}: expected 4 comma-separated values, found {len(parts)}")
                its.append(int(parts[0]))
                rel.append(float(parts[2]))
                t.append(float(parts[3]))
    except OSError as e:
        die(f"{path}: {e.strerror}")
    return its, rel, t


def read_jsonl(path):
    runs = []
    try:
        with open(path) as f:
            for n, line in enumerate(f, start=1):
                line = line.strip()
                if not line:
                    continue
                try:
                    runs.append(json.loads(line))
                except ValueError as e:
                    die(f"{path}:{n}: not a JSON object ({e}); expected gpusolve --json output")
    except OSError as e:
        die(f"{path}: {e.strerror}")
    if not runs:
        die(f"{path}: no JSON objects (run gpusolve with --json and redirect stdout to this file)")
    return runs


def get(obj, path):
    """Value at a dotted path ("solve.iterations"), None when absent; config keys may be given without
    the "config." prefix ("preconditioner.blocks")."""
    if path == "time.setup":
        a, b = get(obj, "time.setup_symbolic"), get(obj, "time.setup_numeric")
        return None if a is None and b is None else (a or 0.0) + (b or 0.0)
    if path == "time.setup+solve":
        a, b = get(obj, "time.setup"), get(obj, "time.solve")
        return None if a is None or b is None else a + b
    varied = obj.get("sweep", {}).get("varied", {})
    if path in varied:
        return varied[path]
    for root in (obj, obj.get("config", {})):
        cur = root
        for part in path.split("."):
            if not isinstance(cur, dict) or part not in cur:
                cur = None
                break
            cur = cur[part]
        if cur is not None:
            return cur
    return None


def converged(run):
    return run.get("status") == "ok" and bool(get(run, "solve.converged"))


def short_names(keys):
    """The last dotted name of each key where that is unambiguous ("blocks"), else the whole key."""
    leaves = [k.split(".")[-1] for k in keys]
    return {k: (leaf if leaves.count(leaf) == 1 else k) for k, leaf in zip(keys, leaves)}


def varied_of(run):
    return run.get("sweep", {}).get("varied", {})


def wildcard(paths):
    """trisolve.lower.sweeps + trisolve.upper.sweeps -> trisolve.*.sweeps"""
    parts = [p.split(".") for p in paths]
    if len({len(p) for p in parts}) != 1:
        return paths[0]
    return ".".join(c[0] if len(set(c)) == 1 else "*" for c in zip(*parts))


def merge_linked(runs, keys):
    """Keys that hold the same value in every run (set together, e.g. -s 'trisolve.*.sweeps=1,2')
    shown once: [(display name, representative key)]."""
    out, used = [], set()
    for k in keys:
        if k in used:
            continue
        same = [j for j in keys if j not in used and all(varied_of(r).get(j) == varied_of(r).get(k) for r in runs)]
        used.update(same)
        out.append((wildcard(same), k))
    return out


def labeller(runs, keys):
    """A function run -> "sweeps=3, type=jacobi" over the given varied keys, linked keys merged."""
    merged = merge_linked(runs, keys)
    names = short_names([d for d, _ in merged])
    return lambda run: ", ".join(f"{names[d]}={varied_of(run).get(k)}" for d, k in merged)


def parse_value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def select(runs, where):
    """The runs whose value at KEY equals VALUE for every --where KEY=VALUE."""
    for cond in where or []:
        if "=" not in cond:
            die(f"--where {cond}: expected KEY=VALUE, e.g. --where trisolve.lower.sweeps=3")
        k, v = cond.split("=", 1)
        want = parse_value(v)
        runs = [r for r in runs if get(r, k) == want or str(get(r, k)) == v]
        if not runs:
            die(f"--where {cond}: no run has {k} = {v}")
    return runs


# ------------------------------------------------------------------------------------------------
# convergence

def cmd_convergence(a):
    curves = []  # (label, its, rel, t)
    if a.jsonl:
        base = os.path.dirname(os.path.abspath(a.jsonl))
        runs = select(read_jsonl(a.jsonl), a.where)
        keys = []
        for r in runs:
            keys += [k for k in varied_of(r) if k not in keys]
        # keys that one value throughout the selected runs need no place in the labels
        keys = [k for k in keys if len({json.dumps(varied_of(r).get(k)) for r in runs}) > 1]
        label_of = labeller(runs, keys)
        for run in runs:
            h = get(run, "output.history")
            if not isinstance(h, str) or not h:
                continue
            path = h if os.path.exists(h) else os.path.join(base, h)
            label = label_of(run) or os.path.basename(h)
            if not converged(run):
                label += f" ({get(run, 'solve.reason') or run.get('status')})"
            curves.append((label, *read_history(path)))
        if not curves:
            die(f"{a.jsonl}: no run names a history file; run the sweep with --history FILE")
    if a.files:
        if a.label and len(a.label) != len(a.files):
            die(f"{len(a.label)} --label for {len(a.files)} files; give one label per file or none")
        for i, p in enumerate(a.files):
            label = a.label[i] if a.label else os.path.splitext(os.path.basename(p))[0]
            curves.append((label, *read_history(p)))
    if not curves:
        die("give history CSV files or --jsonl SWEEP.jsonl")

    plt = need_matplotlib()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    cmap = plt.get_cmap("tab10" if len(curves) <= 10 else "tab20")
    for i, (label, its, rel, t) in enumerate(curves):
        rel = [r if r > 0 else float("nan") for r in rel]  # log scale: zero residuals are off the axis
        style = dict(color=cmap(i % cmap.N), linewidth=1.6, label=label)
        ax1.plot(its, rel, **style)
        ax2.plot(t, rel, **style)
    for ax, xl in ((ax1, "iteration"), (ax2, "time since the solve started [s]")):
        ax.set_yscale("log")
        ax.set_xlabel(xl, fontsize=11)
        ax.set_ylabel("relative residual ||r|| / ||b||", fontsize=11)
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.12)
        ax.tick_params(labelsize=10)
    where = " (" + "; ".join(a.where) + ")" if a.where else ""
    if a.title:
        fig.suptitle(a.title, fontsize=12)
    ax1.set_title("residual against iterations" + where, fontsize=12)
    ax2.set_title("residual against time" + where, fontsize=12)
    ax2.legend(fontsize=9, loc="upper right", framealpha=0.9)
    fig.savefig(a.output, dpi=a.dpi)
    print(f"wrote {a.output} ({len(curves)} curve{'s' if len(curves) != 1 else ''})")


# ------------------------------------------------------------------------------------------------
# sweep

# axis labels of the usual metrics (any other dotted path is shown as written)
NICE = {
    "solve.iterations": "iterations",
    "time.solve": "solve time [s]",
    "time.setup": "setup time [s]",
    "time.setup+solve": "setup + solve time [s]",
    "time.per_iteration": "time per iteration [s]",
    "time.setup_symbolic": "symbolic setup time [s]",
    "time.setup_numeric": "numeric setup time [s]",
    "solve.residual_true": "true relative residual",
    "solve.error_vs_xstar": "error ||x - x*|| / ||x*||",
}


def nice(metric):
    if metric in NICE:
        return NICE[metric]
    return metric + (" [s]" if metric.startswith("time.") else "")


def as_number(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    return None


def cmd_sweep(a):
    runs = select(read_jsonl(a.jsonl), a.where)
    varied_keys = []
    for r in runs:
        for k in r.get("sweep", {}).get("varied", {}):
            if k not in varied_keys:
                varied_keys.append(k)
    if not varied_keys:
        die(f"{a.jsonl}: the runs vary no key (is this a sweep? give a key several values with -s KEY=A,B)")
    x = a.x or varied_keys[0]
    if x not in varied_keys:
        die(f"--x {x}: not a key this sweep varied; it varied: {', '.join(varied_keys)}")
    # a line per combination of the other keys, leaving out those that follow x (linked to it, or
    # constant in the selected runs), and showing linked keys once
    def follows_x(k):
        seen = {}
        for r in runs:
            xv, kv = json.dumps(varied_of(r).get(x)), json.dumps(varied_of(r).get(k))
            if seen.setdefault(xv, kv) != kv:
                return False
        return True

    others = [k for k in varied_keys if k != x and not follows_x(k)]
    merged = merge_linked(runs, others)
    others = [k for _, k in merged]
    metrics = a.y or ["solve.iterations", "time.solve"]

    # x positions: numbers when every value is a number, else categories in first-seen order
    xvals = [r.get("sweep", {}).get("varied", {}).get(x) for r in runs]
    numeric_x = all(as_number(v) is not None for v in xvals)
    cats = []
    if not numeric_x:
        for v in xvals:
            if v not in cats:
                cats.append(v)

    def xpos(v):
        return as_number(v) if numeric_x else cats.index(v)

    # one line per combination of the other varied keys, in first-seen order
    groups = {}
    for r in runs:
        var = r.get("sweep", {}).get("varied", {})
        key = tuple((k, var.get(k)) for k in others)
        groups.setdefault(key, []).append(r)

    group_label = labeller(runs, others)
    plt = need_matplotlib()
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.6 * len(metrics) + 1.4, 4.6), constrained_layout=True,
                             squeeze=False)
    cmap = plt.get_cmap("tab10" if len(groups) <= 10 else "tab20")
    markers = "osD^v<>ph*"
    for m, metric in enumerate(metrics):
        ax = axes[0][m]
        failed_drawn = False
        plotted = 0
        for g, (key, rs) in enumerate(groups.items()):
            pts = sorted(((xpos(varied_of(r).get(x)), as_number(get(r, metric)), converged(r)) for r in rs),
                         key=lambda p: p[0])
            good = [(px, py) for px, py, ok in pts if ok and py is not None]
            bad = [(px, py) for px, py, ok in pts if not ok and py is not None]
            label = group_label(rs[0]) or None
            color = cmap(g % cmap.N)
            if good:
                ax.plot([p[0] for p in good], [p[1] for p in good], marker=markers[g % len(markers)], markersize=6,
                        linewidth=1.6, color=color, label=label)
                plotted += 1
            if bad:
                ax.plot([p[0] for p in bad], [p[1] for p in bad], linestyle="none", marker="x", markersize=9,
                        markeredgewidth=2, color="tab:red", label=None if failed_drawn else "not converged")
                failed_drawn = True
        if plotted == 0 and not failed_drawn:
            die(f"--y {metric}: no run has a number there (e.g. solve.iterations, time.solve, time.setup, "
                f"time.setup+solve, solve.residual_true, preconditioner.fill_ratio)")
        linked = [d for d, _ in merge_linked(runs, [k for k in varied_keys if k == x or
                                                   all(varied_of(r).get(k) == varied_of(r).get(x) for r in runs)])]
        ax.set_xlabel(linked[0] if linked else x, fontsize=11)
        ax.set_ylabel(nice(metric), fontsize=11)
        if metric.endswith("iterations") or metric.endswith("levels"):
            from matplotlib.ticker import MaxNLocator  # counts: integer ticks
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if not numeric_x:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels([str(c) for c in cats], fontsize=10)
        else:
            if a.logx:
                ax.set_xscale("log")
            ticks = sorted({as_number(v) for v in xvals})
            if len(ticks) <= 12:  # the swept values themselves, written as given
                ax.set_xticks(ticks)
                ax.set_xticklabels([f"{t:g}" for t in ticks], fontsize=10)
                ax.xaxis.set_minor_locator(__import__("matplotlib.ticker", fromlist=["NullLocator"]).NullLocator())
        counts = metric.endswith("iterations") or metric.endswith("levels")
        if a.logy and not counts:  # counts stay linear: their range is narrow and integer ticks read better
            ax.set_yscale("log")
        ax.grid(True, alpha=0.35)
        ax.tick_params(labelsize=10)
        if len(groups) > 1 or failed_drawn:
            ax.legend(fontsize=9, framealpha=0.9)
    matrix = get(runs[0], "matrix.name") or get(runs[0], "matrix.source") or ""
    backend = get(runs[0], "backend.name") or ""
    where = "; ".join(a.where or [])
    fig.suptitle(a.title or f"{matrix}  ({backend}{'; ' + where if where else ''})".strip(), fontsize=12)
    fig.savefig(a.output, dpi=a.dpi)
    print(f"wrote {a.output} ({len(runs)} runs, {len(groups)} line{'s' if len(groups) != 1 else ''} per panel)")


# ------------------------------------------------------------------------------------------------
# table (no matplotlib needed)

def cmd_table(a):
    runs = select(read_jsonl(a.jsonl), a.where)
    keys = []
    for r in runs:
        keys += [k for k in varied_of(r) if k not in keys]
    merged = merge_linked(runs, keys)
    cols = [d for d, _ in merged] + (a.y or ["solve.iterations", "solve.reason", "time.setup", "time.solve",
                                             "solve.residual_true"])
    rows = []
    for r in runs:
        row = [str(varied_of(r).get(k)) for _, k in merged]
        for m in cols[len(merged):]:
            v = get(r, m)
            if m == "solve.reason" and r.get("status") == "error":
                v = "error: " + str(get(r, "error.status"))
            if isinstance(v, float):
                v = f"{v:.3e}" if (abs(v) < 1e-3 or abs(v) >= 1e5) and v != 0 else f"{v:.4f}"
            row.append("-" if v is None else str(v))
        rows.append(row)
    w = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip())
    for r in rows:
        print("  ".join(x.rjust(w[i]) if x[:1].isdigit() or x[:1] == "-" else x.ljust(w[i])
                        for i, x in enumerate(r)).rstrip())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convergence", help="residual against iteration and time, from history CSVs")
    c.add_argument("files", nargs="*", help="history CSV files (gpusolve --history)")
    c.add_argument("--jsonl", help="a sweep's JSON Lines: plot the history of each run, labelled by its varied values")
    c.add_argument("--label", action="append", help="legend label of each file, in order")
    c.add_argument("--where", action="append", metavar="KEY=VALUE",
                   help="with --jsonl: only the runs with this value (repeatable)")
    c.add_argument("--title")
    c.add_argument("-o", "--output", default="convergence.png")
    c.add_argument("--dpi", type=int, default=110)
    s = sub.add_parser("sweep", help="a metric against a varied key, from a sweep's JSON Lines")
    s.add_argument("jsonl")
    s.add_argument("--x", help="the varied key on the x axis (default: the first varied key)")
    s.add_argument("--y", action="append", help="metric(s), dotted paths (default: solve.iterations, time.solve)")
    s.add_argument("--where", action="append", metavar="KEY=VALUE", help="only the runs with this value (repeatable)")
    s.add_argument("--logx", action="store_true")
    s.add_argument("--logy", action="store_true", help="log y axis for every metric except counts (iterations, levels)")
    s.add_argument("--title")
    s.add_argument("-o", "--output", default="sweep.png")
    s.add_argument("--dpi", type=int, default=110)
    t = sub.add_parser("table", help="a text table of a sweep's runs (needs no matplotlib)")
    t.add_argument("jsonl")
    t.add_argument("--y", action="append", help="columns after the varied keys (default: iterations, reason, "
                                                 "time.setup, time.solve, solve.residual_true)")
    t.add_argument("--where", action="append", metavar="KEY=VALUE")
    a = p.parse_args()
    {"convergence": cmd_convergence, "sweep": cmd_sweep, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
