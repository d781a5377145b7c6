#!/bin/bash
# The FP32 shapes left at or under 0.8x on the submitted tree: every candidate's time, two rounds (the second from the first's tuning cache).
cd "$(dirname "$0")"
for f in kgh_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t6; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
S=1683x19x3023,2023x185x1271,1264x697x398,1368x6451x178,3411x2226x157
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cn timeout 200 ./kgh_tr --suite given --shapes $S --verbose > $R/left_$round.txt 2> $R/left_$round.err
done
cd $OUT && tar cJf t6.tar.xz t6 && rm -rf t6
