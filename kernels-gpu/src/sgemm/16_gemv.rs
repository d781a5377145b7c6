//! Rung 16: memory-bound products, where one of `m`, `n` or `k` is at most 16 (and tiny
//! outputs under a long `k`, 33 × 100000 × 33 say, whose work is streaming the operands
//! through a few hundred slices of `k`; and outputs of at most 32 columns, whose tiles
//! would be mostly padding, `gemv_small_n32`). A tile
//! kernel's figure of merit there is wrong: the arithmetic is a few FMAs per byte, and the
//! bound is how fast the big operand streams through. So these kernels are measured in
//! bytes of `a`, `b` and `out` moved per second against a device-to-device copy, and each
//! streams the large operand once, coalesced, 16 bytes per load where the rows are aligned
//! (8 bytes where [`gemv_small_m`]'s rows of `b` are 8- but not 16-byte aligned; where they
//! are not, and in its last block of columns, each lane's columns 32 apart, so that every
//! scalar load of the warp reads 128 consecutive bytes; scalar loads at the edges and on
//! other misaligned rows elsewhere), with several loads in flight per thread before their
//! first use.
//!
//! * [`gemv_small_m`] (`m ≤ M`): a few rows of `a` times `b` (`m = 1` is `xᵀ·B`). Each
//!   output row is a dot of a row of `a` with columns of `b`, so `b` is streamed row by row,
//!   coalesced along `n`: lane `l` of a warp owns four consecutive columns (four 32 apart
//!   where the rows are not 8-byte aligned, and in the last block of columns) and keeps
//!   `M × 4` accumulators; the `M` values of `a` it needs per row of `b` are the same for
//!   the whole warp (broadcast loads). A block's four warps split its slice of `k` into four
//!   consecutive parts and add their partial sums through shared memory in warp order. More
//!   than `M` rows run in groups of `M` (`blockIdx.z`), each streaming `b`.
//! * [`gemv_small_n`] (`n ≤ N`): `a` times a few columns (`n = 1` is `A·x`). `a` is streamed
//!   along its rows (coalesced along `k`) in chunks of 128 depths: each warp owns four rows
//!   (two in `gemv_small_n1_r2`, which has twice the blocks for the same `m`),
//!   lane `l` four consecutive depths of each per chunk. A lane's loads land in a ring of
//!   [`small_n_depth`] chunks of registers, each refilled with the chunk `D` ahead as soon
//!   as it is used, so that while it waits on one chunk the next `D − 1` are in flight, and
//!   stay in flight across barriers. For `N = 1`, `b`
//!   is a vector, read as `a` is (a lane's four depths by one 16-byte load, in the same
//!   ring), with no shared memory and no barrier; for `N > 1`, `b`'s rows for a group of `D`
//!   chunks (`n` floats each) are staged in shared memory, transposed, so that each lane
//!   reads its four depths of one column with one 16-byte shared load, one barrier pair a
//!   group. The lanes' partial sums are added by a butterfly of shuffles
//!   ([`nvptx_device::warp::sum_f32`]).
//! * [`gemv_small_k`] (`k ≤ K`): outer-product-like, bound by writing `out`. Each thread
//!   holds four columns of all `k` rows of `b` in registers and writes four consecutive
//!   outputs of each of the block's rows, one 16-byte store each.
//!
//! **Precisions.** Each configuration is built four times: as it is (FP32), with each input
//! rounded as TF32's or BF16's conversion rounds it before its FMA (the `-tf32` and
//! `-bf16` entries, a [`Rounding`] type each), and reading BF16 operands (the
//! `-bf16-inputs` entries, an [`Operand`] type each element type). A product of two
//! rounded inputs is exact in
//! f32, so these compute what those precisions' tensor-core rungs compute, in the order
//! below, and a memory-bound product of those precisions streams its operands as FP32's
//! does instead of running tensor-core tiles over one row or column. The rounding is
//! applied where a value is used, never as a load is issued: a `cvt` on a register in
//! flight would wait for it.
//!
//! **Split k.** Where the output alone would not give every multiprocessor enough warps
//! (a long `k` under a small output), `k` is cut into slices (`blockIdx.y`): slice `s`
//! covers depths `[s·slice, (s + 1)·slice)` and writes its partial sums to plane `s` of a
//! workspace, which are added in increasing `s` either by
//! [`split_k::sgemm_split_k_reduce`](super::split_k::sgemm_split_k_reduce), a second launch,
//! or, given tile counters, by the last block of each output tile in the same launch
//! ([`SlicePlanes`]). No float atomics (the counters are integers): the same bits run to
//! run, and the same bits either way.
//!
//! **Summation order** (what the CPU twins in the tests reproduce). [`gemv_small_k`]: each
//! output is `fma(a[r, i], b[i, c], acc)` for `i` in increasing order from `0.0`, the order
//! of every other rung. [`gemv_small_m`]: in slice `s`, warp `w` takes the depths
//! `[s·slice + w·part, s·slice + (w + 1)·part)` (`part = slice / 4`), an FMA chain in
//! increasing depth from `0.0`; the slice's value is `((p₀ + p₁) + p₂) + p₃`. [`gemv_small_n`]:
//! in slice `s`, lane `l` takes the depths `s·slice + KC·c + 4l + q` (`KC = 128` depths a
//! chunk, chunks `c` and then `q < 4` in increasing order), an FMA chain from `0.0`; the
//! slice's value is the butterfly sum of the 32 lanes (pairs at distance 16, 8, 4, 2, 1).
//! Then the slices, `((v₀ + v₁) + v₂) + …`.
//!
//! **Error bound.** Each output is a sum of `k` products in a fixed tree: an FMA chain per
//! warp part (small `m`), lane (small `n`) or output (small `k`), then adds. The f32 error of
//! such a tree is at most `D·2⁻²⁴·Σ|a||b|` to first order, `D` the most roundings on one
//! product's path: the FMA chain's length (at most `slice / 4` for [`gemv_small_m`],
//! `slice / 32` for [`gemv_small_n`], `k` for [`gemv_small_k`]), the in-block adds (3 for
//! [`gemv_small_m`]'s warps, 5 for [`gemv_small_n`]'s butterfly) and the slices' adds
//! (`slices − 1`). The host makes every slice but the last at least 16 deep and never longer
//! than `k` rounded up to 16 (`plan::gemv`), so `slices ≤ k/16 + 1` and
//! `D ≤ (k + 15)/4 + 3 + k/16 ≤ 2k` for every `k ≥ 4`; for `k ≤ 4` one warp (its first
//! four depths) or lane holds every product and the others add exact zeros, so `D ≤ k`.
//! Every check uses the
//! repository's bound, `k·2⁻²³·Σ|a||b|`
//! ([`Precision::dot_error_bound`](super::Precision::dot_error_bound)): this one with
//! `D = 2k`, which the fixed tree stays within. The TF32 and BF16 entries add their inputs'
//! rounding to it (`2u + u²` for a relative rounding `u` of each input), as that bound
//! does for their precisions; against the product of the rounded inputs they stay within
//! the f32 bound above.

