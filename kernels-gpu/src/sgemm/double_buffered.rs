//! Rung 7, the top rung: rung 6's warp tiling with two shared stages and register prefetch
//! (double buffering), so global-memory latency hides behind the FMAs and each shared tile
//! costs one barrier instead of two.
//!
//! Per tile `p`: issue the global loads of tile `p + 1` into registers, run the `BK` steps
//! of FMAs on stage `p % 2`, store the registers into stage `(p + 1) % 2`, barrier. The
//! stage being written was last read in tile `p − 1`, before the previous barrier; the stage
//! being read was written before it. (The simulator checks exactly that.)
//!
//! Shared memory is `2 · BK · (BM + BN) · 4` bytes: 16 KiB at `BK = 8`, 32 KiB at 16, within
//! the 48 KiB every launch may use without opting in. The host autotunes among the configs
//! below (`host::autotune`).
//!
//! [`sgemm_double_buffered_padded`] is the same loop with a padded, bank-conflict-free `a`
//! tile (`BK · (BM + 4)` floats a stage), read-only (`ld.global.nc`) global loads and an
//! optional block swizzle; its 128 × 256 and 256 × 128 tiles run one 256-thread block per SM.

use super::global::is_aligned16;
use super::tile_io::{PaddedTransposedTile, VecTile};
use super::warp_tile::{Acc, WarpTile};
use super::{BlockTile, Geometry, cdiv};
use crate::shared::SharedSlice;
use crate::shared_array;
use crate::thread::{self, sync_threads};

/// The double-buffered warp-tiled product; see [`WarpTile`] for the parameters.
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super).
#[inline(always)]
pub unsafe fn sgemm_double_buffered<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const WM: usize,
    const WN: usize,
    const WMITER: usize,
    const WNITER: usize,
    const TM: usize,
    const TN: usize,
    const THREADS: usize,
>(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    // Two stages each: stage s starts at s * BK * BM (resp. s * BK * BN).
    let a_tile = shared_array!(f32; 2 * BK * BM); // transposed: a_tile[stage][c * BM + r]
    let b_tile = shared_array!(f32; 2 * BK * BN); // b_tile[stage][r * BN + c]
    let (a_stage, b_stage) = ((BK * BM) as u32, (BK * BN) as u32);
    let tile = BlockTile::of_block(BM as u32, BN as u32, m, n);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (
        k.is_multiple_of(4) && is_aligned16(a),
        n.is_multiple_of(4) && is_aligned16(b),
    );
    let origin = WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];

    // Prologue: tile 0 into stage 0.
    // SAFETY: the loads stay inside the operands (bounds-checked, or the fast path for
    // interior tiles only); stage 0 holds one tile of each.
    unsafe {
        let sa = VecTile::<BM, BK, THREADS>::load(a, k, tile.row0, 0, tile.rows_left, k, vec_a, t);
        let sb = VecTile::<BK, BN, THREADS>::load(b, n, 0, tile.col0, k, tile.cols_left, vec_b, t);
        VecTile::<BM, BK, THREADS>::store_transposed(a_tile, 0, &sa, t);
        VecTile::<BK, BN, THREADS>::store(b_tile, 0, &sb, t);
    }
    sync_threads();

    let tiles = cdiv(k, BK as u32);
    for phase in 0..tiles {
        let (stage, next) = (phase % 2, (phase + 1) % 2);
        // The next tile's global loads go first, so they are in flight during the FMAs. On
        // the last trip there is no next tile: `k_left = 0` makes the load all zeros without
        // touching memory, and the store fills a stage nobody reads. No branch on "is there a
        // next tile" means LLVM has no reason to duplicate the FMA block on both sides of one
        // (it did: twice the code, for nothing).
        let k1 = (phase + 1) * BK as u32; // < u32::MAX: k <= u32::MAX - 64 (host check)
        let k_left = k.saturating_sub(k1);
        let k1 = k1.min(k);
        // SAFETY: as in the prologue (nothing is read where k_left = 0).
        let (sa, sb) = unsafe {
            (
                VecTile::<BM, BK, THREADS>::load(
                    a,
                    k,
                    tile.row0,
                    k1,
                    tile.rows_left,
                    k_left,
                    vec_a,
                    t,
                ),
                VecTile::<BK, BN, THREADS>::load(
                    b,
                    n,
                    k1,
                    tile.col0,
                    k_left,
                    tile.cols_left,
                    vec_b,
                    t,
                ),
            )
        };
        let (_, a_frags) = a_tile.split_at(stage * a_stage + origin.0);
        let (_, b_frags) = b_tile.split_at(stage * b_stage + origin.1);
        // SAFETY: `stage` is complete (barrier at the end of the previous trip or after the
        // prologue); the slices start at the thread's origin in that stage.
        unsafe {
            WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::accumulate(
                &mut acc, a_frags, b_frags,
            );
        }
        // SAFETY: stage `next` was last read in the previous trip, before its barrier.
        unsafe {
            VecTile::<BM, BK, THREADS>::store_transposed(a_tile, next * a_stage, &sa, t);
            VecTile::<BK, BN, THREADS>::store(b_tile, next * b_stage, &sb, t);
        }
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe {
        WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::store(
            &acc, out, n, &tile, origin, fast,
        )
    };
}

