#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The prepared GPU run: one script that yields the GPU path's evidence in one go, under 9 minutes on
# an H200 (build included). In this order, each step with its own time budget (tests/gpu/gpu_facts.py
# holds the budgets, the facts parsing and the choice of switches; test_gpu_facts.py tests them):
#   1. device facts: nvidia-smi (compute mode, clocks), the driver's attributes (memory clock, bus
#      width, L2, opt-in shared memory, pageable access; tests/gpu/device_facts.cpp) and the host's
#      confinement layers (Landlock, seccomp, user namespaces); then the run switches they call for
#      (--allow-pageable-host-access, --accept-weaker-confinement, --unconfined), said in the summary
#   2. build (Release, only the programs below), or the prebuilt ones: --build-dir DIR
#   3. leap-sandbox info (it may refine the switches: its confinement account wins)
#   4. the built-in tasks' variants through leap-sandbox eval (listed by `leap-sandbox tasks --json`)
#   5. the hostile suite (leap_sandbox_gpu_tests)
#   6. bench_timing: CUPTI, then events (LEAP_SANDBOX_TIMER=events), then the dirty L2 flush
#   7. examples/sandbox_loop --steps 1
#   8. the task library's references at their full timing sizes against their oracles, and their times
#      (`leap-sandbox tasks measure`; logs/reference_times.json)
# Writes $OUT/summary.md (also printed) and every log under $OUT/logs/ (default OUT: ./gpu-out).
# Without a GPU every device step says it was skipped and why, and the script exits 0 after its build.
# Exit status: 0 when every step that ran passed (or none could run), 1 otherwise.
#
# Usage: tests/gpu/run.sh [--build-dir DIR]
#   --build-dir DIR   use the programs already built in DIR (no configure, no build); otherwise the
#                     script builds them in $BUILD (default build/gpu).
# On a GPU machine that can fetch nothing, first run tests/gpu/carry_deps.sh here and carry .gpu-deps.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
prebuilt=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) prebuilt=${2:?--build-dir needs a directory}; shift 2 ;;
    -h|--help) sed -n '3,25p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/gpu-out}
BUILD=${prebuilt:-${BUILD:-build/gpu}}
JOBS=${JOBS:-$(nproc)}
PY=${PYTHON:-python3}
facts_py="$PWD/tests/gpu/gpu_facts.py"
LOGS="$OUT/logs"
mkdir -p "$OUT" "$LOGS" "$BUILD" || exit 1
summary="$OUT/summary.md"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
budget() { "$PY" "$facts_py" budget "$1" "$(elapsed)"; }
failed=0
fail() { failed=1; say "$@"; }
skip_reason=""  # set once no device step can run: every later device step says so

say "# leap GPU run"
say ""
say "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores; budget 540 s in all"
say ""

# ---- 1. device facts --------------------------------------------------------------------------------
say "## 1. device facts"
if command -v nvidia-smi >/dev/null; then
  timeout 15 nvidia-smi >"$LOGS/nvidia-smi.txt" 2>&1
  timeout 15 nvidia-smi --query-gpu=name,driver_version,compute_mode,clocks.max.memory,memory.total,pci.bus_id \
    --format=csv,noheader,nounits >"$LOGS/smi.csv" 2>&1
else
  echo "nvidia-smi not found" >"$LOGS/nvidia-smi.txt"
  : >"$LOGS/smi.csv"
fi
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if g++ -std=c++20 -O1 -I"$cuda/include" tests/gpu/device_facts.cpp -ldl -o "$LOGS/device_facts" >"$LOGS/device_facts.log" 2>&1; then
  timeout 20 "$LOGS/device_facts" >"$LOGS/device_facts.txt" 2>&1
  rm -f "$LOGS/device_facts"
else
  echo "driver=none (tests/gpu/device_facts.cpp did not compile; see device_facts.log)" >"$LOGS/device_facts.txt"
