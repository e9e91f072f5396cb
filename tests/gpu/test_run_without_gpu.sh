#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run.sh on a machine without a GPU, with the programs already built (no rebuild): it must
# exit 0 after its build step, with a summary in which every device step says it was skipped and
# why. Usage: test_run_without_gpu.sh BUILD_DIR. Exits 77 (skipped) where a GPU is found: there the
# script runs for real, which is not this test's business.
set -uo pipefail
build=${1:?usage: test_run_without_gpu.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
if "$build/sandbox/leap-sandbox" info --json 2>/dev/null | grep -q '"available":true'; then
  echo "a GPU is here: the no-GPU path is not what would run; skipped"
  exit 77
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/leap-gpu-run-test.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
OUT="$out" "$here/run.sh" --build-dir "$build" >"$out/stdout.txt" 2>&1
rc=$?
summary="$out/summary.md"
problems=0
check() {  # check DESCRIPTION COMMAND...
  if ! "${@:2}"; then echo "FAIL: $1"; problems=$((problems + 1)); fi
}
check "run.sh exits 0 without a GPU (got $rc)" test "$rc" -eq 0
check "summary.md is written" test -s "$summary"
check "the device facts come first" grep -q '^## 1. device facts' "$summary"
check "the switches chosen are said" grep -q '^- run switches chosen: ' "$summary"
check "the prebuilt programs are used, nothing rebuilt" grep -q "^- using the programs built in $build (no build)" "$summary"
check "info ran" grep -q '^## 3. leap-sandbox info' "$summary"
for step in "4. built-in variants" "5. hostile suite" "6. bench_timing" "7. sandbox_loop" "8. task library"; do
  # The step's header, and right after it the line that says it was skipped and why.
  check "step '$step' says it was skipped and why" \
    bash -c "grep -A1 '^## $step' '$summary' | grep -q '^- skipped: no GPU ('"
done
check "no step failed" bash -c "! grep -q 'FAILED' '$summary'"
check "the logs are under \$OUT/logs" test -s "$out/logs/facts.json"
if [ "$problems" -gt 0 ]; then
  echo "---- summary.md"; cat "$summary"; echo "---- stdout"; cat "$out/stdout.txt"
  exit 1
fi
echo "run.sh without a GPU: exit 0, every device step skipped with its reason"
