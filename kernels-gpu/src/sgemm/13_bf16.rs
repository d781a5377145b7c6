//! Rung 13: BF16 matrices on the tensor cores. `out[m×n] = a[m×k] · b[k×n]` where `a` and
//! `b` hold BF16 values (their 16-bit patterns, row-major, as `u16`) and `out` is f32,
//! accumulated in f32 by `mma.sync.aligned.m16n8k16.bf16`. This is what cuBLAS's
//! `cublasGemmEx` computes with BF16 `A` and `B`, f32 `C` and `CUBLAS_COMPUTE_32F`; the
//! products are exact and only the f32 accumulation rounds, so the inputs' own BF16 rounding
//! is the caller's, done once.
//!
//! The structure is rung 11's ([`super::tensor_core`], whose ring and output loop it
//! shares): both tiles travel global → shared by `cp.async` through a ring of `STAGES`
//! stages in dynamic shared memory, each warp owns `MI × NI` accumulators of 16 × 8, and
//! every output goes through [`store_pair`](super::tensor_core::store_pair). The stages hold
//! words of two BF16 (the lower column in the low half), so a 16-byte chunk is eight
//! elements of a row:
//!
//! * `a` tiles `BM × BK` are `BM` rows of `BK / 2` words, swizzled as rung 11's
//!   ([`a_index_in`] on words), and each `a` fragment of a 16-deep step is one `ldmatrix.x4`:
//!   on BF16 words, the addresses that load a 16 × 8 TF32 fragment load a 16 × 16 BF16 one.
//! * `b` tiles `BK × BN` are `BK` rows of `BN / 2` words, the chunk XORed with `row % 8`
//!   ([`b_index`]), and each pair of `b` fragments is one `ldmatrix.x4.trans`: eight rows
//!   (`k`) × one chunk per 8 lanes, which the swizzle spreads over all 32 banks.
//!
//! No conversion is left in the inner loop: per 16-deep step a warp issues `MI` + `NI / 2`
//! `ldmatrix` and `MI · NI` `mma`.
//!
//! Any shape is correct. A block takes the `cp.async` path when its `BM × BN` tile of `out`
//! is interior, `k` and `n` are multiples of 8 (so a row's chunks are 16-byte aligned) and
//! `a`, `b` 16-byte aligned; the last k-tile may be partial, its chunks past `k`
//! zero-filled. Every other block stages its tiles through bounds-checked 16-bit loads (zero
//! outside the matrices), one stage at a time, and runs the same warp tiles.

use super::epilogue::Epilogue;
use super::parts::global::is_aligned16;
use super::parts::mma_tile::{MmaTile, b_fragment_pair, mma_tiled};
use super::parts::unroll::unroll;
use super::tensor_core::{Acc, a_index_in, run_stages, store_acc};
use super::{BlockTile, Geometry, at};
use nvptx_device::mma::{FragABf16, FragBBf16, ldmatrix_x4, ldmatrix_x4_trans, mma_m16n8k16_bf16};
use nvptx_device::pipeline::cp_async_16_zfill;
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared::dynamic_shared;
use nvptx_device::thread;
use nvptx_device::warp::WARP_SIZE;

/// Where word `w` (elements `2w`, `2w + 1`) of row `r` of a `b` tile with `bnw`-word rows lies
/// in its stage: the chunk `w / 4` XORed with `r % 8`, so that the 8 rows one `ldmatrix`
/// phase reads, one chunk each, fall in 8 different bank groups (`bnw` a multiple of 32).
#[inline(always)]
pub const fn b_index(bnw: u32, r: u32, w: u32) -> u32 {
    let chunk = (w / 4) ^ (r % 8);
    r * bnw + 4 * chunk + w % 4
}

/// The BF16 product: block tile `BM × BN`, shared tiles `BK` deep (16, 32 or 64) in a ring of
/// `STAGES`, warp tiles of `MI × NI` mma tiles (`WM × WN = 16·MI × 8·NI` outputs),
/// `THREADS = (BM/WM)·(BN/WN)·32`, and `GROUP` the block order of rung 9
/// ([`BlockTile::ordered`]; 0: none).
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid and
/// [`geometry`]'s dynamic shared memory.
///
/// # Safety
/// `a`, `b` and `out` point to `m·k`, `k·n` and `m·n` valid elements (BF16 patterns for `a`
/// and `b`), those products fit `u32`, and `out` does not overlap `a` or `b`.
#[mma_tiled]
#[inline(always)]
pub unsafe fn gemm_bf16<
    const STAGES: usize,
    const THREADS: usize,
    const GROUP: u32,
    E: Epilogue,
