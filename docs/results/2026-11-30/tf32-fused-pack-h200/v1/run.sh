#!/bin/bash
# TF32 with b packed inside rung 17 (the producer warpgroup's idle warps, slabs claimed on flag words): gpu_matmul's fused tests, then A/B against the last submission on TF32 shapes, then the TF32 suite.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_fz2 gm_fz2; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/r7; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 200 .device-run/gm_fz2 fused > $R/gm_fused.txt 2>&1; echo "rc $?" >> $R/gm_fused.txt)
S=4096x4096x4096,8192x8192x8192,2048x2048x2048,5120x256x5120,6000x1024x6000,1000x1000x1000
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 120 ./kgh_6432 --suite given --precision tf32 --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_fz2 --suite given --precision tf32 --shapes $S --verbose > $R/new_$round.txt 2> $R/new_$round.err
done
XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_fz2 --suite --precision tf32 > $R/suite_tf32.txt 2> $R/suite_tf32.err
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
