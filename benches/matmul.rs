//! `cargo bench -p host --bench matmul`: the lecture's matmul kernels against cuBLAS.
//!
//! With a GPU, every kernel at every tile width and cuBLAS (FP32 and TF32) run on the
//! lecture's 5120×256×5120 and on 1024³, 2048³ and 4096³, timed with CUDA events:
//!
//! - criterion benchmarks (`<target>/criterion/report/index.html`), named
//!   `<m>x<k>x<n>/<kernel>[/tw<width>]` and `<m>x<k>x<n>/cublas/<fp32|tf32>`; criterion's
//!   throughput in `elem/s` is FLOP/s (one element per FLOP, 2·m·k·n per product);
//! - a summary at a glance (`<target>/criterion/summary/summary.md` and `summary.svg`):
//!   GFLOP/s per kernel and percent of cuBLAS, from its own event-timed medians, with every
//!   result spot-checked against an f64 dot product. `MATMUL_BENCH_SUMMARY=0` skips it.
//!
//! Then the shape suite (`--suite` on the command line: the autotuned SGEMM against cuBLAS
//! in the same math, each ratio, the chosen configuration, the check, the share of the copy
//! bandwidth of memory-bound shapes, and the geometric mean), in full runs whose filter
//! matches `suite` (`cargo bench --bench matmul -- suite` runs only it). Which suite and
//! precision, as the command line's `--suite`, `--seed`, `--count` and `--precision`:
//! `MATMUL_BENCH_SUITE=listed|random|given` (default listed), `MATMUL_BENCH_SUITE_SEED`
//! (default 42), `MATMUL_BENCH_SUITE_COUNT` (default 40), `MATMUL_BENCH_SUITE_SHAPES` (the
//! shapes of `given`, as `--shapes`: `199x849x8263,9x583x4591`),
//! `MATMUL_BENCH_SUITE_PRECISION=fp32|tf32|bf16` (default fp32), e.g.
//! `MATMUL_BENCH_SUITE=random MATMUL_BENCH_SUITE_SEED=7 cargo bench --bench matmul -- suite`.
//!
//! Without a GPU it says so and benchmarks the CPU side instead: the simulator running the
//! kernels, and the f64 reference.
//!
//! Run the executable directly with `--bench` (without it criterion only tests that each
//! benchmark runs once); `--test` is that quick mode, `--list` lists, a filter selects.

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, PlottingBackend, SamplingMode, Throughput,
    measurement::WallTime,
};
use cudarc::driver::CudaSlice;
#[path = "common/bench_report.rs"]
mod bench_report;
use bench_report::{Check, Contender, HALF_NAME, Measurement, Summary};
use kernels_gpu_host::backend::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::plan::bf16::BF16_CONFIGS;
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::plan::packed::PACKED_CONFIGS;
use kernels_gpu_host::problem::error::Result;
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::suite::cube;
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, Precision, TileWidth};
use std::hint::black_box;
use std::time::Duration;

/// The lecture's problem, then square ones.
const GPU_SHAPES: [(usize, usize, usize); 4] =
    [(5120, 256, 5120), cube(1024), cube(2048), cube(4096)];

/// The summary's runs per contender and shape: untimed, then timed (the median is reported).
const SUMMARY_WARMUP: usize = 3;
const SUMMARY_RUNS: usize = 20;
const SEED: u64 = 42;

/// What the command line asks of criterion, as far as this file needs to know.
#[derive(Clone, Debug)]
struct RunKind {
    /// `--list`: name the benchmarks, run nothing.
    list: bool,
    /// `--test`, or no `--bench` (`cargo test --benches`): run each benchmark once.
    test: bool,
    /// `--profile-time`: iterate for a profiler, no analysis.
    profile: bool,
    /// `--exact`: the filter names one benchmark ID exactly.
    exact: bool,
    /// Criterion's positional filter: only benchmarks whose ID (`4096x4096x4096/cublas/fp32`)
    /// it matches (or is, with `--exact`) run, in criterion and in the summary.
    filter: Option<String>,
}

/// Criterion's options that take a value: the word after each is not the filter.
const VALUED_FLAGS: [&str; 17] = [
    "--save-baseline",
    "-s",
    "--baseline",
    "-b",
    "--baseline-lenient",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--profile-time",
    "--plotting-backend",
    "--output-format",
    "--color",
];