>(
    a: *const u16, b: *const u16, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let () = MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::VALID;
    // a_tile[stage][a_index(r, w)], then b_tile[stage][b_index(r, w)], in words.
    let (a_tile, b_tile) = dynamic_shared::<u32>()
        .split_at(STAGES as u32 * MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::A_STAGE);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let t = thread::thread_idx_x();
    let warp = MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::warp_of(t);
    let mut acc: Acc<MI, NI> = [[[0.0f32; 4]; NI]; MI];
    let tiles = k.div_ceil(BK as u32);
    let (a_stage, b_stage) = (
        MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::A_STAGE,
        MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::B_STAGE,
    );
    let asynchronous = tile.is_interior(BM as u32, BN as u32)
        && k.is_multiple_of(MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::ELEMS)
        && n.is_multiple_of(MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::ELEMS)
        && is_aligned16(a as *const f32)
        && is_aligned16(b as *const f32);

    run_stages!(
        STAGES,
        tiles,
        asynchronous,
        // Thread t's 16-byte copies of k-tile `p` into its stage, zero past `k`.
        issue = |p| {
            let stage = p % STAGES as u32;
            let k0 = p * BK as u32;
            unroll!(MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::A_COPIES, |j| {
                let (r, w) = MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::a_chunk(t, j);
                let c = k0 + 2 * w; // first element of the chunk
                let full = c < k; // k % 8 == 0: a chunk is wholly inside or outside
                // SAFETY: only on the asynchronous path: the tile is interior, so
                // row0 + r < m; where `full`, elements c..c + 8 are inside `a` and 16-byte
                // aligned (k, c multiples of 8, `a` aligned); otherwise `a` is only an aligned
                // placeholder. The stage's chunk is inside and aligned.
                unsafe {
                    cp_async_16_zfill(
                        a_tile,
                        stage * a_stage + a_index_in((BK / 2) as u32, r, w),
                        (if full {
                            a.add(at(tile.row0 + r, k, c))
                        } else {
                            a
                        }) as *const u32,
                        full,
                    )
                };
            });
            unroll!(MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::B_COPIES, |j| {
                let (r, w) = MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::b_chunk(t, j);
                let full = k0 + r < k;
                // SAFETY: as for `a`: the block's BN columns are inside `b`, rows past `k`
                // are zero-filled without a read, n % 8 == 0 and `b` aligned.
                unsafe {
                    cp_async_16_zfill(
                        b_tile,
                        stage * b_stage + b_index((BN / 2) as u32, r, w),
                        (if full {
                            b.add(at(k0 + r, n, tile.col0 + 2 * w))
                        } else {
                            b
                        }) as *const u32,
                        full,
                    )
                };
            });
        },
        checked = |p| {
            // SAFETY: every element is checked against m, k and n before it is read.
            unsafe {
                MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::stage_checked(
                    a_tile,
                    b_tile,
                    a,
                    b,
                    &tile,
                    p * BK as u32,
                    n,
                    k,
                    t,
                )
            };
        },
        accumulate = |stage| {
            // SAFETY: the stage holds a whole k-tile, complete and visible to the block (wait
            // and barrier); every lane of every warp is here.
            unsafe {
                MmaTile::<BM, BN, BK, MI, NI, THREADS, 8>::accumulate(
                    &mut acc,
                    a_tile.split_at(stage * a_stage).1,
                    b_tile.split_at(stage * b_stage).1,
                    warp,
                )
            };
        }
    );
    // SAFETY: `out` is the m × n output `tile` was made for; this block alone writes it.
    unsafe { store_acc(&acc, warp, out, n, &tile, BM as u32, BN as u32, &epilogue) };
}

/// Rung 13's part of [`MmaTile`]: stages of words of two BF16, eight elements to a chunk.
#[mma_tiled(8)]
impl MmaTile {
    /// The parameters fit ([`MmaTile::FITS`]), `b` fragments come in pairs (`NI` even), and
    /// the swizzles apply (`BK / 2` words of 8, 16 or 32; `BN / 2` a multiple of 32 words).
    const VALID: () = assert!(
        Self::FITS
            && NI.is_multiple_of(2)
            && BN.is_multiple_of(64)
            && (BK == 16 || BK == 32 || BK == 64)
    );

