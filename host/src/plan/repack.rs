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
//!
//! A configuration with a strided entry point (rung 10's, [`SgemmConfig::strided`]) is
//! repacked without the output's copy: only the operands that need it are copied
//! ([`Strided`]), `a` into rows of the depth rounded up to whole `BK`-deep tiles and `b` into
//! that many rows of `n` rounded up to 4, and the kernel, told both strides, stores the
//! output in place in rows of `n`. Every interior block then takes the exact loop. It has
//! the same bits as the configuration on the operands as they are: its checked loop
//! zero-fills the last tile to the same depth. On an H200, 6043×35×6790 took 0.172 ms on
//! the operands as they are, where 6043×48×6792 took 0.110 ms; the copy of the output back
//! was most of a repacked run's 0.225 ms.

use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::sgemm::SgemmConfig;
#[cfg(test)]
use kernels_gpu::sgemm::repack::REPACK;

/// Whether repacking `shape`'s operands gives them 16-byte aligned rows they lack: `k` or
/// `n` is not a multiple of 4.
pub fn applies(shape: MatmulShape) -> bool {
    !shape.k.is_multiple_of(4) || !shape.n.is_multiple_of(4)
}

/// Whether the autotuner times `config` repacked on `shape`: [`Strided::applies`] for a
/// configuration with a strided entry, else [`applies`].
pub fn worth_timing(config: &SgemmConfig, shape: MatmulShape) -> bool {
    match config.strided {
        Some(_) => Strided::applies(config, shape),
        None => applies(shape),
    }
}

/// The product of the repacked operands: `m × k' × n'`, `k` and `n` rounded up to
/// multiples of 4 ([`Error::IndexOverflow`](crate::Error::IndexOverflow) if that no longer
/// fits the kernels' indices).
pub fn padded(shape: MatmulShape) -> Result<MatmulShape> {
    let MatmulShape { m, k, n } = shape;
    let up = |x: u32| (x as usize).next_multiple_of(4);
    MatmulShape::new(m as usize, up(k), up(n))
}

/// How a strided repacked product ([`SgemmConfig::strided`]) runs `shape`: the depth it
/// multiplies over and both operands' row strides, and which operands are copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    /// `k` rounded up to the configuration's `bk`: whole tiles, zeros past `k`. Also `a`'s
    /// row stride as the kernel reads it ([`lda`](Self::lda)): where `a` is not copied its
    /// `k` is already whole tiles.
    pub k: u32,
    /// Row stride of `b` as the kernel reads it: `n` rounded up to 4 (`n` itself where `b`
    /// is not copied).
    pub ldb: u32,
    /// Whether `a` is copied (into `m` rows of `lda`): where the depth is padded.
    pub copy_a: bool,
    /// Whether `b` is copied (into `k` rows of `ldb`): where the depth is padded or `n` is
    /// not a multiple of 4.
    pub copy_b: bool,
}

impl Strided {
    /// The plan for `config` (one with a strided entry) on `shape`, or
    /// [`Error::IndexOverflow`](crate::Error::IndexOverflow) where the padded operands no
    /// longer fit the kernels' indices.
    pub fn of(config: &SgemmConfig, shape: MatmulShape) -> Result<Self> {
        let MatmulShape { m, k, n } = shape;
        let bk = config.geometry.bk.max(1) as usize;
        let depth = (k as usize).next_multiple_of(bk.next_multiple_of(4));
        let width = (n as usize).next_multiple_of(4);
        let copy_a = depth != k as usize;
        let copy_b = copy_a || width != n as usize;
        // Both padded operands as one product's: m × depth and depth × width.
        let padded = MatmulShape::new(m as usize, depth, width)?;
        Ok(Self {
            k: padded.k,
            ldb: padded.n,
            copy_a,
            copy_b,
        })
    }

    /// Row stride of `a` as the kernel reads it: the padded depth [`k`](Self::k).
    pub fn lda(&self) -> u32 {
        self.k
    }

    /// Floats of `a`'s copy: `m · lda` if `a` is copied, else none.
    pub fn a_copy(&self, m: u32) -> usize {
        if self.copy_a {
            m as usize * self.lda() as usize
        } else {
            0
        }
    }

    /// Whether a strided run of `config` gives `shape` anything the plain one lacks: every
    /// interior block on the exact loop, where `k` is not whole tiles or `n` not a multiple
    /// of 4.
    pub fn applies(config: &SgemmConfig, shape: MatmulShape) -> bool {
        Self::of(config, shape).is_ok_and(|s| s.copy_b)
    }

    /// Floats of the copies: [`a_copy`](Self::a_copy), plus `k · ldb` if `b` is copied.
    pub fn workspace(&self, m: u32) -> usize {
        let b = if self.copy_b {
            self.k as usize * self.ldb as usize
        } else {
            0
        };
        self.a_copy(m) + b
    }
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
    fn strided_runs_copy_only_what_needs_it() {
        use kernels_gpu::sgemm::CONFIGS;
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        let config = CONFIGS.iter().find(|c| c.strided.is_some()).unwrap();
        assert_eq!(config.geometry.bk, 16);
        // Short odd depth, odd width: both copied, depth to whole tiles.
        let s = Strided::of(config, shape(6043, 35, 6790)).unwrap();
        assert_eq!(
            (s.k, s.lda(), s.ldb, s.copy_a, s.copy_b),
            (48, 48, 6792, true, true)
        );
        assert_eq!(s.workspace(6043), 6043 * 48 + 48 * 6792);
        // Whole tiles, odd width: only b.
        let s = Strided::of(config, shape(313, 9280, 1685)).unwrap();
        assert_eq!(
            (s.k, s.lda(), s.ldb, s.copy_a, s.copy_b),
            (9280, 9280, 1688, false, true)
        );
        assert_eq!(s.workspace(313), 9280 * 1688);
        // An aligned depth that is not whole tiles: both (the depth is padded).
        let s = Strided::of(config, shape(6043, 36, 6792)).unwrap();
        assert_eq!((s.k, s.lda(), s.ldb), (48, 48, 6792));
        assert!(Strided::applies(config, shape(6043, 36, 6792)));
        // Nothing to gain: whole tiles and aligned rows.
        assert!(!Strided::applies(config, shape(6043, 48, 6792)));
        assert_eq!(
            Strided::of(config, shape(7, 64, 8)).unwrap().workspace(7),
            0
        );
        // Past the kernels' indices: a typed error.
        assert!(Strided::of(config, shape(1, u32::MAX as usize - 70, 1)).is_err());
    }

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
