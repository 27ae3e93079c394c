#!/usr/bin/env python3
"""The scripts that run published rows, against a stand-in fecsim that writes a result file at
once. scripts/headline.py (`make run`, `make table`): which rows it selects, how it reports bad
input and a failed run, and that scripts/plot.py draws what `make table | tee table.txt` caught
(docs/sweeps.md). scripts/sensitivity.py: bad options and a failed run. scripts/install-deps.sh."""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADLINE = os.path.join(ROOT, "scripts", "headline.py")
PLOT = os.path.join(ROOT, "scripts", "plot.py")
SENSITIVITY = os.path.join(ROOT, "scripts", "sensitivity.py")

# Writes every metric published.tsv reads; with FAKE_FECSIM_FAIL set it fails as fecsim does on bad input.
FAKE = """#!/usr/bin/env python3
import json, os, sys
if os.environ.get("FAKE_FECSIM_FAIL"):
    print("fecsim: --set x=1: /x: unknown key", file=sys.stderr)
    sys.exit(2)
out = sys.argv[sys.argv.index("--out") + 1]
rates = {k: 1000.0 for k in ("xdp_prog_pps", "generator_tx_pps", "dut_tx_pps", "tcp_goodput_mbps")}
rates.pop(os.environ.get("FAKE_FECSIM_WITHOUT", ""), None)
json.dump({"rates": rates}, open(out, "w"))
"""


