//! `cargo bench -p host --bench vector`: the minitorch 3.5 kernels — sum reductions and
//! sliding averages — against a device-to-device copy of the same bytes, the bandwidth
//! ceiling. Timed with CUDA events through criterion's `iter_custom`; throughput in bytes
//! (criterion's `B/s`): a sum reads its input once, a sliding average also writes its output.
//!
//! Without a GPU it says so and benchmarks the simulator on a small input instead.

use criterion::{BenchmarkId, Criterion, PlottingBackend, Throughput};
use kernels_gpu_host::data::Rng;
use kernels_gpu_host::error::Result;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::reduce::ReduceKernel;
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::sliding::{SlidingKernel, SlidingShape};
use kernels_gpu_host::{Backend, Error};

#[path = "common/bench_report.rs"]
mod bench_report;
use std::hint::black_box;
use std::time::Duration;

/// 1 GiB of f32: far past the L2, as in the CLI's default.
const GPU_LEN: usize = 1 << 28;
const SIM_LEN: usize = 20_003;
const WINDOWS: [usize; 3] = [2, 8, 16];

fn input(len: usize) -> Vec<f32> {
    Rng::new(42)
        .uniform(len)
        .into_iter()
        .map(|x| 2.0 * x - 1.0)
        .collect()
}

fn gpu_benches(c: &mut Criterion, gpu: &Gpu) -> Result<()> {
    let x = gpu.upload(&input(GPU_LEN))?;
    let bytes = 4 * GPU_LEN as u64;
    let timed = |f: &mut dyn FnMut() -> Result<()>, iters| {
        gpu.time_batch(iters, f).unwrap_or_else(|e| panic!("{e}"))
    };

    let mut group = c.benchmark_group(format!("sum-{GPU_LEN}"));
    group.throughput(Throughput::Bytes(bytes));
    let mut copy = gpu.zeros(GPU_LEN)?;
    // The copy moves the bytes twice (read and write); reported per byte of input.
    group.bench_function("device-copy", |b| {
        b.iter_custom(|iters| {
            timed(
                &mut || {
                    gpu.stream()
                        .memcpy_dtod(&x, &mut copy)
                        .map_err(|source| Error::Driver {
                            call: "cuMemcpyDtoD",
                            source,
                        })
                },
                iters,
            )
        })
    });
    let mut scratch = gpu.reduce_scratch()?;
    for k in ReduceKernel::ALL {
        group.bench_function(k.name(), |b| {
            b.iter_custom(|iters| timed(&mut || gpu.sum_device(k, &x, &mut scratch), iters))
        });
    }
    group.finish();
    drop(copy);

    for window in WINDOWS {
        let outputs = SlidingShape::new(GPU_LEN, window)?.outputs() as usize;
        let mut out = gpu.zeros(outputs)?;
        let mut group = c.benchmark_group(format!("sliding-{GPU_LEN}"));
        group.throughput(Throughput::Bytes(bytes + 4 * outputs as u64));
        for k in SlidingKernel::ALL {
            group.bench_function(BenchmarkId::new(k.name(), format!("w{window}")), |b| {
                b.iter_custom(|iters| {
                    timed(
                        &mut || gpu.sliding_average_device(k, &x, window, &mut out),
                        iters,
                    )
                })
            });
        }
        group.finish();
    }
    Ok(())
}

fn cpu_benches(c: &mut Criterion) {
    let sim = Simulator::default();
    let x = input(SIM_LEN);
    let mut group = c.benchmark_group(format!("simulator-{SIM_LEN}"));
    group
        .throughput(Throughput::Bytes(4 * SIM_LEN as u64))
        .sample_size(10);
    for k in ReduceKernel::ALL {
        group.bench_function(k.name(), |b| {
            b.iter(|| black_box(sim.sum(k, black_box(&x)).expect("simulated sum")))
        });
    }
    for k in SlidingKernel::ALL {
        group.bench_function(BenchmarkId::new(k.name(), "w8"), |b| {
            b.iter(|| {
                black_box(
                    sim.sliding_average(k, black_box(&x), 8)
                        .expect("simulated sliding average"),
                )
            })
        });
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default()
        .plotting_backend(PlottingBackend::Plotters)
        .output_directory(&bench_report::criterion_home())
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    match Gpu::new() {
        Ok(gpu) => {
            if let Err(e) = gpu_benches(&mut c, &gpu) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        Err(e @ (Error::NoDriver(_) | Error::NoDevice)) => {
            println!("GPU benchmarks skipped: {e}");
            println!("Benchmarking the simulator instead (it says nothing about GPU speed).");
            cpu_benches(&mut c);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
    c.final_summary();
}
