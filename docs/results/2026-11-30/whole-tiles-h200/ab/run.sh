#!/bin/bash
# Whole tiles: runs on operands padded to whole tiles (Tuned::Tiled). gpu_matmul's tiled and split-k tests, A/B against the last submission on odd shapes, the listed suite, seeds 29, 31, 33.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_wt gm_wt; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/r4; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 200 .device-run/gm_wt tiled > $R/gm_tiled.txt 2>&1; echo "rc $?" >> $R/gm_tiled.txt)
S=127x4096x4096,1000x1000x1000,824x1166x1279,4717x5936x161,3411x2226x157,1368x6451x178,1264x697x398,1192x231x139,577x1243x110,10576x11401x74,4920x698x479,7813x1589x173,3509x1284x134,2049x2047x2051
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 150 ./kgh_6432 --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/cn timeout 150 ./kgh_wt --suite given --shapes $S --verbose > $R/new_$round.txt 2> $R/new_$round.err
done
XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_wt --suite > $R/suite.txt 2> $R/suite.err
for s in 31 33 29; do XDG_CACHE_HOME=/tmp/cn timeout 70 ./kgh_wt --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err; done
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
