#!/bin/bash
# Last k-tile over its depths only, two builds: v1 (the last trip pasted apart) and v2 (every checked trip guarded in runs of 4), against the submitted tree: gpu_matmul of v2, split-k and short-k shapes in two rounds each.
cd "$(dirname "$0")"
for f in kgh_tr kgh_lk kgh_lk2 gm_lk2; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t10; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_lk2 > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=1683x19x3023,2023x185x1271,3000x33x5000,2000x50x2000,10x1223x10202,316x5469x22,1192x231x139,577x1243x110,1264x697x398,3411x2226x157,1368x6451x178,1554x2181x18
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 150 ./kgh_tr --suite given --shapes $S > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/c1 timeout 150 ./kgh_lk --suite given --shapes $S > $R/v1_$round.txt 2> $R/v1_$round.err
  XDG_CACHE_HOME=/tmp/c2 timeout 150 ./kgh_lk2 --suite given --shapes $S > $R/v2_$round.txt 2> $R/v2_$round.err
done
cd $OUT && tar cJf t10.tar.xz t10 && rm -rf t10
