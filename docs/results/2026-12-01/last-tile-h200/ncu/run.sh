#!/bin/bash
# ncu sections of ours and cuBLAS's kernels on three FP32 shapes at or under 0.8x (tuned first, from the cache).
cd "$(dirname "$0")"
for f in kgh_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t7; mkdir -p $R
for S in 1683x19x3023 2023x185x1271 3411x2226x157; do
  XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_tr --suite given --shapes $S --verbose > $R/tune-$S.txt 2>&1
  XDG_CACHE_HOME=/tmp/cn timeout 150 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy --section InstructionStats --section MemoryWorkloadAnalysis -c 8 ./kgh_tr --suite given --shapes $S --iters 1 --warmup 0 > $R/ncu-$S.txt 2>&1
done
cd $OUT && tar cJf t7.tar.xz t7 && rm -rf t7