use super::global::{is_aligned16, store_f32x2, store_f32x4};
use super::split_k::SlicePlanes;
use super::unroll::{inlined, unroll};
use super::{AsIs, Precision, Rounding, ToBf16, ToTf32};
use nvptx_device::catalogue::{DynamicShared, GridRule, KernelSpec, LaunchBounds};
use nvptx_device::intrinsics::{fma, load_f32x2_nc, load_f32x4_nc, load_u32_nc, load_u32x2_nc};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, Dim3, sync_threads};
use nvptx_device::warp;

/// Threads per block of every rung-16 kernel.
pub const THREADS: u32 = 128;
/// Warps per block.
pub const WARPS: u32 = THREADS / 32;
/// Columns of `out` per block of [`gemv_small_m`]: four per lane, all four warps on the same
/// columns.
pub const SMALL_M_COLS: u32 = 128;
/// Rows of `a` per warp of [`gemv_small_n`] (`R`) in most of its entries.
pub const SMALL_N_ROWS_PER_WARP: u32 = 4;
/// Rows of `a` per warp of `gemv_small_n1_r2`: twice the blocks for the same `m`, where
/// four rows a warp leave multiprocessors idle (1059 rows are 67 blocks of 16 for 132 SMs);
/// and of `gemv_small_n32`, whose `R·N` accumulators four rows would double.
pub const SMALL_N_R2_ROWS_PER_WARP: u32 = 2;
/// Depths of `a` a warp of [`gemv_small_n`] takes per step: four per lane.
pub const SMALL_N_CHUNK: u32 = 128;
/// Chunks of `a` in a lane's ring of registers in `gemv_small_n::<N, _>`, `D`: while it waits
/// on chunk `c`, the loads of `c + 1..c + D` are in flight too, `4·D` 16-byte loads of `a`
/// per lane. 4 up to `N = 4`; 2 above, where the `4·N` accumulators (and `b`'s staging) take
/// the registers a deeper ring would.
pub const fn small_n_depth(n: usize) -> u32 {
    if n <= 4 { SMALL_N_MAX_DEPTH } else { 2 }
}
/// The deepest [`small_n_depth`].
pub const SMALL_N_MAX_DEPTH: u32 = 4;
/// Depths of `b` a block of `gemv_small_n::<N, _>` (`N > 1`) stages in shared memory per
/// barrier pair: [`small_n_depth`] chunks.
pub const fn small_n_group(n: usize) -> u32 {
    small_n_depth(n) * SMALL_N_CHUNK
}
/// Columns of `out` per block of [`gemv_small_k`]: four per thread.
pub const SMALL_K_COLS: u32 = 4 * THREADS;
/// Rows of `out` per block of [`gemv_small_k`].
pub const SMALL_K_ROWS: u32 = 16;
/// How a slice of `k` must be aligned: a multiple of this many depths (four for each of
/// [`gemv_small_m`]'s four warps, so that every part starts 16-byte aligned), except the
/// last slice.
pub const SLICE_ALIGN: u32 = 16;

/// Which element type a rung-16 entry reads `a` and `b` as ([`Operand`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operands {
    /// f32.
    F32,
    /// BF16, its 16 bits as a `u16`.
    Bf16,
}

/// A rung-16 entry point as the simulator calls it, on operands of `E`:
/// `(a, b, out, ws, flags, m, n, k, slice)` (the small-k kernel ignores `ws`, `flags` and
/// `slice`).
#[cfg(not(target_arch = "nvptx64"))]
pub type GemvEntry<E> =
    unsafe fn(*const E, *const E, *mut f32, *mut f32, *mut u64, u32, u32, u32, u32);

/// A rung-16 entry point as the simulator calls it, of either operand type.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, Debug)]
pub enum GemvSim {
    F32(GemvEntry<f32>),
    Bf16(GemvEntry<u16>),
}

/// The element type of a rung-16 entry's `a` and `b`: f32, or BF16 (`u16`, its bits), each
/// element widened to f32 (exactly) as it is loaded, so that everything after the loads is
/// the same code. Four consecutive elements are one load where they are aligned to four
/// (16 bytes of f32, 8 of BF16), two loads where aligned to two; the BF16 entries move
/// half the bytes of the f32 ones.
pub trait Operand: Copy + 'static {
    /// Which it is.
    const KIND: Operands;
    /// The entry points' parameters with `a` and `b` of this type.
    const PARAMS: &'static [nvptx_device::catalogue::Param];

    /// One element's f32 value (exact).
    fn widen(self) -> f32;

    /// Reads `p[0..4]` by one load.
    ///
    /// # Safety
    /// `p[0..4]` is readable, nothing writes it during the kernel, and `p` is aligned to
    /// four elements (16 bytes of f32, 8 of BF16).
    unsafe fn load4_vec(p: *const Self) -> [f32; 4];

    /// Reads `p[0..4]` by two loads of two.
    ///
    /// # Safety
    /// `p[0..4]` is readable, nothing writes it during the kernel, and `p` is aligned to
    /// two elements.
    unsafe fn load2x2(p: *const Self) -> [f32; 4];

    /// Reads `p[0..4]`: one load if `vec` ([`load4_vec`](Self::load4_vec)), else the first
    /// `valid` one by one (zero past them).
    ///
    /// # Safety
    /// `p[0..valid]` is readable and nothing writes it during the kernel; if `vec`,
    /// `valid == 4` and `p` is aligned to four elements.
    #[inline(always)]
    unsafe fn load4(p: *const Self, valid: u32, vec: bool) -> [f32; 4] {
        if vec {
            // SAFETY: the caller's contract.
            unsafe { Self::load4_vec(p) }
        } else {
            let mut v = [0.0f32; 4];
            unroll!(4, |e| {
                if (e as u32) < valid {
                    // SAFETY: e < valid.
                    v[e] = unsafe { *p.add(e) }.widen();
                }
            });
            v
        }
    }
}

/// Whether `p` is aligned for a load of four elements.
#[inline(always)]
fn aligned4<E>(p: *const E) -> bool {
    p.addr().is_multiple_of(4 * core::mem::size_of::<E>())
}

/// Whether `p` is aligned for a load of two elements.
#[inline(always)]
fn aligned2<E>(p: *const E) -> bool {
    p.addr().is_multiple_of(2 * core::mem::size_of::<E>())
}

impl Operand for f32 {
    const KIND: Operands = Operands::F32;
    const PARAMS: &'static [nvptx_device::catalogue::Param] = nvptx_device::params!(
        a: *const f32, b: *const f32, out: *mut f32, ws: *mut f32, flags: *mut u64, m: u32,
        n: u32, k: u32, slice: u32
    );

    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }

    #[inline(always)]
    unsafe fn load4_vec(p: *const f32) -> [f32; 4] {
        // SAFETY: the caller's contract (16-byte aligned).
        unsafe { load_f32x4_nc(p) }
    }

    #[inline(always)]
    unsafe fn load2x2(p: *const f32) -> [f32; 4] {
        // SAFETY: the caller's contract (8-byte aligned).
        let (lo, hi) = unsafe { (load_f32x2_nc(p), load_f32x2_nc(p.add(2))) };
        [lo[0], lo[1], hi[0], hi[1]]
    }
}

