#!/bin/bash
# Fresh host: the submitted tree's gpu_matmul whole, then TF32 and BF16 at 4096^3 and 8192^3 once.
cd "$(dirname "$0")"
for f in kgh gm; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/final; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
(cd .. && timeout 100 .device-run/gm > $R/gpu_matmul.txt 2>&1; echo "rc $?" >> $R/gpu_matmul.txt)
S=4096x4096x4096,8192x8192x8192
for p in tf32 bf16; do
  XDG_CACHE_HOME=/tmp/cn timeout 45 ./kgh --suite given --precision $p --shapes $S > $R/sq_$p.txt 2>&1; echo "rc $?" >> $R/sq_$p.txt
done
cd $OUT && tar cJf final.tar.xz final && rm -rf final
