#!/usr/bin/env bash
# Times our Rust kernels against the lecture's own CUDA C (lecture5.cu, built here with nvcc)
# on this machine's GPU, in interleaved rounds, and prints a table: per kernel and tile
# width, the Rust and nvcc milliseconds (median over rounds of each round's median) and
# their ratio Rust/nvcc (below 1: Rust faster). A measurement, not a test: it exits 0 when
# it ran, whatever the ratios.
#
# Usage, from the repository root on a GPU machine with the CUDA toolkit and python3:
#   scripts/nvcc-lecture/compare.sh RUST_BINARY [ROUNDS]
# RUST_BINARY: our host binary (target/release/kernels-gpu-host, built elsewhere and copied over).
# ROUNDS: how many times to run both binaries, alternating, Rust first (default 3).
#
# Environment (all optional):
#   COMPARE_OUT=FILE   also write the table to FILE
#   COMPARE_RAW=FILE   also write every JSON row read, with "side" and "round" added
#   NVCC=PATH          the compiler (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   NVCC_ARCH=sm_XX    the target (default sm_90: H100 and H200)
#   ITERS, WARMUP      timed and untimed launches per kernel (default 30 and 5)
#   M, K, N           the shape, all three or none (default: both binaries' 5120 256 5120)
set -euo pipefail

