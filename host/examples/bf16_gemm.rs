//! BF16 matrices on the tensor cores (rung 13): `out = a · b` with `a`, `b` in BF16 and `out`
//! in f32, checked against the f64 product of the BF16 values. Without a CUDA driver or a GPU
//! it says so and exits 0.
//!
//! `cargo run --release -p kernels-gpu-host --example bf16_gemm`

use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::{Error, MatmulShape, check::reference, plan::bf16};

fn main() -> Result<(), Error> {
    let Some(gpu) = Gpu::new_or_skip("bf16_gemm")? else {
        return Ok(());
    };
    let (m, k, n) = (1000, 520, 700);
    let shape = MatmulShape::new(m, k, n)?;
    let mut rng = kernels_gpu_host::check::data::Rng::new(42);
    let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));

    // BF16 bits, rounded to nearest even: `bf16::round_all` on the host, or `upload_bf16`,
    // which rounds and uploads.
    let (a16, b16) = (bf16::round_all(&a), bf16::round_all(&b));
    let (a_dev, b_dev) = (gpu.upload_bf16(&a)?, gpu.upload_bf16(&b)?);
    let mut out_dev = gpu.zeros(m * n)?;
    for config in bf16::BF16_CONFIGS {
        gpu.gemm_bf16_device(config, &a_dev, &b_dev, &mut out_dev, shape)?;
        let out = gpu.download(&out_dev)?;
        // The products of BF16 values are exact: only the f32 accumulation rounds.
        let value = |x: &[u16]| x.iter().map(|&v| bf16::value(v)).collect::<Vec<_>>();
        let exact = reference::matmul_f64(&value(&a16), &value(&b16), m, k, n);
        let acc = reference::compare(&out, &exact);
        let default = if config.default { " (default)" } else { "" };
        println!(
            "{}{default}: max_rel_err {:.2e}",
            config.name, acc.max_rel_err
        );
        assert!(acc.within_f32_bound(k), "{}: {acc:?}", config.name);
    }
    Ok(())
}
