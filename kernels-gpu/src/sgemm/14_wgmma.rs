//! Rung 14: TF32 on Hopper's warpgroup tensor-core instructions ([`nvptx_device::wgmma`],
//! PTX `sm_90a`). Each warpgroup of 128 threads owns 64 rows × `N` columns of the block's
//! tile of `out` as the accumulators of one `wgmma.m64nNk8`, and both operands go global →
//! shared by `cp.async` through a ring of `STAGES` stages, stored in the 128-byte swizzle
//! that `wgmma` reads. No fragment passes through registers: per 32 of depth a warpgroup
//! issues four `wgmma`, each as much work as `N / 2` `mma.m16n8k8`.
//!
//! `wgmma` takes TF32 operands only "K-major" (a row of `a` and a column of `b` contiguous)
//! and reads the bits as they are, so this rung multiplies *packed* operands, which
//! [`super::repack`]'s TF32 kernels write from the caller's row-major `a` and `b`: `a`
//! rounded to TF32 ([`to_tf32`](nvptx_device::mma::to_tf32)), `b` transposed and rounded,
//! both with rows of `k` padded with zeros to a multiple of 4. The rounding is rung 11's,
//! done once per element instead of once per fragment load.
//!
//! Shared layout of one stage: the `a` tile (`64·WGS` rows of 32 depths, 128 bytes each),
//! then the `b` tile (`N` rows, the columns of `b`, of 32 depths): every row 8 chunks of 16
//! bytes, chunk `c` of row `r` at `c ^ (r % 8)` ([`sw128_index`](nvptx_device::wgmma::sw128_index)), every tile on a
//! 1024-byte boundary (the dynamic buffer is aligned at run time by
//! [`aligned_to`](nvptx_device::shared::SharedSlice::aligned_to), and the launch gives
//! 1024 spare bytes). A `cp.async` of 16 bytes moves four depths of one row; eight
//! consecutive threads copy one 128-byte row.
//!
//! The ring: tiles `0..STAGES - 2` are in flight before the loop. Trip `p` waits for tile
//! `p`, makes it visible to the asynchronous proxy and the block (fence, barrier), issues
//! the copies of tile `p + STAGES - 2`, then the warpgroup's four `wgmma` on tile `p`, and
//! waits until only those are in flight. So the `wgmma` of tile `p - 1` overlap the issue
//! of tile `p`'s, and the stage a trip refills (that of tile `p - 2`) is one every
//! warpgroup has finished with before it reached the barrier.
//!
//! Any `m` and `n`: rows of either operand past the matrix are zero-filled by `cp.async`
//! (source size 0), as are depths past `k` in the last k-tile, and outputs go through
//! [`store_pair`], bounds-checked at the edges, with the rungs' [`Epilogue`].

use super::epilogue::Epilogue;
use super::parts::unroll::{inlined, unroll};
use super::repack::{PackedConfig, PackedCopy, packed_config};
use super::tensor_core::store_pair;
use super::{BlockTile, Geometry};
use nvptx_device::mma::FragC;
use nvptx_device::pipeline::{commit_group, wait_group, wait_group_n};
use nvptx_device::shared::dynamic_shared;
use nvptx_device::thread;
use nvptx_device::warp::WARP_SIZE;
use nvptx_device::wgmma::{self, ATOM_BYTES, Accumulators, K_TF32, Operand, ROW_WORDS, WARPGROUP};

/// The depth of a shared tile: one 128-byte row of f32.
pub const BK: u32 = ROW_WORDS;

/// The product of packed TF32 operands on `wgmma`: `out[m×n] = a[m×k] · btᵀ` where `bt` is
/// `b` transposed (`n × k`), both rounded to TF32 and row-major. `WGS` warpgroups of 64 rows
/// each make the block tile `64·WGS × N` (`N = A::N`: 64, 128 or 256), shared tiles 32
/// deep in a ring of `STAGES` (at least 3), and `GROUP` the block order of rung 9
/// ([`BlockTile::ordered`]; 0: none).
///
/// Launch with `128·WGS` threads per block (1D) on a `cdiv(n, N) × cdiv(m, 64·WGS)` grid
/// and [`geometry`]'s dynamic shared memory, on a device that runs `sm_90a` code.
///
/// # Safety
/// `a`, `bt` and `out` point to `m·k`, `n·k` and `m·n` valid f32, `a` and `bt` 16-byte
/// aligned, `k` a multiple of 4, those products fit `u32`, and `out` overlaps neither
/// operand.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_wgmma<
    const WGS: usize,
    const STAGES: usize,
    const GROUP: u32,
    A: Accumulators,
    E: Epilogue,
