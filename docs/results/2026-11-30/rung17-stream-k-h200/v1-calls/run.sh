#!/bin/bash
# Rung 17 stream-k: GPU tests of the stream entries, then A/B on TF32/BF16 squares, then suites.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_sk gm_sk; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/s1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_sk stream > $R/gm_stream.txt 2>&1; echo "rc $?" >> $R/gm_stream.txt)
S=4096x4096x4096,8192x8192x8192
for round in 1 2; do
  for p in tf32 $([ $round = 2 ] && echo bf16); do
    XDG_CACHE_HOME=/tmp/cb timeout 100 ./kgh_6432 --suite given --precision $p --shapes $S --verbose > $R/base_${p}_$round.txt 2>&1
    XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_sk --suite given --precision $p --shapes $S --verbose > $R/new_${p}_$round.txt 2>&1
  done
done
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_sk --suite --precision tf32 > $R/suite_tf32.txt 2>&1
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_sk --suite --precision bf16 > $R/suite_bf16.txt 2>&1
cd $OUT && tar cJf s1.tar.xz s1 && rm -rf s1
