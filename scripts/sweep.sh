#!/usr/bin/env bash
# Runs one experiment once per value of one knob (in parallel) and prints a table of metrics.
# Usage: scripts/sweep.sh EXPERIMENT KEY VALUE... [-- --set k=v ...]
#   environment: METRICS (dotted result keys), JOBS (parallel runs), FECSIM (the binary)
# Example: scripts/sweep.sh configs/experiments/imx8mp-xdp-tx.json driver.rx_ring_size 16 64 128 256
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 EXPERIMENT KEY VALUE... [-- --set k=v ...]" >&2; exit 2; }
experiment=$1 key=$2
shift 2
values=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do values+=("$1"); shift; done
[ $# -gt 0 ] && shift
fixed=("$@")
fecsim=${FECSIM:-build/fecsim}
metrics=${METRICS:-rates.xdp_prog_pps rates.dut_tx_pps cpu.core0.busy_fraction coherency.violations}
jobs=${JOBS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Every point is validated first, so a bad value stops the sweep before anything runs.
for v in "${values[@]}"; do
  "$fecsim" validate "$experiment" ${fixed[@]+"${fixed[@]}"} --set "$key=$v" >/dev/null
done
for i in "${!values[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  "$fecsim" run "$experiment" ${fixed[@]+"${fixed[@]}"} --set "$key=${values[$i]}" --quiet --out "$out/$i.json" &
done
wait

python3 - "$out" "$key" "$metrics" "${values[@]}" <<'PY'
import json, sys
out, key, metrics, values = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
def get(node, dotted):
    for part in dotted.split('.'):
        node = node.get(part) if isinstance(node, dict) else None
    return node
def fmt(v):
    return "n/a" if v is None else f"{v:,.0f}" if isinstance(v, (int, float)) and abs(v) >= 100 else f"{v:.4g}" if isinstance(v, float) else str(v)
rows = [[key] + metrics]
for i, v in enumerate(values):
    r = json.load(open(f"{out}/{i}.json"))
    rows.append([v] + [fmt(get(r, m)) for m in metrics])
widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
for row in rows:
    print("  ".join(cell.rjust(w) for cell, w in zip(row, widths)))
PY
