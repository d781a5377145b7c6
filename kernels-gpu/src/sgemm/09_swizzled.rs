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
/// column ([`grouped_tile`]), so blocks resident at the same time share a few column panels
/// of `b` and `group` row panels of `a`. A bijection on the `gridDim.x × gridDim.y` grid
/// (the last group may have fewer rows). `group >= 1`; with 0, every block's tile is empty.
#[inline(always)]
pub fn grouped(bm: u32, bn: u32, m: u32, n: u32, group: u32) -> BlockTile {
    let (gx, gy) = (thread::grid_dim_x(), thread::grid_dim_y());
    let linear = thread::block_idx_y() * gx + thread::block_idx_x();
    match grouped_tile(linear, gy, gx, group) {
        Some((row, col)) => BlockTile::at(row * bm, col * bn, m, n),
        None => BlockTile::at(m, n, m, n),
    }
}

/// Tile `(row, column)` of the `linear`-th unit of a `tiles_m × tiles_n` grid of tiles in
/// the grouped order: groups of `group` tile rows, one after the other, each walked down
/// its rows first, then across its columns. `None` past the grid or for a `group` of 0.
///
/// Every division is checked, not one that panics: a kernel whose PTX calls a panic
/// function has its `wgmma` instructions serialized when the driver's linker compiles it
/// (relocatable code, where the call is external), which the persistent rungs' schedule
/// would pay on every k-tile.
#[inline(always)]
pub fn grouped_tile(linear: u32, tiles_m: u32, tiles_n: u32, group: u32) -> Option<(u32, u32)> {
    if linear >= tiles_m * tiles_n {
        return None;
    }
    let per_group = group * tiles_n;
    let first_row = linear.checked_div(per_group)? * group;
    let rows = (tiles_m - first_row).min(group);
    let within = linear.checked_rem(per_group)?;
    Some((
        first_row + within.checked_rem(rows)?,
        within.checked_div(rows)?,
    ))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::grouped_tile;
    use std::vec;

    #[test]
    fn grouped_order_is_a_bijection_on_the_grid() {
        for (tiles_m, tiles_n) in [(1, 1), (7, 5), (16, 32), (33, 1), (1, 9), (13, 17)] {
            for group in [1, 2, 3, 8, 40] {
                let units = tiles_m * tiles_n;
                let mut seen = vec![false; units as usize];
                for linear in 0..units {
                    let (r, c) = grouped_tile(linear, tiles_m, tiles_n, group)
                        .unwrap_or_else(|| panic!("{linear} of {tiles_m}×{tiles_n}"));
                    assert!(r < tiles_m && c < tiles_n, "({r}, {c})");
                    let at = (r * tiles_n + c) as usize;
                    assert!(!seen[at], "({r}, {c}) twice, group {group}");
                    seen[at] = true;
                    // Down a group's rows first.
                    if linear > 0 && group > 1 && r > 0 && r % group != 0 {
                        assert_eq!(
                            grouped_tile(linear - 1, tiles_m, tiles_n, group),
                            Some((r - 1, c))
                        );
                    }
                }
                assert_eq!(grouped_tile(units, tiles_m, tiles_n, group), None);
            }
        }
        assert_eq!(grouped_tile(0, 4, 4, 0), None);
        assert_eq!(grouped_tile(0, 0, 4, 1), None);
        assert_eq!(grouped_tile(0, 4, 0, 1), None);
    }
}