/// The two BF16 values of a 4-byte word, the first in its low half, as f32s (exact).
#[inline(always)]
fn widen_bf16x2(w: u32) -> [f32; 2] {
    [f32::from_bits(w << 16), f32::from_bits(w & 0xffff_0000)]
}

impl Operand for u16 {
    const KIND: Operands = Operands::Bf16;
    const PARAMS: &'static [nvptx_device::catalogue::Param] = nvptx_device::params!(
        a: *const u16, b: *const u16, out: *mut f32, ws: *mut f32, flags: *mut u64, m: u32,
        n: u32, k: u32, slice: u32
    );

    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits(u32::from(self) << 16)
    }

    #[inline(always)]
    unsafe fn load4_vec(p: *const u16) -> [f32; 4] {
        // SAFETY: the caller's contract (8-byte aligned).
        let [lo, hi] = unsafe { load_u32x2_nc(p.cast()) };
        let (lo, hi) = (widen_bf16x2(lo), widen_bf16x2(hi));
        [lo[0], lo[1], hi[0], hi[1]]
    }

    #[inline(always)]
    unsafe fn load2x2(p: *const u16) -> [f32; 4] {
        // SAFETY: the caller's contract (4-byte aligned).
        let (lo, hi) = unsafe { (load_u32_nc(p.cast()), load_u32_nc(p.add(2).cast())) };
        let (lo, hi) = (widen_bf16x2(lo), widen_bf16x2(hi));
        [lo[0], lo[1], hi[0], hi[1]]
    }
}

/// A lane's four elements of a row of `b` as [`small_m_part`] loads them (`valid` of them,
/// zero past): `p[0..4]` by one load if `VB = 4`, two if `VB = 2`; if `VB` is [`STRIDED`],
/// `p[32·e]` for `e < 4`, one by one, so that each of the warp's four loads reads 32
/// consecutive elements.
///
/// # Safety
/// The elements named above (the first `valid` of them) are readable and nothing writes
/// them during the kernel; for `VB = 4` or `2`, `valid == 4` and `p` is aligned to four or
/// two elements.
#[inline(always)]
unsafe fn load_b<E: Operand, const VB: u32>(p: *const E, valid: u32) -> [f32; 4] {
    const { assert!(VB == 4 || VB == 2 || VB == STRIDED) };
    // SAFETY: the caller's contract.
    unsafe {
        match VB {
            4 => E::load4(p, 4, true),
            2 => E::load2x2(p),
            _ => {
                let mut v = [0.0f32; 4];
                unroll!(4, |e| {
                    if (e as u32) < valid {
                        v[e] = (*p.add(32 * e)).widen();
                    }
                });
                v
            }
        }
    }
}

/// [`load_b`]'s `VB` where a lane's four columns are 32 apart: lane `l` of
/// [`gemv_small_m`]'s block at column `c₀` owns columns `c₀ + l + 32·e`, where the rows of
/// `b` are not 8-byte aligned (an odd `n`) and in the last block of columns. Each of a
/// warp's four loads of a row then reads 128 consecutive bytes, where four consecutive
/// columns a lane read 4 bytes of every 16 per load, four times the cache lines for the
/// same bytes.
const STRIDED: u32 = 0;

/// Four inputs rounded to `Q`'s precision.
#[inline(always)]
fn round4<Q: Rounding>(mut v: [f32; 4]) -> [f32; 4] {
    unroll!(4, |e| v[e] = Q::round(v[e]));
    v
}

/// `L` groups of four inputs rounded to `Q`'s precision, in place (a fully unrolled loop:
/// `map` over a longer array left it in local memory).
#[inline(always)]
fn round_all<Q: Rounding, const L: usize>(v: &mut [[f32; 4]; L]) {
    unroll!(L, |u| v[u] = round4::<Q>(v[u]));
}

/// Rows of `a` (`m × k`) times `b` (`k × n`), `M` rows at a time: this block's group of `M`
/// rows (`blockIdx.z`; the last group takes what is left), its 128 columns and slice
/// `blockIdx.y` of `k` (`slice` depths, a multiple of [`SLICE_ALIGN`]), into `out` (`m × n`)
/// if the launch has one slice, else into plane `blockIdx.y` of `ws` (`slices · m · n`
/// floats), the planes then added by the reduction launch or, with `flags`, by the last
/// block of each tile ([`SlicePlanes`]). One group (`m ≤ M`) streams `b` once; a tiny
/// output under a long `k` (33 × 33, say) takes a few groups, `b` streamed once per group. See the [module](self) for the
/// order of the sums.
///
/// Launch [`THREADS`] threads per block on a `cdiv(n, 128) × slices × cdiv(m, M)` grid.
///
/// # Safety
/// `a`, `b` hold `m·k` and `k·n` floats that nothing writes during the kernel, `out` `m·n`,
/// `ws` and `flags` as [`SlicePlanes`] says (`ws` unused with one slice);
/// `m ≥ 1`, `n ≥ 1`, `slice ≥ 1`, the grid's y extent `cdiv(k, slice)` (at least 1), its z
/// extent `cdiv(m, M)`, and every product of sizes fits `u32`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv_small_m<const M: usize, E: Operand, Q: Rounding>(
    a: *const E, b: *const E, out: *mut f32, ws: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    slice: u32,
) {
    let red = shared_array!(f32; WARPS as usize * M * SMALL_M_COLS as usize);
    let turn = shared_array!(f32; 1);
    let planes = SlicePlanes::new(out, ws, flags, m, n);
    // This block's rows: `rows` of them from row `g0`.
    let g0 = thread::block_idx_z() * M as u32;
    let rows = m.saturating_sub(g0).min(M as u32);
    // SAFETY: g0 < m (the grid's z extent), so row g0 starts inside a.
    let a = unsafe { a.add(g0 as usize * k as usize) };
    let t = thread::thread_idx_x();
    let (w, lane) = (t / 32, t % 32);
    let c0 = thread::block_idx_x() * SMALL_M_COLS;
    let s = thread::block_idx_y();
    let k0 = s * slice;
    let k1 = k.min(k0 + slice);
    let part = slice / WARPS;
    let (p0, p1) = ((k0 + w * part).min(k1), (k0 + (w + 1) * part).min(k1));
    // Inside the matrix, every lane owns four consecutive columns, read by 16-byte loads
    // where b's rows are 16-byte aligned and by two 8-byte ones where they are 8-byte
    // aligned (n even). Else, and in the last block of columns, columns 32 apart
    // ([`STRIDED`]). The choice is the block's, so that the sums below find each column
    // where its owner left it: column `c0 + t` at `t` of each warp's row of `red`.
    let full = c0 + SMALL_M_COLS <= n;
    let vec_b = full && n.is_multiple_of(4) && aligned4(b);
    let pair_b = full && n.is_multiple_of(2) && aligned2(b);
    let strided = !(vec_b || pair_b);
    let (c, cols) = if strided {
        let c = c0 + lane;
        (c, n.saturating_sub(c).div_ceil(32).min(4))
    } else {
        (c0 + 4 * lane, 4)
    };
    // a's rows by 16-byte loads where they are aligned (every part starts at a multiple of
    // 4).
    let vec_a = k.is_multiple_of(4) && aligned4(a);
    let mut acc = [[0.0f32; 4]; M];
    // SAFETY: the caller's contract, and the group's rows start inside a (above), at least
    // one of them (g0 < m); the lane's columns are inside b (cols of them where strided).
    unsafe {
        if vec_b {
            small_m_part::<M, 4, E, Q>(&mut acc, a, b, n, k, c, cols, rows, (p0, p1), vec_a);
        } else if pair_b {
            small_m_part::<M, 2, E, Q>(&mut acc, a, b, n, k, c, cols, rows, (p0, p1), vec_a);
        } else if cols > 0 {
            small_m_part::<M, STRIDED, E, Q>(&mut acc, a, b, n, k, c, cols, rows, (p0, p1), vec_a);
        }
    }
    // The four warps' partial sums of each output, added in warp order.
    unroll!(M, |i| {
        let row = (w * M as u32 + i as u32) * SMALL_M_COLS;
        if strided {
            unroll!(4, |e| red.set(row + 32 * e as u32 + lane, acc[i][e]));
        } else {
            // SAFETY: row + 4·lane + 4 <= 4·M·128, a multiple of 4.
            unsafe { red.set4_unchecked(row + 4 * lane, acc[i]) };
        }
    });
    sync_threads();
    let col = c0 + t;
    let dst = planes.dst();
    // This thread's outputs: rows g0 + i (i < rows) of column col.
    let at = inlined!(|i: usize| (g0 as usize + i) * n as usize + col as usize);
    if col < n {
        unroll!(M, |i| {
            if (i as u32) < rows {
                let mut v = red.get(i as u32 * SMALL_M_COLS + t);
                unroll!(3, |x| {
                    v += red.get(((x as u32 + 1) * M as u32 + i as u32) * SMALL_M_COLS + t);
                });
                // SAFETY: row g0 + i < m, column col < n of this slice's plane (or of out).
                unsafe { *dst.add(at(i)) = v };
            }
        });
    }
    // The tile: this group of rows' block of columns.
    let tile = thread::block_idx_z() * thread::grid_dim_x() + thread::block_idx_x();
    // SAFETY: every thread is here, after its stores; the host gives each tile its word
    // (SlicePlanes); turn is this kernel's own.
    if unsafe { planes.last_of_tile(tile, turn) } {
        let mut idx = [0usize; M];
        let mut valid = [false; M];
        unroll!(M, |i| {
            idx[i] = at(i);
            valid[i] = col < n && (i as u32) < rows;
        });
        // SAFETY: the outputs stored above by every slice of this tile, this thread's.
        unsafe { planes.store_sums(idx, valid) };
    }
}

