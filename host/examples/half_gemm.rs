//! 16-bit matrices on Hopper (rung 17) beside cuBLAS, shape by shape: the autotuned `bf16`
//! run (candidates narrowed by shape class, timed the first time a shape is seen) against
//! `cublasGemmEx` with `bf16` operands, f32 output and `CUBLAS_COMPUTE_32F` on the same
//! device buffers, each the median of 20 CUDA-event-timed runs after 5 warm-ups, kernel
//! only; beside it, what converting the f32 inputs to `bf16` on the device costs (median
//! of 20, both operands). Each result is spot-checked against the f64 product of the
//! rounded inputs, and `f16` is checked on the first shape. Without a CUDA driver, a GPU,
//! or a Hopper it says so and exits 0.
//!
//! `cargo run --release -p kernels-gpu-host --example half_gemm [--every] [M K N ...]`
//! (default: the shape suite's 14 shapes). With `--every`, each BF16 configuration of rung
//! 17 that suits the shape's `n` is also timed unsplit, each the median of 20 runs, in a
//! table of its own below the first: a same-run comparison of the tiles (and of the pairs
//! of blocks against single blocks).

use half::{bf16, f16};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::spot;
use kernels_gpu_host::gpu::autotune::HalfChoice;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::plan::half::{HalfFloat, HalfRun, Input, configs, stores_fit};
use kernels_gpu_host::{Error, MatmulShape, suite};

/// The largest sampled error of `out` against the f64 product of `a` and `b` rounded to
/// `T`, as a fraction of Σ|a||b| (infinite for a non-finite output).
fn error<T: HalfFloat>(a: &[f32], b: &[f32], out: &[f32], shape: MatmulShape) -> f64 {
    let round = |x: &[f32]| -> Vec<f32> { x.iter().map(|&v| T::from_f32(v).to_f32()).collect() };
    let (_, acc) = spot::sampled_accuracy(&round(a), &round(b), out, shape, 256);
    if acc.non_finite > 0 {
        f64::INFINITY
    } else {
        acc.max_scaled_err
    }
}

/// Dimensions `(m, k, n)` of one product.
type Dims = (usize, usize, usize);

