#!/usr/bin/env bash
# Runs every libFuzzer harness of BUILD (built by `make fuzz`) for SECONDS each over its seed
# corpus in fuzz/corpus/. New inputs go to a scratch corpus, so the committed one stays as is.
# A crash, a hang (-timeout) or a leak stops with the reproducer under BUILD/fuzz-findings/.
set -euo pipefail
build=${1:?usage: fuzz.sh BUILD SECONDS}
seconds=${2:?usage: fuzz.sh BUILD SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for name in config pktgen pcap fec; do
  work="$build/fuzz-corpus/$name" findings="$build/fuzz-findings/$name"
  mkdir -p "$work" "$findings"
  echo "fuzz: $name for ${seconds} s"
  "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$root/fuzz/corpus/$name" 2>"$build/fuzz-$name.log" ||
    { tail -n 40 "$build/fuzz-$name.log"; echo "fuzz: $name found a problem: $findings/"; exit 1; }
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$build/fuzz-$name.log" | tr '\n' ' '; echo
done