/// One lane's part of [`gemv_small_m`]: `acc[i][e] += a[i, p]·b[p, c + e]` (`c + 32·e`
/// where `VB` is [`STRIDED`]) for the depths `p` of `part` in increasing order, `i < rows`,
/// `e < cols` (the rows `i >= rows` of `acc` get the products of row `rows − 1`, for the
/// caller to drop); `b`'s four floats of a row by one 16-byte load if `VB = 4`, two 8-byte
/// ones if `VB = 2`, one by one if [`STRIDED`] (a separate instantiation each, so the hot
/// loop has no branch per load); `a`'s by 16-byte loads where `vec_a`.
///
/// # Safety
/// `rows >= 1`; `a` holds `rows` rows of `k` and `b` `k` rows of `n` floats that nothing
/// writes during the kernel; `part` is inside `0..k` and starts at a multiple of 4; the
/// lane's `cols` columns (above) are inside `b`; if `VB = 4`, `cols == 4`, `n % 4 == 0`
/// and `b` is 16-byte aligned; if `VB = 2`, `cols == 4`, `n % 2 == 0` and `b` is 8-byte
/// aligned; if `vec_a`, `k % 4 == 0` and `a` is 16-byte aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn small_m_part<const M: usize, const VB: u32, E: Operand, Q: Rounding>(
    acc: &mut [[f32; 4]; M], a: *const E, b: *const E, n: u32, k: u32, c: u32, cols: u32,
    rows: u32, (p0, p1): (u32, u32), vec_a: bool,
) {
    // Eight rows of b per step: eight 16-byte loads in flight per lane. Every accumulator
    // row runs, rows past `rows` on a copy of the last row of `a` (their sums are never
    // stored): no branch between the loads of `a` and their FMAs, so all of a step's loads
    // are issued before the first FMA waits. (Behind a branch per row, each row's loads
    // waited for the previous row's FMAs: one L2 round trip a row, the kernel's longest
    // stall on 9 × 583 × 4591.)
    let src_row = inlined!(|i: usize| (i as u32).min(rows - 1) as usize);
    let mut p = p0;
    while p + 8 <= p1 {
        let mut bq = [[0.0f32; 4]; 8];
        unroll!(8, |j| {
            // SAFETY: row p + j < k, columns c..c + cols inside b; aligned as VB says.
            bq[j] = unsafe {
                load_b::<E, VB>(
                    b.add((p + j as u32) as usize * n as usize + c as usize),
                    cols,
                )
            };
        });
        // Rounded once all eight are in flight.
        round_all::<Q, 8>(&mut bq);
        unroll!(M, |i| {
            let row = src_row(i) * k as usize + p as usize;
            // SAFETY: depths p..p + 8 < k of a row < rows; aligned where vec_a (p % 4 == 0).
            let (lo, hi) = unsafe {
                (
                    E::load4(a.add(row), 4, vec_a),
                    E::load4(a.add(row + 4), 4, vec_a),
                )
            };
            let (lo, hi) = (round4::<Q>(lo), round4::<Q>(hi));
            unroll!(4, |j| {
                unroll!(4, |e| {
                    acc[i][e] = fma(lo[j], bq[j][e], acc[i][e]);
                });
            });
            unroll!(4, |j| {
                unroll!(4, |e| {
                    acc[i][e] = fma(hi[j], bq[4 + j][e], acc[i][e]);
                });
            });
        });
        p += 8;
    }
    while p < p1 {
        // SAFETY: row p < k, columns c..c + cols inside b; aligned as VB says.
        let bq = unsafe { load_b::<E, VB>(b.add(p as usize * n as usize + c as usize), cols) };
        let bq = round4::<Q>(bq);
        unroll!(M, |i| {
            // SAFETY: depth p < k of a row < rows.
            let x = Q::round(unsafe { *a.add(src_row(i) * k as usize + p as usize) }.widen());
            unroll!(4, |e| {
                acc[i][e] = fma(x, bq[e], acc[i][e]);
            });
        });
        p += 1;
    }
}

/// One chunk of a lane's operands of [`gemv_small_n`], loaded ahead of its use: its
/// four depths of each of the warp's `R` rows of `a` and, for `N = 1`, of `b` (zero where not
/// loaded).
#[derive(Clone, Copy)]
struct SmallNChunk<const R: usize> {
    a: [[f32; 4]; R],
    b: [f32; 4],
}

