//! The sliding average at any window, one pass, each output's cost independent of the
//! window: the window sum ending at position `p` is the inclusive scan of
//! `e[p] = a[p] - a[p - window]` (the second term only where `p >= window`), because the
//! differences telescope. Each block needs the sum of the window that ends just before its
//! tile, and finds it one of three ways, by the window's length (`sliding_scan_path`):
//!
//! - a window within a tile: in its own staged inputs (the halo path);
//! - a window spanning up to [`FAR_TILES`] whole tiles more: its staged halo plus those
//!   tiles' published aggregates (the far path);
//! - a longer window: a running sum carried across blocks by a chained scan ("decoupled
//!   look-back").
//!
//! Measurements behind the figures below, and the designs measured and left out:
//! docs/notes/kernels-sliding-scan.md.
//!
//! # One tile, one block
//!
//! A block takes its tile of [`TILE`] positions (by its block index where it waits for no
//! other block, else by an atomic ticket: see below) and copies both of the tile's input
//! streams, `a[p]` and `a[p - window]`, into shared memory with `cp.async`
//! (every copy issued before the first is waited for, so a block keeps its whole tile in
//! flight without holding it in registers). From shared memory each thread reads its
//! [`ITEMS`] consecutive positions twice: once for the block's scan, once when the sum before
//! the tile is known to produce its means, which it writes back over its own inputs;
//! the block then stores its outputs as aligned 16-byte words, coalesced. Only `a[p]` is
//! normally read from DRAM: `a[p - window]` was read `window` places (a few tiles) earlier and
//! comes from L2, or lies in the same tile. So the DRAM traffic is a copy's, whatever the
//! window. While its copies are in flight, each block asks L2 for the tile [`L2_AHEAD`]
//! tiles on, so that the block of that tile copies from L2.
//!
//! The staged streams are laid out with a 16-byte gap after every eight 16-byte words
//! (`slot`), so that eight threads reading four consecutive words each (one phase of a
//! 16-byte shared load) touch 32 distinct banks.
//!
//! Four blocks per SM ([`MIN_BLOCKS`], the register file's limit at 64 registers) are what
//! hide the latency of each block's chain of barriers and L2 round trips; a block's speed
//! follows that chain more than the instructions it issues. This is why the design keeps
//! one tile per block, and why designs that keep more per block (persistent grids, blocks
//! walking runs of tiles) or read a third stream through L2 measured slower (see the
//! note named above).
//!
//! # A window within a tile
//!
//! Where `window <= TILE`, the window ending just before the tile, `a[s - window .. s]`, is
//! the staged `a[p - window]` of the tile's first `window` positions: the block sums that
//! halo with the tile's own sums, and needs nothing from any other block. Such a launch
//! publishes nothing, never looks back and reads no state ([`reads_state`]); its blocks are
//! independent, each takes the tile of its block index (no ticket: its atomic and barrier
//! cost 1.4–2.0 points of copy bandwidth, H100, 2026-11-25), and the result is the same
//! every run. On an H100 (2^28 values, 2026-11-27) it runs at 91–95% of device-copy
//! bandwidth at windows 2 to 1,024.
//!
//! # A window within a few tiles
//!
//! Where the window spans `f = `[`far_tiles`]`(window)` whole tiles beyond a halo of
//! `window - f·TILE` positions, with `1 <= f <= FAR_TILES`, the window before tile `b` is
//! that halo (the staged `a[p - window]` of the tile's first positions, as above) then tiles
//! `b - f .. b`. Each block sums its own tile's `a[p]` in the scan's pass, beside the
//! differences, and publishes that aggregate before the warps' scans and anything it waits
//! for; one warp then waits for the `f` aggregates it needs, one per lane, and adds them in
//! a fixed order. No block's published value depends on another's, so nothing forms a
//! chain, and the result is the same every run.
//!
//! On an H100 (2^28 values, 2026-11-27) this path runs at about 75% of copy at windows
//! 4,097 to 100,000. What it pays beyond the halo path is the aggregates (publishing them:
//! a sum, a barrier and a fold; and waiting for them), not its streams, which cost about 2
//! points.
//!
//! # Order and progress
//!
//! Tile `b` belongs to a block that started after the blocks of tiles `0..b` had started
//! (the ticket). A block waits only for tiles before its own, whose blocks are already
//! running and publish what it waits for without waiting themselves: a tile's aggregate
//! (the path above) first of all, or (the chained scan, below) its aggregate as soon as it
//! has it, before its own look-back. So every wait ends.
//!
//! With a window past `FAR_TILES` whole tiles, a block looks back over its predecessors'
//! published aggregates and inclusive prefixes. One look-back step reads [`LOOK_BACK`]
//! predecessors, so the chain of inclusive prefixes advances up to that many tiles per L2
//! round trip (about 60% of copy at window 135,169; H100, 2026-11-26).
//!
//! Each published value is one word of a tile's 16-byte head, the f64 sum itself unless
//! the tally has non-finite counts ([`Descriptors`]): every word says whether it has been
//! written, so a reader needs no fence, and a look-back step reads 16 bytes per predecessor.
//!
//! # Accuracy
//!
//! The sums are f64: each `e[p]` is the f64 difference of two f32s (exact). Every addition
//! of the kernel adds the sums of two adjacent runs of positions (a thread's run, a warp's,
//! the tiles before a tile, and so on), and the window sum ending at `p` comes out of exactly
//! `p` such additions over the `p + 1` differences `e[0..=p]`. The exact sum over a run is the
//! difference of two window sums, so with `M = max |a|` each addition rounds by at most
//! `2⁻⁵³ · 2·window·M`, and the window sum is within `2⁻⁵² · window · M · p`. Multiplying by
//! the rounded `1/window` adds `2⁻⁵² · M` at most, and the final rounding to f32 half an ulp
//! of the mean, so the mean is within `2⁻²⁴ · |mean| + 2⁻⁵¹ · (p + 1) · M`; [`ERROR_LOG2`]
//! states `2⁻⁵⁰`, a factor of two to spare (an f32 ulp of `M` at `p = 2²⁶`; the host's
//! `sliding::within_bound` checks exactly this).
//!
//! Non-finite inputs cannot be subtracted back out of a running sum, so they are counted
//! instead: the scan carries, besides the f64 sum of the finite values, how many NaNs and
//! how many +∞ and -∞ the window holds (as wrapping integers, whose differences telescope
//! exactly). A window with a NaN, or with both infinities, averages to NaN; one with
//! infinities of one sign to that infinity; any other to the mean of its finite values — the
//! IEEE result of summing the window, except that no finite window overflows. A warp whose
//! inputs are all finite scans the sums alone (two words per shuffle instead of five).
//!
//! A window within a tile takes a different path to the same bound: its halo is a sum of
//! `window` values, each partial sum within `window · M`, and the tile adds at most
//! [`TILE`] more terms. Past the first tile `p >= TILE >= window`, so the additions number at
//! most `window + TILE <= 2p` (and few more than `p + 1` in the first tile, whose halo is
//! zero); the stated bound, with its factor of two to spare, covers them. A window within a
//! few tiles is summed the same way, from its halo and whole tiles' aggregates: `window - 1`
//! additions whose partial sums are within `window · M` (additions of zero, for tiles before
//! the first, are exact), then at most `TILE + 1` in the tile, and `window + TILE < 2(p + 1)`
//! because `window > TILE` and `p >= window - 1`.
//!
//! With a window past `FAR_TILES` whole tiles, the grouping of the f64 additions depends on
//! how far each look-back reaches, so two runs can differ in the last bits of an f64 sum
//! (almost never in the f32 output).

