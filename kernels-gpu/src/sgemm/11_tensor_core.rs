//! Rung 11: the tensor cores. The same product with TF32 or BF16 inputs and f32
//! accumulation ([`nvptx_device::mma`]): each warp owns a `WM × WN` tile of `out` as
//! `WM/16 × WN/8` accumulators of 16 × 8, and both operands travel global → shared by
//! `cp.async` through a ring of `STAGES` stages, stored swizzled so that every fragment load
//! is free of bank conflicts. Precision is opt-in: the table marks these entries `tf32` or
//! `bf16`, and the host runs them only when that precision is asked for.
//!
//! * `OP = TF32`: each fragment element is rounded by `cvt.rna.tf32.f32` (relative error up
//!   to 2⁻¹¹ per input) and each 8-deep slice of `k` is one `mma.m16n8k8.tf32`.
//! * `OP = BF16`: the stages hold the same f32 tiles; two 8-deep slices are read exactly as
//!   for TF32, rounded to nearest even and packed two to a register by `cvt.rn.bf16x2.f32`
//!   (relative error up to 2⁻⁸ per input), and fed to one `mma.m16n8k16.bf16`. The two
//!   slices' `k` are interleaved the same way in `a` and `b` (BF16 depth `2q + h + 8s` is
//!   stored depth `q + 4h + 8s`), which permutes the terms of each dot product and nothing
//!   else. Operands stay f32 in memory, so this rung moves twice the bytes of a kernel that
//!   reads BF16 matrices.
//!
//! The stages are the block's dynamic shared memory, `a`'s ring then `b`'s, as many bytes as
//! [`geometry`] says (the launch gives them): three stages of 128 × 128 × 32 take 96 KiB,
//! past the 48 KiB that static arrays may have (the hosts opt every function in).
//!
//! Shared layout (one stage; `a` tiles `BM × BK`, `b` tiles `BK × BN`, both row-major as in
//! global memory, so a `cp.async` of 16 bytes moves four consecutive elements of a row).
//! Rows are split into 16-byte chunks, and a chunk's position within its row is XORed with
//! a function of the row ([`a_index`], [`b_index`]):
//!
//! * `a` fragments are read by `ldmatrix.x4` (or four scalar loads), eight rows × one chunk
//!   per 8 lanes. Without a swizzle those 8 chunks lie in 2 (`BK = 16`) or 1 (`BK = 32`) of
//!   the 8 chunk-wide bank groups; XORing the chunk with `row / (8 / chunks per row)` spreads
//!   them over all 8.
//! * `b` fragments are read one word per lane, 4 rows (`k`) × 8 consecutive columns (`n`):
//!   rows are `BN ≥ 32` words, so without a swizzle the 4 rows hit the same banks. XORing the
//!   chunk with `2·(row % 4)` moves each row's pair of chunks to its own quarter of the banks.
//!
//! The `cp.async` stores then permute chunks within a row (or pair of rows), which keeps
//! them conflict-free too.
//!
//! Any shape is correct. A block takes the `cp.async` path when its `BM × BN` tile of `out`
//! is interior, `k` and `n` are multiples of 4 and `a`, `b` 16-byte aligned; the last
//! k-tile may be partial: chunks past `k` are zero-filled by `cp.async` with source size 0.
//! Every other block stages its tiles through bounds-checked scalar loads (zero outside the
//! matrices), one stage at a time, and runs the same warp tiles. Outputs go through
//! [`store_pair`], one function of `(row, column, value)` for every accumulator.

use super::epilogue::Epilogue;
use super::parts::global::{is_aligned16, store_out};
use super::parts::mma_tile::{MmaTile, mma_tiled};
use super::parts::unroll::unroll;
use super::{BlockTile, Geometry, at};
use nvptx_device::intrinsics::F32x2;
use nvptx_device::mma::{
    FragA, FragABf16, FragB, FragBBf16, FragC, ldmatrix_x4, mma_m16n8k8_tf32, mma_m16n8k16_bf16,
    pack_bf16x2, to_tf32,
};
use nvptx_device::pipeline::cp_async_16_zfill;
use nvptx_device::shared::{SharedSlice, dynamic_shared};
use nvptx_device::thread;
use nvptx_device::warp::WARP_SIZE;

