//! TF32 products on packed operands: rung 14's `wgmma` ([`kernels_gpu::sgemm::wgmma`], on a
//! GPU of compute capability 9.0) and rung 15's `mma.sync`
//! ([`kernels_gpu::sgemm::mma_packed`], compute capability 8.0 and later). Both compute
//! `out = a · b` with both operands rounded to TF32 and products accumulated in f32, as rung
//! 11 and cuBLAS's `CUBLAS_TF32_TENSOR_OP_MATH` compute.
//!
//! Both read operands with the depth contiguous, so a product runs in two steps on the GPU's
//! workspace: [`sgemm_transpose_tf32`](kernels_gpu::sgemm::repack) writes `b` transposed
//! and rounded (`n` rows of `k` rounded up to 4, zero-padded), and, where [`packs_a`] says
//! so, [`sgemm_repack_tf32`](kernels_gpu::sgemm::repack) writes `a` rounded (`m` rows of
//! the same depth); then the configuration multiplies the two into `out`. Rung 15 rounds
//! `a`'s fragments itself, so it reads an `a` whose rows are 16-byte aligned as it is. The
//! copies are in the timings this project reports.
//! `Gpu::matmul_packed_device` and
//! [`Simulator::matmul_packed`](crate::sim::Simulator::matmul_packed) run a configuration of
//! [`PACKED_CONFIGS`] ([`default_config`] where the caller has no preference); a GPU other
//! than a Hopper refuses rung 14's with [`Error::NeedsHopper`](crate::Error::NeedsHopper).

use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use kernels_gpu::nvptx_device::catalogue::KernelSpec;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
pub use kernels_gpu::sgemm::mma_packed::{MMA_PACKED_CONFIGS, MMA_TMA_CONFIGS};
pub use kernels_gpu::sgemm::repack::{PACKED_CONFIGS, PackedConfig};
use kernels_gpu::sgemm::repack::{REPACK, REPACK_TF32, TRANSPOSE, TRANSPOSE_TF32};
pub use kernels_gpu::sgemm::wgmma::WGMMA_CONFIGS;

/// The depth of the packed operands: `k` rounded up to a multiple of 4, so that every row
/// is whole 16-byte chunks.
pub fn packed_depth(k: u32) -> u32 {
    k.next_multiple_of(4)
}

/// Whether a product by `config` of depth `k` packs `a` before it: always for rung 14
/// (`wgmma` reads `a` from shared memory as it is), and for rung 15, which rounds `a`'s
/// fragments itself ([`PackedConfig::rounds_a`]), only where `a`'s rows are not whole
/// 16-byte chunks (`k % 4 != 0`). Otherwise the product reads the caller's `a`.
pub fn packs_a(config: &PackedConfig, k: u32) -> bool {
    !config.rounds_a || !k.is_multiple_of(4)
}

/// Floats of the packed `a` (`m × kp`; none where [`packs_a`] is false) and of the packed,
/// transposed `b` (`n × kp`), each a multiple of 4 so that the second starts 16-byte
/// aligned after the first.
pub fn packed_lens(config: &PackedConfig, shape: MatmulShape) -> (usize, usize) {
    let kp = packed_depth(shape.k) as usize;
    let a_rows = if packs_a(config, shape.k) {
        shape.m as usize
    } else {
        0
    };
    (a_rows * kp, shape.n as usize * kp)
}

/// What a packing writes: the values rounded to TF32, for rungs 14 and 15, whose
/// instructions read the packed operands as they are; or the values as they are, for rung
/// 17's TF32 rows, whose copies into shared memory round them
/// ([`crate::plan::half`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    Rounded,
    Plain,
}

impl Packing {
    /// The entry that copies `a` into rows of the packed depth
    /// ([`sgemm_repack_tf32`](kernels_gpu::sgemm::repack::sgemm_repack_tf32) or
    /// [`sgemm_repack`](kernels_gpu::sgemm::repack::sgemm_repack)); also what copies a
    /// row-major `b` into whole 16-byte rows.
    pub const fn repack(self) -> &'static KernelSpec {
        match self {
            Self::Rounded => &REPACK_TF32,
            Self::Plain => &REPACK,
        }
    }

    /// The entry that writes `b` transposed
    /// ([`sgemm_transpose_tf32`](kernels_gpu::sgemm::repack::sgemm_transpose_tf32) or
    /// [`sgemm_transpose`](kernels_gpu::sgemm::repack::sgemm_transpose)).
    pub const fn transpose(self) -> &'static KernelSpec {
        match self {
            Self::Rounded => &TRANSPOSE_TF32,
            Self::Plain => &TRANSPOSE,
        }
    }
}

/// The launch of `packing`'s [`repack`](Packing::repack) writing the packed `a`: `m` rows of
/// [`packed_depth`] (items, as [`crate::plan::repack::launch`]: a 1-D grid of them stays
/// within every device's limits).
pub fn pack_a_launch(shape: MatmulShape, packing: Packing) -> Launch {
    crate::plan::repack::launch(packing.repack(), shape.m, packed_depth(shape.k))
}

