//! The odd shapes (m, k, n) every matmul kernel is checked on, in the simulator and on the
//! GPU, by this workspace's tests and the fused-linear example's: one element, shapes that
//! are multiples of nothing, k far larger than m and n, k = 1.

#[allow(dead_code)] // not every test binary that includes this file uses it
pub const ODD: [(usize, usize, usize); 4] = [(1, 1, 1), (17, 33, 65), (5, 300, 7), (64, 1, 64)];

/// `len` values uniform in [-1, 1) from `seed`.
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn signed(seed: u64, len: usize) -> Vec<f32> {
    kernels_gpu_host::check::data::Rng::new(seed).signed(len)
}

/// Signed operands `a` (`m × k`) and `b` (`k × n`), uniform in [-1, 1), from a seed that
/// mixes `seed` with the shape (so each shape has its own, the same every run).
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn signed_operands(seed: u64, m: usize, k: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = kernels_gpu_host::check::data::Rng::new(
        seed ^ ((m as u64) << 40 | (k as u64) << 20 | n as u64),
    );
    (rng.signed(m * k), rng.signed(k * n))
}

/// Calls `check` on every configuration of `configs` with every shape of [`ODD`], then of
/// `more`, in that order.
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn each_config_and_shape<C: Copy>(
    configs: impl IntoIterator<Item = C>, more: &[&[(usize, usize, usize)]],
    check: impl Fn(C, (usize, usize, usize)),
) {
    for config in configs {
        for &shape in ODD.iter().chain(more.iter().copied().flatten()) {
            check(config, shape);
        }
    }
}
