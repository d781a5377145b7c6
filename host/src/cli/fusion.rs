//! `kernels-gpu-host --op fusion`: the slides' fusion lesson. The product `a · b` written
//! the minitorch way, as a zip into an `m × n × k` intermediate and a reduce along its last
//! dimension, beside fused kernels that never write the intermediate: memory and time side
//! by side, every result checked against f64 with its own error bound (as `--check` says:
//! every output, a sample, or none).

use super::report::{none_failed, ok_cell, runs_cell};
use super::{Args, Checker, MatmulShape};
use kernels_gpu_host::check::spot::CheckMode;
use kernels_gpu_host::gpu::{AxisScratch, Gpu};
use kernels_gpu_host::plan::fusion;
use kernels_gpu_host::problem::axis::{Axis, AxisOp, AxisShape};
use kernels_gpu_host::sim::Simulator;
use kernels_gpu_host::{Backend, Error, MatmulKernel, Precision, SgemmKernel, TileWidth};

/// Default shapes: a 1 GiB intermediate on a GPU (2^28 floats, far past any cache); a
/// product the simulator runs in seconds, with `k` no multiple of a tile width.
const GPU_DEFAULT: (usize, usize, usize) = (1024, 256, 1024);
const SIM_DEFAULT: (usize, usize, usize) = (24, 40, 20);

/// One way of computing the product.
#[derive(Debug, serde::Serialize)]
struct FusionRow {
    method: String,
    shape: String,
    /// Bytes of intermediate tensors the method allocates and writes.
    intermediate_mib: f64,
    /// Bytes the method must move through memory at least (reads and writes).
    min_traffic_mib: f64,
    ms_median: Option<f64>,
    /// How many timed runs the median is of; `None` where nothing was timed.
    runs: Option<usize>,
    /// Largest `|out − ref| / Σ|a||b|`, in units of the rounding scale, over the outputs
    /// checked.
    max_scaled_err: Option<f64>,
    /// How the output was checked; `None` for the timing-only steps (no output of their own).
    check: Option<CheckMode>,
    /// Whether the output is within its bound; `None` when unchecked or without an output.
    ok: Option<bool>,
}

const MIB: f64 = (1 << 20) as f64;

/// The fused kernels the lesson compares with: the lecture's shared-memory tiled kernel
/// and the autotuned SGEMM.
fn fused_kernels() -> [(MatmulKernel, TileWidth); 2] {
    [
        (MatmulKernel::TiledStatic, TileWidth::Tw16),
        (
            MatmulKernel::Sgemm(SgemmKernel::autotuned(Precision::Fp32).expect("FP32 has kernels")),
            TileWidth::Tw16,
        ),
    ]
}

pub fn run(args: &Args, gpu: Option<Result<Gpu, Error>>) -> Result<bool, Error> {
    let rows = super::on_gpu_or_simulator(gpu, |gpu| run_gpu(args, gpu), || run_sim(args))?;
    super::print_rows(args, &rows, table);
    Ok(none_failed(rows.iter().map(|r| r.ok)))
}

fn table(rows: &[FusionRow]) -> String {
    let mut s = format!(
        "{:<34} {:>14} {:>15} {:>16} {:>10} {:>4} {:>12} {:>6}  ok\n",
        "method",
        "shape m×k×n",
        "intermediate MiB",
        "min traffic MiB",
        "ms",
        "runs",
        "err/Σ|ab|",
        "check"
    );
    for r in rows {
        let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_owned(), f);
        s += &format!(
            "{:<34} {:>14} {:>15.1} {:>16.1} {:>10} {:>4} {:>12} {:>6}  {}\n",
            r.method,
            r.shape,
            r.intermediate_mib,
            r.min_traffic_mib,
            opt(r.ms_median, |v| format!("{v:.3}")),
            runs_cell(r.runs),
            opt(r.max_scaled_err, |v| format!("{v:.2e}")),
            r.check.map_or("-", CheckMode::name),
            // A timing-only step has nothing to check.
            r.check.map_or("-", |_| ok_cell(r.ok))
        );
    }
    s
}

fn shape(args: &Args, default: (usize, usize, usize)) -> Result<MatmulShape, Error> {
    MatmulShape::new(
        args.m.unwrap_or(default.0),
        args.k.unwrap_or(default.1),
        args.n.unwrap_or(default.2),
    )
}

/// Bytes of an `m × n × k` f32 tensor.
fn intermediate_bytes(shape: MatmulShape) -> u64 {
    4 * shape.m as u64 * shape.n as u64 * shape.k as u64
}

/// A row that allocates `intermediate` bytes and moves at least `traffic`, checked by
/// `checker` with the bound of the given roundings where it has an output.
fn row(
    method: &str, shape: MatmulShape, intermediate: u64, traffic: u64,
    out: Option<(&[f32], usize)>, checker: &Checker,
) -> FusionRow {
    let acc = out.and_then(|(o, roundings)| {
        let acc = checker.accuracy(o)?;
        Some((acc, acc.within_bound(roundings, Precision::Fp32)))
    });
    FusionRow {
        method: method.to_owned(),
        shape: shape.to_string(),
        intermediate_mib: intermediate as f64 / MIB,
        min_traffic_mib: traffic as f64 / MIB,
        ms_median: None,
        runs: None,
        max_scaled_err: acc.map(|(a, _)| a.max_scaled_err),
        check: out.map(|_| checker.mode()),
        ok: acc.map(|(_, ok)| ok),
    }
}

