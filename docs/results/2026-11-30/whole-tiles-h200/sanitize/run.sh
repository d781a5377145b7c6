#!/bin/bash
# compute-sanitizer memcheck and racecheck on the submitted tree's tiled-run GPU tests (row edge, odd depth, narrow odd output; plain and split-k runs).
cd "$(dirname "$0")"
xz -dkf gm_wt2.xz && chmod +x gm_wt2
R=$OUT/sanitize; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt
cd ..
for tool in memcheck racecheck; do
  timeout 250 compute-sanitizer --tool $tool --error-exitcode 9 .device-run/gm_wt2 tiled_run > $R/$tool.txt 2>&1; echo "rc $?" >> $R/$tool.txt
done
cd $OUT && tar cJf sanitize.tar.xz sanitize && rm -rf sanitize