use crate::sgemm::parts::unroll::unroll;
use nvptx_device::atomic;
use nvptx_device::intrinsics::F32x4;
use nvptx_device::pipeline::{
    commit_group, cp_async_16, cp_async_16_zfill, prefetch_l2, wait_group,
};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use nvptx_device::warp::{self, FULL_MASK, WARP_SIZE};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// The scan's error bound: within `2⁻²⁴ · |mean| + 2^ERROR_LOG2 · (p + 1) · max |a|` of the
/// exact mean of the window ending at position `p` (see the [module](self)).
pub const ERROR_LOG2: i32 = -50;
/// Consecutive positions per thread.
pub const ITEMS: u32 = 16;
/// Positions per block.
pub const TILE: u32 = BLOCK * ITEMS;
/// [`ITEMS`] as an index.
const I: usize = ITEMS as usize;
/// A thread's 16-byte words of a staged stream.
const WORDS: u32 = ITEMS / 4;
const WARPS: u32 = BLOCK / WARP_SIZE;
/// 16-byte words of a staged stream: a tile's, and one more for `a[p - window]`, which
/// starts up to three floats past a 16-byte boundary.
const QUADS: u32 = TILE / 4 + 1;
/// Floats of shared memory per staged stream: [`QUADS`] words and their gaps ([`slot`]).
const STAGE_FLOATS: u32 = 4 * slot_quad(QUADS - 1) + 4;
/// Its shared arrays, each 16-byte aligned: the ticket, the warps' totals, their halos' and
/// their aggregates' (five words per tally), the tile's prefix and the two staged streams.
pub const STATIC_SHARED_BYTES: u32 =
    16 + 3 * (20 * WARPS).next_multiple_of(16) + 32 + 2 * 4 * STAGE_FLOATS;

/// Words of the scratch state before the tiles' heads: the ticket counter (a `u32` in word
/// 0), padded to 64 bytes.
pub const HEADER_WORDS: usize = 8;
/// Words per tile in the heads, which follow the header: the aggregate's head, then the
/// inclusive prefix's (see [`Descriptors`]).
pub const HEAD_WORDS: usize = 2;
/// Words per tile in the full records, which follow the heads: the aggregate's four, then
/// the inclusive prefix's.
pub const FULL_WORDS: usize = 8;
/// Predecessors a look-back step reads: `PER_LANE` per lane of a warp. More per step
/// means fewer steps, but every block near the front of the scan polls the heads of the
/// same few recent tiles, so each step's requests queue at the same few L2 lines: one per
/// lane measured fastest of 1, 2, 4 and 8 (H100, 2026-11-23;
/// docs/notes/kernels-sliding-scan.md).
pub const LOOK_BACK: u32 = WARP_SIZE * PER_LANE;
const PER_LANE: u32 = 1;

/// The most whole tiles a window summed from published aggregates spans (see
/// [`far_tiles`]): one per lane of the warp that reads them. A window reaching further back
/// takes the chained look-back.
pub const FAR_TILES: u32 = WARP_SIZE;

/// The longest window summed from a halo and published aggregates: a whole tile's halo,
/// then [`FAR_TILES`] tiles (135,168 positions).
pub const FAR_WINDOW: u32 = (FAR_TILES + 1) * TILE;

/// The whole tiles just before a tile that the window ending there covers, `f`, beyond its
/// halo of `window - f·TILE` (between 1 and [`TILE`]) positions: the window before the tile
/// starting at `s` is `a[s - window .. s - f·TILE]`, the tile's staged halo, then tiles
/// `s/TILE - f .. s/TILE`.
#[inline(always)]
pub const fn far_tiles(window: u32) -> u32 {
    (window - 1) / TILE
}

/// Tiles ahead of its own whose `a[p]` a block asks L2 for (`prefetch.global.L2`) while its
/// copies are in flight, so that the block of that tile, which starts about as many blocks
/// later, copies from L2 rather than DRAM: without it four blocks per SM keep too few bytes
/// in flight to cover DRAM's latency. The DRAM traffic stays a copy's (each line is fetched
/// once, and 256 tiles are 4 MiB of L2). 256 measured fastest of 128 to 1,024, about 6
/// points of copy bandwidth above no prefetch on the halo path and 4 on the far path
/// (H100, 2026-11-27; docs/notes/kernels-sliding-scan.md).
pub const L2_AHEAD: u32 = 256;

/// Blocks per SM the entry's launch bounds ask for (`.minnctapersm`), so at most 64
/// registers per thread (ptxas spills in the rare non-finite passes at this bound). Two,
/// three and five blocks per SM each measured slower (H100, 2026-11-23 and 2026-11-28;
/// docs/notes/kernels-sliding-scan.md).
pub const MIN_BLOCKS: u32 = 4;

/// Where 16-byte word `q` of a staged stream lies, in words: a gap after every eight.
#[inline(always)]
pub const fn slot_quad(q: u32) -> u32 {
    q + q / 8
}

/// Where float `i` of a staged stream lies (see [`slot_quad`]).
#[inline(always)]
const fn slot(i: u32) -> u32 {
    4 * slot_quad(i / 4) + i % 4
}

/// Whether a launch over windows of `window` reads its scratch state: only where the window
/// spans a whole tile beyond its halo (the aggregates and the chained paths take tickets and
/// publish); a launch that does not needs no zeroed state.
pub const fn reads_state(window: u32) -> bool {
    far_tiles(window) > 0
}

/// Tiles (and blocks) for `n` inputs: at least one.
pub const fn tiles(n: u32) -> u32 {
    let t = n.div_ceil(TILE);
    if t == 0 { 1 } else { t }
}

/// `u64` words of scratch state a launch over `n` inputs needs, all zero at launch.
pub const fn state_words(n: u32) -> usize {
    HEADER_WORDS + (HEAD_WORDS + FULL_WORDS) * tiles(n) as usize
}

/// What a tile has published: nothing yet.
pub const EMPTY: u32 = 0;
/// Its own aggregate.
pub const AGGREGATE: u32 = 1;
/// The inclusive prefix through it.
pub const INCLUSIVE: u32 = 2;
/// XORed into a sum's bits in a head, so that a zero head is one not yet written: the bits
/// of a NaN, which no sum of finite values is.
const HEAD_KEY: u64 = 0x7ff4_0000_0000_0001;
/// The head of a tally with non-finite counts, whose full record holds it: another NaN's
/// bits, keyed.
const MARKED: u64 = 0x7ff4_0000_0000_0002 ^ HEAD_KEY;
/// The "valid" bit of a full record's count words.
const VALID: u64 = 1 << 32;

