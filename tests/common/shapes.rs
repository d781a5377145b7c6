//! The odd shapes (m, k, n) every matmul kernel is checked on, in the simulator and on the
//! GPU, by this workspace's tests and the fused-linear example's: one element, shapes that
//! are multiples of nothing, k far larger than m and n, k = 1.

pub const ODD: [(usize, usize, usize); 4] = [(1, 1, 1), (17, 33, 65), (5, 300, 7), (64, 1, 64)];