/// The unfused pair's row.
fn unfused_row(shape: MatmulShape, out: &[f32], r: &Checker) -> Result<FusionRow, Error> {
    Ok(row(
        "zip + reduce (unfused)",
        shape,
        intermediate_bytes(shape),
        fusion::unfused_bytes(shape),
        Some((out, fusion::roundings(shape)?)),
        r,
    ))
}

/// A fused kernel's row.
fn fused_row(kernel: MatmulKernel, shape: MatmulShape, out: &[f32], r: &Checker) -> FusionRow {
    let name = format!("fused: {}", kernel.name());
    let traffic = fusion::fused_bytes(shape);
    row(&name, shape, 0, traffic, Some((out, shape.k as usize)), r)
}

fn run_sim(args: &Args) -> Result<Vec<FusionRow>, Error> {
    let shape = shape(args, SIM_DEFAULT)?;
    eprintln!(
        "CPU simulator: the fusion lesson on {shape}, seed {}",
        args.seed
    );
    let (a, b) = super::inputs(args, shape);
    let r = Checker::new(args, &a, &b, shape, true);
    let sim = Simulator::default();
    let unfused = sim.zip_reduce_matmul(&a, &b, shape)?;
    let mut rows = vec![unfused_row(shape, &unfused, &r)?];
    for (kernel, tw) in fused_kernels() {
        let out = sim.matmul(kernel, tw, &a, &b, shape)?;
        rows.push(fused_row(kernel, shape, &out, &r));
    }
    Ok(rows)
}

fn run_gpu(args: &Args, gpu: &Gpu) -> Result<Vec<FusionRow>, Error> {
    let shape = shape(args, GPU_DEFAULT)?;
    let len = fusion::intermediate_len(shape)?;
    eprintln!(
        "{}: the fusion lesson on {shape} ({:.0} MiB intermediate), seed {}, {}",
        gpu.info()?.name,
        4.0 * len as f64 / MIB,
        args.seed,
        args.budget_text()
    );
    let (a, b) = super::inputs(args, shape);
    let r = Checker::new(args, &a, &b, shape, false);
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let outputs = shape.lens().2;
    let budget = args.budget();
    // The median and how many runs it is of.
    let median = |launch: &mut dyn FnMut() -> Result<(), Error>| -> Result<_, Error> {
        let mut ms = gpu.time_within(&budget, launch)?;
        Ok((kernels_gpu_host::plan::budget::median(&mut ms), ms.len()))
    };
    let timed = |mut row: FusionRow, (ms, runs): (f64, usize)| {
        if !shape.is_trivial() {
            (row.ms_median, row.runs) = (Some(ms), Some(runs));
        }
        row
    };

    let mut tmp = gpu.zeros(len as usize)?;
    let mut out = gpu.nans(outputs)?;
    let mut scratch = AxisScratch::default();
    gpu.zip_reduce_matmul_device(&da, &db, &mut tmp, &mut out, &mut scratch, shape)?;
    gpu.synchronize("zip_reduce")?;
    let unfused = gpu.download(&out)?;
    let zip_ms = median(&mut || gpu.zip_device(&da, &db, &mut tmp, shape))?;
    let tall = AxisShape::new(outputs, shape.k as usize)?;
    let reduce_ms = median(&mut || {
        gpu.reduce_axis_device(AxisOp::Sum, Axis::Rows, &tmp, tall, &mut out, &mut scratch)
    })?;
    let total_ms = median(&mut || {
        gpu.zip_reduce_matmul_device(&da, &db, &mut tmp, &mut out, &mut scratch, shape)
    })?;
    let (la, lb, lc) = shape.lens();
    let big = intermediate_bytes(shape);
    let mut rows = vec![
        timed(
            row("  zip", shape, big, 4 * (la + lb) as u64 + big, None, &r),
            zip_ms,
        ),
        timed(
            row(
                "  reduce (row sums)",
                shape,
                0,
                big + 4 * lc as u64,
                None,
                &r,
            ),
            reduce_ms,
        ),
        timed(unfused_row(shape, &unfused, &r)?, total_ms),
    ];
    drop(tmp);
    for (kernel, tw) in fused_kernels() {
        let mut out = gpu.nans(outputs)?;
        gpu.matmul_device(kernel, tw, &da, &db, &mut out, shape)?;
        gpu.synchronize(kernel.entry(tw))?;
        let got = gpu.download(&out)?;
        let ms = median(&mut || gpu.matmul_device(kernel, tw, &da, &db, &mut out, shape))?;
        rows.push(timed(fused_row(kernel, shape, &got, &r), ms));
    }
    Ok(rows)
}
