#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check: builds (Release) what it needs, records the machine (nvidia-smi, driver, compute mode,
# whether device code can read pageable host memory), runs the hostile suite's binary directly (every
# case's verdict and timing figures land in the summary), the timing benchmark (CUPTI vs CUDA events
# vs wall clock on two tasks, once with CUPTI off, and once with the old dirty L2 flush) and a few
# LEAP steps. Every step is capped so the whole script, build included, ends within 8 minutes on a
# 16-core GPU machine (it aims at 7.5). Without a GPU it still builds, reports "no GPU" with the
# reason, and exits 0.
# What it leaves in $OUT (default ./gpu-out) is two files, since the device tool brings back at most
# eight: summary.txt (also printed as it is written) and logs.tar.gz (every log, the JSON figures and
# the summary). Programs are built under $BUILD (default build/gpu), logs gathered in a temporary
# directory; neither is under $OUT.
# On a GPU machine that can fetch nothing, first run tests/gpu/carry_deps.sh on the development
# machine and carry .gpu-deps along; this script then configures against it.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build/gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT" "$BUILD" || exit 1
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/leap-gpu-check.XXXXXX") || exit 1
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
add() { tee -a "$summary"; }  # a step's lines for the summary, on stdout too
# On every exit: the logs (and a copy of the summary) as one archive beside the summary.
finish() {
  cp "$summary" "$LOGS/summary.txt"
  tar -czf "$OUT/logs.tar.gz" -C "$LOGS" . && rm -rf "$LOGS"
}
trap finish EXIT
start=$(date +%s)
budget=${LEAP_GPU_CHECK_SECONDS:-450}  # 7.5 minutes in all
# left RESERVE: seconds left for this step, keeping RESERVE for the steps after it (never below 5).
left() { local l=$(( start + budget - $(date +%s) - $1 )); [ "$l" -lt 5 ] && l=5; echo "$l"; }
capped() { local cap=$1 reserve=$2; local l; l=$(left "$reserve"); [ "$l" -lt "$cap" ] && echo "$l" || echo "$cap"; }

say "leap GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi >"$LOGS/nvidia-smi.txt" 2>&1
  nvidia-smi -q >"$LOGS/nvidia-smi-q.txt" 2>&1
  say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_mode,clocks.sm,clocks.max.sm,persistence_mode \
                      --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
else
  say "nvidia-smi: not found"
fi

# The GPU machine can fetch nothing: tests/gpu/carry_deps.sh, run beforehand on the development
# machine, copies Eigen, nlohmann/json, Catch2 and Google Benchmark into .gpu-deps/ (carried along).
deps=()
dep_includes=()
if [ -d .gpu-deps/usr ]; then
  deps=(-DCMAKE_PREFIX_PATH="$PWD/.gpu-deps/usr" -Dbenchmark_DIR="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu/cmake/benchmark")
  dep_includes=(-I"$PWD/.gpu-deps/usr/include" -I"$PWD/.gpu-deps/usr/include/eigen3")
  export LD_LIBRARY_PATH="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "using the build dependencies carried in .gpu-deps"
fi
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
# Ninja where there is one (the GPU image may lack make); a build directory keeps its generator.
generator=()
if command -v ninja >/dev/null && [ ! -f "$BUILD/CMakeCache.txt" ]; then generator=(-G Ninja); fi

# Device facts straight from the driver (a 60-line program, cuda.h and -ldl only).
if g++ -std=c++20 -O1 -I"$cuda/include" tests/gpu/device_facts.cpp -ldl -o "$BUILD/device_facts" >"$LOGS/device_facts.log" 2>&1; then
  timeout 20 "$BUILD/device_facts" >"$LOGS/device_facts.txt" 2>&1
  say "device facts: $(tr '\n' ' ' <"$LOGS/device_facts.txt")"
  if grep -q '^pageable_memory_access=1' "$LOGS/device_facts.txt"; then
    say "  device code can read and write pageable host memory: evaluations are refused unless the runner allows it" \
        "(GpuRunnerConfig::allow_pageable_host_access); expect the hostile suite to report that refusal"
  fi
else
  say "device facts: could not compile tests/gpu/device_facts.cpp (see device_facts.log in logs.tar.gz)"
fi

# Configure with tests and benchmarks; without Catch2 or Google Benchmark fall back to the library,
# the CLI and the two GPU programs compiled directly.
targets=(leap-sandbox leap_sandbox_gpu_tests bench_timing sandbox_loop)
if timeout "$(capped 60 330)" cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" >"$LOGS/configure.log" 2>&1; then
  mode=full
  # The GPU runner may be a program of its own; build it when the project has it.
  cmake --build "$BUILD" --target help 2>/dev/null | grep -q 'leap-sandbox-gpu-runner' && targets+=(leap-sandbox-gpu-runner)
  timeout "$(capped 240 200)" cmake --build "$BUILD" -j"$JOBS" --target "${targets[@]}" >"$LOGS/build.log" 2>&1 ||
    { say "BUILD FAILED or timed out (see build.log in logs.tar.gz)"; tail -20 "$LOGS/build.log" | add; exit 1; }
  gpu_tests="$BUILD/tests/sandbox/leap_sandbox_gpu_tests"
  bench="$BUILD/benchmarks/bench_timing"
