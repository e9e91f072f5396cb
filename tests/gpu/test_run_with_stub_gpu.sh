#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/gpu/run.sh's device steps, on stand-in programs that act as a GPU machine with pageable host
# access (HMM) would: the script must choose --allow-pageable-host-access from info's account, hand
# it to every program, run the steps in order, feed each variant from sandbox/tasks to eval with its
# expected verdict, run tasks measure with its budget and summarise its report, and exit 0 when every
# step passed.
# The real device run costs minutes of a lent GPU; this catches a script bug before one is spent.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/leap-gpu-stub.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
build="$work/build"
mkdir -p "$build/sandbox" "$build/tests/sandbox" "$build/benchmarks" "$build/examples/sandbox_loop"
calls="$work/calls.txt"
: >"$calls"
# leap-sandbox: info says a GPU with pageable access and full confinement; eval answers each
# variant with the verdict its file name implies (fast/reference correct, wrong wrong_answer,
# broken compile_error).
cat >"$build/sandbox/leap-sandbox" <<STUB
#!/usr/bin/env bash
echo "leap-sandbox \$*" >>"$calls"
case "\$1 \${2:-}" in
  "info --json") echo '{"gpu": {"available": true, "status": "available", "reason": "", "devices": [{"pageable_memory_access": true}]}, "confinement": {"in_force": true, "sufficient": true, "missing": ""}}' ;;
  "info "*) echo "GPU: available"; echo "  device 0: Stub H200, sm_90 (compiles for sm_90a)" ;;
  "tasks --json") echo '[{"name": "scale_add", "variants": [{"name": "fast", "expect": "correct"}, {"name": "wrong", "expect": "wrong_answer"}, {"name": "broken", "expect": "compile_error"}]}]' ;;
  "tasks --help") echo "tasks [--json] | tasks measure [NAME ...] [options]" ;;
  "tasks measure")
    shift 2
    while [ \$# -gt 0 ]; do [ "\$1" = --json-file ] && f=\$2; shift; done
    echo '{"device": "Stub H200", "arch": "sm_90a", "seconds": 12, "tasks": [{"task": "scale_add", "ok": true, "checks": [], "time": {"reps": 10, "median_ms": 0.4, "min_ms": 0.39, "max_ms": 0.41, "spread": 0.01}}]}' >"\$f"
    echo "1 of 1 references agree with their oracles at their timing sizes and were timed" ;;
  "eval "*)
    f=\${@: -1}
    case "\$(basename "\$f" .cu)" in fast|reference) v=correct ;; wrong) v=wrong_answer ;; *) v=compile_error ;; esac
    echo "{\"verdict\": \"\$v\", \"status\": \"verdict\", \"speedup\": 1.5, \"timings\": null}" ;;
  *) exit 2 ;;
esac
STUB
for p in tests/sandbox/leap_sandbox_gpu_tests benchmarks/bench_timing examples/sandbox_loop/sandbox_loop; do
  cat >"$build/$p" <<STUB
#!/usr/bin/env bash
echo "$(basename "$p") \$* LEAP_SANDBOX_TIMER=\${LEAP_SANDBOX_TIMER:-} LEAP_SANDBOX_L2_FLUSH=\${LEAP_SANDBOX_L2_FLUSH:-}" >>"$calls"
echo "PASS stand-in"
echo "step 1: Acc@1 1.00"
echo "0 failure(s)"
STUB
done
chmod +x "$build/sandbox/leap-sandbox" "$build"/tests/sandbox/* "$build"/benchmarks/* "$build"/examples/sandbox_loop/*
OUT="$work/out" "$here/run.sh" --build-dir "$build" >"$work/stdout.txt" 2>&1
rc=$?
summary="$work/out/summary.md"
problems=0
check() { if ! "${@:2}"; then echo "FAIL: $1"; problems=$((problems + 1)); fi; }
check "exit 0 when every step passed (got $rc)" test "$rc" -eq 0
check "info's pageable access chose the switch" grep -q '^- run switches after info: --allow-pageable-host-access' "$summary"
check "the three variants got their verdicts" grep -q '^- 3 of 3 variants got their verdict' "$summary"
check "eval got the switch and the variant's file" grep -q 'leap-sandbox eval --json --seed 1 --no-time --allow-pageable-host-access scale_add \(.*/\)\?sandbox/tasks/elementwise/scale_add/wrong.cu$' "$calls"
check "the fast variant is timed" grep -q 'leap-sandbox eval --json --seed 1 --allow-pageable-host-access scale_add .*fast.cu' "$calls"
check "the hostile suite got the switch" grep -q '^leap_sandbox_gpu_tests --allow-pageable-host-access ' "$calls"
check "bench_timing ran with CUPTI, events and the dirty flush" bash -c "
  grep -q '^bench_timing --allow-pageable-host-access --repeats 2 .* LEAP_SANDBOX_TIMER= LEAP_SANDBOX_L2_FLUSH=\$' '$calls' &&
  grep -q '^bench_timing --allow-pageable-host-access --repeats 1 --expect-method events .*LEAP_SANDBOX_TIMER=events' '$calls' &&
  grep -q 'LEAP_SANDBOX_L2_FLUSH=dirty\$' '$calls'"
check "sandbox_loop ran one step within its budget" grep -qE '^sandbox_loop --steps 1 -j 4 --max-seconds [0-9]+ --allow-pageable-host-access' "$calls"
check "tasks measure ran on every hardware thread within its budget" grep -qE '^leap-sandbox tasks measure -j [0-9]+ --max-seconds [0-9]+ --json-file .*/logs/reference_times.json$' "$calls"
check "its report is summarised" grep -q '^- 1 of 1 references agree with their oracles at their timing sizes (Stub H200, sm_90a; 12 s)' "$summary"
check "with its times" grep -q '^- timed 1: median 0.4 ms' "$summary"
check "the steps come in order" bash -c "grep '^## ' '$summary' | tr '\n' '|' | grep -q '^## 1. device facts|## 2. build|## 3. leap-sandbox info|## 4. built-in variants through leap-sandbox eval|## 5. hostile suite|## 6. bench_timing|## 7. sandbox_loop --steps 1|## 8. task library: references at their timing sizes against their oracles|## total|\$'"
if [ "$problems" -gt 0 ]; then
  echo "---- summary.md"; cat "$summary"; echo "---- calls"; cat "$calls"; echo "---- stdout"; cat "$work/stdout.txt"
  exit 1
fi
echo "run.sh on stand-in GPU programs: every step ran in order with the chosen switch"