die() { echo "compare.sh: $*" >&2; exit 1; }
warn() { echo "compare.sh: warning: $*" >&2; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 RUST_BINARY [ROUNDS]"
rust_bin=$1
rounds=${2:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
[[ -f $rust_bin && -x $rust_bin ]] || die "RUST_BINARY '$rust_bin' is not an executable file"
case $rust_bin in /*) ;; *) rust_bin=$PWD/$rust_bin ;; esac

iters=${ITERS:-30}
warmup=${WARMUP:-5}
[[ $iters =~ ^[1-9][0-9]*$ ]] || die "ITERS must be a positive integer, not '$iters'"
[[ $warmup =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer, not '$warmup'"

# The shape: both binaries default to the lecture's 5120×256×5120. Only when M, K and N are
# set is it passed on (a Rust binary that finds no GPU falls back to its CPU simulator,
# which at the full shape would run for hours; at its own default it stops at once and
# the shape check below says what happened).
rust_shape=()
if [[ -n ${M:-}${K:-}${N:-} ]]; then
  for v in "${M:-}" "${K:-}" "${N:-}"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || die "set all of M, K, N to positive integers, or none"
  done
  shape=("$M" "$K" "$N")
  rust_shape=(--m "$M" --k "$K" --n "$N")
else
  shape=(5120 256 5120)
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../nvcc.sh
source "$here/../nvcc.sh"
nvcc_build "$here/lecture5.cu" lecture5

# A quick check on a shape that is a multiple of no tile width (padding on every edge): it
# also fails early, before any long run, if there is no usable GPU.
if ! "$work/lecture5" 333 40 177 3 1 >"$work/preflight.out" 2>"$work/preflight.err"; then
  cat "$work/preflight.err" >&2
  die "lecture5 failed its check at 333x40x177 (output above)"
fi
device=$(grep -m1 '^device: ' "$work/preflight.err" | sed -e 's/^device: //' -e 's/: [0-9]*x.*$//' || true)

# Runs one side of one round; keeps the lines that start with '{' (the JSON rows).
run_side() {
  local side=$1 round=$2 rc=0
  shift 2
  echo "compare.sh: round $round/$rounds: $side" >&2
  "$@" >"$work/$side.$round.out" 2>"$work/$side.$round.err" || rc=$?
  grep '^{' "$work/$side.$round.out" >"$work/$side.$round.jsonl" || true
  if [[ $rc -ne 0 ]]; then
    warn "$side exited with status $rc in round $round; the end of its stderr:"
    tail -n 5 "$work/$side.$round.err" >&2
  fi
  if [[ ! -s $work/$side.$round.jsonl ]]; then
    warn "$side printed no JSON rows in round $round"
  fi
}

for ((round = 1; round <= rounds; round++)); do
  run_side rust "$round" "$rust_bin" --json --kernel lecture --iters "$iters" --warmup "$warmup" ${rust_shape[@]+"${rust_shape[@]}"}
  run_side nvcc "$round" "$work/lecture5" "${shape[@]}" "$iters" "$warmup"
done

python3 - "$work" "$rounds" "${shape[@]}" "$iters" "$warmup" "$device" "$nvcc_version" "$arch" \
  "${COMPARE_OUT:-}" "${COMPARE_RAW:-}" <<'PY'
import json
import math
import statistics
import sys

(work, rounds, m, k, n, iters, warmup, device, nvcc_version, arch, out_path,
 raw_path) = sys.argv[1:]
rounds = int(rounds)
shape = (int(m), int(k), int(n))
# The lecture's kernels and tile widths, in the order both binaries print them.
order = [("naive", None)] + [
    (kern, tw)
    for kern in ("tiled-dynamic", "tiled-static", "tiled-dynamic-const")
    for tw in (8, 16, 32)
]
wanted = set(order)


def warn(msg):
    print(f"compare.sh: warning: {msg}", file=sys.stderr)


ms = {side: {key: [] for key in order} for side in ("rust", "nvcc")}
not_ok = set()
ignored = {"rust": set(), "nvcc": set()}
raw = []
for rnd in range(1, rounds + 1):
    for side in ("rust", "nvcc"):
        with open(f"{work}/{side}.{rnd}.jsonl") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    warn(f"{side} round {rnd}: not JSON: {line.strip()[:120]}")
                    continue
                if not isinstance(row, dict):
                    continue
                raw.append(dict(row, side=side, round=rnd))
                key = (row.get("kernel"), row.get("tw"))
                label = f"{key[0]}" + ("" if key[1] is None else f" tw {key[1]}")
                if key not in wanted:
                    ignored[side].add(str(key[0]))
                    continue
                row_shape = (row.get("m"), row.get("k"), row.get("n"))
                if row_shape != shape:
                    warn(f"{side} round {rnd}: {label} ran {row_shape}, "
                         f"not {shape}: left out")
                    continue
                if row.get("ms_median") is None:
                    warn(f"{side} round {rnd}: {label} was not timed "
                         "(no GPU: the simulator?): left out")
                    continue
                ms[side][key].append(float(row["ms_median"]))
                if row.get("ok") is False:
                    not_ok.add((side, key))


def med(values):
    return statistics.median(values) if values else None


def fmt(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


lines = [
    f"Rust vs nvcc, lecture 5 matmul kernels, {shape[0]}x{shape[1]}x{shape[2]} on {device or '?'}",
    f"nvcc {nvcc_version} -O3 -arch={arch}; {rounds} interleaved round(s), each the median "
    f"of {iters} event-timed launches after {warmup} warm-up;",
    "ms: median over rounds; ratio = Rust ms / nvcc ms (below 1: Rust faster)",
    "",
    f"{'kernel':<20} {'tw':>3} {'Rust ms':>9} {'nvcc ms':>9} {'Rust/nvcc':>10}",
]
ratios = []
for key in order:
    kern, tw = key
    r, c = med(ms["rust"][key]), med(ms["nvcc"][key])
    ratio = r / c if r is not None and c is not None and c > 0 else None
    if ratio is not None:
        ratios.append((ratio, key))
    flags = [f"{side} not ok" for side in ("rust", "nvcc") if (side, key) in not_ok]
    flags += [f"{side}: {len(ms[side][key])} of {rounds} rounds"
              for side in ("rust", "nvcc") if 0 < len(ms[side][key]) < rounds]
    lines.append(f"{kern:<20} {'-' if tw is None else tw:>3} {fmt(r, 3):>9} {fmt(c, 3):>9} "
                 f"{fmt(ratio, 3):>10}" + (f"   ({'; '.join(flags)})" if flags else ""))
lines.append("")
if ratios:
    worst, (kern, tw) = max(ratios, key=lambda t: t[0])
    best, (bkern, btw) = min(ratios, key=lambda t: t[0])
    geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
    lines.append(f"worst ratio: {worst:.3f} ({kern}{'' if tw is None else f' tw {tw}'})")
    lines.append(f"best ratio:  {best:.3f} ({bkern}{'' if btw is None else f' tw {btw}'}); "
                 f"geometric mean over {len(ratios)}: {geo:.3f}")
else:
    lines.append("no ratio: no kernel has timings from both sides")
if not_ok:
    lines.append("some rows failed their correctness check (marked 'not ok'): "
                 "see the binaries' stderr")
if ignored["rust"]:
    lines.append(f"ignored {len(ignored['rust'])} Rust kernel(s) the lecture has no C for "
                 "(the SGEMM ladder)")
if ignored["nvcc"]:
    lines.append(f"ignored nvcc rows: {', '.join(sorted(ignored['nvcc']))}")

table = "\n".join(lines) + "\n"
sys.stdout.write(table)
if out_path:
    with open(out_path, "w") as f:
        f.write(table)
if raw_path:
    with open(raw_path, "w") as f:
        for row in raw:
            f.write(json.dumps(row) + "\n")
sys.exit(0 if ratios else 1)
PY
