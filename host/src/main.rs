//! `host`: runs the lecture's matmul kernels on the GPU (or the CPU simulator), checks the
//! results against an f64 CPU reference (every output, or a sample of them on large
//! problems: `--check`), and prints a table or JSON lines.

use clap::Parser;
use cudarc::driver::CudaSlice;
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::reference::{self, Accuracy, Reference};
use kernels_gpu_host::check::spot::{self, CheckMode};
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::plan::budget::{self, TimeBudget};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::suite::SuiteKind;
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "cli/fusion.rs"]
mod fusion;
#[path = "cli/multi.rs"]
mod multi;
#[path = "cli/report.rs"]
mod report;
#[path = "cli/vector.rs"]
mod vector;

use report::Row;

/// The simulator's default problem: small enough to finish in seconds on a laptop, with
/// k = 40 not a multiple of any tile width, so the zero padding is exercised.
const SIM_DEFAULT: (usize, usize, usize) = (96, 40, 80);
/// The lecture's problem: 5120×256 @ 256×5120.
const GPU_DEFAULT: (usize, usize, usize) = (5120, 256, 5120);

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Rows of a and of the output [default: 5120 on a GPU, 96 in the simulator].
    #[arg(long)]
    m: Option<usize>,
    /// Columns of a, rows of b [default: 256 on a GPU, 40 in the simulator].
    #[arg(long)]
    k: Option<usize>,
    /// Columns of b and of the output [default: 5120 on a GPU, 80 in the simulator].
    #[arg(long)]
    n: Option<usize>,
    /// Kernel to run: all, lecture (its four kernels), naive, tiled-dynamic, tiled-static,
    /// tiled-dynamic-const, or an SGEMM configuration such as
    /// sgemm-double-buffered-128x128x8-w64x32 or sgemm-autotuned (a wrong name lists them).
    /// Default: all up to 2^33 multiply-adds (m·n·k, where --check defaults to full), only
    /// sgemm-autotuned above, with a line on stderr that says what was left out.
    #[arg(long, value_parser = parse_kernel)]
    kernel: Option<KernelChoice>,
    /// How SGEMM kernels may round their inputs, as cuBLAS's math mode: fp32 (the default),
    /// tf32 (opt-in: the tensor-core rung, inputs rounded to a 10-bit mantissa, f32
    /// accumulation) or bf16 (opt-in: the same rung with inputs rounded to BF16's 8-bit
    /// significand). It picks what `all` and `sgemm-autotuned` run, and every result is
    /// checked against its kernel's own error bound.
    #[arg(long, default_value = "fp32", value_parser = parse_precision)]
    precision: Precision,
    /// Tile width: all, 8, 16 or 32.
    #[arg(long, default_value = "all", value_parser = parse_tw)]
    tw: TwChoice,
    /// Most timed runs per kernel (the median is reported, with how many runs it is of).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    iters: u32,
    /// Most untimed runs before timing.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// Seconds each kernel's timed runs may take: they stop after --iters runs or once they
    /// have taken this long (event-timed GPU time, at least one run), and the warm-ups
    /// likewise after --warmup runs or this long (at least one). inf: exactly --warmup and
    /// --iters runs. Not for --suite, which always makes them all.
    #[arg(
        long,
        default_value_t = TimeLimit(Some(budget::DEFAULT)),
        value_parser = parse_time_budget,
        allow_negative_numbers = true
    )]
    time_budget: TimeLimit,
    /// Seed of the random inputs (uniform in [0, 1)).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print one JSON object per result instead of a table (and, as --verbose, every
    /// autotuning candidate's time on stderr).
    #[arg(long)]
    json: bool,
    /// Print every autotuning candidate's time on stderr (otherwise one line per new shape).
    #[arg(long)]
    verbose: bool,
    /// Run a GEMM shape suite: each shape by the autotuned SGEMM of --precision against
    /// cuBLAS in the same math (FP32: TF32 off), in the same run, spot-checked, with the
    /// ratios, the chosen configurations, the share of the copy bandwidth of memory-bound
    /// shapes, and the geometric mean. `--suite` or `--suite listed`: the 14 listed shapes;
    /// `--suite random`: --count shapes drawn from --seed (each dimension log-uniform in
    /// 1..=16384, m·n·k ≤ 2^36, the same shapes on every machine); `--suite given`: the
    /// shapes of --shapes. Needs a GPU.
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        default_missing_value = "listed",
        conflicts_with_all = ["m", "k", "n", "kernel", "tw", "simulate", "op", "check", "time_budget"]
    )]
    suite: Option<SuiteKind>,
    /// How many shapes `--suite random` draws.
    #[arg(long, default_value_t = 40, requires = "suite")]
    count: usize,
    /// The shapes of `--suite given`: m×k×n (or mxkxn) separated by commas, such as
    /// 199x849x8263,9x583x4591.
    #[arg(long, value_parser = parse_shape_list, requires = "suite", required_if_eq("suite", "given"))]
    shapes: Option<ShapeList>,
    /// Run in the CPU simulator even if a GPU is present.
    #[arg(long)]
    simulate: bool,
    /// How results are checked against f64: full (every output), sample (64 outputs, the
    /// corners and random ones, within the same error bound) or none (reported as
    /// unchecked). Default: full up to 2^33 multiply-adds (m·n·k) and in the simulator,
    /// sample above, where the CPU's f64 product would take longer than the GPU run. Sum,
    /// reduce and sliding have O(n) references and are checked in full unless none.
    #[arg(long, value_enum)]
    check: Option<CheckMode>,
    /// What to run: matmul (the lecture), sum (flat sums), reduce (sum, max and mean along
    /// rows and along columns of a 2-D tensor), sliding (sliding averages) or fusion (the
    /// product as zip then reduce through an m×n×k intermediate, against fused kernels;
    /// default shape 1024×256×1024 on a GPU, 24×40×20 in the simulator).
    #[arg(long, value_enum, default_value_t = Op::Matmul)]
    op: Op,
    /// Input length for sum and sliding [default: 2^28 on a GPU, 100003 in the simulator].
    #[arg(long)]
    len: Option<usize>,
    /// Window of the sliding average (the slides' `sub_size`; their example uses 2).
    #[arg(long, default_value_t = 2)]
    window: usize,
    /// Rows of the 2-D tensor of `--op reduce` [default: 16384 on a GPU, 301 in the
    /// simulator].
    #[arg(long)]
    rows: Option<usize>,
    /// Columns of the 2-D tensor of `--op reduce` [default: 16384 on a GPU, 67 in the
    /// simulator].
    #[arg(long)]
    cols: Option<usize>,
    /// Spread matmul, sum, reduce or sliding over GPUs 0 to N - 1 (or all), through NCCL
    /// (found at run time: KERNELS_GPU_NCCL=/path/to/libnccl.so.2 overrides the search).
    /// Prints a row per GPU and one for the whole run, with a fingerprint of the result's
    /// bits: equal for every N. `--gpus 1` runs the same splits on one GPU, without NCCL.
    #[arg(long, value_parser = multi::parse_gpus, conflicts_with_all = ["simulate", "suite"])]
    gpus: Option<multi::GpuCount>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Op {
    Matmul,
    Sum,
    Reduce,
    Sliding,
    Fusion,
}

