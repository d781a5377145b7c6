//! The GEMM shape suites: each shape run by the autotuned SGEMM of a precision and by cuBLAS
//! in the same math in the same process, so that the ratio of the two says how the ladder
//! does on shapes other than big aligned squares.
//!
//! Three sets of shapes ([`Suite`]): the 14 listed ones ([`SHAPES`]), shapes drawn at
//! random from a seed ([`random_shapes`]: nobody chose them, so no kernel was fitted to
//! them), and the caller's own ([`parse_shapes`]: `--suite given --shapes 199x849x8263,…`).
//! Each row says which kernel the autotuner chose and how the results were checked; a
//! memory-bound shape (`m`, `n` or `k` at most [`MEMORY_BOUND_DIM`]) also says the
//! bandwidth its product reached as a share of the device's copy bandwidth, measured in the
//! same run ([`SuiteRow::copy_share`]).
//!
//! Results are spot-checked ([`crate::check::spot`]) rather than compared in full: an f64 product
//! of 8192³ on the CPU would take far longer than the suite.

use crate::check::data::Rng;
use crate::check::reference::error_bound;
use crate::check::spot::{Check, SAMPLES, spot_check};
use crate::gpu::autotune::Tuned;
use crate::gpu::{Cublas, CublasMath, Gpu};
use crate::plan::budget::{TimeBudget, median};
use crate::plan::kernels::MatmulKernel;
use crate::plan::sgemm::SgemmKernel;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use cudarc::driver::CudaSlice;
use kernels_gpu::sgemm::Precision;
use kernels_gpu::sgemm::epilogue::exp_f32;

/// The suite's shapes, `(m, k, n)`: the lecture's, powers of two from 512 to 8192, odd
/// sizes, small `m` or `n` with large `k` (a linear layer on a small batch), tiny `k`, and
/// a wide output over a short `k`.
pub const SHAPES: [(usize, usize, usize); 14] = [
    (5120, 256, 5120),
    cube(512),
    cube(1024),
    cube(2048),
    cube(4096),
    cube(8192),
    cube(4093),
    (2049, 2047, 2051),
    (64, 4096, 4096),
    (4096, 4096, 64),
    (32, 8192, 8192),
    (8192, 8192, 32),
    (8192, 128, 8192),
    (16384, 256, 16384),
];

/// The `(m, k, n)` of a product of two `side × side` matrices.
pub const fn cube(side: usize) -> (usize, usize, usize) {
    (side, side, side)
}

/// [`SHAPES`] as checked shapes.
pub fn shapes() -> Result<Vec<MatmulShape>> {
    SHAPES
        .iter()
        .map(|&(m, k, n)| MatmulShape::new(m, k, n))
        .collect()
}

/// The largest dimension of a random shape.
pub const RANDOM_MAX_DIM: u32 = 16384;

/// The most multiply-adds (`m·n·k`) of a random shape: 2³⁶, 4096³. The largest shapes take
/// a few milliseconds a run on an H100 (about 3 ms for cuBLAS FP32 at 4096³), so forty of
/// them, each autotuned and timed against cuBLAS, take a few minutes.
pub const RANDOM_MAX_MACS: u64 = 1 << 36;

/// `count` shapes from `seed`, the same on every machine: each dimension, `m`, then `k`,
/// then `n`, is `⌊2^(u · log₂ 16385)⌋` for `u` uniform in `[0, 1)` (24 random bits of
/// SplitMix64, [`Rng`]), so log-uniform in `1..=16384` (as likely between 1 and 2 as between
/// 8192 and 16384); a triple of more than [`RANDOM_MAX_MACS`] multiply-adds is drawn again
/// (about 1 in 75). The power is [`exp_f32`] (plain `f32` arithmetic, no library call), so
/// no platform's `exp` decides a dimension.
pub fn random_shapes(seed: u64, count: usize) -> Vec<MatmulShape> {
    let mut rng = Rng::new(seed);
    let mut dim = || {
        // log₂ 16385 · ln 2 = ln 16385.
        const LN_TOP: f32 = 9.704_122;
        let d = exp_f32(rng.next_f32() * LN_TOP) as u32;
        d.clamp(1, RANDOM_MAX_DIM)
    };
    let mut shapes = Vec::with_capacity(count);
    while shapes.len() < count {
        let (m, k, n) = (dim(), dim(), dim());
        let shape = MatmulShape::new(m as usize, k as usize, n as usize)
            .expect("dimensions up to 16384 fit the kernels' indices");
        if shape.macs() <= RANDOM_MAX_MACS {
            shapes.push(shape);
        }
    }
    shapes
}