fi
{  # the host's confinement layers, as far as the kernel says before anything is built
  grep -qw landlock /sys/kernel/security/lsm 2>/dev/null && echo landlock=1 || echo landlock=0
  grep -q '^Seccomp:' /proc/self/status 2>/dev/null && echo seccomp=1 || echo seccomp=0
  unshare -U true 2>/dev/null && echo user_namespaces=1 || echo user_namespaces=0
} >"$LOGS/host_facts.txt"
"$PY" "$facts_py" facts "$LOGS/smi.csv" "$LOGS/device_facts.txt" "$LOGS/host_facts.txt" >"$LOGS/facts.json"
"$PY" - "$LOGS/facts.json" <<'EOF' | tee -a "$summary"
import json, sys
f = json.load(open(sys.argv[1]))
print("- device: %s, compute capability %s, compute mode %s" % (f["device"], f["compute_capability"], f["compute_mode"]))
if f["driver_problem"]:
    print("- driver: %s" % f["driver_problem"])
print("- memory clock %s kHz x bus %s bits: peak %s B/s; L2 %s bytes; opt-in shared per block %s bytes"
      % (f["memory_clock_khz"], f["memory_bus_width_bits"], f["peak_memory_bytes_per_s"], f["l2_cache_bytes"],
         f["max_shared_per_block_optin"]))
print("- pageable host memory access: %s; host confinement: landlock %s, seccomp %s, user namespaces %s"
      % (f["pageable_memory_access"], f["landlock"], f["seccomp"], f["user_namespaces"]))
EOF
"$PY" "$facts_py" switches "$LOGS/facts.json" >"$LOGS/switches.txt"
read -r -a switches <"$LOGS/switches.txt"
say "- run switches chosen: ${switches[*]:-none}"
tail -n +2 "$LOGS/switches.txt" | grep -v '^skip: ' | sed 's/^/  - /' | tee -a "$summary"
say "- $(elapsed) s so far"
say ""

# ---- 2. build -----------------------------------------------------------------------------------------
say "## 2. build"
cli="$BUILD/sandbox/leap-sandbox"
gpu_tests="$BUILD/tests/sandbox/leap_sandbox_gpu_tests"
bench="$BUILD/benchmarks/bench_timing"
loop="$BUILD/examples/sandbox_loop/sandbox_loop"
if [ -n "$prebuilt" ]; then
  say "- using the programs built in $prebuilt (no build)"
else
  deps=()
  if [ -d .gpu-deps/usr ]; then
    deps=(-DCMAKE_PREFIX_PATH="$PWD/.gpu-deps/usr" -Dbenchmark_DIR="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu/cmake/benchmark")
    export LD_LIBRARY_PATH="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "- using the build dependencies carried in .gpu-deps"
  fi
  generator=()
  if command -v ninja >/dev/null && [ ! -f "$BUILD/CMakeCache.txt" ]; then generator=(-G Ninja); fi
  b=$(budget build)
  t0=$(date +%s)
  if timeout "$b" cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" >"$LOGS/configure.log" 2>&1 &&
     timeout $(( b - ($(date +%s) - t0) > 5 ? b - ($(date +%s) - t0) : 5 )) cmake --build "$BUILD" -j"$JOBS" --target \
       leap-sandbox leap-sandbox-gpu-runner leap_sandbox_gpu_tests bench_timing sandbox_loop >"$LOGS/build.log" 2>&1; then
    say "- built in $(( $(date +%s) - t0 )) s (budget $b s)"
  else
    fail "- BUILD FAILED or ran past its $b s (configure.log, build.log)"
    tail -n 20 "$LOGS/build.log" 2>/dev/null | sed 's/^/    /' | tee -a "$summary"
  fi
