//! The product every FP32 matmul kernel must give bit for bit, shared by the simulator tests
//! of `nvptx-device`, `kernels-gpu` and the host, and the bit-for-bit comparisons of f32
//! outputs that check it (and every other deterministic kernel).

/// `fma(a[r, i], b[i, c], acc)` for `i` in increasing order from `0.0`, for row-major
/// `a[m×k]` and `b[k×n]`, as the lecture's kernels accumulate (zero padding adds
/// `fma(0, 0, acc) = acc`). `f32::mul_add` is the same correctly rounded FMA on the host.
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn fma_in_k_order(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            out[r * n + c] = (0..k).fold(0.0f32, |acc, i| a[r * k + i].mul_add(b[i * n + c], acc));
        }
    }
    out
}

/// Asserts that `out` is `want` bit for bit, and as long, naming the first element that
/// differs (with its row and column in rows of `n`) after `what`.
#[allow(dead_code)] // not every test binary that includes this file uses it
#[track_caller]
pub fn assert_same_bits(out: &[f32], want: &[f32], n: usize, what: &str) {
    assert_eq!(out.len(), want.len(), "{what}: length");
    if let Some(i) = out
        .iter()
        .zip(want)
        .position(|(x, y)| x.to_bits() != y.to_bits())
    {
        let (x, y) = (out[i], want[i]);
        panic!(
            "{what}: element {i} ([{}][{}]) is {x} (bits {:#x}), want {y} (bits {:#x})",
            i / n,
            i % n,
            x.to_bits(),
            y.to_bits()
        );
    }
}

/// Whether `a` and `b` are the same floats bit for bit (NaNs included).
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The first index where `a` and `b` differ bit for bit (over their common length).
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn first_difference(a: &[f32], b: &[f32]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x.to_bits() != y.to_bits())
}
