//! Rung 10: rung 8's padded warp-tiled loop with the `b` tiles copied global → shared by
//! `cp.async` ([`nvptx_device::pipeline`]) through a ring of [`b_stages`] shared stages
//! (`S`: three, four on the small tiles that load `a` into registers), so they never pass
//! through registers and `S − 1` tiles of `b` are in flight during the FMAs.
//!
//! On most tiles the `a` tiles still go through registers (read-only 16-byte loads, then
//! the padded, conflict-free transposed scalar stores of [`PaddedTransposedTile`]) in two
//! stages as in rung 8: stored transposed, a thread's 8 values of one `a` column are two
//! 16-byte shared loads, so the inner loop stays at 4 `LDS.128` per 64 FFMA. (Copied as they
//! are by 16-byte `cp.async`, the `a` tile would be row-major and its column fragments scalar
//! loads.) The tiles of [`copies_a`] copy each word of `a` by a 4-byte `cp.async` straight
//! into its transposed place instead, in a ring of [`a_stages`] (`S`) stages as `b`'s:
//! nothing waits on a load in registers.
//!
//! Per tile `p` (each thread; groups are per thread):
//!
//! 1. where the tile copies `a`: issue the copies of `a` tile `p + S − 1` into stage
//!    `(p + S − 1) % S` (if there is one), in the group of step 2;
//! 2. issue the copies of `b` tile `p + S − 1` into stage `(p + S − 1) % S` (if there is
//!    one) and commit them as one group;
//! 3. else, load `a` tile `p + 2` into registers (the last tile again on the last two
//!    trips: no branch, so LLVM does not duplicate the FMA block); tiles of more than
//!    [`TWO_AHEAD_MAX_OUTPUTS`] outputs load tile `p + 1` instead;
//! 4. the `BK` steps of FMAs on `a` stage `p % 2` (`p % S` where copied) and `b` stage
//!    `p % S`;
//! 5. where `a` is in registers, store those of `a` tile `p + 1` into `a` stage
//!    `(p + 1) % 2`: loaded a trip earlier, each load has two trips of FMAs to land in (one
//!    for the larger tiles);
//! 6. `cp.async.wait_group` for all but the newest [`groups_in_flight`] (`S − 2`) groups:
//!    `b` tile `p + 1` (and a copied `a` tile `p + 1`) has landed; barrier.
//!
//! Each copy's addresses are the thread's first copy's (computed once) plus constants and
//! one moving offset a tile (`WordCopies`, [`VecTile`]), and its zero fill a predicate:
//! on an H200's SASS (ptxas 13.0) the checked trip of 64 × 64 × 16 with 4-byte copies of
//! `b` went from 732 instructions (512 FFMA) to 652, the exact trip from 653 to 619.
//!
//! Every stage a trip fills was last read in trip `p − 1`, before its barrier. Shared
//! memory: `A · BK · LDA + S · BK · BN` floats (`A`: [`a_stages`]), 40.5 KiB at 128 × 128 × 16, under the 48 KiB
//! of static shared memory, two blocks per SM.
//!
//! The common case (the block tile inside the output, `BK` dividing `k`, `a` and `b`
//! 16-byte aligned with `k` and `n` multiples of 4) is compiled on its own, without checks.
//! Any other block (an edge tile, a partial last `k` tile, rows that are not 16-byte
//! aligned) runs the same loop with checks where the block tile has fewer than
//! [`CHECKED_LOOP_MAX_OUTPUTS`] outputs: `b` copied by 16-byte `cp.async` where its rows are
//! 16-byte aligned, by 8-byte ones where they are 8-byte aligned (an even `n`) and by
//! 4-byte ones per element where they are not, zero-filled past the matrix, and `a` through
//! the checked tile loads, in pairs where its rows are 8-byte aligned (see
//! `multistage_in`; the small tiles of [`copies_a`] copy `a` as in their common case,
//! zero-filled past the matrix). Larger tiles run rung 8's [`sgemm_double_buffered_padded_in`]
//! on the same arrays there. The zeros add exact zero products, so every shape gives the
//! values of the FMA chain in `k` order, as the rest of the ladder does; the plain entries'
//! checked loop leaves out the last k-tile's depths past `k` (in runs of 4), whose products
//! are those zeros.
//! Tiles of more than [`TWO_AHEAD_MAX_OUTPUTS`] outputs peel that checked loop: the trips
//! whose copies lie wholly inside the depth check only the block's edge (loop-invariant),
//! and the last two or three trips check the depth as well.

use super::epilogue::Epilogue;
use super::global::{is_aligned16, rows_aligned8, rows_aligned16};
use super::padded::sgemm_double_buffered_padded_in;
use super::split_k::{Alone, SerialTurn, TileTurn};
use super::stream_k::StreamK;
use super::tile_io::{MAX_VECS, PaddedTransposedTile, TileVectors, VecTile};
use super::unroll::unroll;
use super::warp_tile::{Acc, WarpTile, same_tile, warp_tiled};
use super::{BlockTile, Geometry};
use nvptx_device::intrinsics::opaque;
use nvptx_device::pipeline::{
    commit_group, cp_async_4_zfill, cp_async_8_zfill, cp_async_16, cp_async_16_zfill, wait_group,
};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// Shared stages of the `b` ring of most tiles.
pub const STAGES: usize = 3;

