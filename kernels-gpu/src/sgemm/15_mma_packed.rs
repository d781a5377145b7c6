//! Rung 15: TF32 `mma.sync` on packed operands. Rung 11's warp tiles of
//! `mma.m16n8k8.tf32`, fed from the operands rung 14 ([`super::wgmma`]) multiplies: `b`
//! transposed and rounded to TF32 by [`super::repack`]'s TF32 kernel on the GPU before the
//! product, with rows of `k` padded with zeros to a multiple of 4, and `a` as the caller
//! gave it where its rows are already 16-byte aligned (`k % 4 == 0`), else packed the same
//! way (rounded and padded). Both operands run along the depth, so that `b`'s fragments too
//! come by `ldmatrix` (rung 11 loads them one word at a time: `ldmatrix.trans` moves 16-bit
//! elements, not 32-bit ones), and only `a`'s fragments are rounded in the loop, 16
//! `cvt.rna.tf32.f32` per 32 `mma` of a 64 × 64 warp tile (rung 11 rounds 32). Unlike rung
//! 14's `wgmma`, `mma.sync` runs on every GPU of compute capability 8.0 and later.
//!
//! Rounding `a` in the loop, not in a pass of its own, saves that pass (a read and a write
//! of `a`) for about 30 µs of rounding at 4096³, and measured faster at 4096³ and on
//! 5120 × 256 × 5120 (H100, 2026-11-26). The figures of this section's measurements:
//! docs/notes/kernels-sgemm-mma-packed.md.
//!
//! Shared layout of one stage: the `a` tile (`BM` rows of 32 depths, 128 bytes each), then
//! the `b` tile (`BN` rows, the columns of `b`, of 32 depths), each row 8 chunks of 16 bytes
//! with chunk `c` of row `r` at `c ^ (r % 8)`: rung 14's 128-byte swizzle ([`sw128_index`]),
//! copied in by the same [`PackedCopy`].
//!
//! Per 8-deep step a warp issues `MI + NI / 2` `ldmatrix.x4` and `MI · NI` `mma`. The words
//! of a TF32 `m16n8k8` fragment sit where a BF16 `m16n8k16` fragment's do (lane `l` holds
//! word `l % 4` of row `l / 4` of each 8 × 4-word matrix), so an `a` fragment is loaded as
//! rung 13 ([`super::bf16`]) loads one: its four registers are the matrices of rows 0..8 and
//! 8..16 at depth chunks 0 and 1. For `b` (rows are columns of `b`) one load gives two
//! adjacent 8-column fragments, `[b0 j, b1 j, b0 j+1, b1 j+1]`, each fragment's pair in
//! adjacent registers as `mma` takes it. Eight rows of one chunk lie in eight different
//! bank groups, so neither load has a bank conflict.
//!
//! Addresses cost one or two integer instructions per step, not per load: each step's
//! loads are one register ([`opaque_u32`]) plus constant offsets, and each k-tile's copies
//! come from a [`PackedCopy`] set up once per block. Computing every address afresh issues
//! 1.6 integer instructions per `mma`, and measured slower (H200, 2026-11-25).
//!
//! On a Hopper the same warp tiles have a second table, [`MMA_TMA_CONFIGS`]
//! ([`sgemm_mma_tma`], in the `sm_90a` module beside rung 14): there the tensor-memory
//! accelerator ([`nvptx_device::tma`]) copies the k-tiles, one thread issuing each stage's
//! two tile copies, so the warps that run the `mma`s issue no copies at all: issuing them
//! cost the `cp.async` table about a sixth of the kernel (H100, 2026-11-26; the note above).
//!
//! The ring is rung 11's (its `run_ring` macro): `STAGES - 1` tiles in flight before the loop, one
//! barrier per 32 of depth. Any `m` and `n`: rows of either operand past the matrix and
//! depths past `k` are zero-filled by `cp.async` (source size 0), so every block takes the
//! same path, and outputs go through rung 11's bounds-checked
//! [`store_pair`](super::tensor_core::store_pair) with the rungs' [`Epilogue`].

