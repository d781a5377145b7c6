//! Rung 12: the BLAS interface on rung 10's warp-tiled multistage loop. `C = α·op(A)·op(B) +
//! β·C` for each of a strided batch of products, row-major, with a leading dimension per
//! operand and either operand stored transposed: `op(A)` is `m × k`, stored as `A` (`m` rows
//! of `lda >= k` floats, layout N) or as `Aᵀ` (`k` rows of `lda >= m`, layout T); `op(B)` is
//! `k × n`, stored as `B` (`k` rows of `ldb >= n`, N) or `Bᵀ` (`n` rows of `ldb >= k`, T);
//! `C` is `m` rows of `ldc >= n`. Product `z` of the batch (`blockIdx.z`) starts `z·stride`
//! floats into each buffer. (A column-major caller gets the same product with the operands
//! swapped: `Cᵀ = op(B)ᵀ·op(A)ᵀ`, which is what the host's column-major constructor does.)
//!
//! Every layout is native: no operand is transposed by a pass of its own. The shared tiles
//! are laid out as rung 10's, `k`-major (`a_tile[kk][r]`, `b_tile[kk][c]`), and each operand
//! reaches them one of two ways, by how it is stored:
//!
//! * **stored `k`-major** (`Aᵀ`, or `B` as in rung 10): its tile's rows are rows of the shared
//!   tile, so it is copied by `cp.async` ([`VecTile::copy_async`]) through a ring of three
//!   stages, never passing through registers;
//! * **stored `k`-minor** (`A` as in rung 10, or `Bᵀ`): its tile goes through registers (16-byte
//!   loads along `k`) and is stored transposed ([`PaddedTransposedTile`]) into two stages whose
//!   rows are padded by 4 floats, which keeps the transposed scalar stores free of bank
//!   conflicts.
//!
//! So `TN` runs both operands by `cp.async`, `NN` is rung 10, `NT` and `TT` take one or both
//! operands through registers. The copies need the whole block tile inside the matrices,
//! `k` a nonzero multiple of `BK`, every leading dimension a multiple of 4 and 16-byte aligned
//! operands; any other block runs the same loop with every operand through registers and
//! bounds-checked loads (zero outside; `k = 0` reads nothing and gives `β·C`), so every shape,
//! stride and layout gives the same bits: each output is `fma(op(A)[r, i], op(B)[i, c], acc)`
//! for `i` in increasing order from `0.0`, as in every other rung, then the epilogue. The
//! outputs go through [`Linear`]: `α·acc + β·old`, where `old` is read only if `β ≠ 0`
//! (BLAS's rule: with `β = 0`, `C` may hold NaNs). A call with `α = 0` or `k = 0` needs no
//! product: the host launches [`sgemm_blas_scale_c`] instead, which reads neither operand,
//! so a NaN or an infinity in them cannot reach `C`, as in reference BLAS.

use super::epilogue::{AlphaBeta, Epilogue, Identity, Linear};
use super::global::{is_aligned16, rows_aligned16};
use super::tile_io::{MAX_VECS, PaddedTransposedTile, Staged, TileVectors, VecTile};
use super::warp_tile::{Acc, WarpTile, same_tile, warp_tiled};
use super::{BlockTile, Geometry, cdiv};
use nvptx_device::pipeline::{commit_group, wait_group};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{self, sync_threads};

/// Shared stages of an operand's ring: 3 where it is copied by `cp.async` (stored `k`-major,
/// `copied`), else 2 (through registers).
pub const fn stages(copied: bool) -> usize {
    if copied { 3 } else { 2 }
}

/// The row length of an operand's shared tile for a block tile `width` (`BM` or `BN`) wide:
/// as wide where it is copied, padded by 4 where it is stored transposed.
pub const fn shared_ld(width: usize, copied: bool) -> usize {
    if copied { width } else { width + 4 }
}

/// Whether operand `a` (layout T) or `b` (layout N) is stored `k`-major, so copied.
const fn copied(a_transposed: bool, operand_is_a: bool) -> bool {
    a_transposed == operand_is_a
}

