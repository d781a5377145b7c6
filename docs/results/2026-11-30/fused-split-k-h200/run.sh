#!/bin/bash
# Fused split-k (the tiles' last blocks add the planes, one launch): gpu_matmul's split-k tests, then A/B against the last submission on split-k shapes, then seeds 31, 33 and 29.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_fz gm_fz; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/r2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_fz split_k > $R/gm_split_k.txt 2>&1; echo "rc $?" >> $R/gm_split_k.txt)
S=1192x231x139,577x1243x110,2091x1706x28,1264x697x398,189x326x24,201x716x556,3509x1284x134,3411x2226x157,1368x6451x178,4717x5936x161,824x1166x1279,33x100000x33,127x4096x4096,1000x1000x1000
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 120 ./kgh_6432 --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_fz --suite given --shapes $S --verbose > $R/new_$round.txt 2> $R/new_$round.err
done
for s in 31 33 29; do XDG_CACHE_HOME=/tmp/cn timeout 70 ./kgh_fz --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err; done
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
