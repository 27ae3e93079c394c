#!/usr/bin/env bash
# A real tool through a TAP device: tcpreplay sends UDP frames into the TAP that `fecsim run
# --tap` joins to the DUT's wire while the DUT runs xdp2; tcpdump on the TAP must see every
# frame come back with the MACs swapped, none lost, in order. Runs in a network namespace of
# its own; skipped (exit 77) where /dev/net/tun, namespaces or the tools are missing.
# usage: tap_xdp2.sh FECSIM EXPERIMENT FRAMES_PY WORKDIR
set -euo pipefail
fecsim=$(realpath "$1") experiment=$(realpath "$2") frames_py=$(realpath "$3") work=$4
skip() { echo "SKIP: $*"; exit 77; }

if [ "${BRIDGE_TEST_INSIDE:-}" != 1 ]; then
    [ -c /dev/net/tun ] || skip "no /dev/net/tun on this machine"
    for tool in unshare ip tcpdump tcpreplay python3; do
        command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh)"
    done
    unshare -n true 2>/dev/null || skip "cannot create a network namespace (needs CAP_SYS_ADMIN and CAP_NET_ADMIN: run as root)"
    BRIDGE_TEST_INSIDE=1 exec unshare -n "$0" "$@"
fi

rm -rf "$work" && mkdir -p "$work" && cd "$work"
ip link set lo up
# The kernel's own IPv6 chatter on a new interface would come back too.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
frames=300
python3 "$frames_py" make sent.pcap $frames

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_for() {  # wait_for FILE TEXT: until TEXT appears in FILE (30 s at most)
    for _ in $(seq 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "timed out waiting for '$2' in $1:"; cat "$1"; exit 1
}

"$fecsim" run "$experiment" --tap fsim0 --set duration_s=2 --out result.json >fecsim.out 2>fecsim.err &
fecsim_pid=$!; pids+=($fecsim_pid)
wait_for fecsim.err "bridge ready"
tcpdump -i fsim0 -Q in -U -w back.pcap udp port 9 2>tcpdump.err &
tcpdump_pid=$!; pids+=($tcpdump_pid)
wait_for tcpdump.err "listening on"
tcpreplay -q -i fsim0 --pps 2000 sent.pcap >tcpreplay.out 2>&1
if ! wait $fecsim_pid; then echo "fecsim failed:"; cat fecsim.err; exit 1; fi
# The TAP goes away with fecsim, and tcpdump stops by itself.
kill -INT $tcpdump_pid 2>/dev/null || true
wait $tcpdump_pid || true
cat fecsim.err
python3 "$frames_py" check sent.pcap back.pcap
python3 - <<'PY'
import json
g = json.load(open("result.json"))["generator"]
assert g["kind"] == "tap", g
assert g["frames_from_host"] == 300 and g["frames_to_host"] == 300, g
assert g["lost_total"] == 0, g["lost"]
print("bridge counters: 300 from the host, 300 to the host, none lost")
PY