/// One product of the batch: `out = epilogue(op(a) · op(b))` with `op(a)` transposed if
/// `TA`, `op(b)` if `TB`; `LDA` and `LDB` the shared tiles' row lengths
/// ([`shared_ld`]), `GROUP` rung 9's block order (0: launch order).
///
/// Launch with `THREADS` threads per block (1D) on a `cdiv(n, BN) × cdiv(m, BM)` grid.
///
/// # Safety
/// `a`, `b` and `out` hold the operands as the [module](self) describes them, each
/// offset `(rows − 1)·ld + cols` of them fitting `u32`; `lda`, `ldb`, `ldc` are at least
/// the stored row lengths; `out` overlaps neither operand; the epilogue's contract.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_blas<
    const LDA: usize,
    const LDB: usize,
    const TA: bool,
    const TB: bool,
    const GROUP: u32,
    E: Epilogue,
>(
    a: *const f32, b: *const f32, out: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32,
    ldc: u32, epilogue: E,
) {
    let a_tile = shared_array!(f32; stages(copied(TA, true)) * BK * LDA);
    let b_tile = shared_array!(f32; stages(copied(TB, false)) * BK * LDB);
    let tile = BlockTile::ordered(BM as u32, BN as u32, m, n, GROUP);
    let copies = tile.is_interior(BM as u32, BN as u32)
        && k >= BK as u32
        && k.is_multiple_of(BK as u32)
        && lda.is_multiple_of(4)
        && ldb.is_multiple_of(4)
        && is_aligned16(a)
        && is_aligned16(b);
    // SAFETY: the caller's contract; the arrays hold each operand's stages; `copies` is
    // exactly the copy path's condition.
    unsafe {
        if copies {
            same_tile!(sgemm_blas_in::<LDA, LDB, TA, TB, true, E>)(
                a_tile, b_tile, &tile, a, b, out, k, lda, ldb, ldc, epilogue,
            )
        } else {
            same_tile!(sgemm_blas_in::<LDA, LDB, TA, TB, false, E>)(
                a_tile, b_tile, &tile, a, b, out, k, lda, ldb, ldc, epilogue,
            )
        }
    }
}

/// The tile loop of [`sgemm_blas`] for block tile `tile`: with `ASYNC`, the `k`-major
/// operands by `cp.async` (the copy path), else every operand through registers with
/// bounds-checked loads.
///
/// # Safety
/// As [`sgemm_blas`]; `a_tile` and `b_tile` hold each operand's stages, nothing else uses
/// them, every thread of the block calls this with the same values, and if `ASYNC` the
/// tile is interior, `k` a nonzero multiple of `BK`, `lda` and `ldb` multiples of 4 and
/// `a` and `b` 16-byte aligned.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_blas_in<
    const LDA: usize,
    const LDB: usize,
    const TA: bool,
    const TB: bool,
    const ASYNC: bool,
    E: Epilogue,
