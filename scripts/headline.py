#!/usr/bin/env python3
"""The README's table of headline results, computed from the committed run logs.

    scripts/headline.py           print the table (markdown)
    scripts/headline.py --write   put it into README.md between the headline markers
    scripts/headline.py --check   exit 1 when README.md's table is not this one

Every figure comes from a file of docs/results/<date>/ (the device of each file is read from
that folder's README.md table) or from docs/bench/summary.md (a generated bench summary that
names its own device and date). Nothing here is typed in by hand but the choice of rows and
the names of the configurations they quote. Python 3 standard library only.
"""

import functools
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path("docs/results")
# The day of the runs a name without a date of its own is in.
RUNS = RESULTS / "2026-11-28"
BENCH = Path("docs/bench/summary.md")
README = ROOT / "README.md"
START = "<!-- headline:start (scripts/headline.py --write) -->"
END = "<!-- headline:end -->"

# The kernels of the lecture, as the bench names them.
LECTURE = re.compile(r"^(naive|tiled-(dynamic|static|dynamic-const) tw\d+)$")


class LogError(Exception):
    pass


def read(path):
    try:
        return (ROOT / path).read_text(encoding="utf-8")
    except OSError as e:
        raise LogError(f"{path}: {e.strerror}") from e


def located(name):
    """(the day's folder, the name within it) of `name`: "2026-11-29/folder/file" names its
    day, any other name is one of RUNS."""
    first = name.split("/")[0]
    if re.fullmatch(r"\d{4}-\d\d-\d\d", first):
        return RESULTS / first, name[len(first) + 1 :]
    return RUNS, name


def path(name):
    folder, within = located(name)
    return folder / within


def day(name):
    return located(name)[0].name


