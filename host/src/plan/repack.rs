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
//!
//! A run on operands padded to whole tiles ([`tiles`], [`TiledRun`]: a plain configuration
//! or a split-k run) pads further, so that no block leaves the exact loop: the depth to whole
//! `BK` tiles, `a`'s rows to whole `BM` and `b`'s columns to whole `BN` where that operand
//! is copied anyway or small, into an output in the workspace whose first `m` rows of `n`
//! are copied back. The autotuner proposes it from its fastest plain and split-k runs.

use crate::plan::sgemm::SgemmKernel;
use crate::plan::split_k::SplitK;
use crate::problem::error::Result;
use crate::problem::shape::MatmulShape;
use kernels_gpu::catalogue::{Extent, KernelSpec};
use kernels_gpu::nvptx_device::launch::Launch;
#[cfg(test)]
use kernels_gpu::sgemm::repack::REPACK;
use kernels_gpu::sgemm::{CONFIGS, SgemmConfig};

/// The suffix of a run on whole tiles' name ([`TiledRun::name`]), after its inner run's.
pub const TILES: &str = "-tiles";

/// The most floats a run on whole tiles ([`tiles`]) copies, as a fraction of the product's `m · n · k`:
/// `1 / TILES_COPY_SHARE` (an operand copied, and the output written and copied back, each
/// float counted once). A float copied is about 8 bytes of memory traffic, about 2 ps at an
/// H200's copy speed, where each of the product's `m · n · k` FMAs takes about 0.03 ps at
/// FP32 rates: at 1/64 the copies cost about a sixth of the product at most, what whole
/// tiles saved on an H200 (127×4096×4096: 0.125 ms; 128×4096×4096: 0.107 ms).
pub const TILES_COPY_SHARE: u128 = 64;

/// An operand is copied to pad its rows or columns to whole tiles alone (its depth or its
/// rows' alignment needing no copy) only where it is at most `1 / OPERAND_SHARE` of the
/// product's `m · n · k` floats: the rows of a tall `a` under a narrow output cost more to
/// copy than its edge tiles cost to run (4717×5936×161: `a` is 112 MB).
pub const OPERAND_SHARE: u128 = 256;

/// A product padded to whole block tiles: the padded shape, and which of the operands and
/// the output are copies (zero past the product's rows, depth and columns) in the
/// workspace, the output's first `m` rows of `n` copied back. Stream-k runs
/// ([`crate::plan::stream_k::StreamRun::padded`]) pad every dimension; runs on whole tiles
/// ([`tiles`]) what is cheap to copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Padded {
    /// `m'`, `k'` and `n'`: `m`, `k` and `n`, or rounded up to the tile's rows, depth and
    /// columns.
    pub shape: MatmulShape,
    /// Whether `a` is copied into `m' × k'` (else `m' = m`, `k' = k`).
    pub copy_a: bool,
    /// Whether `b` is copied into `k' × n'` (else `k' = k`, `n' = n`).
    pub copy_b: bool,
    /// Whether the output is computed into `m' × n'` and copied back (`m' × n'` is not
    /// `m × n`).
    pub copy_out: bool,
}

impl Padded {
    /// Floats of the copies, `a`'s, then `b`'s, then the output's (each a multiple of 4, so
    /// each starts 16-byte aligned in one buffer): `(a, b, out)`, 0 for one not copied.
    pub fn copies(&self) -> (usize, usize, usize) {
        let (la, lb, lo) = self.shape.lens();
        (
            if self.copy_a { la } else { 0 },
            if self.copy_b { lb } else { 0 },
            if self.copy_out { lo } else { 0 },
        )
    }

    /// Floats of all the copies.
    pub fn workspace(&self) -> usize {
        let (a, b, out) = self.copies();
        a + b + out
    }
}

/// The padding of `shape` for block tiles of `bm × bn`, `bk` deep, that a run on whole tiles
/// ([`TiledRun`]) takes: the depth to whole `bk`-deep tiles where it is not (both operands
/// copied), `a`'s rows to whole `bm` where `a` is copied anyway (its depth, or rows not
/// 16-byte aligned) or small ([`OPERAND_SHARE`]), `b`'s columns to whole `bn` likewise.
/// `None` where that copies nothing or more than [`TILES_COPY_SHARE`] allows;
/// [`Error::IndexOverflow`](crate::Error::IndexOverflow) where the padded product no longer
/// fits the kernels' indices.
///
/// The same configuration ran 128×4096×4096 in 0.107 ms and 127×4096×4096 in 0.125 on an
/// H200, 832×1168×1280 in 0.065 ms and 824×1166×1279 in 0.080: its blocks on the product's
/// edges, and every block where a row stride is not a multiple of 4, run the checked loop.
pub fn tiles(bm: u32, bn: u32, bk: u32, shape: MatmulShape) -> Result<Option<Padded>> {
    let MatmulShape { m, k, n } = shape;
    let (bm, bn, bk) = (bm.max(1), bn.max(1), bk.max(1).next_multiple_of(4));
    let up = |x: u32, to: u32| (x as usize).next_multiple_of(to as usize);
    let k2 = up(k, bk);
    let deep = k2 != k as usize;
    let work = u128::from(m) * u128::from(n) * u128::from(k);
    let small = |floats: usize| floats as u128 * OPERAND_SHARE <= work;
    let copy_a = deep || !k.is_multiple_of(4) || (!m.is_multiple_of(bm) && small(up(m, bm) * k2));
    let copy_b = deep || !n.is_multiple_of(4) || (!n.is_multiple_of(bn) && small(k2 * up(n, bn)));
    let m2 = if copy_a { up(m, bm) } else { m as usize };
    let n2 = if copy_b { up(n, bn) } else { n as usize };
    let padded = Padded {
        shape: MatmulShape::new(m2, k2, n2)?,
        copy_a,
        copy_b,
        copy_out: (m2, n2) != (m as usize, n as usize),
    };
    let copies = padded.workspace() as u128;
    Ok(((copy_a || copy_b) && copies * TILES_COPY_SHARE <= work).then_some(padded))
}

