#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer harness for SECONDS each (default 10) under ASan and UBSan, starting from the
# checked-in seed corpus (copied, so the seeds stay as they are), and prints executions per harness.
# Builds the `fuzz` preset first. Exit status 1 when any harness found a crash; the reproducer is
# left in build/fuzz/findings/<harness>/ (turn it into a regression test).
#   tests/fuzz/run.sh 10            # CI: a short fixed time
#   tests/fuzz/run.sh 600           # a longer hunt
#   FUZZ_ONLY=serve_line tests/fuzz/run.sh 60
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-10}"
harnesses=(include_scanner size_expr task_spec serve_line frames elf_kernels launch_plan)
if [[ -n "${FUZZ_ONLY:-}" ]]; then harnesses=(${FUZZ_ONLY}); fi

if [[ ! -f build/fuzz/CMakeCache.txt ]]; then cmake --preset fuzz >/dev/null; fi
cmake --build --preset fuzz --target "${harnesses[@]/#/fuzz_}"

status=0
summary=()
for h in "${harnesses[@]}"; do
  work="build/fuzz/corpus-work/$h"
  findings="build/fuzz/findings/$h"
  mkdir -p "$work" "$findings"
  cp -n tests/fuzz/corpus/"$h"/* "$work"/ 2>/dev/null || true
  log="build/fuzz/$h.log"
  max_len=4096
  [[ "$h" == elf_kernels ]] && max_len=16384
  echo "fuzz_$h: ${seconds}s"
  if ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
     "build/fuzz/tests/fuzz/fuzz_$h" "$work" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
     -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1; then
    runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    summary+=("$(printf '%-16s %12s executions, clean' "$h" "${runs:-?}")")
  else
    status=1
    summary+=("$(printf '%-16s FAILED, see %s and %s' "$h" "$log" "$findings")")
    tail -40 "$log"
  fi
done
printf '%s\n' "${summary[@]}"
exit "$status"
