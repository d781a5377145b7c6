//! Repacked products ([`kernels_gpu::sgemm::repack`]): where `k` or `n` is not a multiple of
//! 4, the rows of `a` or `b` are not 16-byte aligned and the rungs load them one float at a
//! time. A repacked product copies both operands into zero-padded rows of `k` and `n`
//! rounded up to 4 (the [`Gpu`](crate::gpu::Gpu)'s workspace), runs a configuration on
//! them, every block on its 16-byte path, and copies the output back into rows of `n`.
//!
//! It has the bits of the configuration on the operands as they are (the padding adds the
//! zero products that the configuration's zero-filled last k-tile adds anyway), and costs
//! three copies: on an H100, 4093³ repacked took 3.137 ms, copies included, where 4096³
//! took 2.883 ms (and 4093³ unrepacked, 3.35 ms). The autotuner
//! ([`crate::gpu::autotune`]) times each plain FP32 configuration repacked beside the rest for
//! such shapes; [`crate::gpu::Gpu::matmul_repacked_device`] and
//! [`crate::sim::Simulator::matmul_repacked`] run one directly.

use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::Launch;
#[cfg(test)]
use kernels_gpu::sgemm::repack::REPACK;

/// Whether repacking `shape`'s operands gives them 16-byte aligned rows they lack: `k` or
/// `n` is not a multiple of 4.
pub fn applies(shape: MatmulShape) -> bool {
    !shape.k.is_multiple_of(4) || !shape.n.is_multiple_of(4)
}

/// The product of the repacked operands: `m × k' × n'`, `k` and `n` rounded up to
/// multiples of 4 ([`Error::IndexOverflow`](crate::Error::IndexOverflow) if that no longer
/// fits the kernels' indices).
pub fn padded(shape: MatmulShape) -> Result<MatmulShape> {
    let MatmulShape { m, k, n } = shape;
    let up = |x: u32| (x as usize).next_multiple_of(4);
    MatmulShape::new(m as usize, up(k), up(n))
}

/// The launch of a repack entry `spec` ([`kernels_gpu::sgemm::repack::sgemm_repack`], or one
/// of the 16-bit copies and conversions) writing a `rows × cols` matrix: a thread per four
/// elements of a row.
pub fn launch(spec: &KernelSpec, rows: u32, cols: u32) -> Launch {
    spec.launch(Extent::Items(rows.saturating_mul(cols.div_ceil(4))), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_k_and_n_to_multiples_of_four() {
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        assert!(applies(shape(8, 4093, 8)) && applies(shape(8, 8, 2051)));
        assert!(!applies(shape(4093, 8, 4)));
        assert_eq!(padded(shape(3, 4093, 2051)).unwrap(), shape(3, 4096, 2052));
        assert_eq!(padded(shape(3, 4, 8)).unwrap(), shape(3, 4, 8));
        // Three rows of two quads each.
        let l = launch(&REPACK, 3, 5);
        assert!(l.grid.x * l.block.x >= 3 * 2);
    }
}