/// One -∞ in [`Tally::inf`].
const NEG_INF: u64 = 1 << 32;

/// What the scan adds up: the f64 sum of the finite values, and counts of the non-finite
/// ones (wrapping, so that differences of counts telescope exactly).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Sum of the finite values.
    pub sum: f64,
    /// +∞ count in the low 32 bits, -∞ count in the high 32.
    pub inf: u64,
    /// NaN count.
    pub nan: u32,
}

impl Tally {
    /// Nothing.
    pub const ZERO: Self = Self {
        sum: 0.0,
        inf: 0,
        nan: 0,
    };

    /// One value.
    #[inline(always)]
    pub fn of(x: f32) -> Self {
        let mut t = Self::ZERO;
        if x.is_finite() {
            t.sum = x as f64;
        } else if x.is_nan() {
            t.nan = 1;
        } else if x > 0.0 {
            t.inf = 1;
        } else {
            t.inf = NEG_INF;
        }
        t
    }

    /// The average of a window whose tally this is, `inv_window` being `1 / window`.
    #[inline(always)]
    pub fn mean(self, inv_window: f64) -> f32 {
        let (pos, neg) = (self.inf as u32, (self.inf >> 32) as u32);
        if self.nan != 0 || (pos != 0 && neg != 0) {
            f32::NAN
        } else if pos != 0 {
            f32::INFINITY
        } else if neg != 0 {
            f32::NEG_INFINITY
        } else {
            (self.sum * inv_window) as f32
        }
    }

    /// The five 32-bit words, in a fixed order.
    #[inline(always)]
    fn words(self) -> [u32; 5] {
        let s = self.sum.to_bits();
        [
            s as u32,
            (s >> 32) as u32,
            self.inf as u32,
            (self.inf >> 32) as u32,
            self.nan,
        ]
    }

    #[inline(always)]
    fn from_words(w: [u32; 5]) -> Self {
        Self {
            sum: f64::from_bits(w[0] as u64 | (w[1] as u64) << 32),
            inf: w[2] as u64 | (w[3] as u64) << 32,
            nan: w[4],
        }
    }

    /// Each word through `f` (a shuffle, say), in order.
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let w = self.words();
        Self::from_words([f(w[0]), f(w[1]), f(w[2]), f(w[3]), f(w[4])])
    }

    /// Writes the five words to `s[at .. at + 5]`.
    ///
    /// # Safety
    /// `at + 5 <= s.len()` (the simulator checks it).
    #[inline(always)]
    unsafe fn store(self, s: SharedSlice<u32>, at: u32) {
        let w = self.words();
        for (i, &x) in w.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe { s.set_unchecked(at + i as u32, x) };
        }
    }

    /// Reads what [`store`](Self::store) wrote at `at`.
    ///
    /// # Safety
    /// As [`store`](Self::store).
    #[inline(always)]
    unsafe fn load(s: SharedSlice<u32>, at: u32) -> Self {
        // SAFETY: the caller's contract.
        Self::from_words(core::array::from_fn(|i| unsafe {
            s.get_unchecked(at + i as u32)
        }))
    }
}

impl core::ops::Add for Tally {
    type Output = Self;

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self {
            sum: self.sum + o.sum,
            inf: self.inf.wrapping_add(o.inf),
            nan: self.nan.wrapping_add(o.nan),
        }
    }
}

impl core::ops::Sub for Tally {
    type Output = Self;

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self {
            sum: self.sum - o.sum,
            inf: self.inf.wrapping_sub(o.inf),
            nan: self.nan.wrapping_sub(o.nan),
        }
    }
}

/// Where the tiles publish, in a launch's scratch state: per tile a 16-byte head, its
/// aggregate's word then its inclusive prefix's, each zero until written; and a full record
/// of four words per kind, used only by a tally with non-finite counts.
///
/// A head holds the sum's bits XOR `HEAD_KEY` when the tally's counts are zero (the
/// common case), else `MARKED`: its full record holds the sum (keyed, so non-zero) and the
/// three counts, each with a `VALID` bit, written before the head. Each word carries its
/// own "written" mark, so a reader needs no fence: it spins on a full record's words until
/// all are marked. The heads are contiguous, so that one warp's look-back step reads 16
/// bytes per predecessor, coalesced: a step's L2 traffic, and a spinning block's, stays small.
#[derive(Clone, Copy, Debug)]
pub struct Descriptors {
    heads: *mut u64,
    fulls: *mut u64,
}

impl Descriptors {
    /// The descriptors of a launch's `tiles` tiles, in its scratch state `state` (of
    /// [`state_words`] words).
    pub fn new(state: *mut u64, tiles: u32) -> Self {
        let heads = state.wrapping_add(HEADER_WORDS);
        Self {
            heads,
            fulls: heads.wrapping_add(HEAD_WORDS * tiles as usize),
        }
    }

    /// Tile `b`'s head word of kind `status` ([`AGGREGATE`] or [`INCLUSIVE`]).
    fn head(self, b: u32, status: u32) -> *mut u64 {
        let kind = (status == INCLUSIVE) as usize;
        self.heads.wrapping_add(HEAD_WORDS * b as usize + kind)
    }

    /// The first of the four words of tile `b`'s full record of kind `status`.
    fn full(self, b: u32, status: u32) -> *mut u64 {
        let kind = (status == INCLUSIVE) as usize;
        self.fulls.wrapping_add(FULL_WORDS * b as usize + 4 * kind)
    }
}

/// Publishes `t` as tile `b`'s aggregate ([`AGGREGATE`]) or inclusive prefix
/// ([`INCLUSIVE`]).
///
/// # Safety
/// `d` is a launch's descriptors, tile `b` one of its tiles, and only this thread publishes
/// that kind for it.
#[inline(always)]
pub unsafe fn publish(d: Descriptors, b: u32, status: u32, t: Tally) {
    // SAFETY: the caller's contract.
    unsafe { publish_if(true, d, b, status, t) }
}

/// [`publish`] where `write`, with predicated stores (no branch: see
/// [`atomic::store_pair_relaxed_if`]). The kernel publishes from one thread just before the
/// look-back and barriers.
///
/// # Safety
/// As [`publish`] where `write`.
#[inline(always)]
unsafe fn publish_if(write: bool, d: Descriptors, b: u32, status: u32, t: Tally) {
    let plain = t.inf == 0 && t.nan == 0;
    let full = d.full(b, status);
    let head = d.head(b, status);
    let keyed = keyed(t.sum);
    let counts = [
        t.inf as u32 as u64 | VALID,
        t.inf >> 32 | VALID,
        t.nan as u64 | VALID,
    ];
    // SAFETY: the full record (16-byte aligned) and the head are tile b's, this kind's.
    unsafe {
        let full_too = write && !plain;
        atomic::store_pair_relaxed_if(full_too, full, [keyed, counts[0]]);
        atomic::store_pair_relaxed_if(full_too, full.wrapping_add(2), [counts[1], counts[2]]);
        let word = if plain { keyed } else { MARKED };
        atomic::store_relaxed_u64_if(write, head, word);
    }
}