/// [`sgemm_double_buffered`] tuned further, with the same loop and barriers:
///
/// * the transposed `a` tile's rows are `LDA` floats apart (`BM + 4`) and each warp stores
///   16 rows × 8 columns of it ([`PaddedTransposedTile`]), so its scalar shared stores are
///   free of bank conflicts (2-way at `BK = 8`, 4-way at 16 before);
/// * both operands' 16-byte global loads go through the read-only data path
///   (`ld.global.nc.v4`, `LDG.E.128.CONSTANT`): `a` and `b` are never written by the kernel;
/// * if `GROUP > 0`, blocks are renumbered in groups of `GROUP` block rows
///   ([`BlockTile::of_block_grouped`]) for L2 reuse.
///
/// # Safety
/// See the [module contract](super); `out` does not overlap `a` or `b`.
#[inline(always)]
pub unsafe fn sgemm_double_buffered_padded<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const WM: usize,
    const WN: usize,
    const WMITER: usize,
    const WNITER: usize,
    const TM: usize,
    const TN: usize,
    const THREADS: usize,
    const LDA: usize,
    const GROUP: u32,
>(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    m: u32,
    n: u32,
    k: u32,
) {
    let a_tile = shared_array!(f32; 2 * BK * LDA); // transposed: a_tile[stage][c * LDA + r]
    let b_tile = shared_array!(f32; 2 * BK * BN); // b_tile[stage][r * BN + c]
    let tile = if GROUP > 0 {
        BlockTile::of_block_grouped(BM as u32, BN as u32, m, n, GROUP)
    } else {
        BlockTile::of_block(BM as u32, BN as u32, m, n)
    };
    // SAFETY: the caller's contract; the arrays are the two stages of each tile.
    unsafe {
        sgemm_double_buffered_padded_in::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS, LDA>(
            a_tile, b_tile, &tile, a, b, out, n, k,
        )
    }
}

/// The body of [`sgemm_double_buffered_padded`] on shared tiles declared by the caller
/// (`a_tile`: at least `2 · BK · LDA` floats, `b_tile`: at least `2 · BK · BN`), for block
/// tile `tile`: the multistage rung's fallback for edge tiles and odd shapes, which shares
/// its arrays.
///
/// # Safety
/// As [`sgemm_double_buffered_padded`]; `tile` is this block's, the same in every thread;
/// nothing else uses the arrays while it runs, and every thread of the block calls it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_double_buffered_padded_in<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const WM: usize,
    const WN: usize,
    const WMITER: usize,
    const WNITER: usize,
    const TM: usize,
    const TN: usize,
    const THREADS: usize,
    const LDA: usize,