>(
    a: *const f32, bt: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    const { assert!(STAGES >= 3 && WGS >= 1) };
    let (bm, bn) = (64 * WGS as u32, A::N);
    let threads = WARPGROUP * WGS as u32;
    let (a_stage, b_stage) = (bm * BK, bn * BK);
    let (a_ring, b_ring) = dynamic_shared::<f32>()
        .aligned_to(ATOM_BYTES)
        .split_at(STAGES as u32 * a_stage);
    let tile = BlockTile::ordered(bm, bn, m, n, GROUP);
    let t = thread::thread_idx_x();
    let group = t / WARPGROUP;
    let mut acc = A::ZERO;
    let tiles = k.div_ceil(BK);

    // Thread t's 16-byte copies of k-tile `p` into its stages, zero past the matrices and
    // past `k` (`repack::PackedCopy`), pasted where it runs (a closure called from the
    // prologue and the loop without `inlined!` became a `.func`).
    let copy_a = PackedCopy::new(bm, tile.row0, m, a, k, t, threads);
    let copy_b = PackedCopy::new(bn, tile.col0, n, bt, k, t, threads);
    let issue = inlined!(|p: u32| {
        let (stage, k0) = (p % STAGES as u32, p * BK);
        // SAFETY: `a` and `bt` hold m and n rows of k (a multiple of 4), 16-byte
        // aligned; both tiles lie inside their rings, read after the wait and barrier.
        unsafe {
            copy_a.issue(a_ring, stage * a_stage, k0);
            copy_b.issue(b_ring, stage * b_stage, k0);
        }
    });

    unroll!(STAGES - 2, |s| {
        if (s as u32) < tiles {
            issue(s as u32);
        }
        commit_group();
    });
    for p in 0..tiles {
        // Tile p has landed for this thread; after the fence and the barrier, for every
        // warpgroup's wgmma. Every warpgroup has also finished tile p - 2 (its last wait),
        // whose stage the copies below refill.
        wait_group_n(STAGES as u32 - 3);
        wgmma::fence_proxy_async();
        thread::sync_threads();
        if p + (STAGES as u32 - 2) < tiles {
            issue(p + STAGES as u32 - 2);
        }
        commit_group();
        let stage = p % STAGES as u32;
        // Offsets, not sub-slices: no bounds check (a branch) between the wgmma in flight.
        let (a_tile, b_tile) = (stage * a_stage + group * wgmma::M * BK, stage * b_stage);
        // SAFETY: the whole warpgroup is here (block-uniform control flow); the tiles hold
        // k-tile p, visible to the asynchronous proxy; nothing writes this stage before
        // every warpgroup has waited for these wgmma (two trips later).
        unsafe {
            wgmma::fence(&mut acc);
            unroll!((BK / K_TF32) as usize, |s| {
                let k0 = K_TF32 * s as u32;
                acc.mma_tf32(
                    Operand::new(a_ring, a_tile, k0),
                    Operand::new(b_ring, b_tile, k0),
                );
            });
            wgmma::commit_group();
            wgmma::wait_group::<1, A>(&mut acc);
        }
    }
    // SAFETY: as above; the last group done, the accumulators are readable.
    unsafe { wgmma::wait_group::<0, A>(&mut acc) };
    // The last groups of copies are empty: nothing is left in flight.
    wait_group::<0>();

    let lane = t % WARP_SIZE;
    let row = group * wgmma::M + 16 * ((t % WARPGROUP) / WARP_SIZE) + lane / 4;
    let fast = tile.is_interior(bm, bn) && n.is_multiple_of(2) && out.addr().is_multiple_of(8);
    let frags = acc.frags();
    unroll!((bn / 8) as usize, |j| {
        unroll!(2, |h| {
            let frag: &FragC = &frags[j];
            let (r, c) = (row + 8 * h as u32, 8 * j as u32 + 2 * (lane % 4));
            // SAFETY: this thread alone holds outputs (r, c), (r, c + 1) of the block tile
            // (the FragC layout per 8 columns, warp w on rows 16w..); `fast` as required.
            unsafe {
                store_pair(
                    out,
                    n,
                    &tile,
                    r,
                    c,
                    [frag[2 * h], frag[2 * h + 1]],
                    fast,
                    &epilogue,
                )
            };
        });
    });
}

