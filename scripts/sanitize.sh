#!/usr/bin/env bash
# Runs every kernel × tile width of the prebuilt `kernels-gpu-host` binary on odd shapes (and its
# reductions and sliding averages on odd lengths) under each of compute-sanitizer's four tools, on a machine with an NVIDIA GPU and the CUDA toolkit:
#
#   memcheck   out-of-bounds and misaligned global/shared accesses, bad API arguments
#   racecheck  shared-memory data races (a missing or misplaced sync_threads)
#   synccheck  barriers not reached by every thread of a block
#   initcheck  reads of device memory nothing has written
#
# Usage: scripts/sanitize.sh [HOST_BINARY]        (default ./kernels-gpu-host; e.g. target/release/kernels-gpu-host)
#
# Environment: COMPUTE_SANITIZER (path of the tool; default: on PATH or in $CUDA_HOME/bin),
# SANITIZE_LOG_DIR (where the logs go; default a new temporary directory),
# SANITIZE_LEAK_CHECK=1 (memcheck also reports device allocations never freed),
# SANITIZE_ONLY (an extended regular expression: only the runs whose name matches it, such
# as 'matmul|row_split|repacked'; the names are those the summary prints),
# SANITIZE_GPU_MATMUL (the built `gpu_matmul` test binary: each tool also runs its
# `bf16_gemm`, `row_split`, `repacked`, `gpu::packed::`, `gpu::half::` and `gpu::split_k_and_serial_split_k` tests, rung 13 on BF16 matrices,
# the autotuner's row splits and repacked products, and rungs 14 and 15's configurations on
# packed operands and rung 17 on 16-bit ones (rungs 14 and 17 on a Hopper only; elsewhere the test checks the typed refusal),
# which the command line does not run one by one; build it with
# `cargo test --release -p kernels-gpu-host --test gpu_matmul --no-run`),
# SANITIZE_GPU_GEMV (the built `gpu_gemv` test binary: each tool also runs its `gemv::`
# tests, rung 16's memory-bound kernels on odd, degenerate and split-k shapes with the
# reduction), SANITIZE_GPU_GEMM (the built `gpu_gemm` test binary: each tool also runs
# some of its BLAS cases: the scale kernel of α = 0 over NaN operands, interleaved outputs,
# and rung 12 over more products than one launch's grid holds).
#
# Prints one line per run and a summary line per tool; exits 0 if every run is clean, 1 if
# any tool reports an error (or a run fails, falls back to the CPU simulator, or has a
# result outside the error bound), 2 if the tool or the binary is missing.
#
# The shapes are not multiples of any tile width, and one has k = 1 (a single partial
# phase). The host binary fills each output with NaN before a kernel writes it and copies
# everything with cudaMemcpy, so initcheck sees only memory the program initialised.

set -uo pipefail

host=${1:-./kernels-gpu-host}
if [[ ! -x $host ]]; then
    echo "sanitize.sh: host binary '$host' not found or not executable" >&2
    echo "  build it with 'cargo build --release -p kernels-gpu-host' and pass target/release/kernels-gpu-host" >&2
    exit 2
fi

