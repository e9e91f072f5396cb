#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run on the development machine before a GPU session: copies the Debian-installed build dependencies
# (Eigen, nlohmann/json, Catch2, Google Benchmark, and of Boost what the CPU runtime's Boost.Context
# needs, which `tasks measure` is built on: headers, CMake configs, libbenchmark, libboost_context) into
# .gpu-deps/ in the repository's root, keeping their /usr layout, because the GPU machine can fetch
# nothing. Pass `.gpu-deps` in the device tool's carry list; tests/gpu/run.sh then finds them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.gpu-deps
rm -rf "$dest"
copy() {  # copy PATH...: each existing path into $dest with its absolute layout
  for path in "$@"; do
    [ -e "$path" ] || continue
    mkdir -p "$dest$(dirname "$path")"
    cp -a "$path" "$dest$(dirname "$path")/"
  done
}
copy /usr/include/eigen3 /usr/share/eigen3/cmake \
     /usr/include/nlohmann /usr/share/cmake/nlohmann_json \
     /usr/include/catch2 /usr/lib/cmake/Catch2 /usr/lib/libCatch2WithMain.a \
     /usr/include/benchmark /usr/lib/x86_64-linux-gnu/cmake/benchmark
for lib in /usr/lib/x86_64-linux-gnu/libbenchmark*; do copy "$lib"; done
# Boost.Context: its headers and the few of Boost's it includes (boost/config, cstdint, workaround;
# 162 MB for all of Boost), its library and the CMake configs find_package(Boost COMPONENTS context) reads.
copy /usr/include/boost/config /usr/include/boost/config.hpp /usr/include/boost/cstdint.hpp \
     /usr/include/boost/version.hpp /usr/include/boost/detail/workaround.hpp /usr/include/boost/context
for cfg in /usr/lib/x86_64-linux-gnu/cmake/Boost-* /usr/lib/x86_64-linux-gnu/cmake/BoostDetectToolset-*.cmake \
           /usr/lib/x86_64-linux-gnu/cmake/boost_context-* /usr/lib/x86_64-linux-gnu/cmake/boost_headers-*; do
  copy "$cfg"
done
for lib in /usr/lib/x86_64-linux-gnu/libboost_context*; do copy "$lib"; done
du -sh "$dest"
