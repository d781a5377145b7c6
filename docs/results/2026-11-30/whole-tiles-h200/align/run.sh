#!/bin/bash
# What unaligned rows of a cost where a is too large to copy: the submitted tree on the shapes left under 0.8x beside the same with k a multiple of 4, k whole 16-deep tiles, and n whole tiles too.
cd "$(dirname "$0")"
xz -dkf kgh_wt2.xz && chmod +x kgh_wt2
R=$OUT/align; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
S=1368x6451x178,1368x6452x178,1368x6464x178,1368x6464x192,1264x697x398,1264x700x398,1264x704x400,3411x2226x157,3411x2228x157,3411x2240x160
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 200 ./kgh_wt2 --suite given --shapes $S --verbose > $R/wt2_$round.txt 2> $R/wt2_$round.err
done
cd $OUT && tar cJf align.tar.xz align && rm -rf align