/// Whether `--every` is given, and the shapes named on the command line (`M K N ...`), or
/// what is wrong with them.
fn shapes_from_args() -> Result<(bool, Vec<Dims>), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let every = args.iter().any(|a| a == "--every");
    let dims = args
        .iter()
        .filter(|a| *a != "--every")
        .map(|a| {
            a.parse::<usize>()
                .map_err(|e| format!("`{a}` is not a dimension ({e})"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if dims.len() % 3 != 0 {
        return Err(format!(
            "{} numbers given: shapes are three each (M K N ...)",
            dims.len()
        ));
    }
    Ok((
        every,
        if dims.is_empty() {
            suite::SHAPES.to_vec()
        } else {
            dims.chunks_exact(3).map(|d| (d[0], d[1], d[2])).collect()
        },
    ))
}

fn main() -> Result<(), Error> {
    let (every, shapes) = shapes_from_args().unwrap_or_else(|e| {
        eprintln!("half_gemm: {e}");
        std::process::exit(2)
    });
    let Some(gpu) = Gpu::new_or_skip("half_gemm")? else {
        return Ok(());
    };
    let info = gpu.info()?;
    if info.compute_capability != (9, 0) {
        println!("{info}: rung 17 needs a Hopper (sm_90): skipped");
        return Ok(());
    }
    println!("{info}");
    println!(
        "| m×k×n | chosen | ms | TFLOP/s | cuBLAS BF16 ms | cuBLAS ÷ ours | convert ms | max error / Σ|a||b| |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let cublas = Cublas::new(&gpu, CublasMath::Bf16)?;
    let mut ratios = vec![];
    let mut every_rows = vec![];
    for (i, &(m, k, n)) in shapes.iter().enumerate() {
        let shape = MatmulShape::new(m, k, n)?;
        let mut rng = Rng::new(7 + i as u64);
        let (a, b) = (rng.signed(m * k), rng.signed(k * n));
        let (a32, b32) = (gpu.upload(&a)?, gpu.upload(&b)?);
        let (ku, nu) = (k as u32, n as u32);
        let (a16, b16) = (
            gpu.convert_half::<bf16>(&a32, m as u32, ku, ku)?,
            gpu.convert_half::<bf16>(&b32, ku, nu, nu)?,
        );
        let mut convert = gpu.time_ms(2, 20, || {
            gpu.convert_half::<bf16>(&a32, m as u32, ku, ku)?;
            gpu.convert_half::<bf16>(&b32, ku, nu, nu).map(drop)
        })?;
        let mut out = gpu.nans(m * n)?;
        let run = gpu.gemm_half_auto_device(&a16, &b16, &mut out, shape)?;
        // `choice` once on a NaN-filled output, checked, then timed: (error, median ms).
        let mut measure = |choice: HalfChoice| -> Result<(f64, f64), Error> {
            gpu.fill_nan(&mut out)?;
            gpu.gemm_half_choice_device(choice, &a16, &b16, &mut out, shape)?;
            let err = error::<bf16>(&a, &b, &gpu.download(&out)?, shape);
            let mut ms = gpu.time_ms(5, 20, || {
                gpu.gemm_half_choice_device(choice, &a16, &b16, &mut out, shape)
            })?;
            Ok((err, median(&mut ms)))
        };
        let (err, ms) = measure(run)?;
        // cuBLAS on the same bits (its BF16 buffers are `u16`), into an output of its own.
        let (a_bits, b_bits) = (gpu.upload_bf16(&a)?, gpu.upload_bf16(&b)?);
        let mut c_out = gpu.nans(m * n)?;
        let mut c_ms = gpu.time_ms(5, 20, || {
            cublas.gemm_bf16(&a_bits, &b_bits, &mut c_out, shape)
        })?;
        let cublas_ms = median(&mut c_ms);
        let flops = 2.0 * m as f64 * k as f64 * n as f64;
        if every {
            for config in configs(Input::Bf16).filter(|c| stores_fit(c, n as u32)) {
                let (err, c) = measure(HalfChoice::Ws(HalfRun::unsplit(config)))?;
                every_rows.push(format!(
                    "| {shape} | {} | {c:.4} | {:.1} | {:.3} | {err:.2e} |",
                    config.name,
                    flops / c * 1e-9,
                    cublas_ms / c
                ));
            }
        }
        ratios.push(cublas_ms / ms);
        println!(
            "| {shape} | {} | {ms:.4} | {:.1} | {cublas_ms:.4} | {:.3} | {:.4} | {err:.2e} |",
            run.name(),
            flops / ms * 1e-9,
            cublas_ms / ms,
            median(&mut convert)
        );
        if i == 0 {
            let (a16, b16) = (gpu.upload_half::<f16>(&a)?, gpu.upload_half::<f16>(&b)?);
            let run = gpu.gemm_half_auto_device(&a16, &b16, &mut out, shape)?;
            let err = error::<f16>(&a, &b, &gpu.download(&out)?, shape);
            println!("| {shape} f16 | {} | | | | | | {err:.2e} |", run.name());
        }
    }
    let geomean = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len().max(1) as f64).exp();
    let worst = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    println!("\ngeometric mean cuBLAS ÷ ours {geomean:.3}, smallest {worst:.3}");
    if every {
        println!("\nEvery BF16 configuration, unsplit (cuBLAS as above):\n");
        println!("| m×k×n | configuration | ms | TFLOP/s | cuBLAS ÷ ours | max error / Σ|a||b| |");
        println!("|---|---|---:|---:|---:|---:|");
        for line in every_rows {
            println!("{line}");
        }
    }
    Ok(())
}
