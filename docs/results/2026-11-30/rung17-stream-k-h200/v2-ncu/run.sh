#!/bin/bash
# ncu: rung 17's plain 128 x 256 TF32 tile against its stream-k twin at 4096^3 (time, DRAM bytes, L2 hit rate).
cd "$(dirname "$0")"
for f in kgh_sk; do xz -dkf $f.xz && chmod +x $f; done
R=$OUT/s3; mkdir -p $R
S=4096x4096x4096
XDG_CACHE_HOME=/tmp/cp timeout 100 ./kgh_sk --suite given --precision tf32 --shapes $S --verbose > $R/tune.txt 2>&1
cp -r /tmp/cp /tmp/cs
python3 - <<'PY' > $R/forced.txt
import json, glob
p = glob.glob('/tmp/cs/**/autotune.json', recursive=True)[0]
d = json.load(open(p))
def walk(x):
    if isinstance(x, dict):
        if 'kernel' in x and 'candidates_ms' in x and 'gemm-tf32-ws-128x256-stream' in x['candidates_ms']:
            x['kernel'] = 'gemm-tf32-ws-128x256-stream'; print('forced', p)
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(d); json.dump(d, open(p, 'w'))
PY
for c in cp cs; do
  XDG_CACHE_HOME=/tmp/$c timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct -k regex:gemm_tf32 ./kgh_sk --suite given --precision tf32 --shapes $S --iters 5 --warmup 1 > $R/ncu-$c.txt 2>&1
done
cd $OUT && tar cJf s3.tar.xz s3 && rm -rf s3
