#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check: builds (Release) what it needs, records the machine (nvidia-smi, driver, compute mode,
# whether device code can read pageable host memory), runs the hostile suite's binary directly (every
# case's verdict and timing figures land in the summary), the timing benchmark (CUPTI vs CUDA events
# vs wall clock on two tasks, and once with CUPTI off) and a few LEAP steps, and writes it all to
# $OUT/summary.txt (default ./gpu-out). Every step is capped so the whole script, build included,
# ends within 8 minutes on a 16-core GPU machine (it aims at 7.5). Without a GPU it still builds,
# reports "no GPU" with the reason, and exits 0.
# On a GPU machine that can fetch nothing, first run tests/gpu/carry_deps.sh on the development
# machine and carry .gpu-deps along; this script then configures against it.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build/gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
budget=${LEAP_GPU_CHECK_SECONDS:-450}  # 7.5 minutes in all
# left RESERVE: seconds left for this step, keeping RESERVE for the steps after it (never below 5).
left() { local l=$(( start + budget - $(date +%s) - $1 )); [ "$l" -lt 5 ] && l=5; echo "$l"; }
capped() { local cap=$1 reserve=$2; local l; l=$(left "$reserve"); [ "$l" -lt "$cap" ] && echo "$l" || echo "$cap"; }

say "leap GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
  nvidia-smi -q >"$OUT/nvidia-smi-q.txt" 2>&1
  say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,clocks.sm,clocks.max.sm,persistence_mode \
                      --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
else
  say "nvidia-smi: not found"
fi

# The GPU machine can fetch nothing: tests/gpu/carry_deps.sh, run beforehand on the development
# machine, copies Eigen, nlohmann/json, Catch2 and Google Benchmark into .gpu-deps/ (carried along).
deps=()
if [ -d .gpu-deps/usr ]; then
  deps=(-DCMAKE_PREFIX_PATH="$PWD/.gpu-deps/usr" -Dbenchmark_DIR="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu/cmake/benchmark")
  export LD_LIBRARY_PATH="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "using the build dependencies carried in .gpu-deps"
fi
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}

# Device facts straight from the driver (a 60-line program, cuda.h and -ldl only).
if g++ -std=c++20 -O1 -I"$cuda/include" tests/gpu/device_facts.cpp -ldl -o "$OUT/device_facts" >"$OUT/device_facts.log" 2>&1; then
  timeout 20 "$OUT/device_facts" >"$OUT/device_facts.txt" 2>&1
  say "device facts: $(tr '\n' ' ' <"$OUT/device_facts.txt")"
  if grep -q '^pageable_memory_access=1' "$OUT/device_facts.txt"; then
    say "  device code can read pageable host memory: the harness keeps no answer there a candidate could find before its" \
        "run (the candidate runs before the reference on every trial's inputs; timed runs are checked only after timing;" \
        "host copies of outputs are zeroed after each comparison)"
  fi
else
  say "device facts: could not compile tests/gpu/device_facts.cpp (see device_facts.log)"
fi

# Configure with tests and benchmarks; without Catch2 or Google Benchmark fall back to the library,
# the CLI and the two GPU programs compiled directly.
targets=(leap-sandbox leap_sandbox_gpu_tests bench_timing sandbox_loop)
if timeout "$(capped 60 330)" cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" >"$OUT/configure.log" 2>&1; then
  mode=full
  # The evaluation worker may be a program of its own; build it when the project has it.
  cmake --build "$BUILD" --target help 2>/dev/null | grep -q 'leap-sandbox-worker' && targets+=(leap-sandbox-worker)
  timeout "$(capped 240 200)" cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]}" >"$OUT/build.log" 2>&1 ||
    { say "BUILD FAILED or timed out (see build.log)"; tail -20 "$OUT/build.log" >>"$summary"; exit 1; }
  gpu_tests="$BUILD/tests/sandbox/leap_sandbox_gpu_tests"
  bench="$BUILD/benchmarks/bench_timing"
