#!/bin/bash
# TF32 rounded by the copies: gpu_matmul, TF32 suites (listed, given squares twice, random seeds) beside the last submission, BF16 suite, sanitizers on TF32 rung-17 tests.
cd "$(dirname "$0")"
for f in kgh_6432 kgh_tr gm_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 200 .device-run/gm_tr > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=4096x4096x4096,8192x8192x8192
for round in 1 2; do
  XDG_CACHE_HOME=/tmp/cb timeout 100 ./kgh_6432 --suite given --precision tf32 --shapes $S --verbose > $R/base_sq_$round.txt 2>&1
  XDG_CACHE_HOME=/tmp/cn timeout 100 ./kgh_tr --suite given --precision tf32 --shapes $S --verbose > $R/new_sq_$round.txt 2>&1
done
XDG_CACHE_HOME=/tmp/cn timeout 150 ./kgh_tr --suite --precision tf32 --verbose > $R/suite_tf32.txt 2>&1
XDG_CACHE_HOME=/tmp/cb timeout 150 ./kgh_6432 --suite --precision tf32 > $R/base_suite_tf32.txt 2>&1
for s in 1 2; do XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_tr --suite random --precision tf32 --seed $s > $R/tf32_seed$s.txt 2>&1; done
XDG_CACHE_HOME=/tmp/cn timeout 120 ./kgh_tr --suite --precision bf16 > $R/suite_bf16.txt 2>&1
cd $OUT && tar cJf t2.tar.xz t2 && rm -rf t2