/// `a` (`m × k`) times `n ≤ N` columns (`b`, `k × n`): this block's `4·R` rows (`R` per
/// warp) and slice `blockIdx.y` of `k` (`slice` depths, a multiple of [`SLICE_ALIGN`]), into
/// `out` (`m × n`) if the launch has one slice, else into plane `blockIdx.y` of `ws`
/// (`slices · m · n` floats), added as [`gemv_small_m`]'s are. See the [module](self) for
/// how it streams `a` and reads `b`
/// (chunk `c + D`'s loads issued into chunk `c`'s registers once it is used; `b` staged
/// [`small_n_group`] depths at a time where `N > 1`), and for the order of the sums.
///
/// Launch [`THREADS`] threads per block on a `cdiv(m, 4·R) × slices` grid. Each row's sum is
/// the same whatever `R`: a lane's FMA chain over its depths, then the warp's butterfly.
///
/// # Safety
/// As [`gemv_small_m`], with `m ≥ 1` and `1 ≤ n ≤ N`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv_small_n<const N: usize, const R: usize, E: Operand, Q: Rounding>(
    a: *const E, b: *const E, out: *mut f32, ws: *mut f32, flags: *mut u64, m: u32, n: u32, k: u32,
    slice: u32,
) {
    // The last slice's sums: at most two outputs a thread.
    const { assert!(WARPS as usize * R * N <= 2 * THREADS as usize) };
    let turn = shared_array!(f32; 1);
    let planes = SlicePlanes::new(out, ws, flags, m, n);
    const CHUNK: u32 = SMALL_N_CHUNK;
    let (depth, group) = (small_n_depth(N) as usize, small_n_group(N));
    // b's rows of a group, transposed: column j's depths at j·group (not declared for N = 1).
    let bt = if N > 1 {
        Some(shared_array!(f32; N * small_n_group(N) as usize))
    } else {
        None
    };
    let t = thread::thread_idx_x();
    let (w, lane) = (t / 32, t % 32);
    let r0 = (thread::block_idx_x() * WARPS + w) * R as u32;
    let s = thread::block_idx_y();
    let k0 = s * slice;
    let k1 = k.min(k0 + slice);
    let vec_b = aligned4(b);
    // 16-byte loads of a lane's chunks where its four depths are inside the slice, `a`'s rows
    // are aligned and (N = 1) so is `b`; else scalar loads of the depths inside.
    let vec = k.is_multiple_of(4) && aligned4(a) && (N > 1 || vec_b);
    // How many of this lane's four depths of chunk `p` (`p < k1`) are inside the slice.
    let inside = inlined!(|p: u32| k1.saturating_sub(p + 4 * lane).min(4));
    // This lane's loads of chunk `p` (`p < k1`). The 16-byte loads take the last row of `a`
    // in place of the warp's rows past it (whose sums are never stored), so that they are
    // issued with no branch between them.
    let fetch = inlined!(|p: u32| {
        let d = p + 4 * lane;
        let valid = inside(p);
        let mut c = SmallNChunk {
            a: [[0.0; 4]; R],
            b: [0.0; 4],
        };
        if vec && valid == 4 {
            unroll!(R, |r| {
                let row = (r0 + r as u32).min(m - 1);
                // SAFETY: row < m, depths d..d + 4 <= k1 <= k; 16-byte aligned: a is, rows
                // are k floats (k % 4 == 0) and d % 4 == 0 (slices and chunks start at
                // multiples of 4).
                c.a[r] =
                    unsafe { E::load4(a.add(row as usize * k as usize + d as usize), 4, true) };
            });
            if N == 1 {
                // SAFETY: n = 1: b's depths d..d + 4 <= k are its floats d..d + 4; 16-byte
                // aligned (vec: b is, and d % 4 == 0).
                c.b = unsafe { E::load4(b.add(d as usize), 4, true) };
            }
        } else if valid > 0 {
            unroll!(R, |r| {
                if r0 + (r as u32) < m {
                    // SAFETY: row r0 + r < m, depths d..d + valid < k.
                    c.a[r] = unsafe {
                        E::load4(
                            a.add((r0 as usize + r) * k as usize + d as usize),
                            valid,
                            false,
                        )
                    };
                }
            });
            if N == 1 {
                // SAFETY: n = 1: b's depths d..d + valid < k are its floats d..d + valid.
                c.b = unsafe { E::load4(b.add(d as usize), valid, false) };
            }
        }
        c
    });
    // The first `depth` entries.
    let mut ring = [SmallNChunk {
        a: [[0.0; 4]; R],
        b: [0.0; 4],
    }; SMALL_N_MAX_DEPTH as usize];
    unroll!(depth, |i| {
        if k1 - k0 > i as u32 * CHUNK {
            ring[i] = fetch(k0 + i as u32 * CHUNK);
        }
    });
    let mut acc = [[0.0f32; N]; R];
    let mut g = k0;
    while g < k1 {
        if let Some(bt) = bt {
            // SAFETY: b holds k rows of 1 <= n <= N floats (the caller's contract), and
            // depths g..g + min(group, k1 - g) < k; g is a multiple of 4 (slices and groups
            // start at multiples of 4); vec_b only where b is 16-byte aligned.
            unsafe { small_n_stage::<N, E, Q>(bt, b, n, g, (k1 - g).min(group), t, vec_b) };
            sync_threads();
        }
        unroll!(depth, |i| {
            if k1 - g > i as u32 * CHUNK {
                let p = g + i as u32 * CHUNK;
                let (c, valid) = (ring[i], inside(p));
                // Rounded here, at their use, not as they are fetched: that would wait on
                // loads the ring keeps in flight. (`b` staged in shared memory is rounded
                // as it is staged.)
                let mut c = c;
                round_all::<Q, R>(&mut c.a);
                if N == 1 {
                    c.b = round4::<Q>(c.b);
                }
                // The chunk's four depths of column j (j < n) from 4·lane on.
                let bq = inlined!(|j: usize| match bt {
                    // SAFETY: j < N, and i·CHUNK + 4·lane + 4 <= group, a multiple of 4: inside
                    // bt and aligned; all four words were staged this group (depths past the
                    // slice as zeros).
                    Some(bt) => unsafe {
                        bt.get4_unchecked(j as u32 * group + i as u32 * CHUNK + 4 * lane)
                    },
                    None => c.b,
                });
                if valid == 4 {
                    unroll!(N, |j| {
                        if (j as u32) < n {
                            let bq = bq(j);
                            unroll!(R, |r| {
                                unroll!(4, |q| {
                                    acc[r][j] = fma(c.a[r][q], bq[q], acc[r][j]);
                                });
                            });
                        }
                    });
                } else if valid > 0 {
                    // The slice's last depths: only those inside it (no FMA of a zero pad,
                    // which would turn an accumulated −0 into +0).
                    unroll!(N, |j| {
                        if (j as u32) < n {
                            let bq = bq(j);
                            unroll!(4, |q| {
                                if (q as u32) < valid {
                                    unroll!(R, |r| {
                                        acc[r][j] = fma(c.a[r][q], bq[q], acc[r][j]);
                                    });
                                }
                            });
                        }
                    });
                }
                // Chunk p's registers are free: chunk p + group's loads land in them.
                if k1 - p > group {
                    ring[i] = fetch(p + group);
                }
            }
        });
        if bt.is_some() {
            sync_threads();
        }
        g = g.saturating_add(group);
    }
    let dst = planes.dst();
    unroll!(R, |r| {
        unroll!(N, |j| {
            // SAFETY: all 32 lanes of the warp are here (no lane has returned).
            let v = unsafe { warp::sum_f32(acc[r][j]) };
            let row = r0 + r as u32;
            if lane == ((r * N + j) % 32) as u32 && row < m && (j as u32) < n {
                // SAFETY: row < m, column j < n of this slice's plane (or of out).
                unsafe { *dst.add(row as usize * n as usize + j) = v };
            }
        });
    });
    // SAFETY: every thread is here, after its stores; the host gives each block of rows
    // its word (SlicePlanes); turn is this kernel's own.
    if unsafe { planes.last_of_tile(thread::block_idx_x(), turn) } {
        // The block's rows are consecutive, so its outputs are one run of `out`: thread t
        // adds those at t and t + THREADS of it.
        let first = thread::block_idx_x() * WARPS * R as u32;
        let outputs = (m.min(first + WARPS * R as u32) - first) * n;
        let mut idx = [0usize; 2];
        let mut valid = [false; 2];
        unroll!(2, |e| {
            let o = t + e as u32 * THREADS;
            idx[e] = (first * n + o) as usize;
            valid[e] = o < outputs;
        });
        // SAFETY: outputs of this block's rows, stored above by every slice, this thread's.
        unsafe { planes.store_sums(idx, valid) };
    }
}

