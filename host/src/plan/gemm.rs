//! Which kernel runs a [`Gemm`](crate::problem::gemm::Gemm) call: the autotuned ladder on a plain product, or a rung-12
//! configuration ([`kernels_gpu::sgemm::blas`]) for every other layout, or no product at
//! all where `α = 0` or `k = 0` (BLAS's `C = β·C`, which reads neither operand).
//!
//! **Batches.** Rung 12 runs the products of a batch in the grid's z extent, which CUDA
//! caps at 65,535: a larger batch is cut into launches of at most that many products each
//! ([`Problem::launches`]), each on the operands from its first product on.
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
use kernels_gpu::catalogue::Extent;
use kernels_gpu::nvptx_device::launch::{Launch, Limits};
use kernels_gpu::sgemm::blas::{BLAS_CONFIGS, BlasConfig, SCALE_C};

/// One launch of a batched kernel: products `first..first + launch.grid.z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchPart {
    pub first: u32,
    pub launch: Launch,
}

impl Problem {
    /// The launches of rung-12 configuration `config` for this problem: the batch in z, cut
    /// into launches of at most `limits.max_grid_dim.z` products (the last one takes what is
    /// left), each checked against `limits`.
    pub fn launches(&self, config: &BlasConfig, limits: &Limits) -> Result<Vec<BatchPart>> {
        let per = limits.max_grid_dim.z.max(1);
        (0..self.batch)
            .step_by(per as usize)
            .map(|first| {
                let count = per.min(self.batch - first);
                let launch = crate::plan::kernels::output_launch(
                    &config.spec,
                    self.m,
                    self.n,
                    count,
                    limits,
                )?;
                Ok(BatchPart { first, launch })
            })
            .collect()
    }

    /// Where product `z` starts in the first operand, the second and the output (elements).
    pub fn offsets(&self, z: u32) -> (usize, usize, usize) {
        let at = |stride: u64| z as usize * stride as usize;
        (at(self.stride_a), at(self.stride_b), at(self.stride_c))
    }

    /// The launch of [`SCALE_C`] (`C = β·C` over the batch) for a problem that
    /// [scales only](Self::scales_only), checked against `limits`; `None` where `β = 1`
    /// leaves `C` as it is (BLAS returns at once then).
    pub fn scale_c_launch(&self, limits: &Limits) -> Result<Option<Launch>> {
        if self.beta == 1.0 || self.is_empty() {
            return Ok(None);
        }
        let outputs = self.m as u64 * self.n as u64 * self.batch as u64;
        let launch = SCALE_C.launch(Extent::Items(outputs.min(u32::MAX as u64) as u32), 0);
        limits.check(&launch, SCALE_C.static_shared_bytes)?;
        Ok(Some(launch))
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
    /// No product: `C = β·C` ([`Problem::scales_only`], [`Problem::scale_c_launch`]).
    ScaleC,
}

impl GemmKernel {
    /// The kernel that runs `p` on a device with `sms` multiprocessors: whatever the
    /// choice, [`Resolved::ScaleC`] where `p` [scales only](Problem::scales_only) (a choice
    /// that could not run the call is still an error).
    pub fn resolve(self, p: &Problem, sms: u32) -> Result<Resolved> {
        let resolved = self.resolve_product(p, sms)?;
        Ok(if p.scales_only() {
            Resolved::ScaleC
        } else {
            resolved
        })
    }

    /// The kernel that runs `p`'s product.
    fn resolve_product(self, p: &Problem, sms: u32) -> Result<Resolved> {
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

    fn problem(batch: usize) -> Problem {
        crate::problem::gemm::Gemm::new(3, 5, 2)
            .scale(2.0, 0.5)
            .batched(batch)
            .check(6 * batch, 10 * batch, 15 * batch)
            .unwrap()
    }

    #[test]
    fn batches_past_the_grid_are_cut_into_launches() {
        let limits = Limits::CUDA;
        let config = blas_config_of(1, Op::N, Op::N).unwrap();
        let p = problem(65_535 * 2 + 7);
        let parts = p.launches(config, &limits).unwrap();
        let firsts: Vec<u32> = parts.iter().map(|x| x.first).collect();
        let counts: Vec<u32> = parts.iter().map(|x| x.launch.grid.z).collect();
        assert_eq!(firsts, [0, 65_535, 131_070]);
        assert_eq!(counts, [65_535, 65_535, 7]);
        assert_eq!(p.offsets(65_535), (65_535 * 6, 65_535 * 10, 65_535 * 15));
        let one = problem(1).launches(config, &limits).unwrap();
        assert_eq!((one.len(), one[0].first, one[0].launch.grid.z), (1, 0, 1));
    }

    #[test]
    fn alpha_zero_and_k_zero_scale_c_whatever_the_kernel() {
        let p = problem(2);
        assert!(!p.scales_only());
        for alpha_zero in [
            Problem { alpha: 0.0, ..p },
            Problem { alpha: -0.0, ..p },
            Problem { k: 0, ..p },
        ] {
            assert!(alpha_zero.scales_only());
            for kernel in [GemmKernel::Auto, GemmKernel::Blas(0), GemmKernel::Blas(1)] {
                assert!(matches!(
                    kernel.resolve(&alpha_zero, 2).unwrap(),
                    Resolved::ScaleC
                ));
            }
            // A choice that names no kernel is still an error.
            assert!(GemmKernel::Blas(9).resolve(&alpha_zero, 2).is_err());
            let launch = alpha_zero.scale_c_launch(&Limits::CUDA).unwrap().unwrap();
            assert_eq!(launch.grid.x, 1); // 2 · 3 · 5 outputs, one block
        }
        // β = 1 leaves C as it is: nothing to launch.
        let unchanged = Problem {
            alpha: 0.0,
            beta: 1.0,
            ..p
        };
        assert_eq!(unchanged.scale_c_launch(&Limits::CUDA).unwrap(), None);
        // A batch of any size is one launch of at most 65,535 blocks.
        let huge = Problem {
            alpha: 0.0,
            batch: u32::MAX,
            ..p
        };
        let launch = huge.scale_c_launch(&Limits::CUDA).unwrap().unwrap();
        assert_eq!(launch.grid.x, 65_535);
    }
}
