//! `cust-host`: `kernels-gpu`'s kernels launched with cust, each result checked against
//! f64 on the CPU and timed with CUDA events, printed as the main binary prints them.
//!
//! ```text
//! cust-host [--op all|matmul|sum|sliding] [--m M] [--k K] [--n N] [--sgemm tuned|all|NAME]
//!           [--precision fp32|tf32|bf16] [--len N] [--window W] [--iters N] [--warmup N]
//!           [--seed S]
//! ```
//!
//! `--precision` (default fp32) is what `tuned` chooses among and `all` runs: a tuned row
//! is always of the precision asked for. Every row says its precision and how it was
//! checked: every output against the f64 product, within that precision's error bound
//! (`kernels_gpu::sgemm::Precision::dot_error_bound`).

use cust_host::{CustGpu, Error};
use cust_plan::reference::{self, median};
use cust_plan::{Kernel, args::MatmulPlan};
use kernels_gpu::sgemm::Precision;
use std::process::ExitCode;

/// The command line, with the main binary's defaults on a GPU.
struct Args {
    op: String,
    m: usize,
    k: usize,
    n: usize,
    sgemm: String,
    precision: Precision,
    len: usize,
    window: usize,
    iters: usize,
    warmup: usize,
    seed: u64,
}

const USAGE: &str = "usage: cust-host [--op all|matmul|sum|sliding] [--m M] [--k K] [--n N] \
                     [--sgemm tuned|all|NAME] [--precision fp32|tf32|bf16] [--len N] \
                     [--window W] [--iters N] [--warmup N] [--seed S]";