/// Stages `b`'s rows `p..p + depth` for [`gemv_small_n`] (`depth · n` consecutive floats
/// from `b[p·n]`) into `bt`, transposed: depth `p + i` of column `j` at `bt[j·G + i]`, `G` =
/// [`small_n_group`]`(N)`, and zeros at the depths from `depth` to the next multiple of 4.
/// Thread `t` takes the 16-byte pieces `t, t + 128, …` of the run, by one 16-byte load each
/// where `vec_b` (else by scalar loads), all loaded before any is stored.
///
/// # Safety
/// `b` holds rows `p..p + depth` of `n` floats that nothing writes during the kernel;
/// `1 ≤ n ≤ N`, `depth ≤ G`, `p` is a multiple of 4, and if `vec_b`, `b` is 16-byte
/// aligned.
#[inline(always)]
unsafe fn small_n_stage<const N: usize, E: Operand, Q: Rounding>(
    bt: SharedSlice<f32>, b: *const E, n: u32, p: u32, depth: u32, t: u32, vec_b: bool,
) {
    let group = small_n_group(N);
    // Pieces per thread: N·G / (4·THREADS), at most N (the length of `v`) while G <= 4·THREADS.
    const { assert!(SMALL_N_MAX_DEPTH * SMALL_N_CHUNK <= 4 * THREADS) };
    let pieces = N * group as usize / (4 * THREADS as usize);
    // The run's floats, then zeros up to a whole quad of depths (`padded ≤ G·n`), so that
    // a lane's four depths of the slice's last chunk are all written this group.
    let (total, padded) = (depth * n, depth.next_multiple_of(4) * n);
    // SAFETY: row p is inside b (the caller's contract).
    let run = unsafe { b.add(p as usize * n as usize) };
    let mut v = [[0.0f32; 4]; N];
    unroll!(pieces, |u| {
        let e = 4 * (t + u as u32 * THREADS);
        if e < total {
            let valid = (total - e).min(4);
            // SAFETY: floats e..e + valid < depth·n of the run; 16-byte aligned where vec_b
            // and the four are inside (p·n and e are multiples of 4).
            v[u] = unsafe { E::load4(run.add(e as usize), valid, vec_b && valid == 4) };
        }
    });
    round_all::<Q, N>(&mut v);
    // (`n ≥ 1`: dividing by `max(n, 1)` leaves no division-by-zero panic branch, which
    // would part the threads before the barrier.)
    let nz = n.max(1);
    unroll!(pieces, |u| {
        let e = 4 * (t + u as u32 * THREADS);
        if e < padded {
            let (mut i, mut j) = (e / nz, e % nz);
            unroll!(4, |x| {
                if e + (x as u32) < padded {
                    // SAFETY: float e + x < padded is depth i < depth rounded up to 4 <= G
                    // (a multiple of 4) of column j < n <= N: inside bt (N·G floats). (Zero
                    // past `total`: `v` holds zeros past what was loaded.)
                    unsafe { bt.set_unchecked(j * group + i, v[u][x]) };
                    j += 1;
                    if j == nz {
                        (i, j) = (i + 1, 0);
                    }
                }
            });
        }
    });
}

/// `out = a · b` for `k ≤ K`: this block's 16 rows and 512 columns of `out` (four per
/// thread), each output the FMA chain over `i` in increasing order from `0.0` (the bits
/// of every other rung). The block's rows of `a` are staged in shared memory first (one
/// barrier); every thread of the block calls it.
///
/// Launch [`THREADS`] threads per block on a `cdiv(n, 512) × cdiv(m, 16)` grid.
///
/// # Safety
/// `a`, `b`, `out` hold `m·k`, `k·n` and `m·n` floats, `out` overlapping neither; `k ≤ K`;
/// every product of sizes fits `u32`.
#[inline(always)]
pub unsafe fn gemv_small_k<const K: usize, E: Operand, Q: Rounding>(
    a: *const E, b: *const E, out: *mut f32, m: u32, n: u32, k: u32,
) {
    let t = thread::thread_idx_x();
    let c = thread::block_idx_x() * SMALL_K_COLS + 4 * t;
    let r0 = thread::block_idx_y() * SMALL_K_ROWS;
    let cols = n.saturating_sub(c).min(4);
    let vec = cols == 4 && n.is_multiple_of(4) && aligned4(b) && is_aligned16(out);
    // Else 8-byte loads and stores where the rows are 8-byte aligned (n even): half the
    // instructions of scalar ones.
    let pair =
        !vec && cols == 4 && n.is_multiple_of(2) && aligned2(b) && out.addr().is_multiple_of(8);
    // This thread's columns of b first, in flight while a is staged.
    let mut bq = [[0.0f32; 4]; K];
    unroll!(K, |i| {
        if cols > 0 && (i as u32) < k {
            // SAFETY: row i < k, columns c..c + cols inside b; 8-byte aligned where pair.
            bq[i] = unsafe {
                let p = b.add(i * n as usize + c as usize);
                if pair {
                    load_b::<E, 2>(p, cols)
                } else {
                    E::load4(p, cols, vec)
                }
            };
        }
    });
    // The block's rows of `a`, rounded, zero past `m` and `k`, staged in shared memory by
    // one round of loads (`SMALL_K_ROWS · K` floats, the table's static shared floats):
    // every thread needs all of them, and loaded by each thread row by row, each row's
    // loads waited for the previous row's stores (a round trip a row).
    let a_rows = shared_array!(f32; SMALL_K_ROWS as usize * K);
    let rows_here = m.saturating_sub(r0).min(SMALL_K_ROWS);
    let staged = SMALL_K_ROWS * K as u32;
    for j in 0..staged.div_ceil(THREADS) {
        let e = t + j * THREADS;
        if e < staged {
            let (r, i) = (e / K as u32, e % K as u32);
            let v = if r < rows_here && i < k {
                // SAFETY: row r0 + r < m, depth i < k.
                Q::round(unsafe { *a.add((r0 + r) as usize * k as usize + i as usize) }.widen())
            } else {
                0.0
            };
            a_rows.set(e, v);
        }
    }
    sync_threads();
    if cols == 0 {
        return;
    }
    // Rounded where they are used, not as they are loaded (a `cvt` would wait for them).
    round_all::<Q, K>(&mut bq);
    // This thread's four outputs of `row` (r0 <= row < r0 + rows_here).
    let outputs = |row: u32| {
        let mut ar = [0.0f32; K];
        unroll!(K, |i| ar[i] = a_rows.get((row - r0) * K as u32 + i as u32));
        let mut v = [0.0f32; 4];
        unroll!(K, |i| {
            if (i as u32) < k {
                unroll!(4, |e| {
                    v[e] = fma(ar[i], bq[i][e], v[e]);
                });
            }
        });
        v
    };
    let rows = r0..r0 + rows_here;
    // Two loops rather than a branch per store: with one loop LLVM merged the 16-byte store
    // with the scalar ones into narrower stores.
    if vec {
        for row in rows {
            // SAFETY: row < m, columns c..c + 4 <= n, 16-byte aligned (vec).
            unsafe {
                store_f32x4(
                    out.add(row as usize * n as usize + c as usize),
                    outputs(row),
                )
            };
        }
    } else if pair {
        for row in rows {
            let v = outputs(row);
            // SAFETY: row < m, columns c..c + 4 <= n, 8-byte aligned (pair: n, c and out).
            unsafe {
                let p = out.add(row as usize * n as usize + c as usize);
                store_f32x2(p, [v[0], v[1]]);
                store_f32x2(p.add(2), [v[2], v[3]]);
            }
        }
    } else {
        for row in rows {
            let v = outputs(row);
            unroll!(4, |e| {
                if (e as u32) < cols {
                    // SAFETY: row < m, column c + e < n.
                    unsafe { *out.add(row as usize * n as usize + c as usize + e) = v[e] };
                }
            });
        }
    }
}

