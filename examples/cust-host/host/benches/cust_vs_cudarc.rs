//! The same kernels launched through cust and through the cudarc host, timed the same way
//! (CUDA events around each launch, median) in one process, in interleaved rounds: the
//! autotuned SGEMM at 4096³ (the configuration the cudarc autotuner picks, on both), the
//! sums on 2²⁸ floats, the sliding averages and two lecture kernels. Prints a table with
//! cust ÷ cudarc and whether the outputs agree bit for bit. Without a GPU it says so.
//!
//! `cargo bench -p cust-host` (or `--bench cust_vs_cudarc -- ROUNDS ITERS`).

use cust_host::CustGpu;
use cust_plan::Kernel;
use cust_plan::reference::{median, uniform};
use kernels_gpu_host::gpu::{Gpu, SlidingScratch};
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::sliding::SlidingKernel;
use kernels_gpu_host::{MatmulKernel, MatmulShape, TileWidth};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Row {
    kernel: String,
    problem: String,
    cudarc: Vec<f64>,
    cust: Vec<f64>,
    same_bits: bool,
}

impl Row {
    /// `kernel` on `problem`, nothing measured yet.
    fn new(kernel: Kernel, problem: String) -> Self {
        Self {
            kernel: kernel.name().into(),
            problem,
            cudarc: vec![],
            cust: vec![],
            same_bits: false,
        }
    }
}

fn bits(x: &[f32]) -> Vec<u32> {
    bytemuck::cast_slice(x).to_vec()
}

fn main() -> Res<()> {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (rounds, iters) = (
        *numbers.first().unwrap_or(&5),
        *numbers.get(1).unwrap_or(&30),
    );
    let cust = match CustGpu::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("cust vs cudarc benchmark SKIPPED: {e}");
            return Ok(());
        }
    };
    let gpu = Gpu::new()?;
    eprintln!(
        "{}: {rounds} interleaved rounds, each the median of {iters} event-timed launches after 3 warm-ups",
        gpu.info()?
    );
    let mut rows = vec![];

    for (kernel, (m, k, n)) in [
        (None, (4096, 4096, 4096)),
        (Some(("tiled-static", 16)), (5120, 256, 5120)),
        (Some(("tiled-dynamic-const", 32)), (5120, 256, 5120)),
    ] {
        let shape = MatmulShape::new(m, k, n)?;
        let (a, b) = (uniform(1, m * k), uniform(2, k * n));
        let (ga, gb, mut go) = (gpu.upload(&a)?, gpu.upload(&b)?, gpu.zeros(m * n)?);
        let (ca, cb, mut co) = (cust.upload(&a)?, cust.upload(&b)?, cust.zeros(m * n)?);
        let (ck, tw, ours) = match kernel {
            None => {
                // At 4096³ the autotuner picks a configuration (split-k runs are for
                // outputs with few tiles, and this host launches configurations only).
                let chosen = match kernels_gpu_host::gpu::autotune::choose(
                    &gpu,
                    &ga,
                    &gb,
                    &mut go,
                    shape,
                    kernels_gpu_host::Precision::Fp32,
                )? {
                    kernels_gpu_host::gpu::autotune::Tuned::Config(k) => k,
                    other => {
                        return Err(
                            format!("the autotuner chose {other}, not a configuration").into()
                        );
                    }
                };
                let ours = Kernel::by_name(chosen.name()).ok_or("an SGEMM row per tuned kernel")?;
                (MatmulKernel::Sgemm(chosen), TileWidth::Tw16, ours)
            }
            Some((name, w)) => {
                let ours = Kernel::lecture()
                    .find(|c| c.name() == name && c.tile_width() == Some(w))
                    .ok_or("a lecture row")?;
                (
                    MatmulKernel::from_name(name)?,
                    TileWidth::try_from(w)?,
                    ours,
                )
            }
        };
        let mut row = Row::new(ours, format!("{m}×{k}×{n}"));
        for _ in 0..rounds {
            row.cudarc.push(median(&mut gpu.time_ms(3, iters, || {
                gpu.matmul_device(ck, tw, &ga, &gb, &mut go, shape)
            })?));
            row.cust.push(median(&mut cust.time_ms(3, iters, || {
                cust.matmul(ours, &ca, &cb, &mut co, (m, k, n))
            })?));
        }
        row.same_bits = bits(&gpu.download(&go)?) == bits(&cust.download(&co)?);
        rows.push(row);
    }

    let len = 1usize << 28;
    let x = uniform(3, len);
    let (gx, cx) = (gpu.upload(&x)?, cust.upload(&x)?);
    drop(x);
    let (mut gs, mut cs) = (gpu.reduce_scratch()?, cust.sum_scratch()?);
    for ours in Kernel::reduce() {
        let rk = ReduceKernel::from_name(ours.name()).ok_or("a sum")?;
        let mut row = Row::new(ours, "2^28".into());
        for _ in 0..rounds {
            row.cudarc.push(median(
                &mut gpu.time_ms(3, iters, || gpu.sum_device(rk, &gx, &mut gs))?,
            ));
            row.cust.push(median(
                &mut cust.time_ms(3, iters, || cust.sum(ours, &cx, &mut cs))?,
            ));
        }
        row.same_bits = bits(&gpu.download(&gs.result)?) == bits(&cust.download(&cs.result)?);
        rows.push(row);
    }
    let w = 2;
    let (mut go, mut co) = (gpu.zeros(len - w + 1)?, cust.zeros(len - w + 1)?);
    for ours in Kernel::sliding() {
        let sk = SlidingKernel::from_name(ours.name()).ok_or("a sliding")?;
        let mut row = Row::new(ours, format!("2^28, window {w}"));
        let mut scratch = SlidingScratch::default();
        for _ in 0..rounds {
            row.cudarc.push(median(&mut gpu.time_ms(3, iters, || {
                gpu.sliding_average_device(sk, &gx, w, &mut go, &mut scratch)
            })?));
            row.cust.push(median(
                &mut cust.time_ms(3, iters, || cust.sliding(ours, &cx, w, &mut co))?,
            ));
        }
        row.same_bits = bits(&gpu.download(&go)?) == bits(&cust.download(&co)?);
        rows.push(row);
    }

    println!("| kernel | problem | cudarc ms | cust ms | cust ÷ cudarc | bits equal |");
    println!("|---|---|---:|---:|---:|---|");
    for mut r in rows {
        let (g, c) = (median(&mut r.cudarc), median(&mut r.cust));
        println!(
            "| {} | {} | {g:.4} | {c:.4} | {:.4} | {} |",
            r.kernel,
            r.problem,
            c / g,
            if r.same_bits { "yes" } else { "NO" }
        );
    }
    Ok(())
}
