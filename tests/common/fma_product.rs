//! The product every FP32 matmul kernel must give bit for bit, shared by the simulator tests
//! of `nvptx-device`, `kernels-gpu` and the host.

/// `fma(a[r, i], b[i, c], acc)` for `i` in increasing order from `0.0`, for row-major
/// `a[m×k]` and `b[k×n]`, as the lecture's kernels accumulate (zero padding adds
/// `fma(0, 0, acc) = acc`). `f32::mul_add` is the same correctly rounded FMA on the host.
pub fn fma_in_k_order(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            out[r * n + c] = (0..k).fold(0.0f32, |acc, i| a[r * k + i].mul_add(b[i * n + c], acc));
        }
    }
    out
}
