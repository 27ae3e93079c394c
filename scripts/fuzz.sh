#!/usr/bin/env bash
# Runs every libFuzzer harness of BUILD (built by `make fuzz`) for SECONDS each over its seed
# corpus in fuzz/corpus/. New inputs go to a scratch corpus, so the committed one stays as is.
# A crash, a hang (-timeout) or a leak stops with the reproducer under BUILD/fuzz-findings/.
# A harness runs in rounds of at most ROUND seconds (FUZZ_ROUND_SECONDS, default 60), each a fresh
# process that starts from the corpus the rounds before it grew: every input abandons a SystemC
# context (docs/reliability.md), so one long process would grow until the RSS limit stopped it
# with a false out-of-memory (the fec harness: ~19 KB per input, 4 GB after ~220,000 inputs).
set -euo pipefail
build=${1:?usage: fuzz.sh BUILD SECONDS}
seconds=${2:?usage: fuzz.sh BUILD SECONDS}
round=${FUZZ_ROUND_SECONDS:-60}
[[ $seconds =~ ^[0-9]+$ && $round =~ ^[1-9][0-9]*$ ]] ||
  { echo "fuzz.sh: SECONDS and FUZZ_ROUND_SECONDS must be whole seconds (got '$seconds', '$round')" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
stat_of() { sed -n "s/^stat::$1: *//p" "$2"; }
for name in config pktgen pcap fec; do
  work="$build/fuzz-corpus/$name" findings="$build/fuzz-findings/$name" log="$build/fuzz-$name.log"
  mkdir -p "$work" "$findings"
  echo "fuzz: $name for ${seconds} s"
  left=$seconds units=0 peak=0
  while ((left > 0)); do
    t=$((left < round ? left : round))
    "$build/fuzz/fuzz_$name" -max_total_time="$t" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$findings/" "$work" "$root/fuzz/corpus/$name" 2>"$log" ||
      { tail -n 40 "$log"; echo "fuzz: $name found a problem: $findings/"; exit 1; }
    units=$((units + $(stat_of number_of_executed_units "$log")))
    rss=$(stat_of peak_rss_mb "$log")
    peak=$((rss > peak ? rss : peak))
    left=$((left - t))
  done
  echo "stat::number_of_executed_units: $units stat::peak_rss_mb: $peak (largest round)"
done
