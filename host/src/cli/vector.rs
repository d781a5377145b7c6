//! `kernels-gpu-host --op sum|reduce|sliding`: minitorch's reductions (the flat sum; sum, max
//! and mean along rows and columns) and sliding averages, checked against f64 references
//! (`O(n)`: in full, unless `--check none`) and, on a GPU, timed against a device-to-device
//! copy of the same data.

use super::report::{self, VectorRow};
use super::{Args, GPU_DEFAULT_LEN, GPU_DEFAULT_SHAPE, Op, SIM_DEFAULT_LEN, SIM_DEFAULT_SHAPE};
use kernels_gpu_host::check::data::Rng;
use kernels_gpu_host::check::spot::CheckMode;
use kernels_gpu_host::gpu::{AxisScratch, Gpu, SlidingScratch};
use kernels_gpu_host::plan::reduce::{self, ReduceKernel};
use kernels_gpu_host::plan::sliding::{self, SlidingKernel, SlidingShape};
use kernels_gpu_host::problem::axis::{self, Axis, AxisOp, AxisShape};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Backend, Error};

/// Windows past which the kernels whose cost per output grows with the window are skipped
/// (the naive one would read `window` values per output; the shared one's halo outgrows
/// shared memory near 25,000 on GPUs with 99 KiB per block, 57,000 on an H100).
const WINDOW_SCALING_LIMIT: usize = 1024;

pub fn run(args: &Args, gpu: Option<Result<Gpu, Error>>) -> Result<bool, Error> {
    let check = check_mode(args);
    let rows = super::on_gpu_or_simulator(
        gpu,
        |gpu| run_gpu(args, gpu, check),
        || run_sim(args, check),
    )?;
    super::print_rows(args, &rows, report::vector_table);
    Ok(report::none_failed(rows.iter().map(|r| r.ok)))
}

/// `--check` for these operations: their references are `O(n)`, as cheap as reading the
/// input, so every output is checked (`sample` too, saying so) unless `none`.
fn check_mode(args: &Args) -> CheckMode {
    match args.check {
        Some(CheckMode::None) => {
            eprintln!("results are not checked (--check none)");
            CheckMode::None
        }
        Some(CheckMode::Sample) => {
            let op = format!("{:?}", args.op).to_lowercase();
            eprintln!(
                "--check sample: the f64 reference of --op {op} is O(n), so every output is \
                 checked"
            );
            CheckMode::Full
        }
        Some(CheckMode::Full) | None => CheckMode::Full,
    }
}

pub(super) fn input(args: &Args, len: usize) -> Vec<f32> {
    Rng::new(args.seed).signed(len)
}

fn row(kernel: &str, n: usize, window: Option<usize>) -> VectorRow {
    VectorRow {
        kernel: kernel.to_owned(),
        n: n as u64,
        window: window.map(|w| w as u64),
        shape: None,
        ms_median: None,
        runs: None,
        gbps: None,
        copy_gbps: None,
        pct_of_copy: None,
        max_abs_err: None,
        check: CheckMode::None,
        ok: None,
    }
}

fn sum_row(kernel: ReduceKernel, x: &[f32], sum: f32, check: CheckMode) -> VectorRow {
    let mut r = row(kernel.name(), x.len(), None);
    if check != CheckMode::None {
        r.check = check;
        r.max_abs_err = Some((sum as f64 - reduce::reference(x).0).abs());
        r.ok = Some(reduce::within_bound(sum, x));
    }
    r
}

/// The kernels `--op sliding` runs at `window`.
pub(super) fn sliding_kernels(window: usize) -> Vec<SlidingKernel> {
    if window > WINDOW_SCALING_LIMIT {
        eprintln!(
            "window {window} > {WINDOW_SCALING_LIMIT}: running only the scan kernel (the others' cost grows with the window)"
        );
        vec![SlidingKernel::Scan]
    } else {
        SlidingKernel::ALL.to_vec()
    }
}

