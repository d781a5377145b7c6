//! The warp tile of rungs 6 and 7 (siboehm's kernel 10): how a block's `BM × BN` outputs are
//! spread over warps and threads, the FMAs of one shared tile, and the epilogue.
//!
//! The block tile is split into `(BM/WM) × (BN/WN)` warp tiles, one per warp. A warp covers
//! its `WM × WN` tile in `WMITER × WNITER` sub-tiles of `WSUBM × WSUBN`
//! (`WSUBM = WM/WMITER`, `WSUBN = WN/WNITER`); in each sub-tile its 32 lanes form a
//! `(WSUBM/TM) × (WSUBN/TN)` grid of `TM × TN` thread tiles. So each thread owns
//! `WMITER·TM × WNITER·TN` outputs: `TM` contiguous rows at `WMITER` places `WSUBM` apart,
//! and `TN` contiguous columns at `WNITER` places `WSUBN` apart.
//!
//! Per step (`dot`) a thread loads `WMITER·TM/4 + WNITER·TN/4` 16-byte fragments from the
//! transposed `a` tile and the `b` tile and does `WMITER·TM·WNITER·TN` FMAs. A warp's lanes
//! read one contiguous run of `WSUBM` (resp. `WSUBN`) floats per fragment load, many lanes the
//! same address: broadcasts, without bank conflicts. The warp's outputs stay within one
//! `WM × WN` region, which keeps each warp's shared reads few and local.

use crate::sgemm::BlockTile;
use crate::sgemm::epilogue::Epilogue;
use crate::sgemm::parts::global::{store_f32x4, store_out4};
use crate::sgemm::parts::unroll::unroll;
use nvptx_device::intrinsics::fma;
use nvptx_device::shared::SharedSlice;
use nvptx_device::warp::{FULL_MASK, WARP_SIZE, shuffle_down};

/// A thread's accumulators: `acc[wm][i][wn][j]` is the output at row `wm·WSUBM + i` and
/// column `wn·WSUBN + j` from the thread's origin.
pub type Acc<const WMITER: usize, const TM: usize, const WNITER: usize, const TN: usize> =
    [[[[f32; TN]; WNITER]; TM]; WMITER];