/// Shared stages of the `b` ring of a `bm × bn × bk` tile run by `threads` threads:
/// [`STAGES`], and one more for the tiles of at most [`TWO_AHEAD_MAX_OUTPUTS`] outputs that
/// load `a` into registers (not [`copies_a`]'s): they run few warps to a multiprocessor
/// where they are chosen (tall, narrow outputs under a short `k`), with trips too short to
/// hide two tiles' latency. `ncu` on an H200, 13750 × 216 × 64 on 64 × 64 × 8 (cuBLAS's
/// tile and grid): 26.2 µs against cuBLAS's 20.2, 86% of its long-scoreboard stall samples
/// on the first FFMA after the ring's wait. (Where the tile copies `a`, its `a` ring has as
/// many stages, and the two land together: a fourth `b` stage alone, with `a` copied one
/// tile ahead, changed nothing beyond noise.)
pub const fn b_stages(bm: usize, bn: usize, bk: usize, threads: usize) -> usize {
    if bm * bn <= TWO_AHEAD_MAX_OUTPUTS && !copies_a(bm, bn, bk, threads) {
        STAGES + 1
    } else {
        STAGES
    }
}

/// The `cp.async` groups left in flight at the end of each trip (and of the prologue) of a
/// `bm × bn × bk` tile run by `threads` threads: the newest `b_stages − 2`, so that `b`
/// tile `p + 1` (and, where the tile copies `a`, `a` tile `p + 1`, in the same group) has
/// landed for the next trip.
pub const fn groups_in_flight(bm: usize, bn: usize, bk: usize, threads: usize) -> u32 {
    b_stages(bm, bn, bk, threads) as u32 - 2
}

/// Block tiles of fewer outputs than this run their edge tiles and odd shapes on the
/// checked multistage loop (`multistage_in` with `EXACT = false`); larger ones on rung 8's
/// [`sgemm_double_buffered_padded_in`]. With both multistage loops in one entry, the
/// 128 × 128 tiles spill (ptxas for sm_90: 60 and 28 bytes, where rung 8's loop beside the
/// exact one spills nothing) and their aligned products ran about 5% slower on an H100
/// (autotuned 4096³: 3.01 ms, against 2.88 without it).
pub const CHECKED_LOOP_MAX_OUTPUTS: usize = 128 * 128;

/// Block tiles of at most this many outputs load each `a` tile two trips before its FMAs
/// (a second set of registers); larger ones one trip before. The small tiles run few
/// warps to a multiprocessor on thin outputs with a short `k`, where the loads' latency
/// was their longest stall on an H200 (`ncu`: 0.95 cycles of long-scoreboard stall per
/// issued instruction on 14243 × 142 × 62, against cuBLAS's 0.39); on the 128 × 128 tiles
/// the second set cost large squares about 1.5%.
pub const TWO_AHEAD_MAX_OUTPUTS: usize = 64 * 64;

/// Whether the checked loop of a tile of `outputs` outputs is peeled into the trips whose
/// copies lie inside the depth (checking only the block's edge, loop-invariant) and the last
/// ones (checking the depth too): tiles of more than [`TWO_AHEAD_MAX_OUTPUTS`] outputs. On
/// an H200's SASS, the checked trip of 64 × 128 × 16 was 1479 instructions (1024 FMAs)
/// against the exact trip's 1160, the peeled inside trip 1351; a long `k` gained 3–11%
/// (37 × 8634 × 13467: 0.439 → 0.395 ms). Smaller tiles keep one checked loop: the peel's
/// live invariants made their checked trips longer, and a short `k`, which runs mostly
/// those, 2–5% slower (436 × 62 × 7693 on 64 × 64 × 16).
pub const fn peels_checked_loop(outputs: usize) -> bool {
    outputs > TWO_AHEAD_MAX_OUTPUTS
}

/// At most this many words of each `a` tile per thread for [`copies_a`].
pub const COPIED_A_MAX_WORDS: usize = 16;

/// Whether a `bm × bn × bk` tile run by `threads` threads copies its `a` tiles by 4-byte
/// `cp.async`, aligned rows or not, rather than loading them into registers and storing
/// them transposed: tiles of at most [`TWO_AHEAD_MAX_OUTPUTS`] outputs and a depth of 16,
/// and tiles of a depth of 8 with 64 accumulators a thread (64 × 128 × 8), each with at
/// most [`COPIED_A_MAX_WORDS`] words a thread.
///
/// The tiles of a depth of 8 copy `a` since its copies land two tiles ahead ([`a_stages`])
/// and cost an instruction or two each: on an H200, same run, 2023 × 185 × 1271 (64 × 128 ×
/// 8) went from 0.810× cuBLAS to 0.850× and 1000³ from 0.828× to 0.841× (split in 3), a
/// build with this rule and the leaner copies of 2026-12-01 against one with neither (not
/// measured apart: `docs/notes/2026-12-01-copies.md`).
///
/// Measured on an H200: `ncu` on 6519 × 107 × 530 (64 × 64 × 16) found the register path
/// stalled 0.41 cycles an issued instruction on long scoreboards, cuBLAS's `align4` kernel
/// 0.10–0.14. Copied where `a`'s rows were not 16-byte aligned, products with a short `k`
/// gained up to 18% (436 × 62 × 7693: 0.026 → 0.022 ms, 13750 × 215 × 70: 0.031 → 0.028);
/// copied on aligned rows too, 13750 × 216 × 72 went from 0.694× cuBLAS to 0.830× and
/// 9000 × 300 × 80 from 0.666× to 0.804× (same run). The other tiles lost with it: the larger
/// ones 2–6% (their copies land one trip ahead, not two), 64 × 64 × 8 a block per
/// multiprocessor (96 → 121 registers), and 128 × 32 × 16 in two warps (32 words a thread)
/// 7% on 4291 × 9527 × 28, a long `k` where the register path's loads are hidden and the
/// copies' address arithmetic is not.
pub const fn copies_a(bm: usize, bn: usize, bk: usize, threads: usize) -> bool {
    let small = bm * bn <= TWO_AHEAD_MAX_OUTPUTS && bk >= 16;
    let shallow = bk == 8 && bm * bn / threads == 64;
    (small || shallow) && bm * bk / threads <= COPIED_A_MAX_WORDS
}