/// Which set of shapes: the command line's `--suite listed|random|given`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SuiteKind {
    /// [`SHAPES`].
    Listed,
    /// [`random_shapes`].
    Random,
    /// The caller's shapes ([`parse_shapes`]).
    Given,
}

impl SuiteKind {
    pub const ALL: [Self; 3] = [Self::Listed, Self::Random, Self::Given];

    /// `listed`, `random` or `given`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Listed => "listed",
            Self::Random => "random",
            Self::Given => "given",
        }
    }

    /// The kind called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Which shapes a suite runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Suite {
    /// [`SHAPES`].
    Listed,
    /// [`random_shapes`]`(seed, count)`.
    Random { seed: u64, count: usize },
    /// The caller's shapes, in their order.
    Given(Vec<MatmulShape>),
}

impl Suite {
    /// The suite of `kind`, with `seed` and `count` where it draws its shapes and `given`
    /// where it runs the caller's (ignored by the other kinds).
    pub fn new(kind: SuiteKind, seed: u64, count: usize, given: &[MatmulShape]) -> Self {
        match kind {
            SuiteKind::Listed => Self::Listed,
            SuiteKind::Random => Self::Random { seed, count },
            SuiteKind::Given => Self::Given(given.to_vec()),
        }
    }

    /// The suite's shapes, in the order they run.
    pub fn shapes(&self) -> Result<Vec<MatmulShape>> {
        match self {
            Self::Listed => shapes(),
            &Self::Random { seed, count } => Ok(random_shapes(seed, count)),
            Self::Given(shapes) => Ok(shapes.clone()),
        }
    }

    /// What the header line says the shapes are.
    pub fn describe(&self) -> String {
        match self {
            Self::Listed => format!("the {} listed shapes", SHAPES.len()),
            Self::Random { seed, count } => format!(
                "{count} random shapes from seed {seed} (each of m, k, n log-uniform in \
                 1..={RANDOM_MAX_DIM}, m·n·k ≤ 2^{})",
                RANDOM_MAX_MACS.trailing_zeros()
            ),
            Self::Given(shapes) => format!("{} given shapes", shapes.len()),
        }
    }
}

/// The shapes of `--suite given --shapes`: `m×k×n` (or `mxkxn`) triples separated by commas,
/// each a valid [`MatmulShape`] with no zero dimension; at least one. The error says which
/// entry is wrong and why.
pub fn parse_shapes(list: &str) -> std::result::Result<Vec<MatmulShape>, String> {
    let parse = |entry: &str| -> std::result::Result<MatmulShape, String> {
        let shape: MatmulShape = entry.parse()?;
        if shape.is_trivial() {
            return Err(format!(
                "{entry:?}: a dimension of 0 leaves nothing to time"
            ));
        }
        Ok(shape)
    };
    let shapes = list
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(parse)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if shapes.is_empty() {
        return Err("no shapes given (m×k×n, separated by commas)".into());
    }
    Ok(shapes)
}

/// The dimension at or below which a shape is memory-bound: its bandwidth, not its
/// arithmetic, is what a kernel can be held to.
pub const MEMORY_BOUND_DIM: u32 = 16;

/// Whether `shape` is memory-bound: `m`, `n` or `k` at most [`MEMORY_BOUND_DIM`].
pub fn is_memory_bound(shape: MatmulShape) -> bool {
    shape.m.min(shape.n).min(shape.k) <= MEMORY_BOUND_DIM
}

/// The bytes a product must move: `a` and `b` once each at `input_bytes` an element (4
/// for the f32 operands every precision's SGEMM reads, 2 for the 16-bit operands of a
/// BF16 row on a Hopper), and the f32 output once.
pub fn bytes_moved(shape: MatmulShape, input_bytes: f64) -> f64 {
    let (m, k, n) = (shape.m as f64, shape.k as f64, shape.n as f64);
    input_bytes * (m * k + k * n) + 4.0 * m * n
}