else
  mode=fallback
  cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" -DLEAP_BUILD_TESTS=OFF -DLEAP_BUILD_BENCHMARKS=OFF \
        -DLEAP_BUILD_EXAMPLES=OFF >>"$LOGS/configure.log" 2>&1 || { say "CONFIGURE FAILED (see configure.log in logs.tar.gz)"; exit 1; }
  timeout "$(capped 240 200)" cmake --build "$BUILD" -j"$JOBS" >"$LOGS/build.log" 2>&1 ||
    { say "BUILD FAILED (see build.log in logs.tar.gz)"; tail -20 "$LOGS/build.log" | add; exit 1; }
  lib=$(find "$BUILD/sandbox" -name 'libleap_sandbox.*' | head -1)
  flags=(-std=c++20 -O2 -Iinclude -Isandbox/include -Isandbox/src "${dep_includes[@]}" "$lib" -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64"
         -lnvrtc -lcupti -ldl -Wl,-rpath,"$cuda/lib64" -Wl,-rpath,"$cuda/extras/CUPTI/lib64")
  g++ tests/gpu/test_hostile.cpp "${flags[@]}" -o "$BUILD/leap_sandbox_gpu_tests" >>"$LOGS/build.log" 2>&1 ||
    { say "BUILD FAILED (gpu tests)"; tail -20 "$LOGS/build.log" | add; exit 1; }
  g++ benchmarks/bench_timing.cpp "${flags[@]}" -o "$BUILD/bench_timing" >>"$LOGS/build.log" 2>&1 ||
    { say "BUILD FAILED (bench)"; tail -20 "$LOGS/build.log" | add; exit 1; }
  gpu_tests="$BUILD/leap_sandbox_gpu_tests"
  bench="$BUILD/bench_timing"
fi
say "build: $mode${generator[*]:+ (Ninja)}, $(( $(date +%s) - start )) s since the start"

"$BUILD/sandbox/leap-sandbox" info --json >"$LOGS/info.json" 2>&1
"$BUILD/sandbox/leap-sandbox" info 2>&1 | add
if ! grep -q '"available":true' "$LOGS/info.json"; then
  say "RESULT: no GPU on this machine; the hostile suite and the timing benchmark were not run"
  exit 0
fi

# The hostile suite, run directly: one PASS/FAIL line per case with its verdict and timing figures.
t0=$(date +%s)
timeout "$(capped 170 140)" "$gpu_tests" >"$LOGS/hostile.txt" 2>&1
rc=$?
grep -E "^(PASS|FAIL)|failure\(s\)|device:|^     " "$LOGS/hostile.txt" | add
[ "$rc" -eq 124 ] && say "hostile suite: TIMED OUT (partial results above)"
say "hostile suite: exit $rc in $(( $(date +%s) - t0 )) s"

# Timing methods side by side on two tasks (3 repeats), then events only (CUPTI off) once, then the
# dirty L2 flush (memset only) against the clean one (memset, then a read pass) on the same tasks.
t0=$(date +%s)
timeout "$(capped 60 80)" "$bench" --repeats 3 --json "$LOGS/timing.json" matmul transpose >"$LOGS/bench_timing.txt" 2>&1
brc=$?
add <"$LOGS/bench_timing.txt"
say "timing benchmark (clean L2 flush): exit $brc in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
LEAP_SANDBOX_TIMER=events timeout "$(capped 30 50)" "$bench" --repeats 1 --json "$LOGS/timing-events.json" matmul transpose \
  >"$LOGS/bench_timing_events.txt" 2>&1
say "timing benchmark, LEAP_SANDBOX_TIMER=events: exit $? in $(( $(date +%s) - t0 )) s"
add <"$LOGS/bench_timing_events.txt"
t0=$(date +%s)
LEAP_SANDBOX_L2_FLUSH=dirty timeout "$(capped 40 10)" "$bench" --repeats 3 --json "$LOGS/timing-l2-dirty.json" matmul transpose \
  >"$LOGS/bench_timing_l2_dirty.txt" 2>&1
say "timing benchmark, LEAP_SANDBOX_L2_FLUSH=dirty (compare the medians with the clean run above): exit $? in $(( $(date +%s) - t0 )) s"
add <"$LOGS/bench_timing_l2_dirty.txt"

# The LEAP loop against the real sandbox (examples/sandbox_loop), a few steps, in what time is left.
if [ -x "$BUILD/examples/sandbox_loop/sandbox_loop" ]; then
  t0=$(date +%s)
  timeout "$(capped 40 0)" "$BUILD/examples/sandbox_loop/sandbox_loop" --steps 3 >"$LOGS/sandbox_loop.txt" 2>&1
  say "sandbox_loop: exit $? in $(( $(date +%s) - t0 )) s"
  tail -n 25 "$LOGS/sandbox_loop.txt" | add
fi
say "total: $(( $(date +%s) - start )) s"
[ "$rc" -eq 0 ] && [ "$brc" -eq 0 ]
