//! The sliding average at any window, one pass, each output's cost independent of the
//! window: the window sum ending at position `p` is the inclusive scan of
//! `e[p] = a[p] - a[p - window]` (the second term only where `p >= window`), because the
//! differences telescope. A chained scan ("decoupled look-back") carries the running sum
//! across blocks. Each pass over a tile (see below) reads `a[p]` and `a[p - window]`; of the
//! four reads of an input only the first normally comes from DRAM (the second pass re-reads
//! the tile from L2, and `a[p - window]` was read `window` places earlier), and every output
//! is written once: the DRAM traffic of a copy, whatever the window.
//!
//! # Order and progress
//!
//! A block takes its tile from an atomic ticket, not from `blockIdx`, so tile `b` belongs to
//! a block that started after the blocks of tiles `0..b` had started. It publishes its tile's
//! aggregate at once, then looks back over its predecessors' published values: it waits only
//! for blocks that are already running and that publish without waiting, so the look-back
//! always ends. One look-back step reads [`LOOK_BACK`] predecessors (one per lane), so the
//! chain of inclusive prefixes advances up to that many tiles per L2 round trip.
//!
//! A tile is [`ROUNDS`] rounds of [`ROUND`] positions: the block reads it once to publish
//! its aggregate, looks back, then reads it again (from L2) to scan and write it round by
//! round, so one look-back serves the whole tile and no input is held in registers across
//! it.
//!
//! Each published value is two 16-byte records, each with its own "valid" bit beside the
//! data, stored and loaded whole through L2 ([`atomic::store_pair_cg`]): a reader needs no
//! fence, and a spinning block adds no fence traffic. (A first version published with
//! release stores and polled with acquire loads, a fence each, and one tile per lane: it
//! ran at a tenth of copy bandwidth, whatever the window.)
//!
//! # Accuracy
//!
//! The sums are f64: each `e[p]` is the f64 difference of two f32s (exact). A sum of `e`s
//! over one run of consecutive positions is the difference of two window sums, so with
//! `M = max |a|` it is at most `2·window·M`, and every f64 intermediate of the kernel is a
//! sum over at most 2¹¹ such runs (a thread's [`ROUNDS`] runs, gathered by the warp and the
//! block for the tile's aggregate; one run everywhere in the scan of a round). Adding up
//! `2⁻⁵³ ·` the magnitude of every rounding: the aggregate of a tile costs at most
//! `2⁻⁵³ · 8·window·M` per position of the tile, the look-back and the round scans less than
//! as much again, so the window sum ending at `p` is within `2⁻⁵³ · 16·window·M · (p + 1)`
//! of the exact one, and the mean (multiplied by the rounded `1/window`, then rounded to
//! f32) within `2⁻²⁴ · |mean| + 2⁻⁴⁸ · (p + 1) · M` ([`ERROR_LOG2`]): half an f32 ulp of the
//! mean from the final rounding, plus a term, with a factor of two to spare, that reaches
//! about an f32 ulp of `M` at `p = 2²⁵` (the host's `sliding::within_bound` checks exactly
//! this).
//!
//! Non-finite inputs cannot be subtracted back out of a running sum, so they are counted
//! instead: the scan carries, besides the f64 sum of the finite values, how many NaNs and
//! how many +∞ and -∞ the window holds (as wrapping integers, whose differences telescope
//! exactly). A window with a NaN, or with both infinities, averages to NaN; one with
//! infinities of one sign to that infinity; any other to the mean of its finite values — the
//! IEEE result of summing the window, except that no finite window overflows.
//!
//! The grouping of the f64 additions depends on how far each look-back reaches, so two runs
//! can differ in the last bits of an f64 sum (almost never in the f32 output).