>(
    a_tile: SharedSlice<f32>, b_tile: SharedSlice<f32>, tile: &BlockTile, a: *const f32,
    b: *const f32, out: *mut f32, k: u32, lda: u32, ldb: u32, ldc: u32, epilogue: E,
) {
    // Operand tiles: `a` stored k-major (T) is a BK × BM tile of rows, stored k-minor (N) a
    // BM × BK tile to transpose; `b` the other way round.
    type AK<const BK: usize, const BM: usize, const THREADS: usize> = VecTile<BK, BM, THREADS>;
    type AT<const BM: usize, const BK: usize, const THREADS: usize, const LD: usize> =
        PaddedTransposedTile<BM, BK, THREADS, LD>;
    let (copy_a, copy_b) = (copied(TA, true), copied(TB, false));
    let (stages_a, stages_b) = (stages(copy_a) as u32, stages(copy_b) as u32);
    let (a_stage, b_stage) = ((BK * LDA) as u32, (BK * LDB) as u32);
    let t = thread::thread_idx_x();
    let (vec_a, vec_b) = (rows_aligned16(lda, a), rows_aligned16(ldb, b));
    let warp = same_tile!(WarpTile);
    let origin = warp.thread_origin(t);
    let mut acc: Acc<WMITER, TM, WNITER, TN> = [[[[0.0; TN]; WNITER]; TM]; WMITER];
    let tiles = cdiv(k, BK as u32);
    // Depth, and what is left of `k` from there, of tile `p` (none past the last).
    let depth = |p: u32| {
        let k0 = (p * BK as u32).min(k); // no overflow: k <= u32::MAX - 64 (host check)
        (k0, k - k0)
    };
    // Thread t's copies of tile p of the k-major operands into their stages.
    let issue = |p: u32| {
        let k0 = p * BK as u32;
        // SAFETY: ASYNC: tile p < tiles is inside both operands, every offset fits
        // (caller), and its stage was last read before the previous barrier.
        unsafe {
            if copy_a {
                let at = (p % stages_a) * a_stage;
                AK::<BK, BM, THREADS>::copy_async::<LDA>(a_tile, at, a, lda, k0, tile.row0, t);
            }
            if copy_b {
                let at = (p % stages_b) * b_stage;
                AK::<BK, BN, THREADS>::copy_async::<LDB>(b_tile, at, b, ldb, k0, tile.col0, t);
            }
        }
        commit_group();
    };
    // Thread t's share of tile p of each operand that goes through registers (all of them
    // unless ASYNC); on the copy path the whole tile is inside, which folds the checks.
    let load = |p: u32| -> (Staged, Staged) {
        let (k0, k_left) = depth(p);
        let (rows, cols, depth_left) = if ASYNC {
            (BM as u32, BN as u32, BK as u32)
        } else {
            (tile.rows_left, tile.cols_left, k_left)
        };
        let mut staged = ([[0.0; 4]; MAX_VECS], [[0.0; 4]; MAX_VECS]);
        // SAFETY: the loads read only inside the operands (checked unless ASYNC, where the
        // tile is inside), which nothing writes during the kernel.
        unsafe {
            if !(ASYNC && copy_a) {
                staged.0 = if copy_a {
                    AK::<BK, BM, THREADS>::load_nc(
                        a, lda, k0, tile.row0, depth_left, rows, vec_a, t,
                    )
                } else {
                    AT::<BM, BK, THREADS, LDA>::load_nc(
                        a, lda, tile.row0, k0, rows, depth_left, vec_a, t,
                    )
                };
            }
            if !(ASYNC && copy_b) {
                staged.1 = if copy_b {
                    AK::<BK, BN, THREADS>::load_nc(
                        b, ldb, k0, tile.col0, depth_left, cols, vec_b, t,
                    )
                } else {
                    AT::<BN, BK, THREADS, LDB>::load_nc(
                        b, ldb, tile.col0, k0, cols, depth_left, vec_b, t,
                    )
                };
            }
        }
        staged
    };
    // Stores of `load(p)` into tile p's stages.
    let store = |p: u32, staged: &(Staged, Staged)| {
        let (sa, sb) = ((p % stages_a) * a_stage, (p % stages_b) * b_stage);
        // SAFETY: each stage holds one tile; the stage of tile p was last read before the
        // previous barrier (two or three trips ago).
        unsafe {
            if !(ASYNC && copy_a) {
                if copy_a {
                    AK::<BK, BM, THREADS>::store_rows::<LDA>(a_tile, sa, &staged.0, t);
                } else {
                    AT::<BM, BK, THREADS, LDA>::store_transposed(a_tile, sa, &staged.0, t);
                }
            }
            if !(ASYNC && copy_b) {
                if copy_b {
                    AK::<BK, BN, THREADS>::store_rows::<LDB>(b_tile, sb, &staged.1, t);
                } else {
                    AT::<BN, BK, THREADS, LDB>::store_transposed(b_tile, sb, &staged.1, t);
                }
            }
        }
    };

    // Prologue: copies of tiles 0 and 1 in flight (an empty group if there is no tile
    // 1), the register operands' tile 0 into its stages; wait for tile 0.
    if ASYNC {
        issue(0);
        if tiles > 1 {
            issue(1);
        } else {
            commit_group();
        }
    }
    store(0, &load(0));
    if ASYNC {
        wait_group::<1>();
    }
    sync_threads();

    for phase in 0..tiles {
        if ASYNC {
            // Tile phase + 2 into the stages read in the previous trip (before its barrier).
            if phase + 2 < tiles {
                issue(phase + 2);
            } else {
                commit_group(); // one group per trip, so the wait below counts right
            }
        }
        // The next tile in registers during the FMAs (on the copy path the last tile again
        // on the last trip: no branch, so LLVM does not duplicate the FMA block; past the
        // end, with checked loads, nothing is read).
        let next = if ASYNC {
            (phase + 1).min(tiles - 1)
        } else {
            phase + 1
        };
        let staged = load(next);
        let (_, a_frags) = a_tile.split_at((phase % stages_a) * a_stage + origin.0);
        let (_, b_frags) = b_tile.split_at((phase % stages_b) * b_stage + origin.1);
        // SAFETY: both stages are complete (wait and barrier at the end of the previous trip
        // or the prologue); the slices start at the thread's origin; the tiles are BK × LDA
        // and BK × LDB.
        unsafe { warp.accumulate_strided::<LDA, LDB>(&mut acc, a_frags, b_frags) };
        store(phase + 1, &staged);
        if ASYNC {
            wait_group::<1>();
        }
        sync_threads();
    }
    let fast = tile.is_interior(BM as u32, BN as u32) && ldc.is_multiple_of(4) && is_aligned16(out);
    // SAFETY: `fast` is exactly the fast-path condition; `origin` is this thread's.
    unsafe { warp.store(&acc, out, ldc, tile, origin, fast, &epilogue) };
}

