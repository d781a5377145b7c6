#!/bin/bash
# Last k-tile over its depths only: A/B against the submitted tree on the listed suite and seeds 14, 31, 33.
cd "$(dirname "$0")"
for f in kgh_tr kgh_lk; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t9; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_lk --suite > $R/new_suite.txt 2> $R/new_suite.err
XDG_CACHE_HOME=/tmp/cb timeout 120 ./kgh_tr --suite > $R/base_suite.txt 2> $R/base_suite.err
for s in 14 31 33; do
  XDG_CACHE_HOME=/tmp/cn timeout 80 ./kgh_lk --suite random --seed $s > $R/new_seed$s.txt 2> $R/new_seed$s.err
  XDG_CACHE_HOME=/tmp/cb timeout 80 ./kgh_tr --suite random --seed $s > $R/base_seed$s.txt 2> $R/base_seed$s.err
done
cd $OUT && tar cJf t9.tar.xz t9 && rm -rf t9
