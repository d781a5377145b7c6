//! `cargo bench -p kernels-gpu-host --bench vector`: the minitorch 3.5 kernels — flat sums,
//! sum / max / mean along rows and columns, sliding averages — against a device-to-device
//! copy of the same bytes, the bandwidth ceiling; and the fusion lesson (zip then reduce
//! against fused products, throughput in flops). Timed with CUDA events through criterion's
//! `iter_custom`; throughput in bytes (criterion's `B/s`): a reduction reads its input once
//! and writes its outputs, a sliding average reads its input and writes its outputs, a copy
//! reads and writes its input. Every group has its `device-copy` row, so a kernel's `B/s`
//! over the copy's is its fraction of copy bandwidth (the sum group counts the copy per byte
//! of input, as before: double its figure).
//!
//! Without a GPU it says so and benchmarks the simulator on a small input instead.

use criterion::{BenchmarkId, Criterion, Throughput};
use kernels_gpu_host::Backend;
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::gpu::{AxisScratch, Gpu, SlidingScratch};
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::sliding::{SlidingKernel, SlidingShape};
use kernels_gpu_host::problem::axis::{Axis, AxisOp, AxisShape};
use kernels_gpu_host::problem::error::Result;
use kernels_gpu_host::sim::Simulator;

#[path = "common/bench_report.rs"]
mod bench_report;
use std::hint::black_box;
use std::time::Duration;

/// 1 GiB of f32: far past the L2, as in the CLI's default.
const GPU_LEN: usize = 1 << 28;
const SIM_LEN: usize = 20_003;
/// The windows; the naive and shared kernels, whose cost grows with the window, run
/// up to [`SCALING_WINDOWS_UP_TO`] only.
const WINDOWS: [usize; 5] = [2, 16, 64, 1024, 100_000];
const SCALING_WINDOWS_UP_TO: usize = 64;
/// The 2-D reductions' shapes, 2^28 values each: square, and tall with 64-wide rows.
const AXIS_SHAPES: [(usize, usize); 2] = [(16384, 16384), (1 << 22, 64)];
/// The fusion lesson's product: its `m·n·k` intermediate is 2^28 floats, 1 GiB.
const FUSION_SHAPE: (usize, usize, usize) = (1024, 256, 1024);

fn input(len: usize) -> Vec<f32> {
    Rng::new(42).signed(len)
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
        b.iter_custom(|iters| timed(&mut || gpu.copy_device(&x, &mut copy), iters))
    });
    let mut scratch = gpu.reduce_scratch()?;
    for k in ReduceKernel::ALL {
        group.bench_function(k.name(), |b| {
            b.iter_custom(|iters| timed(&mut || gpu.sum_device(k, &x, &mut scratch), iters))
        });
    }
    group.finish();
    drop(copy);

    let copy_bytes = 2 * bytes;
    let mut copy = gpu.zeros(GPU_LEN)?;
    let mut copy_row = |group: &mut criterion::BenchmarkGroup<'_, _>| {
        group.throughput(Throughput::Bytes(copy_bytes));
        group.bench_function("device-copy", |b| {
            b.iter_custom(|iters| timed(&mut || gpu.copy_device(&x, &mut copy), iters))
        });
    };

    let mut scratch = SlidingScratch::default();
    for window in WINDOWS {
        let outputs = SlidingShape::new(GPU_LEN, window)?.outputs() as usize;
        let mut out = gpu.zeros(outputs)?;
        let mut group = c.benchmark_group(format!("sliding-{GPU_LEN}"));
        copy_row(&mut group);
        group.throughput(Throughput::Bytes(bytes + 4 * outputs as u64));
        for k in SlidingKernel::ALL {
            if k != SlidingKernel::Scan && window > SCALING_WINDOWS_UP_TO {
                continue;
            }
            group.bench_function(BenchmarkId::new(k.name(), format!("w{window}")), |b| {
                b.iter_custom(|iters| {
                    timed(
                        &mut || gpu.sliding_average_device(k, &x, window, &mut out, &mut scratch),
                        iters,
                    )
                })
            });
        }
        group.finish();
    }

    let mut scratch = AxisScratch::default();
    for (rows, cols) in AXIS_SHAPES {
        let shape = AxisShape::new(rows, cols)?;
        let mut group = c.benchmark_group(format!("reduce-{rows}x{cols}"));
        copy_row(&mut group);
        for axis in Axis::ALL {
            let outputs = shape.outputs(axis) as usize;
            let mut out = gpu.zeros(outputs)?;
            group.throughput(Throughput::Bytes(bytes + 4 * outputs as u64));
            for op in AxisOp::ALL {
                group.bench_function(format!("{}-{}", axis.name(), op.name()), |b| {
                    b.iter_custom(|iters| {
                        timed(
                            &mut || {
                                gpu.reduce_axis_device(op, axis, &x, shape, &mut out, &mut scratch)
                            },
                            iters,
                        )
                    })
                });
            }
        }
        group.finish();
    }
    fusion_group(c, gpu)
}

