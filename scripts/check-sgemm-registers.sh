#!/usr/bin/env bash
# Assembles the PTX module for a GPU architecture and reports, for every SGEMM entry point,
# what the PTX cannot show: registers per thread, spills to local memory, shared memory, and
# how many blocks of its size fit on one SM by registers (65536 per SM, allocated per warp
# in units of 256). Fails if any SGEMM kernel spills.
# Needs ptxas: the CUDA toolkit, or `pip install nvidia-cuda-nvcc-cu12` (set PTXAS to its
# nvidia/cuda_nvcc/bin/ptxas). No GPU needed.
# Usage: scripts/check-sgemm-registers.sh KERNELS.ptx [sm_90]
#   (KERNELS.ptx: target/debug/build/kernels-gpu-host-*/out/kernels_gpu.ptx after `cargo build -p kernels-gpu-host`)
set -euo pipefail
ptx=${1:?usage: $0 KERNELS.ptx [sm_arch]}
arch=${2:-sm_90}
ptxas=${PTXAS:-ptxas}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ptxas" -arch="$arch" -O3 -v "$ptx" -o "$work/kernels.cubin" 2>"$work/info.txt"
awk '
  /Compiling entry function/ { split($0, q, "'\''"); fn = q[2]; spill = 0; smem = 0 }
  /bytes spill stores/ { for (i = 1; i <= NF; i++) if ($(i+1) == "bytes" && $(i+2) == "spill") spill += $i }
  /Used [0-9]+ registers/ && fn ~ /^sgemm/ {
    for (i = 1; i <= NF; i++) {
      if ($(i+1) == "registers,") regs = $i
      if ($(i+1) == "bytes" && $(i+2) == "smem") smem = $i
    }
    # Threads per block, as kernels-gpu/src/sgemm/mod.rs declares each configuration: a
    # warp per warp tile where the name has a block tile BMxBNxBK and a warp tile wWMxWN.
    threads = 256
    if (fn ~ /w64x64|64x128x16/ && fn !~ /128x256|256x128/) threads = 128
    bm = 0; wm = 0
    parts = split(fn, part, "_")
    for (i = 1; i <= parts; i++) {
      if (part[i] ~ /^[0-9]+x[0-9]+x[0-9]+$/) { split(part[i], d, "x"); bm = d[1]; bn = d[2] }
      if (part[i] ~ /^w[0-9]+x[0-9]+$/) { split(substr(part[i], 2), d, "x"); wm = d[1]; wn = d[2] }
    }
    if (bm > 0 && wm > 0) threads = (bm / wm) * (bn / wn) * 32
    if (fn ~ /coalesced|shared_blocking/) threads = 1024
    if (fn ~ /blocktiling_1d/) threads = 512
    per_warp = int((regs * 32 + 255) / 256) * 256
    blocks = int(65536 / (per_warp * threads / 32))
    printf "%-42s %3d regs  %6d B smem  spills %4d B  blocks/SM by regs %d\n", fn, regs, smem, spill, blocks
    if (spill > 0) bad = 1
  }
  END { exit bad }
' "$work/info.txt" && echo "no SGEMM kernel spills" || { echo "SGEMM spills found"; exit 1; }
