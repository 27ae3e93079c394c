#!/usr/bin/env python3
"""Runs rows of scripts/published.tsv and prints simulated vs measured.

Prediction rows are also run with every uncertain parameter of their platform at the low end of
its plausible range and with every one at the high end (scripts/bands.tsv) and printed as
"value [low - high]". Runs go in parallel.
Usage: headline.py FECSIM [EXPERIMENT | all]   (default: the E1 experiment)
EXPERIMENT is a published row's experiment file or its name (`fecsim list`); one with no row, or a
run that fails, is one line on stderr and exit status 2 (a failed run: fecsim's status); a row
whose result has no figure for its metric prints n/a, and the script then exits 1.
"""
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # published.tsv's experiment paths are relative to the tree


class RunFailed(Exception):
    pass


def fail(msg, status=2):
    print(f"headline.py: {msg}", file=sys.stderr)
    sys.exit(status)


def table(name):
    with open(os.path.join(HERE, name)) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]


def run(fecsim, experiment, sets, metric, tmp):
    fd, out = tempfile.mkstemp(suffix=".json", dir=tmp)
    os.close(fd)
    cmd = [fecsim, "run", experiment, "--quiet", "--out", out]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise RunFailed(proc.returncode, lines[-1] if lines else f"exit status {proc.returncode}")
    sys.stderr.write(proc.stderr)
    node = json.load(open(out))
    for part in metric.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, (int, float)) else None


def selected(which, experiment):
    """Whether a published row's experiment is WHICH: "all", the file's path or its name."""
    if which == "all":
        return True
    if os.sep in which or which.endswith(".json"):
        return os.path.realpath(which) == os.path.realpath(os.path.join(ROOT, experiment))
    return which == os.path.splitext(os.path.basename(experiment))[0]


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: headline.py FECSIM [EXPERIMENT | all]")
    fecsim = sys.argv[1]
    if not shutil.which(fecsim):
        fail(f"{fecsim}: no fecsim executable there")
    which = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "configs/experiments/imx8mp-xdp-tx.json")
    ranges = {}  # platform -> [(key, low, high)]
    for platform, key, lo, hi in table("bands.tsv"):
        ranges.setdefault(platform, []).append((key, lo, hi))
    rows = [r for r in table("published.tsv") if selected(which, r[1])]
    if not rows:
        names = sorted({os.path.splitext(os.path.basename(r[1]))[0] for r in table("published.tsv")})
        fail(f"{which}: no row of scripts/published.tsv runs it (published: {', '.join(names)}, or all)")
    with tempfile.TemporaryDirectory() as tmp, cf.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = []
        for rid, exp, sets, metric, measured, kind in rows:
            sets = [] if sets == "-" else sets.split()
            exp = os.path.join(ROOT, exp)
            main_run = pool.submit(run, fecsim, exp, sets, metric, tmp)
            ends = []
            if kind == "predict":  # held out or kept for comparison: the band of the uncertain parameters
                params = ranges[json.load(open(exp))["platform"]]
                for end in (1, 2):  # every parameter at its low end, then every one at its high end
                    corner = [f"{p[0]}={p[end]}" for p in params]
                    ends.append(pool.submit(run, fecsim, exp, sets + corner, metric, tmp))
            jobs.append((rid, metric, measured, kind, main_run, ends))
        print(f"{'row':<22} {'metric':<22} {'simulated':>12} {'band':>21} {'measured':>12} {'error':>8}  kind")
        without = []  # rows whose result lacks their metric: published.tsv and the result file disagree
        for rid, metric, measured, kind, main_run, ends in jobs:
            try:
                sim, vals = main_run.result(), [e.result() for e in ends]
            except RunFailed as e:
                pool.shutdown(cancel_futures=True)  # the runs already started finish; no new one starts
                status, line = e.args
                fail(f"row {rid}: {line}", status)
            band = ""
            if ends and None not in vals:
                band = f"[{min(vals):,.0f} - {max(vals):,.0f}]"
            err = "" if measured == "-" or sim is None else f"{100.0 * (sim / float(measured) - 1):+.1f}%"
            meas = "held out" if measured == "-" else f"{int(measured):,}"
            simtxt = "n/a" if sim is None else f"{sim:,.0f}"
            print(f"{rid:<22} {metric:<22} {simtxt:>12} {band:>21} {meas:>12} {err:>8}  {kind}", flush=True)
            if sim is None or (ends and None in vals):
                without.append(f"{rid} ({metric})")
    if without:
        fail(f"no figure in the result for {', '.join(without)}", 1)


if __name__ == "__main__":
    main()