/// A sum as published: its bits XOR [`HEAD_KEY`], never zero for a sum of finite values.
#[inline(always)]
fn keyed(sum: f64) -> u64 {
    sum.to_bits() ^ HEAD_KEY
}

/// The sum a [`keyed`] word holds.
#[inline(always)]
fn unkeyed(word: u64) -> f64 {
    f64::from_bits(word ^ HEAD_KEY)
}

/// Tile `b`'s head: its status, and the word of the most advanced kind published.
///
/// # Safety
/// As [`publish`].
#[inline(always)]
unsafe fn read_head(d: Descriptors, b: u32) -> (u32, u64) {
    // SAFETY: tile b's head, 16-byte aligned.
    let [aggregate, inclusive] = unsafe { atomic::load_pair_relaxed(d.head(b, AGGREGATE)) };
    if inclusive != 0 {
        (INCLUSIVE, inclusive)
    } else if aggregate != 0 {
        (AGGREGATE, aggregate)
    } else {
        (EMPTY, 0)
    }
}

/// The tally behind tile `b`'s non-zero head `word` of kind `status`: the keyed sum, or
/// where [`MARKED`] the full record, re-read until all of it is written.
///
/// # Safety
/// As [`publish`]; `word` was read from that head.
#[inline(always)]
unsafe fn head_value(d: Descriptors, b: u32, status: u32, word: u64) -> Tally {
    if word != MARKED {
        return Tally {
            sum: unkeyed(word),
            ..Tally::ZERO
        };
    }
    let full = d.full(b, status);
    loop {
        // SAFETY: tile b's full record of this kind, 16-byte aligned.
        let [[sum, pos], [neg, nan]] = unsafe {
            [
                atomic::load_pair_relaxed(full),
                atomic::load_pair_relaxed(full.wrapping_add(2)),
            ]
        };
        if sum != 0 && pos & neg & nan & VALID != 0 {
            return Tally {
                sum: unkeyed(sum),
                inf: pos as u32 as u64 | (neg as u32 as u64) << 32,
                nan: nan as u32,
            };
        }
    }
}

/// The sum of every tile before tile `b`, by one full warp: lane `l` reads predecessors
/// `b - 1 - PER_LANE·l - j` (`j < PER_LANE`), and the warp adds the published values back to
/// the nearest inclusive prefix, [`LOOK_BACK`] tiles per step, re-reading while any of those
/// has published nothing yet.
///
/// # Safety
/// All 32 lanes of one warp call it together; `d` is the launch's descriptors and tiles
/// `0..b` belong to blocks that have started (the ticket order).
#[inline(always)]
pub unsafe fn look_back(d: Descriptors, b: u32) -> Tally {
    let lane = warp::lane_id();
    // Tile b - 1 first, every lane polling the same word (one request per warp): the wide
    // reads below then rarely find a predecessor that has published nothing (tiles publish
    // their aggregates about in ticket order), so a waiting block adds one request per poll
    // to the L2 lines every block near it polls, not LOOK_BACK.
    // SAFETY: tile b - 1 is before b.
    while b > 0 && unsafe { read_head(d, b - 1) }.0 == EMPTY {}
    let mut excl = Tally::ZERO;
    let mut end = b;
    while end > 0 {
        let mut status = [EMPTY; PER_LANE as usize];
        let mut word = [0u64; PER_LANE as usize];
        let tile = |j: usize| end.wrapping_sub(1 + PER_LANE * lane + j as u32);
        unroll!(PER_LANE as usize, |j| {
            // Tiles before the first count as an inclusive prefix of zero.
            (status[j], word[j]) = if PER_LANE * lane + (j as u32) < end {
                // SAFETY: that tile is before b.
                unsafe { read_head(d, tile(j)) }
            } else {
                (INCLUSIVE, keyed(0.0))
            };
        });
        // This lane's nearest inclusive prefix (PER_LANE: none), and whether a tile it
        // needs has published nothing.
        let mut first = PER_LANE;
        let mut pending_before = [false; PER_LANE as usize + 1];
        unroll!(PER_LANE as usize, |j| {
            if first == PER_LANE && status[j] == INCLUSIVE {
                first = j as u32;
            }
            pending_before[j + 1] = pending_before[j] || status[j] == EMPTY;
        });
        // SAFETY: the whole warp is here (the loop's conditions are warp-uniform).
        let with_inclusive = unsafe { warp::ballot(FULL_MASK, first < PER_LANE) };
        let nearest = with_inclusive.trailing_zeros();
        let upto = if lane == nearest { first + 1 } else { PER_LANE };
        let mut pending = false;
        unroll!(PER_LANE as usize + 1, |j| {
            if j as u32 == upto {
                pending = pending_before[j];
            }
        });
        // SAFETY: as above.
        if unsafe { warp::ballot(FULL_MASK, lane <= nearest && pending) } != 0 {
            continue;
        }
        let mut mine = Tally::ZERO;
        if lane <= nearest {
            unroll!(PER_LANE as usize, |j| {
                if (j as u32) < upto {
                    // SAFETY: a head this lane read, non-zero.
                    mine = unsafe { head_value(d, tile(j), status[j], word[j]) } + mine;
                }
            });
        }
        // SAFETY: as above.
        let step = unsafe {
            let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
            warp_sum(mine, sums_only)
        };
        excl = step + excl;
        if nearest < WARP_SIZE {
            break;
        }
        end -= LOOK_BACK;
    }
    excl
}

/// The sum of the aggregates of the `far` (at most [`FAR_TILES`]) tiles just before tile `b`
/// (those before the first tile count as zero), by one full warp: lane `l` waits for tile
/// `b - far + l`'s aggregate. Those tiles' blocks publish their aggregates without waiting
/// on anyone, so however long a block waits, nothing waits on it in turn.
///
/// # Safety
/// All 32 lanes of one warp call it together; `d` is the launch's descriptors, tiles
/// `0..b` belong to blocks that have started (the ticket order) and publish their
/// aggregates.
#[inline(always)]
unsafe fn far_aggregates(d: Descriptors, b: u32, far: u32) -> Tally {
    let lane = warp::lane_id();
    let wanted = lane < far && b + lane >= far;
    let tile = (b + lane).wrapping_sub(far);
    let (mut status, mut word) = (EMPTY, 0);
    loop {
        if wanted {
            // SAFETY: a tile before b.
            (status, word) = unsafe { read_head(d, tile) };
        }
        // SAFETY: the whole warp is here (the loop's condition is warp-uniform).
        if unsafe { warp::ballot(FULL_MASK, wanted && status == EMPTY) } == 0 {
            break;
        }
    }
    let mine = if wanted {
        // SAFETY: a head this lane read, non-zero.
        unsafe { head_value(d, tile, status, word) }
    } else {
        Tally::ZERO
    };
    // SAFETY: as above.
    unsafe {
        let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
        warp_sum(mine, sums_only)
    }
}

