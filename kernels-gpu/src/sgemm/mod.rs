//! SGEMM beyond the lecture: `out[m×n] = a[m×k] · b[k×n]`, row-major f32 (NN), climbing the
//! ladder of the public SGEMM worklogs (siboehm's "How to optimize a CUDA matmul kernel")
//! from the lecture's tiled kernel towards cuBLAS, one idea per rung and one file per rung.
//!
//! | rung | kernel | what it adds | outputs per thread |
//! |---|---|---|---|
//! | 1 | [`coalesced::sgemm_coalesced`] | 1D block, consecutive threads on consecutive columns | 1 |
//! | 2 | [`shared_blocking::sgemm_shared_blocking`] | `BS × BS` shared tiles of `a` and `b` | 1 |
//! | 3 | [`blocktiling_1d::sgemm_blocktiling_1d`] | a column of `TM` outputs: one `b` value reused `TM` times | `TM` |
//! | 4 | [`blocktiling_2d::sgemm_blocktiling_2d`] | a `TM × TN` register tile: outer products of two fragments | `TM·TN` |
//! | 5 | [`vectorized::sgemm_vectorized`] | 16-byte global loads and stores, `a` tile stored transposed so both fragments are 16-byte shared loads | `TM·TN` |
//! | 6 | [`warptiling::sgemm_warptiling`] | warp tiles: each warp owns a `WM × WN` sub-tile, threads spread over it in `WMITER × WNITER` steps, so a warp's shared reads are broadcasts without bank conflicts | `WMITER·TM·WNITER·TN` |
//! | 7 | [`double_buffered::sgemm_double_buffered`] | two shared stages and register prefetch: the next tile's global loads are in flight while this one's FMAs run, one barrier per tile | as rung 6 |
//! | 8 | [`multistage::sgemm_multistage`] | `b` tiles copied global → shared by `cp.async` through a ring of 3 stages, one barrier per tile | as rung 6 |
//!
//! All of them take `(a, b, out, m, n, k)` as the lecture kernels take `(m, n, out, h, w, k)`,
//! and follow the [matmul module contract](crate::matmul): `a`, `b` and `out` point to `m·k`,
//! `k·n` and `m·n` valid f32s, those products fit `u32`, and the index arithmetic is 32-bit
//! and no-wrap ([`at`]). Each block computes one `BM × BN` tile of `out`; the host launches a
//! 1D block of [`Geometry::threads`] threads on a `cdiv(n, BN) × cdiv(m, BM)` grid with no
//! dynamic shared memory (see each entry point's `Geometry`).
//!
//! Any shape is correct (`k = 1`, nothing a multiple of anything, tall and skinny): partial
//! tiles are padded with zeros, and every output accumulates `fma(a[r, i], b[i, c], acc)`
//! for `i` in increasing order from `0.0`, so every rung gives the same bits as the lecture's
//! kernels. From rung 5 on, a block takes the 16-byte fast path only where it is valid for
//! the whole block (a block-uniform branch, see [`tile_io`]): the tile lies inside the
//! matrix, the row length is a multiple of 4 and the pointer 16-byte aligned; everything
//! else goes through bounds-checked scalar loads and stores.
//!
//! Register arrays (accumulators, fragments, staged loads) are fixed-size arrays indexed only
//! inside loops unrolled at compile time ([`unroll`]), so that every index is a constant and
//! the arrays live in registers; a run-time index, an iterator adaptor, or a loop LLVM chose
//! not to unroll would put them in local memory (see [`crate::reduce`]).

pub mod blocktiling_1d;
pub mod blocktiling_2d;
pub mod coalesced;
pub mod double_buffered;
pub mod global;
pub mod multistage;
pub mod shared_blocking;
pub mod tile_io;
pub mod unroll;
pub mod vectorized;
pub mod warp_tile;
pub mod warptiling;

pub use crate::matmul::{at, cdiv};

use crate::thread;

/// How the host launches one SGEMM entry point: a 1D block of `threads` threads per `bm × bn`
/// tile of `out`, a `cdiv(n, bn) × cdiv(m, bm)` grid, no dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// The PTX `.entry` name.
    pub entry: &'static str,
    /// Rows of `out` per block.
    pub bm: u32,
    /// Columns of `out` per block.
    pub bn: u32,
    /// Depth of the shared tiles, the steps of one tile loop (0 for rung 1, which has none).
    pub bk: u32,
    /// Threads per block (x only).
    pub threads: u32,
    /// The bytes of the kernel's `.shared` arrays (a CPU test checks them against the PTX).
    pub static_shared_bytes: u32,
}

/// This block's `BM × BN` tile of `out`: where it starts, and how many rows and columns of
/// `out` are left from there (at least one of each, since the grid is `cdiv(n, BN) ×
/// cdiv(m, BM)`). Counting what is left instead of computing `row0 + BM` cannot overflow,
/// whatever `m` is.
#[derive(Clone, Copy, Debug)]
pub struct BlockTile {
    pub row0: u32,
    pub col0: u32,
    pub rows_left: u32,
    pub cols_left: u32,
}

impl BlockTile {
    /// The tile of block `(blockIdx.x, blockIdx.y)` = (column block, row block).
    #[inline(always)]
    pub fn of_block(bm: u32, bn: u32, m: u32, n: u32) -> Self {
        let row0 = thread::block_idx_y() * bm;
        let col0 = thread::block_idx_x() * bn;
        Self {
            row0,
            col0,
            rows_left: m - row0,
            cols_left: n - col0,
        }
    }

    /// The tile of block `(blockIdx.x, blockIdx.y)` renumbered in groups of `group` block
    /// rows (a block swizzle for L2 reuse): blocks are taken in launch order (`x` fastest),
    /// and each run of `group · gridDim.x` of them walks its `group` block rows column by
    /// column, so blocks resident at the same time share a few column panels of `b` and
    /// `group` row panels of `a`. A bijection on the `gridDim.x × gridDim.y` grid (the last
    /// group may have fewer rows). `group >= 1`.
    #[inline(always)]
    pub fn of_block_grouped(bm: u32, bn: u32, m: u32, n: u32, group: u32) -> Self {
        let (gx, gy) = (thread::grid_dim_x(), thread::grid_dim_y());
        let linear = thread::block_idx_y() * gx + thread::block_idx_x();
        let per_group = group * gx;
        let first_row = linear / per_group * group;
        let rows = (gy - first_row).min(group);
        let within = linear % per_group;
        let row0 = (first_row + within % rows) * bm;
        let col0 = within / rows * bn;
        Self {
            row0,
            col0,
            rows_left: m - row0,
            cols_left: n - col0,
        }
    }

    /// Whether all `bm × bn` outputs lie inside `out`.
    #[inline(always)]
    pub fn is_interior(&self, bm: u32, bn: u32) -> bool {
        self.rows_left >= bm && self.cols_left >= bn
    }
}
