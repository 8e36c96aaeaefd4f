#!/usr/bin/env bash
# Packs the LLVM 19 OpenMP runtime (libomp, libomptarget, libLLVM and the libraries they
# need) into one tar.xz that can travel to the GPU machine, which has no LLVM.
# Usage: pack-llvm-runtime.sh OUT.tar.xz      (about 43 MB; takes ~30 s)
# On the GPU machine: mkdir -p /tmp/llvm && tar -C /tmp/llvm -xJf OUT.tar.xz
#        export LD_LIBRARY_PATH=/tmp/llvm:$LD_LIBRARY_PATH
set -euo pipefail
out=${1:?usage: $0 OUT.tar.xz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
L=/usr/lib/llvm-19/lib
S=/lib/x86_64-linux-gnu
# libLLVM.so.19.1 is in LLVM's own directory or, from Debian's libllvm19
# package alone, in the system's.
LLVM_DIR=$L
[ -e "$LLVM_DIR/libLLVM.so.19.1" ] || LLVM_DIR=$S
cp -L "$LLVM_DIR/libLLVM.so.19.1" "$L/libomptarget.so.19.1" "$L/libomp.so.5" "$tmp/"
for l in libbsd.so.0 libedit.so.2 libffi.so.8 libicudata.so.72 libicuuc.so.72 libmd.so.0 \
         libtinfo.so.6 libxml2.so.2 libz3.so.4 libzstd.so.1; do cp -L "$S/$l" "$tmp/"; done
# libomptarget finds libomp by the unversioned name: without this link its OMPT
# callbacks never connect to the tool.
ln -s libomp.so.5 "$tmp/libomp.so"
ln -s libomptarget.so.19.1 "$tmp/libomptarget.so"
ln -s libLLVM.so.19.1 "$tmp/libLLVM-19.so"
# A shim that registers LLVM's NVPTX backend so libomptarget can JIT the embedded IR.
cat >"$tmp/nvptx-jit.c" <<'C'
void LLVMInitializeNVPTXTargetInfo(void);
void LLVMInitializeNVPTXTarget(void);
void LLVMInitializeNVPTXTargetMC(void);
void LLVMInitializeNVPTXAsmPrinter(void);
__attribute__((constructor)) static void register_nvptx(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}
C
gcc -shared -fPIC "$tmp/nvptx-jit.c" -o "$tmp/libnvptx-jit.so" -L"$tmp" -l:libLLVM.so.19.1
rm "$tmp/nvptx-jit.c"
tar -C "$tmp" -cf - . | xz -T2 -6 >"$out"
ls -la "$out"