/// Shared stages of the transposed `a` tile of a `bm × bn × bk` tile run by `threads`
/// threads: three where the tile copies `a` ([`copies_a`]), whose copies of `a` tile `p + 2`
/// go in one group with those of `b` tile `p + 2` (both two trips ahead), and two where `a`
/// passes through registers (stored a trip ahead).
pub const fn a_stages(bm: usize, bn: usize, bk: usize, threads: usize) -> usize {
    if copies_a(bm, bn, bk, threads) {
        STAGES
    } else {
        2
    }
}

/// The 4-byte copies of a `ROWS × COLS` tile by `THREADS` threads in [`multistage_in`]:
/// copy `j` of thread `t` moves word `e = t + j · THREADS` (row `e / COLS`, column
/// `e % COLS`), so that a warp copies consecutive words of a row. Written as the thread's
/// [`origin`](Self::origin) plus a [`step`](Self::step) that is a constant of `j`, so that
/// each copy's addresses are a register and an immediate: the division of `t + j · THREADS`
/// is not folded by the compiler, which then kept a register a copy and added to each on
/// every trip.
struct WordCopies<const ROWS: usize, const COLS: usize, const THREADS: usize>;

impl<const ROWS: usize, const COLS: usize, const THREADS: usize> WordCopies<ROWS, COLS, THREADS> {
    /// Every thread copies the same number of words, and either a thread's words share its
    /// column (`COLS` divides `THREADS`) or its rows (`THREADS` divides `COLS`).
    const VALID: () = assert!(
        (ROWS * COLS).is_multiple_of(THREADS)
            && (THREADS.is_multiple_of(COLS) || COLS.is_multiple_of(THREADS))
    );
    /// Words a thread copies.
    const WORDS: usize = ROWS * COLS / THREADS;

    /// Row and column of thread `t`'s copy 0.
    #[inline(always)]
    fn origin(t: u32) -> (u32, u32) {
        let () = Self::VALID;
        if THREADS >= COLS {
            (t / COLS as u32, t % COLS as u32)
        } else {
            (0, t)
        }
    }

    /// Rows and columns from a thread's copy 0 to its copy `j`, the same in every thread.
    #[inline(always)]
    const fn step(j: usize) -> (u32, u32) {
        if THREADS >= COLS {
            ((j * (THREADS / COLS)) as u32, 0)
        } else {
            let per_row = COLS / THREADS;
            ((j / per_row) as u32, ((j % per_row) * THREADS) as u32)
        }
    }
}

/// The multistage warp-tiled product; see [`WarpTile`] for the parameters, `LDA` the padded
/// row length of the transposed `a` tile (as rung 8's) and `GROUP` the block swizzle of
/// rung 9 ([`BlockTile::ordered`]; 0: none).
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super); `out` does not overlap `a` or `b`.
#[warp_tiled]
#[inline(always)]
pub unsafe fn sgemm_multistage<const LDA: usize, const GROUP: u32, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    // SAFETY: the caller's contract; `a`'s rows are `k` floats apart.
    unsafe {
        same_tile!(multistage_ld::<LDA, GROUP, true, E>)(a, b, out, m, n, k, k, n, false, epilogue)
    }
}

/// [`sgemm_multistage`] on an `a` whose rows are `lda >= k` floats apart and a `b` whose
/// rows are `ldb >= n` apart: the product of the first `k` columns of `a` with the first `n`
/// columns of `b`'s `k` rows, into `out`'s rows of `n` (split-k runs it on column slices of
/// `a`; a strided entry ([`ld`]) on operands padded to aligned rows).
///
/// Interior tiles with unaligned output rows realign their stores
/// ([`WarpTile::store_as`]) where the tile size does ([`WarpTile::REALIGNS`]) or
/// `force_realign` (a constant at each entry point: the strided entries' `true`).
///
/// # Safety
/// As [`sgemm_multistage`], `a` pointing to `m` rows of `lda` floats (`m·lda` fits `u32`)
/// and `b` to `k` rows of `ldb` (`k·ldb` fits `u32`).
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_multistage_ld<const LDA: usize, const GROUP: u32, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32,
    force_realign: bool, epilogue: E,
) {
    // SAFETY: forwarded.
    unsafe {
        same_tile!(multistage_ld::<LDA, GROUP, false, E>)(
            a,
            b,
            out,
            m,
            n,
            k,
            lda,
            ldb,
            force_realign,
            epilogue,
        )
    }
}