/// Which operand a rung-16 kernel is built around.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GemvClass {
    /// [`gemv_small_m`]: `m ≤ bound`.
    SmallM,
    /// [`gemv_small_n`]: `n ≤ bound`.
    SmallN,
    /// [`gemv_small_k`]: `k ≤ bound`.
    SmallK,
}

impl GemvClass {
    /// Whether its kernel takes `k` in slices (`blockIdx.y`): all but [`gemv_small_k`], whose
    /// `k` is at most its bound.
    pub const fn splits(self) -> bool {
        !matches!(self, Self::SmallK)
    }
}

/// One rung-16 configuration.
#[derive(Clone, Copy, Debug)]
pub struct GemvConfig {
    /// The name on command lines and in reports: the entry's, with dashes.
    pub name: &'static str,
    pub class: GemvClass,
    /// The most rows (small m), columns (small n) or depths (small k) it takes.
    pub bound: u32,
    /// Rows of `a` per warp of a small-`n` configuration ([`SMALL_N_ROWS_PER_WARP`] or
    /// [`SMALL_N_R2_ROWS_PER_WARP`]); 0 for the other classes.
    pub rows_per_warp: u32,
    /// The precision of its products: what it rounds each f32 input to before its FMA
    /// ([`Rounding`]; FP32 entries take the inputs as they are, the `-tf32` and `-bf16` ones
    /// round them), or BF16 for the entries that read BF16 operands.
    pub precision: Precision,
    /// The element type of `a` and `b` ([`Operand`]).
    pub operands: Operands,
    /// How to launch it: the grid's x extent (see each kernel), y from the host.
    pub spec: KernelSpec,
    /// The entry point as the simulator calls it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: GemvSim,
}

/// The precision of an entry that reads `operands` and rounds f32 inputs to `rounded`:
/// BF16 operands are BF16 products whatever the (identity) rounding.
const fn precision_of(operands: Operands, rounded: Precision) -> Precision {
    match operands {
        Operands::F32 => rounded,
        Operands::Bf16 => Precision::Bf16,
    }
}

/// [`gemv_small_k`] with the entries' parameter list (`slice` unused).
///
/// # Safety
/// As [`gemv_small_k`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gemv_small_k_entry<const K: usize, E: Operand, Q: Rounding>(
    a: *const E, b: *const E, out: *mut f32, _ws: *mut f32, _flags: *mut u64, m: u32, n: u32,
    k: u32, _slice: u32,
) {
    // SAFETY: the caller's contract.
    unsafe { gemv_small_k::<K, E, Q>(a, b, out, m, n, k) }
}

/// The launch description of a configuration: [`THREADS`] threads, a tile rule whose
/// `cols` is the kernel's x extent per block (the host passes the extent it tiles: `n` for
/// small m and small k, `m` for small n, `rows_per_warp` rows a warp) and whose `rows`
/// tiles the y extent (the slices: 1; small k: [`SMALL_K_ROWS`] rows of `out`), and launch
/// bounds of `min_blocks` blocks per multiprocessor where given.
const fn spec(
    entry: &'static str, params: &'static [nvptx_device::catalogue::Param], class: GemvClass,
    static_floats: usize, rows_per_warp: u32, min_blocks: Option<u32>,
) -> KernelSpec {
    let (rows, cols) = match class {
        GemvClass::SmallM => (1, SMALL_M_COLS),
        GemvClass::SmallN => (1, WARPS * rows_per_warp),
        GemvClass::SmallK => (SMALL_K_ROWS, SMALL_K_COLS),
    };
    KernelSpec {
        entry,
        params,
        block: Dim3::x(THREADS),
        grid: GridRule::Tiles { rows, cols },
        static_shared_bytes: (static_floats * 4) as u32,
        dynamic_shared: DynamicShared::None,
        launch_bounds: match min_blocks {
            Some(min_blocks) => Some(LaunchBounds {
                max_threads: THREADS,
                min_blocks,
            }),
            None => None,
        },
        cluster: 1,
    }
}

/// An optional number of a [`gemv_configs!`] line, 0 where the line has none.
const fn or_zero(x: Option<u32>) -> u32 {
    match x {
        Some(x) => x,
        None => 0,
    }
}

/// A simulator entry of a [`gemv_configs!`] line, by its operand type.
#[cfg(not(target_arch = "nvptx64"))]
macro_rules! gemv_sim {
    (f32, $entry:path) => {
        GemvSim::F32($entry)
    };
    (u16, $entry:path) => {
        GemvSim::Bf16($entry)
    };
}

