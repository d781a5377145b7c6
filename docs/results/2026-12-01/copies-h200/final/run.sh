#!/bin/bash
# The submitted tree: gpu_matmul whole, memcheck and racecheck on the multistage tests, seeds 31, 33, 50, 52 and the listed suite, the class's shapes once more.
cd "$(dirname "$0")"
for f in kgh gm; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/final; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
for s in 31 33 50 52; do
  XDG_CACHE_HOME=/tmp/cf timeout 80 ./kgh --suite random --seed $s > $R/seed$s.txt 2> $R/seed$s.err
done
XDG_CACHE_HOME=/tmp/cf timeout 100 ./kgh --suite > $R/suite.txt 2> $R/suite.err
S=1264x697x398,3411x2226x157,1368x6451x178,577x1243x110,1192x231x139,4096x4096x4096
XDG_CACHE_HOME=/tmp/cf timeout 60 ./kgh --suite given --shapes $S > $R/given.txt 2> $R/given.err
(cd .. && timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .device-run/gm multistage > $R/memcheck.txt 2>&1; echo "rc $?" >> $R/memcheck.txt)
(cd .. && timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 .device-run/gm multistage-64x > $R/racecheck.txt 2>&1; echo "rc $?" >> $R/racecheck.txt)
cd $OUT && tar cJf final.tar.xz final && rm -rf final
