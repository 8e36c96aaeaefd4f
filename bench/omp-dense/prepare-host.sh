#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# On the build machine: collects what run-dense.sh needs to run on another
# x86-64 Linux machine that has no LLVM and no elfutils (a many-core host):
# the benchmarks, the null tool, the library, LLVM's OpenMP runtime and the
# shared libraries the library needs. On that machine:
#
#   LD_LIBRARY_PATH=DEST/lib DEST/run-dense.sh DEST/libgputool.so 16
#
# Usage: bench/omp-dense/prepare-host.sh BUILD_DIR DEST
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR DEST" >&2; exit 2; }
B=$1
D=$2
src=$(cd "$(dirname "$0")" && pwd)
ninja -C "$B" gputool_lib bench_omp_dense bench_omp >/dev/null
mkdir -p "$D/lib"
cp "$B/libgputool.so" "$B/bench/omp-dense/dense" "$B/bench/omp-dense/taskloop" \
	"$B/bench/omp-dense/tasktree" "$B/bench/omp/syncbench" "$B/bench/omp/libgtnulltool.so" \
	"$src/run-dense.sh" "$D/"
for l in libunwind.so.8 libdw.so.1 libelf.so.1 liblzma.so.5 libbz2.so.1.0; do
	cp -L "/lib/x86_64-linux-gnu/$l" "$D/lib/"
done
cp -L /usr/lib/llvm-19/lib/libomp.so.5 "$D/lib/"
du -sh "$D"
