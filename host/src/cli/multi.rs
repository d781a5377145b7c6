//! `kernels-gpu-host --gpus N|all`: the product, sums, reductions and sliding averages over
//! several GPUs ([`kernels_gpu_host::multi`]): one row for the whole run and one per device,
//! and a fingerprint of the result's bits, so that runs on different GPU counts can be
//! compared bit for bit (`--gpus 1` runs the same splits on one GPU).
//!
//! What is timed: on the host's clock, from the operands on the devices to the result in
//! place, every device waited for. A product starts from `a` and `b` on GPU 0 and ends with
//! the product gathered there (its per-device rows say how long each GPU waited for its
//! operands, computed and sent its rows back, from CUDA events). A sum starts from the
//! vector spread over the GPUs and ends with the sum on GPU 0; a reduction likewise, with
//! its outputs on GPU 0; a sliding average starts from the vector spread over the GPUs
//! (halo exchange included) and ends with the outputs where they were computed.

use super::report::{ok_cell, runs_cell};
use super::vector::{axis_shape, input, sliding_kernels};
use super::{Args, Checker, GPU_DEFAULT, GPU_DEFAULT_LEN, GPU_DEFAULT_SHAPE, Op};
use kernels_gpu_host::Error;
use kernels_gpu_host::check::spot::CheckMode;
use kernels_gpu_host::multi::Gpus;
use kernels_gpu_host::multi::vector::sum_within_bound_of;
use kernels_gpu_host::plan::budget::median;
use kernels_gpu_host::plan::reduce::ReduceKernel;
use kernels_gpu_host::plan::shard::{self, Chunks, SlidingPlan};
use kernels_gpu_host::plan::sliding;
use kernels_gpu_host::problem::axis::{self, Axis, AxisOp};
use std::ops::Range;

/// `--gpus`: how many GPUs, from GPU 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuCount {
    All,
    First(usize),
}

pub fn parse_gpus(s: &str) -> Result<GpuCount, String> {
    match s {
        "all" => Ok(GpuCount::All),
        _ => match s.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(GpuCount::First(n)),
            _ => Err(format!("`{s}`: give a number of GPUs (1 or more) or all")),
        },
    }
}

/// One row: the whole run (`device` `None`) or one device's part of it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MultiRow {
    /// `matmul`, `sum`, `rows-max`, `sliding`, …
    pub op: String,
    pub kernel: String,
    /// The problem: `m×k×n`, `n=…`, `n=… w=…`, `rows×cols`.
    pub size: String,
    pub gpus: usize,
    /// The device's CUDA ordinal; `None` for the whole run.
    pub device: Option<usize>,
    /// The device's part: rows of the product, elements of a vector, rows of a matrix.
    pub part: Option<String>,
    /// Median milliseconds of the whole run; for a device of a product, its compute.
    pub ms: Option<f64>,
    pub runs: Option<usize>,
    /// GFLOP/s (products) or GB/s (the rest) at `ms`; a device of a vector operation: its
    /// share of the bytes over the whole run's time.
    pub rate: Option<f64>,
    /// A device of a product: milliseconds waiting for its operands, and sending its rows
    /// back (the root: copying them into place), in the last timed run.
    pub wait_ms: Option<f64>,
    pub gather_ms: Option<f64>,
    /// FNV-1a of the result's bits (the whole run's row): equal on any GPU count.
    pub bits: Option<String>,
    /// Whether the last timed run's result has the first run's bits (the whole run's row).
    pub stable: Option<bool>,
    pub max_abs_err: Option<f64>,
    pub check: CheckMode,
    pub ok: Option<bool>,
}

impl MultiRow {
    fn new(op: &str, kernel: &str, size: String, gpus: usize) -> Self {
        Self {
            op: op.to_owned(),
            kernel: kernel.to_owned(),
            size,
            gpus,
            device: None,
            part: None,
            ms: None,
            runs: None,
            rate: None,
            wait_ms: None,
            gather_ms: None,
            bits: None,
            stable: None,
            max_abs_err: None,
            check: CheckMode::None,
            ok: None,
        }
    }