/// One shape of the suite.
#[derive(Clone, Debug)]
pub struct SuiteRow {
    pub shape: MatmulShape,
    /// What the autotuner chose.
    pub kernel: Tuned,
    /// Median milliseconds of the autotuned SGEMM.
    pub ms: f64,
    /// Median milliseconds of cuBLAS.
    pub cublas_ms: f64,
    /// The spot checks of the SGEMM's and cuBLAS's results.
    pub check: Check,
    pub cublas_check: Check,
    /// The device's copy bandwidth measured in the same run, GB/s (read plus written).
    pub copy_gbps: f64,
    /// Where ours runs on 16-bit operands converted from the f32 inputs on the device (BF16
    /// on a Hopper: rung 17): the conversion's median milliseconds, both operands, which
    /// [`ms`](Self::ms) leaves out as cuBLAS's time leaves out its operands' rounding.
    pub convert_ms: Option<f64>,
}

impl SuiteRow {
    /// cuBLAS's time over ours: above 1 is faster than cuBLAS.
    pub fn ratio(&self) -> f64 {
        self.cublas_ms / self.ms
    }

    /// Whether both results passed their spot checks.
    pub fn checked(&self) -> bool {
        self.check.ok() && self.cublas_check.ok()
    }

    /// For a [memory-bound](is_memory_bound) shape, the [bytes it must move](bytes_moved)
    /// per second of ours as a share of the copy bandwidth (1 = as fast as a copy); `None`
    /// for the others.
    pub fn copy_share(&self) -> Option<f64> {
        // Ours reads 16-bit operands where it timed them converted (BF16 on a Hopper).
        let input_bytes = if self.convert_ms.is_some() { 2.0 } else { 4.0 };
        let bytes = bytes_moved(self.shape, input_bytes);
        is_memory_bound(self.shape).then(|| bytes / (self.ms * 1e-3) / 1e9 / self.copy_gbps)
    }
}

/// The geometric mean of the rows' [ratios](SuiteRow::ratio) (1 for none).
pub fn geomean(rows: &[SuiteRow]) -> f64 {
    if rows.is_empty() {
        return 1.0;
    }
    (rows.iter().map(|r| r.ratio().ln()).sum::<f64>() / rows.len() as f64).exp()
}

/// The line under the header that says how every row is checked.
pub fn check_note(math: CublasMath) -> String {
    format!(
        "check: {SAMPLES} outputs of each result (the corners, then random ones) against f64 \
         dot products, within the {} error bound (k·2⁻²³ plus the inputs' rounding), ours \
         and cuBLAS's; % copy (m, n or k ≤ {MEMORY_BOUND_DIM}): bytes of a, b and c ÷ our \
         time, over the copy bandwidth measured in this run",
        math.precision().name()
    )
}

/// The table's header line (the columns of [`line()`]).
pub fn header() -> String {
    format!(
        "{:<20} {:>10} {:>10} {:>8} {:>7} {:>10}  {:<10} chosen configuration",
        "m×k×n", "ours ms", "cuBLAS ms", "ratio", "% copy", "convert ms", "check"
    )
}

/// One row of the table.
pub fn line(r: &SuiteRow) -> String {
    format!(
        "{:<20} {:>10.3} {:>10.3} {:>7.3}× {:>7} {:>10}  {:<10} {}",
        r.shape.to_string(),
        r.ms,
        r.cublas_ms,
        r.ratio(),
        r.copy_share()
            .map_or("-".to_owned(), |s| format!("{:.1}", 100.0 * s)),
        r.convert_ms.map_or("-".to_owned(), |ms| format!("{ms:.3}")),
        format!("{SAMPLES} {}", if r.checked() { "ok" } else { "WRONG" }),
        r.kernel
    )
}