>(
    a_tile: SharedSlice<f32>,
    b_tile: SharedSlice<f32>,
    tile: &BlockTile,
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    n: u32,
    k: u32,
) {
    type ATile<const BM: usize, const BK: usize, const THREADS: usize, const LDA: usize> =
        PaddedTransposedTile<BM, BK, THREADS, LDA>;
    let (a_stage, b_stage) = ((BK * LDA) as u32, (BK * BN) as u32);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (
        k.is_multiple_of(4) && is_aligned16(a),
        n.is_multiple_of(4) && is_aligned16(b),
    );
    let origin = WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];

    // Prologue: tile 0 into stage 0.
    // SAFETY: as in `sgemm_double_buffered`; `a` and `b` are read-only during the kernel.
    unsafe {
        let sa =
            ATile::<BM, BK, THREADS, LDA>::load_nc(a, k, tile.row0, 0, tile.rows_left, k, vec_a, t);
        let sb =
            VecTile::<BK, BN, THREADS>::load_nc(b, n, 0, tile.col0, k, tile.cols_left, vec_b, t);
        ATile::<BM, BK, THREADS, LDA>::store_transposed(a_tile, 0, &sa, t);
        VecTile::<BK, BN, THREADS>::store(b_tile, 0, &sb, t);
    }
    sync_threads();

    let tiles = cdiv(k, BK as u32);
    for phase in 0..tiles {
        let (stage, next) = (phase % 2, (phase + 1) % 2);
        // As in `sgemm_double_buffered`: no branch on "is there a next tile".
        let k1 = (phase + 1) * BK as u32; // < u32::MAX: k <= u32::MAX - 64 (host check)
        let k_left = k.saturating_sub(k1);
        let k1 = k1.min(k);
        // SAFETY: as in the prologue (nothing is read where k_left = 0).
        let (sa, sb) = unsafe {
            (
                ATile::<BM, BK, THREADS, LDA>::load_nc(
                    a,
                    k,
                    tile.row0,
                    k1,
                    tile.rows_left,
                    k_left,
                    vec_a,
                    t,
                ),
                VecTile::<BK, BN, THREADS>::load_nc(
                    b,
                    n,
                    k1,
                    tile.col0,
                    k_left,
                    tile.cols_left,
                    vec_b,
                    t,
                ),
            )
        };
        let (_, a_frags) = a_tile.split_at(stage * a_stage + origin.0);
        let (_, b_frags) = b_tile.split_at(stage * b_stage + origin.1);
        // SAFETY: `stage` is complete; the slices start at the thread's origin in it, and
        // its `a` tile is `BK × LDA`.
        unsafe {
            WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::accumulate_ld::<LDA>(
                &mut acc, a_frags, b_frags,
            );
        }
        // SAFETY: stage `next` was last read in the previous trip, before its barrier.
        unsafe {
            ATile::<BM, BK, THREADS, LDA>::store_transposed(a_tile, next * a_stage, &sa, t);
            VecTile::<BK, BN, THREADS>::store(b_tile, next * b_stage, &sb, t);
        }
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe {
        WarpTile::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS>::store(
            &acc, out, n, tile, origin, fast,
        )
    };
}

/// 256 threads, 128×128 tiles 8 deep, 64×32 warp tiles in 1×2 steps of 8×4 (64 accumulators
/// per thread, 16 KiB shared): the default, and the simulator's choice.
pub const GEOMETRY_128X128X8_W64X32: Geometry =
    WarpTile::<128, 128, 8, 64, 32, 1, 2, 8, 4, 256>::geometry(
        "sgemm_double_buffered_128x128x8_w64x32",
        2,
    );

/// As the default, 16 deep: half the barriers, 32 KiB shared.
pub const GEOMETRY_128X128X16_W64X32: Geometry =
    WarpTile::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256>::geometry(
        "sgemm_double_buffered_128x128x16_w64x32",
        2,
    );

/// 256 threads, 128×128×8, 32×64 warp tiles in 2×2 steps of 4×4: the classic conflict-free
/// layout of hand-written SGEMMs (two 16-byte fragments of each operand 16 or 32 floats apart).
pub const GEOMETRY_128X128X8_W32X64: Geometry =
    WarpTile::<128, 128, 8, 32, 64, 2, 2, 4, 4, 256>::geometry(
        "sgemm_double_buffered_128x128x8_w32x64",
        2,
    );

/// 128 threads, 128×128×16, 64×64 warp tiles in 1×4 steps of 8×4: siboehm's kernel 10
/// configuration (128 accumulators per thread, 32 KiB shared).
pub const GEOMETRY_128X128X16_W64X64: Geometry =
    WarpTile::<128, 128, 16, 64, 64, 1, 4, 8, 4, 128>::geometry(
        "sgemm_double_buffered_128x128x16_w64x64",
        2,
    );

/// 128 threads, 64×128×16, 32×64 warp tiles in 1×2 steps of 8×4: twice the blocks of the
/// 128×128 tiles, for products with fewer output tiles than the GPU has room for.
pub const GEOMETRY_64X128X16_W32X64: Geometry =
    WarpTile::<64, 128, 16, 32, 64, 1, 2, 8, 4, 128>::geometry(
        "sgemm_double_buffered_64x128x16_w32x64",
        2,
    );

