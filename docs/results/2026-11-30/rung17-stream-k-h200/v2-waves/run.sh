#!/bin/bash
# Rung 17 stream-k against the plain tiles on outputs of 1.2 to 4.9 waves of 128 x 256 tiles.
cd "$(dirname "$0")"
for f in kgh_sk; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/s2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
S=2200x8192x2200,2900x4096x2900,3000x2048x3000,4608x4096x4608,6000x1024x6000
for p in tf32 bf16; do
  XDG_CACHE_HOME=/tmp/cn timeout 200 ./kgh_sk --suite given --precision $p --shapes $S --verbose > $R/new_${p}.txt 2>&1
done
cd $OUT && tar cJf s2.tar.xz s2 && rm -rf s2
