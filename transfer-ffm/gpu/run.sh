#!/usr/bin/env bash
# Runs the transfer-ffm GPU tier on a CUDA host from a directory made by pack.sh: no Java, no
# network and no Maven needed there, only CUDA 13 (nvcc, libcudart), gcc and one GPU.
#
#   bash <pack>/run.sh
#
# Compiles the NIXL emulator with its CUDA copy lane (gcc) and the stand-in engine (nvcc), then
# runs io.kvreuse.transfer.gpu.GpuTierMain on the carried Java runtime. Exits non-zero when a build
# step, a scenario or any byte verification fails.
#
# Environment: CUDA_HOME (default /usr/local/cuda), KVREUSE_GPU_DEVICE (default 0),
# KVREUSE_GPU_TIER_WORK (build directory, default a fresh one under /tmp).
set -euo pipefail

pack="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
device="${KVREUSE_GPU_DEVICE:-0}"
work="${KVREUSE_GPU_TIER_WORK:-$(mktemp -d /tmp/kvreuse-gpu-tier.XXXXXX)}"
mkdir -p "$work"

nvcc="$cuda_home/bin/nvcc"
[ -x "$nvcc" ] || nvcc="$(command -v nvcc || true)"
[ -n "$nvcc" ] || { echo "nvcc not found (set CUDA_HOME)" >&2; exit 1; }
cudart=""
for candidate in "$cuda_home"/lib64/libcudart.so.13 "$cuda_home"/lib64/libcudart.so.12 "$cuda_home"/lib64/libcudart.so; do
  if [ -e "$candidate" ]; then cudart="$(readlink -f "$candidate")"; break; fi
done
[ -n "$cudart" ] || cudart="$(ldconfig -p | awk '/libcudart\.so/ {print $NF; exit}')"
[ -n "$cudart" ] || { echo "libcudart not found under $cuda_home/lib64 or by ldconfig" >&2; exit 1; }

echo "== pack"
cat "$pack/PACK-INFO" 2>/dev/null || echo "(no PACK-INFO)"
echo "== host"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader || true
"$nvcc" --version | tail -1
gcc --version | head -1
echo "CUDA runtime $cudart, work directory $work"

if ! grep -q 'emulator_cuda.h' "$pack/src/nixl_emulator.c"; then
  echo "this pack's nixl_emulator.c does not use the CUDA lane (emulator_cuda.c): repack from a tree that does" >&2
  exit 1
fi
echo "== build"
gcc -shared -fPIC -O2 -g -std=gnu11 -Wall -Wextra -Werror -fvisibility=hidden \
  -o "$work/libkvreuse_nixl_emulator.so" "$pack/src/nixl_emulator.c" "$pack/src/emulator_cuda.c" -ldl -lpthread
"$nvcc" -arch=sm_90 -O2 -o "$work/standin_engine" "$pack/src/standin_engine.cu"
# file modes may not survive the trip; the JVM needs jspawnhelper to start the engine process
chmod +x "$pack/runtime/bin/"* "$pack/runtime/lib/jspawnhelper" 2>/dev/null || true

echo "== run"
# One libcudart for the whole process: CudaIpc, the raw baseline and the emulator's lane.
export KVREUSE_EMU_CUDART="$cudart"
"$pack/runtime/bin/java" --enable-native-access=ALL-UNNAMED -Xmx1g \
  -Dkvreuse.nixl.emulator="$work/libkvreuse_nixl_emulator.so" \
  -cp "$pack/lib/*" io.kvreuse.transfer.gpu.GpuTierMain \
  --engine "$work/standin_engine" --cudart "$cudart" --device "$device"
