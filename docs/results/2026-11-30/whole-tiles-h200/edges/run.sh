#!/bin/bash
# Whole tiles against edges: the last submission on odd shapes beside the same products padded to whole tiles (m, n multiples of 128/64, k of 16).
cd "$(dirname "$0")"
xz -dkf kgh_6432.xz && chmod +x kgh_6432
R=$OUT/r3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
S=127x4096x4096,128x4096x4096,1000x1000x1000,1024x1008x1024,3411x2226x157,3456x2240x192,1368x6451x178,1408x6464x192,4717x5936x161,4736x5936x192,1264x697x398,1280x704x448,1192x231x139,1216x240x192,824x1166x1279,832x1168x1280
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 200 ./kgh_6432 --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
done
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