/// `Some(x)`, or `None` without an argument: an optional part of a [`gemv_configs!`] line.
macro_rules! optional {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// The rung-16 table, one line per entry point (as [`gemv_variants!`] writes them): `name =
/// class<bound> => kernel, static shared floats`, `rows(r)` for a small-`n` kernel's rows of `a` per warp (its second
/// generic parameter, `kernel::<bound, r>`),
/// `min_blocks(b)` for launch bounds of `b` blocks of [`THREADS`] per multiprocessor, and
/// `input(E) round(Q)`: the [`Operand`] type of `a` and `b` and the [`Rounding`] of its
/// inputs (the kernel's last two generic parameters).
macro_rules! gemv_configs {
    ($( $entry:ident = $class:ident<$bound:literal> => $kernel:ident, $floats:expr
        $(, rows($rows:expr))? $(, min_blocks($mb:expr))?, input($e:ident) round($q:ident); )*) => {
        #[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            #[allow(clippy::too_many_arguments)]
            $entry(a: *const $e, b: *const $e, out: *mut f32, ws: *mut f32, flags: *mut u64,
                m: u32, n: u32, k: u32, slice: u32)
                => $kernel::<$bound $(, { $rows as usize })?, $e, $q>
                $(, launch_bounds(THREADS, $mb))?;
        )*}

        /// Every rung-16 configuration, each class by increasing bound.
        pub const GEMV_CONFIGS: &[GemvConfig] = &[$(GemvConfig {
            name: dashed!(stringify!($entry)),
            class: GemvClass::$class,
            bound: $bound,
            rows_per_warp: or_zero(optional!($($rows)?)),
            precision: precision_of(<$e as Operand>::KIND, <$q as Rounding>::PRECISION),
            operands: <$e as Operand>::KIND,
            spec: spec(
                stringify!($entry),
                <$e as Operand>::PARAMS,
                GemvClass::$class,
                $floats,
                or_zero(optional!($($rows)?)),
                optional!($($mb)?),
            ),
            #[cfg(not(target_arch = "nvptx64"))]
            sim: gemv_sim!($e, entry::$entry),
        },)*];
    };
}

/// Shared floats of a small-`m` or small-`n` kernel's `turn`: the word through which thread 0
/// tells the block that it adds its tile's planes ([`SlicePlanes::last_of_tile`]).
const TURN: usize = 1;

/// The rung-16 table by configuration: one line per kernel configuration, naming its four
/// entry points `[fp32, tf32, bf16, bf16 operands]` before the rest of a [`gemv_configs!`]
/// line, which is written once: the f32-operand entries as they are (`AsIs`), rounding to
/// TF32 (`ToTf32`) and to BF16 (`ToBf16`), and the entry of BF16 operands (`u16`, `AsIs`).
macro_rules! gemv_variants {
    ($( [$fp32:ident, $tf32:ident, $bf16:ident, $bf16_inputs:ident] = $class:ident<$bound:literal>
        => $kernel:ident, $floats:expr $(, rows($rows:expr))? $(, min_blocks($mb:expr))?; )*) => {
        gemv_configs! {$(
            $fp32 = $class<$bound> => $kernel, $floats $(, rows($rows))? $(, min_blocks($mb))?,
                input(f32) round(AsIs);
            $tf32 = $class<$bound> => $kernel, $floats $(, rows($rows))? $(, min_blocks($mb))?,
                input(f32) round(ToTf32);
            $bf16 = $class<$bound> => $kernel, $floats $(, rows($rows))? $(, min_blocks($mb))?,
                input(f32) round(ToBf16);
            $bf16_inputs = $class<$bound> => $kernel, $floats $(, rows($rows))?
                $(, min_blocks($mb))?, input(u16) round(AsIs);
        )*}
    };
}

// The small-n entries' launch bounds are what the host's split aims for
// (`plan::gemv::slices_for`): four blocks a multiprocessor (at most 128 registers a
// thread, which their rings of loads fit in without spilling), three for n16 and n32 (their
// 64 accumulators).
gemv_variants! {
    [gemv_small_m1, gemv_small_m1_tf32, gemv_small_m1_bf16, gemv_small_m1_bf16_inputs]
        = SmallM<1> => gemv_small_m, (WARPS * SMALL_M_COLS) as usize + TURN;
    [gemv_small_m2, gemv_small_m2_tf32, gemv_small_m2_bf16, gemv_small_m2_bf16_inputs]
        = SmallM<2> => gemv_small_m, 2 * (WARPS * SMALL_M_COLS) as usize + TURN;
    [gemv_small_m4, gemv_small_m4_tf32, gemv_small_m4_bf16, gemv_small_m4_bf16_inputs]
        = SmallM<4> => gemv_small_m, 4 * (WARPS * SMALL_M_COLS) as usize + TURN;
    [gemv_small_m8, gemv_small_m8_tf32, gemv_small_m8_bf16, gemv_small_m8_bf16_inputs]
        = SmallM<8> => gemv_small_m, 8 * (WARPS * SMALL_M_COLS) as usize + TURN;
    [gemv_small_m16, gemv_small_m16_tf32, gemv_small_m16_bf16, gemv_small_m16_bf16_inputs]
        = SmallM<16> => gemv_small_m, 16 * (WARPS * SMALL_M_COLS) as usize + TURN;
    [gemv_small_n1, gemv_small_n1_tf32, gemv_small_n1_bf16, gemv_small_n1_bf16_inputs]
        = SmallN<1> => gemv_small_n, TURN, rows(SMALL_N_ROWS_PER_WARP), min_blocks(4);
    [gemv_small_n1_r2, gemv_small_n1_r2_tf32, gemv_small_n1_r2_bf16, gemv_small_n1_r2_bf16_inputs]
        = SmallN<1> => gemv_small_n, TURN, rows(SMALL_N_R2_ROWS_PER_WARP), min_blocks(4);
    [gemv_small_n2, gemv_small_n2_tf32, gemv_small_n2_bf16, gemv_small_n2_bf16_inputs]
        = SmallN<2> => gemv_small_n, 2 * small_n_group(2) as usize + TURN,
        rows(SMALL_N_ROWS_PER_WARP), min_blocks(4);
    [gemv_small_n4, gemv_small_n4_tf32, gemv_small_n4_bf16, gemv_small_n4_bf16_inputs]
        = SmallN<4> => gemv_small_n, 4 * small_n_group(4) as usize + TURN,
        rows(SMALL_N_ROWS_PER_WARP), min_blocks(4);
    [gemv_small_n8, gemv_small_n8_tf32, gemv_small_n8_bf16, gemv_small_n8_bf16_inputs]
        = SmallN<8> => gemv_small_n, 8 * small_n_group(8) as usize + TURN,
        rows(SMALL_N_ROWS_PER_WARP), min_blocks(4);
    [gemv_small_n16, gemv_small_n16_tf32, gemv_small_n16_bf16, gemv_small_n16_bf16_inputs]
        = SmallN<16> => gemv_small_n, 16 * small_n_group(16) as usize + TURN,
        rows(SMALL_N_ROWS_PER_WARP), min_blocks(3);
    [gemv_small_n32, gemv_small_n32_tf32, gemv_small_n32_bf16, gemv_small_n32_bf16_inputs]
        = SmallN<32> => gemv_small_n, 32 * small_n_group(32) as usize + TURN,
        rows(SMALL_N_R2_ROWS_PER_WARP), min_blocks(3);
    [gemv_small_k4, gemv_small_k4_tf32, gemv_small_k4_bf16, gemv_small_k4_bf16_inputs]
        = SmallK<4> => gemv_small_k_entry, 4 * SMALL_K_ROWS as usize;
    [gemv_small_k16, gemv_small_k16_tf32, gemv_small_k16_bf16, gemv_small_k16_bf16_inputs]
        = SmallK<16> => gemv_small_k_entry, 16 * SMALL_K_ROWS as usize;
}
