#!/usr/bin/env bash
# The multi-GPU bars on one host: the GPU tests of the multi-GPU handle, then each bar's
# problem on 1 GPU and on N, with a table of times, ratios and whether the bits match.
#
#   scripts/multi-gpu/run.sh BINARY [GPU_MULTI_TEST_BINARY] [N[,N...]]
#
# BINARY is a release build of kernels-gpu-host (`cargo build --release -p kernels-gpu-host`);
# GPU_MULTI_TEST_BINARY the multi-GPU tests (`cargo test --release -p kernels-gpu-host --test
# gpu_multi --no-run` prints its path), "" to skip them; N the GPUs to spread over, or a
# comma-separated list of counts, each compared with one GPU (default: every GPU nvidia-smi
# lists). NCCL is found at run time (docs/multi-gpu.md); set
# KERNELS_GPU_NCCL=/path/to/libnccl.so.2 where the search does not find it.
#
# The bars (docs/multi-gpu.md): FP32 GEMM 16384³ at least 1.9× one GPU's throughput on 2 GPUs
# (3.6× on 4) with the same bits; the sum of 2³² floats at least 1.9× (3.7×) with the same
# bits; the sliding average of 2³² values at windows 2 and 100,000 with the same bits. About
# five minutes on a 2-GPU H100 host; it needs 64 GiB of host memory.
set -uo pipefail
bin=${1:?usage: run.sh BINARY [GPU_MULTI_TEST_BINARY] [N[,N...]]}
tests=${2:-}
counts=${3:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
counts=${counts//,/ }
for n in $counts; do
  [ "${n:-0}" -ge 2 ] || { echo "error: $n GPU(s): the bars need 2 or more" >&2; exit 1; }
done
# NVLink SHARP (multicast) stays off on shared hosts; the library sets it too.
export NCCL_NVLS_ENABLE=0
work=$(mktemp -d)
# MULTI_GPU_OPS="gemm sum sliding" (the default) picks the problems to run.
ops=" ${MULTI_GPU_OPS:-gemm sum sliding} "
# MULTI_GPU_LOGS=DIR keeps every run's JSON lines and stderr there.
trap '[ -n "${MULTI_GPU_LOGS:-}" ] && cp "$work"/* "$MULTI_GPU_LOGS"/; rm -rf "$work"' EXIT
len=$((1 << 32))
failed=0

if [ -n "$tests" ]; then
  echo "== GPU tests ($tests)"
  "$tests" 2>&1 | tee "$work/tests.log" | grep -E '^(test |test result|[0-9]+ GPUs|multi-GPU)'
  [ "${PIPESTATUS[0]}" = 0 ] || failed=1
fi

# run LABEL FLAGS...: one JSON line per row into $work/LABEL.jsonl; stderr kept for failures.
run() {
  local label=$1
  shift
  echo "== $label: $bin $*" >&2
  local t0=$SECONDS
  "$bin" --json "$@" >"$work/$label.jsonl" 2>"$work/$label.err"
  local rc=$?
  echo "   exit $rc after $((SECONDS - t0)) s" >&2
  if [ "$rc" != 0 ]; then
    failed=1
    sed 's/^/   | /' "$work/$label.err" | tail -15 >&2
  fi
}

[[ $ops == *" gemm "* ]] && for g in 1 $counts; do
  run "gemm-$g" --gpus "$g" --op matmul --m 16384 --k 16384 --n 16384 --kernel sgemm-autotuned \
    --check sample --warmup 2 --iters 5 --time-budget inf
done
[[ $ops == *" sum "* ]] && for g in 1 $counts; do
  run "sum-$g" --gpus "$g" --op sum --len "$len" --warmup 2 --iters 10 --time-budget inf
done
[[ $ops == *" sliding "* ]] && for w in 2 100000; do
  for g in 1 $counts; do
    run "sliding-w$w-$g" --gpus "$g" --op sliding --len "$len" --window "$w" --check none \
      --warmup 1 --iters 5 --time-budget inf
  done
done

echo
python3 - "$work" $counts <<'EOF' || failed=1
import json, pathlib, sys

work, counts = pathlib.Path(sys.argv[1]), [int(c) for c in sys.argv[2:]]
bars = {"matmul": {2: 1.9, 4: 3.6}, "sum": {2: 1.9, 4: 3.7}}


def totals(name):
    path = work / f"{name}.jsonl"
    if not path.exists():
        return {}
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    return {(r["op"], r["kernel"], r["size"]): r for r in rows if r["device"] is None}


def parts(name):
    path = work / f"{name}.jsonl"
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()] if path.exists() else []
    return [r for r in rows if r["device"] is not None]


bad = False
for n in counts:
    print(f"| problem | kernel | 1 GPU ms | {n} GPUs ms | ratio | bar | same bits | stable | checked |")
    print("|---|---|---:|---:|---:|---:|---|---|---|")
    for name in ["gemm", "sum", "sliding-w2", "sliding-w100000"]:
        one, many = totals(f"{name}-1"), totals(f"{name}-{n}")
        if not (work / f"{name}-1.err").exists():
            continue
        if not one or not many:
            print(f"| {name} | (a run failed: see above) | | | | | | | |")
            bad = True
            continue
        for key, r1 in one.items():
            rn = many.get(key)
            if rn is None:
                print(f"| {name} | {key[1]}: no {n}-GPU row | | | | | | | |")
                bad = True
                continue
            ratio = r1["ms"] / rn["ms"] if r1["ms"] and rn["ms"] else None
            bar = bars.get(r1["op"], {}).get(n)
            same = r1["bits"] == rn["bits"]
            stable = r1["stable"] is not False and rn["stable"] is not False
            ok = [r["ok"] for r in (r1, rn)]
            checked = "unchecked" if ok == [None, None] else ("yes" if all(o is not False for o in ok) else "NO")
            meets = "" if bar is None else ("yes" if ratio and ratio >= bar else "NO")
            bad |= (not same) or (not stable) or checked == "NO" or meets == "NO"
            fmt = lambda v: "-" if v is None else f"{v:.3f}"
            print(
                f"| {r1['size']} {r1['op']} | {r1['kernel']} | {fmt(r1['ms'])} | {fmt(rn['ms'])} "
                f"| {fmt(ratio)} | {'' if bar is None else f'≥ {bar} {meets}'} "
                f"| {'yes' if same else 'NO'} | {'yes' if stable else 'NO'} | {checked} |"
            )

    print()
    print(f"Per GPU of the {n}-GPU product (last timed run): rows, kernel, ms waiting / computing / gathering")
    for r in parts(f"gemm-{n}"):
        print(
            f"  GPU {r['device']}: {r['part']} {r['kernel']}: wait {r['wait_ms']:.2f} ms, "
            f"compute {r['ms']:.2f} ms ({r['rate']:.0f} GFLOP/s), gather {r['gather_ms']:.2f} ms"
        )
    print()
sys.exit(1 if bad else 0)
EOF
exit "$failed"