use super::epilogue::Epilogue;
use super::parts::mma_tile::{b_fragment_pair, mma_tiled};
use super::parts::unroll::unroll;
use super::repack::{PackedConfig, PackedCopy, packed_config};
use super::tensor_core::{Acc, run_ring, store_acc, warp_origin};
use super::{BlockTile, Geometry};
use nvptx_device::intrinsics::opaque_u32;
use nvptx_device::mma::{FragA, FragB, ldmatrix_x4, mma_m16n8k8_tf32, to_tf32};
use nvptx_device::shared::{SharedSlice, dynamic_shared};
use nvptx_device::thread;
use nvptx_device::tma::{self, Mbarrier, ROW_BYTES, TILE_ALIGN, TensorMap};
use nvptx_device::warp::WARP_SIZE;
use nvptx_device::wgmma::{ROW_WORDS, sw128_index};

/// The depth of a shared tile, in TF32 words: one 128-byte row, as rung 14's.
pub const BK: usize = ROW_WORDS as usize;

/// The product of packed TF32 operands by `mma.sync`: `out[m×n] = a[m×k] · btᵀ` where `bt`
/// is `b` transposed (`n × k`) and rounded to TF32, both row-major; `a` is rounded as its
/// fragments are loaded (a rounded `a` stays as it is). Block tile `BM × BN`,
/// shared tiles [`BK`] deep in a ring of `STAGES`, warp tiles of `MI × NI` mma tiles
/// (`WM × WN = 16·MI × 8·NI` outputs), `THREADS = (BM/WM)·(BN/WN)·32`, and `GROUP` the block
/// order of rung 9 ([`BlockTile::ordered`]; 0: none).
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid and
/// [`geometry`]'s dynamic shared memory.
///
/// # Safety
/// `a`, `bt` and `out` point to `m·k`, `n·k` and `m·n` valid f32, `a` and `bt` 16-byte
/// aligned, `k` a multiple of 4, those products fit `u32`, and `out` overlaps neither
/// operand.
#[mma_tiled(packed)]
#[inline(always)]
pub unsafe fn sgemm_mma_packed<
    const STAGES: usize,
    const THREADS: usize,
    const GROUP: u32,
    E: Epilogue,
>(
    a: *const f32, bt: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let () = PackedTile::<BM, BN, MI, NI, THREADS>::VALID;
    // a_tile[stage][sw128_index(r, c)], then b_tile[stage][...].
    let (a_tile, b_tile) = dynamic_shared::<f32>().split_at((STAGES * BM * BK) as u32);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let t = thread::thread_idx_x();
    let warp = warp_origin(t, BN, 16 * MI, 8 * NI);
    let mut acc: Acc<MI, NI> = [[[0.0f32; 4]; NI]; MI];
    let tiles = k.div_ceil(BK as u32);
    let (a_stage, b_stage) = ((BM * BK) as u32, (BN * BK) as u32);
    let threads = THREADS as u32;
    let copy_a = PackedCopy::new(BM as u32, tile.row0, m, a, k, t, threads);
    let copy_b = PackedCopy::new(BN as u32, tile.col0, n, bt, k, t, threads);

    run_ring!(
        STAGES,
        tiles,
        issue = |p| {
            let (stage, k0) = (p % STAGES as u32, p * BK as u32);
            // SAFETY: `a` and `bt` hold m and n rows of k (a multiple of 4), 16-byte aligned;
            // both tiles lie inside their rings, read after the wait and barrier.
            unsafe {
                copy_a.issue(a_tile, stage * a_stage, k0);
                copy_b.issue(b_tile, stage * b_stage, k0);
            }
        },
        accumulate = |stage| {
            // SAFETY: the stage holds a whole k-tile, complete and visible to the block (wait
            // and barrier); every lane of every warp is here.
            unsafe {
                PackedTile::<BM, BN, MI, NI, THREADS>::accumulate_stage(
                    &mut acc, a_tile, b_tile, stage, warp,
                )
            };
        }
    );
    // SAFETY: `out` is the m × n output `tile` was made for; this block alone writes it.
    unsafe { store_acc(&acc, warp, out, n, &tile, BM as u32, BN as u32, &epilogue) };
}

