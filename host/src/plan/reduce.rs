//! Sum reductions: kernel catalogue, launch shape and error bound.

use crate::problem::error::{Error, Result};
use kernels_gpu::catalogue::{Extent, REDUCE, ReduceEntry, VectorConfig};
use kernels_gpu::nvptx_device::launch::Launch;
use kernels_gpu::reduce::{BLOCK, UNROLL};

/// The block-combining strategy of the sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReduceKernel {
    /// Shared-memory binary tree.
    Tree,
    /// Warp shuffles.
    Warp,
}

pub use kernels_gpu::reduce::MAX_BLOCKS;

impl ReduceKernel {
    pub const ALL: [ReduceKernel; 2] = [Self::Tree, Self::Warp];

    /// Its row of `kernels_gpu::catalogue::REDUCE`.
    pub fn config(self) -> &'static VectorConfig<ReduceEntry> {
        &REDUCE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.config().name
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn entry(self) -> &'static str {
        self.config().spec.entry
    }

    /// The launch of one pass over `n` inputs (the catalogue's grid rule: one block for the
    /// second pass over the partials).
    pub fn launch(self, n: u32) -> Launch {
        self.config().spec.launch(Extent::Items(n), 0)
    }
}

/// Blocks of the first pass for `n` inputs: enough for each thread to have a few vectors.
pub fn first_pass_blocks(n: u32) -> u32 {
    ReduceKernel::Tree.launch(n).grid.x
}

/// Checks that `len` inputs fit the kernels' 32-bit indices.
pub fn check_len(len: usize) -> Result<u32> {
    u32::try_from(len)
        .ok()
        .filter(|&n| n <= u32::MAX - BLOCK * 4 * UNROLL)
        .ok_or(Error::IndexOverflow {
            operand: "input",
            rows: 1,
            cols: len,
            elements: len as u128,
        })
}

/// The largest number of roundings any input goes through on its way to the sum — the
/// depth of the summation tree the two passes form — so that
/// `|sum - exact| <= depth * 2⁻²⁴ * Σ|x|` (the pairwise-summation bound for this tree).
pub fn error_depth(n: u32) -> u32 {
    let depth_of = |n: u32, blocks: u32| {
        let threads = blocks * BLOCK;
        let per_accumulator = n.div_ceil(4).div_ceil(threads * UNROLL);
        // accumulator chain + 2 within a vector + 2 across accumulators + tail + block tree
        per_accumulator + 2 + 2 + 1 + BLOCK.ilog2()
    };
    let blocks = first_pass_blocks(n);
    let mut depth = depth_of(n, blocks);
    if blocks > 1 {
        depth += depth_of(blocks, 1);
    }
    depth
}

/// The f64 sum and `Σ|x|` of `x`.
pub fn reference(x: &[f32]) -> (f64, f64) {
    x.iter().fold((0.0, 0.0), |(s, a), &v| {
        (s + v as f64, a + (v as f64).abs())
    })
}

/// Whether `sum` is within the bound of [`error_depth`] from the f64 reference. `false` for
/// an input longer than the kernels can sum ([`check_len`]), which has no bound.
pub fn within_bound(sum: f32, x: &[f32]) -> bool {
    let Ok(n) = check_len(x.len()) else {
        return false;
    };
    let (exact, magnitude) = reference(x);
    let bound = error_depth(n) as f64 * (f32::EPSILON as f64 / 2.0) * magnitude;
    if exact.is_finite() {
        (sum as f64 - exact).abs() <= bound
    } else {
        (sum as f64).is_nan() == exact.is_nan()
    }
}
