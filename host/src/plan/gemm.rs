//! Which kernel runs a [`Gemm`](crate::problem::gemm::Gemm) call: the autotuned ladder on a plain product, or a rung-12
//! configuration ([`kernels_gpu::sgemm::blas`]) for every other layout.
//!
//! **Which kernels.** Every layout is native (rung 12: no transpose pass). A plain product
//! (both `N`, packed, `α = 1`, `β = 0`, one matrix) runs the autotuned ladder
//! ([`SgemmKernel::Autotuned`]), or any kernel of the ladder the caller names
//! ([`GemmKernel::Matmul`]); everything else runs a rung-12 configuration
//! ([`GemmKernel::Auto`] picks the block tile, [`GemmKernel::Blas`] names one).

use crate::plan::kernels::MatmulKernel;
use crate::plan::sgemm::SgemmKernel;
use crate::problem::error::{Error, Result};
use crate::problem::gemm::{Op, Problem};
use crate::problem::shape::MatmulShape;
use crate::problem::tile::TileWidth;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::sgemm::blas::{BLAS_CONFIGS, BlasConfig};

impl Problem {
    /// The launch of rung-12 configuration `config` for this problem (the batch in z),
    /// checked against `limits`.
    pub fn launch(&self, config: &BlasConfig, limits: &Limits) -> Result<Launch> {
        crate::plan::kernels::output_launch(&config.spec, self.m, self.n, self.batch, limits)
    }
}

/// Which kernel runs a [`Gemm`](crate::problem::gemm::Gemm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GemmKernel {
    /// The autotuned ladder for a plain product, else the rung-12 configuration
    /// [`blas_config`] picks.
    #[default]
    Auto,
    /// `BLAS_CONFIGS`'s configuration of this block tile (its row for the call's layouts):
    /// `BLAS_TILES[i]`.
    Blas(usize),
    /// A kernel of the ladder or the lecture (with its tile width, which only the lecture's
    /// tiled kernels use): plain products only ([`Error::GemmUnsupported`] otherwise).
    Matmul(MatmulKernel, TileWidth),
}

/// The block tiles (`bm`, `bn`) of the rung-12 configurations, largest first.
pub const BLAS_TILES: [(u32, u32); 2] = [(128, 128), (64, 64)];

/// The rung-12 configuration for `op_a`, `op_b` with block tile `BLAS_TILES[tile]`.
pub fn blas_config_of(tile: usize, op_a: Op, op_b: Op) -> Option<&'static BlasConfig> {
    let (bm, bn) = *BLAS_TILES.get(tile)?;
    BLAS_CONFIGS
        .iter()
        .find(|c| c.a == op_a && c.b == op_b && c.geometry.bm == bm && c.geometry.bn == bn)
}

/// The rung-12 configuration [`GemmKernel::Auto`] runs on a device with `sms`
/// multiprocessors: the 128 × 128 tiles if they make at least one block per
/// multiprocessor over the batch, else the 64 × 64 ones, four times the blocks. (With a
/// threshold of two blocks per multiprocessor, 2048³ on an H100's 132 took the 64 × 64
/// tiles and ran at 0.84× of the autotuned ladder's NN speed.)
pub fn blas_config(p: &Problem, sms: u32) -> &'static BlasConfig {
    blas_config_of(auto_tile(p, sms), p.op_a, p.op_b)
        .expect("the table has every layout of every tile")
}

/// The index in [`BLAS_TILES`] of [`blas_config`]'s choice.
pub fn auto_tile(p: &Problem, sms: u32) -> usize {
    let (bm, bn) = BLAS_TILES[0];
    let blocks = p.m.div_ceil(bm) as u64 * p.n.div_ceil(bn) as u64 * p.batch as u64;
    if blocks >= sms as u64 { 0 } else { 1 }
}

/// What [`GemmKernel`] resolves to for a checked problem.
#[derive(Clone, Copy, Debug)]
pub enum Resolved {
    /// A ladder or lecture kernel on the plain product.
    Matmul(MatmulKernel, TileWidth, MatmulShape),
    /// A rung-12 configuration.
    Blas(&'static BlasConfig),
}

impl GemmKernel {
    /// The kernel that runs `p` on a device with `sms` multiprocessors.
    pub fn resolve(self, p: &Problem, sms: u32) -> Result<Resolved> {
        match self {
            Self::Auto => Ok(match p.plain() {
                Some(shape) => Resolved::Matmul(
                    MatmulKernel::Sgemm(SgemmKernel::Autotuned),
                    TileWidth::Tw16, // unused by the SGEMM ladder
                    shape,
                ),
                None => Resolved::Blas(blas_config(p, sms)),
            }),
            Self::Blas(tile) => blas_config_of(tile, p.op_a, p.op_b)
                .map(Resolved::Blas)
                .ok_or(Error::UnknownKernel {
                    requested: format!("rung-12 tile {tile}"),
                    known: format!("tiles 0..{} ({BLAS_TILES:?})", BLAS_TILES.len()),
                }),
            Self::Matmul(kernel, tw) => match p.plain() {
                Some(shape) => Ok(Resolved::Matmul(kernel, tw, shape)),
                None => Err(Error::GemmUnsupported {
                    kernel: kernel.name().to_owned(),
                    call: describe(p),
                }),
            },
        }
    }
}

/// What makes a problem more than a plain product, for [`Error::GemmUnsupported`].
fn describe(p: &Problem) -> String {
    let mut parts = vec![format!(
        "op(a) = {}, op(b) = {}",
        p.op_a.name().to_uppercase(),
        p.op_b.name().to_uppercase()
    )];
    if p.alpha != 1.0 || p.beta != 0.0 {
        parts.push(format!("α = {}, β = {}", p.alpha, p.beta));
    }
    parts.push(format!("lda {}, ldb {}, ldc {}", p.lda, p.ldb, p.ldc));
    if p.batch != 1 {
        parts.push(format!("batch {}", p.batch));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_of_every_tile_is_in_the_table() {
        for tile in 0..BLAS_TILES.len() {
            for a in Op::ALL {
                for b in Op::ALL {
                    let c = blas_config_of(tile, a, b).unwrap();
                    assert_eq!((c.a, c.b), (a, b));
                }
            }
        }
        assert!(blas_config_of(BLAS_TILES.len(), Op::N, Op::N).is_none());
    }
}
