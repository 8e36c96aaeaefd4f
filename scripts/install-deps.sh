#!/usr/bin/env bash
# Installs what building and testing gputool needs on Debian 12 (run as root,
# or with sudo available). Does nothing for what is already installed.
# With --test, also the tools the test suite loads gputool's output formats
# in: Go (go tool pprof), Node.js and speedscope (npm, in /opt/gputool-test),
# and the Fortran compilers of samples/fortran (gfortran, flang-19).
set -euo pipefail
test_tools=0
[ "${1:-}" = "--test" ] && test_tools=1
pkgs=(cmake ninja-build pkg-config python3 gcc clang-19 clang-tools-19 libomp-19-dev libclang-rt-19-dev
      libunwind-dev libdw-dev libelf-dev zlib1g-dev spin openmpi-bin libopenmpi-dev
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd chromium)
if [ $test_tools -eq 1 ]; then
  pkgs+=(golang-go gfortran flang-19)
  command -v npm >/dev/null || pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "gputool: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
speedscope=1.25.0
if [ $test_tools -eq 1 ] &&
   ! grep -qs "\"version\": \"$speedscope\"" /opt/gputool-test/node_modules/speedscope/package.json; then
  echo "gputool: installing speedscope $speedscope (npm) in /opt/gputool-test"
  $sudo mkdir -p /opt/gputool-test
  $sudo npm install --silent --no-audit --no-fund --prefix /opt/gputool-test "speedscope@$speedscope" >/dev/null
fi