/// [`sgemm_multistage_ld`], whose checked loop multiplies only the depths of the last k-tile
/// that lie inside `k` where `LAST` (`multistage_in`): the plain entries, which run short
/// depths whole. The split-k, strided, serial and stream entries keep one trip body: on
/// their long slices it saved little, and a 32 × 128 split-k product ran 8% slower with the
/// second body on an H200 (10×1223×10202).
///
/// # Safety
/// As [`sgemm_multistage_ld`].
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn multistage_ld<const LDA: usize, const GROUP: u32, const LAST: bool, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32,
    force_realign: bool, epilogue: E,
) {
    let realign = force_realign || <same_tile!(WarpTile)>::REALIGNS;
    // transposed: a_tile[stage][c * LDA + r]
    let a_tile = shared_array!(f32; a_stages(BM, BN, BK, THREADS) * BK * LDA);
    // b_tile[stage][r * BN + c]
    let b_tile = shared_array!(f32; b_stages(BM, BN, BK, THREADS) * BK * BN);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let exact = tile.is_interior(BM as u32, BN as u32)
        && k.is_multiple_of(BK as u32)
        && lda.is_multiple_of(4)
        && ldb.is_multiple_of(4)
        && is_aligned16(a)
        && is_aligned16(b);
    // SAFETY: the caller's contract; the arrays hold the stages the loop uses.
    unsafe {
        if exact {
            same_tile!(multistage_in::<LDA, true, false, E, Alone>)(
                a_tile, b_tile, &tile, a, b, out, n, k, lda, ldb, realign, epilogue, Alone,
            )
        } else if BM * BN < CHECKED_LOOP_MAX_OUTPUTS {
            same_tile!(multistage_in::<LDA, false, LAST, E, Alone>)(
                a_tile, b_tile, &tile, a, b, out, n, k, lda, ldb, realign, epilogue, Alone,
            )
        } else {
            same_tile!(sgemm_double_buffered_padded_in::<LDA, E>)(
                a_tile, b_tile, &tile, a, b, out, n, k, lda, ldb, epilogue,
            )
        }
    }
}

/// [`sgemm_multistage`] as one slice of a serial split-k product
/// ([`split_k`](super::split_k)'s module docs): the block's output tile and slice of `k`
/// come from its ticket ([`SerialTurn::take`]), the tile's partial sums pass from slice to
/// slice through `out`, and the last slice applies `epilogue` (which must not read the
/// output). Both the exact and the checked multistage loops serve it, whatever the tile.
///
/// Launch as [`sgemm_multistage`], with `cdiv(k, slice)` blocks in z.
///
/// # Safety
/// As [`sgemm_multistage`] and [`SerialTurn::take`]; `slice >= 1` is a multiple of `BK`
/// unless it is at least `k`.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_multistage_serial<const LDA: usize, const GROUP: u32, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    slice: u32, epilogue: E,
) {
    // transposed: a_tile[stage][c * LDA + r]
    let a_tile = shared_array!(f32; a_stages(BM, BN, BK, THREADS) * BK * LDA);
    // b_tile[stage][r * BN + c]
    let b_tile = shared_array!(f32; b_stages(BM, BN, BK, THREADS) * BK * BN);
    let ticket = shared_array!(u32; 1);
    // SAFETY: the caller's contract; every thread calls it first.
    let turn = unsafe { SerialTurn::take(ticket, flags, m, n, k, slice, BM as u32, BN as u32) };
    let tile = turn.tile;
    // SAFETY: k0 < k: a + k0 is inside a's first row, b + k0·n inside b.
    let (a, b) = unsafe {
        (
            a.add(turn.k0 as usize),
            b.add(turn.k0 as usize * n as usize),
        )
    };
    let depth = turn.depth;
    let exact = tile.is_interior(BM as u32, BN as u32)
        && depth.is_multiple_of(BK as u32)
        && k.is_multiple_of(4)
        && n.is_multiple_of(4)
        && is_aligned16(a)
        && is_aligned16(b);
    let epilogue = turn.epilogue(epilogue);
    // SAFETY: the caller's contract; `a` has rows of `k` floats and the slice's `depth`
    // columns from `k0`, `b` the slice's rows; the arrays hold the stages the loop uses.
    unsafe {
        if exact {
            same_tile!(multistage_in::<LDA, true, false, _, _>)(
                a_tile, b_tile, &tile, a, b, out, n, depth, k, n, false, epilogue, turn,
            )
        } else {
            same_tile!(multistage_in::<LDA, false, false, _, _>)(
                a_tile, b_tile, &tile, a, b, out, n, depth, k, n, false, epilogue, turn,
            )
        }
    }
}

