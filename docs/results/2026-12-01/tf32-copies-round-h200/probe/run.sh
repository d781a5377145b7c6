#!/bin/bash
# TF32 operands rounded by the tensor-memory accelerator (TFLOAT32 maps): rounding probe, row-b/packed tests, A/B on squares.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_exp gm_exp; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 60 .device-run/gm_exp probe_tma > $R/probe.txt 2>&1; echo "rc $?" >> $R/probe.txt)
(cd .. && timeout 120 .device-run/gm_exp gemm_tf32_row_b > $R/gm_row_b.txt 2>&1; echo "rc $?" >> $R/gm_row_b.txt)
(cd .. && timeout 90 .device-run/gm_exp gemm_tf32_packed > $R/gm_packed.txt 2>&1; echo "rc $?" >> $R/gm_packed.txt)
S=4096x4096x4096,8192x8192x8192,2048x2048x2048,6000x1024x6000,1000x1000x1000,32x8192x8192
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 100 ./kgh_6432 --suite given --precision tf32 --shapes $S --verbose > $R/base_$round.txt 2>&1
  XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_exp --suite given --precision tf32 --shapes $S --verbose > $R/new_$round.txt 2>&1
done
cd $OUT && tar cJf t1.tar.xz t1 && rm -rf t1
