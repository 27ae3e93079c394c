#!/usr/bin/env bash
# A sweep as a real Slurm array job: starts a single-node cluster (munged, slurmctld, slurmd as
# root, no cgroup plugin) in a scratch directory, submits a 4-point sweep, waits, collects, and
# checks every point equals the same sweep run with --jobs. Skips (exit 77) where the daemons
# cannot run. Usage: test_slurm.sh FECSIM CONFIG_DIR
set -euo pipefail
fecsim=$(realpath "$1") configs=$(realpath "$2")
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "the Slurm test starts slurmctld and slurmd as root; not root here"
for t in munged mungekey slurmctld slurmd sbatch sinfo; do
  command -v "$t" >/dev/null || skip "$t not found (scripts/install-deps.sh installs slurm-wlm and munge)"
done

work=$(mktemp -d /tmp/fecsim-slurm.XXXXXX)
chmod 700 "$work"
stop() {  # the daemons this script started, by their pid files; each is waited for
  for p in slurmd slurmctld munged; do
    [ -s "$work/$p.pid" ] || continue
    pid=$(cat "$work/$p.pid")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$work" || true
}
trap stop EXIT
mkdir -p "$work/state" "$work/spool" "$work/log"

mungekey --create --keyfile="$work/munge.key" >/dev/null 2>&1 || skip "mungekey cannot create a key"
munged --force --socket="$work/munge.sock" --key-file="$work/munge.key" --log-file="$work/log/munged.log" \
  --pid-file="$work/munged.pid" --seed-file="$work/munged.seed" || skip "munged does not start: $(tail -n 3 "$work/log/munged.log" 2>/dev/null)"

# Ports of their own, so two test runs on one machine do not meet.
port=$((20000 + RANDOM % 20000))
node=$(hostname -s)
cat > "$work/slurm.conf" <<CONF
ClusterName=fecsim-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start: $(tail -n 3 "$work/log/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start: $(tail -n 3 "$work/log/slurmd.log" 2>/dev/null)"
for _ in $(seq 60); do
  [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break
  sleep 0.5
done
[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] || skip "the node did not become idle: $(tail -n 3 "$work/log/slurmd.log")"

cat > "$work/spec.json" <<SPEC
{
  "experiment": "$configs/experiments/imx8mp-xdp-tx.json",
  "set": {"warmup_s": 0.01, "duration_s": 0.005},
  "product": {"driver.xdp_tx_variant": ["v4", "merged"]},
  "seeds": [1, 2]
}
SPEC

fail() { echo "FAIL: $*"; exit 1; }
"$fecsim" sweep "$work/spec.json" --out "$work/slurm" --slurm --submit --wait || fail "the array job failed"
[ "$(ls "$work/slurm/slurm" | wc -l)" -eq 4 ] || fail "expected 4 array task logs, got: $(ls "$work/slurm/slurm")"
"$fecsim" sweep "$work/spec.json" --out "$work/local" --jobs 2 >/dev/null || fail "the --jobs run failed"
"$fecsim" collect "$work/slurm" || fail "collect found missing or failed points"
"$fecsim" collect "$work/local" >/dev/null
ids=$(python3 -c 'import json,sys; print(" ".join(p["id"] for p in json.load(open(sys.argv[1]))["points"]))' "$work/slurm/manifest.json")
[ "$(echo $ids | wc -w)" -eq 4 ] || fail "expected 4 points, got $ids"
for id in $ids; do
  "$fecsim" diff "$work/slurm/points/$id/result.json" "$work/local/points/$id/result.json" ||
    fail "point $id differs between the Slurm and the --jobs run"
done
echo "PASS: 4 Slurm array tasks equal the --jobs run point by point"