/// Default input lengths of the vector operations: 1 GiB of f32 on a GPU, far past any
/// cache; a size the simulator handles in seconds.
const GPU_DEFAULT_LEN: usize = 1 << 28;
const SIM_DEFAULT_LEN: usize = 100_003;
/// Default shapes of `--op reduce`: 1 GiB of f32 on a GPU; odd sizes in the simulator.
const GPU_DEFAULT_SHAPE: (usize, usize) = (16384, 16384);
const SIM_DEFAULT_SHAPE: (usize, usize) = (301, 67);

#[derive(Clone, Debug)]
enum KernelChoice {
    All,
    Lecture,
    One(MatmulKernel),
}

/// `--time-budget`: a limit, or `None` for none (`inf`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct TimeLimit(Option<Duration>);

/// As `--time-budget` takes it, so that the help's default is [`budget::DEFAULT`].
impl std::fmt::Display for TimeLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&budget::limit_name(self.0))
    }
}

fn parse_time_budget(s: &str) -> Result<TimeLimit, String> {
    budget::parse_limit(s)
        .map(TimeLimit)
        .map_err(|e| e.to_string())
}

#[derive(Clone, Debug)]
enum TwChoice {
    All,
    One(TileWidth),
}

fn parse_kernel(s: &str) -> Result<KernelChoice, String> {
    match s {
        "all" => return Ok(KernelChoice::All),
        "lecture" => return Ok(KernelChoice::Lecture),
        _ => {}
    }
    MatmulKernel::from_name(s)
        .map(KernelChoice::One)
        .map_err(|e| e.to_string())
}