/// [`sgemm_multistage`] as one worker of a stream-k product ([`stream_k`](super::stream_k)'s
/// module docs) over `workers` workers, on rows `row0 .. row0 + m` of a product of `m_all`
/// rows (`a` and `out` from that row on), every dimension whole tiles: the block's worker
/// number comes from its ticket ([`StreamK::take`]). It runs its data-parallel tiles, then
/// its stream pieces last first, those of these rows' tiles ([`StreamK::rows`]) alone, each
/// on the exact multistage loop alone (no checked loop beside it: fewer registers, none
/// spilled), the partial sums of a tile passing from piece to piece through `out`
/// ([`SerialTurn`]); a tile's last piece applies `epilogue` (which must not read the
/// output). The host pads the operands and the output to whole tiles.
///
/// Launch with `THREADS` threads per block on a 1-D grid of `workers` blocks.
///
/// # Safety
/// As [`sgemm_multistage`] and [`StreamK::take`], with `m`, `m_all` and `row0` multiples of
/// `BM`, `n` of `BN`, `k` of `BK`, `a` and `b` 16-byte aligned, `row0 + m <= m_all`,
/// `workers >= 1`, and `tiles · iters · workers` fitting `u64`; `flags` holds
/// [`StreamK::flag_words`] words for the rows' tiles, 0 at the start of the launch (every
/// launch leaves them so). (A piece off the exact loop's conditions traps.)
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_multistage_stream<const LDA: usize, const GROUP: u32, E: Epilogue>(
    a: *const f32, b: *const f32, out: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    row0: u32, m_all: u32, workers: u32, epilogue: E,
) {
    // transposed: a_tile[stage][c * LDA + r]
    let a_tile = shared_array!(f32; a_stages(BM, BN, BK, THREADS) * BK * LDA);
    // b_tile[stage][r * BN + c]
    let b_tile = shared_array!(f32; b_stages(BM, BN, BK, THREADS) * BK * BN);
    let ticket = shared_array!(u32; 1);
    // The loop's state, in shared memory rather than registers held across the product's
    // loop (which needs them all): the next data-parallel tile, and the end of the stream
    // pieces not yet run (low and high words).
    let state = shared_array!(u32; 3);
    // SAFETY: the caller's contract; every thread calls it first.
    let w = unsafe { StreamK::take(ticket, flags) };
    if thread::thread_idx_x() == 0 {
        let schedule = StreamK::new(m_all, n, k, BM as u32, BN as u32, BK as u32, workers);
        let end = schedule.start(w + 1);
        state.set(0, w);
        state.set(1, end as u32);
        state.set(2, (end >> 32) as u32);
    }
    // The worker's data-parallel tiles, whole (w, w + W, …), then its stream pieces, the
    // last first (see the module docs of stream_k): one loop, so that the loop's code is
    // pasted once. Each trip derives the schedule again from the parameters (`opaque`: not
    // hoisted out of the loop into registers).
    loop {
        sync_threads(); // the state as the last trip left it
        let schedule = StreamK::new(
            opaque(m_all),
            n,
            k,
            BM as u32,
            BN as u32,
            BK as u32,
            workers,
        );
        let w = ticket.get(0);
        let dp_next = state.get(0);
        let end = u64::from(state.get(1)) | (u64::from(state.get(2)) << 32);
        let (piece, dp_next, end) = if dp_next < schedule.dp_tiles {
            (schedule.whole(dp_next), dp_next + schedule.workers, end)
        } else if end > schedule.start(w) {
            let piece = schedule.piece(w, end);
            (piece, dp_next, piece.first)
        } else {
            break;
        };
        sync_threads(); // every thread has read the state
        if thread::thread_idx_x() == 0 {
            state.set(0, dp_next);
            state.set(1, end as u32);
            state.set(2, (end >> 32) as u32);
        }
        let tiles = schedule.rows(row0, m);
        if !tiles.contains(&piece.tile) {
            continue; // another launch's rows
        }
        // SAFETY: the piece's tile is one of these rows', each with its flag (the caller's
        // contract).
        let turn = unsafe { schedule.turn(&piece, flags, &tiles, row0, m, n, k) };
        let tile = turn.tile;
        // SAFETY: k0 < k: a + k0 is inside a's first row, b + k0·n inside b.
        let (a, b) = unsafe {
            (
                a.add(turn.k0 as usize),
                b.add(turn.k0 as usize * n as usize),
            )
        };
        let depth = turn.depth;
        // Whole tiles everywhere (the caller's contract): the exact loop's conditions.
        assert!(
            tile.is_interior(BM as u32, BN as u32)
                && depth.is_multiple_of(BK as u32)
                && is_aligned16(a)
                && is_aligned16(b)
        );
        let epilogue = turn.epilogue(epilogue);
        // SAFETY: the caller's contract; `a` has rows of `k` floats and the piece's `depth`
        // columns from `k0`, `b` the piece's rows of `n`, both inside, whole tiles, aligned
        // (asserted); the arrays hold the stages the loop uses, and the previous piece's
        // last barrier (its turn's) ended every read of them.
        unsafe {
            same_tile!(multistage_in::<LDA, true, false, _, _>)(
                a_tile, b_tile, &tile, a, b, out, n, depth, k, n, false, epilogue, turn,
            )
        }
    }
}

/// The loop of [`sgemm_multistage_ld`] on its shared arrays (`a_tile`: `2 · BK · LDA`
/// floats, `b_tile`: `STAGES · BK · BN`) for block tile `tile`, with `turn` around the
/// store of the tile ([`Alone`] but in serial split-k).
///
/// `EXACT` (the common case, compiled on its own so that it carries no checks): the block
/// tile is interior, `BK` divides `k`, and both operands' rows are 16-byte aligned, so
/// every copy of `b` is a 16-byte `cp.async` and every load of `a` a 16-byte load.
/// Otherwise each `b` copy is a 16-byte `cp.async` where `b`'s rows are aligned, two 8-byte
/// ones where they are 8-byte aligned and `n` is even, and a 4-byte one per element where
/// neither, zero-filled past the matrix (rows from `k` on, columns from `n` on); `a` tiles
/// are loaded by [`TileVectors::load_nc_pairs`], zero past the matrix too. The zeros add
/// exact zero products past `k`, so every shape runs the FMA chain in `k` order of the other
/// rungs, and edge tiles and odd shapes stay on the multistage loop. Where `LAST`, the last
/// trip is a body of its own that multiplies only the depths inside `k`, in runs of 4
/// ([`WarpTile::accumulate_ld_first`]): on a short `k` the last tile's zeros were most of
/// the FMAs (19 depths ran 32 with `BK` = 16). What it leaves out are exact zeros, so the
/// values are the same (a sum that underflowed to −0 keeps its sign).
///
/// `realign` as [`WarpTile::store_as`] takes it.
///
/// # Safety
/// As [`sgemm_multistage_ld`]; `tile` is this block's, the same in every thread; `EXACT`
/// only where the conditions above hold; every thread of the block calls it.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn multistage_in<
    const LDA: usize,
    const EXACT: bool,
    const LAST: bool,
    E: Epilogue,
    T: TileTurn,
