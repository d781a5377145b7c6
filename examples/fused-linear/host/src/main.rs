//! `fused-linear`: `out = relu(x @ W + b)` as one kernel from the example's own kernel crate
//! (an SGEMM configuration with a bias-relu epilogue), against the unfused sequences — the
//! same SGEMM, or cuBLAS, then a separate bias-relu kernel — all checked against an f64 CPU
//! reference and against each other, and timed with CUDA events. Without a GPU it runs the
//! kernels in the CPU simulator instead.

use clap::Parser;
use fused_linear::{FusedLinearGpu, Operands, UNFUSED_MATMUL};
use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::gpu::{Cublas, CublasMath};
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::problem::error::{Error, Result};
use kernels_gpu_host::sim::Simulator;
use std::process::ExitCode;

/// A large square layer and the lecture's shape (where the separate pass costs about a
/// fifth of the GEMM): x is m×k, W is k×n.
const GPU_SHAPES: [(usize, usize, usize); 2] = [(4096, 4096, 4096), (5120, 256, 5120)];
/// Small enough for the simulator in seconds; no dimension a multiple of the tile.
const SIM_SHAPE: (usize, usize, usize) = (67, 45, 71);

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// A shape MxKxN to run (x is M×K, W is K×N); repeat for several [default: 4096x4096x4096
    /// and 5120x256x5120 on a GPU, 67x45x71 in the simulator].
    #[arg(long = "shape", value_parser = str::parse::<MatmulShape>)]
    shapes: Vec<MatmulShape>,
    /// Timed runs per measurement (the median is reported).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    iters: u32,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 5)]
    warmup: u32,
    /// Seed of the random operands (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Run in the CPU simulator even if a GPU is present.
    #[arg(long)]
    simulate: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let outcome = if args.simulate {
        run_sim(&args)
    } else {
        match Gpu::new() {
            Ok(gpu) => run_gpu(&args, &gpu),
            Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
                println!("no GPU ({e}); running the fused kernel in the CPU simulator instead");
                run_sim(&args)
            }
            Err(e) => Err(e),
        }
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: a result is wrong (see the `ok` column)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn shapes(args: &Args, default: &[(usize, usize, usize)]) -> Result<Vec<MatmulShape>> {
    if !args.shapes.is_empty() {
        return Ok(args.shapes.clone());
    }
    default
        .iter()
        .map(|&(m, k, n)| MatmulShape::new(m, k, n))
        .collect()
}

/// How `out` compares with the reference and with the other sequence's output.
fn verdict(
    out: &[f32], other: &[f32], reference: &kernels_gpu_host::check::reference::Reference, k: u32,
) -> String {
    let acc = fused_linear::accuracy(out, reference);
    let same = match fused_linear::first_mismatch(out, other) {
        None => "bitwise equal".to_owned(),
        Some(_) => format!("max diff {:.2e}", fused_linear::max_abs_diff(out, other)),
    };
    format!(
        "max_abs {:.2e}, {} the f32 bound; {same}",
        acc.max_abs_err,
        if fused_linear::within_bound(&acc, k) {
            "within"
        } else {
            "OUTSIDE"
        }
    )
}

/// The simulator: the fused kernel and the simulated unfused kernels against the unfused
/// CPU sequence and the f64 reference.
fn run_sim(args: &Args) -> Result<bool> {
    let sim = Simulator::default();
    let mut all_ok = true;
    for shape in shapes(args, &[SIM_SHAPE])? {
        println!(
            "CPU simulator (checked barriers and shared memory): \
             {} on x {}×{} @ W {}×{} + b, seed {}",
            fused_linear::FUSED_ENTRY,
            shape.m,
            shape.k,
            shape.k,
            shape.n,
            args.seed
        );
        let ops = Operands::random(shape, args.seed);
        let reference = fused_linear::reference_f64(&ops.x, &ops.w, &ops.b, shape);
        let cpu = fused_linear::cpu_unfused(&ops.x, &ops.w, &ops.b, shape);
        let fused = fused_linear::sim::fused(&sim, &ops)?;
        let unfused = fused_linear::sim::unfused(&sim, &ops)?;
        let clamped = cpu.iter().filter(|&&v| v == 0.0).count();
        println!("  relu clamps {clamped} of {} outputs to 0", shape.lens().2);
        for (name, out) in [
            ("fused (simulated)", &fused),
            ("unfused (simulated)", &unfused),
        ] {
            let acc = fused_linear::accuracy(out, &reference);
            let ok = fused_linear::within_bound(&acc, shape.k)
                && fused_linear::first_mismatch(out, &cpu).is_none();
            all_ok &= ok;
            println!(
                "  {name:<20} vs CPU unfused sequence: {}  ok: {}",
                verdict(out, &cpu, &reference, shape.k),
                if ok { "yes" } else { "NO" }
            );
        }
    }
    Ok(all_ok)
}