impl RunKind {
    fn from_args() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let has = |flag: &str| {
            args.iter()
                .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
        };
        let mut filter = None;
        let mut words = args.iter();
        while let Some(word) = words.next() {
            if VALUED_FLAGS.contains(&word.as_str()) {
                words.next();
            } else if !word.starts_with('-') {
                filter = Some(word.clone());
            }
        }
        Self {
            list: has("--list"),
            test: has("--test") || !has("--bench"),
            profile: has("--profile-time"),
            exact: has("--exact"),
            filter,
        }
    }

    /// Whether criterion runs the benchmark `id`, so the summary measures it too: the
    /// filter is a regular expression, as criterion reads it.
    fn selects(&self, id: &str) -> bool {
        match &self.filter {
            None => true,
            Some(f) if self.exact => id == f,
            Some(f) => {
                regex::Regex::new(f).map_or_else(|_| id.contains(f.as_str()), |r| r.is_match(id))
            }
        }
    }

    /// Whether to measure and write the summary.
    fn summary(&self) -> bool {
        let off = std::env::var("MATMUL_BENCH_SUMMARY")
            .is_ok_and(|v| matches!(v.as_str(), "0" | "off" | "false" | "no"));
        !self.list && !self.profile && !off
    }
}

fn main() {
    let kind = RunKind::from_args();
    let home = bench_report::criterion_home();
    let mut c = Criterion::default()
        .plotting_backend(PlottingBackend::Plotters)
        .output_directory(&home)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let mut all_correct = true;
    match Gpu::new_or_skip("GPU benchmarks") {
        Ok(Some(gpu)) => match gpu_benches(&mut c, &gpu, &kind, &home) {
            Ok(correct) => all_correct = correct,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        },
        Ok(None) => {
            println!(
                "Benchmarking the CPU side instead: the simulator running the kernels, and the f64 \
                 reference (criterion's `elem/s` is FLOP/s: 2·m·k·n per product)."
            );
            cpu_benches(&mut c);
        }
        Err(e) => {
            eprintln!("error: a GPU is present but could not be set up: {e}");
            std::process::exit(1);
        }
    }
    c.final_summary();
    if !kind.list && !kind.test {
        println!(
            "Criterion's HTML report: {}",
            home.join("report/index.html").display()
        );
    }
    if !all_correct {
        eprintln!("error: some results failed the spot check (WRONG in the summary)");
        std::process::exit(1);
    }
}

/// The GPU, its inputs for one shape, and cuBLAS: runs any contender into `out`.
struct Runner<'a> {
    gpu: &'a Gpu,
    cublas: Option<&'a [Cublas; 3]>,
    shape: MatmulShape,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    /// `a` and `b` rounded to BF16, for the BF16 GEMM and cuBLAS BF16 (converted before
    /// any timing).
    bf16: (CudaSlice<u16>, CudaSlice<u16>),
    /// The same BF16 values as `half::bf16`, for rung 17 (on a Hopper only).
    half: Option<(CudaSlice<half::bf16>, CudaSlice<half::bf16>)>,
}

impl Runner<'_> {
    fn run(&self, contender: Contender, out: &mut CudaSlice<f32>) -> Result<()> {
        match contender {
            Contender::Kernel { kernel, tw } => self.gpu.matmul_device(
                kernel,
                tw.unwrap_or(TileWidth::Tw16),
                &self.a,
                &self.b,
                out,
                self.shape,
            ),
            Contender::Bf16Gemm(i) => self.gpu.gemm_bf16_device(
                &BF16_CONFIGS[i],
                &self.bf16.0,
                &self.bf16.1,
                out,
                self.shape,
            ),
            Contender::Packed(i) => {
                self.gpu
                    .matmul_packed_device(PACKED_CONFIGS[i], &self.a, &self.b, out, self.shape)
            }
            Contender::Half => {
                let (a, b) = self.half.as_ref().ok_or(Error::NeedsHopper {
                    entry: HALF_NAME.to_owned(),
                    device: (0, 0),
                })?;
                self.gpu
                    .gemm_half_auto_device(a, b, out, self.shape)
                    .map(drop)
            }
            Contender::Cublas(math) => {
                let handles = self.cublas.expect("cuBLAS contenders only run with cuBLAS");
                let handle = handles
                    .iter()
                    .find(|h| h.math() == math)
                    .expect("one handle per math mode");
                match math {
                    CublasMath::Bf16 => {
                        handle.gemm_bf16(&self.bf16.0, &self.bf16.1, out, self.shape)
                    }
                    _ => handle.sgemm(&self.a, &self.b, out, self.shape),
                }
            }
        }
    }
}