/// The launch of `packing`'s [`transpose`](Packing::transpose) writing the packed `b`: `n`
/// rows of [`packed_depth`], one block per 32 columns × 128 depths of them (the entries'
/// tile rule), checked against `limits` ([`crate::plan::kernels::output_launch`]).
pub fn pack_b_launch(shape: MatmulShape, limits: &Limits, packing: Packing) -> Result<Launch> {
    let (kp, n) = (packed_depth(shape.k), shape.n);
    crate::plan::kernels::output_launch(packing.transpose(), kp, n, 1, limits)
}

/// The default of `rung`'s table (14: [`WGMMA_CONFIGS`], 15: [`MMA_PACKED_CONFIGS`]), each
/// of which marks one.
pub fn default_config(rung: PackedRung) -> &'static PackedConfig {
    rung.configs()
        .iter()
        .find(|c| c.default)
        .expect("each packed rung's table marks one default")
}

/// The two rungs on packed operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackedRung {
    /// Rung 14, `wgmma` (Hopper).
    Wgmma,
    /// Rung 15, `mma.sync`.
    MmaSync,
}

impl PackedRung {
    /// The rung's table that runs on every GPU it supports (for rung 15, the `cp.async`
    /// one; its Hopper table is [`MMA_TMA_CONFIGS`]), which marks the rung's default.
    pub fn configs(self) -> &'static [PackedConfig] {
        match self {
            Self::Wgmma => WGMMA_CONFIGS,
            Self::MmaSync => MMA_PACKED_CONFIGS,
        }
    }

    /// The rung of `config` (rung 15 for both of its tables).
    pub fn of(config: &PackedConfig) -> Self {
        if WGMMA_CONFIGS.iter().any(|c| c.name == config.name) {
            Self::Wgmma
        } else {
            Self::MmaSync
        }
    }
}

/// The configuration named `name` (`sgemm-wgmma-…` or `sgemm-mma-packed-…`), or
/// [`Error::UnknownKernel`](crate::Error::UnknownKernel) listing the names there are.
pub fn config(name: &str) -> Result<&'static PackedConfig> {
    crate::plan::kernels::named(&PACKED_CONFIGS, name, |c| c.name).copied()
}

/// `config`'s launch for `shape`, checked against `limits` (grid, block, shared memory).
pub fn launch(config: &PackedConfig, shape: MatmulShape, limits: &Limits) -> Result<Launch> {
    crate::plan::kernels::output_launch(&config.spec, shape.m, shape.n, 1, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::error::Error;

    #[test]
    fn each_table_has_one_default_and_names_resolve() {
        for rung in [PackedRung::Wgmma, PackedRung::MmaSync] {
            assert_eq!(rung.configs().iter().filter(|c| c.default).count(), 1);
            assert_eq!(PackedRung::of(default_config(rung)), rung);
        }
        assert_eq!(
            PACKED_CONFIGS.len(),
            WGMMA_CONFIGS.len() + MMA_PACKED_CONFIGS.len() + MMA_TMA_CONFIGS.len()
        );
        for c in PACKED_CONFIGS {
            assert_eq!(config(c.name).unwrap().name, c.name);
            // Every stage 32 deep: rung 14's tiles whole swizzle atoms, rung 15's rows of
            // 8 chunks.
            assert_eq!(c.geometry.bk, 32);
            assert!(c.geometry.dynamic_shared_bytes <= 227 * 1024, "{}", c.name);
        }
        // Rung 15's default runs on any GPU of compute capability 8.0 and later.
        let default = default_config(PackedRung::MmaSync).geometry;
        assert!(default.shared_bytes() <= Limits::CUDA.max_shared_bytes_per_block);
        assert!(matches!(config("nope"), Err(Error::UnknownKernel { .. })));
    }

    #[test]
    fn packing_pads_the_depth_to_four() {
        let shape = MatmulShape::new(3, 5, 7).unwrap();
        assert_eq!(packed_depth(5), 8);
        for rung in [PackedRung::Wgmma, PackedRung::MmaSync] {
            assert_eq!(packed_lens(default_config(rung), shape), (24, 56));
        }
        let limits = Limits::CUDA;
        for packing in [Packing::Rounded, Packing::Plain] {
            let b = pack_b_launch(shape, &limits, packing).unwrap();
            // One block (32 columns × 128 depths) covers 7 columns and 8 depths.
            assert_eq!((b.grid.x, b.grid.y), (1, 1));
            let a = pack_a_launch(shape, packing);
            // Two quads per row of 8, three rows.
            assert!(a.block.x * a.grid.x >= 3 * 2);
        }
    }

    #[test]
    fn only_wgmma_and_unaligned_rows_pack_a() {
        let (wgmma, mma) = (
            default_config(PackedRung::Wgmma),
            default_config(PackedRung::MmaSync),
        );
        for k in [1, 5, 7, 4099] {
            assert!(packs_a(wgmma, k) && packs_a(mma, k), "k = {k}");
        }
        for k in [4, 256, 4096] {
            assert!(packs_a(wgmma, k) && !packs_a(mma, k), "k = {k}");
        }
        let shape = MatmulShape::new(3, 8, 7).unwrap();
        assert_eq!(packed_lens(wgmma, shape), (24, 56));
        assert_eq!(packed_lens(mma, shape), (0, 56));
        for c in PACKED_CONFIGS {
            assert_eq!(
                c.rounds_a,
                PackedRung::of(c) == PackedRung::MmaSync,
                "{}",
                c.name
            );
        }
    }
}