/// `--shapes`' list (a type of its own: clap would read a `Vec` as a repeated flag).
#[derive(Clone, Debug)]
struct ShapeList(Vec<MatmulShape>);

impl std::ops::Deref for ShapeList {
    type Target = [MatmulShape];
    fn deref(&self) -> &[MatmulShape] {
        &self.0
    }
}

fn parse_shape_list(s: &str) -> Result<ShapeList, String> {
    kernels_gpu_host::suite::parse_shapes(s).map(ShapeList)
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    let precision =
        Precision::from_name(s).ok_or_else(|| format!("`{s}`: allowed: fp32, tf32, bf16"))?;
    // A precision without kernels is refused here, with the library's typed error.
    SgemmKernel::autotuned(precision)
        .map(|_| precision)
        .map_err(|e| e.to_string())
}

fn parse_tw(s: &str) -> Result<TwChoice, String> {
    if s == "all" {
        return Ok(TwChoice::All);
    }
    let tw: u32 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number; allowed: all, 8, 16, 32"))?;
    TileWidth::try_from(tw)
        .map(TwChoice::One)
        .map_err(|e| e.to_string())
}

impl Args {
    /// Every (kernel, tile width) the flags select for `shape`; the naive kernel runs once.
    /// `all` is every kernel of `--precision`, and `sgemm-autotuned` the autotuned choice of
    /// it; without `--kernel`, [`MatmulKernel::default_set`], whose line saying what it left
    /// out (if anything) is printed on stderr here.
    fn runs(&self, shape: MatmulShape) -> Result<Vec<(MatmulKernel, TileWidth)>, Error> {
        let kernels = match self.kernel {
            None => {
                let set = MatmulKernel::default_set(shape, self.precision)?;
                if let Some(notice) = set.notice(shape) {
                    eprintln!("{notice}");
                }
                set.run
            }
            Some(KernelChoice::All) => MatmulKernel::all_of(self.precision),
            Some(KernelChoice::Lecture) => MatmulKernel::LECTURE.to_vec(),
            Some(KernelChoice::One(MatmulKernel::Sgemm(SgemmKernel::Autotuned))) => {
                vec![MatmulKernel::Sgemm(SgemmKernel::autotuned(self.precision)?)]
            }
            Some(KernelChoice::One(k)) => vec![k],
        };
        let mut runs = vec![];
        for k in kernels {
            let widths: Vec<TileWidth> = match (&self.tw, k.is_tiled()) {
                (_, false) => vec![TileWidth::Tw16],
                (TwChoice::All, true) => TileWidth::ALL.to_vec(),
                (TwChoice::One(tw), true) => vec![*tw],
            };
            runs.extend(widths.into_iter().map(|tw| (k, tw)));
        }
        Ok(runs)
    }

