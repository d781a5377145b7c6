#!/bin/bash
# v3: the plain entries' checked loop with its last trip apart (only the depths inside k), split-k and other entries as before: gpu_matmul, A/B against the submitted tree, seeds 31, 50, 52.
cd "$(dirname "$0")"
for f in kgh_tr kgh_lk3 gm_lk3; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t11; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_lk3 > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=1683x19x3023,2023x185x1271,3000x33x5000,2000x50x2000,10x1223x10202,316x5469x22,1192x231x139,577x1243x110,1264x697x398,3411x2226x157,1368x6451x178,1554x2181x18,4096x4096x4096
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 150 ./kgh_tr --suite given --shapes $S > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/c3 timeout 150 ./kgh_lk3 --suite given --shapes $S > $R/v3_$round.txt 2> $R/v3_$round.err
done
for s in 31 50 52; do
  XDG_CACHE_HOME=/tmp/c3 timeout 80 ./kgh_lk3 --suite random --seed $s > $R/v3_seed$s.txt 2> $R/v3_seed$s.err
done
XDG_CACHE_HOME=/tmp/c3 timeout 100 ./kgh_lk3 --suite > $R/v3_suite.txt 2> $R/v3_suite.err
cd $OUT && tar cJf t11.tar.xz t11 && rm -rf t11