    /// The whole run's timing: the median `ms` of `runs`, and the rate at which it does
    /// `work` (FLOPs or bytes) in billions a second.
    fn timed(&mut self, ms: f64, runs: usize, work: f64) {
        self.ms = Some(ms);
        self.runs = Some(runs);
        self.rate = Some(work / (ms * 1e-3) / 1e9);
    }

    /// A row of device `ordinal`'s part of this run.
    fn part(&self, ordinal: usize, part: String) -> Self {
        Self {
            device: Some(ordinal),
            part: Some(part),
            runs: None,
            bits: None,
            stable: None,
            max_abs_err: None,
            check: CheckMode::None,
            ok: None,
            ..self.clone()
        }
    }
}

/// A 64-bit FNV-1a over the bits of `x`, as the hash, in order, of the hashes of blocks of
/// 2²⁰ values (hashed on all cores): the same for the same bits on every machine.
pub fn fingerprint(x: &[f32]) -> String {
    const BLOCK: usize = 1 << 20;
    let fnv = |words: &mut dyn Iterator<Item = u64>| {
        words.fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
            (h ^ w).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let blocks: Vec<&[f32]> = x.chunks(BLOCK).collect();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = blocks.len().div_ceil(threads).max(1);
    let hashes: Vec<u64> = std::thread::scope(|s| {
        let jobs: Vec<_> = blocks
            .chunks(per)
            .map(|group| {
                s.spawn(move || {
                    group
                        .iter()
                        .map(|b| fnv(&mut b.iter().map(|v| u64::from(v.to_bits()))))
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        jobs.into_iter()
            .flat_map(|j| j.join().expect("a hashing thread panicked"))
            .collect()
    });
    format!(
        "{:016x}",
        fnv(&mut hashes.into_iter().chain([x.len() as u64]))
    )
}

pub fn run(args: &Args, count: GpuCount) -> Result<bool, Error> {
    let gpus = match count {
        GpuCount::All => Gpus::all()?,
        GpuCount::First(n) => Gpus::first(n)?,
    };
    let names: Vec<String> = (0..gpus.len())
        .map(|d| Ok(format!("{}: {}", gpus.ordinal(d), gpus.gpu(d).info()?.name)))
        .collect::<Result<_, Error>>()?;
    let nccl = gpus
        .nccl()
        .map_or("no NCCL (one GPU)".to_owned(), |(v, path)| {
            format!("NCCL {}.{}.{} from {path}", v.0, v.1, v.2)
        });
    let copies = match (gpus.len(), gpus.direct_copies()) {
        (1, _) => "",
        (_, true) => ", copies between GPUs direct",
        (_, false) => ", copies between GPUs through the host (no peer access)",
    };
    eprintln!(
        "{} GPU(s) [{}], {nccl}{copies}; seed {}, {}",
        gpus.len(),
        names.join(", "),
        args.seed,
        args.budget_text()
    );
    let rows = match args.op {
        Op::Matmul => matmul(args, &gpus)?,
        Op::Sum => sum(args, &gpus)?,
        Op::Reduce => reduce(args, &gpus)?,
        Op::Sliding => sliding_average(args, &gpus)?,
        Op::Fusion => unreachable!("--gpus with --op fusion is refused by the command line"),
    };
    super::print_rows(args, &rows, table);
    let unstable = rows.iter().any(|r| r.stable == Some(false));
    if unstable {
        eprintln!("error: a result's bits changed between runs (see the `stable` column)");
    }
    Ok(super::report::none_failed(rows.iter().map(|r| r.ok)) && !unstable)
}

fn ms_of(
    gpus: &Gpus, args: &Args, launch: impl FnMut() -> Result<(), Error>,
) -> Result<(f64, usize), Error> {
    let mut ms = gpus.time_within(&args.budget(), launch)?;
    Ok((median(&mut ms), ms.len()))
}

fn range(r: &Range<usize>) -> String {
    format!("{}..{}", r.start, r.end)
}

fn matmul(args: &Args, gpus: &Gpus) -> Result<Vec<MultiRow>, Error> {
    let shape = args.shape(GPU_DEFAULT)?;
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let (a, b) = super::inputs(args, shape);
    let checker = Checker::new(args, &a, &b, shape, false);
    let root = gpus.gpu(0);
    let (da, db) = (root.upload(&a)?, root.upload(&b)?);
    let mut out = root.nans(m * n)?;
    let mut host = vec![0.0f32; m * n];
    let mut rows = vec![];
    for (kernel, tw) in args.runs(shape)? {
        let name = match kernel.is_tiled() {
            true => format!("{kernel}-tw{}", tw.get()),
            false => kernel.to_string(),
        };
        let mut total = MultiRow::new("matmul", &name, shape.to_string(), gpus.len());
        root.fill_nan(&mut out)?;
        let first = gpus.matmul_device(kernel, tw, &da, &db, &mut out, shape)?;
        gpus.synchronize()?;
        root.download_into(&out, &mut host)?;
        total.kernel = format!("{name} ({})", first.kernel);
        total.bits = Some(fingerprint(&host));
        total.check = checker.mode();
        if let Some(acc) = checker.accuracy(&host) {
            total.max_abs_err = Some(acc.max_abs_err);
            total.ok = Some(acc.within_bound(k, kernel.precision()));
        }
        if shape.is_trivial() {
            rows.push(total);
            continue;
        }
        let mut last = None;
        let (ms, runs) = ms_of(gpus, args, || {
            last = Some(gpus.matmul_device(kernel, tw, &da, &db, &mut out, shape)?);
            Ok(())
        })?;
        total.timed(ms, runs, shape.flops());
        root.download_into(&out, &mut host)?;
        total.stable = Some(total.bits.as_deref() == Some(fingerprint(&host).as_str()));
        let last = last.expect("at least one timed run");
        let timings = last.timings()?;
        let mut parts = vec![];
        for (p, t) in last.parts.iter().zip(timings) {
            let mut row = total.part(gpus.ordinal(p.device), format!("rows {}", range(&p.rows)));
            row.kernel = p.kernel.clone();
            row.ms = Some(t.compute_ms);
            row.rate = Some(2.0 * (t.rows * k * n) as f64 / (t.compute_ms * 1e-3) / 1e9);
            row.wait_ms = Some(t.wait_ms);
            row.gather_ms = Some(t.gather_ms);
            parts.push(row);
        }
        rows.push(total);
        rows.extend(parts);
    }
    Ok(rows)
}

/// One row per device of a vector operation: its part, its share of `bytes` over the whole
/// run's `ms`.
fn vector_parts(
    total: &MultiRow, gpus: &Gpus, parts: &[Range<usize>], len: usize, bytes: f64, what: &str,
) -> Vec<MultiRow> {
    parts
        .iter()
        .enumerate()
        .map(|(d, r)| {
            let mut row = total.part(gpus.ordinal(d), format!("{what} {}", range(r)));
            row.rate = total
                .ms
                .map(|ms| bytes * r.len() as f64 / len.max(1) as f64 / (ms * 1e-3) / 1e9);
            row
        })
        .collect()
}

fn sum(args: &Args, gpus: &Gpus) -> Result<Vec<MultiRow>, Error> {
    let len = args.len.unwrap_or(GPU_DEFAULT_LEN);
    let x = input(args, len);
    let dx = gpus.upload_vector(&x, 0)?;
    let reference = (args.check != Some(CheckMode::None))
        .then(|| kernels_gpu_host::plan::reduce::reference(&x));
    drop(x);
    let root = gpus.gpu(0);
    let mut result = root.zeros(1)?;
    let chunk = gpus.vector_chunk();
    let mut rows = vec![];
    for kernel in ReduceKernel::ALL {
        let size = format!("n={len}");
        let mut total = MultiRow::new("sum", kernel.name(), size, gpus.len());
        gpus.sum_sharded(kernel, &dx, &mut result)?;
        gpus.synchronize()?;
        let s = root.download(&result)?[0];
        total.bits = Some(format!("{:08x}", s.to_bits()));
        if let Some(reference) = reference {
            total.check = CheckMode::Full;
            total.max_abs_err = Some((s as f64 - reference.0).abs());
            total.ok = Some(sum_within_bound_of(s, reference, len, chunk));
        }
        let (ms, runs) = ms_of(gpus, args, || gpus.sum_sharded(kernel, &dx, &mut result))?;
        total.stable = Some(root.download(&result)?[0].to_bits() == s.to_bits());
        let bytes = 4.0 * len as f64;
        total.timed(ms, runs, bytes);
        let parts = vector_parts(&total, gpus, &dx.layout(), len, bytes, "elements");
        rows.push(total);
        rows.extend(parts);
    }
    Ok(rows)
}

fn reduce(args: &Args, gpus: &Gpus) -> Result<Vec<MultiRow>, Error> {
    let shape = axis_shape(args, GPU_DEFAULT_SHAPE)?;
    let (r, c) = (shape.rows as usize, shape.cols as usize);
    let x = input(args, r * c);
    let root = gpus.gpu(0);
    let mut rows = vec![];
    for axis in Axis::ALL {
        let layout = match shard::axis_rows_align(shape, axis) {
            Some(align) => shard::even(r, gpus.len(), align),
            // A single pass: GPU 0 holds it all.
            None => (0..gpus.len())
                .map(|d| if d == 0 { 0..r } else { r..r })
                .collect(),
        };
        let dx = gpus.upload_rows(&x, r, c, &layout, 0)?;
        for op in AxisOp::ALL {
            let outputs = shape.outputs(axis) as usize;
            let kernel = format!("{}-{}", axis.name(), op.name());
            let mut total = MultiRow::new("reduce", &kernel, format!("{r}×{c}"), gpus.len());
            if outputs == 0 {
                rows.push(total);
                continue;
            }
            let mut out = root.nans(outputs)?;
            gpus.reduce_axis_sharded(op, axis, &dx, &mut out)?;
            gpus.synchronize()?;
            let host = root.download(&out)?;
            total.bits = Some(fingerprint(&host));
            if args.check != Some(CheckMode::None) {
                total.check = CheckMode::Full;
                total.max_abs_err = Some(axis::max_abs_err(op, axis, &host, &x, shape));
                total.ok = Some(axis::within_bound(op, axis, &host, &x, shape));
            }
            let (ms, runs) = ms_of(gpus, args, || {
                gpus.reduce_axis_sharded(op, axis, &dx, &mut out)
            })?;
            total.stable = Some(total.bits == Some(fingerprint(&root.download(&out)?)));
            let bytes = 4.0 * (r * c + outputs) as f64;
            total.timed(ms, runs, bytes);
            let parts = vector_parts(&total, gpus, &layout, r, bytes, "rows");
            rows.push(total);
            rows.extend(parts);
        }
    }
    Ok(rows)
}

fn sliding_average(args: &Args, gpus: &Gpus) -> Result<Vec<MultiRow>, Error> {
    let len = args.len.unwrap_or(GPU_DEFAULT_LEN);
    let window = args.window;
    let x = input(args, len);
    let chunk = gpus.vector_chunk();
    let layout = Chunks::new(len, chunk)?.shards(&vec![1.0; gpus.len()]);
    let plan = SlidingPlan::new(len, window, chunk, layout.clone())?;
    let mut dx = gpus.upload_rows(&x, len, 1, &layout, plan.halo_room())?;
    let outputs = plan.outputs();
    let reference = (args.check != Some(CheckMode::None)).then(|| sliding::reference(&x, window));
    // 16 GiB at 2³² values: the host keeps only what it compares.
    drop(x);
    let mut rows = vec![];
    for kernel in sliding_kernels(window) {
        let size = format!("n={len} w={window}");
        let mut total = MultiRow::new("sliding", kernel.name(), size, gpus.len());
        let out = gpus.sliding_average_sharded(kernel, &mut dx, window)?;
        gpus.synchronize()?;
        let host = out.download(gpus)?;
        total.bits = Some(fingerprint(&host));
        if let Some(r) = &reference {
            total.check = CheckMode::Full;
            total.max_abs_err = Some(sliding::max_abs_err(&host, r));
            total.ok = Some(sliding::within_bound_of(kernel, &host, r, window));
        }
        drop(host);
        drop(out);
        let mut last = None;
        let (ms, runs) = ms_of(gpus, args, || {
            last = Some(gpus.sliding_average_sharded(kernel, &mut dx, window)?);
            Ok(())
        })?;
        let last = last.expect("at least one timed run").download(gpus)?;
        total.stable = Some(total.bits == Some(fingerprint(&last)));
        let bytes = 4.0 * (len + outputs) as f64;
        total.timed(ms, runs, bytes);
        let parts = vector_parts(&total, gpus, &layout, len, bytes, "elements");
        rows.push(total);
        rows.extend(parts);
    }
    Ok(rows)
}

/// An aligned text table: each whole run, then its devices, indented.
pub fn table(rows: &[MultiRow]) -> String {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_owned(), |v| format!("{v:.p$}"));
    let w = rows
        .iter()
        .map(|r| r.kernel.len() + 2)
        .max()
        .unwrap_or(0)
        .max(20);
    let header = [
        "op",
        "kernel",
        "size",
        "gpu",
        "part",
        "ms",
        "runs",
        "GFLOP|GB/s",
        "wait ms",
        "gather",
        "bits",
        "stable",
        "max_abs",
        "check",
        "ok",
    ];
    let mut s = line(&header.map(str::to_owned), w);
    for r in rows {
        let (gpu, kernel) = match r.device {
            None => (format!("{}×", r.gpus), r.kernel.clone()),
            Some(d) => (d.to_string(), format!("  {}", r.kernel)),
        };
        let stable = r.stable.map_or("-", |s| if s { "yes" } else { "NO" });
        let ok = if r.device.is_some() {
            ""
        } else {
            ok_cell(r.ok)
        };
        s += &line(
            &[
                r.op.clone(),
                kernel,
                r.size.clone(),
                gpu,
                r.part.clone().unwrap_or_else(|| "-".into()),
                opt(r.ms, 3),
                runs_cell(r.runs),
                opt(r.rate, 0),
                opt(r.wait_ms, 3),
                opt(r.gather_ms, 3),
                r.bits.clone().unwrap_or_else(|| "-".into()),
                stable.to_owned(),
                r.max_abs_err.map_or("-".to_owned(), |v| format!("{v:.3e}")),
                r.check.name().to_owned(),
                ok.to_owned(),
            ],
            w,
        );
    }
    s
}

/// One line of [`table`]: the first two cells left-aligned (the kernel's `w` wide), the
/// rest right-aligned.
fn line(cells: &[String; 15], w: usize) -> String {
    let widths = [8, w, 22, 4, 24, 10, 4, 10, 8, 8, 16, 6, 11, 6, 9];
    let cells: Vec<String> = cells
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(i, (c, width))| match i {
            0 | 1 => format!("{c:<width$}"),
            _ => format!("{c:>width$}"),
        })
        .collect();
    cells.join(" ") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_counts_parse() {
        assert_eq!(parse_gpus("all"), Ok(GpuCount::All));
        assert_eq!(parse_gpus("2"), Ok(GpuCount::First(2)));
        assert!(parse_gpus("0").is_err() && parse_gpus("two").is_err());
    }

    #[test]
    fn fingerprints_follow_every_bit_and_the_length() {
        let x: Vec<f32> = (0..3_000_000).map(|i| i as f32).collect();
        let f = fingerprint(&x);
        assert_eq!(f, fingerprint(&x.clone()));
        let mut y = x.clone();
        y[2_500_000] = f32::from_bits(y[2_500_000].to_bits() ^ 1);
        assert_ne!(fingerprint(&y), f);
        assert_ne!(fingerprint(&x[..x.len() - 1]), f);
        assert_ne!(fingerprint(&[0.0]), fingerprint(&[-0.0]));
    }
}