    /// How many warm-ups and timed runs each measurement may make, and in how long
    /// (`--warmup`, `--iters`, `--time-budget`).
    fn budget(&self) -> TimeBudget {
        TimeBudget::new(
            self.warmup as usize,
            self.iters as usize,
            self.time_budget.0,
        )
    }

    /// How the GPU header lines describe [`budget`](Self::budget).
    fn budget_text(&self) -> String {
        let limit = match self.time_budget.0 {
            Some(limit) => format!(", each phase within {} s", budget::limit_name(Some(limit))),
            None => String::new(),
        };
        let up_to = if limit.is_empty() { "" } else { "up to " };
        format!(
            "median of {up_to}{} runs after {up_to}{} warm-ups{limit}",
            self.iters, self.warmup
        )
    }

    fn shape(&self, default: (usize, usize, usize)) -> Result<MatmulShape, Error> {
        MatmulShape::new(
            self.m.unwrap_or(default.0),
            self.k.unwrap_or(default.1),
            self.n.unwrap_or(default.2),
        )
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.gpus.is_some() && args.op == Op::Fusion {
        eprintln!("error: --gpus runs --op matmul, sum, reduce or sliding; fusion runs on one GPU");
        return ExitCode::FAILURE;
    }
    if args.shapes.is_some() && args.suite != Some(SuiteKind::Given) {
        eprintln!("error: --shapes lists the shapes of --suite given");
        return ExitCode::FAILURE;
    }
    kernels_gpu_host::gpu::autotune::set_verbose(args.verbose || args.json);
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: some results are outside their error bound (see the `ok` column)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Returns whether every result was within the error bound.
fn run(args: &Args) -> Result<bool, Error> {
    if let Some(count) = args.gpus {
        return multi::run(args, count);
    }
    let mut steps = Steps::new(args.verbose);
    let gpu = if args.simulate {
        None
    } else {
        let gpu = Gpu::new();
        if gpu.is_ok() {
            steps.done(|| "CUDA context".into());
        }
        Some(gpu)
    };
    if let Some(kind) = args.suite {
        return run_suite(args, kind, gpu.unwrap_or_else(Gpu::new)?);
    }
    match args.op {
        Op::Matmul => {}
        Op::Fusion => return fusion::run(args, gpu),
        _ => return vector::run(args, gpu),
    }
    let rows = on_gpu_or_simulator(gpu, |gpu| run_gpu(args, gpu), || run_sim(args))?;
    print_rows(args, &rows, report::table);
    Ok(report::none_failed(rows.iter().map(|r| r.ok)))
}

/// Runs `on_gpu` where there is a GPU; otherwise says why not and runs `on_sim`.
/// `gpu` is `None` when `--simulate` asked for the simulator.
fn on_gpu_or_simulator<T>(
    gpu: Option<Result<Gpu, Error>>, on_gpu: impl FnOnce(&Gpu) -> Result<T, Error>,
    on_sim: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    match gpu {
        Some(Ok(gpu)) => on_gpu(&gpu),
        Some(Err(e @ (Error::NoDriver(_) | Error::NoDevice))) => {
            eprintln!("no GPU ({e}); running in the CPU simulator instead");
            on_sim()
        }
        Some(Err(e)) => Err(e),
        None => on_sim(),
    }
}

/// Prints `rows` as JSON lines with `--json`, otherwise as `table`.
fn print_rows<T: serde::Serialize>(args: &Args, rows: &[T], table: impl Fn(&[T]) -> String) {
    if args.json {
        for r in rows {
            println!("{}", serde_json::to_string(r).expect("rows serialise"));
        }
    } else {
        print!("{}", table(rows));
    }
}

/// The random inputs `a` and `b` of `shape`, uniform in [0, 1).
fn inputs(args: &Args, shape: MatmulShape) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(args.seed);
    let (la, lb, _) = shape.lens();
    (rng.uniform(la), rng.uniform(lb))
}

/// How a product's results are checked (`--check`): against the full f64 reference, a
/// sample of outputs against f64 dot products ([`spot`]), or not at all.
enum Checker {
    Full(Reference),
    /// The sampled outputs' f64 values, computed once for every result.
    Sample(spot::Sample),
    Unchecked,
}

impl Checker {
    /// `--check`, or the default for `shape` ([`CheckMode::default_for`]); says on stderr
    /// when the results will not all be checked, or when a full check will take a while.
    fn new(args: &Args, a: &[f32], b: &[f32], shape: MatmulShape, simulated: bool) -> Self {
        let macs = shape.macs();
        match args
            .check
            .unwrap_or_else(|| CheckMode::default_for(shape, simulated))
        {
            CheckMode::Full => {
                if macs > spot::FULL_CHECK_MAX_MACS && !simulated {
                    eprintln!(
                        "checking every output against an f64 product of {macs:.2e} multiply-adds \
                         on the CPU: this takes a while (--check sample spot-checks {} outputs)",
                        spot::SAMPLES
                    );
                }
                let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
                Checker::Full(reference::matmul_f64(a, b, m, k, n))
            }
            CheckMode::Sample => {
                let why = if args.check.is_some() {
                    "--check sample".to_owned()
                } else {
                    format!(
                        "the default above 2^{} multiply-adds",
                        spot::FULL_CHECK_MAX_MACS.trailing_zeros()
                    )
                };
                eprintln!(
                    "checking {} outputs of each result against f64 dot products ({why}; \
                     --check full compares all {} with an f64 product on the CPU)",
                    spot::SAMPLES,
                    shape.lens().2
                );
                Checker::Sample(spot::Sample::new(a, b, shape, spot::SAMPLES))
            }
            CheckMode::None => {
                eprintln!("results are not checked (--check none)");
                Checker::Unchecked
            }
        }
    }