/// The sliding averages' reference, unless unchecked.
fn sliding_reference(x: &[f32], window: usize, check: CheckMode) -> Option<sliding::Reference> {
    (check != CheckMode::None).then(|| sliding::reference(x, window))
}

/// A sliding average's row, checked against `reference` unless it is `None` (unchecked).
fn sliding_row(
    kernel: SlidingKernel, n: usize, window: usize, out: &[f32],
    reference: Option<&sliding::Reference>,
) -> VectorRow {
    let mut r = row(kernel.name(), n, Some(window));
    if let Some(reference) = reference {
        r.check = CheckMode::Full;
        r.max_abs_err = Some(sliding::max_abs_err(out, reference));
        r.ok = Some(sliding::within_bound_of(kernel, out, reference, window));
    }
    r
}

fn axis_row(
    op: AxisOp, axis: Axis, x: &[f32], shape: AxisShape, out: &[f32], check: CheckMode,
) -> VectorRow {
    let mut r = row(&format!("{}-{}", axis.name(), op.name()), x.len(), None);
    r.shape = Some(format!("{}x{}", shape.rows, shape.cols));
    if check != CheckMode::None {
        r.check = check;
        r.max_abs_err = Some(axis::max_abs_err(op, axis, out, x, shape));
        r.ok = Some(axis::within_bound(op, axis, out, x, shape));
    }
    r
}

pub(super) fn axis_shape(args: &Args, default: (usize, usize)) -> Result<AxisShape, Error> {
    AxisShape::new(
        args.rows.unwrap_or(default.0),
        args.cols.unwrap_or(default.1),
    )
}

fn run_sim(args: &Args, check: CheckMode) -> Result<Vec<VectorRow>, Error> {
    let len = args.len.unwrap_or(SIM_DEFAULT_LEN);
    let sim = Simulator::default();
    if args.op == Op::Reduce {
        let shape = axis_shape(args, SIM_DEFAULT_SHAPE)?;
        eprintln!(
            "CPU simulator: reduce over {}×{}, seed {}",
            shape.rows, shape.cols, args.seed
        );
        let x = input(args, shape.rows as usize * shape.cols as usize);
        let mut rows = vec![];
        for axis in Axis::ALL {
            for op in AxisOp::ALL {
                let out =
                    sim.reduce_axis(op, axis, &x, shape.rows as usize, shape.cols as usize)?;
                rows.push(axis_row(op, axis, &x, shape, &out, check));
            }
        }
        return Ok(rows);
    }
    eprintln!(
        "CPU simulator: {:?} over {len} values, seed {}",
        args.op, args.seed
    );
    let x = input(args, len);
    match args.op {
        Op::Sum => ReduceKernel::ALL
            .into_iter()
            .map(|k| Ok(sum_row(k, &x, sim.sum(k, &x)?, check)))
            .collect(),
        _ => {
            let reference = sliding_reference(&x, args.window, check);
            sliding_kernels(args.window)
                .into_iter()
                .map(|k| {
                    let out = sim.sliding_average(k, &x, args.window)?;
                    Ok(sliding_row(k, len, args.window, &out, reference.as_ref()))
                })
                .collect()
        }
    }
}

/// The median milliseconds of `launch`, timed as `--warmup`, `--iters` and `--time-budget`
/// allow, and how many timed runs it is of.
fn median_ms(
    gpu: &Gpu, args: &Args, launch: impl FnMut() -> Result<(), Error>,
) -> Result<(f64, usize), Error> {
    let mut ms = gpu.time_within(&args.budget(), launch)?;
    Ok((kernels_gpu_host::plan::budget::median(&mut ms), ms.len()))
}