/// The parameters of [`sgemm_mma_packed`] (a type only for its constants and functions).
pub struct PackedTile<
    const BM: usize,
    const BN: usize,
    const MI: usize,
    const NI: usize,
    const THREADS: usize,
>;

impl<const BM: usize, const BN: usize, const MI: usize, const NI: usize, const THREADS: usize>
    PackedTile<BM, BN, MI, NI, THREADS>
{
    /// The parameters fit: warps tile the block in whole mma tiles, `b` fragments come in
    /// pairs (`NI` even), and every thread copies the same whole number of chunks of both
    /// tiles.
    const VALID: () = assert!(
        BM.is_multiple_of(16 * MI)
            && BN.is_multiple_of(8 * NI)
            && NI.is_multiple_of(2)
            && THREADS == (BM / (16 * MI)) * (BN / (8 * NI)) * WARP_SIZE as usize
            && (BM * BK / 4).is_multiple_of(THREADS)
            && (BN * BK / 4).is_multiple_of(THREADS)
    );

    /// [`Self::accumulate`] over stage `stage` of the rings `a_ring` and `b_ring` (stages of
    /// `BM` and `BN` rows of [`BK`] words).
    ///
    /// # Safety
    /// As [`Self::accumulate`], for that stage.
    #[inline(always)]
    unsafe fn accumulate_stage(
        acc: &mut Acc<MI, NI>, a_ring: SharedSlice<f32>, b_ring: SharedSlice<f32>, stage: u32,
        warp: (u32, u32),
    ) {
        let (a_stage, b_stage) = ((BM * BK) as u32, (BN * BK) as u32);
        // SAFETY: forwarded.
        unsafe {
            Self::accumulate(
                acc,
                a_ring.split_at(stage * a_stage).1,
                b_ring.split_at(stage * b_stage).1,
                warp,
            )
        }
    }

    /// `acc += a · btᵀ` over the [`BK`] depths of one stage, for the warp whose tile starts
    /// at `warp`: per 8-deep step, each `a` fragment by one `ldmatrix.x4`, each pair of `b`
    /// fragments by another, then `MI × NI` mma.
    ///
    /// # Safety
    /// `a_stage` and `b_stage` start at one stage of the swizzled tiles, complete and
    /// visible to every thread of the block; all 32 lanes of each warp call it together.
    #[inline(always)]
    unsafe fn accumulate(
        acc: &mut Acc<MI, NI>, a_stage: SharedSlice<f32>, b_stage: SharedSlice<f32>,
        warp: (u32, u32),
    ) {
        let lane = thread::thread_idx_x() % WARP_SIZE;
        // Lane l addresses row l % 8 of matrix l / 8. For `a`, matrices 0..4 are rows
        // 0..8, 8..16, 0..8, 8..16 at chunks 0, 0, 1, 1 (the fragment's a0..a3); for `b`,
        // rows (columns of b) 0..8, 0..8, 8..16, 8..16 at chunks 0, 1, 0, 1, so that each
        // fragment's two registers come out adjacent, as `mma` takes them (the other order
        // cost ptxas four register moves per load).
        let a_word = lane_word(warp.0 + lane % 8 + 8 * ((lane / 8) % 2), lane / 16);
        let b_word = lane_word(warp.1 + lane % 8 + 8 * (lane / 16), (lane / 8) % 2);
        unroll!(BK / 8, |step| {
            // This step's rows of the warp's first fragments; the others are 16 rows on,
            // offsets the loads take as constants.
            let (a_at, b_at) = (
                opaque_u32(step_word(a_word, step)),
                opaque_u32(step_word(b_word, step)),
            );
            let mut frag_a: [FragA; MI] = [[0; 4]; MI];
            let mut frag_b: [FragB; NI] = [[0; 2]; NI];
            unroll!(MI, |i| {
                // SAFETY: the whole warp, one stage, chunk-aligned rows inside it.
                let words = unsafe { ldmatrix_x4(a_stage, a_at + (16 * i) as u32 * ROW_WORDS) };
                // `a` as the caller gave it, unless packed (then this changes nothing): see
                // `PackedConfig::rounds_a`.
                frag_a[i] = words.map(|w| to_tf32(f32::from_bits(w)));
            });
            unroll!(NI / 2, |jp| {
                let at = b_at + (16 * jp) as u32 * ROW_WORDS;
                // SAFETY: as above.
                (frag_b[2 * jp], frag_b[2 * jp + 1]) =
                    b_fragment_pair(unsafe { ldmatrix_x4(b_stage, at) });
            });
            unroll!(MI, |i| {
                unroll!(NI, |j| {
                    // SAFETY: every lane of the warp is here (block-uniform control flow).
                    acc[i][j] = unsafe { mma_m16n8k8_tf32(&frag_a[i], &frag_b[j], acc[i][j]) };
                });
            });
        });
    }
}

