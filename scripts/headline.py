#!/usr/bin/env python3
"""Runs rows of scripts/published.tsv and prints simulated vs measured.

Prediction rows are also run with every uncertain parameter of their platform at the low end of
its plausible range and with every one at the high end (scripts/bands.tsv) and printed as
"value [low - high]". Runs go in parallel.
Usage: headline.py FECSIM [EXPERIMENT | all]   (default: the E1 experiment)
"""
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def table(name):
    with open(os.path.join(HERE, name)) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]


def run(fecsim, experiment, sets, metric, tmp):
    fd, out = tempfile.mkstemp(suffix=".json", dir=tmp)
    os.close(fd)
    cmd = [fecsim, "run", experiment, "--quiet", "--out", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    node = json.load(open(out))
    for part in metric.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, (int, float)) else None


def main():
    fecsim = sys.argv[1]
    which = sys.argv[2] if len(sys.argv) > 2 else "configs/experiments/imx8mp-xdp-tx.json"
    ranges = {}  # platform -> [(key, low, high)]
    for platform, key, lo, hi in table("bands.tsv"):
        ranges.setdefault(platform, []).append((key, lo, hi))
    rows = [r for r in table("published.tsv") if which == "all" or r[1] == which]
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = []
        for rid, exp, sets, metric, measured, kind in rows:
            sets = [] if sets == "-" else sets.split()
            main_run = pool.submit(run, fecsim, exp, sets, metric, tmp)
            ends = []
            if kind == "predict":  # held out or kept for comparison: the band of the uncertain parameters
                params = ranges[json.load(open(exp))["platform"]]
                for end in (1, 2):  # every parameter at its low end, then every one at its high end
                    corner = [f"{p[0]}={p[end]}" for p in params]
                    ends.append(pool.submit(run, fecsim, exp, sets + corner, metric, tmp))
            jobs.append((rid, metric, measured, kind, main_run, ends))
        print(f"{'row':<22} {'metric':<22} {'simulated':>12} {'band':>21} {'measured':>12} {'error':>8}  kind")
        for rid, metric, measured, kind, main_run, ends in jobs:
            sim = main_run.result()
            band = ""
            if ends and None not in (vals := [e.result() for e in ends]):
                band = f"[{min(vals):,.0f} - {max(vals):,.0f}]"
            err = "" if measured == "-" or sim is None else f"{100.0 * (sim / float(measured) - 1):+.1f}%"
            meas = "held out" if measured == "-" else f"{int(measured):,}"
            simtxt = "n/a" if sim is None else f"{sim:,.0f}"
            print(f"{rid:<22} {metric:<22} {simtxt:>12} {band:>21} {meas:>12} {err:>8}  {kind}", flush=True)


if __name__ == "__main__":
    main()
