//! Spot checks: a sample of a product's outputs against f64 dot products, for problems
//! whose full f64 reference (`O(m·n·k)` on the CPU) would take longer than the GPU run.

use crate::shape::MatmulShape;

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

/// Compares `samples` elements of `out` (spread over the matrix, the same for every call
/// with the same shape) with f64 dot products of row-major `a` and `b`.
pub fn spot_check(
    a: &[f32], b: &[f32], out: &[f32], shape: MatmulShape, samples: usize, bound: f64,
) -> Check {
    let (m, k, n) = (shape.m as usize, shape.k as usize, shape.n as usize);
    let mut check = Check {
        samples: 0,
        max_scaled_err: 0.0,
        bound,
    };
    if m == 0 || n == 0 {
        return check;
    }
    let mut rng = crate::data::Rng::new(0x5eed ^ (m * 31 + n * 7 + k) as u64);
    // The four corners first (edge tiles are where kernels go wrong), then random elements.
    let corners = [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let random = (0..samples.saturating_sub(4)).map(|_| {
        let i = (rng.next_u64() % m as u64) as usize;
        let j = (rng.next_u64() % n as u64) as usize;
        (i, j)
    });
    for (i, j) in corners.into_iter().take(samples).chain(random) {
        let (mut value, mut magnitude) = (0.0f64, 0.0f64);
        for p in 0..k {
            let prod = a[i * k + p] as f64 * b[p * n + j] as f64;
            value += prod;
            magnitude += prod.abs();
        }
        let o = out[i * n + j] as f64;
        let err = (o - value).abs();
        let scaled = if o.is_finite() {
            crate::reference::scaled_err(err, magnitude)
        } else {
            f64::INFINITY
        };
        check.max_scaled_err = check.max_scaled_err.max(scaled);
        check.samples += 1;
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spot_check_accepts_the_product_and_rejects_its_transpose() {
        let s = MatmulShape::new(7, 5, 6).unwrap();
        let mut rng = crate::data::Rng::new(1);
        let (a, b) = (rng.uniform(35), rng.uniform(30));
        let r = crate::reference::matmul_f64(&a, &b, 7, 5, 6);
        let out: Vec<f32> = r.values.iter().map(|&v| v as f32).collect();
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
}