/// The launch geometry of [`sgemm_wgmma`] with `wgs` warpgroups, `bn` columns and
/// `stages` stages: its tiles in dynamic shared memory, plus 1024 bytes to align them.
pub const fn geometry(wgs: usize, bn: usize, stages: usize) -> Geometry {
    let bm = 64 * wgs;
    Geometry::new(
        bm,
        bn,
        BK as usize,
        WARPGROUP as usize * wgs,
        stages * (bm + bn) * BK as usize + ATOM_BYTES as usize / 4,
    )
    .in_dynamic_shared()
}

/// Declares rung 14's table: one entry point per line (exported by the `hopper` feature,
/// whose module is built for `sm_90a`) and [`WGMMA_CONFIGS`].
macro_rules! wgmma_configs {
    ($( $(#[$meta:meta])* $entry:ident = <$wgs:literal, $bn:literal, $stages:literal, $group:literal>
        $([$($flag:ident),*])? $(, min_blocks($mb:literal))?; )*) => {
        #[cfg(any(feature = "hopper", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            $(#[$meta])*
            $entry(a: *const f32, bt: *const f32, out: *mut f32, m: u32, n: u32, k: u32)
                => store::<$wgs, $stages, $group, [FragC; $bn / 8]>
                $(, launch_bounds(128 * $wgs, $mb))?;
        )*}

        /// Every configuration of rung 14, in table order.
        pub const WGMMA_CONFIGS: &[PackedConfig] = &[$({
            const GEOMETRY: Geometry = geometry($wgs, $bn, $stages);
            packed_config!($entry, GEOMETRY, opt!($($mb)?), has_flag!(default in $($($flag),*)?), false)
        },)*];
    };
}

/// [`sgemm_wgmma`] with [`Store`](super::epilogue::Store): the table's entry points.
///
/// # Safety
/// As [`sgemm_wgmma`].
#[inline(always)]
unsafe fn store<const WGS: usize, const STAGES: usize, const GROUP: u32, A: Accumulators>(
    a: *const f32, bt: *const f32, out: *mut f32, m: u32, n: u32, k: u32,
) {
    // SAFETY: forwarded.
    unsafe { sgemm_wgmma::<WGS, STAGES, GROUP, A, _>(a, bt, out, m, n, k, super::epilogue::Store) }
}

#[cfg(all(
    feature = "hopper",
    target_arch = "nvptx64",
    not(target_feature = "sm_90a")
))]
compile_error!("the `hopper` feature's entry points use wgmma: build them for sm_90a");

wgmma_configs! {
    // entry point                           = <warpgroups, N, stages, group>
    /// 2 warpgroups of 64 × 256, four stages of 48 KiB: one block per SM.
    sgemm_wgmma_128x256                      = <2, 256, 4, 0>, min_blocks(1);
    /// The same with blocks in groups of 8 block rows (rung 9), for L2 reuse: the default.
    sgemm_wgmma_swizzled_128x256             = <2, 256, 4, 8> [default], min_blocks(1);
    /// 2 warpgroups of 64 × 128, three stages of 32 KiB: two blocks per SM.
    sgemm_wgmma_128x128                      = <2, 128, 3, 0>, min_blocks(2);
    /// 1 warpgroup of 64 × 128, four stages of 24 KiB: more, smaller blocks for outputs with
    /// few tiles.
    sgemm_wgmma_64x128                       = <1, 128, 4, 0>, min_blocks(2);
    /// 3 warpgroups of 64 × 256, four stages of 56 KiB (225 KiB): a third more work per
    /// byte loaded than 128 × 256, at 168 registers a thread.
    sgemm_wgmma_swizzled_192x256             = <3, 256, 4, 8>, min_blocks(1);
}