sanitizer=${COMPUTE_SANITIZER:-}
if [[ -z $sanitizer ]]; then
    if command -v compute-sanitizer >/dev/null 2>&1; then
        sanitizer=compute-sanitizer
    elif [[ -x ${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer ]]; then
        sanitizer=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
    else
        echo "sanitize.sh: compute-sanitizer not found: put it on PATH or set COMPUTE_SANITIZER" >&2
        exit 2
    fi
fi

logs=${SANITIZE_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sanitize.XXXXXX")}
mkdir -p "$logs"

# Distinct from the host's own exit codes (1: a result outside the bound or an error,
# 2: usage), so a sanitizer finding is never mistaken for one of them.
readonly SANITIZER_EXIT=86
readonly TOOLS=(memcheck racecheck synccheck initcheck)

# needs|name|arguments. A run is kept where the binary's `--help` mentions `needs` (empty:
# always), so that an older binary runs what it has. `--kernel all --tw all` (the defaults)
# runs every kernel × tile width.
all_runs=(
    "|matmul-67x45x93|--m 67 --k 45 --n 93"
    "|matmul-33x1x17|--m 33 --k 1 --n 17"
    # Whole 128×128 tiles, k a multiple of 16, rows 16-byte aligned: the SGEMM rungs' vector
    # and cp.async fast paths, which the odd shapes never take.
    "|matmul-256x96x384|--m 256 --k 96 --n 384"
    "|matmul-1x1x1|--m 1 --k 1 --n 1"
    # Whole 128×128 tiles on rows that are not 16-byte aligned (k and n odd), five k-tiles
    # (past the multistage ring's three stages) and a partial last one: the multistage
    # rung's 4-byte cp.async copies of b, zero-filled, beside edge tiles.
    "|matmul-260x67x259|--m 260 --k 67 --n 259"
    # The TF32 tensor-core rung (opt-in, so `--kernel all` runs it only with `--precision
    # tf32`): odd shapes on its checked path; interior 128×128 blocks on the cp.async path
    # with a zero-filled partial last k-tile (k = 36, 260) beside edge blocks.
    "--precision|tf32-67x45x93|--precision tf32 --m 67 --k 45 --n 93"
    "--precision|tf32-33x1x17|--precision tf32 --m 33 --k 1 --n 17"
    "--precision|tf32-128x36x128|--precision tf32 --m 128 --k 36 --n 128"
    "--precision|tf32-260x260x264|--precision tf32 --m 260 --k 260 --n 264"
    # The same rung in BF16 (`mma.m16n8k16`, two 8-deep slices per step; k = 36 and 260
    # leave a partial 16-deep step), the same paths.
    "--precision|bf16-67x45x93|--precision bf16 --m 67 --k 45 --n 93"
    "--precision|bf16-33x1x17|--precision bf16 --m 33 --k 1 --n 17"
    "--precision|bf16-128x36x128|--precision bf16 --m 128 --k 36 --n 128"
    "--precision|bf16-260x260x264|--precision bf16 --m 260 --k 260 --n 264"
    # The reductions and sliding averages.
    "--op|sum-100003|--op sum --len 100003"
    "--op|sliding-100003w16|--op sliding --len 100003 --window 16"
    "--op|sliding-100003w3|--op sliding --len 100003 --window 3"
    # The scan sliding average at windows past a tile: a halo and two whole tiles' published
    # aggregates, then one tile more than the aggregates reach (the chained look-back; past
    # a window of 1,024 the CLI runs the scan alone). The 2-D reductions: odd
    # shapes (scalar loads), 16-byte rows, and a column sum of several row segments (two
    # passes).
    "--rows|sliding-100003w12001|--op sliding --len 100003 --window 12001"
    "--rows|sliding-140001w135169|--op sliding --len 140001 --window 135169"
    "--rows|reduce-1001x67|--op reduce --rows 1001 --cols 67"
    "--rows|reduce-37x4100|--op reduce --rows 37 --cols 4100"
    "--rows|reduce-20000x64|--op reduce --rows 20000 --cols 64"
    "--rows|reduce-1x1|--op reduce --rows 1 --cols 1"
    # The fusion lesson's zip (one thread per m·n·k element) feeding a row reduction.
    "fusion|fusion-33x67x17|--op fusion --m 33 --k 67 --n 17"
)
help=$("$host" --help 2>/dev/null)
runs=()
only=${SANITIZE_ONLY:-}
for run in "${all_runs[@]}"; do
    needs=${run%%|*}
    rest=${run#*|}
    if [[ -n $only && ! ${rest%%|*} =~ $only ]]; then
        continue
    fi
    if [[ -z $needs || $help == *"$needs"* ]]; then
        runs+=("$rest")
    fi
done
readonly COMMON_ARGS=(--iters 1 --warmup 0 --json)

tool_args() {
    case $1 in
        memcheck)
            echo --tool memcheck
            if [[ ${SANITIZE_LEAK_CHECK:-0} == 1 ]]; then echo --leak-check full; fi
            ;;
        # `all`: every hazard and the per-race analysis (identical output when clean).
        racecheck) echo --tool racecheck --racecheck-report all ;;
        synccheck) echo --tool synccheck ;;
        initcheck) echo --tool initcheck ;;
    esac
}

echo "sanitize.sh: $("$sanitizer" --version 2>/dev/null | grep -m1 -i version || echo "$sanitizer")"
echo "sanitize.sh: $host, logs in $logs"

declare -A tool_failures tool_runs
failed=0

# The tool's own verdict on the run logged at $1.log that exited with $2: sets `summary` and
# `problem` (empty where the tool found nothing and ran to the end).
sanitizer_verdict() {
    summary=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: .*' "$1.log" 2>/dev/null | tail -n 1)
    local found
    found=$(sed -E 's/.*SUMMARY: ([0-9]+).*/\1/' <<<"$summary")
    problem=""
    if [[ $2 == "$SANITIZER_EXIT" || (-n $found && $found != 0) ]]; then
        problem="${found:-?} sanitizer findings"
    elif [[ -z $summary ]]; then
        problem="no summary from $tool (did it run? see the log)"
    fi
}

# Counts the run `$2` of tool `$1` (log base `$3`), with `problem` and `summary` as set.
record() {
    local status=ok
    tool_runs[$1]=$((tool_runs[$1] + 1))
    if [[ -n $problem ]]; then
        status=FAIL
        tool_failures[$1]+=" $2"
        failed=1
    fi
    printf '  %-10s %-20s %-4s %s%s\n' "$1" "$2" "$status" "$summary" \
        "${problem:+ — $problem (log: $3.log)}"
}