    fn mode(&self) -> CheckMode {
        match self {
            Checker::Full(_) => CheckMode::Full,
            Checker::Sample(_) => CheckMode::Sample,
            Checker::Unchecked => CheckMode::None,
        }
    }

    /// How `out` compares with f64 over the outputs checked; `None` when unchecked.
    fn accuracy(&self, out: &[f32]) -> Option<Accuracy> {
        match self {
            Checker::Full(r) => Some(reference::compare(out, r)),
            Checker::Sample(sample) => Some(sample.accuracy(out)),
            Checker::Unchecked => None,
        }
    }
}

fn checked_row(
    kernel: MatmulKernel, tw: TileWidth, shape: MatmulShape, out: &[f32], checker: &Checker,
) -> Row {
    let mut row = Row::new(kernel, kernel.is_tiled().then_some(tw.get()), shape);
    row.check = checker.mode();
    if let Some(acc) = checker.accuracy(out) {
        row.max_abs_err = Some(acc.max_abs_err);
        row.max_rel_err = Some(acc.max_rel_err);
        row.ok = Some(acc.within_bound(shape.k as usize, kernel.precision()));
    }
    row
}

fn run_sim(args: &Args) -> Result<Vec<Row>, Error> {
    let shape = args.shape(SIM_DEFAULT)?;
    eprintln!(
        "CPU simulator (each block's threads as coroutines, blocks in parallel, checked barriers and shared memory): {shape}, seed {}",
        args.seed
    );
    let runs = args.runs(shape)?;
    let (a, b) = inputs(args, shape);
    let checker = Checker::new(args, &a, &b, shape, true);
    let sim = Simulator::default();
    runs.into_iter()
        .map(|(kernel, tw)| {
            Ok(checked_row(
                kernel,
                tw,
                shape,
                &sim.matmul(kernel, tw, &a, &b, shape)?,
                &checker,
            ))
        })
        .collect()
}

/// With `--verbose`, says on stderr how long each step of a run took (wall-clock), to show
/// where a large problem's time goes.
struct Steps {
    on: bool,
    last: Instant,
}

impl Steps {
    fn new(on: bool) -> Self {
        Self {
            on,
            last: Instant::now(),
        }
    }

