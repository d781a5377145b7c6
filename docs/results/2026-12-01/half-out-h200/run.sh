#!/bin/bash
# 16-bit outputs: gpu_matmul's outputs_in_16_bits and the half:: tests of the final tree; memcheck on the new test.
cd "$(dirname "$0")"
for f in gm_16; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t12; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
cd ..
timeout 200 .device-run/gm_16 half:: > $R/gm_half.txt 2>&1; echo "rc $?" >> $R/gm_half.txt
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 .device-run/gm_16 outputs_in_16_bits > $R/memcheck.txt 2>&1; echo "rc $?" >> $R/memcheck.txt
cd $OUT && tar cJf t12.tar.xz t12 && rm -rf t12