fn gpu_benches(
    c: &mut Criterion, gpu: &Gpu, kind: &RunKind, home: &std::path::Path,
) -> Result<bool> {
    let info = gpu.info()?;
    let device = format!(
        "{} (sm_{}{}, {:.1} GiB)",
        info.name,
        info.compute_capability.0,
        info.compute_capability.1,
        info.total_memory_bytes as f64 / (1u64 << 30) as f64
    );
    let mut driver = format!(
        "CUDA driver API {}.{}",
        info.driver_api_version / 1000,
        info.driver_api_version % 1000 / 10
    );
    let mut notes = vec![];

    let cublas = if Cublas::is_available() {
        match setup_cublas(gpu, &mut driver, &mut notes) {
            Ok(handles) => Some(handles),
            Err(e) => {
                println!("cuBLAS could not be set up ({e}): benchmarking the kernels only.");
                notes.push(format!(
                    "cuBLAS could not be set up ({e}): no cuBLAS baseline."
                ));
                None
            }
        }
    } else {
        println!("cuBLAS (libcublas.so) not found: benchmarking the lecture kernels only.");
        notes.push("cuBLAS (libcublas.so) not found: no cuBLAS baseline.".to_owned());
        None
    };
    for var in ["NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATE_SINGLE_PRECISION"] {
        if let Ok(v) = std::env::var(var) {
            notes.push(format!(
                "{var}={v} is set: it can change what cuBLAS FP32/TF32 compute."
            ));
        }
    }
    // Rung 17 runs on a Hopper only.
    let hopper = info.compute_capability == (9, 0);
    let contenders: Vec<Contender> = Contender::all()
        .into_iter()
        .filter(|c| cublas.is_some() || !matches!(c, Contender::Cublas(_)))
        .filter(|c| hopper || *c != Contender::Half)
        .collect();
    let (warmup, runs) = if kind.test {
        (1, 2)
    } else {
        (SUMMARY_WARMUP, SUMMARY_RUNS)
    };

    println!("GPU: {device}; {driver}");
    println!(
        "Criterion's throughput `elem/s` is FLOP/s here: one element per FLOP, \
         2·m·k·n per product."
    );
    let mut measurements = vec![];
    for (m, k, n) in GPU_SHAPES {
        let shape = MatmulShape::new(m, k, n)?;
        let (la, lb, lo) = shape.lens();
        let mut rng = Rng::new(SEED);
        let (a, b) = (rng.uniform(la), rng.uniform(lb));
        let runner = Runner {
            gpu,
            cublas: cublas.as_ref(),
            shape,
            a: gpu.upload(&a)?,
            b: gpu.upload(&b)?,
            bf16: (gpu.upload_bf16(&a)?, gpu.upload_bf16(&b)?),
            half: match hopper {
                true => Some((gpu.upload_half(&a)?, gpu.upload_half(&b)?)),
                false => None,
            },
        };
        let mut out = gpu.zeros(lo)?;

        let id = |c: Contender| match c.variant() {
            Some(variant) => format!("{m}x{k}x{n}/{}/{variant}", c.family()),
            None => format!("{m}x{k}x{n}/{}", c.family()),
        };
        if kind.summary() {
            for &contender in contenders.iter().filter(|&&c| kind.selects(&id(c))) {
                // Check the result first: zeros are never right for inputs in [0, 1).
                gpu.stream()
                    .memset_zeros(&mut out)
                    .map_err(|source| Error::Driver {
                        call: "cuMemsetD8Async",
                        source,
                    })?;
                runner.run(contender, &mut out)?;
                let host_out = gpu.download(&out)?;
                let bound = bench_report::bound_for(contender, shape.k);
                let check = kernels_gpu_host::check::spot::spot_check(
                    &a,
                    &b,
                    &host_out,
                    shape,
                    kernels_gpu_host::check::spot::SAMPLES,
                    bound,
                );
                let mut ms = gpu.time_ms(warmup, runs, || runner.run(contender, &mut out))?;
                let measurement = Measurement {
                    contender,
                    shape,
                    ms_median: median(&mut ms),
                    ms_min: ms.iter().copied().fold(f64::INFINITY, f64::min),
                    runs,
                    check: Some(check),
                };
                print_measurement(&measurement, &check);
                measurements.push(measurement);
            }
        }

        let mut group = c.benchmark_group(format!("{m}x{k}x{n}"));
        group
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Elements(shape.flops() as u64));
        for &contender in &contenders {
            bench_gpu(&mut group, &runner, contender, &mut out);
        }
        group.finish();
    }
    let suite_correct = shape_suite(gpu, cublas.as_ref(), kind)?;

    if !kind.summary() {
        return Ok(suite_correct);
    }
    if measurements.is_empty() {
        // A filter that selects no kernel run (`-- suite`, or one matching nothing).
        println!("no kernel run matched the filter: no summary written");
        return Ok(suite_correct);
    }
    let all_correct = suite_correct && measurements.iter().all(|m| m.check.is_none_or(|c| c.ok()));
    let summary = Summary {
        device,
        driver,
        date: bench_report::utc_now(),
        method: format!(
            "median of {runs} runs per implementation and shape, each bracketed by its own pair \
             of CUDA events, after {warmup} untimed runs; inputs uniform in [0, 1) (seed {SEED}); \
             GFLOP/s = 2·m·k·n / median time{}",
            if kind.test {
                " (quick test mode: not a measurement)"
            } else {
                ""
            }
        ),
        notes,
        measurements,
    };
    // Quick test runs and filtered runs write beside, not over, a full summary.
    let dir = home.join(match (kind.test, &kind.filter) {
        (true, _) => "summary-test",
        (false, Some(_)) => "summary-filtered",
        (false, None) => "summary",
    });
    println!("\n{}", summary.overview());
    match summary.write(&dir) {
        Ok(files) => {
            println!("Summary: {}", files.markdown.display());
            println!("Chart:   {}", files.svg.display());
        }
        Err(e) => {
            eprintln!("error: writing the summary to {}: {e}", dir.display());
            std::process::exit(1);
        }
    }
    Ok(all_correct)
}