/// `#[warp_tiled]` on a kernel, the [`WarpTile`] type or its `impl` block makes it generic
/// over the warp-tile parameters `BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS` (as
/// [`WarpTile`] describes them, in that order, before the item's own generics): the one
/// place they are listed. [`same_tile!`] names such an item inside another.
///
/// * `#[warp_tiled] pub unsafe fn name<const X: T, .., E: Epilogue>(args) { body }` (the
///   const generics after the warp-tile ones are optional; `E` is required, and may be
///   followed by one more type parameter);
/// * `#[warp_tiled] pub struct WarpTile;` and `#[warp_tiled] impl WarpTile { items }`.
///
/// The generic parameters of a `macro_rules!` expansion are not hygienic, so the body names
/// `BM` and the others as its own. An attribute, so that rustfmt formats the items as any
/// other. (Not a trait of the parameters that the kernels are generic over: the register
/// arrays are sized by `TM`, `TN`, `WMITER` and `WNITER`, which a trait's constants cannot do
/// without `generic_const_exprs`, and kernels generic over a type compile to different PTX,
/// rustc's MIR inliner then inlining the small helpers they call.)
macro_rules! warp_tiled {
    attr() ($(#[$attr:meta])* $vis:vis unsafe fn $name:ident
        <$(const $c:ident: $ct:ty,)* E: $bound:path $(, $t:ident: $tbound:path)? $(,)?>
        ($($arg:tt)*) $body:block) => {
        $crate::sgemm::parts::warp_tile::with_warp_tile_generics!(
            [$(#[$attr])* $vis unsafe fn $name] [$(const $c: $ct,)* E: $bound $(, $t: $tbound)?]
            ($($arg)*) $body);
    };
    attr() ($(#[$attr:meta])* $vis:vis struct WarpTile;) => {
        $crate::sgemm::parts::warp_tile::with_warp_tile_generics!(
            [$(#[$attr])* $vis struct WarpTile] [] ;);
    };
    attr() (impl WarpTile $items:tt) => {
        $crate::sgemm::parts::warp_tile::with_warp_tile_generics!([impl] []
            WarpTile<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS> $items);
    };
}
pub(crate) use warp_tiled;

/// What [`warp_tiled`] expands to: `$head < BM, .., THREADS, $own > $tail` with the
/// warp-tile parameters declared (a macro of its own: one macro cannot be an attribute and
/// `name!(..)` both, for rustdoc).
macro_rules! with_warp_tile_generics {
    ([$($head:tt)*] [$($own:tt)*] $($tail:tt)*) => {
        $($head)* <
            const BM: usize, const BN: usize, const BK: usize, const WM: usize, const WN: usize,
            const WMITER: usize, const WNITER: usize, const TM: usize, const TN: usize,
            const THREADS: usize, $($own)*
        > $($tail)*
    };
}
pub(crate) use with_warp_tile_generics;

/// `same_tile!(name)` or `same_tile!(name::<X, .., E>)` in a [`warp_tiled`] item:
/// `name::<BM, .., THREADS, X, .., E>`, the item `name` (such as [`WarpTile`] itself or
/// another warp-tiled kernel) with the warp-tile parameters of the one it is used in.
macro_rules! same_tile {
    ($name:ident $(::<$($own:tt),*>)?) => {
        $name::<BM, BN, BK, WM, WN, WMITER, WNITER, TM, TN, THREADS, $($($own),*)?>
    };
}
pub(crate) use same_tile;

/// The parameters of a warp-tiled kernel (a value only for its constants and methods):
/// block tile `BM × BN`, shared tiles `BK` deep, warp tile `WM × WN` in `WMITER × WNITER`
/// steps, thread tile `TM × TN`, and `THREADS = (BM/WM)·(BN/WN)·32`.
#[warp_tiled]
#[derive(Clone, Copy)]
pub struct WarpTile;

#[warp_tiled]
impl WarpTile {
    /// Rows of one warp sub-tile.
    pub const WSUBM: usize = WM / WMITER;
    /// Columns of one warp sub-tile.
    pub const WSUBN: usize = WN / WNITER;
    /// The parameters fit together: warps tile the block, 32 thread tiles fill a warp
    /// sub-tile, and every fragment and output run is whole 16-byte vectors.
    const VALID: () = assert!(
        BM.is_multiple_of(WM)
            && BN.is_multiple_of(WN)
            && THREADS == (BM / WM) * (BN / WN) * WARP_SIZE as usize
            && WM.is_multiple_of(WMITER)
            && WN.is_multiple_of(WNITER)
            && (WM / WMITER).is_multiple_of(TM)
            && (WN / WNITER).is_multiple_of(TN)
            && (WM / WMITER / TM) * (WN / WNITER / TN) == WARP_SIZE as usize
            && TM.is_multiple_of(4)
            && TN.is_multiple_of(4)
            && BK.is_multiple_of(4)
    );

    /// Thread `t`'s origin in the block tile: its first row (an offset into a column of the
    /// transposed `a` tile) and its first column (an offset into a row of the `b` tile).
    #[inline(always)]
    pub fn thread_origin(self, t: u32) -> (u32, u32) {
        let () = Self::VALID;
        let (warp, lane) = (t / WARP_SIZE, t % WARP_SIZE);
        let warps_across = (BN / WN) as u32;
        let (warp_row, warp_col) = (warp / warps_across, warp % warps_across);
        let lanes_across = (Self::WSUBN / TN) as u32;
        let (lane_row, lane_col) = (lane / lanes_across, lane % lanes_across);
        (
            warp_row * WM as u32 + lane_row * TM as u32,
            warp_col * WN as u32 + lane_col * TN as u32,
        )
    }

    /// `acc += a_tileᵀ · b_tile` over the `BK` steps of one shared tile, where `a_frags`
    /// starts at the thread's first row in the transposed `a` tile (`BK × BM`) of a stage,
    /// and `b_frags` at its first column in the `b` tile (`BK × BN`).
    ///
    /// Every fragment load is then the slice's base plus a compile-time constant, one
    /// register and an immediate offset (`add` of an immediate that ptxas folds into the
    /// `LDS` address); base offsets inside the unrolled steps made LLVM hoist one address
    /// register per load out of the tile loop instead.
    ///
    /// # Safety
    /// The slices are [`split_at`](SharedSlice::split_at) a stage's start plus the thread's
    /// [`thread_origin`](Self::thread_origin), in arrays holding that whole stage.
    #[inline(always)]
    pub unsafe fn accumulate(
        self, acc: &mut Acc<WMITER, TM, WNITER, TN>, a_frags: SharedSlice<f32>,
        b_frags: SharedSlice<f32>,
    ) {
        // SAFETY: the caller's contract; the transposed `a` tile's rows are `BM` apart.
        unsafe { self.accumulate_ld::<BM>(acc, a_frags, b_frags) }
    }

    /// [`accumulate`](Self::accumulate) on a transposed `a` tile whose rows are `LDA >= BM`
    /// floats apart (padded against bank conflicts on its stores; `LDA % 4 == 0`).
    ///
    /// # Safety
    /// As [`accumulate`](Self::accumulate), the stage's `a` tile being `BK × LDA`.
    #[inline(always)]
    pub unsafe fn accumulate_ld<const LDA: usize>(
        self, acc: &mut Acc<WMITER, TM, WNITER, TN>, a_frags: SharedSlice<f32>,
        b_frags: SharedSlice<f32>,
    ) {
        // SAFETY: the caller's contract; the `b` tile's rows are `BN` apart.
        unsafe { self.accumulate_strided::<LDA, BN>(acc, a_frags, b_frags) }
    }

    /// [`accumulate_ld`](Self::accumulate_ld) on a `b` tile whose rows are `LDB >= BN`
    /// floats apart as well (`LDB % 4 == 0`): padded where it is stored transposed.
    ///
    /// # Safety
    /// As [`accumulate_ld`](Self::accumulate_ld), the stage's `b` tile being `BK × LDB`.
    #[inline(always)]
    pub unsafe fn accumulate_strided<const LDA: usize, const LDB: usize>(
        self, acc: &mut Acc<WMITER, TM, WNITER, TN>, a_frags: SharedSlice<f32>,
        b_frags: SharedSlice<f32>,
    ) {
        // SAFETY: the caller's contract, every step of the stage.
        unroll!(BK, |dot| unsafe {
            self.step::<LDA, LDB>(acc, a_frags, b_frags, dot as u32)
        });
    }

    /// [`accumulate_ld`](Self::accumulate_ld) over the first `steps` depths of the stage
    /// only, in runs of 4 (`steps` rounded up to a multiple of 4; at most `BK`): for the last
    /// k-tile of a depth that is not whole tiles, whose depths from `steps` on hold zeros.
    /// Their products are exact zeros, and leaving them out keeps every output's value (a
    /// sum that underflowed to −0 stays −0 where adding `+0` would have made it `+0`).
    ///
    /// # Safety
    /// As [`accumulate_ld`](Self::accumulate_ld).
    #[inline(always)]
    pub unsafe fn accumulate_ld_first<const LDA: usize>(
        self, acc: &mut Acc<WMITER, TM, WNITER, TN>, a_frags: SharedSlice<f32>,
        b_frags: SharedSlice<f32>, steps: u32,
    ) {
        unroll!(BK / 4, |run| {
            if 4 * (run as u32) < steps {
                unroll!(4, |d| {
                    let dot = (4 * run + d) as u32;
                    // SAFETY: the caller's contract, a step of the stage (dot < BK).
                    unsafe { self.step::<LDA, BN>(acc, a_frags, b_frags, dot) };
                });
            }
        });
    }

    /// Step `dot` (a depth below `BK`) of [`accumulate_strided`](Self::accumulate_strided).
    ///
    /// # Safety
    /// As [`accumulate_strided`](Self::accumulate_strided); `dot < BK`.
    #[inline(always)]
    unsafe fn step<const LDA: usize, const LDB: usize>(
        self, acc: &mut Acc<WMITER, TM, WNITER, TN>, a_frags: SharedSlice<f32>,
        b_frags: SharedSlice<f32>, dot: u32,
    ) {
        let mut frag_a = [[0.0f32; TM]; WMITER];
        let mut frag_b = [[0.0f32; TN]; WNITER];
        unroll!(WMITER, |wm| {
            unroll!(TM / 4, |i| {
                let at = dot * LDA as u32 + (wm * Self::WSUBM + 4 * i) as u32;
                // SAFETY: inside the stage's a tile and 16-byte aligned (contract).
                let v = unsafe { a_frags.get4_unchecked(at) };
                unroll!(4, |e| frag_a[wm][4 * i + e] = v[e]);
            });
        });
        unroll!(WNITER, |wn| {
            unroll!(TN / 4, |j| {
                let at = dot * LDB as u32 + (wn * Self::WSUBN + 4 * j) as u32;
                // SAFETY: inside the stage's b tile and 16-byte aligned (contract).
                let v = unsafe { b_frags.get4_unchecked(at) };
                unroll!(4, |e| frag_b[wn][4 * j + e] = v[e]);
            });
        });
        unroll!(WMITER, |wm| {
            unroll!(TM, |i| {
                unroll!(WNITER, |wn| {
                    let (x, acc) = (frag_a[wm][i], &mut acc[wm][i][wn]);
                    unroll!(TN, |j| acc[j] = fma(x, frag_b[wn][j], acc[j]));
                });
            });
        });
    }

    /// Whether [`store`](Self::store) realigns the stores of interior tiles with unaligned
    /// rows: for block tiles of fewer than 128 × 128 outputs. In the 128 × 128 multistage
    /// kernel the realigning code, never run on aligned rows, cost 3% at 4096³ and 8192³ on
    /// an H200; its strided entry ([`crate::sgemm::multistage::ld`]) asks for it with
    /// [`store_as`](Self::store_as).
    pub const REALIGNS: bool = BM * BN < 128 * 128;

    /// Writes the thread's outputs through `epilogue`: [`store_as`](Self::store_as) with
    /// [`REALIGNS`](Self::REALIGNS).
    ///
    /// # Safety
    /// As [`store_as`](Self::store_as).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store<E: Epilogue>(
        self, acc: &Acc<WMITER, TM, WNITER, TN>, out: *mut f32, n: u32, tile: &BlockTile,
        origin: (u32, u32), fast: bool, epilogue: &E,
    ) {
        // SAFETY: the caller's contract.
        unsafe { self.store_as(acc, out, n, tile, origin, fast, Self::REALIGNS, epilogue) }
    }

    /// Writes the thread's outputs through `epilogue`: 16-byte stores if `fast`; if
    /// `realign` (a constant where it is called, so that the other path is not compiled),
    /// in an interior block tile whose rows are not 16-byte aligned (`n % 4 ≠ 0`) and an
    /// epilogue that does not read the output, 16-byte stores realigned across lanes
    /// ([`store_realigned`](Self::store_realigned)); else bounds-checked scalar ones.
    ///
    /// # Safety
    /// `out` is the `m × n` output `tile` was made with, `origin` is this thread's
    /// [`thread_origin`](Self::thread_origin), and `fast` is only true if the block tile is
    /// interior, `n % 4 == 0` and `out` is 16-byte aligned. Every thread of the block calls
    /// it with the same `tile`, `fast` and `realign`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_as<E: Epilogue>(
        self, acc: &Acc<WMITER, TM, WNITER, TN>, out: *mut f32, n: u32, tile: &BlockTile,
        origin: (u32, u32), fast: bool, realign: bool, epilogue: &E,
    ) {
        if realign && !fast && tile.is_interior(BM as u32, BN as u32) && !epilogue.reads_output() {
            // SAFETY: the caller's contract; the condition is the same in every thread of
            // the block (the tile, `fast` and the epilogue's answer are).
            unsafe { self.store_realigned(acc, out, n, tile, origin, epilogue) };
            return;
        }
        unroll!(WMITER, |wm| {
            unroll!(TM, |i| {
                let r = origin.0 + (wm * Self::WSUBM + i) as u32;
                unroll!(WNITER, |wn| {
                    unroll!(TN / 4, |j| {
                        let c = origin.1 + (wn * Self::WSUBN + 4 * j) as u32;
                        let row = &acc[wm][i][wn];
                        let v = [row[4 * j], row[4 * j + 1], row[4 * j + 2], row[4 * j + 3]];
                        // SAFETY: each output belongs to one thread; `fast` per the contract.
                        unsafe { store_out4(out, n, tile, r, c, v, fast, epilogue) };
                    });
                });
            });
        });
    }

    /// [`store_as`](Self::store_as) of an interior block tile whose output rows are not 16-byte
    /// aligned, for an epilogue that does not read the output: whole 16-byte stores at the
    /// aligned addresses of each row, with the values moved one lane along.
    ///
    /// In a warp sub-tile, the lanes of one lane row hold the `WSUBN` consecutive outputs of
    /// a row, `TN` each in lane order. The row's first output lies `s` floats past a 16-byte
    /// boundary; with `d = (4 − s) % 4`, each lane stores the 16-byte runs that start `d`
    /// floats into its own `TN`, the last of them completed by the first `d` values of the
    /// next lane (`shuffle_down` by one, in every lane). The first lane of a lane row also
    /// stores its first `d` values one by one, and the last lane its last `4 − d` where the
    /// run would reach past the sub-tile. `d = 0` is the 16-byte path itself. The bits are
    /// the scalar path's: the epilogue sees each output's row and column, before it moves.
    ///
    /// # Safety
    /// As [`store_as`](Self::store_as), with the block tile interior and
    /// `!epilogue.reads_output()`; every lane of the warp calls it (it shuffles over the
    /// full warp).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn store_realigned<E: Epilogue>(
        self, acc: &Acc<WMITER, TM, WNITER, TN>, out: *mut f32, n: u32, tile: &BlockTile,
        origin: (u32, u32), epilogue: &E,
    ) {
        // The lane's column in its lane row, from its origin (`thread_origin`).
        let lanes_across = (Self::WSUBN / TN) as u32;
        let lane_col = origin.1 % WN as u32 / TN as u32;
        let (first, last) = (lane_col == 0, lane_col + 1 == lanes_across);
        // Floats of `out` before its first element, modulo 4 (f32s are 4-byte aligned).
        let base = (out.addr() / 4) as u32 % 4;
        unroll!(WMITER, |wm| {
            unroll!(TM, |i| {
                let row = tile.row0 + origin.0 + (wm * Self::WSUBM + i) as u32;
                unroll!(WNITER, |wn| {
                    let col = tile.col0 + origin.1 + (wn * Self::WSUBN) as u32;
                    let mut v = [0.0f32; TN];
                    unroll!(TN, |e| {
                        v[e] = epilogue.apply(row, col + e as u32, acc[wm][i][wn][e], 0.0);
                    });
                    // The next lane's first three values: all lanes shuffle, the last lane
                    // of each lane row ignores what it gets.
                    let mut next = [0.0f32; 3];
                    unroll!(3, |e| {
                        // SAFETY: every lane of the warp runs this shuffle (contract).
                        next[e] = unsafe { shuffle_down(FULL_MASK, v[e], 1) };
                    });
                    // This lane's first output, `col`, is `s` floats past a 16-byte boundary,
                    // as is the lane row's first (TN is a multiple of 4).
                    let s = (base + (row as u64 * n as u64 % 4) as u32 + col) % 4;
                    let d = (4 - s) % 4;
                    // SAFETY: [row, col ..+ TN] is inside the interior tile, this thread's;
                    // every 16-byte store starts at an aligned address inside it or the next
                    // lane's outputs of the same row (which that lane does not store).
                    unsafe {
                        let p = out.add(crate::sgemm::at(row, n, col));
                        if d == 0 {
                            unroll!(TN / 4, |j| {
                                store_f32x4(
                                    p.add(4 * j),
                                    [v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]],
                                );
                            });
                        } else {
                            if first {
                                unroll!(3, |e| {
                                    if (e as u32) < d {
                                        *p.add(e) = v[e];
                                    }
                                });
                            }
                            unroll!(TN / 4, |j| {
                                let w = realigned::<TN>(&v, &next, j, d);
                                let whole = j + 1 < TN / 4 || !last;
                                if whole {
                                    store_f32x4(p.add(4 * j + d as usize), w);
                                } else {
                                    // The last run of the last lane: its own 4 − d values.
                                    unroll!(4, |e| {
                                        if (e as u32) + d < 4 {
                                            *p.add(4 * j + d as usize + e) = w[e];
                                        }
                                    });
                                }
                            });
                        }
                    }
                });
            });
        });
    }
}

/// The 16-byte run `j` of a lane's `TN` values `v` moved `d` (1 to 3) floats along: `v[4j + d
/// ..]`, completed from the next lane's first values `next` where it runs past `TN`. Constant
/// indices only (one branch per `d`), so the values stay in registers.
#[inline(always)]
fn realigned<const TN: usize>(v: &[f32; TN], next: &[f32; 3], j: usize, d: u32) -> [f32; 4] {
    let pick = |k: usize| if k < TN { v[k] } else { next[k - TN] };
    let run = |d: usize| {
        [
            pick(4 * j + d),
            pick(4 * j + d + 1),
            pick(4 * j + d + 2),
            pick(4 * j + d + 3),
        ]
    };
    match d {
        1 => run(1),
        2 => run(2),
        _ => run(3),
    }
}
