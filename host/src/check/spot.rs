//! Spot checks: a sample of a product's outputs against f64 dot products, for problems
//! whose full f64 reference (`O(m·n·k)` on the CPU) would take longer than the GPU run, and
//! the command line's choice between the two (`--check`).

use crate::check::reference::Accuracy;
use crate::problem::shape::MatmulShape;

/// A spot check of a result against an f64 reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    /// Elements compared.
    pub samples: usize,
    /// Largest `|out - ref| / Σ|a||b|` over them (infinite for a non-finite output).
    pub max_scaled_err: f64,
    /// The largest error the arithmetic allows, in units of `Σ|a||b|` (e.g. [`f32_bound`]).
    pub bound: f64,
}

impl Check {
    /// Whether every sampled element is within the bound.
    pub fn ok(&self) -> bool {
        self.max_scaled_err <= self.bound
    }
}

/// The FP32 dot-product error bound, in units of `Σ|a||b|`: `k` roundings of `2⁻²³`.
pub fn f32_bound(k: u32) -> f64 {
    k.max(1) as f64 * f32::EPSILON as f64
}

/// Output elements a spot check compares: the bench's summary, the shape suite and the
/// command line's `--check sample` all use this many.
pub const SAMPLES: usize = 64;

/// The largest product, in multiply-adds (`m·n·k`), that the command line treats as small:
/// 2³³. Up to it, by default, every output is checked against the full f64 product
/// ([`CheckMode::default_for`]) and every kernel runs
/// ([`MatmulKernel::default_set`](crate::MatmulKernel::default_set)); above it, a sample of
/// outputs is checked and only the autotuned SGEMM runs, each unless asked for.
///
/// Why 2³³ for the check: the f64 reference ([`crate::check::reference::matmul_f64`]) runs at
/// about 3.5·10⁸ multiply-adds per second per core (measured at 1024³ and 2048×256×2048), so
/// 2³³ takes about 1.5 s on the 16 cores of the project's GPU machines, and the lecture's
/// default 5120×256×5120 (2^32.6) stays checked in full; 16384³ = 2⁴² would take about
/// 13 minutes there, against seconds on the GPU, while a [`SAMPLES`]-output spot check of it
/// takes 30 ms.
///
/// Why the same bound for the kernels: run by run, the GPU time of every kernel grows with
/// the multiply-adds. At 2³³ the whole FP32 set (34 rows with the tile widths) takes about a
/// second of an H100's time at the default 23 runs each (estimated from the GFLOP/s
/// measured on 4096³: about 2.5 ms a run for the lecture's kernels, 0.6 ms for the SGEMM
/// ones); at 16384³ one run of a lecture kernel takes about a second, and the set, even
/// within the default time budget ([`crate::plan::budget::DEFAULT`]), well over a minute.
pub const FULL_CHECK_MAX_MACS: u64 = 1 << 33;

/// How the command line checks results against f64 (`--check`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum CheckMode {
    /// Every output against the full f64 product.
    Full,
    /// A spot check of 64 outputs (the corners, then random ones) against f64 dot
    /// products, within the same error bound.
    Sample,
    /// No check: the results are reported as unchecked.
    None,
}

impl CheckMode {
    /// The name `--check` takes and the JSON rows print.
    pub fn name(self) -> &'static str {
        match self {
            CheckMode::Full => "full",
            CheckMode::Sample => "sample",
            CheckMode::None => "none",
        }
    }

    /// The default for a product of `shape`: [`CheckMode::Full`] up to
    /// [`FULL_CHECK_MAX_MACS`] multiply-adds or in the simulator (which runs the kernels
    /// themselves on the CPU, slower than the reference), [`CheckMode::Sample`] above.
    pub fn default_for(shape: MatmulShape, simulated: bool) -> Self {
        if simulated || shape.macs() <= FULL_CHECK_MAX_MACS {
            CheckMode::Full
        } else {
            CheckMode::Sample
        }
    }
}

/// The outputs a spot check compares, with their f64 values: the four corners, then random
/// elements (the same ones for every product of the shape), each with its f64 dot
/// product and `Σ|a||b|`. Computing it is the check's cost (`samples · k` multiply-adds,
/// reading a column of `b` each); it is done once per inputs and compared with any number of
/// results.
#[derive(Clone, Debug)]
pub struct Sample {
    /// `(i, j, value, magnitude)` of each compared output.
    points: Vec<(usize, usize, f64, f64)>,
    /// Columns of the output.
    n: usize,
}

impl Sample {
    /// The `samples` outputs of a product of row-major `a` and `b` of `shape`, and their
    /// f64 values. None for an empty output.
    pub fn new(a: &[f32], b: &[f32], shape: MatmulShape, samples: usize) -> Self {
        let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
        if m == 0 || n == 0 {
            return Self { points: vec![], n };
        }
        let mut rng = crate::check::data::Rng::new(0x5eed ^ (m * 31 + n * 7 + k) as u64);
        // The four corners first (edge tiles are where kernels go wrong), then random elements.
        let corners = [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
        let random = (0..samples.saturating_sub(4)).map(|_| {
            let i = (rng.next_u64() % m as u64) as usize;
            let j = (rng.next_u64() % n as u64) as usize;
            (i, j)
        });
        let points = corners
            .into_iter()
            .take(samples)
            .chain(random)
            .map(|(i, j)| {
                let (mut value, mut magnitude) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let prod = a[i * k + p] as f64 * b[p * n + j] as f64;
                    value += prod;
                    magnitude += prod.abs();
                }
                (i, j, value, magnitude)
            })
            .collect();
        Self { points, n }
    }

