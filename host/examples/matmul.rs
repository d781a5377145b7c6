//! The example of the crate's page (`host/README.md`, "Use it from your project"): a matmul
//! on the GPU with this crate and cudarc, checked against an f64 CPU reference. Without a
//! CUDA driver or a GPU it says so and exits 0. The page's code block is this file from the
//! first `use` on (a test checks), and runs as a doctest in `cargo test`.
//!
//! `cargo run --release -p kernels-gpu-host --example matmul`

use cudarc::driver::CudaSlice;
use kernels_gpu_host::check::reference;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::{Error, MatmulKernel, MatmulShape, SgemmKernel, TileWidth};

fn main() -> Result<(), Error> {
    // The driver is loaded at run time: no driver or no GPU is a typed error, not a panic.
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(Error::NoDriver(why)) => {
            println!("no CUDA driver ({why}): skipped");
            return Ok(());
        }
        Err(Error::NoDevice) => {
            println!("the CUDA driver sees no GPU: skipped");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    println!("{}", gpu.info()?);

    // out = a · b, row-major: a is m × k, b is k × n.
    let (m, k, n) = (1000, 300, 700);
    let shape = MatmulShape::new(m, k, n)?;
    let mut rng = kernels_gpu_host::check::data::Rng::new(42);
    let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));

    // Device buffers are cudarc's, on the `Gpu`'s one stream (`gpu.stream()`).
    let a_dev: CudaSlice<f32> = gpu.upload(&a)?;
    let b_dev: CudaSlice<f32> = gpu.upload(&b)?;
    let mut out_dev: CudaSlice<f32> = gpu.zeros(m * n)?;

    let reference = reference::matmul_f64(&a, &b, m, k, n);
    for (kernel, tw) in [
        (MatmulKernel::TiledStatic, TileWidth::Tw16),
        // The SGEMM kernels take no tile width; the argument is ignored.
        (MatmulKernel::Sgemm(SgemmKernel::DEFAULT), TileWidth::Tw16),
    ] {
        // Checked (buffer lengths, the device's launch limits), then queued.
        gpu.matmul_device(kernel, tw, &a_dev, &b_dev, &mut out_dev, shape)?;
        // Waits for the stream: a fault in the kernel is `Error::KernelFault` here.
        gpu.synchronize(kernel.name())?;
        let out = gpu.download(&out_dev)?;
        let acc = reference::compare(&out, &reference);
        println!("{kernel} (tw {tw}): max_abs_err {:.2e}", acc.max_abs_err);
        assert!(acc.within_f32_bound(k), "{kernel}: {acc:?}");
    }
    Ok(())
}
