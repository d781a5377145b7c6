//! Rung 9: the blocks renumbered in groups of `GROUP` block rows, so that blocks resident at
//! the same time share a few column panels of `b` and `GROUP` row panels of `a` in L2.
//!
//! A block order rather than a new loop: rung 8's and rung 10's kernels take it with a
//! `GROUP > 0` const generic ([`BlockTile::ordered`]), the table's rung-9 lines.

use super::BlockTile;
use nvptx_device::thread;

/// The tile of block `(blockIdx.x, blockIdx.y)` renumbered in groups of `group` block
/// rows (a block swizzle for L2 reuse): blocks are taken in launch order (`x` fastest),
/// and each run of `group · gridDim.x` of them walks its `group` block rows column by
/// column, so blocks resident at the same time share a few column panels of `b` and
/// `group` row panels of `a`. A bijection on the `gridDim.x × gridDim.y` grid (the last
/// group may have fewer rows). `group >= 1`.
#[inline(always)]
pub fn grouped(bm: u32, bn: u32, m: u32, n: u32, group: u32) -> BlockTile {
    let (gx, gy) = (thread::grid_dim_x(), thread::grid_dim_y());
    let linear = thread::block_idx_y() * gx + thread::block_idx_x();
    let per_group = group * gx;
    let first_row = linear / per_group * group;
    let rows = (gy - first_row).min(group);
    let within = linear % per_group;
    let row0 = (first_row + within % rows) * bm;
    let col0 = within / rows * bn;
    BlockTile::at(row0, col0, m, n)
}
