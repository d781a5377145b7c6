#!/bin/bash
# SASS of four rung-10 entries (ptxas 13.0 here, sm_90), and ncu of the 128x64x8 w64x32 tile against cuBLAS on an output of 264 tiles with unaligned rows and with aligned ones.
cd "$(dirname "$0")"
for f in kgh_e1; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/p1; mkdir -p $R
for c in sass/*.cubin; do cuobjdump -sass $c > $R/$(basename $c .cubin).sass 2>&1; done
for S in "4224 2225 509" "4224 2224 512"; do
  set -- $S
  timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section InstructionStats --section SchedulerStats --section LaunchStats --section Occupancy --section SourceCounters -k regex:'sgemm|sm80|sm90|gemm' -c 4 ./kgh_e1 --kernel sgemm-multistage-128x64x8-w64x32 --m $1 --k $2 --n $3 --iters 1 --warmup 0 > $R/ncu-$1x$2x$3.txt 2>&1
done
timeout 60 ./kgh_e1 --kernel sgemm-multistage-128x64x8-w64x32 --m 4224 --k 2225 --n 509 > $R/run-odd.txt 2>&1
timeout 60 ./kgh_e1 --kernel sgemm-multistage-128x64x8-w64x32 --m 4224 --k 2224 --n 512 > $R/run-even.txt 2>&1
timeout 60 ./kgh_e1 --kernel sgemm-multistage-128x64x16-w64x32 --m 4224 --k 2225 --n 509 > $R/run-odd16.txt 2>&1
timeout 60 ./kgh_e1 --kernel sgemm-multistage-64x64x16-w32x32 --m 4224 --k 2225 --n 509 > $R/run-odd64.txt 2>&1
cd $OUT && tar cJf p1.tar.xz p1 && rm -rf p1