    /// Outputs compared (a random one may be drawn more than once, and counts each time).
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether nothing is compared (an empty output).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// How the sampled outputs of `out`, a result of the shape this sample was drawn for,
    /// compare with their f64 values.
    pub fn accuracy(&self, out: &[f32]) -> Accuracy {
        let mut acc = Accuracy::default();
        for &(i, j, value, magnitude) in &self.points {
            acc.add(out[i * self.n + j], value, magnitude);
        }
        acc
    }
}

/// The accuracy of `samples` elements of `out` ([`Sample`]: the four corners, then random
/// elements, the same for every call with the same shape) against f64 dot products of
/// row-major `a` and `b`, and how many elements were compared.
pub fn sampled_accuracy(
    a: &[f32], b: &[f32], out: &[f32], shape: MatmulShape, samples: usize,
) -> (usize, Accuracy) {
    let sample = Sample::new(a, b, shape, samples);
    (sample.len(), sample.accuracy(out))
}

/// Compares `samples` elements of `out` ([`sampled_accuracy`]) with f64 dot products of
/// row-major `a` and `b`.
pub fn spot_check(
    a: &[f32], b: &[f32], out: &[f32], shape: MatmulShape, samples: usize, bound: f64,
) -> Check {
    let (samples, acc) = sampled_accuracy(a, b, out, shape, samples);
    Check {
        samples,
        max_scaled_err: if acc.non_finite > 0 {
            f64::INFINITY
        } else {
            acc.max_scaled_err
        },
        bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `m × k × n` product: operands uniform in [0, 1) from `seed`, and their f64
    /// product rounded to f32.
    fn rounded_product(
        (m, k, n): (usize, usize, usize), seed: u64,
    ) -> (MatmulShape, Vec<f32>, Vec<f32>, Vec<f32>) {
        let mut rng = crate::check::data::Rng::new(seed);
        let (a, b) = (rng.uniform(m * k), rng.uniform(k * n));
        let r = crate::check::reference::matmul_f64(&a, &b, m, k, n);
        let out = r.values.iter().map(|&v| v as f32).collect();
        (MatmulShape::new(m, k, n).unwrap(), a, b, out)
    }

    #[test]
    fn spot_check_accepts_the_product_and_rejects_its_transpose() {
        let (s, a, b, out) = rounded_product((7, 5, 6), 1);
        let ok = spot_check(&a, &b, &out, s, 32, f32_bound(5));
        assert!(ok.ok(), "{ok:?}");
        assert_eq!(ok.samples, 32);
        // The column-major reading of the right answer (what a wrong cuBLAS call gives).
        let wrong: Vec<f32> = (0..42).map(|x| out[(x % 7) * 6 + x / 7]).collect();
        assert!(!spot_check(&a, &b, &wrong, s, 32, f32_bound(5)).ok());
        let mut nan = out.clone();
        nan[0] = f32::NAN;
        assert!(!spot_check(&a, &b, &nan, s, 4, f32_bound(5)).ok());
    }

    #[test]
    fn sampled_accuracy_matches_the_full_comparison_on_the_elements_it_sees() {
        // 2×3 outputs, 64 samples: every element is seen, so the two must agree.
        let (s, a, b, mut out) = rounded_product((2, 4, 3), 3);
        out[4] += 1e-3;
        let (n, sampled) = sampled_accuracy(&a, &b, &out, s, SAMPLES);
        assert_eq!(n, SAMPLES);
        let r = crate::check::reference::matmul_f64(&a, &b, 2, 4, 3);
        let full = crate::check::reference::compare(&out, &r);
        assert_eq!(sampled.max_abs_err, full.max_abs_err);
        assert!((sampled.max_scaled_err - full.max_scaled_err).abs() <= 1e-15);
        assert!(!sampled.within_f32_bound(4));
        out[4] = f32::INFINITY;
        // (Counted per comparison: a random element can be drawn more than once.)
        assert!(sampled_accuracy(&a, &b, &out, s, SAMPLES).1.non_finite > 0);
    }

    #[test]
    fn the_default_check_is_full_up_to_the_threshold_and_in_the_simulator() {
        // `--check`'s help (the variants' docs, in the CLI's --help) says 64.
        assert_eq!(SAMPLES, 64);
        let mode = |(m, k, n), sim| CheckMode::default_for(MatmulShape::new(m, k, n).unwrap(), sim);
        // The lecture's default problem and the threshold itself: full.
        assert_eq!(mode((5120, 256, 5120), false), CheckMode::Full);
        assert_eq!(mode((2048, 2048, 2048), false), CheckMode::Full);
        assert_eq!(FULL_CHECK_MAX_MACS, 2048 * 2048 * 2048);
        // One multiply-add more per output: sampled.
        assert_eq!(mode((2048, 2049, 2048), false), CheckMode::Sample);
        assert_eq!(mode((16384, 16384, 16384), false), CheckMode::Sample);
        // The simulator is always checked in full.
        assert_eq!(mode((16384, 16384, 16384), true), CheckMode::Full);
        assert_eq!(mode((0, 5, 7), false), CheckMode::Full);
    }
}
