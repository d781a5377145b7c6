#!/usr/bin/env bash
# Start-up of the command line and of a GPU test binary with an empty driver JIT cache and
# then with a warm one: wall-clock seconds of each command, and the cache's size after it.
# Each "cold" figure gets a fresh, empty cache folder (CUDA_CACHE_PATH) and a fresh
# autotune cache (XDG_CACHE_HOME), so nothing a previous command compiled or tuned helps;
# the "warm" figure runs the same command again on that folder.
#
#   scripts/jit-startup/measure.sh BINARY [GPU_MATMUL_TEST_BINARY] > table.md
#
# BINARY is a release build of kernels-gpu-host; the test binary is `gpu_matmul` (from
# `cargo test --release --no-run`), run on the lecture's tiled kernel at tile width 16 only,
# timed to its first test result.
set -uo pipefail
bin=${1:?usage: measure.sh BINARY [GPU_MATMUL_TEST_BINARY]}
tests=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# row LABEL CACHE -- COMMAND...: one table row; the command's output goes to $work/LABEL.log.
row() {
  local label=$1 cache=$2
  shift 3
  local log="$work/${label// /_}.log" t0 t1 rc
  t0=$(now)
  CUDA_CACHE_PATH=$cache XDG_CACHE_HOME=$cache/xdg "$@" >"$log" 2>&1
  rc=$?
  t1=$(now)
  printf '| %s | %s | %s | %s |\n' "$label" "$(secs "$t0" "$t1")" "$rc" "$(du -sh "$cache" | cut -f1)"
  [ "$rc" = 0 ] || sed 's/^/    /' "$log" | tail -5 >&2
}

# first_test LABEL CACHE -- COMMAND...: seconds until the command prints its first test result.
first_test() {
  local label=$1 cache=$2
  shift 3
  local t0 first="" line
  t0=$(now)
  while IFS= read -r line; do
    case $line in
      test\ *\ ...\ *) [ -n "$first" ] || first=$(now) ;;
    esac
  done < <(CUDA_CACHE_PATH=$cache XDG_CACHE_HOME=$cache/xdg "$@" 2>&1)
  printf '| %s | %s | %s | %s |\n' "$label" "$(secs "$t0" "${first:-$(now)}")" "$([ -n "$first" ] && echo 0 || echo "no test ran")" "$(du -sh "$cache" | cut -f1)"
}

echo "| what | wall s | exit | JIT cache after |"
echo "|---|---:|---:|---:|"
for case in naive main autotuned; do
  cache=$(mktemp -d -p "$work")
  case $case in
    naive) cmd=("$bin" --m 64 --k 64 --n 64 --kernel naive --tw 16) ;;
    main) cmd=("$bin") ;;
    autotuned) cmd=("$bin" --m 4096 --k 4096 --n 4096 --kernel sgemm-autotuned) ;;
  esac
  row "$case, empty cache" "$cache" -- "${cmd[@]}"
  if [ "$case" = autotuned ]; then
    # The tuning choice is cached too: warm means both caches.
    row "$case, warm caches" "$cache" -- "${cmd[@]}"
  else
    row "$case, warm cache" "$cache" -- "${cmd[@]}"
  fi
done
if [ -n "$tests" ]; then
  cache=$(mktemp -d -p "$work")
  first_test "gpu_matmul tiled-static tw16, first test, empty cache" "$cache" -- "$tests" gpu::tiled-static::tw16
  first_test "gpu_matmul tiled-static tw16, first test, warm cache" "$cache" -- "$tests" gpu::tiled-static::tw16
fi