use crate::sgemm::parts::unroll::unroll;
use nvptx_device::atomic;
use nvptx_device::intrinsics::{F32x4, load_f32x4_nc};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{sync_threads, thread_idx_x};
use nvptx_device::warp::{self, FULL_MASK, WARP_SIZE};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// The scan's error bound: within `2⁻²⁴ · |mean| + 2^ERROR_LOG2 · (p + 1) · max |a|` of the
/// exact mean of the window ending at position `p` (see the [module](self)).
pub const ERROR_LOG2: i32 = -48;
/// Consecutive positions per thread: four 16-byte loads of `a[p]`.
pub const ITEMS: u32 = 16;
/// Positions per round: [`ITEMS`] per thread.
pub const ROUND: u32 = BLOCK * ITEMS;
/// Rounds per tile: one look-back for this many rounds of work (see [`MIN_BLOCKS`]).
pub const ROUNDS: u32 = 8;
/// Positions per block.
pub const TILE: u32 = ROUND * ROUNDS;
/// [`ITEMS`] as an index.
const I: usize = ITEMS as usize;
const WARPS: u32 = BLOCK / WARP_SIZE;
/// Its shared arrays: the ticket, two sets of the warps' totals and the block's prefix (five
/// words per tally), each array 16-byte aligned.
pub const STATIC_SHARED_BYTES: u32 = 16 + (40 * WARPS).next_multiple_of(16) + 32;

/// Words of the scratch state before the first tile's descriptor: the ticket counter (a
/// `u32` in word 0), padded to 64 bytes.
pub const HEADER_WORDS: usize = 8;
/// Words per tile: the aggregate's two 16-byte records, then the inclusive prefix's.
pub const DESCRIPTOR_WORDS: usize = 8;
/// Predecessors a look-back step reads: one per lane of a warp (a tile is
/// [`TILE`] positions, so one step reaches a million positions back). Four per lane held
/// 64 more registers in flight, for the same speed.
pub const LOOK_BACK: u32 = WARP_SIZE * PER_LANE;
const PER_LANE: u32 = 1;

/// Blocks per SM the entry's launch bounds ask for (`.minnctapersm`).
///
/// Measured on an H100 (2^28 values, window 64; within two points at window 100,001), in %
/// of device-copy bandwidth. With one-round tiles: no bounds (168 registers, one block per
/// SM) 12.6%; 2, 3 and 4 blocks per SM 21.5%, 24.3% and 17.9%. Tiles of several rounds, a
/// shift known at compile time and one predecessor per lane: `ITEMS` 16 × 8 rounds at 2
/// blocks per SM (128 registers) 40.1%, and 41.6% with one barrier per round (40.1–41.9% at
/// windows 2 to 100,000); at 3 blocks (80 registers) `ITEMS` 8 × 8 rounds
/// 36.0%, 16 × 4 rounds 21.8%; at 4 blocks (64 registers) 26.4% (`ITEMS` 8) and 35.5%
/// (`ITEMS` 4 × 16 rounds); at one block (237 registers, no spills) 20.1%. Every bounded
/// build still spills (Nsight Compute counts 3.4 M local-memory requests on 2^26 values at
/// 128 registers). Its warps wait mostly for loads (42% of the stall samples, two thirds of
/// them on the f32→f64 conversion that first uses each loaded value) and at barriers (19%):
/// with 16 warps per SM and each round's loads used at once, too few loads are in flight.
/// The look-back no longer bounds this kernel; a body that fits in its registers, with the
/// next round's loads issued before this round's scan, is the next step.
///
/// A one-round design measured since (same device and size): each block stages one tile of
/// 4,096 positions, both streams, in shared memory with `cp.async` (4 blocks per SM, 64
/// registers), and reads it from there twice. With its look-back removed (timing only, wrong
/// sums) it ran at 86% of copy at windows 2 and 100,000; with this look-back at 26%, and
/// with a block-wide one of 256 tiles per step at 32%. Blocks take up tiles at a rate `r`
/// and a look-back step costs an L2 round trip `t`, so a block finds the nearest inclusive
/// prefix about `r·t` tiles back, and the steps lengthen until `r·t` falls to the tiles one
/// step reads: at copy speed, tiles of 4,096 need about a hundred per step, or one round
/// trip must cover more positions. Barriers inside a look-back loop are fragile: the first
/// block-wide build hung, its PTX holding the loop twice per body, once behind thread 0's
/// branch that publishes the aggregate; with that publish predicated instead, the loop was
/// there once and a 4-blocks-per-SM build ran (and passed the GPU tests), but a
/// 3-blocks-per-SM build of the same code still hung.
pub const MIN_BLOCKS: u32 = 2;