else
  mode=fallback
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" -DLEAP_BUILD_TESTS=OFF -DLEAP_BUILD_BENCHMARKS=OFF \
        -DLEAP_BUILD_EXAMPLES=OFF >"$OUT/configure.log" 2>&1 || { say "CONFIGURE FAILED (see configure.log)"; exit 1; }
  timeout "$(capped 240 200)" cmake --build "$BUILD" -j"$JOBS" >"$OUT/build.log" 2>&1 || { say "BUILD FAILED (see build.log)"; exit 1; }
  lib=$(find "$BUILD/sandbox" -name 'libleap_sandbox.*' | head -1)
  flags=(-std=c++20 -O2 -Iinclude -Isandbox/include "$lib" -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -lnvrtc -lcupti -ldl
         -Wl,-rpath,"$cuda/lib64" -Wl,-rpath,"$cuda/extras/CUPTI/lib64")
  g++ tests/gpu/test_hostile.cpp "${flags[@]}" -o "$BUILD/leap_sandbox_gpu_tests" >>"$OUT/build.log" 2>&1 || { say "BUILD FAILED (gpu tests)"; exit 1; }
  g++ benchmarks/bench_timing.cpp "${flags[@]}" -o "$BUILD/bench_timing" >>"$OUT/build.log" 2>&1 || { say "BUILD FAILED (bench)"; exit 1; }
  gpu_tests="$BUILD/leap_sandbox_gpu_tests"
  bench="$BUILD/bench_timing"
fi
say "build: $mode, $(( $(date +%s) - start )) s since the start"

"$BUILD/sandbox/leap-sandbox" info --json >"$OUT/info.json" 2>&1
"$BUILD/sandbox/leap-sandbox" info | tee -a "$summary"
if ! grep -q '"available":true' "$OUT/info.json"; then
  say "RESULT: no GPU on this machine; the hostile suite and the timing benchmark were not run"
  exit 0
fi

# The hostile suite, run directly: one PASS/FAIL line per case with its verdict and timing figures.
t0=$(date +%s)
timeout "$(capped 170 110)" "$gpu_tests" >"$OUT/hostile.txt" 2>&1
rc=$?
grep -E "^(PASS|FAIL)|failure\(s\)|device:|^     " "$OUT/hostile.txt" >>"$summary"
[ "$rc" -eq 124 ] && say "hostile suite: TIMED OUT (partial results above)"
say "hostile suite: exit $rc in $(( $(date +%s) - t0 )) s"

# Timing methods side by side on two tasks (3 repeats), then events only (CUPTI off) once.
t0=$(date +%s)
timeout "$(capped 60 50)" "$bench" --repeats 3 --json "$OUT/timing.json" matmul transpose >"$OUT/bench_timing.txt" 2>&1
brc=$?
cat "$OUT/bench_timing.txt" >>"$summary"
say "timing benchmark: exit $brc in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
LEAP_SANDBOX_TIMER=events timeout "$(capped 30 20)" "$bench" --repeats 1 --json "$OUT/timing-events.json" matmul transpose \
  >"$OUT/bench_timing_events.txt" 2>&1
say "timing benchmark, LEAP_SANDBOX_TIMER=events: exit $? in $(( $(date +%s) - t0 )) s"
cat "$OUT/bench_timing_events.txt" >>"$summary"

# The LEAP loop against the real sandbox (examples/sandbox_loop), a few steps, in what time is left.
if [ -x "$BUILD/examples/sandbox_loop/sandbox_loop" ]; then
  t0=$(date +%s)
  timeout "$(capped 40 0)" "$BUILD/examples/sandbox_loop/sandbox_loop" --steps 3 >"$OUT/sandbox_loop.txt" 2>&1
  say "sandbox_loop: exit $? in $(( $(date +%s) - t0 )) s"
  tail -n 25 "$OUT/sandbox_loop.txt" >>"$summary"
fi
say "total: $(( $(date +%s) - start )) s"
[ "$rc" -eq 0 ] && [ "$brc" -eq 0 ]
