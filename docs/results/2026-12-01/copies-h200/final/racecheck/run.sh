#!/bin/bash
# racecheck on single gpu_matmul tests of the submitted tree (the whole `multistage-64x` filter did not finish in 150 s: final/racecheck.txt), then on every multistage configuration's deep checked shape and the split-k twins (the latter did not finish in 240 s).
cd .device-run && xz -dkf gm.xz && chmod +x gm && cd ..
for t in "multistage-64x32x16-w32x32::tw16::70x301x66" "multistage-64x128x8-w32x64::tw16::70x301x66" "multistage-64x64x16-w32x32::tw16::384x80x384"; do
  n=$(echo $t | tr ':' '_'); timeout 170 compute-sanitizer --tool racecheck --error-exitcode 9 .device-run/gm "$t" > $OUT/rc/$n.txt 2>&1; echo "rc $?" >> $OUT/rc/$n.txt
done
for t in "::tw16::70x301x66" "split_k_and_serial_split_k_are_their_cpu_twin"; do
  n=$(echo $t | tr ':' '_'); timeout 240 compute-sanitizer --tool racecheck --error-exitcode 9 .device-run/gm "$t" > $OUT/rc2/$n.txt 2>&1; echo "rc $?" >> $OUT/rc2/$n.txt
done
