#!/usr/bin/env bash
# Installs what building and testing gputool needs on Debian 12 (run as root,
# or with sudo available). Does nothing for packages already installed.
set -euo pipefail
pkgs=(cmake ninja-build pkg-config python3 gcc clang-19 clang-tools-19 libomp-19-dev libclang-rt-19-dev
      libunwind-dev libdw-dev libelf-dev zlib1g-dev spin openmpi-bin libopenmpi-dev
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "gputool: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
