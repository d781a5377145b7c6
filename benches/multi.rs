//! `cargo bench -p kernels-gpu-host --bench multi`: the product, the sum and the sliding
//! average over 1, 2 and 4 GPUs (those the host has), through `kernels_gpu_host::multi`.
//!
//! Rows are named `<problem>/gpus<N>`; each run is timed on the host's clock from the
//! operands on the devices to the result in place, every device waited for (a run spans
//! devices, whose CUDA events cannot be compared): a product from `a` and `b` on GPU 0 to
//! the product gathered there; a sum from the vector spread over the GPUs to the sum on
//! GPU 0; a sliding average from the spread vector (halo exchange included) to the outputs
//! where they were computed. Criterion's throughput is FLOP/s for the products (one element
//! per FLOP) and bytes read and written per second for the rest. The products' bits do not
//! depend on N, nor do the sums' and the averages' (`tests/gpu_multi.rs` checks that).
//!
//! Without a GPU it says so and runs nothing.

use criterion::{BenchmarkId, Criterion, PlottingBackend, Throughput};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::gpu::device_count;
use kernels_gpu_host::multi::Gpus;
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::shard::{Chunks, SlidingPlan};
use kernels_gpu_host::plan::sliding::SlidingKernel;
use kernels_gpu_host::problem::error::Result;
use kernels_gpu_host::{MatmulKernel, MatmulShape, SgemmKernel, TileWidth};
use std::time::{Duration, Instant};

#[path = "common/bench_report.rs"]
mod bench_report;

/// The GPU counts with rows, where the host has that many.
const COUNTS: [usize; 3] = [1, 2, 4];
/// Square FP32 products, the autotuned ladder's choice pinned for the whole shape.
const SHAPES: [usize; 2] = [8192, 16384];
/// 4 GiB of f32: a few chunks per GPU.
const VECTOR_LEN: usize = 1 << 30;
/// The sliding windows: the lecture's 2, and one whose halo is 400 KB.
const WINDOWS: [usize; 2] = [2, 100_000];

fn input(len: usize) -> Vec<f32> {
    Rng::new(42).signed(len)
}

/// `iters` runs of `launch`, waited for on every device, on the host's clock.
fn timed(gpus: &Gpus, iters: u64, mut launch: impl FnMut() -> Result<()>) -> Duration {
    let mut run = || -> Result<Duration> {
        let start = Instant::now();
        for _ in 0..iters {
            launch()?;
        }
        gpus.synchronize()?;
        Ok(start.elapsed())
    };
    run().unwrap_or_else(|e| panic!("{e}"))
}

fn benches(c: &mut Criterion, counts: &[usize]) -> Result<()> {
    let kernel = MatmulKernel::Sgemm(SgemmKernel::Autotuned);
    for n in SHAPES {
        let shape = MatmulShape::new(n, n, n)?;
        let mut rng = Rng::new(42);
        let (a, b) = (rng.uniform(n * n), rng.uniform(n * n));
        let mut group = c.benchmark_group(format!("multi-gemm-{n}x{n}x{n}"));
        group.throughput(Throughput::Elements(shape.flops() as u64));
        for &count in counts {
            let gpus = Gpus::first(count)?;
            let root = gpus.gpu(0);
            let (da, db) = (root.upload(&a)?, root.upload(&b)?);
            let mut out = root.zeros(n * n)?;
            // Pins (and the first time tunes) the kernel, and balances the split.
            for _ in 0..2 {
                gpus.matmul_device(kernel, TileWidth::Tw16, &da, &db, &mut out, shape)?;
            }
            gpus.synchronize()?;
            group.bench_function(BenchmarkId::new("fp32", format!("gpus{count}")), |bench| {
                bench.iter_custom(|iters| {
                    timed(&gpus, iters, || {
                        gpus.matmul_device(kernel, TileWidth::Tw16, &da, &db, &mut out, shape)
                            .map(drop)
                    })
                })
            });
        }
        group.finish();
    }

    let x = input(VECTOR_LEN);
    let mut group = c.benchmark_group(format!("multi-sum-{VECTOR_LEN}"));
    group.throughput(Throughput::Bytes(4 * VECTOR_LEN as u64));
    for &count in counts {
        let gpus = Gpus::first(count)?;
        let dx = gpus.upload_vector(&x, 0)?;
        let mut result = gpus.gpu(0).zeros(1)?;
        for kernel in ReduceKernel::ALL {
            let id = BenchmarkId::new(kernel.name(), format!("gpus{count}"));
            group.bench_function(id, |bench| {
                bench.iter_custom(|iters| {
                    timed(&gpus, iters, || gpus.sum_sharded(kernel, &dx, &mut result))
                })
            });
        }
    }
    group.finish();

    for window in WINDOWS {
        let mut group = c.benchmark_group(format!("multi-sliding-{VECTOR_LEN}-w{window}"));
        let outputs = VECTOR_LEN - window + 1;
        group.throughput(Throughput::Bytes(4 * (VECTOR_LEN + outputs) as u64));
        for &count in counts {
            let gpus = Gpus::first(count)?;
            let chunk = gpus.vector_chunk();
            let layout = Chunks::new(VECTOR_LEN, chunk)?.shards(&vec![1.0; count]);
            let plan = SlidingPlan::new(VECTOR_LEN, window, chunk, layout.clone())?;
            let mut dx = gpus.upload_rows(&x, VECTOR_LEN, 1, &layout, plan.halo_room())?;
            let kernel = SlidingKernel::Scan;
            let id = BenchmarkId::new(kernel.name(), format!("gpus{count}"));
            group.bench_function(id, |bench| {
                bench.iter_custom(|iters| {
                    timed(&gpus, iters, || {
                        gpus.sliding_average_sharded(kernel, &mut dx, window)
                            .map(drop)
                    })
                })
            });
        }
        group.finish();
    }
    Ok(())
}

fn main() {
    let mut c = Criterion::default()
        .plotting_backend(PlottingBackend::Plotters)
        .output_directory(&bench_report::criterion_home())
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let present = match device_count() {
        Ok(n) => n,
        Err(e) => {
            if let Some(why) = e.no_gpu() {
                println!("multi-GPU benchmarks skipped: {why}");
                return;
            }
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let counts: Vec<usize> = COUNTS.into_iter().filter(|&n| n <= present).collect();
    println!("{present} GPU(s): rows for {counts:?} of them");
    if let Err(e) = benches(&mut c, &counts) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    c.final_summary();
}