/// The word of a stage where a lane's `ldmatrix` row starts at depth 0: row `row` (whose
/// `row % 8` is the lane's row in its 8 × 4-word matrix), chunk `half` (0 or 1), swizzled
/// ([`sw128_index`]). Rows 16 apart (the warp's other fragments; its origin is a multiple
/// of 16) have the same swizzle, so they are [`ROW_WORDS`]` · 16` words on.
#[inline(always)]
fn lane_word(row: u32, half: u32) -> u32 {
    sw128_index(row, 4 * half)
}

/// [`lane_word`] at depth `8·step` instead, as one `xor`: `sw128_index(row, 8·step +
/// 4·half)`, whose chunk is `(2·step + half) ^ (row % 8)`, is `lane_word ^ 8·step`, as
/// `half < 2` and the chunk's four words lie below the row's first (a multiple of 32).
#[inline(always)]
fn step_word(lane_word: u32, step: usize) -> u32 {
    let word = lane_word ^ (8 * step as u32);
    let row = lane_word / ROW_WORDS;
    let half = (lane_word % ROW_WORDS / 4) ^ (row % 8);
    debug_assert_eq!(word, sw128_index(row, 8 * step as u32 + 4 * half));
    word
}

/// The launch geometry of [`sgemm_mma_packed`] with the same parameters: `STAGES` stages of
/// the `a` and `b` tiles, [`BK`] deep, in dynamic shared memory.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, _mi: usize, _ni: usize, stages: usize, threads: usize, _group: usize,
) -> Geometry {
    Geometry::new(bm, bn, BK, threads, stages * (bm + bn) * BK).in_dynamic_shared()
}