    /// Fills stage 0 with k-tile `k0..k0 + BK` through 16-bit loads, zero outside the
    /// matrices: the path of edge blocks and of shapes `cp.async` cannot take.
    ///
    /// # Safety
    /// `a`, `b` are the `m × k`, `k × n` operands `tile` was made for (with its `n`), and
    /// the arrays hold at least one stage; no thread reads stage 0 until a barrier.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn stage_checked(
        a_tile: SharedSlice<u32>, b_tile: SharedSlice<u32>, a: *const u16, b: *const u16,
        tile: &BlockTile, k0: u32, n: u32, k: u32, t: u32,
    ) {
        // Eight elements, two to a word, the lower-indexed in the low half.
        let pack = |e: [u16; 8]| -> [u32; 4] {
            core::array::from_fn(|w| e[2 * w] as u32 | ((e[2 * w + 1] as u32) << 16))
        };
        unroll!(Self::A_COPIES, |j| {
            let (r, w) = Self::a_chunk(t, j);
            let e: [u16; 8] = core::array::from_fn(|e| {
                let col = k0 + 2 * w + e as u32;
                if r < tile.rows_left && col < k {
                    // SAFETY: row0 + r < m and col < k: inside `a`.
                    unsafe { *a.add(at(tile.row0 + r, k, col)) }
                } else {
                    0
                }
            });
            // SAFETY: the chunk is inside stage 0 and 16-byte aligned.
            unsafe { a_tile.set4_unchecked(a_index_in((BK / 2) as u32, r, w), pack(e)) };
        });
        unroll!(Self::B_COPIES, |j| {
            let (r, w) = Self::b_chunk(t, j);
            let e: [u16; 8] = core::array::from_fn(|e| {
                let col = 2 * w + e as u32;
                if k0 + r < k && col < tile.cols_left {
                    // SAFETY: k0 + r < k and col0 + col < n: inside `b`.
                    unsafe { *b.add(at(k0 + r, n, tile.col0 + col)) }
                } else {
                    0
                }
            });
            // SAFETY: as for `a`.
            unsafe { b_tile.set4_unchecked(b_index((BN / 2) as u32, r, w), pack(e)) };
        });
    }

    /// `acc += a · b` over the `BK` rows of one stage, for the warp whose tile starts at
    /// `warp` (from [`warp_of`](Self::warp_of)): per 16-deep step, each `a` fragment by one
    /// `ldmatrix.x4`, each pair of `b` fragments by one `ldmatrix.x4.trans`, then `MI × NI`
    /// mma.
    ///
    /// # Safety
    /// `a_stage` and `b_stage` start at one stage of the swizzled tiles, complete and
    /// visible to every thread of the block; all 32 lanes of each warp call it together.
    #[inline(always)]
    unsafe fn accumulate(
        acc: &mut Acc<MI, NI>, a_stage: SharedSlice<u32>, b_stage: SharedSlice<u32>,
        warp: (u32, u32),
    ) {
        let lane = thread::thread_idx_x() % WARP_SIZE;
        // Lane l addresses row l % 8 of matrix l / 8: rows (or k) 8·((l / 8) % 2).., chunk
        // l / 16, for both operands.
        let row = lane % 8 + 8 * ((lane / 8) % 2);
        let chunk = 4 * (lane / 16);
        unroll!(BK / 16, |step| {
            let k0 = (16 * step) as u32;
            let mut frag_a: [FragABf16; MI] = [[0; 4]; MI];
            let mut frag_b: [FragBBf16; NI] = [[0; 2]; NI];
            unroll!(MI, |i| {
                // The swizzle depends on the row modulo 8 only, so i moves by whole rows.
                let at = a_index_in(
                    (BK / 2) as u32,
                    warp.0 + row + (16 * i) as u32,
                    k0 / 2 + chunk,
                );
                // SAFETY: the whole warp, one stage, chunk-aligned rows inside it.
                frag_a[i] = unsafe { ldmatrix_x4(a_stage, at) };
            });
            unroll!(NI / 2, |jp| {
                let at = b_index(
                    (BN / 2) as u32,
                    k0 + row,
                    (warp.1 + (16 * jp) as u32) / 2 + chunk,
                );
                // SAFETY: as above.
                (frag_b[2 * jp], frag_b[2 * jp + 1]) =
                    b_fragment_pair(unsafe { ldmatrix_x4_trans(b_stage, at) });
            });
            unroll!(MI, |i| {
                unroll!(NI, |j| {
                    // SAFETY: every lane of the warp is here (block-uniform control flow).
                    acc[i][j] = unsafe { mma_m16n8k16_bf16(&frag_a[i], &frag_b[j], acc[i][j]) };
                });
            });
        });
    }
}

/// The launch geometry of [`gemm_bf16`] with the same parameters: `STAGES` stages of the `a`
/// and `b` tiles, two BF16 to a word, in dynamic shared memory.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _mi: usize, _ni: usize, stages: usize, threads: usize,
    _group: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, stages * (bm * bk + bk * bn) / 2).in_dynamic_shared()
}