>(
    a_tile: SharedSlice<f32>, b_tile: SharedSlice<f32>, tile: &BlockTile, a: *const f32,
    b: *const f32, out: *mut f32, n: u32, k: u32, lda: u32, ldb: u32, realign: bool, epilogue: E,
    turn: T,
) {
    type ATile<const BM: usize, const BK: usize, const THREADS: usize, const LDA: usize> =
        PaddedTransposedTile<BM, BK, THREADS, LDA>;
    type BTile<const BK: usize, const BN: usize, const THREADS: usize> = VecTile<BK, BN, THREADS>;
    let (a_stage, b_stage) = ((BK * LDA) as u32, (BK * BN) as u32);
    let t = thread::thread_idx_x();
    let warp = same_tile!(WarpTile);
    let origin = warp.thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];
    let (vec_a, vec_b) = (
        EXACT || rows_aligned16(lda, a),
        EXACT || rows_aligned16(ldb, b),
    );
    // Where b's rows are not 16-byte aligned: 8-byte copies if they are 8-byte aligned and
    // `n` is even (so that no pair straddles the last column).
    let pair_b = !vec_b && rows_aligned8(ldb, b) && n.is_multiple_of(2);
    // >= 1: the host launches no product with k = 0.
    let tiles = k.div_ceil(BK as u32);
    // Where the thread's copies of `b` start: the row and column of its first vector (16-
    // and 8-byte copies) or of its first word (4-byte copies) in a tile, whichever this block
    // runs (one origin, not both: fewer registers held across the loop; the 128 × 128
    // tiles' serial entry spilled with both), and its address in tile 0. Each copy adds a
    // constant row and column step to these, and each tile `p` moves them `p · BK` rows
    // down; a copy past the matrix reads nothing, so its address may lie outside `b`
    // (wrapping arithmetic, never dereferenced).
    let (b_r, b_c) = if vec_b || pair_b {
        BTile::<BK, BN, THREADS>::position(t, 0)
    } else {
        WordCopies::<BK, BN, THREADS>::origin(t)
    };
    // (Offsets of rows below `k` and columns below `ldb` fit `u32`: the contract.)
    let b_first = b.wrapping_add(b_r.wrapping_mul(ldb).wrapping_add(tile.col0 + b_c) as usize);
    // Columns left from the thread's column (0: none inside).
    let b_cols = tile.cols_left.saturating_sub(b_c);
    // Thread t's copies of b tile `p` into its stage. (Macros, pasted where they run: a
    // closure this size may be outlined into a `.func`, and as `#[inline(always)]` closures
    // these two compile to different PTX.)
    macro_rules! issue_b {
        ($p:expr, $inside:expr) => {{
            let p: u32 = $p;
            // `$inside`: the caller knows tile `p`'s rows are all inside `b` (< k).
            let inside: bool = $inside;
            let stage = (p % b_stages(BM, BN, BK, THREADS) as u32) * b_stage;
            // Rows of `b` from tile `p`'s first on (>= 1: p < tiles), and the offset of its
            // rows from tile 0's (fits `u32`: below k · ldb).
            let (rows_p, down) = (k - p * BK as u32, (p * BK as u32).wrapping_mul(ldb));
            // `ldb` through a register of this trip: each copy's row offset is then one wide
            // multiply-add of it by a constant onto the tile's address (`IMAD.WIDE`), where
            // LLVM kept the offsets of every copy as 64-bit values held across the loop and
            // added each in two instructions.
            let ldb_t = opaque(ldb) as usize;
            // The thread's first copy in tile `p`, and the rows left from its row (0: none).
            let (b_p, rows) = (
                b_first.wrapping_add(down as usize),
                rows_p.saturating_sub(b_r),
            );
            if vec_b || pair_b {
                // 16 bytes each, a warp on whole rows (rows 16-byte aligned); or 8 bytes, two
                // per vector of the 16-byte layout (rows 8-byte aligned: an even `ldb`).
                unroll!(BTile::<BK, BN, THREADS>::VECS, |j| {
                    let (r, c) = BTile::<BK, BN, THREADS>::position(t, j);
                    // The same column in every copy of the thread (`VecTile`).
                    let dr = r - b_r;
                    let src = b_p.wrapping_add(ldb_t * dr as usize);
                    let dst = stage + r * BN as u32 + c;
                    // Inside `b` where the vector's row is and its first column is: then all
                    // four are (n, col0 and c are multiples of 4), or the pair (an even `n`).
                    let full = (inside || dr < rows) && b_cols > 0;
                    // SAFETY: r < BK and c + 4 <= BN, so the stage's vector is inside and
                    // aligned. Where EXACT, tile `p` (p < tiles) is inside `b` (k = tiles · BK
                    // rows, the block's BN columns inside); otherwise a vector or pair is read
                    // only where inside `b`, aligned as its rows are (vec_b, pair_b).
                    unsafe {
                        if EXACT {
                            cp_async_16(b_tile, dst, src);
                        } else if vec_b {
                            cp_async_16_zfill(b_tile, dst, src, full);
                        } else {
                            unroll!(2, |h| {
                                let full = (inside || dr < rows) && b_cols > 2 * h as u32;
                                let src = src.wrapping_add(2 * h);
                                cp_async_8_zfill(b_tile, dst + 2 * h as u32, src, full);
                            });
                        }
                    }
                });
            } else {
                // 4 bytes each, a warp on consecutive words of a row.
                let first = stage + b_r * BN as u32 + b_c;
                unroll!(WordCopies::<BK, BN, THREADS>::WORDS, |j| {
                    let (dr, dc) = WordCopies::<BK, BN, THREADS>::step(j);
                    let full = (inside || dr < rows) && dc < b_cols;
                    let src = b_p
                        .wrapping_add(ldb_t * dr as usize)
                        .wrapping_add(dc as usize);
                    // SAFETY: the word is inside the stage (row b_r + dr < BK, column
                    // b_c + dc < BN); the source is read only if it is inside `b`.
                    unsafe { cp_async_4_zfill(b_tile, first + dr * BN as u32 + dc, src, full) };
                });
            }
            commit_group();
        }};
    }
    // Where the tile is one of [`copies_a`]'s, `a`'s tiles are copied by 4-byte
    // `cp.async`s straight into their transposed places (element `[r][c]` of tile `p` at
    // `c · LDA + r` of stage `p % 2`), zero past the matrix, as cuBLAS's `align4` kernels
    // copy theirs: no registers in between, so nothing waits on a load. A warp copies whole
    // runs of `BK` words of a row.
    let async_a = copies_a(BM, BN, BK, THREADS);
    // Where the thread's copies of `a` start (its first word's row and column in a tile, and
    // its address in tile 0), and the rows left from that row (0: none inside): as `b`'s.
    let (aw_r, aw_c) = WordCopies::<BM, BK, THREADS>::origin(t);
    let a_word = a.wrapping_add((tile.row0 + aw_r).wrapping_mul(lda).wrapping_add(aw_c) as usize);
    let aw_rows = tile.rows_left.saturating_sub(aw_r);
    // Thread t's copies of a tile `p < tiles` into its stage (not committed: the caller
    // closes the group).
    macro_rules! issue_a {
        ($p:expr, $inside:expr) => {{
            let p: u32 = $p;
            // `$inside`: the caller knows tile `p`'s columns are all inside `a` (< k).
            let inside: bool = $inside;
            let stage = (p % a_stages(BM, BN, BK, THREADS) as u32) * a_stage;
            let col0 = p * BK as u32;
            // Columns of `a` from the thread's first column in tile `p` on (0: none).
            let cols = k.saturating_sub(col0 + aw_c);
            let (a_p, first) = (
                a_word.wrapping_add(col0 as usize),
                stage + aw_c * LDA as u32 + aw_r,
            );
            // `lda` through a register of this trip, as `b`'s `ldb`.
            let lda_t = opaque(lda) as usize;
            unroll!(WordCopies::<BM, BK, THREADS>::WORDS, |j| {
                let (dr, dc) = WordCopies::<BM, BK, THREADS>::step(j);
                let full = dr < aw_rows && (inside || dc < cols);
                // Past the matrix the address is not read (a zero-filled copy reads nothing).
                let src = a_p
                    .wrapping_add(lda_t * dr as usize)
                    .wrapping_add(dc as usize);
                // SAFETY: row aw_r + dr < BM <= LDA and column aw_c + dc < BK, so the word is
                // inside the stage; the source is read only if it is inside `a` (a row below
                // the block's last, a column below k <= lda).
                unsafe { cp_async_4_zfill(a_tile, first + dc * LDA as u32 + dr, src, full) };
            });
        }};
    }
    // Thread t's vectors of a tile `p < tiles`.
    macro_rules! load_a {
        ($p:expr, $inside:expr) => {{
            let p: u32 = $p;
            // `$inside`: the caller knows tile `p`'s columns are all inside `a` (< k).
            let inside: bool = $inside;
            let col0 = p * BK as u32;
            let (rows, cols) = if EXACT {
                (BM as u32, BK as u32)
            } else if inside {
                (tile.rows_left, BK as u32)
            } else {
                (tile.rows_left, k - col0)
            };
            // SAFETY: p < tiles, so col0 < k <= lda; the load reads only inside `a` (rows_left
            // rows from row0, k - col0 columns from col0); where EXACT the whole tile is inside
            // and lda is a multiple of 4, `a` 16-byte aligned.
            unsafe {
                // (Never where the tile copies `a`: [`copies_a`].)
                ATile::<BM, BK, THREADS, LDA>::load_nc_pairs(
                    a, lda, tile.row0, col0, rows, cols, vec_a, t,
                )
            }
        }};
    }

    // The wait at the end of each trip (and of the prologue) for the ring's groups, `a`'s
    // and `b`'s: all but the newest [`groups_in_flight`] (1 or 2, from the `b` stages).
    macro_rules! wait_ring {
        () => {{
            if groups_in_flight(BM, BN, BK, THREADS) == 2 {
                wait_group::<2>();
            } else {
                wait_group::<1>();
            }
        }};
    }
    // Prologue: b tiles 0 to S − 2 in flight (an empty group for each that does not exist),
    // each with `a` tile `p` where the tile copies `a`, or a tiles 0 and 1 loaded (tile 0
    // again if there is no tile 1) and tile 0 stored into its stage; wait for tile 0.
    if async_a {
        issue_a!(0, false);
    }
    issue_b!(0, false);
    for p in 1..b_stages(BM, BN, BK, THREADS) as u32 - 1 {
        if p < tiles {
            if async_a {
                issue_a!(p, false);
            }
            issue_b!(p, false);
        } else {
            commit_group();
        }
    }
    let sa = if async_a {
        [[0.0; 4]; MAX_VECS]
    } else {
        load_a!(0, false)
    };
    // Tiles of few outputs load `a` two tiles ahead (`pending`: tile 1, then each trip's
    // tile p + 1); larger ones one tile ahead, loaded and stored in the same trip.
    let two_ahead = BM * BN <= TWO_AHEAD_MAX_OUTPUTS;
    let peels = peels_checked_loop(BM * BN);
    let mut pending = if two_ahead && !async_a {
        load_a!(1.min(tiles - 1), false)
    } else {
        sa
    };
    if !async_a {
        // SAFETY: a stage 0 holds one transposed tile; nobody reads it before the barrier.
        unsafe { ATile::<BM, BK, THREADS, LDA>::store_transposed(a_tile, 0, &sa, t) };
    }
    wait_ring!();
    sync_threads();

    // One trip of the loop over the k-tiles: `$inside` where every copy it issues (b tile
    // phase + 2, a tile phase + 1 or + 2) lies wholly inside the depth, so that its loads
    // check only the block's edge (a macro, pasted into each loop below with a constant).
    // The depths of the last k-tile that lie inside `k` (`BK` where `BK` divides it).
    let last_depths = k - (tiles - 1) * BK as u32;
    // A trip's FMAs: every depth of the stage (`whole`), or, in the last trip where `LAST`,
    // those inside `k` (`last`).
    macro_rules! accumulate {
        (whole, $a:expr, $b:expr) => {
            warp.accumulate_ld::<LDA>(&mut acc, $a, $b)
        };
        (last, $a:expr, $b:expr) => {
            warp.accumulate_ld_first::<LDA>(&mut acc, $a, $b, last_depths)
        };
    }
    macro_rules! trip {
        ($phase:expr, $inside:expr) => {
            trip!($phase, $inside, whole)
        };
        ($phase:expr, $inside:expr, $depths:ident) => {{
            let phase: u32 = $phase;
            // b tile phase + S - 1 (S stages) into the stage read in the previous trip
            // (before its barrier), and where the tile copies `a`, a tile phase + S − 1 in
            // the same group (as many `a` stages).
            let ahead_b = b_stages(BM, BN, BK, THREADS) as u32 - 1;
            if phase + ahead_b < tiles {
                if async_a {
                    issue_a!(phase + ahead_b, $inside);
                }
                issue_b!(phase + ahead_b, $inside);
            } else {
                commit_group(); // keeps one group per trip, so the wait below counts right
            }
            // a tile phase + 2 (the last one again near the end: no branch) in flight during
            // this trip and the next, tile phase + 1 being `pending`; or, one ahead, tile
            // phase + 1 during this trip's FMAs.
            let ahead = if two_ahead { 2 } else { 1 };
            let next = if async_a {
                pending
            } else {
                load_a!((phase + ahead).min(tiles - 1), $inside)
            };
            let a_stage_of_phase = phase % a_stages(BM, BN, BK, THREADS) as u32;
            let (_, a_frags) = a_tile.split_at(a_stage_of_phase * a_stage + origin.0);
            let (_, b_frags) = b_tile
                .split_at((phase % b_stages(BM, BN, BK, THREADS) as u32) * b_stage + origin.1);
            // SAFETY: both stages are complete (wait and barrier at the end of the previous
            // trip or the prologue); the slices start at the thread's origin; the a tile is
            // BK × LDA.
            unsafe {
                accumulate!($depths, a_frags, b_frags);
            }
            if !async_a {
                // SAFETY: a stage (phase + 1) % 2 was last read in the previous trip, before
                // its barrier. On the last trip it is filled again and never read.
                unsafe {
                    ATile::<BM, BK, THREADS, LDA>::store_transposed(
                        a_tile,
                        ((phase + 1) % 2) * a_stage,
                        if two_ahead { &pending } else { &next },
                        t,
                    )
                };
            }
            pending = next;
            wait_ring!();
            sync_threads();
        }};
    }
    if EXACT {
        for phase in 0..tiles {
            trip!(phase, true);
        }
    } else if peels {
        // The trips before `inside` copy only tiles `<= phase + 2` whose every row of `b` and
        // column of `a` is inside the depth (tile `q` is, for `q < k / BK`): their copies
        // check only the block's edge rows and columns, loop-invariant. The last trips
        // check the depth too.
        let inside = (k / BK as u32).saturating_sub(2).min(tiles);
        for phase in 0..inside {
            trip!(phase, true);
        }
        if LAST {
            for phase in inside..tiles - 1 {
                trip!(phase, false);
            }
            trip!(tiles - 1, false, last);
        } else {
            for phase in inside..tiles {
                trip!(phase, false);
            }
        }
    } else if LAST {
        for phase in 0..tiles - 1 {
            trip!(phase, false);
        }
        trip!(tiles - 1, false, last);
    } else {
        for phase in 0..tiles {
            trip!(phase, false);
        }
    }
    // What a last trip of its own loaded ahead is not read (nothing comes after it).
    let _ahead = pending;
    let fast = tile.is_interior(BM as u32, BN as u32) && n.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's; every
    // thread takes its turn.
    unsafe {
        turn.before_store();
        warp.store_as(&acc, out, n, tile, origin, fast, realign, &epilogue);
        turn.after_store();
    }
}

