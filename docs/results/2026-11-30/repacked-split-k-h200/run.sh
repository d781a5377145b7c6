#!/bin/bash
# Repacked split-k: gpu_matmul's split-k tests (repacked runs' bits), then A/B against the last submission on the unaligned mid-size class and controls, then seeds 31 and 33.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_rs gm_rs; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/r1; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_rs split_k > $R/gm_split_k.txt 2>&1; echo "rc $?" >> $R/gm_split_k.txt)
S=4717x5936x161,1264x697x398,824x1166x1279,1368x6451x178,10576x11401x74,4920x698x479,7813x1589x173,3411x2226x157,577x1243x110,1192x231x139,2091x1706x28,313x9268x1685,5000x5000x96
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 140 ./kgh_6432 --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/cn timeout 140 ./kgh_rs --suite given --shapes $S --verbose > $R/new_$round.txt 2> $R/new_$round.err
done
for s in 31 33; do XDG_CACHE_HOME=/tmp/cn timeout 70 ./kgh_rs --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err; done
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