/// Declares one of rung 15's tables: one entry point per line, exported with the feature
/// `$feature` (`entries` for the main module, `hopper` for the `sm_90a` one), taking
/// `$params` and calling `$store`, and the table `$configs`, a `$config!(entry, geometry,
/// min_blocks, default, bm, bn)` per line with `$geometry`'s geometry.
macro_rules! mma_configs {
    ($(#[$doc:meta])* $configs:ident: $feature:literal, ($a:ident: $a_ty:ty, $b:ident: $b_ty:ty)
        => $store:ident, $geometry:ident, $config:ident;
     $( $(#[$meta:meta])* $entry:ident = <$bm:literal, $bn:literal, $mi:literal, $ni:literal,
        $stages:literal, $threads:literal, $group:literal>
        $([$($flag:ident),*])? $(, min_blocks($mb:literal))?; )*) => {
        #[cfg(any(feature = $feature, not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $(#[$meta])*
            $entry($a: $a_ty, $b: $b_ty, out: *mut f32, m: u32, n: u32, k: u32)
                => $store::<$bm, $bn, $mi, $ni, $stages, $threads, $group>
                $(, launch_bounds($threads, $mb))?;
        )*}

        $(#[$doc])*
        pub const $configs: &[PackedConfig] = &[$({
            const GEOMETRY: Geometry = $geometry($bm, $bn, $mi, $ni, $stages, $threads, $group);
            $config!($entry, GEOMETRY, opt!($($mb)?), has_flag!(default in $($($flag),*)?), $bm, $bn)
        },)*];
    };
}

/// A row of [`MMA_PACKED_CONFIGS`]: `packed_config!`'s, rounding `a` (the block tile's sizes
/// are the geometry's).
macro_rules! cp_async_config {
    ($entry:ident, $geometry:expr, $min_blocks:expr, $default:expr, $bm:literal, $bn:literal) => {
        packed_config!($entry, $geometry, $min_blocks, $default, true)
    };
}

/// `$name`: `$kernel` with [`Store`](super::epilogue::Store), the entry points of a table
/// whose operands are `$a` and `$b`.
macro_rules! with_store {
    ($(#[$meta:meta])* $name:ident = $kernel:ident($a:ident: $a_ty:ty, $b:ident: $b_ty:ty)) => {
        $(#[$meta])*
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($kernel), "`].")]
        #[inline(always)]
        unsafe fn $name<
            const BM: usize,
            const BN: usize,
            const MI: usize,
            const NI: usize,
            const STAGES: usize,
            const THREADS: usize,
            const GROUP: u32,
        >(
            $a: $a_ty, $b: $b_ty, out: *mut f32, m: u32, n: u32, k: u32,
        ) {
            // SAFETY: forwarded.
            unsafe {
                $kernel::<BM, BN, MI, NI, STAGES, THREADS, GROUP, _>(
                    $a, $b, out, m, n, k, super::epilogue::Store,
                )
            }
        }
    };
}

with_store! {
    /// [`sgemm_mma_packed`] with [`Store`](super::epilogue::Store): the table's entry points.
    store = sgemm_mma_packed(a: *const f32, bt: *const f32)
}

mma_configs! {
    /// Every configuration of rung 15, in table order.
    MMA_PACKED_CONFIGS: "entries", (a: *const f32, bt: *const f32) => store, geometry, cp_async_config;
    // entry point                            = <block, warp tile in 16 × 8 mma tiles (MI, NI), stages, threads, group>
    /// 4 warps of 64 × 64, three stages of 32 KiB: two blocks per SM. The default.
    sgemm_mma_packed_128x128_w64x64           = <128, 128, 4, 8, 3, 128, 0> [default], min_blocks(2);
    /// The same with blocks in groups of 8 block rows (rung 9), for L2 reuse.
    sgemm_mma_packed_swizzled_128x128_w64x64  = <128, 128, 4, 8, 3, 128, 8>, min_blocks(2);
    /// 4 warps of 64 × 80 on 128 × 160, three stages of 36 KiB: two blocks per SM. A
    /// 5120 × 5120 output is 1,280 such tiles, 4.85 waves of an H100's 264 block slots,
    /// where 128 × 128 tiles make 6.06 (a seventh wave for 16 tiles).
    sgemm_mma_packed_128x160_w64x80           = <128, 160, 4, 10, 3, 128, 0>, min_blocks(2);
    /// 4 warps of 32 × 64 on 64 × 128, three stages of 24 KiB: more, smaller blocks for
    /// outputs with few tiles, three per SM.
    sgemm_mma_packed_64x128_w32x64            = <64, 128, 2, 8, 3, 128, 0>, min_blocks(3);
}

/// [`sgemm_mma_packed`] on a Hopper, its copies made by the tensor-memory accelerator
/// ([`nvptx_device::tma`]): thread 0 issues each stage's two tile copies, `a`'s `BM` rows
/// and `bt`'s `BN` rows of 32 depths, into the same swizzled stages, and every thread waits
/// on the stage's `mbarrier` before the barrier that also frees the stage to refill. The
/// warps that run the `mma`s issue no copies: [`PackedCopy`]'s 16 `cp.async` per thread
/// per k-tile cost about a sixth of the kernel. `amap` and `bmap` map `a` (`m` rows of `k`,
/// a multiple of 4) and `bt` (`n` rows of `k`) in tiles of `BM` and `BN` rows of 32 words
/// ([`TmaBoxes`], as [`nvptx_device::tma`] describes the maps); edges are zero-filled by
/// the copies. Launch as [`sgemm_mma_packed`], with [`tma_geometry`]'s shared memory.
///
/// # Safety
/// As [`sgemm_mma_packed`], and the maps describe `a` and `bt` so.
#[mma_tiled(packed)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_mma_tma<
    const STAGES: usize,
    const THREADS: usize,
    const GROUP: u32,
    E: Epilogue,
>(
    amap: *const TensorMap, bmap: *const TensorMap, out: *mut f32, m: u32, n: u32, k: u32,
    epilogue: E,
) {
    let () = PackedTile::<BM, BN, MI, NI, THREADS>::VALID;
    const { assert!(STAGES >= 2 && BM <= 256 && BN <= 256) };
    let stages = STAGES as u32;
    let (a_stage, b_stage) = ((BM * BK) as u32, (BN * BK) as u32);
    let ring = dynamic_shared::<f32>().aligned_to(TILE_ALIGN);
    let (a_ring, rest) = ring.split_at(stages * a_stage);
    let b_ring = rest.split_at(stages * b_stage).0;
    // The barriers after the tiles (whose bytes are multiples of 1024): two words each.
    let words = dynamic_shared::<u32>()
        .aligned_to(TILE_ALIGN)
        .split_at(stages * (a_stage + b_stage))
        .1;
    let full = |s: u32| Mbarrier::new(words, 2 * s);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let t = thread::thread_idx_x();
    let warp = warp_origin(t, BN, 16 * MI, 8 * NI);
    let mut acc: Acc<MI, NI> = [[[0.0f32; 4]; NI]; MI];
    let tiles = k.div_ceil(BK as u32);
    let bytes = (BM + BN) as u32 * ROW_BYTES;
    if t == 0 {
        for s in 0..stages {
            // SAFETY: one thread, before any other use; the fence and barrier follow.
            unsafe { full(s).init() };
        }
        tma::fence_init();
    }
    // Tile p into stage p % STAGES, by thread 0.
    // (A macro, pasted where it runs: as an `#[inline(always)]` closure it compiles to
    // different PTX.)
    macro_rules! issue {
        ($p:expr) => {{
            let p: u32 = $p;
            let (s, k0) = (p % stages, p * BK as u32);
            if t == 0 {
                // SAFETY: the maps are the launch's for these tiles; both tiles start on
                // 1024-byte boundaries (whole tiles of 1024-byte multiples from an aligned
                // ring); nobody reads the stage before its barrier's phase completes, and
                // every warp finished its last tile in it (the barrier before this).
                unsafe {
                    let bar = full(s);
                    bar.expect_tx(bytes);
                    tma::copy_2d(a_ring, s * a_stage, amap, k0, tile.row0, &bar);
                    tma::copy_2d(b_ring, s * b_stage, bmap, k0, tile.col0, &bar);
                }
            }
        }};
    }
    thread::sync_threads();
    for s in 0..stages - 1 {
        if s < tiles {
            issue!(s);
        }
    }
    // Every wait comes after its copies were issued, past a barrier: the simulator, where
    // a copy lands when it is issued, checks that order.
    thread::sync_threads();
    for p in 0..tiles {
        let s = p % stages;
        // SAFETY: initialized; tile p's copies issued before a barrier this thread passed.
        unsafe { full(s).wait((p / stages) % 2) };
        // Every warp is done with tile p - 1, whose stage the copies below refill.
        thread::sync_threads();
        if p + stages - 1 < tiles {
            issue!(p + stages - 1);
        }
        // SAFETY: the stage holds k-tile p (its barrier's phase), read by every lane of
        // every warp; nothing refills it before the barrier of the next trip.
        unsafe {
            PackedTile::<BM, BN, MI, NI, THREADS>::accumulate_stage(
                &mut acc, a_ring, b_ring, s, warp,
            )
        };
    }
    // SAFETY: `out` is the m × n output `tile` was made for; this block alone writes it.
    unsafe { store_acc(&acc, warp, out, n, &tile, BM as u32, BN as u32, &epilogue) };
}

/// The launch geometry of [`sgemm_mma_tma`]: [`geometry`]'s stages, 1024 bytes to align
/// them, and the stages' barriers.
#[allow(clippy::too_many_arguments)]
pub const fn tma_geometry(
    bm: usize, bn: usize, _mi: usize, _ni: usize, stages: usize, threads: usize, _group: usize,
) -> Geometry {
    Geometry::new(
        bm,
        bn,
        BK,
        threads,
        stages * (bm + bn) * BK + (TILE_ALIGN / 4) as usize + 2 * stages,
    )
    .in_dynamic_shared()
}

/// A row of [`MMA_TMA_CONFIGS`]: tiles of `$bm` rows of `a` and `$bn` of `bt` copied by
/// the tensor-memory accelerator, the simulator twin called through [`sim_tma`], which maps
/// the packed operands as a GPU host does.
macro_rules! tma_config {
    ($entry:ident, $geometry:expr, $min_blocks:expr, $default:expr, $bm:literal, $bn:literal) => {
        PackedConfig {
            name: dashed!(stringify!($entry)),
            geometry: $geometry,
            spec: $geometry.spec(stringify!($entry), $min_blocks),
            default: $default,
            rounds_a: true,
            tma: Some(TmaBoxes {
                a_rows: $bm,
                b_rows: $bn,
            }),
            #[cfg(not(target_arch = "nvptx64"))]
            sim: |a, bt, out, m, n, k| {
                // SAFETY: forwarded (`sim_tma`'s contract is the entry's).
                unsafe { sim_tma(entry::$entry, $bm, $bn, a, bt, out, m, n, k) }
            },
        }
    };
}

with_store! {
    /// [`sgemm_mma_tma`] with [`Store`](super::epilogue::Store): the Hopper table's entry
    /// points.
    store_tma = sgemm_mma_tma(amap: *const TensorMap, bmap: *const TensorMap)
}

/// The rows of the tiles a configuration fed by the tensor-memory accelerator copies, so
/// that a host builds the maps of its operands: `a` in tiles of `a_rows` rows of 32 words,
/// `bt` in tiles of `b_rows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaBoxes {
    pub a_rows: u32,
    pub b_rows: u32,
}

