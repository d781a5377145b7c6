#!/bin/bash
# Fresh host: the submitted tree's gpu_matmul, compute-sanitizer's four tools on rung 17's TF32 tests, TF32 and BF16 squares twice, the TF32 and BF16 suites.
cd "$(dirname "$0")"
for f in kgh_tr gm_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t4; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 150 .device-run/gm_tr > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
cd ..
for t in "synccheck row-b-ws-256x128" "initcheck row-b-ws-256x128" "synccheck tf32-ws-128x256-pair" "initcheck tf32-ws-128x192-rows" "memcheck tf32-ws-128x192-rows" "racecheck row-b-ws-32x64"; do
  set -- $t
  timeout 90 compute-sanitizer --tool $1 --error-exitcode 9 .device-run/gm_tr $2 > $R/$1-$2.txt 2>&1; echo "rc $?" >> $R/$1-$2.txt
done
cd .device-run
S=4096x4096x4096,8192x8192x8192
for round in 1 2; do
  for p in tf32 bf16; do
    XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_tr --suite given --precision $p --shapes $S > $R/sq_${p}_$round.txt 2>&1
  done
done
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_tr --suite --precision tf32 > $R/suite_tf32.txt 2>&1
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_tr --suite --precision bf16 > $R/suite_bf16.txt 2>&1
cd $OUT && tar cJf t4.tar.xz t4 && rm -rf t4
