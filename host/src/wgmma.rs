//! TF32 on Hopper's `wgmma` (rung 14, [`kernels_gpu::sgemm::wgmma`]): `out = a · b` with
//! both operands rounded to TF32 and products accumulated in f32, as rung 11 and cuBLAS's
//! `CUBLAS_TF32_TENSOR_OP_MATH` compute, on a GPU of compute capability 9.0.
//!
//! `wgmma` reads TF32 operands only with the depth contiguous, so a product runs in two
//! steps on the GPU's workspace: [`sgemm_repack_tf32`](kernels_gpu::sgemm::repack) writes
//! `a` rounded (`m` rows of `k` rounded up to 4, zero-padded) and
//! [`sgemm_transpose_tf32`](kernels_gpu::sgemm::repack) writes `b` transposed and rounded
//! (`n` rows of the same depth); then the configuration multiplies the two into `out`.
//! Both copies are in the timings this project reports. `Gpu::matmul_wgmma_device` and
//! [`Simulator::matmul_wgmma`](crate::sim::Simulator::matmul_wgmma) run a configuration of
//! [`WGMMA_CONFIGS`] ([`default_config`] where the caller has no preference); a GPU of
//! another compute capability refuses it with [`Error::NeedsHopper`](crate::Error::NeedsHopper).

use crate::error::Result;
use crate::shape::MatmulShape;
use kernels_gpu::catalogue::Extent;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::sgemm::repack::{REPACK_TF32, TRANSPOSE_TF32};
pub use kernels_gpu::sgemm::wgmma::{WGMMA_CONFIGS, WgmmaConfig};

/// The depth of the packed operands: `k` rounded up to a multiple of 4, so that every row
/// is whole 16-byte chunks.
pub fn packed_depth(k: u32) -> u32 {
    k.next_multiple_of(4)
}

/// Floats of the packed `a` (`m × kp`) and of the packed, transposed `b` (`n × kp`), each a
/// multiple of 4 so that the second starts 16-byte aligned after the first.
pub fn packed_lens(shape: MatmulShape) -> (usize, usize) {
    let kp = packed_depth(shape.k) as usize;
    (shape.m as usize * kp, shape.n as usize * kp)
}

/// The launch of [`sgemm_repack_tf32`](kernels_gpu::sgemm::repack::sgemm_repack_tf32)
/// writing the packed `a`: `m` rows of [`packed_depth`] (items, as
/// [`crate::repack::launch`]: a 1-D grid of them stays within every device's limits).
pub fn pack_a_launch(shape: MatmulShape) -> Launch {
    let kp = packed_depth(shape.k);
    REPACK_TF32.launch(Extent::Items(shape.m * kp.div_ceil(4)), 0)
}

/// The launch of [`sgemm_transpose_tf32`](kernels_gpu::sgemm::repack::sgemm_transpose_tf32)
/// writing the packed `b`: `n` rows of [`packed_depth`], one block per 32 × 32 tile of them,
/// checked against `limits` ([`crate::kernels::output_launch`]).
pub fn pack_b_launch(shape: MatmulShape, limits: &Limits) -> Result<Launch> {
    crate::kernels::output_launch(&TRANSPOSE_TF32, packed_depth(shape.k), shape.n, 1, limits)
}

/// The configuration the table marks as the default.
pub fn default_config() -> &'static WgmmaConfig {
    WGMMA_CONFIGS
        .iter()
        .find(|c| c.default)
        .expect("the wgmma table marks one default")
}

/// The configuration named `name` (`sgemm-wgmma-…`), or
/// [`Error::UnknownKernel`](crate::Error::UnknownKernel) listing the names there are.
pub fn config(name: &str) -> Result<&'static WgmmaConfig> {
    crate::kernels::named(WGMMA_CONFIGS, name, |c| c.name)
}

/// `config`'s launch for `shape`, checked against `limits` (grid, block, shared memory).
pub fn launch(config: &WgmmaConfig, shape: MatmulShape, limits: &Limits) -> Result<Launch> {
    crate::kernels::output_launch(&config.spec, shape.m, shape.n, 1, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn the_table_has_one_default_and_names_resolve() {
        assert_eq!(WGMMA_CONFIGS.iter().filter(|c| c.default).count(), 1);
        for c in WGMMA_CONFIGS {
            assert_eq!(config(c.name).unwrap().name, c.name);
            // Every tile on a 1024-byte boundary: the stages are whole swizzle atoms.
            assert_eq!(c.geometry.bk, 32);
            assert!(c.geometry.dynamic_shared_bytes <= 227 * 1024, "{}", c.name);
        }
        assert!(matches!(config("nope"), Err(Error::UnknownKernel { .. })));
    }

    #[test]
    fn packing_pads_the_depth_to_four() {
        let shape = MatmulShape::new(3, 5, 7).unwrap();
        assert_eq!(packed_depth(5), 8);
        assert_eq!(packed_lens(shape), (24, 56));
        let limits = Limits::CUDA;
        let b = pack_b_launch(shape, &limits).unwrap();
        // One 32 × 32 tile covers 7 columns and 8 depths.
        assert_eq!((b.grid.x, b.grid.y), (1, 1));
        let a = pack_a_launch(shape);
        // Two quads per row of 8, three rows.
        assert!(a.block.x * a.grid.x >= 3 * 2);
    }
}