class StandIn(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fecsim = os.path.join(self.tmp.name, "fecsim")
        with open(self.fecsim, "w") as f:
            f.write(FAKE)
        os.chmod(self.fecsim, os.stat(self.fecsim).st_mode | stat.S_IXUSR)

    def tearDown(self):
        self.tmp.cleanup()

    def script(self, path, *args, env=None):
        # From another directory: the scripts must not depend on being run from the tree's root.
        return subprocess.run([sys.executable, path, *args], cwd=self.tmp.name, capture_output=True,
                              text=True, env={**os.environ, **(env or {})}, timeout=60)


class Headline(StandIn):
    def headline(self, *args, env=None):
        return self.script(HEADLINE, *args, env=env)

    def rows(self, out):
        return [line.split()[0] for line in out.splitlines()[1:]]

    def test_an_experiment_by_name_or_path_runs_its_rows(self):
        by_name = self.headline(self.fecsim, "imx8mp-xdp-tx")
        self.assertEqual(by_name.returncode, 0, by_name.stderr)
        self.assertEqual(self.rows(by_name.stdout), ["E1-v4", "E1-sync_len", "E1-merged", "E1-generator"])
        by_path = self.headline(self.fecsim, os.path.join(ROOT, "configs/experiments/imx8mp-xdp-tx.json"))
        self.assertEqual(by_path.returncode, 0, by_path.stderr)
        self.assertEqual(by_path.stdout, by_name.stdout)
        default = self.headline(self.fecsim)
        self.assertEqual(default.stdout, by_name.stdout)

    def test_an_experiment_without_a_published_row_is_one_line_and_exit_2(self):
        for which in ("imx8mp-xdp-txx", os.path.join(self.tmp.name, "imx8mp-xdp-tx.json")):
            r = self.headline(self.fecsim, which)
            self.assertEqual(r.returncode, 2, which)
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(f"{which}: no row of scripts/published.tsv", r.stderr)

    def test_a_bad_command_line_is_one_line_and_exit_2(self):
        for args in ((), (self.fecsim, "all", "extra"), (os.path.join(self.tmp.name, "nofecsim"),)):
            r = self.headline(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("headline.py: "), r.stderr)

    def test_a_failed_run_names_the_row_and_keeps_fecsims_status(self):
        r = self.headline(self.fecsim, "imx8mp-xdp-tx", env={"FAKE_FECSIM_FAIL": "1"})
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "headline.py: row E1-v4: fecsim: --set x=1: /x: unknown key\n")

    def test_a_row_without_its_figure_is_printed_n_a_and_exits_1(self):
        r = self.headline(self.fecsim, "imx8mp-xdp-tx", env={"FAKE_FECSIM_WITHOUT": "generator_tx_pps"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("E1-generator           rates.generator_tx_pps          n/a", r.stdout)
        self.assertEqual(r.stderr, "headline.py: no figure in the result for E1-generator (rates.generator_tx_pps)\n")


    def plot_table(self, text):
        table = os.path.join(self.tmp.name, "table.txt")
        with open(table, "w") as f:
            f.write(text)
        return subprocess.run([PLOT, "table", table, "--out", os.path.join(self.tmp.name, "t")],
                              capture_output=True, text=True, timeout=120)

    def test_plot_draws_what_make_table_printed_with_the_build_lines_before_it(self):
        r = self.headline(self.fecsim, "imx8mp-xdp-tx")
        self.assertEqual(r.returncode, 0, r.stderr)
        make = "install-deps: all 21 packages present, nothing to do\nninja: no work to do.\n"
        p = self.plot_table(make + r.stdout)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.getsize(os.path.join(self.tmp.name, "t.png")) > 10000)
        nothing = self.plot_table(make)
        self.assertEqual(nothing.returncode, 2)
        self.assertEqual(len(nothing.stderr.splitlines()), 1, nothing.stderr)
        self.assertIn("no `make table` header line", nothing.stderr)


class Sensitivity(StandIn):
    def test_bad_options_are_one_line_and_exit_2(self):
        for args, expected in ((("--step", "1"), "--step 1.0: must lie between 0 and 1"),
                               (("--jobs", "0"), "--jobs at least 1"),
                               (("--jobs", "x"), "argument --jobs: invalid int value: 'x'"),
                               (("--fecsim", "nofecsim"), "--fecsim nofecsim: no fecsim executable there"),
                               (("--rows", "E1-v5"), "unknown rows: E1-v5")):
            r = self.script(SENSITIVITY, "--fecsim", self.fecsim, *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(expected, r.stderr)

    def test_a_failed_run_names_it_and_keeps_fecsims_status(self):
        # A relative --fecsim from another directory: the runs themselves start in the tree's root.
        r = self.script(SENSITIVITY, "--fecsim", "./fecsim", "--rows", "E1-v4", env={"FAKE_FECSIM_FAIL": "1"})
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "sensitivity: configs/experiments/imx8mp-xdp-tx.json driver.xdp_tx_variant=v4: "
                                   "fecsim: --set x=1: /x: unknown key\n")


class InstallDeps(unittest.TestCase):
    """scripts/install-deps.sh for a developer who is not root, with dpkg, id, sudo and apt-get
    stood in for: sudo clears the environment as its default env_reset does."""

    def run_it(self, missing):
        with tempfile.TemporaryDirectory() as bin_dir:
            stand_ins = {
                "dpkg-query": f'case "$3" in {missing}) exit 1;; *) printf "install ok installed";; esac',
                "id": "echo 1000",
                "sudo": 'exec env -i PATH="$PATH" "$@"',
                "apt-get": f'echo "apt-get $* DEBIAN_FRONTEND=${{DEBIAN_FRONTEND:-unset}}" >> {bin_dir}/log',
            }
            for name, body in stand_ins.items():
                path = os.path.join(bin_dir, name)
                with open(path, "w") as f:
                    f.write(f"#!/bin/sh\n{body}\n")
                os.chmod(path, 0o755)
            r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "install-deps.sh")], capture_output=True,
                               text=True, env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
                               timeout=60)
            log = os.path.join(bin_dir, "log")
            return r, open(log).read().splitlines() if os.path.exists(log) else []

    def test_nothing_missing_does_nothing(self):
        r, apt = self.run_it("none-missing")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("nothing to do", r.stdout)
        self.assertEqual(apt, [])

    def test_apt_runs_non_interactive_through_sudo(self):
        r, apt = self.run_it("tshark")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(apt, ["apt-get update -qq DEBIAN_FRONTEND=noninteractive",
                               "apt-get install -y -qq --no-install-recommends tshark DEBIAN_FRONTEND=noninteractive"])


if __name__ == "__main__":
    unittest.main()
