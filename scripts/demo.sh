#!/usr/bin/env bash
# Builds gputool, runs an OpenMP sample under it and prints the report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
out=$(mktemp -d /tmp/gputool-demo-XXXXXX)
echo
echo "\$ OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES=build/libgputool.so build/samples/omp-host/split"
OMP_NUM_THREADS=2 GPUTOOL_OUTPUT="$out" OMP_TOOL_LIBRARIES="$PWD/build/libgputool.so" \
  build/samples/omp-host/split
echo
cat "$out"/*.txt
