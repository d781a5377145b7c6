#!/bin/bash
# SASS of rung 17's plain and stream-k 128 x 256 TF32 entries (v4 build's module, compiled whole as the driver does).
cd "$(dirname "$0")"
xz -dkf hopper_v4.ptx.xz
R=$OUT/s7; mkdir -p $R
ptxas --version > $R/ptxas.txt 2>&1
ptxas -arch=sm_90a -O3 -v hopper_v4.ptx -o /tmp/h.cubin > $R/ptxas-info.txt 2>&1
for e in gemm_tf32_ws_128x256 gemm_tf32_ws_128x256_stream gemm_bf16_ws_128x256 gemm_bf16_ws_128x256_stream; do
  cuobjdump -sass -fun $e /tmp/h.cubin > $R/$e.sass 2>&1
done
cd $OUT && tar cJf s7.tar.xz s7 && rm -rf s7
