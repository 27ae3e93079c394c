#!/usr/bin/env bash
# Runs rows of scripts/published.tsv and prints simulated vs measured.
# Usage: run-headline.sh FECSIM [EXPERIMENT | all]   (default: the E1 experiment)
set -euo pipefail
fecsim=$1
which=${2:-configs/experiments/imx8mp-xdp-tx.json}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '%-22s %-22s %12s %12s %8s  %s\n' row metric simulated measured error kind
grep -v '^#' "$here/published.tsv" | while IFS=$'\t' read -r id exp sets metric measured kind; do
  [ "$which" = all ] || [ "$exp" = "$which" ] || continue
  args=()
  [ "$sets" = - ] || for s in $sets; do args+=(--set "$s"); done
  "$fecsim" run "$exp" ${args[@]+"${args[@]}"} --quiet --out "$out/$id.json"
  python3 - "$out/$id.json" "$metric" "$measured" "$id" "$kind" <<'PY'
import json, sys
path, metric, measured, row, kind = sys.argv[1:]
node = json.load(open(path))
for part in metric.split('.'):
    node = node.get(part) if isinstance(node, dict) else None
sim = f"{node:,.0f}" if isinstance(node, (int, float)) else "n/a"
err = "" if measured == "-" or not isinstance(node, (int, float)) else f"{100.0 * (node / float(measured) - 1):+.1f}%"
meas = "held out" if measured == "-" else f"{int(measured):,}"
print(f"{row:<22} {metric:<22} {sim:>12} {meas:>12} {err:>8}  {kind}")
PY
done