/// [`sgemm_multistage_ld`] under the kernel's own name, for the configuration table's
/// split-k entries and strided entries (`multistage::ld::sgemm_multistage`). A strided
/// entry runs it on operands padded to 16-byte aligned rows and a depth of whole `BK`
/// tiles, so that every interior block runs the exact loop, with the output stored in
/// place and realigned.
pub mod ld {
    pub use super::sgemm_multistage_ld as sgemm_multistage;
}

/// [`sgemm_multistage_serial`] under the kernel's own name, for the configuration table's
/// serial split-k entries (`multistage::serial::sgemm_multistage`).
pub mod serial {
    pub use super::sgemm_multistage_serial as sgemm_multistage;
}

/// [`sgemm_multistage_stream`] under the kernel's own name, for the configuration table's
/// stream-k entries (`multistage::stream::sgemm_multistage`).
pub mod stream {
    pub use super::sgemm_multistage_stream as sgemm_multistage;
}

/// The launch geometry of [`sgemm_multistage`] with the same parameters: [`STAGES`] stages
/// of the `b` tile and two of the padded `a` tile.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize, lda: usize, _group: usize,
) -> Geometry {
    Geometry::new(
        bm,
        bn,
        bk,
        threads,
        a_stages(bm, bn, bk, threads) * bk * lda + b_stages(bm, bn, bk, threads) * bk * bn,
    )
}
