#!/bin/bash
# Rung 17 stream-k with the partial sums read back in groups, one release atomic a warp, partials added in memory (red.add): GPU tests, then A/B (plain = last submission) on TF32/BF16.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_sk5 gm_sk5; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/s9; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_sk5 half:: > $R/gm_half.txt 2>&1; echo "rc $?" >> $R/gm_half.txt)
S=4096x4096x4096,8192x8192x8192,2200x8192x2200,6000x1024x6000
for round in 1 2; do
  for p in tf32 bf16; do
    XDG_CACHE_HOME=/tmp/cb timeout 100 ./kgh_6432 --suite given --precision $p --shapes $S --verbose > $R/base_${p}_$round.txt 2>&1
    XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_sk5 --suite given --precision $p --shapes $S --verbose > $R/new_${p}_$round.txt 2>&1
  done
done
cd $OUT && tar cJf s9.tar.xz s9 && rm -rf s9