/// The BF16 GEMM's parameters: `(a, b, out, m, n, k)` with BF16 `a` and `b`.
pub const BF16_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const u16,
    b: *const u16,
    out: *mut f32,
    m: u32,
    n: u32,
    k: u32,
);

/// A BF16 entry point as the simulator calls it: `(a, b, out, m, n, k)`.
pub type Bf16Entry = unsafe fn(*const u16, *const u16, *mut f32, u32, u32, u32);

/// One configuration of the BF16 GEMM, as the table below declares it.
#[derive(Clone, Copy, Debug)]
pub struct Bf16Config {
    /// The name on command lines and in reports: the entry's, with dashes.
    pub name: &'static str,
    /// Block tile, depth, threads and dynamic shared memory.
    pub geometry: Geometry,
    /// How to launch it.
    pub spec: nvptx_device::catalogue::KernelSpec,
    /// Whether the host picks it where nothing is timed (exactly one row).
    pub default: bool,
    /// The entry point as the simulator calls it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: Bf16Entry,
}

/// The BF16 table: one line per configuration, generating its entry point (with launch
/// bounds where `min_blocks` is given), its [`KernelSpec`](nvptx_device::catalogue::KernelSpec)
/// and its simulator twin.
macro_rules! bf16_configs {
    ($( $(#[$meta:meta])* $entry:ident = <$bm:literal, $bn:literal, $bk:literal, $mi:literal,
        $ni:literal, $stages:literal, $threads:literal, $group:literal> $([$($flag:ident),*])?
        $(, min_blocks($mb:literal))?; )*) => {
        #[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $(#[$meta])*
            $entry(a: *const u16, b: *const u16, out: *mut f32, m: u32, n: u32, k: u32)
                => store::<$bm, $bn, $bk, $mi, $ni, $stages, $threads, $group>
                $(, launch_bounds($threads, $mb))?;
        )*}

        /// Every BF16 configuration, in table order.
        pub const BF16_CONFIGS: &[Bf16Config] = &[$({
            const GEOMETRY: Geometry =
                geometry($bm, $bn, $bk, $mi, $ni, $stages, $threads, $group);
            Bf16Config {
                name: dashed!(stringify!($entry)),
                geometry: GEOMETRY,
                spec: GEOMETRY.spec_with_params(stringify!($entry), BF16_PARAMS, opt!($($mb)?)),
                default: has_flag!(default in $($($flag),*)?),
                #[cfg(not(target_arch = "nvptx64"))]
                sim: entry::$entry,
            }
        },)*];
    };
}

/// [`gemm_bf16`] with [`Store`](super::epilogue::Store): the table's entry points.
///
/// # Safety
/// As [`gemm_bf16`].
#[mma_tiled]
#[inline(always)]
unsafe fn store<const STAGES: usize, const THREADS: usize, const GROUP: u32>(
    a: *const u16, b: *const u16, out: *mut f32, m: u32, n: u32, k: u32,
) {
    // SAFETY: the caller's contract.
    unsafe {
        gemm_bf16::<BM, BN, BK, MI, NI, STAGES, THREADS, GROUP, _>(
            a,
            b,
            out,
            m,
            n,
            k,
            super::epilogue::Store,
        )
    }
}

bf16_configs! {
    // entry point                        = <block, BK, warp tile in 16 × 8 mma tiles (MI, NI), stages, threads, group>
    /// 4 warps of 64 × 64, four stages of 32 in 64 KiB.
    gemm_bf16_128x128x32_w64x64           = <128, 128, 32, 4, 8, 4, 128, 0>, min_blocks(2);
    /// Twice the depth per barrier: three stages of 64 in 96 KiB.
    gemm_bf16_128x128x64_w64x64           = <128, 128, 64, 4, 8, 3, 128, 0>, min_blocks(2);
    /// The same with blocks in groups of 8 block rows (rung 9), for L2 reuse: the default.
    gemm_bf16_swizzled_128x128x64_w64x64  = <128, 128, 64, 4, 8, 3, 128, 8> [default], min_blocks(2);
    /// 8 warps of 32 × 64: more warps to hide latency where there are few k-tiles.
    gemm_bf16_128x128x64_w32x64           = <128, 128, 64, 2, 8, 3, 256, 0>, min_blocks(2);
    /// Twice the blocks of the 128 × 128 tiles, for outputs with few of them (48 KiB).
    gemm_bf16_64x128x32_w32x64            = <64, 128, 32, 2, 8, 4, 128, 0>, min_blocks(2);
}
