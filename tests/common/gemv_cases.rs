//! The shapes rung 16 is checked on (simulator and GPU) and their inputs: small `m`, small
//! `n`, small `k`, and shapes two classes cover, none a multiple of 128, with `m`, `n` or
//! `k` = 1, primes, 16 and 17 beside each other, rows of `b` and `out` 8- but not
//! 16-byte aligned (`n = 258`, `130`), and 16-byte aligned rows whose last block of columns
//! is partly outside (`n = 228`: the small-`m` kernel's 16-byte loads in its first block,
//! its lanes' columns 32 apart in the second).

use kernels_gpu_host::MatmulShape;
use kernels_gpu_host::check::data::Rng;

/// `(m, k, n)`.
pub const SHAPES: [(usize, usize, usize); 18] = [
    (1, 1, 1),
    (1, 37, 129),
    (1, 70, 258),
    (29, 2, 130),
    (2, 130, 257),
    (3, 17, 5),
    (16, 40, 130),
    (7, 211, 67),
    (129, 37, 1),
    (37, 300, 3),
    (5, 16, 16),
    (19, 1000, 2),
    (300, 1, 13),
    (17, 16, 129),
    (33, 3, 100),
    (5, 4, 7),
    (16, 17, 17),
    (4, 24, 228),
];

/// `a` and `b` of `shape` from `seed`, signed so that cancellation is exercised too.
pub fn inputs(shape: MatmulShape, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (la, lb, _) = shape.lens();
    let mut rng = Rng::new(seed);
    (rng.signed(la), rng.signed(lb))
}

/// The bits of each value, to compare results exactly.
pub fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}