/// The sum over the warp's lanes, in every lane (butterfly, so every lane adds in the
/// same order); only the sums move where `sums_only` (see [`warp_scan`]).
///
/// # Safety
/// All 32 lanes call it together, with the same `sums_only`.
#[inline(always)]
unsafe fn warp_sum(mut t: Tally, sums_only: bool) -> Tally {
    if sums_only {
        // The sums alone, apart: the counts' adds and selects in the general loop cost as
        // many instructions as the shuffles.
        let mut sum = t.sum;
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            // SAFETY: the caller's contract.
            sum += map_sum_words(sum, |w| unsafe { warp::shuffle_xor(FULL_MASK, w, offset) }).sum;
            offset /= 2;
        }
        return Tally { sum, ..Tally::ZERO };
    }
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // SAFETY: the caller's contract.
        let other = t.map_words(|w| unsafe { warp::shuffle_xor(FULL_MASK, w, offset) });
        // Lower lanes' tiles first: the same grouping in the pair's two lanes.
        t = if warp::lane_id() & offset == 0 {
            t + other
        } else {
            other + t
        };
        offset /= 2;
    }
    t
}

/// `t`'s words through `f` (a shuffle, say), or only its sum's where `sums_only` (the
/// counts then zero).
#[inline(always)]
fn map_moved(t: Tally, sums_only: bool, f: impl FnMut(u32) -> u32) -> Tally {
    if sums_only {
        map_sum_words(t.sum, f)
    } else {
        t.map_words(f)
    }
}

/// Each word of the sum's bits through `f` (a shuffle, say); the counts are left at zero.
#[inline(always)]
fn map_sum_words(sum: f64, mut f: impl FnMut(u32) -> u32) -> Tally {
    let s = sum.to_bits();
    let (lo, hi) = (f(s as u32), f((s >> 32) as u32));
    Tally {
        sum: f64::from_bits(lo as u64 | (hi as u64) << 32),
        ..Tally::ZERO
    }
}

/// `t` from the lane `d` below (zero counts and all if `sums_only`, see [`warp_scan`]).
///
/// # Safety
/// All 32 lanes call it together.
#[inline(always)]
unsafe fn shuffle_up(t: Tally, d: u32, sums_only: bool) -> Tally {
    // SAFETY: the caller's contract.
    map_moved(t, sums_only, |w| unsafe {
        warp::shuffle_up(FULL_MASK, w, d)
    })
}

/// The inclusive scan of `t` over the first `lanes` lanes of the warp (a power of two; the
/// others get sums of runs of `lanes` lanes), Hillis–Steele by shuffles. Where `sums_only`,
/// every lane's counts are zero and only the sum's two words move.
///
/// # Safety
/// All 32 lanes call it together, with the same `sums_only` and `lanes`.
#[inline(always)]
unsafe fn warp_scan(t: Tally, sums_only: bool, lanes: u32) -> Tally {
    let lane = warp::lane_id();
    if sums_only {
        // The sums alone, as in `warp_sum`.
        let mut sum = t.sum;
        let mut d = 1;
        while d < lanes {
            // SAFETY: the caller's contract.
            let below = map_sum_words(sum, |w| unsafe { warp::shuffle_up(FULL_MASK, w, d) });
            if lane >= d {
                sum += below.sum;
            }
            d *= 2;
        }
        return Tally { sum, ..Tally::ZERO };
    }
    let mut inclusive = t;
    let mut d = 1;
    while d < lanes {
        // SAFETY: the caller's contract.
        let below = unsafe { shuffle_up(inclusive, d, false) };
        if lane >= d {
            inclusive = below + inclusive;
        }
        d *= 2;
    }
    inclusive
}

/// From the tallies of the first `count` (at most [`WARPS`]) warps in `per_warp`, five words
/// each ([`Tally::store`]): the sum of those before warp `upto`, and the sum of all `count`, in
/// every lane. Lane `j < count` reads warp `j`'s tally and the lanes scan them, so a warp
/// spends a few shuffles, not a load and an addition per warp in every thread.
///
/// # Safety
/// All 32 lanes of a warp call it together, with the same `count` and `upto`;
/// `per_warp` holds `5 · count` words written before a barrier.
#[inline(always)]
unsafe fn fold_warps(per_warp: SharedSlice<u32>, count: u32, upto: u32) -> (Tally, Tally) {
    let lane = warp::lane_id();
    let mine = if lane < count {
        // SAFETY: the caller's contract.
        unsafe { Tally::load(per_warp, 5 * lane) }
    } else {
        Tally::ZERO
    };
    // SAFETY: the caller's contract (every lane, uniform arguments).
    unsafe {
        let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
        let inclusive = warp_scan(mine, sums_only, WARPS);
        let from = |src: u32| {
            map_moved(inclusive, sums_only, |w| {
                warp::shuffle_idx(FULL_MASK, w, src)
            })
        };
        let (before, all) = (from(upto.wrapping_sub(1)), from(count.wrapping_sub(1)));
        (
            if upto == 0 { Tally::ZERO } else { before },
            if count == 0 { Tally::ZERO } else { all },
        )
    }
}

/// Copies 16-byte word `q` of a stream starting at `a[g0]` (`g0` a multiple of 4, perhaps
/// negative) into its [`slot`] of `stage`: the floats at indices `0..n` are copied, the
/// others zero-filled.
///
/// # Safety
/// `a` holds `n` floats and is 16-byte aligned; `q < QUADS`; nobody reads that slot before
/// the copy has been waited for and a barrier passed.
#[inline(always)]
unsafe fn stage_quad(stage: SharedSlice<f32>, a: *const f32, n: u32, g0: i64, q: u32) {
    let g = g0 + 4 * q as i64;
    let floats = (n as i64 - g).clamp(0, 4) as u32;
    let floats = if g < 0 { 0 } else { floats };
    let slot = 4 * slot_quad(q);
    if floats % 4 == 0 {
        let full = floats == 4;
        // Nothing is read from `src` when the word is outside `a`.
        let src = if full { a.wrapping_add(g as usize) } else { a };
        // SAFETY: where `full`, 4 floats from `src` lie in `a`, 16-byte aligned; the slot is
        // in `stage`, aligned.
        unsafe { cp_async_16_zfill(stage, slot, src, full) };
    } else {
        // The word where `a` ends, by plain loads: compute-sanitizer's memcheck (CUDA 13)
        // reports a `cp.async` of fewer than 16 source bytes as reading all 16.
        let w = core::array::from_fn(|e| {
            // SAFETY: a[g + e] for e < floats lies in `a` (g >= 0, g + floats <= n).
            (e < floats as usize).then(|| unsafe { *a.add(g as usize + e) })
        });
        // SAFETY: the slot is in `stage`, 16-byte aligned, read only after the barrier.
        unsafe { stage.set4_unchecked(slot, w.map(|x| x.unwrap_or(0.0))) };
    }
}