/// Product `blockIdx.z` of a strided batch through [`sgemm_blas`] with the epilogue
/// `E::alpha_beta(alpha, beta)` ([`Blas`] in the entry points): their body.
///
/// Launch [`sgemm_blas`]'s grid with the batch's count in z.
///
/// # Safety
/// [`sgemm_blas`]'s contract for every product `z < gridDim.z` of the batch, whose
/// operands start `z·stride_a`, `z·stride_b` and `z·stride_c` floats in; no two products
/// write the same output.
#[warp_tiled]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm_blas_batched<
    const LDA: usize,
    const LDB: usize,
    const TA: bool,
    const TB: bool,
    const GROUP: u32,
    E: AlphaBeta,
>(
    a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32,
    ldc: u32, stride_a: u64, stride_b: u64, stride_c: u64, alpha: f32, beta: f32,
) {
    let z = thread::block_idx_z() as usize;
    let epilogue = E::alpha_beta(alpha, beta);
    // SAFETY: the caller's contract: product z's operands are inside the buffers.
    unsafe {
        let (a, b, c) = (
            a.add(z * stride_a as usize),
            b.add(z * stride_b as usize),
            c.add(z * stride_c as usize),
        );
        same_tile!(sgemm_blas::<LDA, LDB, TA, TB, GROUP, E>)(
            a, b, c, m, n, k, lda, ldb, ldc, epilogue,
        )
    }
}

/// Threads per block of [`sgemm_blas_scale_c`].
pub const SCALE_BLOCK: u32 = 256;

