#!/usr/bin/env python3
"""Elasticity of every published row to every documented platform parameter.

For each row of scripts/published.tsv and each parameter below, runs the row with the
parameter at 1.1x and 0.9x its profile value (after a 20 ms warm-up) and prints d ln(rate) / d ln(parameter) as a
Markdown table (the table in docs/calibration.md). An elasticity of -1 means the figure is
inversely proportional to the parameter; 0 means the figure does not hang on it.

Usage: scripts/sensitivity.py [--fecsim build/fecsim] [--duration 0.05] [--jobs N]
                              [--rows E1-v4,E1-sync_len] [--step 0.1]
Bad options, or a run that fails, are one line on stderr and exit status 2 (a failed run: fecsim's).
"""
import argparse
import concurrent.futures as cf
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from headline import table  # the reader of scripts/*.tsv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The documented microarchitecture and platform parameters (docs/models/*.md), by --set key.
# Region 0 is the FEC's register window, region 2 the non-cacheable descriptor pool, in every
# profile of configs/platforms/.
PARAMETERS = [
    ("cpu.cpi", "compute CPI"),
    ("cpu.l1d.hit_cycles", "L1 hit"),
    ("cpu.l2.hit_cycles", "L2 hit"),
    ("cpu.maintenance.absent_cycles", "line op, absent"),
    ("cpu.maintenance.clean_cycles", "line op, clean"),
    ("cpu.maintenance.dirty_cycles", "line op, dirty"),
    ("cpu.barrier.dmb_cycles", "DMB"),
    ("cpu.barrier.dsb_cycles", "DSB"),
    ("cpu.write_buffer.posted_write_cycles", "posting a write"),
    ("cpu.irq.entry_cycles", "IRQ entry"),
    ("mem.ddr.read_latency_ns", "DDR read latency"),
    ("mem.ddr.write_latency_ns", "DDR write latency"),
    ("mem.regions.0.latency_ns", "MMIO read fabric"),
    ("mem.regions.0.write_ack_ns", "MMIO write ack"),
    ("mem.regions.2.latency_ns", "uncached fabric"),
    ("mem.regions.2.write_ack_ns", "uncached write ack"),
    ("fec.dma.desc_fetch_ns", "uDMA descriptor fetch"),
]


class RunFailed(Exception):
    pass


def fail(msg, status=2):
    print(f"sensitivity: {msg}", file=sys.stderr)
    sys.exit(status)


def published_rows():
    return [{"id": rid, "experiment": exp, "sets": [] if sets == "-" else sets.split(), "metric": metric,
             "measured": measured, "kind": kind} for rid, exp, sets, metric, measured, kind in table("published.tsv")]


def lookup(tree, dotted):
    node = tree
    for part in dotted.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def run(fecsim, experiment, sets, duration, out_dir):
    """One fecsim run; returns the result tree."""
    fd, out = tempfile.mkstemp(suffix=".json", dir=out_dir)
    os.close(fd)
    cmd = [fecsim, "run", experiment, "--quiet", "--out", out, "--set", f"duration_s={duration}", "--set", "warmup_s=0.02"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise RunFailed(f"{' '.join([experiment, *sets])}: {lines[-1] if lines else 'no message'}", proc.returncode)
    with open(out) as f:
        return json.load(f)


def run_all(pool, fecsim, rows, args, tmp):
    """Every row's run as published, then with each parameter moved up and down."""
    # Distinct studies (rows reading two metrics of one run share it).
    studies = {}
    for r in rows:
        studies.setdefault((r["experiment"], tuple(r["sets"])), []).append(r)
    base = {k: pool.submit(run, fecsim, k[0], list(k[1]), args.duration, tmp) for k in studies}
    base = {k: f.result() for k, f in base.items()}
    jobs = {}
    for k, tree in base.items():
        for key, _ in PARAMETERS:
            value = lookup(tree["config"], key)
            for sign in (+1, -1):
                moved = value * (1 + sign * args.step)
                jobs[(k, key, sign)] = pool.submit(run, fecsim, k[0], list(k[1]) + [f"{key}={moved!r}"],
                                                   args.duration, tmp)
    return studies, {k: f.result() for k, f in jobs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--fecsim", default=os.path.join(ROOT, "build", "fecsim"))
    ap.add_argument("--duration", type=float, default=0.05, help="measured window per run, simulated s")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rows", default="", help="comma-separated row ids (default: every row)")
    ap.add_argument("--step", type=float, default=0.1, help="relative move of each parameter")
    ap.error = fail  # one line, exit 2, rather than the usage and the message
    args = ap.parse_args()
    if not 0 < args.step < 1:
        fail(f"--step {args.step}: must lie between 0 and 1 (a relative move)")
    if args.duration <= 0 or args.jobs < 1:
        fail("--duration must be above 0 and --jobs at least 1")
    fecsim = shutil.which(args.fecsim)
    if not fecsim:
        fail(f"--fecsim {args.fecsim}: no fecsim executable there")
    fecsim = os.path.abspath(fecsim)  # the runs start in the tree's root

    rows = published_rows()
    if args.rows:
        wanted = set(args.rows.split(","))
        unknown = wanted - {r["id"] for r in rows}
        if unknown:
            fail(f"unknown rows: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["id"] in wanted]

    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(args.jobs) as pool:
        try:
            studies, results = run_all(pool, fecsim, rows, args, tmp)
        except RunFailed as e:
            pool.shutdown(cancel_futures=True)  # the runs already started finish; no new one starts
            fail(*e.args)

    up, down = math.log(1 + args.step), math.log(1 - args.step)
    print("| row | " + " | ".join(f"`{k}`" for k, _ in PARAMETERS) + " |")
    print("|---|" + "---|" * len(PARAMETERS))
    for k, rs in studies.items():
        for r in rs:
            cells = []
            for key, _ in PARAMETERS:
                hi = lookup(results[(k, key, +1)], r["metric"])
                lo = lookup(results[(k, key, -1)], r["metric"])
                e = (math.log(hi) - math.log(lo)) / (up - down) if hi > 0 and lo > 0 else float("nan")
                cells.append("0" if abs(e) < 0.005 else f"{e:+.2f}")
            print(f"| {r['id']} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