/// Stages the two streams of a tile at an edge of `a` (the first tiles, whose `a[p - window]`
/// starts before `a`, or the last): word by word, zero-filled past the edges.
///
/// # Safety
/// `a` holds `n` floats, 16-byte aligned; nobody reads the stages before the copies are
/// waited for and a barrier passed.
#[inline(always)]
unsafe fn stage_edge_tile<const S: usize>(
    new: SharedSlice<f32>, old: SharedSlice<f32>, a: *const f32, n: u32, s: u32, old0: i64,
) {
    let mut q = thread_idx_x();
    while q < QUADS {
        // SAFETY: `a` holds n floats, 16-byte aligned; q < QUADS; the caller's contract.
        unsafe {
            if q < TILE / 4 {
                stage_quad(new, a, n, s as i64, q);
            }
            if q < TILE / 4 || S != 0 {
                stage_quad(old, a, n, old0, q);
            }
        }
        q += BLOCK;
    }
}

/// Visits this thread's staged inputs one 16-byte word at a time: `f(q, xn, xo)` gets
/// `a[p]` and `a[p - window]` for its positions `4q .. 4q + 4` (of [`ITEMS`]), the second
/// stream `S` floats past the start of its words. One word of each stream is held at a time
/// (and the next word of `a[p - window]`), so that the thread's run never sits in registers.
///
/// # Safety
/// Both stages hold the tile (copies waited for, barrier passed); `f` writes at most this
/// thread's own words of `new`, the one it was given.
#[inline(always)]
unsafe fn for_each_word<const S: usize>(
    new: SharedSlice<f32>, old: SharedSlice<f32>, t: u32,
    mut f: impl FnMut(u32, [f32; 4], [f32; 4]),
) {
    // Every visit reads its words afresh: without this, LLVM reuses the first visit's
    // loads (and conversions) in the rare non-finite visit after it, and keeps all of them
    // live across the common path, which then spills.
    reload_fence();
    let word = |s: SharedSlice<f32>, q: u32| {
        // SAFETY: word WORDS·t + q <= TILE / 4 < QUADS lies in the stage, 16-byte aligned.
        unsafe { s.get4_unchecked(4 * slot_quad(WORDS * t + q)) }
    };
    let mut low = word(old, 0);
    unroll!(I / 4, |q| {
        let q = q as u32;
        let xn = word(new, q);
        let xo = if S == 0 {
            low
        } else {
            let high = word(old, q + 1);
            let w = [
                low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3],
            ];
            low = high;
            [w[S], w[S + 1], w[S + 2], w[S + 3]]
        };
        f(q, xn, xo);
        if S == 0 && q + 1 < ITEMS / 4 {
            low = word(old, q + 1);
        }
    });
}

/// `out[i] = mean(a[i .. i + window])` for every `i < n - window + 1`: the mean ending at
/// position `p = i + window - 1`. See the [module](self).
///
/// Launch [`tiles`]`(n)` blocks of [`BLOCK`] threads, with `state` holding
/// [`state_words`]`(n)` words, zeroed where [`reads_state`]`(window)` (else never read).
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats and is 16-byte aligned, `out` to
/// `n - window + 1` floats and is 16-byte aligned, `state` as above and used by this launch
/// alone.
#[inline(always)]
pub unsafe fn sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) {
    // Tiles start at multiples of 4, so `a[p - window]` is `(-window) mod 4` places past a
    // 16-byte boundary in every thread: one body per shift, its shared reads' shuffles and
    // its output's alignment known at compile time.
    // The shared arrays, declared once for the four bodies.
    let shared = Shared {
        ticket: shared_array!(u32; 1),
        warp_totals: shared_array!(u32; WARPS * 5),
        warp_halos: shared_array!(u32; WARPS * 5),
        warp_aggregates: shared_array!(u32; WARPS * 5),
        prefix: shared_array!(u32; 5),
        new: shared_array!(f32; STAGE_FLOATS),
        old: shared_array!(f32; STAGE_FLOATS),
    };
    // SAFETY: the caller's contract.
    unsafe {
        match window % 4 {
            0 => sliding_scan_path::<0>(a, n, window, out, state, shared),
            1 => sliding_scan_path::<3>(a, n, window, out, state, shared),
            2 => sliding_scan_path::<2>(a, n, window, out, state, shared),
            _ => sliding_scan_path::<1>(a, n, window, out, state, shared),
        }
    }
}

/// How the window before a tile is summed: from the tile's staged halo alone (a window
/// within a tile); from the halo and the published aggregates of at most [`FAR_TILES`]
/// whole tiles; or by the chained look-back.
const HALO: u8 = 0;
/// See [`HALO`].
const FAR: u8 = 1;
/// See [`HALO`].
const CHAINED: u8 = 2;

/// [`sliding_scan_shifted`] with the path for `window`, each its own body: a path's
/// registers are not held through another's code, where LLVM and ptxas would keep them
/// live (with the far path's sums in the halo path's loops, ptxas spilled 5 KB).
///
/// # Safety
/// As [`sliding_scan_shifted`].
#[inline(always)]
unsafe fn sliding_scan_path<const S: usize>(
    a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64, shared: Shared,
) {
    let far = far_tiles(window);
    // SAFETY: the caller's contract.
    unsafe {
        if far == 0 {
            sliding_scan_shifted::<S, HALO>(a, n, window, out, state, shared)
        } else if far <= FAR_TILES {
            sliding_scan_shifted::<S, FAR>(a, n, window, out, state, shared)
        } else {
            sliding_scan_shifted::<S, CHAINED>(a, n, window, out, state, shared)
        }
    }
}

/// The block's shared arrays: the ticket, the warps' totals, their halos' and their
/// aggregates', the tile's prefix, and the two staged streams (`a[p]` and `a[p - window]`).
#[derive(Clone, Copy)]
struct Shared {
    ticket: SharedSlice<u32>,
    warp_totals: SharedSlice<u32>,
    warp_halos: SharedSlice<u32>,
    warp_aggregates: SharedSlice<u32>,
    prefix: SharedSlice<u32>,
    new: SharedSlice<f32>,
    old: SharedSlice<f32>,
}