/// Tiles (and blocks) for `n` inputs: at least one.
pub const fn tiles(n: u32) -> u32 {
    let t = n.div_ceil(TILE);
    if t == 0 { 1 } else { t }
}

/// `u64` words of scratch state a launch over `n` inputs needs, all zero at launch.
pub const fn state_words(n: u32) -> usize {
    HEADER_WORDS + DESCRIPTOR_WORDS * tiles(n) as usize
}

/// What a tile has published: nothing yet.
pub const EMPTY: u32 = 0;
/// Its own aggregate (descriptor words 0..4).
pub const AGGREGATE: u32 = 1;
/// The inclusive prefix through it (descriptor words 4..8).
pub const INCLUSIVE: u32 = 2;
/// The "valid" bit of a record's second word.
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

    #[inline(always)]
    fn store(self, s: SharedSlice<u32>, at: u32) {
        let w = self.words();
        for (i, &x) in w.iter().enumerate() {
            s.set(at + i as u32, x);
        }
    }

    #[inline(always)]
    fn load(s: SharedSlice<u32>, at: u32) -> Self {
        Self::from_words([
            s.get(at),
            s.get(at + 1),
            s.get(at + 2),
            s.get(at + 3),
            s.get(at + 4),
        ])
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

/// Publishes `t` as tile descriptor `d`'s aggregate ([`AGGREGATE`]) or inclusive prefix
/// ([`INCLUSIVE`]): two 16-byte records, `(sum, nan | VALID)` and `(inf, VALID)`.
///
/// # Safety
/// `d` points to a 16-byte-aligned descriptor of [`DESCRIPTOR_WORDS`] in the launch's
/// scratch state, whose `status` records only this thread writes.
#[inline(always)]
pub unsafe fn publish(d: *mut u64, status: u32, t: Tally) {
    let at = if status == INCLUSIVE { 4 } else { 0 };
    // SAFETY: at + 3 < DESCRIPTOR_WORDS, 16-byte aligned; this thread's records.
    unsafe {
        atomic::store_pair_cg(d.add(at), [t.sum.to_bits(), t.nan as u64 | VALID]);
        atomic::store_pair_cg(d.add(at + 2), [t.inf, VALID]);
    }
}

/// What descriptor `d` holds: its status and the value of the most advanced complete one.
///
/// # Safety
/// As [`publish`].
#[inline(always)]
unsafe fn read(d: *const u64) -> (u32, Tally) {
    // SAFETY: four records of the descriptor; independent loads, one round trip.
    let [a1, a2, i1, i2] = unsafe {
        [
            atomic::load_pair_cg(d),
            atomic::load_pair_cg(d.add(2)),
            atomic::load_pair_cg(d.add(4)),
            atomic::load_pair_cg(d.add(6)),
        ]
    };
    let value = |r1: [u64; 2], r2: [u64; 2]| Tally {
        sum: f64::from_bits(r1[0]),
        inf: r2[0],
        nan: r1[1] as u32,
    };
    if i1[1] & VALID != 0 && i2[1] & VALID != 0 {
        (INCLUSIVE, value(i1, i2))
    } else if a1[1] & VALID != 0 && a2[1] & VALID != 0 {
        (AGGREGATE, value(a1, a2))
    } else {
        (EMPTY, Tally::ZERO)
    }
}

/// The sum of every tile before tile `b`, by one full warp: lane `l` reads predecessors
/// `b - 1 - PER_LANE·l - j` (`j < PER_LANE`), and the warp adds the published values back to the nearest
/// inclusive prefix, [`LOOK_BACK`] tiles per step, re-reading while any of those has
/// published nothing yet.
///
/// # Safety
/// All 32 lanes of one warp call it together; `state` is the launch's scratch state and
/// tiles `0..b` belong to blocks that have started (the ticket order).
#[inline(always)]
pub unsafe fn look_back(state: *mut u64, b: u32) -> Tally {
    let lane = warp::lane_id();
    let mut excl = Tally::ZERO;
    let mut end = b;
    while end > 0 {
        let mut status = [EMPTY; PER_LANE as usize];
        let mut value = [Tally::ZERO; PER_LANE as usize];
        unroll!(j in PER_LANE as usize => {
            let i = PER_LANE * lane + j as u32;
            // Tiles before the first count as an inclusive prefix of zero.
            (status[j], value[j]) = if i < end {
                let d = state.wrapping_add(
                    HEADER_WORDS + DESCRIPTOR_WORDS * (end - 1 - i) as usize,
                );
                // SAFETY: tile end - 1 - i < b is in the state.
                unsafe { read(d) }
            } else {
                (INCLUSIVE, Tally::ZERO)
            };
        });
        // This lane's nearest inclusive prefix (PER_LANE: none), and whether a tile it
        // needs has published nothing.
        let mut first = PER_LANE;
        let mut pending_before = [false; PER_LANE as usize + 1];
        unroll!(j in PER_LANE as usize => {
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
        unroll!(j in PER_LANE as usize + 1 => {
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
            unroll!(j in PER_LANE as usize => {
                if (j as u32) < upto {
                    mine = value[j] + mine;
                }
            });
        }
        // SAFETY: as above.
        let step = unsafe { warp_sum(mine) };
        excl = step + excl;
        if nearest < WARP_SIZE {
            break;
        }
        end -= LOOK_BACK;
    }
    excl
}

/// The sum over the warp's lanes, in every lane (butterfly, so every lane adds in the
/// same order).
///
/// # Safety
/// All 32 lanes call it together.
#[inline(always)]
unsafe fn warp_sum(mut t: Tally) -> Tally {
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

/// One of `x[k]`, `x[k + 1]`, `x[k + 2]`, `x[k + 3]` by `s < 4`, a constant once inlined
/// (the kernel has one body per shift), so that the register arrays are indexed by
/// constants only.
#[inline(always)]
fn pick4(s: usize, x0: f32, x1: f32, x2: f32, x3: f32) -> f32 {
    match s {
        0 => x0,
        1 => x1,
        2 => x2,
        _ => x3,
    }
}

/// `a[p0 .. p0 + ITEMS]`, zero at and past `n`, into `x`.
///
/// # Safety
/// `a` holds `n` floats, 16-byte aligned; `p0` is a multiple of 4.
#[inline(always)]
unsafe fn load_new(a: *const f32, n: u32, p0: u32, x: &mut [f32; ITEMS as usize]) {
    if p0 + ITEMS <= n {
        unroll!(q in (ITEMS / 4) as usize => {
            // SAFETY: p0 + 4q + 3 < n, 16-byte aligned; `a` is never written.
            let v = unsafe { load_f32x4_nc(a.add(p0 as usize + 4 * q)) };
            unroll!(i in 4 => {
                x[4 * q + i] = v[i];
            });
        });
    } else {
        unroll!(k in ITEMS as usize => {
            let p = p0 + k as u32;
            // SAFETY: p < n.
            x[k] = if p < n { unsafe { *a.add(p as usize) } } else { 0.0 };
        });
    }
}

/// `a[p - window]` for `p` in `p0 .. p0 + ITEMS`, zero where `p < window` or `p >= n`, into
/// `x`. The start is `S` floats past a 16-byte boundary: unless `S = 0` (`window` a multiple
/// of 4), five aligned quads are loaded and shifted (the fifth is the next thread's first,
/// from L1).
///
/// # Safety
/// As [`load_new`].
#[inline(always)]
unsafe fn load_old<const S: usize>(
    a: *const f32, n: u32, window: u32, p0: u32, x: &mut [f32; ITEMS as usize],
) {
    let q0 = p0 as i64 - window as i64;
    let s = S;
    debug_assert_eq!(s, q0.rem_euclid(4) as usize);
    let qa = q0 - s as i64;
    if q0 >= 0 && qa + ITEMS as i64 + 4 <= n as i64 {
        let mut w = [0.0f32; ITEMS as usize + 4];
        unroll!(q in (ITEMS / 4 + 1) as usize => {
            if q < (ITEMS / 4) as usize || s != 0 {
                // SAFETY: qa + 4q + 3 < n, 16-byte aligned; `a` is never written.
                let v = unsafe { load_f32x4_nc(a.add(qa as usize + 4 * q)) };
                unroll!(i in 4 => {
                    w[4 * q + i] = v[i];
                });
            }
        });
        unroll!(k in ITEMS as usize => {
            x[k] = pick4(s, w[k], w[k + 1], w[k + 2], w[k + 3]);
        });
    } else {
        unroll!(k in ITEMS as usize => {
            let p = p0 + k as u32;
            x[k] = if p < n && p >= window {
                // SAFETY: 0 <= p - window < n.
                unsafe { *a.add((p - window) as usize) }
            } else {
                0.0
            };
        });
    }
}

/// Element `j` of the aligned run `[A, A + ITEMS)` where this thread's first output is
/// `A + r`: the previous thread's last `r` means (`prev` holds its last three), then this
/// thread's first `ITEMS - r`.
#[inline(always)]
fn compose(r: usize, j: usize, prev: &[f32; 3], m: &[f32; ITEMS as usize]) -> f32 {
    let at = |shift: usize| {
        if j < shift {
            prev[3 - shift + j]
        } else {
            m[j - shift]
        }
    };
    pick4(r, at(0), at(1), at(2), at(3))
}

/// Writes `v` to `out[o]` if `0 <= o < outputs`.
///
/// # Safety
/// `out` holds `outputs` floats.
#[inline(always)]
unsafe fn store_if(out: *mut f32, outputs: u32, o: i64, v: f32) {
    if o >= 0 && o < outputs as i64 {
        // SAFETY: in bounds; each output has one writer (see `sliding_scan`).
        unsafe { *out.add(o as usize) = v };
    }
}

/// Loads this thread's [`ITEMS`] positions from `p0` (`a[p]` into `xn`, `a[p - window]` into
/// `xo`) and returns whether every difference `e[p]` is finite, and their tally.
///
/// # Safety
/// As [`load_new`].
#[inline(always)]
unsafe fn load_round<const S: usize>(
    a: *const f32, n: u32, window: u32, p0: u32, xn: &mut [f32; I], xo: &mut [f32; I],
) -> (bool, Tally) {
    // SAFETY: the caller's contract.
    unsafe {
        load_new(a, n, p0, xn);
        load_old::<S>(a, n, window, p0, xo);
    }
    let mut mine = Tally::ZERO;
    unroll!(k in I => mine.sum += e(k, xn, xo));
    // A non-finite input makes its difference, and so the sum, non-finite: one check.
    let clean = mine.sum.is_finite();
    if !clean {
        mine = Tally::ZERO;
        unroll!(k in I => {
            mine = mine + (Tally::of(xn[k]) - Tally::of(xo[k]));
        });
    }
    (clean, mine)
}

/// `e[p0 + k] = a[p0 + k] - a[p0 + k - window]`, exact in f64. Recomputed where it is needed
/// (two conversions and a subtraction): an array of them would hold 32 more registers.
#[inline(always)]
fn e(k: usize, xn: &[f32; I], xo: &[f32; I]) -> f64 {
    xn[k] as f64 - xo[k] as f64
}

/// The tallies of the warps, in order, from `warp_totals`: the sum of those before warp
/// `warp_id`, and the sum of all.
#[inline(always)]
fn fold_warps(warp_totals: SharedSlice<u32>, warp_id: u32) -> (Tally, Tally) {
    let (mut before, mut all) = (Tally::ZERO, Tally::ZERO);
    for j in 0..WARPS {
        let total = Tally::load(warp_totals, 5 * j);
        if j < warp_id {
            before = before + total;
        }
        all = all + total;
    }
    (before, all)
}

/// `out[i] = mean(a[i .. i + window])` for every `i < n - window + 1`: the mean ending at
/// position `p = i + window - 1`. See the [module](self).
///
/// Launch [`tiles`]`(n)` blocks of [`BLOCK`] threads, with `state` holding
/// [`state_words`]`(n)` zeroed words.
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats and is 16-byte aligned, `out` to
/// `n - window + 1` floats and is 16-byte aligned, `state` as above and used by this launch
/// alone.
#[inline(always)]
pub unsafe fn sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) {
    // Positions start at multiples of 4, so `a[p - window]` is `(-window) mod 4` places past
    // a 16-byte boundary in every thread: one body per shift, each with its loads' shuffles
    // and its stores' alignment known at compile time (a run-time shift became jump tables
    // per element).
    // SAFETY: the caller's contract.
    unsafe {
        match window % 4 {
            0 => sliding_scan_shifted::<0>(a, n, window, out, state),
            1 => sliding_scan_shifted::<3>(a, n, window, out, state),
            2 => sliding_scan_shifted::<2>(a, n, window, out, state),
            _ => sliding_scan_shifted::<1>(a, n, window, out, state),
        }
    }
}

/// [`sliding_scan`] where `a[p - window]` is `S` places past a 16-byte boundary for every
/// position `p` that is a multiple of 4, i.e. `S = (-window) mod 4`.
///
/// # Safety
/// As [`sliding_scan`], and `(window + S) % 4 == 0`.
#[inline(always)]
unsafe fn sliding_scan_shifted<const S: usize>(
    a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64,
) {
    let t = thread_idx_x();
    let (lane, warp_id) = (t % WARP_SIZE, t / WARP_SIZE);
    let ticket = shared_array!(u32; 1);
    // Two sets of warp totals, one per round parity: a round writes its set while no warp
    // can still be reading it (two barriers have passed since), so a round needs one barrier.
    let warp_totals = shared_array!(u32; 2 * WARPS * 5);
    let prefix = shared_array!(u32; 5);

    if t == 0 {
        // SAFETY: word 0 of the state is the ticket counter.
        ticket.set(0, unsafe { atomic::fetch_add_u32(state as *mut u32, 1) });
    }
    sync_threads();
    let b = ticket.get(0);
    let first = |round: u32| b * TILE + round * ROUND + t * ITEMS;

    // The tile's aggregate.
    let (mut xn, mut xo) = ([0.0f32; I], [0.0f32; I]);
    let mut mine = Tally::ZERO;
    for round in 0..ROUNDS {
        // SAFETY: a holds n floats, 16-byte aligned; the first position is a multiple of 16.
        let (_, tally) = unsafe { load_round::<S>(a, n, window, first(round), &mut xn, &mut xo) };
        mine = mine + tally;
    }
    // SAFETY: every lane of every (full) warp.
    let warp_total = unsafe { warp_sum(mine) };
    if lane == 0 {
        warp_total.store(warp_totals, 5 * warp_id);
    }
    sync_threads();
    let (_, aggregate) = fold_warps(warp_totals, warp_id);

    if warp_id == 0 {
        let desc = state.wrapping_add(HEADER_WORDS + DESCRIPTOR_WORDS * b as usize);
        if lane == 0 {
            let status = if b == 0 { INCLUSIVE } else { AGGREGATE };
            // SAFETY: tile b's descriptor, written by this thread only.
            unsafe { publish(desc, status, aggregate) };
        }
        // SAFETY: the whole warp; tiles before b belong to started blocks.
        let before = unsafe { look_back(state, b) };
        if lane == 0 {
            if b > 0 {
                // SAFETY: as above.
                unsafe { publish(desc, INCLUSIVE, before + aggregate) };
            }
            before.store(prefix, 0);
        }
    }
    sync_threads();

    // The scan, round by round, from the tile's prefix.
    let mut carry = Tally::load(prefix, 0);
    let inv_window = 1.0 / window as f64;
    let outputs = n - window + 1;
    for round in 0..ROUNDS {
        let p0 = first(round);
        // The inputs again, from L2. SAFETY: as above.
        let (clean, mine) = unsafe { load_round::<S>(a, n, window, p0, &mut xn, &mut xo) };
        // The warp's inclusive scan of the threads' tallies.
        let mut inclusive = mine;
        let mut d = 1;
        while d < WARP_SIZE {
            // SAFETY: every lane of every (full) warp runs this loop.
            let below = inclusive.map_words(|w| unsafe { warp::shuffle_up(FULL_MASK, w, d) });
            if lane >= d {
                inclusive = below + inclusive;
            }
            d *= 2;
        }
        let (_, totals) = warp_totals.split_at((round % 2) * WARPS * 5);
        if lane == WARP_SIZE - 1 {
            inclusive.store(totals, 5 * warp_id);
        }
        sync_threads();
        let (warp_prefix, round_total) = fold_warps(totals, warp_id);
        // SAFETY: every lane of every warp.
        let below = inclusive.map_words(|w| unsafe { warp::shuffle_up(FULL_MASK, w, 1) });
        let thread_prefix = if lane == 0 { Tally::ZERO } else { below };
        let mut run = carry + warp_prefix + thread_prefix;
        let start = run;
        carry = carry + round_total;
        let mut m = [0.0f32; I];
        if clean && run.inf == 0 && run.nan == 0 {
            // Nothing non-finite in these windows: the mean is the sum's.
            unroll!(k in I => {
                run.sum += e(k, &xn, &xo);
                m[k] = (run.sum * inv_window) as f32;
            });
        } else if clean {
            unroll!(k in I => {
                run.sum += e(k, &xn, &xo);
                m[k] = run.mean(inv_window);
            });
        } else {
            unroll!(k in I => {
                let p = p0 + k as u32;
                if p < n {
                    // SAFETY: p < n, and p - window < n where p >= window.
                    let x = unsafe { *a.add(p as usize) };
                    run = run + Tally::of(x);
                    if p >= window {
                        // SAFETY: as above.
                        run = run - Tally::of(unsafe { *a.add((p - window) as usize) });
                    }
                }
                m[k] = run.mean(inv_window);
            });
        }
        // The previous thread's last three means: from its lane by a shuffle, or, in a warp's
        // first lane, stepped back from this thread's start (the previous warp's last lane
        // would need a barrier to hand them over).
        // SAFETY: every lane of every warp.
        let up = unsafe {
            [
                warp::shuffle_up(FULL_MASK, m[I - 3], 1),
                warp::shuffle_up(FULL_MASK, m[I - 2], 1),
                warp::shuffle_up(FULL_MASK, m[I - 1], 1),
            ]
        };
        let prev = if lane > 0 {
            Some(up)
        } else if warp_id > 0 {
            // SAFETY: p0 >= ITEMS, and `a` holds n floats.
            Some(unsafe { means_before(a, n, window, p0, start, inv_window) })
        } else {
            None
        };
        // SAFETY: `out` holds `outputs` floats.
        unsafe { store_means::<S>(out, outputs, window, p0, &m, prev) };
    }
}

/// The means of the windows ending at `p0 - 3`, `p0 - 2` and `p0 - 1`, from `start`, the
/// tally of the one ending at `p0 - 1`: each window one step back drops `a[p]` and takes
/// `a[p - window]` in (one more rounding of at most `2⁻⁵³ · 2·window·M` each).
///
/// # Safety
/// `p0 >= 2` and `a` holds `n` floats.
#[inline(always)]
unsafe fn means_before(
    a: *const f32, n: u32, window: u32, p0: u32, start: Tally, inv: f64,
) -> [f32; 3] {
    let mut w = start;
    let mut means = [0.0f32; 3];
    means[2] = w.mean(inv);
    unroll!(j in 2 => {
        let p = p0 - 1 - j as u32;
        if p < n {
            // SAFETY: p < n, and p - window < n where p >= window.
            w = w - Tally::of(unsafe { *a.add(p as usize) });
            if p >= window {
                // SAFETY: as above.
                w = w + Tally::of(unsafe { *a.add((p - window) as usize) });
            }
        }
        means[1 - j] = w.mean(inv);
    });
    means
}

/// Writes this thread's means `m` of positions `p0 ..`: its first output is
/// `o0 = p0 - (window - 1)`, `r` places past an aligned `A`. Each thread writes the aligned
/// run `[A, A + ITEMS)` — the previous thread's last `r` means (`prev`) then its own — so
/// that whole quads go out as 16-byte stores; the round's first thread has no previous one
/// (`prev` is `None`) and writes only its own, and its last thread also writes its `r`
/// left-over means.
///
/// # Safety
/// `out` holds `outputs` floats and is 16-byte aligned.
#[inline(always)]
unsafe fn store_means<const S: usize>(
    out: *mut f32, outputs: u32, window: u32, p0: u32, m: &[f32; I], prev: Option<[f32; 3]>,
) {
    let t = thread_idx_x();
    let o0 = p0 as i64 - (window as i64 - 1);
    let r = (S + 1) % 4;
    debug_assert_eq!(r, o0.rem_euclid(4) as usize);
    let base = o0 - r as i64;
    let (prev, have_prev) = match prev {
        Some(prev) => (prev, true),
        None => ([0.0; 3], false),
    };
    let mut run_out = [0.0f32; I];
    unroll!(j in I => {
        run_out[j] = compose(r, j, &prev, m);
    });
    unroll!(q in I / 4 => {
        let at = base + 4 * q as i64;
        let whole = at >= 0 && at + 4 <= outputs as i64 && (q > 0 || r == 0 || have_prev);
        if whole {
            let v = F32x4([
                run_out[4 * q],
                run_out[4 * q + 1],
                run_out[4 * q + 2],
                run_out[4 * q + 3],
            ]);
            // SAFETY: at .. at + 4 are outputs, `at` is a multiple of 4 and `out` 16-byte
            // aligned; this thread is their only writer.
            unsafe { *(out.add(at as usize) as *mut F32x4) = v };
        } else {
            unroll!(j in 4 => {
                let jj = 4 * q + j;
                if jj >= r || have_prev {
                    // SAFETY: out holds `outputs` floats.
                    unsafe { store_if(out, outputs, at + j as i64, run_out[jj]) };
                }
            });
        }
    });
    if t == BLOCK - 1 {
        unroll!(j in 3 => {
            if j < r {
                // The means past the last aligned run: m[ITEMS - r + j].
                let v = pick4(r, 0.0, m[I - 1], m[I - 2 + j.min(1)], m[I - 3 + j]);
                // SAFETY: as above; nobody else in this round or the next writes these.
                unsafe { store_if(out, outputs, base + (I + j) as i64, v) };
            }
        });
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) => sliding_scan,
        launch_bounds(BLOCK, MIN_BLOCKS);
}
