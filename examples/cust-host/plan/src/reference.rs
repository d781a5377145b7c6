//! f64 references to compare the kernels' results with, and the median of timings.

use kernels_gpu::sgemm::Precision;

/// A product in f64, with the scale of its rounding errors.
pub struct Product {
    /// `a · b`, row-major.
    pub values: Vec<f64>,
    /// `Σ|a||b|` per output.
    pub magnitudes: Vec<f64>,
    /// The depth `k`.
    pub k: usize,
}

/// How a product's result compares with its f64 reference: every output, within the
/// error bound of the precision it was computed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Check {
    /// Largest `|out − exact|`.
    pub max_abs: f64,
    /// Largest `|out − exact| / Σ|a||b|` (infinite for a non-finite output).
    pub max_scaled: f64,
    /// The precision's bound on it: [`Precision::dot_error_bound`].
    pub bound: f64,
    /// The precision the result is checked as.
    pub precision: Precision,
}

impl Check {
    /// Whether every output is within the bound.
    pub fn ok(&self) -> bool {
        self.max_scaled <= self.bound
    }
}

impl Product {
    /// Compares `out` with every output, in units of the bound of `precision`.
    pub fn check(&self, out: &[f32], precision: Precision) -> Check {
        let mut check = Check {
            max_abs: max_abs_error(out, &self.values),
            max_scaled: 0.0,
            bound: precision.dot_error_bound(self.k),
            precision,
        };
        if out.len() != self.values.len() {
            check.max_scaled = f64::INFINITY;
        }
        for ((&o, &r), &g) in out.iter().zip(&self.values).zip(&self.magnitudes) {
            let err = (o as f64 - r).abs();
            let scaled = if err.is_nan() || err == f64::INFINITY {
                f64::INFINITY
            } else if g > 0.0 {
                err / g
            } else if err > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            check.max_scaled = check.max_scaled.max(scaled);
        }
        check
    }
}

/// `a[m×k] · b[k×n]` in f64, row-major, with `Σ|a||b|` per output.
pub fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Product {
    let mut values = vec![0.0f64; m * n];
    let mut magnitudes = vec![0.0f64; m * n];
    for r in 0..m {
        let row = &mut values[r * n..(r + 1) * n];
        let mags = &mut magnitudes[r * n..(r + 1) * n];
        for i in 0..k {
            let x = a[r * k + i] as f64;
            for ((o, g), &y) in row
                .iter_mut()
                .zip(mags.iter_mut())
                .zip(&b[i * n..(i + 1) * n])
            {
                *o += x * y as f64;
                *g += (x * y as f64).abs();
            }
        }
    }
    Product {
        values,
        magnitudes,
        k,
    }
}

/// The sum in f64.
pub fn sum(x: &[f32]) -> f64 {
    x.iter().map(|&v| v as f64).sum()
}

/// The mean of every window of `window` that fits, in f64.
pub fn sliding(a: &[f32], window: usize) -> Vec<f64> {
    if window == 0 || window > a.len() {
        return vec![];
    }
    a.windows(window)
        .map(|w| w.iter().map(|&x| x as f64).sum::<f64>() / window as f64)
        .collect()
}

/// The largest `|out - reference|` (infinite where the lengths differ or a result is not a
/// number: a kernel that skipped an output of a NaN-poisoned buffer shows up).
pub fn max_abs_error(out: &[f32], reference: &[f64]) -> f64 {
    if out.len() != reference.len() {
        return f64::INFINITY;
    }
    out.iter()
        .zip(reference)
        .map(|(&o, &r)| {
            let e = (o as f64 - r).abs();
            if e.is_nan() { f64::INFINITY } else { e }
        })
        .fold(0.0, f64::max)
}

/// `len` floats uniform in [0, 1) from `seed` (splitmix64; 24 random bits each).
pub fn uniform(seed: u64, len: usize) -> Vec<f32> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32
        })
        .collect()
}

/// The median of `samples` (NaN for none).
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[mid - 1] + samples[mid]) / 2.0
    } else {
        samples[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_of_small_cases() {
        let p = matmul(&[1.0, -2.0], &[3.0, 4.0], 2, 1, 1);
        assert_eq!(p.values, [3.0, -6.0]);
        assert_eq!(p.magnitudes, [3.0, 6.0]);
        let exact = p.check(&[3.0, -6.0], Precision::Fp32);
        assert!(exact.ok() && exact.max_scaled == 0.0);
        // Off by 1e-3 of the scale: outside FP32's bound for k = 1, inside BF16's.
        let off = [3.003f32, -6.0];
        assert!(!p.check(&off, Precision::Fp32).ok());
        assert!(p.check(&off, Precision::Bf16).ok());
        assert!(!p.check(&[f32::NAN, -6.0], Precision::Bf16).ok());
        assert!(!p.check(&[3.0], Precision::Fp32).ok());
        assert_eq!(
            sliding(&[4.0, 2.0, 5.0, 6.0, 2.0, 4.0], 2),
            [3.0, 3.5, 5.5, 4.0, 3.0]
        );
        assert_eq!(sum(&[0.5, 0.25]), 0.75);
        assert_eq!(max_abs_error(&[1.0, f32::NAN], &[1.0, 2.0]), f64::INFINITY);
        assert_eq!(max_abs_error(&[1.0], &[1.0, 2.0]), f64::INFINITY);
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), 2.5);
        let x = uniform(7, 1000);
        assert!(x.iter().all(|v| (0.0..1.0).contains(v)));
        assert_eq!(x, uniform(7, 1000));
        assert_ne!(x, uniform(8, 1000));
    }
}