/// [`GEOMETRY_128X128X16_W64X32`] with the padded, conflict-free `a` tile and read-only
/// global loads ([`sgemm_double_buffered_padded`]); 32.5 KiB shared.
pub const GEOMETRY_PADDED_128X128X16_W64X32: Geometry =
    WarpTile::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256>::geometry_padded(
        "sgemm_double_buffered_padded_128x128x16_w64x32",
        2,
        132,
    );

/// 256 threads, 128×256×8, 64×64 warp tiles in 1×4 steps of 8×4 (8×16 = 128 accumulators
/// per thread, one block per SM by registers), padded, read-only loads; 24.25 KiB shared.
pub const GEOMETRY_PADDED_128X256X8_W64X64: Geometry =
    WarpTile::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256>::geometry_padded(
        "sgemm_double_buffered_padded_128x256x8_w64x64",
        2,
        132,
    );

/// 256 threads, 256×128×8, 64×64 warp tiles in 2×2 steps of 8×4 (16×8 accumulators per
/// thread), padded, read-only loads; 24.25 KiB shared.
pub const GEOMETRY_PADDED_256X128X8_W64X64: Geometry =
    WarpTile::<256, 128, 8, 64, 64, 2, 2, 8, 4, 256>::geometry_padded(
        "sgemm_double_buffered_padded_256x128x8_w64x64",
        2,
        260,
    );

/// [`GEOMETRY_PADDED_128X128X16_W64X32`] with blocks grouped 8 block rows at a time for L2
/// reuse.
pub const GEOMETRY_SWIZZLED_128X128X16_W64X32: Geometry =
    WarpTile::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256>::geometry_padded(
        "sgemm_double_buffered_swizzled_128x128x16_w64x32",
        2,
        132,
    );

/// [`GEOMETRY_PADDED_128X256X8_W64X64`] with blocks grouped 8 block rows at a time.
pub const GEOMETRY_SWIZZLED_128X256X8_W64X64: Geometry =
    WarpTile::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256>::geometry_padded(
        "sgemm_double_buffered_swizzled_128x256x8_w64x64",
        2,
        132,
    );

/// 256 threads, 128×128×16, 32×64 warp tiles in 2×2 steps of 4×4 (as
/// [`GEOMETRY_128X128X8_W32X64`]), padded, read-only loads; 32.5 KiB shared.
pub const GEOMETRY_PADDED_128X128X16_W32X64: Geometry =
    WarpTile::<128, 128, 16, 32, 64, 2, 2, 4, 4, 256>::geometry_padded(
        "sgemm_double_buffered_padded_128x128x16_w32x64",
        2,
        132,
    );

crate::entry_points! {
    sgemm_double_buffered_128x128x8_w64x32(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered::<128, 128, 8, 64, 32, 1, 2, 8, 4, 256>;
    sgemm_double_buffered_128x128x16_w64x32(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256>;
    sgemm_double_buffered_128x128x8_w32x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered::<128, 128, 8, 32, 64, 2, 2, 4, 4, 256>;
    sgemm_double_buffered_128x128x16_w64x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered::<128, 128, 16, 64, 64, 1, 4, 8, 4, 128>;
    sgemm_double_buffered_64x128x16_w32x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered::<64, 128, 16, 32, 64, 1, 2, 8, 4, 128>;
    sgemm_double_buffered_padded_128x128x16_w64x32(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 0>;
    sgemm_double_buffered_padded_128x256x8_w64x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256, 132, 0>;
    sgemm_double_buffered_padded_256x128x8_w64x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<256, 128, 8, 64, 64, 2, 2, 8, 4, 256, 260, 0>;
    sgemm_double_buffered_swizzled_128x128x16_w64x32(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 132, 8>;
    sgemm_double_buffered_swizzled_128x256x8_w64x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<128, 256, 8, 64, 64, 1, 4, 8, 4, 256, 132, 8>;
    sgemm_double_buffered_padded_128x128x16_w32x64(a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
        => sgemm_double_buffered_padded::<128, 128, 16, 32, 64, 2, 2, 4, 4, 256, 132, 0>;
}
