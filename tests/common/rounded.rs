//! The check of a product whose inputs are rounded to a lower precision (TF32, BF16) and
//! accumulated in f32, shared by the simulator tests of those products. Needs `shapes`
//! beside it.

use super::shapes::signed_operands;
use kernels_gpu_host::check::reference::{compare, matmul_f64};
use kernels_gpu_host::{Error, MatmulShape, Precision};

/// Runs `product` on signed random operands of `(m, k, n)` (from `seed`) and checks its
/// `m × n` output: within the f32 accumulation bound of the f64 product of the inputs
/// rounded by `round` (the values the kernel multiplies: their products are exact), and
/// within `precision`'s bound of the f64 product of the f32 inputs. `name` names the kernel
/// in the failure messages.
pub fn check_rounded_product(
    (m, k, n): (usize, usize, usize), seed: u64, precision: Precision, round: impl Fn(f32) -> f32,
    name: &str, product: impl FnOnce(&[f32], &[f32], MatmulShape) -> Result<Vec<f32>, Error>,
) {
    let shape = MatmulShape::new(m, k, n).unwrap();
    let (a, b) = signed_operands(seed, m, k, n);
    let out = product(&a, &b, shape).unwrap_or_else(|e| panic!("{name} {shape}: {e}"));
    assert_eq!(out.len(), m * n);
    let rounded = |x: &[f32]| x.iter().map(|&v| round(v)).collect::<Vec<f32>>();
    let exact = compare(&out, &matmul_f64(&rounded(&a), &rounded(&b), m, k, n));
    let precision_name = precision.name().to_uppercase();
    assert!(
        exact.within_f32_bound(k),
        "{name} {shape}: {exact:?} is not the product of the {precision_name} inputs"
    );
    let accuracy = compare(&out, &matmul_f64(&a, &b, m, k, n));
    assert!(
        accuracy.within_bound(k, precision),
        "{name} {shape}: {accuracy:?} is outside the {precision_name} bound"
    );
}