/// [`sliding_scan`] where `a[p - window]` is `S` places past a 16-byte boundary for every
/// position `p` that is a multiple of 4, i.e. `S = (-window) mod 4`.
///
/// # Safety
/// As [`sliding_scan`], and `(window + S) % 4 == 0`.
#[inline(always)]
unsafe fn sliding_scan_shifted<const S: usize, const PATH: u8>(
    a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64, shared: Shared,
) {
    let t = thread_idx_x();
    let (lane, warp_id) = (t % WARP_SIZE, t / WARP_SIZE);
    let Shared {
        ticket,
        warp_totals,
        warp_halos,
        warp_aggregates,
        prefix,
        new,
        old,
    } = shared;

    // A halo-path block depends on no other, so it takes its tile from its block index: no
    // atomic, and no barrier before its loads (the module docs say what that gains).
    // The other paths wait for earlier tiles, so they take tickets, in the order their
    // blocks start.
    let b = if PATH == HALO {
        block_idx_x()
    } else {
        if t == 0 {
            // SAFETY: word 0 of the state is the ticket counter.
            ticket.set(0, unsafe { atomic::fetch_add_u32(state as *mut u32, 1) });
        }
        sync_threads();
        ticket.get(0)
    };
    let s = b * TILE;

    // Both streams of the tile, in flight at once: a[s ..] and a[s - window - S ..].
    let old0 = s as i64 - window as i64 - S as i64;
    if old0 >= 0 && s + TILE <= n {
        // Both wholly inside `a` (the second ends at s + TILE + 4 - window - S <= s + TILE).
        let (new_src, old_src) = (a.wrapping_add(s as usize), a.wrapping_add(old0 as usize));
        unroll!((TILE / 4 / BLOCK) as usize, |j| {
            let q = t + BLOCK * j as u32;
            // SAFETY: words q < TILE / 4 of both streams lie in `a`, 16-byte aligned; read
            // after the barrier.
            unsafe {
                cp_async_16(new, 4 * slot_quad(q), new_src.wrapping_add(4 * q as usize));
                cp_async_16(old, 4 * slot_quad(q), old_src.wrapping_add(4 * q as usize));
            }
        });
        if S != 0 && t == 0 {
            let q = TILE / 4;
            // SAFETY: as above; the second stream's last word ends within `a`.
            unsafe { cp_async_16(old, 4 * slot_quad(q), old_src.wrapping_add(4 * q as usize)) };
        }
    } else {
        // SAFETY: `a` holds n floats, 16-byte aligned; the stages are read after the barrier.
        unsafe { stage_edge_tile::<S>(new, old, a, n, s, old0) };
    }
    commit_group();
    {
        // The tile L2_AHEAD tiles on, asked of L2 while this tile's copies are in flight:
        // TILE / BLOCK floats (64 bytes) apart per thread, so the block covers the whole
        // tile. Clamped into `a` rather than branched around (a branch here moved the later
        // passes' codegen into spills).
        let step = (TILE / BLOCK) as u64;
        let ahead =
            ((b as u64 + L2_AHEAD as u64) * TILE as u64 + step * t as u64).min(n as u64 - 1);
        // SAFETY: a float of `a` (n >= 1).
        unsafe { prefetch_l2(a.wrapping_add(ahead as usize)) };
    }
    wait_group::<0>();
    sync_threads();

    let far = far_tiles(window);
    let (near, aggregates) = (PATH != CHAINED, PATH == FAR);
    let desc = Descriptors::new(state, tiles(n));
    // The thread's sum, the warp's scan, the block's sum of differences; where the window
    // spans at most FAR_TILES whole tiles beyond its halo, the sum of that halo too: the
    // staged `a[p - window]` of the tile's first `halo_positions` (`halo_len` of them are
    // this thread's); on the far path, the sum of the thread's `a[p]` for the tile's
    // aggregate.
    let halo_positions = window - far * TILE;
    let halo_len = if near {
        halo_positions.saturating_sub(ITEMS * t)
    } else {
        0
    };
    let (mut sum, mut halo_sum, mut own_sum) = (0.0f64, 0.0f64, 0.0f64);
    // SAFETY: staged and waited for.
    unsafe {
        for_each_word::<S>(new, old, t, |q, xn, xo| {
            unroll!(4, |i| {
                sum += e(xn[i], xo[i]);
                if aggregates {
                    own_sum += xn[i] as f64;
                }
                if 4 * q + (i as u32) < halo_len {
                    halo_sum += xo[i] as f64;
                }
            });
        });
    }
    // A non-finite input makes its difference, and so the sum, non-finite: one check.
    let clean = sum.is_finite();
    let mut mine = Tally { sum, ..Tally::ZERO };
    let mut halo = Tally {
        sum: halo_sum,
        ..Tally::ZERO
    };
    // The tile's own `a[p]` (the far path), finite wherever the differences are.
    let mut own = Tally {
        sum: own_sum,
        ..Tally::ZERO
    };
    if !clean {
        (mine, halo, own) = (Tally::ZERO, Tally::ZERO, Tally::ZERO);
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                unroll!(4, |i| {
                    let (old, new) = (Tally::of(xo[i]), Tally::of(xn[i]));
                    mine = mine + (new - old);
                    if aggregates {
                        own = own + new;
                    }
                    if 4 * q + (i as u32) < halo_len {
                        halo = halo + old;
                    }
                });
            });
        }
    }
    if aggregates {
        // The tile's aggregate (the sum of its `a[p]`), which the windows of the next
        // FAR_TILES tiles add up: published before the scan goes on, so that a later block
        // seldom waits for it.
        // SAFETY: every lane of every warp (`aggregates` is uniform).
        let own = unsafe {
            let sums_only = warp::ballot(FULL_MASK, own.inf != 0 || own.nan != 0) == 0;
            warp_sum(own, sums_only)
        };
        if lane == 0 {
            // SAFETY: warp_aggregates holds 5 words per warp.
            unsafe { own.store(warp_aggregates, 5 * warp_id) };
        }
        sync_threads();
        if warp_id == 0 {
            // SAFETY: the whole warp, after the barrier; tile b's aggregate, written by
            // thread 0 only (predicated, see `publish_if`).
            unsafe {
                let (_, own) = fold_warps(warp_aggregates, WARPS, 0);
                publish_if(lane == 0, desc, b, AGGREGATE, own)
            };
        }
    }

    // SAFETY: every lane of every (full) warp, with a warp-uniform `sums_only`.
    let (inclusive, thread_prefix) = unsafe {
        let sums_only = warp::ballot(FULL_MASK, !clean) == 0;
        let inclusive = warp_scan(mine, sums_only, WARP_SIZE);
        let below = shuffle_up(inclusive, 1, sums_only);
        (inclusive, if lane == 0 { Tally::ZERO } else { below })
    };
    if lane == WARP_SIZE - 1 {
        // SAFETY: warp_totals holds 5 words per warp.
        unsafe { inclusive.store(warp_totals, 5 * warp_id) };
    }
    // Every warp where `near`, those with no halo too: under a warp-dependent condition
    // LLVM gave the two sides their own copies of the barrier below, and compute-sanitizer's
    // synccheck reports a block whose threads wait at different barriers.
    if near {
        // SAFETY: every lane of every warp (`near` is uniform), `sums_only` warp-uniform.
        let halo = unsafe {
            let sums_only = warp::ballot(FULL_MASK, !clean) == 0;
            warp_sum(halo, sums_only)
        };
        if lane == 0 {
            // SAFETY: warp_halos holds 5 words per warp.
            unsafe { halo.store(warp_halos, 5 * warp_id) };
        }
    }
    sync_threads();
    // SAFETY: every lane of every warp, after the barrier.
    let (warp_prefix, aggregate) = unsafe { fold_warps(warp_totals, WARPS, warp_id) };

    let before = if near {
        // The window ending before the tile is the staged halo, then `far` whole tiles
        // whose aggregates their blocks publish without waiting on anyone: no chain. A
        // launch whose windows span no whole tile publishes nothing.
        let halo_warps = halo_positions.div_ceil(WARP_SIZE * ITEMS);
        // SAFETY: as above (`halo_warps` is uniform, at most WARPS).
        let (_, halo) = unsafe { fold_warps(warp_halos, halo_warps, 0) };
        if aggregates {
            if warp_id == 0 {
                // SAFETY: the whole warp; tiles before b belong to started blocks, which
                // publish their aggregates before anything else.
                let far_sum = unsafe { far_aggregates(desc, b, far) };
                if lane == 0 {
                    // SAFETY: prefix holds 5 words.
                    unsafe { far_sum.store(prefix, 0) };
                }
            }
            sync_threads();
            // SAFETY: written before the barrier.
            halo + unsafe { Tally::load(prefix, 0) }
        } else {
            halo
        }
    } else {
        if warp_id == 0 {
            let status = if b == 0 { INCLUSIVE } else { AGGREGATE };
            // SAFETY: tile b's records, written by thread 0 only (predicated, not branched
            // around: see `publish_if`).
            unsafe { publish_if(lane == 0, desc, b, status, aggregate) };
            // SAFETY: the whole warp; tiles before b belong to started blocks.
            let before = unsafe { look_back(desc, b) };
            // SAFETY: as above.
            unsafe { publish_if(lane == 0 && b > 0, desc, b, INCLUSIVE, before + aggregate) };
            if lane == 0 {
                // SAFETY: prefix holds 5 words.
                unsafe { before.store(prefix, 0) };
            }
        }
        sync_threads();
        // SAFETY: written before the barrier.
        unsafe { Tally::load(prefix, 0) }
    };

    // The means of the thread's positions, from the window ending just before them.
    let start = before + warp_prefix + thread_prefix;
    let inv_window = 1.0 / window as f64;
    // Each word of means goes over the thread's own word of `a[p]` (no other thread reads
    // it) as soon as that is read.
    let put = |q: u32, m: [f32; 4]| {
        // SAFETY: this thread's word of the stage, 16-byte aligned.
        unsafe { new.set4_unchecked(4 * slot_quad(WORDS * t + q), m) };
    };
    if clean && start.inf == 0 && start.nan == 0 {
        // Nothing non-finite in these windows: the mean is the sum's.
        let mut run = start.sum;
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                let mut m = [0.0f32; 4];
                unroll!(4, |i| {
                    run += e(xn[i], xo[i]);
                    m[i] = (run * inv_window) as f32;
                });
                put(q, m);
            });
        }
    } else if clean {
        // The counts, non-zero, stay as they are through these positions, and decide.
        let m = start.mean(inv_window);
        unroll!(I / 4, |q| put(q as u32, [m; 4]));
    } else {
        let mut run = start;
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                let mut m = [0.0f32; 4];
                unroll!(4, |i| {
                    run = run + (Tally::of(xn[i]) - Tally::of(xo[i]));
                    m[i] = run.mean(inv_window);
                });
                put(q, m);
            });
        }
    }
    sync_threads();
    // SAFETY: the tile's means are staged; `out` holds n - window + 1 floats, 16-byte aligned.
    unsafe { store_means::<S>(new, n, window, s, out) };
}