/// Where element `(r, c)` of an `a` tile with `BK`-word rows lies in its stage: the chunk
/// `c / 4` XORed with `(r / (8 / chunks)) % chunks`, so any 8 consecutive rows' copies of one
/// chunk cover the 8 bank groups (`BK` is 8, 16 or 32).
#[inline(always)]
pub const fn a_index<const BK: usize>(r: u32, c: u32) -> u32 {
    a_index_in(BK as u32, r, c)
}

/// [`a_index`] for rows of `bk` words given at run time (a constant after inlining), as
/// rung 13 ([`super::bf16`]) stores its BF16 tiles, two to a word.
#[inline(always)]
pub const fn a_index_in(bk: u32, r: u32, c: u32) -> u32 {
    let chunks = bk / 4;
    let rows_per_line = 8 / chunks;
    let chunk = (c / 4) ^ ((r / rows_per_line) % chunks);
    r * bk + 4 * chunk + c % 4
}

/// Where element `(r, c)` of a `b` tile with `BN`-word rows lies in its stage: the chunk
/// `c / 4` XORed with `2·(r % 4)` (`BN` a multiple of 32).
#[inline(always)]
pub const fn b_index<const BN: usize>(r: u32, c: u32) -> u32 {
    let chunk = (c / 4) ^ (2 * (r % 4));
    r * BN as u32 + 4 * chunk + c % 4
}

/// [`sgemm_tensor_core`]'s `OP` for TF32 inputs, `mma.m16n8k8` ([`Precision::Tf32`]).
///
/// [`Precision::Tf32`]: super::Precision::Tf32
pub const TF32: u32 = 0;
/// [`sgemm_tensor_core`]'s `OP` for BF16 inputs, `mma.m16n8k16` ([`Precision::Bf16`]).
///
/// [`Precision::Bf16`]: super::Precision::Bf16
pub const BF16: u32 = 1;

/// A warp's accumulators: `acc[i][j]` is the [`FragC`] of rows `16·i..+16`, columns
/// `8·j..+8` of its `WM × WN` tile.
pub type Acc<const MI: usize, const NI: usize> = [[FragC; NI]; MI];

