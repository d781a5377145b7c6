#!/bin/bash
# The submitted tree (runs on whole tiles; stream-k's padded path shares their copies): gpu_matmul whole, the listed suite, seeds 14, 15, 16, 30, 32.
cd "$(dirname "$0")"
for f in kgh_wt2 gm_wt2; do xz -dkf $f.xz && chmod +x $f; done
export XDG_CACHE_HOME=/tmp/cache
R=$OUT/final; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 200 .device-run/gm_wt2 > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
timeout 90 ./kgh_wt2 --suite > $R/suite.txt 2> $R/suite.err
for s in 14 15 16 30 32; do timeout 60 ./kgh_wt2 --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err; done
cd $OUT && tar cJf final.tar.xz final && rm -rf final