/// A Hopper-table entry as the simulator runs it: the packed operands mapped by
/// [`TensorMap::simulated`] (`a`: `m` rows of `k`, `bt`: `n` rows of `k`), then the entry.
///
/// # Safety
/// As the entry's, on packed operands.
#[cfg(not(target_arch = "nvptx64"))]
#[allow(clippy::too_many_arguments)]
unsafe fn sim_tma(
    entry: unsafe fn(*const TensorMap, *const TensorMap, *mut f32, u32, u32, u32), a_rows: u32,
    b_rows: u32, a: *const f32, bt: *const f32, out: *mut f32, m: u32, n: u32, k: u32,
) {
    let amap = TensorMap::simulated(a, m, k, a_rows);
    let bmap = TensorMap::simulated(bt, n, k, b_rows);
    // SAFETY: the maps describe the packed operands, as the entry requires.
    unsafe { entry(&amap, &bmap, out, m, n, k) }
}

/// The Hopper table, in a module of its own (each table's entry points are its module's
/// `entry`).
mod on_tma {
    use super::*;

    mma_configs! {
        /// Every configuration of rung 15 fed by the tensor-memory accelerator (Hopper only).
        MMA_TMA_CONFIGS: "hopper", (amap: *const TensorMap, bmap: *const TensorMap)
            => store_tma, tma_geometry, tma_config;
        // entry point                      = <block, warp tile in 16 × 8 mma tiles (MI, NI), stages, threads, group>
        /// The default's tiles and stages, copied by the tensor-memory accelerator.
        sgemm_mma_tma_128x128_w64x64        = <128, 128, 4, 8, 3, 128, 0>, min_blocks(2);
        /// The same with blocks in groups of 8 block rows (rung 9), for L2 reuse.
        sgemm_mma_tma_swizzled_128x128_w64x64 = <128, 128, 4, 8, 3, 128, 8>, min_blocks(2);
        /// 128 × 160 tiles, for 5120 × 256 × 5120 (see the `cp.async` table).
        sgemm_mma_tma_128x160_w64x80        = <128, 160, 4, 10, 3, 128, 0>, min_blocks(2);
    }
}
pub use on_tma::MMA_TMA_CONFIGS;
