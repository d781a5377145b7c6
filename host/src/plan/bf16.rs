//! BF16 matrices on the tensor cores (rung 13, [`kernels_gpu::sgemm::bf16`]):
//! `out = a · b` where `a` and `b` hold BF16 values as their 16-bit patterns (`u16`, the
//! upper half of an f32's bits) and `out` is f32, accumulated in f32: what cuBLAS's
//! `cublasGemmEx` does with BF16 `A`, `B` and `CUBLAS_COMPUTE_32F`.
//!
//! [`round`] makes BF16 from f32 (to nearest even, as the GPU's `cvt.rn.bf16.f32`);
//! `Gpu::gemm_bf16_device` and [`Simulator::gemm_bf16`](crate::sim::Simulator::gemm_bf16)
//! run a configuration of [`BF16_CONFIGS`] ([`default_config`] where the caller has no
//! preference).

use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::nvptx_device::mma::{bf16_round_bits, bf16_value};
pub use kernels_gpu::sgemm::bf16::{BF16_CONFIGS, Bf16Config};

/// `x` rounded to BF16 (8 significant bits, to nearest even; NaN stays NaN), as bits.
pub fn round(x: f32) -> u16 {
    bf16_round_bits(x.to_bits())
}

/// The f32 value of BF16 bits (exact).
pub fn value(bits: u16) -> f32 {
    bf16_value(bits)
}

/// Every element of `x` rounded to BF16.
pub fn round_all(x: &[f32]) -> Vec<u16> {
    x.iter().map(|&v| round(v)).collect()
}

/// The configuration the table marks as the default.
pub fn default_config() -> &'static Bf16Config {
    BF16_CONFIGS
        .iter()
        .find(|c| c.default)
        .expect("the BF16 table marks one default")
}

/// The configuration named `name` (`gemm-bf16-…`), or
/// [`Error::UnknownKernel`](crate::Error::UnknownKernel) listing the names there are.
pub fn config(name: &str) -> Result<&'static Bf16Config> {
    crate::plan::kernels::named(BF16_CONFIGS, name, |c| c.name)
}

/// `config`'s launch for `shape`, checked against `limits` (grid, block, shared memory).
pub fn launch(config: &Bf16Config, shape: MatmulShape, limits: &Limits) -> Result<Launch> {
    crate::plan::kernels::output_launch(&config.spec, shape.m, shape.n, 1, limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest_even_and_exact_on_bf16_values() {
        assert_eq!(value(round(1.0)), 1.0);
        // 1 + 2⁻⁸ is halfway between 1 and 1 + 2⁻⁷: to the even one, 1.
        assert_eq!(value(round(1.0 + 1.0 / 256.0)), 1.0);
        // 1 + 3·2⁻⁸ is halfway between 1 + 2⁻⁷ and 1 + 2⁻⁶: to the even one, 1 + 2⁻⁶.
        assert_eq!(value(round(1.0 + 3.0 / 256.0)), 1.0 + 1.0 / 64.0);
        assert!(value(round(f32::NAN)).is_nan());
        assert_eq!(value(round(f32::NEG_INFINITY)), f32::NEG_INFINITY);
    }

    #[test]
    fn the_table_has_one_default_and_names_resolve() {
        assert_eq!(BF16_CONFIGS.iter().filter(|c| c.default).count(), 1);
        for c in BF16_CONFIGS {
            assert_eq!(config(c.name).unwrap().name, c.name);
        }
        let err = config("gemm-bf16-nope").unwrap_err().to_string();
        assert!(err.contains("gemm-bf16-nope"), "{err}");
    }
}