fn run_gpu(args: &Args, gpu: &Gpu) -> Result<bool> {
    let info = gpu.info()?;
    let fl = FusedLinearGpu::new(gpu)?;
    let cublas = Cublas::new(gpu, CublasMath::Fp32)?;
    println!(
        "{info}, cuBLAS {} ({}), seed {}; median of {} event-timed runs after {} warm-ups",
        cublas.version()?,
        CublasMath::Fp32.label(),
        args.seed,
        args.iters,
        args.warmup
    );
    println!(
        "fused: {} (one launch); gemm: {} alone; pass: {} (reads the product back); \
         cuBLAS: cublasSgemm\n",
        fused_linear::FUSED_ENTRY,
        UNFUSED_MATMUL.entry(kernels_gpu_host::TileWidth::Tw16),
        fused_linear::BIAS_RELU_ENTRY,
    );
    println!(
        "{:<16} {:>8} {:>8} {:>8} {:>10} {:>8} {:>11} {:>10} {:>10} {:>11}  {:<14} ok",
        "m×k×n",
        "fused",
        "gemm",
        "pass",
        "gemm+pass",
        "cuBLAS",
        "cuBLAS+pass",
        "fused/gemm",
        "pass saved",
        "vs cuBLAS+",
        "fused=unfused"
    );
    let mut all_ok = true;
    let mut notes = vec![];
    for shape in shapes(args, &GPU_SHAPES)? {
        let ops = Operands::random(shape, args.seed);
        let reference = fused_linear::reference_f64(&ops.x, &ops.w, &ops.b, shape);
        let len = shape.lens().2;
        let (x, w, b) = (
            gpu.upload(&ops.x)?,
            gpu.upload(&ops.w)?,
            gpu.upload(&ops.b)?,
        );
        // NaN poison: an element a kernel fails to write shows up as non-finite.
        let poison = vec![f32::NAN; len];
        let mut out_f = gpu.upload(&poison)?;
        let (mut y, mut out_u) = (gpu.upload(&poison)?, gpu.upload(&poison)?);

        fl.fused_device(&x, &w, &b, &mut out_f, shape)?;
        gpu.synchronize(fused_linear::FUSED_ENTRY)?;
        let fused = gpu.download(&out_f)?;
        fl.unfused_device(None, &x, &w, &b, &mut y, &mut out_u, shape)?;
        gpu.synchronize("sgemm + bias_relu")?;
        let unfused = gpu.download(&out_u)?;

        let (acc_f, acc_u) = (
            fused_linear::accuracy(&fused, &reference),
            fused_linear::accuracy(&unfused, &reference),
        );
        let ok = fused_linear::within_bound(&acc_f, shape.k)
            && fused_linear::within_bound(&acc_u, shape.k);
        all_ok &= ok;
        let same = match fused_linear::first_mismatch(&fused, &unfused) {
            None => "bitwise equal".to_owned(),
            Some(_) => format!(
                "max diff {:.1e}",
                fused_linear::max_abs_diff(&fused, &unfused)
            ),
        };
        notes.push(format!(
            "{shape}: fused max_abs_err {:.2e}, unfused {:.2e} (f64 reference)",
            acc_f.max_abs_err, acc_u.max_abs_err
        ));

        let (warmup, iters) = (args.warmup as usize, args.iters as usize);
        let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
            Ok(median(&mut gpu.time_ms(warmup, iters, f)?))
        };
        let fused_ms = time(&mut || fl.fused_device(&x, &w, &b, &mut out_f, shape))?;
        let gemm_ms = time(&mut || {
            gpu.matmul_device(
                UNFUSED_MATMUL,
                kernels_gpu_host::TileWidth::Tw16,
                &x,
                &w,
                &mut y,
                shape,
            )
        })?;
        let pass_ms = time(&mut || fl.bias_relu_device(&y, &b, &mut out_u, shape))?;
        let unfused_ms =
            time(&mut || fl.unfused_device(None, &x, &w, &b, &mut y, &mut out_u, shape))?;
        let cublas_ms = time(&mut || cublas.sgemm(&x, &w, &mut y, shape))?;
        let cublas_unfused_ms =
            time(&mut || fl.unfused_device(Some(&cublas), &x, &w, &b, &mut y, &mut out_u, shape))?;
        println!(
            "{:<16} {:>8.3} {:>8.3} {:>8.3} {:>10.3} {:>8.3} {:>11.3} {:>9.3}× {:>9.0}% {:>10.3}×  {:<14} {}",
            shape.to_string(),
            fused_ms,
            gemm_ms,
            pass_ms,
            unfused_ms,
            cublas_ms,
            cublas_unfused_ms,
            fused_ms / gemm_ms,
            100.0 * (unfused_ms - fused_ms) / pass_ms,
            cublas_unfused_ms / fused_ms,
            same,
            if ok { "yes" } else { "NO" }
        );
    }
    println!();
    for note in notes {
        println!("{note}");
    }
    println!(
        "fused/gemm: the epilogue's cost (1 = free); pass saved: (gemm+pass − fused) / pass; \
         vs cuBLAS+: (cuBLAS + pass) / fused, above 1 is faster than cuBLAS plus the pass"
    );
    Ok(all_ok)
}