/// The fusion lesson (`--op fusion`): the product as zip into an `m·n·k` intermediate and
/// row sums of it, against fused kernels that never write it; throughput in the product's
/// flops, so every row reads as the same work.
fn fusion_group(c: &mut Criterion, gpu: &Gpu) -> Result<()> {
    use kernels_gpu_host::{MatmulKernel, MatmulShape, Precision, SgemmKernel, TileWidth};
    let (m, k, n) = FUSION_SHAPE;
    let shape = MatmulShape::new(m, k, n)?;
    let (a, b) = (gpu.upload(&input(m * k))?, gpu.upload(&input(k * n))?);
    let mut tmp = gpu.zeros(kernels_gpu_host::plan::fusion::intermediate_len(shape)? as usize)?;
    let mut out = gpu.zeros(m * n)?;
    let mut scratch = AxisScratch::default();
    let tall = AxisShape::new(m * n, k)?;
    let timed = |f: &mut dyn FnMut() -> Result<()>, iters| {
        gpu.time_batch(iters, f).unwrap_or_else(|e| panic!("{e}"))
    };
    let mut group = c.benchmark_group(format!("fusion-{m}x{k}x{n}"));
    group.throughput(Throughput::Elements(shape.flops() as u64));
    group.bench_function("zip", |bch| {
        bch.iter_custom(|iters| timed(&mut || gpu.zip_device(&a, &b, &mut tmp, shape), iters))
    });
    group.bench_function("reduce", |bch| {
        bch.iter_custom(|iters| {
            timed(
                &mut || {
                    gpu.reduce_axis_device(
                        AxisOp::Sum,
                        Axis::Rows,
                        &tmp,
                        tall,
                        &mut out,
                        &mut scratch,
                    )
                },
                iters,
            )
        })
    });
    group.bench_function("zip+reduce", |bch| {
        bch.iter_custom(|iters| {
            timed(
                &mut || {
                    gpu.zip_reduce_matmul_device(&a, &b, &mut tmp, &mut out, &mut scratch, shape)
                },
                iters,
            )
        })
    });
    let autotuned = SgemmKernel::autotuned(Precision::Fp32)?;
    for kernel in [MatmulKernel::TiledStatic, MatmulKernel::Sgemm(autotuned)] {
        group.bench_function(BenchmarkId::new("fused", kernel.name()), |bch| {
            bch.iter_custom(|iters| {
                timed(
                    &mut || gpu.matmul_device(kernel, TileWidth::Tw16, &a, &b, &mut out, shape),
                    iters,
                )
            })
        });
    }
    group.finish();
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
    for (axis, op) in [(Axis::Rows, AxisOp::Sum), (Axis::Cols, AxisOp::Max)] {
        group.bench_function(format!("{}-{}-141x141", axis.name(), op.name()), |b| {
            b.iter(|| {
                black_box(
                    sim.reduce_axis(op, axis, black_box(&x[..141 * 141]), 141, 141)
                        .expect("simulated reduction"),
                )
            })
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
    let mut c = bench_report::criterion(Duration::from_millis(300), Duration::from_secs(1));
    match Gpu::new_or_skip("GPU benchmarks") {
        Ok(Some(gpu)) => {
            if let Err(e) = gpu_benches(&mut c, &gpu) {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        Ok(None) => {
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