@functools.cache
def devices(folder):
    """file name -> device, from the results folder's README table."""
    found = {}
    for line in read(folder / "README.md").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([^`]+)`", cells[0]):
            found[name] = cells[1]
    return found


def device(name):
    runs, name = located(name)
    known = devices(runs)
    # A file in a folder of runs is listed by its folder ("folder/").
    folder = name.split("/")[0] + "/"
    if name not in known and "/" in name and folder in known:
        name = folder
    if name not in known:
        raise LogError(f"{runs / 'README.md'} lists no device for {name}")
    # "H100 80GB HBM3, driver 580.159.04" -> "H100 80GB HBM3"; "(another machine)" dropped.
    d = known[name].split(",")[0]
    return re.sub(r"\s*\(.*?\)", "", d).strip()


def link(path):
    return f"[`{path.name}`]({path.as_posix()})"


def times(x):
    return f"{x:.3f}×"


SUITE_ROW = re.compile(
    r"^(\d+×\d+×\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)×\s+(\S+)\s+(\S+)\s+\d+ \w+\s+(\S+)"
)
SUITE_SUMMARY = re.compile(
    r"^geometric mean ([\d.]+)× cuBLAS (\w+) over (\d+) shapes, worst ([\d.]+)×"
)


def suite(name):
    """The suite log's rows (shape, ours, cuBLAS, ratio, convert) and its summary line."""
    text = read(path(name))
    rows, summary = [], None
    for line in text.splitlines():
        if m := SUITE_ROW.match(line):
            convert = None if m[6] == "-" else float(m[6])
            rows.append((m[1], float(m[2]), float(m[3]), float(m[4]), convert))
        elif m := SUITE_SUMMARY.match(line):
            summary = (float(m[1]), m[2], int(m[3]), float(m[4]))
    if summary is None or len(rows) != summary[2]:
        raise LogError(f"{name}: no summary line, or not one row per shape")
    mean, baseline, count, worst = summary
    worst_shape = [r[0] for r in rows if f"{r[3]:.3f}" == f"{worst:.3f}"]
    if not worst_shape:
        raise LogError(f"{name}: no row at the worst ratio {worst}")
    return rows, mean, baseline, count, worst, worst_shape[0]


def suite_row(what, name, how):
    _, mean, baseline, count, worst, shape = suite(name)
    figure = f"geomean {times(mean)} cuBLAS {baseline}, worst {times(worst)} ({shape})"
    return (what.format(count=count), figure, device(name), how, link(path(name)), day(name))


def bf16_with_conversion(name):
    """The BF16 suite's ratios with our conversion from f32 added to our time (from the
    log's rounded milliseconds)."""
    rows, *_ = suite(name)
    ratios = [(shape, cublas / (ours + convert)) for shape, ours, cublas, _, convert in rows]
    mean = math.exp(sum(math.log(r) for _, r in ratios) / len(ratios))
    shape, worst = min(ratios, key=lambda x: x[1])
    return mean, worst, shape


def md_table(text, header_first, header_second=None):
    """The rows (lists of cells) of the markdown table whose header starts with header_first
    (and header_second, where given)."""
    rows, inside = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            if inside:
                break
            continue
        if cells[0] == header_first and header_second in (None, *cells[1:2]):
            inside = True
        elif inside and not set(cells[0]) <= set("-:"):
            rows.append(cells)
    if not rows:
        raise LogError(f"no table starting with `{header_first}`")
    return rows


def number(cell):
    return float(cell.split()[0].replace(",", ""))


def lecture_row():
    text = read(BENCH)
    date = re.search(r"\*\*Date:\*\* (\d{4}-\d\d-\d\d)", text)
    dev = re.search(r"\*\*Device:\*\* NVIDIA (\S+)", text)
    median = re.search(r"median of (\d+) runs", text)
    if not (date and dev and median):
        raise LogError(f"{BENCH}: no date, device or method line")
    rows = md_table(text, "implementation")
    shape = "5120×256×5120"
    lecture = [r for r in rows if LECTURE.match(r[0])]
    cublas = [r for r in rows if r[0] == "cuBLAS FP32"]
    if not lecture or len(cublas) != 1:
        raise LogError(f"{BENCH}: no lecture or cuBLAS FP32 rows")
    best = max(lecture, key=lambda r: number(r[1]))
    ratio = number(best[1]) / number(cublas[0][1])
    figure = (
        f"best: {best[0]}, {number(best[1]):,.0f} GFLOP/s on {shape}, "
        f"{times(ratio)} cuBLAS FP32"
    )
    how = f"`cargo bench`, median of {median[1]} event-timed runs"
    return ("the lecture's kernels", figure, dev[1], how, link(BENCH), date[1])


def rung17_row():
    name = "2026-11-29/final-pairs-2-h200/half-every.txt"
    rows = md_table(read(path(name)), "m×k×n", "configuration")
    best = {}
    for r in rows:
        if r[0] in ("4096×4096×4096", "8192×8192×8192"):
            ms, tflops, ratio = float(r[2]), float(r[3]), float(r[4])
            if r[0] not in best or ms < best[r[0]][0]:
                best[r[0]] = (ms, tflops, ratio, r[1])
    if len(best) != 2:
        raise LogError(f"{name}: no configuration rows at 4096³ and 8192³")
    (_, t4, r4, c4), (_, t8, r8, c8) = best["4096×4096×4096"], best["8192×8192×8192"]
    configs = c4 if c4 == c8 else f"{c4} / {c8}"
    figure = (
        f"{times(r4)} / {times(r8)} cuBLAS BF16 at 4096³ / 8192³ "
        f"({t4:.0f} / {t8:.0f} TFLOP/s, {configs}, the fastest of every configuration)"
    )
    how = "`--example half_gemm --every`, kernel only, 16-bit operands on the device"
    return ("rung 17, BF16 (Hopper)", figure, device(name), how, link(path(name)), day(name))


def startup_row():
    def wall(name, what):
        for r in md_table(read(RUNS / name), "what"):
            if r[0] == what:
                return float(r[1])
        raise LogError(f"{name}: no row `{what}`")

    before, after = "startup-before.md", "startup-after.md"
    figure = (
        f"first kernel (naive, 64³) {wall(before, 'naive, empty cache'):.2f} s → "
        f"{wall(after, 'naive, empty cache'):.2f} s; main job "
        f"{wall(before, 'main, empty cache'):.2f} s → {wall(after, 'main, empty cache'):.2f} s"
    )
    how = "`scripts/jit-startup/measure.sh`, wall clock, empty caches"
    logs = f"{link(RUNS / before)}, {link(RUNS / after)}"
    return ("start-up, compile on first use", figure, device(before), how, logs)


def whole_runs(lines):
    """(gpus, kernel) -> (ms, bits) of the rows for a whole run (not one device's part).
    A line cut short keeps what it has: the regular expressions need no closing brace."""
    out = {}
    for line in lines:
        if not line.startswith("{"):
            continue
        field = lambda k: re.search(rf'"{k}":("[^"]*"|[^,}}]*)', line)  # noqa: E731
        dev, gpus, ms, kernel = field("device"), field("gpus"), field("ms"), field("kernel")
        bits = field("bits")
        if not (dev and gpus and ms and kernel) or dev[1] != "null":
            continue
        key = (int(gpus[1]), json.loads(kernel[1]))
        out[key] = (float(ms[1]), bits[1].strip('"') if bits else None)
    return out


def multi_row(what, one, many, gpus, bar, kernel, how):
    runs = whole_runs(read(RUNS / one).splitlines()) | whole_runs(read(RUNS / many).splitlines())
    keys = [(1, kernel), (gpus, kernel)]
    if not all(k in runs for k in keys):
        raise LogError(f"{one}, {many}: no 1- and {gpus}-GPU rows of {kernel}")
    (ms1, bits1), (ms2, bits2) = (runs[k] for k in keys)
    same = "same bits" if bits1 and bits1 == bits2 else "bits differ"
    digits = 3 if ms1 < 10 else 1
    figure = f"{times(ms1 / ms2)} one GPU ({ms1:.{digits}f} → {ms2:.{digits}f} ms, {same}; bar {bar}×)"
    logs = link(RUNS / one) if one == many else f"{link(RUNS / one)}, {link(RUNS / many)}"
    return (what, figure, device(many), how, logs)


def rows():
    date = RUNS.name
    cli = (
        "CLI `--suite{}`, median of 100 event-timed runs a side (5 rounds of 20, ours and "
        "cuBLAS's alternating) on device data"
    )
    out = [lecture_row()]
    # FP32's listed suite and random seeds 14-16: the run of the submitted FP32 kernels
    # (rung 10's 96 x 96 tile beside its other tiles), the kernels of the submitted tree.
    fp32 = "2026-11-30/narrow-tiles-h200/final/"
    # The listed BF16 suite: the tree with the submitted 16-bit kernels.
    final = "2026-11-30/tf32-pack-h200/final/"
    # The listed TF32 suite and TF32 random seed 1: the submitted tree (TF32 rounded by the
    # accelerator's copies).
    tf32 = "2026-12-01/tf32-copies-round-h200/final/"
    # BF16 random seed 1: the tree of its kernels, on the next host.
    seeds = "2026-11-29/final-pairs-2-h200/"
    dated = [
        suite_row(
            "FP32 SGEMM, {count} listed shapes", fp32 + "suite.txt", cli.format("")
        ),
        suite_row(
            "FP32 SGEMM, {count} random shapes (seed 14)",
            fp32 + "seed14.txt",
            cli.format(" random"),
        ),
        suite_row(
            "FP32 SGEMM, {count} random shapes (seed 15)",
            fp32 + "seed15.txt",
            cli.format(" random"),
        ),
        suite_row(
            "FP32 SGEMM, {count} random shapes (seed 16)",
            fp32 + "seed16.txt",
            cli.format(" random"),
        ),
        suite_row(
            "TF32 (tensor cores), {count} listed shapes",
            tf32 + "suite_tf32.txt",
            cli.format(" --precision tf32")
            + " (the operands' packing, where a configuration needs it, timed in)",
        ),
        suite_row(
            "TF32 (tensor cores), {count} random shapes (seed 1)",
            tf32 + "tf32_seed1.txt",
            cli.format(" random --precision tf32")
            + " (the operands' packing, where a configuration needs it, timed in)",
        ),
        suite_row(
            "BF16 from f32 operands, {count} listed shapes",
            final + "suite-bf16.txt",
            cli.format(" --precision bf16") + " (f32 → BF16 conversion timed apart)",
        ),
        suite_row(
            "BF16 from f32 operands, {count} random shapes (seed 1)",
            seeds + "bf16-seed1.txt",
            cli.format(" random --precision bf16") + " (f32 → BF16 conversion timed apart)",
        ),
    ]
    name = final + "suite-bf16.txt"
    mean, worst, shape = bf16_with_conversion(name)
    dated.append(
        (
            "BF16 from f32 operands, with the conversion",
            f"geomean {times(mean)} cuBLAS BF16, worst {times(worst)} ({shape})",
            device(name),
            "the same run, our conversion added to our time (cuBLAS gets 16-bit operands)",
            link(path(name)),
            day(name),
        )
    )
    dated.append(rung17_row())
    dated.append(startup_row())
    lanes = "multi-4xh200-panels/"
    for gpus, bar in [(2, 1.9), (4, 3.6)]:
        dated.append(
            multi_row(
                f"{gpus} GPUs, FP32 GEMM 16384³",
                lanes + "gemm-1.jsonl",
                lanes + f"gemm-{gpus}.jsonl",
                gpus,
                bar,
                "sgemm-autotuned (sgemm-multistage-128x128x16-w64x32)",
                f"CLI `--gpus 1` vs `--gpus {gpus}`, median of 5 runs, operands on GPU 0 to result there",
            )
        )
    for gpus, bar in [(2, 1.9), (4, 3.7)]:
        dated.append(
            multi_row(
                f"{gpus} GPUs, sum of 2³² floats",
                lanes + "sum-1.jsonl",
                lanes + f"sum-{gpus}.jsonl",
                gpus,
                bar,
                "sum-warp",
                f"CLI `--gpus 1` vs `--gpus {gpus}` (`--op sum`), median of 10 runs",
            )
        )
    # Rows that name their day carry it; the others are RUNS's.
    out += [r if len(r) == 6 else r + (date,) for r in dated]
    return out


def table():
    lines = [
        "| result | figure (×: their time ÷ ours; above 1, ours is faster) | device | date | how measured | log |",
        "|---|---|---|---|---|---|",
    ]
    for what, figure, dev, how, log, date in rows():
        lines.append(f"| {what} | {figure} | {dev} | {date} | {how} | {log} |")
    return "\n".join(lines) + "\n"


def readme_block(text):
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise LogError(f"README.md has no `{START}` … `{END}` block")
    return start + len(START) + 1, end


def main(argv):
    mode = argv[1] if len(argv) > 1 else None
    if mode not in (None, "--write", "--check") or len(argv) > 2:
        print("\n".join(__doc__.strip().splitlines()[2:5]), file=sys.stderr)
        return 2
    try:
        new = table()
        if mode is None:
            sys.stdout.write(new)
            return 0
        text = README.read_text(encoding="utf-8")
        a, b = readme_block(text)
    except LogError as e:
        print(f"headline.py: {e}", file=sys.stderr)
        return 1
    if mode == "--write":
        README.write_text(text[:a] + new + text[b:], encoding="utf-8")
        return 0
    if text[a:b] != new:
        print(
            "headline.py: README.md's headline table is not the one the logs give; "
            "run scripts/headline.py --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