/// The closing line: the geometric mean, the worst ratio and, where there are memory-bound
/// shapes, the lowest share of the copy bandwidth among them.
pub fn summary(rows: &[SuiteRow], math: CublasMath) -> String {
    let worst = rows.iter().map(|r| r.ratio()).fold(f64::INFINITY, f64::min);
    let mut s = format!(
        "geometric mean {:.3}× {math} over {} shapes, worst {:.3}× (ratio = cuBLAS ms / ours ms)",
        geomean(rows),
        rows.len(),
        worst
    );
    let shares: Vec<f64> = rows.iter().filter_map(SuiteRow::copy_share).collect();
    if let Some(copy) = rows.first().map(|r| r.copy_gbps)
        && !shares.is_empty()
    {
        let lowest = shares.iter().copied().fold(f64::INFINITY, f64::min);
        s += &format!(
            "; {} memory-bound, lowest {:.1}% of the copy bandwidth ({copy:.0} GB/s)",
            shares.len(),
            100.0 * lowest
        );
    }
    s
}

/// Floats of each buffer the copy bandwidth is measured on: 256 MiB, five times an H100's
/// L2 cache, so the copy streams from memory.
const COPY_FLOATS: usize = 1 << 26;

/// Runs `shapes` on `gpu`: for each, uniform inputs from `seed`, the autotuned SGEMM of
/// `cublas`'s precision and `cublas` itself timed with `warmup` warm-ups and [`ROUNDS`]
/// alternating rounds of `runs` event-timed launches (the median of each side over all), both spot-checked within the precision's bound (BF16 cuBLAS on operands
/// rounded to BF16 once, before timing); `progress` sees each row as it is done. The copy
/// bandwidth is measured first, as many runs.
pub fn run(
    gpu: &Gpu, cublas: &Cublas, shapes: &[MatmulShape], (warmup, runs): (usize, usize), seed: u64,
    mut progress: impl FnMut(&SuiteRow),
) -> Result<Vec<SuiteRow>> {
    let precision = cublas.math().precision();
    let autotuned = MatmulKernel::Sgemm(SgemmKernel::autotuned(precision)?);
    let tw = TileWidth::Tw16;
    let copy_gbps = {
        let src = gpu.zeros(COPY_FLOATS)?;
        let budget = TimeBudget::new(warmup, runs, None);
        gpu.copy_gbps(&src, &mut gpu.zeros(COPY_FLOATS)?, &budget)?
    };
    let mut rows = vec![];
    for &shape in shapes {
        let (la, lb, lo) = shape.lens();
        let mut rng = Rng::new(seed);
        let (a, b) = (rng.uniform(la), rng.uniform(lb));
        let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
        let bf16 = match cublas.math() {
            CublasMath::Bf16 => Some((gpu.upload_bf16(&a)?, gpu.upload_bf16(&b)?)),
            _ => None,
        };
        let theirs = |out: &mut _| match &bf16 {
            Some((a16, b16)) => cublas.gemm_bf16(a16, b16, out, shape),
            None => cublas.sgemm(&da, &db, out, shape),
        };
        let mut out = gpu.zeros(lo)?;
        let bound = error_bound(shape.k as usize, precision);
        if precision == Precision::Bf16 && gpu.info()?.compute_capability == (9, 0) {
            let row = half_row(
                gpu,
                &a,
                &b,
                (&da, &db),
                shape,
                (warmup, runs),
                bound,
                theirs,
            )?;
            let row = SuiteRow { copy_gbps, ..row };
            progress(&row);
            rows.push(row);
            continue;
        }
        // The first launch tunes the shape (once per device, shape and build).
        gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape)?;
        let kernel = crate::gpu::autotune::choose(gpu, &da, &db, &mut out, shape, precision)?;
        // Zeros before each checked run: never right for inputs in [0, 1).
        let zero = |out: &mut _| {
            gpu.stream()
                .memset_zeros(out)
                .map_err(|source| Error::Driver {
                    call: "cuMemsetD8Async",
                    source,
                })
        };
        zero(&mut out)?;
        gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape)?;
        let check = spot_check(&a, &b, &gpu.download(&out)?, shape, SAMPLES, bound);
        zero(&mut out)?;
        theirs(&mut out)?;
        let cublas_check = spot_check(&a, &b, &gpu.download(&out)?, shape, SAMPLES, bound);
        let (ms, cublas_ms) = alternating(gpu, (warmup, runs), |ours| match ours {
            true => gpu.matmul_device(autotuned, tw, &da, &db, &mut out, shape),
            false => theirs(&mut out),
        })?;
        let row = SuiteRow {
            shape,
            kernel,
            ms,
            cublas_ms,
            check,
            cublas_check,
            copy_gbps,
            convert_ms: None,
        };
        progress(&row);
        rows.push(row);
    }
    Ok(rows)
}

