#!/usr/bin/env bash
# Runs every test of a sanitizer build (make sanitize; docs/reliability.md, "Sanitizers").
# Reports go to files, not to the tests' stderr (CLI tests compare stderr byte for byte); a test
# with a finding exits non-zero, and the findings are printed here after the run.
# Usage: scripts/sanitize-tests.sh BUILD_DIR JOBS
set -euo pipefail
build=$(cd "$1" && pwd)
jobs=$2
supp=$(cd "$(dirname "$0")/../fuzz" && pwd)
logs=$build/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"

# use_stacks=0: once SystemC has switched coroutine stacks ASan no longer knows a thread's stack
# bounds, and LeakSanitizer's scan of that range can fault (about one process in 20); heap,
# globals and TLS remain roots.
export ASAN_OPTIONS="suppressions=$supp/asan.supp:log_path=$logs/asan:detect_leaks=1"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:use_stacks=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan"

status=0
(cd "$build" && ctest --output-on-failure -j "$jobs") || status=$?

# The one expected line: ASan's warning that it cannot unpoison a coroutine-switched stack.
findings=$(grep -l -E "ERROR: |runtime error" "$logs"/* 2>/dev/null || true)
warned=$(grep -l "ignoring requested __asan_handle_no_return" "$logs"/* 2>/dev/null | wc -l)
for f in $findings; do echo "=== $f"; cat "$f"; done
echo "sanitize: $(echo "$findings" | grep -c . || true) report(s) with findings; $warned process(es) warned about a coroutine-switched stack (expected)"
if [ -n "$findings" ] && [ "$status" -eq 0 ]; then status=1; fi
exit "$status"
