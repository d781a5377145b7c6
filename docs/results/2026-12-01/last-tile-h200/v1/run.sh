#!/bin/bash
# Rung 10's last k-tile multiplied only over its depths inside k (runs of 4): gpu_matmul, A/B against the submitted tree on short and odd depths, seeds 50 and 52.
cd "$(dirname "$0")"
for f in kgh_tr kgh_lk gm_lk; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t8; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_lk > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=1683x19x3023,2023x185x1271,4000x17x4000,3000x33x5000,2000x50x2000,1500x21x6000,8192x20x8192,1264x697x398,3411x2226x157,4096x4096x4096
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 150 ./kgh_tr --suite given --shapes $S --verbose > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/cn timeout 150 ./kgh_lk --suite given --shapes $S --verbose > $R/new_$round.txt 2> $R/new_$round.err
done
for s in 50 52; do
  XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_lk --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err
done
cd $OUT && tar cJf t8.tar.xz t8 && rm -rf t8