fn run_gpu(args: &Args, gpu: &Gpu, check: CheckMode) -> Result<Vec<VectorRow>, Error> {
    let (len, shape) = if args.op == Op::Reduce {
        let shape = axis_shape(args, GPU_DEFAULT_SHAPE)?;
        (shape.rows as usize * shape.cols as usize, Some(shape))
    } else {
        (args.len.unwrap_or(GPU_DEFAULT_LEN), None)
    };
    let info = gpu.info()?;
    eprintln!(
        "{}: {:?} over {len} values{}, seed {}, {}",
        info.name,
        args.op,
        shape.map_or(String::new(), |s| format!(" ({}×{})", s.rows, s.cols)),
        args.seed,
        args.budget_text()
    );
    let x = input(args, len);
    // An empty input still needs a buffer to pass (no kernel reads it).
    let dx = gpu.upload(if x.is_empty() { &[0.0] } else { &x })?;
    // The ceiling: copying the same bytes, counted read + written.
    let copy_gbps = if len > 0 {
        gpu.copy_gbps(&dx, &mut gpu.zeros(len)?, &args.budget())?
    } else {
        f64::NAN
    };
    let timed = |mut r: VectorRow, (ms, runs): (f64, usize), bytes: f64| {
        r.ms_median = Some(ms);
        r.runs = Some(runs);
        r.gbps = Some(bytes / (ms * 1e-3) / 1e9);
        r.copy_gbps = Some(copy_gbps);
        r.pct_of_copy = Some(r.gbps.unwrap_or(0.0) / copy_gbps);
        r
    };
    let mut rows = vec![];
    match (args.op, shape) {
        (Op::Sum, _) => {
            let mut scratch = gpu.reduce_scratch()?;
            let dx = if x.is_empty() { gpu.upload(&[])? } else { dx };
            for k in ReduceKernel::ALL {
                gpu.sum_device(k, &dx, &mut scratch)?;
                gpu.synchronize(k.entry())?;
                let sum = gpu.download(&scratch.result)?[0];
                let ms = median_ms(gpu, args, || gpu.sum_device(k, &dx, &mut scratch))?;
                // A reduction's traffic is its input, read once.
                rows.push(timed(sum_row(k, &x, sum, check), ms, 4.0 * len as f64));
            }
        }
        (Op::Reduce, Some(shape)) => {
            let mut scratch = AxisScratch::default();
            for axis in Axis::ALL {
                for op in AxisOp::ALL {
                    let outputs = shape.outputs(axis) as usize;
                    if outputs == 0 {
                        continue;
                    }
                    let mut out = gpu.nans(outputs)?;
                    gpu.reduce_axis_device(op, axis, &dx, shape, &mut out, &mut scratch)?;
                    gpu.synchronize("reduce_axis")?;
                    let r = axis_row(op, axis, &x, shape, &gpu.download(&out)?, check);
                    let ms = median_ms(gpu, args, || {
                        gpu.reduce_axis_device(op, axis, &dx, shape, &mut out, &mut scratch)
                    })?;
                    rows.push(timed(r, ms, 4.0 * (len + outputs) as f64));
                }
            }
        }
        _ => {
            let shape = SlidingShape::new(len, args.window)?;
            let outputs = shape.outputs() as usize;
            let reference = sliding_reference(&x, args.window, check);
            let mut scratch = SlidingScratch::default();
            for k in sliding_kernels(args.window) {
                if outputs == 0 {
                    rows.push(sliding_row(k, len, args.window, &[], reference.as_ref()));
                    continue;
                }
                let mut out = gpu.nans(outputs)?;
                gpu.sliding_average_device(k, &dx, args.window, &mut out, &mut scratch)?;
                gpu.synchronize(k.entry())?;
                let r = sliding_row(
                    k,
                    len,
                    args.window,
                    &gpu.download(&out)?,
                    reference.as_ref(),
                );
                let ms = median_ms(gpu, args, || {
                    gpu.sliding_average_device(k, &dx, args.window, &mut out, &mut scratch)
                })?;
                rows.push(timed(r, ms, 4.0 * (len + outputs) as f64));
            }
        }
    }
    Ok(rows)
}