/// The tensor-core product, TF32 or BF16 as `OP` says: block tile `BM × BN`, shared tiles `BK` deep in a ring of
/// `STAGES`, warp tiles of `MI × NI` mma tiles (`WM × WN = 16·MI × 8·NI` outputs),
/// `THREADS = (BM/WM)·(BN/WN)·32`, and `GROUP` the block order of rung 9
/// ([`BlockTile::ordered`]; 0: none).
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// See the [module contract](super); `out` does not overlap `a` or `b`.
#[mma_tiled]
#[inline(always)]
pub unsafe fn sgemm_tensor_core<
    const STAGES: usize,
    const THREADS: usize,
    const GROUP: u32,
    const OP: u32,
    E: Epilogue,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, epilogue: E,
) {
    let () = MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::VALID;
    const { assert!(OP == TF32 || (OP == BF16 && BK.is_multiple_of(16))) };
    // a_tile[stage][a_index(r, c)], then b_tile[stage][b_index(r, c)].
    let (a_tile, b_tile) = dynamic_shared::<f32>()
        .split_at(STAGES as u32 * MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::A_STAGE);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let t = thread::thread_idx_x();
    let warp = MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::warp_of(t);
    let mut acc: Acc<MI, NI> = [[[0.0f32; 4]; NI]; MI];
    let tiles = k.div_ceil(BK as u32);
    let (a_stage, b_stage) = (
        MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::A_STAGE,
        MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::B_STAGE,
    );
    let asynchronous = tile.is_interior(BM as u32, BN as u32)
        && k.is_multiple_of(MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::ELEMS)
        && n.is_multiple_of(MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::ELEMS)
        && is_aligned16(a)
        && is_aligned16(b);

    run_stages!(
        STAGES,
        tiles,
        asynchronous,
        // Thread t's 16-byte copies of k-tile `p` into its stage, zero past `k`.
        issue = |p| {
            let stage = p % STAGES as u32;
            let k0 = p * BK as u32;
            unroll!(MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::A_COPIES, |j| {
                let (r, c) = MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::a_chunk(t, j);
                let full = k0 + c < k; // k % 4 == 0: a chunk is wholly inside or outside
                // SAFETY: only on the asynchronous path: the tile is interior, so
                // row0 + r < m; where `full`, columns k0 + c..+4 are inside `a` (k % 4 == 0) and
                // 16-byte aligned (k, c, k0 multiples of 4, `a` aligned); otherwise `a` itself is
                // only an aligned placeholder. The stage's chunk is inside and aligned.
                unsafe {
                    cp_async_16_zfill(
                        a_tile,
                        stage * a_stage + a_index::<BK>(r, c),
                        if full {
                            a.add(at(tile.row0 + r, k, k0 + c))
                        } else {
                            a
                        },
                        full,
                    )
                };
            });
            unroll!(MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::B_COPIES, |j| {
                let (r, c) = MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::b_chunk(t, j);
                let full = k0 + r < k;
                // SAFETY: as for `a`: the block's BN columns are inside `b`, rows past `k`
                // are zero-filled without a read, n % 4 == 0 and `b` aligned.
                unsafe {
                    cp_async_16_zfill(
                        b_tile,
                        stage * b_stage + b_index::<BN>(r, c),
                        if full {
                            b.add(at(k0 + r, n, tile.col0 + c))
                        } else {
                            b
                        },
                        full,
                    )
                };
            });
        },
        checked = |p| {
            // SAFETY: every element is checked against m, k and n before it is read.
            unsafe {
                MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::stage_checked(
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
                MmaTile::<BM, BN, BK, MI, NI, THREADS, 4>::accumulate::<OP>(
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

/// The k loop of the tensor-core rungs (11 and 13), on a block's ring of `$stages` stages,
/// for `$tiles` k-tiles:
///
/// * where `$asynchronous`: [`run_ring`]'s loop, with `issue` and `accumulate`.
/// * otherwise: `checked` fills stage 0 with k-tile `p`, a barrier, `accumulate` with stage
///   0, a barrier.
///
/// `run_stages!(stages, tiles, asynchronous, issue = |p| { .. }, checked = |p| { .. },
/// accumulate = |stage| { .. })`: the bodies are pasted as [`run_ring`]'s. Every thread of
/// the block runs it with the same `$tiles` and `$asynchronous`.
macro_rules! run_stages {
    ($stages:expr, $tiles:expr, $asynchronous:expr, issue = |$p:ident| $issue:block,
     checked = |$q:ident| $checked:block, accumulate = |$stage:ident| $accumulate:block) => {{
        if $asynchronous {
            $crate::sgemm::tensor_core::run_ring!(
                $stages,
                $tiles,
                issue = |$p| $issue,
                accumulate = |$stage| $accumulate
            );
        } else {
            for $q in 0..$tiles {
                $checked;
                nvptx_device::thread::sync_threads();
                let $stage = 0u32;
                $accumulate;
                // Everyone is done with stage 0 before the next tile overwrites it.
                nvptx_device::thread::sync_threads();
            }
        }
    }};
}
pub(super) use run_stages;

/// The `cp.async` ring of the tensor-core rungs (11, 13 and 15), `$stages` stages for
/// `$tiles` k-tiles: `issue` starts the copies of k-tile `p` into stage `p % $stages`;
/// tiles `0..$stages - 1` are in flight before the loop, one group each, and each trip
/// waits for its tile, passes a barrier (after which every warp is done with the stage the
/// next copies overwrite), issues tile `p + $stages - 1` and runs `accumulate` on stage
/// `p % $stages`. Nothing is in flight at the end.
///
/// `run_ring!(stages, tiles, issue = |p| { .. }, accumulate = |stage| { .. })`: the bodies
/// are written as closures, so that rustfmt formats them, but pasted where they run (with
/// `p` and `stage` bound), not called. A macro rather than a function of closures: as
/// functions and `#[inline(always)]` closures the same loop compiles to different PTX for
/// rungs 11, 13 and 15 (and a closure called from both paths of [`run_stages`] without the
/// attribute was a separate `.func`). Every thread of the block runs it with the same
/// `$tiles`.
macro_rules! run_ring {
    ($stages:expr, $tiles:expr, issue = |$p:ident| $issue:block,
     accumulate = |$stage:ident| $accumulate:block) => {{
        let (stages, tiles) = ($stages as u32, $tiles);
        // Prologue: tiles 0..stages-1 in flight, one group each (empty past the last).
        unroll!($stages - 1, |s| {
            if (s as u32) < tiles {
                let $p = s as u32;
                $issue
            }
            nvptx_device::pipeline::commit_group();
        });
        for p in 0..tiles {
            // Tile p has landed for this thread; after the barrier, for every thread, and
            // every warp is done with tile p - 1, whose stage the next copies overwrite.
            nvptx_device::pipeline::wait_group_n(stages - 2);
            nvptx_device::thread::sync_threads();
            if p + (stages - 1) < tiles {
                let $p = p + stages - 1;
                $issue
            }
            // One group per trip, so the wait above counts right.
            nvptx_device::pipeline::commit_group();
            let $stage = p % stages;
            $accumulate
        }
        // No copy is left in flight (the last groups are empty), and nothing reads shared
        // memory after this point.
        nvptx_device::pipeline::wait_group::<0>();
    }};
}
pub(super) use run_ring;

/// Writes a warp's accumulators (its tile starts at `warp` in the block's `bm × bn` tile)
/// through [`store_pair`]: each lane's pairs of adjacent outputs, 8 bytes at a time where the
/// block tile is interior, `n` even and `out` 8-byte aligned.
///
/// # Safety
/// `out` is the `m × n` output `tile` was made with, and no other thread writes this warp's
/// outputs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn store_acc<const MI: usize, const NI: usize, E: Epilogue>(
    acc: &Acc<MI, NI>, warp: (u32, u32), out: *mut f32, n: u32, tile: &BlockTile, bm: u32, bn: u32,
    epilogue: &E,
) {
    let fast = tile.is_interior(bm, bn) && n.is_multiple_of(2) && out.addr().is_multiple_of(8);
    let lane = thread::thread_idx_x() % WARP_SIZE;
    unroll!(MI, |i| {
        unroll!(NI, |j| {
            unroll!(2, |h| {
                let r = warp.0 + (16 * i) as u32 + lane / 4 + 8 * h as u32;
                let c = warp.1 + (8 * j) as u32 + 2 * (lane % 4);
                let v = [acc[i][j][2 * h], acc[i][j][2 * h + 1]];
                // SAFETY: this lane alone holds outputs (r, c) and (r, c + 1) of the block
                // tile (the FragC layout); `fast` as store_pair requires.
                unsafe { store_pair(out, n, tile, r, c, v, fast, epilogue) };
            });
        });
    });
}

/// Writes the accumulators `v` of block-tile row `r`, columns `c` and `c + 1`, to `out`:
/// the one place every output of the rung goes through, element by element as
/// `(row, column, value)`, so that a per-element epilogue belongs here. One 8-byte store
/// where `fast`, else each element inside `out` on its own.
///
/// # Safety
/// `out` is the `m × n` output `tile` was made with, this thread is the only writer of the
/// two elements, and `fast` only if the block tile is interior, `n` even, `c` even and
/// `out` 8-byte aligned.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn store_pair<E: Epilogue>(
    out: *mut f32, n: u32, tile: &BlockTile, r: u32, c: u32, v: [f32; 2], fast: bool, epilogue: &E,
) {
    let (row, col) = (tile.row0 + r, tile.col0 + c);
    if fast {
        // SAFETY: inside and 8-byte aligned by the contract.
        // F32x2, not [f32; 2]: one 8-byte access (`st.global.v2`), not two of 4 bytes.
        let p = unsafe { out.add(at(row, n, col)) } as *mut F32x2;
        let old = if epilogue.reads_output() {
            // SAFETY: as above; this thread's two elements.
            unsafe { (*p).0 }
        } else {
            [0.0; 2]
        };
        let mut w = [0.0f32; 2];
        unroll!(2, |e| {
            w[e] = epilogue.apply(row, col + e as u32, v[e], old[e]);
        });
        // SAFETY: as above.
        unsafe { *p = F32x2(w) };
    } else {
        unroll!(2, |e| {
            let ce = c + e as u32;
            if r < tile.rows_left && ce < tile.cols_left {
                // SAFETY: inside `out`; one reader and writer per element.
                unsafe { store_out(out, n, row, tile.col0 + ce, v[e], epilogue) };
            }
        });
    }
}

/// Rung 11's part of [`MmaTile`]: f32 stages, four elements to a chunk.
#[mma_tiled(4)]
impl MmaTile {
    /// The parameters fit ([`MmaTile::FITS`]) and the swizzles apply (`BK` 8, 16 or 32; `BN`
    /// and `WN` multiples of 32 so a warp's columns are whole 8-chunk groups).
    const VALID: () = assert!(
        Self::FITS
            && NI.is_multiple_of(4)
            && BN.is_multiple_of(32)
            && (BK == 8 || BK == 16 || BK == 32)
    );

    /// Fills stage 0 with k-tile `k0..k0 + BK` through scalar loads, zero outside the
    /// matrices: the path of edge blocks and of shapes `cp.async` cannot take.
    ///
    /// # Safety
    /// `a`, `b` are the `m × k`, `k × n` operands `tile` was made for (with its `n`), and
    /// the arrays hold at least one stage; no thread reads stage 0 until a barrier.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn stage_checked(
        a_tile: SharedSlice<f32>, b_tile: SharedSlice<f32>, a: *const f32, b: *const f32,
        tile: &BlockTile, k0: u32, n: u32, k: u32, t: u32,
    ) {
        unroll!(Self::A_COPIES, |j| {
            let (r, c) = Self::a_chunk(t, j);
            let v: [f32; 4] = core::array::from_fn(|e| {
                let col = k0 + c + e as u32;
                if r < tile.rows_left && col < k {
                    // SAFETY: row0 + r < m and col < k: inside `a`.
                    unsafe { *a.add(at(tile.row0 + r, k, col)) }
                } else {
                    0.0
                }
            });
            // SAFETY: the chunk is inside stage 0 and 16-byte aligned.
            unsafe { a_tile.set4_unchecked(a_index::<BK>(r, c), v) };
        });
        unroll!(Self::B_COPIES, |j| {
            let (r, c) = Self::b_chunk(t, j);
            let v: [f32; 4] = core::array::from_fn(|e| {
                let col = c + e as u32;
                if k0 + r < k && col < tile.cols_left {
                    // SAFETY: k0 + r < k and col0 + col < n: inside `b`.
                    unsafe { *b.add(at(k0 + r, n, tile.col0 + col)) }
                } else {
                    0.0
                }
            });
            // SAFETY: as for `a`.
            unsafe { b_tile.set4_unchecked(b_index::<BN>(r, c), v) };
        });
    }

    /// `acc += a · b` over the `BK` columns of one stage, for the warp whose tile starts at
    /// `warp` (from [`warp_of`](Self::warp_of)): per 8-deep step, each `a` fragment by one
    /// `ldmatrix.x4`, each `b` fragment by two scalar loads, all rounded to TF32, then
    /// `MI × NI` mma.
    ///
    /// # Safety
    /// `a_stage` and `b_stage` start at one stage of the swizzled tiles, complete and
    /// visible to every thread of the block; all 32 lanes of each warp call it together.
    #[inline(always)]
    unsafe fn accumulate<const OP: u32>(
        acc: &mut Acc<MI, NI>, a_stage: SharedSlice<f32>, b_stage: SharedSlice<f32>,
        warp: (u32, u32),
    ) {
        if OP == TF32 {
            unroll!(BK / 8, |step| {
                // SAFETY: the caller's contract; 8 · step + 8 <= BK.
                let (a, b) =
                    unsafe { Self::slice_words(a_stage, b_stage, warp, (8 * step) as u32) };
                let frag_a: [FragA; MI] = a.map(|f| f.map(|w| to_tf32(f32::from_bits(w))));
                let frag_b: [FragB; NI] = b.map(|f| f.map(|w| to_tf32(f32::from_bits(w))));
                unroll!(MI, |i| {
                    unroll!(NI, |j| {
                        // SAFETY: every lane of the warp is here (block-uniform control flow).
                        acc[i][j] = unsafe { mma_m16n8k8_tf32(&frag_a[i], &frag_b[j], acc[i][j]) };
                    });
                });
            });
        } else {
            // One m16n8k16 takes two 8-deep slices. Both operands take its 16 depths in the
            // same permuted order (BF16 depth 2q + h + 8s is stored depth q + 4h + 8s, where
            // the TF32 loads put it), so the product is unchanged and the loads stay the
            // conflict-free ones above.
            let pack = |lo: u32, hi: u32| pack_bf16x2(f32::from_bits(lo), f32::from_bits(hi));
            unroll!(BK / 16, |step| {
                let k0 = (16 * step) as u32;
                // SAFETY: the caller's contract; k0 + 16 <= BK.
                let (a0, b0) = unsafe { Self::slice_words(a_stage, b_stage, warp, k0) };
                // SAFETY: as above.
                let (a1, b1) = unsafe { Self::slice_words(a_stage, b_stage, warp, k0 + 8) };
                let mut frag_a: [FragABf16; MI] = [[0; 4]; MI];
                let mut frag_b: [FragBBf16; NI] = [[0; 2]; NI];
                unroll!(MI, |i| {
                    frag_a[i] = [
                        pack(a0[i][0], a0[i][2]),
                        pack(a0[i][1], a0[i][3]),
                        pack(a1[i][0], a1[i][2]),
                        pack(a1[i][1], a1[i][3]),
                    ];
                });
                unroll!(NI, |j| {
                    frag_b[j] = [pack(b0[j][0], b0[j][1]), pack(b1[j][0], b1[j][1])];
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

    /// This lane's words of the 8-deep slice `k0..k0 + 8` of one stage, as stored, in the
    /// TF32 fragment layouts: each `a` fragment by one `ldmatrix.x4`, each `b` fragment by
    /// two scalar loads.
    ///
    /// # Safety
    /// As [`accumulate`](Self::accumulate), and `k0 + 8 <= BK`, `k0` a multiple of 8.
    #[inline(always)]
    unsafe fn slice_words(
        a_stage: SharedSlice<f32>, b_stage: SharedSlice<f32>, warp: (u32, u32), k0: u32,
    ) -> ([FragA; MI], [FragB; NI]) {
        let lane = thread::thread_idx_x() % WARP_SIZE;
        let (group, quad) = (lane / 4, lane % 4);
        // ldmatrix: lane l gives row l % 8 of matrix l / 8 = rows 8·(q % 2).., chunk q / 2.
        let a_row = warp.0 + lane % 8 + 8 * ((lane / 8) % 2);
        let mut a: [FragA; MI] = [[0; 4]; MI];
        let mut b: [FragB; NI] = [[0; 2]; NI];
        unroll!(MI, |i| {
            // The swizzle depends on the row modulo 8 only, so i moves by whole rows.
            let at = a_index::<BK>(a_row + (16 * i) as u32, k0 + 4 * (lane / 16));
            // SAFETY: the whole warp, one stage slice, chunk-aligned rows inside it.
            a[i] = unsafe { ldmatrix_x4(a_stage, at) };
        });
        unroll!(NI, |j| {
            let col = warp.1 + (8 * j) as u32 + group;
            unroll!(2, |e| {
                // SAFETY: row k0 + quad + 4e < BK and col < BN: inside the stage.
                let x =
                    unsafe { b_stage.get_unchecked(b_index::<BN>(k0 + quad + 4 * e as u32, col)) };
                b[j][e] = x.to_bits();
            });
        });
        (a, b)
    }
}

/// The first row and column, in a block tile `bn` wide, of the `wm × wn` warp tile of thread
/// `t`'s warp: warps in row-major order.
#[inline(always)]
pub(super) fn warp_origin(t: u32, bn: usize, wm: usize, wn: usize) -> (u32, u32) {
    let warp = t / WARP_SIZE;
    let across = (bn / wn) as u32;
    ((warp / across) * wm as u32, (warp % across) * wn as u32)
}

/// Row and first word of thread `t`'s 16-byte chunk `j` of a tile whose rows are
/// `chunks_per_row` chunks, in a block of `threads`: consecutive threads on consecutive
/// chunks of a row, so a warp copies whole rows.
#[inline(always)]
pub(super) fn chunk_of(t: u32, j: usize, threads: usize, chunks_per_row: usize) -> (u32, u32) {
    let v = t + (j * threads) as u32;
    let per_row = chunks_per_row as u32;
    (v / per_row, 4 * (v % per_row))
}

/// The launch geometry of [`sgemm_tensor_core`] with the same parameters: `STAGES` stages of the
/// `a` and `b` tiles, in dynamic shared memory.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _mi: usize, _ni: usize, stages: usize, threads: usize,
    _group: usize, _op: usize,
) -> Geometry {
    Geometry::new(bm, bn, bk, threads, stages * (bm * bk + bk * bn)).in_dynamic_shared()
}
