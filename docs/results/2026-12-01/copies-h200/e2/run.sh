#!/bin/bash
# E2: rung 10's copies from hoisted origins with predicate zero fill, `a` copied two tiles ahead, a 128x64x8 w64x32 tile: gpu_matmul whole, memcheck on the multistage tests, A/B against 30d91d0, seeds and the listed suite.
cd "$(dirname "$0")"
for f in kgh_base kgh_e2 gm_e2; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/e2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_e2 > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=1264x697x398,3411x2226x157,1368x6451x178,4717x5936x161,824x1166x1279,3411x2226x160,1683x19x3023,2023x185x1271,10576x11401x74,1192x231x139,577x1243x110,13750x215x70,1000x1000x1000,4096x4096x4096
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 100 ./kgh_base --suite given --shapes $S > $R/base_$round.txt 2> $R/base_$round.err
  XDG_CACHE_HOME=/tmp/c2 timeout 100 ./kgh_e2 --suite given --shapes $S --verbose > $R/e2_$round.txt 2> $R/e2_$round.err
done
for s in 31 33 50; do
  XDG_CACHE_HOME=/tmp/c2 timeout 80 ./kgh_e2 --suite random --seed $s > $R/e2_seed$s.txt 2> $R/e2_seed$s.err
done
XDG_CACHE_HOME=/tmp/c2 timeout 100 ./kgh_e2 --suite > $R/e2_suite.txt 2> $R/e2_suite.err
(cd .. && timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 .device-run/gm_e2 multistage > $R/memcheck.txt 2>&1; echo "rc $?" >> $R/memcheck.txt)
cd $OUT && tar cJf e2.tar.xz e2 && rm -rf e2