/// What a run on whole tiles ([`tiles`]) runs on the padded operands: a plain FP32 configuration or a
/// split-k run of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TiledRun {
    Config(SgemmKernel),
    Split(SplitK),
}

impl TiledRun {
    /// The configuration it runs, split or not.
    pub fn config(self) -> &'static SgemmConfig {
        match self {
            Self::Config(k) => k.config(),
            Self::Split(s) => &CONFIGS[s.config],
        }
    }

    /// Its padding of `shape` ([`tiles`] with its configuration's block tile).
    pub fn tiles(self, shape: MatmulShape) -> Result<Option<Padded>> {
        let g = self.config().geometry;
        tiles(g.bm, g.bn, g.bk, shape)
    }

    /// `<inner name>-tiles`.
    pub fn name(self) -> String {
        let inner = match self {
            Self::Config(k) => k.name().to_owned(),
            Self::Split(s) => s.name(),
        };
        format!("{inner}{TILES}")
    }

    /// Parses [`name`](Self::name), for the tuned FP32 configurations and split-k runs.
    pub fn from_name(name: &str) -> Option<Self> {
        let inner = name.strip_suffix(TILES)?;
        SgemmKernel::TUNED
            .into_iter()
            .find(|k| k.name() == inner)
            .map(Self::Config)
            .or_else(|| SplitK::from_name(inner).map(Self::Split))
    }
}

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
    fn tiles_pad_what_is_cheap_to_copy() {
        let shape = |m, k, n| MatmulShape::new(m, k, n).unwrap();
        // Few rows, one short of a tile: a's 128 rows copied, b as it is.
        let t = tiles(128, 128, 16, shape(127, 4096, 4096))
            .unwrap()
            .unwrap();
        assert_eq!(
            (t.shape, t.copy_a, t.copy_b, t.copy_out),
            (shape(128, 4096, 4096), true, false, true)
        );
        assert_eq!(t.copies(), (128 * 4096, 0, 128 * 4096));
        // A tall a under a narrow, odd output: b padded to whole tiles, a left (112 MB).
        let t = tiles(128, 64, 16, shape(4717, 5936, 161)).unwrap().unwrap();
        assert_eq!(
            (t.shape, t.copy_a, t.copy_b),
            (shape(4717, 5936, 192), false, true)
        );
        // A depth that is not whole tiles: both copied, every dimension padded.
        let t = tiles(64, 128, 16, shape(824, 1166, 1279)).unwrap().unwrap();
        assert_eq!(
            (t.shape, t.copy_a, t.copy_b),
            (shape(832, 1168, 1280), true, true)
        );
        assert_eq!(t.workspace(), 832 * 1168 + 1168 * 1280 + 832 * 1280);
        // Whole tiles and aligned rows: nothing to pad.
        assert_eq!(tiles(128, 128, 16, shape(128, 4096, 4096)).unwrap(), None);
        // A depth of 8-deep tiles pads to multiples of 8.
        let t = tiles(64, 128, 8, shape(256, 1004, 512)).unwrap().unwrap();
        assert_eq!(t.shape, shape(256, 1008, 512));
        // Copies past a 64th of the product: not worth it.
        assert_eq!(tiles(64, 64, 16, shape(64, 5, 64)).unwrap(), None);
        // Past the kernels' indices: a typed error.
        assert!(tiles(128, 128, 16, shape(1, u32::MAX as usize - 70, 1)).is_err());
        // Names.
        for run in [
            TiledRun::Config(SgemmKernel::DEFAULT),
            TiledRun::Split(SplitK::candidates().next().unwrap()),
        ] {
            assert!(run.name().ends_with(TILES));
            assert_eq!(TiledRun::from_name(&run.name()), Some(run));
        }
        assert_eq!(
            TiledRun::from_name("sgemm-multistage-64x64x16-w32x32"),
            None
        );
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
