#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The corpus against nvcc: every kernel the corpus expects to compile ("expect-status: ok", all of
# them device-only) must also compile with `nvcc -cubin`, so "compiles here" never means more than
# "compiles with the toolkit's own compiler". Prints the count; exits 1 if nvcc rejects any.
# --expt-relaxed-constexpr, as PyTorch's extension builds pass it: without it nvcc refuses
# constexpr host functions such as std::numeric_limits<float>::lowest() or std::max in device code,
# which NVRTC (and so this sandbox) accepts.
# Usage: check_with_nvcc.sh NVCC CORPUS_DIR [ARCH]
set -u
nvcc=$1
dir=$2
arch=${3:-sm_90}
out=$(mktemp -d) || exit 2
trap 'rm -rf "$out"' EXIT
total=0
passed=0
failed_names=""
for f in "$dir"/*.cu; do
  grep -q '^// expect-status: ok$' "$f" || continue
  total=$((total + 1))
  if "$nvcc" -cubin -arch="$arch" -std=c++17 --expt-relaxed-constexpr -o "$out/k.cubin" "$f" >"$out/log" 2>&1; then
    passed=$((passed + 1))
  else
    failed_names="$failed_names $(basename "$f")"
    echo "nvcc rejected $(basename "$f"):"
    sed -n 1,12p "$out/log"
  fi
done
echo "nvcc -cubin -arch=$arch --expt-relaxed-constexpr compiled $passed of $total device-only corpus kernels"
[ "$total" -gt 0 ] && [ "$passed" -eq "$total" ] || { echo "rejected:$failed_names"; exit 1; }
