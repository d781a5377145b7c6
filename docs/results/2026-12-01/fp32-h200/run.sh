#!/bin/bash
# The submitted tree's FP32 path (unchanged kernels): the listed suite and three random seeds not run before.
cd "$(dirname "$0")"
for f in kgh_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
XDG_CACHE_HOME=/tmp/cn timeout 150 ./kgh_tr --suite > $R/suite.txt 2> $R/suite.err
for s in 50 51 52; do XDG_CACHE_HOME=/tmp/cn timeout 110 ./kgh_tr --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err; done
cd $OUT && tar cJf t5.tar.xz t5 && rm -rf t5
