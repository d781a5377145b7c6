//! 16-bit matrices on Hopper (rung 17) beside cuBLAS: every `bf16` configuration (and the
//! `f16` default) on a few shapes, each result spot-checked against the f64 product of the
//! rounded inputs, each timed (median of 20 CUDA-event-timed runs after 5 warm-ups, kernel
//! only: the inputs are 16-bit on the device before timing) beside `cublasGemmEx` with
//! `bf16` operands, f32 output and `CUBLAS_COMPUTE_32F` on the same buffers. Without a CUDA
//! driver, a GPU, or a Hopper it says so and exits 0.
//!
//! `cargo run --release -p kernels-gpu-host --example half_gemm [M K N ...]`

use half::{bf16, f16};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::spot;
use kernels_gpu_host::gpu::{Cublas, CublasMath, Gpu};
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::plan::half::{self as half_plan, HalfFloat, WsConfig};
use kernels_gpu_host::{Error, MatmulShape};

/// One timed configuration: its median milliseconds and the largest sampled error as a
/// fraction of Σ|a||b|.
fn run<T: HalfFloat + cudarc::driver::DeviceRepr>(
    gpu: &Gpu, config: &WsConfig, a: &[f32], b: &[f32], shape: MatmulShape,
) -> Result<(f64, f64), Error> {
    let (a16, b16) = (gpu.upload_half::<T>(a)?, gpu.upload_half::<T>(b)?);
    let mut out = gpu.nans(shape.lens().2)?;
    gpu.gemm_half_device(config, &a16, &b16, &mut out, shape)?;
    let host = gpu.download(&out)?;
    // The reference multiplies the rounded values, exactly as the tensor cores do.
    let round = |x: &[f32]| -> Vec<f32> { x.iter().map(|&v| T::from_f32(v).to_f32()).collect() };
    let (ar, br) = (round(a), round(b));
    let (_, acc) = spot::sampled_accuracy(&ar, &br, &host, shape, 256);
    let scaled = if acc.non_finite > 0 {
        f64::INFINITY
    } else {
        acc.max_scaled_err
    };
    let mut ms = gpu.time_ms(5, 20, || {
        gpu.gemm_half_device(config, &a16, &b16, &mut out, shape)
    })?;
    Ok((median(&mut ms), scaled))
}

fn main() -> Result<(), Error> {
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("no GPU ({e}): skipped");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let info = gpu.info()?;
    if info.compute_capability != (9, 0) {
        println!("{info}: rung 17 needs a Hopper (sm_90): skipped");
        return Ok(());
    }
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("dimensions are numbers"))
        .collect();
    let shapes: Vec<(usize, usize, usize)> = if args.is_empty() {
        vec![(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048)]
    } else {
        args.chunks_exact(3).map(|d| (d[0], d[1], d[2])).collect()
    };
    println!("{info}");
    println!(
        "| m×k×n | kernel | ms | TFLOP/s | cuBLAS BF16 ms | cuBLAS ÷ ours | max error / Σ|a||b| |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let cublas = Cublas::new(&gpu, CublasMath::Bf16)?;
    for (m, k, n) in shapes {
        let shape = MatmulShape::new(m, k, n)?;
        let mut rng = Rng::new(7);
        let a: Vec<f32> = rng
            .uniform(m * k)
            .into_iter()
            .map(|x| 2.0 * x - 1.0)
            .collect();
        let b: Vec<f32> = rng
            .uniform(k * n)
            .into_iter()
            .map(|x| 2.0 * x - 1.0)
            .collect();
        let (a_bits, b_bits) = (gpu.upload_bf16(&a)?, gpu.upload_bf16(&b)?);
        let mut out = gpu.zeros(m * n)?;
        let mut ms = gpu.time_ms(5, 20, || {
            cublas.gemm_bf16(&a_bits, &b_bits, &mut out, shape)
        })?;
        let cublas_ms = median(&mut ms);
        let flops = 2.0 * m as f64 * k as f64 * n as f64;
        let configs = half_plan::configs::<bf16>()
            .map(|c| (c, true))
            .chain(std::iter::once((half_plan::default_config::<f16>(), false)));
        for (config, is_bf16) in configs {
            let (ms, err) = if is_bf16 {
                run::<bf16>(&gpu, config, &a, &b, shape)?
            } else {
                run::<f16>(&gpu, config, &a, &b, shape)?
            };
            println!(
                "| {shape} | {} | {ms:.4} | {:.1} | {cublas_ms:.4} | {:.3} | {err:.2e} |",
                config.name,
                flops / ms * 1e-9,
                cublas_ms / ms
            );
        }
    }
    Ok(())
}