/// Rounds in which ours and cuBLAS's timed runs alternate, each side's median taken over all of its runs.
pub const ROUNDS: usize = 5;

/// The median milliseconds of ours (`run(true)`) and of cuBLAS (`run(false)`): [`ROUNDS`]
/// rounds, each `runs` event-timed runs of ours then `runs` of cuBLAS's (after `warmup`
/// warm-ups in the first round, one in each after), the median over all of a side's runs.
/// A slow spell of the device that lasts a few milliseconds (clocks, power, another
/// process) then falls on both sides and on one round of each, not on all of one side's
/// runs: the ratio of a product of 10 µs moved by 0.1 and more between runs that timed
/// each side once.
fn alternating(
    gpu: &Gpu, (warmup, runs): (usize, usize), mut run: impl FnMut(bool) -> Result<()>,
) -> Result<(f64, f64)> {
    let (mut ours, mut theirs) = (vec![], vec![]);
    for round in 0..ROUNDS {
        let warmup = if round == 0 { warmup } else { 1 };
        ours.extend(gpu.time_ms(warmup, runs, || run(true))?);
        theirs.extend(gpu.time_ms(warmup, runs, || run(false))?);
    }
    Ok((median(&mut ours), median(&mut theirs)))
}

/// One BF16 row on a Hopper: the f32 inputs converted to `bf16` on the device, rung 17's
/// autotuned run timed on them (kernel only; the conversion timed on its own), and `theirs`
/// (cuBLAS on the same bits), both spot-checked within `bound`.
#[allow(clippy::too_many_arguments)]
fn half_row(
    gpu: &Gpu, a: &[f32], b: &[f32], (da, db): (&CudaSlice<f32>, &CudaSlice<f32>),
    shape: MatmulShape, (warmup, runs): (usize, usize), bound: f64,
    theirs: impl Fn(&mut CudaSlice<f32>) -> Result<()>,
) -> Result<SuiteRow> {
    use half::bf16;
    let MatmulShape { m, k, n } = shape;
    let convert = || -> Result<_> {
        Ok((
            gpu.convert_half::<bf16>(da, m, k, k)?,
            gpu.convert_half::<bf16>(db, k, n, n)?,
        ))
    };
    let (a16, b16) = convert()?;
    let convert_ms = median(&mut gpu.time_ms(warmup, runs, || convert().map(drop))?);
    let mut out = gpu.nans(shape.lens().2)?;
    let run = gpu.gemm_half_auto_device(&a16, &b16, &mut out, shape)?;
    gpu.fill_nan(&mut out)?;
    gpu.gemm_half_choice_device(run, &a16, &b16, &mut out, shape)?;
    let check = spot_check(a, b, &gpu.download(&out)?, shape, SAMPLES, bound);
    gpu.fill_nan(&mut out)?;
    theirs(&mut out)?;
    let cublas_check = spot_check(a, b, &gpu.download(&out)?, shape, SAMPLES, bound);
    let (ms, cublas_ms) = alternating(gpu, (warmup, runs), |ours| match ours {
        true => gpu.gemm_half_choice_device(run, &a16, &b16, &mut out, shape),
        false => theirs(&mut out),
    })?;
    Ok(SuiteRow {
        shape,
        kernel: run.tuned(),
        ms,
        cublas_ms,
        check,
        cublas_check,
        copy_gbps: 0.0,
        convert_ms: Some(convert_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_shapes_parse_or_say_which_entry_is_wrong() {
        let shapes = parse_shapes("199x849x8263, 9×583×4591,").unwrap();
        assert_eq!(
            shapes,
            [
                MatmulShape::new(199, 849, 8263).unwrap(),
                MatmulShape::new(9, 583, 4591).unwrap()
            ]
        );
        let suite = Suite::new(SuiteKind::Given, 1, 40, &shapes);
        assert_eq!(suite.shapes().unwrap(), shapes);
        assert_eq!(suite.describe(), "2 given shapes");
        for (list, says) in [
            ("", "no shapes"),
            ("3x4", "\"3x4\" is not m×k×n"),
            ("3x4x5x6", "is not m×k×n"),
            ("3xfourx5", "\"four\" is not a dimension"),
            ("3x0x5", "a dimension of 0"),
            ("70000x70000x1", "70000x70000x1"),
        ] {
            let e = parse_shapes(list).unwrap_err();
            assert!(e.contains(says), "{list}: {e}");
        }
    }

    #[test]
    fn random_shapes_follow_the_rule_and_the_seed() {
        let shapes = random_shapes(7, 2000);
        assert_eq!(shapes.len(), 2000);
        assert_eq!(shapes, random_shapes(7, 2000));
        assert_ne!(shapes, random_shapes(8, 2000));
        // A prefix: more shapes from the same seed begin with the same ones.
        assert_eq!(random_shapes(7, 40)[..], shapes[..40]);
        let dims = || shapes.iter().flat_map(|s| [s.m, s.k, s.n]);
        assert!(dims().all(|d| (1..=RANDOM_MAX_DIM).contains(&d)));
        assert!(shapes.iter().all(|s| s.macs() <= RANDOM_MAX_MACS));
        // Log-uniform: about as many dimensions in each octave (6000 draws, 14 octaves of
        // about 430 each; the last one, 8192..=16384, slightly fewer for the cap).
        let mut octaves = [0usize; 15];
        for d in dims() {
            octaves[d.ilog2() as usize] += 1;
        }
        for (o, &count) in octaves[..14].iter().enumerate() {
            assert!(
                (300..560).contains(&count),
                "octave {o}: {count} ({octaves:?})"
            );
        }
        // The smallest dimension is drawn too.
        assert!(dims().any(|d| d == 1));
    }

    #[test]
    fn random_shapes_are_the_same_on_every_machine() {
        // Pinned: a change to the generator or the rule changes every published table.
        let first: Vec<(u32, u32, u32)> = random_shapes(42, 4)
            .iter()
            .map(|s| (s.m, s.k, s.n))
            .collect();
        assert_eq!(first, PINNED_SEED_42);
    }

    /// `random_shapes(42, 4)`, `(m, k, n)`.
    const PINNED_SEED_42: [(u32, u32, u32); 4] =
        [(1334, 4, 14), (28, 1, 4561), (8, 2367, 27), (404, 7, 119)];

    #[test]
    fn memory_bound_shapes_and_their_bytes() {
        let s = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        assert!(is_memory_bound(s(16, 4096, 4096)));
        assert!(is_memory_bound(s(4096, 16, 4096)));
        assert!(is_memory_bound(s(4096, 4096, 1)));
        assert!(!is_memory_bound(s(17, 17, 17)));
        assert_eq!(
            bytes_moved(s(1, 4096, 4096), 4.0),
            4.0 * (4096.0 + 4096.0 * 4096.0 + 4096.0)
        );
        let row = SuiteRow {
            shape: s(1, 4096, 4096),
            kernel: Tuned::Config(SgemmKernel::DEFAULT),
            ms: 0.1,
            cublas_ms: 0.2,
            check: Check {
                samples: SAMPLES,
                max_scaled_err: 0.0,
                bound: 1.0,
            },
            cublas_check: Check {
                samples: SAMPLES,
                max_scaled_err: 2.0,
                bound: 1.0,
            },
            copy_gbps: 3000.0,
            convert_ms: None,
        };
        // 67 MB in 0.1 ms is 671 GB/s, 22% of 3000.
        let share = row.copy_share().unwrap();
        assert!((share - bytes_moved(row.shape, 4.0) / 1e-4 / 1e9 / 3000.0).abs() < 1e-12);
        assert!(!row.checked());
        assert!(line(&row).contains("WRONG"), "{}", line(&row));
        assert!(line(&row).contains(&format!("{:.1}", 100.0 * share)));
        // A BF16 row on a Hopper times ours on 16-bit operands: half the bytes of a and b.
        let bf16 = SuiteRow {
            convert_ms: Some(0.01),
            ..row.clone()
        };
        let half = bytes_moved(row.shape, 2.0) / 1e-4 / 1e9 / 3000.0;
        assert!((bf16.copy_share().unwrap() - half).abs() < 1e-12);
        let summary = summary(&[row], CublasMath::Fp32);
        assert!(summary.contains("1 memory-bound"), "{summary}");
        assert!(summary.contains("cuBLAS FP32"), "{summary}");
    }
}
