//! The CPU reference: the product in f64, and how far an f32 result may be from it.

use kernels_gpu::sgemm::Precision;

/// `a[m×k] · b[k×n]` in f64, with `Σ|a||b|` per element (the scale of rounding errors).
pub struct Reference {
    pub values: Vec<f64>,
    pub magnitudes: Vec<f64>,
}

/// Computes the reference on all cores (rows are independent).
pub fn matmul_f64(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Reference {
    let mut values = vec![0.0f64; m * n];
    let mut magnitudes = vec![0.0f64; m * n];
    if m == 0 || n == 0 {
        return Reference { values, magnitudes };
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(m);
    let rows_per = m.div_ceil(threads);
    std::thread::scope(|s| {
        for (chunk, (vals, mags)) in values
            .chunks_mut(rows_per * n)
            .zip(magnitudes.chunks_mut(rows_per * n))
            .enumerate()
        {
            s.spawn(move || {
                for (local, (vrow, mrow)) in vals.chunks_mut(n).zip(mags.chunks_mut(n)).enumerate()
                {
                    let r = chunk * rows_per + local;
                    // i-k-j order: streams rows of b, vectorises over j.
                    for i in 0..k {
                        let x = a[r * k + i] as f64;
                        for ((v, g), &y) in vrow
                            .iter_mut()
                            .zip(mrow.iter_mut())
                            .zip(&b[i * n..(i + 1) * n])
                        {
                            *v += x * y as f64;
                            *g += (x * y as f64).abs();
                        }
                    }
                }
            });
        }
    });
    Reference { values, magnitudes }
}

/// How an f32 result compares with the reference.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Accuracy {
    pub max_abs_err: f64,
    /// Largest `|out - ref| / |ref|` (over elements with `ref != 0`).
    pub max_rel_err: f64,
    /// Largest `|out - ref| / Σ|a||b|`: the error in units of the worst-case rounding scale.
    pub max_scaled_err: f64,
    /// Non-finite outputs where the reference is finite.
    pub non_finite: usize,
}

impl Accuracy {
    /// Counts one output `out` whose f64 value is `value`, with `Σ|a||b| = magnitude`.
    pub fn add(&mut self, out: f32, value: f64, magnitude: f64) {
        let o = out as f64;
        if !o.is_finite() {
            self.non_finite += 1;
            return;
        }
        let err = (o - value).abs();
        self.max_abs_err = self.max_abs_err.max(err);
        if value != 0.0 {
            self.max_rel_err = self.max_rel_err.max(err / value.abs());
        }
        self.max_scaled_err = self.max_scaled_err.max(scaled_err(err, magnitude));
    }

    /// Whether every element is within the f32 dot-product error bound: `k` roundings of at
    /// most 2⁻²⁴ relative to `Σ|a||b|` (with FMA the bound is about half of that).
    pub fn within_f32_bound(&self, k: usize) -> bool {
        self.within_bound(k, Precision::Fp32)
    }

    /// Whether every element is within the error bound of a product whose inputs were
    /// rounded to `precision` and accumulated in f32: [`error_bound`].
    pub fn within_bound(&self, k: usize, precision: Precision) -> bool {
        self.non_finite == 0 && self.max_scaled_err <= error_bound(k, precision)
    }
}

/// The largest `|out − ref| / Σ|a||b|` of a length-`k` dot product whose inputs are rounded
/// to `precision` and accumulated in f32: [`Precision::dot_error_bound`], where the
/// derivation is.
pub fn error_bound(k: usize, precision: Precision) -> f64 {
    precision.dot_error_bound(k)
}

/// `err` in units of the rounding scale `magnitude = Σ|a||b|`: infinite where the scale is 0
/// (every product exactly 0) but the error is not.
pub fn scaled_err(err: f64, magnitude: f64) -> f64 {
    if magnitude > 0.0 {
        err / magnitude
    } else if err > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Compares `out` with `reference`, element by element.
pub fn compare(out: &[f32], reference: &Reference) -> Accuracy {
    let mut acc = Accuracy::default();
    for ((&o, &r), &g) in out.iter().zip(&reference.values).zip(&reference.magnitudes) {
        acc.add(o, r, g);
    }
    if out.len() != reference.values.len() {
        acc.non_finite += out.len().abs_diff(reference.values.len());
    }
    acc
}

/// A [`Gemm`](crate::problem::gemm::Gemm) call in f64: what every element of `c` should hold after
/// it (the elements outside the call's outputs keep their values), and a bound on the f32
/// kernels' error per element.
#[derive(Clone, Debug)]
pub struct GemmReference {
    /// `c` after the call, exactly (to f64's rounding).
    pub c: Vec<f64>,
    /// `|c_f32 − c| ≤ bound` for a kernel that sums in f32 as the rungs do: the k-term dot
    /// product (`(k + 1)·2⁻²⁴·|α|·Σ|a||b|`), then `α·acc` and `β·old` rounded once each
    /// (`2⁻²³·(|α·acc| + |β·old|)`); 0 where `c` is not an output.
    pub bound: Vec<f64>,
}

impl GemmReference {
    /// The first element of `c` outside its bound (or that changed where it must not), as
    /// `(index, got, want, bound)`; `None` if every element is within.
    pub fn first_error(&self, c: &[f32]) -> Option<(usize, f32, f64, f64)> {
        if c.len() != self.c.len() {
            return Some((c.len().min(self.c.len()), f32::NAN, f64::NAN, 0.0));
        }
        c.iter()
            .zip(&self.c)
            .zip(&self.bound)
            .enumerate()
            .find(|&(_, ((&got, &want), &bound))| {
                let (got, bound) = (got as f64, bound);
                // NaN on both sides passes only where the reference is NaN too.
                !(got == want || (got - want).abs() <= bound || (got.is_nan() && want.is_nan()))
            })
            .map(|(i, ((&got, &want), &bound))| (i, got, want, bound))
    }
}

/// The f64 reference of `call` on `a`, `b` and the initial `c` (checked as the kernels check
/// it: a bad call is the same typed error). With `α = 0` or `k = 0` it is BLAS's `β·c`,
/// whatever `a` and `b` hold (`0` for `β = 0`, whatever `c` holds).
pub fn gemm_f64(
    call: &crate::problem::gemm::Gemm, a: &[f32], b: &[f32], c: &[f32],
) -> crate::problem::error::Result<GemmReference> {
    let p = call.check(a.len(), b.len(), c.len())?;
    let (pa, pb) = p.operands(a, b);
    let mut out: Vec<f64> = c.iter().map(|&x| x as f64).collect();
    let mut bound = vec![0.0; c.len()];
    let (alpha, beta, k) = (p.alpha as f64, p.beta as f64, p.k as usize);
    let u = f32::EPSILON as f64 / 2.0;
    for z in 0..p.batch as usize {
        for i in 0..p.m as usize {
            for j in 0..p.n as usize {
                if p.scales_only() {
                    let idx = p.c_index(z, i, j);
                    let old = if p.beta != 0.0 { out[idx] } else { 0.0 };
                    out[idx] = beta * old;
                    bound[idx] = 2.0 * u * (beta * old).abs();
                    continue;
                }
                let (mut dot, mut mag) = (0.0f64, 0.0f64);
                for q in 0..k {
                    let x = pa[p.a_index(z, i, q)] as f64 * pb[p.b_index(z, q, j)] as f64;
                    dot += x;
                    mag += x.abs();
                }
                let idx = p.c_index(z, i, j);
                let old = if p.beta != 0.0 { out[idx] } else { 0.0 };
                out[idx] = alpha * dot + beta * old;
                bound[idx] = (k as f64 + 1.0) * u * alpha.abs() * mag * 1.01
                    + 2.0 * u * ((alpha * dot).abs() + (beta * old).abs());
            }
        }
    }
    Ok(GemmReference { c: out, bound })
}
