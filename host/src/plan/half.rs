//! 16-bit matrices (`bf16`, `f16`) on Hopper's warpgroup tensor cores, fed by the
//! tensor-memory accelerator (rung 17, [`kernels_gpu::sgemm::warp_specialized`]):
//! `out = a · b` with `a` (`m × k`) and `b` (`k × n`) row-major of [`half::bf16`] or
//! [`half::f16`], `out` f32, accumulated in f32 — what cuBLAS's `cublasGemmEx` computes
//! with 16-bit `A` and `B` and `CUBLAS_COMPUTE_32F`.
//!
//! Which configuration ([`WS_CONFIGS`], one table for both types) and its launch: a
//! persistent grid of at most one block per multiprocessor. The accelerator reads rows
//! that are whole 16-byte units, so the rung takes `k` and `n` multiples of 8 ([`aligned`]).

use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;
use kernels_gpu::nvptx_device::catalogue::Extent;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::wgmma::Half;
pub use kernels_gpu::sgemm::warp_specialized::{WS_CONFIGS, WsConfig};

/// An element type rung 17 multiplies.
pub trait HalfFloat: Copy + Send + Sync + bytemuck::Pod + 'static {
    /// Which it is.
    const HALF: Half;
    /// Its name on command lines and in reports.
    const NAME: &'static str;
    /// `x` rounded to nearest even (NaN stays NaN).
    fn from_f32(x: f32) -> Self;
    /// Its exact f32 value.
    fn to_f32(self) -> f32;
}

impl HalfFloat for half::bf16 {
    const HALF: Half = Half::Bf16;
    const NAME: &'static str = "bf16";
    fn from_f32(x: f32) -> Self {
        half::bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}

impl HalfFloat for half::f16 {
    const HALF: Half = Half::F16;
    const NAME: &'static str = "f16";
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
}

/// Every element of `x` rounded to `T`.
pub fn round_all<T: HalfFloat>(x: &[f32]) -> Vec<T> {
    x.iter().map(|&v| T::from_f32(v)).collect()
}

/// The configurations for element type `T`, in table order.
pub fn configs<T: HalfFloat>() -> impl Iterator<Item = &'static WsConfig> {
    WS_CONFIGS.iter().filter(|c| c.half == T::HALF)
}

/// The configuration the table marks as `T`'s default.
pub fn default_config<T: HalfFloat>() -> &'static WsConfig {
    configs::<T>()
        .find(|c| c.default)
        .expect("the table marks a default for each element type")
}

/// The configuration named `name`, or [`Error::UnknownKernel`] listing the names there are.
pub fn config(name: &str) -> Result<&'static WsConfig> {
    crate::plan::kernels::named(WS_CONFIGS, name, |c| c.name)
}

/// Whether the accelerator can read `shape`'s operands as they are: rows of `a` (`k`
/// elements) and of `b` (`n`) whole 16-byte units.
pub fn aligned(shape: MatmulShape) -> bool {
    shape.k.is_multiple_of(8) && shape.n.is_multiple_of(8)
}

/// `config`'s launch for `shape` on a device of `multiprocessors`, checked against
/// `limits`: one block per output tile, at most one per multiprocessor.
pub fn launch(
    config: &WsConfig, shape: MatmulShape, multiprocessors: u32, limits: &Limits,
) -> Result<Launch> {
    let extent = Extent::Matrix {
        rows: shape.m,
        cols: shape.n,
    };
    let launch = config.spec.launch_on(extent, 0, multiprocessors, 1);
    limits.check(&launch, 0).map_err(Error::Launch)?;
    Ok(launch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_element_type_has_one_default_and_names_resolve() {
        assert_eq!(default_config::<half::bf16>().half, Half::Bf16);
        assert_eq!(default_config::<half::f16>().half, Half::F16);
        for c in WS_CONFIGS {
            assert_eq!(config(c.name).unwrap().name, c.name);
        }
        assert!(config("gemm-bf16-ws-nope").is_err());
    }

    #[test]
    fn a_persistent_grid_is_at_most_a_block_per_multiprocessor() {
        let c = default_config::<half::bf16>();
        let limits = Limits::HOPPER;
        let big = launch(c, MatmulShape::new(8192, 8192, 8192).unwrap(), 132, &limits).unwrap();
        assert_eq!(big.grid.x, 132);
        let small = launch(c, MatmulShape::new(100, 64, 300).unwrap(), 132, &limits).unwrap();
        assert_eq!(
            small.grid.x, 2,
            "one block per tile: 1 × 2 tiles of 128 × 256"
        );
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        let x = [1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0];
        let r: Vec<half::bf16> = round_all(&x);
        assert_eq!(r[0].to_f32(), 1.0);
        assert_eq!(r[1].to_f32(), 1.0 + 1.0 / 64.0);
    }
}