fi
missing=()
for p in "$cli" "$gpu_tests" "$bench" "$loop"; do [ -x "$p" ] || missing+=("$p"); done
[ ${#missing[@]} -gt 0 ] && say "- missing programs: ${missing[*]} (their steps are skipped)"
say ""

# ---- 3. leap-sandbox info -------------------------------------------------------------------------------
say "## 3. leap-sandbox info"
if [ -x "$cli" ]; then
  timeout "$(budget info)" "$cli" info --json >"$LOGS/info.json" 2>"$LOGS/info.err"
  timeout 20 "$cli" info >"$LOGS/info.txt" 2>&1
  grep -E '^(leap|GPU|  device|compile target|timer|confinement)' "$LOGS/info.txt" | sed 's/^/    /' | tee -a "$summary"
  # The program's own account of confinement and pageable access refines the switches.
  "$PY" "$facts_py" switches "$LOGS/facts.json" "$LOGS/info.json" >"$LOGS/switches.txt" 2>>"$LOGS/info.err"
  read -r -a refined <"$LOGS/switches.txt"
  if [ "${refined[*]:-}" != "${switches[*]:-}" ]; then
    switches=("${refined[@]}")
    say "- run switches after info: ${switches[*]:-none}"
    tail -n +2 "$LOGS/switches.txt" | grep -v '^skip: ' | sed 's/^/  - /' | tee -a "$summary"
  fi
  skip_reason=$(sed -n 's/^skip: //p' "$LOGS/switches.txt" | head -1)
else
  skip_reason="leap-sandbox was not built"
  say "- skipped: $skip_reason"
fi
[ -n "$skip_reason" ] && say "- device steps: skipped ($skip_reason)"
say ""

# A device step runs only with its program and a usable device; otherwise it says why not.
device_step() {  # device_step TITLE PROGRAM: 0 when the step may run
  say "## $1"
  if [ -n "$skip_reason" ]; then say "- skipped: $skip_reason"; say ""; return 1; fi
  if [ ! -x "$2" ]; then say "- skipped: $2 was not built"; say ""; return 1; fi
  return 0
}
# run_capped STEP LOG COMMAND...: the command under its step's budget; says how it ended.
run_capped() {
  local step=$1 log=$2 b rc t0
  shift 2
  b=$(budget "$step")
  t0=$(date +%s)
  timeout "$b" "$@" >"$log" 2>&1
  rc=$?
  if [ "$rc" -eq 124 ]; then fail "- $step: RAN PAST its budget of $b s (partial log $(basename "$log"))"
  elif [ "$rc" -ne 0 ]; then fail "- $step: exit $rc in $(( $(date +%s) - t0 )) s (budget $b s)"
  else say "- $step: exit 0 in $(( $(date +%s) - t0 )) s (budget $b s)"; fi
  return "$rc"
}

# ---- 4. the built-in tasks' variants through leap-sandbox eval -------------------------------------------
if device_step "4. built-in variants through leap-sandbox eval" "$cli"; then
  "$cli" tasks --json >"$LOGS/tasks.json" 2>>"$LOGS/variants.err"
  "$PY" "$facts_py" variants "$LOGS/tasks.json" sandbox/tasks >"$LOGS/variants.txt"
  b=$(budget variants)
  deadline=$(( $(date +%s) + b ))
  : >"$LOGS/variants.log"
  n=0 passed=0
  while read -r task variant expect path; do
    left=$(( deadline - $(date +%s) ))
    if [ "$left" -lt 3 ]; then fail "- $task/$variant: not run, the step's $b s ran out"; continue; fi
    n=$((n + 1))
    timed=(--no-time)
    [ "$variant" = fast ] && timed=()  # the fast variants are timed: their evidence is in the line
    timeout "$left" "$cli" eval --json --seed 1 "${timed[@]}" "${switches[@]}" "$task" "$path" \
      >"$LOGS/eval-$task-$variant.json" 2>>"$LOGS/variants.err" </dev/null
    line=$("$PY" "$facts_py" verdict "$LOGS/eval-$task-$variant.json" "$expect" </dev/null)
    echo "$task/$variant: $line" >>"$LOGS/variants.log"
    case "$line" in PASS*) passed=$((passed + 1)); say "- $task/$variant: $line" ;; *) fail "- $task/$variant: $line" ;; esac
  done <"$LOGS/variants.txt"
  say "- $passed of $n variants got their verdict ($(elapsed) s so far)"
  say ""