/// `C = β·C` for every output of a strided batch: what `C = α·op(A)·op(B) + β·C` is when
/// `α = 0` or `k = 0`, without reading `A` or `B`. Each output is `β·old`, rounded once;
/// with `β = 0` it is `+0.0` and `C` is not read (it may hold NaNs). Product `z`'s output
/// `[r, c]` is `c[z·stride_c + r·ldc + c]`; nothing else is written.
///
/// Launch 1D with [`SCALE_BLOCK`] threads per block and any number of blocks: the threads
/// stride over the `batch · m · n` outputs, consecutive threads on consecutive columns.
///
/// # Safety
/// `c` holds every product's `m × n` output (`(batch − 1)·stride_c + (m − 1)·ldc + n`
/// floats), `m·n` fits `u32`, `n ≥ 1`, and no two products share an output.
#[inline(always)]
pub unsafe fn sgemm_blas_scale_c(
    c: *mut f32, m: u32, n: u32, ldc: u32, stride_c: u64, batch: u32, beta: f32,
) {
    let per = m * n;
    let total = per as u64 * batch as u64;
    let step = thread::grid_dim_x() as u64 * thread::block_dim_x() as u64;
    let mut i = thread::index_1d() as u64;
    while i < total {
        let z = i / per as u64;
        let e = (i - z * per as u64) as u32;
        let (r, col) = (e / n, e % n);
        // SAFETY: z < batch, r < m, col < n: an output of product z, this thread's only.
        unsafe {
            let out =
                c.add(z as usize * stride_c as usize + r as usize * ldc as usize + col as usize);
            *out = if beta == 0.0 { 0.0 } else { beta * *out };
        }
        i += step;
    }
}

/// The parameters of [`sgemm_blas_scale_c`].
pub const SCALE_C_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    c: *mut f32, m: u32, n: u32, ldc: u32, stride_c: u64, batch: u32, beta: f32
);

/// How to launch [`sgemm_blas_scale_c`] for `batch · m · n` outputs (as items, at most
/// 65,535 blocks: the threads stride over the rest).
pub const SCALE_C: nvptx_device::catalogue::KernelSpec = nvptx_device::catalogue::KernelSpec {
    grid: nvptx_device::catalogue::GridRule::Items {
        per_block: SCALE_BLOCK,
        max_blocks: 65_535,
    },
    ..nvptx_device::catalogue::KernelSpec::items(
        "sgemm_blas_scale_c",
        SCALE_C_PARAMS,
        SCALE_BLOCK,
        SCALE_BLOCK,
    )
};

/// The BLAS epilogue `α·acc + β·old` (no bias, no activation).
pub type Blas = Linear<Identity>;

/// The launch geometry of [`sgemm_blas`] with the same parameters: each operand's stages.
#[allow(clippy::too_many_arguments)]
pub const fn geometry(
    bm: usize, bn: usize, bk: usize, _wm: usize, _wn: usize, _wmiter: usize, _wniter: usize,
    _tm: usize, _tn: usize, threads: usize, lda: usize, ldb: usize, ta: bool, tb: bool,
    _group: usize,
) -> Geometry {
    Geometry::new(
        bm,
        bn,
        bk,
        threads,
        stages(copied(ta, true)) * bk * lda + stages(copied(tb, false)) * bk * ldb,
    )
}

/// How an operand is stored, as BLAS's `op`: as it is (`N`) or transposed (`T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `op(X) = X`.
    N,
    /// `op(X) = Xᵀ`.
    T,
}

impl Op {
    /// Both, `N` first.
    pub const ALL: [Op; 2] = [Op::N, Op::T];

    /// `n` or `t`, as in the entry points' names.
    pub const fn name(self) -> &'static str {
        match self {
            Self::N => "n",
            Self::T => "t",
        }
    }

    const fn of(transposed: bool) -> Self {
        if transposed { Self::T } else { Self::N }
    }
}

/// The parameters of every BLAS entry point.
pub const BLAS_PARAMS: &[nvptx_device::catalogue::Param] = nvptx_device::params!(
    a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32, lda: u32, ldb: u32,
    ldc: u32, stride_a: u64, stride_b: u64, stride_c: u64, alpha: f32, beta: f32
);

/// A BLAS entry point as the simulator calls it, with [`BLAS_PARAMS`].
#[cfg(not(target_arch = "nvptx64"))]
pub type BlasEntry = unsafe fn(
    *const f32,
    *const f32,
    *mut f32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u64,
    u64,
    u64,
    f32,
    f32,
);

