#!/usr/bin/env bash
# Times our sliding-average scan kernel against the same sliding average through CUB's
# one-pass scan (cub_sliding.cu, built here with nvcc) on this machine's GPU, in interleaved
# rounds, and prints a table: per window, each side's milliseconds and % of its own device
# copy (medians over rounds of each round's median of 20 launches), and how many times
# faster ours is (CUB's f64 ms / ours). A measurement, not a test: it exits 0 when it ran,
# whatever the figures.
#
# Usage, from the repository root on a GPU machine with the CUDA toolkit and python3:
#   scripts/cub-sliding/compare.sh RUST_BINARY [ROUNDS]
# RUST_BINARY: our host binary (target/release/kernels-gpu-host, built elsewhere and copied over).
# ROUNDS: how many times to run both binaries, alternating, ours first (default 2).
#
# Environment (all optional):
#   WINDOWS="W ..."    the windows (default: 2 16 64 1024 4097 100000 135169)
#   LEN=N              values in the input (default 268435456, both binaries' default)
#   COMPARE_OUT=FILE   also write the table to FILE
#   NVCC=PATH          the compiler (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   NVCC_ARCH=sm_XX    the target (default sm_90: H100 and H200)
set -euo pipefail

die() { echo "compare.sh: $*" >&2; exit 1; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 RUST_BINARY [ROUNDS]"
rust_bin=$1
rounds=${2:-2}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
[[ -f $rust_bin && -x $rust_bin ]] || die "RUST_BINARY '$rust_bin' is not an executable file"

len=${LEN:-268435456}
[[ $len =~ ^[1-9][0-9]*$ ]] || die "LEN must be a positive integer, not '$len'"
read -r -a windows <<<"${WINDOWS:-2 16 64 1024 4097 100000 135169}"
[[ ${#windows[@]} -gt 0 ]] || die "WINDOWS is empty"
for w in "${windows[@]}"; do
  [[ $w =~ ^[1-9][0-9]*$ ]] || die "each window must be a positive integer, not '$w'"
  ((w <= len)) || die "window $w is longer than LEN = $len"
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nvcc.sh
source "$here/../nvcc.sh"
nvcc_build "$here/cub_sliding.cu" cub_sliding -std=c++17

# Runs one binary; keeps the lines that start with '{' (the JSON rows), tagged with the side
# and the round, and stops on a failure (a GPU error on either side ends the comparison).
run() {
  local side=$1 round=$2 out=$work/run.out err=$work/run.err
  shift 2
  if ! "$@" >"$out" 2>"$err"; then
    tail -n 5 "$err" >&2
    die "$side failed in round $round: $*"
  fi
  grep '^{' "$out" | sed "s/^/$side $round /" >>"$work/rows" || true
  cat "$err" >>"$work/stderr"
}

# A quick run of both on a few values, which stops the script early if either cannot use a
# GPU (ours would fall back to its CPU simulator, whose rows carry no time).
"$work/cub_sliding" 1000 2 >/dev/null 2>"$work/preflight.err" || {
  cat "$work/preflight.err" >&2
  die "cub_sliding failed on 1,000 values (output above)"
}
"$rust_bin" --op sliding --len 1000 --window 2 --check none --json >"$work/preflight.out" \
  2>"$work/preflight.err" || {
  tail -n 5 "$work/preflight.err" >&2
  die "$rust_bin failed on 1,000 values (output above)"
}
grep -q '"kernel":"sliding-scan".*"ms_median":[0-9]' "$work/preflight.out" ||
  die "$rust_bin timed nothing on 1,000 values: no usable GPU (its simulator ran instead?)"

: >"$work/rows"
for ((round = 1; round <= rounds; round++)); do
  echo "compare.sh: round $round/$rounds" >&2
  for w in "${windows[@]}"; do
    run ours "$round" "$rust_bin" --op sliding --len "$len" --window "$w" --check none --json
  done
  run cub "$round" "$work/cub_sliding" "$len" "${windows[@]}"
done
device=$(grep -m1 -o '^cub_sliding: [^,]*' "$work/stderr" | sed 's/^cub_sliding: //' || true)

python3 - "$work/rows" "$rounds" "$len" "$device" "$nvcc_version" "$arch" "${COMPARE_OUT:-}" \
  "${windows[@]}" <<'PY'
import json
import statistics
import sys

rows_path, rounds, n, device, nvcc_version, arch, out_path = sys.argv[1:8]
windows = [int(w) for w in sys.argv[8:]]
rounds, n = int(rounds), int(n)

# (side, kernel, window) -> [(ms, pct_of_copy)], one per round.
got = {}
for line in open(rows_path):
    side, rnd, text = line.split(" ", 2)
    row = json.loads(text)
    if side == "ours" and row.get("kernel") != "sliding-scan":
        continue  # the lecture's sliding kernels, which the CLI also runs up to window 1,024
    if row.get("n") != n or row.get("ms_median") is None:
        print(f"compare.sh: warning: {side} round {rnd}: left out (not timed on {n} values): "
              f"{text.strip()[:160]}", file=sys.stderr)
        continue
    key = (side, row["kernel"], row.get("window"))
    got.setdefault(key, []).append((float(row["ms_median"]), float(row["pct_of_copy"])))


def med(key, i):
    values = [v[i] for v in got.get(key, [])]
    return statistics.median(values) if values else None


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def pct(p):
    return fmt(p and 100 * p, ".1f")


plain = med(("cub", "cub-inclusive-sum-f32", None), 0)
plain_pct = med(("cub", "cub-inclusive-sum-f32", None), 1)
lines = [
    f"Sliding average, ours vs CUB's scan, {n} values on {device or '?'}",
    f"nvcc {nvcc_version} -O3 -arch={arch}; {rounds} interleaved round(s), each the median of "
    "20 launches; ms and % of copy: medians over rounds, each side against its own device copy",
    f"CUB's plain f32 inclusive sum of the same input (a copy's traffic): {fmt(plain, '.3f')} ms, "
    f"{pct(plain_pct)}% of copy",
    "",
    f"{'window':>8} {'ours ms':>9} {'ours %':>7} {'CUB f64 ms':>11} {'CUB f64 %':>10} "
    f"{'CUB f32 ms':>11} {'CUB f32 %':>10} {'f64/ours':>9}",
]
for w in windows:
    ours = med(("ours", "sliding-scan", w), 0)
    ours_pct = med(("ours", "sliding-scan", w), 1)
    c64 = med(("cub", "cub-sliding-f64", w), 0)
    c64_pct = med(("cub", "cub-sliding-f64", w), 1)
    c32 = med(("cub", "cub-sliding-f32", w), 0)
    c32_pct = med(("cub", "cub-sliding-f32", w), 1)
    speedup = c64 / ours if ours and c64 else None
    lines.append(f"{w:>8} {fmt(ours, '.3f'):>9} {pct(ours_pct):>7} {fmt(c64, '.3f'):>11} "
                 f"{pct(c64_pct):>10} {fmt(c32, '.3f'):>11} {pct(c32_pct):>10} "
                 f"{fmt(speedup, '.2f'):>9}")
text = "\n".join(lines)
print(text)
if out_path:
    with open(out_path, "w") as f:
        f.write(text + "\n")
PY