    /// Ends the step `what` (and starts the next).
    fn done(&mut self, what: impl FnOnce() -> String) {
        if self.on {
            eprintln!(
                "time: {}: {:.2} s",
                what(),
                self.last.elapsed().as_secs_f64()
            );
        }
        self.last = Instant::now();
    }
}

fn run_gpu(args: &Args, gpu: &Gpu) -> Result<Vec<Row>, Error> {
    let shape = args.shape(GPU_DEFAULT)?;
    let info = gpu.info()?;
    eprintln!(
        "{info}: {shape}, seed {}, {}",
        args.seed,
        args.budget_text()
    );
    let runs = args.runs(shape)?;
    let mut steps = Steps::new(args.verbose);
    // The kernels that run, compiled at once rather than one at each first launch (the
    // autotuned SGEMM compiles its candidates when it tunes).
    let entries: Vec<&str> = runs
        .iter()
        .filter(|(k, _)| !matches!(k, MatmulKernel::Sgemm(s) if s.is_autotuned()))
        .map(|&(k, tw)| k.entry(tw))
        .collect();
    gpu.load_entries(&entries)?;
    steps.done(|| {
        format!(
            "{} kernels compiled or found in the driver's cache",
            entries.len()
        )
    });
    let (a, b) = inputs(args, shape);
    steps.done(|| "random inputs".into());
    let checker = Checker::new(args, &a, &b, shape, false);
    steps.done(|| format!("f64 values to check against ({})", checker.mode().name()));
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    steps.done(|| "upload".into());
    let budget = args.budget();
    // One output buffer, filled with NaN before each kernel: an element a kernel fails to
    // write shows up as non-finite. One host buffer to read it back into.
    let mut out = gpu.nans(shape.lens().2)?;
    let mut host = vec![0.0f32; shape.lens().2];
    let mut rows = vec![];
    for (kernel, tw) in runs {
        let name = || {
            if kernel.is_tiled() {
                format!("{kernel} tw {tw}")
            } else {
                kernel.to_string()
            }
        };
        gpu.fill_nan(&mut out)?;
        gpu.matmul_device(kernel, tw, &da, &db, &mut out, shape)?;
        gpu.synchronize(kernel.entry(tw))?;
        gpu.download_into(&out, &mut host)?;
        let mut row = checked_row(kernel, tw, shape, &host, &checker);
        steps.done(|| format!("{}: first run, download and check", name()));
        if !shape.is_trivial() {
            let mut ms = gpu.time_within(&budget, || {
                gpu.matmul_device(kernel, tw, &da, &db, &mut out, shape)
            })?;
            row.runs = Some(ms.len());
            let median = budget::median(&mut ms);
            row.ms_median = Some(median);
            row.gflops = Some(shape.flops() / (median * 1e-3) / 1e9);
            steps.done(|| format!("{}: warm-ups and {} timed runs", name(), ms.len()));
            bf16_breakdown(gpu, kernel, (&da, &db), shape, &budget, median)?;
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Where the autotuned BF16 product of f32 inputs runs rung 17 (a Hopper), says on stderr
/// what its `ms` (`total`) holds: the conversion of both operands to `bf16` on the device,
/// and the kernel on them, each timed alone as `--suite --precision bf16` and the bench's
/// BF16 rows time them (the kernel on `bf16` inputs, beside cuBLAS on the same bits).
fn bf16_breakdown(
    gpu: &Gpu, kernel: MatmulKernel, (da, db): (&CudaSlice<f32>, &CudaSlice<f32>),
    shape: MatmulShape, budget: &TimeBudget, total: f64,
) -> Result<(), Error> {
    use kernels_gpu_host::gpu::autotune::{self, Tuned};
    if kernel != MatmulKernel::Sgemm(SgemmKernel::AutotunedBf16) {
        return Ok(());
    }
    let Some(Tuned::Half(run)) = autotune::cached(gpu, shape, Precision::Bf16)? else {
        return Ok(());
    };
    let MatmulShape { m, k, n } = shape;
    let convert = || -> Result<_, Error> {
        Ok((
            gpu.convert_half::<half::bf16>(da, m, k, k)?,
            gpu.convert_half::<half::bf16>(db, k, n, n)?,
        ))
    };
    let (a16, b16) = convert()?;
    let convert_ms = budget::median(&mut gpu.time_within(budget, || convert().map(drop))?);
    let mut out = gpu.zeros(shape.lens().2)?;
    let kernel_ms = budget::median(&mut gpu.time_within(budget, || {
        gpu.gemm_half_run_device(run, &a16, &b16, &mut out, shape)
    })?);
    eprintln!(
        "sgemm-autotuned-bf16 on {shape}: {total:.4} ms with the f32 inputs converted to bf16 \
         on the device ({convert_ms:.4} ms alone); the kernel on bf16 inputs, {}: \
         {kernel_ms:.4} ms ({:.0} GFLOP/s), as --suite --precision bf16 and the bench time it",
        run.name(),
        shape.flops() / (kernel_ms * 1e-3) / 1e9
    );
    Ok(())
}

/// `--suite`: every shape of the suite, one line each as it finishes.
fn run_suite(args: &Args, kind: SuiteKind, gpu: Gpu) -> Result<bool, Error> {
    use kernels_gpu_host::gpu::{Cublas, CublasMath};
    use kernels_gpu_host::suite;
    let math = CublasMath::of(args.precision);
    let cublas = Cublas::new(&gpu, math)?;
    let given = args.shapes.as_deref().unwrap_or_default();
    let suite = suite::Suite::new(kind, args.seed, args.count, given);
    let shapes = suite.shapes()?;
    println!(
        "{}, cuBLAS {} ({math}); {}; autotuned {} SGEMM; median of {} event-timed runs of each \
         side, in {} rounds of {} alternating ours and cuBLAS's, after {} warm-ups; inputs \
         from seed {}",
        gpu.info()?,
        cublas.version()?,
        suite.describe(),
        args.precision.name(),
        suite::ROUNDS * args.iters as usize,
        suite::ROUNDS,
        args.iters,
        args.warmup,
        args.seed
    );
    println!("{}", suite::check_note(math));
    println!("{}", suite::header());
    let rows = suite::run(
        &gpu,
        &cublas,
        &shapes,
        (args.warmup as usize, args.iters as usize),
        args.seed,
        |r| println!("{}", suite::line(r)),
    )?;
    println!("{}", suite::summary(&rows, math));
    Ok(rows.iter().all(|r| r.checked()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn args(flags: &[&str]) -> Args {
        Args::try_parse_from(std::iter::once("kernels-gpu-host").chain(flags.iter().copied()))
            .expect("valid flags")
    }

    fn shape(m: usize, k: usize, n: usize) -> MatmulShape {
        MatmulShape::new(m, k, n).unwrap()
    }

    const AUTOTUNED: MatmulKernel = MatmulKernel::Sgemm(SgemmKernel::Autotuned);

    #[test]
    fn without_kernel_runs_everything_up_to_the_threshold_and_the_fast_path_above() {
        let every = args(&["--kernel", "all"]).runs(shape(5, 7, 3)).unwrap();
        // naive once, three tiled kernels at three tile widths, every FP32 SGEMM kernel.
        assert_eq!(
            every.len(),
            10 + MatmulKernel::all_of(Precision::Fp32).len() - 4
        );
        let default = args(&[]);
        assert_eq!(default.runs(shape(2048, 2048, 2048)).unwrap(), every);
        assert_eq!(
            default.runs(shape(2048, 2049, 2048)).unwrap(),
            vec![(AUTOTUNED, TileWidth::Tw16)]
        );
        assert_eq!(
            default.runs(shape(16384, 16384, 16384)).unwrap(),
            vec![(AUTOTUNED, TileWidth::Tw16)]
        );
        // Asked for, everything runs at any size.
        assert_eq!(
            args(&["--kernel", "all"])
                .runs(shape(16384, 16384, 16384))
                .unwrap(),
            every
        );
        assert_eq!(
            args(&["--precision", "tf32"])
                .runs(shape(16384, 16384, 16384))
                .unwrap(),
            vec![(
                MatmulKernel::Sgemm(SgemmKernel::AutotunedTf32),
                TileWidth::Tw16
            )]
        );
    }

    #[test]
    fn suite_flags() {
        use kernels_gpu_host::suite::Suite;
        let suite = |a: &Args| {
            a.suite.map(|kind| {
                Suite::new(
                    kind,
                    a.seed,
                    a.count,
                    a.shapes.as_deref().unwrap_or_default(),
                )
            })
        };
        assert_eq!(suite(&args(&["--suite"])), Some(Suite::Listed));
        assert_eq!(suite(&args(&["--suite", "listed"])), Some(Suite::Listed));
        let random = args(&["--suite", "random", "--seed", "9", "--count", "3"]);
        assert_eq!(suite(&random), Some(Suite::Random { seed: 9, count: 3 }));
        let random = args(&["--suite", "random", "--precision", "tf32"]);
        assert_eq!(
            suite(&random),
            Some(Suite::Random {
                seed: 42,
                count: 40
            })
        );
        assert_eq!(random.precision, Precision::Tf32);
        assert_eq!(args(&[]).suite, None);
        let parse = |flags: &[&str]| {
            Args::try_parse_from(std::iter::once("kernels-gpu-host").chain(flags.iter().copied()))
        };
        // --count without a suite, or a suite with a shape, is refused.
        assert!(parse(&["--count", "3"]).is_err());
        assert!(parse(&["--suite", "random", "--m", "3"]).is_err());
        assert!(parse(&["--suite", "other"]).is_err());
        // --suite given needs --shapes, and --shapes a suite.
        let given = args(&["--suite", "given", "--shapes", "3x4x5,6x7x8"]);
        assert_eq!(
            suite(&given),
            Some(Suite::Given(vec![shape(3, 4, 5), shape(6, 7, 8)]))
        );
        assert!(parse(&["--suite", "given"]).is_err());
        assert!(parse(&["--suite", "given", "--shapes", "3x4"]).is_err());
        assert!(parse(&["--shapes", "3x4x5"]).is_err());
    }

    #[test]
    fn time_budget_default_and_values() {
        let default = args(&[]).budget();
        assert_eq!(default, TimeBudget::new(3, 20, Some(budget::DEFAULT)));
        assert_eq!(
            args(&["--time-budget", "0.25", "--iters", "7", "--warmup", "0"]).budget(),
            TimeBudget::new(0, 7, Some(Duration::from_millis(250)))
        );
        assert_eq!(args(&["--time-budget", "inf"]).budget().limit, None);
        assert!(
            args(&["--time-budget", "inf"])
                .budget_text()
                .starts_with("median of 20 runs after 3")
        );
        assert!(
            args(&[])
                .budget_text()
                .contains("up to 20 runs after up to 3 warm-ups, each phase within 1 s")
        );
        let help = Args::command().render_long_help().to_string();
        // The help's defaults are the constants'.
        assert!(
            help.contains(&format!(
                "[default: {}]",
                budget::limit_name(Some(budget::DEFAULT))
            )),
            "{help}"
        );
        assert!(
            help.contains(&format!(
                "all up to 2^{} multiply-adds",
                spot::FULL_CHECK_MAX_MACS.trailing_zeros()
            )),
            "{help}"
        );
    }
}
