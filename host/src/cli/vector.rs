//! `kernels-gpu-host --op sum|sliding`: the minitorch reductions and sliding averages, checked against
//! f64 references and, on a GPU, timed against a device-to-device copy of the same data.

use super::{Args, GPU_DEFAULT_LEN, Op, SIM_DEFAULT_LEN};
use kernels_gpu_host::data::Rng;
use kernels_gpu_host::gpu::Gpu;
use kernels_gpu_host::reduce::{self, ReduceKernel};
use kernels_gpu_host::report::{self, VectorRow};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::sliding::{self, SlidingKernel, SlidingShape};
use kernels_gpu_host::{Backend, Error};

pub fn run(args: &Args, gpu: Option<Result<Gpu, Error>>) -> Result<bool, Error> {
    let rows = super::on_gpu_or_simulator(gpu, |gpu| run_gpu(args, gpu), || run_sim(args))?;
    if args.json {
        for r in &rows {
            println!("{}", serde_json::to_string(r).expect("rows serialise"));
        }
    } else {
        print!("{}", report::vector_table(&rows));
    }
    Ok(rows.iter().all(|r| r.ok))
}

fn input(args: &Args, len: usize) -> Vec<f32> {
    Rng::new(args.seed)
        .uniform(len)
        .into_iter()
        .map(|x| 2.0 * x - 1.0)
        .collect()
}

fn row(kernel: &str, n: usize, window: Option<usize>) -> VectorRow {
    VectorRow {
        kernel: kernel.to_owned(),
        n: n as u64,
        window: window.map(|w| w as u64),
        ms_median: None,
        gbps: None,
        copy_gbps: None,
        pct_of_copy: None,
        max_abs_err: 0.0,
        ok: false,
    }
}

fn sum_row(kernel: ReduceKernel, x: &[f32], sum: f32) -> VectorRow {
    let mut r = row(kernel.name(), x.len(), None);
    r.max_abs_err = (sum as f64 - reduce::reference(x).0).abs();
    r.ok = reduce::within_bound(sum, x);
    r
}

fn sliding_row(kernel: SlidingKernel, a: &[f32], window: usize, out: &[f32]) -> VectorRow {
    let mut r = row(kernel.name(), a.len(), Some(window));
    r.max_abs_err = sliding::reference(a, window)
        .iter()
        .zip(out)
        .map(|(e, &o)| (o as f64 - e).abs())
        .fold(0.0, f64::max);
    r.ok = sliding::within_bound(out, a, window);
    r
}

fn run_sim(args: &Args) -> Result<Vec<VectorRow>, Error> {
    let len = args.len.unwrap_or(SIM_DEFAULT_LEN);
    eprintln!(
        "CPU simulator: {:?} over {len} values, seed {}",
        args.op, args.seed
    );
    let x = input(args, len);
    let sim = Simulator::default();
    match args.op {
        Op::Sum => ReduceKernel::ALL
            .into_iter()
            .map(|k| Ok(sum_row(k, &x, sim.sum(k, &x)?)))
            .collect(),
        _ => SlidingKernel::ALL
            .into_iter()
            .map(|k| {
                Ok(sliding_row(
                    k,
                    &x,
                    args.window,
                    &sim.sliding_average(k, &x, args.window)?,
                ))
            })
            .collect(),
    }
}

fn median_ms(
    gpu: &Gpu, args: &Args, launch: impl FnMut() -> Result<(), Error>,
) -> Result<f64, Error> {
    let mut ms = gpu.time_ms(args.warmup as usize, args.iters as usize, launch)?;
    Ok(report::median(&mut ms))
}

fn run_gpu(args: &Args, gpu: &Gpu) -> Result<Vec<VectorRow>, Error> {
    let len = args.len.unwrap_or(GPU_DEFAULT_LEN);
    let info = gpu.info()?;
    eprintln!(
        "{}: {:?} over {len} values, seed {}, median of {} runs",
        info.name, args.op, args.seed, args.iters
    );
    let x = input(args, len);
    let dx = gpu.upload(&x)?;
    // The ceiling: copying the same bytes, counted read + written.
    let mut copy = gpu.zeros(len)?;
    let copy_ms = median_ms(gpu, args, || {
        gpu.stream()
            .memcpy_dtod(&dx, &mut copy)
            .map_err(|source| Error::Driver {
                call: "cuMemcpyDtoD",
                source,
            })
    })?;
    drop(copy);
    let copy_gbps = 2.0 * 4.0 * len as f64 / (copy_ms * 1e-3) / 1e9;
    let timed = |mut r: VectorRow, ms: f64, bytes: f64| {
        r.ms_median = Some(ms);
        r.gbps = Some(bytes / (ms * 1e-3) / 1e9);
        r.copy_gbps = Some(copy_gbps);
        r.pct_of_copy = Some(r.gbps.unwrap_or(0.0) / copy_gbps);
        r
    };
    let mut rows = vec![];
    match args.op {
        Op::Sum => {
            let mut scratch = gpu.reduce_scratch()?;
            for k in ReduceKernel::ALL {
                gpu.sum_device(k, &dx, &mut scratch)?;
                gpu.synchronize(k.entry())?;
                let sum = gpu.download(&scratch.result)?[0];
                let ms = median_ms(gpu, args, || gpu.sum_device(k, &dx, &mut scratch))?;
                // A reduction's traffic is its input, read once.
                rows.push(timed(sum_row(k, &x, sum), ms, 4.0 * len as f64));
            }
        }
        _ => {
            let shape = SlidingShape::new(len, args.window)?;
            let outputs = shape.outputs() as usize;
            for k in SlidingKernel::ALL {
                let mut out = gpu.upload(&vec![f32::NAN; outputs])?;
                gpu.sliding_average_device(k, &dx, args.window, &mut out)?;
                gpu.synchronize(k.entry())?;
                let r = sliding_row(k, &x, args.window, &gpu.download(&out)?);
                let ms = median_ms(gpu, args, || {
                    gpu.sliding_average_device(k, &dx, args.window, &mut out)
                })?;
                rows.push(timed(r, ms, 4.0 * (len + outputs) as f64));
            }
        }
    }
    Ok(rows)
}
