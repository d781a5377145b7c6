#!/bin/bash
# E1: copied `a` two tiles ahead (three a stages) on the small tiles, and a 128x64x8 w64x32 tile copying both operands: A/B against 30d91d0 on the unaligned split-k class, then seeds and the listed suite on the new build.
cd "$(dirname "$0")"
for f in kgh_base kgh_e1; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/e1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
S=1264x697x398,3411x2226x157,1368x6451x178,4717x5936x161,824x1166x1279,3411x2226x160,1683x19x3023,2023x185x1271,10576x11401x74,1192x231x139,577x1243x110,13750x215x70,1000x1000x1000,4096x4096x4096
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 120 ./kgh_base --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/c1 timeout 120 ./kgh_e1 --suite given --shapes $S --verbose > $R/e1_$round.txt 2> $R/e1_$round.err
done
for s in 31 33; do
  XDG_CACHE_HOME=/tmp/c1 timeout 80 ./kgh_e1 --suite random --seed $s > $R/e1_seed$s.txt 2> $R/e1_seed$s.err
done
XDG_CACHE_HOME=/tmp/c1 timeout 100 ./kgh_e1 --suite > $R/e1_suite.txt 2> $R/e1_suite.err
cd $OUT && tar cJf e1.tar.xz e1 && rm -rf e1
