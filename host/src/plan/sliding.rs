//! Sliding averages: kernel catalogue, launch shape, validation, the O(n) CPU reference and
//! each kernel's error bound.

use crate::problem::error::{Error, Result};
use kernels_gpu::catalogue::{Extent, KernelSpec, SLIDING, SLIDING_SCAN};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::sliding::{BLOCK, scan};

/// How the windows are summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlidingKernel {
    /// Global memory, `window` reads per output.
    Naive,
    /// A shared tile plus halo per block; the halo must fit in shared memory.
    Shared,
    /// A running f64 sum: from each tile's own halo where the window fits in a tile, plus
    /// the published aggregates of up to 32 whole tiles before it, else carried across
    /// blocks by a chained scan. A fixed number of reads per output whatever the window,
    /// normally one from DRAM (`kernels_gpu::sliding::scan`).
    Scan,
}

impl SlidingKernel {
    pub const ALL: [SlidingKernel; 3] = [Self::Naive, Self::Shared, Self::Scan];

    /// Its row of `kernels_gpu::catalogue::SLIDING`, or `SLIDING_SCAN`.
    pub fn spec(self) -> &'static KernelSpec {
        match self {
            Self::Naive | Self::Shared => &SLIDING[self as usize].spec,
            Self::Scan => &SLIDING_SCAN.spec,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Naive | Self::Shared => SLIDING[self as usize].name,
            Self::Scan => SLIDING_SCAN.name,
        }
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn entry(self) -> &'static str {
        self.spec().entry
    }

    /// The launch for `shape`: one thread per output (naive), one block per tile of outputs
    /// with a halo growing with the window (shared), one block per tile of inputs (scan).
    pub fn launch(self, shape: SlidingShape) -> Launch {
        match self {
            Self::Naive | Self::Shared => self
                .spec()
                .launch(Extent::Items(shape.outputs()), shape.window),
            Self::Scan => self.spec().launch(Extent::Items(shape.n), 0),
        }
    }
}

/// `u64` words of scratch state the scan kernel needs for `n` inputs.
pub fn scan_state_words(n: u32) -> usize {
    scan::state_words(n)
}

/// Whether the scan kernel reads its scratch state at windows of `window`, which must then
/// be zeroed before the launch (a window within one tile reads none: no memset).
pub fn scan_reads_state(window: u32) -> bool {
    scan::reads_state(window)
}

/// A validated sliding-average problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingShape {
    pub n: u32,
    pub window: u32,
}

impl SlidingShape {
    /// `n` inputs, windows of `window`. A window of 0 is an error (a mean of nothing); a
    /// window longer than the input is valid and has no outputs, like `n = 0`.
    pub fn new(n: usize, window: usize) -> Result<Self> {
        if window == 0 {
            return Err(Error::InvalidWindow { window, len: n });
        }
        let limit = (u32::MAX - 2 * BLOCK.max(scan::TILE)) as u128;
        if n as u128 + window as u128 > limit {
            return Err(Error::IndexOverflow {
                operand: "input",
                rows: 1,
                cols: n.max(window),
                elements: n as u128 + window as u128,
            });
        }
        Ok(Self {
            n: n as u32,
            window: window as u32,
        })
    }

    /// Number of windows that fit: `n - window + 1`, or 0.
    pub fn outputs(&self) -> u32 {
        (self.n + 1).saturating_sub(self.window)
    }
}

/// Neumaier's compensated sum: the f64 sum and its rounding error, so that a difference of
/// two prefix sums is good to about 2⁻¹⁰⁶ of the prefix, not 2⁻⁵³.
#[derive(Clone, Copy, Default)]
struct Compensated {
    sum: f64,
    carry: f64,
}

impl Compensated {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.carry += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    /// `self - earlier`, for a prefix sum `self` past `earlier`.
    fn since(self, earlier: Self) -> f64 {
        (self.sum - earlier.sum) + (self.carry - earlier.carry)
    }
}

/// A prefix over the input: compensated sums of the finite values and of their magnitudes,
/// and counts of NaN, +∞ and -∞.
#[derive(Clone, Copy, Default)]
struct Prefix {
    sum: Compensated,
    abs: Compensated,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
}