for tool in "${TOOLS[@]}"; do
    tool_failures[$tool]=""
    tool_runs[$tool]=0
    for run in "${runs[@]}"; do
        name=${run%%|*}
        read -r -a args <<<"${run#*|}"
        base=$logs/$tool-$name
        # shellcheck disable=SC2046 # tool_args prints separate words on purpose
        "$sanitizer" $(tool_args "$tool") --error-exitcode "$SANITIZER_EXIT" --print-limit 20 \
            --log-file "$base.log" "$host" "${args[@]}" "${COMMON_ARGS[@]}" \
            >"$base.out" 2>"$base.err"
        rc=$?

        # "ERROR SUMMARY: N errors", or for racecheck
        # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
        sanitizer_verdict "$base" "$rc"
        results=$(grep -c '^{' "$base.out")
        # `"ok":null` is a row with nothing to check (the fusion lesson's timing-only steps).
        not_ok=$(grep '^{' "$base.out" | grep -c '"ok":false')

        if [[ -n $problem ]]; then
            :
        elif grep -q 'CPU simulator' "$base.err"; then
            problem="ran in the CPU simulator, not on the GPU: $(head -n 1 "$base.err")"
        elif [[ $rc != 0 ]]; then
            problem="host exited with $rc: $(grep -m1 'error' "$base.err" || tail -n 1 "$base.err")"
        elif [[ $results == 0 || $not_ok != 0 ]]; then
            problem="$not_ok of $results results outside the error bound"
        fi
        record "$tool" "$name" "$base"
    done
    # The `gpu_matmul` tests of what the command line does not run: rung 13's (odd,
    # cp.async and degenerate shapes of every configuration), row splits and repacked
    # products (odd shapes, both parts of each, the repack kernel's copies), and rungs 14
    # and 15's (odd, multi-tile and degenerate shapes of every configuration, with the
    # packing), rung 17's, and split-k in two launches and serial (one launch, per-tile
    # flags).
    # The same for rung 16's tests and the GEMM API's BLAS cases.
    test_runs=()
    for filter in ${SANITIZE_GPU_MATMUL:+bf16_gemm row_split repacked gpu::packed:: gpu::half:: gpu::split_k_and_serial_split_k}; do
        test_runs+=("$SANITIZE_GPU_MATMUL|$filter")
    done
    for filter in ${SANITIZE_GPU_GEMV:+gemv::}; do
        test_runs+=("$SANITIZE_GPU_GEMV|$filter")
    done
    # One odd shape's BLAS cases in every order and layout (the scale kernel over NaN
    # operands, with and without reading c; interleaved outputs), and the two batches of
    # 70,000.
    for filter in ${SANITIZE_GPU_GEMM:+37x29x41-pad1-batch2-a0-b0.5-nan 37x29x41-pad0-batch3-shared-b-a0-b0-nan 37x29x41-pad0-batch2-a1.5-b-0.5-interleaved batch70000}; do
        test_runs+=("$SANITIZE_GPU_GEMM|$filter")
    done
    for test_run in "${test_runs[@]}"; do
        binary=${test_run%%|*}
        filter=${test_run#*|}
        name=${filter//:/}-tests
        if [[ -n $only && ! $name =~ $only ]]; then
            continue
        fi
        base=$logs/$tool-$name
        # shellcheck disable=SC2046 # tool_args prints separate words on purpose
        "$sanitizer" $(tool_args "$tool") --error-exitcode "$SANITIZER_EXIT" --print-limit 20 \
            --log-file "$base.log" "$binary" "$filter" --test-threads=1 \
            >"$base.out" 2>"$base.err"
        rc=$?
        sanitizer_verdict "$base" "$rc"
        passed=$(grep -Eo '[0-9]+ passed' "$base.out" | grep -Eo '[0-9]+')
        if [[ -n $problem ]]; then
            :
        elif [[ $rc != 0 ]]; then
            problem="tests exited with $rc: $(grep -m1 -E 'FAILED|error' "$base.out" "$base.err")"
        elif [[ ${passed:-0} == 0 ]]; then
            problem="no test ran (an ignored GPU test, or a binary without $filter tests)"
        fi
        record "$tool" "$name" "$base"
    done
done

echo
for tool in "${TOOLS[@]}"; do
    if [[ -z ${tool_failures[$tool]} ]]; then
        printf '%-10s clean: %d runs, 0 errors\n' "$tool" "${tool_runs[$tool]}"
    else
        printf '%-10s ERRORS in:%s\n' "$tool" "${tool_failures[$tool]}"
    fi
done
exit "$failed"