/// The shape suite (`kernels_gpu_host::suite`, as `--suite` on the command line): the
/// autotuned SGEMM against cuBLAS in the same math on the suite's shapes
/// ([`suite_from_env`]), with each ratio and their geometric mean. It runs in full benchmark
/// runs whose filter (if any) matches `suite`, and needs cuBLAS. Returns whether every
/// result passed its spot check.
fn shape_suite(gpu: &Gpu, cublas: Option<&[Cublas; 3]>, kind: &RunKind) -> Result<bool> {
    use kernels_gpu_host::suite;
    if kind.list || kind.test || kind.profile || !kind.selects("suite") {
        return Ok(true);
    }
    let (chosen, precision) = match suite_from_env() {
        Ok(choice) => choice,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let Some(handle) = cublas.and_then(|h| h.iter().find(|h| h.math().precision() == precision))
    else {
        println!("shape suite skipped: it needs cuBLAS");
        return Ok(true);
    };
    println!(
        "\nshape suite: {}; autotuned {} SGEMM vs {}, median of {SUMMARY_RUNS} runs after \
         {SUMMARY_WARMUP} warm-ups; inputs from seed {SEED}",
        chosen.describe(),
        precision.name(),
        handle.math()
    );
    println!("{}", suite::check_note(handle.math()));
    println!("{}", suite::header());
    let rows = suite::run(
        gpu,
        handle,
        &chosen.shapes()?,
        (SUMMARY_WARMUP, SUMMARY_RUNS),
        SEED,
        |r| println!("{}", suite::line(r)),
    )?;
    println!("{}", suite::summary(&rows, handle.math()));
    Ok(rows.iter().all(|r| r.checked()))
}

/// The suite and precision the `MATMUL_BENCH_SUITE*` variables name (see the crate docs),
/// or what is wrong with them.
fn suite_from_env() -> std::result::Result<(kernels_gpu_host::suite::Suite, Precision), String> {
    use kernels_gpu_host::suite::{Suite, SuiteKind};
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let number = |name: &str, default: &str| {
        let v = var(name, default);
        v.parse::<u64>()
            .map_err(|_| format!("{name}={v} is not a number"))
    };
    let kind = var("MATMUL_BENCH_SUITE", "listed");
    let kind = SuiteKind::from_name(&kind).ok_or(format!(
        "MATMUL_BENCH_SUITE={kind}: listed, random or given"
    ))?;
    let precision = var("MATMUL_BENCH_SUITE_PRECISION", "fp32");
    let precision = Precision::from_name(&precision).ok_or(format!(
        "MATMUL_BENCH_SUITE_PRECISION={precision}: fp32, tf32 or bf16"
    ))?;
    let seed = number("MATMUL_BENCH_SUITE_SEED", "42")?;
    let count = number("MATMUL_BENCH_SUITE_COUNT", "40")? as usize;
    let given = match (kind, std::env::var("MATMUL_BENCH_SUITE_SHAPES")) {
        (SuiteKind::Given, Ok(list)) => kernels_gpu_host::suite::parse_shapes(&list)
            .map_err(|e| format!("MATMUL_BENCH_SUITE_SHAPES: {e}"))?,
        (SuiteKind::Given, Err(_)) => {
            return Err("MATMUL_BENCH_SUITE=given runs MATMUL_BENCH_SUITE_SHAPES (m×k×n,…)".into());
        }
        _ => vec![],
    };
    Ok((Suite::new(kind, seed, count, &given), precision))
}

/// One cuBLAS handle per math mode (so no mode switches between timed calls); adds the
/// cuBLAS version to `driver` and the math modes cuBLAS reports to `notes`.
fn setup_cublas(gpu: &Gpu, driver: &mut String, notes: &mut Vec<String>) -> Result<[Cublas; 3]> {
    let handles = CublasMath::ALL.map(|math| Cublas::new(gpu, math));
    let handles = match handles {
        [Ok(fp32), Ok(tf32), Ok(bf16)] => [fp32, tf32, bf16],
        [Err(e), _, _] | [_, Err(e), _] | [_, _, Err(e)] => return Err(e),
    };
    let v = handles[0].version()?;
    *driver += &format!(", cuBLAS {}.{}.{}", v / 10_000, v % 10_000 / 100, v % 100);
    let mut modes = vec![];
    for h in &handles {
        let reported = h.reported_mode()?;
        if reported != h.math().mode() {
            notes.push(format!(
                "{} asked for {:?}, but cuBLAS reports {reported:?}.",
                h.math(),
                h.math().mode()
            ));
        }
        modes.push(format!("{} = {reported:?}", h.math()));
    }
    notes.push(format!(
        "cuBLAS math modes, as cublasGetMathMode reports them: {}.",
        modes.join(", ")
    ));
    Ok(handles)
}

fn print_measurement(m: &Measurement, check: &Check) {
    println!(
        "summary {:>14} {:<26} {:>10.3} ms {:>10.0} GFLOP/s  check {}",
        m.shape.to_string(),
        m.contender.label(),
        m.ms_median,
        m.gflops(),
        if check.ok() {
            "ok".to_owned()
        } else {
            format!(
                "WRONG (error {:.1e} > bound {:.1e})",
                check.max_scaled_err, check.bound
            )
        }
    );
}

/// One criterion benchmark of `contender`, timed with CUDA events.
fn bench_gpu(
    group: &mut BenchmarkGroup<'_, WallTime>, runner: &Runner<'_>, contender: Contender,
    out: &mut CudaSlice<f32>,
) {
    let mut routine = |b: &mut criterion::Bencher<'_, WallTime>| {
        b.iter_custom(|iters| {
            runner
                .gpu
                .time_batch(iters, || runner.run(contender, out))
                .unwrap_or_else(|e| panic!("{contender} on {}: {e}", runner.shape))
        })
    };
    match contender.variant() {
        Some(variant) => {
            group.bench_function(BenchmarkId::new(contender.family(), variant), &mut routine);
        }
        None => {
            group.bench_function(contender.family(), &mut routine);
        }
    }
}