impl Prefix {
    fn push(&mut self, x: f32) {
        if x.is_nan() {
            self.nan += 1;
        } else if x == f32::INFINITY {
            self.pos_inf += 1;
        } else if x == f32::NEG_INFINITY {
            self.neg_inf += 1;
        } else {
            self.sum.add(x as f64);
            self.abs.add((x as f64).abs());
        }
    }
}

/// The CPU reference: every window's exact mean (to about 2⁻¹⁰⁰ relative to the input's
/// prefix sums) and mean magnitude, computed in O(n) from two compensated f64 prefix sums
/// that advance together, `window` apart. A window with a NaN, or with both infinities, has
/// a NaN mean; one with infinities of one sign has that infinity.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reference {
    /// `mean(a[i .. i + window])`.
    pub means: Vec<f64>,
    /// `mean(|a[i .. i + window]|)` over the finite values: the scale of rounding errors.
    pub magnitudes: Vec<f64>,
    /// `max |a|` over the finite values.
    pub max_abs: f64,
}

/// [`Reference`] for `a` and `window`; empty when no window fits.
pub fn reference(a: &[f32], window: usize) -> Reference {
    let mut r = Reference {
        max_abs: a
            .iter()
            .filter(|x| x.is_finite())
            .fold(0.0, |m, &x| m.max((x as f64).abs())),
        ..Reference::default()
    };
    if window == 0 || window > a.len() {
        return r;
    }
    let outputs = a.len() - window + 1;
    r.means.reserve(outputs);
    r.magnitudes.reserve(outputs);
    let (mut front, mut back) = (Prefix::default(), Prefix::default());
    for &x in &a[..window - 1] {
        front.push(x);
    }
    for i in 0..outputs {
        front.push(a[i + window - 1]);
        let (nan, pos, neg) = (
            front.nan - back.nan,
            front.pos_inf - back.pos_inf,
            front.neg_inf - back.neg_inf,
        );
        let mean = if nan > 0 || (pos > 0 && neg > 0) {
            f64::NAN
        } else if pos > 0 {
            f64::INFINITY
        } else if neg > 0 {
            f64::NEG_INFINITY
        } else {
            front.sum.since(back.sum) / window as f64
        };
        r.means.push(mean);
        r.magnitudes
            .push(front.abs.since(back.abs).max(0.0) / window as f64);
        back.push(a[i]);
    }
    r
}

/// How far `kernel`'s output for window `i` may be from the exact mean: for the f32 kernels,
/// `window + 1` roundings of at most 2⁻²⁴ of the window's mean magnitude (a left-to-right
/// sum and the division); for the scan, half an f32 ulp of the mean plus
/// `2^ERROR_LOG2 · (p + 1) · max|a|` with `p = i + window - 1` (`kernels_gpu::sliding::scan`).
pub fn error_bound(kernel: SlidingKernel, reference: &Reference, window: usize, i: usize) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    match kernel {
        SlidingKernel::Naive | SlidingKernel::Shared => {
            (window as f64 + 1.0) * u * reference.magnitudes[i]
        }
        SlidingKernel::Scan => {
            let p = (i + window) as f64;
            u * reference.means[i].abs() + 2f64.powi(scan::ERROR_LOG2) * p * reference.max_abs
        }
    }
}

/// Whether `out` is within [`error_bound`] of the reference, element by element, with the
/// same non-finite values where the reference has them.
pub fn within_bound(kernel: SlidingKernel, out: &[f32], a: &[f32], window: usize) -> bool {
    let r = reference(a, window);
    within_bound_of(kernel, out, &r, window)
}

/// [`within_bound`] against a reference computed once.
pub fn within_bound_of(kernel: SlidingKernel, out: &[f32], r: &Reference, window: usize) -> bool {
    out.len() == r.means.len()
        && out.iter().zip(&r.means).enumerate().all(|(i, (&o, &e))| {
            if e.is_finite() {
                ((o as f64) - e).abs() <= error_bound(kernel, r, window, i)
            } else {
                (o.is_nan() && e.is_nan()) || o as f64 == e
            }
        })
}

/// Largest `|out - reference|` over the finite reference means.
pub fn max_abs_err(out: &[f32], r: &Reference) -> f64 {
    out.iter()
        .zip(&r.means)
        .filter(|(_, e)| e.is_finite())
        .map(|(&o, &e)| (o as f64 - e).abs())
        .fold(0.0, f64::max)
}
