#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU check: builds (Release), runs the gpu-labelled tests (variants and hostile kernels), the timing
# benchmark (CUPTI vs CUDA events vs wall clock, 3 repeats) and writes a summary to $OUT (default
# ./gpu-out). Budget: about 2 min to build on 16 cores, under 5 min of tests and benchmark on an H200.
# Without a GPU it still builds, reports "no GPU" with the reason, and exits 0.
# On a GPU machine that can fetch nothing, first run tests/gpu/carry_deps.sh here and carry .gpu-deps.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build/gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)

say "leap GPU check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$summary" 2>&1

# The GPU machine can fetch nothing: tests/gpu/carry_deps.sh, run beforehand on the development
# machine, copies Eigen, nlohmann/json, Catch2 and Google Benchmark into .gpu-deps/ (carried along).
deps=()
if [ -d .gpu-deps/usr ]; then
  deps=(-DCMAKE_PREFIX_PATH="$PWD/.gpu-deps/usr" -Dbenchmark_DIR="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu/cmake/benchmark")
  export LD_LIBRARY_PATH="$PWD/.gpu-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  say "using the build dependencies carried in .gpu-deps"
fi

# Full configure (tests and benchmarks); without Catch2 or Google Benchmark fall back to the library,
# the CLI and the two GPU programs compiled directly.
if cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" >"$OUT/configure.log" 2>&1; then
  mode=full
  cmake --build "$BUILD" -j"$JOBS" --target leap-sandbox leap_sandbox_gpu_tests bench_timing sandbox_loop >"$OUT/build.log" 2>&1 || { say "BUILD FAILED (see build.log)"; exit 1; }
  gpu_tests="$BUILD/tests/sandbox/leap_sandbox_gpu_tests"
  bench="$BUILD/benchmarks/bench_timing"
else
  mode=fallback
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "${deps[@]}" -DLEAP_BUILD_TESTS=OFF -DLEAP_BUILD_BENCHMARKS=OFF \
        -DLEAP_BUILD_EXAMPLES=OFF >"$OUT/configure.log" 2>&1 || { say "CONFIGURE FAILED (see configure.log)"; exit 1; }
  cmake --build "$BUILD" -j"$JOBS" --target leap-sandbox leap_sandbox >"$OUT/build.log" 2>&1 || { say "BUILD FAILED (see build.log)"; exit 1; }
  cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
  lib=$(find "$BUILD/sandbox" -name 'libleap_sandbox.*' | head -1)
  flags=(-std=c++20 -O2 -Iinclude -Isandbox/include "$lib" -L"$cuda/lib64" -L"$cuda/extras/CUPTI/lib64" -lnvrtc -lcupti -ldl
         -Wl,-rpath,"$cuda/lib64" -Wl,-rpath,"$cuda/extras/CUPTI/lib64")
  g++ tests/gpu/test_hostile.cpp "${flags[@]}" -o "$BUILD/leap_sandbox_gpu_tests" >>"$OUT/build.log" 2>&1 || { say "BUILD FAILED (gpu tests)"; exit 1; }
  g++ benchmarks/bench_timing.cpp "${flags[@]}" -o "$BUILD/bench_timing" >>"$OUT/build.log" 2>&1 || { say "BUILD FAILED (bench)"; exit 1; }
  gpu_tests="$BUILD/leap_sandbox_gpu_tests"
  bench="$BUILD/bench_timing"
fi
say "build: $mode, $(( $(date +%s) - start )) s"

"$BUILD/sandbox/leap-sandbox" info --json >"$OUT/info.json" 2>&1
"$BUILD/sandbox/leap-sandbox" info | tee -a "$summary"
if ! grep -q '"available":true' "$OUT/info.json"; then
  say "RESULT: no GPU on this machine; the gpu tests and the timing benchmark were not run"
  exit 0
fi

t0=$(date +%s)
if [ "$mode" = full ]; then
  timeout 330 ctest --test-dir "$BUILD" -L gpu --output-on-failure >"$OUT/ctest-gpu.log" 2>&1
  rc=$?
  # ctest's per-test output has the PASS/FAIL lines of the suite
  grep -E "^(PASS|FAIL)|failure\(s\)|device:" "$OUT/ctest-gpu.log" >>"$summary"
else
  timeout 330 "$gpu_tests" >"$OUT/ctest-gpu.log" 2>&1
  rc=$?
  grep -E "^(PASS|FAIL)|failure\(s\)|device:" "$OUT/ctest-gpu.log" >>"$summary"
fi
say "gpu tests: exit $rc in $(( $(date +%s) - t0 )) s"

t0=$(date +%s)
timeout 150 "$bench" --repeats 3 --json "$OUT/timing.json" >"$OUT/bench_timing.txt" 2>&1
brc=$?
cat "$OUT/bench_timing.txt" >>"$summary"
say "timing benchmark: exit $brc in $(( $(date +%s) - t0 )) s"

# The LEAP loop against the real sandbox (examples/sandbox_loop), a few steps.
if [ -x "$BUILD/examples/sandbox_loop/sandbox_loop" ]; then
  t0=$(date +%s)
  timeout 120 "$BUILD/examples/sandbox_loop/sandbox_loop" --steps 4 >"$OUT/sandbox_loop.txt" 2>&1
  say "sandbox_loop: exit $? in $(( $(date +%s) - t0 )) s"
  tail -n 25 "$OUT/sandbox_loop.txt" >>"$summary"
fi
say "total: $(( $(date +%s) - start )) s"
[ "$rc" -eq 0 ] && [ "$brc" -eq 0 ]
