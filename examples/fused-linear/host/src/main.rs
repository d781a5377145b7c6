//! `fused-linear`: `out = relu(x @ W + b)` as one kernel from the example's own kernel crate,
//! against the unfused sequence (the lecture's tiled matmul, then a bias kernel, then a relu
//! kernel), both checked against an f64 CPU reference and against each other, and timed
//! with CUDA events. Without a GPU it runs the fused kernel in the CPU simulator instead.

use clap::Parser;
use fused_linear::{FusedLinearGpu, Operands, UNFUSED_MATMUL};
use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::error::{Error, Result};
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::report::median;
use kernels_gpu_host::sim::Simulator;
use std::process::ExitCode;

/// The shape and the lecture's: x is m×k, W is k×n.
const GPU_SHAPES: [(usize, usize, usize); 2] = [(4096, 1024, 4096), (5120, 256, 5120)];
/// Small enough for the simulator in seconds; no dimension a multiple of the tile.
const SIM_SHAPE: (usize, usize, usize) = (67, 45, 71);

#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// A shape MxKxN to run (x is M×K, W is K×N); repeat for several [default: 4096x1024x4096
    /// and 5120x256x5120 on a GPU, 67x45x71 in the simulator].
    #[arg(long = "shape", value_parser = parse_shape)]
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

fn parse_shape(s: &str) -> std::result::Result<MatmulShape, String> {
    let dims: Vec<usize> = s
        .split(['x', '×'])
        .map(|d| d.trim().parse::<usize>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| format!("`{s}`: {e}; expected MxKxN, e.g. 4096x1024x4096"))?;
    let [m, k, n] = dims[..] else {
        return Err(format!("`{s}`: expected three dimensions MxKxN"));
    };
    MatmulShape::new(m, k, n).map_err(|e| e.to_string())
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
    out: &[f32], other: &[f32], reference: &kernels_gpu_host::reference::Reference, k: u32,
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
            "CPU simulator (one host thread per GPU thread, checked barriers and shared memory): \
             fused_linear_tw16 on x {}×{} @ W {}×{} + b, seed {}",
            shape.m, shape.k, shape.k, shape.n, args.seed
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
    let (kernel, tw) = UNFUSED_MATMUL;
    println!(
        "{info}, seed {}; median of {} event-timed runs after {} warm-ups",
        args.seed, args.iters, args.warmup
    );
    println!(
        "fused: {} (one launch); unfused: {} then {} then {} (x@W and x@W+b in global memory)\n",
        fused_linear::FUSED_ENTRY,
        kernel.entry(tw),
        fused_linear::BIAS_ENTRY,
        fused_linear::RELU_ENTRY
    );
    println!(
        "{:<16} {:>9} {:>11} {:>9} {:>8} {:>8} {:>8} {:>10}  {:<18} ok",
        "m×k×n",
        "fused ms",
        "unfused ms",
        "matmul",
        "+ bias",
        "+ relu",
        "speedup",
        "GFLOP/s",
        "fused vs unfused"
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
        let (mut y, mut z, mut out_u) = (
            gpu.upload(&poison)?,
            gpu.upload(&poison)?,
            gpu.upload(&poison)?,
        );

        fl.fused_device(&x, &w, &b, &mut out_f, shape)?;
        gpu.synchronize(fused_linear::FUSED_ENTRY)?;
        let fused = gpu.download(&out_f)?;
        fl.unfused_device(&x, &w, &b, &mut y, &mut z, &mut out_u, shape)?;
        gpu.synchronize("matmul + bias_add + relu")?;
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
        let mut t_fused = gpu.time_ms(warmup, iters, || {
            fl.fused_device(&x, &w, &b, &mut out_f, shape)
        })?;
        let mut t_unfused = gpu.time_ms(warmup, iters, || {
            fl.unfused_device(&x, &w, &b, &mut y, &mut z, &mut out_u, shape)
        })?;
        let mut t_matmul = gpu.time_ms(warmup, iters, || {
            gpu.matmul_device(kernel, tw, &x, &w, &mut y, shape)
        })?;
        let mut t_bias = gpu.time_ms(warmup, iters, || fl.bias_device(&y, &b, &mut z, shape))?;
        let mut t_relu = gpu.time_ms(warmup, iters, || fl.relu_device(&z, &mut out_u))?;
        let (fused_ms, unfused_ms) = (median(&mut t_fused), median(&mut t_unfused));
        println!(
            "{:<16} {:>9.3} {:>11.3} {:>9.3} {:>8.3} {:>8.3} {:>7.3}× {:>10.0}  {:<18} {}",
            shape.to_string(),
            fused_ms,
            unfused_ms,
            median(&mut t_matmul),
            median(&mut t_bias),
            median(&mut t_relu),
            unfused_ms / fused_ms,
            shape.flops() / (fused_ms * 1e-3) / 1e9,
            same,
            if ok { "yes" } else { "NO" }
        );
    }
    println!();
    for note in notes {
        println!("{note}");
    }
    println!("speedup = unfused ms / fused ms; GFLOP/s of the fused kernel (2·m·k·n)");
    Ok(all_ok)
}
