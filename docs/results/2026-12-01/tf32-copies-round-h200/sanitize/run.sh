#!/bin/bash
# compute-sanitizer memcheck and racecheck on rung 17's TF32 GPU tests (copies rounding: row-b and packed-b tiles), and ncu kernel times at 4096^3.
cd "$(dirname "$0")"
for f in kgh_tr gm_tr; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/t3; mkdir -p $R
cd ..
for t in "memcheck row-b-ws-256x128" "memcheck tf32-ws-128x256-pair" "racecheck row-b-ws-64x128" "racecheck tf32-ws-128x64-rows" "memcheck tf32_copies_round"; do
  set -- $t
  timeout 110 compute-sanitizer --tool $1 --error-exitcode 9 .device-run/gm_tr $2 > $R/$1-$2.txt 2>&1; echo "rc $?" >> $R/$1-$2.txt
done
cd .device-run
XDG_CACHE_HOME=/tmp/cn timeout 60 ./kgh_tr --suite given --precision tf32 --shapes 4096x4096x4096 > $R/tune.txt 2>&1
XDG_CACHE_HOME=/tmp/cn timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum ./kgh_tr --suite given --precision tf32 --shapes 4096x4096x4096 --iters 3 > $R/ncu.txt 2>&1
cd $OUT && tar cJf t3.tar.xz t3 && rm -rf t3
