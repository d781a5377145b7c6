//! Row splits: a product whose block tiles fill the GPU some whole number of times and
//! leave a thin last wave runs in two parts. The top rows, whole waves of one
//! configuration's block rows, run that configuration; the rows left run a split-k product
//! of their own ([`crate::plan::split_k`]), whose many short blocks take a fraction of a wave
//! instead of a whole one.
//!
//! On an H100 the 128 × 128 tiles run two blocks on each of 132 SMs, 264 at once. A
//! 2049 × 2051 output has 17 × 17 of them: one wave of 264 and one of 25, which takes about
//! as long as the first. Split at row 1920 (15 block rows of 17, 255 blocks), the first 1920
//! rows take one wave and the last 129 a split-k run of about an eighth of its time.
//!
//! Each output is computed by one of the two parts, so the split adds no rounding of its
//! own: the top rows have the bits of the configuration alone, the bottom rows those of the
//! split-k run on them (its bound, [`SplitK::roundings`]). Deterministic run to run, as both
//! parts are.
//!
//! The autotuner ([`crate::gpu::autotune`]) proposes a row split ([`top_rows`]) for every plain
//! configuration whose blocks leave a thin last wave and times them beside everything else; they can also be run
//! directly ([`crate::gpu::Gpu::matmul_rows_device`], [`crate::sim::Simulator::matmul_rows`]).

use crate::plan::sgemm::SgemmKernel;
use crate::plan::split_k::SplitK;
use crate::problem::error::{Error, Result};
use crate::problem::shape::MatmulShape;

/// A product split by rows: rows `0..rows` by `top`, the rest by `bottom`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowSplit {
    /// A plain FP32 configuration ([`SgemmKernel::TUNED`]).
    pub top: SgemmKernel,
    /// Rows of the top part: at least 1, fewer than the product's.
    pub rows: u32,
    /// The split-k run of the rows left.
    pub bottom: SplitK,
}

impl RowSplit {
    /// `<top>-rows<rows>+<bottom>`, e.g.
    /// `sgemm-double-buffered-swizzled-128x128x16-w64x32-rows1920+sgemm-multistage-64x64x16-w32x32-split4`.
    pub fn name(self) -> String {
        format!(
            "{}-rows{}+{}",
            self.top.name(),
            self.rows,
            self.bottom.name()
        )
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        let (top, bottom) = name.split_once('+')?;
        let (top, rows) = top.rsplit_once("-rows")?;
        let top = SgemmKernel::TUNED.into_iter().find(|k| k.name() == top)?;
        Some(Self {
            top,
            rows: rows.parse().ok().filter(|&r| r >= 1)?,
            bottom: SplitK::from_name(bottom)?,
        })
    }

    /// The top and bottom parts of `shape`: [`Error::RowSplit`] unless `1 <= rows < m`.
    pub fn parts(self, shape: MatmulShape) -> Result<(MatmulShape, MatmulShape)> {
        if self.rows == 0 || self.rows >= shape.m {
            return Err(Error::RowSplit {
                rows: self.rows as usize,
                m: shape.m as usize,
            });
        }
        let MatmulShape { m, k, n } = shape;
        let part = |rows: u32| MatmulShape::new(rows as usize, k as usize, n as usize);
        Ok((part(self.rows)?, part(m - self.rows)?))
    }
}

impl std::fmt::Display for RowSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Where to split `shape` for a configuration with `bm × bn` block tiles of which `slots`
/// run at once on the device (blocks per SM × SMs): after the whole waves of whole block
/// rows, if that leaves any rows. `None` where the product's block rows fit one wave, where
/// they divide into whole waves, or where one block row alone fills more than a wave.
pub fn top_rows(bm: u32, bn: u32, shape: MatmulShape, slots: u32) -> Option<u32> {
    let (bm, bn) = (bm.max(1), bn.max(1));
    let across = shape.n.div_ceil(bn);
    let block_rows = shape.m.div_ceil(bm);
    let per_wave = slots.checked_div(across)?;
    let whole = (block_rows / per_wave.max(1)) * per_wave;
    // whole < block_rows, so whole · bm < m.
    (per_wave > 0 && whole > 0 && whole < block_rows).then(|| whole * bm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::shape::valid as shape;

    #[test]
    fn splits_after_whole_waves_of_block_rows() {
        // 17 × 17 tiles of 128 on 264 slots: 15 block rows a wave.
        assert_eq!(top_rows(128, 128, shape(2049, 2047, 2051), 264), Some(1920));
        // Two waves of 15 rows, then 2 rows.
        assert_eq!(top_rows(128, 128, shape(4096, 64, 2051), 264), Some(3840));
        // 16 × 16 tiles fit one wave; 32 × 32 are four whole waves of 8 rows.
        assert_eq!(top_rows(128, 128, shape(2048, 64, 2048), 264), None);
        assert_eq!(top_rows(128, 128, shape(4096, 64, 4096), 264), None);
        // A block row wider than the device's slots, and no slots.
        assert_eq!(top_rows(128, 128, shape(4096, 64, 40000), 264), None);
        assert_eq!(top_rows(128, 128, shape(2049, 64, 2051), 0), None);
    }

    #[test]
    fn names_round_trip_and_parts_are_checked() {
        let split = RowSplit {
            top: SgemmKernel::DEFAULT,
            rows: 1920,
            bottom: SplitK::candidates().next().unwrap(),
        };
        assert_eq!(RowSplit::from_name(&split.name()), Some(split));
        assert_eq!(RowSplit::from_name("sgemm-nothing-rows3+x-split2"), None);
        let (top, bottom) = split.parts(shape(2049, 7, 5)).unwrap();
        assert_eq!((top, bottom), (shape(1920, 7, 5), shape(129, 7, 5)));
        assert!(matches!(
            split.parts(shape(1920, 7, 5)),
            Err(Error::RowSplit {
                rows: 1920,
                m: 1920
            })
        ));
    }
}