/// Without a GPU: the simulator on a small shape, and the f64 reference.
fn cpu_benches(c: &mut Criterion) {
    let sim = Simulator::default();
    let shape = MatmulShape::new(32, 32, 32).expect("a small shape");
    let mut rng = Rng::new(SEED);
    let (a, b) = (rng.uniform(32 * 32), rng.uniform(32 * 32));
    let mut group = c.benchmark_group("simulator-32x32x32");
    group.throughput(Throughput::Elements(shape.flops() as u64));
    for (kernel, tw) in [
        (MatmulKernel::Naive, TileWidth::Tw16),
        (MatmulKernel::TiledStatic, TileWidth::Tw16),
    ] {
        let contender = Contender::kernel(kernel, tw);
        let mut routine = |bch: &mut criterion::Bencher<'_, WallTime>| {
            bch.iter(|| {
                sim.matmul(kernel, tw, black_box(&a), black_box(&b), shape)
                    .unwrap_or_else(|e| panic!("{contender} in the simulator: {e}"))
            })
        };
        match contender.variant() {
            Some(variant) => {
                group.bench_function(BenchmarkId::new(contender.family(), variant), &mut routine);
            }
            None => {
                group.bench_function(contender.family(), &mut routine);
            }
        }
    }
    group.finish();

    let (m, k, n) = (256, 256, 256);
    let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));
    let mut group = c.benchmark_group("cpu-reference-f64");
    group.throughput(Throughput::Elements(2 * (m * k * n) as u64));
    group.bench_function(
        BenchmarkId::new("matmul_f64", format!("{m}x{k}x{n}")),
        |bch| {
            bch.iter(|| {
                kernels_gpu_host::check::reference::matmul_f64(
                    black_box(&a),
                    black_box(&b),
                    m,
                    k,
                    n,
                )
            })
        },
    );
    group.finish();
}