/// One BLAS configuration: a block tile and a pair of layouts, as the table declares it.
#[derive(Clone, Copy, Debug)]
pub struct BlasConfig {
    /// The name on command lines and in reports: the entry's, with dashes.
    pub name: &'static str,
    /// How `a` is stored.
    pub a: Op,
    /// How `b` is stored.
    pub b: Op,
    /// Block tile, depth, threads and static shared memory.
    pub geometry: Geometry,
    /// How to launch it (the batch's count in z).
    pub spec: nvptx_device::catalogue::KernelSpec,
    /// The entry point as the simulator calls it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub sim: BlasEntry,
}

/// The BLAS table: one line per block-tile configuration and layout pair (`ta`, `tb`: whether
/// `a`, `b` are stored transposed), generating the entry point (with launch bounds where
/// `min_blocks` is given), its [`KernelSpec`](nvptx_device::catalogue::KernelSpec) and its
/// simulator twin. The shared tiles' row lengths follow from the layouts ([`shared_ld`]).
macro_rules! blas_configs {
    ($( $entry:ident = ($ta:literal, $tb:literal) <$bm:literal, $bn:literal, $bk:literal,
        $wm:literal, $wn:literal, $wmi:literal, $wni:literal, $tm:literal, $tn:literal,
        $threads:literal, $group:literal> $(, min_blocks($mb:literal))?; )*) => {
        #[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
        nvptx_device::entry_points! {$(
            #[allow(clippy::too_many_arguments)] // BLAS's parameters
            $entry(a: *const f32, b: *const f32, c: *mut f32, m: u32, n: u32, k: u32, lda: u32,
                ldb: u32, ldc: u32, stride_a: u64, stride_b: u64, stride_c: u64, alpha: f32,
                beta: f32)
                => sgemm_blas_batched::<$bm, $bn, $bk, $wm, $wn, $wmi, $wni, $tm, $tn, $threads,
                    { shared_ld($bm, copied($ta, true)) }, { shared_ld($bn, copied($tb, false)) },
                    $ta, $tb, $group, Blas>
                $(, launch_bounds($threads, $mb))?;
        )*
            sgemm_blas_scale_c(c: *mut f32, m: u32, n: u32, ldc: u32, stride_c: u64, batch: u32,
                beta: f32) => sgemm_blas_scale_c;
        }

        /// Every BLAS configuration, in table order.
        pub const BLAS_CONFIGS: &[BlasConfig] = &[$({
            const GEOMETRY: Geometry = geometry(
                $bm, $bn, $bk, $wm, $wn, $wmi, $wni, $tm, $tn, $threads,
                shared_ld($bm, copied($ta, true)), shared_ld($bn, copied($tb, false)), $ta, $tb,
                $group,
            );
            BlasConfig {
                name: dashed!(stringify!($entry)),
                a: Op::of($ta),
                b: Op::of($tb),
                geometry: GEOMETRY,
                spec: GEOMETRY.spec_with_params(stringify!($entry), BLAS_PARAMS, opt!($($mb)?)),
                #[cfg(not(target_arch = "nvptx64"))]
                sim: entry::$entry,
            }
        },)*];
    };
}

blas_configs! {
    // entry point             = (a transposed, b transposed) <block, warp and thread tiles, threads, group>
    sgemm_blas_nn_128x128x16   = (false, false) <128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 0>, min_blocks(2);
    sgemm_blas_nt_128x128x16   = (false, true) <128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 0>, min_blocks(2);
    sgemm_blas_tn_128x128x16   = (true, false) <128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 0>, min_blocks(2);
    sgemm_blas_tt_128x128x16   = (true, true) <128, 128, 16, 64, 32, 1, 2, 8, 4, 256, 0>, min_blocks(2);
    sgemm_blas_nn_64x64x16     = (false, false) <64, 64, 16, 32, 32, 1, 1, 8, 4, 128, 0>;
    sgemm_blas_nt_64x64x16     = (false, true) <64, 64, 16, 32, 32, 1, 1, 8, 4, 128, 0>;
    sgemm_blas_tn_64x64x16     = (true, false) <64, 64, 16, 32, 32, 1, 1, 8, 4, 128, 0>;
    sgemm_blas_tt_64x64x16     = (true, true) <64, 64, 16, 32, 32, 1, 1, 8, 4, 128, 0>;
}
