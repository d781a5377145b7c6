#!/bin/bash
# ncu per-instruction stall samples: rung 17's plain 128 x 256 TF32 tile against its stream-k twin (v4) at 4096^3.
cd "$(dirname "$0")"
xz -dkf kgh_sk3.xz && chmod +x kgh_sk3
R=$OUT/s8; mkdir -p $R
S=4096x4096x4096
XDG_CACHE_HOME=/tmp/cp timeout 100 ./kgh_sk3 --suite given --precision tf32 --shapes $S > $R/tune.txt 2>&1
mkdir -p /tmp/cs /tmp/cq; cp -r /tmp/cp/. /tmp/cs/; cp -r /tmp/cp/. /tmp/cq/
force() {
python3 - "$1" "$2" <<'PY'
import json, glob, sys
p = glob.glob(sys.argv[1] + '/**/autotune.json', recursive=True)[0]
d = json.load(open(p))
def walk(x):
    if isinstance(x, dict):
        if 'kernel' in x and 'candidates_ms' in x and sys.argv[2] in x['candidates_ms']:
            x['kernel'] = sys.argv[2]; print('forced', sys.argv[2], p)
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(d); json.dump(d, open(p, 'w'))
PY
}
force /tmp/cs gemm-tf32-ws-128x256-stream > $R/forced.txt
force /tmp/cq gemm-tf32-ws-128x256 >> $R/forced.txt
for c in cq cs; do
  XDG_CACHE_HOME=/tmp/$c timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats --launch-skip 2 --launch-count 1 -k regex:gemm_tf32 -o /tmp/$c ./kgh_sk3 --suite given --precision tf32 --shapes $S --iters 3 --warmup 1 > $R/ncu-$c-run.txt 2>&1
  ncu --import /tmp/$c.ncu-rep --page source --csv --print-source sass > $R/src-$c.csv 2> $R/src-$c.err
  ncu --import /tmp/$c.ncu-rep --page details > $R/details-$c.txt 2>&1
done
cd $OUT && tar cJf s8.tar.xz s8 && rm -rf s8
