#!/usr/bin/env bash
# Builds gputool and runs the whole test suite: the normal build, then the
# same suite built with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
# The format tests load the output in the tools installed above: missing, they fail.
export GT_REQUIRE_FORMAT_TOOLS=1
# The tests' scratch directories go to one of their own, removed once every
# suite has passed (kept after a failure, to look at).
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gt.XXXXXX")
export TMPDIR=$scratch
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
(cd build && ctest --output-on-failure -j "$jobs")
# The sanitizer build runs everything but the ThreadSanitizer and stress
# tests (built and run above) and the OpenMP offload end-to-end tests: with
# the sanitizer runtime preloaded into an offloading program, libomptarget
# never connects to libomp's OMPT, so no target callback fires there. The
# target handlers still run under the sanitizers (unit.omp_target).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGT_SANITIZE=ON >/dev/null
cmake --build build-asan
(cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j "$jobs" -LE "tsan|stress|bench|offload")
# A ThreadSanitizer build of the library runs OpenMP programs with tasks
# inside tasks, recursive taskloops and nested regions on 8 threads: no
# data race in the tool (the channel and monitor TSan tests ran above).
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGT_TSAN=ON >/dev/null
cmake --build build-tsan --target gputool_lib gputool tasks_mix task_timing
(cd build-tsan && ctest --output-on-failure -L tsan-omp)
rm -rf "$scratch"