/// A point LLVM may not move shared-memory reads across, nor reuse a value read before it
/// after it (an empty `asm!` that may read and write memory); no instruction is emitted.
#[inline(always)]
fn reload_fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an empty instruction sequence.
    unsafe {
        core::arch::asm!("", options(nostack, preserves_flags));
    }
}

/// `e[p] = a[p] - a[p - window]` from the two, exact in f64.
#[inline(always)]
fn e(new: f32, old: f32) -> f64 {
    new as f64 - old as f64
}

/// Stores the tile's means, staged in `means` by position (`means[p - s]` ends at `p`), to
/// `out[p - (window - 1)]` for the positions `p` of the tile with `window - 1 <= p < n`:
/// the aligned 16-byte words of `out` the tile fills alone, one per thread in turn
/// (coalesced), and the at most three outputs at each end that share a word with the next
/// or previous tile, one per thread.
///
/// # Safety
/// As [`sliding_scan_shifted`]; the means are staged and a barrier has passed.
#[inline(always)]
unsafe fn store_means<const S: usize>(
    means: SharedSlice<f32>, n: u32, window: u32, s: u32, out: *mut f32,
) {
    let t = thread_idx_x();
    // Outputs [lo, hi), from positions [p_lo, p_hi); output o's mean is staged at
    // o + window - 1 - s, which is 3 - S past a multiple of 4 where o is one.
    let (p_lo, p_hi) = (s.max(window - 1), (s + TILE).min(n));
    if p_hi <= p_lo {
        return;
    }
    let (lo, hi) = (p_lo - (window - 1), p_hi - (window - 1));
    const { assert!(S < 4) };
    let c = 3 - S as u32;
    let at = |o: u32| o + (window - 1) - s;
    let (first, last) = (lo.next_multiple_of(4), hi - hi % 4);
    if first < last {
        // Thread t takes the words whose staged means start at word ≡ t (mod 8) past a
        // multiple of 8, so that the eight threads of one phase of a 16-byte shared load
        // read eight words between two gaps (see `slot`): no bank conflict.
        let rotate = (at(first) / 4) % 8;
        let mut g = first + 4 * ((t + BLOCK - rotate) % BLOCK);
        while g < last {
            let i = at(g);
            let q = i / 4;
            // SAFETY: words q and q + 1 (when C > 0) hold staged means of this tile.
            let v = unsafe {
                let w0 = means.get4_unchecked(4 * slot_quad(q));
                let w1 = if c > 0 {
                    means.get4_unchecked(4 * slot_quad(q + 1))
                } else {
                    w0
                };
                let w = [w0[0], w0[1], w0[2], w0[3], w1[0], w1[1], w1[2], w1[3]];
                F32x4([
                    w[c as usize],
                    w[c as usize + 1],
                    w[c as usize + 2],
                    w[c as usize + 3],
                ])
            };
            // SAFETY: g .. g + 4 are outputs of this tile alone, `g` a multiple of 4 and `out`
            // 16-byte aligned.
            unsafe { *(out.add(g as usize) as *mut F32x4) = v };
            g += 4 * BLOCK;
        }
    }
    // The ends: [lo, min(first, hi)) and [max(last, first), hi) once first <= last.
    let o = if t < 3 {
        lo + t
    } else if t < 6 {
        last.max(first) + (t - 3)
    } else {
        return;
    };
    let end = if t < 3 { first.min(hi) } else { hi };
    if o < end && (t < 3 || first <= last) {
        // SAFETY: o is an output of this tile; its mean is staged.
        unsafe { *out.add(o as usize) = means.get(slot(at(o))) };
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) => sliding_scan,
        launch_bounds(BLOCK, MIN_BLOCKS);
}