impl Args {
    fn parse(mut words: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut a = Args {
            op: "all".into(),
            m: 5120,
            k: 256,
            n: 5120,
            sgemm: "tuned".into(),
            precision: Precision::Fp32,
            len: 1 << 28,
            window: 2,
            iters: 20,
            warmup: 3,
            seed: 42,
        };
        while let Some(flag) = words.next() {
            let value = words.next().ok_or(format!("{flag} needs a value"))?;
            let number = || -> Result<usize, String> {
                value
                    .parse()
                    .map_err(|_| format!("{flag}: `{value}` is not a number"))
            };
            match flag.as_str() {
                "--op" => a.op = value.clone(),
                "--sgemm" => a.sgemm = value.clone(),
                "--precision" => {
                    a.precision = Precision::from_name(&value)
                        .ok_or(format!("--precision {value}: one of fp32, tf32, bf16"))?
                }
                "--m" => a.m = number()?,
                "--k" => a.k = number()?,
                "--n" => a.n = number()?,
                "--len" => a.len = number()?,
                "--window" => a.window = number()?,
                "--iters" => a.iters = number()?.max(1),
                "--warmup" => a.warmup = number()?,
                "--seed" => a.seed = number()? as u64,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if !["all", "matmul", "sum", "sliding"].contains(&a.op.as_str()) {
            return Err(format!("--op {}: one of all, matmul, sum, sliding", a.op));
        }
        Ok(a)
    }

    fn runs(&self, op: &str) -> bool {
        self.op == "all" || self.op == op
    }
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
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

/// Returns whether every checked result was within its bound.
fn run(args: &Args) -> Result<bool, Error> {
    let gpu = CustGpu::new()?;
    eprintln!(
        "{} through cust: median of {} runs after {} warm-up",
        gpu.info()?,
        args.iters,
        args.warmup
    );
    let mut ok = true;
    if args.runs("matmul") {
        ok &= matmul(args, &gpu)?;
    }
    if args.runs("sum") || args.runs("sliding") {
        vector(args, &gpu)?;
    }
    Ok(ok)
}

/// The SGEMM configurations `--sgemm` selects: `tuned` times the autotuner's candidates of
/// `--precision` on this shape and keeps the fastest; `all` is every configuration of
/// `--precision`; a name is that configuration, whatever its precision (its row says it).
fn sgemm_kernels(
    args: &Args, time: &dyn Fn(Kernel, usize, usize) -> Result<f64, Error>,
) -> Result<Vec<Kernel>, Error> {
    match args.sgemm.as_str() {
        "all" => Ok(Kernel::sgemm_of(args.precision).collect()),
        "tuned" => {
            let mut best: Option<(Kernel, f64)> = None;
            for k in Kernel::sgemm_candidates(args.precision) {
                match time(k, 2, 5) {
                    Ok(ms) if best.is_none_or(|(_, b)| ms < b) => best = Some((k, ms)),
                    Ok(_) | Err(Error::Launch(_)) => {} // a shape this device refuses
                    Err(e) => return Err(e),
                }
            }
            let (k, ms) = best.expect("some candidate launches");
            eprintln!(
                "tuned among the {} candidates: {} ({ms:.3} ms, median of 5)",
                args.precision.name(),
                k.name()
            );
            Ok(vec![k])
        }
        name => Kernel::by_name(name)
            .filter(Kernel::is_matmul)
            .map(|k| vec![k])
            .ok_or_else(|| Error::EntryNotFound(name.to_owned())),
    }
}

/// Returns whether every result was within its bound.
fn matmul(args: &Args, gpu: &CustGpu) -> Result<bool, Error> {
    let (m, k, n) = (args.m, args.k, args.n);
    let a = reference::uniform(args.seed, m * k);
    let b = reference::uniform(args.seed ^ 0x5eed, k * n);
    let r = reference::matmul(&a, &b, m, k, n);
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let time = |kernel: Kernel, warmup: usize, iters: usize| -> Result<f64, Error> {
        let mut out = gpu.zeros(m * n)?;
        let mut ms = gpu.time_ms(warmup, iters, || {
            gpu.matmul(kernel, &da, &db, &mut out, (m, k, n))
        })?;
        Ok(median(&mut ms))
    };
    let kernels: Vec<Kernel> = Kernel::lecture()
        .chain(sgemm_kernels(args, &time)?)
        .collect();
    let width = kernels
        .iter()
        .map(|k| k.name().len())
        .max()
        .unwrap_or(0)
        .max(20);
    println!(
        "{:<width$} {:>9} {:>4} {:>16} {:>10} {:>10} {:>11} {:>10} {:>10} {:>5}",
        "kernel", "precision", "tw", "m×k×n", "ms", "GFLOP/s", "max_abs", "scaled", "bound", "ok"
    );
    let mut all_ok = true;
    for kernel in kernels {
        // NaN poison: an output the kernel fails to write shows up as an infinite error.
        let mut out = gpu.upload(&vec![f32::NAN; m * n])?;
        gpu.matmul(kernel, &da, &db, &mut out, (m, k, n))?;
        let check = r.check(&gpu.download(&out)?, kernel.precision());
        all_ok &= check.ok();
        let plan = MatmulPlan::new(kernel, (m, k, n), (m * k, k * n, m * n))?;
        let (ms, gflops) = if plan.launch.is_some() {
            let ms = time(kernel, args.warmup, args.iters)?;
            (
                format!("{ms:.3}"),
                format!("{:.0}", plan.flops() / (ms * 1e-3) / 1e9),
            )
        } else {
            ("-".into(), "-".into())
        };
        println!(
            "{:<width$} {:>9} {:>4} {:>16} {:>10} {:>10} {:>11.3e} {:>10.3e} {:>10.3e} {:>5}",
            kernel.name(),
            check.precision.name(),
            kernel.tile_width().map_or("-".into(), |t| t.to_string()),
            format!("{m}×{k}×{n}"),
            ms,
            gflops,
            check.max_abs,
            check.max_scaled,
            check.bound,
            if check.ok() { "yes" } else { "NO" }
        );
    }
    println!(
        "Each row: every output against the f64 product; scaled = max |out − exact| / Σ|a||b|, \
         bound = that of the row's precision (k·2⁻²³ plus the inputs' rounding)."
    );
    Ok(all_ok)
}

fn vector(args: &Args, gpu: &CustGpu) -> Result<(), Error> {
    let x = reference::uniform(args.seed, args.len);
    let dx = gpu.upload(&x)?;
    println!(
        "{:<16} {:>11} {:>7} {:>9} {:>8} {:>11}",
        "kernel", "n", "window", "ms", "GB/s", "max_abs"
    );
    let row = |name: &str, window: Option<usize>, ms: f64, bytes: f64, err: f64| {
        println!(
            "{:<16} {:>11} {:>7} {:>9.4} {:>8.0} {:>11.3e}",
            name,
            args.len,
            window.map_or("-".into(), |w| w.to_string()),
            ms,
            bytes / (ms * 1e-3) / 1e9,
            err
        );
    };
    if args.runs("sum") {
        let exact = reference::sum(&x);
        let mut scratch = gpu.sum_scratch()?;
        for kernel in Kernel::reduce() {
            gpu.sum(kernel, &dx, &mut scratch)?;
            let err = reference::max_abs_error(&gpu.download(&scratch.result)?, &[exact]);
            let mut ms = gpu.time_ms(args.warmup, args.iters, || {
                gpu.sum(kernel, &dx, &mut scratch)
            })?;
            row(
                kernel.name(),
                None,
                median(&mut ms),
                4.0 * args.len as f64,
                err,
            );
        }
    }
    if args.runs("sliding") {
        let w = args.window;
        let r = reference::sliding(&x, w);
        let mut out = gpu.upload(&vec![f32::NAN; r.len()])?;
        for kernel in Kernel::sliding() {
            gpu.sliding(kernel, &dx, w, &mut out)?;
            let err = reference::max_abs_error(&gpu.download(&out)?, &r);
            let mut ms = gpu.time_ms(args.warmup, args.iters, || {
                gpu.sliding(kernel, &dx, w, &mut out)
            })?;
            let bytes = 4.0 * (args.len + r.len()) as f64;
            row(kernel.name(), Some(w), median(&mut ms), bytes, err);
        }
    }
    println!(
        "Each row: max_abs = max |out − exact| over every output against its f64 reference \
         (reported, not held to a bound)."
    );
    Ok(())
}
