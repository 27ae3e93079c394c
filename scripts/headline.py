#!/usr/bin/env python3
"""Runs rows of scripts/published.tsv and prints simulated vs measured.

Prediction rows are also run at both ends of their platform's level-parameter range
(scripts/bands.tsv) and printed as "value [low - high]". Runs go in parallel.
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
    bands = {p: (key, float(lo), float(hi)) for p, key, lo, hi in table("bands.tsv")}
    rows = [r for r in table("published.tsv") if which == "all" or r[1] == which]
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = []
        for rid, exp, sets, metric, measured, kind in rows:
            sets = [] if sets == "-" else sets.split()
            main_run = pool.submit(run, fecsim, exp, sets, metric, tmp)
            ends = []
            if kind == "predict":  # held out or kept for comparison: the band of the level parameter
                key, lo, hi = bands[json.load(open(exp))["platform"]]
                ends = [pool.submit(run, fecsim, exp, sets + [f"{key}={v}"], metric, tmp) for v in (lo, hi)]
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
