#!/usr/bin/python3
"""Plots of fecsim studies, written as PNG and SVG.

  plot.py sweep DIR --x KEY [--y METRIC] [--out PREFIX] [--title TEXT]
      from `fecsim collect DIR` (DIR/results.json): METRIC against the swept KEY, one line per
      combination of the other swept keys; over several seeds the line is the mean and a band
      spans min..max.
  plot.py table TABLE.txt [--out PREFIX]
      from what `make table` printed: simulated vs measured per row. Prediction rows get the
      band `make table` printed for them (the row run with its platform's uncertain parameters
      at the low ends of their plausible ranges and at the high ends, scripts/bands.tsv).
"""
import argparse
import json
import math
import re
import sys

try:
    import matplotlib
except ImportError:
    sys.exit(f"plot.py: no matplotlib for {sys.executable}: Debian's python3-matplotlib (scripts/install-deps.sh) "
             "is for /usr/bin/python3; run scripts/plot.py directly")

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

# Fixed so that regenerated images change only when the figures do.
plt.rcParams.update({"svg.hashsalt": "fecsim", "figure.dpi": 100, "font.size": 9})


def fail(msg):
    print(f"plot.py: {msg}", file=sys.stderr)
    sys.exit(2)


def label(value):
    """A swept value as text: lists of one string (pktgen commands) show that string."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else json.dumps(value)


def save(fig, prefix):
    fig.tight_layout()
    for ext in ("png", "svg"):
        try:
            fig.savefig(f"{prefix}.{ext}", metadata={"Date": None} if ext == "svg" else {"Software": None})
        except OSError as e:
            fail(f"{prefix}.{ext}: cannot write: {e.strerror}")
    plt.close(fig)
    print(f"{prefix}.png, {prefix}.svg")


def plot_sweep(args):
    try:
        with open(f"{args.dir}/manifest.json") as f:
            keys = json.load(f)["keys"]
        with open(f"{args.dir}/results.json") as f:
            rows = json.load(f)
    except (OSError, ValueError, KeyError) as e:
        fail(f"{args.dir}: not a collected sweep ({e}); run `fecsim collect {args.dir}` first")
    if args.x not in keys:
        fail(f"--x {args.x}: not a swept key of {args.dir} (swept: {', '.join(keys)})")
    ok = [r for r in rows if r.get("status") == "ok"]
    if not ok or args.y not in ok[0]:
        fail(f"--y {args.y}: no such metric in {args.dir}/results.json")
    others = [k for k in keys if k not in (args.x, "seed")]
    numeric = all(isinstance(r[args.x], (int, float)) for r in ok)
    xs = []
    for r in rows:  # spec order
        if r[args.x] not in xs:
            xs.append(r[args.x])
    lines = {}
    for r in ok:
        group = tuple(label(r[k]) for k in others)
        lines.setdefault(group, {}).setdefault(xs.index(r[args.x]), []).append(r[args.y])
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for group, points in lines.items():
        idx = sorted(points)
        pos = [xs[i] if numeric else i for i in idx]
        mean = [sum(points[i]) / len(points[i]) for i in idx]
        name = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in zip(others, group)) or args.y
        line, = ax.plot(pos, mean, marker="o", label=name)
        if any(len(points[i]) > 1 for i in idx):
            ax.fill_between(pos, [min(points[i]) for i in idx], [max(points[i]) for i in idx],
                            color=line.get_color(), alpha=0.2)
    if numeric:
        if all(x > 0 for x in xs) and max(xs) / min(xs) >= 8:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([label(x) for x in xs])
    else:
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([label(x) for x in xs], rotation=20)
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y)
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title(args.title or args.dir.rstrip("/").split("/")[-1])
    save(fig, args.out)


ROW = re.compile(r"^(\S+)\s+(\S+)\s+([\d,.]+|n/a)\s+(?:\[([\d,]+) - ([\d,]+)\]\s+)?([\d,]+|held out)\s+(\S*)\s+"
                 r"(calibration|predict)$")


# The axis label of a metric of `make table`, by its unit suffix.
UNITS = {"_pps": "packets per second", "_mbps": "Mbit/s"}


def unit_of(metric):
    for suffix, label in UNITS.items():
        if metric.endswith(suffix):
            return label
    return metric


def plot_table(args):
    rows, header = [], False
    try:
        with open(args.table) as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not header:  # what `make table | tee` caught before the table: the deps check, the build
                    header = line.split()[:2] == ["row", "metric"]
                    continue
                if not line.strip():
                    continue
                m = ROW.match(line.strip())
                if not m:
                    fail(f"{args.table}: line {n}: not a row of `make table`: {line!r}")
                row, metric, sim, lo, hi, measured, _, kind = m.groups()
                number = lambda text: float(text.replace(",", ""))
                rows.append({"row": row, "unit": unit_of(metric), "sim": None if sim == "n/a" else number(sim),
                             "band": (number(lo), number(hi)) if lo else None,
                             "measured": None if measured == "held out" else float(measured.replace(",", "")),
                             "kind": kind})
    except OSError as e:
        fail(f"{args.table}: {e.strerror}")
    if not header:
        fail(f"{args.table}: no `make table` header line (row metric simulated ...)")
    if not rows:
        fail(f"{args.table}: no rows")
    # One panel per unit (packet rates, TCP goodput), each on its own scale, in the table's order.
    units = list(dict.fromkeys(r["unit"] for r in rows))
    groups = [[r for r in rows if r["unit"] == u] for u in units]
    fig, axes = plt.subplots(1, len(groups), figsize=(max(6.4, 0.45 * len(rows) + 1.2 * len(groups)), 4.2),
                             gridspec_kw={"width_ratios": [len(g) for g in groups]}, squeeze=False)
    width = 0.4
    for ax, unit, group in zip(axes[0], units, groups):
        for i, r in enumerate(group):
            colour = "tab:blue" if r["kind"] == "calibration" else "tab:orange"
            if r["sim"] is not None:
                ax.bar(i - width / 2, r["sim"], width, color=colour)
            if r["measured"] is not None:
                ax.bar(i + width / 2, r["measured"], width, color="tab:gray")
            elif r["band"]:
                ax.plot([i + width / 2] * 2, r["band"], color="tab:orange", linewidth=6, alpha=0.4,
                        solid_capstyle="butt")
        top = max(max(r["sim"] or 0, r["measured"] or 0, *(r["band"] or ())) for r in group)
        ax.set_ylim(0, top * 1.3)  # room for the legend above the bars
        ax.set_xticks(range(len(group)))
        ax.set_xticklabels([r["row"] for r in group], rotation=60, ha="right")
        ax.set_ylabel(unit)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.grid(True, axis="y", alpha=0.3)
    handles = [matplotlib.patches.Patch(color="tab:blue", label="simulated (calibration row)"),
               matplotlib.patches.Patch(color="tab:orange", label="simulated (prediction)"),
               matplotlib.patches.Patch(color="tab:gray", label="measured")]
    if any(r["band"] for r in rows):
        handles.append(matplotlib.patches.Patch(color="tab:orange", alpha=0.4,
                                                label="prediction band (uncertain parameters' plausible ranges)"))
    axes[0][0].legend(handles=handles, fontsize=7, loc="upper center", ncol=2)
    fig.suptitle(args.title or "simulated vs measured (make table)")
    save(fig, args.out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sweep", help="a metric against a swept key")
    s.add_argument("dir")
    s.add_argument("--x", required=True, help="the swept key on the x axis")
    s.add_argument("--y", default="rates.xdp_prog_pps", help="the metric (a column of results.json)")
    s.add_argument("--out", help="output prefix (default DIR/plot-METRIC)")
    s.add_argument("--title")
    t = sub.add_parser("table", help="simulated vs measured from `make table`")
    t.add_argument("table")
    t.add_argument("--out", default="table")
    t.add_argument("--title")
    args = p.parse_args()
    if args.what == "sweep":
        args.out = args.out or f"{args.dir}/plot-{args.y}"
        plot_sweep(args)
    else:
        plot_table(args)


if __name__ == "__main__":
    main()