fi

# ---- 5. the hostile suite ---------------------------------------------------------------------------------
if device_step "5. hostile suite" "$gpu_tests"; then
  run_capped hostile "$LOGS/hostile.txt" "$gpu_tests" "${switches[@]}"
  grep -E '^(FAIL|run switches|device:)|failure\(s\)' "$LOGS/hostile.txt" | sed 's/^/    /' | tee -a "$summary"
  say "- $(grep -c '^PASS' "$LOGS/hostile.txt") cases passed (every line in logs/hostile.txt)"
  say ""
fi

# ---- 6. bench_timing: CUPTI, events, the dirty L2 flush ----------------------------------------------------
if device_step "6. bench_timing" "$bench"; then
  run_capped bench_cupti "$LOGS/bench_cupti.txt" "$bench" "${switches[@]}" --repeats 2 --json "$LOGS/timing-cupti.json" \
    matmul transpose
  LEAP_SANDBOX_TIMER=events run_capped bench_events "$LOGS/bench_events.txt" "$bench" "${switches[@]}" --repeats 1 \
    --expect-method events --json "$LOGS/timing-events.json" matmul transpose
  LEAP_SANDBOX_L2_FLUSH=dirty run_capped bench_dirty "$LOGS/bench_dirty.txt" "$bench" "${switches[@]}" --repeats 2 \
    --json "$LOGS/timing-l2-dirty.json" matmul transpose
  for f in bench_cupti bench_events bench_dirty; do
    say "- $f:"
    grep -vE '^bench_timing: run switches' "$LOGS/$f.txt" | head -n 20 | sed 's/^/    /' | tee -a "$summary"
  done
  say ""
fi

# ---- 7. sandbox_loop --steps 1 -----------------------------------------------------------------------------
if device_step "7. sandbox_loop --steps 1" "$loop"; then
  b=$(budget sandbox_loop)
  run_capped sandbox_loop "$LOGS/sandbox_loop.txt" "$loop" --steps 1 -j 4 --max-seconds $(( b > 15 ? b - 10 : 5 )) \
    "${switches[@]}"
  grep -E '^(step|stopped|sandbox_loop)' "$LOGS/sandbox_loop.txt" | sed 's/^/    /' | tee -a "$summary"
  say ""
fi

# ---- 8. the task library's references at their timing sizes, against their oracles and timed ----------
if device_step "8. task library: references at their timing sizes against their oracles" "$cli"; then
  # Any --help after a command prints that command's help, so ask the help itself whether it has measure.
  if "$cli" tasks --help 2>/dev/null | grep -qw measure; then
    b=$(budget tasks_measure)
    # Oracles that have not started 30 s before the end are reported as not measured: the device
    # runs and timings of those in flight still fit.
    run_capped tasks_measure "$LOGS/tasks_measure.txt" "$cli" tasks measure -j "$JOBS" \
      --max-seconds $(( b > 60 ? b - 30 : (b > 2 ? b / 2 : 1) )) --json-file "$LOGS/reference_times.json"
    "$PY" "$facts_py" measured "$LOGS/reference_times.json" | sed 's/^/- /' | tee -a "$summary"
  else
    say "- skipped: this leap-sandbox has no \`tasks measure\` (built without the CPU runtime's Boost.Context?)"
  fi
  say ""
fi

say "## total"
say "- $(elapsed) s; $([ "$failed" -eq 0 ] && echo "every step that ran passed" || echo "SOME STEPS FAILED (above)")"
exit "$failed"
